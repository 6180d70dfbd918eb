//! `calibrate table` on the simulator's random looks (issue 15): the table's
//! outline must be found however the top is lit and whatever lines cross it.
//! Before, the region of the centre's colour stopped where a lamp's falloff or a
//! spotlight darkened the top, or at a plank seam, and the outline was one plank
//! or the lit part of the top: refused (corners 23–327 mm off, a W/H of 1.15–4.0
//! seen for 1.43). Each test renders one empty table (`--look random`, the
//! camera's seed jitter), calibrates it with the true camera and compares the
//! corners with the truth's. The first tests bound finding the table, not the
//! last pixel; the later ones, the near corners where a thick side face is in view,
//! the sides clear of it on a frame passed through a JPEG and on a floor as dark as
//! the top's rim, the claim, and a camera turned far enough round to see two faces.
#![cfg(feature = "opencv")]

use crate::calibration_side_face::{calibrate_empty_table, corner_errors, corners, read, s};
use crate::common::run;

/// Renders the empty table of random look `seed` and calibrates it; the corners'
/// errors (px) against the truth's.
fn calibrate_random_look(seed: u64) -> Vec<f64> {
    calibrate_look(seed, false)
}

/// The empty table's render passed through a JPEG of quality 85 (OpenCV's default
/// 4:2:0: the colour at half the resolution, in blocks), as a webcam's MJPEG or a
/// phone's photo carries it.
fn through_jpeg(png: &std::path::Path) {
    use opencv::core::Vector;
    use opencv::imgcodecs;
    let image = imgcodecs::imread(s(png), imgcodecs::IMREAD_COLOR).unwrap();
    let params = Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, 85]);
    let mut jpeg = Vector::<u8>::new();
    assert!(imgcodecs::imencode(".jpg", &image, &mut jpeg, &params).unwrap());
    let decoded = imgcodecs::imdecode(&jpeg, imgcodecs::IMREAD_COLOR).unwrap();
    assert!(imgcodecs::imwrite(s(png), &decoded, &Vector::new()).unwrap());
}

/// [`calibrate_random_look`], the frame first through a JPEG when `jpeg`.
fn calibrate_look(seed: u64, jpeg: bool) -> Vec<f64> {
    let (dir, out) = render_and_calibrate(seed, jpeg);
    let d = dir.path();
    let errors = corner_errors(
        &corners(&read(&out)),
        &corners(&read(&d.join("table.json"))),
    );
    eprintln!("look {seed} (jpeg: {jpeg}): corner errors {errors:.2?} px");
    errors
}

