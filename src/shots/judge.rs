//! Turns the frames of one interlude + shot into a `record::Shot`: when it
//! started and who moved first, start and rest poses, tracks, what left the table
//! and where, what vanished (lost or hidden, and how sure), coins in holes,
//! stacking, and the interlude. Uses: model, geometry, track, record.

use super::evidence;
use super::{Previous, ShotConfig};
use crate::geometry::shapes::{boundary_distance, point_in_polygon};
use crate::geometry::{
    fish_disc_overlap, fish_edge_gap, fish_fish_overlap, Disc, PlacedFish, Point, Vector,
};
use crate::model::{FrameIdx, ItemId, ItemKind, PlayerIdx, Pose};
use crate::record::{
    Call, DisturbedItem, Interlude, LostItem, PlacedItem, Shot, Stacking, TrackRow, UnknownItem,
    UnknownLost,
};
use crate::track::motion::{stopping_distance, time_since_start, time_to_cover};
use crate::track::{
    edge_crossing, ExitEvidence, IdentityOrigin, RemovalReason, TrackEvent, TrackFrame, TrackId,
    TrackState, TrackedItem,
};
use nalgebra::Rotation2;
use std::collections::{BTreeMap, BTreeSet};

/// How fast the items on the table move in the newest frame of a history.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Motion {
    /// The fastest hole centre (or coin), by the filter's speed.
    pub centre_mm_s: f64,
    /// The fastest point of any item: the filter's centre speed plus the turning
    /// speed × the footprint's reach (for the rest test).
    pub speed_mm_s: f64,
    /// The fastest point of any seen item, from its seen poses over the motion
    /// window: distance covered / time (for the start test; the filter's speed lags
    /// a gentle push and knows nothing of turning).
    pub covered_mm_s: f64,
}

/// The motion of the confirmed on-table items seen in the newest frame of
/// `history` or within two frames before it.
///
/// `previous_end`: the items on the table at the previous shot's rest (or the
/// clip's opening), when known. One not among them was off the table then: seen on
/// it now, it was put back by hand.
pub(crate) fn fastest_on_table(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    previous_end: Option<&BTreeMap<ItemId, Pose>>,
) -> Motion {
    let Some(tf) = history.last() else {
        return Motion::default();
    };
    let window = cfg.motion_window();
    let reach = cfg.footprint.reach();
    let mut m = Motion::default();
    // A move over within the window (`step_apart`), and an item that lay still
    // meanwhile: a witness that the camera did not move.
    let (mut stepped, mut witness) = (false, false);
    for t in tf.items.iter().filter(|t| t.state.on_table()) {
        if !(t.seen || t.last_seen.is_some_and(|s| tf.frame.saturating_sub(s) <= 2)) {
            // Gone unseen in flight (blurred past recognition, say), it slides on
            // until friction stops it: the shot is not at rest before that (seed
            // 531046's sweep-037: a tag unseen for 11 frames at 650 mm/s mid-table
            // was judged fallen off at a rest cut 2 frames after it vanished).
            let still_sliding = unseen_still_sliding(cfg, history, t);
            m.speed_mm_s = m.speed_mm_s.max(still_sliding);
            m.centre_mm_s = m.centre_mm_s.max(still_sliding);
            continue;
        }
        let v = t.velocity_mm_s.norm();
        let mut speed = v;
        let tail = |w: &Windowed| match t.kind {
            ItemKind::Fish => w.turn_rad.abs() * reach,
            ItemKind::Coin => 0.0,
        };
        // An item put back is read from when it lay placed: before that, the change
        // where it appeared reads as a hand over part of it, and its readings are of
        // the placing, some millimetres and degrees apart (seed 531046's sweep-013
        // and -028 drawn anew: tags put back by the near edge, read 9 mm and
        // 20 degrees, and turned about 50 mm, off while half hidden, each made a
        // shot of its own).
        let put_back =
            previous_end.is_some_and(|end| t.item.is_some_and(|item| !end.contains_key(&item)));
        let placed = if put_back {
            placed_at(history, t.track)
        } else {
            Some(0)
        };
        if let Some(placed) = placed.filter(|_| t.seen) {
            // An item seen again after a gap (hidden under the hand all through its
            // flight) has covered the way from where it was last seen, however long
            // ago: a tag that flew unseen and showed only at rest, 150 mm away, made
            // no shot.
            if let Some(w) = windowed(cfg, history, t, window, placed)
                .or_else(|| reacquired(cfg, history, t, window, placed))
            {
                m.covered_mm_s = m.covered_mm_s.max((w.moved_mm + tail(&w)) / w.span_s);
            }
            if let Some(a) = step_apart(cfg, history, t, window, placed) {
                stepped |= a.whole && a.nearest > cfg.disturb_mm + cfg.jitter_mm();
                witness |= a.farthest <= cfg.jitter_mm();
            }
        }
        if t.seen {
            // Twice as long for the rest test: the tail's jitter then takes at most
            // half of `still_speed_mm_s`, the filter's centre speed the other half.
            if let Some(w) = windowed(cfg, history, t, 2 * window, 0) {
                speed += tail(&w) / w.span_s;
            }
        }
        m.speed_mm_s = m.speed_mm_s.max(speed);
        m.centre_mm_s = m.centre_mm_s.max(v);
    }
    if stepped && witness {
        m.covered_mm_s = m.covered_mm_s.max(cfg.flick_speed_mm_s);
    }
    m
}

/// How far an item's sightings in the last `window` frames lie from its sightings
/// in the `window` frames before those (one frame between left for a move), the
/// tail's swing counted. `None` when a hand came near it in those frames, or it
/// was not seen on either side.
struct StepApart {
    /// The nearest pair (mm).
    nearest: f64,
    /// The farthest pair (mm).
    farthest: f64,
    /// Seen in each of the last `window` frames and wholly over the table top in
    /// every sighting: a tag over the edge shows only in part, and its reading
    /// jumps as the part beyond is read or not.
    whole: bool,
}

/// [`StepApart`] of `now`'s track. A move over within the window, which its mean
/// speed hides, has every sighting after it farther than a disturbance may move an
/// item plus two readings' jitter from every sighting before it. Under sliding
/// friction an item that slid that far was launched faster than the slowest flick,
/// however soon it stopped (seed 777's sweep-022: a weak flick turned the mover 4
/// degrees and pushed the tag at its tail 3 mm, turning it 5 degrees, all within
/// two frames, and went in as a disturbance). Every pair, so that a tag whose angle
/// is read a few degrees apart from frame to frame (by the edge, or partly hidden)
/// is no move; clear of hands, for a hand coming over a tag misreads it for longer.
/// And only while another item lay still (its farthest pair within the jitter): a
/// knocked camera moves every reading at once.
fn step_apart(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    now: &TrackedItem,
    window: FrameIdx,
    since: FrameIdx,
) -> Option<StepApart> {
    let last = history.last()?;
    let reach = match now.kind {
        ItemKind::Fish => cfg.footprint.reach(),
        ItemKind::Coin => cfg.coin_radius,
    };
    let oldest = last.frame.saturating_sub(2 * window + 1);
    let oldest = put_back_at(history, now.track, oldest)
        .unwrap_or(oldest)
        .max(since);
    let mut after = Vec::new();
    let mut before = Vec::new();
    let mut over_edge = false;
    for tf in history.iter().rev().take_while(|tf| tf.frame >= oldest) {
        let Some(t) = tf.items.iter().find(|x| x.track == now.track) else {
            continue;
        };
        if tf.occluders.iter().any(|o| o.covers(t.pose.point(), reach)) {
            return None;
        }
        if !(t.seen && t.state.on_table()) {
            continue;
        }
        over_edge |= match t.kind {
            ItemKind::Fish => fish_edge_gap(&cfg.table, &placed_fish(cfg, &t.pose)) < 0.0,
            ItemKind::Coin => cfg.table.signed_distance(t.pose.point()) < cfg.coin_radius,
        };
        if tf.frame + window > last.frame {
            after.push(t.pose);
        } else if tf.frame + window < last.frame {
            before.push(t.pose);
        }
    }
    if after.is_empty() || before.is_empty() {
        return None;
    }
    let apart = |a: &Pose, b: &Pose| {
        let tail = match (a.theta, b.theta) {
            (Some(x), Some(y)) => wrap_angle(x - y).abs() * cfg.footprint.reach(),
            _ => 0.0,
        };
        dist(a, b) + tail
    };
    let (nearest, farthest) = after
        .iter()
        .flat_map(|a| before.iter().map(move |b| apart(a, b)))
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), d| {
            (lo.min(d), hi.max(d))
        });
    Some(StepApart {
        nearest,
        farthest,
        whole: after.len() as FrameIdx == window && !over_edge,
    })
}

/// How fast an item unseen since its last sighting still slides now, from its speed
/// then under the friction model; 0 once it would have stopped. Its speed then is what
/// its last two sightings in a row show (at most `max_speed_mm_s`): the filter's
/// speed of an item seen once (a revival, a misread) is a guess, and a tag revived
/// as put back by the edge held the shot open until the next put-back was in it.
fn unseen_still_sliding(cfg: &ShotConfig, history: &[TrackFrame], now: &TrackedItem) -> f64 {
    let (Some(last), Some(seen_at)) = (history.last(), now.last_seen.filter(|&f| f > 0)) else {
        return 0.0;
    };
    let seen_in = |frame: FrameIdx| {
        history
            .get(at_or_before(history, frame))
            .filter(|tf| tf.frame == frame)
            .and_then(|tf| tf.items.iter().find(|x| x.track == now.track && x.seen))
    };
    let (Some(then), Some(before)) = (seen_in(seen_at), seen_in(seen_at - 1)) else {
        return 0.0;
    };
    let step = then.pose.point() - before.pose.point();
    let speed = (step.norm() * cfg.fps).min(cfg.max_speed_mm_s);
    // One whose path leaves the table before friction stops it is judged gone
    // over the edge at the rest (`judge`), not waited for: held open, the shot
    // took in the put-backs after it (seed 531046's sweep-026).
    let stops_at = then.pose.point()
        + step.try_normalize(1e-9).unwrap_or_else(Vector::zeros)
            * stopping_distance(speed, cfg.friction_decel_mm_s2);
    if cfg.table.signed_distance(stops_at) < 0.0 {
        return 0.0;
    }
    let dt = last.frame.saturating_sub(seen_at) as f64 / cfg.fps;
    (speed - cfg.friction_decel_mm_s2 * dt).max(0.0)
}

/// A track's change between its newest sighting and the last one at least
/// `window` frames before it.
struct Windowed {
    span_s: f64,
    moved_mm: f64,
    /// Summed over the sightings in between, each step wrapped, misreads left out.
    turn_rad: f64,
}

/// Only sightings from frame `since` on are read.
fn windowed(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    now: &TrackedItem,
    window: FrameIdx,
    since: FrameIdx,
) -> Option<Windowed> {
    let last = history.last()?;
    // Sightings older than a few windows say nothing about the motion now, nor
    // those from before the item was put back: placed by hand, it did not slide
    // there from where it lay before (seed 777's sweep-022: a coin named in one place
    // and put back 440 mm away in the interlude made a shot of its own).
    let recent = last.frame.saturating_sub(4 * window);
    let oldest = put_back_at(history, now.track, recent)
        .unwrap_or(recent)
        .max(since);
    let mut turn = 0.0;
    let (mut f_next, mut th_next) = (last.frame, now.pose.angle());
    for tf in history.iter().rev().skip(1) {
        if tf.frame < oldest {
            break;
        }
        let Some(t) = tf.items.iter().find(|x| x.track == now.track && x.seen) else {
            continue;
        };
        let dt = (f_next - tf.frame) as f64 / cfg.fps;
        let step = wrap_angle(th_next - t.pose.angle());
        if step.abs() <= cfg.max_turn_rad(dt) {
            turn += step;
        }
        (f_next, th_next) = (tf.frame, t.pose.angle());
        if last.frame - tf.frame >= window {
            return Some(Windowed {
                span_s: (last.frame - tf.frame) as f64 / cfg.fps,
                moved_mm: dist(&now.pose, &t.pose),
                turn_rad: turn,
            });
        }
    }
    None
}

