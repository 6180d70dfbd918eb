//! `fishtrack export RECORD -o DIR`: a record as CSV tables (tracks, shots, events)
//! and its tracks in the MOTChallenge text format. Uses: record, replay::export.

use crate::record::Record;
use crate::replay::export::{self, RulesBreakdown};
use crate::replay::Scene;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Writes into DIR:\n  \
tracks.csv      frame, time_s, shot, item, x_mm, y_mm, theta_deg, speed_mm_s: one row per item \
per frame it was tracked in (flick to rest of each shot). theta_deg is empty for coins; time_s is \
frame / fps; speed_mm_s is derived from the neighbouring rows of the same track (central \
difference; empty for a track of one row).\n  \
shots.csv       one row a shot: mover, flick and rest frames, first item moved, lost items, \
put-backs, violations, and for each player the points, the rules they came from (the rules engine \
re-run on the record's own game, as `fishtrack score` does) and the running total.\n  \
events.csv      shot, frame, time_s, kind, item, player, rule, detail: put-backs, violations (rule \
`R11 <code>`), lost items, coins in holes, stacking, items placed or disturbed between shots, \
doubts, notes and damaged frames.\n  \
tracks.mot.txt  MOTChallenge text: frame,id,bb_left,bb_top,bb_width,bb_height,conf,x,y,z with no \
header; frames count from 1 (record frame + 1); boxes and x, y in table mm (bb_left, bb_top: the \
box's smallest x and y, the box of the item's footprint at its pose); conf 1; z 0 (the table top).\n  \
mot-ids.csv     mot_id, item, player: fish:K is id 2K+1, coin:K is 2K+2, an item of unknown owner \
1000 + its tracker number.\n\n\
Items of unknown owner are named unknown-coin:T / unknown-fish:T (T: the tracker's number).")]
pub struct ExportArgs {
    /// The record to export (written by `fishtrack analyse`).
    pub record: PathBuf,
    /// Output folder (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "csv",
        value_name = "DIR",
        default_value = "export"
    )]
    pub output: PathBuf,
}

pub fn run(args: ExportArgs) -> anyhow::Result<()> {
    let record = Record::load(&args.record)?;
    let scene =
        Scene::new(record, None, None).with_context(|| args.record.display().to_string())?;
    let rules: RulesBreakdown = export::rules_breakdown(&scene);
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let counts = export::export_csv(&scene, &rules, &args.output)?;
    if let Some(note) = &rules.note {
        eprintln!("fishtrack: note: {note}");
    }
    let dir = args.output.display();
    println!(
        "wrote {dir}/{} ({} rows)",
        export::TRACKS_CSV,
        counts.tracks
    );
    println!("wrote {dir}/{} ({} rows)", export::SHOTS_CSV, counts.shots);
    println!(
        "wrote {dir}/{} ({} rows)",
        export::EVENTS_CSV,
        counts.events
    );
    println!(
        "wrote {dir}/{} ({} rows) and {dir}/{}",
        export::MOT_TXT,
        counts.mot,
        export::MOT_IDS_CSV
    );
    Ok(())
}
