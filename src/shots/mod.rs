//! Shot segmentation and judgement (pure): cuts the stream of [`TrackFrame`]s into
//! shots (still → flick → motion → still) and turns each into a `record::Shot`
//! observation — flick and rest frames, the item that moved first, start and rest
//! poses, tracks, lost items with the frame and point where each crossed the edge,
//! coins in holes, stacking, and the interlude before the flick (put-backs,
//! disturbances). No OpenCV, no I/O. Uses: model, config, geometry, track, record.
//!
//! # Public API
//! - [`ShotConfig::new(fps, table, &items)`](ShotConfig::new) or
//!   [`ShotConfig::from_tracker(&tracker_cfg)`](ShotConfig::from_tracker): thresholds in
//!   seconds, mm and mm/s, converted with the real fps.
//! - [`ShotCutter::new(cfg)`](ShotCutter::new), then
//!   [`push(track_frame) -> Option<Shot>`](ShotCutter::push) for every frame, and
//!   [`finish() -> Option<Shot>`](ShotCutter::finish) at the end of the video (a shot
//!   still moving when the video ends is cut there, with a note).
//! - The `Shot` carries observations only: `player` is set to the owner of the fish
//!   that moved first (0 if a coin or nothing identifiable moved first); whose turn it
//!   was is for the rules engine / driver to set. `score`, `put_back` and
//!   `violations` are left empty for the rules engine.
//!
//! # Decisions
//! - Motion is the speed of an item's fastest point: the hole centre's speed plus
//!   |turning speed| × the footprint's reach (a fish turning about its hole moves its
//!   tail many mm while its hole barely moves). The turning speed is measured over
//!   seen angles across twice [`ShotConfig::motion_window`] frames, long enough
//!   that the angle jitter of a resting tag's tail stays under half
//!   `still_speed_mm_s`; a step that turns faster than `max_speed_mm_s` allows is
//!   a misread, left out.
//! - A shot starts when an on-table item's fastest point has covered, over
//!   [`ShotConfig::motion_window`] frames of seen poses (the filter's speed lags a
//!   gentle push), more than `flick_speed_mm_s` would: by default the
//!   slowest launch that slides an item farther than a disturbance
//!   (√(2 · friction · `disturb_mm`)). A move over within the window, which its mean
//!   speed hides, starts one too: every sighting of the item in the window's last
//!   frames lies farther than `disturb_mm` and two readings' jitter from every
//!   sighting in the window before (the tail's swing counted), the item clear of
//!   every hand and wholly over the table top all that while, and another item lay
//!   still meanwhile (a knocked camera moves every reading at once). The flick frame is the last frame before any
//!   item left its resting pose (the frame the flick was struck in, as the
//!   simulator's truth counts it), walked back through the history; an item
//!   hidden (under the hand) when it started is back-extrapolated with the
//!   friction model from where it reappeared, and its guess does not precede an
//!   item seen to start unless it was seen moving first.
//! - A shot rests when no item that is seen (or was seen within two frames) has its
//!   fastest point moving faster than `still_speed_mm_s` for `still_s`, and no item
//!   gone unseen in flight on a path that stays on the table could still be sliding
//!   (its speed over its last two sightings, under the friction model); the rest
//!   frame is the first one from which the hole centres were still and no tail was
//!   swung farther than the angle jitter from where it lies (the turning window
//!   lags). If nothing that moved is seen at rest (nor left the table), the
//!   "motion" was tags misread under a hand or arm: no shot, the interlude goes on;
//!   unless a mover was seen in flight, clear of every hand and farther from where
//!   it lay than a tag reaches, in two frames (a misread lies under its hand). Nor
//!   did an item move that was read at one pose in a frame and at another in the
//!   next, still there since (read anew: no slide under friction is that short),
//!   nor one taken off the table before the motion began.
//! - The shot ends sooner, [`ShotConfig::motion_window`] frames after all went
//!   quiet, when everything is seen lying still (`seen_lying_still`): under sliding
//!   friction an item that slow stops within a frame, so the `still_s` wait is only
//!   for what the camera does not see: an item hidden since the flick, a coin riding
//!   unseen in a hole, a tracker's provisional call that an item left the table (or a
//!   track confirmed) within `still_s`. Any of those keeps the `still_s` wait. This
//!   is `live`'s latency (`shot_over` 0.1 to 0.2 s after the stop instead of 0.3 to
//!   0.4 s); the rest poses' medians then take fewer sightings.
//! - Leaving the resting pose (for the flick frame) also counts turning: the tail
//!   swung beyond the angle jitter (`jitter_mm`) from the median resting angle.
//! - An item on the table at the flick and nowhere at rest that was not seen leaving
//!   is judged from its last sighting: if its path under friction ends under a fish
//!   at rest, it is stacked under that fish; if the path leaves the table within its
//!   stopping distance, it is lost at that crossing; a hand over it means hidden.
//!   Each such decision adds a note with how sure it is. A coin riding unseen in
//!   the hole of a fish so judged lost leaves the table with it.
//! - A coin the tracker found gone from the hole it rode in unseen (the fish lay
//!   still, its hole empty) was thrown out on the way: if a coin thrown at the
//!   hole's speed could reach the edge, it is lost where the hole's path came
//!   nearest the edge (unsure); else it lies under the nearest resting fish. Seen
//!   in a hole again after that, it was put back (the next interlude).
//! - The history is the tracker's word as it stood, but for two corrections:
//!   [`TrackEvent::Retold`] (two coins' tracks found crossed since a jump) has the
//!   frames since that jump told anew, and a tag's sightings read end for end among
//!   sightings that agree on both sides are turned back (`judge::turn_back_end_for_end`),
//!   before the shot is judged.

