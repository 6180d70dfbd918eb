//! Amendments to a record: a referee's correction of one call (a lost item, an exit
//! point, a coin in a hole, the mover, a violation), checked against the rules and the
//! record, kept with why and when, re-scored, and undoable. Pure.
//! Uses: model, config, geometry, record, rules.
//!
//! An amendment changes a shot's observations (`lost`, `end`, `coins_in_holes`, the
//! mover) or drops one of its violations, and the rules then judge every shot again
//! (`rules::judge_shot`, from the start of the record as `fishtrack score` does), so
//! each later shot's put-back duties, R7 fines and turn follow. It is kept in the
//! shot it corrects ([`crate::record::Shot::amendments`]) with the values it
//! replaced, numbered 1, 2, … over the record in the order made.
//!
//! Everything is all-or-nothing: [`amend`] and [`undo`] return a new record or an
//! [`AmendError`] (one line) and never a half-amended one.
//!
//! Readings decided here:
//! - `lost`: the item leaves the rest poses (and any hole, stacking or doubt); it left
//!   the table in the last frame it was seen, at the edge point nearest that sighting
//!   (or nearest its pose at the flick). `--exit` in the same amendment set says better.
//! - `not-lost`: the item never left, so where a later interlude shows it put back
//!   (before it is lost again) the camera only saw it again: that put-back is taken
//!   out and its pose is the rest pose; without one, the item rests where it was last
//!   seen on the table in the shot (else where it lay at the flick).
//! - `coin-in`: the coin rests in the fish's hole; when its recorded rest pose is not
//!   wholly inside the hole it is moved to the hole's centre (the put-back rules judge
//!   holes by the poses), and it is no longer in doubt or stacked with that fish.
//! - `mover P`: player P made the move, with their own fish (`first_moved` becomes
//!   `fish:P`). A later shot whose mover was the player whose turn it was follows the
//!   turn as it now runs (`analyse` names each shot's mover by the turn order).
//! - `drop-violation CODE`: every violation of that code in the shot is dropped, with
//!   its fine and any annulment it caused; the rules engine honours it each time the
//!   record is judged.
//! - Undoing amendment K undoes the later ones, K, and then makes the later ones again
//!   (each with its number, why and when); if one of them no longer fits the record,
//!   nothing is undone.
//! - Re-scoring starts from the start of the record (as `fishtrack score`), so an
//!   amendment followed by its undo gives back the record exactly when the record's
//!   scores were the rules engine's to begin with.

pub use crate::record::{Amendment, Before, Change, MoverBefore};

use crate::config::Game;
use crate::geometry::Table;
use crate::model::{ItemId, PlayerIdx, Pose};
use crate::record::{LostItem, Record, Shot};
use crate::rules::{judge_shot, MatchState, RulesError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the patch file format ([`Patch`]) this build reads.
pub const PATCH_VERSION: u32 = 1;
/// How far from the table's edge an amended exit point may be (mm): an exit is where
/// the item crossed the edge.
pub const EXIT_EDGE_TOLERANCE_MM: f64 = 50.0;

/// One amendment asked for: the shot (its `index`), the change, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub shot: usize,
    #[serde(flatten)]
    pub change: Change,
    /// Why (required, not empty).
    #[serde(default)]
    pub why: String,
}

/// A patch file (`fishtrack amend RECORD --patch FILE`): several amendments made at
/// once, in order, all or none.
/// ```json
/// { "version": 1, "amendments": [
///   { "shot": 3, "what": "lost", "item": "coin:1", "why": "fell behind the hand" },
///   { "shot": 3, "what": "exit", "item": "coin:1", "exit": {"x": 1000, "y": 312}, "why": "seen" } ] }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Patch {
    pub version: u32,
    pub amendments: Vec<Request>,
}

impl Patch {
    /// Checks the version and that there is something to do.
    pub fn validate(&self) -> Result<(), AmendError> {
        if self.version != PATCH_VERSION {
            return Err(AmendError::Patch(format!(
                "patch version {} is not supported (this build reads version {PATCH_VERSION})",
                self.version
            )));
        }
        if self.amendments.is_empty() {
            return Err(AmendError::Patch("the patch lists no amendments".into()));
        }
        crate::limits::check_count(
            "amendments",
            self.amendments.len(),
            crate::record::MAX_AMENDMENTS,
        )
        .map_err(AmendError::Patch)
    }
}

/// Why an amendment was refused. Each is one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AmendError {
    #[error("shot {shot} does not exist (the record has {known})")]
    NoShot { shot: usize, known: String },
    #[error("shot {shot}: {item} does not exist (the game has {players} players: fish:0..{last}, coin:0..{last})", last = players.saturating_sub(1))]
    UnknownItem {
        shot: usize,
        item: ItemId,
        players: usize,
    },
    #[error("shot {shot}: player {player} does not exist (the game has {players} players: 0..{last})", last = players.saturating_sub(1))]
    UnknownPlayer {
        shot: usize,
        player: PlayerIdx,
        players: usize,
    },
    #[error("shot {shot}: {reason}")]
    Contradiction { shot: usize, reason: String },
    #[error("shot {shot}: an amendment needs a reason (--why TEXT)")]
    NoWhy { shot: usize },
    #[error("amendment {number} does not exist (the record has {known})")]
    NoAmendment { number: u32, known: String },
    #[error("undoing amendment {number} would leave amendment {later} contradicting the record ({source}): undo {later} first")]
    UndoBlocked {
        number: u32,
        later: u32,
        source: Box<AmendError>,
    },
    #[error("the record has no players")]
    NoPlayers,
    #[error("{0}")]
    Patch(String),
    #[error(transparent)]
    Rules(#[from] RulesError),
}

/// One shot whose points changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShotChange {
    pub index: usize,
    pub before: Vec<i32>,
    pub after: Vec<i32>,
}

