//! The match state carried from shot to shot (R3, R7): whose move it is, how many
//! moves each player has made, the scores, the table at the last rest, which items
//! are off the table and what must be put back. Uses: config, model, record, scene.

use super::scene::Scene;
use crate::config::Game;
use crate::geometry::Point;
use crate::model::{FrameIdx, ItemId, PlayerIdx};
use crate::record::{PutBack, StartState};
use std::collections::{BTreeMap, BTreeSet};

/// Everything the rules need to know about the match before the next shot.
#[derive(Debug, Clone)]
pub struct MatchState {
    /// Number of players (move order = index order).
    pub players: usize,
    pub moves_per_player: u32,
    /// Moves each player has made (out-of-turn moves do not count).
    pub moves_made: Vec<u32>,
    /// Running totals.
    pub scores: Vec<i32>,
    /// Whose move it is next (R3).
    pub next_player: PlayerIdx,
    /// Shots judged so far.
    pub shots_judged: usize,
    /// The table at the last shot's rest (before any put-back); `None` before the
    /// first shot.
    pub scene: Option<Scene>,
    /// Items lost and not yet back on the table.
    pub off_table: BTreeSet<ItemId>,
    /// Where each lost fish left the table (for R6b/c).
    pub exits: BTreeMap<ItemId, Point>,
    /// The put-back duties found after the last shot, in put-back order (R9/R10).
    pub duties: Vec<PutBack>,
    /// Violations flagged so far per player (the `repeat` fine policy).
    pub violations: Vec<u32>,
    /// The frame at which the last shot came to rest.
    pub last_rest_frame: Option<FrameIdx>,
    /// Frames per second of the video, for the 30 s limit (R11 code 5).
    pub fps: Option<f64>,
}

impl MatchState {
    /// The state at the start of a match (R2): every item on the table, player 0 to move.
    pub fn new(game: &Game) -> MatchState {
        let n = game.player_count();
        MatchState {
            players: n,
            moves_per_player: game.moves_per_player,
            moves_made: vec![0; n],
            scores: vec![0; n],
            next_player: 0,
            shots_judged: 0,
            scene: None,
            off_table: BTreeSet::new(),
            exits: BTreeMap::new(),
            duties: Vec::new(),
            violations: vec![0; n],
            last_rest_frame: None,
            fps: None,
        }
    }

    /// Knows the video's frame rate (enables the 30 s delay check); a non-positive or
    /// non-finite rate is ignored.
    pub fn with_fps(mut self, fps: f64) -> MatchState {
        self.fps = (fps.is_finite() && fps > 0.0).then_some(fps);
        self
    }

    /// A match picked up mid-way (`state.json`): the items missing from `poses` are
    /// off the table. How many moves each player made is not recorded, so the round
    /// is assumed to have begun with player 0 (those before `next_player` moved once).
    pub fn from_start(game: &Game, start: &StartState) -> MatchState {
        let mut state = MatchState::new(game);
        let next = start
            .next_player
            .unwrap_or(0)
            .min(state.players.saturating_sub(1));
        state.next_player = next;
        for p in 0..next {
            state.moves_made[p] = 1;
        }
        if let Some(scores) = &start.scores {
            for (s, v) in state.scores.iter_mut().zip(scores) {
                *s = *v;
            }
        }
        for p in 0..state.players {
            for id in [ItemId::fish(p), ItemId::coin(p)] {
                if !start.poses.contains_key(&id) {
                    state.off_table.insert(id);
                }
            }
        }
        state.scene = Some(Scene::from_poses(start.poses.clone()));
        state
    }

    /// Whether every player has made all their moves (end of the match).
    pub fn is_over(&self) -> bool {
        self.moves_made.iter().all(|&m| m >= self.moves_per_player)
    }

    /// Moves made so far by everyone.
    pub fn total_moves(&self) -> u32 {
        self.moves_made.iter().sum()
    }

    /// Records a move by the player whose turn it was and passes the turn on.
    pub(crate) fn advance_turn(&mut self) {
        if self.players == 0 {
            return;
        }
        self.moves_made[self.next_player] += 1;
        self.next_player = (self.next_player + 1) % self.players;
    }
}