mod evidence;
mod judge;
#[cfg(test)]
mod tests;

use crate::config::Items;
use crate::geometry::{FishFootprint, Table, Vector};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{Shot, Stacking};
use crate::track::{
    RemovalReason, TrackEvent, TrackFrame, TrackId, TrackState, TrackedItem, TrackerConfig,
};
use std::collections::BTreeMap;

/// Thresholds of the shot cutter and judge.
#[derive(Debug, Clone)]
pub struct ShotConfig {
    pub fps: f64,
    pub table: Table,
    pub footprint: FishFootprint,
    pub coin_radius: f64,
    /// Sliding friction (constant deceleration), mm/s², for back- and forward
    /// extrapolation of unseen motion.
    pub friction_decel_mm_s2: f64,
    /// An on-table item whose fastest point moves faster than this (measured over
    /// [`ShotConfig::motion_window`]) starts a shot.
    pub flick_speed_mm_s: f64,
    /// An item counts as at rest while its fastest point moves slower than this.
    pub still_speed_mm_s: f64,
    /// How long everything must stay still for a shot to end.
    pub still_s: f64,
    /// Displacement from its resting pose that means an item has started to move.
    pub start_dev_mm: f64,
    /// A coin within `hole_radius - coin_radius + this` of a hole centre is in the hole.
    pub hole_tolerance_mm: f64,
    /// Two footprints overlapping deeper than this lie one on the other.
    pub stack_overlap_mm: f64,
    /// An item on the table that moves more than this between shots is disturbed.
    pub disturb_mm: f64,
    /// A shot still moving after this long is cut anyway (with a note).
    pub max_shot_s: f64,
    /// The fastest an item is expected to move; a seen angle that turns faster
    /// than this allows is a misread (a tag seen the wrong way round), not motion.
    pub max_speed_mm_s: f64,
}

impl ShotConfig {
    pub fn new(fps: f64, table: Table, items: &Items) -> ShotConfig {
        let friction_decel_mm_s2 = 2000.0;
        let disturb_mm = 3.0;
        ShotConfig {
            fps,
            table,
            footprint: FishFootprint::new(items),
            coin_radius: items.coin.radius,
            friction_decel_mm_s2,
            flick_speed_mm_s: slowest_flick_mm_s(friction_decel_mm_s2, disturb_mm),
            still_speed_mm_s: 40.0,
            still_s: 0.3,
            start_dev_mm: 1.5,
            hole_tolerance_mm: 1.5,
            stack_overlap_mm: 2.0,
            disturb_mm,
            max_shot_s: 20.0,
            max_speed_mm_s: 3000.0,
        }
    }

