//! `fishtrack eval --suite --calibration` (issue 15, item 6): each clip analysed with
//! the table calibration fishtrack makes itself from a render of the clip's empty
//! table, and how far that calibration is from the simulator's true one reported
//! beside the figures. On a tiny clip (640x360, 10 fps): with `--calibration table`
//! the clip runs, its calibration is within a millimetre of the truth everywhere on
//! the table and within a pixel at the corners; with `--calibration no-chessboard`
//! the focal length is reported too, and a clip whose table cannot be calibrated (seen
//! square-on: no focal length) fails with the calibration's own reason, not hidden.

use crate::common::run_in;

/// One gentle shot with short pauses, so that the clip is a handful of frames.
const TINY: &str = r##"{
  "name": "tiny",
  "players": [ { "name": "Anna", "color": "#d62728" }, { "name": "Boris", "color": "#1f77b4" } ],
  "start": {
    "fish:0": { "x": 300, "y": 300, "theta": 0 }, "coin:0": { "x": 300, "y": 300 },
    "fish:1": { "x": 700, "y": 450, "theta": 3.0 }, "coin:1": { "x": 700, "y": 450 }
  },
  "shots": [ { "player": 0, "speed_mm_s": 450, "direction_deg": 20 } ],
  "timing": { "before_flick_s": 0.3, "after_rest_s": 0.2, "put_back_s": 0.2, "max_shot_s": 3 }
  CAMERA
}"##;

const SUITE: &str = r#"{
  "size": "640x360",
  "clips": [
    { "name": "tiny", "scenario": "scenes/tiny.json", "seed": 3, "fps": 10, "hand": false }
    MORE
  ]
}"#;

fn set_up(dir: &std::path::Path, square_on: bool) {
    std::fs::create_dir_all(dir.join("set/scenes")).unwrap();
    std::fs::write(dir.join("set/scenes/tiny.json"), TINY.replace("CAMERA", "")).unwrap();
    let more = if square_on {
        std::fs::write(
            dir.join("set/scenes/square.json"),
            TINY.replace(
                "CAMERA",
                r#", "camera": { "tilt_deg": 0, "yaw_deg": 0, "hfov_deg": 70, "k1": -0.08, "k2": 0.01 }"#,
            ),
        )
        .unwrap();
        r#", { "name": "square-on", "scenario": "scenes/square.json", "seed": 3, "fps": 10, "hand": false }"#
    } else {
        ""
    };
    std::fs::write(dir.join("set/suite.json"), SUITE.replace("MORE", more)).unwrap();
}

#[test]
fn eval_with_fishtracks_own_table_calibration_reports_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    set_up(d, false);
    let (code, json, err) = run_in(
        &[
            "eval",
            "--suite",
            "set/suite.json",
            "--work",
            "work",
            "--calibration",
            "table",
            "--json",
        ],
        d,
    );
    assert_eq!(code, 0, "{json}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON output");
    assert_eq!(v["calibration"], "table", "{v}");
    let clip = &v["clips"][0];
    assert!(
        clip["evaluation"]["truth_shots"].as_u64() == Some(1),
        "{clip}"
    );
    let cal = &clip["calibration"];
    let table_mm = cal["worst_table_mm"].as_f64().expect("worst_table_mm");
    let corner_px = cal["worst_corner_px"].as_f64().expect("worst_corner_px");
    assert!(table_mm > 0.0 && table_mm < 1.0, "{cal}");
    assert!(corner_px < 1.0, "{cal}");
    assert_eq!(cal["corner_px"].as_array().map(Vec::len), Some(4), "{cal}");
    // The true camera was used: no focal figure.
    assert!(cal.get("focal_error_percent").is_none(), "{cal}");
    assert!(cal["claimed_mm"].as_f64().is_some(), "{cal}");
    assert_eq!(v["calibration_total"]["clips"], 1, "{v}");
    let work = d.join("work/tiny");
    for f in [
        "empty.png",
        "calibration-table/table.json",
        "calibrate-table.log",
        "record-table.json",
    ] {
        assert!(work.join(f).exists(), "{f} missing");
    }
    // The truth's record is not what was made.
    assert!(!work.join("record.json").exists());
}

#[test]
fn eval_without_a_chessboard_reports_the_focal_length_and_a_refused_clip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    set_up(d, true);
    let (code, table, err) = run_in(
        &[
            "eval",
            "--suite",
            "set/suite.json",
            "--work",
            "work",
            "--calibration",
            "no-chessboard",
        ],
        d,
    );
    assert_eq!(code, 1, "{table}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The calibrated clip: a row of the calibration table with a focal error.
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("table calibration"))
        .find(|l| l.starts_with("tiny "))
        .unwrap_or_else(|| panic!("no calibration row for tiny:\n{table}"));
    let focal: f64 = row
        .split_whitespace()
        .last()
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no focal % in {row}"));
    assert!(focal.abs() < 2.0, "{row}");
    // The square-on clip: failed, with the calibration's reason.
    let failed = table
        .lines()
        .find(|l| l.starts_with("square-on: FAILED"))
        .unwrap_or_else(|| panic!("no failure line for square-on:\n{table}"));
    assert!(
        failed.contains("calibrate table (no-chessboard)"),
        "{failed}"
    );
    assert!(failed.contains("square-on"), "{failed}");
    assert!(table.contains("calibrated 1 of 2 clips"), "{table}");
    assert!(!d
        .join("work/square-on/calibration-no-chessboard/table.json")
        .exists());
}

/// `--calibration` calibrates a set's rendered empty tables: with a record and its
/// truth instead, it is bad input — exit 1 and one line, as everywhere in the house
/// (clap's `requires` exited 2).
#[test]
fn calibration_without_a_set_is_refused_in_one_line() {
    let (code, stdout, stderr) = crate::common::run(&[
        "eval",
        "record.json",
        "truth.json",
        "--calibration",
        "table",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--calibration needs --suite or --sweep"),
        "{stderr}"
    );
}
