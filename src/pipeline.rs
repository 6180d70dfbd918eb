//! The `analyse` pipeline after the pixels: per-frame detections → tracker → shot
//! cutter → rules engine → `record.json`. Pure: the frames reach it as
//! [`FrameDetections`] (from `detect` on rectified views, or replayed from a JSONL
//! file), so the whole chain can be tested without video.
//! Uses: model, config, geometry, track, shots, rules, record.

use crate::config::Game;
use crate::geometry::Table;
use crate::model::{FrameIdx, ItemId, ItemKind, PlayerIdx};
use crate::record::{Record, Shot, StartState, VideoInfo};
use crate::rules::{judge_shot, MatchState, RulesError, ShotJudgement};
use crate::shots::{ShotConfig, ShotCutter};
use crate::track::{FrameDetections, StrangerTag, TrackError, Tracker, TrackerConfig};
use std::collections::BTreeSet;

/// Why an analysis could not produce a record.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Track(#[from] TrackError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error("the game set-up is invalid: {0}")]
    Game(String),
}

/// An analysis in progress: push every frame's detections in order, then finish.
pub struct Analysis {
    game: Game,
    table: Table,
    tracker: Tracker,
    cutter: ShotCutter,
    shots: Vec<Shot>,
    /// Each shot's judgement (the points with their rules), as `shots`.
    judgements: Vec<ShotJudgement>,
    state: MatchState,
    first_shot_index: usize,
    frames: u64,
    /// Players whose tag colour was seen at least once.
    colours_seen: BTreeSet<PlayerIdx>,
    /// Whole tags of no player's colour, as first reported.
    strangers: Vec<StrangerTag>,
}

impl Analysis {
    /// A new analysis at `fps`; with `start`, identities and the match state come
    /// from it (a clip that begins mid-match).
    pub fn new(
        game: &Game,
        table: Table,
        fps: f64,
        start: Option<&StartState>,
        state: Option<MatchState>,
    ) -> Result<Analysis, PipelineError> {
        game.validate().map_err(PipelineError::Game)?;
        let cfg = TrackerConfig::new(fps, game.player_count(), table.clone(), &game.items)?;
        let shot_cfg = ShotConfig::from_tracker(&cfg);
        let cutter = match start {
            Some(s) => ShotCutter::with_start(shot_cfg, &s.poses),
            None => ShotCutter::new(shot_cfg),
        };
        let tracker = match start {
            Some(s) => Tracker::with_start(cfg, s),
            None => Tracker::at_opening(cfg),
        };
        let state = match (state, start) {
            (Some(s), _) => s,
            (None, Some(s)) => MatchState::from_start(game, s),
            (None, None) => MatchState::new(game),
        }
        .with_fps(fps);
        Ok(Analysis {
            game: game.clone(),
            table,
            tracker,
            cutter,
            shots: Vec::new(),
            judgements: Vec::new(),
            first_shot_index: state.shots_judged,
            state,
            frames: 0,
            colours_seen: BTreeSet::new(),
            strangers: Vec::new(),
        })
    }

    /// One frame's detections; frames must come in order, each exactly once.
    pub fn push(&mut self, frame: FrameIdx, dets: &FrameDetections) -> Result<(), PipelineError> {
        self.frames += 1;
        if self.strangers.is_empty() {
            self.strangers.clone_from(&dets.strangers);
        }
        for f in &dets.fish {
            if let Some((p, _)) = f
                .player_scores
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .filter(|(_, s)| **s > 0.0)
            {
                self.colours_seen.insert(p);
            }
        }
        let tf = self.tracker.update(frame, dets);
        self.cutter.expect_mover(Some(self.state.next_player));
        if let Some(shot) = self.cutter.push(tf) {
            self.judge(shot)?;
        }
        Ok(())
    }

