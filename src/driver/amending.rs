//! A referee's amendment made while a match is live (from the scoreboard page), or
//! the undoing of one: made on the shots judged so far by the library's
//! [`crate::amend::amend`] or [`crate::amend::undo`] (exactly as `fishtrack amend`
//! and `fishtrack amend --undo K` make them on a record), the match judged again by
//! the rules ([`crate::rules::rescore_detailed`]), and the running analysis carried on
//! from the new state, so that the next shot is judged from it. What it changed is
//! told as an `amended` event (`undone: true` for an undo) and the changed shots'
//! `shot_record`s (the journal keeps both: a resume goes on from that state, and its
//! record holds the shots as they now are).
//! Uses: amend, record, rules, pipeline, driver's events.

use super::events::{Duty, Event, ScoreChange};
use super::{DriverError, Settings};
use crate::amend::{self, Outcome, Request};
use crate::model::Pose;
use crate::pipeline::Analysis;
use crate::record::{Record, Shot, VideoInfo};
use crate::rules::{rescore_detailed, MatchState};
use std::sync::mpsc::SyncSender;

/// What a referee asks of a live match: an amendment, or undoing one.
#[derive(Debug, Clone, PartialEq)]
pub enum Correction {
    /// An amendment (a patch file's entry, as `fishtrack amend --patch` reads it).
    Amend(Request),
    /// Undo amendment K (its number), as `fishtrack amend --undo K` does: the values
    /// it replaced come back, and the later amendments are made again.
    Undo(u32),
}

/// A correction asked for while the match runs, with when it was asked (UTC, RFC
/// 3339: stamped by the asker, so that a resume that makes a journaled one again
/// stamps it the same) and where its answer goes (one line: what changed, or why
/// nothing did).
#[derive(Debug)]
pub struct AmendAsk {
    pub correction: Correction,
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

/// A correction made: its events in order (the `shot_record`s of the shots it
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

/// Why a match started from a state.json takes no amendment (the answer to one, and
/// `match_ready`'s `amend_refused`, which the page shows in place of its form).
pub(crate) const FROM_STATE: &str = "this match started from a state.json without its earlier shots: amend its record after the match (fishtrack amend)";

/// Makes `ask` (an amendment or an undo) on `shots`, every shot judged so far in
/// order: the first `own` judged before this clip, then `analysis`'s (whole: the
/// driver may keep them in a file, not in `analysis`). On success carries
/// `analysis` on from the new state. One the rules or the record refuse is
/// `Ok(Err(line))` and changes nothing.
pub(crate) fn make(
    settings: &Settings,
    shots: Vec<Shot>,
    own: usize,
    analysis: &mut Analysis,
    fps: f64,
    ask: &AmendAsk,
) -> Result<Result<Made, String>, DriverError> {
    let game = &settings.game;
    let table = &settings.calibration.table;
    let from_first = shots.iter().enumerate().all(|(k, s)| s.index == k);
    let no_shots = shots.is_empty();
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
    // The rules judge a match from its first shot: a clip started from a state.json,
    // without the shots before it, cannot be judged again. (An undo of a number the
    // match does not have is left to the library, whose refusal is `fishtrack amend
    // --undo`'s.)
    let from_state = FROM_STATE;
    let refused = match &ask.correction {
        Correction::Amend(_) if !from_first => Some(from_state),
        Correction::Amend(_) if no_shots => Some("no shot has been judged yet: nothing to amend"),
        Correction::Undo(number)
            if !from_first && record.amendments().iter().any(|(_, a)| a.number == *number) =>
        {
            Some(from_state)
        }
        _ => None,
    };
    if let Some(line) = refused {
        return Ok(Err(line.into()));
    }
    let done = match &ask.correction {
        Correction::Amend(request) => amend::amend(
            game,
            table,
            &record,
            std::slice::from_ref(request),
            &ask.when,
        ),
        Correction::Undo(number) => amend::undo(game, table, &record, *number),
    };
    let out = match done {
        Ok(out) => out,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let undone = matches!(ask.correction, Correction::Undo(_));
    Ok(carry_on(
        settings, own, analysis, &record, &out, undone, &ask.when,
    ))
}

/// Re-scores `out`'s record (as amended, or with an amendment undone), carries
/// `analysis` on from it (its shots from `own` on are the analysis's), and tells it.
fn carry_on(
    settings: &Settings,
    own: usize,
    analysis: &mut Analysis,
    record: &Record,
    out: &Outcome,
    undone: bool,
    when: &str,
) -> Result<Made, String> {
    let (game, table) = (&settings.game, &settings.calibration.table);
    let players = &record.players;
    // The same rules `amend` re-scored with, for what the running analysis needs
    // besides the record: each shot's points and the state after the last.
    let (rescored, judgements, mut state) =
        rescore_detailed(game, table, &out.record).map_err(|e| e.to_string())?;
    // An amendment changes no frame: the running state's last rest is still the one
    // the next move's delay counts from (a record continued is another video's).
    state.last_rest_frame = analysis.state().last_rest_frame;
    let Some((shot, a)) = out.amendments.first().cloned() else {
        return Err("the amendment made no change".into());
    };
    let records: Vec<Shot> = rescored
        .shots
        .iter()
        .zip(&record.shots)
        .filter(|(new, old)| new != old)
        .map(|(new, _)| new.clone())
        .collect();
    analysis.amend_judged(
        rescored.shots[own..].to_vec(),
        judgements[own..].to_vec(),
        state.clone(),
    );
    // The same words as `fishtrack amend` and `fishtrack amend --undo` print.
    let summary = amend::summary(shot, &a, players, undone);
    let line = format!(
        "{}; scores {}",
        amend::told(shot, &a, players, undone),
        amend::totals_text(players, &out.scores_after)
    );
    let rest = rescored
        .shots
        .last()
        .map(|s| s.end.clone())
        .unwrap_or_default();
    let amended = Event::Amended {
        number: a.number,
        undone,
        shot,
        change: a.change.clone(),
        why: a.why.clone(),
        // An amendment's own time; for an undo, when it was undone.
        when: if undone {
            when.to_string()
        } else {
            a.when.clone()
        },
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
    Ok(Made {
        earlier: rescored.shots[..own].to_vec(),
        records,
        amended,
        state,
        line,
    })
}