    /// How far a coin's centre may lie from a hole's centre and the coin still be in
    /// the hole: the room the hole leaves it, and the tolerance of a reading.
    pub fn hole_reach(&self) -> f64 {
        (self.footprint.hole_radius() - self.coin_radius).max(0.0) + self.hole_tolerance_mm
    }

    /// The same table, items, fps and friction as the tracker.
    pub fn from_tracker(t: &TrackerConfig) -> ShotConfig {
        let base = ShotConfig::new(t.fps, t.table.clone(), &Items::default_set());
        ShotConfig {
            fps: t.fps,
            table: t.table.clone(),
            footprint: t.footprint.clone(),
            coin_radius: t.coin_radius,
            friction_decel_mm_s2: t.friction_decel_mm_s2,
            flick_speed_mm_s: slowest_flick_mm_s(t.friction_decel_mm_s2, base.disturb_mm),
            still_speed_mm_s: t.still_speed_mm_s,
            hole_tolerance_mm: t.hole_tolerance_mm,
            max_speed_mm_s: t.max_speed_mm_s,
            ..base
        }
    }

    /// How far the fastest point of a resting item can seem to move between two
    /// sightings: each may be off by up to `start_dev_mm`, in opposite directions.
    pub fn jitter_mm(&self) -> f64 {
        2.0 * self.start_dev_mm
    }

    /// Frames over which motion is measured from seen poses: enough that the jitter
    /// of a resting item, spread over them, stays under `still_speed_mm_s`.
    pub fn motion_window(&self) -> u64 {
        let frames = self.jitter_mm() * self.fps / self.still_speed_mm_s.max(1e-9);
        (frames.ceil() as u64).max(1)
    }

    /// The largest turn between two sightings `dt` apart that can be real.
    fn max_turn_rad(&self, dt: f64) -> f64 {
        self.max_speed_mm_s * dt / self.footprint.reach().max(1e-9)
    }

    fn frames(&self, seconds: f64) -> u64 {
        (seconds * self.fps).round().max(1.0) as u64
    }
}

/// Whether everything on the table is seen lying still since `q` (the first frame
/// all looked still), so the shot may end before `still_s` has passed: no track
/// came onto the table or was predicted off it within the last `still_s` (one seen
/// beyond the edge has fallen), every on-table item seen since the previous rest
/// was seen in at least [`ShotConfig::motion_window`] frames since `q` (nothing
/// hidden that might still be moving, or show up moved), none
/// rides unseen in a hole (the tracker needs `hole_empty_s` to tell it was thrown
/// out), and each item's sightings since `q` lie within the jitter of its newest.
///
/// Why this is enough: under sliding friction an item slower than
/// `still_speed_mm_s` stops within v / friction (20 ms at 40 mm/s and 2 m/s²) after
/// under v² / 2·friction (0.4 mm); one that still moves covers more than the jitter
/// over [`ShotConfig::motion_window`] frames unless it is slower than
/// `still_speed_mm_s` (the window's definition), and then it is about to stop. The
/// `still_s` wait is for what the camera does not see.
fn seen_lying_still(cfg: &ShotConfig, history: &[TrackFrame], q: FrameIdx) -> bool {
    let Some(now) = history.last() else {
        return false;
    };
    let window = cfg.motion_window();
    // The tracker's calls on what is on the table are provisional: an item unseen
    // in flight is predicted over the edge and may be seen again before it falls, a
    // coin near the edge taken for gone is found again. The `still_s` wait is what
    // lets such a call be corrected before the shot is judged: none may have changed
    // within it. An item seen beyond the edge (or matched to a blob over the floor)
    // when it was taken off is no prediction: it has fallen, and needs no wait.
    let fell_in_sight: std::collections::BTreeSet<TrackId> = now
        .items
        .iter()
        .filter(|t| {
            matches!(
                t.state,
                TrackState::Removed(RemovalReason::OffTable { evidence, .. })
                    if !evidence.is_predicted()
            )
        })
        .map(|t| t.track)
        .collect();
    let on_table = |tf: &TrackFrame| -> Vec<TrackId> {
        tf.items
            .iter()
            .filter(|t| t.state.on_table() && !fell_in_sight.contains(&t.track))
            .map(|t| t.track)
            .collect()
    };
    let settled = on_table(now);
    let since = now.frame.saturating_sub(cfg.frames(cfg.still_s));
    if history
        .iter()
        .rev()
        .take_while(|tf| tf.frame >= since)
        .any(|tf| on_table(tf) != settled)
    {
        return false;
    }
    let ever_seen: std::collections::BTreeSet<TrackId> = history
        .iter()
        .flat_map(|tf| tf.items.iter().filter(|x| x.seen).map(|x| x.track))
        .collect();
    let since_q = &history[history.partition_point(|tf| tf.frame < q)..];
    now.items.iter().filter(|t| t.state.on_table()).all(|t| {
        if t.carried_by.is_some() {
            return false;
        }
        // Hidden since before the previous rest (under a fish, say): no wait
        // would show it.
        if !ever_seen.contains(&t.track) {
            return true;
        }
        let recent: Vec<&Pose> = since_q
            .iter()
            .filter_map(|tf| tf.items.iter().find(|x| x.track == t.track && x.seen))
            .map(|x| &x.pose)
            .collect();
        let Some(newest) = recent.last() else {
            return false;
        };
        recent.len() as u64 >= window
            && recent.iter().all(|p| {
                let (moved, turn) = judge::fastest_point_moved(cfg, p, newest);
                moved <= cfg.jitter_mm() && turn <= cfg.jitter_mm()
            })
    })
}

