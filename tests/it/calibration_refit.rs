//! A bumped camera (issue 15 item 5, issue 18 item 6): the simulator renders the
//! empty table, then again from a camera turned by about half a degree and moved by
//! 10 mm. Against the first render's true calibration, the bump check must measure
//! how far the outline moved (within 1 mm of what the two true calibrations say),
//! the re-fit must put the corners within 1 px of the second render's truth, a hand
//! and items over parts of the edges must not read as a move, too little edge seen
//! must be "unknown", and a re-fit that disagrees with itself is refused.
#![cfg(feature = "opencv")]

use crate::common::run;
use fishtrack::calibration::refit::{
    check_bump, recalibrate, refit_table, BgrFrame, BumpVerdict, OutlineSearch, Recalibration,
    RefitError, MOVED_MM,
};
use fishtrack::calibration::TableCalibration;
use nalgebra::Point2;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The camera of `calibration_side_face`, at a fixed distance so a bump is a
/// small change of its numbers.
fn camera(tilt: f64, yaw: f64, roll: f64, distance: f64) -> String {
    format!(
        r#""camera": {{ "tilt_deg": {tilt}, "yaw_deg": {yaw}, "roll_deg": {roll}, "hfov_deg": 70, "k1": -0.08, "k2": 0.01, "distance_mm": {distance} }}"#
    )
}

const STILL: (f64, f64, f64, f64) = (35.0, 15.0, 0.0, 1500.0);
/// Half a degree of tilt, 0.4° of yaw, 0.3° of roll and 10 mm nearer: 4–5 mm at the
/// table's edges.
const BUMPED: (f64, f64, f64, f64) = (35.5, 15.4, 0.3, 1490.0);

/// Renders the empty table (`extra`: more top-level scenario keys) into `dir`.
fn render(dir: &Path, pose: (f64, f64, f64, f64), extra: &str, look: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let scenario = dir.join("scenario.json");
    let (t, y, r, d) = pose;
    std::fs::write(
        &scenario,
        format!(
            r#"{{ "kind": "empty-table", {}, {extra} "render": {{ {look} }} }}"#,
            camera(t, y, r, d)
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        "simulate",
        "--scenario",
        &s(&scenario),
        "--seed",
        "1",
        "-o",
        &s(dir),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// The render's pixels as packed BGR.
fn bgr(path: &Path) -> (usize, usize, Vec<u8>) {
    let img = image::open(path).unwrap().to_rgb8();
    let (w, h) = img.dimensions();
    let mut data = img.into_raw();
    for p in data.chunks_mut(3) {
        p.swap(0, 2);
    }
    (w as usize, h as usize, data)
}

fn frame(image: &(usize, usize, Vec<u8>)) -> BgrFrame<'_> {
    BgrFrame::new(image.0, image.1, 3 * image.0, &image.2).unwrap()
}

/// How far the outline moved between two true calibrations: where the old one maps
/// the pixels at which the new one sees each point of the table's edges (worst, mm).
fn true_shift_mm(old: &TableCalibration, new: &TableCalibration) -> f64 {
    let c: Vec<Point2<f64>> = old
        .file
        .corners_mm
        .iter()
        .map(|&[x, y]| Point2::new(x, y))
        .collect();
    let mut worst: f64 = 0.0;
    for k in 0..c.len() {
        let (a, b) = (c[k], c[(k + 1) % c.len()]);
        for j in 0..=20 {
            let p = a + (b - a) * (j as f64 / 20.0);
            let px = new.table_from_undistorted.inverse().apply(p);
            worst = worst.max((old.table_from_undistorted.apply(px) - p).norm());
        }
    }
    worst
}

/// Paints a filled disc (a hand's palm, a coin) of `colour` (BGR).
fn disc(image: &mut (usize, usize, Vec<u8>), centre: [f64; 2], radius: f64, colour: [u8; 3]) {
    let (w, h) = (image.0, image.1);
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as f64 - centre[0], y as f64 - centre[1]);
            if dx * dx + dy * dy <= radius * radius {
                image.2[3 * (y * w + x)..3 * (y * w + x) + 3].copy_from_slice(&colour);
            }
        }
    }
}

/// Paints everything within `half` px of the segment `a`–`b`.
fn band(image: &mut (usize, usize, Vec<u8>), a: [f64; 2], b: [f64; 2], half: f64, colour: [u8; 3]) {
    let (w, h) = (image.0, image.1);
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    for y in 0..h {
        for x in 0..w {
            let (px, py) = (x as f64 - a[0], y as f64 - a[1]);
            let t = ((px * dx + py * dy) / len2).clamp(0.0, 1.0);
            if (px - t * dx).hypot(py - t * dy) <= half {
                image.2[3 * (y * w + x)..3 * (y * w + x) + 3].copy_from_slice(&colour);
            }
        }
    }
}

