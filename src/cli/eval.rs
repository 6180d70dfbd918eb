//! `fishtrack eval`: how far a record made by `analyse` is from the simulator's
//! ground truth — one table of figures, or `--json`. With `--suite`, the whole
//! evaluation set (`eval/suite.json`): every clip simulated (once; kept in the work
//! folder while its truth is unchanged), analysed, compared with its truth, and one
//! table with a row per clip and the pooled totals. With `--calibration table` or
//! `no-chessboard`, each clip is analysed with the table calibration fishtrack makes
//! itself (`calibrate table` on a render of the clip's empty table, `empty.png`)
//! instead of the simulator's, and how far that calibration is from the truth is
//! reported beside the figures.
//! Uses: eval (figures, pooling, the suite), sim (scenarios, truth), rules (the
//! truth's scores), record, config; runs `simulate` and `analyse` as child processes
//! of this same binary (and `calibrate table`; the empty table is rendered here,
//! by vision::render).

use super::Rule;
use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::calibration::TableCalibration;
use crate::eval::{
    check_calibration, evaluate, pool, pool_calibration, sweep_clips, CalibrationCheck,
    CalibrationSummary, ClipSpec, EvalSamples, Evaluation, LookChoice, Spread, Suite, TruthPoses,
};
use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::Record;
use crate::sim::look::Look;
use crate::sim::truth::{FrameTruth, Truth};
use crate::sim::{Scenario, SimOptions};

/// `eval --help`: the command's whole explanation (set on the subcommand too, whose
/// one-line doc comment would otherwise replace it).
pub const LONG_ABOUT: &str = "Measure analyse's accuracy against the simulator's truth.\n\n\
fishtrack eval RECORD TRUTH compares one record with one truth.json. \
fishtrack eval --suite eval/suite.json runs the evaluation set: each clip is simulated into \
the work folder (kept there, and reused while the simulator still plays the same truth), \
analysed, and compared; one table shows every figure per clip and the totals over all clips \
(medians and p95 of all samples pooled, counts summed). Each clip's folder keeps its \
scenario.json, video, truth, record and the simulate/analyse logs.\n\n\
fishtrack eval --sweep N [--seed S] runs N random clips the same way (into out/sweep): whole \
matches of 2-4 players with 1-3 moves each, 30 or 60 fps, hand on or off, each in a random \
look (materials, light and shadows, camera drift, H.264...: src/sim/look.rs); it prints a row \
a clip, the pooled figures and the worst clips with the command that renders each again. \
Without --seed the sweep seed is drawn and printed, so a run can be repeated.";

#[derive(Debug, Args)]
#[command(
    long_about = LONG_ABOUT,
    group(clap::ArgGroup::new("set").args(["suite", "sweep"])),
    // clap derives `[RECORD] [TRUTH]` from the two modes together, as if nothing were
    // required; the usage says what each mode needs.
    override_usage = "fishtrack eval [OPTIONS] <RECORD> <TRUTH>\n       \
fishtrack eval [OPTIONS] --suite <SUITE.json>\n       \
fishtrack eval [OPTIONS] --sweep <N> [--seed <SEED>]"
)]
pub struct EvalArgs {
    /// The record written by `fishtrack analyse` (required without --suite or --sweep).
    #[arg(required_unless_present = "set", conflicts_with = "set")]
    pub record: Option<PathBuf>,
    /// The truth.json written by `fishtrack simulate` for the same video (required with RECORD).
    #[arg(required_unless_present = "set")]
    pub truth: Option<PathBuf>,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run an evaluation set (e.g. eval/suite.json) instead of one record.
    #[arg(long, value_name = "SUITE.json")]
    pub suite: Option<PathBuf>,
    /// Run N random clips (random matches and looks) instead of a suite.
    #[arg(long, value_name = "N")]
    pub sweep: Option<usize>,
    /// The sweep's seed: the same seed gives the same clips (default: drawn, and printed).
    #[arg(long, requires = "sweep")]
    pub seed: Option<u64>,
    /// The working folder: one sub-folder per clip (default out/eval, a sweep out/sweep).
    #[arg(long, requires = "set")]
    pub work: Option<PathBuf>,
    /// Image size of every clip instead of the suite's, WIDTHxHEIGHT (e.g. a quick 640x360).
    #[arg(long, requires = "set")]
    pub size: Option<String>,
    /// Run only these clips (comma-separated names); the totals are over them.
    #[arg(long, value_delimiter = ',', requires = "set")]
    pub only: Vec<String>,
    /// Clips worked on at once (default: one per core).
    #[arg(long, requires = "set")]
    pub jobs: Option<usize>,
    /// Render every clip again, even one whose truth is unchanged (after a renderer change).
    #[arg(long, requires = "set")]
    pub fresh: bool,
    /// Don't analyse again where the work folder already holds a clip's record.
    #[arg(long, requires = "set")]
    pub reuse_records: bool,
    /// Only list what the set covers (plays the physics, renders and analyses nothing).
    #[arg(long, requires = "set")]
    pub list: bool,
    /// The table calibration each clip is analysed with: the simulator's true one, or
    /// one fishtrack makes itself from a render of the clip's empty table (empty.png in
    /// the clip's folder), so that the evaluation covers the whole chain: `table` runs
    /// `calibrate table` with the true camera.json, `no-chessboard` runs `calibrate table
    /// --no-chessboard` (the lens found from the table too). How far each calibration is
    /// from the truth is printed after the table; a calibration refused fails its clip.
    /// Default: truth. Only with --suite or --sweep.
    // Not `requires = "set"`: clap's refusal exits 2, the house's bad input exits 1
    // with one line (`run`).
    #[arg(long, value_enum)]
    pub calibration: Option<CalibrationSource>,
}

