//! `fishtrack score`: re-runs the rules engine on a record.json and prints the score
//! table shot by shot (or its JSON form). Resolves the set-up and the table from the
//! flags, the record itself, or the bundled `calibration/`. Uses: rules, record,
//! config, geometry.

use super::Rule;
use crate::config::{load_json, Game};
use crate::geometry::Table;
use crate::model::ItemId;
use crate::record::{PutBack, Record, Violation};
use crate::rules::{rescore_detailed, PointEntry};
use anyhow::{anyhow, Context};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The default table when neither the record, `--table` nor `calibration/table.json`
/// gives one: 1000 x 700 mm.
const DEFAULT_TABLE_MM: (f64, f64) = (1000.0, 700.0);
/// Widest line of the default table: a terminal of 100 columns holds four players of
/// 12-character names; longer lists are cut with "…" (`--wide` has them whole).
pub const SCOREBOARD_COLUMNS: usize = 100;
/// Narrowest a cut column gets.
const MIN_COLUMN: usize = 6;

#[derive(Debug, Args)]
#[command(
    after_help = "Re-run the rules (R2–R11) on a record.json and print the score table: one row per \
shot with the mover, the lost items, the points and why, the put-backs the rules require, the \
violations, and every player's running total. By default the table fits 100 columns: the points \
without their reasons, the R11 violations by code, long cells cut with \"…\"; --wide adds the \
reasons, the put-backs and the violations' evidence. A shot marked † was amended by a referee \
(`fishtrack amend`; its --list says what, why and when).\n\n\
The set-up comes from --game, else the game embedded in the record, else calibration/game.json. \
The table comes from --table (a table.json; only `corners_mm` is read), else the record's \
`table_mm`, else calibration/table.json, else a 1000x700 mm rectangle."
)]
pub struct ScoreArgs {
    /// The record to score (default: the bundled samples/demo/record.json).
    pub record: Option<PathBuf>,
    /// Match set-up (game.json): players in move order, moves per player, items, fine policy.
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// Table polygon: a table.json whose `corners_mm` lists the corners in mm.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Print the machine form (JSON) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The full table: points with their reasons, put-backs with their poses, the
    /// violations' evidence (as wide as that takes).
    #[arg(long, visible_alias = "explain", conflicts_with = "json")]
    pub wide: bool,
}

/// Just the part of table.json `score` needs.
#[derive(Debug, Deserialize)]
struct TableCorners {
    corners_mm: Vec<[f64; 2]>,
}

/// The machine form of the score table.
#[derive(Debug, Serialize)]
struct ScoreTable {
    players: Vec<String>,
    shots: Vec<ShotRow>,
    scores: Vec<i32>,
    moves_made: Vec<u32>,
    match_over: bool,
}

#[derive(Debug, Serialize)]
struct ShotRow {
    index: usize,
    player: usize,
    counted: bool,
    lost: Vec<ItemId>,
    score: Vec<i32>,
    points: Vec<PointEntry>,
    put_back: Vec<PutBack>,
    violations: Vec<Violation>,
    totals: Vec<i32>,
    /// The numbers of the amendments made to this shot (`fishtrack amend`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    amendments: Vec<u32>,
    /// The shot's calls less sure than the game's `review_below`, least sure first,
    /// one line each (record version 2).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    review: Vec<String>,
}

