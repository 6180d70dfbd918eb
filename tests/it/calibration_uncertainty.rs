//! Issue 15, item 3: how far a point on the table may be off, with the intrinsics'
//! uncertainty. `calibrate camera` on the simulator's chessboard views writes OpenCV's
//! standard deviations and the intrinsics' covariance (whose diagonal they are);
//! `calibrate table` with that camera.json carries it into `position_uncertainty_mm`
//! (both parts written), a doubled uncertainty gives a larger figure, and a camera.json
//! that states none gives the edges' part alone.
#![cfg(feature = "opencv")]

use crate::common::run;
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn table(d: &Path, camera: &Path, out: &str) -> Value {
    let out = d.join(out).join("table.json");
    let (code, stdout, stderr) = run(&[
        "calibrate",
        "table",
        "--image",
        &s(&d.join("empty_table.png")),
        "--camera",
        &s(camera),
        "--size",
        "1000x700",
        "-o",
        &s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("from the intrinsics' uncertainty"),
        "{stdout}"
    );
    assert!(out.with_file_name("table_check.png").exists());
    read(&out)
}

#[test]
fn the_intrinsics_uncertainty_reaches_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, stdout, stderr) = run(&[
        "simulate",
        "--scenario",
        "chessboard",
        "--seed",
        "1",
        "--views",
        "10",
        "-o",
        &s(d),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let camera = d.join("cam.json");
    let (code, stdout, stderr) = run(&[
        "calibrate",
        "camera",
        "--images",
        &s(&d.join("board_*.png")),
        "-o",
        &s(&camera),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let mut cam = read(&camera);
    let sd: Vec<f64> = serde_json::from_value(cam["intrinsics_std_dev"].clone()).unwrap();
    let cov: Vec<Vec<f64>> = serde_json::from_value(cam["intrinsics_covariance"].clone()).unwrap();
    assert_eq!(sd.len(), 9);
    for i in 0..9 {
        let from_cov = cov[i][i].sqrt();
        assert!(
            (from_cov - sd[i]).abs() <= 1e-3 * sd[i].max(1e-12),
            "parameter {i}: covariance {from_cov}, OpenCV {}",
            sd[i]
        );
    }

    let found = table(d, &camera, "a");
    let total = found["position_uncertainty_mm"].as_f64().unwrap();
    let edges = found["position_uncertainty_edges_mm"].as_f64().unwrap();
    let intrinsics = found["position_uncertainty_intrinsics_mm"]
        .as_f64()
        .unwrap();
    assert!(intrinsics > 0.0 && total > edges && total < 1.0, "{found}");

    // Twice the deviations: a larger figure.
    let doubled: Vec<Vec<f64>> = cov
        .iter()
        .map(|row| row.iter().map(|v| 4.0 * v).collect())
        .collect();
    cam["intrinsics_covariance"] = serde_json::to_value(doubled).unwrap();
    let wider = d.join("wider.json");
    std::fs::write(&wider, cam.to_string()).unwrap();
    let more = table(d, &wider, "b");
    let more_intrinsics = more["position_uncertainty_intrinsics_mm"].as_f64().unwrap();
    assert!(
        (more_intrinsics / intrinsics - 2.0).abs() < 0.2,
        "{more_intrinsics} vs {intrinsics}"
    );
    assert!(more["position_uncertainty_mm"].as_f64().unwrap() > total);

    // The simulator's true camera.json states no uncertainty: the edges' part alone.
    let plain = table(d, &d.join("camera.json"), "c");
    assert_eq!(plain["position_uncertainty_intrinsics_mm"], 0.0, "{plain}");
    assert_eq!(
        plain["position_uncertainty_mm"], plain["position_uncertainty_edges_mm"],
        "{plain}"
    );
}