    fn judge(&mut self, mut shot: Shot) -> Result<(), PipelineError> {
        shot.index = self.first_shot_index + self.shots.len();
        // The mover by turn order; who really flicked is `first_moved` (R11 1.1 / 3).
        shot.player = self.state.next_player;
        for u in &mut shot.unknown {
            let kind = if u.kind == "fish" {
                ItemKind::Fish
            } else {
                ItemKind::Coin
            };
            let named = |owner| {
                let item = ItemId { kind, owner };
                shot.start.contains_key(&item)
                    || shot.end.contains_key(&item)
                    || shot.lost.iter().any(|l| l.item == item)
            };
            u.owners = (0..self.game.player_count())
                .filter(|&k| !named(k))
                .collect();
        }
        let (next, judgement) = judge_shot(&self.game, &self.table, &self.state, &shot)?;
        shot.score.clone_from(&judgement.score);
        shot.put_back.clone_from(&judgement.put_back);
        shot.violations.clone_from(&judgement.violations);
        self.state = next;
        self.shots.push(shot);
        self.judgements.push(judgement);
        Ok(())
    }

    /// Whether a shot is in progress: motion fast enough for a flick was seen and has
    /// not come to rest (it may yet turn out not to be a shot).
    pub fn in_shot(&self) -> bool {
        self.cutter.in_shot()
    }

    /// The shots judged so far, in order (a shot is judged the frame it comes to rest).
    pub fn shots(&self) -> &[Shot] {
        &self.shots
    }

    /// The judgement of the `k`-th shot of [`shots`](Self::shots).
    pub fn judgement(&self, k: usize) -> Option<&ShotJudgement> {
        self.judgements.get(k)
    }

    /// Ends the stream: a shot still in progress is cut at the last frame and judged
    /// (see [`ShotCutter::finish`]); [`finish`](Self::finish) then writes the record.
    pub fn close(&mut self) -> Result<(), PipelineError> {
        if let Some(shot) = self.cutter.finish() {
            self.judge(shot)?;
        }
        Ok(())
    }

    /// Frames pushed so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Players whose colour never appeared in any frame.
    pub fn colours_never_seen(&self) -> Vec<PlayerIdx> {
        (0..self.game.player_count())
            .filter(|p| !self.colours_seen.contains(p))
            .collect()
    }

    /// Whole tags seen of a colour no player of the game has.
    pub fn strangers(&self) -> &[StrangerTag] {
        &self.strangers
    }

    /// Replaces the shots judged so far, their judgements and the state after them
    /// with a referee's amended ones (`amend`, judged again by the rules; a live
    /// match amended from its scoreboard): the next shot is judged from `state`.
    /// `shots` are this analysis's own, in the same order.
    pub fn amend_judged(
        &mut self,
        shots: Vec<Shot>,
        judgements: Vec<ShotJudgement>,
        state: MatchState,
    ) {
        debug_assert_eq!(shots.len(), self.shots.len());
        self.shots = shots;
        self.judgements = judgements;
        self.state = state;
    }

    /// Leaves of each shot judged from the `from`-th on, and of its judgement, what
    /// `shed` keeps (a live match keeps its judged shots in a file, and only what
    /// the driver still reads of them here).
    pub fn shed_judged(
        &mut self,
        from: usize,
        mut shed: impl FnMut(&mut Shot, &mut ShotJudgement),
    ) {
        for (shot, judgement) in self.shots.iter_mut().zip(&mut self.judgements).skip(from) {
            shed(shot, judgement);
        }
    }

    /// The match state after the shots judged so far.
    pub fn state(&self) -> &MatchState {
        &self.state
    }

    /// Closes a shot still in progress ([`close`](Self::close)) and writes the record.
    pub fn finish(mut self, video: VideoInfo) -> Result<(Record, MatchState), PipelineError> {
        self.close()?;
        let record = Record::new(
            self.game,
            self.table.corners_mm(),
            video,
            self.shots,
            self.state.scores.clone(),
        );
        Ok((record, self.state))
    }
}