pub fn run(args: ScoreArgs) -> anyhow::Result<()> {
    let record_path = args.record.clone().unwrap_or_else(|| {
        super::bundled_dir("samples")
            .join("demo")
            .join("record.json")
    });
    let record = Record::load(&record_path)?;
    let game = resolve_game(args.game.as_deref(), &record, &record_path)?;
    let table = resolve_table(args.table.as_deref(), &record, &record_path)?;
    let (scored, judgements, state) = rescore_detailed(&game, &table, &record)
        .with_context(|| record_path.display().to_string())?;

    let mut totals = vec![0i32; game.player_count()];
    let mut rows = Vec::with_capacity(scored.shots.len());
    for (shot, j) in scored.shots.iter().zip(judgements) {
        for (t, d) in totals.iter_mut().zip(&j.score) {
            *t += d;
        }
        rows.push(ShotRow {
            index: shot.index,
            player: shot.player,
            counted: j.counted,
            lost: shot.lost.iter().map(|l| l.item).collect(),
            score: j.score,
            points: j.points,
            put_back: j.put_back,
            violations: j.violations,
            totals: totals.clone(),
            amendments: shot.amendments.iter().map(|a| a.number).collect(),
            review: shot
                .flagged(game.review_below())
                .iter()
                .map(|f| f.line())
                .collect(),
        });
    }
    let table_out = ScoreTable {
        players: game.players.iter().map(|p| p.name.clone()).collect(),
        shots: rows,
        scores: scored.scores.clone(),
        moves_made: state.moves_made.clone(),
        match_over: state.is_over(),
    };
    let text = if args.json {
        serde_json::to_string_pretty(&table_out)? + "\n"
    } else if args.wide {
        wide_table(&game, &table_out)
            + &amended_note(&table_out, &record_path)
            + &review_note(&game, &table_out, usize::MAX)
            + &outcome(&game, &table_out)
    } else {
        compact_table(&game, &table_out)
            + &amended_note(&table_out, &record_path)
            + &review_note(&game, &table_out, SCOREBOARD_COLUMNS)
            + &outcome(&game, &table_out)
            + &wide_hint(&record_path)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

/// The set-up: `game` (a game.json), else the record's own, else calibration/game.json.
pub(super) fn resolve_game(
    game: Option<&Path>,
    record: &Record,
    record_path: &Path,
) -> anyhow::Result<Game> {
    if let Some(path) = game {
        return Ok(Game::load(path)?);
    }
    if let Some(game) = &record.game {
        game.validate()
            .map_err(|e| anyhow!("{}: game: {e}", record_path.display()))?;
        return Ok(game.clone());
    }
    let path = super::bundled_dir("calibration").join("game.json");
    Ok(Game::load(&path)?)
}

/// The table: `table` (a table.json's `corners_mm`), else the record's `table_mm`, else
/// calibration/table.json, else a 1000 x 700 mm rectangle.
pub(super) fn resolve_table(
    table: Option<&Path>,
    record: &Record,
    record_path: &Path,
) -> anyhow::Result<Table> {
    let polygon = |corners: &[[f64; 2]], origin: &str| -> anyhow::Result<Table> {
        // Bounded before the rules search its edges for put-back places.
        crate::limits::check_table_corners("corners_mm", corners)
            .map_err(|e| anyhow!("{origin}: {e}"))?;
        Table::from_corners(corners).map_err(|e| anyhow!("{origin}: {e}"))
    };
    if let Some(path) = table {
        let file: TableCorners = load_json(path)?;
        return polygon(&file.corners_mm, &path.display().to_string());
    }
    if let Some(corners) = &record.table_mm {
        return polygon(corners, &format!("{}: table_mm", record_path.display()));
    }
    let path = super::bundled_dir("calibration").join("table.json");
    if path.exists() {
        let file: TableCorners = load_json(&path)?;
        return polygon(&file.corners_mm, &path.display().to_string());
    }
    Ok(Table::rectangle(DEFAULT_TABLE_MM.0, DEFAULT_TABLE_MM.1))
}

/// The mark after an amended shot's index.
const AMENDED_MARK: &str = "†";

/// A shot's index, marked when a referee amended it.
fn shot_cell(r: &ShotRow) -> String {
    let amended = if r.amendments.is_empty() {
        ""
    } else {
        AMENDED_MARK
    };
    let review = if r.review.is_empty() { "" } else { REVIEW_MARK };
    format!("{}{amended}{review}", r.index)
}

/// Marks a shot with calls to review (less sure than the game's `review_below`).
const REVIEW_MARK: &str = "?";

/// Under the table: the calls to review first, each on a line (cut to `width`).
fn review_note(game: &Game, t: &ScoreTable, width: usize) -> String {
    let lines: Vec<&String> = t.shots.iter().flat_map(|r| &r.review).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{REVIEW_MARK}: {} call{} to review first (confidence below {:.2}):\n",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        game.review_below()
    );
    for l in lines {
        let l = format!("  {l}");
        if l.chars().count() > width {
            let cut: String = l.chars().take(width.saturating_sub(1)).collect();
            out.push_str(&cut);
            out.push_str("…\n");
        } else {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// Under the table: which shots were amended, and where to read how.
fn amended_note(t: &ScoreTable, record_path: &Path) -> String {
    let amended: Vec<String> = t
        .shots
        .iter()
        .filter(|r| !r.amendments.is_empty())
        .map(|r| r.index.to_string())
        .collect();
    if amended.is_empty() {
        return String::new();
    }
    let count: usize = t.shots.iter().map(|r| r.amendments.len()).sum();
    let word = if amended.len() == 1 { "shot" } else { "shots" };
    let list = format!("fishtrack amend {} --list", record_path.display());
    let list = if list.chars().count() + 60 <= SCOREBOARD_COLUMNS {
        list
    } else {
        "fishtrack amend RECORD --list".to_string()
    };
    format!(
        "{AMENDED_MARK}: amended by a referee ({count} amendment{}): {word} {}; {list}\n",
        if count == 1 { "" } else { "s" },
        amended.join(", ")
    )
}

fn signed(v: i32) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

fn put_back_text(p: &PutBack) -> String {
    let verdict = p
        .verdict
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let at = match p.pose {
        Some(pose) if p.item.is_fish() => format!(
            " at ({:.0}, {:.0}, {:.0}°)",
            pose.x,
            pose.y,
            pose.angle().to_degrees()
        ),
        Some(pose) => format!(" at ({:.0}, {:.0})", pose.x, pose.y),
        None => String::new(),
    };
    format!("{} {}{verdict}{at}", p.item, p.rule)
}

/// A player's name by index ("?" for one the set-up lacks).
fn player_name(game: &Game, player: usize) -> &str {
    game.players
        .get(player)
        .map(|x| x.name.as_str())
        .unwrap_or("?")
}

/// The default human form, at most [`SCOREBOARD_COLUMNS`] wide: a row a shot with the
/// mover, the lost items, the points by rule (a player named only when not the mover),
/// the R11 violations by code (a column only when there are any) and the running
/// totals.
fn compact_table(game: &Game, t: &ScoreTable) -> String {
    let name = |p: usize| player_name(game, p);
    let any_violation = t.shots.iter().any(|r| !r.violations.is_empty());
    let mut header = vec![
        "shot".to_string(),
        "mover".into(),
        "lost".into(),
        "points".into(),
    ];
    if any_violation {
        header.push("R11".into());
    }
    let text_columns: Vec<usize> = (1..header.len()).collect();
    let first_total = header.len();
    header.extend(t.players.iter().cloned());
    let or_dash = |parts: Vec<String>, sep: &str| {
        if parts.is_empty() {
            "-".to_string()
        } else {
            parts.join(sep)
        }
    };
    let mut rows = vec![header];
    for r in &t.shots {
        let by = |player: usize| {
            if player == r.player {
                String::new()
            } else {
                format!("{} ", name(player))
            }
        };
        let mover = if r.counted {
            name(r.player).to_string()
        } else {
            format!("{}*", name(r.player))
        };
        let lost = or_dash(r.lost.iter().map(|i| i.to_string()).collect(), " ");
        let points = r
            .points
            .iter()
            .map(|p| format!("{}{} {}", by(p.player), signed(p.points), p.rule))
            .collect();
        let mut row = vec![shot_cell(r), mover, lost, or_dash(points, ", ")];
        if any_violation {
            let violations = r
                .violations
                .iter()
                .map(|v| {
                    let fine = if v.fine != 0 {
                        format!(" {}", v.fine)
                    } else {
                        String::new()
                    };
                    format!("{}{}{fine}", by(v.player), v.code)
                })
                .collect();
            row.push(or_dash(violations, ", "));
        }
        row.extend(r.totals.iter().map(|v| v.to_string()));
        rows.push(row);
    }
    let totals: Vec<usize> = (first_total..rows[0].len()).collect();
    super::fit_columns(
        &mut rows,
        SCOREBOARD_COLUMNS,
        &[&text_columns, &totals],
        MIN_COLUMN,
    );
    let mut out = super::columns(&rows, &text_columns, &[1], Rule::PerColumn);
    if t.shots.iter().any(|r| !r.counted) {
        out.push_str("*: the shot did not count as a move\n");
    }
    out
}

/// Where the rest of the default table is, as a command to run.
fn wide_hint(record_path: &Path) -> String {
    let hint = format!(
        "reasons, put-backs, evidence: fishtrack score {} --wide",
        record_path.display()
    );
    if hint.chars().count() <= SCOREBOARD_COLUMNS {
        hint + "\n"
    } else {
        "reasons, put-backs, evidence: fishtrack score RECORD --wide\n".to_string()
    }
}

/// The `--wide` human form: every point's reason, every put-back with its pose,
/// every violation with its evidence.
fn wide_table(game: &Game, t: &ScoreTable) -> String {
    let name = |p: usize| player_name(game, p);
    let mut header = vec![
        "shot".to_string(),
        "mover".into(),
        "lost".into(),
        "points".into(),
        "put back".into(),
        "violations".into(),
    ];
    header.extend(t.players.iter().cloned());
    let mut rows = vec![header];
    for r in &t.shots {
        let mover = if r.counted {
            name(r.player).to_string()
        } else {
            format!("{} (not counted)", name(r.player))
        };
        let lost = if r.lost.is_empty() {
            "-".to_string()
        } else {
            r.lost
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let points = if r.points.is_empty() {
            "-".to_string()
        } else {
            r.points
                .iter()
                .map(|p| {
                    format!(
                        "{} {} {} ({})",
                        name(p.player),
                        signed(p.points),
                        p.rule,
                        p.reason
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let put_back = if r.put_back.is_empty() {
            "-".to_string()
        } else {
            r.put_back
                .iter()
                .map(put_back_text)
                .collect::<Vec<_>>()
                .join("; ")
        };
        let violations = if r.violations.is_empty() {
            "-".to_string()
        } else {
            r.violations
                .iter()
                .map(|v| {
                    let fine = if v.fine != 0 {
                        format!(", fine {}", v.fine)
                    } else {
                        String::new()
                    };
                    format!("{} {}{fine}: {}", v.code, name(v.player), v.evidence)
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let mut row = vec![shot_cell(r), mover, lost, points, put_back, violations];
        row.extend(r.totals.iter().map(|v| v.to_string()));
        rows.push(row);
    }
    // Rule 1 is under the header, also when no shot follows it.
    super::columns(&rows, &[1, 2, 3, 4, 5], &[1], Rule::PerColumn)
}

/// The totals and how the match stands, under either table.
fn outcome(game: &Game, t: &ScoreTable) -> String {
    let mut out = String::new();
    let totals: Vec<String> = t
        .players
        .iter()
        .zip(&t.scores)
        .map(|(p, s)| format!("{p} {s}"))
        .collect();
    out.push_str(&format!("\ntotal: {}\n", totals.join(", ")));
    let made: u32 = t.moves_made.iter().sum();
    let due = game.moves_per_player * game.player_count() as u32;
    if t.match_over {
        let best = t.scores.iter().copied().max().unwrap_or(0);
        let winners: Vec<&str> = t
            .players
            .iter()
            .zip(&t.scores)
            .filter(|(_, s)| **s == best)
            .map(|(p, _)| p.as_str())
            .collect();
        let word = if winners.len() > 1 { "draw" } else { "winner" };
        out.push_str(&format!(
            "match over ({made} moves); {word}: {}\n",
            winners.join(", ")
        ));
    } else {
        out.push_str(&format!("match not finished: {made} of {due} moves made\n"));
    }
    out
}
