//! `fishtrack simulate` through the binary: bad input gives one clear line and
//! exit code 1; a small run writes the video, truth and calibration files.

use crate::common::run;

fn one_error_line(code: i32, err: &str, needle: &str) {
    assert_eq!(code, 1, "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "not one line: {err}");
    assert!(lines[0].contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn unknown_scenario_is_one_line_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "no-such-thing",
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    one_error_line(code, &err, "unknown scenario `no-such-thing`");
}

#[test]
fn overlapping_items_in_a_scenario_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(
        &file,
        r#"{ "start": { "fish:0": {"x": 300, "y": 300, "theta": 0}, "coin:0": {"x": 300, "y": 300},
                        "fish:1": {"x": 320, "y": 310, "theta": 1.0}, "coin:1": {"x": 600, "y": 300} } }"#,
    )
    .unwrap();
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        file.to_str().unwrap(),
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    one_error_line(code, &err, "overlap at the start");
}

#[test]
fn a_camera_that_cannot_see_the_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "match",
        "--camera-distance",
        "300",
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    one_error_line(code, &err, "not in view");
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "match",
        "--size",
        "12x7",
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    one_error_line(code, &err, "--size");
}

#[cfg(feature = "opencv")]
#[test]
fn a_small_run_writes_video_truth_camera_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "single-shot",
        "--seed",
        "3",
        "--size",
        "192x108",
        "-o",
        out,
    ]);
    assert_eq!(code, 0, "{err}");
    for f in ["video.avi", "truth.json", "camera.json", "table.json"] {
        let m = std::fs::metadata(dir.path().join(f)).unwrap_or_else(|_| panic!("{f} missing"));
        assert!(m.len() > 100, "{f} is empty");
    }
    let truth = fishtrack::sim::Truth::load(&dir.path().join("truth.json")).unwrap();
    assert_eq!(truth.shots.len(), 1);
    let table =
        fishtrack::calibration::TableCalibration::load(&dir.path().join("table.json")).unwrap();
    assert_eq!(table.camera.image_size, [192, 108]);
    // Calibration renders: a few chessboard views and the empty table.
    let cal = dir.path().join("cal");
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "chessboard",
        "--views",
        "3",
        "--size",
        "320x240",
        "-o",
        cal.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for f in [
        "board_00.png",
        "board_02.png",
        "empty_table.png",
        "truth.json",
        "camera.json",
    ] {
        assert!(cal.join(f).exists(), "{f} missing");
    }
}

#[test]
fn the_same_seed_gives_the_same_video() {
    let dir = tempfile::tempdir().unwrap();
    let render = |name: &str| {
        let out = dir.path().join(name);
        let (code, _, err) = run(&[
            "simulate",
            "--scenario",
            "single-shot",
            "--seed",
            "5",
            "--size",
            "192x108",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        (
            std::fs::read(out.join("video.avi")).unwrap(),
            std::fs::read(out.join("truth.json")).unwrap(),
        )
    };
    let (video_a, truth_a) = render("a");
    let (video_b, truth_b) = render("b");
    assert_eq!(
        truth_a, truth_b,
        "truth differs between two runs of one seed"
    );
    assert!(video_a.len() > 1000);
    assert!(
        video_a == video_b,
        "the video differs between two runs of one seed"
    );
}

#[test]
fn players_and_moves_set_a_generated_match() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "match",
        "--players",
        "3",
        "--moves",
        "1",
        "--truth-only",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let truth = fishtrack::sim::Truth::load(&out.join("truth.json")).unwrap();
    assert_eq!(truth.players.len(), 3);
    assert_eq!(truth.shots.len(), 3, "one move each");
    let o = dir.path().to_str().unwrap();
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "match",
        "--players",
        "5",
        "--truth-only",
        "-o",
        o,
    ]);
    one_error_line(code, &err, "5 players");
    let (code, _, err) = run(&[
        "simulate",
        "--scenario",
        "coin-collision",
        "--players",
        "2",
        "--truth-only",
        "-o",
        o,
    ]);
    one_error_line(code, &err, "scripted");
}

/// `--look random` writes the look it drew (the one `Look::random` gives for the
/// seed) beside the video, in a video other than the original look's; the
/// original look writes none; that file renders as a look; a look file that is
/// not there is one line.
#[cfg(feature = "opencv")]
#[test]
fn a_random_look_is_written_beside_its_video() {
    use fishtrack::sim::look::Look;
    let dir = tempfile::tempdir().unwrap();
    let render = |name: &str, look: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "simulate",
            "--scenario",
            "single-shot",
            "--seed",
            "5",
            "--size",
            "192x108",
            "--video",
            "v.avi",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(look);
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let plain = render("plain", &[]);
    assert!(!plain.join("look.json").exists());
    let looked = render("looked", &["--look", "random", "--look-seed", "8"]);
    let look: Look =
        serde_json::from_str(&std::fs::read_to_string(looked.join("look.json")).unwrap()).unwrap();
    assert_eq!(look.summary(), Look::random(8).summary());
    assert_eq!(look.check_ranges(), Ok(()));
    let video = |d: &std::path::Path| std::fs::read(d.join("v.avi")).unwrap();
    assert!(video(&plain) != video(&looked));
    // The look file renders too (and is no original look).
    let file = looked.join("look.json");
    let again = render("again", &["--look", file.to_str().unwrap()]);
    assert!(video(&again) != video(&plain));
    let (code, _, err) = run(&[
        "simulate",
        "--look",
        "no-such-look.json",
        "-o",
        dir.path().join("x").to_str().unwrap(),
    ]);
    one_error_line(code, &err, "no-such-look.json");
}
