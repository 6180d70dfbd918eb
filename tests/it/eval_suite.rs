//! `fishtrack eval --suite` end to end through the binary, on a tiny two-clip suite
//! (320x240, 10 fps, about 30 frames): every clip is simulated, analysed and
//! evaluated, the table has a row per clip and the totals, the JSON totals are the
//! pooled clips, and a second run keeps the rendered videos.

use crate::common::run_in;

/// A one-shot scene with short pauses, so that its clip is a handful of frames.
const TINY_SCENARIO: &str = r##"{
  "name": "tiny",
  "players": [ { "name": "Anna", "color": "#d62728" }, { "name": "Boris", "color": "#1f77b4" } ],
  "start": {
    "fish:0": { "x": 300, "y": 300, "theta": 0 }, "coin:0": { "x": 300, "y": 300 },
    "fish:1": { "x": 700, "y": 450, "theta": 3.0 }, "coin:1": { "x": 700, "y": 450 }
  },
  "shots": [ { "player": 0, "speed_mm_s": 450, "direction_deg": 20 } ],
  "timing": { "before_flick_s": 0.3, "after_rest_s": 0.2, "put_back_s": 0.2, "max_shot_s": 3 }
}"##;

/// Three players, a fish into another's coin.
const THREE_SCENARIO: &str = r##"{
  "name": "three",
  "players": [ { "name": "Anna", "color": "#d62728" }, { "name": "Boris", "color": "#1f77b4" },
               { "name": "Vera", "color": "#2ca02c" } ],
  "start": {
    "fish:0": { "x": 300, "y": 350, "theta": 3.14159265 }, "coin:0": { "x": 300, "y": 350 },
    "fish:1": { "x": 800, "y": 600, "theta": 0 }, "coin:1": { "x": 470, "y": 352 },
    "fish:2": { "x": 150, "y": 600, "theta": 0.5 }, "coin:2": { "x": 150, "y": 600 }
  },
  "shots": [ { "player": 0, "speed_mm_s": 1000, "direction_deg": 0, "point": [30, 0] } ],
  "timing": { "before_flick_s": 0.3, "after_rest_s": 0.2, "put_back_s": 0.2, "max_shot_s": 3 }
}"##;

const SUITE: &str = r#"{
  "size": "320x240",
  "mm_per_px": 2.0,
  "clips": [
    { "name": "tiny-hand", "scenario": "scenes/tiny.json", "seed": 3, "fps": 10, "hand": true },
    { "name": "collision", "scenario": "scenes/three.json", "seed": 4, "fps": 10, "hand": false }
  ]
}"#;