/// The first frame of `history` in which `track` was seen whole on the table (nothing
/// hid part of it), if any.
fn placed_at(history: &[TrackFrame], track: TrackId) -> Option<FrameIdx> {
    history.iter().find_map(|tf| {
        tf.items
            .iter()
            .any(|x| x.track == track && x.seen && x.state.on_table() && !x.partly_hidden)
            .then_some(tf.frame)
    })
}

/// The newest frame of `history`, from `since` on, in which `track` took the identity
/// of an item put back (the tracker's `Origin` event from a put-back).
fn put_back_at(history: &[TrackFrame], track: TrackId, since: FrameIdx) -> Option<FrameIdx> {
    history.iter().rev().take_while(|tf| tf.frame >= since).find_map(|tf| {
        tf.events
            .iter()
            .any(|e| {
                matches!(e, TrackEvent::Origin { track: t, from: IdentityOrigin::PutBack, .. } if *t == track)
            })
            .then_some(tf.frame)
    })
}

/// A track seen in the newest frame of `history` but in none of the `4 * window`
/// frames before it: a tag's change since its last sighting before the gap, when it
/// lay on the table then and that sighting is from frame `since` on (none if it was
/// never seen before).
fn reacquired(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    now: &TrackedItem,
    window: FrameIdx,
    since: FrameIdx,
) -> Option<Windowed> {
    // Only a tag's colour names it for sure after a gap: a coin "seen again" far off
    // may be another coin or a phantom the tracker gave its name to (a false shot in
    // a put-back), and no shot is without its mover's tag moving.
    if now.kind != ItemKind::Fish {
        return None;
    }
    let last = history.last()?;
    let recent = last.frame.saturating_sub(4 * window);
    let (f, before) = history.iter().rev().skip(1).find_map(|tf| {
        tf.items
            .iter()
            .find(|x| x.track == now.track && x.seen)
            .map(|t| (tf.frame, t))
    })?;
    // A lost tag put back by hand shows again on the table too: that is the
    // interlude's business, not a shot.
    if f >= recent
        || f < since
        || !before.state.on_table()
        || put_back_at(history, now.track, f).is_some_and(|b| b > f)
    {
        return None;
    }
    let span_s = (last.frame - f) as f64 / cfg.fps;
    let step = wrap_angle(now.pose.angle() - before.pose.angle());
    Some(Windowed {
        span_s,
        moved_mm: dist(&now.pose, &before.pose),
        turn_rad: if step.abs() <= cfg.max_turn_rad(span_s) {
            step
        } else {
            0.0
        },
    })
}

/// An angle difference wrapped into (-π, π].
fn wrap_angle(a: f64) -> f64 {
    let r = a.rem_euclid(std::f64::consts::TAU);
    if r > std::f64::consts::PI {
        r - std::f64::consts::TAU
    } else {
        r
    }
}

/// A coin in a hole that starts this many frames before or after its fish is
/// taken as carried by it.
const CARRIED_FRAMES: FrameIdx = 2;

/// One track through the history: `(history index, item)` per frame it exists.
type Series<'a> = Vec<(usize, &'a TrackedItem)>;

/// A track's rows (`[frame, x, y]`, plus `theta` for a fish) for the frames between
/// the flick and the rest in which it was seen, placed at the frames' instants: a
/// moving item's sighting shows where it was mid-exposure, and the exposure is
/// taken as known by the last frame of `history` (learned from the whole shot's
/// blur). A velocity restarted from a jump is too rough a guess to move a row by.
fn track_rows(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    s: &Series<'_>,
    flick: FrameIdx,
    rest: FrameIdx,
) -> Vec<TrackRow> {
    let timing = history.last().map(|tf| tf.exposure).unwrap_or_default();
    s.iter()
        .filter(|(h, t)| t.seen && history[*h].frame >= flick && history[*h].frame <= rest)
        .map(|(h, t)| {
            let f = history[*h].frame as f64;
            let moving = t.velocity_mm_s.norm() >= cfg.still_speed_mm_s && !t.velocity_guessed;
            let ahead = if moving {
                timing.lead(t.velocity_mm_s, cfg.fps)
            } else {
                Vector::zeros()
            };
            let (x, y) = (t.pose.x + ahead.x, t.pose.y + ahead.y);
            match t.kind {
                ItemKind::Fish => vec![f, x, y, t.pose.angle()],
                ItemKind::Coin => vec![f, x, y],
            }
        })
        .collect()
}

fn series(history: &[TrackFrame]) -> BTreeMap<TrackId, Series<'_>> {
    let mut out: BTreeMap<TrackId, Series<'_>> = BTreeMap::new();
    for (h, tf) in history.iter().enumerate() {
        for t in &tf.items {
            out.entry(t.track).or_default().push((h, t));
        }
    }
    out
}

