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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let made = std::process::Command::new("python3")
        .arg(root.join("scripts/damaged-videos"))
        .arg(d)
        .args(["--flips", "1"])
        .output();
    let Ok(made) = made else {
        eprintln!("damaged_videos_end_as_the_script_expects: no python3: not checked");
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let expected = std::fs::read_to_string(d.join("expected.tsv")).unwrap();
    let table = root.join("calibration/table.json");
    let game = root.join("calibration/game.json");
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
        let args = [
            "analyse",
            video.to_str().unwrap(),
            "--table",
            table.to_str().unwrap(),
            "--game",
            game.to_str().unwrap(),
            "--quiet",
            "-o",
            out.to_str().unwrap(),
        ];
        let (code, _, err) = run_timed(&args, Duration::from_secs(300))
            .unwrap_or_else(|| panic!("{name}: still running after 300 s"));
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
