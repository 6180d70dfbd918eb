//! `fishtrack eval record.json truth.json`: how far a record made by `analyse` is
//! from the simulator's ground truth — one table of figures, or `--json`.

use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::eval::{evaluate, Evaluation, TruthPoses};
use crate::geometry::{Point, Table};
use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::Record;
use crate::sim::truth::{FrameTruth, Truth};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The record written by `fishtrack analyse`.
    pub record: PathBuf,
    /// The truth.json written by `fishtrack simulate` for the same video.
    pub truth: PathBuf,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
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
    let table = Table::new(
        truth
            .table_mm
            .iter()
            .map(|&[x, y]| Point::new(x, y))
            .collect(),
    )
    .context("the truth's table polygon")?;
    crate::rules::rescore(&truth.game, &table, &truth.to_record()).context("scoring the truth")
}

/// Evaluates one record against one truth file.
pub fn evaluate_files(
    record: &std::path::Path,
    truth: &std::path::Path,
) -> anyhow::Result<Evaluation> {
    let rec = Record::load(record)?;
    let truth = Truth::load(truth)?;
    if rec.players.len() != truth.players.len() {
        anyhow::bail!(
            "{} has {} players but {} has {}: not the same match",
            record.display(),
            rec.players.len(),
            truth.scenario,
            truth.players.len()
        );
    }
    let truth_record = scored_truth(&truth)?;
    Ok(evaluate(&rec, &truth_record, &TruthFrames::new(&truth)).0)
}

pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    let e = evaluate_files(&args.record, &args.truth)?;
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
