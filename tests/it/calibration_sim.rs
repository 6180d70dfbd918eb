//! The whole calibration chain on simulator renders, against the simulator's true
//! camera: `simulate --scenario chessboard` (board views and the empty table) →
//! `calibrate camera` → `calibrate table` → table points projected by the *true*
//! camera are mapped back through *our* calibration. Two camera poses, both video
//! sizes: focal lengths within 0.5 %, table points (corners and inside) within 1 mm.
#![cfg(feature = "opencv")]

use fishtrack::calibration::{CameraIntrinsics, TableCalibration};
use nalgebra::Point2;
use opencv::core::{Mat, Size};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, videoio};
use std::path::Path;
use std::process::Command;

fn fishtrack(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fishtrack {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Writes `frames` as an MJPG video.
fn write_video(path: &Path, frames: &[Mat]) {
    let size = Size::new(frames[0].cols(), frames[0].rows());
    let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
    let mut writer =
        videoio::VideoWriter::new(path.to_string_lossy().as_ref(), fourcc, 30.0, size, true)
            .unwrap();
    assert!(writer.is_opened().unwrap());
    for f in frames {
        writer.write(f).unwrap();
    }
    writer.release().unwrap();
}

fn blurred(m: &Mat) -> Mat {
    let mut out = Mat::default();
    imgproc::gaussian_blur(
        m,
        &mut out,
        Size::new(0, 0),
        3.0,
        3.0,
        opencv::core::BORDER_DEFAULT,
    )
    .unwrap();
    out
}

/// From a video, `calibrate camera` keeps sharp frames only, one per board pose, and
/// still finds the focal length; `calibrate table --frame` reads the frame asked for.
fn video_inputs(sim_dir: &Path, d: &Path, truth_camera: &CameraIntrinsics, size_mm: (f64, f64)) {
    let mut boards: Vec<std::path::PathBuf> = std::fs::read_dir(sim_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("board_")
        })
        .collect();
    boards.sort();
    // Each pose: a blurred frame (moving), the sharp one, the sharp one again, blurred.
    let mut frames = vec![];
    for b in &boards {
        let m = imgcodecs::imread(b, imgcodecs::IMREAD_COLOR).unwrap();
        frames.extend([blurred(&m), m.clone(), m.clone(), blurred(&m)]);
    }
    let video = d.join("boards.avi");
    write_video(&video, &frames);
    let camera_json = d.join("camera_video.json");
    fishtrack(&[
        "calibrate",
        "camera",
        "--images",
        &s(&video),
        "-o",
        &s(&camera_json),
    ]);
    let cam = CameraIntrinsics::load(&camera_json).unwrap();
    eprintln!(
        "video: {} views {:?}, fx {:.3}",
        cam.views,
        cam.view_names,
        cam.fx()
    );
    assert!(
        cam.views >= 6 && cam.views <= boards.len(),
        "{} views",
        cam.views
    );
    for name in &cam.view_names {
        let index: usize = name.trim_start_matches("frame ").parse().unwrap();
        assert!(matches!(index % 4, 1 | 2), "{name} is a blurred frame");
    }
    assert!(
        (cam.fx() / truth_camera.fx() - 1.0).abs() < 0.005,
        "fx {}",
        cam.fx()
    );

    let table =
        imgcodecs::imread(sim_dir.join("empty_table.png"), imgcodecs::IMREAD_COLOR).unwrap();
    let black = Mat::zeros(table.rows(), table.cols(), table.typ())
        .unwrap()
        .to_mat()
        .unwrap();
    let table_video = d.join("table.avi");
    write_video(&table_video, &[black.clone(), table.clone(), black]);
    let out = d.join("table_video.json");
    let size = format!("{}x{}", size_mm.0, size_mm.1);
    let frame0 = [
        "calibrate",
        "table",
        "--image",
        &s(&table_video),
        "--camera",
        &s(&camera_json),
        "--size",
        &size,
        "-o",
    ];
    let failed = Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .args(frame0)
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1), "frame 0 is black: no table");
    fishtrack(&[&frame0[..], &[&s(&out), "--frame", "1"]].concat());
    assert!(TableCalibration::load(&out).is_ok());
}

