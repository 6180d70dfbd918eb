//! Replays a detection dump (`fishtrack analyse --detections d.jsonl`) through the
//! tracker, shot cutter and rules (`pipeline::Analysis`) without video: seconds
//! instead of minutes, to iterate on the tracker. Writes the record and, with
//! `--frames A..B`, prints what the tracker believes in those frames.
//!
//! ```sh
//! cargo run --release --no-default-features --example track_replay -- \
//!     d.jsonl --table table.json --game calibration/game.json -o r.json --frames 120..140
//! ```
//! `--start state.json|record.json` replays a continued clip (a record's last rest
//! poses; its match state is not rescored here). Uses: config, calibration, record,
//! track, pipeline.

use fishtrack::calibration::TableCalibration;
use fishtrack::config::{load_json, Game};
use fishtrack::pipeline::Analysis;
use fishtrack::record::{Record, StartState, VideoInfo};
use fishtrack::track::{FrameDetections, Tracker, TrackerConfig};
use std::io::BufRead;
use std::path::PathBuf;

struct Args {
    dump: PathBuf,
    table: PathBuf,
    game: PathBuf,
    out: Option<PathBuf>,
    start: Option<PathBuf>,
    fps: f64,
    frames: Option<(u64, u64)>,
    /// Replay as clips cut before these frames, each continuing the last (`--chain`).
    cuts: Vec<u64>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        dump: PathBuf::new(),
        table: PathBuf::from("calibration/table.json"),
        game: PathBuf::from("calibration/game.json"),
        out: None,
        start: None,
        fps: 30.0,
        frames: None,
        cuts: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    let mut dump = None;
    while let Some(k) = it.next() {
        let mut val = || it.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "--table" => a.table = val()?.into(),
            "--game" => a.game = val()?.into(),
            "-o" | "--output" => a.out = Some(val()?.into()),
            "--start" => a.start = Some(val()?.into()),
            "--fps" => a.fps = val()?.parse().map_err(|e| format!("--fps: {e}"))?,
            "--frames" => {
                let v = val()?;
                let (x, y) = v.split_once("..").ok_or("--frames A..B")?;
                a.frames = Some((
                    x.parse().map_err(|e| format!("--frames: {e}"))?,
                    y.parse().map_err(|e| format!("--frames: {e}"))?,
                ));
            }
            "--cuts" => {
                a.cuts = val()?
                    .split(',')
                    .map(|c| c.trim().parse().map_err(|e| format!("--cuts: {e}")))
                    .collect::<Result<_, _>>()?
            }
            _ if dump.is_none() && !k.starts_with('-') => dump = Some(PathBuf::from(k)),
            _ => return Err(format!("unknown argument {k}")),
        }
    }
    a.dump = dump.ok_or(
        "usage: track_replay DUMP.jsonl [--table T] [--game G] [-o R] [--start S] [--frames A..B]",
    )?;
    Ok(a)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("track_replay: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let a = parse()?;
    let cal = TableCalibration::load(&a.table).map_err(|e| e.to_string())?;
    let game = Game::load(&a.game).map_err(|e| e.to_string())?;
    let start: Option<StartState> = match &a.start {
        None => None,
        Some(p) => {
            let v: serde_json::Value = load_json(p).map_err(|e| e.to_string())?;
            if v.get("shots").is_some() {
                let r = Record::load(p).map_err(|e| e.to_string())?;
                let last = r.shots.last().ok_or("the record has no shots")?;
                Some(StartState {
                    poses: last.end.clone(),
                    ..Default::default()
                })
            } else {
                Some(load_json(p).map_err(|e| e.to_string())?)
            }
        }
    };
    // A second tracker fed the same frames, only to print what it believes; built as
    // `Analysis` builds its own (a clip with no start state opens a match, R2).
    let cfg = TrackerConfig::new(a.fps, game.player_count(), cal.table.clone(), &game.items)
        .map_err(|e| e.to_string())?;
    let mut probe = match &start {
        Some(s) => Tracker::with_start(cfg, s),
        None => Tracker::at_opening(cfg),
    };
    let file = std::fs::File::open(&a.dump).map_err(|e| format!("{}: {e}", a.dump.display()))?;
    let mut dets = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let d: FrameDetections = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{}: {e}", a.dump.display(), n + 1))?;
        dets.push(d);
    }
    for d in &dets {
        let tf = probe.update(d.frame, d);
        if a.frames.is_some_and(|(x, y)| (x..y).contains(&d.frame)) {
            println!(
                "frame {}: {} fish, {} coins detected",
                d.frame,
                d.fish.len(),
                d.coins.len()
            );
            for t in &tf.items {
                println!(
                    "  track {:>3} {:<8} {:?} ({:7.1}, {:7.1}) v {:6.0} mm/s{}",
                    t.track.0,
                    t.item.map(|i| i.to_string()).unwrap_or("?".into()),
                    t.state,
                    t.pose.x,
                    t.pose.y,
                    t.velocity_mm_s.norm(),
                    if t.seen { "" } else { " unseen" }
                );
            }
            for e in &tf.events {
                println!("  event {e:?}");
            }
        }
    }
    // One clip, or clips cut at `cuts`, each opening where the last came to rest
    // with its match state (as `analyse --chain` does; frames renumbered per clip).
    let mut bounds = vec![0];
    bounds.extend(a.cuts.iter().copied());
    bounds.push(u64::MAX);
    let mut start = start;
    let mut state = None;
    let mut record: Option<Record> = None;
    for w in bounds.windows(2) {
        let (from, to) = (w[0], w[1]);
        let mut analysis = Analysis::new(&game, cal.table.clone(), a.fps, start.as_ref(), state)
            .map_err(|e| e.to_string())?;
        let mut frames = 0u64;
        for d in dets.iter().filter(|d| (from..to).contains(&d.frame)) {
            let mut d = d.clone();
            d.frame -= from;
            analysis.push(d.frame, &d).map_err(|e| e.to_string())?;
            frames += 1;
        }
        let info = VideoInfo {
            path: a.dump.display().to_string(),
            fps: a.fps,
            frames,
            width: 0,
            height: 0,
            ..Default::default()
        };
        let (clip, next) = analysis.finish(info).map_err(|e| e.to_string())?;
        if let Some(last) = clip.shots.last() {
            start = Some(StartState {
                poses: last.end.clone(),
                next_player: Some(next.next_player),
                scores: Some(next.scores.clone()),
            });
        }
        let mut next = next;
        next.last_rest_frame = None;
        state = Some(next);
        record = Some(match record {
            None => clip,
            Some(mut r) => {
                r.append_clip(clip);
                r
            }
        });
    }
    let record = record.ok_or("no frames")?;
    for s in &record.shots {
        eprintln!(
            "shot {}: flick {} rest {} first moved {:?}, lost {:?}, score {:?}, unknown {}",
            s.index,
            s.flick_frame,
            s.rest_frame,
            s.first_moved.map(|i| i.to_string()),
            s.lost
                .iter()
                .map(|l| l.item.to_string())
                .collect::<Vec<_>>(),
            s.score,
            s.unknown.len()
        );
        for n in &s.notes {
            eprintln!("  note: {n}");
        }
    }
    if let Some(o) = &a.out {
        record.save(o).map_err(|e| e.to_string())?;
    }
    Ok(())
}
