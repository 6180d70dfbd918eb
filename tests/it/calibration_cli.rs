//! `fishtrack calibrate` on bad input, through the binary: each case must end with
//! exit code 1 and one line saying what is wrong (never a panic); and the table
//! command end to end on a drawn frame with clicked corners.
#![cfg(feature = "opencv")]

use crate::common::{assert_fails_with, run};
use fishtrack::calibration::{CameraIntrinsics, TableCalibration};
use nalgebra::Point2;
use opencv::core::{Mat, Point, Rect, Scalar, Vector, CV_8UC3};
use opencv::{imgcodecs, imgproc};
use std::path::Path;

fn write(path: &Path, image: &Mat) {
    assert!(imgcodecs::imwrite(path, image, &Vector::new()).unwrap());
}

fn blank(w: i32, h: i32, grey: f64) -> Mat {
    Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(grey)).unwrap()
}

/// A flat chessboard of 10x7 squares (9x6 inner corners), 36 px squares.
fn chessboard_image() -> Mat {
    let mut m = blank(640, 480, 255.0);
    for r in 0..7 {
        for c in 0..10 {
            if (r + c) % 2 == 0 {
                let rect = Rect::new(140 + c * 36, 110 + r * 36, 36, 36);
                imgproc::rectangle(&mut m, rect, Scalar::all(0.0), -1, imgproc::LINE_8, 0).unwrap();
            }
        }
    }
    m
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn no_board_in_any_image_says_how_many_were_read() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        write(
            &dir.path().join(format!("v{i}.png")),
            &blank(320, 240, 128.0),
        );
    }
    let out = dir.path().join("camera.json");
    assert_fails_with(
        &[
            "calibrate",
            "camera",
            "--images",
            &s(dir.path()),
            "-o",
            &s(&out),
        ],
        &["no 9x6 chessboard", "3 images read"],
    );
    assert!(!out.exists());
}

#[test]
fn too_few_views_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        write(&dir.path().join(format!("v{i}.png")), &chessboard_image());
    }
    write(&dir.path().join("v9.png"), &blank(640, 480, 128.0));
    let glob = dir.path().join("v*.png");
    assert_fails_with(
        &[
            "calibrate",
            "camera",
            "--images",
            &s(&glob),
            "-o",
            &s(&dir.path().join("c.json")),
        ],
        &["only 3 usable board views (of 4 read)", "at least 5"],
    );
}

#[test]
fn bad_arguments_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    assert_fails_with(
        &[
            "calibrate",
            "camera",
            "--images",
            "/no/such/dir",
            "-o",
            "x.json",
        ],
        &["/no/such/dir"],
    );
    write(&dir.path().join("a.png"), &blank(64, 48, 1.0));
    assert_fails_with(
        &[
            "calibrate",
            "camera",
            "--images",
            &s(dir.path()),
            "--board",
            "9*6",
        ],
        &["9x6"],
    );
    let cam = dir.path().join("camera.json");
    CameraIntrinsics::pinhole([64, 48], 60.0)
        .save(&cam)
        .unwrap();
    let frame = s(&dir.path().join("a.png"));
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--image",
            &frame,
            "--camera",
            &s(&cam),
            "--size",
            "1000by700",
        ],
        &["--size"],
    );
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--image",
            &frame,
            "--camera",
            &s(&cam),
            "--corners",
            "1,2;3,4",
        ],
        &["4 corners"],
    );
}

#[test]
fn table_not_found_suggests_corners() {
    let dir = tempfile::tempdir().unwrap();
    let frame = dir.path().join("empty.png");
    write(&frame, &blank(640, 360, 90.0));
    let cam = dir.path().join("camera.json");
    CameraIntrinsics::pinhole([640, 360], 600.0)
        .save(&cam)
        .unwrap();
    let out = dir.path().join("table.json");
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--image",
            &s(&frame),
            "--camera",
            &s(&cam),
            "-o",
            &s(&out),
        ],
        &["table not found", "--corners"],
    );
    assert!(!out.exists());
}

#[test]
fn camera_of_another_resolution_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let frame = dir.path().join("f.png");
    write(&frame, &blank(640, 360, 90.0));
    let cam = dir.path().join("camera.json");
    CameraIntrinsics::pinhole([1280, 720], 900.0)
        .save(&cam)
        .unwrap();
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--image",
            &s(&frame),
            "--camera",
            &s(&cam),
            "-o",
            &s(&dir.path().join("t.json")),
        ],
        &["1280x720", "640x360"],
    );
}

/// Clicked corners of a drawn table: table.json maps them to the rectangle, and the
/// check picture is written next to it.
#[test]
fn table_from_given_corners_writes_table_and_check_picture() {
    let dir = tempfile::tempdir().unwrap();
    let mut frame = blank(640, 360, 60.0);
    let px = [(100, 320), (540, 320), (500, 60), (140, 60)];
    let pts: Vector<Point> = px.iter().map(|&(u, v)| Point::new(u, v)).collect();
    imgproc::fill_convex_poly(
        &mut frame,
        &pts,
        Scalar::new(40.0, 160.0, 40.0, 0.0),
        imgproc::LINE_8,
        0,
    )
    .unwrap();
    let frame_path = dir.path().join("f.png");
    write(&frame_path, &frame);
    let cam = dir.path().join("camera.json");
    CameraIntrinsics::pinhole([640, 360], 500.0)
        .save(&cam)
        .unwrap();
    let out = dir.path().join("t.json");
    let corners = px
        .iter()
        .map(|(u, v)| format!("{u},{v}"))
        .collect::<Vec<_>>()
        .join(";");
    let (code, stdout, stderr) = run(&[
        "calibrate",
        "table",
        "--image",
        &s(&frame_path),
        "--camera",
        &s(&cam),
        "--size",
        "1000x700",
        "--corners",
        &corners,
        "-o",
        &s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(dir.path().join("t_check.png").is_file());
    let cal = TableCalibration::load(&out).unwrap();
    let mm = [(0.0, 0.0), (1000.0, 0.0), (1000.0, 700.0), (0.0, 700.0)];
    for ((u, v), (x, y)) in px.iter().zip(mm) {
        let got = cal.table_from_pixel(Point2::new(*u as f64, *v as f64));
        assert!(
            (got - Point2::new(x, y)).norm() < 1e-6,
            "{got:?} vs ({x},{y})"
        );
    }
    // Going round the wrong way (crossing) is refused.
    let crossed = "100,320;500,60;540,320;140,60";
    assert_fails_with(
        &[
            "calibrate",
            "table",
            "--image",
            &s(&frame_path),
            "--camera",
            &s(&cam),
            "--corners",
            crossed,
            "-o",
            &s(&out),
        ],
        &["round the table"],
    );
}