/// A point `t` of the way along side `k` of the truth's image corners.
fn along(corners: &[[f64; 2]], k: usize, t: f64) -> [f64; 2] {
    let (a, b) = (corners[k], corners[(k + 1) % corners.len()]);
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]
}

/// A hand over the near side (a third of it) and six items lying across the edges.
fn hand_and_items(image: &mut (usize, usize, Vec<u8>), corners: &[[f64; 2]]) {
    let skin = [120, 150, 215];
    for t in [0.25, 0.32, 0.39, 0.46, 0.53] {
        disc(image, along(corners, 0, t), 34.0, skin);
    }
    let items = [
        (1, 0.3, [40, 40, 200]),
        (1, 0.7, [200, 60, 40]),
        (2, 0.2, [30, 160, 30]),
        (2, 0.55, [40, 40, 200]),
        (3, 0.4, [200, 200, 200]),
        (3, 0.8, [20, 20, 20]),
    ];
    for (k, t, colour) in items {
        disc(image, along(corners, k, t), 14.0, colour);
    }
}

/// The table rendered into `dir` from the camera as calibrated (`still/`) and from
/// the camera bumped (`bumped/`), each with its true `table.json`.
fn still_and_bumped(dir: &Path) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("still"), dir.join("bumped"));
    render(&a, STILL, "", "");
    render(&b, BUMPED, "", "");
    (a, b)
}

#[test]
fn a_bumped_camera_is_measured_and_the_table_refitted() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = still_and_bumped(dir.path());
    let old = TableCalibration::load(&a.join("table.json")).unwrap();
    let truth = TableCalibration::load(&b.join("table.json")).unwrap();
    let expected = true_shift_mm(&old, &truth);
    assert!(expected > MOVED_MM + 1.0, "the bump is {expected} mm");

    let still = bgr(&a.join("empty_table.png"));
    let check = check_bump(frame(&still), &old, &OutlineSearch::CHECK).unwrap();
    assert_eq!(check.verdict, BumpVerdict::Still, "{}", check.summary());
    assert!(check.shift_mm.unwrap() < 0.5, "{}", check.summary());

    let bumped = bgr(&b.join("empty_table.png"));
    let started = std::time::Instant::now();
    let check = check_bump(frame(&bumped), &old, &OutlineSearch::CHECK).unwrap();
    let took = started.elapsed();
    eprintln!("{} in {took:?}", check.summary());
    assert_eq!(check.verdict, BumpVerdict::Moved, "{}", check.summary());
    let measured = check.shift_mm.unwrap();
    assert!(
        (measured - expected).abs() <= 1.0,
        "measured {measured:.2} mm, truly {expected:.2} mm"
    );
    assert!(check.seen_share() > 0.9, "{}", check.summary());

    let refit = refit_table(frame(&bumped), &old, &OutlineSearch::REFIT).unwrap();
    assert!(refit.doubt.is_none(), "{:?}", refit.doubt);
    for (k, (got, want)) in refit
        .file
        .image_corners_px
        .iter()
        .zip(&truth.file.image_corners_px)
        .enumerate()
    {
        let off = (got[0] - want[0]).hypot(got[1] - want[1]);
        assert!(off <= 1.0, "corner {k}: {got:?} vs the truth's {want:?}");
    }
    // What live calls: the re-fit when moved, nothing when still.
    match recalibrate(frame(&bumped), &old).unwrap() {
        Recalibration::Refitted(r) => {
            assert!(r.moved.shift_mm.unwrap() > MOVED_MM);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        recalibrate(frame(&still), &old).unwrap(),
        Recalibration::Unchanged(_)
    ));
}

#[test]
fn a_hand_and_items_over_the_edges_are_not_a_move() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = still_and_bumped(dir.path());
    let old = TableCalibration::load(&a.join("table.json")).unwrap();
    let truth = TableCalibration::load(&b.join("table.json")).unwrap();
    let corners = old.file.image_corners_px.clone();

    let mut still = bgr(&a.join("empty_table.png"));
    hand_and_items(&mut still, &corners);
    let check = check_bump(frame(&still), &old, &OutlineSearch::CHECK).unwrap();
    eprintln!("{}", check.summary());
    assert_eq!(check.verdict, BumpVerdict::Still, "{}", check.summary());
    assert!(check.shift_mm.unwrap() < 0.5, "{}", check.summary());
    // The hand was seen as covering the near side: its share is down.
    assert!(check.sides[0].share() < 0.8, "{}", check.summary());

    // The same hand and items on the bumped frame: still measured right.
    let mut bumped = bgr(&b.join("empty_table.png"));
    hand_and_items(&mut bumped, &truth.file.image_corners_px);
    let check = check_bump(frame(&bumped), &old, &OutlineSearch::CHECK).unwrap();
    let expected = true_shift_mm(&old, &truth);
    assert_eq!(check.verdict, BumpVerdict::Moved, "{}", check.summary());
    assert!(
        (check.shift_mm.unwrap() - expected).abs() <= 1.0,
        "{} (truly {expected:.2} mm)",
        check.summary()
    );
}

