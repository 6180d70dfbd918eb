//! `fishtrack analyse` on damaged videos, through the binary (issue 16): a frame that
//! fails to decode is skipped and counted and the match read on; a file cut inside a
//! frame is read up to the cut and said so; an output folder that cannot be written
//! fails before the analysis; a folder of clips of which one fails exits 3, and a
//! clean clip read beside a damaged one is not charged with its errors. The
//! damaged copies are made here from the bundled demo (MPEG-4 in AVI); where to
//! damage or cut it is read from the demo's record.
#![cfg(feature = "opencv")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn demo() -> Vec<u8> {
    std::fs::read(repo("samples/demo/match.avi")).expect("the bundled demo")
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read json")).expect("parse json")
}

/// Where each video frame's payload lies in an AVI (`00dc` chunks of the `movi`
/// list, in order): (offset of the payload, its length).
fn frame_chunks(avi: &[u8]) -> Vec<(usize, usize)> {
    let u32_at = |o: usize| u32::from_le_bytes(avi[o..o + 4].try_into().unwrap()) as usize;
    let movi = avi
        .windows(4)
        .position(|w| w == b"movi")
        .expect("a movi list");
    let end = movi - 4 + u32_at(movi - 4) + 4;
    let mut at = movi + 4;
    let mut chunks = Vec::new();
    while at + 8 <= end.min(avi.len()) {
        let size = u32_at(at + 4);
        if &avi[at..at + 4] == b"00dc" {
            chunks.push((at + 8, size));
        }
        at += 8 + size + (size & 1);
    }
    chunks
}

/// The frames an AVI marks as key frames (`idx1` entries of `00dc` chunks with
/// AVIIF_KEYFRAME), read from the container independently of FFmpeg.
pub(crate) fn key_frames(avi: &[u8]) -> Vec<usize> {
    let u32_at = |o: usize| u32::from_le_bytes(avi[o..o + 4].try_into().unwrap()) as usize;
    let idx = avi
        .windows(4)
        .rposition(|w| w == b"idx1")
        .expect("an idx1 index");
    let entries = u32_at(idx + 4) / 16;
    let mut frame = 0;
    let mut keys = Vec::new();
    for e in (0..entries).map(|k| idx + 8 + 16 * k) {
        if &avi[e..e + 4] == b"00dc" {
            if u32_at(e + 4) & 0x10 != 0 {
                keys.push(frame);
            }
            frame += 1;
        }
    }
    keys
}

/// The frames from `damaged` up to the key frame after it: a frame that fails to
/// decode, and those predicted from it, which carry its damage on.
fn damaged_up_to_the_next_key_frame(avi: &[u8], damaged: usize) -> Vec<usize> {
    let next_key = key_frames(avi)
        .into_iter()
        .find(|k| *k > damaged)
        .expect("a key frame after it");
    (damaged..next_key).collect()
}

/// Runs `fishtrack analyse ARGS` with the bundled calibration, killed after a
/// minute (a hang fails the test instead of stalling it): exit code, stderr.
fn analyse(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .arg("analyse")
        .args(args)
        .args(["--table", s(&repo("calibration/table.json"))])
        .args(["--game", s(&repo("calibration/game.json"))])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fishtrack");
    let began = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let out = child.wait_with_output().expect("stderr");
            return (
                status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if began.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("analyse {args:?} still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The bundled demo's frame count and shots as (flick, rest) frames, from its record.
fn demo_frames() -> (usize, Vec<(usize, usize)>) {
    let rec = json(&repo("samples/demo/record.json"));
    let frames = rec["video"]["frames"].as_u64().expect("video.frames") as usize;
    let shots = rec["shots"]
        .as_array()
        .expect("shots")
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_u64().expect("a frame") as usize;
            (f("flick_frame"), f("rest_frame"))
        })
        .collect();
    (frames, shots)
}

/// A frame between shots 1 and 2 (in shot 2's interlude).
fn frame_before_shot_2() -> usize {
    let (_, shots) = demo_frames();
    (shots[1].1 + shots[2].0) / 2
}

/// The lines of stderr that warn or fail.
fn alarm_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.contains("error") || l.contains("warning"))
        .collect()
}

