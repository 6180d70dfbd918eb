//! A bumped camera during a match (issue 15 item 5, issue 18 "camera state"): the
//! bundled match with its picture turned by 0.3° and moved by (5, −3) px from a
//! frame between two shots on (written losslessly, so every frame before it is the
//! demo's own). Without the re-fit the rest poses after the bump are off by the bump;
//! with it (the driver in-process, `Settings::recalibrate`) they are within the
//! re-fit's precision, the frames before untouched, and the bump told as a `camera`
//! `bumped` event and kept in `video.recalibrations`. `live` journals the re-fit: a
//! match resumed from rest after it, with the checks off, still measures with it.
#![cfg(feature = "opencv")]

use crate::common::run;
use fishtrack::calibration::TableCalibration;
use fishtrack::config::Game;
use fishtrack::driver::{self, CameraState, Collect, Event, Settings, VideoSource};
use fishtrack::record::{Record, Shot};
use opencv::core::{Mat, Point2f, Scalar, Size};
use opencv::prelude::*;
use opencv::{imgproc, videoio};
use std::path::{Path, PathBuf};

/// The bump: between shot 3's rest (frame 269) and shot 4's flick (frame 320).
const BUMP_FRAME: i32 = 290;
/// Frames written: the whole match.
const FRAMES: i32 = 415;
/// The first shot whose rest is after the bump.
const AFTER: usize = 4;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The demo's first `FRAMES` frames, each from `BUMP_FRAME` on turned and moved as
/// a knocked camera would see the table (`bump: false`: as they are), into an FFV1
/// file (lossless: frames before the bump decode to the demo's own).
fn write_clip(path: &Path, bump: bool) {
    let mut cap = videoio::VideoCapture::from_file(s(&repo("samples/demo/match.avi")), 0)
        .expect("open the demo");
    let (w, h) = (1280, 720);
    let fourcc = videoio::VideoWriter::fourcc('F', 'F', 'V', '1').expect("fourcc");
    let mut out =
        videoio::VideoWriter::new(s(path), fourcc, 30.0, Size::new(w, h), true).expect("writer");
    assert!(out.is_opened().expect("opened"), "FFV1 writer");
    let mut m =
        imgproc::get_rotation_matrix_2d(Point2f::new(w as f32 / 2.0, h as f32 / 2.0), 0.3, 1.0)
            .expect("rotation");
    *m.at_2d_mut::<f64>(0, 2).expect("m02") += 5.0;
    *m.at_2d_mut::<f64>(1, 2).expect("m12") -= 3.0;
    let mut frame = Mat::default();
    for k in 0..FRAMES {
        assert!(cap.read(&mut frame).expect("read"), "demo frame {k}");
        if bump && k >= BUMP_FRAME {
            let mut moved = Mat::default();
            imgproc::warp_affine(
                &frame,
                &mut moved,
                &m,
                Size::new(w, h),
                imgproc::INTER_LINEAR,
                opencv::core::BORDER_REPLICATE,
                Scalar::default(),
            )
            .expect("warp");
            out.write(&moved).expect("write");
        } else {
            out.write(&frame).expect("write");
        }
    }
}

fn settings(recalibrate: bool) -> Settings {
    let calibration =
        TableCalibration::load(&repo("calibration/table.json")).expect("bundled calibration");
    let game = Game::load(&repo("calibration/game.json")).expect("bundled game");
    let mut s = Settings::new(game, calibration);
    s.recalibrate = recalibrate;
    s
}

/// The clean and the bumped clip, written once for the tests here, and the clean
/// clip's record.
fn clips() -> &'static (PathBuf, PathBuf, Record) {
    static CLIPS: std::sync::OnceLock<(tempfile::TempDir, (PathBuf, PathBuf, Record))> =
        std::sync::OnceLock::new();
    let (_, clips) = CLIPS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let (clean, bumped) = (dir.path().join("clean.avi"), dir.path().join("bumped.avi"));
        write_clip(&clean, false);
        write_clip(&bumped, true);
        let (truth, _) = analyse(&clean, false);
        assert!(truth.shots.len() > AFTER + 1, "{} shots", truth.shots.len());
        (dir, (clean, bumped, truth))
    });
    clips
}

fn analyse(clip: &Path, recalibrate: bool) -> (Record, Collect) {
    let settings = settings(recalibrate);
    let source = VideoSource::open(&s(clip), &settings).expect("open the clip");
    let mut keep = Collect::default();
    let outcome = driver::run(&settings, None, source, &mut keep).expect("analysed");
    (outcome.record, keep)
}

/// How far the items at shot `a`'s rest lie from shot `b`'s (the same items), worst
/// and mean (mm); a coin is compared with the nearest coin (coins lying in holes
/// are anonymous discs: which is which is the tracker's guess).
fn rest_offsets(a: &Shot, b: &Shot) -> (f64, f64) {
    let mut d = Vec::new();
    for (item, p) in &a.end {
        let coin = item.to_string().starts_with("coin");
        let off = b
            .end
            .iter()
            .filter(|(other, _)| {
                if coin {
                    other.to_string().starts_with("coin")
                } else {
                    *other == item
                }
            })
            .map(|(_, q)| (p.x - q.x).hypot(p.y - q.y))
            .fold(f64::INFINITY, f64::min);
        assert!(off.is_finite(), "{item} missing at shot {}'s rest", b.index);
        d.push(off);
    }
    let worst = d.iter().copied().fold(0.0, f64::max);
    (worst, d.iter().sum::<f64>() / d.len() as f64)
}

