//! `fishtrack score` end to end: the demo record scores, and bad input gets one
//! clear line on stderr and exit code 1, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fishtrack"))
}

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json")
}

fn demo_json() -> serde_json::Value {
    let text = std::fs::read_to_string(demo()).expect("the demo record is bundled");
    serde_json::from_str(&text).expect("the demo record is valid JSON")
}

fn score(args: &[&str]) -> Output {
    bin()
        .arg("score")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// Exit 1, exactly one line on stderr containing every `needles`, no panic.
fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
}

fn write(dir: &tempfile::TempDir, name: &str, value: &serde_json::Value) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, serde_json::to_string_pretty(value).unwrap()).unwrap();
    p
}

#[test]
fn demo_record_scores_with_running_totals() {
    let out = score(&[demo().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Anna") && text.contains("Boris"), "{text}");
    // One row per shot under the header and its rule.
    let shots = demo_json()["shots"].as_array().unwrap().len();
    let rows = text
        .lines()
        .filter(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .count();
    assert_eq!(rows, shots, "{text}");
    assert!(text.contains("R5"), "{text}");
    assert!(text.contains("match over"), "{text}");
    // The put-backs (R8a) are in the wide table only.
    let wide = score(&[demo().to_str().unwrap(), "--wide"]);
    assert!(wide.status.success());
    let wide = String::from_utf8_lossy(&wide.stdout);
    assert!(wide.contains("R5") && wide.contains("R8a"), "{wide}");

    let out = score(&[demo().to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    let totals: Vec<i64> = v["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    // The totals are the sums of the per-shot points.
    let mut sum = vec![0i64; totals.len()];
    for s in v["shots"].as_array().unwrap() {
        for (k, p) in s["score"].as_array().unwrap().iter().enumerate() {
            sum[k] += p.as_i64().unwrap();
        }
    }
    assert_eq!(sum, totals);
    assert_eq!(v["match_over"], serde_json::Value::Bool(true));
    let lost: usize = v["shots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["lost"].as_array().unwrap().len())
        .sum();
    assert!(lost >= 2, "the demo loses a coin and a fish");
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.json");
    std::fs::write(&p, "{\n  \"version\": 1,\n  \"players\": [\"A\",,]\n}\n").unwrap();
    let out = score(&[p.to_str().unwrap()]);
    assert_one_line_error(&out, &["broken.json:3:", "malformed JSON"]);
}

#[test]
fn non_convex_table_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = demo_json();
    rec["table_mm"] = serde_json::json!([[0, 0], [1000, 0], [500, 200], [1000, 700], [0, 700]]);
    let p = write(&dir, "record.json", &rec);
    let out = score(&[p.to_str().unwrap()]);
    assert_one_line_error(&out, &["not convex"]);

    // The same through --table.
    let t = write(
        &dir,
        "table.json",
        &serde_json::json!({"corners_mm": [[0, 0], [1000, 0], [500, 200], [1000, 700], [0, 700]]}),
    );
    let out = score(&[demo().to_str().unwrap(), "--table", t.to_str().unwrap()]);
    assert_one_line_error(&out, &["table.json", "not convex"]);
}

#[test]
fn coin_larger_than_the_hole_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = demo_json();
    rec["game"]["items"]["coin"]["radius"] = serde_json::json!(12.0);
    let p = write(&dir, "record.json", &rec);
    let out = score(&[p.to_str().unwrap()]);
    assert_one_line_error(&out, &["record.json", "not smaller than the hole"]);
}

#[test]
fn unknown_item_id_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    // The first shot that loses something (the demo record may be regenerated).
    let k = demo_json()["shots"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["lost"].as_array().is_some_and(|l| !l.is_empty()))
        .expect("the demo record loses something");
    // An id of a player the game does not have.
    let mut rec = demo_json();
    rec["shots"][k]["lost"][0]["item"] = serde_json::json!("coin:7");
    let p = write(&dir, "record.json", &rec);
    let out = score(&[p.to_str().unwrap()]);
    assert_one_line_error(&out, &[&format!("shot {k}"), "coin:7"]);
    // Not an id at all.
    let mut rec = demo_json();
    rec["shots"][k]["lost"][0]["item"] = serde_json::json!("tag:1");
    let p = write(&dir, "record2.json", &rec);
    let out = score(&[p.to_str().unwrap()]);
    assert_one_line_error(&out, &["record2.json:", "tag:1"]);
}

#[test]
fn shot_by_a_missing_player_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = demo_json();
    rec["shots"][2]["player"] = serde_json::json!(4);
    let p = write(&dir, "record.json", &rec);
    let out = score(&[p.to_str().unwrap()]);
    assert_one_line_error(&out, &["shot 2", "player 4 does not exist"]);
}

#[test]
fn missing_record_file_is_one_line() {
    let out = score(&["/nonexistent/record.json"]);
    assert_one_line_error(&out, &["/nonexistent/record.json"]);
}
