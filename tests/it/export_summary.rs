//! `fishtrack export` and `fishtrack summary` end to end. The export reads the bundled
//! demo record (a real `analyse` output) back from its CSV and MOT files; the summary
//! runs on three small matches written here, each checked first by `fishtrack score`
//! (the rules engine gives the points the record says), and on a folder with a broken
//! record in it.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fishtrack(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn demo_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json")
}

fn demo() -> Value {
    let text = std::fs::read_to_string(demo_path()).expect("the demo record is bundled");
    serde_json::from_str(&text).expect("the demo record is JSON")
}

fn p(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

/// The rows of a CSV file with a header, as maps column → value.
fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|row| {
            let row = row.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(row.len(), header.len(), "{}: ragged row", path.display());
            header
                .iter()
                .cloned()
                .zip(row.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn num(row: &BTreeMap<String, String>, col: &str) -> f64 {
    let v = &row[col];
    v.parse()
        .unwrap_or_else(|_| panic!("column {col}: `{v}` is not a number"))
}

/// Every track row of a record: (shot, item, frame) → [x, y, theta?].
fn track_rows(record: &Value) -> BTreeMap<(u64, String, u64), Vec<f64>> {
    let mut out = BTreeMap::new();
    for shot in record["shots"].as_array().unwrap() {
        let index = shot["index"].as_u64().unwrap();
        for (item, rows) in shot["tracks"].as_object().unwrap() {
            for row in rows.as_array().unwrap() {
                let v: Vec<f64> = row
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                out.insert((index, item.clone(), v[0] as u64), v[1..].to_vec());
            }
        }
    }
    out
}

#[test]
fn export_round_trips_the_demo_record_through_csv_and_mot() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = fishtrack(&["export", p(&demo_path()), "--csv", p(dir.path())]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stdout.contains("tracks.csv"), "{stdout}");
    let record = demo();
    let fps = record["video"]["fps"].as_f64().unwrap();
    let want = track_rows(&record);
    assert!(want.len() > 100, "the demo record has tracks");

    // tracks.csv: one row per track row, positions to the written 3 decimals.
    let tracks = read_csv(&dir.path().join("tracks.csv"));
    assert_eq!(tracks.len(), want.len());
    let mut by_key = BTreeMap::new();
    for row in &tracks {
        let key = (
            num(row, "shot") as u64,
            row["item"].clone(),
            num(row, "frame") as u64,
        );
        let w = want
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} is not in the record"));
        assert!((num(row, "x_mm") - w[0]).abs() <= 5e-4, "{key:?} x");
        assert!((num(row, "y_mm") - w[1]).abs() <= 5e-4, "{key:?} y");
        assert!(
            (num(row, "time_s") - key.2 as f64 / fps).abs() <= 5e-5,
            "{key:?} time"
        );
        if key.1.starts_with("fish") {
            assert!(
                (num(row, "theta_deg") - w[2].to_degrees()).abs() <= 5e-4,
                "{key:?} theta"
            );
        } else {
            assert_eq!(row["theta_deg"], "", "{key:?}: a coin has no angle");
        }
        by_key.insert(key, row);
    }
    // speed_mm_s: the central difference over the neighbouring rows of the same track
    // (at either end, to the one neighbour there is).
    let same_track = |k: &(u64, String, u64), shot: u64, item: &str| k.0 == shot && k.1 == item;
    for ((shot, item, frame), row) in &by_key {
        let here = (*shot, item.clone(), *frame);
        let before = want
            .range(..here.clone())
            .next_back()
            .filter(|(k, _)| same_track(k, *shot, item));
        let after = want
            .range((*shot, item.clone(), frame + 1)..)
            .next()
            .filter(|(k, _)| same_track(k, *shot, item));
        let (kb, b) = before.unwrap_or((&here, &want[&here]));
        let (ka, a) = after.unwrap_or((&here, &want[&here]));
        if ka.2 == kb.2 {
            assert_eq!(row["speed_mm_s"], "", "{here:?}: a lone row has no speed");
            continue;
        }
        let v = (a[0] - b[0]).hypot(a[1] - b[1]) * fps / (ka.2 - kb.2) as f64;
        assert!((num(row, "speed_mm_s") - v).abs() <= 6e-3, "{here:?}");
    }

    // shots.csv: a row a shot, with each player's points as the record has them.
    let shots = read_csv(&dir.path().join("shots.csv"));
    let record_shots = record["shots"].as_array().unwrap();
    assert_eq!(shots.len(), record_shots.len());
    for (row, shot) in shots.iter().zip(record_shots) {
        assert_eq!(
            num(row, "flick_frame") as u64,
            shot["flick_frame"].as_u64().unwrap()
        );
        assert_eq!(
            num(row, "rest_frame") as u64,
            shot["rest_frame"].as_u64().unwrap()
        );
        for (i, name) in record["players"].as_array().unwrap().iter().enumerate() {
            let col = format!("points {}", name.as_str().unwrap());
            assert_eq!(num(row, &col) as i64, shot["score"][i].as_i64().unwrap());
        }
    }
    let events = read_csv(&dir.path().join("events.csv"));
    assert!(
        events.iter().any(|e| e["kind"] == "coin_in_hole"),
        "{events:?}"
    );

    // tracks.mot.txt: ten numeric fields a line, frames from 1, boxes around the item.
    let mot = std::fs::read_to_string(dir.path().join("tracks.mot.txt")).unwrap();
    let ids: BTreeMap<String, String> = read_csv(&dir.path().join("mot-ids.csv"))
        .into_iter()
        .map(|r| (r["mot_id"].clone(), r["item"].clone()))
        .collect();
    let lines: Vec<&str> = mot.lines().collect();
    assert_eq!(lines.len(), want.len());
    for line in lines {
        let f: Vec<f64> = line
            .split(',')
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("`{line}`: not numbers"))
            })
            .collect();
        assert_eq!(f.len(), 10, "`{line}`");
        let item = &ids[&format!("{}", f[1] as u64)];
        let frame = f[0] as u64 - 1;
        let w = want
            .iter()
            .find(|((_, i, fr), _)| i == item && *fr == frame)
            .unwrap_or_else(|| panic!("`{line}`: {item} at frame {frame} is not in the record"))
            .1;
        assert!(
            (f[7] - w[0]).abs() <= 5e-4 && (f[8] - w[1]).abs() <= 5e-4,
            "`{line}`"
        );
        assert!(
            f[2] <= f[7] && f[7] <= f[2] + f[4],
            "`{line}`: x outside the box"
        );
        assert!(
            f[3] <= f[8] && f[8] <= f[3] + f[5],
            "`{line}`: y outside the box"
        );
        if item.starts_with("coin") {
            let diameter = 2.0 * record["game"]["items"]["coin"]["radius"].as_f64().unwrap();
            assert!(
                (f[4] - diameter).abs() < 1e-3 && (f[5] - diameter).abs() < 1e-3,
                "`{line}`"
            );
        }
        assert_eq!((f[6], f[9]), (1.0, 0.0), "`{line}`: conf and z");
    }
}

