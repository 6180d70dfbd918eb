//! `fishtrack amend`: a referee's correction of a record's calls. Turns the flags (or
//! a patch file) into `amend::Request`s, lets the library check, apply and re-score
//! them, writes the record back whole (a temporary file renamed into place) and
//! prints what changed. Uses: amend, record, config, geometry; the set-up and the
//! table as `score` resolves them.

use crate::amend::{self, Outcome, Patch, Request};
use crate::config::{load_json, Game};
use crate::model::{ItemId, Pose};
use crate::record::{Change, Record};
use anyhow::{anyhow, bail, Context};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
#[command(
    after_help = "Correct one call of a record (a lost item, an exit point, a coin in a hole, the \
mover, a violation), with the reason. The rules (R2–R11) then judge that shot and every later one \
again: put-back duties, R7 fines, the turn and the totals follow. Each amendment is kept in the \
record with what, why, when (UTC) and the value it replaced, numbered 1, 2, … in the order made; \
`fishtrack score` marks the amended shots and `fishtrack replay` lists them in the report.\n\n\
An amendment that contradicts the record or the rules (an item lost twice, a coin in a fish \
that is off the table, an item or a shot that does not exist) is refused with one line and exit \
code 1, and the record is left as it was. The record is written whole under a temporary name \
and renamed into place.\n\n\
Examples:\n  \
fishtrack amend record.json --shot 3 --lost coin:1 --why \"fell behind the hand\"\n  \
fishtrack amend record.json --shot 3 --lost fish:1 --exit fish:1 1000,312 --why \"seen by the referee\"\n  \
fishtrack amend record.json --shot 4 --not-lost coin:0 --why \"hung over the edge\"\n  \
fishtrack amend record.json --shot 2 --coin-in coin:0 fish:1 --why \"in the hole\"\n  \
fishtrack amend record.json --shot 5 --mover Boris --why \"Boris flicked, out of turn\"\n  \
fishtrack amend record.json --shot 5 --drop-violation 2.1 --why \"the coin was not touched\"\n  \
fishtrack amend record.json --patch fixes.json\n  \
fishtrack amend record.json --undo 2\n  \
fishtrack amend record.json --list\n\n\
A patch file: {\"version\": 1, \"amendments\": [{\"shot\": 3, \"what\": \"lost\", \"item\": \"coin:1\", \
\"why\": \"...\"}, {\"shot\": 3, \"what\": \"exit\", \"item\": \"coin:1\", \"exit\": {\"x\": 1000, \"y\": 312}, \
\"why\": \"...\"}]}; `what` is one of lost, not-lost, exit, coin-in (keys coin, fish), mover (key \
player, an index) and drop-violation (key code). All are made, in order, or none.\n\n\
The set-up comes from --game, else the game embedded in the record, else calibration/game.json; \
the table from --table, else the record's `table_mm`, else calibration/table.json (as `score`)."
)]
pub struct AmendArgs {
    /// The record to amend (changed in place).
    pub record: PathBuf,
    /// The shot to amend (its index, as `fishtrack score` shows it). E.g. `--shot 3`.
    #[arg(long, value_name = "N")]
    pub shot: Option<usize>,
    /// The item left the table in this shot. E.g. `--lost coin:1`.
    #[arg(long, value_name = "ITEM")]
    pub lost: Option<ItemId>,
    /// The item did not leave the table: it rests where it was last seen. E.g. `--not-lost fish:0`.
    #[arg(long, value_name = "ITEM")]
    pub not_lost: Option<ItemId>,
    /// Where a lost item crossed the table's edge, in table mm (at most 50 mm from the
    /// edge). E.g. `--exit fish:1 1000,312`.
    #[arg(long, num_args = 2, value_names = ["ITEM", "X,Y"])]
    pub exit: Option<Vec<String>>,
    /// At rest, the coin lies in the hole of the fish. E.g. `--coin-in coin:0 fish:1`.
    #[arg(long, num_args = 2, value_names = ["COIN", "FISH"])]
    pub coin_in: Option<Vec<String>>,
    /// Who made the move, with their own fish: a player's index or name (R11 1.1 / 3).
    /// E.g. `--mover 1` or `--mover Boris`.
    #[arg(long, value_name = "P")]
    pub mover: Option<String>,
    /// The shot's violations of this R11 code did not happen. E.g. `--drop-violation 2.1`.
    #[arg(long, value_name = "CODE")]
    pub drop_violation: Option<String>,
    /// Why (required with the flags above; the default for patch entries without one).
    /// E.g. `--why "the referee saw it fall"`.
    #[arg(long, value_name = "TEXT")]
    pub why: Option<String>,
    /// Several amendments at once, from a JSON patch file (see below). E.g. `--patch fixes.json`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["shot", "undo", "list"])]
    pub patch: Option<PathBuf>,
    /// Undo amendment K (its number, from `--list`): the value before comes back and
    /// the record is re-scored. E.g. `--undo 2`.
    #[arg(long, value_name = "K", conflicts_with_all = ["shot", "list"])]
    pub undo: Option<u32>,
    /// List the record's amendments (number, shot, what, before → after, why, when) and change nothing.
    #[arg(long, conflicts_with = "shot")]
    pub list: bool,
    /// Show what would change, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Match set-up (game.json), as for `score`.
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// Table polygon: a table.json whose `corners_mm` lists the corners, as for `score`.
    #[arg(long)]
    pub table: Option<PathBuf>,
}