/// What an amendment or an undo did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The record amended and re-scored.
    pub record: Record,
    /// The amendments made (for an undo: the one undone), with their shot index.
    pub amendments: Vec<(usize, Amendment)>,
    /// The totals before and after.
    pub scores_before: Vec<i32>,
    pub scores_after: Vec<i32>,
    /// The shots whose points changed.
    pub shots_changed: Vec<ShotChange>,
}

/// Makes `requests` on `record`, in order, all or none, each stamped `when` (UTC, RFC
/// 3339), and re-scores the record under `game` on `table`.
pub fn amend(
    game: &Game,
    table: &Table,
    record: &Record,
    requests: &[Request],
    when: &str,
) -> Result<Outcome, AmendError> {
    let mut rec = record.clone();
    let first = next_number(&rec);
    let mut made = Vec::with_capacity(requests.len());
    for (number, req) in (first..).zip(requests) {
        let a = apply(game, table, &mut rec, req, number, when)?;
        made.push((req.shot, a));
    }
    Ok(outcome(record, rec, made))
}

/// Undoes amendment `number`: restores the values it replaced and re-scores; later
/// amendments are made again on the record without it.
pub fn undo(
    game: &Game,
    table: &Table,
    record: &Record,
    number: u32,
) -> Result<Outcome, AmendError> {
    let all: Vec<(usize, Amendment)> = record
        .amendments()
        .into_iter()
        .map(|(s, a)| (s, a.clone()))
        .collect();
    let Some(undone) = all.iter().find(|(_, a)| a.number == number).cloned() else {
        return Err(AmendError::NoAmendment {
            number,
            known: numbers_known(&all),
        });
    };
    let mut rec = record.clone();
    let from: Vec<&(usize, Amendment)> = all.iter().filter(|(_, a)| a.number >= number).collect();
    for (shot, a) in from.iter().rev() {
        revert(&mut rec, *shot, a)?;
    }
    rescore_in_place(game, table, &mut rec, None)?;
    for (shot, a) in from.iter().filter(|(_, a)| a.number > number) {
        let req = Request {
            shot: *shot,
            change: a.change.clone(),
            why: a.why.clone(),
        };
        apply(game, table, &mut rec, &req, a.number, &a.when).map_err(|e| {
            AmendError::UndoBlocked {
                number,
                later: a.number,
                source: Box::new(e),
            }
        })?;
    }
    Ok(outcome(record, rec, vec![undone]))
}

/// The number the next amendment of `record` gets.
pub fn next_number(record: &Record) -> u32 {
    record
        .amendments()
        .last()
        .map(|(_, a)| a.number.saturating_add(1))
        .unwrap_or(1)
}

fn numbers_known(all: &[(usize, Amendment)]) -> String {
    if all.is_empty() {
        return "none".into();
    }
    let n: Vec<String> = all.iter().map(|(_, a)| a.number.to_string()).collect();
    format!("amendments {}", n.join(", "))
}

fn shots_known(record: &Record) -> String {
    match (record.shots.first(), record.shots.last()) {
        (Some(a), Some(_)) if record.shots.len() == 1 => format!("shot {}", a.index),
        (Some(a), Some(b)) => format!("{} shots, {}–{}", record.shots.len(), a.index, b.index),
        _ => "no shots".into(),
    }
}

fn outcome(old: &Record, new: Record, amendments: Vec<(usize, Amendment)>) -> Outcome {
    let shots_changed = old
        .shots
        .iter()
        .zip(&new.shots)
        .filter(|(a, b)| a.score != b.score)
        .map(|(a, b)| ShotChange {
            index: a.index,
            before: a.score.clone(),
            after: b.score.clone(),
        })
        .collect();
    Outcome {
        scores_before: old.scores.clone(),
        scores_after: new.scores.clone(),
        record: new,
        amendments,
        shots_changed,
    }
}

/// Where `item` was last seen in `shot` (frame and pose), from its track rows.
fn sightings(shot: &Shot, item: ItemId) -> impl Iterator<Item = (u64, Pose)> + '_ {
    let start_theta = shot.start.get(&item).and_then(|p| p.theta);
    shot.tracks
        .get(&item)
        .into_iter()
        .flat_map(|rows| rows.iter().rev())
        .filter(|r| r.len() >= 3)
        .map(move |r| {
            let theta = if item.is_fish() {
                r.get(3).copied().or(start_theta).or(Some(0.0))
            } else {
                None
            };
            (
                r[0].max(0.0) as u64,
                Pose {
                    x: r[1],
                    y: r[2],
                    theta,
                },
            )
        })
}