/// Tells the frames of `history` from `since` on anew once the tracker found that
/// track `took` had followed `owner`'s coin since then ([`TrackEvent::Retold`]):
/// `took`'s rows (and its jumps and reappearances) there become `owner`'s, and
/// `took`'s own coin rode unseen in the hole of fish `hole`, which it never left.
/// Without this a coin resting in its hole is recorded flying off along the other
/// coin's path and back, and the thrown coin unseen until the exchange (sweep
/// 777-031: 14 frames). Left as told when `owner` was seen in any of those frames:
/// what it was seen doing would then be contradicted, not filled in. A velocity
/// `took` restarted from a jump measured the jump from its own coin's place; told
/// as `owner`'s it is measured again from where `owner` was (in its hole, carried)
/// (sweep 531-017: a thrown coin's one sighting, told with the jump's velocity,
/// sent its exit to the far side of the table).
fn retell(
    history: &mut [TrackFrame],
    fps: f64,
    took: TrackId,
    owner: TrackId,
    since: FrameIdx,
    hole: TrackId,
) {
    let start = history.partition_point(|tf| tf.frame < since);
    let (before, span) = history.split_at_mut(start);
    if span
        .iter()
        .any(|tf| tf.items.iter().any(|t| t.track == owner && t.seen))
    {
        return;
    }
    let Some(owner_item) = span
        .iter()
        .find_map(|tf| tf.items.iter().find(|t| t.track == owner))
        .map(|t| t.item)
    else {
        return;
    };
    let Some(mut held) = before
        .iter()
        .rev()
        .find_map(|tf| tf.items.iter().find(|t| t.track == took && t.seen))
        .map(|t| TrackedItem {
            seen: false,
            velocity_mm_s: Vector::zeros(),
            velocity_guessed: false,
            hidden_by: None,
            partly_hidden: false,
            carried_by: Some(hole),
            ..t.clone()
        })
    else {
        return;
    };
    let mut came_from = before.last().and_then(|tf| {
        tf.items
            .iter()
            .find(|t| t.track == owner)
            .map(|t| (tf.frame, t.pose.point()))
    });
    for tf in span {
        let Some(k) = tf.items.iter().position(|t| t.track == took) else {
            continue;
        };
        if let Some(fish) = tf.items.iter().find(|t| t.track == hole) {
            held.pose = Pose::coin(fish.pose.x, fish.pose.y);
            held.velocity_mm_s = fish.velocity_mm_s;
        }
        let mut followed = TrackedItem {
            track: owner,
            item: owner_item,
            ..tf.items[k].clone()
        };
        if followed.seen {
            if let Some((f, p)) = came_from.filter(|_| followed.velocity_guessed) {
                let dt = tf.frame.saturating_sub(f).max(1) as f64 / fps;
                followed.velocity_mm_s = (followed.pose.point() - p) / dt;
            }
            came_from = Some((tf.frame, followed.pose.point()));
        }
        tf.items[k] = held.clone();
        tf.items.retain(|t| t.track != owner);
        tf.items.push(followed);
        tf.items.sort_by_key(|t| t.track);
        for e in &mut tf.events {
            match e {
                TrackEvent::Jumped { track, .. } | TrackEvent::SeenAgain { track, .. }
                    if *track == took =>
                {
                    *track = owner
                }
                _ => {}
            }
        }
    }
}