// ---- three small matches ----

const COLOURS: [&str; 3] = ["#d62728", "#1f77b4", "#2ca02c"];

/// Where player `k` starts: their fish with the coin in its hole.
fn home(k: usize) -> (f64, f64) {
    (150.0 + 300.0 * k as f64, 350.0)
}

/// A shot of `n` players: the mover's fish (with its coin) slides 100 mm up the table,
/// `lost` leave it over the top edge.
fn shot(index: u64, mover: usize, n: usize, lost: &[&str], score: &[i32]) -> Value {
    let mut start = serde_json::Map::new();
    for k in 0..n {
        let (x, y) = home(k);
        start.insert(format!("fish:{k}"), json!({"x": x, "y": y, "theta": 0.0}));
        start.insert(format!("coin:{k}"), json!({"x": x, "y": y}));
    }
    let mut end = start.clone();
    let flick = 100 * index + 10;
    let (x, y) = home(mover);
    end.insert(
        format!("fish:{mover}"),
        json!({"x": x, "y": y + 100.0, "theta": 0.0}),
    );
    end.insert(format!("coin:{mover}"), json!({"x": x, "y": y + 100.0}));
    let mut tracks = serde_json::Map::new();
    let path = |item: &str, (x, y): (f64, f64), step: f64, rows: u64| -> Value {
        (0..rows)
            .map(|j| {
                let mut r = vec![(flick + j) as f64, x, y + step * j as f64];
                if item.starts_with("fish") {
                    r.push(0.0);
                }
                json!(r)
            })
            .collect()
    };
    for item in [format!("fish:{mover}"), format!("coin:{mover}")] {
        tracks.insert(item.clone(), path(&item, (x, y), 10.0, 11));
    }
    let mut lost_rows = Vec::new();
    for item in lost {
        end.remove(*item);
        let at = (
            start[*item]["x"].as_f64().unwrap(),
            start[*item]["y"].as_f64().unwrap(),
        );
        tracks.insert(item.to_string(), path(item, at, 70.0, 5));
        lost_rows.push(json!({"item": item, "frame": flick + 5, "exit": {"x": at.0, "y": 700.0}}));
    }
    let in_holes: serde_json::Map<String, Value> = (0..n)
        .filter(|k| {
            end.contains_key(&format!("coin:{k}")) && end.contains_key(&format!("fish:{k}"))
        })
        .map(|k| (format!("coin:{k}"), json!(format!("fish:{k}"))))
        .collect();
    json!({
        "index": index, "player": mover, "flick_frame": flick, "rest_frame": flick + 10,
        "first_moved": format!("fish:{mover}"), "start": start, "end": end, "tracks": tracks,
        "lost": lost_rows, "coins_in_holes": in_holes, "stacking": [], "score": score,
        "put_back": [], "violations": []
    })
}