fn chain(seed: u64, size: &str, tilt_deg: Option<f64>, with_video: bool) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tilt = tilt_deg.map(|t| t.to_string());
    let seed = seed.to_string();
    let mut sim = vec![
        "simulate",
        "--scenario",
        "chessboard",
        "--seed",
        &seed,
        "--size",
        size,
        "--views",
        "12",
    ];
    if let Some(t) = &tilt {
        sim.extend(["--camera-tilt", t]);
    }
    let out_dir = s(&d.join("sim"));
    sim.extend(["-o", &out_dir]);
    fishtrack(&sim);
    let sim_dir = d.join("sim");
    let truth_camera = CameraIntrinsics::load(&sim_dir.join("camera.json")).unwrap();
    let truth = TableCalibration::load(&sim_dir.join("table.json")).unwrap();

    let camera_json = d.join("camera.json");
    fishtrack(&[
        "calibrate",
        "camera",
        "--images",
        &s(&sim_dir.join("board_*.png")),
        "-o",
        &s(&camera_json),
    ]);
    let ours_camera = CameraIntrinsics::load(&camera_json).unwrap();
    let fx_err = (ours_camera.fx() / truth_camera.fx() - 1.0).abs();
    let fy_err = (ours_camera.fy() / truth_camera.fy() - 1.0).abs();

    let (lo, hi) = truth.bounds_mm();
    let (w, h) = (hi.x - lo.x, hi.y - lo.y);
    let table_json = d.join("table.json");
    fishtrack(&[
        "calibrate",
        "table",
        "--image",
        &s(&sim_dir.join("empty_table.png")),
        "--camera",
        &s(&camera_json),
        "--size",
        &format!("{w}x{h}"),
        "-o",
        &s(&table_json),
    ]);
    assert!(d.join("table_check.png").is_file());
    let ours = TableCalibration::load(&table_json).unwrap();

    // Known table points: the corners, then a grid inside.
    let mut points: Vec<Point2<f64>> = truth
        .file
        .corners_mm
        .iter()
        .map(|c| Point2::new(c[0], c[1]))
        .collect();
    let corners = points.len();
    for i in 0..=4 {
        for j in 0..=4 {
            points.push(Point2::new(
                lo.x + w * i as f64 / 4.0,
                lo.y + h * j as f64 / 4.0,
            ));
        }
    }
    let errors: Vec<f64> = points
        .iter()
        .map(|&p| (ours.table_from_pixel(truth.pixel_from_table(p)) - p).norm())
        .collect();
    let corner_max = errors[..corners].iter().copied().fold(0.0, f64::max);
    let all_max = errors.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "{size} tilt {tilt_deg:?}: RMS {:.3} px, fx {:.3} (truth {:.3}, {:.3}%), fy {:.3} ({:.3}%), corners max {corner_max:.3} mm, grid max {all_max:.3} mm, reprojection {:.3} mm",
        ours_camera.rms_px,
        ours_camera.fx(),
        truth_camera.fx(),
        100.0 * fx_err,
        ours_camera.fy(),
        100.0 * fy_err,
        ours.file.reprojection_error_mm
    );
    assert!(
        fx_err < 0.005 && fy_err < 0.005,
        "focal off: fx {fx_err}, fy {fy_err}"
    );
    assert!(
        corner_max < 1.0,
        "table corners off by up to {corner_max} mm: {errors:?}"
    );
    assert!(
        all_max < 1.0,
        "table points off by up to {all_max} mm: {errors:?}"
    );
    if with_video {
        video_inputs(&sim_dir, d, &truth_camera, (w, h));
    }
}

#[test]
fn chain_at_1280x720_default_pose() {
    chain(1, "1280x720", None, true);
}

#[test]
fn chain_at_1920x1080_steeper_pose() {
    chain(2, "1920x1080", Some(38.0), false);
}