/// Where `eval --suite` takes each clip's table calibration from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CalibrationSource {
    /// The simulator's true table.json.
    Truth,
    /// `calibrate table` on the clip's empty table, with the true camera.json.
    Table,
    /// `calibrate table --no-chessboard` on the clip's empty table.
    NoChessboard,
}

impl CalibrationSource {
    fn slug(self) -> &'static str {
        match self {
            CalibrationSource::Truth => "truth",
            CalibrationSource::Table => "table",
            CalibrationSource::NoChessboard => "no-chessboard",
        }
    }
}

impl EvalArgs {
    fn work(&self) -> PathBuf {
        self.work.clone().unwrap_or_else(|| {
            if self.sweep.is_some() {
                "out/sweep".into()
            } else {
                "out/eval".into()
            }
        })
    }
}

/// The truth's frames, indexed for lookups by frame.
pub struct TruthFrames<'a> {
    frames: BTreeMap<FrameIdx, &'a FrameTruth>,
    items: Vec<ItemId>,
}

impl<'a> TruthFrames<'a> {
    pub fn new(truth: &'a Truth) -> Self {
        let frames: BTreeMap<FrameIdx, &FrameTruth> =
            truth.frames.iter().map(|f| (f.frame, f)).collect();
        let mut items: Vec<ItemId> = truth
            .frames
            .iter()
            .flat_map(|f| f.items.keys().copied())
            .collect();
        items.sort();
        items.dedup();
        TruthFrames { frames, items }
    }
}

impl TruthPoses for TruthFrames<'_> {
    fn pose_at(&self, item: ItemId, frame: FrameIdx) -> Option<Pose> {
        let it = self.frames.get(&frame)?.items.get(&item)?;
        it.on_table.then(|| it.pose())
    }
    fn items(&self) -> Vec<ItemId> {
        self.items.clone()
    }
}

/// The truth as a record with its scores filled by the rules engine.
pub fn scored_truth(truth: &Truth) -> anyhow::Result<Record> {
    let table = truth.table().context("the truth's table polygon")?;
    crate::rules::rescore(&truth.game, &table, &truth.to_record()).context("scoring the truth")
}

/// Evaluates one record against one truth file.
pub fn evaluate_files(
    record: &std::path::Path,
    truth: &std::path::Path,
) -> anyhow::Result<Evaluation> {
    let rec = Record::load(record)?;
    let truth = Truth::load(truth)?;
    Ok(evaluate_record(&rec, &truth, &record.display().to_string())?.0)
}

/// Evaluates a loaded record (`what` names it in errors) against its truth.
fn evaluate_record(
    rec: &Record,
    truth: &Truth,
    what: &str,
) -> anyhow::Result<(Evaluation, EvalSamples)> {
    if rec.players.len() != truth.players.len() {
        bail!(
            "{what} has {} players but {} has {}: not the same match",
            rec.players.len(),
            truth.scenario,
            truth.players.len()
        );
    }
    let truth_record = scored_truth(truth)?;
    Ok(evaluate(rec, &truth_record, &TruthFrames::new(truth)))
}

pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    if let Some(suite) = &args.suite {
        return run_suite(suite, &args);
    }
    if let Some(n) = args.sweep {
        return run_sweep(n, &args);
    }
    if args.calibration.is_some() {
        bail!("--calibration needs --suite or --sweep: it calibrates each clip's rendered empty table");
    }
    let (Some(record), Some(truth)) = (&args.record, &args.truth) else {
        bail!("give a RECORD and its TRUTH, or --suite SUITE.json");
    };
    let e = evaluate_files(record, truth)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&e)?);
    } else {
        print_table(&e);
    }
    Ok(())
}

pub fn print_table(e: &Evaluation) {
    let rows = e.rows();
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<width$}  {v}");
    }
}

// ---------------------------------------------------------------------------
// The evaluation set.

/// Seconds spent on each part of the work.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct Seconds {
    simulate: f64,
    /// Rendering the empty table and `calibrate table` (`--calibration` other than truth).
    calibrate: f64,
    analyse: f64,
    eval: f64,
}

/// One clip's outcome.
#[derive(Debug, Serialize)]
struct ClipResult {
    #[serde(flatten)]
    spec: ClipSpec,
    /// The scenario's own name, its player count and the size rendered.
    scenario_name: String,
    players: usize,
    size: String,
    frames: u64,
    /// Whether the video was already in the work folder.
    reused_video: bool,
    seconds: Seconds,
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluation: Option<Evaluation>,
    /// How far fishtrack's own table calibration is from the truth (`--calibration`).
    #[serde(skip_serializing_if = "Option::is_none")]
    calibration: Option<CalibrationCheck>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
    #[serde(skip)]
    samples: EvalSamples,
}

/// What every clip of a run shares.
struct SuiteRun<'a> {
    exe: PathBuf,
    suite: &'a Suite,
    suite_dir: PathBuf,
    work: PathBuf,
    size: Option<&'a str>,
    fresh: bool,
    reuse_records: bool,
    calibration: CalibrationSource,
}

/// `--json` output of a suite.
#[derive(Serialize)]
struct SuiteReport<'a> {
    suite: String,
    /// A sweep's seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    clips: &'a [ClipResult],
    total: Evaluation,
    /// Where the table calibrations came from, and (not from the truth) how far they are from it.
    calibration: CalibrationSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    calibration_total: Option<CalibrationSummary>,
    clips_failed: usize,
    seconds: Seconds,
    wall_seconds: f64,
    jobs: usize,
}

/// A set's clips run: each clip's outcome, the pooled figures, the time taken.
struct SetRun {
    results: Vec<ClipResult>,
    total: Evaluation,
    seconds: Seconds,
    wall: f64,
    jobs: usize,
    calibration: CalibrationSource,
}