/// Makes one amendment on `rec` (checked, applied, re-scored) and returns it.
fn apply(
    game: &Game,
    table: &Table,
    rec: &mut Record,
    req: &Request,
    number: u32,
    when: &str,
) -> Result<Amendment, AmendError> {
    let players = game.player_count();
    if players == 0 {
        return Err(AmendError::NoPlayers);
    }
    let shot_no = req.shot;
    let pos = rec
        .shots
        .iter()
        .position(|s| s.index == shot_no)
        .ok_or_else(|| AmendError::NoShot {
            shot: shot_no,
            known: shots_known(rec),
        })?;
    if req.why.trim().is_empty() {
        return Err(AmendError::NoWhy { shot: shot_no });
    }
    for item in req.change.items() {
        if item.owner >= players {
            return Err(AmendError::UnknownItem {
                shot: shot_no,
                item,
                players,
            });
        }
    }
    let refuse = |reason: String| AmendError::Contradiction {
        shot: shot_no,
        reason,
    };
    // Whether each shot's mover was the player whose turn it was, before the change.
    let followed = match req.change {
        Change::Mover { .. } => Some(turn_followed(game, table, rec)?),
        _ => None,
    };
    let scores_before = rec.scores.clone();
    let shot = &mut rec.shots[pos];
    let mut before = Before::default();
    match &req.change {
        Change::Lost { item } => {
            let item = *item;
            if shot.lost.iter().any(|l| l.item == item) {
                return Err(refuse(format!("{item} is already lost in this shot")));
            }
            let Some(start) = shot.start.get(&item).copied() else {
                return Err(refuse(format!(
                    "{item} was not on the table at the flick (it cannot be lost in this shot)"
                )));
            };
            let (frame, seen) = sightings(shot, item)
                .next()
                .unwrap_or((shot.flick_frame, start));
            let edge = table.nearest_edge_point(seen.point());
            before.lost = Some(shot.lost.clone());
            before.end = Some(shot.end.clone());
            before.coins_in_holes = Some(shot.coins_in_holes.clone());
            before.stacking = Some(shot.stacking.clone());
            before.touches_table = Some(shot.touches_table.clone());
            before.doubt = Some(shot.doubt.clone());
            shot.lost.push(LostItem {
                item,
                frame,
                exit: Pose::coin(edge.x, edge.y),
            });
            shot.end.remove(&item);
            shot.coins_in_holes.retain(|c, f| *c != item && *f != item);
            shot.stacking.retain(|s| s.top != item && s.under != item);
            shot.touches_table.remove(&item);
            shot.doubt.retain(|d| *d != item);
        }
        Change::NotLost { item } => {
            let item = *item;
            if !shot.lost.iter().any(|l| l.item == item) {
                return Err(refuse(format!("{item} is not lost in this shot")));
            }
            let seen = sightings(shot, item)
                .map(|(_, p)| p)
                .find(|p| table.contains(p.point()))
                .or_else(|| shot.start.get(&item).copied());
            // The item never left: where the camera saw it "put back" later, it was
            // only seen again. That put-back goes, and its pose is the rest pose.
            let mut reappeared = None;
            for later in rec.shots[pos + 1..].iter_mut() {
                if later.lost.iter().any(|l| l.item == item) {
                    break;
                }
                let Some(interlude) = later.before.as_mut() else {
                    continue;
                };
                let Some(k) = interlude.placed.iter().position(|p| p.item == item) else {
                    continue;
                };
                before
                    .later_interludes
                    .insert(later.index, interlude.clone());
                reappeared = Some(interlude.placed.remove(k).pose);
                break;
            }
            let shot = &mut rec.shots[pos];
            let Some(rest) = reappeared.or(seen) else {
                return Err(refuse(format!(
                    "{item} was never seen on the table in this shot: where it rests is not known"
                )));
            };
            before.lost = Some(shot.lost.clone());
            before.end = Some(shot.end.clone());
            shot.lost.retain(|l| l.item != item);
            shot.end.insert(item, rest);
        }
        Change::Exit { item, exit } => {
            let item = *item;
            crate::limits::check_pose("exit", exit.x, exit.y, exit.theta).map_err(&refuse)?;
            let Some(k) = shot.lost.iter().position(|l| l.item == item) else {
                return Err(refuse(format!(
                    "{item} is not lost in this shot: only a lost item has an exit (--lost {item} first)"
                )));
            };
            let off = table.signed_distance(exit.point()).abs();
            if off > EXIT_EDGE_TOLERANCE_MM {
                return Err(refuse(format!(
                    "the exit ({:.0}, {:.0}) is {off:.0} mm from the table's edge (at most {EXIT_EDGE_TOLERANCE_MM} mm): an exit is where {item} crossed the edge",
                    exit.x, exit.y
                )));
            }
            let exit = Pose::coin(exit.x, exit.y);
            if shot.lost[k].exit == exit {
                return Err(refuse(format!("{item}'s exit is already there")));
            }
            before.lost = Some(shot.lost.clone());
            shot.lost[k].exit = exit;
        }
        Change::CoinIn { coin, fish } => {
            let (coin, fish) = (*coin, *fish);
            if !coin.is_coin() || !fish.is_fish() {
                return Err(refuse(format!(
                    "--coin-in takes a coin and then a fish, not {coin} and {fish}"
                )));
            }
            if shot.lost.iter().any(|l| l.item == coin) {
                return Err(refuse(format!(
                    "{coin} is lost in this shot: it cannot be in a hole"
                )));
            }
            let Some(coin_pose) = shot.end.get(&coin).copied() else {
                return Err(refuse(format!("{coin} is not on the table at rest")));
            };
            let Some(fish_pose) = shot.end.get(&fish).copied() else {
                return Err(refuse(format!(
                    "{fish} is off the table at rest: no coin can be in its hole"
                )));
            };
            if shot.coins_in_holes.get(&coin) == Some(&fish) {
                return Err(refuse(format!("{coin} is already in {fish}'s hole")));
            }
            if let Some((other, _)) = shot
                .coins_in_holes
                .iter()
                .find(|(c, f)| **f == fish && **c != coin)
            {
                return Err(refuse(format!(
                    "{fish}'s hole already holds {other}: a hole holds one coin"
                )));
            }
            before.end = Some(shot.end.clone());
            before.coins_in_holes = Some(shot.coins_in_holes.clone());
            before.stacking = Some(shot.stacking.clone());
            before.doubt = Some(shot.doubt.clone());
            let centre_gap = (coin_pose.point() - fish_pose.point()).norm();
            if centre_gap + game.items.coin.radius > game.items.fish.hole_radius {
                shot.end.insert(coin, Pose::coin(fish_pose.x, fish_pose.y));
            }
            shot.coins_in_holes.insert(coin, fish);
            shot.stacking.retain(|s| {
                !((s.top == fish && s.under == coin) || (s.top == coin && s.under == fish))
            });
            shot.doubt.retain(|d| *d != coin);
        }
        Change::Mover { player } => {
            let player = *player;
            if player >= players {
                return Err(AmendError::UnknownPlayer {
                    shot: shot_no,
                    player,
                    players,
                });
            }
            let own = ItemId::fish(player);
            if shot.player == player && shot.first_moved == Some(own) {
                return Err(refuse(format!(
                    "player {player} is already the mover, with {own} moved first"
                )));
            }
            before.mover = Some(MoverBefore {
                player: shot.player,
                first_moved: shot.first_moved,
            });
            shot.player = player;
            shot.first_moved = Some(own);
        }
        Change::DropViolation { code } => {
            if !shot.violations.iter().any(|v| &v.code == code) {
                let has: Vec<&str> = shot.violations.iter().map(|v| v.code.as_str()).collect();
                let has = if has.is_empty() {
                    "none".to_string()
                } else {
                    has.join(", ")
                };
                return Err(refuse(format!(
                    "no violation {code} to drop (its violations: {has})"
                )));
            }
            before.violations = Some(shot.violations.clone());
        }
    }
    rec.shots[pos].amendments.push(Amendment {
        number,
        change: req.change.clone(),
        why: req.why.trim().to_string(),
        when: when.to_string(),
        before,
        scores_before,
        scores_after: Vec::new(),
    });
    let mut later = BTreeMap::new();
    let realign = followed.as_deref().map(|f| (pos, f, &mut later));
    rescore_in_place(game, table, rec, realign)?;
    let scores_after = rec.scores.clone();
    let shot = &mut rec.shots[pos];
    let Some(a) = shot.amendments.last_mut() else {
        unreachable!("pushed above");
    };
    a.scores_after = scores_after;
    a.before.later_players = later;
    Ok(a.clone())
}

