//! The rules engine (RULES.md R2–R11), pure: no I/O, no OpenCV. Given the set-up,
//! the table and one observed shot (record.rs), it keeps the match state (move
//! order and count, whose move it is, scores — R3), scores the shot (R5, R7 fines,
//! R11 fines and annulment), finds the legal put-back pose of every lost fish (R6,
//! R9) and the verdict on every lost coin (R8), orders the put-backs (R9, R10),
//! and flags the camera-visible violations (R11 codes 1.1, 2.1, 2.2, 2.3, 3, 4.2, 5)
//! from the evidence in the record. Uses: model, config, geometry, record.
//!
//! Entry points: [`MatchState::new`], [`judge_shot`] (one shot), [`rescore`] (a
//! whole record), [`fish_put_back_pose`] and [`coin_put_back_verdict`] (for the
//! simulator, which puts lost items back in whole matches).
//!
//! Readings of the rules that the text leaves open, decided here:
//! - R11 1.1 vs 3: `Shot.player` is the player who made the move. If it is not the
//!   player whose turn it is, that is code 3 (the move does not count toward the turn
//!   order). If it is, but the first item set moving (`first_moved`) is not their
//!   fish, that is code 1.1 (the move counts). Either annuls the move's positive points.
//! - R7: a player is fined −1 for each of their own (counted) moves begun while their
//!   coin is still off the table, whether or not it could have been put back.
//! - R6a "on the table": wholly on the table if any such pose exists, else at least
//!   the tag's centre of mass and the hole over the table (it cannot fall).
//! - 4.2: the camera cannot see whose hand moved an item between moves; it is charged
//!   to the player about to move, and the evidence says so.
//! - A violation a referee dropped (`Shot.amendments`, `drop-violation`, see
//!   `crate::amend`) is not flagged: no fine, no annulment, not counted for `repeat`.

mod coin;
mod evidence;
mod judge;
mod putback;
mod scene;
mod state;

pub use coin::{coin_put_back_verdict, CoinPutBack, Verdict, STACKING_TOLERANCE_MM};
pub use judge::{
    judge_shot, validate_shot, PointEntry, ShotJudgement, DISTURB_TOLERANCE_MM, MAX_MOVE_SECONDS,
};
pub use putback::{
    check_fish_pose, contact_position, fish_put_back_pose, fish_put_back_pose_with,
    normalise_angle, FishPutBack, SearchParams, EDGE_TARGET_GAP_MM, EDGE_TOUCH_MM,
    OBSERVED_NEAR_MM, OBSERVED_TOLERANCE_MM, PLACE_CLEARANCE_MM,
};
pub use scene::{fish_fish_penetration, shape_of, Obstacles, Scene, Shape};
pub use state::MatchState;

use crate::config::Game;
use crate::geometry::Table;
use crate::model::{ItemId, PlayerIdx};
use crate::record::Record;

/// Why the rules cannot judge a record: it names players or items the game does
/// not have, or holds impossible numbers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error("shot {shot}: player {player} does not exist (the game has {players} players)")]
    UnknownPlayer {
        shot: usize,
        player: PlayerIdx,
        players: usize,
    },
    #[error("shot {shot}: unknown item `{item}` (the game has {players} players, so items fish:0..{last} and coin:0..{last})", last = players.saturating_sub(1))]
    UnknownItem {
        shot: usize,
        item: ItemId,
        players: usize,
    },
    #[error("shot {shot}: {item} has a pose that is not a finite number")]
    BadPose { shot: usize, item: ItemId },
    #[error("the record names {record} players but the game has {game}")]
    PlayerCount { record: usize, game: usize },
    #[error("invalid game: {0}")]
    InvalidGame(String),
}

/// Re-runs the rules on every shot of a record: fills each shot's `score`,
/// `put_back` and `violations`, and the record's `scores` (totals).
pub fn rescore(game: &Game, table: &Table, record: &Record) -> Result<Record, RulesError> {
    rescore_detailed(game, table, record).map(|(r, _, _)| r)
}

/// [`rescore`] that also returns each shot's full judgement (with the points
/// breakdown) and the final state: what `fishtrack score` prints.
pub fn rescore_detailed(
    game: &Game,
    table: &Table,
    record: &Record,
) -> Result<(Record, Vec<ShotJudgement>, MatchState), RulesError> {
    game.validate().map_err(RulesError::InvalidGame)?;
    if record.players.len() != game.player_count() {
        return Err(RulesError::PlayerCount {
            record: record.players.len(),
            game: game.player_count(),
        });
    }
    let mut out = record.clone();
    let mut state = MatchState::new(game).with_fps(record.video.fps);
    let mut all = Vec::with_capacity(out.shots.len());
    for shot in out.shots.iter_mut() {
        let (next, judgement) = judge_shot(game, table, &state, shot)?;
        shot.score = judgement.score.clone();
        shot.put_back = judgement.put_back.clone();
        shot.violations = judgement.violations.clone();
        all.push(judgement);
        state = next;
    }
    out.scores = state.scores.clone();
    Ok((out, all, state))
}