/// A record of one move each, with the demo's items and table.
fn record(players: &[&str], shots: Vec<Value>, scores: &[i32]) -> Value {
    let demo = demo();
    let mut game = demo["game"].clone();
    game["players"] = players
        .iter()
        .zip(COLOURS)
        .map(|(name, color)| json!({"name": name, "color": color}))
        .collect();
    game["moves_per_player"] = json!(1);
    json!({
        "version": 1,
        "video": {"path": "match.avi", "fps": 30.0, "frames": 100 * shots.len(), "width": 1280, "height": 720},
        "players": players, "shots": shots, "scores": scores,
        "game": game, "table_mm": demo["table_mm"]
    })
}

/// Boris knocks Anna's coin off (1:0 to Boris); Anna, moving second in the next match,
/// knocks Boris's coin off and her own fish (+1 −1: a 0:0 draw); Clara knocks off two
/// coins in a match where Boris is fined for an item moved between moves.
fn three_matches() -> Vec<(&'static str, Value)> {
    let m1 = record(
        &["Anna", "Boris"],
        vec![
            shot(0, 0, 2, &[], &[0, 0]),
            shot(1, 1, 2, &["coin:0"], &[0, 1]),
        ],
        &[0, 1],
    );
    let m2 = record(
        &["Boris", "Anna"],
        vec![
            shot(0, 0, 2, &[], &[0, 0]),
            shot(1, 1, 2, &["coin:0", "fish:1"], &[0, 0]),
        ],
        &[0, 0],
    );
    let mut disturbed = shot(1, 1, 3, &[], &[0, -1, 0]);
    disturbed["before"] =
        json!({"placed": [], "disturbed": [{"item": "fish:2", "frame": 105, "distance_mm": 15.0}]});
    disturbed["violations"] = json!([{"code": "4.2", "player": 1, "frame": 105,
        "evidence": "fish:2 moved 15.0 mm while no move was in progress", "fine": -1}]);
    let mut m3 = record(
        &["Anna", "Boris", "Clara"],
        vec![
            shot(0, 0, 3, &[], &[0, 0, 0]),
            disturbed,
            shot(2, 2, 3, &["coin:0", "coin:1"], &[0, 0, 2]),
        ],
        &[0, -1, 2],
    );
    m3["game"]["fine_policy"] = json!("undisputed");
    vec![
        ("club/monday/record.json", m1),
        ("club/tuesday/record.json", m2),
        ("club/wednesday.record.json", m3),
    ]
}

/// Writes the three matches under `root` (and a game.json the summary must pass over);
/// checks first that the rules engine gives each the points and fines it says.
fn write_matches(root: &Path) {
    for (name, rec) in three_matches() {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&rec).unwrap()).unwrap();
        let (code, stdout, stderr) = fishtrack(&["score", p(&path), "--json"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let scored: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            scored["scores"], rec["scores"],
            "{name}: the rules disagree"
        );
        assert_eq!(scored["match_over"], json!(true), "{name}");
        for (s, r) in scored["shots"]
            .as_array()
            .unwrap()
            .iter()
            .zip(rec["shots"].as_array().unwrap())
        {
            assert_eq!(
                s["violations"].as_array().unwrap().len(),
                r["violations"].as_array().unwrap().len(),
                "{name}"
            );
        }
    }
    std::fs::write(root.join("club/game.json"), "{\"players\": []}").unwrap();
}

