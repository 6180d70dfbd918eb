//! The terminal scoreboard fits 100 columns (issue 14 item 4): `fishtrack score`'s
//! default table for the demo and for four players of 12-character names, with the
//! detail that does not fit (reasons, put-backs) in `--wide`.

use crate::common::run;
use std::path::Path;

const MAX_COLUMNS: usize = 100;

fn demo() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/samples/demo/record.json").to_string()
}

/// The lines wider than [`MAX_COLUMNS`] characters (not bytes: "…", "°").
fn too_wide(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.chars().count() > MAX_COLUMNS)
        .map(|l| format!("{} chars: {l}", l.chars().count()))
        .collect()
}

fn score(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "score {args:?}: {stderr}");
    stdout
}

#[test]
fn demo_scoreboard_fits_100_columns_and_wide_keeps_the_detail() {
    let text = score(&["score", &demo()]);
    assert_eq!(too_wide(&text), Vec::<String>::new(), "{text}");
    assert!(
        text.contains("--wide"),
        "no word of where the rest is:\n{text}"
    );

    let wide = score(&["score", &demo(), "--wide"]);
    // The demo's reasons and put-back poses are what the default leaves out.
    for detail in ["knocked off", "R6b at ("] {
        assert!(wide.contains(detail), "--wide lacks `{detail}`:\n{wide}");
        assert!(
            !text.contains(detail),
            "the default still has `{detail}`:\n{text}"
        );
    }
    assert!(
        !too_wide(&wide).is_empty(),
        "--wide is no wider than the default:\n{wide}"
    );
    let explain = score(&["score", &demo(), "--explain"]);
    assert_eq!(explain, wide, "--explain is --wide by another name");
}

#[test]
fn four_players_of_twelve_characters_fit_100_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = dir.path().join("sim");
    let sim_s = sim.to_str().expect("utf-8 path");
    let (code, _, stderr) = run(&[
        "simulate",
        "--scenario",
        "match",
        "--players",
        "4",
        "--truth-only",
        "--record",
        "-o",
        sim_s,
    ]);
    assert_eq!(code, 0, "simulate: {stderr}");
    let mut record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sim.join("record.json")).expect("read record.json"),
    )
    .expect("record.json is JSON");
    let names = [
        "Aleksandrina",
        "Bartholomeus",
        "Valentinovna",
        "Gleb Ivanovi",
    ];
    let players = record["game"]["players"]
        .as_array_mut()
        .expect("the simulated record embeds its game");
    assert_eq!(players.len(), 4, "simulate --players 4");
    for (player, name) in players.iter_mut().zip(names) {
        player["name"] = name.into();
    }
    let path = dir.path().join("long-names.json");
    std::fs::write(&path, record.to_string()).expect("write record");

    let text = score(&["score", path_str(&path)]);
    assert_eq!(too_wide(&text), Vec::<String>::new(), "{text}");
    let header = text.lines().next().unwrap_or("");
    for name in names {
        assert!(
            header.contains(name),
            "`{name}` cut from the header:\n{text}"
        );
    }
    let shots = record["shots"].as_array().map_or(0, Vec::len);
    let rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, shots, "a row a shot:\n{text}");
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}