/// The slowest launch that makes an item slide farther than `distance_mm` under
/// `friction_mm_s2` (v² = 2ad): anything slower is a nudge, not a flick.
fn slowest_flick_mm_s(friction_mm_s2: f64, distance_mm: f64) -> f64 {
    (2.0 * friction_mm_s2 * distance_mm).sqrt()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Waiting,
    InShot {
        trigger: FrameIdx,
        quiet_since: Option<FrameIdx>,
        /// Since when the hole centres alone are still (no lag from the turning
        /// speed's window).
        centres_quiet_since: Option<FrameIdx>,
    },
}

/// What the previous shot left behind, for the next interlude.
#[derive(Debug, Clone, Default)]
struct Previous {
    /// `None`: the clip opened at rest (`--start`), before its first frame.
    rest_frame: Option<FrameIdx>,
    end: BTreeMap<ItemId, Pose>,
    stacking: Vec<Stacking>,
}

/// Streaming shot cutter: push every [`TrackFrame`], get a [`Shot`] when one comes to rest.
#[derive(Debug, Clone)]
pub struct ShotCutter {
    cfg: ShotConfig,
    /// Frames since the previous rest (or the start): the interlude, then the shot.
    history: Vec<TrackFrame>,
    phase: Phase,
    previous: Option<Previous>,
    next_index: usize,
    /// Whose move it is, if the caller knows (ties for the first mover).
    expected_mover: Option<PlayerIdx>,
}

impl ShotCutter {
    pub fn new(cfg: ShotConfig) -> ShotCutter {
        ShotCutter {
            cfg,
            history: Vec::new(),
            phase: Phase::Waiting,
            previous: None,
            next_index: 0,
            expected_mover: None,
        }
    }

    /// A cutter for a clip that opens at rest with these poses (`analyse --start`):
    /// what is put back or moved before the first flick is that shot's interlude,
    /// as it would be in one video of the whole match.
    pub fn with_start(cfg: ShotConfig, poses: &BTreeMap<ItemId, Pose>) -> ShotCutter {
        let mut c = ShotCutter::new(cfg);
        c.previous = Some(Previous {
            rest_frame: None,
            end: poses.clone(),
            stacking: Vec::new(),
        });
        c
    }

    /// Whose move it is: when items start in the same frame, the camera cannot
    /// tell which was struck, and that player's fish gets the benefit of the doubt;
    /// so it does when the items read off before it, a frame sooner, lay against it.
    pub fn expect_mover(&mut self, player: Option<PlayerIdx>) {
        self.expected_mover = player;
    }

    pub fn config(&self) -> &ShotConfig {
        &self.cfg
    }

    /// Whether a shot is in progress (flicked, not yet at rest).
    pub fn in_shot(&self) -> bool {
        matches!(self.phase, Phase::InShot { .. })
    }