fn dist(a: &Pose, b: &Pose) -> f64 {
    (a.point() - b.point()).norm()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// How far the fastest point of an item moved between two poses: the hole centre's
/// displacement, and the turn × the footprint's reach for a fish (a fish turning
/// about its hole swings its tail far while the hole stays put).
pub(super) fn fastest_point_moved(cfg: &ShotConfig, a: &Pose, b: &Pose) -> (f64, f64) {
    let turn = match (a.theta, b.theta) {
        (Some(x), Some(y)) => wrap_angle(y - x).abs() * cfg.footprint.reach(),
        _ => 0.0,
    };
    (dist(a, b), turn)
}

/// Whether a pose has left a resting pose: its centre moved beyond the noise, or
/// its tail swung farther than a resting tag's angle jitter can make it seem to.
fn left_pose(cfg: &ShotConfig, rest: &Pose, p: &Pose) -> bool {
    let (moved, turn) = fastest_point_moved(cfg, rest, p);
    moved > cfg.start_dev_mm || turn > cfg.jitter_mm()
}

/// When a track started to move.
#[derive(Debug, Clone, Copy)]
struct Start {
    /// The last frame before it left its resting pose (the frame the flick was
    /// struck in), or the friction model's guess if it was unseen then.
    frame: FrameIdx,
    /// The resting pose it left.
    pose: Pose,
    /// Unseen when it started: the first frame it was seen moved.
    hidden_until: Option<FrameIdx>,
}

/// When a track left its resting pose and that pose, or `None` if it did not move.
fn start_frame(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    s: &Series<'_>,
    trigger: FrameIdx,
) -> Option<Start> {
    // The latest entry before the trigger where it was on the table and at rest.
    // …and stayed put over the two entries before it (speeds lag; positions don't).
    let ref_pos = (0..s.len()).rev().find(|&k| {
        let (h, t) = s[k];
        history[h].frame < trigger
            && t.state.on_table()
            && t.velocity_mm_s.norm() < cfg.still_speed_mm_s
            && s[k.saturating_sub(2)..k]
                .iter()
                .all(|(_, o)| o.state.on_table() && !left_pose(cfg, &t.pose, &o.pose))
    })?;
    let (rh, rt) = s[ref_pos];
    let mut p_ref = rt.pose;
    // One sighting's angle may be off by a degree or two: the resting angle is the
    // median of the sightings around it that agree with it.
    if let Some(th) = rt.pose.theta {
        let near: Vec<f64> = s[ref_pos.saturating_sub(4)..=ref_pos]
            .iter()
            .filter(|(_, o)| o.seen && o.state.on_table() && !left_pose(cfg, &rt.pose, &o.pose))
            .filter_map(|(_, o)| o.pose.theta.map(|x| th + wrap_angle(x - th)))
            .collect();
        if !near.is_empty() {
            p_ref.theta = Some(median(near));
        }
    }
    let f_ref_seen = if rt.seen {
        history[rh].frame
    } else {
        rt.last_seen.unwrap_or(history[rh].frame)
    };
    // An item cannot come back onto the table by itself: a sighting off it followed
    // by one on it was a misread (another blob taken for it), not where it went.
    let back_on = s.iter().rposition(|(_, t)| t.seen && t.state.on_table());
    let seen: Vec<(FrameIdx, Pose)> = s
        .iter()
        .enumerate()
        .filter(|(i, (_, t))| t.state.on_table() || back_on.is_none_or(|b| *i > b))
        .map(|(_, e)| e)
        .filter(|(h, t)| t.seen && history[*h].frame > f_ref_seen)
        .map(|(h, t)| (history[*h].frame, t.pose))
        .collect();
    // A tag under the hand may be misread away from its pose for a frame or two and
    // then read at rest again: it left only after its last sighting at rest before
    // the motion was noticed.
    let settled = seen
        .iter()
        .rposition(|(f, p)| *f <= trigger && !left_pose(cfg, &p_ref, p))
        .map_or(0, |r| r + 1);
    let left = |k: usize| {
        left_pose(cfg, &p_ref, &seen[k].1)
            && seen.get(k + 1).is_none_or(|n| left_pose(cfg, &p_ref, &n.1))
    };
    let first = (settled..seen.len()).find(|&k| left(k))?;
    // A struck item does not pause: the motion starts at a reading apart from the one
    // before it and from the one after. A tag under the finger about to strike may be
    // read apart from its rest and read so again in the next frame, still (the fixed
    // set's match-4p: its angle 4 degrees off in frames 264 and 265, identical, the
    // flick at 265, the start taken two frames early). Such a reading within a motion
    // window of the first is passed over for the reading the motion runs on from.
    let moving = |a: &Pose, b: &Pose| {
        let (moved, turn) = fastest_point_moved(cfg, a, b);
        moved.max(turn) > cfg.jitter_mm()
    };
    let runs_on = |k: usize| {
        let before = if k == 0 { &p_ref } else { &seen[k - 1].1 };
        moving(before, &seen[k].1) && seen.get(k + 1).is_none_or(|n| moving(&seen[k].1, &n.1))
    };
    let last = (first + cfg.motion_window() as usize).min(seen.len() - 1);
    let k = if runs_on(first) {
        first
    } else {
        (first + 1..=last)
            .find(|&k| left(k) && runs_on(k) && seen[k - 1].0 + 1 == seen[k].0)
            .unwrap_or(first)
    };
    let (f1, p1) = seen[k];
    if f1 <= f_ref_seen + 1 || k != first {
        return Some(Start {
            frame: f1 - 1,
            pose: p_ref,
            hidden_until: None,
        });
    }
    // Unseen between its last resting sighting and f1 (a hand over it): go back
    // from where it reappeared with the friction model.
    let d = dist(&p1, &p_ref);
    let v1 = match seen.get(k + 1) {
        Some(&(f2, p2)) if f2 > f1 => {
            let span = (f2 - f1) as f64 / cfg.fps;
            dist(&p2, &p1) / span + cfg.friction_decel_mm_s2 * span / 2.0
        }
        _ => 0.0,
    };
    let t = if v1 > 0.0 {
        time_since_start(v1, d, cfg.friction_decel_mm_s2)
    } else {
        0.0
    };
    let t0 = f1 as f64 / cfg.fps - t;
    // The frame the strike fell in: the last one whose instant is not after it.
    let est = (t0 * cfg.fps).floor() as i64;
    Some(Start {
        frame: (est.max(f_ref_seen as i64) as u64).min(f1 - 1),
        pose: p_ref,
        hidden_until: Some(f1),
    })
}

/// Whether anything that moved since `trigger` is seen to lie somewhere at rest:
/// an item that left its resting pose and was seen from `rest` on, or one that left
/// the table. When every "mover" stays unseen through the whole rest window, what
/// moved were misreads of tags under a hand or arm, not a flick — unless a mover was
/// seen in flight clear of every hand, farther from where it lay than a tag's reach,
/// in two frames: a misread lies under the hand that causes it, and an item seen
/// travelling and then gone (over the edge unseen, or hidden) is for the judge.
/// A tag flicked hard draws a smear about itself that reads as a hand in every
/// frame of its flight, and is read partly hidden by it: three such sightings clear
/// of what lay over the table when it started (the hand that struck it) count too.
pub(crate) fn movers_seen(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    trigger: FrameIdx,
    rest: FrameIdx,
) -> bool {
    let reach = cfg.footprint.reach();
    // Taken off the table in the shot (or as its motion was being noticed): an
    // item off the table since before then (lost in the last shot, not yet put
    // back) went nowhere now.
    let noticed = trigger.saturating_sub(cfg.motion_window() + 1);
    series(history).values().any(|s| {
        let left = s.windows(2).any(|w| {
            let ((_, a), (h, b)) = (w[0], w[1]);
            history[h].frame >= noticed
                && a.state.on_table()
                && matches!(b.state, TrackState::Removed(RemovalReason::OffTable { .. }))
        });
        if left {
            return true;
        }
        let Some(start) = start_frame(cfg, history, s, trigger) else {
            return false;
        };
        if read_anew_in_place(cfg, history, s, &start) {
            return false;
        }
        let at_rest = s
            .iter()
            .any(|(h, t)| t.seen && t.state.on_table() && history[*h].frame >= rest);
        let away = |h: usize, t: &TrackedItem| {
            t.seen
                && t.state.on_table()
                && history[h].frame > start.frame
                && (t.pose.point() - start.pose.point()).norm() > reach
        };
        let clear = |h: usize, t: &TrackedItem| {
            let p = t.pose.point();
            !t.partly_hidden && !history[h].occluders.iter().any(|o| o.covers(p, reach))
        };
        let when_struck = &history[at_or_before(history, start.frame)].occluders;
        let in_flight = s
            .iter()
            .filter(|(h, t)| away(*h, t) && clear(*h, t))
            .count();
        let in_own_smear = s
            .iter()
            .filter(|(h, t)| {
                away(*h, t) && !when_struck.iter().any(|o| o.covers(t.pose.point(), reach))
            })
            .count();
        at_rest || in_flight >= 2 || in_own_smear >= 3
    })
}

/// Turns back a tag's sightings read end for end among sightings that agree.
///
/// Blur smears a moving tag's hole, and its two ends then fit about alike: a few
/// sightings in flight come with the hole placed at the other end of the tag (43–77
/// mm along it) and the angle half a turn off (most of the sweeps' identity
/// switches: the hole so placed lies nearer another tag). Read the other way round,
/// about the tag's centre of mass (which stays where it is), such sightings agree
/// with their neighbours. A run of up to [`END_FOR_END_RUN`] consecutive sightings is
/// turned back when the two sightings on each side of it turn less than a quarter
/// turn a frame, the angles the two sides give each sighting of the run (the turn a
/// frame carried on) agree within a quarter turn, and every sighting of the run lies
/// more than three eighths of a turn from them, while turning less than a quarter turn
/// a frame within the run (read end for end together, they still turn as the tag
/// does). A tag spun faster (90–190 degrees a frame) is left as read: no neighbour
/// tells its end.
pub(super) fn turn_back_end_for_end(cfg: &ShotConfig, history: &mut [TrackFrame]) {
    let quarter = std::f64::consts::FRAC_PI_2;
    let far = 0.75 * std::f64::consts::PI;
    let centroid = cfg.footprint.centroid().coords;
    let tracks: BTreeSet<TrackId> = history
        .iter()
        .flat_map(|tf| tf.items.iter())
        .filter(|t| t.kind == ItemKind::Fish)
        .map(|t| t.track)
        .collect();
    for track in tracks {
        // (history index, item index, frame) of each seen sighting on the table:
        // turning a sighting back moves it, but leaves it where it is in the history.
        let seen: Vec<(usize, usize, FrameIdx)> = history
            .iter()
            .enumerate()
            .filter_map(|(h, tf)| {
                tf.items
                    .iter()
                    .position(|t| t.track == track && t.seen && t.state.on_table())
                    .map(|k| (h, k, tf.frame))
            })
            .collect();
        let angle = |history: &[TrackFrame], (h, k, _): (usize, usize, FrameIdx)| {
            history[h].items[k].pose.angle()
        };
        // Runs of up to END_FOR_END_RUN, then the longer ones of a spinning tag (the
        // shorter first: a run turned back is no longer read end for end).
        let longest = (cfg.frames(END_FOR_END_SPIN_S) as usize)
            .min(seen.len())
            .max(END_FOR_END_RUN);
        for run in 1..=longest {
            for start in 2..seen.len().saturating_sub(run + 1) {
                let window = &seen[start - 2..start + run + 2];
                if window.windows(2).any(|w| w[1].2 != w[0].2 + 1) {
                    continue;
                }
                let (b0, b1) = (angle(history, window[0]), angle(history, window[1]));
                let (a0, a1) = (
                    angle(history, window[run + 2]),
                    angle(history, window[run + 3]),
                );
                let (wb, wa) = (wrap_angle(b1 - b0), wrap_angle(a1 - a0));
                if wb.abs() >= quarter || wa.abs() >= quarter {
                    continue;
                }
                let run_rows = &window[2..2 + run];
                let misread = if run <= END_FOR_END_RUN {
                    // The angle each side gives the run's i-th sighting, where they agree.
                    let expected = |i: usize| {
                        let from_before = b1 + wb * (i + 1) as f64;
                        let from_after = a0 - wa * (run - i) as f64;
                        let gap = wrap_angle(from_after - from_before);
                        (gap.abs() < quarter).then_some(from_before + gap / 2.0)
                    };
                    // Read end for end together, the run's sightings still turn from
                    // one to the next as the tag does.
                    let steady = run_rows.windows(2).all(|w| {
                        wrap_angle(angle(history, w[1]) - angle(history, w[0])).abs() < quarter
                    });
                    steady
                        && run_rows.iter().enumerate().all(|(i, &r)| {
                            expected(i)
                                .is_some_and(|e| wrap_angle(angle(history, r) - e).abs() > far)
                        })
                } else {
                    // A longer run through which the tag spins: its turn a frame
                    // changes over the run, and neither side's tells the angle at its
                    // far end (seed 531046's sweep-032: a tag spinning half a radian a
                    // frame read end for end for seven frames, the hole 45 mm off,
                    // nearer another tag). Followed from the sightings before it, frame
                    // by frame, each of the run's sightings turned back lies within a
                    // quarter turn of the last and nearer to it than as read, and the
                    // last lies within a quarter turn of the sightings after it.
                    let mut along = Some(b1);
                    for &r in run_rows {
                        along = along.and_then(|last| {
                            let read = wrap_angle(angle(history, r) - last);
                            let back = wrap_angle(angle(history, r) + std::f64::consts::PI - last);
                            (back.abs() < quarter && back.abs() < read.abs()).then_some(last + back)
                        });
                    }
                    along.is_some_and(|last| wrap_angle(a0 - last).abs() < quarter)
                };
                if !misread {
                    continue;
                }
                for &r in run_rows {
                    let p = history[r.0].items[r.1].pose;
                    let at = p.point() + 2.0 * (Rotation2::new(p.angle()) * centroid);
                    history[r.0].items[r.1].pose =
                        Pose::fish(at.x, at.y, wrap_angle(p.angle() + std::f64::consts::PI));
                }
            }
        }
    }
}

/// The longest run of a spinning tag's sightings read end for end that
/// [`turn_back_end_for_end`] turns back: its flight.
const END_FOR_END_SPIN_S: f64 = 1.0;

/// The longest run of sightings read end for end that [`turn_back_end_for_end`]
/// turns back: the blur of one flight (the sweeps' runs are of 1 to 5).
const END_FOR_END_RUN: usize = 5;

/// Whether a track that left its resting pose did so only by being read anew: seen
/// at that pose in one frame and with its centre elsewhere from the next frame on,
/// still there ever since (a tag turning about its hole is left to the rest: its
/// angle is read less steadily than its hole). Under sliding friction nothing
/// covers more than the jitter and half the friction's deceleration over a frame
/// squared (about 1 mm at 30 frames/s) in one frame and stops there; a slide of
/// 23 mm takes five frames. A tag at rest with its hole empty by the edge, read
/// 23 mm and 37 degrees off for 15 frames and read right once its coin was put
/// into the hole (seed 531046's sweep-017), made a shot of that "move", with a
/// false 1.1 and every later shot shifted by one.
fn read_anew_in_place(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    s: &Series<'_>,
    start: &Start,
) -> bool {
    let seen: Vec<(FrameIdx, &Pose)> = s
        .iter()
        .filter(|(_, t)| t.seen)
        .map(|(h, t)| (history[*h].frame, &t.pose))
        .collect();
    if s.iter()
        .any(|(h, t)| history[*h].frame >= start.frame && !t.state.on_table())
    {
        return false;
    }
    let split = seen.partition_point(|(f, _)| *f <= start.frame);
    let (Some((f0, before)), Some(after)) = (
        split.checked_sub(1).map(|k| seen[k]),
        seen.get(split..).filter(|a| !a.is_empty()),
    ) else {
        return false;
    };
    let slide_in_a_frame = 0.5 * cfg.friction_decel_mm_s2 / (cfg.fps * cfg.fps);
    let (f1, first) = after[0];
    let Some(&(_, newest)) = after.last() else {
        return false;
    };
    f1 == f0 + 1
        && !left_pose(cfg, &start.pose, before)
        && dist(before, first) > cfg.jitter_mm() + slide_in_a_frame
        && after
            .iter()
            .all(|(_, p)| dist(p, newest) <= cfg.jitter_mm())
}

/// When the tails stopped swinging in a shot whose motion test went quiet at
/// `quiet`: the turning speed is measured over a window and lags, so this is the
/// frame after the last sighting whose angle was off, by more than the jitter at
/// the tail, from the angle it lies at since `quiet` (`trigger` if none was).
pub(crate) fn tails_settled(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    trigger: FrameIdx,
    quiet: FrameIdx,
) -> FrameIdx {
    let mut rest = trigger;
    for s in series(history).values() {
        let window: Vec<Pose> = s
            .iter()
            .filter(|(h, t)| t.seen && t.state.on_table() && history[*h].frame >= quiet)
            .map(|(_, t)| t.pose)
            .collect();
        let Some(first) = window.first() else {
            continue;
        };
        let x = median(window.iter().map(|p| p.x).collect());
        let y = median(window.iter().map(|p| p.y).collect());
        let end = match first.theta {
            Some(th) => Pose::fish(
                x,
                y,
                median(
                    window
                        .iter()
                        .map(|p| th + wrap_angle(p.angle() - th))
                        .collect(),
                ),
            ),
            None => Pose::coin(x, y),
        };
        // The last sighting before `quiet` that is away from where it lies now.
        let away = s
            .iter()
            .filter(|(h, t)| {
                let f = history[*h].frame;
                t.seen && f >= trigger && f < quiet
            })
            .filter(|(_, t)| {
                t.state.on_table() && fastest_point_moved(cfg, &end, &t.pose).1 > cfg.jitter_mm()
            })
            .map(|(h, _)| history[*h].frame)
            .max();
        if let Some(f) = away {
            rest = rest.max(f + 1);
        }
    }
    rest
}

/// Index of the last history frame at or before `frame`.
fn at_or_before(history: &[TrackFrame], frame: FrameIdx) -> usize {
    history
        .partition_point(|f| f.frame <= frame)
        .saturating_sub(1)
}

/// From where an item is tracked to its centre of mass (what slides straight and what
/// falls): a fish's lies off its hole along its angle; a coin's, or a fish's whose angle
/// is unknown, is where it is tracked.
fn hole_to_centre(cfg: &ShotConfig, item: ItemId, theta: Option<f64>) -> Vector {
    match theta.filter(|_| item.is_fish()) {
        Some(theta) => Rotation2::new(theta) * cfg.footprint.centroid().coords,
        None => Vector::zeros(),
    }
}

fn placed_fish(cfg: &ShotConfig, pose: &Pose) -> PlacedFish {
    cfg.footprint.placed(pose)
}

/// Whether a point lies under the material of a fish (inside the outline, outside
/// the part of the hole a coin can sit in).
fn under_fish(cfg: &ShotConfig, f: &PlacedFish, p: Point) -> bool {
    let hole_reach = cfg.hole_reach();
    point_in_polygon(p, &f.outline) && (p - f.hole.center).norm() > hole_reach
}

/// The straight run that ends at the last point of `pts`: from the earliest point
/// from which every later point stays within a few mm of the line to the last one.
/// Returns the least-squares line through that earliest point (the resting pose
/// the run started from is the most precise point): a unit direction toward the
/// last point, and the last point projected onto the line.
fn straight_run(pts: &[Point]) -> Option<(Vector, Point)> {
    // Sightings in motion scatter by ~2 mm; a collision bends a path by far more.
    const OFF_LINE_MM: f64 = 10.0;
    let last = *pts.last()?;
    // The earliest start wins: a long chord averages the noise of the sightings.
    let start = (0..pts.len().saturating_sub(1)).find(|&k| {
        let a = pts[k];
        let len = (last - a).norm();
        len > 1e-9 && {
            let dir = (last - a) / len;
            pts[k + 1..]
                .iter()
                .all(|p| (p - a).perp(&dir).abs() <= OFF_LINE_MM)
        }
    });
    let k = start?;
    let a = pts[k];
    if (last - a).norm() <= 5.0 {
        return None;
    }
    // Line through `a` minimising the squared perpendicular distances of the rest.
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for p in &pts[k + 1..] {
        let d = p - a;
        sxx += d.x * d.x;
        sxy += d.x * d.y;
        syy += d.y * d.y;
    }
    let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    let mut dir = Vector::new(angle.cos(), angle.sin());
    if dir.dot(&(last - a)) < 0.0 {
        dir = -dir;
    }
    Some((dir, a + dir * (last - a).dot(&dir)))
}

/// A coin carried unseen in a fish's hole that the tracker then found gone from
/// it (the fish lay still, wholly seen, its hole empty): it was thrown out
/// somewhere along the way without being seen.
struct GoneFromHole {
    /// The first frame it was known not to be in the hole.
    frame: FrameIdx,
    /// Where the hole carried it, and how fast, from its last sighting on.
    path: Vec<(FrameIdx, Point, f64)>,
}

/// The last time in `s` (at or after `flick`) that a coin carried unseen in a
/// hole was found gone from it, unless it was next seen loose (then it was only
/// missed, and its sightings tell where it is). A coin next seen in a hole was
/// put back: what it did after it was gone belongs to the next interlude.
fn gone_from_hole(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    s: &Series<'_>,
    flick: FrameIdx,
) -> Option<GoneFromHole> {
    let k = (1..s.len()).rev().find(|&k| {
        let (prev, now) = (s[k - 1].1, s[k].1);
        prev.carried_by.is_some()
            && !now.seen
            && now.carried_by.is_none()
            && now.state.on_table()
            && history[s[k].0].frame >= flick
    })?;
    if let Some((h, t)) = s[k..].iter().find(|(_, t)| t.seen) {
        let in_hole = history[*h].items.iter().any(|f| {
            f.kind == ItemKind::Fish
                && f.state.on_table()
                && (f.pose.point() - t.pose.point()).norm() <= cfg.footprint.hole_radius()
        });
        if !in_hole {
            return None;
        }
    }
    let first = s[..k]
        .iter()
        .rposition(|(_, t)| t.seen)
        .map_or(0, |i| i + 1);
    let path = s[first..k]
        .iter()
        .filter(|(_, t)| t.carried_by.is_some())
        .map(|(h, t)| (history[*h].frame, t.pose.point(), t.velocity_mm_s.norm()))
        .collect();
    Some(GoneFromHole {
        frame: history[s[k].0].frame,
        path,
    })
}

/// The fish a coin rode in unseen, when the tracker then took it off the table on
/// sightings beyond the edge that lay still (`SCENERY_SIGHTINGS` of them within
/// `SCENERY_MM` of the first): scenery, not a falling coin. `None` unless that fish
/// is still on the table at the end.
fn scenery_taken_for_a_riding_coin(
    history: &[TrackFrame],
    s: &Series<'_>,
    end_tf: &TrackFrame,
) -> Option<ItemId> {
    /// Sightings of one still spot that make it scenery (a falling coin is seen in
    /// a new place every frame, if at all).
    const SCENERY_SIGHTINGS: usize = 3;
    /// How far apart sightings of one still spot scatter.
    const SCENERY_MM: f64 = 2.0;
    let carrier = s
        .iter()
        .rev()
        .find(|(_, x)| x.state.on_table())
        .and_then(|(_, x)| x.carried_by)?;
    let beyond: Vec<Point> = s
        .iter()
        .filter(|(h, x)| {
            matches!(x.state, TrackState::Removed(RemovalReason::OffTable { .. }))
                && x.last_seen == Some(history[*h].frame)
        })
        .map(|(_, x)| x.pose.point())
        .collect();
    let first = *beyond.first()?;
    if beyond.len() < SCENERY_SIGHTINGS || beyond.iter().any(|p| (p - first).norm() > SCENERY_MM) {
        return None;
    }
    end_tf
        .items
        .iter()
        .find(|f| f.track == carrier && f.state.on_table())
        .and_then(|f| f.item)
}

/// What struck an item that lay at `pose` when last seen, at frame `f_last`, if
/// anything did: another track on the table, moving, whose shape came within one
/// frame's travel (and a few mm) of the item's from the frame before that one to
/// `STRUCK_WITHIN_S` after it. Its track, the frame, and its fastest velocity in
/// the frames up to then.
fn struck_by(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    all: &BTreeMap<TrackId, Series<'_>>,
    item: TrackId,
    pose: &Pose,
    f_last: FrameIdx,
) -> Option<(TrackId, FrameIdx, Vector)> {
    /// Sightings at rest scatter by a mm or two; contact is judged with this much.
    const CONTACT_MM: f64 = 3.0;
    /// How long after its last sighting an item may have been struck: its loss was
    /// seen a frame or two later (a frame may be missed).
    const STRUCK_WITHIN_S: f64 = 0.15;
    let until = f_last + cfg.frames(STRUCK_WITHIN_S).max(2);
    let is_fish = pose.theta.is_some();
    let me = is_fish.then(|| placed_fish(cfg, pose));
    let disc = Disc::new(pose.point(), cfg.coin_radius);
    all.iter()
        .filter(|(id, _)| **id != item)
        .flat_map(|(id, s)| s.iter().map(move |(h, t)| (*id, *h, *t)))
        .filter(|(_, h, t)| {
            let f = history[*h].frame;
            f + 1 >= f_last
                && f <= until
                && t.state.on_table()
                && t.carried_by != Some(item)
                && t.velocity_mm_s.norm() >= 2.0 * cfg.still_speed_mm_s
        })
        .find(|(_, _, t)| {
            let reach = CONTACT_MM + t.velocity_mm_s.norm() / cfg.fps;
            match (t.pose.theta, &me) {
                (Some(_), Some(me)) => fish_fish_overlap(me, &placed_fish(cfg, &t.pose), reach),
                (Some(_), None) => {
                    let f = placed_fish(cfg, &t.pose);
                    fish_disc_overlap(&f, &disc, reach)
                        || (disc.center - f.hole.center).norm() < f.hole.radius
                }
                (None, Some(me)) => {
                    fish_disc_overlap(me, &Disc::new(t.pose.point(), cfg.coin_radius), reach)
                }
                (None, None) => crate::geometry::disc_disc_overlap(
                    &disc,
                    &Disc::new(t.pose.point(), cfg.coin_radius),
                    reach,
                ),
            }
        })
        .map(|(id, h, _)| {
            // The blow slows the striker at once: it struck as fast as it came.
            let frame = history[h].frame;
            let v = all[&id]
                .iter()
                .filter(|(k, _)| {
                    let f = history[*k].frame;
                    f + 2 >= frame && f <= frame
                })
                .map(|(_, t)| t.velocity_mm_s)
                .max_by(|a, b| a.norm().total_cmp(&b.norm()))
                .unwrap_or_else(Vector::zeros);
            (id, frame, v)
        })
}

/// Whether a point `d` mm along an extrapolated path may lie under a fish: the
/// path's direction is known to a few degrees, so its end may be off by a little.
fn near_under_fish(cfg: &ShotConfig, f: &PlacedFish, p: Point, d: f64) -> bool {
    let tol = 4.0 + 0.08 * d;
    under_fish(cfg, f, p)
        || (!point_in_polygon(p, &f.outline) && boundary_distance(p, &f.outline) <= tol)
}

/// How deep a vertex of `a` reaches into `b` (0 if none does).
fn vertex_depth(a: &PlacedFish, b: &PlacedFish) -> f64 {
    a.outline
        .iter()
        .filter(|p| point_in_polygon(**p, &b.outline))
        .map(|p| boundary_distance(*p, &b.outline))
        .fold(0.0, f64::max)
}

pub(crate) fn judge(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    trigger: FrameIdx,
    rest: FrameIdx,
    prev: Option<&Previous>,
    index: usize,
    expected_mover: Option<PlayerIdx>,
) -> Shot {
    let mut shot = Shot {
        index,
        ..Default::default()
    };
    let Some(end_tf) = history.last() else {
        return shot;
    };
    let all = series(history);
    let item_of = |id: TrackId| -> Option<ItemId> {
        all.get(&id)
            .and_then(|s| s.iter().rev().find_map(|(_, t)| t.item))
    };

    // An item the previous shot left off the table (judged lost, though unseen
    // then) and not seen on the table since sets nothing off: its fall, seen after
    // that rest, is the previous shot's loss seen late (seed 777's sweep-020: a coin
    // that slid off unseen was seen dropping beyond the edge two frames after the
    // rest, and made the next shot its own, a move too many).
    let left_off_before = |id: &TrackId| {
        prev.is_some_and(|p| {
            item_of(*id).is_some_and(|item| !p.end.contains_key(&item))
                && !all[id].iter().any(|(_, t)| t.seen && t.state.on_table())
        })
    };

    // Flick: the earliest start among all tracks; first mover: that track (fish win ties).
    let mut rest_pose: BTreeMap<TrackId, Pose> = BTreeMap::new();
    let found: Vec<(Start, bool, TrackId)> = all
        .iter()
        .filter(|(id, _)| !left_off_before(id))
        .filter_map(|(id, s)| {
            let st = start_frame(cfg, history, s, trigger)?;
            rest_pose.insert(*id, st.pose);
            Some((
                st,
                s.last().is_some_and(|(_, t)| t.kind == ItemKind::Coin),
                *id,
            ))
        })
        .filter(|(st, _, _)| st.frame <= rest)
        .collect();
    // A start guessed for an item unseen at the time (a coin in the shadow of the
    // hand, say) is only as early as the evidence: if an item was seen to set off
    // before the hidden one was seen moved, the hidden one set off no earlier.
    let first_seen = found
        .iter()
        .filter(|(st, _, _)| st.hidden_until.is_none())
        .map(|(st, _, _)| st.frame)
        .min();
    // And a coin hidden when it started set off no earlier than the first tag did:
    // a coin moves when something strikes it, and a start guessed for one unseen is
    // no evidence that the player struck a coin first (R11 1.1). The foreign f12:
    // the mover's coin under the fingers, guessed off four frames before the tag it
    // lay in was seen leaving; f08: a loose coin hidden as the tag came, guessed off
    // a frame before that tag.
    let first_tag = found
        .iter()
        .filter(|(_, is_coin, _)| !is_coin)
        .map(|(st, _, _)| st.frame)
        .min();
    let mut starts: Vec<(FrameIdx, bool, TrackId)> = found
        .iter()
        .map(|(st, is_coin, id)| {
            let mut f = match (st.hidden_until, first_seen) {
                (Some(f1), Some(fs)) if f1 > fs => st.frame.max(fs),
                _ => st.frame,
            };
            if *is_coin && st.hidden_until.is_some() {
                if let Some(ft) = first_tag {
                    f = f.max(ft);
                }
            }
            (f, *is_coin, *id)
        })
        .collect();
    starts.sort();
    let flick = starts.first().map(|s| s.0).unwrap_or(trigger).min(trigger);
    shot.flick_frame = flick;
    shot.rest_frame = rest.max(flick);
    // A coin that lay in a fish's hole and set off with it (within the frames a
    // hidden start can be misjudged by) was carried by that fish: the fish moved
    // first, not the coin (R11 1.1 is about what the player struck).
    let hole_reach = cfg.hole_reach();
    let carrier = |coin: TrackId, f_coin: FrameIdx| -> Option<TrackId> {
        let p = rest_pose.get(&coin)?.point();
        starts
            .iter()
            .filter(|(f, is_coin, _)| !is_coin && f.abs_diff(f_coin) <= CARRIED_FRAMES)
            .find(|(_, _, fid)| {
                rest_pose
                    .get(fid)
                    .is_some_and(|fp| (fp.point() - p).norm() <= hole_reach)
            })
            .map(|(_, _, fid)| *fid)
    };
    let first = starts.first().map(|&(f, is_coin, id)| {
        // Items set off in the same frame: whose move it is decides. So do items
        // that lay against the mover's fish and were read off a frame before it: a
        // flick pushes what touches the fish as it sets the fish off, and a small
        // first turn of the fish hides under the angle's jitter for a frame (seed
        // 777's sweep-022: the tag against the mover's tail read off at frame 292,
        // the mover at 293, a false R11 1.1).
        let mover = expected_mover.and_then(|p| {
            let &(g, _, t) = starts
                .iter()
                .find(|(_, _, t)| item_of(*t) == Some(ItemId::fish(p)))?;
            let touching = |other: TrackId| {
                let (Some(fp), Some(op)) = (rest_pose.get(&t), rest_pose.get(&other)) else {
                    return false;
                };
                let fish = placed_fish(cfg, fp);
                match op.theta {
                    Some(_) => fish_fish_overlap(&fish, &placed_fish(cfg, op), cfg.jitter_mm()),
                    None => fish_disc_overlap(
                        &fish,
                        &Disc::new(op.point(), cfg.coin_radius),
                        cfg.jitter_mm(),
                    ),
                }
            };
            let mut sooner = starts.iter().take_while(|(h, _, _)| *h < g);
            (g == f || (g == f + 1 && sooner.all(|&(_, _, o)| touching(o)))).then_some(t)
        });
        match mover {
            Some(t) => t,
            None if is_coin => carrier(id, f).unwrap_or(id),
            None => id,
        }
    });
    if let Some(id) = first {
        shot.first_moved = item_of(id);
        if let Some(item) = shot.first_moved {
            let own = starts.iter().find(|(_, _, t)| *t == id).map(|x| x.0);
            let start = own.unwrap_or(flick);
            let next = starts
                .iter()
                .filter(|(_, is_coin, t)| *t != id && !(*is_coin && carrier(*t, start) == Some(id)))
                .find_map(|(f, _, t)| item_of(*t).map(|i| (i, *f)));
            let hidden_until = found
                .iter()
                .find(|(_, _, t)| *t == id)
                .and_then(|(st, _, _)| st.hidden_until);
            let frames_seen = all[&id]
                .iter()
                .filter(|(h, t)| t.seen && history[*h].frame >= flick)
                .count();
            shot.decisions.push(evidence::first_moved(
                item,
                start,
                next,
                hidden_until,
                frames_seen,
                expected_mover.is_some_and(|p| item == ItemId::fish(p)),
            ));
        }
        if shot.first_moved.is_none() {
            shot.notes.push(format!(
                "the first item to move (track {}) has no known identity",
                id.0
            ));
        }
    }
    if let Some(id) = shot.first_moved.filter(|i| i.is_fish()) {
        shot.player = id.owner;
    }

    // Start poses: every identified item on the table just before the flick.
    let before = &history[at_or_before(history, flick.saturating_sub(1))];
    let mut start_tracks: BTreeMap<TrackId, ItemId> = BTreeMap::new();
    for t in before.items.iter().filter(|t| t.state.on_table()) {
        if let Some(id) = t.item {
            // A mover's resting pose, not where it may already be one frame late.
            shot.start
                .insert(id, rest_pose.get(&t.track).copied().unwrap_or(t.pose));
            start_tracks.insert(t.track, id);
        }
    }

    // Rest poses: median of the sightings in the rest window; the held pose if unseen.
    let rest_h = at_or_before(history, rest);
    let mut unseen_at_rest: Vec<TrackId> = Vec::new();
    let mut gone: BTreeMap<TrackId, GoneFromHole> = BTreeMap::new();
    let mut rest_seen: BTreeMap<ItemId, usize> = BTreeMap::new();
    for t in end_tf.items.iter().filter(|t| t.state.on_table()) {
        let Some(id) = t.item else { continue };
        let s = &all[&t.track];
        if t.kind == ItemKind::Coin {
            if let Some(g) = gone_from_hole(cfg, history, s, flick) {
                // Not in the hole it was carried in, nor seen anywhere since.
                unseen_at_rest.push(t.track);
                let p = g.path.last().map(|x| x.1).unwrap_or(t.pose.point());
                shot.end.insert(id, Pose::coin(p.x, p.y));
                gone.insert(t.track, g);
                continue;
            }
        }
        let seen: Vec<Pose> = s
            .iter()
            .filter(|(h, x)| *h >= rest_h && x.seen)
            .map(|(_, x)| x.pose)
            .collect();
        if seen.is_empty() {
            unseen_at_rest.push(t.track);
            shot.end.insert(id, t.pose);
            continue;
        }
        rest_seen.insert(id, seen.len());
        let x = median(seen.iter().map(|p| p.x).collect());
        let y = median(seen.iter().map(|p| p.y).collect());
        let pose = match t.kind {
            ItemKind::Fish => Pose::fish(x, y, median(seen.iter().map(|p| p.angle()).collect())),
            ItemKind::Coin => Pose::coin(x, y),
        };
        shot.end.insert(id, pose);
    }

    // Tracks, flick to rest, frames where seen.
    for (id, s) in &all {
        let Some(item) = item_of(*id) else { continue };
        let rows = track_rows(cfg, history, s, flick, shot.rest_frame);
        if !rows.is_empty() && shot.start.contains_key(&item) {
            shot.tracks.insert(item, rows);
        }
    }

    // Lost: removed off the table during the shot.
    let mut carried_off: Vec<(ItemId, ItemId)> = Vec::new();
    let mut kept_riding: Vec<ItemId> = Vec::new();
    for t in &end_tf.items {
        let TrackState::Removed(RemovalReason::OffTable {
            frame,
            exit,
            evidence: how,
        }) = t.state
        else {
            continue;
        };
        let Some(&item) = start_tracks.get(&t.track) else {
            continue;
        };
        if how == ExitEvidence::SeenOffTable && item.is_coin() {
            if let Some(fish) = scenery_taken_for_a_riding_coin(history, &all[&t.track], end_tf) {
                // What it was "seen" as beyond the edge lay still there: scenery (the
                // table's side uncovered by the tag that moved off it), for a falling
                // coin is never seen twice in one place. It rode unseen in a fish that
                // is still on the table, and is taken as still in its hole.
                let hole = shot.end.get(&fish).map(|p| p.point()).or_else(|| {
                    end_tf
                        .items
                        .iter()
                        .find(|f| item_of(f.track) == Some(fish))
                        .map(|f| f.pose.point())
                });
                if let Some(hole) = hole {
                    shot.end.insert(item, Pose::coin(hole.x, hole.y));
                    kept_riding.push(item);
                    shot.notes.push(format!(
                        "{item} was taken for a coin seen beyond the edge that then lay still there (scenery); it rode unseen in {fish}'s hole and is taken as still in it (likely)"
                    ));
                    continue;
                }
            }
        }
        let seen_rows: Vec<(FrameIdx, &TrackedItem)> = all[&t.track]
            .iter()
            .filter(|(h, x)| x.seen && history[*h].frame >= flick)
            .map(|(h, x)| (history[*h].frame, *x))
            .collect();
        let com = |x: &TrackedItem| x.pose.point() + hole_to_centre(cfg, item, x.pose.theta);
        let last = seen_rows
            .last()
            .map(|(f, x)| (*f, com(x), x.velocity_mm_s.norm()));
        let cross = frame.max(flick);
        // A coin that went over the edge riding in a hole is as surely lost as its fish.
        if let Some(fish) = all[&t.track]
            .iter()
            .rev()
            .find(|(_, x)| x.state.on_table())
            .and_then(|(_, x)| x.carried_by)
            .and_then(item_of)
        {
            carried_off.push((item, fish));
        }
        shot.decisions.push(evidence::lost_seen(
            cfg,
            &evidence::SeenLeaving {
                item,
                how,
                frames_seen: seen_rows.len(),
                last,
                cross_frame: cross,
                rest_frame: shot.rest_frame,
            },
        ));
        // The exit is extrapolated from the last sighting on the table: in this
        // shot, or for an item unseen since the flick (a coin riding unseen in a
        // hole) before it. A coin carried off unseen crossed where its hole did only
        // if it stayed in the hole all the way from where it was last seen (seed
        // 531046's sweep-001: called 0 mm from its last sighting and 0.99 sure, it
        // had left the hole and crossed 420 mm away). One never seen at all (placed
        // by R2): from where it lay at the start.
        let rows = &all[&t.track];
        let on_table = rows
            .iter()
            .rev()
            .find(|(_, x)| x.seen && cfg.table.contains(com(x)))
            .or_else(|| rows.first())
            .map(|(h, x)| (history[*h].frame, com(x)));
        let (from_frame, from) = on_table.unwrap_or((cross, exit));
        shot.decisions
            .push(evidence::exit(item, exit, from, from_frame, cross));
        let theta = rows
            .iter()
            .rev()
            .find(|(_, x)| x.seen)
            .map(|(_, x)| x.pose.theta)
            .unwrap_or(t.pose.theta);
        shot.lost.push(LostItem {
            item,
            frame: frame.max(flick),
            exit: Pose {
                x: exit.x,
                y: exit.y,
                theta: if item.is_fish() { theta } else { None },
            },
        });
    }

    for (coin, fish) in carried_off {
        let Some(f) = shot
            .decisions
            .iter()
            .find(|d| d.call == Call::Lost && d.item == fish)
            .map(|d| d.evidence.clone())
        else {
            continue;
        };
        if let Some(d) = shot
            .decisions
            .iter_mut()
            .find(|d| d.call == Call::Lost && d.item == coin)
        {
            d.evidence.confidence = f.confidence;
            d.evidence.why = format!("{coin} rode in {fish}'s hole over the edge; {}", f.why);
            d.evidence.frames.extend(&f.frames);
            d.evidence.frames.sort_unstable();
            d.evidence.frames.dedup();
            d.evidence.hidden_by = Some(fish.to_string());
        }
    }

    // Fish at rest that were seen: what could lie on a vanished item.
    let resting_fish: Vec<(ItemId, PlacedFish)> = shot
        .end
        .iter()
        .filter(|(id, _)| id.is_fish())
        .filter(|(id, _)| {
            !end_tf
                .get(**id)
                .is_some_and(|t| unseen_at_rest.contains(&t.track))
        })
        .map(|(id, p)| (*id, placed_fish(cfg, p)))
        .collect();
    let mut doubt: BTreeSet<ItemId> = kept_riding.into_iter().collect();
    let mut hidden_under: Vec<Stacking> = Vec::new();
    for tid in unseen_at_rest {
        let Some(&item) = start_tracks.get(&tid) else {
            // Not on the table at the flick: nothing to judge here.
            if let Some(id) = item_of(tid) {
                doubt.insert(id);
            }
            continue;
        };
        if let Some(g) = gone.get(&tid) {
            doubt.insert(item);
            judge_gone_from_hole(cfg, &mut shot, item, g, &resting_fish, &mut hidden_under);
            if shot.lost.iter().any(|l| l.item == item) {
                shot.end.remove(&item);
                doubt.remove(&item);
            }
            continue;
        }
        if end_tf
            .items
            .iter()
            .any(|t| t.track == tid && t.carried_by.is_some())
        {
            // Its end pose is the hole's, where the tracker carries it; its hole
            // was never seen empty with the fish at rest.
            doubt.insert(item);
            shot.notes.push(still_riding_note(item));
            continue;
        }
        let s = &all[&tid];
        let last = s.iter().rev().find(|(_, t)| t.seen);
        let (mut p_last, mut v_last, f_last, theta_last) = match last {
            Some((h, t)) => (
                t.pose.point(),
                t.velocity_mm_s,
                history[*h].frame,
                t.pose.theta,
            ),
            None => (
                shot.end[&item].point(),
                Vector::zeros(),
                history[0].frame,
                shot.end[&item].theta,
            ),
        };
        // The direction of the straight run that ends at the last sighting (back to
        // the resting pose it started from, if no turn came between) is far
        // steadier than the filter's velocity. A fish's run is its centre of
        // mass's: that is what slides straight (and what falls), while the hole a
        // spinning tag is tracked by circles it (sweep-026: a tag spun half a turn
        // in three frames, its hole's run led 470 mm along the far edge, its
        // centre of mass over it).
        let centre_of_mass = |p: &Pose| p.point() + hole_to_centre(cfg, item, p.theta);
        let mut run: Vec<Point> = rest_pose
            .get(&tid)
            .map(|p| vec![centre_of_mass(p)])
            .unwrap_or_default();
        let after_flick = |h: usize| history[h].frame >= flick && history[h].frame <= f_last;
        // A coin carried unseen in a hole was where the hole was until it left: its
        // run starts there, not where it rested before the flick (the hole's
        // curved path before it is no part of the coin's straight one).
        let left_hole = s
            .iter()
            .rposition(|(h, t)| t.carried_by.is_some() && after_flick(*h));
        if let Some(k) = left_hole {
            run = vec![s[k].1.pose.point()];
        }
        run.extend(
            s[left_hole.map_or(0, |k| k + 1)..]
                .iter()
                .filter(|(h, t)| t.seen && after_flick(*h))
                .map(|(_, t)| centre_of_mass(&t.pose)),
        );
        // Two points only give the chord the tracker's velocity was guessed
        // from, or worse (a blur streak turns it the way the item really went).
        if let Some((dir, on_line)) = straight_run(&run).filter(|_| run.len() >= 3) {
            v_last = dir * v_last.norm();
            p_last = on_line - hole_to_centre(cfg, item, theta_last);
        }
        let hand_now = end_tf.occluders.iter().any(|o| o.covers(p_last, 5.0));
        doubt.insert(item);
        let covered = resting_fish.iter().any(|(_, f)| under_fish(cfg, f, p_last));
        // What struck it away, if it was struck at rest.
        let mut striker: Option<ItemId> = None;
        if v_last.norm() < 2.0 * cfg.still_speed_mm_s && f_last >= flick && !covered && !hand_now {
            // An item at rest does not leave its place by itself: when something came
            // moving against it just as it went unseen, it was struck away (too fast
            // for its blur to be found, or over the edge at once), and it went on as
            // fast as what struck it. Its path is then followed as any other's.
            let last_pose = Pose {
                x: p_last.x,
                y: p_last.y,
                theta: theta_last,
            };
            if let Some((by, frame, v)) = struck_by(cfg, history, &all, tid, &last_pose, f_last) {
                v_last = v;
                striker = item_of(by);
                let by = striker.map_or("an item".to_string(), |i| i.to_string());
                shot.notes.push(format!(
                    "{item} was last seen at rest at frame {f_last}; {by} came against it at frame {frame} at {:.0} mm/s: taken as struck away",
                    v.norm()
                ));
            }
        }
        let speed = v_last.norm();
        if speed < 2.0 * cfg.still_speed_mm_s || f_last < flick {
            // It was at rest when last seen: it is where it was.
            shot.end.insert(
                item,
                Pose {
                    x: p_last.x,
                    y: p_last.y,
                    theta: shot.end[&item].theta,
                },
            );
            let under = resting_fish
                .iter()
                .find(|(_, f)| under_fish(cfg, f, p_last));
            let why = match (under, hand_now) {
                (Some((fid, _)), _) => {
                    hidden_under.push(Stacking { top: *fid, under: item });
                    format!("{item} not seen at rest; it lies under {fid} where it was last seen (sure)")
                }
                (None, true) => format!("{item} not seen at rest; a hand covers where it was last seen, kept there (likely)"),
                (None, false) => format!(
                    "{item} not seen at rest and nothing covers it; kept where last seen at ({:.0}, {:.0}) (unsure)",
                    p_last.x, p_last.y
                ),
            };
            // As sure as it was at rest when last seen, and as what covers it: a fish
            // by how deep the point lies under it, a hand half as sure (it may have
            // taken it), nothing at all a quarter (it should have been seen).
            let still = crate::record::sure(
                2.0 * cfg.still_speed_mm_s - speed,
                0.5 * cfg.still_speed_mm_s,
            );
            let (cover, hidden_by, depth) = match (under, hand_now) {
                (Some((fid, f)), _) => {
                    let d = evidence::depth_in(f, p_last);
                    (crate::record::sure(d, 1.0), Some(fid.to_string()), Some(d))
                }
                (None, true) => (0.5, Some("hand".to_string()), None),
                (None, false) => (0.25, None, None),
            };
            let mut e = crate::record::Evidence::new(still * cover, why.clone())
                .at([f_last, shot.rest_frame])
                .with("last_speed_mm_s", speed)
                .hidden(hidden_by);
            if let Some(d) = depth {
                e = e.with("under_fish_depth_mm", d);
            }
            if let Some((fid, _)) = under {
                shot.decisions.push(evidence::decision(
                    Call::Stacking,
                    *fid,
                    Some(item),
                    e.clone(),
                ));
            }
            shot.decisions
                .push(evidence::decision(Call::OnTable, item, None, e));
            shot.notes.push(why);
            continue;
        }
        // It vanished while moving: follow its path under friction.
        let dir = v_last / speed;
        let stop = stopping_distance(speed, cfg.friction_decel_mm_s2);
        let reach = stop * 1.25 + 5.0;
        // What falls is the centre of mass going over the edge: a fish's lies well
        // off its hole, so its path is the one followed to the edge.
        let com_last = p_last + hole_to_centre(cfg, item, theta_last);
        let far = com_last + dir * reach;
        let s_exit = if cfg.table.contains(far) {
            None
        } else {
            let e = edge_crossing(&cfg.table, com_last, far);
            Some(((e - com_last).norm(), e))
        };
        let limit = s_exit.map(|(d, _)| d).unwrap_or(reach);
        // Only a coin hides wholly under a tag: a tag as large as the one on it shows
        // beside it (seen, partly hidden) unless it lies exactly beneath.
        let can_hide = !item.is_fish();
        // Nor does an item struck away pass under what struck it: that followed it,
        // slower, and came to rest on its path after it had gone by (seed 531046's
        // sweep-017: a coin struck at 2.8 m/s, never seen moving, was taken as lying
        // under its striker's rest pose 140 mm on; it had flown off the table).
        let mut hide: Option<(f64, ItemId)> = None;
        let mut d = 0.0;
        while can_hide && d <= limit && hide.is_none() {
            let p = p_last + dir * d;
            if let Some((fid, _)) = resting_fish
                .iter()
                .filter(|(fid, _)| Some(*fid) != striker)
                .find(|(_, f)| near_under_fish(cfg, f, p, d))
            {
                hide = Some((d, *fid));
            }
            d += 2.0;
        }
        let p_stop = p_last + dir * stop;
        let stop_hidden = resting_fish
            .iter()
            .filter(|_| can_hide)
            .find(|(_, f)| near_under_fish(cfg, f, p_stop, stop))
            .map(|(id, _)| *id);
        let exit_within_stop = s_exit.is_some_and(|(d, _)| d <= stop);
        let how = format!(
            "{item} vanished at frame {f_last} at ({:.0}, {:.0}) moving {:.0} mm/s, never seen near an edge",
            p_last.x, p_last.y, speed
        );
        let exit_mm = s_exit.map_or(f64::INFINITY, |(d, _)| d);
        let rest_frame = shot.rest_frame;
        let measured = |e: crate::record::Evidence| {
            e.at([f_last, rest_frame])
                .with("last_speed_mm_s", speed)
                .with("stopping_mm", stop)
                .with("edge_along_path_mm", exit_mm.min(1e9))
        };
        let hidden_call =
            |shot: &mut Shot, fid: Option<ItemId>, cover: f64, margin: f64, why: &str| {
                let e = measured(
                    evidence::path_call(margin, stop, format!("{how}; {why}"))
                        .hidden(fid.map(|f| f.to_string()).or(Some("hand".into()))),
                );
                let e = crate::record::Evidence {
                    confidence: e.confidence * cover,
                    ..e
                };
                if let Some(fid) = fid {
                    shot.decisions.push(evidence::decision(
                        Call::Stacking,
                        fid,
                        Some(item),
                        e.clone(),
                    ));
                }
                shot.decisions
                    .push(evidence::decision(Call::OnTable, item, None, e));
            };
        if let (Some(fid), false) = (stop_hidden, exit_within_stop) {
            hidden_call(
                &mut shot,
                Some(fid),
                1.0,
                exit_mm - stop,
                "its path ends under a fish",
            );
            shot.end.insert(item, Pose::coin(p_stop.x, p_stop.y));
            hidden_under.push(Stacking {
                top: fid,
                under: item,
            });
            shot.notes.push(format!(
                "{how}; its path ends under {fid}: taken as lying under it (likely)"
            ));
        } else if let Some((ds, e)) = s_exit.filter(|(ds, _)| hide.is_none_or(|(dh, _)| *ds < dh)) {
            shot.end.remove(&item);
            doubt.remove(&item);
            let t = time_to_cover(speed, ds, cfg.friction_decel_mm_s2).unwrap_or(ds / speed);
            let frame = f_last + (t * cfg.fps).ceil().max(1.0) as u64;
            let sure = if exit_within_stop {
                "likely"
            } else {
                "unsure: only with less friction than assumed"
            };
            shot.notes.push(format!(
                "{how}; its path leaves the table at ({:.0}, {:.0}): taken as lost ({sure})",
                e.x, e.y
            ));
            // Lost as surely as the edge lies within its stopping distance, and as
            // no fish on the way could have stopped it first.
            let first_fish = hide.map_or(f64::INFINITY, |(dh, _)| dh - ds);
            let lost = measured(evidence::path_call(
                (stop - ds).min(first_fish),
                stop,
                format!("{how}; its path leaves the table {ds:.0} mm on"),
            ));
            let theta = if item.is_fish() {
                shot.end.get(&item).and_then(|p| p.theta)
            } else {
                None
            };
            let seen_last = (p_last, f_last);
            lost_unseen(
                &mut shot,
                item,
                lost,
                Pose {
                    x: e.x,
                    y: e.y,
                    theta,
                },
                seen_last,
                frame,
                None,
            );
        } else if let Some((dh, fid)) = hide {
            hidden_call(
                &mut shot,
                Some(fid),
                1.0,
                stop - dh,
                "its path runs under a fish",
            );
            let p = p_last + dir * (dh + cfg.coin_radius).min(stop.max(dh));
            shot.end.insert(item, Pose::coin(p.x, p.y));
            hidden_under.push(Stacking {
                top: fid,
                under: item,
            });
            shot.notes.push(format!(
                "{how}; its path runs under {fid}: taken as lying under it (unsure)"
            ));
        } else if hand_now {
            // A hand over its path may have taken it: half as sure.
            hidden_call(
                &mut shot,
                None,
                0.5,
                exit_mm - stop,
                "a hand covers its path",
            );
            shot.end.insert(item, Pose::coin(p_stop.x, p_stop.y));
            shot.notes.push(format!(
                "{how}; a hand covers its path: taken as hidden on the table (unsure)"
            ));
        } else if item.is_fish() || cfg.table.signed_distance(com_last) <= reach {
            // A tag is too large to go unseen on an open table, and nothing covered
            // it: it left, though its last sightings make it too slow to get there
            // (a tag tipping over the edge is seen badly, tilted and blurred, and its
            // speed read low: on our randomised renders every tag judged so was
            // lost). It fell where its path meets the edge, or, where that lies
            // farther on than the tag reaches, at the edge nearest its last place.
            // Nor does a coin stay unseen on an open table while an edge lies within
            // its slide: nothing covered it, the tracker kept looking for it (an
            // unseen item's gate widens), and it was not seen again (its way read off
            // by a few degrees runs along the edge instead of over it). It fell at
            // the edge nearest where it vanished. On the randomised renders the two
            // coins once judged on the table so (seed 531046's sweep-007, 3 mm from
            // the edge at 351 mm/s, and sweep-017) were both lost.
            let nearest = cfg.table.nearest_edge_point(com_last);
            let (e, guessed, bound, measure, unsure) = if item.is_fish() {
                let (lo, hi) = cfg.table.bounds();
                let across = (hi - lo).norm();
                let along = edge_crossing(&cfg.table, com_last, com_last + dir * across);
                let reach_of_tag = cfg.footprint.reach();
                let on_path = (along - com_last).norm() <= reach_of_tag;
                let e = if on_path { along } else { nearest };
                let unsure = "too slow to get there as seen".to_string();
                (e, !on_path, reach_of_tag, "edge_along_path_mm", unsure)
            } else {
                let unsure = format!("the nearest edge; it slides {reach:.0} mm at most");
                (nearest, true, reach, "edge_nearest_mm", unsure)
            };
            let to_edge = (e - com_last).norm();
            // Taken at the nearest edge point, its way unknown: it may have crossed
            // the edge anywhere within its reach of where it vanished, up to that
            // reach either side (the reach itself is only a friction estimate, and a
            // tag here may lie farther from every edge than it).
            let spread = guessed.then_some(bound);
            // Not seen in the next frame, so gone by then.
            let frame = f_last + 1;
            shot.end.remove(&item);
            doubt.remove(&item);
            shot.notes.push(format!(
                "{how}; nothing could hide it and it was not seen again: taken as fallen at ({:.0}, {:.0}), {to_edge:.0} mm on (unsure: {unsure})",
                e.x, e.y
            ));
            // As sure as an item left unseen on an open table would have been seen;
            // the shorter the way to the edge against the way it could go, the surer.
            let lost = measured(evidence::path_call(
                bound - to_edge,
                bound,
                format!(
                    "{how}; nothing could hide it, not seen again, the edge {to_edge:.0} mm on"
                ),
            ))
            .with(measure, to_edge);
            let exit = Pose {
                x: e.x,
                y: e.y,
                theta: theta_last,
            };
            lost_unseen(&mut shot, item, lost, exit, (p_last, f_last), frame, spread);
        } else {
            // Nothing could hide it: it should have been seen, a quarter as sure.
            let e = measured(evidence::path_call(
                exit_mm - stop,
                stop,
                format!("{how}; nothing could hide it, assumed on the table"),
            ));
            let e = crate::record::Evidence {
                confidence: e.confidence * 0.25,
                ..e
            };
            shot.decisions
                .push(evidence::decision(Call::OnTable, item, None, e));
            shot.end.insert(
                item,
                Pose {
                    x: p_stop.x,
                    y: p_stop.y,
                    theta: shot.end[&item].theta,
                },
            );
            shot.notes.push(format!(
                "{how}; nothing could hide it and it cannot reach an edge: assumed on the table at ({:.0}, {:.0}) (unsure)",
                p_stop.x, p_stop.y
            ));
        }
    }
    lost_with_their_fish(&mut shot, end_tf, &item_of, &mut doubt);

    rest_relations(cfg, &mut shot, end_tf, &hidden_under, prev, &mut doubt);
    let rest = evidence::rest_calls(cfg, &shot, &rest_seen, &hidden_under, &|p| {
        placed_fish(cfg, p)
    });
    shot.decisions.extend(rest);
    shot.doubt = doubt.into_iter().collect();
    // Every call made: none is surer than the identity of the items it names.
    shot.identity = evidence::identities(history, &item_of);
    evidence::identity_doubt(&mut shot);

    // Items of unknown owner (loose coins without a start state): reported, not guessed.
    shot.unknown = unknown_items(cfg, history, &all, &rest_pose, &shot, flick, rest_h);
    for u in &shot.unknown {
        let what = match (&u.lost, u.track_rows.is_empty()) {
            (Some(_), _) => "left the table",
            (None, false) => "moved",
            (None, true) => "lies on the table",
        };
        shot.notes.push(format!(
            "a {} of unknown owner (track {}) {what}; see `unknown`",
            u.kind, u.track
        ));
    }

    if let Some(p) = prev {
        shot.before = Some(interlude(cfg, history, &all, p, flick, &shot.start));
    }
    shot
}

/// The note on a coin taken as still in the hole it rode in unseen.
fn still_riding_note(coin: ItemId) -> String {
    format!("{coin} not seen at rest; it rode unseen in a fish's hole and is taken as still in it (likely)")
}

/// Coins the tracker still carries unseen in the hole of a fish this shot judged lost
/// (gone from view on a path over the edge): the hole carried them there, so they
/// left the table with it, at its crossing and no surer than its loss. The tracker
/// cannot know it: it keeps an unseen fish on the table for the judge to place.
fn lost_with_their_fish(
    shot: &mut Shot,
    end_tf: &TrackFrame,
    item_of: &dyn Fn(TrackId) -> Option<ItemId>,
    doubt: &mut BTreeSet<ItemId>,
) {
    for t in &end_tf.items {
        let (Some(carrier), Some(coin)) = (t.carried_by, item_of(t.track)) else {
            continue;
        };
        let Some(fish) = item_of(carrier) else {
            continue;
        };
        if !shot.end.contains_key(&coin) || shot.lost.iter().any(|l| l.item == coin) {
            continue;
        }
        let Some(with) = shot.lost.iter().find(|l| l.item == fish).cloned() else {
            continue;
        };
        let sure = shot
            .decisions
            .iter()
            .filter(|d| d.item == fish && d.call == Call::LostUnseen)
            .map(|d| d.evidence.confidence)
            .fold(1.0, f64::min);
        let why = format!("{coin} rode unseen in {fish}'s hole and left the table with it");
        let exit = Pose {
            theta: None,
            ..with.exit
        };
        let lost = crate::record::Evidence::new(sure, why.clone()).at([with.frame]);
        // Its exit is its fish's: that call's evidence (from where the fish was last
        // seen), not one "extrapolated 0 mm" from the crossing itself.
        let fish_exit = shot
            .decisions
            .iter()
            .find(|d| d.item == fish && d.call == Call::Exit)
            .cloned();
        match fish_exit {
            Some(mut e) => {
                shot.decisions
                    .push(evidence::decision(Call::LostUnseen, coin, Some(fish), lost));
                e.item = coin;
                e.other = Some(fish);
                e.evidence.why = format!("{why}: {}", e.evidence.why);
                shot.decisions.push(e);
                shot.lost.push(LostItem {
                    item: coin,
                    frame: with.frame,
                    exit,
                });
            }
            None => lost_unseen(
                shot,
                coin,
                lost,
                exit,
                (with.exit.point(), with.frame),
                with.frame,
                None,
            ),
        }
        shot.end.remove(&coin);
        doubt.remove(&coin);
        let riding = still_riding_note(coin);
        shot.notes.retain(|n| *n != riding);
        shot.notes.push(format!("{why} (as sure as {fish}'s loss)"));
    }
}

/// An item taken as lost unseen: the loss's call, its exit's (resting on a path never
/// seen to reach the edge, so no surer than the loss; or, with `spread`, the edge's
/// nearest point, its way unknown that far either side), and the loss itself, from
/// where and when it was last seen.
fn lost_unseen(
    shot: &mut Shot,
    item: ItemId,
    lost: crate::record::Evidence,
    exit: Pose,
    (p_last, f_last): (Point, u64),
    frame: u64,
    spread: Option<f64>,
) {
    let mut exit_call = match spread {
        Some(s) => evidence::exit_guessed(item, exit.point(), p_last, f_last, frame, s),
        None => evidence::exit(item, exit.point(), p_last, f_last, frame),
    };
    exit_call.evidence.confidence = exit_call.evidence.confidence.min(lost.confidence);
    shot.decisions
        .push(evidence::decision(Call::LostUnseen, item, None, lost));
    shot.decisions.push(exit_call);
    shot.lost.push(LostItem { item, frame, exit });
}

/// Where a coin thrown out of its hole unseen went. Nothing loose was seen of it
/// and a coin resting in the open is seen, so it is off the table or under a
/// resting fish. The hole's path tells how near the edge it came and how fast
/// it went: if a coin thrown from it at that speed could reach the edge, it is
/// taken as lost where the path came nearest the edge (unsure: where it really
/// crossed is not known); else it lies under the resting fish nearest the end
/// of the path (unsure), or, with none within reach, where the path ended.
fn judge_gone_from_hole(
    cfg: &ShotConfig,
    shot: &mut Shot,
    item: ItemId,
    g: &GoneFromHole,
    resting_fish: &[(ItemId, PlacedFish)],
    hidden_under: &mut Vec<Stacking>,
) {
    let Some(&(_, p_end, _)) = g.path.last() else {
        shot.notes.push(format!(
            "{item} was gone from its hole at frame {} with no path to follow; kept where last known (unsure)",
            g.frame
        ));
        return;
    };
    let v_max = g.path.iter().map(|x| x.2).fold(0.0, f64::max);
    let reach = stopping_distance(v_max, cfg.friction_decel_mm_s2) * 1.25 + 5.0;
    let nearest_edge = g
        .path
        .iter()
        .map(|&(f, p, _)| (f, p, cfg.table.signed_distance(p)))
        .min_by(|a, b| a.2.total_cmp(&b.2));
    let how = format!(
        "{item} rode unseen in a hole and was gone from it by frame {} (the fish lay still, its hole empty)",
        g.frame
    );
    if let Some((f, p, d)) = nearest_edge.filter(|x| x.2 <= reach) {
        let e = cfg.table.nearest_edge_point(p);
        shot.notes.push(format!(
            "{how}; the hole passed {d:.0} mm from the edge at ({:.0}, {:.0}) at {v_max:.0} mm/s: taken as thrown off there (unsure)",
            e.x, e.y
        ));
        let lost = evidence::path_call(
            reach - d,
            reach,
            format!("{how}; the hole passed {d:.0} mm from the edge, a coin thrown from it reaches {reach:.0} mm"),
        )
        .at([g.frame, f])
        .with("hole_from_edge_mm", d)
        .with("reach_mm", reach)
        .with("hole_speed_mm_s", v_max)
        .hidden(Some("fish hole".into()));
        // Where it really crossed is not known: when and which way it left the
        // hole are not seen, so it may have crossed anywhere along the edge within
        // its reach of that point (the foreign f09: taken at the edge nearest where
        // the hole passed, 28 mm from where the coin crossed, and called as sure as
        // the loss).
        lost_unseen(
            shot,
            item,
            lost,
            Pose::coin(e.x, e.y),
            (p, f),
            f + 1,
            Some(reach),
        );
        return;
    }
    let under = resting_fish
        .iter()
        .map(|(fid, f)| {
            let d = if point_in_polygon(p_end, &f.outline) {
                0.0
            } else {
                boundary_distance(p_end, &f.outline)
            };
            (fid, f, d)
        })
        .filter(|x| x.2 <= reach)
        .min_by(|a, b| a.2.total_cmp(&b.2));
    let edge_d = nearest_edge.map_or(f64::INFINITY, |x| x.2);
    match under {
        Some((fid, f, _)) => {
            let e = evidence::path_call(
                edge_d - reach,
                reach,
                format!("{how}; it could not reach an edge ({edge_d:.0} mm away, reach {reach:.0} mm): under {fid}"),
            )
            .at([g.frame])
            .with("hole_from_edge_mm", edge_d.min(1e9))
            .with("reach_mm", reach)
            .hidden(Some(fid.to_string()));
            shot.decisions.push(evidence::decision(
                Call::Stacking,
                *fid,
                Some(item),
                e.clone(),
            ));
            shot.decisions
                .push(evidence::decision(Call::OnTable, item, None, e));
            let n = f.outline.len().max(1) as f64;
            let c = f
                .outline
                .iter()
                .fold(Vector::zeros(), |acc, p| acc + p.coords)
                / n;
            shot.end.insert(item, Pose::coin(c.x, c.y));
            hidden_under.push(Stacking {
                top: *fid,
                under: item,
            });
            shot.notes.push(format!(
                "{how}; it could not reach an edge: taken as lying under {fid} (unsure)"
            ));
        }
        None => shot.notes.push(format!(
            "{how}; it could not reach an edge and no fish lies near: kept at ({:.0}, {:.0}) (unsure)",
            p_end.x, p_end.y
        )),
    }
}

/// Every confirmed track without an identity that was on the table at the flick or
/// at rest, or left it during the shot.
fn unknown_items(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    all: &BTreeMap<TrackId, Series<'_>>,
    rest_pose: &BTreeMap<TrackId, Pose>,
    shot: &Shot,
    flick: FrameIdx,
    rest_h: usize,
) -> Vec<UnknownItem> {
    let before_h = at_or_before(history, flick.saturating_sub(1));
    let mut out = Vec::new();
    for (id, s) in all {
        if s.iter().any(|(_, t)| t.item.is_some()) {
            continue;
        }
        let Some(&(_, last)) = s.last() else { continue };
        let at = |h: usize| s.iter().find(|(k, _)| *k == h).map(|(_, t)| *t);
        let start = at(before_h)
            .filter(|t| t.state.on_table())
            .map(|t| rest_pose.get(id).copied().unwrap_or(t.pose));
        let in_last_frame = s.last().is_some_and(|(h, _)| *h + 1 == history.len());
        let end = if in_last_frame && last.state.on_table() {
            let seen: Vec<Pose> = s
                .iter()
                .filter(|(h, x)| *h >= rest_h && x.seen)
                .map(|(_, x)| x.pose)
                .collect();
            Some(if seen.is_empty() {
                last.pose
            } else {
                let x = median(seen.iter().map(|p| p.x).collect());
                let y = median(seen.iter().map(|p| p.y).collect());
                match last.kind {
                    ItemKind::Fish => {
                        Pose::fish(x, y, median(seen.iter().map(|p| p.angle()).collect()))
                    }
                    ItemKind::Coin => Pose::coin(x, y),
                }
            })
        } else {
            None
        };
        let lost = match last.state {
            TrackState::Removed(RemovalReason::OffTable { frame, exit, .. }) if start.is_some() => {
                Some(UnknownLost {
                    frame: frame.max(flick),
                    exit: Pose::coin(exit.x, exit.y),
                })
            }
            _ => None,
        };
        if start.is_none() && end.is_none() && lost.is_none() {
            continue;
        }
        let moved = rest_pose.contains_key(id) || lost.is_some();
        let track_rows: Vec<TrackRow> = if moved {
            track_rows(cfg, history, s, flick, shot.rest_frame)
        } else {
            Vec::new()
        };
        out.push(UnknownItem {
            track: id.0,
            kind: match last.kind {
                ItemKind::Fish => "fish",
                ItemKind::Coin => "coin",
            }
            .to_string(),
            // Filled in by whoever knows the players (`pipeline`).
            owners: Vec::new(),
            start,
            end,
            track_rows,
            lost,
        });
    }
    out
}

/// Coins in holes, stacking and whether stacked fish touch the table, at rest.
fn rest_relations(
    cfg: &ShotConfig,
    shot: &mut Shot,
    end_tf: &TrackFrame,
    hidden_under: &[Stacking],
    prev: Option<&Previous>,
    doubt: &mut BTreeSet<ItemId>,
) {
    let hole_reach = cfg.hole_reach();
    let fish: Vec<(ItemId, PlacedFish)> = shot
        .end
        .iter()
        .filter(|(id, _)| id.is_fish())
        .map(|(id, p)| (*id, placed_fish(cfg, p)))
        .collect();
    let coins: Vec<(ItemId, Point)> = shot
        .end
        .iter()
        .filter(|(id, _)| id.is_coin())
        .map(|(id, p)| (*id, p.point()))
        .collect();
    let seen = |id: ItemId| end_tf.get(id).is_some_and(|t| t.seen);
    let partly = |id: ItemId| end_tf.get(id).is_some_and(|t| t.partly_hidden);
    for (cid, c) in &coins {
        for (fid, f) in &fish {
            if (c - f.hole.center).norm() <= hole_reach {
                shot.coins_in_holes.insert(*cid, *fid);
            }
        }
    }
    let mut stacking: Vec<Stacking> = hidden_under.to_vec();
    let known = |s: &Vec<Stacking>, a: ItemId, b: ItemId| {
        s.iter()
            .any(|x| (x.top == a && x.under == b) || (x.top == b && x.under == a))
    };
    // Fish on fish: which is on top from occlusion, else the one that moved later.
    let moved_last = |id: ItemId| -> Option<f64> {
        shot.tracks
            .get(&id)
            .and_then(|rows| rows.last())
            .map(|r| r[0])
    };
    for i in 0..fish.len() {
        for j in i + 1..fish.len() {
            let (a, fa) = &fish[i];
            let (b, fb) = &fish[j];
            let depth = vertex_depth(fa, fb).max(vertex_depth(fb, fa));
            if depth <= cfg.stack_overlap_mm || known(&stacking, *a, *b) {
                continue;
            }
            let prev_rel = prev.and_then(|p| {
                p.stacking
                    .iter()
                    .find(|s| (s.top == *a && s.under == *b) || (s.top == *b && s.under == *a))
            });
            let (top, under) = match (partly(*a), partly(*b)) {
                (false, true) => (*a, *b),
                (true, false) => (*b, *a),
                _ => match (moved_last(*a), moved_last(*b), prev_rel) {
                    (_, _, Some(s)) if moved_last(*a).is_none() && moved_last(*b).is_none() => {
                        (s.top, s.under)
                    }
                    (Some(x), Some(y), _) if y > x => (*b, *a),
                    (None, Some(_), _) => (*b, *a),
                    _ => (*a, *b),
                },
            };
            stacking.push(Stacking { top, under });
        }
    }
    // Coins and fish: a coin seen on a fish lies on it; one not seen lies under it.
    for (cid, c) in &coins {
        for (fid, f) in &fish {
            let disc = Disc::new(*c, cfg.coin_radius);
            if known(&stacking, *cid, *fid) || !fish_disc_overlap(f, &disc, -cfg.stack_overlap_mm) {
                continue;
            }
            // Seen, it cannot be under the tag: it lies on it.
            if seen(*cid) {
                stacking.push(Stacking {
                    top: *cid,
                    under: *fid,
                });
            } else {
                stacking.push(Stacking {
                    top: *fid,
                    under: *cid,
                });
                doubt.insert(*cid);
            }
        }
    }
    // Whether a fish on top still touches the table (R8c/R8d).
    for (fid, f) in &fish {
        let unders: Vec<ItemId> = stacking
            .iter()
            .filter(|s| s.top == *fid)
            .map(|s| s.under)
            .collect();
        if unders.is_empty() {
            continue;
        }
        let com = shot.end.get(fid).map(|p| {
            let c = cfg.footprint.centroid();
            p.point() + nalgebra::Rotation2::new(p.angle()) * c.coords
        });
        let on_fish: Vec<&PlacedFish> = fish
            .iter()
            .filter(|(id, _)| unders.contains(id))
            .map(|(_, g)| g)
            .collect();
        let touches = on_fish.is_empty()
            || com.is_some_and(|c| on_fish.iter().all(|g| !point_in_polygon(c, &g.outline)));
        if !on_fish.is_empty() {
            doubt.insert(*fid);
        }
        let _ = f;
        shot.touches_table.insert(*fid, touches);
    }
    stacking.sort_by_key(|s| (s.top, s.under));
    stacking.dedup();
    shot.stacking = stacking;
}

/// The tag (among `poses`) in whose hole a coin at `coin` lies: the nearest hole
/// within [`ShotConfig::hole_reach`].
fn hole_holding(cfg: &ShotConfig, poses: &BTreeMap<ItemId, Pose>, coin: &Pose) -> Option<ItemId> {
    poses
        .iter()
        .filter(|(id, _)| id.is_fish())
        .map(|(id, p)| (*id, dist(p, coin)))
        .filter(|(_, d)| *d <= cfg.hole_reach())
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(id, _)| id)
}

