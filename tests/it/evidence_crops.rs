//! Issue #17 items 1 and 2, the crops: `analyse --evidence DIR` on the demo writes a
//! crop at every deciding frame of every call in the record, an index that agrees
//! with the record, and crops whose pixels show the items where the index says
//! they are; `replay --video` writes them into `evidence/` and the report shows the
//! flagged calls' crops first and every call's under its shot.
#![cfg(feature = "opencv")]

use crate::common::run;
use fishtrack::geometry::FishFootprint;
use fishtrack::model::FrameIdx;
use fishtrack::record::{Call, Record};
use fishtrack::replay::evidence::{Crop, EvidenceIndex, INDEX_FILE, MAX_CROPS_PER_CALL};
use std::path::{Path, PathBuf};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Analyses the demo into `dir/record.json`, with `extra` arguments.
fn analyse_demo(dir: &Path, extra: &[&str]) -> Record {
    let record = dir.join("record.json");
    let (video, table, game) = (
        repo("samples/demo/match.avi"),
        repo("calibration/table.json"),
        repo("calibration/game.json"),
    );
    let mut args = vec![
        "analyse",
        s(&video),
        "--table",
        s(&table),
        "--game",
        s(&game),
        "--quiet",
        "-o",
        s(&record),
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    Record::load(&record).expect("the record analyse wrote")
}

fn index(dir: &Path) -> EvidenceIndex {
    let text = std::fs::read_to_string(dir.join(INDEX_FILE)).expect("index.json");
    serde_json::from_str(&text).expect("index.json parses")
}

/// The frames a call's crops should be at: its deciding frames (at most
/// `MAX_CROPS_PER_CALL`, the last kept), else one.
fn expected_frames(frames: &[FrameIdx]) -> Option<Vec<FrameIdx>> {
    let mut f = frames.to_vec();
    f.sort_unstable();
    f.dedup();
    if f.is_empty() {
        return None;
    }
    if f.len() > MAX_CROPS_PER_CALL {
        let last = f[f.len() - 1];
        f.truncate(MAX_CROPS_PER_CALL - 1);
        f.push(last);
    }
    Some(f)
}

/// The share of the pixels within `r` px of `(x, y)` whose colour is nearer (in
/// chromaticity) to `want` than to any of `others`, and clearly coloured.
fn share_of_colour(
    img: &image::RgbImage,
    (x, y): (f64, f64),
    r: i64,
    want: [u8; 3],
    others: &[[u8; 3]],
) -> f64 {
    let chroma = |c: [u8; 3]| {
        let sum = (c[0] as f64 + c[1] as f64 + c[2] as f64).max(1.0);
        [c[0] as f64 / sum, c[1] as f64 / sum, c[2] as f64 / sum]
    };
    let d = |a: [f64; 3], b: [f64; 3]| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>();
    let (mut hit, mut n) = (0, 0);
    for dy in -r..=r {
        for dx in -r..=r {
            let (px, py) = (x as i64 + dx, y as i64 + dy);
            if px < 0 || py < 0 || px >= img.width() as i64 || py >= img.height() as i64 {
                continue;
            }
            n += 1;
            let c = img.get_pixel(px as u32, py as u32).0;
            let saturated = c.iter().max().unwrap() - c.iter().min().unwrap() > 50;
            let mine = d(chroma(c), chroma(want));
            if saturated && others.iter().all(|o| mine < d(chroma(c), chroma(*o))) {
                hit += 1;
            }
        }
    }
    hit as f64 / n.max(1) as f64
}

#[test]
fn analyse_evidence_writes_a_crop_for_every_call_and_the_index_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let ev = dir.path().join("evidence");
    let record = analyse_demo(dir.path(), &["--evidence", s(&ev)]);
    let idx = index(&ev);
    let game = record.game.clone().expect("analyse writes the game");
    assert_eq!(idx.review_below, game.review_below());

    // One entry per call, in record order, each with its crops at its deciding frames.
    let calls: Vec<_> = record.shots.iter().flat_map(|s| s.calls()).collect();
    assert!(calls.len() >= 10, "the demo makes calls: {}", calls.len());
    assert_eq!(idx.calls.len(), calls.len());
    let mut seen_files = std::collections::BTreeSet::new();
    for (entry, call) in idx.calls.iter().zip(&calls) {
        assert!(
            entry.is(call.shot, call),
            "{entry:?} is not {}",
            call.line()
        );
        assert_eq!(entry.confidence, call.evidence.confidence);
        assert_eq!(entry.why, call.evidence.why);
        assert_eq!(
            entry.flagged,
            call.evidence.confidence < game.review_below()
        );
        assert!(entry.unread.is_empty(), "{entry:?}");
        let frames: Vec<FrameIdx> = entry.crops.iter().map(|c| c.frame).collect();
        match expected_frames(&call.evidence.frames) {
            Some(want) => assert_eq!(frames, want, "{}", call.line()),
            None => assert_eq!(frames.len(), 1, "{}", call.line()),
        }
        for c in &entry.crops {
            assert!(
                seen_files.insert(c.file.clone()),
                "two calls share {}",
                c.file
            );
            assert!(
                c.file
                    .starts_with(&format!("shot{:02}-{}", call.shot, call.call.as_str())),
                "{}",
                c.file
            );
            assert!(
                c.file.ends_with(&format!("-f{:04}.png", c.frame)),
                "{}",
                c.file
            );
            let img = image::open(ev.join(&c.file)).expect("a PNG").to_rgb8();
            assert_eq!(
                (img.width(), img.height()),
                (c.width, c.height),
                "{}",
                c.file
            );
            assert!(
                c.width <= 320 && c.height <= 320 && c.width >= 100 && c.height >= 100,
                "{c:?}"
            );
        }
    }
    // Every PNG in the folder is in the index.
    let pngs = std::fs::read_dir(&ev)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "png")
        })
        .count();
    assert_eq!(pngs, seen_files.len());

    // The crops show the items where the index puts them: each coin-in call's crop at
    // rest has its fish's tag colour on the tag (between the hole and the tag's far
    // end), not the other player's and not the table's, and not in the hole nor beside.
    let footprint = FishFootprint::new(&game.items);
    let colours: Vec<[u8; 3]> = game.players.iter().map(|p| p.rgb().unwrap()).collect();
    let mut checked = 0;
    for entry in idx.calls.iter().filter(|c| c.call == Call::CoinIn) {
        let fish = entry.other.expect("coin-in names its fish");
        let shot = record.shots.iter().find(|s| s.index == entry.shot).unwrap();
        let pose = shot.end[&fish];
        let on_tag = footprint.hole_radius() + 10.0;
        let theta = pose.theta.unwrap();
        let pt = fishtrack::geometry::Point::new(
            pose.x + on_tag * theta.cos(),
            pose.y + on_tag * theta.sin(),
        );
        for crop in entry.crops.iter().filter(|c| c.frame >= shot.rest_frame) {
            let img = image::open(ev.join(&crop.file)).unwrap().to_rgb8();
            let at = Crop::px_from_table(crop, pt);
            let others: Vec<[u8; 3]> = colours
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != fish.owner)
                .map(|(_, c)| *c)
                .chain([[160, 110, 60]]) // the table's wood
                .collect();
            let share = share_of_colour(&img, at, 3, colours[fish.owner], &others);
            assert!(
                share > 0.6,
                "{}: {fish}'s colour on {:.0}% of its tag at {at:?}",
                crop.file,
                100.0 * share
            );
            // The hole holds the coin, not tag: a crop turned or mirrored would put
            // the tag's other end here.
            let hole = Crop::px_from_table(crop, pose.point());
            let in_hole = share_of_colour(&img, hole, 3, colours[fish.owner], &others);
            assert!(
                in_hole < 0.3,
                "{}: {fish}'s colour in its hole, on the coin: {:.0}%",
                crop.file,
                100.0 * in_hole
            );
            // And the same spot pushed off the tag (50 mm to its side) does not show it.
            let side = fishtrack::geometry::Point::new(
                pt.x - 50.0 * theta.sin(),
                pt.y + 50.0 * theta.cos(),
            );
            let (sx, sy) = Crop::px_from_table(crop, side);
            if sx >= 0.0 && sy >= 0.0 && sx < crop.width as f64 && sy < crop.height as f64 {
                let off = share_of_colour(&img, (sx, sy), 3, colours[fish.owner], &others);
                assert!(
                    off < 0.3,
                    "{}: {fish}'s colour beside its tag: {:.0}%",
                    crop.file,
                    100.0 * off
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "coin-in crops checked: {checked}");
}

#[test]
fn replay_writes_the_crops_and_the_report_shows_the_flagged_ones_first() {
    let dir = tempfile::tempdir().unwrap();
    let record = analyse_demo(dir.path(), &[]);
    let out = dir.path().join("replay");
    let (video, table) = (
        repo("samples/demo/match.avi"),
        repo("calibration/table.json"),
    );
    let rec = dir.path().join("record.json");
    // `replay` of the record's shot 0 with the video, into `to`, with `extra` flags.
    let replay = |to: &Path, extra: &[&str]| {
        let mut args = vec![
            "replay",
            s(&rec),
            "--video",
            s(&video),
            "--table",
            s(&table),
            "--shot",
            "0",
        ];
        args.extend_from_slice(extra);
        args.extend(["-o", s(to)]);
        run(&args)
    };
    let (code, stdout, err) = replay(&out, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("evidence crops"), "{stdout}");
    let idx = index(&out.join("evidence"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();

    // Review first: each flagged call's row is followed by its crops, embedded.
    let flagged: Vec<_> = idx.calls.iter().filter(|c| c.flagged).collect();
    assert!(!flagged.is_empty(), "the demo has calls to review");
    let review = &html[html.find("id=\"review\"").unwrap()..html.find("<h2>Players").unwrap()];
    let embedded = review.matches("src=\"data:image/png;base64,").count();
    assert_eq!(
        embedded,
        flagged.iter().map(|c| c.crops.len()).sum::<usize>()
    );
    for c in &flagged {
        for crop in &c.crops {
            assert!(
                review.contains(&format!("href=\"evidence/{}\"", crop.file)),
                "{}",
                crop.file
            );
        }
    }
    // Each shot links every call's crops, collapsed.
    for shot in &record.shots {
        let at = html.find(&format!("id=\"shot-{}\"", shot.index)).unwrap();
        let section = &html[at..at + html[at..].find("</section>").unwrap()];
        let calls: Vec<_> = idx.calls.iter().filter(|c| c.shot == shot.index).collect();
        if calls.is_empty() {
            continue;
        }
        assert!(
            section.contains("<details class=\"evidence\">"),
            "shot {}",
            shot.index
        );
        for crop in calls.iter().flat_map(|c| &c.crops) {
            assert!(
                section.contains(&format!("src=\"evidence/{}\"", crop.file)),
                "{}",
                crop.file
            );
            assert!(
                out.join("evidence").join(&crop.file).exists(),
                "{}",
                crop.file
            );
        }
    }

    // --no-evidence: no folder, no crops on the page.
    let bare = dir.path().join("bare");
    let (code, _, err) = replay(&bare, &["--no-evidence"]);
    assert_eq!(code, 0, "{err}");
    assert!(!bare.join("evidence").exists());
    let html = std::fs::read_to_string(bare.join("report.html")).unwrap();
    assert!(!html.contains("class=\"crops\""));
}

#[test]
fn evidence_takes_one_video() {
    let dir = tempfile::tempdir().unwrap();
    let video = repo("samples/demo/match.avi");
    crate::common::assert_fails_with(
        &[
            "analyse",
            s(&video),
            s(&video),
            "--evidence",
            s(dir.path()),
            "-o",
            s(&dir.path().join("out")),
        ],
        &["--evidence takes one video"],
    );
}