/// Files in `dir` whose name says they are a temporary left behind.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_frame_that_fails_to_decode_is_skipped_counted_and_the_match_read_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = demo();
    let chunks = frame_chunks(&bytes);
    let (frames, _) = demo_frames();
    assert_eq!(chunks.len(), frames);
    // A frame between shots 1 and 2 (in shot 2's interlude): its payload zeroed.
    let damaged = frame_before_shot_2();
    let (at, len) = chunks[damaged];
    bytes[at..at + len].fill(0);
    let stretch = damaged_up_to_the_next_key_frame(&bytes, damaged);
    let video = d.join("damaged.avi");
    std::fs::write(&video, &bytes).unwrap();
    let out = d.join("record.json");
    let (code, err) = analyse(&[s(&video), "--quiet", "-o", s(&out)]);
    assert_eq!(code, 3, "a damaged frame in a shot warns: {err}");
    let lines = alarm_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    let listed = stretch
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        lines[0].contains(&format!("({listed})")) && lines[0].contains("shot 2"),
        "{err}"
    );
    assert!(
        !err.contains("[mpeg4"),
        "FFmpeg's own noise is summed up: {err}"
    );

    let record = json(&out);
    let truth = json(&repo("samples/demo/record.json"));
    assert_eq!(
        record["video"]["frames"], frames,
        "read to the container's end"
    );
    assert_eq!(
        record["video"]["damaged_frames"],
        serde_json::json!(stretch)
    );
    // Why: the zeroed frame did not decode; the frames after it were predicted from it.
    let mut why =
        vec![serde_json::json!({"from": damaged, "to": damaged, "reason": "undecodable"})];
    if stretch.len() > 1 {
        why.push(
            serde_json::json!({"from": damaged + 1, "to": stretch[stretch.len() - 1],
            "reason": "predicted"}),
        );
    }
    assert_eq!(record["video"]["damage"], serde_json::json!(why));
    assert_eq!(record["video"]["damaged_shots"], serde_json::json!([2]));
    // The flicks as the eye finds them in the undamaged video (within a frame of
    // the truth's).
    let clean_out = d.join("clean.json");
    let (code, err) = analyse(&[
        s(&repo("samples/demo/match.avi")),
        "--quiet",
        "-o",
        s(&clean_out),
    ]);
    assert_eq!(code, 0, "{err}");
    let clean = json(&clean_out);
    let shots = record["shots"].as_array().unwrap();
    let expected = truth["shots"].as_array().unwrap();
    assert_eq!(shots.len(), expected.len(), "every shot found");
    for ((got, want), seen) in shots
        .iter()
        .zip(expected)
        .zip(clean["shots"].as_array().unwrap())
    {
        assert_eq!(got["score"], want["score"], "shot {}", got["index"]);
        // Later frames keep their container indices: the flicks fall where they did.
        assert_eq!(
            got["flick_frame"], seen["flick_frame"],
            "shot {}",
            got["index"]
        );
    }
    assert_eq!(record["scores"], truth["scores"]);
    let notes = shots[2]["notes"].to_string();
    assert!(
        notes.contains(&format!("{listed} could not be decoded")),
        "{notes}"
    );
}

#[test]
fn a_file_cut_inside_a_frame_is_read_up_to_the_cut_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bytes = demo();
    // Cut between shots 3 and 4: shots 0-3 end before the cut.
    let (_, shots) = demo_frames();
    let cut = (shots[3].1 + shots[4].0) / 2;
    let (at, len) = frame_chunks(&bytes)[cut];
    let video = d.join("cut.avi");
    std::fs::write(&video, &bytes[..at + len / 2]).unwrap();
    let out = d.join("record.json");
    let (code, err) = analyse(&[s(&video), "--quiet", "-o", s(&out)]);
    // Nothing past the cut was seen: a shot may be missing or cut short (exit 3).
    assert_eq!(code, 3, "{err}");
    let lines = alarm_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("stopped after") && lines[0].contains("truncated"),
        "{err}"
    );
    let record = json(&out);
    let kept = record["video"]["frames"].as_u64().unwrap();
    assert!(
        (cut as u64 - 5..=cut as u64 + 1).contains(&kept),
        "read up to the cut at {cut}: {kept}"
    );
    assert!(
        lines[0].contains(&format!("stopped after {kept} frames")),
        "{err}"
    );
    assert!(
        record["video"]["damaged_frames"].is_null(),
        "the frames past the cut are missing, not damaged: {}",
        record["video"]
    );
    assert_eq!(record["shots"].as_array().unwrap().len(), 4, "{err}");

    // Cut as well as damaged before the cut: read past the damage up to the cut.
    let mut bytes = bytes[..at + len / 2].to_vec();
    let damaged = frame_before_shot_2();
    let (at, len) = frame_chunks(&bytes)[damaged];
    bytes[at..at + len].fill(0);
    // The cut file has no index: the key frames are the demo's.
    let stretch = damaged_up_to_the_next_key_frame(&demo(), damaged);
    std::fs::write(&video, &bytes).unwrap();
    let (code, err) = analyse(&[s(&video), "--quiet", "-o", s(&out)]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(alarm_lines(&err).len(), 2, "{err}");
    let record = json(&out);
    assert_eq!(record["video"]["frames"].as_u64(), Some(kept), "{err}");
    assert_eq!(
        record["video"]["damaged_frames"],
        serde_json::json!(stretch)
    );
    assert_eq!(record["shots"].as_array().unwrap().len(), 4, "{err}");
}

