//! `analyse --start` and `--chain` through the binary (issue 7): one simulated
//! match cut into three clips at rest moments gives, chained or continued by hand
//! from each previous record, the same shots, scores and identities as the whole
//! video; a clip opening with two loose coins keeps both identities through a
//! collision given a state, and without one reports their owner as unknown; bad
//! start files get one clear line and exit code 1.
//!
//! The videos are small (640x480, no hand, short pauses) because `analyse` is
//! still slow; every clip and the whole video are written by the same encoder from
//! the same decoded frames, so all runs see the same pixels.
#![cfg(feature = "opencv")]

use fishtrack::model::{ItemId, Pose};
use fishtrack::record::{Record, Shot};
use fishtrack::sim::Truth;
use fishtrack::vision::render::VideoOut;
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn fishtrack(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .args(args)
        .output()
        .expect("run fishtrack")
}

fn ok(args: &[&str]) {
    let t = Instant::now();
    let o = fishtrack(args);
    eprintln!(
        "fishtrack {} ({:.1} s)",
        args.join(" "),
        t.elapsed().as_secs_f64()
    );
    assert!(
        o.status.success(),
        "fishtrack {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Simulates `scenario` (a built-in name, or JSON text) at 640x480 without the
/// hand into `dir`; writes `game.json` next to the truth so that `analyse` knows
/// the scenario's players and items.
fn simulate(dir: &Path, scenario: &str) -> Truth {
    let file = dir.join("scenario.json");
    let arg = if scenario.trim_start().starts_with('{') {
        std::fs::write(&file, scenario).unwrap();
        s(&file).to_string()
    } else {
        scenario.to_string()
    };
    ok(&[
        "simulate",
        "--scenario",
        &arg,
        "--seed",
        "1",
        "--size",
        "640x480",
        "--no-hand",
        "-o",
        s(dir),
    ]);
    let truth = Truth::load(&dir.join("truth.json")).unwrap();
    std::fs::write(
        dir.join("game.json"),
        serde_json::to_string_pretty(&truth.game).unwrap(),
    )
    .unwrap();
    truth
}

/// Decodes `video` and writes `[from, to)` frame ranges as MJPG clips.
fn cut(video: &Path, fps: f64, size: [u32; 2], ranges: &[(u64, u64, PathBuf)]) {
    let mut cap = videoio::VideoCapture::from_file(s(video), videoio::CAP_ANY).unwrap();
    assert!(cap.is_opened().unwrap(), "cannot open {}", video.display());
    let mut outs: Vec<Option<VideoOut>> = ranges
        .iter()
        .map(|(_, _, p)| Some(VideoOut::create(p, fps, size).unwrap()))
        .collect();
    let mut f = 0u64;
    loop {
        let mut m = Mat::default();
        if !cap.read(&mut m).unwrap() || m.empty() {
            break;
        }
        for ((a, b, _), out) in ranges.iter().zip(&mut outs) {
            if (*a..*b).contains(&f) {
                out.as_mut().unwrap().write(&m).unwrap();
            }
        }
        f += 1;
    }
    for o in &mut outs {
        o.take().unwrap().finish().unwrap();
    }
}

fn load(p: &Path) -> Record {
    Record::load(p).unwrap()
}

fn near(a: &Pose, b: &Pose, mm: f64) -> bool {
    (a.x - b.x).hypot(a.y - b.y) <= mm
}

/// Shot `got` (from a clip, frames shifted into the whole video's) says the same
/// as `want` (the whole video): mover, flick and rest, identities and rest poses,
/// lost items, coins in holes, points.
fn same_shot(what: &str, got: &Shot, want: &Shot) {
    let ctx = format!("{what}, shot {}", want.index);
    assert_eq!(got.index, want.index, "{ctx}: index");
    assert_eq!(got.player, want.player, "{ctx}: mover");
    assert!(
        got.flick_frame.abs_diff(want.flick_frame) <= 1,
        "{ctx}: flick {} vs {}",
        got.flick_frame,
        want.flick_frame
    );
    assert!(
        got.rest_frame.abs_diff(want.rest_frame) <= 2,
        "{ctx}: rest {} vs {}",
        got.rest_frame,
        want.rest_frame
    );
    let keys = |m: &BTreeMap<ItemId, Pose>| m.keys().copied().collect::<BTreeSet<_>>();
    assert_eq!(keys(&got.end), keys(&want.end), "{ctx}: items at rest");
    for (id, p) in &want.end {
        assert!(
            near(&got.end[id], p, 2.0),
            "{ctx}: {id} rests at {:?}, the whole video says {p:?}",
            got.end[id]
        );
    }
    let lost = |s: &Shot| s.lost.iter().map(|l| l.item).collect::<BTreeSet<_>>();
    assert_eq!(lost(got), lost(want), "{ctx}: lost");
    assert_eq!(
        got.coins_in_holes, want.coins_in_holes,
        "{ctx}: coins in holes"
    );
    assert_eq!(got.score, want.score, "{ctx}: points");
    let codes = |s: &Shot| {
        s.violations
            .iter()
            .map(|v| v.code.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(codes(got), codes(want), "{ctx}: violations");
}

/// Two players; Boris's fish flies off the right edge with his coin in shot 1 and
/// both are put back before shot 2, so the third clip opens with duties pending.
const MATCH: &str = r#"{ "name": "chain3",
  "start": { "fish:0": {"x": 300, "y": 350, "theta": 0}, "coin:0": {"x": 300, "y": 350},
             "fish:1": {"x": 850, "y": 200, "theta": 0}, "coin:1": {"x": 850, "y": 200} },
  "shots": [ {"player": 0, "speed_mm_s": 700, "direction_deg": 90, "point": [22, 0]},
             {"player": 1, "speed_mm_s": 1100, "direction_deg": 0},
             {"player": 0, "speed_mm_s": 700, "direction_deg": 180, "point": [22, 0]} ],
  "moves_per_player": 2,
  "render": { "hand": false },
  "timing": { "before_flick_s": 0.2, "after_rest_s": 0.7, "put_back_s": 0.3 } }"#;

#[test]
fn a_match_cut_into_three_clips_chained_or_continued_equals_the_whole_video() {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let truth = simulate(d, MATCH);
    assert_eq!(truth.shots.len(), 3, "the scenario plays three shots");
    // Cut in each pause, after the analyser has seen the rest (its rest window) and
    // before anything is put back or flicked.
    let mut cuts = Vec::new();
    for w in truth.shots.windows(2) {
        let next = w[1]
            .placed_before
            .iter()
            .map(|p| p.frame)
            .chain([w[1].flick_frame])
            .min()
            .unwrap();
        let c = (w[0].rest_frame + 18).min(next.saturating_sub(2));
        assert!(
            c > w[0].rest_frame + 12,
            "no room to cut after shot {}",
            w[0].index
        );
        cuts.push(c);
    }
    let n = truth.video.frames;
    let whole = d.join("whole.avi");
    let clips: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|c| d.join(format!("{c}.avi")))
        .collect();
    let bounds = [0, cuts[0], cuts[1], n];
    let mut ranges = vec![(0, n, whole.clone())];
    for (k, c) in clips.iter().enumerate() {
        ranges.push((bounds[k], bounds[k + 1], c.clone()));
    }
    cut(&d.join("video.avi"), truth.video.fps, [640, 480], &ranges);

    let table = d.join("table.json");
    let game = d.join("game.json");
    let common = ["--table", s(&table), "--game", s(&game), "--quiet"];
    let run = |videos: &[&Path], extra: &[&str], out: &Path| {
        let mut args = vec!["analyse"];
        args.extend(videos.iter().map(|v| s(v)));
        args.extend(common);
        args.extend(extra);
        args.extend(["-o", s(out)]);
        ok(&args);
        load(out)
    };
    let whole_rec = run(&[&whole], &[], &d.join("whole.json"));
    assert_eq!(whole_rec.shots.len(), 3, "the whole video has three shots");
    let per_clip: Vec<usize> = (0..3)
        .map(|k| {
            whole_rec
                .shots
                .iter()
                .filter(|sh| (bounds[k]..bounds[k + 1]).contains(&sh.flick_frame))
                .count()
        })
        .collect();
    assert_eq!(per_clip, [1, 1, 1], "one shot per clip");
    eprintln!(
        "whole video: scores {:?}, lost {:?}; truth lost {:?}",
        whole_rec.scores,
        whole_rec
            .shots
            .iter()
            .map(|s| s.lost.len())
            .collect::<Vec<_>>(),
        truth.shots.iter().map(|s| s.lost.len()).collect::<Vec<_>>()
    );

    // --chain: one record, frames counted from the first clip.
    let clip_refs: Vec<&Path> = clips.iter().map(PathBuf::as_path).collect();
    let chain = run(&clip_refs, &["--chain"], &d.join("chain.json"));
    assert_eq!(chain.shots.len(), 3, "chain: three shots");
    for (g, w) in chain.shots.iter().zip(&whole_rec.shots) {
        same_shot("--chain", g, w);
    }
    assert_eq!(chain.scores, whole_rec.scores, "--chain: scores");
    assert_eq!(chain.video.frames, n, "--chain: frames of all clips");

    // By hand: each clip continues from the previous clip's record.
    let mut prev: Option<PathBuf> = None;
    for (k, clip) in clips.iter().enumerate() {
        let out = d.join(format!("clip{k}.json"));
        let start: Vec<&str> = match &prev {
            Some(p) => vec!["--start", s(p)],
            None => vec![],
        };
        let rec = run(&[clip], &start, &out);
        assert_eq!(rec.shots.len(), 1, "clip {k}: one shot");
        let mut shot = rec.shots[0].clone();
        shot.shift_frames(bounds[k]);
        same_shot(&format!("clip {k} --start"), &shot, &whole_rec.shots[k]);
        let so_far: Vec<i32> = (0..whole_rec.players.len())
            .map(|p| whole_rec.shots[..=k].iter().map(|s| s.score[p]).sum())
            .collect();
        assert_eq!(rec.scores, so_far, "clip {k} --start: scores so far");
        prev = Some(out);
    }
    eprintln!("three-clip test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The built-in `coin-collision`: three players; Anna's coin lies in her hole,
/// Boris's and Vera's lie loose; Anna's fish drives into coin:1, which strikes
/// coin:2. (A coin in a hole at the start also lets the detector learn the coins'
/// look: with every coin loose it finds none.)
const LOOSE: &str = "coin-collision";

#[test]
fn loose_coins_keep_their_identities_with_a_start_and_are_of_unknown_owner_without() {
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let truth = simulate(d, LOOSE);
    let shot = &truth.shots[0];
    let (c1, c2) = (ItemId::coin(1), ItemId::coin(2));
    for c in [c1, c2] {
        assert!(
            !near(&shot.start[&c], &shot.end[&c], 20.0),
            "{c} must move in the collision"
        );
    }
    assert!(
        !near(&shot.end[&c1], &shot.end[&c2], 30.0),
        "the coins must end apart, or a swap could not be told"
    );
    assert!(
        !shot.coins_in_holes.contains_key(&c1) && !shot.coins_in_holes.contains_key(&c2),
        "both coins are loose"
    );

    // The opening state: every item where the first frame shows it.
    let poses: BTreeMap<String, Pose> = truth.frames[0]
        .items
        .iter()
        .map(|(id, it)| (id.to_string(), it.pose()))
        .collect();
    let state = d.join("state.json");
    std::fs::write(
        &state,
        serde_json::json!({ "poses": poses, "next_player": 0 }).to_string(),
    )
    .unwrap();
    let video = d.join("video.avi");
    let (table, game) = (d.join("table.json"), d.join("game.json"));
    let base = [
        "analyse",
        s(&video),
        "--table",
        s(&table),
        "--game",
        s(&game),
        "--quiet",
    ];

    let with = d.join("with.json");
    let mut args = base.to_vec();
    args.extend(["--start", s(&state), "-o", s(&with)]);
    ok(&args);
    let rec = load(&with);
    assert_eq!(rec.shots.len(), 1, "one shot");
    let got = &rec.shots[0];
    for c in [c1, c2] {
        let p = got
            .end
            .get(&c)
            .unwrap_or_else(|| panic!("{c} not at rest in the record"));
        assert!(
            near(p, &shot.end[&c], 5.0),
            "{c} rests at {p:?}, truth {:?}: identities swapped or lost",
            shot.end[&c]
        );
    }
    assert!(got.unknown.is_empty(), "with --start every owner is known");

    let without = d.join("without.json");
    let mut args = base.to_vec();
    args.extend(["-o", s(&without)]);
    ok(&args);
    let rec = load(&without);
    assert_eq!(rec.shots.len(), 1, "one shot");
    let got = &rec.shots[0];
    for c in [c1, c2] {
        assert!(
            !got.start.contains_key(&c) && !got.end.contains_key(&c),
            "{c} named without --start: a guess"
        );
    }
    let coins: Vec<_> = got.unknown.iter().filter(|u| u.kind == "coin").collect();
    assert_eq!(
        coins.len(),
        2,
        "two coins of unknown owner: {:?}",
        got.unknown
    );
    for u in &coins {
        assert_eq!(u.owners, vec![1, 2], "Boris's or Vera's: {u:?}");
        let end = u.end.expect("on the table at rest");
        assert!(
            [c1, c2].iter().any(|c| near(&end, &shot.end[c], 5.0)),
            "unknown coin at rest at {end:?} matches no true coin"
        );
        assert!(!u.track_rows.is_empty(), "it moved: its track is recorded");
    }
    assert!(
        got.notes.iter().any(|n| n.contains("unknown owner")),
        "a note says so: {:?}",
        got.notes
    );
    eprintln!("loose-coin test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// Bad `--start` input fails before any frame is read: one line, exit code 1.
fn bad_start(content: &str, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("start.json");
    std::fs::write(&state, content).unwrap();
    let video = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/match.avi");
    let o = fishtrack(&[
        "analyse",
        s(&video),
        "--start",
        s(&state),
        "-o",
        s(&dir.path().join("r.json")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "not one line: {err}");
    assert!(lines[0].contains(needle), "`{needle}` not in: {err}");
    assert!(
        lines[0].contains("start.json"),
        "the file is not named: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.path().join("r.json").exists(), "nothing is written");
}

#[test]
fn a_state_naming_an_unknown_item_is_refused() {
    bad_start(
        r#"{"poses": {"fish:0": {"x": 100, "y": 100, "theta": 0}, "coin:5": {"x": 400, "y": 300}}}"#,
        "coin:5 names player 5 but the game has 2 players",
    );
    bad_start(r#"{"poses": {"frog:0": {"x": 100, "y": 100}}}"#, "frog:0");
}

#[test]
fn a_state_with_a_pose_off_the_table_is_refused() {
    bad_start(
        r#"{"poses": {"fish:1": {"x": 1200, "y": 300, "theta": 0}}}"#,
        "fish:1 at (1200.0, 300.0) mm lies off the table",
    );
}

#[test]
fn a_state_with_a_bad_next_player_or_scores_is_refused() {
    bad_start(
        r#"{"poses": {}, "next_player": 2}"#,
        "next_player is 2 but the game has 2 players",
    );
    bad_start(
        r#"{"poses": {}, "scores": [1, 2, 3]}"#,
        "scores has 3 entries but the game has 2 players",
    );
}

#[test]
fn a_record_from_another_game_set_up_is_refused() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json");
    let mut rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sample).unwrap()).unwrap();
    rec["players"] = serde_json::json!(["Anna", "Boris", "Vera"]);
    bad_start(&rec.to_string(), "from another game set-up");
    // Same names, other colours: another set-up too.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json");
    let mut rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sample).unwrap()).unwrap();
    rec["game"]["players"][1]["color"] = serde_json::json!("#00ff00");
    bad_start(&rec.to_string(), "from another game set-up");
}

#[test]
fn a_malformed_state_names_the_line_and_column() {
    bad_start("{\"poses\": {\n  \"fish:0\": {\"x\": 1,, }}}", ":2:");
}