impl SetRun {
    /// The clips' calibration checks pooled, when the calibrations were fishtrack's own.
    fn calibration_total(&self) -> Option<CalibrationSummary> {
        (self.calibration != CalibrationSource::Truth)
            .then(|| pool_calibration(self.results.iter().filter_map(|r| r.calibration.as_ref())))
    }

    fn failed(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.evaluation.is_none())
            .count()
    }

    /// The errors and notes of the clips, and the time line.
    fn print_notes(&self) {
        for r in &self.results {
            if let Some(e) = &r.error {
                println!("{}: FAILED: {e}", r.spec.name);
            }
            for n in &r.notes {
                println!("{}: note: {n}", r.spec.name);
            }
        }
        println!(
            "time: simulate {:.0} s, {}analyse {:.0} s, eval {:.1} s (summed over clips); \
             wall {:.0} s with {} at once",
            self.seconds.simulate,
            if self.calibration == CalibrationSource::Truth {
                String::new()
            } else {
                format!("calibrate {:.0} s, ", self.seconds.calibrate)
            },
            self.seconds.analyse,
            self.seconds.eval,
            self.wall,
            self.jobs
        );
    }

    /// The `--json` report.
    fn print_json(&self, suite: String, seed: Option<u64>) -> anyhow::Result<()> {
        let report = SuiteReport {
            suite,
            seed,
            clips: &self.results,
            total: self.total.clone(),
            calibration: self.calibration,
            calibration_total: self.calibration_total(),
            clips_failed: self.failed(),
            seconds: self.seconds,
            wall_seconds: self.wall,
            jobs: self.jobs,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
        Ok(())
    }

    fn check(&self, work: &Path) -> anyhow::Result<()> {
        let failed = self.failed();
        if failed > 0 {
            bail!(
                "{failed} of {} clips failed (logs in {})",
                self.results.len(),
                work.display()
            );
        }
        Ok(())
    }
}

fn run_suite(path: &Path, args: &EvalArgs) -> anyhow::Result<()> {
    let suite: Suite = crate::config::load_json(path)?;
    suite
        .validate()
        .with_context(|| format!("{}", path.display()))?;
    let suite_dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let Some(run) = run_set(&suite, &suite_dir, &path.display().to_string(), args)? else {
        return Ok(());
    };
    if args.json {
        run.print_json(path.display().to_string(), None)?;
    } else {
        print!("{}", suite_table(&run.results, &run.total));
        print!("{}", calibration_table(&run));
        run.print_notes();
    }
    run.check(&args.work())
}

/// `--sweep N`: N random clips ([`sweep_clips`]) through the suite's machinery.
fn run_sweep(n: usize, args: &EvalArgs) -> anyhow::Result<()> {
    if n == 0 {
        bail!("--sweep 0: nothing to run");
    }
    let seed = args.seed.unwrap_or_else(|| {
        // Drawn from the clock, and printed: the seed is the run's name.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        t % 1_000_000
    });
    eprintln!(
        "sweep: {n} random clips from seed {seed} (again: fishtrack eval --sweep {n} --seed {seed}, \
         or make eval-sweep SWEEP_N={n} SWEEP_SEED={seed})"
    );
    let suite = Suite {
        description: format!("{n} random clips, sweep seed {seed}"),
        size: "1280x720".into(),
        mm_per_px: None,
        clips: sweep_clips(n, seed),
    };
    suite.validate().context("the sweep's clips")?;
    let label = format!("sweep {seed}");
    let Some(run) = run_set(&suite, Path::new("."), &label, args)? else {
        return Ok(());
    };
    if args.json {
        run.print_json(label, Some(seed))?;
    } else {
        println!("sweep seed {seed}: {n} clips");
        print!("{}", sweep_table(&run.results, &run.total));
        print!("{}", calibration_table(&run));
        run.print_notes();
    }
    run.check(&args.work())
}