#[test]
fn summary_of_three_matches_gives_standings_and_figures() {
    let root = tempfile::tempdir().unwrap();
    write_matches(root.path());
    let out = root.path().join("out");
    let (code, stdout, stderr) =
        fishtrack(&["summary", p(&root.path().join("club")), "-o", p(&out)]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    // Boris: a win and a draw; Clara: a win; Anna: a draw. Figures worked out by hand
    // from the three matches (see `three_matches`).
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(
        csv,
        "rank,player,matches,won,drawn,lost,points_for,points_against,coins_lost,fish_lost,coins_knocked_off,violations,fines,shots\n\
         1,Boris,3,1,1,1,0,2,2,0,1,1,-1,3\n\
         2,Clara,1,1,0,0,2,-1,0,0,2,0,0,1\n\
         3,Anna,3,0,1,2,0,2,2,1,1,0,0,3\n"
    );

    // The table on stdout fits a terminal and names everyone in standings order.
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "{stdout}");
    let at = |name: &str| {
        stdout
            .find(name)
            .unwrap_or_else(|| panic!("{name} missing: {stdout}"))
    };
    assert!(
        at("Boris") < at("Clara") && at("Clara") < at("Anna"),
        "{stdout}"
    );
    assert!(stdout.contains("3 records read"), "{stdout}");

    let html = std::fs::read_to_string(out.join("summary.html")).unwrap();
    assert!(html.contains("<table id=\"standings\">") && html.contains("<table id=\"matches\">"));
    assert!(
        html.contains("winner: Clara") && html.contains("draw: Boris, Anna"),
        "{html}"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("<script src")
    );
}

#[test]
fn a_broken_record_is_named_skipped_and_exits_3() {
    let root = tempfile::tempdir().unwrap();
    write_matches(root.path());
    let bad = root.path().join("club/thursday/record.json");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, "{\"version\": 1, \"players\": [\"Anna\", ").unwrap();
    let out = root.path().join("out");
    let (code, stdout, stderr) =
        fishtrack(&["summary", p(&root.path().join("club")), "-o", p(&out)]);
    assert_eq!(code, 3, "stdout: {stdout}\nstderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("thursday") && warnings[0].contains("record.json"),
        "{stderr}"
    );
    assert_eq!(
        read_csv(&out.join("summary.csv")).len(),
        3,
        "the readable records are still summed up"
    );
    assert!(stdout.contains("3 records read, 1 skipped"), "{stdout}");
    let html = std::fs::read_to_string(out.join("summary.html")).unwrap();
    assert!(
        html.contains("Skipped") && html.contains("thursday"),
        "the page says so too"
    );

    // Only broken records: nothing to sum up is an error, one line.
    let (code, _, stderr) = fishtrack(&["summary", p(&bad), "-o", p(&out)]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("error")).count(),
        1,
        "{stderr}"
    );
}

#[test]
fn export_gives_each_shots_points_with_their_rules_and_events() {
    let root = tempfile::tempdir().unwrap();
    write_matches(root.path());
    let out = root.path().join("export");
    let record = root.path().join("club/tuesday/record.json");
    let (code, _, stderr) = fishtrack(&["export", p(&record), "-o", p(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stderr.contains("note"),
        "the rules agree with the record: {stderr}"
    );
    let shots = read_csv(&out.join("shots.csv"));
    // Anna's move: her +1 for Boris's coin and −1 for her own fish, net 0.
    assert_eq!(shots[1]["mover"], "Anna");
    assert_eq!(shots[1]["lost"], "coin:0 fish:1");
    assert_eq!(shots[1]["points Anna"], "0");
    let rules = &shots[1]["rules Anna"];
    assert!(
        rules.contains("+1 R5") && rules.contains("-1 R5"),
        "{rules}"
    );
    assert_eq!(shots[1]["rules Boris"], "");
    let events = read_csv(&out.join("events.csv"));
    let kinds = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["kind"] == kind)
            .map(|e| e["item"].clone())
            .collect()
    };
    assert_eq!(kinds("lost"), ["coin:0", "fish:1"]);

    // Bad input: one line, exit 1.
    let (code, _, stderr) =
        fishtrack(&["export", p(&root.path().join("nope.json")), "-o", p(&out)]);
    assert_eq!(code, 1);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("nope.json"), "{stderr}");
}