/// Restores the values amendment `a` (the last one still made on its shot) replaced.
fn revert(rec: &mut Record, shot_no: usize, a: &Amendment) -> Result<(), AmendError> {
    for (&index, &player) in &a.before.later_players {
        if let Some(s) = rec.shots.iter_mut().find(|s| s.index == index) {
            s.player = player;
        }
    }
    for (index, interlude) in &a.before.later_interludes {
        if let Some(s) = rec.shots.iter_mut().find(|s| s.index == *index) {
            s.before = Some(interlude.clone());
        }
    }
    let known = shots_known(rec);
    let shot = rec
        .shots
        .iter_mut()
        .find(|s| s.index == shot_no)
        .ok_or(AmendError::NoShot {
            shot: shot_no,
            known,
        })?;
    shot.amendments.retain(|x| x.number != a.number);
    let b = a.before.clone();
    if let Some(v) = b.lost {
        shot.lost = v;
    }
    if let Some(v) = b.end {
        shot.end = v;
    }
    if let Some(v) = b.coins_in_holes {
        shot.coins_in_holes = v;
    }
    if let Some(v) = b.stacking {
        shot.stacking = v;
    }
    if let Some(v) = b.touches_table {
        shot.touches_table = v;
    }
    if let Some(v) = b.doubt {
        shot.doubt = v;
    }
    if let Some(m) = b.mover {
        shot.player = m.player;
        shot.first_moved = m.first_moved;
    }
    Ok(())
}

/// For each shot: whether its mover was the player whose turn it was.
fn turn_followed(game: &Game, table: &Table, rec: &Record) -> Result<Vec<bool>, AmendError> {
    let mut state = MatchState::new(game).with_fps(rec.video.fps);
    let mut out = Vec::with_capacity(rec.shots.len());
    for shot in &rec.shots {
        out.push(!state.is_over() && shot.player == state.next_player);
        state = judge_shot(game, table, &state, shot)?.0;
    }
    Ok(out)
}

/// Judges every shot again (as `rules::rescore`) in place. With `realign` = (the
/// amended shot's position, which shots followed the turn, where to note changes): a
/// later shot that followed the turn gets the mover whose turn it now is.
fn rescore_in_place(
    game: &Game,
    table: &Table,
    rec: &mut Record,
    mut realign: Option<(usize, &[bool], &mut BTreeMap<usize, PlayerIdx>)>,
) -> Result<(), AmendError> {
    game.validate().map_err(RulesError::InvalidGame)?;
    if rec.players.len() != game.player_count() {
        return Err(RulesError::PlayerCount {
            record: rec.players.len(),
            game: game.player_count(),
        }
        .into());
    }
    let mut state = MatchState::new(game).with_fps(rec.video.fps);
    for (pos, shot) in rec.shots.iter_mut().enumerate() {
        if let Some((from, followed, changed)) = realign.as_mut() {
            let turn = state.next_player;
            if pos > *from
                && followed.get(pos) == Some(&true)
                && !state.is_over()
                && shot.player != turn
            {
                changed.insert(shot.index, shot.player);
                shot.player = turn;
            }
        }
        let (next, j) = judge_shot(game, table, &state, shot)?;
        shot.score = j.score;
        shot.put_back = j.put_back;
        shot.violations = j.violations;
        state = next;
    }
    rec.scores = state.scores;
    Ok(())
}

/// Amendment `a` of shot `shot` in words, as `fishtrack amend` tells it: `shot 0:
/// coin:1 lost: on the table at (10, 20) → lost`, or, `undone`, `shot 0: coin:1 lost
/// (back to: on the table at (10, 20); was: lost)`.
pub fn summary(shot: usize, a: &Amendment, players: &[String], undone: bool) -> String {
    let (what, before, after) = describe(a, players);
    if undone {
        format!("shot {shot}: {what} (back to: {before}; was: {after})")
    } else {
        format!("shot {shot}: {what}: {before} → {after}")
    }
}