/// Renders random look `seed` (through a JPEG when `jpeg`) and calibrates it: the
/// folder (the truth's `table.json` in it) and our table.json.
fn render_and_calibrate(seed: u64, jpeg: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let seed = seed.to_string();
    let (code, stdout, stderr) = run(&[
        "simulate",
        "--scenario",
        "empty-table",
        "--seed",
        &seed,
        "--look",
        "random",
        "--look-seed",
        &seed,
        "-o",
        &s(d),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    if jpeg {
        through_jpeg(&d.join("empty_table.png"));
    }
    let (out, (code, stdout, stderr)) = calibrate_empty_table(d);
    let look = std::fs::read_to_string(d.join("look.json")).unwrap_or_default();
    assert_eq!(code, 0, "look {seed}: {stdout}{stderr}\n{look}");
    (dir, out)
}

fn check(seed: u64) {
    let errors = calibrate_random_look(seed);
    let worst = errors.iter().copied().fold(0.0, f64::max);
    assert!(worst <= 3.0, "look {seed}: corners off by {errors:.2?} px");
}

/// Planks along the table's long side, seams every plank, a 10 mm face: the
/// outline was one plank (corner 2 327 mm off).
#[test]
fn planks_with_seams_across_the_picture() {
    check(25);
}

/// Dark planks on tiles lit from one side: the outline stopped where the lamp's
/// light fell off (corner 2 64 mm off).
#[test]
fn planks_darker_on_one_side() {
    check(13);
}

/// Felt under a spotlight on a wooden floor: the dim side was left out (42.6 mm).
#[test]
fn felt_under_a_spotlight() {
    check(12);
}

/// Laminate with a 42 mm face on carpet (44.9 mm).
#[test]
fn laminate_with_a_thick_face() {
    check(19);
}

/// Cloth with a 40 mm face on tiles (53.7 mm).
#[test]
fn cloth_with_a_thick_face() {
    check(17);
}

/// A thick side face in view, lit like the darker rim along the top's edge: no step
/// marks where the top ends, and its reading fell on the rim's ramp, the near
/// corners 2.5 px (look 12, felt with a 19 mm face) and 3.6 px (look 21, cloth with
/// a 41 mm face) inside the truth. The three sides clear of the face and the size
/// place that side.
#[test]
fn near_corners_to_a_pixel_under_a_thick_face() {
    for seed in [12, 21] {
        let errors = calibrate_random_look(seed);
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(worst <= 1.0, "look {seed}: corners off by {errors:.2?} px");
    }
}

/// Through a JPEG, the colour at half the resolution: the hue's rise across a side
/// was blurred over twice the width and uneven block to block, its steepest point
/// fell at either end, and a stretch of one tilted a side clear of the face, which
/// alone with the others places the table (look 8, felt on carpet, 0.54 px; look 10,
/// planks on carpet, 0.96 px). Each profile is now averaged along the side and its
/// whole rise taken.
#[test]
fn clear_sides_through_a_jpeg() {
    for (seed, bound) in [(8, 0.3), (10, 0.7)] {
        let errors = calibrate_look(seed, true);
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(
            worst <= bound,
            "look {seed} through a JPEG: corners off by {errors:.2?} px"
        );
    }
}

/// Look 18 through a JPEG (planks on red-brown tiles, a 36 mm face): beyond the face
/// the floor's colour comes back near the top's (11–20 from it against the 16 that
/// counts as off the top), and grout and darker patches rise again beyond it. The
/// face side's reading took the last rise, so on half its stations the floor, and
/// the good table was refused, that side 7.5 mm outside the rigid camera's. A stretch
/// well off the top for longer than a rim is wide is now taken for the face.
#[test]
fn a_floor_like_the_top_beyond_the_face() {
    let errors = calibrate_look(18, true);
    let worst = errors.iter().copied().fold(0.0, f64::max);
    assert!(
        worst <= 1.0,
        "look 18 through a JPEG: corners off by {errors:.2?} px"
    );
}

/// Sides clear of a face on a floor about as dark as the darker rim along the top's
/// edge: the colour distance, chosen for the outline because the floor differs from
/// the top mostly in brightness, rose over the rim and read every clear side inside
/// the truth (look 4, cloth on dark tiles, 0.9 px; look 38, laminate on a carpet of
/// its hue, 1.8 px) or outside it on a lighter floor (look 13, planks on tiles, 1.0–
/// 1.4 px): corners 1.65, 1.95 and 2.92 px off. The hue, blind to the rim, now
/// reads a side where it disagrees with the colour distance beyond its own noise.
#[test]
fn clear_sides_on_a_floor_as_dark_as_the_rim() {
    for seed in [4, 13, 38] {
        let errors = calibrate_random_look(seed);
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(worst <= 1.0, "look {seed}: corners off by {errors:.2?} px");
    }
}

/// With one face in view the three clear sides place the table with nothing to
/// spare: a tenth or two of a pixel that a clear side's reading shares along it
/// reaches the table as a quarter millimetre, and the claim, from the edge points'
/// scatter alone, was below the true error (look 1, felt with a 25 mm face: 0.26 mm
/// off, 0.20 claimed; look 15, cloth: 0.28 off, 0.14 claimed). Each side's
/// stretches now say how far the whole side may be off, carried through the fit.
#[test]
fn the_claim_covers_the_clear_sides_error() {
    use crate::calibration_no_chessboard::worst_table_error_mm;
    use fishtrack::calibration::TableCalibration;
    for seed in [1, 15] {
        let (dir, out) = render_and_calibrate(seed, false);
        let truth = TableCalibration::load(&dir.path().join("table.json")).unwrap();
        let ours = TableCalibration::load(&out).unwrap();
        let error = worst_table_error_mm(&truth, &ours);
        let claimed = read(&out)["position_uncertainty_mm"].as_f64().unwrap();
        eprintln!("look {seed}: table within {error:.2} mm, claimed {claimed:.2} mm");
        assert!(
            claimed >= error,
            "look {seed}: table {error:.2} mm off, claimed {claimed:.2} mm"
        );
    }
}

/// The camera turned 60° round the table (35° from vertical): the faces of two
/// sides in view. Two clear sides cannot place the camera, so the face sides'
/// readings were chosen, the top's edge read inside each face or the outer
/// boundary, by how well a rigid camera fits them, and the outer boundary, the
/// faces' lower edge, won: corners 3.78 px off (look 12, felt with a 19 mm face)
/// and 1.53 px (look 5, planks with an 8 mm face). Each face side is now read inside
/// its face, a rim's pull in (0.2–0.8 px).
/// Renders the empty table of random look `look` with the camera 35° from vertical
/// and turned `yaw_deg` round the table (two faces in view from 45° on), and
/// calibrates it with the true camera: the folder (with the truth's `table.json`)
/// and our `table.json`.
fn render_two_faces(yaw_deg: u32, look: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scenario = d.join("scenario.json");
    std::fs::write(
        &scenario,
        format!(
            r#"{{ "kind": "empty-table", "camera": {{ "tilt_deg": 35, "yaw_deg": {yaw_deg},
                 "hfov_deg": 70, "k1": -0.08, "k2": 0.01 }} }}"#
        ),
    )
    .unwrap();
    let look = look.to_string();
    let (code, stdout, stderr) = run(&[
        "simulate",
        "--scenario",
        &s(&scenario),
        "--seed",
        "1",
        "--look",
        "random",
        "--look-seed",
        &look,
        "-o",
        &s(d),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (out, (code, stdout, stderr)) = calibrate_empty_table(d);
    assert_eq!(code, 0, "look {look}: {stdout}{stderr}");
    (dir, out)
}

#[test]
fn two_faces_in_view() {
    for seed in [12u64, 5] {
        let (dir, out) = render_two_faces(60, seed);
        let ours = read(&out);
        let truth = read(&dir.path().join("table.json"));
        let errors = corner_errors(&corners(&ours), &corners(&truth));
        eprintln!("look {seed}, two faces: corner errors {errors:.2?} px");
        assert_eq!(
            ours["side_face_in_view"],
            serde_json::json!([true, true, false, false]),
            "look {seed}"
        );
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(worst <= 1.25, "look {seed}: corners off by {errors:.2?} px");
    }
}

/// With two faces in view both face sides, read inside their faces, place the
/// camera with the two clear ones, and a rim pulls both readings in: an offset of a
/// whole side, in one direction, that the points' scatter and the stretches'
/// spread do not see. The camera turned 45°, looks 1 and 12: the table 0.97 and
/// 1.90 mm off, claimed 0.72 and 1.31 mm before the rim's pull was counted.
#[test]
fn the_claim_covers_a_rims_pull_with_two_faces() {
    use crate::calibration_no_chessboard::worst_table_error_mm;
    use fishtrack::calibration::TableCalibration;
    for look in [1u64, 12] {
        let (dir, out) = render_two_faces(45, look);
        assert_eq!(
            read(&out)["side_face_in_view"],
            serde_json::json!([true, true, false, false]),
            "look {look}"
        );
        let truth = TableCalibration::load(&dir.path().join("table.json")).unwrap();
        let ours = TableCalibration::load(&out).unwrap();
        let error = worst_table_error_mm(&truth, &ours);
        let claimed = read(&out)["position_uncertainty_mm"].as_f64().unwrap();
        eprintln!("look {look}, two faces: table within {error:.2} mm, claimed {claimed:.2} mm");
        assert!(
            claimed >= error,
            "look {look}: table {error:.2} mm off, claimed {claimed:.2} mm"
        );
    }
}