    /// Takes the next frame; returns a shot when this frame completes its rest window.
    pub fn push(&mut self, tf: TrackFrame) -> Option<Shot> {
        let frame = tf.frame;
        for e in &tf.events {
            if let TrackEvent::Retold {
                took,
                owner,
                since,
                hole,
            } = *e
            {
                retell(&mut self.history, self.cfg.fps, took, owner, since, hole);
            }
        }
        self.history.push(tf);
        let motion = judge::fastest_on_table(
            &self.cfg,
            &self.history,
            self.previous.as_ref().map(|p| &p.end),
        );
        let moving = motion.speed_mm_s;
        match self.phase {
            Phase::Waiting => {
                if motion.covered_mm_s >= self.cfg.flick_speed_mm_s {
                    self.phase = Phase::InShot {
                        trigger: frame,
                        quiet_since: None,
                        centres_quiet_since: None,
                    };
                }
                None
            }
            Phase::InShot {
                trigger,
                quiet_since,
                centres_quiet_since,
            } => {
                let since = |quiet: bool, q: Option<FrameIdx>| match (quiet, q) {
                    (false, _) => None,
                    (true, None) => Some(frame),
                    (true, q) => q,
                };
                let quiet_since = since(moving < self.cfg.still_speed_mm_s, quiet_since);
                let centres_quiet_since = since(
                    motion.centre_mm_s < self.cfg.still_speed_mm_s,
                    centres_quiet_since,
                );
                self.phase = Phase::InShot {
                    trigger,
                    quiet_since,
                    centres_quiet_since,
                };
                let still = self.cfg.frames(self.cfg.still_s);
                if let Some(q) = quiet_since {
                    let seen_still = frame >= q + self.cfg.motion_window()
                        && seen_lying_still(&self.cfg, &self.history, q);
                    if seen_still || frame + 1 >= q + still {
                        if !judge::movers_seen(&self.cfg, &self.history, trigger, q) {
                            // Nothing seen to have gone anywhere: not a shot; the
                            // interlude goes on.
                            self.phase = Phase::Waiting;
                            return None;
                        }
                        // The turning speed's window lags: rest is when the centres
                        // stopped and every tail had stopped swinging.
                        let turned = judge::tails_settled(&self.cfg, &self.history, trigger, q);
                        let rest = centres_quiet_since.unwrap_or(q).max(turned).min(q);
                        return Some(self.emit(trigger, rest, None));
                    }
                }
                if frame.saturating_sub(trigger) > self.cfg.frames(self.cfg.max_shot_s) {
                    let note = format!(
                        "items were still moving {:.0} s after the flick; the shot was cut at frame {frame}",
                        self.cfg.max_shot_s
                    );
                    return Some(self.emit(trigger, frame, Some(note)));
                }
                None
            }
        }
    }

    /// Ends the stream: a shot in progress is cut at the last frame (with a note).
    pub fn finish(&mut self) -> Option<Shot> {
        let Phase::InShot {
            trigger,
            quiet_since,
            ..
        } = self.phase
        else {
            return None;
        };
        let last = self.history.last()?.frame;
        let (rest, note) = match quiet_since {
            Some(q) => (
                q,
                "the video ended shortly after the items stopped; rest taken from a short window"
                    .to_string(),
            ),
            None => (
                last,
                format!(
                    "the video ended while items were moving; the shot was cut at frame {last}"
                ),
            ),
        };
        Some(self.emit(trigger, rest, Some(note)))
    }

    fn emit(&mut self, trigger: FrameIdx, rest: FrameIdx, note: Option<String>) -> Shot {
        judge::turn_back_end_for_end(&self.cfg, &mut self.history);
        let mut shot = judge::judge(
            &self.cfg,
            &self.history,
            trigger,
            rest,
            self.previous.as_ref(),
            self.next_index,
            self.expected_mover,
        );
        if let Some(n) = note {
            shot.notes.push(n);
        }
        self.next_index += 1;
        self.previous = Some(Previous {
            rest_frame: Some(shot.rest_frame),
            end: shot.end.clone(),
            stacking: shot.stacking.clone(),
        });
        // The next interlude starts at this rest.
        self.history.retain(|f| f.frame >= rest);
        self.phase = Phase::Waiting;
        shot
    }
}