#[test]
fn a_bumped_camera_is_refitted_and_the_positions_after_it_are_right_again() {
    let (_, bumped, truth) = clips();

    // Without the checks: the rests after the bump are off by the bump.
    let (stale, _) = analyse(bumped, false);
    assert!(stale.video.recalibrations.is_empty());
    let (_, mean) = rest_offsets(&truth.shots[AFTER], &stale.shots[AFTER]);
    assert!(mean > 4.0, "the bump moves the rests by {mean:.2} mm only");

    // With them: one bump, found at the rest right after it, re-fitted.
    let (refit, told) = analyse(bumped, true);
    let r = &refit.video.recalibrations;
    assert_eq!(r.len(), 1, "{r:?}");
    let at = r[0].frame;
    assert!(
        (BUMP_FRAME as u64..BUMP_FRAME as u64 + 15).contains(&at),
        "found at frame {at}"
    );
    assert!(r[0].shift_mm > 5.0 && r[0].refused.is_none(), "{r:?}");
    assert_eq!(r[0].image_corners_px.as_ref().map(Vec::len), Some(4));
    let bumped_events: Vec<_> = told
        .events
        .iter()
        .filter(|e| {
            matches!(
                &e.event,
                Event::Camera {
                    state: CameraState::Bumped,
                    table: Some(_),
                    ..
                }
            )
        })
        .collect();
    assert_eq!(bumped_events.len(), 1);
    assert_eq!(bumped_events[0].frame, at);
    // The shots before it are the clean clip's, to the bit.
    for k in 0..AFTER {
        assert_eq!(refit.shots[k], truth.shots[k], "shot {k}");
    }
    let (worst, mean) = rest_offsets(&truth.shots[AFTER], &refit.shots[AFTER]);
    assert!(
        worst < 3.0 && mean < 2.0,
        "after the re-fit the rests are {mean:.2} mm (worst {worst:.2}) off"
    );
    assert_eq!(refit.shots[AFTER].score, truth.shots[AFTER].score);
}

#[test]
fn a_match_resumed_after_a_bump_goes_on_with_the_refitted_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, bumped, truth) = clips();
    let journal = dir.path().join("j.jsonl");
    let first = dir.path().join("first.json");
    let (code, _, stderr) = run(&[
        "live",
        &s(bumped),
        "--port",
        "0",
        "--journal",
        &s(&journal),
        "-o",
        &s(&first),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("the camera was bumped"), "{stderr}");
    // The journal as a crash after the first shot measured with the re-fit leaves
    // it: the resumed run (from rest, as a camera resumes) measures the next one.
    let text = std::fs::read_to_string(&journal).expect("journal");
    assert!(text.contains("\"bumped\""), "no bumped camera journaled");
    let cut = text
        .lines()
        .position(|l| l.contains("\"shot_over\"") && l.contains(&format!("\"shot\":{AFTER},")))
        .expect("shot 4 over journaled")
        + 1;
    let kept: String = text
        .lines()
        .take(cut + 1)
        .map(|l| format!("{l}\n"))
        .collect();
    for (name, lines) in [("with", kept.clone()), ("without", strip_table(&kept))] {
        let j = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&j, lines).expect("write the journal");
        let out = dir.path().join(format!("{name}.json"));
        // The checks off: only the journal can tell the resumed run of the bump.
        let (code, _, stderr) = run(&[
            "live",
            &s(bumped),
            "--port",
            "0",
            "--resume",
            &s(&j),
            "--resume-from-rest",
            "--no-recalibrate",
            "--quiet",
            "-o",
            &s(&out),
        ]);
        assert_eq!(code, 0, "{stderr}");
        let rec = Record::load(&out).expect("record");
        let shot = rec
            .shots
            .iter()
            .find(|s| s.index == AFTER + 1)
            .unwrap_or_else(|| panic!("{name}: no shot {}", AFTER + 1));
        let (_, mean) = rest_offsets(&truth.shots[AFTER + 1], shot);
        if name == "with" {
            assert!(mean < 2.0, "resumed with the re-fit: {mean:.2} mm off");
            assert_eq!(rec.video.recalibrations.len(), 1, "{:?}", rec.video);
        } else {
            assert!(mean > 4.0, "resumed without it: {mean:.2} mm off only");
        }
    }
}

/// The journal with the re-fitted table taken out of its `bumped` line (as an
/// older build would have written it).
fn strip_table(journal: &str) -> String {
    journal
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            if v["state"] == "bumped" {
                v.as_object_mut().expect("object").remove("table");
            }
            format!("{v}\n")
        })
        .collect()
}