/// Put-backs and disturbances between the previous rest and this flick.
fn interlude(
    cfg: &ShotConfig,
    history: &[TrackFrame],
    all: &BTreeMap<TrackId, Series<'_>>,
    prev: &Previous,
    flick: FrameIdx,
    start: &BTreeMap<ItemId, Pose>,
) -> Interlude {
    let mut out = Interlude::default();
    let mut settle: Vec<FrameIdx> = Vec::new();
    let in_interlude = |f: FrameIdx| prev.rest_frame.is_none_or(|r| f > r) && f < flick;
    // The first frame that can hold a put-back.
    let first = prev.rest_frame.map_or(0, |r| r + 1);
    // Each item's sightings in the interlude.
    let entries_of = |id: &ItemId| -> Option<Vec<(FrameIdx, &TrackedItem)>> {
        let s = all
            .values()
            .find(|s| s.iter().any(|(_, t)| t.item == Some(*id)))?;
        Some(
            s.iter()
                .map(|(h, t)| (history[*h].frame, *t))
                .filter(|(f, _)| in_interlude(*f))
                .collect(),
        )
    };
    // Where an item lay at the last rest, as this camera saw it. A clip that opens
    // at a declared start (`--start`, `--chain`): the declared pose names the item,
    // typed or from another clip, but is not this camera's measurement of it, and a
    // coin loose or in a hole is read a few millimetres off (its rim against the
    // hole's). What the camera did not see move was not disturbed: the item is
    // measured against its first sighting here (false R11 4.2 on clips opening with
    // coins loose).
    let reference = |id: &ItemId, declared: &Pose, entries: &[(FrameIdx, &TrackedItem)]| {
        let first_seen = entries
            .iter()
            .find(|(_, t)| t.seen && t.item == Some(*id))
            .map(|(_, t)| t.pose);
        match (prev.rest_frame, first_seen) {
            (None, Some(seen)) => seen,
            _ => *declared,
        }
    };
    let fish_at_rest: BTreeMap<ItemId, Pose> = prev
        .end
        .iter()
        .filter(|(id, _)| id.is_fish())
        .filter_map(|(id, declared)| Some((*id, reference(id, declared, &entries_of(id)?))))
        .collect();
    for (id, pose) in start {
        let Some(entries) = entries_of(id) else {
            continue;
        };
        let last_motion = entries
            .iter()
            .filter(|(_, t)| t.velocity_mm_s.norm() >= cfg.still_speed_mm_s)
            .map(|(f, _)| *f + 1)
            .max();
        match prev.end.get(id) {
            None => {
                // When it was first seen back: a coin judged gone may have been
                // held (unseen) on the table by the tracker until then.
                let frame = entries
                    .iter()
                    .find(|(_, t)| t.state.on_table() && t.seen && t.item == Some(*id))
                    .or_else(|| {
                        entries
                            .iter()
                            .find(|(_, t)| t.state.on_table() && t.item == Some(*id))
                    })
                    .map(|(f, _)| *f)
                    .unwrap_or(first);
                out.placed.push(PlacedItem {
                    item: *id,
                    frame,
                    pose: *pose,
                });
                settle.push(last_motion.unwrap_or(frame));
            }
            Some(declared) => {
                let p0 = &reference(id, declared, &entries);
                // A coin in a tag's hole at the last rest and in the same hole now
                // is where that hole is: its reading wanders inside the hole's play
                // (its rim shows only on the crescent of table beside it), which is
                // no move the camera can tell (still coins in holes read 3-5 mm
                // apart, a false R11 4.2, in 10 sweep clips and f12). If the hole
                // moved, its tag is disturbed and the coin with it.
                if id.is_coin()
                    && hole_holding(cfg, &fish_at_rest, p0)
                        .is_some_and(|fid| hole_holding(cfg, start, pose) == Some(fid))
                {
                    continue;
                }
                let moved = dist(p0, pose);
                if moved > cfg.disturb_mm {
                    let frame = entries
                        .iter()
                        .find(|(_, t)| t.seen && dist(&t.pose, p0) > cfg.disturb_mm)
                        .map(|(f, _)| *f)
                        .unwrap_or(first);
                    out.disturbed.push(DisturbedItem {
                        item: *id,
                        frame,
                        distance_mm: moved,
                    });
                    settle.push(last_motion.unwrap_or(frame));
                }
            }
        }
    }
    out.placed.sort_by_key(|p| (p.frame, p.item));
    out.ready_frame = Some(
        settle
            .into_iter()
            .max()
            .unwrap_or(prev.rest_frame.unwrap_or(0))
            .min(flick),
    );
    out
}