pub fn run(args: AmendArgs) -> anyhow::Result<()> {
    let path = &args.record;
    let record = Record::load(path)?;
    if args.list {
        let text = list(&record);
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(());
    }
    let game = super::score::resolve_game(args.game.as_deref(), &record, path)?;
    let table = super::score::resolve_table(args.table.as_deref(), &record, path)?;
    let at = |e: amend::AmendError| anyhow!("{}: {e}", path.display());
    let done = if let Some(k) = args.undo {
        if has_change(&args) {
            bail!("--undo takes no change flags: undo first, then amend");
        }
        amend::undo(&game, &table, &record, k).map_err(at)?
    } else {
        let requests = requests(&args, &game)?;
        amend::amend(&game, &table, &record, &requests, &super::utc_now()).map_err(at)?
    };
    let text = report(&record, &done, args.undo.is_some());
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if args.dry_run {
        eprintln!("fishtrack: --dry-run: {} left as it was", path.display());
        return Ok(());
    }
    write_replacing(&done.record, path)?;
    eprintln!("fishtrack: wrote {}", path.display());
    Ok(())
}

fn has_change(a: &AmendArgs) -> bool {
    a.lost.is_some()
        || a.not_lost.is_some()
        || a.exit.is_some()
        || a.coin_in.is_some()
        || a.mover.is_some()
        || a.drop_violation.is_some()
}

/// The amendments the flags or the patch file ask for.
fn requests(args: &AmendArgs, game: &Game) -> anyhow::Result<Vec<Request>> {
    if let Some(p) = &args.patch {
        if has_change(args) {
            bail!("--patch takes no change flags: put every amendment in the patch file");
        }
        let patch: Patch = load_json(p)?;
        patch
            .validate()
            .map_err(|e| anyhow!("{}: {e}", p.display()))?;
        let mut out = patch.amendments;
        for r in &mut out {
            if r.why.trim().is_empty() {
                r.why = args.why.clone().unwrap_or_default();
            }
        }
        return Ok(out);
    }
    if !has_change(args) {
        bail!(
            "nothing to amend: give --shot N with a change (--lost, --not-lost, --exit, --coin-in, --mover, --drop-violation), --patch FILE, --undo K or --list"
        );
    }
    let Some(shot) = args.shot else {
        bail!("which shot? give --shot N (the shot's index, as `fishtrack score` shows it)");
    };
    let why = match args.why.as_deref().map(str::trim) {
        Some(w) if !w.is_empty() => w.to_string(),
        _ => bail!("an amendment needs a reason: give --why TEXT"),
    };
    let item = |s: &str| s.parse::<ItemId>().map_err(anyhow::Error::from);
    let mut changes = Vec::new();
    if let Some(i) = args.lost {
        changes.push(Change::Lost { item: i });
    }
    if let Some(i) = args.not_lost {
        changes.push(Change::NotLost { item: i });
    }
    if let Some([i, at]) = args.exit.as_deref() {
        let (x, y) = at
            .split_once(',')
            .and_then(|(x, y)| Some((x.trim().parse().ok()?, y.trim().parse().ok()?)))
            .ok_or_else(|| {
                anyhow!("--exit {i} {at}: expected the point as X,Y in mm (e.g. 1000,312)")
            })?;
        changes.push(Change::Exit {
            item: item(i)?,
            exit: Pose::coin(x, y),
        });
    }
    if let Some([c, f]) = args.coin_in.as_deref() {
        changes.push(Change::CoinIn {
            coin: item(c)?,
            fish: item(f)?,
        });
    }
    if let Some(p) = &args.mover {
        changes.push(Change::Mover {
            player: player_index(game, p)?,
        });
    }
    if let Some(code) = &args.drop_violation {
        changes.push(Change::DropViolation {
            code: code.trim().to_string(),
        });
    }
    Ok(changes
        .into_iter()
        .map(|change| Request {
            shot,
            change,
            why: why.clone(),
        })
        .collect())
}