#[test]
fn an_output_folder_that_cannot_be_made_fails_before_the_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A file where the folder should be: no one (not even root) can make it.
    let blocker = d.join("blocker");
    std::fs::write(&blocker, b"a file").unwrap();
    let out = blocker.join("sub").join("record.json");
    let video = repo("samples/demo/match.avi");
    // Not --quiet: an analysis would say how many frames it read.
    let (code, err) = analyse(&[s(&video), "-o", s(&out)]);
    assert_eq!(code, 1, "{err}");
    let lines = alarm_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("blocker"), "{err}");
    assert!(
        !err.contains("frames in"),
        "failed before reading a frame: {err}"
    );
    assert!(!out.exists());

    // A run that fails after its output was claimed leaves nothing behind.
    let junk = d.join("junk.avi");
    std::fs::write(&junk, b"this is not a video").unwrap();
    let folder = d.join("out");
    let (code, err) = analyse(&[s(&junk), "-o", s(&folder.join("record.json"))]);
    assert_eq!(code, 1, "{err}");
    let left: Vec<_> = std::fs::read_dir(&folder)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_folder_with_one_good_and_one_broken_video_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let clips = d.join("clips");
    std::fs::create_dir(&clips).unwrap();
    std::fs::copy(repo("samples/demo/match.avi"), clips.join("a.avi")).unwrap();
    std::fs::write(clips.join("b.avi"), b"this is not a video").unwrap();
    let out = d.join("out");
    let (code, err) = analyse(&[s(&clips), "--quiet", "-o", s(&out)]);
    assert_eq!(code, 3, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("1 of 2 videos") && warnings[0].contains("b.avi"),
        "{err}"
    );
    assert!(out.join("a.record.json").exists(), "{err}");
    assert!(!out.join("b.record.json").exists(), "{err}");
    assert!(temporaries(&out).is_empty(), "{:?}", temporaries(&out));
}

#[test]
fn a_clean_clip_beside_a_damaged_one_is_not_charged_with_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let clips = d.join("clips");
    std::fs::create_dir(&clips).unwrap();
    std::fs::copy(repo("samples/demo/match.avi"), clips.join("a.avi")).unwrap();
    // A byte flipped halfway into every 25th frame's data, all through the clip: the
    // decoder complains while the clean clip is read beside it.
    let mut bytes = demo();
    for (at, len) in frame_chunks(&bytes).into_iter().skip(10).step_by(25) {
        bytes[at + len / 2] ^= 0x5a;
    }
    std::fs::write(clips.join("b.avi"), &bytes).unwrap();
    let out = d.join("out");
    let (code, err) = analyse(&[s(&clips), "--quiet", "-o", s(&out)]);
    assert!(!err.contains("[mpeg4"), "{err}");
    let damaged = json(&out.join("b.record.json"));
    assert!(
        damaged["video"]["damaged_frames"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "the damaged clip's errors are its own: {}",
        damaged["video"]
    );
    let clean = json(&out.join("a.record.json"));
    assert!(
        clean["video"]["damaged_frames"].is_null() && clean["video"]["damaged_shots"].is_null(),
        "the clean clip is charged with nothing: {}",
        clean["video"]
    );
    let truth = json(&repo("samples/demo/record.json"));
    let shots = |r: &serde_json::Value| -> Vec<serde_json::Value> {
        let list = r["shots"].as_array().cloned().unwrap_or_default();
        list.iter().map(|s| s["score"].clone()).collect()
    };
    assert_eq!(
        shots(&clean),
        shots(&truth),
        "the clean clip is scored as alone"
    );
    assert_eq!(clean["scores"], truth["scores"]);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert!(
        warnings.iter().all(|w| w.contains("b.avi")) && !err.contains("a.avi: warning"),
        "{err}"
    );
    let b_shots = damaged["video"]["damaged_shots"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(code, if b_shots > 0 { 3 } else { 0 }, "{err}");
}
