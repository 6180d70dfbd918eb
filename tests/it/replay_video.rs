//! The annotated video through the binary: the input's frame count and size, the
//! annotations really drawn (the lost item's red cross at its projected exit),
//! `--slow` repeating the flick frames, `--shot` cutting one shot; Motion-JPEG .avi
//! and mp4v .mp4 input.
#![cfg(feature = "opencv")]

use opencv::core::{Mat, Scalar, Size, Vec3b, CV_8UC3};
use opencv::prelude::*;
use opencv::videoio;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/replay")
        .join(name)
}

/// Writes a small MJPG .avi: a grey ramp that changes a little every frame.
pub fn make_video(path: &Path, w: i32, h: i32, frames: usize) {
    make_video_as(path, ['M', 'J', 'P', 'G'], w, h, frames)
}

/// As [`make_video`], in another codec (the container follows the file name).
pub fn make_video_as(path: &Path, codec: [char; 4], w: i32, h: i32, frames: usize) {
    let [a, b, c, d] = codec;
    let fourcc = videoio::VideoWriter::fourcc(a, b, c, d).unwrap();
    let mut wr =
        videoio::VideoWriter::new(path.to_str().unwrap(), fourcc, 10.0, Size::new(w, h), true)
            .unwrap();
    assert!(wr.is_opened().unwrap(), "cannot write test video");
    for f in 0..frames {
        let mut m = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0)).unwrap();
        for y in 0..h {
            for x in 0..w {
                let v = ((x + y + 3 * f as i32) % 64 + 60) as u8;
                *m.at_2d_mut::<Vec3b>(y, x).unwrap() = Vec3b::from([v, v, v]);
            }
        }
        wr.write(&m).unwrap();
    }
    wr.release().unwrap();
}

fn read_frames(path: &Path) -> Vec<Mat> {
    let mut cap =
        videoio::VideoCapture::from_file(path.to_str().unwrap(), videoio::CAP_ANY).unwrap();
    assert!(cap.is_opened().unwrap(), "cannot open {}", path.display());
    let mut out = Vec::new();
    loop {
        let mut m = Mat::default();
        if !cap.read(&mut m).unwrap() || m.empty() {
            break;
        }
        out.push(m);
    }
    out
}

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .arg("replay")
        .args(args)
        .output()
        .expect("run fishtrack")
}

/// `fishtrack replay` of the test record over `video` with the test table, `extra`
/// options and output folder `out`; it must succeed.
fn replay_test_record(video: &Path, extra: &[&str], out: &Path) {
    let (rec, table) = (data("record.json"), data("table.json"));
    let mut args = vec![
        rec.to_str().unwrap(),
        "--video",
        video.to_str().unwrap(),
        "--table",
        table.to_str().unwrap(),
    ];
    args.extend(extra);
    args.extend(["-o", out.to_str().unwrap()]);
    let o = replay(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("match.avi");
    make_video(&video, 320, 240, 20);
    (dir, video)
}

#[test]
fn annotated_video_has_input_frame_count_and_size_and_marks_the_exit() {
    let (dir, video) = setup();
    let out = dir.path().join("out");
    replay_test_record(&video, &[], &out);
    let input = read_frames(&video);
    let frames = read_frames(&out.join("annotated.avi"));
    assert_eq!(frames.len(), input.len());
    assert_eq!(frames.len(), 20);
    for f in &frames {
        assert_eq!((f.cols(), f.rows()), (320, 240));
    }
    // coin:1 left at (1000, 520) mm at frame 8; table.json maps that to (300, 72.4) px.
    // Before frame 8 no cross there; from frame 8 on, a red one.
    let px = |m: &Mat| *m.at_2d::<Vec3b>(72, 300).unwrap();
    let red = |p: Vec3b| p[2] > 170 && p[1] < 110 && p[0] < 110;
    assert!(!red(px(&frames[5])), "frame 5: {:?}", px(&frames[5]));
    assert!(red(px(&frames[9])), "frame 9: {:?}", px(&frames[9]));
    // The banner (top left) is drawn on every frame: darker than the input there.
    let mean = |m: &Mat| {
        opencv::core::mean(
            &Mat::roi(m, opencv::core::Rect::new(200, 40, 60, 20)).unwrap(),
            &opencv::core::no_array(),
        )
        .unwrap()[0]
    };
    assert!(
        mean(&frames[0]) < mean(&input[0]) - 20.0,
        "{} vs {}",
        mean(&frames[0]),
        mean(&input[0])
    );
    // The diagrams and the report are written too.
    assert!(out.join("shot_000.png").exists() && out.join("report.html").exists());
}

/// mp4v in .mp4 (decoded by FFmpeg, not by the Motion-JPEG path): accepted with its
/// counted frames, every frame written, the exit cross drawn.
#[test]
fn mp4v_mp4_input_is_accepted_and_annotated() {
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("match.mp4");
    make_video_as(&video, ['m', 'p', '4', 'v'], 320, 240, 20);
    let out = dir.path().join("out");
    replay_test_record(&video, &[], &out);
    let frames = read_frames(&out.join("annotated.avi"));
    assert_eq!(frames.len(), 20);
    let px = |m: &Mat| *m.at_2d::<Vec3b>(72, 300).unwrap();
    let red = |p: Vec3b| p[2] > 170 && p[1] < 110 && p[0] < 110;
    assert!(!red(px(&frames[5])), "frame 5: {:?}", px(&frames[5]));
    assert!(red(px(&frames[9])), "frame 9: {:?}", px(&frames[9]));
}

#[test]
fn slow_repeats_flick_frames_and_shot_cuts_one_shot() {
    let (dir, video) = setup();
    let out = dir.path().join("slow");
    replay_test_record(&video, &["--slow", "4"], &out);
    // Shot 0 moves over frames 3..=9, shot 1 over 12..=17: 13 frames written 4 times.
    assert_eq!(read_frames(&out.join("annotated.avi")).len(), 20 + 3 * 13);

    replay_test_record(&video, &["--shot", "1"], &out);
    // From the previous rest (frame 9) + 1 to the end of the clip: frames 10..=19.
    let one = read_frames(&out.join("annotated_shot1.avi"));
    assert_eq!(one.len(), 10);
    assert_eq!((one[0].cols(), one[0].rows()), (320, 240));
}