/// Simulates, analyses and evaluates a set's clips (all, or `--only`) in
/// parallel; `None` after `--list`, which only lists them.
fn run_set(
    suite: &Suite,
    suite_dir: &Path,
    label: &str,
    args: &EvalArgs,
) -> anyhow::Result<Option<SetRun>> {
    if let Some(s) = &args.size {
        super::simulate::parse_size(s)?;
    }
    let mut clips: Vec<&ClipSpec> = suite.clips.iter().collect();
    if !args.only.is_empty() {
        for name in &args.only {
            if !suite.clips.iter().any(|c| &c.name == name) {
                bail!("--only: {label} has no clip `{name}`");
            }
        }
        clips.retain(|c| args.only.contains(&c.name));
    }
    let work = args.work();
    if args.list {
        list_suite(suite, suite_dir, &clips, args)?;
        return Ok(None);
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let ctx = SuiteRun {
        exe: std::env::current_exe().context("finding the fishtrack binary")?,
        suite,
        suite_dir: suite_dir.to_path_buf(),
        work,
        size: args.size.as_deref(),
        fresh: args.fresh,
        reuse_records: args.reuse_records,
        calibration: args.calibration.unwrap_or(CalibrationSource::Truth),
    };
    let pool_threads = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting the worker threads")?;
    let bar = super::progress_bar(clips.len() as u64, "eval");
    let started = Instant::now();
    // First every clip's physics (no pixels, a moment each): its truth tells
    // whether a video kept from an earlier run is still this clip's, and its
    // length orders the work longest first, so that no long clip starts last.
    let plans: Vec<anyhow::Result<Plan>> =
        pool_threads.install(|| clips.par_iter().map(|spec| plan_clip(&ctx, spec)).collect());
    let mut order: Vec<usize> = (0..clips.len()).collect();
    order.sort_by_key(|&i| {
        std::cmp::Reverse(plans[i].as_ref().map_or(0, |p| p.expected.frames.len()))
    });
    let mut plans: Vec<Option<anyhow::Result<Plan>>> = plans.into_iter().map(Some).collect();
    let slots: Vec<std::sync::Mutex<Option<ClipResult>>> =
        clips.iter().map(|_| std::sync::Mutex::new(None)).collect();
    // Each clip is a simulate and an analyse process, so clips run side by side
    // with their own logs and nothing of one can stop another.
    pool_threads.scope_fifo(|scope| {
        for &i in &order {
            let (spec, slot, bar, ctx) = (clips[i], &slots[i], &bar, &ctx);
            let plan = plans[i].take();
            scope.spawn_fifo(move |_| {
                let r = run_clip(ctx, spec, plan);
                bar.suspend(|| eprintln!("{}", clip_line(&r)));
                bar.inc(1);
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    let results: Vec<ClipResult> = slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect();
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let (total, _) = pool(
        results
            .iter()
            .filter_map(|r| r.evaluation.as_ref().map(|e| (e, &r.samples))),
    );
    let mut seconds = Seconds::default();
    for r in &results {
        seconds.simulate += r.seconds.simulate;
        seconds.calibrate += r.seconds.calibrate;
        seconds.analyse += r.seconds.analyse;
        seconds.eval += r.seconds.eval;
    }
    Ok(Some(SetRun {
        results,
        total,
        seconds,
        wall,
        jobs,
        calibration: args.calibration.unwrap_or(CalibrationSource::Truth),
    }))
}

/// What each clip holds, from its physics alone: the suite's coverage.
fn list_suite(
    suite: &Suite,
    suite_dir: &Path,
    clips: &[&ClipSpec],
    args: &EvalArgs,
) -> anyhow::Result<()> {
    let ctx = SuiteRun {
        exe: PathBuf::new(),
        suite,
        suite_dir: suite_dir.to_path_buf(),
        work: args.work(),
        size: args.size.as_deref(),
        fresh: false,
        reuse_records: false,
        calibration: args.calibration.unwrap_or(CalibrationSource::Truth),
    };
    let mut rows: Vec<Vec<String>> = vec![[
        "clip",
        "scenario",
        "pl",
        "fps",
        "hand",
        "shots",
        "frames",
        "flick mm/s",
        "lost fish",
        "lost coins",
        "stacked",
        "note",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    let mut sums = [0usize; 4];
    for spec in clips {
        let scenario = clip_scenario(&ctx, spec).with_context(|| spec.name.clone())?;
        let opts = SimOptions {
            seed: spec.seed,
            fps: spec.fps,
            ..SimOptions::default()
        };
        let truth = crate::sim::simulate(&scenario, &opts).with_context(|| spec.name.clone())?;
        let speeds: Vec<f64> = truth
            .shots
            .iter()
            .map(|s| s.flick.velocity_mm_s[0].hypot(s.flick.velocity_mm_s[1]))
            .collect();
        let lost = |fish: bool| {
            truth
                .shots
                .iter()
                .flat_map(|s| &s.lost)
                .filter(|l| l.item.is_fish() == fish)
                .count()
        };
        let (lost_fish, lost_coins) = (lost(true), lost(false));
        sums[0] += truth.shots.len();
        sums[1] += truth.frames.len();
        sums[2] += lost_fish;
        sums[3] += lost_coins;
        let min = speeds.iter().copied().fold(f64::INFINITY, f64::min);
        let max = speeds.iter().copied().fold(0.0, f64::max);
        rows.push(vec![
            spec.name.clone(),
            scenario.name.clone(),
            truth.players.len().to_string(),
            spec.fps.to_string(),
            if spec.hand { "on" } else { "off" }.into(),
            truth.shots.len().to_string(),
            truth.frames.len().to_string(),
            if speeds.is_empty() {
                "-".into()
            } else {
                format!("{min:.0}-{max:.0}")
            },
            lost_fish.to_string(),
            lost_coins.to_string(),
            if truth.shots.iter().any(|s| !s.stacking.is_empty()) {
                "yes"
            } else {
                ""
            }
            .into(),
            spec.note.clone(),
        ]);
    }
    rows.push(vec![
        format!("TOTAL ({} clips)", clips.len()),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        sums[0].to_string(),
        sums[1].to_string(),
        String::new(),
        sums[2].to_string(),
        sums[3].to_string(),
    ]);
    print!(
        "{}",
        super::columns(&rows, &[0, 1, 11], &[1, rows.len() - 1], Rule::Whole)
    );
    Ok(())
}

/// The progress line of a finished clip.
fn clip_line(r: &ClipResult) -> String {
    let head = format!(
        "{}: {} frames, simulate {:.1} s{}, analyse {:.1} s",
        r.spec.name,
        r.frames,
        r.seconds.simulate,
        if r.reused_video { " (kept)" } else { "" },
        r.seconds.analyse
    );
    match &r.error {
        Some(e) => format!("{head}: FAILED: {e}"),
        None => head,
    }
}

/// Simulates (unless kept), analyses and evaluates one clip; errors end up in the result.
fn run_clip(ctx: &SuiteRun, spec: &ClipSpec, plan: Option<anyhow::Result<Plan>>) -> ClipResult {
    let mut r = ClipResult {
        spec: spec.clone(),
        scenario_name: String::new(),
        players: 0,
        size: String::new(),
        frames: 0,
        reused_video: false,
        seconds: Seconds::default(),
        evaluation: None,
        calibration: None,
        error: None,
        notes: vec![],
        samples: EvalSamples::default(),
    };
    let outcome = plan
        .unwrap_or_else(|| plan_clip(ctx, spec))
        .and_then(|plan| clip_steps(ctx, spec, plan, &mut r));
    if let Err(e) = outcome {
        r.error = Some(format!("{e:#}"));
    }
    r
}

/// A clip as it will be played: the scenario with the suite's overrides, the
/// simulator's options, and the truth its physics gives.
struct Plan {
    scenario: Scenario,
    /// scenario.json: the text `scenario` was read from.
    scenario_text: String,
    opts: SimOptions,
    size_text: String,
    expected: Truth,
    seconds: f64,
}

fn plan_clip(ctx: &SuiteRun, spec: &ClipSpec) -> anyhow::Result<Plan> {
    let started = Instant::now();
    let scenario = clip_scenario(ctx, spec)?;
    let size_text = ctx
        .size
        .or(spec.size.as_deref())
        .unwrap_or(&ctx.suite.size)
        .to_string();
    let size = super::simulate::parse_size(&size_text)?;
    let opts = SimOptions {
        seed: spec.seed,
        fps: spec.fps,
        size,
        ..SimOptions::default()
    };
    // The simulate process plays scenario.json, whose numbers read back may differ
    // from these in the last bit (a stacked pose goes into the truth as is): play
    // here what it will read from that text.
    let scenario_text = serde_json::to_string_pretty(&scenario)? + "\n";
    let scenario: Scenario =
        serde_json::from_str(&scenario_text).context("the scenario read back from JSON")?;
    let expected = crate::sim::simulate(&scenario, &opts)?;
    Ok(Plan {
        scenario,
        scenario_text,
        opts,
        size_text,
        expected,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The clip's scenario with the suite's overrides applied.
fn clip_scenario(ctx: &SuiteRun, spec: &ClipSpec) -> anyhow::Result<Scenario> {
    let mut scenario = match Scenario::built_in(&spec.scenario) {
        Some(s) => s,
        None => {
            let file = ctx.suite_dir.join(&spec.scenario);
            Scenario::resolve(&file.to_string_lossy())?
        }
    };
    if let Some(n) = spec.players {
        scenario = scenario.with_players(n)?;
    }
    if let Some(m) = spec.moves {
        scenario = scenario.with_moves(m)?;
    }
    scenario.render.hand = spec.hand;
    match &spec.look {
        None => {}
        Some(LookChoice::Seed(seed)) => scenario.render.randomise(*seed),
        Some(LookChoice::Look(look)) => scenario.render.look = (**look).clone(),
    }
    Ok(scenario)
}

fn clip_steps(
    ctx: &SuiteRun,
    spec: &ClipSpec,
    plan: Plan,
    r: &mut ClipResult,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let Plan {
        scenario,
        scenario_text,
        opts,
        size_text,
        expected,
        seconds,
    } = plan;
    r.scenario_name = scenario.name.clone();
    r.players = scenario.players().len();
    r.size = size_text.clone();
    let dir = ctx.work.join(&spec.name);
    let video = dir.join(&opts.video_name);
    let truth_path = dir.join("truth.json");
    // Compared as the bytes the simulator writes: a float read back from JSON may
    // differ from the one written in its last bit.
    let expected_text = serde_json::to_string_pretty(&expected)? + "\n";
    let same_truth = || std::fs::read_to_string(&truth_path).is_ok_and(|t| t == expected_text);
    // The truth knows nothing of the look: the scenario written beside it does.
    let scenario_path = dir.join("scenario.json");
    let same_scenario = std::fs::read_to_string(&scenario_path).is_ok_and(|t| t == scenario_text);
    // Nor does it know which revision of the renderer drew the video.
    let renderer_path = dir.join("renderer.txt");
    let renderer_text = format!("{}\n", crate::vision::render::REVISION);
    let same_renderer = std::fs::read_to_string(&renderer_path).is_ok_and(|t| t == renderer_text);
    let kept = !ctx.fresh && video.exists() && same_truth() && same_scenario && same_renderer;
    if !kept {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        // A half-written clip must not pass for a kept one next time.
        let _ = std::fs::remove_file(&truth_path);
        let _ = std::fs::remove_file(&renderer_path);
        std::fs::write(&scenario_path, &scenario_text)
            .with_context(|| format!("writing {}", scenario_path.display()))?;
        child(
            &ctx.exe,
            &[
                "simulate".as_ref(),
                "--scenario".as_ref(),
                scenario_path.as_os_str(),
                "--seed".as_ref(),
                spec.seed.to_string().as_ref(),
                "--fps".as_ref(),
                spec.fps.to_string().as_ref(),
                "--size".as_ref(),
                size_text.as_ref(),
                "-o".as_ref(),
                dir.as_os_str(),
            ],
            &dir.join("simulate.log"),
        )
        .context("simulate")?;
        std::fs::write(&renderer_path, &renderer_text)
            .with_context(|| format!("writing {}", renderer_path.display()))?;
    }
    r.reused_video = kept;
    if !same_truth() {
        r.notes.push(
            "the rendered truth differs from the same scenario played in this process; \
             the clip will be rendered again next time"
                .into(),
        );
    }
    let truth = Truth::load(&truth_path)?;
    r.frames = truth.frames.len() as u64;
    let game_path = dir.join("game.json");
    crate::config::save_json(&truth.game, &game_path)?;
    r.seconds.simulate = seconds + started.elapsed().as_secs_f64();

    // The table calibration to analyse with: the truth's, or fishtrack's own.
    let (table_path, record_path) = match ctx.calibration {
        CalibrationSource::Truth => (dir.join("table.json"), dir.join("record.json")),
        mode => {
            let started = Instant::now();
            let table = calibrate_clip(ctx, mode, &scenario, &truth, &dir, r);
            r.seconds.calibrate = started.elapsed().as_secs_f64();
            (table?, dir.join(format!("record-{}.json", mode.slug())))
        }
    };
    let started = Instant::now();
    if !(ctx.reuse_records && record_path.exists()) {
        let _ = std::fs::remove_file(&record_path);
        let mm_per_px = ctx.suite.mm_per_px.map(|m| m.to_string());
        let mut a: Vec<&std::ffi::OsStr> = vec![
            "analyse".as_ref(),
            video.as_os_str(),
            "--table".as_ref(),
            table_path.as_os_str(),
            "--game".as_ref(),
            game_path.as_os_str(),
            "-o".as_ref(),
            record_path.as_os_str(),
            "--quiet".as_ref(),
        ];
        if let Some(m) = &mm_per_px {
            a.push("--mm-per-px".as_ref());
            a.push(m.as_ref());
        }
        if let Err(e) = child(&ctx.exe, &a, &dir.join("analyse.log")) {
            // analyse writes its record before some complaints (a colour never
            // seen); such a record is still measured.
            if !record_path.exists() {
                return Err(e.context("analyse"));
            }
            r.notes.push(format!("analyse: {e:#}"));
        }
    }
    r.seconds.analyse = started.elapsed().as_secs_f64();

    let started = Instant::now();
    let record = Record::load(&record_path)?;
    let (e, s) = evaluate_record(&record, &truth, &record_path.display().to_string())?;
    r.evaluation = Some(e);
    r.samples = s;
    r.seconds.eval = started.elapsed().as_secs_f64();
    Ok(())
}

/// Renders the clip's empty table (`empty.png`), calibrates the table from it with
/// `calibrate table` as `mode` says, into `calibration-<mode>/` (log
/// `calibrate-<mode>.log`), and measures that calibration against the truth's into
/// `r.calibration`. The table.json written; an error when the calibration is refused.
fn calibrate_clip(
    ctx: &SuiteRun,
    mode: CalibrationSource,
    scenario: &Scenario,
    truth: &Truth,
    dir: &Path,
    r: &mut ClipResult,
) -> anyhow::Result<PathBuf> {
    let empty = dir.join("empty.png");
    render_empty(scenario, truth, &empty).context("rendering the empty table")?;
    let out = dir.join(format!("calibration-{}", mode.slug()));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let table_path = out.join("table.json");
    // A refused calibration writes nothing: no earlier run's file may stand in for it.
    let _ = std::fs::remove_file(&table_path);
    let (lo, hi) = truth.table().context("the truth's table polygon")?.bounds();
    let size = format!("{}x{}", hi.x - lo.x, hi.y - lo.y);
    let camera = dir.join("camera.json");
    let lens = out.join("camera.json");
    let mut a: Vec<&std::ffi::OsStr> = vec![
        "calibrate".as_ref(),
        "table".as_ref(),
        "--image".as_ref(),
        empty.as_os_str(),
        "--size".as_ref(),
        size.as_ref(),
        "-o".as_ref(),
        table_path.as_os_str(),
    ];
    match mode {
        CalibrationSource::Truth | CalibrationSource::Table => {
            a.extend(["--camera".as_ref(), camera.as_os_str()]);
        }
        CalibrationSource::NoChessboard => {
            a.extend([
                "--no-chessboard".as_ref(),
                "--camera-output".as_ref(),
                lens.as_os_str(),
            ]);
        }
    }
    let log = dir.join(format!("calibrate-{}.log", mode.slug()));
    child(&ctx.exe, &a, &log).with_context(|| format!("calibrate table ({})", mode.slug()))?;
    let true_table = TableCalibration::from_file(truth.table.clone(), "truth.json")
        .context("the truth's table calibration")?;
    let ours = TableCalibration::load(&table_path)?;
    let mut check = check_calibration(&true_table, &ours);
    let written: serde_json::Value = crate::config::load_json(&table_path)?;
    check.claimed_mm = written["position_uncertainty_mm"].as_f64();
    r.calibration = Some(check);
    Ok(table_path)
}

/// The clip's table with nothing on it and no hand, as its camera sees it in its
/// first frame, written to `path` (PNG).
#[cfg(feature = "opencv")]
fn render_empty(scenario: &Scenario, truth: &Truth, path: &Path) -> anyhow::Result<()> {
    use crate::vision::render::{write_image, Renderer};
    let mut renderer = Renderer::new(truth, &scenario.render, truth.seed)?;
    let empty = FrameTruth {
        frame: 0,
        items: BTreeMap::new(),
        hand: None,
    };
    let img = renderer.render_frame(None, &empty, truth.video.fps)?;
    write_image(path, &img)?;
    Ok(())
}

#[cfg(not(feature = "opencv"))]
fn render_empty(_: &Scenario, _: &Truth, _: &Path) -> anyhow::Result<()> {
    bail!(
        "--calibration table|no-chessboard renders the empty table: it needs the `opencv` feature"
    )
}

/// After the figures, with `--calibration` other than truth: a row a clip saying how
/// far its table calibration is from the truth's, then the pooled figures.
fn calibration_table(run: &SetRun) -> String {
    let Some(total) = run.calibration_total() else {
        return String::new();
    };
    let mut rows: Vec<Vec<String>> = vec![[
        "clip",
        "corners px",
        "worst px",
        "table mm",
        "claimed mm",
        "focal %",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    for r in &run.results {
        let mut row = vec![r.spec.name.clone()];
        match &r.calibration {
            Some(c) => row.extend([
                c.corner_px
                    .iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                format!("{:.2}", c.worst_corner_px),
                format!("{:.2}", c.worst_table_mm),
                c.claimed_mm.map_or("-".into(), |m| format!("{m:.2}")),
                c.focal_error_percent
                    .map_or("-".into(), |f| format!("{f:+.2}")),
            ]),
            None => row.push("none (refused or failed: see below)".into()),
        }
        rows.push(row);
    }
    let spread = |s: &Spread| {
        if s.count == 0 {
            "-".to_string()
        } else {
            format!("median {:.2}, max {:.2}", s.median, s.max)
        }
    };
    let mut out = format!(
        "\ntable calibration: fishtrack's own (--calibration {}), against the truth's\n",
        run.calibration.slug()
    );
    out += &super::columns(&rows, &[0, 1], &[1], Rule::Whole);
    out += &format!(
        "calibrated {} of {} clips; worst corner px {}; table mm {} ({} over their claim); |focal| % {}\n",
        total.clips,
        run.results.len(),
        spread(&total.worst_corner_px),
        spread(&total.worst_table_mm),
        total.over_claim,
        spread(&total.focal_error_percent)
    );
    out
}

/// Runs this binary with `args`, its output into `log`; an error carries the
/// log's last line.
fn child(exe: &Path, args: &[&std::ffi::OsStr], log: &Path) -> anyhow::Result<()> {
    let out = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let status = Command::new(exe)
        .args(args)
        .stdout(out.try_clone()?)
        .stderr(out)
        .status()
        .with_context(|| format!("running {}", exe.display()))?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let last = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no output");
    bail!("{last} (exit {status}; log {})", log.display())
}

/// The suite's one table: a row per clip, the totals, the targets of issue #5.
fn suite_table(results: &[ClipResult], total: &Evaluation) -> String {
    let header = [
        [
            "clip",
            "fps",
            "hand",
            "pl",
            "frames",
            "shots",
            "rest mm",
            "",
            "angle°",
            "",
            "motion mm",
            "",
            "id",
            "lost %",
            "lost",
            "exit mm",
            "flick fr",
            "rest fr",
            "score",
            "totals",
            "review",
        ],
        [
            "",
            "",
            "",
            "",
            "",
            "t/r/m",
            "med",
            "p95",
            "med",
            "p95",
            "med",
            "p95",
            "sw",
            "P/R",
            "tp/fp/fn",
            "med",
            "med/max",
            "med/max",
            "ok/n",
            "agree",
            "wrong fl/n right fl",
        ],
    ];
    let mut rows: Vec<Vec<String>> = header
        .iter()
        .map(|h| h.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut totals_agree = 0;
    let mut evaluated = 0;
    for r in results {
        let head = vec![
            r.spec.name.clone(),
            format!("{}", r.spec.fps),
            if r.spec.hand { "on" } else { "off" }.into(),
            r.players.to_string(),
            r.frames.to_string(),
        ];
        let cells = match &r.evaluation {
            Some(e) => {
                evaluated += 1;
                totals_agree += usize::from(e.totals_agree);
                figure_cells(e, if e.totals_agree { "yes" } else { "no" }.into())
            }
            None => {
                let mut c = vec!["FAILED".to_string()];
                c.resize(16, "-".into());
                c
            }
        };
        rows.push(head.into_iter().chain(cells).collect());
    }
    let frames: u64 = results.iter().map(|r| r.frames).sum();
    let head = vec![
        format!("TOTAL ({evaluated} clips)"),
        String::new(),
        String::new(),
        String::new(),
        frames.to_string(),
    ];
    rows.push(
        head.into_iter()
            .chain(figure_cells(total, format!("{totals_agree}/{evaluated}")))
            .collect(),
    );
    let target = [
        "target",
        "",
        "",
        "",
        "",
        "all",
        "≤0.5",
        "≤1.5",
        "≤0.5",
        "",
        "≤3",
        "",
        "0",
        "100/100",
        "",
        "≤10",
        "-/≤1",
        "",
        "all",
        "all",
        "n/n ≤10%",
    ];
    rows.push(target.iter().map(|s| s.to_string()).collect());
    super::columns(&rows, &[0], &[2, rows.len() - 2], Rule::Whole)
}

/// How right a clip came out, worst first when sorted: the share of shots scored
/// right, the final totals, identity switches, lost-item misses.
fn badness(
    e: &Evaluation,
) -> (
    u64,
    bool,
    std::cmp::Reverse<usize>,
    std::cmp::Reverse<usize>,
) {
    let share = if e.truth_shots == 0 {
        1.0
    } else {
        e.score_agreement as f64 / e.truth_shots as f64
    };
    (
        (share * 1e6) as u64,
        e.totals_agree,
        std::cmp::Reverse(e.identity_switches),
        std::cmp::Reverse(e.lost_false_negative + e.lost_false_positive),
    )
}

fn percent(a: usize, b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.0}%", 100.0 * a as f64 / b as f64)
    }
}

/// The command that renders a sweep clip again on its own.
fn again(spec: &ClipSpec) -> String {
    let look = match &spec.look {
        Some(LookChoice::Seed(s)) => format!(" --look random --look-seed {s}"),
        Some(LookChoice::Look(_)) | None => String::new(),
    };
    format!(
        "fishtrack simulate --scenario {} --players {} --moves {} --seed {} --fps {}{}{} -o out/again/{}",
        spec.scenario,
        spec.players.unwrap_or(2),
        spec.moves.unwrap_or(1),
        spec.seed,
        spec.fps,
        if spec.hand { "" } else { " --no-hand" },
        look,
        spec.name
    )
}

/// The sweep's table: a row a clip (seed, players, look, shots, scores, totals,
/// switches, lost items), then the pooled figures and the worst clips.
fn sweep_table(results: &[ClipResult], total: &Evaluation) -> String {
    let mut rows: Vec<Vec<String>> = vec![[
        "clip",
        "seed",
        "pl",
        "mv",
        "fps",
        "hand",
        "look",
        "shots",
        "scored",
        "totals",
        "id sw",
        "lost P/R",
        "rest mm",
        "motion mm",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    let mut evaluated = 0;
    let mut totals_right = 0;
    for r in results {
        let look = match &r.spec.look {
            Some(LookChoice::Seed(s)) => Look::random(*s).summary(),
            Some(LookChoice::Look(l)) => l.summary(),
            None => "original".into(),
        };
        let mut row = vec![
            r.spec.name.clone(),
            r.spec.seed.to_string(),
            r.players.to_string(),
            r.spec.moves.map_or("-".into(), |m| m.to_string()),
            r.spec.fps.to_string(),
            if r.spec.hand { "on" } else { "off" }.into(),
            look,
        ];
        match &r.evaluation {
            Some(e) => {
                evaluated += 1;
                totals_right += usize::from(e.totals_agree);
                let med = |x: &Spread| {
                    if x.count == 0 {
                        "-".to_string()
                    } else {
                        format!("{:.2}", x.median)
                    }
                };
                row.extend([
                    format!("{}/{}", e.matched_shots, e.truth_shots),
                    format!("{}/{}", e.score_agreement, e.truth_shots),
                    if e.totals_agree { "yes" } else { "NO" }.into(),
                    e.identity_switches.to_string(),
                    lost_cell(e),
                    med(&e.rest_position_mm),
                    med(&e.motion_position_mm),
                ]);
            }
            None => row.push("FAILED".into()),
        }
        rows.push(row);
    }
    let mut out = super::columns(&rows, &[0, 6], &[1], Rule::Whole);
    let t = total;
    let lines = [
        (
            "clips evaluated",
            format!("{evaluated} of {}", results.len()),
        ),
        (
            "shots found",
            format!(
                "{}/{} ({}; the record has {})",
                t.matched_shots,
                t.truth_shots,
                percent(t.matched_shots, t.truth_shots),
                t.record_shots
            ),
        ),
        (
            "shots scored right",
            format!(
                "{}/{} ({})",
                t.score_agreement,
                t.truth_shots,
                percent(t.score_agreement, t.truth_shots)
            ),
        ),
        (
            "final totals right",
            format!(
                "{totals_right}/{evaluated} ({})",
                percent(totals_right, evaluated)
            ),
        ),
        ("identity switches", t.identity_switches.to_string()),
        (
            "lost items P/R",
            format!(
                "{:.0}% / {:.0}% (tp {}, fp {}, fn {})",
                100.0 * t.lost_precision(),
                100.0 * t.lost_recall(),
                t.lost_true_positive,
                t.lost_false_positive,
                t.lost_false_negative
            ),
        ),
        (
            "rest position mm",
            format!(
                "median {:.2}, p95 {:.2}",
                t.rest_position_mm.median, t.rest_position_mm.p95
            ),
        ),
        (
            "motion position mm",
            format!(
                "median {:.2}, p95 {:.2}",
                t.motion_position_mm.median, t.motion_position_mm.p95
            ),
        ),
    ];
    out.push_str("\npooled:\n");
    for (k, v) in lines {
        out.push_str(&format!("  {k:<20} {v}\n"));
    }
    let mut worst: Vec<&ClipResult> = results
        .iter()
        .filter(|r| {
            r.evaluation.as_ref().is_none_or(|e| {
                e.score_agreement < e.truth_shots
                    || !e.totals_agree
                    || e.identity_switches > 0
                    || e.lost_false_negative + e.lost_false_positive > 0
            })
        })
        .collect();
    worst.sort_by_key(|r| r.evaluation.as_ref().map(badness));
    if !worst.is_empty() {
        out.push_str("worst clips:\n");
        for r in worst.iter().take(8) {
            let what = match &r.evaluation {
                Some(e) => format!(
                    "{}/{} scored, totals {}, {} switches, lost fp {} fn {}",
                    e.score_agreement,
                    e.truth_shots,
                    if e.totals_agree { "right" } else { "wrong" },
                    e.identity_switches,
                    e.lost_false_positive,
                    e.lost_false_negative
                ),
                None => "failed".into(),
            };
            out.push_str(&format!("  {} ({what}): {}\n", r.spec.name, again(&r.spec)));
        }
    }
    out
}

fn lost_cell(e: &Evaluation) -> String {
    if e.lost_true_positive + e.lost_false_positive + e.lost_false_negative > 0 {
        format!(
            "{:.0}/{:.0}",
            100.0 * e.lost_precision(),
            100.0 * e.lost_recall()
        )
    } else {
        "-".into()
    }
}

/// The figure cells of one row, from shots to score agreement.
fn figure_cells(e: &Evaluation, totals: String) -> Vec<String> {
    let f = |s: &Spread, x: f64| {
        if s.count == 0 {
            "-".to_string()
        } else {
            format!("{x:.2}")
        }
    };
    let frames = |s: &Spread| {
        if s.count == 0 {
            "-".to_string()
        } else {
            format!("{}/{}", s.median, s.max)
        }
    };
    vec![
        format!("{}/{}/{}", e.truth_shots, e.record_shots, e.matched_shots),
        f(&e.rest_position_mm, e.rest_position_mm.median),
        f(&e.rest_position_mm, e.rest_position_mm.p95),
        f(&e.rest_angle_deg, e.rest_angle_deg.median),
        f(&e.rest_angle_deg, e.rest_angle_deg.p95),
        f(&e.motion_position_mm, e.motion_position_mm.median),
        f(&e.motion_position_mm, e.motion_position_mm.p95),
        e.identity_switches.to_string(),
        lost_cell(e),
        format!(
            "{}/{}/{}",
            e.lost_true_positive, e.lost_false_positive, e.lost_false_negative
        ),
        f(&e.exit_point_mm, e.exit_point_mm.median),
        frames(&e.flick_frame),
        frames(&e.rest_frame),
        format!("{}/{}", e.score_agreement, e.truth_shots),
        totals,
        e.review.cell(),
    ]
}
