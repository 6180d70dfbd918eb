//! `fishtrack summary DIR|RECORD...`: standings and per-player figures over many
//! records, as `summary.csv`, `summary.html` and a table on stdout. A record that
//! does not load is named in one line and skipped, and the exit code is 3.
//! Uses: replay::summary.

use super::{Done, Rule};
use crate::replay::summary::{self, figures_row, Summary};
use anyhow::{bail, Context};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = "A folder is searched recursively for record.json and *record.json files (as \
`analyse` writes them); a file given by name is read whatever its name. Players are the same \
person in two records when they have the same name. A match's result is its final totals: the \
highest alone wins, a shared highest is a draw (an unfinished match counts as it stands). \
points_against is what the other players of the player's matches scored; coins_lost and \
fish_lost count the player's own items that left the table; coins_knocked_off counts other \
players' coins that left the table in the player's moves; fines are R11 fines (≤ 0).\n\n\
Exit codes:\n  \
0  every record was read\n  \
1  bad input: a path that does not exist, no record found, none readable, or output not writable\n  \
3  done, but some records could not be read (each named on stderr, skipped)"
)]
pub struct SummaryArgs {
    /// Folders of records (searched recursively) or record files.
    #[arg(required = true, value_name = "DIR|RECORD")]
    pub paths: Vec<PathBuf>,
    /// Output folder for summary.csv and summary.html (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        default_value = "summary"
    )]
    pub output: PathBuf,
}

pub fn run(args: SummaryArgs) -> anyhow::Result<Done> {
    let (paths, mut skipped) = summary::find_records(&args.paths)?;
    if paths.is_empty() && skipped.is_empty() {
        bail!("no record.json found in {}", list(&args.paths));
    }
    let (records, unreadable) = summary::load_records(&paths);
    skipped.extend(unreadable);
    for s in &skipped {
        eprintln!("fishtrack: warning: skipped {}", s.line());
    }
    if records.is_empty() {
        bail!("none of the {} records found could be read", skipped.len());
    }
    let result = summary::summarise(&records);

    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let csv_path = args.output.join(summary::SUMMARY_CSV);
    let mut csv = Vec::new();
    summary::write_summary_csv(&result, &mut csv)?;
    std::fs::write(&csv_path, csv)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let html_path = args.output.join(summary::SUMMARY_HTML);
    std::fs::write(&html_path, summary::summary_html(&result, &skipped))
        .with_context(|| format!("cannot write {}", html_path.display()))?;

    print!("{}", table(&result));
    println!(
        "{} records read{}; wrote {} and {}",
        records.len(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(", {} skipped", skipped.len())
        },
        csv_path.display(),
        html_path.display()
    );
    Ok(if skipped.is_empty() {
        Done::Clean
    } else {
        Done::Warned
    })
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The standings as an aligned table, short headers and a legend so that it fits
/// 100 columns (summary.csv has the same figures under full names).
fn table(result: &Summary) -> String {
    let header = [
        "#",
        "player",
        "P",
        "W",
        "D",
        "L",
        "for",
        "against",
        "coins lost",
        "fish lost",
        "knocked off",
        "viol.",
        "fines",
        "shots",
    ];
    let mut rows = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    rows.extend(
        result
            .players
            .iter()
            .enumerate()
            .map(|(i, f)| figures_row(i + 1, f)),
    );
    let mut out = super::columns(&rows, &[1], &[1], Rule::Whole);
    out.push_str(
        "P W D L: matches played, won, drawn, lost; for, against: points; coins, fish lost: \
         their own;\nknocked off: other players' coins in their moves; viol.: R11 violations\n",
    );
    out
}