/// The line telling amendment `a` of shot `shot` made (`amendment K: …`) or, `undone`,
/// undone (`undid amendment K: …`).
pub fn told(shot: usize, a: &Amendment, players: &[String], undone: bool) -> String {
    let made = if undone {
        "undid amendment"
    } else {
        "amendment"
    };
    format!("{made} {}: {}", a.number, summary(shot, a, players, undone))
}

/// What an amendment changed, in words: (what, the value before, the value after).
pub fn describe(a: &Amendment, players: &[String]) -> (String, String, String) {
    let name = |p: PlayerIdx| {
        players
            .get(p)
            .cloned()
            .unwrap_or_else(|| format!("player {p}"))
    };
    let at = |p: &Pose| format!("({:.0}, {:.0})", p.x, p.y);
    let b = &a.before;
    let lost_of = |item: ItemId| {
        b.lost
            .iter()
            .flatten()
            .find(|l| l.item == item)
            .map(|l| format!("lost, exit {}", at(&l.exit)))
    };
    match &a.change {
        Change::Lost { item } => (
            format!("{item} lost"),
            b.end
                .as_ref()
                .and_then(|e| e.get(item))
                .map(|p| format!("on the table at {}", at(p)))
                .unwrap_or_else(|| "not on the table at rest".into()),
            "lost".into(),
        ),
        Change::NotLost { item } => (
            format!("{item} not lost"),
            lost_of(*item).unwrap_or_else(|| "lost".into()),
            "on the table".into(),
        ),
        Change::Exit { item, exit } => (
            format!("{item}'s exit"),
            lost_of(*item).unwrap_or_else(|| "lost".into()),
            format!("lost, exit {}", at(exit)),
        ),
        Change::CoinIn { coin, fish } => (
            format!("{coin} in {fish}'s hole"),
            b.coins_in_holes
                .as_ref()
                .and_then(|c| c.get(coin))
                .map(|f| format!("in {f}'s hole"))
                .unwrap_or_else(|| "in no hole".into()),
            format!("in {fish}'s hole"),
        ),
        Change::Mover { player } => (
            format!("{} made the move", name(*player)),
            b.mover
                .as_ref()
                .map(|m| {
                    let first = m
                        .first_moved
                        .map(|f| format!(", {f} moved first"))
                        .unwrap_or_default();
                    format!("mover {}{first}", name(m.player))
                })
                .unwrap_or_else(|| "?".into()),
            format!("mover {}, fish:{player} moved first", name(*player)),
        ),
        Change::DropViolation { code } => (
            format!("violation {code} dropped"),
            b.violations
                .iter()
                .flatten()
                .find(|v| &v.code == code)
                .map(|v| format!("{code} by {}: {}", name(v.player), v.evidence))
                .unwrap_or_else(|| format!("violation {code}")),
            "no such violation".into(),
        ),
    }
}

