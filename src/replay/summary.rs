//! A summary over many records: the standings and each player's figures (matches
//! won, drawn and lost, points for and against, items lost, violations, fines,
//! shots), as CSV and as a small self-contained HTML page in the report's style.
//! Players are the same person in two records when they have the same name.
//! Uses: record, model, `html` (style sheet and escaping).
//!
//! A record's result is its final totals (`scores`; the sum of its shots' points
//! when it has none): a record of an unfinished match counts as it stands.

use super::html::{escape, signed, CSS};
use crate::record::Record;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files the summary is written as.
pub const SUMMARY_CSV: &str = "summary.csv";
pub const SUMMARY_HTML: &str = "summary.html";

/// Why the records to summarise cannot be found.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error("{0}: no such file or folder")]
    Missing(PathBuf),
}

/// A record that could not be read, and why (one line).
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    pub path: PathBuf,
    pub error: String,
}

impl Unreadable {
    /// `PATH: why`, the path said once (load errors usually start with it already).
    pub fn line(&self) -> String {
        let path = self.path.display().to_string();
        if self.error.starts_with(&path) {
            self.error.clone()
        } else {
            format!("{path}: {}", self.error)
        }
    }
}

/// One match as the summary lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchResult {
    pub source: PathBuf,
    pub players: Vec<String>,
    /// Final totals, one per player.
    pub scores: Vec<i32>,
    /// The player(s) with the highest total: one is a win, several a draw.
    pub leaders: Vec<String>,
    pub shots: usize,
}

/// One player's figures over every match they played.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlayerFigures {
    pub name: String,
    pub matches: u32,
    /// Matches with the highest total alone.
    pub won: u32,
    /// Matches with the highest total shared.
    pub drawn: u32,
    pub lost: u32,
    /// The player's own final totals, summed.
    pub points_for: i32,
    /// The other players' final totals in the same matches, summed.
    pub points_against: i32,
    /// The player's own coins that left the table (in anyone's move).
    pub coins_lost: u32,
    /// The player's own fish that left the table (in anyone's move).
    pub fish_lost: u32,
    /// Other players' coins that left the table in the player's moves (R5's +1s).
    pub coins_knocked_off: u32,
    /// Violations (R11) the camera saw the player commit.
    pub violations: u32,
    /// Fines applied for them (≤ 0).
    pub fines: i32,
    /// Shots the player was the mover of.
    pub shots: u32,
}

/// The standings (best first) and the matches they come from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub players: Vec<PlayerFigures>,
    pub matches: Vec<MatchResult>,
}

/// Whether a file found in a folder is a record: `record.json`, or a name ending in
/// `record.json` as `analyse` writes for several videos (`clip.record.json`).
fn is_record_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with("record.json"))
}

/// The record files among `paths`: a file is taken as it is; a folder is searched
/// recursively for record files (in name order). Folders that cannot be listed are
/// returned as unreadable.
pub fn find_records(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Unreadable>), SummaryError> {
    let mut found = Vec::new();
    let mut unreadable = Vec::new();
    for path in paths {
        if path.is_file() {
            found.push(path.clone());
        } else if path.is_dir() {
            for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
                match entry {
                    Ok(e) if e.file_type().is_file() && is_record_name(e.path()) => {
                        found.push(e.into_path())
                    }
                    Ok(_) => {}
                    Err(e) => unreadable.push(Unreadable {
                        path: e.path().unwrap_or(path).to_path_buf(),
                        error: e.to_string(),
                    }),
                }
            }
        } else {
            return Err(SummaryError::Missing(path.clone()));
        }
    }
    found.dedup();
    Ok((found, unreadable))
}

/// Loads every record; those that do not load are returned with why.
pub fn load_records(paths: &[PathBuf]) -> (Vec<(PathBuf, Record)>, Vec<Unreadable>) {
    let mut records = Vec::new();
    let mut unreadable = Vec::new();
    for path in paths {
        match Record::load(path) {
            Ok(r) => records.push((path.clone(), r)),
            Err(e) => unreadable.push(Unreadable {
                path: path.clone(),
                error: e.to_string(),
            }),
        }
    }
    (records, unreadable)
}

