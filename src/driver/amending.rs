//! A referee's amendment made while a match is live (from the scoreboard page): made
//! on the shots judged so far by the library's [`crate::amend::amend`] (exactly as
//! `fishtrack amend` makes it on a record), the match judged again by the rules
//! ([`crate::rules::rescore_detailed`]), and the running analysis carried on from the
//! amended state, so that the next shot is judged from it. What it changed is told as
//! an `amended` event and the changed shots' `shot_record`s (the journal keeps both: a
//! resume goes on from the amended state, and its record holds the amended shots).
//! Uses: amend, record, rules, pipeline, driver's events.

use super::events::{Duty, Event, ScoreChange};
use super::{DriverError, Settings};
use crate::amend::{self, Request};
use crate::model::Pose;
use crate::pipeline::Analysis;
use crate::record::{Record, Shot, VideoInfo};
use crate::rules::{rescore_detailed, MatchState};
use std::sync::mpsc::SyncSender;

/// An amendment asked for while the match runs, with when it was asked (UTC, RFC
/// 3339: stamped by the asker, so that a resume that makes a journaled amendment
/// again stamps it the same) and where its answer goes (one line: what changed, or
/// why nothing did).
#[derive(Debug)]
pub struct AmendAsk {
    pub request: Request,
    pub when: String,
    pub answer: Option<SyncSender<Result<String, String>>>,
}

impl AmendAsk {
    /// Sends the answer, if anyone waits for it (a page that gave up does not).
    pub fn answer(&self, result: Result<String, String>) {
        if let Some(tx) = &self.answer {
            let _ = tx.try_send(result);
        }
    }
}

/// An amendment made: its events in order (the `shot_record`s of the shots it
/// changed, then the `amended`), and the state the match goes on from.
pub(crate) struct Made {
    /// The shots judged before this clip, as amended.
    pub earlier: Vec<Shot>,
    pub records: Vec<Shot>,
    pub amended: Event,
    pub state: MatchState,
    /// The answer for the page.
    pub line: String,
}

/// Makes `ask` on the shots `earlier` (judged before this clip) and `analysis`'s, and
/// on success carries `analysis` on from the amended state. An amendment the rules or
/// the record refuse is `Ok(Err(line))` and changes nothing.
pub(crate) fn make(
    settings: &Settings,
    earlier: &[Shot],
    analysis: &mut Analysis,
    fps: f64,
    ask: &AmendAsk,
) -> Result<Result<Made, String>, DriverError> {
    let game = &settings.game;
    let table = &settings.calibration.table;
    let shots: Vec<Shot> = earlier.iter().chain(analysis.shots()).cloned().collect();
    // The rules judge a match from its first shot: a clip started from a state.json,
    // without the shots before it, cannot be judged again.
    if shots.iter().enumerate().any(|(k, s)| s.index != k) {
        return Ok(Err(
            "this match started from a state.json without its earlier shots: amend its record after the match (fishtrack amend)".into(),
        ));
    }
    if shots.is_empty() {
        return Ok(Err("no shot has been judged yet: nothing to amend".into()));
    }
    let players: Vec<String> = game.players.iter().map(|p| p.name.clone()).collect();
    let record = Record::new(
        game.clone(),
        table.corners_mm(),
        VideoInfo {
            fps,
            ..VideoInfo::default()
        },
        shots,
        analysis.state().scores.clone(),
    );
    let out = match amend::amend(
        game,
        table,
        &record,
        std::slice::from_ref(&ask.request),
        &ask.when,
    ) {
        Ok(out) => out,
        Err(e) => return Ok(Err(e.to_string())),
    };
    // The same rules `amend` re-scored with, for what the running analysis needs
    // besides the record: each shot's points and the state after the last.
    let (rescored, judgements, mut state) = match rescore_detailed(game, table, &out.record) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e.to_string())),
    };
    // An amendment changes no frame: the running state's last rest is still the one
    // the next move's delay counts from (a record continued is another video's).
    state.last_rest_frame = analysis.state().last_rest_frame;
    let (number, a) = match out.amendments.first() {
        Some((_, a)) => (a.number, a.clone()),
        None => return Ok(Err("the amendment made no change".into())),
    };
    let records: Vec<Shot> = rescored
        .shots
        .iter()
        .zip(&record.shots)
        .filter(|(new, old)| new != old)
        .map(|(new, _)| new.clone())
        .collect();
    let own = earlier.len();
    analysis.amend_judged(
        rescored.shots[own..].to_vec(),
        judgements[own..].to_vec(),
        state.clone(),
    );
    let (what, before, after) = amend::describe(&a, &players);
    let summary = format!("shot {}: {what}: {before} → {after}", ask.request.shot);
    let line = format!(
        "amendment {number}: {summary}; scores {}",
        amend::totals_text(&players, &out.scores_after)
    );
    let rest = rescored
        .shots
        .last()
        .map(|s| s.end.clone())
        .unwrap_or_default();
    let amended = Event::Amended {
        number,
        shot: ask.request.shot,
        change: a.change.clone(),
        why: a.why.clone(),
        when: a.when.clone(),
        summary,
        scores_before: out.scores_before.clone(),
        scores: state.scores.clone(),
        shots_changed: out
            .shots_changed
            .iter()
            .map(|c| ScoreChange {
                shot: c.index,
                before: c.before.clone(),
                after: c.after.clone(),
            })
            .collect(),
        number_next: state.total_moves() + 1,
        next_mover: state.next_player,
        moves_made: state.moves_made.clone(),
        rest,
        off_table: state.off_table.iter().copied().collect(),
        exits: state
            .exits
            .iter()
            .map(|(k, p)| (*k, Pose::coin(p.x, p.y)))
            .collect(),
        duties: state.duties.iter().map(Duty::from).collect(),
        violations: state.violations.clone(),
        over: state.is_over(),
    };
    Ok(Ok(Made {
        earlier: rescored.shots[..own].to_vec(),
        records,
        amended,
        state,
        line,
    }))
}