#[test]
fn too_little_edge_seen_is_unknown_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("still");
    render(&a, STILL, "", "");
    let old = TableCalibration::load(&a.join("table.json")).unwrap();
    let corners = old.file.image_corners_px.clone();
    let mut still = bgr(&a.join("empty_table.png"));
    // Arms, sleeves and items over three whole sides, wider than the search band.
    for k in 0..3 {
        band(
            &mut still,
            corners[k],
            corners[(k + 1) % 4],
            60.0,
            [120, 150, 215],
        );
    }
    let check = check_bump(frame(&still), &old, &OutlineSearch::CHECK).unwrap();
    eprintln!("{}", check.summary());
    assert_eq!(check.verdict, BumpVerdict::Unknown, "{}", check.summary());
    assert!(check.unknown_because.is_some());
    assert!(matches!(
        recalibrate(frame(&still), &old).unwrap(),
        Recalibration::Unknown(_)
    ));
    // The re-fit refuses, naming a side it could not see.
    let err = refit_table(frame(&still), &old, &OutlineSearch::REFIT).unwrap_err();
    assert!(matches!(err, RefitError::NotFound(_)), "{err}");
    assert!(err.to_string().contains("side"), "{err}");
}

/// The table in the bumped frame is 10 mm narrower than the old calibration's: no
/// rigid camera sees a 1000 x 700 table there, and the re-fit says so in one line.
#[test]
fn a_refit_that_disagrees_with_itself_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("still"), dir.path().join("other"));
    render(&a, STILL, "", "");
    render(
        &b,
        BUMPED,
        r#""table": { "width_mm": 1000, "height_mm": 690 },"#,
        "",
    );
    let old = TableCalibration::load(&a.join("table.json")).unwrap();
    let other = bgr(&b.join("empty_table.png"));
    let refit = refit_table(frame(&other), &old, &OutlineSearch::REFIT).unwrap();
    assert!(refit.doubt.is_some(), "{:?}", refit.corner_offsets_mm);
    let err = recalibrate(frame(&other), &old).unwrap_err();
    assert!(matches!(err, RefitError::Disagrees(_)), "{err}");
    assert!(err.to_string().contains("disagrees with itself"), "{err}");
    assert!(
        err.to_string().contains("calibrate the table again"),
        "{err}"
    );

    // The command line: one line, exit 1, nothing written.
    let new = dir.path().join("new.json");
    let (code, _, stderr) = run(&[
        "calibrate",
        "refit",
        "--image",
        &s(&b.join("empty_table.png")),
        "--table",
        &s(&a.join("table.json")),
        "-o",
        &s(&new),
    ]);
    assert_eq!(code, 1, "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("disagrees with itself"), "{stderr}");
    assert!(!new.exists());
}

#[test]
fn calibrate_refit_prints_the_move_and_writes_the_new_table() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = still_and_bumped(dir.path());
    let old_path = a.join("table.json");
    let new = dir.path().join("new.json");
    let args = |image: &Path, out: &Path| {
        vec![
            "calibrate".to_string(),
            "refit".into(),
            "--image".into(),
            s(image),
            "--table".into(),
            s(&old_path),
            "-o".into(),
            s(out),
        ]
    };
    let run_with = |v: Vec<String>| run(&v.iter().map(String::as_str).collect::<Vec<&str>>());

    // Still: said, nothing written.
    let (code, stdout, stderr) = run_with(args(&a.join("empty_table.png"), &new));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("where the calibration puts it"), "{stdout}");
    assert!(stdout.contains("nothing to re-fit"), "{stdout}");
    assert!(!new.exists());

    // Bumped: the move, the new corners, the file (a valid table.json).
    let (code, stdout, stderr) = run_with(args(&b.join("empty_table.png"), &new));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("the camera has moved"), "{stdout}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let written = TableCalibration::load(&new).unwrap();
    let truth = TableCalibration::load(&b.join("table.json")).unwrap();
    for (got, want) in written
        .file
        .image_corners_px
        .iter()
        .zip(&truth.file.image_corners_px)
    {
        assert!((got[0] - want[0]).hypot(got[1] - want[1]) <= 1.0);
    }
    let text = std::fs::read_to_string(&new).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["refit"]["shift_mm"].as_f64().unwrap() > MOVED_MM,
        "{text}"
    );

    // Never over the old calibration.
    let before = std::fs::read_to_string(&old_path).unwrap();
    let (code, _, stderr) = run_with(args(&b.join("empty_table.png"), &old_path));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("the old calibration itself"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&old_path).unwrap(), before);
}