/// A player by index (`1`) or name (`Boris`, any case).
fn player_index(game: &Game, p: &str) -> anyhow::Result<usize> {
    if let Ok(i) = p.trim().parse::<usize>() {
        return Ok(i);
    }
    game.players
        .iter()
        .position(|x| x.name.eq_ignore_ascii_case(p.trim()))
        .ok_or_else(|| {
            let names: Vec<&str> = game.players.iter().map(|x| x.name.as_str()).collect();
            anyhow!(
                "--mover {p}: no such player (the players: {}; or an index 0..{})",
                names.join(", "),
                names.len().saturating_sub(1)
            )
        })
}

/// What was done, in words: each amendment with its before and after, then the shots
/// whose points changed and the totals before → after.
fn report(old: &Record, done: &Outcome, undone: bool) -> String {
    let players = &old.players;
    let mut out = String::new();
    for (shot, a) in &done.amendments {
        out.push_str(&amend::told(*shot, a, players, undone));
        out.push('\n');
    }
    let signed = |v: &[i32]| {
        v.iter()
            .map(|x| {
                if *x > 0 {
                    format!("+{x}")
                } else {
                    x.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    if done.shots_changed.is_empty() {
        out.push_str("no shot's points changed\n");
    }
    for c in &done.shots_changed {
        out.push_str(&format!(
            "shot {}: points {} → {}\n",
            c.index,
            signed(&c.before),
            signed(&c.after)
        ));
    }
    out.push_str(&format!(
        "total: {} → {}\n",
        amend::totals_text(players, &done.scores_before),
        amend::totals_text(players, &done.scores_after)
    ));
    out
}

/// `--list`: the record's amendments, one a line.
fn list(record: &Record) -> String {
    let all = record.amendments();
    if all.is_empty() {
        return "no amendments\n".into();
    }
    let mut rows = vec![vec![
        "#".to_string(),
        "shot".into(),
        "what".into(),
        "before → after".into(),
        "why".into(),
        "when (UTC)".into(),
    ]];
    for (shot, a) in all {
        let (what, before, after) = amend::describe(a, &record.players);
        rows.push(vec![
            a.number.to_string(),
            shot.to_string(),
            what,
            format!("{before} → {after}"),
            a.why.clone(),
            a.when.clone(),
        ]);
    }
    super::columns(&rows, &[2, 3, 4, 5], &[1], super::Rule::PerColumn)
}

/// Writes `record` to `dest` whole: under a temporary name in the same folder, then
/// renamed over it, so a failure leaves the old file as it was and no half-written one.
fn write_replacing(record: &Record, dest: &Path) -> anyhow::Result<()> {
    let name = dest
        .file_name()
        .with_context(|| format!("{}: not a file name", dest.display()))?;
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.amend.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = record
        .save(&tmp)
        .map_err(anyhow::Error::from)
        .and_then(|()| std::fs::rename(&tmp, dest).map_err(anyhow::Error::from));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("writing {}", dest.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn flags_parse_into_requests() {
        let cli = crate::cli::Cli::try_parse_from([
            "fishtrack",
            "amend",
            "r.json",
            "--shot",
            "3",
            "--lost",
            "fish:1",
            "--exit",
            "fish:1",
            "1000,312",
            "--mover",
            "P1",
            "--why",
            "seen",
        ])
        .expect("parses");
        let crate::cli::Command::Amend(args) = cli.command else {
            panic!("not amend");
        };
        let game = amend::synthetic_game(2, 3);
        let r = requests(&args, &game).expect("requests");
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|r| r.shot == 3 && r.why == "seen"));
        assert_eq!(
            r[0].change,
            Change::Lost {
                item: ItemId::fish(1)
            }
        );
        assert_eq!(
            r[1].change,
            Change::Exit {
                item: ItemId::fish(1),
                exit: Pose::coin(1000.0, 312.0)
            }
        );
        assert_eq!(r[2].change, Change::Mover { player: 1 });
    }
}