/// `players`' totals as `Anna 1, Boris -3`.
pub fn totals_text(players: &[String], scores: &[i32]) -> String {
    players
        .iter()
        .zip(scores)
        .map(|(p, s)| format!("{p} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A set-up for tests and benchmarks: `players` players (`P0`, `P1`, …, each its own
/// colour), `moves` moves each, the default items.
pub fn synthetic_game(players: usize, moves: u32) -> Game {
    let players = (0..players)
        .map(|i| crate::config::Player {
            name: format!("P{i}"),
            color: format!("#{:02x}{:02x}40", (i * 37) % 256, 255 - (i * 53) % 256),
        })
        .collect();
    Game::new(players, moves, crate::config::Items::default_set())
}

/// A record of `shots` shots for `game` on `table` (a 1000 x 700 mm one is assumed:
/// fish lie along y = 150 and y = 550), scored by the rules: each shot a flick by the
/// player whose turn it is that moves their fish (coin in its hole) 5 mm, nothing
/// lost. For tests and benchmarks.
pub fn synthetic_record(game: &Game, table: &Table, shots: usize) -> Result<Record, RulesError> {
    let n = game.player_count().max(1);
    let mut poses = BTreeMap::new();
    for p in 0..n {
        let x = 100.0 + 800.0 * (p / 2) as f64 / n as f64 + 50.0 * (p % 2) as f64;
        let y = if p % 2 == 0 { 150.0 } else { 550.0 };
        poses.insert(ItemId::fish(p), Pose::fish(x, y, 0.0));
        poses.insert(ItemId::coin(p), Pose::coin(x, y));
    }
    let mut out = Vec::with_capacity(shots);
    for i in 0..shots {
        let mover = i % n;
        let step = if (i / n) % 2 == 0 { 5.0 } else { -5.0 };
        let mut end = poses.clone();
        for item in [ItemId::fish(mover), ItemId::coin(mover)] {
            if let Some(p) = end.get_mut(&item) {
                p.x += step;
            }
        }
        let flick = 30 + 100 * i as u64;
        let tracks = end
            .iter()
            .map(|(item, pose)| {
                let mut row = vec![(flick + 10) as f64, pose.x, pose.y];
                row.extend(pose.theta);
                (*item, vec![row])
            })
            .collect();
        out.push(Shot {
            index: i,
            player: mover,
            flick_frame: flick,
            rest_frame: flick + 40,
            first_moved: Some(ItemId::fish(mover)),
            start: poses.clone(),
            end: end.clone(),
            tracks,
            coins_in_holes: (0..n).map(|p| (ItemId::coin(p), ItemId::fish(p))).collect(),
            ..Shot::default()
        });
        poses = end;
    }
    let record = Record::new(
        game.clone(),
        table.corners_mm(),
        crate::record::VideoInfo {
            fps: 30.0,
            frames: 30 + 100 * shots as u64,
            ..Default::default()
        },
        out,
        vec![0; n],
    );
    crate::rules::rescore(game, table, &record)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHEN: &str = "2026-12-02T09:30:00Z";

    fn setup(shots: usize) -> (Game, Table, Record) {
        let game = synthetic_game(2, 50);
        let table = Table::rectangle(1000.0, 700.0);
        let rec = synthetic_record(&game, &table, shots).expect("scores");
        (game, table, rec)
    }

    fn req(shot: usize, change: Change) -> Request {
        Request {
            shot,
            change,
            why: "the referee saw it".into(),
        }
    }

    fn json(r: &Record) -> String {
        serde_json::to_string(r).expect("serialises")
    }

    #[test]
    fn a_knocked_off_coin_scores_for_the_mover() {
        let (g, t, rec) = setup(4);
        assert_eq!(rec.scores, vec![0, 0]);
        let out = amend(
            &g,
            &t,
            &rec,
            &[req(
                2,
                Change::Lost {
                    item: ItemId::coin(1),
                },
            )],
            WHEN,
        )
        .expect("amends");
        // Shot 2 is P0's: another player's coin lost is +1 (R5).
        assert_eq!(out.record.shots[2].score, vec![1, 0]);
        assert_eq!(out.scores_after, vec![1, 0]);
        assert_eq!(out.scores_before, vec![0, 0]);
        let shot = &out.record.shots[2];
        assert!(!shot.end.contains_key(&ItemId::coin(1)));
        assert!(!shot.coins_in_holes.contains_key(&ItemId::coin(1)));
        let lost = &shot.lost[0];
        assert_eq!(lost.item, ItemId::coin(1));
        // The exit is on the table's edge.
        assert!(t.signed_distance(lost.exit.point()).abs() < 1e-9);
        let a = &shot.amendments[0];
        assert_eq!((a.number, a.when.as_str()), (1, WHEN));
        assert_eq!(a.scores_after, vec![1, 0]);
        assert!(a
            .before
            .end
            .as_ref()
            .is_some_and(|e| e.contains_key(&ItemId::coin(1))));
        // Losing one's own fish costs one point instead.
        let out = amend(
            &g,
            &t,
            &rec,
            &[req(
                2,
                Change::Lost {
                    item: ItemId::fish(0),
                },
            )],
            WHEN,
        )
        .expect("amends");
        assert_eq!(out.record.shots[2].score, vec![-1, 0]);
    }

    #[test]
    fn contradictions_are_refused_with_the_reason() {
        let (g, t, rec) = setup(4);
        let lost = amend(
            &g,
            &t,
            &rec,
            &[req(
                1,
                Change::Lost {
                    item: ItemId::coin(0),
                },
            )],
            WHEN,
        )
        .expect("amends")
        .record;
        let refused = |rec: &Record, r: Request, needle: &str| {
            let e = amend(&g, &t, rec, &[r], WHEN)
                .expect_err(needle)
                .to_string();
            assert!(e.contains(needle), "{needle:?} not in {e:?}");
            assert!(!e.contains('\n'), "one line: {e}");
        };
        refused(
            &lost,
            req(
                1,
                Change::Lost {
                    item: ItemId::coin(0),
                },
            ),
            "already lost",
        );
        refused(
            &rec,
            req(
                9,
                Change::Lost {
                    item: ItemId::coin(0),
                },
            ),
            "shot 9 does not exist",
        );
        refused(
            &rec,
            req(
                1,
                Change::Lost {
                    item: ItemId::coin(5),
                },
            ),
            "coin:5 does not exist",
        );
        refused(
            &rec,
            req(
                1,
                Change::NotLost {
                    item: ItemId::coin(0),
                },
            ),
            "is not lost",
        );
        refused(
            &lost,
            req(
                1,
                Change::Exit {
                    item: ItemId::coin(0),
                    exit: Pose::coin(500.0, 350.0),
                },
            ),
            "from the table's edge",
        );
        let fish_lost = amend(
            &g,
            &t,
            &rec,
            &[req(
                1,
                Change::Lost {
                    item: ItemId::fish(1),
                },
            )],
            WHEN,
        )
        .expect("amends")
        .record;
        refused(
            &fish_lost,
            req(
                1,
                Change::CoinIn {
                    coin: ItemId::coin(0),
                    fish: ItemId::fish(1),
                },
            ),
            "fish:1 is off the table",
        );
        refused(
            &rec,
            req(1, Change::Mover { player: 7 }),
            "player 7 does not exist",
        );
        refused(
            &rec,
            req(1, Change::DropViolation { code: "2.1".into() }),
            "no violation 2.1",
        );
        let mut no_why = req(
            1,
            Change::Lost {
                item: ItemId::coin(0),
            },
        );
        no_why.why = "  ".into();
        refused(&rec, no_why, "needs a reason");
        // Several at once: all or none.
        let e = amend(
            &g,
            &t,
            &rec,
            &[
                req(
                    1,
                    Change::Lost {
                        item: ItemId::coin(0),
                    },
                ),
                req(
                    1,
                    Change::Lost {
                        item: ItemId::coin(0),
                    },
                ),
            ],
            WHEN,
        );
        assert!(e.is_err());
    }

    #[test]
    fn undo_gives_back_the_record_exactly() {
        let (g, t, rec) = setup(6);
        let once = amend(
            &g,
            &t,
            &rec,
            &[req(
                2,
                Change::Lost {
                    item: ItemId::fish(1),
                },
            )],
            WHEN,
        )
        .expect("amends")
        .record;
        assert_ne!(json(&once), json(&rec));
        let twice = amend(&g, &t, &once, &[req(4, Change::Mover { player: 1 })], WHEN)
            .expect("amends")
            .record;
        assert_eq!(next_number(&twice), 3);
        let back = undo(&g, &t, &twice, 2).expect("undoes").record;
        assert_eq!(json(&back), json(&once));
        let back = undo(&g, &t, &back, 1).expect("undoes").record;
        assert_eq!(json(&back), json(&rec));
        // Undoing the first of two keeps the second, as if made alone.
        let alone = amend(&g, &t, &rec, &[req(4, Change::Mover { player: 1 })], WHEN)
            .expect("amends")
            .record;
        let first_undone = undo(&g, &t, &twice, 1).expect("undoes").record;
        let mut a = alone.clone();
        // Same change, same shot; only its number differs.
        a.shots[4].amendments[0].number = 2;
        assert_eq!(json(&first_undone), json(&a));
        let e = undo(&g, &t, &rec, 1).expect_err("none");
        assert!(e.to_string().contains("amendment 1 does not exist"), "{e}");
    }

    #[test]
    fn an_undo_that_would_break_a_later_amendment_is_refused() {
        let (g, t, rec) = setup(4);
        let out = amend(
            &g,
            &t,
            &rec,
            &[
                req(
                    1,
                    Change::Lost {
                        item: ItemId::coin(0),
                    },
                ),
                req(
                    1,
                    Change::Exit {
                        item: ItemId::coin(0),
                        exit: Pose::coin(1000.0, 300.0),
                    },
                ),
            ],
            WHEN,
        )
        .expect("amends")
        .record;
        let e = undo(&g, &t, &out, 1).expect_err("the exit needs the loss");
        assert!(e.to_string().contains("undo 2 first"), "{e}");
        let back = undo(&g, &t, &out, 2).and_then(|o| undo(&g, &t, &o.record, 1));
        assert_eq!(json(&back.expect("undoes").record), json(&rec));
    }

    #[test]
    fn an_amended_loss_carries_its_duties_into_later_shots() {
        let (g, t, mut rec) = setup(4);
        // The camera lost sight of coin:1 in shot 0: gone unseen from then on.
        for (k, shot) in rec.shots.iter_mut().enumerate() {
            if k > 0 {
                shot.start.remove(&ItemId::coin(1));
            }
            shot.end.remove(&ItemId::coin(1));
            shot.coins_in_holes.remove(&ItemId::coin(1));
            shot.tracks.remove(&ItemId::coin(1));
        }
        let rec = crate::rules::rescore(&g, &t, &rec).expect("scores");
        assert_eq!(rec.scores, vec![0, 0]);
        let out = amend(
            &g,
            &t,
            &rec,
            &[req(
                0,
                Change::Lost {
                    item: ItemId::coin(1),
                },
            )],
            WHEN,
        )
        .expect("amends");
        let shots = &out.record.shots;
        // Shot 0: P0 +1 for Boris's coin; a duty to put it back.
        assert_eq!(shots[0].score, vec![1, 0]);
        assert!(shots[0].put_back.iter().any(|p| p.item == ItemId::coin(1)));
        // Shots 1 and 3 are Boris's moves with his coin still off the table: R7 −1 each.
        assert_eq!(shots[1].score, vec![0, -1]);
        assert_eq!(shots[3].score, vec![0, -1]);
        assert!(shots[2].put_back.iter().any(|p| p.item == ItemId::coin(1)));
        assert_eq!(out.scores_after, vec![1, -2]);
        assert_eq!(
            out.shots_changed
                .iter()
                .map(|c| c.index)
                .collect::<Vec<_>>(),
            vec![0, 1, 3]
        );
    }

    #[test]
    fn a_mover_out_of_turn_moves_the_turn_and_a_dropped_violation_stays_dropped() {
        let (g, t, mut rec) = setup(5);
        // P0 flicked shots 0 and 1, then the turn went on: the camera saw these fish
        // move first, and `analyse` named the movers by the turn (0, 1, 0, 1, 0).
        for (shot, first) in rec.shots.iter_mut().zip([0, 0, 1, 0, 1]) {
            shot.first_moved = Some(ItemId::fish(first));
        }
        let rec = crate::rules::rescore(&g, &t, &rec).expect("scores");
        let codes = |r: &Record| -> Vec<Vec<String>> {
            r.shots
                .iter()
                .map(|s| s.violations.iter().map(|v| v.code.clone()).collect())
                .collect()
        };
        assert_eq!(
            codes(&rec),
            [
                vec![],
                vec!["1.1"; 1],
                vec!["1.1"],
                vec!["1.1"],
                vec!["1.1"]
            ]
        );
        // The referee: shot 1 was P0's, out of turn (R11 3).
        let out = amend(&g, &t, &rec, &[req(1, Change::Mover { player: 0 })], WHEN)
            .expect("amends")
            .record;
        // The turn stays with P1: the later shots follow it, and their fish fit.
        let movers: Vec<usize> = out.shots.iter().map(|s| s.player).collect();
        assert_eq!(movers, vec![0, 0, 1, 0, 1]);
        assert_eq!(codes(&out), [vec![], vec!["3"], vec![], vec![], vec![]]);
        assert_eq!(
            out.shots[1].amendments[0].before.later_players,
            [(2, 0), (3, 1), (4, 0)].into()
        );
        let dropped = amend(
            &g,
            &t,
            &out,
            &[req(1, Change::DropViolation { code: "3".into() })],
            WHEN,
        )
        .expect("amends")
        .record;
        assert!(dropped.shots[1].violations.is_empty());
        // `fishtrack score` re-runs the rules: the drop holds.
        let again = crate::rules::rescore(&g, &t, &dropped).expect("scores");
        assert_eq!(json(&again), json(&dropped));
        // Without the mover amendment there is no violation 3 left to drop.
        let e = undo(&g, &t, &dropped, 1).expect_err("amendment 2 rests on 1");
        assert!(e.to_string().contains("no violation 3"), "{e}");
        let back = undo(&g, &t, &dropped, 2).expect("undoes").record;
        let back = undo(&g, &t, &back, 1).expect("undoes").record;
        assert_eq!(json(&back), json(&rec));
    }

    #[test]
    fn a_coin_put_in_a_hole_moves_into_it() {
        let (g, t, rec) = setup(3);
        // Shot 1: coin:0 lies in fish:0; the referee says it is in fish:1's hole
        // (which holds coin:1: refused), then once coin:1 is lost, accepted.
        let e = amend(
            &g,
            &t,
            &rec,
            &[req(
                1,
                Change::CoinIn {
                    coin: ItemId::coin(0),
                    fish: ItemId::fish(1),
                },
            )],
            WHEN,
        )
        .expect_err("the hole is taken");
        assert!(e.to_string().contains("already holds coin:1"), "{e}");
        let out = amend(
            &g,
            &t,
            &rec,
            &[
                req(
                    1,
                    Change::Lost {
                        item: ItemId::coin(1),
                    },
                ),
                req(
                    1,
                    Change::CoinIn {
                        coin: ItemId::coin(0),
                        fish: ItemId::fish(1),
                    },
                ),
            ],
            WHEN,
        )
        .expect("amends")
        .record;
        let s = &out.shots[1];
        assert_eq!(
            s.coins_in_holes.get(&ItemId::coin(0)),
            Some(&ItemId::fish(1))
        );
        let (c, f) = (s.end[&ItemId::coin(0)], s.end[&ItemId::fish(1)]);
        assert_eq!((c.x, c.y), (f.x, f.y));
        let (what, before, after) = describe(&s.amendments[1], &out.players);
        assert_eq!(what, "coin:0 in fish:1's hole");
        assert_eq!(before, "in fish:0's hole");
        assert_eq!(after, "in fish:1's hole");
    }

    #[test]
    fn a_patch_round_trips_through_json() {
        let text = r#"{ "version": 1, "amendments": [
            { "shot": 3, "what": "lost", "item": "coin:1", "why": "fell" },
            { "shot": 3, "what": "exit", "item": "coin:1", "exit": {"x": 1000, "y": 312}, "why": "seen" },
            { "shot": 2, "what": "coin-in", "coin": "coin:0", "fish": "fish:1", "why": "x" },
            { "shot": 2, "what": "mover", "player": 1, "why": "x" },
            { "shot": 2, "what": "drop-violation", "code": "2.1", "why": "x" },
            { "shot": 2, "what": "not-lost", "item": "fish:0", "why": "x" } ] }"#;
        let p: Patch = serde_json::from_str(text).expect("parses");
        p.validate().expect("valid");
        assert_eq!(p.amendments.len(), 6);
        assert_eq!(
            p.amendments[1].change,
            Change::Exit {
                item: ItemId::coin(1),
                exit: Pose::coin(1000.0, 312.0)
            }
        );
        let back: Patch =
            serde_json::from_str(&serde_json::to_string(&p).expect("writes")).expect("reads");
        assert_eq!(back, p);
        let bad: Patch =
            serde_json::from_str(r#"{"version": 2, "amendments": []}"#).expect("parses");
        assert!(bad.validate().is_err());
    }

    #[test]
    fn a_record_with_bad_amendments_is_refused_at_load() {
        let (g, t, rec) = setup(3);
        let mut out = amend(
            &g,
            &t,
            &rec,
            &[req(
                1,
                Change::Lost {
                    item: ItemId::coin(0),
                },
            )],
            WHEN,
        )
        .expect("amends")
        .record;
        assert_eq!(out.validate(), Ok(()));
        let mut dup = out.clone();
        let a = dup.shots[1].amendments[0].clone();
        dup.shots[2].amendments.push(a);
        assert!(dup
            .validate()
            .unwrap_err()
            .contains("amendment numbers must be distinct"));
        out.shots[1].amendments[0].change = Change::Lost {
            item: ItemId::coin(9),
        };
        assert!(out.validate().unwrap_err().contains("coin:9"));
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn change(kind: u8, a: usize, b: usize, x: f64) -> Change {
            let item = |k: usize| {
                if k % 2 == 0 {
                    ItemId::fish(k / 2 % 2)
                } else {
                    ItemId::coin(k / 2 % 2)
                }
            };
            match kind % 6 {
                0 => Change::Lost { item: item(a) },
                1 => Change::NotLost { item: item(a) },
                2 => Change::Exit {
                    item: item(a),
                    exit: Pose::coin(1000.0, x),
                },
                3 => Change::CoinIn {
                    coin: ItemId::coin(a % 2),
                    fish: ItemId::fish(b % 2),
                },
                4 => Change::Mover { player: b % 2 },
                _ => Change::DropViolation { code: "3".into() },
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            /// Any accepted amendments, then undoing them from the last, give back the
            /// record byte for byte; a refused one changes nothing.
            #[test]
            fn amend_then_undo_is_the_identity(
                steps in proptest::collection::vec((0u8..6, 0usize..4, 0usize..4, 0usize..6, 10.0f64..690.0), 1..5)
            ) {
                let (g, t, rec) = setup(6);
                let mut cur = rec.clone();
                let mut made = Vec::new();
                for (kind, a, b, shot, x) in steps {
                    match amend(&g, &t, &cur, &[req(shot, change(kind, a, b, x))], WHEN) {
                        Ok(out) => {
                            prop_assert_eq!(out.record.validate(), Ok(()));
                            made.push(out.amendments[0].1.number);
                            cur = out.record;
                        }
                        Err(AmendError::Contradiction { .. }) => {}
                        Err(e) => prop_assert!(false, "unexpected error {e}"),
                    }
                }
                for k in made.iter().rev() {
                    cur = undo(&g, &t, &cur, *k).map_err(|e| TestCaseError::fail(e.to_string()))?.record;
                }
                prop_assert_eq!(json(&cur), json(&rec));
            }
        }
    }
}
