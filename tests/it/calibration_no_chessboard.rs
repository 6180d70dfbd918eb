//! `calibrate table --no-chessboard` (issue 15, item 4): the focal length and k1
//! found from the empty table itself, on renders of the project's simulator through
//! three lenses (narrow, middling with a side face and defocus, wide), against the
//! simulator's true camera: the focal length within 2 %, and every point of the
//! table within 2 mm (the pixel at which the true camera sees a point, mapped back
//! with the calibration found). Both files are written, camera.json saying it came
//! from the table and serving `calibrate table --camera` as a chessboard's would;
//! a table seen square-on is refused in one line, and nothing is written.
#![cfg(feature = "opencv")]

use crate::common::{assert_fails_with, run};
use fishtrack::calibration::{CameraIntrinsics, TableCalibration};
use nalgebra::Point2;
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Simulates the empty table seen through `camera` (a scenario `camera` object's
/// body) with the look `render` (a `render` object's body) into `dir`.
fn render(dir: &Path, camera: &str, render: &str, seed: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let scenario = dir.join("scenario.json");
    std::fs::write(
        &scenario,
        format!(
            r#"{{ "kind": "empty-table", "camera": {{ {camera} }}, "render": {{ {render} }} }}"#
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        "simulate",
        "--scenario",
        &s(&scenario),
        "--seed",
        &seed.to_string(),
        "-o",
        &s(dir),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// The worst distance (mm) over an 11 x 8 grid of table points between each point
/// and where `ours` maps the pixel at which `truth` sees it; corner 0 may be the
/// truth's 0 or 2 (a rectangle's half-turn).
pub(crate) fn worst_table_error_mm(truth: &TableCalibration, ours: &TableCalibration) -> f64 {
    let (w, h) = (1000.0, 700.0);
    let mut worst: f64 = 0.0;
    for i in 0..=10 {
        for j in 0..=7 {
            let p = Point2::new(w * i as f64 / 10.0, h * j as f64 / 7.0);
            let q = ours.table_from_pixel(truth.pixel_from_table(p));
            let turned = Point2::new(w - p.x, h - p.y);
            worst = worst.max((q - p).norm().min((q - turned).norm()));
        }
    }
    worst
}

/// Renders the table through `camera`, once per look of `looks` (one seed, so one
/// camera; the looks differ only in what leaves the camera alone, such as sensor
/// noise, as frames of a video do), calibrates it with no chessboard from those
/// frames (in one folder when more than one), and checks the focal length and the
/// table's positions against the truth. The calibration's summary.
fn check(camera: &str, looks: &[&str], seed: u64) -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shots = d.join("frames");
    std::fs::create_dir_all(&shots).unwrap();
    let frames = looks.len();
    for (k, look) in looks.iter().enumerate() {
        let sim = d.join(format!("sim{k}"));
        render(&sim, camera, look, seed);
        // One camera for every frame.
        assert_eq!(
            std::fs::read(sim.join("camera.json")).unwrap(),
            std::fs::read(d.join("sim0/camera.json")).unwrap()
        );
        std::fs::copy(
            sim.join("empty_table.png"),
            shots.join(format!("empty_{k}.png")),
        )
        .unwrap();
    }
    let image = if frames == 1 {
        shots.join("empty_0.png")
    } else {
        shots.clone()
    };
    let out = d.join("out");
    let (code, stdout, stderr) = run(&[
        "calibrate",
        "table",
        "--no-chessboard",
        "--image",
        &s(&image),
        "--size",
        "1000x700",
        "-o",
        &s(&out.join("table.json")),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let truth_camera = CameraIntrinsics::load(&d.join("sim0/camera.json")).unwrap();
    let truth = TableCalibration::load(&d.join("sim0/table.json")).unwrap();
    // camera.json beside table.json, loadable as any camera.json, saying where it
    // came from.
    let camera_path = out.join("camera.json");
    let found = CameraIntrinsics::load(&camera_path).unwrap();
    let written = read(&camera_path);
    assert_eq!(written["source"], "table", "{written}");
    assert_eq!(written["views"], frames, "{written}");
    assert_eq!(found.fx(), found.fy());
    assert_eq!((found.cx(), found.cy()), (640.0, 360.0));
    assert_eq!(&found.dist_coeffs[1..], &[0.0; 4]);
    let focal_error = found.fx() / truth_camera.fx() - 1.0;
    let ours = TableCalibration::load(&out.join("table.json")).unwrap();
    assert_eq!(read(&out.join("table.json"))["camera_source"], "table");
    let table_error = worst_table_error_mm(&truth, &ours);
    eprintln!(
        "{camera}: f {:.1} px (truth {:.1}, {:+.2} %), k1 {:.4} (truth {:.4}), table within {table_error:.2} mm\n{stdout}",
        found.fx(),
        truth_camera.fx(),
        100.0 * focal_error,
        found.dist_coeffs[0],
        truth_camera.dist_coeffs[0]
    );
    assert!(focal_error.abs() < 0.02, "f off by {focal_error}\n{stdout}");
    assert!(table_error < 2.0, "table off by {table_error} mm\n{stdout}");
    assert!(
        stdout.contains("from the table (no chessboard)"),
        "{stdout}"
    );
    // The camera found serves the chessboard path's command as its camera.json.
    let (code, again, stderr) = run(&[
        "calibrate",
        "table",
        "--image",
        &s(&shots.join("empty_0.png")),
        "--camera",
        &s(&camera_path),
        "--size",
        "1000x700",
        "-o",
        &s(&d.join("again.json")),
    ]);
    assert_eq!(code, 0, "{again}{stderr}");
    stdout
}

/// A narrow lens (50° across), little distortion.
#[test]
fn narrow_lens() {
    check(
        r#""tilt_deg": 35, "yaw_deg": 15, "hfov_deg": 50, "k1": -0.02, "k2": 0.0"#,
        &[""],
        1,
    );
}

/// A middling lens (70°) with a k2 the model leaves out, on dark red felt with an
/// 11.5 mm side face in view, soft shadows, vignetting and defocus; two frames.
#[test]
fn middling_lens_felt_side_face_two_frames() {
    let look = |noise: f64| {
        format!(
            r#""noise_sigma": {noise}, "look": {{
            "light": {{ "azimuth_deg": 344, "elevation_deg": 74, "shadow_strength": 0.18 }},
            "table": {{ "material": "felt", "colour": [104, 57, 61], "side_mm": 11.5 }},
            "floor": {{ "material": "carpet", "colour": [80, 87, 104] }},
            "camera": {{ "vignetting": 0.1, "defocus_px": 0.86 }} }}"#
        )
    };
    let summary = check(
        r#""tilt_deg": 35, "yaw_deg": 15, "hfov_deg": 70, "k1": -0.08, "k2": 0.01"#,
        &[&look(3.0), &look(2.5)],
        1,
    );
    assert!(summary.contains("2 frames"), "{summary}");
}

/// A wide lens (85°) with strong barrel distortion (k1 −0.12), seen from the
/// other side.
#[test]
fn wide_lens() {
    check(
        r#""tilt_deg": 40, "yaw_deg": -20, "hfov_deg": 85, "k1": -0.12, "k2": 0.0"#,
        &[""],
        2,
    );
}

/// Straight down at the table: no focal length; one line, exit 1, nothing written.
#[test]
fn square_on_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    render(
        d,
        r#""tilt_deg": 0, "yaw_deg": 0, "hfov_deg": 70, "k1": -0.08, "k2": 0.01"#,
        "",
        1,
    );
    let out = d.join("out");
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--no-chessboard",
            "--image",
            &s(&d.join("empty_table.png")),
            "--size",
            "1000x700",
            "-o",
            &s(&out.join("table.json")),
        ],
        &["square-on", "no focal length", "tilt the camera"],
    );
    assert!(!out.join("table.json").exists());
    assert!(!out.join("camera.json").exists());
}

