//! The damaged-video set of `scripts/damaged-videos` (issue 16 item 5): the script
//! makes it from the demo with the expected outcome of each video, and a few of them
//! (a cut, a zeroed frame, a dropped frame, flipped bytes, a wrong container, an
//! empty file) go through `fishtrack analyse`: the exit code is one the script
//! allows, stderr holds its text, no panic, no hang. The whole set, by hand:
//! `scripts/damaged-videos out/dv && while IFS=$'\t' read n codes text why; do
//! fishtrack analyse out/dv/$n --quiet -o out/dv/$n.json; echo "$n $? (want $codes)"; done < out/dv/expected.tsv`.

use crate::common::run_timed;
use std::path::Path;
use std::time::Duration;

#[test]
fn damaged_videos_end_as_the_script_expects() {
    let Some(dir) = damaged_set("damaged_videos_end_as_the_script_expects") else {
        return;
    };
    let d = dir.path();
    let expected = std::fs::read_to_string(d.join("expected.tsv")).unwrap();
    let wanted = [
        "cut-10.avi",
        "zero-frame.avi",
        "drop-frame.avi",
        "flip-1.avi",
        "wrong-container.avi",
        "empty.avi",
    ];
    let mut checked = 0;
    for line in expected.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, codes, text, _why] = cols[..] else {
            panic!("expected.tsv: {line:?}")
        };
        if !wanted.contains(&name) {
            continue;
        }
        let video = d.join(name);
        let out = d.join(format!("{name}.json"));
        let (code, _, err) = analyse_video(&video, &out, true);
        let allowed: Vec<i32> = codes.split(',').map(|c| c.parse().unwrap()).collect();
        assert!(
            allowed.contains(&code),
            "{name}: exit {code}, want {codes}: {err}"
        );
        assert!(err.contains(text), "{name}: stderr lacks {text:?}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        if code == 1 {
            let lines = err.lines().filter(|l| !l.trim().is_empty()).count();
            assert_eq!(lines, 1, "{name}: one line: {err}");
        }
        checked += 1;
    }
    assert_eq!(
        checked,
        wanted.len(),
        "every chosen video is in expected.tsv"
    );
}

/// The damaged set of `scripts/damaged-videos` (one flipped copy) in a temporary
/// folder; `None`, said on stderr, when python3 is missing.
fn damaged_set(test: &str) -> Option<tempfile::TempDir> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("python3")
        .arg(root.join("scripts/damaged-videos"))
        .arg(dir.path())
        .args(["--flips", "1"])
        .output();
    let Ok(made) = made else {
        eprintln!("{test}: no python3: not checked");
        return None;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    Some(dir)
}

/// The frames of `damaged` whose decoded picture differs at all from `clean`'s (the
/// bytes flipped in a copy leave every other frame decoded bit for bit the same).
fn frames_that_differ(clean: &Path, damaged: &Path) -> std::collections::BTreeSet<u64> {
    use opencv::core::{self, Mat};
    use opencv::prelude::*;
    use opencv::videoio;
    let open = |p: &Path| {
        videoio::VideoCapture::from_file(p.to_str().expect("a UTF-8 path"), videoio::CAP_ANY)
            .unwrap()
    };
    let (mut a, mut b) = (open(clean), open(damaged));
    let (mut fa, mut fb, mut diff) = (Mat::default(), Mat::default(), Mat::default());
    let mut out = std::collections::BTreeSet::new();
    for frame in 0u64.. {
        let (ra, rb) = (a.read(&mut fa).unwrap(), b.read(&mut fb).unwrap());
        if !ra || !rb || fa.empty() || fb.empty() {
            break;
        }
        core::absdiff(&fa, &fb, &mut diff).unwrap();
        let most = core::norm(&diff, core::NORM_INF, &core::no_array()).unwrap();
        if most > 0.0 {
            out.insert(frame);
        }
    }
    out
}