/// A record's final totals, one per player.
fn final_scores(record: &Record) -> Vec<i32> {
    let n = record.players.len();
    if record.scores.len() == n {
        return record.scores.clone();
    }
    let mut totals = vec![0; n];
    for shot in &record.shots {
        for (t, s) in totals.iter_mut().zip(&shot.score) {
            *t += s;
        }
    }
    totals
}

/// The figures over `records`, players in standings order: most wins, then most
/// draws, then most points for, then fewest points against, then by name.
pub fn summarise(records: &[(PathBuf, Record)]) -> Summary {
    let mut by_name: BTreeMap<String, PlayerFigures> = BTreeMap::new();
    let mut matches = Vec::with_capacity(records.len());
    for (source, record) in records {
        let scores = final_scores(record);
        let best = scores.iter().copied().max();
        let leaders: Vec<usize> = (0..scores.len())
            .filter(|&i| Some(scores[i]) == best)
            .collect();
        let all: i32 = scores.iter().sum();
        for (i, name) in record.players.iter().enumerate() {
            let f = by_name
                .entry(name.clone())
                .or_insert_with(|| PlayerFigures {
                    name: name.clone(),
                    ..PlayerFigures::default()
                });
            f.matches += 1;
            match (leaders.contains(&i), leaders.len()) {
                (true, 1) => f.won += 1,
                (true, _) => f.drawn += 1,
                (false, _) => f.lost += 1,
            }
            f.points_for += scores[i];
            f.points_against += all - scores[i];
            for shot in &record.shots {
                let mover = shot.player == i;
                if mover {
                    f.shots += 1;
                }
                for l in &shot.lost {
                    match (l.item.owner == i, l.item.is_coin()) {
                        (true, true) => f.coins_lost += 1,
                        (true, false) => f.fish_lost += 1,
                        (false, true) if mover => f.coins_knocked_off += 1,
                        _ => {}
                    }
                }
                for v in shot.violations.iter().filter(|v| v.player == i) {
                    f.violations += 1;
                    f.fines += v.fine;
                }
            }
        }
        matches.push(MatchResult {
            source: source.clone(),
            players: record.players.clone(),
            leaders: leaders.iter().map(|&i| record.players[i].clone()).collect(),
            scores,
            shots: record.shots.len(),
        });
    }
    let mut players: Vec<PlayerFigures> = by_name.into_values().collect();
    players.sort_by(|a, b| {
        (b.won, b.drawn, b.points_for)
            .cmp(&(a.won, a.drawn, a.points_for))
            .then(a.points_against.cmp(&b.points_against))
            .then(a.name.cmp(&b.name))
    });
    Summary { players, matches }
}

/// The column names of `summary.csv`, in order.
pub const SUMMARY_COLUMNS: [&str; 14] = [
    "rank",
    "player",
    "matches",
    "won",
    "drawn",
    "lost",
    "points_for",
    "points_against",
    "coins_lost",
    "fish_lost",
    "coins_knocked_off",
    "violations",
    "fines",
    "shots",
];

/// A player's row under [`SUMMARY_COLUMNS`]; `rank` counts from 1.
pub fn figures_row(rank: usize, f: &PlayerFigures) -> Vec<String> {
    vec![
        rank.to_string(),
        f.name.clone(),
        f.matches.to_string(),
        f.won.to_string(),
        f.drawn.to_string(),
        f.lost.to_string(),
        f.points_for.to_string(),
        f.points_against.to_string(),
        f.coins_lost.to_string(),
        f.fish_lost.to_string(),
        f.coins_knocked_off.to_string(),
        f.violations.to_string(),
        f.fines.to_string(),
        f.shots.to_string(),
    ]
}

/// `summary.csv`: the standings, one row a player.
pub fn write_summary_csv(summary: &Summary, out: &mut dyn Write) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(SUMMARY_COLUMNS)?;
    for (i, f) in summary.players.iter().enumerate() {
        w.write_record(figures_row(i + 1, f))?;
    }
    w.flush()?;
    Ok(())
}

