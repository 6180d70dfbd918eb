//! `fishtrack replay record.json [--video VIDEO] -o DIR`: shot diagrams (PNG), the
//! HTML match report and, when the video is at hand, the annotated video. Checks
//! every input before writing anything, so bad input costs one line and exit 1.
//! Uses: record, config, calibration, replay, vision::annotate.

use crate::calibration::TableCalibration;
use crate::config::Game;
use crate::record::Record;
use crate::replay::evidence::Written;
use crate::replay::{self, DiagramStyle, Scene};
use anyhow::{bail, Context};
use clap::Args;
use std::path::{Path, PathBuf};

/// Annotated video, shot diagrams and an HTML match report from a record.
///
/// Writes into DIR: `shot_NNN.png` (one diagram per shot, to scale), `report.html`
/// (self-contained: score table, violations, diagrams, an interactive replay of every
/// shot), `annotated.avi` (MJPG; the original frames with every item, trajectory,
/// lost item, coin in a hole and the running score drawn on) and `evidence/` (PNG
/// crops of the table top at each call's deciding frames and their `index.json`;
/// the report's "Review first" shows the flagged calls' crops). Without the video
/// the diagrams and the report are still written, and a note says so.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The record to replay (written by `fishtrack analyse`), or a simulator
    /// `truth.json` (scored by the rules engine on the way in).
    #[arg(default_value = "samples/demo/record.json")]
    pub record: PathBuf,
    /// The video the record was made from [default: the record's `video.path`,
    /// relative to the record's folder].
    #[arg(long)]
    pub video: Option<PathBuf>,
    /// Output folder (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "DIR",
        default_value = "replay"
    )]
    pub out: PathBuf,
    /// Table calibration, to draw table mm onto the video [default: table.json next to
    /// the record, else calibration/table.json].
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Match set-up for records that carry none (colours, items) [default: calibration/game.json].
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// Play every flick N times slower in the video (each frame of a flick repeated N times).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub slow: u32,
    /// Render only this shot (its record `index`) in the video, with a second before and after.
    #[arg(long)]
    pub shot: Option<usize>,
    /// Diagram scale in pixels per table millimetre.
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Do not write the annotated video even if the video is found (nor the
    /// evidence crops, which are cut from it).
    #[arg(long)]
    pub no_video: bool,
    /// Do not write the evidence crops (DIR/evidence/: each call's deciding frames,
    /// shown in the report) even if the video is found.
    #[arg(long)]
    pub no_evidence: bool,
}

/// Reads a record, or a simulator `truth.json` turned into one: its shots as the
/// record would have them, scored by the rules engine (put-backs, verdicts, points).
fn load_record(path: &Path) -> anyhow::Result<Record> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let is_truth = serde_json::from_str::<serde_json::Value>(&text)
        .map(|v| v.get("scenario").is_some() && v.get("frames").is_some())
        .unwrap_or(false);
    if !is_truth {
        return Ok(Record::load(path)?);
    }
    let truth = crate::sim::truth::Truth::load(path)?;
    super::eval::scored_truth(&truth)
        .with_context(|| format!("{}: scoring the simulated match", path.display()))
}

/// Where the video is: the flag, else the record's path (next to the record, then as given).
fn find_video(args: &ReplayArgs, record: &Record) -> Option<PathBuf> {
    if let Some(v) = &args.video {
        return Some(v.clone());
    }
    if record.video.path.is_empty() {
        return None;
    }
    let p = PathBuf::from(&record.video.path);
    // Next to the record first (a record and its video travel together), then as given.
    match args.record.parent() {
        Some(dir) if p.is_relative() => {
            let beside = dir.join(&p);
            if beside.exists() || !p.exists() {
                Some(beside)
            } else {
                Some(p)
            }
        }
        _ => Some(p),
    }
}

fn default_path(given: &Option<PathBuf>, dir: &str, name: &str) -> (PathBuf, bool) {
    match given {
        Some(p) => (p.clone(), true),
        None => (super::bundled_dir(dir).join(name), false),
    }
}

pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    if !(args.scale.is_finite() && args.scale > 0.0 && args.scale <= 10.0) {
        bail!(
            "--scale must be between 0 and 10 pixels per mm, got {}",
            args.scale
        );
    }
    let record = load_record(&args.record)?;

    let (game_path, game_given) = default_path(&args.game, "calibration", "game.json");
    let game = if record.game.is_some() {
        None
    } else if game_given || game_path.exists() {
        Some(Game::load(&game_path)?)
    } else {
        None
    };
    let (table_path, table_given) = match &args.table {
        Some(p) => (p.clone(), true),
        None => {
            // A table.json next to the record (as `simulate` writes it) is its calibration.
            let beside = args.record.parent().map(|d| d.join("table.json"));
            match beside.filter(|p| p.exists()) {
                Some(p) => (p, false),
                None => default_path(&None, "calibration", "table.json"),
            }
        }
    };
    let calib = if table_given || table_path.exists() {
        Some(TableCalibration::load(&table_path).map_err(anyhow::Error::from))
    } else {
        None
    };
    let fallback_table = calib
        .as_ref()
        .and_then(|c| c.as_ref().ok())
        .map(|c| c.table.clone());
    let scene = Scene::new(record, game, fallback_table)
        .with_context(|| args.record.display().to_string())?;
    if let Some(i) = args.shot {
        scene.shot_position(i)?;
    }

    // Decide about the video before writing anything.
    let mut notes = Vec::new();
    let video = if args.no_video {
        notes.push("Annotated video not written (--no-video).".to_string());
        None
    } else {
        match find_video(&args, &scene.record) {
            Some(v) if v.exists() => Some(prepare_video(&scene, &v, calib, &table_path)?),
            Some(v) => {
                notes.push(format!(
                    "No video: {} not found, so no annotated video; diagrams and this report only.",
                    v.display()
                ));
                None
            }
            None => {
                notes.push(
                    "No video: the record names none and --video was not given; diagrams and this report only."
                        .to_string(),
                );
                None
            }
        }
    };

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let style = DiagramStyle {
        px_per_mm: args.scale,
        ..DiagramStyle::default()
    };
    let shots = scene.record.shots.len();
    let bar = super::progress_bar(shots as u64, "diagrams");
    let mut pngs = Vec::with_capacity(shots);
    for (pos, shot) in scene.record.shots.iter().enumerate() {
        let img = replay::draw_shot_diagram(&scene, pos, style);
        let png = replay::diagram::png_bytes(&img)?;
        let path = args.out.join(format!("shot_{:03}.png", shot.index));
        std::fs::write(&path, &png).with_context(|| format!("cannot write {}", path.display()))?;
        pngs.push(png);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let evidence = match &video {
        Some(v) if !args.no_evidence => {
            let (written, said) =
                write_evidence(&scene, &v.calib, &v.path, &args.out.join("evidence"))?;
            println!("{said}");
            written
        }
        _ => Written::default(),
    };
    let html = replay::html::report_html_with_evidence(&scene, &pngs, &notes, &evidence);
    let report = args.out.join("report.html");
    std::fs::write(&report, html).with_context(|| format!("cannot write {}", report.display()))?;
    println!(
        "wrote {shots} diagrams: {}/shot_NNN.png",
        args.out.display()
    );
    println!("wrote report: {}", report.display());

    match video {
        Some(v) => write_video(&scene, &v, &args)?,
        None => {
            for n in &notes {
                eprintln!("fishtrack: note: {n}");
            }
        }
    }
    Ok(())
}

/// A video checked against the record and the calibration, ready to annotate.
#[cfg_attr(not(feature = "opencv"), allow(dead_code))]
struct ReadyVideo {
    path: PathBuf,
    calib: TableCalibration,
    /// Probed once: probing counts the frames by reading the whole file.
    #[cfg(feature = "opencv")]
    probe: crate::vision::annotate::VideoProbe,
}

#[cfg(feature = "opencv")]
fn prepare_video(
    scene: &Scene,
    video: &Path,
    calib: Option<anyhow::Result<TableCalibration>>,
    table_path: &Path,
) -> anyhow::Result<ReadyVideo> {
    use crate::vision::annotate;
    let probe = annotate::probe_video(video)?;
    annotate::check_record_matches(&scene.record.video, scene, video, &probe)?;
    let calib = match calib {
        Some(c) => c?,
        None => bail!(
            "the annotated video needs a table calibration, and {} does not exist (give --table, or --no-video)",
            table_path.display()
        ),
    };
    annotate::check_calibration_matches(&calib, table_path, &probe)?;
    Ok(ReadyVideo {
        path: video.to_path_buf(),
        calib,
        probe,
    })
}