#[test]
fn a_two_clip_suite_runs_end_to_end_and_pools_its_totals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("set/scenes")).unwrap();
    std::fs::write(dir.path().join("set/scenes/tiny.json"), TINY_SCENARIO).unwrap();
    std::fs::write(dir.path().join("set/scenes/three.json"), THREE_SCENARIO).unwrap();
    std::fs::write(dir.path().join("set/suite.json"), SUITE).unwrap();

    let (code, table, err) = run_in(
        &["eval", "--suite", "set/suite.json", "--work", "work"],
        dir.path(),
    );
    assert_eq!(code, 0, "{table}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    for clip in ["tiny-hand", "collision"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(clip))
            .unwrap_or_else(|| panic!("no row for {clip}:\n{table}"));
        // A row holds figures, not a failure.
        assert!(!row.contains("FAILED"), "{row}");
        for file in [
            "video.avi",
            "truth.json",
            "game.json",
            "record.json",
            "analyse.log",
        ] {
            assert!(
                dir.path().join("work").join(clip).join(file).exists(),
                "{clip}/{file} missing"
            );
        }
    }
    assert!(table.contains("TOTAL (2 clips)"), "{table}");
    assert!(table.contains("target"), "{table}");
    assert!(err.contains("tiny-hand:"), "no progress line:\n{err}");

    // Again, as JSON, keeping the videos and records: the totals are the clips pooled.
    let (code, json, err) = run_in(
        &[
            "eval",
            "--suite",
            "set/suite.json",
            "--work",
            "work",
            "--reuse-records",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON output");
    let clips = v["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 2);
    let sum = |key: &str| -> u64 {
        clips
            .iter()
            .map(|c| c["evaluation"][key].as_u64().unwrap())
            .sum()
    };
    let sum_count = |key: &str| -> u64 {
        clips
            .iter()
            .map(|c| c["evaluation"][key]["count"].as_u64().unwrap())
            .sum()
    };
    for c in clips {
        assert_eq!(c["reused_video"], true, "{c}");
        assert!(c["frames"].as_u64().unwrap() > 5, "{c}");
        assert_eq!(c["size"], "320x240");
    }
    assert_eq!(clips[1]["players"], 3, "three.json has three players");
    let total = &v["total"];
    assert_eq!(total["truth_shots"].as_u64().unwrap(), sum("truth_shots"));
    assert_eq!(total["truth_shots"].as_u64().unwrap(), 2);
    assert_eq!(total["record_shots"].as_u64().unwrap(), sum("record_shots"));
    assert_eq!(
        total["identity_switches"].as_u64().unwrap(),
        sum("identity_switches")
    );
    assert_eq!(
        total["rest_position_mm"]["count"].as_u64().unwrap(),
        sum_count("rest_position_mm")
    );
    assert_eq!(
        total["motion_position_mm"]["count"].as_u64().unwrap(),
        sum_count("motion_position_mm")
    );
    assert_eq!(v["clips_failed"], 0);

    // A clip the suite does not have: one line, exit 1.
    let (code, _, err) = run_in(
        &[
            "eval",
            "--suite",
            "set/suite.json",
            "--work",
            "work",
            "--only",
            "nope",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no clip `nope`"), "{err}");
}

/// A suite of one clip, `tiny` (seed 3, 10 fps), in `dir/set`; `look` is added to the
/// clip's entry as written (`""` for the original look).
fn write_tiny_suite(dir: &std::path::Path, look: &str) {
    std::fs::create_dir_all(dir.join("set/scenes")).unwrap();
    std::fs::write(dir.join("set/scenes/tiny.json"), TINY_SCENARIO).unwrap();
    std::fs::write(
        dir.join("set/suite.json"),
        format!(
            r#"{{ "size": "320x240", "mm_per_px": 2.0, "clips": [
                 {{ "name": "tiny", "scenario": "scenes/tiny.json", "seed": 3, "fps": 10{look} }} ] }}"#
        ),
    )
    .unwrap();
}

/// `fishtrack eval` of that suite into `dir/work`: whether its clip's video was kept,
/// and the video's bytes.
fn eval_tiny(dir: &std::path::Path) -> (bool, Vec<u8>) {
    let (code, json, err) = run_in(
        &[
            "eval",
            "--suite",
            "set/suite.json",
            "--work",
            "work",
            "--json",
        ],
        dir,
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON output");
    let video = std::fs::read(dir.join("work/tiny/video.avi")).unwrap();
    (v["clips"][0]["reused_video"].as_bool().unwrap(), video)
}

/// The same clip with `"look": 5` (a random look) instead of the original: it is
/// rendered again (the truth alone would call the old video current), in that
/// look, and kept on the next run.
#[test]
fn a_clip_in_a_look_is_rendered_in_it_and_again_when_the_look_changes() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_suite(dir.path(), "");
    let (_, original) = eval_tiny(dir.path());
    write_tiny_suite(dir.path(), r#", "look": 5"#);
    let (kept, looked) = eval_tiny(dir.path());
    assert!(!kept, "a new look must render the clip again");
    assert!(original != looked, "the look changed nothing in the video");
    let scenario = std::fs::read_to_string(dir.path().join("work/tiny/scenario.json")).unwrap();
    assert!(scenario.contains("\"look\""), "{scenario}");
    assert!(dir.path().join("work/tiny/look.json").exists());
    let (kept, again) = eval_tiny(dir.path());
    assert!(kept, "the same look must keep the video");
    assert!(again == looked);
}

/// A kept clip drawn by another revision of the renderer (its `renderer.txt`) is
/// drawn again, then kept: the truth and scenario alone would call it current.
#[test]
fn a_clip_drawn_by_another_renderer_revision_is_drawn_again() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_suite(dir.path(), "");
    let stamp = dir.path().join("work/tiny/renderer.txt");
    assert!(
        !eval_tiny(dir.path()).0,
        "the first run must render the clip"
    );
    assert_eq!(
        std::fs::read_to_string(&stamp).unwrap().trim(),
        fishtrack::vision::render::REVISION.to_string()
    );
    assert!(
        eval_tiny(dir.path()).0,
        "the same renderer must keep the clip"
    );
    std::fs::write(&stamp, "1\n").unwrap();
    assert!(
        !eval_tiny(dir.path()).0,
        "a clip drawn by another renderer must be drawn again"
    );
    assert!(eval_tiny(dir.path()).0);
}

#[test]
fn a_sweep_plays_valid_matches_of_two_to_four_players() {
    use fishtrack::eval::{sweep_clips, LookChoice, Suite, SWEEP_FPS, SWEEP_MOVES, SWEEP_PLAYERS};
    use fishtrack::sim::Scenario;
    let clips = sweep_clips(40, 2024);
    assert_eq!(clips.len(), 40);
    let suite = Suite {
        description: String::new(),
        size: "1280x720".into(),
        mm_per_px: None,
        clips: clips.clone(),
    };
    assert_eq!(suite.validate(), Ok(()));
    let mut players_seen = std::collections::BTreeSet::new();
    let (mut fps_seen, mut hands) = (std::collections::BTreeSet::new(), [0; 2]);
    for c in &clips {
        let n = c.players.expect("a sweep clip sets its players");
        assert!(SWEEP_PLAYERS.contains(&n), "{c:?}");
        assert!(SWEEP_MOVES.contains(&c.moves.unwrap()), "{c:?}");
        assert!(SWEEP_FPS.contains(&c.fps), "{c:?}");
        assert!(matches!(c.look, Some(LookChoice::Seed(_))), "{c:?}");
        players_seen.insert(n);
        fps_seen.insert(c.fps as u32);
        hands[usize::from(c.hand)] += 1;
        // The scenario it names plays from a valid start with that many players.
        let s = Scenario::built_in(&c.scenario)
            .unwrap()
            .with_players(n)
            .unwrap();
        let (table, items) = (s.table().unwrap(), s.items());
        let poses = s.start_poses(&table, &items).unwrap();
        s.validate_start(&table, &items, &poses)
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    }
    assert_eq!(players_seen.len(), 3, "{players_seen:?}");
    assert_eq!(fps_seen.len(), 2, "{fps_seen:?}");
    assert!(hands[0] > 0 && hands[1] > 0, "{hands:?}");
    // A seed names its sweep, and a shorter sweep is the start of a longer one.
    assert_eq!(sweep_clips(40, 2024), clips);
    assert_eq!(sweep_clips(5, 2024), clips[..5].to_vec());
    assert!(sweep_clips(40, 2025) != clips);
}

#[test]
fn a_sweep_lists_its_clips_and_prints_its_seed() {
    let dir = tempfile::tempdir().unwrap();
    let (code, table, err) = run_in(
        &["eval", "--sweep", "5", "--seed", "9", "--list"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    for i in 0..5 {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("sweep-{i:03}")))
            .unwrap_or_else(|| panic!("no row {i}:\n{table}"));
        let players: usize = row.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!((2..=4).contains(&players), "{row}");
    }
    assert!(err.contains("seed 9"), "{err}");
    // --seed belongs to a sweep.
    let (code, _, err) = run_in(&["eval", "--seed", "9"], dir.path());
    assert_eq!(code, 2, "{err}");
}
