//! How sure the rules' own calls are: each put-back duty and each violation gets a
//! confidence and its evidence ([`Evidence`], record version 2), computed from what
//! the call rests on — the observation calls of the shot (`Shot::decisions`, made by
//! `shots`) it depends on, and the margins of its own thresholds (how far a disturbed
//! item moved beyond the tolerance, how long past the limit a move took). A shot
//! without observation decisions (a version-1 record re-scored) gets none here
//! either, so an old record stays as it was. Uses: model, geometry, record.

use super::judge::{DISTURB_TOLERANCE_MM, MAX_MOVE_SECONDS};
use super::putback::OBSERVED_TOLERANCE_MM;
use super::state::MatchState;
use crate::model::ItemId;
use crate::record::{seen_factor, sure, Call, Evidence, PutBack, Shot, Violation};

/// How precisely the tracker places a resting item (mm): the scale of a margin to a
/// distance threshold between two rest poses.
const REST_PRECISION_MM: f64 = 1.5;
/// How precisely a moment is known from frames (s): about a frame at 30 fps, doubled.
const TIME_PRECISION_S: f64 = 0.07;

/// The least sure observation call of `shot` about `item` of the kinds given, if any.
fn weakest<'a>(shot: &'a Shot, item: ItemId, calls: &[Call]) -> Option<&'a Evidence> {
    shot.decisions
        .iter()
        .filter(|d| calls.contains(&d.call) && (d.item == item || d.other == Some(item)))
        .map(|d| &d.evidence)
        .min_by(|a, b| a.confidence.total_cmp(&b.confidence))
}

/// Sets `decision` on every put-back and violation of a judged shot.
pub(super) fn annotate(
    state: &MatchState,
    shot: &Shot,
    put_back: &mut [PutBack],
    violations: &mut [Violation],
) {
    if shot.decisions.is_empty() {
        return;
    }
    for p in put_back.iter_mut() {
        p.decision = Some(put_back_evidence(state, shot, p));
    }
    for v in violations.iter_mut() {
        v.decision = Some(violation_evidence(state, shot, v));
    }
}

/// A duty is as sure as the loss it follows (for an item lost in this shot) and the
/// rest poses it was placed among: the own fish's hole for a coin (R8), the exit for
/// a fish (R6).
fn put_back_evidence(state: &MatchState, shot: &Shot, p: &PutBack) -> Evidence {
    let lost = weakest(shot, p.item, &[Call::Lost, Call::LostUnseen]);
    let mut conf = lost.map_or(1.0, |e| e.confidence);
    let mut frames: Vec<u64> = lost.map(|e| e.frames.clone()).unwrap_or_default();
    let mut ev_measured: Vec<(&str, f64)> = Vec::new();
    if let Some(e) = lost {
        ev_measured.push(("lost_confidence", e.confidence));
    }
    let why;
    if p.item.is_fish() {
        let exit = weakest(shot, p.item, &[Call::Exit]);
        if let Some(e) = exit {
            conf = conf.min(e.confidence);
            frames.extend(&e.frames);
            ev_measured.push(("exit_confidence", e.confidence));
        }
        why = format!(
            "{} goes back by {} from its exit{}",
            p.item,
            p.rule,
            if exit.is_some_and(|e| e.confidence < lost.map_or(1.0, |l| l.confidence)) {
                ", which was extrapolated"
            } else {
                ""
            }
        );
    } else {
        // The verdict depends on the own fish at rest: whether it lies on the table,
        // and what lies in or on its hole.
        let fish = ItemId::fish(p.item.owner);
        let around = weakest(
            shot,
            fish,
            &[
                Call::Lost,
                Call::LostUnseen,
                Call::CoinIn,
                Call::CoinOut,
                Call::Stacking,
                Call::OnTable,
            ],
        );
        if let Some(e) = around {
            conf = conf.min(e.confidence);
            frames.extend(&e.frames);
            ev_measured.push(("own_fish_confidence", e.confidence));
        }
        let in_doubt = shot.doubt.contains(&fish);
        if in_doubt {
            // R8e: the verdict is `impossible` because the fish's rest is in doubt;
            // that is as sure as the doubt is real.
            ev_measured.push(("own_fish_in_doubt", 1.0));
        }
        why = format!(
            "{} is {} ({}): {}",
            p.item,
            p.verdict.as_deref().unwrap_or("decided"),
            p.rule,
            if in_doubt {
                format!("{fish}'s rest is in doubt")
            } else {
                format!("from {fish}'s rest pose")
            }
        );
    }
    let still_off =
        !shot.lost.iter().any(|l| l.item == p.item) && state.off_table.contains(&p.item);
    if still_off {
        ev_measured.push(("still_off_table", 1.0));
    }
    ev_measured
        .into_iter()
        .fold(Evidence::new(conf, why).at(frames), |e, (k, v)| {
            e.with(k, v)
        })
}

