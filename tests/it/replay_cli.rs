//! `fishtrack replay` on bad input, through the binary: one clear line on stderr and
//! exit 1 for a malformed record, a record that does not match the video (frame
//! count, also of a file cut short whose header still claims the full count; frame
//! size), an unknown shot, a missing table calibration; a missing video
//! is not an error: diagrams and the report only, and a note says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/replay")
        .join(name)
}

fn replay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .arg("replay")
        .args(args)
        .output()
        .expect("run fishtrack")
}

/// Exit 1 with exactly one stderr line containing every `words`.
fn one_line_failure(o: &Output, words: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in words {
        assert!(err.contains(w), "`{w}` missing from: {err}");
    }
}

#[test]
fn malformed_record_is_one_line_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("record.json");
    std::fs::write(
        &bad,
        "{ \"version\": 1,\n  \"players\": [\"A\"],\n  \"shots\": [ {\"index\": } ] }",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = replay(&[bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    one_line_failure(&o, &["record.json:3:", "malformed JSON"]);
    assert!(!out.exists(), "nothing is written for a bad record");

    // Well-formed JSON but a track row with missing numbers.
    let text = std::fs::read_to_string(data("record.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["shots"][0]["tracks"]["fish:0"][1] = serde_json::json!([4, 1.0]);
    std::fs::write(&bad, v.to_string()).unwrap();
    let o = replay(&[bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    one_line_failure(&o, &["shot 0", "fish:0", "row 1"]);

    let o = replay(&[
        dir.path().join("nope.json").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    one_line_failure(&o, &["nope.json"]);
}

#[test]
fn missing_video_writes_diagrams_and_report_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = replay(&[
        data("record.json").to_str().unwrap(),
        "--video",
        dir.path().join("gone.avi").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("gone.avi") && err.contains("diagrams and this report only"),
        "{err}"
    );
    assert!(out.join("shot_000.png").exists());
    assert!(out.join("shot_001.png").exists());
    assert!(out.join("report.html").exists());
    assert!(!out.join("annotated.avi").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("No video"),
        "the report says there was no video"
    );
}

#[test]
fn unknown_shot_is_one_line_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let o = replay(&[
        data("record.json").to_str().unwrap(),
        "--shot",
        "7",
        "-o",
        dir.path().join("o").to_str().unwrap(),
    ]);
    one_line_failure(&o, &["no shot 7", "0, 1"]);
}

#[cfg(feature = "opencv")]
mod with_video {
    use super::*;
    use opencv::core::{Mat, Scalar, Size, CV_8UC3};
    use opencv::prelude::*;
    use opencv::videoio;

    fn make_video(path: &Path, w: i32, h: i32, frames: usize) {
        let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
        let mut wr =
            videoio::VideoWriter::new(path.to_str().unwrap(), fourcc, 10.0, Size::new(w, h), true)
                .unwrap();
        assert!(wr.is_opened().unwrap());
        let m = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(90.0)).unwrap();
        for _ in 0..frames {
            wr.write(&m).unwrap();
        }
        wr.release().unwrap();
    }

    fn run_with(video: &Path, out: &Path, table: &Path) -> Output {
        replay(&[
            data("record.json").to_str().unwrap(),
            "--video",
            video.to_str().unwrap(),
            "--table",
            table.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
    }

    #[test]
    fn video_with_other_frame_count_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let v = dir.path().join("short.avi");
        make_video(&v, 320, 240, 15);
        let out = dir.path().join("out");
        let o = run_with(&v, &out, &data("table.json"));
        one_line_failure(&o, &["20 frames", "short.avi", "15"]);
        assert!(!out.exists(), "nothing is written when the inputs disagree");
    }

    /// The container's frame count is a claim written when recording began: a file
    /// cut short keeps it. The frames are counted, so the cut file is refused.
    #[test]
    fn video_cut_short_is_refused_though_its_header_claims_the_full_count() {
        let dir = tempfile::tempdir().unwrap();
        let v = dir.path().join("cut.avi");
        make_video(&v, 320, 240, 20);
        let bytes = std::fs::read(&v).unwrap();
        std::fs::write(&v, &bytes[..bytes.len() * 3 / 5]).unwrap();
        let cap = videoio::VideoCapture::from_file(v.to_str().unwrap(), videoio::CAP_ANY).unwrap();
        assert_eq!(cap.get(videoio::CAP_PROP_FRAME_COUNT).unwrap(), 20.0);
        let out = dir.path().join("out");
        let o = run_with(&v, &out, &data("table.json"));
        one_line_failure(&o, &["20 frames", "cut.avi", "header says 20"]);
        assert!(!out.exists(), "nothing is written when the inputs disagree");
    }

    #[test]
    fn video_with_other_size_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let v = dir.path().join("small.avi");
        make_video(&v, 160, 120, 20);
        let o = run_with(&v, &dir.path().join("out"), &data("table.json"));
        one_line_failure(&o, &["320x240", "160x120"]);
    }

    #[test]
    fn missing_table_calibration_is_refused_with_the_video() {
        let dir = tempfile::tempdir().unwrap();
        let v = dir.path().join("match.avi");
        make_video(&v, 320, 240, 20);
        let o = run_with(
            &v,
            &dir.path().join("out"),
            &dir.path().join("no_table.json"),
        );
        one_line_failure(&o, &["no_table.json"]);
    }
}