/// The camera comes from the table or from --camera, not both; without either the
/// command says what is missing.
#[test]
fn camera_and_no_chessboard_exclude_each_other() {
    let (code, _, stderr) = run(&[
        "calibrate",
        "table",
        "--no-chessboard",
        "--camera",
        "camera.json",
        "--image",
        "x.png",
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--camera"), "{stderr}");
    let (code, _, stderr) = run(&["calibrate", "table", "--image", "x.png"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--camera"), "{stderr}");
}

/// 20° from straight down the focal length rests on the principal point assumed at
/// the centre: written, with its doubt over 2 % in camera.json and a warning; the
/// table's positions still within 2 mm.
#[test]
fn a_shallow_view_warns_that_f_rests_on_the_principal_point() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    render(
        d,
        r#""tilt_deg": 20, "yaw_deg": 0, "hfov_deg": 70, "k1": -0.08, "k2": 0.01"#,
        "",
        1,
    );
    let out = d.join("out");
    let (code, stdout, stderr) = run(&[
        "calibrate",
        "table",
        "--no-chessboard",
        "--image",
        &s(&d.join("empty_table.png")),
        "--size",
        "1000x700",
        "-o",
        &s(&out.join("table.json")),
        "--camera-output",
        &s(&d.join("lens.json")),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("warning: the focal length may be off by")
            && stderr.contains("principal point"),
        "{stderr}"
    );
    let written = read(&d.join("lens.json"));
    let f = written["camera_matrix"][0][0].as_f64().unwrap();
    let doubt = written["focal_uncertainty_px"].as_f64().unwrap();
    let edges = written["focal_statistical_px"].as_f64().unwrap();
    assert!(doubt > 0.02 * f && edges < 0.01 * f, "{written}");
    let truth = TableCalibration::load(&d.join("table.json")).unwrap();
    let ours = TableCalibration::load(&out.join("table.json")).unwrap();
    assert!(!out.join("camera.json").exists());
    let table_error = worst_table_error_mm(&truth, &ours);
    assert!(table_error < 2.0, "{table_error} mm");
}

/// A camera.json beside the table.json that did not come from a table (here a
/// chessboard's) is not replaced unasked: one line, exit 1, the file untouched.
#[test]
fn a_chessboard_camera_beside_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let camera = d.join("camera.json");
    let chessboard = r#"{"image_size":[1280,720],"camera_matrix":[[900,0,640],[0,900,360],[0,0,1]],"dist_coeffs":[0,0,0,0,0],"board":[9,6]}"#;
    std::fs::write(&camera, chessboard).unwrap();
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--no-chessboard",
            "--image",
            &s(&d.join("empty.png")),
            "-o",
            &s(&d.join("table.json")),
        ],
        &["camera.json exists", "not replaced", "--camera-output"],
    );
    assert_eq!(std::fs::read_to_string(&camera).unwrap(), chessboard);
}