fn violation_evidence(state: &MatchState, shot: &Shot, v: &Violation) -> Evidence {
    let interlude = shot.before.as_ref();
    match v.code.as_str() {
        "1.1" | "3" => {
            let first = shot
                .decisions
                .iter()
                .find(|d| d.call == Call::FirstMoved)
                .map(|d| &d.evidence);
            let conf = first.map_or(0.5, |e| e.confidence);
            let mut e = Evidence::new(
                conf,
                format!(
                    "{}; rests on which item moved first{}",
                    v.evidence,
                    if first.is_none() { " (not seen)" } else { "" }
                ),
            )
            .at([v.frame]);
            if let Some(f) = first {
                e = e.at(f.frames.iter().copied());
                for (k, x) in &f.measured {
                    e = e.with(k, *x);
                }
            }
            e
        }
        "5" => {
            let ready = interlude
                .and_then(|b| b.ready_frame)
                .or(state.last_rest_frame);
            let fps = state.fps.unwrap_or(30.0);
            let secs = ready.map_or(0.0, |r| shot.flick_frame.saturating_sub(r) as f64 / fps);
            Evidence::new(
                sure(secs - MAX_MOVE_SECONDS, TIME_PRECISION_S),
                format!("{secs:.1} s from ready to the flick, the limit {MAX_MOVE_SECONDS} s"),
            )
            .at(ready.into_iter().chain([shot.flick_frame]))
            .with("delay_s", secs)
        }
        _ => {
            // A disturbance (2.1, 4.2): how far beyond the tolerance the item moved.
            let disturbed = interlude.and_then(|b| {
                b.disturbed
                    .iter()
                    .filter(|d| d.frame == v.frame && d.distance_mm >= DISTURB_TOLERANCE_MM)
                    .min_by(|a, b| a.distance_mm.total_cmp(&b.distance_mm))
            });
            if let (Some(d), "2.1" | "4.2") = (disturbed, v.code.as_str()) {
                let e = Evidence::new(
                    sure(d.distance_mm - DISTURB_TOLERANCE_MM, REST_PRECISION_MM),
                    format!(
                        "{} moved {:.1} mm between moves (tolerance {DISTURB_TOLERANCE_MM} mm)",
                        d.item, d.distance_mm
                    ),
                )
                .at([d.frame])
                .with("moved_mm", d.distance_mm)
                .with("tolerance_mm", DISTURB_TOLERANCE_MM);
                return no_surer_than_identity(shot, d.item, e);
            }
            let placed = interlude.and_then(|b| {
                b.placed
                    .iter()
                    .find(|p| p.frame == v.frame && p.item.owner == v.player)
            });
            match placed {
                // A put-back seen: how far it lies from the duty's pose (a fish's
                // legal pose, a coin's hole), beyond the placing tolerance.
                Some(p) => {
                    let duty = state.duties.iter().find(|d| d.item == p.item);
                    // Judged against the duty's pose, the call is no surer than that
                    // pose: a fish's legal pose follows its exit, and an exit
                    // extrapolated or guessed may lie tens of mm from where it left.
                    let duty_sure = duty
                        .and_then(|d| d.decision.as_ref())
                        .map_or(1.0, |e| e.confidence);
                    let (conf, off) = match duty.and_then(|d| d.pose) {
                        Some(q) => {
                            let off = (q.point() - p.pose.point()).norm();
                            (
                                sure(off - OBSERVED_TOLERANCE_MM, REST_PRECISION_MM).min(duty_sure),
                                Some(off),
                            )
                        }
                        // No legal pose (or not lost): the call rests on the order
                        // and identity of what was seen placed, each sighting one frame.
                        None => (seen_factor(2), None),
                    };
                    let mut e = Evidence::new(conf, v.evidence.clone()).at([p.frame]);
                    if let Some(off) = off {
                        e = e
                            .with("off_duty_pose_mm", off)
                            .with("tolerance_mm", OBSERVED_TOLERANCE_MM)
                            .with("duty_confidence", duty_sure);
                    }
                    no_surer_than_identity(shot, p.item, e)
                }
                // Not put back before the flick (2.2, 2.3): as sure as the item is
                // absent, which an unidentified item of its kind on the table
                // makes doubtful, and as long as the table was watched without it.
                None => {
                    let item = state
                        .duties
                        .iter()
                        .find(|d| d.item.owner == v.player && !shot.start.contains_key(&d.item))
                        .map(|d| d.item);
                    let lookalikes = shot
                        .unknown
                        .iter()
                        .filter(|u| {
                            item.is_none_or(|i| u.kind == if i.is_fish() { "fish" } else { "coin" })
                                && u.owners.contains(&v.player)
                        })
                        .count();
                    let watched = state
                        .last_rest_frame
                        .map_or(0, |r| shot.flick_frame.saturating_sub(r));
                    let fps = state.fps.unwrap_or(30.0);
                    let conf = sure(watched as f64 / fps - 1.0, 0.5)
                        * if lookalikes > 0 { 0.5 } else { 1.0 };
                    Evidence::new(
                        conf,
                        format!(
                            "{}; not seen on the table in the {watched} frames before the flick{}",
                            v.evidence,
                            if lookalikes > 0 {
                                ", but an item of unknown owner was"
                            } else {
                                ""
                            }
                        ),
                    )
                    .at([v.frame])
                    .with("watched_frames", watched as f64)
                    .with("unidentified_items", lookalikes as f64)
                }
            }
        }
    }
}

/// A violation about what one item did (moved between moves, put back off its
/// pose) is no surer than that the track seen doing it was that item
/// (`shot.identity`, record version 3): a swapped track moves the wrong item.
fn no_surer_than_identity(shot: &Shot, item: ItemId, e: Evidence) -> Evidence {
    match shot.identity.get(&item) {
        Some(id) => e.no_surer_than_identity(item, id),
        None => e,
    }
}