/// `fishtrack analyse` of `video` with the bundled calibration, writing `out`.
fn analyse_video(video: &Path, out: &Path, quiet: bool) -> (i32, String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = root.join("calibration/table.json");
    let game = root.join("calibration/game.json");
    let mut args = vec![
        "analyse",
        video.to_str().unwrap(),
        "--table",
        table.to_str().unwrap(),
        "--game",
        game.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    if quiet {
        args.push("--quiet");
    }
    run_timed(&args, Duration::from_secs(300))
        .unwrap_or_else(|| panic!("{}: still running after 300 s", video.display()))
}

/// Issue 16 items 1-2, "never a wrong score in silence": bytes flipped inside the
/// demo's frames make FFmpeg decode some of them *with errors* (a concealed, partly
/// guessed picture) rather than fail. Those frames are damaged frames like the ones
/// that fail: skipped, listed in the record, the shots they fall in marked, exit 3
/// with one line; FFmpeg's own lines are counted, not printed. Not --quiet: our
/// own lines written meanwhile (the frame count, "wrote", the scoreboard on
/// stdout) still come through.
#[test]
fn frames_decoded_with_errors_are_damaged_frames() {
    let Some(dir) = damaged_set("frames_decoded_with_errors_are_damaged_frames") else {
        return;
    };
    let d = dir.path();
    // flip-1 (seed 17): no frame fails to decode, five decode with errors.
    let video = d.join("flip-1.avi");
    let out = d.join("flip-1.json");
    let (code, stdout, err) = analyse_video(&video, &out, false);
    assert_eq!(code, 3, "frames decoded with errors fall in shots: {err}");
    let damage_lines: Vec<&str> = err.lines().filter(|l| l.contains("damaged")).collect();
    assert_eq!(damage_lines.len(), 1, "one line: {err}");
    assert!(
        damage_lines[0].starts_with("fishtrack: warning: ")
            && damage_lines[0].contains("damaged frames (")
            && damage_lines[0].contains("fall in shot"),
        "{err}"
    );
    for text in [&err, &stdout] {
        assert!(!text.contains(" @ 0x"), "no raw FFmpeg line: {text}");
        assert!(
            !text.contains("[OPENCV:FFMPEG"),
            "no OpenCV-relayed line: {text}"
        );
    }
    // Our own messages, written while FFmpeg's are counted, reach stderr and stdout.
    assert!(err.contains("415 frames in"), "{err}");
    assert!(err.contains("fishtrack: wrote"), "{err}");
    assert!(stdout.contains("total:"), "the scoreboard: {stdout}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let damaged: Vec<u64> = record["video"]["damaged_frames"]
        .as_array()
        .unwrap_or_else(|| panic!("damaged frames listed: {}", record["video"]))
        .iter()
        .map(|f| f.as_u64().unwrap())
        .collect();
    // Where the picture is wrong (a frame-by-frame difference from the clean demo,
    // python3-opencv): FFmpeg reports errors in frames 70, 256, 361, 366 and 405.
    for frame in [70, 256, 361, 366, 405] {
        assert!(damaged.contains(&frame), "frame {frame}: {damaged:?}");
    }
    // Besides those, only frames next to them (errors surface up to a read per
    // decoding thread early; see capture::Damage) and frames whose picture the damage
    // changed though FFmpeg said nothing (the picture check): never a sound frame.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let changed = frames_that_differ(&root.join("samples/demo/match.avi"), &video);
    for frame in &damaged {
        assert!(
            [70, 256, 361, 366, 405]
                .iter()
                .any(|e| frame.abs_diff(*e) < MAX_IN_FLIGHT)
                || changed.contains(frame),
            "frame {frame} is sound: {damaged:?}"
        );
    }
    assert!(
        !record["video"]["damaged_shots"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        record["video"]
    );
    assert_eq!(record["video"]["frames"], 415, "read to the end");
}

/// Damage spreads: an MPEG-4 frame is mostly predicted from the one before, so a
/// damaged frame's wrong blocks are carried on, silently, up to the next key frame,
/// and once motion moves them off the macroblock grid the picture check no longer
/// sees them (on flip-1, before: frames 158–160 marked, 161–167 fed to detection
/// though they differ from the clean decode by up to 44 grey levels). Every frame
/// after a damaged one up to the next key frame (the AVI's index says which) is
/// damaged, and the record says why each damaged frame is.
#[test]
fn frames_predicted_from_a_damaged_frame_are_damaged_up_to_the_next_key_frame() {
    let Some(dir) =
        damaged_set("frames_predicted_from_a_damaged_frame_are_damaged_up_to_the_next_key_frame")
    else {
        return;
    };
    let d = dir.path();
    let video = d.join("flip-1.avi");
    let out = d.join("flip-1.json");
    let (code, _, err) = analyse_video(&video, &out, true);
    assert_eq!(code, 3, "{err}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let v = &record["video"];
    let damaged: Vec<u64> = v["damaged_frames"]
        .as_array()
        .unwrap_or_else(|| panic!("damaged frames listed: {v}"))
        .iter()
        .map(|f| f.as_u64().unwrap())
        .collect();
    let keys: Vec<u64> = crate::damaged_video::key_frames(&std::fs::read(&video).unwrap())
        .into_iter()
        .map(|k| k as u64)
        .collect();
    let frames = v["frames"].as_u64().unwrap();
    for &f in &damaged {
        let next_key = keys.iter().copied().find(|k| *k > f).unwrap_or(frames);
        for g in f + 1..next_key {
            assert!(
                damaged.contains(&g),
                "frame {g} is predicted from damaged frame {f} (next key frame {next_key}): \
                 {damaged:?}"
            );
        }
    }
    // The reasons: every damaged frame has exactly one, in order.
    let mut reasons: Vec<(u64, String)> = Vec::new();
    for stretch in v["damage"]
        .as_array()
        .unwrap_or_else(|| panic!("video.damage: {v}"))
    {
        let (from, to) = (
            stretch["from"].as_u64().unwrap(),
            stretch["to"].as_u64().unwrap(),
        );
        let reason = stretch["reason"].as_str().unwrap().to_string();
        assert!(
            ["undecodable", "decoder_errors", "picture", "predicted"].contains(&reason.as_str()),
            "{stretch}"
        );
        reasons.extend((from..=to).map(|f| (f, reason.clone())));
    }
    let listed: Vec<u64> = reasons.iter().map(|(f, _)| *f).collect();
    assert_eq!(listed, damaged, "one reason per damaged frame: {v}");
    // A frame predicted from damage lies after a damaged frame, before a key frame;
    // some of them truly differ from the clean decode (the ones the check missed).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let changed = frames_that_differ(&root.join("samples/demo/match.avi"), &video);
    let predicted: Vec<u64> = reasons
        .iter()
        .filter(|(_, r)| r == "predicted")
        .map(|(f, _)| *f)
        .collect();
    for f in &predicted {
        assert!(
            !keys.contains(f) && damaged.contains(&(f - 1)),
            "frame {f}: {v}"
        );
    }
    assert!(
        predicted.iter().any(|f| changed.contains(f)),
        "{predicted:?} vs {changed:?}"
    );
}

/// A user's `OPENCV_FFMPEG_LOGLEVEL` would make OpenCV print FFmpeg's errors to
/// stdout with a logger of its own (uncounted, into the scoreboard): `analyse`
/// takes it out, and the frames decoded with errors are still found.
#[test]
fn a_users_ffmpeg_log_level_does_not_hide_frames_decoded_with_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(dir) =
        damaged_set("a_users_ffmpeg_log_level_does_not_hide_frames_decoded_with_errors")
    else {
        return;
    };
    let d = dir.path();
    let out = d.join("flip-1.json");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .arg("analyse")
        .arg(d.join("flip-1.avi"))
        .arg("--table")
        .arg(root.join("calibration/table.json"))
        .arg("--game")
        .arg(root.join("calibration/game.json"))
        .arg("-o")
        .arg(&out)
        .env("OPENCV_FFMPEG_LOGLEVEL", "16")
        .output()
        .expect("run fishtrack");
    let (stdout, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert_eq!(run.status.code(), Some(3), "{err}");
    assert!(err.contains("damaged frames ("), "{err}");
    for text in [&err, &stdout] {
        assert!(
            !text.contains("[OPENCV:FFMPEG") && !text.contains(" @ 0x"),
            "{text}"
        );
    }
}

/// Frames FFmpeg decodes at once, at most, as the capture reckons (one per CPU, at
/// most 16).
const MAX_IN_FLIGHT: u64 = 16;

/// The clean demo has no frame decoded with errors: exit 0, no damaged frames, no
/// warning (FFmpeg's error lines are counted, and there are none).
#[test]
fn the_clean_demo_has_no_damaged_frames() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("clean.json");
    let (code, _, err) = analyse_video(&root.join("samples/demo/match.avi"), &out, true);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("damaged") && !err.contains("warning"),
        "{err}"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let damaged = &record["video"]["damaged_frames"];
    assert!(
        damaged.is_null() || damaged.as_array().is_some_and(|a| a.is_empty()),
        "{}",
        record["video"]
    );
}
