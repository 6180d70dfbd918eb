//! Camera calibration on real photos: OpenCV's own sample chessboard images
//! (`../shared/data/calib/left*.jpg`, 640x480, 9x6 inner corners) against the result of
//! OpenCV's standard procedure stored with them (`reference.json`). Also runs the
//! binary on them once, so the CLI path is the one measured.
#![cfg(feature = "opencv")]

use fishtrack::calibration::CameraIntrinsics;
use fishtrack::vision::calibrate::{
    collect_views_from_images, solve_camera, Chessboard, OutlierRule, SubpixWindow,
};
use fishtrack::vision::capture::FrameSource;
use std::path::PathBuf;

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/calib"));
    if dir.join("reference.json").is_file() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is missing: the real calibration images are required in CI",
            dir.display()
        );
    }
    eprintln!(
        "skipping: {} is absent (set CI to make this a failure)",
        dir.display()
    );
    None
}

fn reference(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn opencv_sample_images_match_the_reference() {
    let Some(dir) = data_dir() else { return };
    let r = reference(&dir);
    let board = Chessboard::parse("9x6", 25.0).unwrap();
    let mut source = FrameSource::open(&dir.join("left*.jpg").to_string_lossy()).unwrap();
    let search =
        collect_views_from_images(&mut source, &board, SubpixWindow::Standard, &mut || {}).unwrap();
    let solution = solve_camera(
        &search.views,
        search.image_size,
        &board,
        OutlierRule::default(),
        search.read,
    )
    .unwrap();
    let cam = &solution.camera;
    let used: Vec<&str> = r["images_used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        cam.view_names, used,
        "dropped {:?}, no board in {:?}",
        solution.dropped, search.missed
    );
    let rms_ref = r["rms"].as_f64().unwrap();
    eprintln!(
        "RMS {:.5} px (reference {rms_ref:.5}); K {:?}",
        cam.rms_px, cam.camera_matrix
    );
    assert!(
        rel(cam.rms_px, rms_ref) < 0.02,
        "RMS {} vs {rms_ref}",
        cam.rms_px
    );
    let k_ref = &r["camera_matrix"];
    for (row, col) in [(0, 0), (1, 1), (0, 2), (1, 2)] {
        let want = k_ref[row][col].as_f64().unwrap();
        let got = cam.camera_matrix[row][col];
        assert!(rel(got, want) < 0.01, "K[{row}][{col}] = {got} vs {want}");
    }
    // The worst view is left02, as in the reference, and it was kept (1.2 px is not an outlier).
    let (worst, _) = cam
        .per_view_rms_px
        .iter()
        .zip(&cam.view_names)
        .map(|(e, n)| (n.as_str(), *e))
        .fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
    assert_eq!(worst, "left02.jpg");
    for (name, err) in cam.view_names.iter().zip(&cam.per_view_rms_px) {
        let want = r["per_view_rms"][name.as_str()].as_f64().unwrap();
        assert!(
            (err - want).abs() < 0.05 + 0.1 * want,
            "{name}: {err} vs {want}"
        );
    }
}

#[test]
fn the_binary_writes_camera_json_and_coverage() {
    let Some(dir) = data_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let camera_json = out.path().join("camera.json");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .args(["calibrate", "camera", "--images"])
        .arg(&dir)
        .args(["--board", "9x6", "--square", "25", "-o"])
        .arg(&camera_json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("13 views used of 13 read"), "{stdout}");
    assert!(stdout.contains("corners seen per region"), "{stdout}");
    let cam = CameraIntrinsics::load(&camera_json).unwrap();
    assert_eq!(cam.image_size, [640, 480]);
    assert_eq!(cam.per_view_rms_px.len(), 13);
    let text = std::fs::read_to_string(&camera_json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let coverage: usize = v["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|n| n.as_u64().unwrap() as usize)
        .sum();
    assert_eq!(coverage, 13 * 54);
}