/// `summary.html`: the standings, the matches and the records that were skipped.
pub fn summary_html(summary: &Summary, skipped: &[Unreadable]) -> String {
    let mut h = String::new();
    let title = format!(
        "Fish: {} match{}",
        summary.matches.len(),
        if summary.matches.len() == 1 { "" } else { "es" }
    );
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    h.push_str(&format!(
        "<title>{}</title>\n<style>\n{CSS}",
        escape(&title)
    ));
    h.push_str("td.name, th.name { text-align: left; }\n</style></head><body>\n");
    h.push_str(&format!("<h1>{}</h1>\n", escape(&title)));
    h.push_str(&format!(
        "<p class=\"meta\">{} players · a match's result is its final totals; players are matched by name</p>\n",
        summary.players.len()
    ));
    for s in skipped {
        h.push_str(&format!(
            "<p class=\"note\">Skipped {}</p>\n",
            escape(&s.line())
        ));
    }

    h.push_str("<h2>Standings</h2>\n<table id=\"standings\"><tr>");
    for c in SUMMARY_COLUMNS {
        let class = if c == "player" { " class=\"name\"" } else { "" };
        h.push_str(&format!("<th{class}>{}</th>", c.replace('_', " ")));
    }
    h.push_str("</tr>\n");
    for (i, f) in summary.players.iter().enumerate() {
        h.push_str("<tr>");
        for (c, v) in SUMMARY_COLUMNS.iter().zip(figures_row(i + 1, f)) {
            let class = if *c == "player" {
                " class=\"name\""
            } else {
                ""
            };
            h.push_str(&format!("<td{class}>{}</td>", escape(&v)));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");

    h.push_str("<h2>Matches</h2>\n<table id=\"matches\"><tr><th class=\"name\">record</th><th class=\"name\">players (final totals)</th><th class=\"name\">result</th><th>shots</th></tr>\n");
    for m in &summary.matches {
        let players: Vec<String> = m
            .players
            .iter()
            .zip(&m.scores)
            .map(|(p, s)| format!("{} {}", escape(p), signed(*s)))
            .collect();
        let result = match m.leaders.as_slice() {
            [one] => format!("winner: {}", escape(one)),
            many => format!("draw: {}", escape(&many.join(", "))),
        };
        h.push_str(&format!(
            "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{result}</td><td>{}</td></tr>\n",
            escape(&m.source.display().to_string()),
            players.join(" · "),
            m.shots
        ));
    }
    h.push_str("</table>\n</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ItemId, Pose};
    use crate::record::{LostItem, Shot};

    fn record(players: &[&str], shots: Vec<Shot>, scores: Vec<i32>) -> Record {
        Record {
            version: crate::record::RECORD_VERSION,
            video: Default::default(),
            players: players.iter().map(|s| s.to_string()).collect(),
            shots,
            scores,
            game: None,
            table_mm: None,
        }
    }

    fn knock(mover: usize, lost: ItemId, score: Vec<i32>) -> Shot {
        Shot {
            player: mover,
            lost: vec![LostItem {
                item: lost,
                frame: 10,
                exit: Pose::coin(0.0, 0.0),
            }],
            score,
            ..Shot::default()
        }
    }

    #[test]
    fn players_are_matched_by_name_whatever_their_place() {
        let a = record(
            &["Anna", "Boris"],
            vec![knock(0, ItemId::coin(1), vec![1, 0])],
            vec![1, 0],
        );
        // Boris moves first here: his index is 0.
        let b = record(
            &["Boris", "Anna"],
            vec![knock(0, ItemId::fish(0), vec![-1, 0])],
            vec![-1, 0],
        );
        let s = summarise(&[("a".into(), a), ("b".into(), b)]);
        assert_eq!(s.players[0].name, "Anna");
        let anna = &s.players[0];
        assert_eq!(
            (anna.matches, anna.won, anna.drawn, anna.lost),
            (2, 2, 0, 0)
        );
        assert_eq!((anna.points_for, anna.points_against), (1, -1));
        assert_eq!(anna.coins_knocked_off, 1);
        let boris = &s.players[1];
        assert_eq!(
            (boris.lost, boris.coins_lost, boris.fish_lost, boris.shots),
            (2, 1, 1, 1)
        );
    }

    #[test]
    fn a_shared_top_total_is_a_draw() {
        let a = record(&["Anna", "Boris"], Vec::new(), vec![0, 0]);
        let s = summarise(&[("a".into(), a)]);
        assert!(s.players.iter().all(|p| p.drawn == 1 && p.won == 0));
        assert_eq!(s.matches[0].leaders.len(), 2);
    }
}