#[cfg(not(feature = "opencv"))]
fn prepare_video(
    _scene: &Scene,
    _video: &Path,
    _calib: Option<anyhow::Result<TableCalibration>>,
    _table_path: &Path,
) -> anyhow::Result<ReadyVideo> {
    bail!("this build has no OpenCV: the annotated video needs the default `opencv` feature (or pass --no-video)")
}

#[cfg(feature = "opencv")]
fn write_video(scene: &Scene, v: &ReadyVideo, args: &ReplayArgs) -> anyhow::Result<()> {
    use crate::vision::annotate::{annotate_probed_video, AnnotateOptions};
    let name = match args.shot {
        Some(i) => format!("annotated_shot{i}.avi"),
        None => "annotated.avi".to_string(),
    };
    let out = args.out.join(name);
    let opts = AnnotateOptions {
        slow: args.slow,
        shot: args.shot,
    };
    let planned = scene
        .frame_plan(v.probe.frames, args.shot, args.slow)?
        .len() as u64;
    let bar = super::progress_bar(planned, "video");
    let start = std::time::Instant::now();
    let summary = annotate_probed_video(scene, &v.calib, &v.path, &v.probe, &out, opts, |n| {
        bar.set_position(n)
    })?;
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    println!(
        "wrote annotated video: {} ({} frames, {}x{}, {:.0} frames/s)",
        out.display(),
        summary.frames_written,
        summary.width,
        summary.height,
        summary.frames_written as f64 / secs
    );
    Ok(())
}

#[cfg(not(feature = "opencv"))]
fn write_video(_scene: &Scene, _v: &ReadyVideo, _args: &ReplayArgs) -> anyhow::Result<()> {
    bail!("this build has no OpenCV")
}

/// Writes the evidence crops of every call of `scene`'s record into `dir`, cut from
/// `video`, with a progress bar; also gives a line saying how many (`replay`, and
/// `analyse --evidence` through [`evidence_of_analysis`]).
#[cfg(feature = "opencv")]
fn write_evidence(
    scene: &Scene,
    calib: &TableCalibration,
    video: &Path,
    dir: &Path,
) -> anyhow::Result<(Written, String)> {
    use crate::replay::evidence::{write_crops, EvidencePlan, VideoFrames, INDEX_FILE};
    let spec = video.to_string_lossy().to_string();
    let plan = EvidencePlan::new(scene, &spec);
    let mut frames = VideoFrames::open(&spec)?;
    let bar = super::progress_bar(plan.len() as u64, "evidence");
    let written = write_crops(scene, calib, plan, &mut frames, dir, &mut |done, _| {
        bar.set_position(done)
    })
    .with_context(|| format!("writing the evidence crops into {}", dir.display()))?;
    bar.finish_and_clear();
    let (calls, crops, unread) = written.index.as_ref().map_or((0, 0, 0), |i| {
        (
            i.calls.len(),
            i.calls.iter().map(|c| c.crops.len()).sum::<usize>(),
            i.calls.iter().map(|c| c.unread.len()).sum::<usize>(),
        )
    });
    let mut said = format!(
        "wrote {crops} evidence crops of {calls} calls: {}",
        dir.join(INDEX_FILE).display()
    );
    if unread > 0 {
        said.push_str(&format!(
            " ({unread} not written: their frames could not be read; `unread` in the index)"
        ));
    }
    Ok((written, said))
}

#[cfg(not(feature = "opencv"))]
fn write_evidence(
    _scene: &Scene,
    _calib: &TableCalibration,
    _video: &Path,
    _dir: &Path,
) -> anyhow::Result<(Written, String)> {
    bail!("this build has no OpenCV: the evidence crops need the default `opencv` feature")
}

/// `analyse --evidence DIR`: the crops of the record just written, cut from the
/// video it was made from, with the analysis's own game and calibration.
pub(super) fn evidence_of_analysis(
    record: &Record,
    settings: &crate::driver::Settings,
    video: &Path,
    dir: &Path,
) -> anyhow::Result<()> {
    let scene = Scene::new(
        record.clone(),
        Some(settings.game.clone()),
        Some(settings.calibration.table.clone()),
    )
    .context("the record just written")?;
    let (_, said) = write_evidence(&scene, &settings.calibration, video, dir)?;
    // As analyse's other lines: on stderr, stdout keeps the scoreboard.
    eprintln!("fishtrack: {said}");
    Ok(())
}
