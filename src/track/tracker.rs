//! The tracker state machine: one [`Tracker::update`] per video frame (also when
//! nothing was detected) turns [`FrameDetections`] into a [`TrackFrame`] of every
//! item's identity, pose and state. Steps per frame: 0 drop scenery (sightings that
//! sit still beyond the edge) and give an item that just fell the sightings of it
//! dropping, 1 predict (friction, equal-disc collisions, hold what a hand hides),
//! 2 gate + cost, 3 assign, 4 update matched, 5 unmatched tracks (lost, hidden, off
//! the table; a coin riding unseen in a hole is carried with it until the hole is
//! seen empty at rest or over the edge), 6 births, 7 confirmation and identity (colour for
//! fish, hole or start state for coins, put-backs revive the old track), 8 fish
//! colour hysteresis, 9 a loose coin named by elimination (one coin per player), 10
//! at a match's opening the coins not found placed in their owners' holes (R2).
//! Uses: model, config, geometry, record.

use super::assign::assign;
use super::detections::{FishDetection, FrameDetections, Streak};
use super::exposure::{Exposure, Timing};
use super::gate::gate_candidates;
use super::motion::{advance, predict_bodies, Body};
use super::state::{ExitEvidence, RemovalReason, TrackId, TrackState};
use crate::config::Items;
use crate::geometry::table::closest_on_segment;
use crate::geometry::{FishFootprint, Point, Table, Vector};
use crate::model::{FrameIdx, ItemId, ItemKind, PlayerIdx, Pose};
use crate::record::StartState;
use nalgebra::DMatrix;

/// Why a tracker cannot be configured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrackError {
    #[error("frame rate must be a positive number, got {0}")]
    BadFps(f64),
    #[error("a match needs at least one player")]
    NoPlayers,
    #[error("tracker setting `{name}` must be a non-negative number, got {value}")]
    BadSetting { name: &'static str, value: f64 },
}

/// Tracker settings. Times are in seconds and speeds in mm/s; they are turned into
/// frames with the real `fps`, never assumed to be 30 fps.
#[derive(Debug, Clone)]
pub struct TrackerConfig {
    pub fps: f64,
    pub players: usize,
    pub table: Table,
    pub footprint: FishFootprint,
    pub coin_radius: f64,
    /// Sliding friction as a constant deceleration (μg), mm/s².
    pub friction_decel_mm_s2: f64,
    /// Coin–coin restitution for the collision-aware prediction.
    pub restitution: f64,
    /// The fastest an item is expected to move (a hard flick, a coin thrown out of a
    /// hole), mm/s.
    pub max_speed_mm_s: f64,
    /// Below this an item counts as at rest (then a sudden kick is allowed for).
    pub still_speed_mm_s: f64,
    /// Gate around a prediction for measurement noise, mm.
    pub gate_base_mm: f64,
    /// The gate of an unseen item grows at `max_speed` up to this, mm.
    pub lost_gate_max_mm: f64,
    /// Extra cost (mm) for explaining a detection by a resting item being kicked.
    pub kick_penalty_mm: f64,
    /// Extra cost (mm) for matching an item that was not seen last frame.
    pub lost_penalty_mm: f64,
    /// Cost (mm) of a fish colour that is certainly not the track's player.
    pub colour_weight_mm: f64,
    /// Cost (mm per radian) of a fish turning.
    pub angle_weight_mm: f64,
    /// A match costing more than this is never made (mm).
    pub max_match_cost_mm: f64,
    /// A new track is confirmed after this much of being seen.
    pub confirm_s: f64,
    /// A tentative track unseen this long is dropped.
    pub tentative_timeout_s: f64,
    /// Time constant of the smoothed fish colour.
    pub colour_smoothing_s: f64,
    /// A fish changes identity only after its colour says so this long …
    pub identity_hold_s: f64,
    /// … by at least this margin of smoothed colour score.
    pub identity_margin: f64,
    /// Position gain of the α–β filter.
    pub filter_alpha: f64,
    /// Velocity gain of the α–β filter.
    pub filter_beta: f64,
    /// A residual larger than this (mm) is a kick: velocity restarts from the jump.
    pub kick_residual_mm: f64,
    /// A coin within `hole_radius - coin_radius + this` of a hole centre is in it.
    pub hole_tolerance_mm: f64,
    /// A coin riding in a hole (unseen, carried along) has left it once its fish,
    /// moved since the coin was seen in it, has lain still, wholly seen, with
    /// nothing in its hole, for this long.
    pub hole_empty_s: f64,
    /// For this long after an item fell, the sightings beyond the edge near it are
    /// its own (it is seen dropping to the floor), not another item's.
    pub fallen_owns_s: f64,
    /// A falling item is seen in most frames of its drop: after going unseen longer
    /// than this, a sighting beyond the edge is something else. A time, not a count
    /// of frames (two frames at 30 frames/s are four at 60).
    pub fall_gap_s: f64,
    /// Margin around occluders, mm.
    pub occluder_margin_mm: f64,
    /// Centre of mass this far beyond the edge means the item fell, mm.
    pub off_table_margin_mm: f64,
    /// A sighting beyond the edge that stays within `scenery_tolerance_mm` of one
    /// spot this long is scenery, not an item (nothing in play rests there).
    pub scenery_after_s: f64,
    pub scenery_tolerance_mm: f64,
    /// The share of the frame interval the camera's shutter is open, when known
    /// (the camera's setting); `None` learns it from the detector's blur readings.
    pub exposure_share: Option<f64>,
    /// Where in its exposure a frame's instant lies (0 start, 0.5 middle, 1 end):
    /// the moment the poses of a frame are reported for. 1: when the picture was
    /// complete.
    pub frame_instant: f64,
}

impl TrackerConfig {
    /// Defaults for the standard items, checked.
    pub fn new(fps: f64, players: usize, table: Table, items: &Items) -> Result<Self, TrackError> {
        let cfg = TrackerConfig {
            fps,
            players,
            table,
            footprint: FishFootprint::new(items),
            coin_radius: items.coin.radius,
            friction_decel_mm_s2: 2000.0,
            restitution: 0.9,
            max_speed_mm_s: 5000.0,
            still_speed_mm_s: 40.0,
            gate_base_mm: 10.0,
            lost_gate_max_mm: 250.0,
            kick_penalty_mm: 15.0,
            lost_penalty_mm: 5.0,
            colour_weight_mm: 80.0,
            angle_weight_mm: 5.0,
            max_match_cost_mm: 500.0,
            confirm_s: 0.08,
            tentative_timeout_s: 0.2,
            colour_smoothing_s: 0.2,
            identity_hold_s: 0.5,
            identity_margin: 0.2,
            filter_alpha: 0.85,
            filter_beta: 0.5,
            kick_residual_mm: 8.0,
            hole_tolerance_mm: 1.5,
            hole_empty_s: 0.2,
            fallen_owns_s: 0.25,
            fall_gap_s: 2.0 / 30.0,
            occluder_margin_mm: 5.0,
            off_table_margin_mm: 1.0,
            scenery_after_s: 0.25,
            scenery_tolerance_mm: 2.0,
            exposure_share: None,
            frame_instant: 1.0,
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks the numbers (call again after changing fields).
    pub fn validate(&self) -> Result<(), TrackError> {
        if !(self.fps.is_finite() && self.fps > 0.0) {
            return Err(TrackError::BadFps(self.fps));
        }
        if self.players == 0 {
            return Err(TrackError::NoPlayers);
        }
        for (name, value) in [
            ("coin_radius", self.coin_radius),
            ("friction_decel_mm_s2", self.friction_decel_mm_s2),
            ("restitution", self.restitution),
            ("max_speed_mm_s", self.max_speed_mm_s),
            ("still_speed_mm_s", self.still_speed_mm_s),
            ("gate_base_mm", self.gate_base_mm),
            ("lost_gate_max_mm", self.lost_gate_max_mm),
            ("max_match_cost_mm", self.max_match_cost_mm),
            ("confirm_s", self.confirm_s),
            ("identity_hold_s", self.identity_hold_s),
            ("hole_empty_s", self.hole_empty_s),
            ("fallen_owns_s", self.fallen_owns_s),
            ("fall_gap_s", self.fall_gap_s),
            ("scenery_after_s", self.scenery_after_s),
            ("scenery_tolerance_mm", self.scenery_tolerance_mm),
            ("frame_instant", self.frame_instant),
            ("exposure_share", self.exposure_share.unwrap_or(0.0)),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(TrackError::BadSetting { name, value });
            }
        }
        Ok(())
    }

    fn frames(&self, seconds: f64) -> u64 {
        (seconds * self.fps).round().max(1.0) as u64
    }

    fn hole_reach(&self) -> f64 {
        (self.footprint.hole_radius() - self.coin_radius).max(0.0) + self.hole_tolerance_mm
    }

    /// The centre of mass of an item at a pose: what decides whether it falls.
    pub fn centre_of_mass(&self, kind: ItemKind, pose: &Pose) -> Point {
        match kind {
            ItemKind::Coin => pose.point(),
            ItemKind::Fish => self.footprint.centre_of_mass(pose),
        }
    }
}

/// What currently hides an item that is not seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hider {
    /// A hand or another occluder reported by the detector.
    Occluder,
    /// A fish (this track) lies where the coin is.
    Fish(TrackId),
}

/// One item in one frame, as the tracker believes it.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackedItem {
    pub track: TrackId,
    /// `None` for a coin whose owner is not known (loose at the start without a
    /// start state) or a fish whose colour is taken by another track.
    pub item: Option<ItemId>,
    pub kind: ItemKind,
    pub state: TrackState,
    /// Hole centre (fish, with theta) or centre (coin), table mm, where the
    /// sightings put it: for a moving item, where it was mid-exposure
    /// ([`TrackFrame::exposure`] tells where it is at the frame's instant).
    pub pose: Pose,
    pub velocity_mm_s: Vector,
    /// The velocity was restarted from a jump in this frame (a kick, a
    /// reappearance): only a rough guess.
    pub velocity_guessed: bool,
    /// Matched to a detection in this frame.
    pub seen: bool,
    pub last_seen: Option<FrameIdx>,
    pub hidden_by: Option<Hider>,
    /// The last matched detection said the item was partly covered.
    pub partly_hidden: bool,
    /// For a coin not seen in this frame: the fish in whose hole it is carried
    /// along (its pose is that hole's). A coin that was carried and no longer is,
    /// while still unseen, was found gone from the hole (thrown out unseen).
    pub carried_by: Option<TrackId>,
}

/// Something that changed in a frame (for logs and for the shot judge).
#[derive(Debug, Clone, PartialEq)]
pub enum TrackEvent {
    Confirmed {
        track: TrackId,
        item: Option<ItemId>,
    },
    Lost {
        track: TrackId,
    },
    Reacquired {
        track: TrackId,
        unseen_frames: u64,
    },
    Removed {
        track: TrackId,
        reason: RemovalReason,
    },
    /// An item that was off the table or long unseen was found again (put back).
    Revived {
        track: TrackId,
        item: ItemId,
    },
    IdentityChanged {
        track: TrackId,
        from: Option<ItemId>,
        to: ItemId,
    },
    /// Two coins' tracks that had crossed were exchanged back in this frame
    /// ([`IdentityOrigin::HoleOwner`]): `took` had taken the other coin's sighting by
    /// the jump at `since` that took it out of the hole of fish `hole`, so what it
    /// reported from `since` up to this frame was the coin `owner` names, while its
    /// own coin rode unseen in that hole. Names keep their tracks; the shot cutter
    /// tells the frames since `since` anew (`shots::ShotCutter::push`).
    Retold {
        took: TrackId,
        owner: TrackId,
        since: FrameIdx,
        hole: TrackId,
    },
    /// Observational (decides nothing): how a track came by its name when it was
    /// confirmed, placed or revived, for the record's identity evidence.
    Origin {
        track: TrackId,
        item: Option<ItemId>,
        from: IdentityOrigin,
    },
    /// Observational: a seen track's sighting lay `mm` from its prediction (a kick, or
    /// the track taking another item's sighting). `lookalikes`: other items of its
    /// kind (coins; fish are told apart by colour) whose prediction lay at least as
    /// near that sighting.
    Jumped {
        track: TrackId,
        mm: f64,
        lookalikes: u32,
    },
    /// Observational: a track seen again after `unseen_frames`, `mm` from where it
    /// was held or predicted, with `lookalikes` counted as for [`TrackEvent::Jumped`].
    SeenAgain {
        track: TrackId,
        unseen_frames: u64,
        mm: f64,
        lookalikes: u32,
    },
}

/// How a track came by its identity (observational: [`TrackEvent::Origin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityOrigin {
    /// Named on its first sightings: a fish by its colour, a coin by the hole it lay in.
    FirstSight,
    /// Confirmed with no owner (a loose coin, a fish whose colour is taken).
    UnknownOwner,
    /// A coin placed unseen in its owner's hole at the match's opening (R2).
    Opening,
    /// A nameless coin named by elimination (one coin per player is unaccounted for).
    Elimination,
    /// An item found again where a put-back brings it: a fish by its colour, a coin
    /// in its owner's hole.
    PutBack,
    /// A newcomer of unknown owner taken for the coin left where it was last seen
    /// when its hole moved away.
    LeftBehind,
    /// A newcomer of unknown owner taken for a vanished coin that could have reached it.
    NearVanished,
    /// A coin seen again in a tag's hole just after that tag's own coin was seen out
    /// of it by a jump: the two coins' tracks had crossed, and were exchanged back.
    HoleOwner,
    /// Loose coins that went unseen and were seen again apart (struck under blur or a
    /// hand), named together: each by where it was last seen, the names giving the
    /// least total displacement ([`Tracker`]'s `name_regained_together`).
    Regrouped,
}

impl IdentityOrigin {
    /// The name written in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityOrigin::FirstSight => "first-sight",
            IdentityOrigin::UnknownOwner => "unknown-owner",
            IdentityOrigin::Opening => "opening",
            IdentityOrigin::Elimination => "elimination",
            IdentityOrigin::PutBack => "put-back",
            IdentityOrigin::LeftBehind => "left-behind",
            IdentityOrigin::NearVanished => "near-vanished",
            IdentityOrigin::HoleOwner => "hole-owner",
            IdentityOrigin::Regrouped => "regrouped",
        }
    }
}

/// The tracker's output for one frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrackFrame {
    pub frame: FrameIdx,
    /// Every confirmed, tentative and removed track, in track order.
    pub items: Vec<TrackedItem>,
    /// The occluders of this frame (the shot judge asks what could have hidden an item).
    pub occluders: Vec<super::detections::Occluder>,
    pub events: Vec<TrackEvent>,
    /// The camera's exposure as known in this frame.
    pub exposure: Timing,
}

impl TrackFrame {
    /// The item with this identity, if tracked.
    pub fn get(&self, id: ItemId) -> Option<&TrackedItem> {
        self.items.iter().find(|t| t.item == Some(id))
    }
}

#[derive(Debug, Clone)]
struct Track {
    id: TrackId,
    kind: ItemKind,
    item: Option<ItemId>,
    state: TrackState,
    pos: Point,
    vel: Vector,
    theta: f64,
    born: FrameIdx,
    last_seen: Option<FrameIdx>,
    last_seen_pos: Point,
    /// The last centre of mass known to be on the table.
    last_com_on_table: Point,
    hits: u32,
    colour: Vec<f64>,
    /// The best a sighting of it fitted its kind's outline (a detection's confidence,
    /// 0..1): what a tag put back must once have shown (`Tracker::confirm`).
    best_fit: f64,
    switch_since: Option<(PlayerIdx, FrameIdx)>,
    seen_now: bool,
    hidden_by: Option<Hider>,
    partly_hidden: bool,
    /// Predictions for this frame: free sliding, and with collisions.
    pred: [(Point, Vector); 2],
    det: Option<usize>,
    /// Something moving (or a hand) is close enough this frame to set it moving.
    kick_ok: bool,
    /// Something moving (not a hand) is close enough this frame to strike it.
    struck_ok: bool,
    /// The last frame the velocity was restarted from a jump (a kick, a reappearance):
    /// for a few frames after, the velocity is only a rough guess.
    kicked_at: Option<FrameIdx>,
    /// The last frame the velocity was restarted from a jump, not filtered.
    jumped_at: Option<FrameIdx>,
    /// For a coin: the fish in whose hole it lay when last seen. A coin in a hole
    /// travels with its fish (and often vanishes in the blur or under the hand),
    /// so while unseen it is carried along rather than held where it was.
    rides: Option<TrackId>,
    /// For a coin: when it was last seen out of the hole it had lain in, and that
    /// hole's fish, if it got there by a jump (thrown out, or a sighting of
    /// another coin taken for it).
    left_hole: Option<(FrameIdx, TrackId)>,
    /// Unseen and carried in the hole of `rides` in this frame, and in the last.
    carried: bool,
    was_carried: bool,
    /// For a coin carried unseen: where its hole was, and how fast it went, frame by
    /// frame since the coin was last seen (`Tracker::thrown_could_reach`).
    ride_path: Vec<(FrameIdx, Point, Vector)>,
    /// Since when the hole this coin rides in is seen empty with its fish at rest.
    hole_empty_since: Option<FrameIdx>,
    /// The frame it was taken off the table (it fell), and its velocity then.
    removed_at: Option<FrameIdx>,
    fall_vel: Vector,
    /// For a loose coin: the frame it was seen again by a jump after going unseen,
    /// and where it had been seen last before that.
    regained: Option<(FrameIdx, Point)>,
}

impl Track {
    /// A nameless track of a `kind` item at `pose` in `state`, at rest, never seen,
    /// with nothing remembered of it yet.
    fn fresh(
        id: TrackId,
        kind: ItemKind,
        pose: Pose,
        state: TrackState,
        cfg: &TrackerConfig,
    ) -> Track {
        Track {
            id,
            kind,
            item: None,
            state,
            pos: pose.point(),
            vel: Vector::zeros(),
            theta: pose.angle(),
            born: 0,
            last_seen: None,
            last_seen_pos: pose.point(),
            last_com_on_table: cfg.centre_of_mass(kind, &pose),
            hits: 0,
            colour: vec![0.0; cfg.players],
            best_fit: 0.0,
            switch_since: None,
            seen_now: false,
            hidden_by: None,
            partly_hidden: false,
            pred: [(pose.point(), Vector::zeros()); 2],
            det: None,
            kick_ok: false,
            struck_ok: false,
            kicked_at: None,
            jumped_at: None,
            rides: None,
            left_hole: None,
            carried: false,
            was_carried: false,
            ride_path: Vec::new(),
            hole_empty_since: None,
            removed_at: None,
            fall_vel: Vector::zeros(),
            regained: None,
        }
    }

    /// A confirmed track of a known item at a known pose, never seen yet (a start
    /// state, a coin placed by R2).
    fn known(id: TrackId, item: ItemId, pose: Pose, cfg: &TrackerConfig) -> Track {
        let mut colour = vec![0.0; cfg.players];
        if item.is_fish() && item.owner < colour.len() {
            colour[item.owner] = 1.0;
        }
        Track {
            item: Some(item),
            hits: u32::MAX / 2,
            colour,
            best_fit: 1.0,
            ..Track::fresh(id, item.kind, pose, TrackState::Tracked, cfg)
        }
    }

    /// A coin carried unseen (`carried`) in a hole that has not moved since the coin
    /// was seen in it (or placed there by R2) is still there, only missed: it has not
    /// vanished, and a coin sighted far off (put back into another hole) is another.
    fn in_unmoved_hole(&self, carried: bool, cfg: &TrackerConfig) -> bool {
        carried && (self.pos - self.last_seen_pos).norm() <= cfg.footprint.hole_radius()
    }

    fn pose(&self) -> Pose {
        match self.kind {
            ItemKind::Fish => Pose::fish(self.pos.x, self.pos.y, self.theta),
            ItemKind::Coin => Pose::coin(self.pos.x, self.pos.y),
        }
    }
    fn active(&self) -> bool {
        !matches!(self.state, TrackState::Removed(_))
    }
    /// This track's course (where it is, how it moves, what it was seen doing) under
    /// `names`' name: its id, item, colour and the counts that go with a name.
    fn named_as(mut self, names: &Track) -> Track {
        self.id = names.id;
        self.item = names.item;
        self.colour = names.colour.clone();
        self.hits = names.hits;
        self.born = names.born;
        self.switch_since = names.switch_since;
        self
    }

    /// Takes the track off the table in `frame` for `reason`, falling at `fall_vel`,
    /// and says so.
    fn remove(&mut self, reason: RemovalReason, frame: FrameIdx, fall_vel: Vector) -> TrackEvent {
        self.state = TrackState::Removed(reason);
        self.removed_at = Some(frame);
        self.fall_vel = fall_vel;
        self.vel = Vector::zeros();
        TrackEvent::Removed {
            track: self.id,
            reason,
        }
    }
    fn owner_guess(&self) -> Option<PlayerIdx> {
        if let Some(id) = self.item {
            return Some(id.owner);
        }
        argmax(&self.colour)
            .filter(|&(_, s)| s > 0.0)
            .map(|(k, _)| k)
    }
}

fn argmax(v: &[f64]) -> Option<(usize, f64)> {
    v.iter()
        .copied()
        .enumerate()
        .fold(None, |best, (i, s)| match best {
            Some((_, b)) if b >= s => best,
            _ => Some((i, s)),
        })
}

/// Wraps an angle difference into (-π, π].
fn wrap(a: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    let r = a.rem_euclid(tau);
    if r > std::f64::consts::PI {
        r - tau
    } else {
        r
    }
}

/// Where the segment from `inside` to `outside` crosses the table boundary.
pub fn edge_crossing(table: &Table, inside: Point, outside: Point) -> Point {
    if !table.contains(inside) {
        return table.nearest_edge_point(inside);
    }
    if table.contains(outside) {
        return table.nearest_edge_point(outside);
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if table.contains(inside + (outside - inside) * mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    inside + (outside - inside) * ((lo + hi) / 2.0)
}

/// The entries of `all` whose `drop` flag is not set.
fn kept<T: Clone>(all: &[T], drop: &[bool]) -> Vec<T> {
    all.iter()
        .zip(drop)
        .filter(|(_, &d)| !d)
        .map(|(x, _)| x.clone())
        .collect()
}

/// A velocity guessed from a jump, turned along the streak the item was seen as:
/// the blur shows the direction it moved in during the exposure far better than
/// the jump from where it was last known (a coin thrown out of a hole left it
/// somewhere between two frames). The speed stays the jump's (a streak's faint
/// ends make its length short).
fn along_streak(vel: Vector, streak: Option<Streak>) -> Vector {
    let Some(s) = streak else { return vel };
    let d = s.to - s.from;
    if d.norm() <= 1e-9 {
        return vel;
    }
    let dir = d / d.norm();
    let sign = if dir.dot(&vel) < 0.0 { -1.0 } else { 1.0 };
    dir * (sign * vel.norm())
}

fn streak_distance(p: Point, streak: &Streak) -> f64 {
    (p - closest_on_segment(p, streak.from, streak.to)).norm()
}

/// Pure multi-object tracker in table millimetres (see the module docs).
#[derive(Debug, Clone)]
pub struct Tracker {
    cfg: TrackerConfig,
    tracks: Vec<Track>,
    next_id: u32,
    last_frame: Option<FrameIdx>,
    /// Spots beyond the edge where something has been sighted without moving.
    still_beyond_edge: Vec<StillSpot>,
    /// The camera's exposure: how far ahead of its sighting a moving item is reported.
    exposure: Exposure,
    /// The clip opens a match and the coins the eye has not found are still to be
    /// placed in their owners' holes (R2), once every fish is known.
    opening_pending: bool,
    /// The frame by which every player's fish was known.
    opening_known_at: Option<FrameIdx>,
}

/// How long the eye is given, once every fish is known at a match's opening, to find
/// the coins in their holes before those it has not found are placed there by R2
/// (the coins' look is learned from the holes in the first views).
const OPENING_LOOK_S: f64 = 1.0;

/// The fit (0..1, a detection's confidence) a newcomer must once have shown to be taken
/// for a tag put back: more of a tag's outline explained than not.
const PUT_BACK_MIN_FIT: f64 = 0.5;

/// How soon after a coin left a hole by a jump another coin seen again in that
/// hole shows their tracks crossed: the hole's tag is knocked away and stops
/// within a fraction of a second; later the hole may have been filled by a
/// put-back.
const CROSSED_NAMES_S: f64 = 0.5;

/// A place beyond the table's edge with a sighting in it: since when, and when last.
#[derive(Debug, Clone, Copy)]
struct StillSpot {
    pt: Point,
    first: FrameIdx,
    last: FrameIdx,
}

impl Tracker {
    pub fn new(cfg: TrackerConfig) -> Tracker {
        let exposure = match cfg.exposure_share {
            Some(share) => Exposure::given(share, cfg.frame_instant),
            None => Exposure::learned(cfg.frame_instant),
        };
        Tracker {
            cfg,
            tracks: Vec::new(),
            next_id: 0,
            last_frame: None,
            still_beyond_edge: Vec::new(),
            exposure,
            opening_pending: false,
            opening_known_at: None,
        }
    }

    /// A tracker that knows where every item starts (`state.json`, a previous
    /// record): these tracks exist from the first frame with their identities.
    pub fn with_start(cfg: TrackerConfig, start: &StartState) -> Tracker {
        let mut t = Tracker::new(cfg);
        for (id, pose) in &start.poses {
            let tid = t.new_id();
            let known = Track::known(tid, *id, *pose, &t.cfg);
            t.tracks.push(known);
        }
        t
    }

    /// A tracker for a clip that opens a match (no start state): by R2 every coin
    /// then lies in its owner's hole, so a coin the eye does not make out there
    /// (copper in a shaded hole, a low resolution) is still known to be in play,
    /// carried with its fish, and lost with it if it leaves the table.
    pub fn at_opening(cfg: TrackerConfig) -> Tracker {
        let mut t = Tracker::new(cfg);
        t.opening_pending = true;
        t
    }

    pub fn config(&self) -> &TrackerConfig {
        &self.cfg
    }

    fn new_id(&mut self) -> TrackId {
        self.next_id += 1;
        TrackId(self.next_id - 1)
    }

    /// Advances the tracker to `frame`. Call once per frame, in order, even when
    /// `dets` is empty: unseen items are then predicted or held.
    pub fn update(&mut self, frame: FrameIdx, dets: &FrameDetections) -> TrackFrame {
        let fps = self.cfg.fps;
        let dt = match self.last_frame {
            Some(l) if frame > l => (frame - l) as f64 / fps,
            Some(_) => 0.0,
            None => 1.0 / fps,
        };
        self.last_frame = Some(frame);
        let mut events = Vec::new();

        // Step 0: scenery out.
        let without_scenery = self.drop_scenery(frame, dets);
        let dets = without_scenery.as_ref().unwrap_or(dets);
        let unclaimed = self.claim_fallen(frame, dets);
        let dets = unclaimed.as_ref().unwrap_or(dets);

        for share in dets.fish.iter().filter_map(|d| d.exposure_share) {
            self.exposure.observe(share);
        }

        // Step 1: predict.
        self.predict(dt);

        self.mark_kickable(dets);

        // Steps 2–3: gate, cost and assign, fish and coins apart.
        for t in &mut self.tracks {
            t.det = None;
            t.seen_now = false;
            t.was_carried = t.carried;
            t.carried = false;
        }
        let fish_pts: Vec<(Point, f64)> = dets.fish.iter().map(|d| (d.pt_in_table, 0.0)).collect();
        let coin_pts: Vec<(Point, f64)> = dets
            .coins
            .iter()
            .map(|d| {
                let half = d
                    .streak
                    .map(|s| (s.to - s.from).norm() / 2.0)
                    .unwrap_or(0.0);
                (d.pt_in_table, half)
            })
            .collect();
        let fish_used = self.associate(ItemKind::Fish, frame, dt, dets, &fish_pts);
        let coin_used = self.associate(ItemKind::Coin, frame, dt, dets, &coin_pts);

        // Step 4: update matched tracks. (Observed first, deciding nothing: how far
        // each sighting lay from its track's prediction and which look-alikes lay
        // as near, for the record's identity evidence.)
        let near: Vec<Option<(f64, u32)>> = (0..self.tracks.len())
            .map(|i| self.lookalikes(i, dets))
            .collect();
        for (i, near) in near.iter().enumerate() {
            if let Some(j) = self.tracks[i].det {
                let unseen_since = match self.tracks[i].state {
                    TrackState::Lost { since } => Some(since),
                    _ => None,
                };
                let before = &self.tracks[i];
                let seen_last = (
                    before.last_seen,
                    before.last_seen_pos,
                    before.rides.is_none(),
                );
                self.update_matched(i, j, frame, dt, dets, &mut events);
                let t = &mut self.tracks[i];
                if let (Some(ls), from, true) = seen_last {
                    if t.kind == ItemKind::Coin
                        && t.jumped_at == Some(frame)
                        && frame.saturating_sub(ls) > 1
                    {
                        t.regained = Some((frame, from));
                    }
                }
                let t = &self.tracks[i];
                let (mm, lookalikes) = near.unwrap_or((0.0, 0));
                if let Some(since) = unseen_since {
                    events.push(TrackEvent::SeenAgain {
                        track: t.id,
                        unseen_frames: frame.saturating_sub(since),
                        mm,
                        lookalikes,
                    });
                }
                if t.jumped_at == Some(frame) {
                    events.push(TrackEvent::Jumped {
                        track: t.id,
                        mm,
                        lookalikes,
                    });
                }
            }
        }

        self.update_rides(frame, &mut events);
        self.name_regained_together(frame, &mut events);

        // Step 5: unmatched tracks.
        let tentative_timeout = self.cfg.frames(self.cfg.tentative_timeout_s);
        for i in 0..self.tracks.len() {
            if self.tracks[i].det.is_none() && self.tracks[i].active() {
                self.update_unmatched(i, frame, dt, dets, tentative_timeout, &mut events);
            }
        }
        self.tracks
            .retain(|t| !matches!(t.state, TrackState::Removed(RemovalReason::Unconfirmed)));

        // Step 6: births from detections nobody explains.
        self.births(frame, dets, &fish_used, &coin_used);

        // Step 7: confirmation and identities.
        self.confirm(frame, &mut events);

        // Step 8: fish colour hysteresis.
        self.fish_identity(frame, &mut events);

        // Step 9: a loose coin named by elimination.
        self.name_by_elimination(&mut events);

        // Step 10: at a match's opening, the coins not found lie in their holes (R2).
        if self.opening_pending {
            self.place_unseen_coins_by_r2(frame, &mut events);
        }

        self.tracks
            .retain(|t| !matches!(t.state, TrackState::Removed(RemovalReason::MergedInto(_))));

        TrackFrame {
            frame,
            items: self
                .tracks
                .iter()
                .map(|t| TrackedItem {
                    track: t.id,
                    item: t.item,
                    kind: t.kind,
                    state: t.state,
                    pose: t.pose(),
                    velocity_mm_s: t.vel,
                    seen: t.seen_now,
                    last_seen: t.last_seen,
                    hidden_by: t.hidden_by,
                    partly_hidden: t.partly_hidden,
                    velocity_guessed: t.jumped_at == Some(frame),
                    carried_by: t.rides.filter(|_| t.carried),
                })
                .collect(),
            exposure: self.exposure.timing(),
            occluders: dets.occluders.clone(),
            events,
        }
    }

    /// For a track matched in this frame: how far its sighting lay from its
    /// prediction (the one the match took), and how many other confirmed coins on
    /// the table were predicted at least as near that sighting and were not seen on
    /// their own path in this frame (look-alikes that could have made it). Fish
    /// count none: their colour tells them apart.
    /// Observational only.
    fn lookalikes(&self, i: usize, dets: &FrameDetections) -> Option<(f64, u32)> {
        let t = &self.tracks[i];
        let j = t.det?;
        let z = match t.kind {
            ItemKind::Fish => dets.fish.get(j)?.pt_in_table,
            ItemKind::Coin => dets.coins.get(j)?.pt_in_table,
        };
        let mm = (z - t.pred[0].0).norm();
        if t.kind == ItemKind::Fish {
            return Some((mm, 0));
        }
        // A coin seen in this frame on its own path (its sighting within the kick
        // residual of its prediction) made that sighting, not this one.
        let on_own_path = |o: &Track| {
            o.det
                .and_then(|k| dets.coins.get(k))
                .is_some_and(|d| (d.pt_in_table - o.pred[0].0).norm() <= self.cfg.kick_residual_mm)
        };
        let n = self
            .tracks
            .iter()
            .filter(|o| {
                o.id != t.id
                    && o.kind == ItemKind::Coin
                    && o.state.on_table()
                    && o.state != TrackState::Tentative
                    && (z - o.pred[0].0).norm() <= mm
                    && !on_own_path(o)
            })
            .count();
        Some((mm, n as u32))
    }

    /// Sets the hole each coin seen in this frame lies in; and exchanges back two
    /// coins' tracks that crossed in a collision.
    ///
    /// Two coins ride unseen in the holes of colliding tags, and one is thrown out.
    /// What is seen of it may be taken by the other's track (both have been unseen
    /// a while, and the nearest wins), which leaves the hole it jumped from; then
    /// the coin still in that hole, seen again, can only be taken by the coin that
    /// was truly thrown, riding unseen in its own. A coin seen again in a hole that
    /// another coin left by a jump a moment ago is that hole's own coin: from then
    /// on each of the two tracks follows what the other did (each keeps its past,
    /// true up to the jump).
    fn update_rides(&mut self, frame: FrameIdx, events: &mut Vec<TrackEvent>) {
        let reach = self.cfg.hole_reach();
        let moment = self.cfg.frames(CROSSED_NAMES_S);
        let fish: Vec<(TrackId, Point)> = self
            .tracks
            .iter()
            .filter(|f| f.kind == ItemKind::Fish && f.state.on_table())
            .map(|f| (f.id, f.pos))
            .collect();
        let mut crossed: Vec<(usize, TrackId)> = Vec::new();
        for (i, t) in self.tracks.iter_mut().enumerate() {
            if t.kind != ItemKind::Coin || !t.seen_now {
                continue;
            }
            let before = t.rides;
            t.rides = fish
                .iter()
                .filter(|(_, p)| (p - t.pos).norm() <= reach)
                .min_by(|a, b| (a.1 - t.pos).norm().total_cmp(&(b.1 - t.pos).norm()))
                .map(|(id, _)| *id);
            if t.jumped_at != Some(frame) || before == t.rides {
                continue;
            }
            if let Some(from) = before {
                t.left_hole = Some((frame, from));
            }
            if let (Some(into), Some(_)) = (t.rides, before) {
                crossed.push((i, into));
            }
        }
        for (i, into) in crossed {
            let Some(j) = self.tracks.iter().position(|b| {
                b.kind == ItemKind::Coin
                    && b.id != self.tracks[i].id
                    && b.item.is_some()
                    && b.rides != Some(into)
                    && b.left_hole
                        .is_some_and(|(f, from)| from == into && f < frame && frame - f <= moment)
            }) else {
                continue;
            };
            // Each name keeps its track (its past is its own up to the jump); what
            // each follows from now on is exchanged, and what `j` followed since
            // the jump is told anew as the other's.
            let since = self.tracks[j].left_hole.map(|(f, _)| f);
            let (a, b) = (self.tracks[i].clone(), self.tracks[j].clone());
            self.tracks[i] = b.clone().named_as(&a);
            self.tracks[j] = a.named_as(&b);
            self.tracks[i].left_hole = None;
            self.tracks[j].left_hole = None;
            if let Some(since) = since {
                events.push(TrackEvent::Retold {
                    took: self.tracks[j].id,
                    owner: self.tracks[i].id,
                    since,
                    hole: into,
                });
            }
            for k in [i, j] {
                events.push(TrackEvent::Origin {
                    track: self.tracks[k].id,
                    item: self.tracks[k].item,
                    from: IdentityOrigin::HoleOwner,
                });
            }
        }
    }

    /// Names loose coins that went unseen and were seen again apart together.
    ///
    /// Coins lying close together are struck at once while the blur or the hand hides
    /// them; each comes back tens of millimetres off, one frame after another, and the
    /// first to show takes the name of whichever coin was last seen nearest, with the
    /// others still unseen: on a cluster of three struck coins the first back was
    /// nearer to where the middle one had lain than to its own place, and two names
    /// came out exchanged. Once a coin is seen again so, the coins seen again by a
    /// jump within a moment of one another (`CROSSED_NAMES_S`) are named anew, as a
    /// group: the names giving the least total squared displacement from where each
    /// was last seen (struck coins each go their own way, and a name that assumes one
    /// coin went far while another went little is the less likely). Only coins that
    /// lay within a tag's length of one another, step by step, are one group. Coins
    /// riding in holes are left to their fish; names change only where the group's
    /// total improves by more than the tracker's base gate would allow a sighting to
    /// be off ([`TrackerConfig::gate_base_mm`], squared).
    fn name_regained_together(&mut self, frame: FrameIdx, events: &mut Vec<TrackEvent>) {
        let moment = self.cfg.frames(CROSSED_NAMES_S);
        let regained = |t: &Track| {
            t.kind == ItemKind::Coin
                && t.item.is_some()
                && t.seen_now
                && t.rides.is_none()
                && t.state == TrackState::Tracked
                && t.regained
                    .is_some_and(|(f, _)| frame.saturating_sub(f) <= moment)
        };
        let all: Vec<(usize, Point)> = (0..self.tracks.len())
            .filter(|&i| regained(&self.tracks[i]))
            .filter_map(|i| self.tracks[i].regained.map(|(_, from)| (i, from)))
            .collect();
        // One tag strikes at once only coins within its length of one another: the
        // group is those linked to a coin seen again now by such steps.
        let link = 2.0 * self.cfg.footprint.reach();
        let mut in_group: Vec<bool> = all
            .iter()
            .map(|&(i, _)| self.tracks[i].regained.is_some_and(|(f, _)| f == frame))
            .collect();
        loop {
            let joining: Vec<usize> = (0..all.len())
                .filter(|&a| !in_group[a])
                .filter(|&a| {
                    (0..all.len()).any(|b| in_group[b] && (all[a].1 - all[b].1).norm() <= link)
                })
                .collect();
            if joining.is_empty() {
                break;
            }
            for a in joining {
                in_group[a] = true;
            }
        }
        let (group, from): (Vec<usize>, Vec<Point>) = all
            .iter()
            .zip(&in_group)
            .filter(|(_, &g)| g)
            .map(|(&(i, from), _)| (i, from))
            .unzip();
        if group.len() < 2 {
            return;
        }
        let cost = DMatrix::from_fn(group.len(), group.len(), |a, b| {
            (self.tracks[group[b]].pos - from[a]).norm_squared()
        });
        let best = assign(&cost, f64::INFINITY);
        let as_named: f64 = (0..group.len()).map(|a| cost[(a, a)]).sum();
        let total: f64 = best.matches.iter().map(|&(a, b)| cost[(a, b)]).sum();
        if best.matches.len() != group.len() || as_named - total <= self.cfg.gate_base_mm.powi(2) {
            return;
        }
        let before: Vec<Track> = group.iter().map(|&i| self.tracks[i].clone()).collect();
        for &(a, b) in &best.matches {
            if a == b {
                continue;
            }
            let mut course = before[b].clone().named_as(&before[a]);
            course.left_hole = None;
            // Where a coin was last seen before the gap goes with its name.
            course.regained = before[b]
                .regained
                .zip(before[a].regained)
                .map(|((f, _), (_, from))| (f, from));
            self.tracks[group[a]] = course;
            events.push(TrackEvent::Origin {
                track: before[a].id,
                item: before[a].item,
                from: IdentityOrigin::Regrouped,
            });
        }
    }

    /// The fish track in whose hole coin `t` rides (`Track::rides`), if any.
    fn carrier(&self, t: &Track) -> Option<&Track> {
        let id = t.rides?;
        self.tracks.iter().find(|f| f.id == id)
    }

    /// The fish an unseen coin rides in, if that fish is still tracked: its pose
    /// and velocity, or where and when it left the table.
    fn riding(&self, t: &Track) -> Option<Result<(Point, Vector), RemovalReason>> {
        let f = self.carrier(t)?;
        match f.state {
            TrackState::Tracked | TrackState::Lost { .. } => Some(Ok((f.pos, f.vel))),
            TrackState::Removed(r @ RemovalReason::OffTable { .. }) => Some(Err(r)),
            _ => None,
        }
    }

    /// Whether the hole coin `i` rides in is seen empty: its fish is seen at rest
    /// (a coin in a still hole shows its rim; in a moving one it may be blurred
    /// away), not partly covered, with no occluder over the hole, and no coin is
    /// sighted in the hole.
    fn hole_seen_empty(&self, i: usize, dets: &FrameDetections) -> bool {
        let c = &self.cfg;
        let Some(f) = self.carrier(&self.tracks[i]) else {
            return false;
        };
        f.seen_now
            && !f.partly_hidden
            && f.state == TrackState::Tracked
            && f.vel.norm() < c.still_speed_mm_s
            && !dets.occluded(f.pos, c.coin_radius + c.occluder_margin_mm)
            && !dets.coins.iter().any(|d| {
                (d.pt_in_table - f.pos).norm() <= c.footprint.hole_radius() + c.gate_base_mm
            })
    }

    /// Whether `t` was removed no longer than `fallen_owns_s` before `frame`: what is
    /// seen then where it went, or where it lay, is still its own.
    fn removed_a_moment_ago(&self, t: &Track, frame: FrameIdx) -> bool {
        let moment = self.cfg.frames(self.cfg.fallen_owns_s);
        t.removed_at
            .is_some_and(|f| frame.saturating_sub(f) <= moment)
    }

    /// An item that just fell is seen dropping beyond the edge for a few frames:
    /// those sightings are its own, and no item still on the table (whose gate may
    /// have grown while it was unseen) may take them. Each fallen track claims the
    /// nearest such sighting of its kind within reach and follows it. `None` when
    /// nothing is claimed.
    fn claim_fallen(&mut self, frame: FrameIdx, dets: &FrameDetections) -> Option<FrameDetections> {
        let c = &self.cfg;
        let fallen: Vec<usize> = (0..self.tracks.len())
            .filter(|&i| {
                let t = &self.tracks[i];
                matches!(t.state, TrackState::Removed(RemovalReason::OffTable { .. }))
                    && t.removed_at.is_some_and(|f| frame > f)
                    && self.removed_a_moment_ago(t, frame)
            })
            .collect();
        if fallen.is_empty() {
            return None;
        }
        let beyond = |kind: ItemKind, p: Point, theta: f64| {
            let com = c.centre_of_mass(kind, &Pose::fish(p.x, p.y, theta));
            c.table.signed_distance(com) < -c.off_table_margin_mm
        };
        let mut fish_taken = vec![false; dets.fish.len()];
        let mut coin_taken = vec![false; dets.coins.len()];
        let mut moves = Vec::new();
        for &i in &fallen {
            let t = &self.tracks[i];
            let since = t.last_seen.unwrap_or(t.born).max(t.removed_at.unwrap_or(0));
            let gap = frame.saturating_sub(since);
            if gap > c.frames(c.fall_gap_s) {
                continue;
            }
            // One taken off on a prediction was never seen going: its speed and way
            // are guesses, and its fall may be seen as far off as anything could go
            // meanwhile (seed 777's sweep-022: a coin struck at rest unseen, its fall
            // seen 43 mm from the guess, taken by a coin lost 79 mm away).
            let speed = match t.state {
                TrackState::Removed(RemovalReason::OffTable {
                    evidence: ExitEvidence::Extrapolated,
                    ..
                }) => c.max_speed_mm_s,
                _ => 1.5 * t.fall_vel.norm(),
            };
            let reach = (c.gate_base_mm + speed * gap as f64 / c.fps).min(c.lost_gate_max_mm);
            let pts: Vec<(usize, Point, f64)> = match t.kind {
                ItemKind::Fish => dets
                    .fish
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| !fish_taken[*j])
                    .map(|(j, d)| (j, d.pt_in_table, d.theta))
                    .collect(),
                ItemKind::Coin => dets
                    .coins
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| !coin_taken[*j])
                    .map(|(j, d)| (j, d.pt_in_table, 0.0))
                    .collect(),
            };
            let best = pts
                .into_iter()
                .filter(|(_, p, th)| beyond(t.kind, *p, *th))
                .map(|(j, p, th)| (j, p, th, (p - t.pos).norm()))
                .filter(|x| x.3 <= reach)
                .min_by(|a, b| a.3.total_cmp(&b.3));
            if let Some((j, p, th, _)) = best {
                match t.kind {
                    ItemKind::Fish => fish_taken[j] = true,
                    ItemKind::Coin => coin_taken[j] = true,
                }
                moves.push((i, p, th));
            }
        }
        if moves.is_empty() {
            return None;
        }
        for (i, p, th) in moves {
            let t = &mut self.tracks[i];
            t.pos = p;
            t.theta = th;
            t.last_seen = Some(frame);
            t.last_seen_pos = p;
        }
        let mut out = dets.clone();
        out.fish = kept(&dets.fish, &fish_taken);
        out.coins = kept(&dets.coins, &coin_taken);
        Some(out)
    }

    /// Nothing in play rests beyond the edge (it falls), so a sighting that stays
    /// put there is scenery: the table's front face read as a coin, the floor, an
    /// item already on the floor. Such sightings are taken out of the frame before
    /// anything is matched (a lost coin's widening gate would otherwise find one).
    /// `None` when there is nothing to take out.
    fn drop_scenery(&mut self, frame: FrameIdx, dets: &FrameDetections) -> Option<FrameDetections> {
        let cfg = &self.cfg;
        let beyond = |p: Point| cfg.table.signed_distance(p) < -cfg.off_table_margin_mm;
        let fish_com = |d: &FishDetection| {
            cfg.centre_of_mass(
                ItemKind::Fish,
                &Pose::fish(d.pt_in_table.x, d.pt_in_table.y, d.theta),
            )
        };
        let settled = cfg.frames(cfg.scenery_after_s);
        let tol = cfg.scenery_tolerance_mm;
        let spots = &mut self.still_beyond_edge;
        let mut is_scenery = |p: Point| match spots.iter_mut().find(|s| (s.pt - p).norm() <= tol) {
            Some(s) => {
                s.last = frame;
                frame.saturating_sub(s.first) >= settled
            }
            None => {
                spots.push(StillSpot {
                    pt: p,
                    first: frame,
                    last: frame,
                });
                false
            }
        };
        let fish_drop: Vec<bool> = dets
            .fish
            .iter()
            .map(|d| beyond(fish_com(d)) && is_scenery(d.pt_in_table))
            .collect();
        let coin_drop: Vec<bool> = dets
            .coins
            .iter()
            .map(|d| beyond(d.pt_in_table) && is_scenery(d.pt_in_table))
            .collect();
        // A spot empty for as long as it takes to become scenery is forgotten, unless
        // it had become scenery: scenery does not leave, it is only hidden for a while
        // (an arm reaching over the edge, its shadow), and seen again it is no newcomer
        // for a lost item's widening gate to take.
        self.still_beyond_edge.retain(|s| {
            frame.saturating_sub(s.last) <= settled || s.last.saturating_sub(s.first) >= settled
        });
        if !fish_drop.iter().chain(&coin_drop).any(|&d| d) {
            return None;
        }
        let mut out = dets.clone();
        out.fish = kept(&dets.fish, &fish_drop);
        out.coins = kept(&dets.coins, &coin_drop);
        Some(out)
    }

    fn held(t: &Track) -> bool {
        t.hidden_by.is_some() && t.vel.norm() == 0.0
    }

    fn predict(&mut self, dt: f64) {
        let decel = self.cfg.friction_decel_mm_s2;
        for t in self.tracks.iter_mut().filter(|t| t.active()) {
            let free = if Self::held(t) {
                (t.pos, Vector::zeros())
            } else {
                advance(t.pos, t.vel, dt, decel)
            };
            t.pred = [free, free];
        }
        // Coins: collision-aware hypothesis (twins keep identity through a swap).
        let coins: Vec<usize> = (0..self.tracks.len())
            .filter(|&i| self.tracks[i].active() && self.tracks[i].kind == ItemKind::Coin)
            .collect();
        if coins.len() >= 2 {
            let mut bodies: Vec<Body> = coins
                .iter()
                .map(|&i| {
                    let t = &self.tracks[i];
                    Body {
                        pos: t.pos,
                        vel: t.vel,
                        radius: self.cfg.coin_radius,
                        free: !Self::held(t) && t.state != TrackState::Tentative,
                    }
                })
                .collect();
            if predict_bodies(&mut bodies, dt, decel, self.cfg.restitution) {
                for (k, &i) in coins.iter().enumerate() {
                    if bodies[k].free {
                        self.tracks[i].pred[1] = (bodies[k].pos, bodies[k].vel);
                    }
                }
            }
        }
    }

    /// A resting item starts moving only when struck: by a moving item that comes
    /// within touching distance in this frame, or by a hand over or beside it.
    fn mark_kickable(&mut self, dets: &FrameDetections) {
        let c = &self.cfg;
        let radius = |k: ItemKind| match k {
            ItemKind::Coin => c.coin_radius,
            ItemKind::Fish => c.footprint.reach(),
        };
        let movers: Vec<(TrackId, Point, Point, f64)> = self
            .tracks
            .iter()
            .filter(|t| t.active() && t.state != TrackState::Tentative)
            .filter(|t| t.vel.norm() >= c.still_speed_mm_s || t.kicked_at.is_some())
            .map(|t| (t.id, t.pos, t.pred[0].0, radius(t.kind)))
            .collect();
        let flags: Vec<(bool, bool)> = self
            .tracks
            .iter()
            .map(|t| {
                let r = radius(t.kind);
                let struck = movers.iter().any(|(id, a, b, rm)| {
                    *id != t.id
                        && (t.pos - closest_on_segment(t.pos, *a, *b)).norm()
                            <= r + rm + c.gate_base_mm
                });
                (
                    struck || dets.occluded(t.pos, r + c.occluder_margin_mm),
                    struck,
                )
            })
            .collect();
        for (t, (kick, struck)) in self.tracks.iter_mut().zip(flags) {
            t.kick_ok = kick;
            t.struck_ok = struck;
        }
    }

    /// Whether coin `t`, hidden by a hand, lies in the hole of a fish seen in this
    /// frame where it lay before, at rest: such a coin goes nowhere unless something
    /// moving reaches it (a hand may not touch a coin, R4; one over it hides it, it
    /// does not move it). A coin no hand hides may have been struck by something
    /// unseen (a blurred coin): it is followed as any other.
    fn held_in_still_hole(&self, t: &Track, dets: &FrameDetections) -> bool {
        let c = &self.cfg;
        let under_hand = t.kick_ok && !t.struck_ok;
        if t.kind != ItemKind::Coin || !under_hand {
            return false;
        }
        let Some(f) = self.carrier(t) else {
            return false;
        };
        let Some(seen) = f.det.and_then(|j| dets.fish.get(j)) else {
            return false;
        };
        f.state == TrackState::Tracked
            && f.vel.norm() < c.still_speed_mm_s
            && (seen.pt_in_table - f.pos).norm() <= c.gate_base_mm
            && (t.pos - f.pos).norm() <= c.hole_reach()
    }

    fn gate(&self, t: &Track, frame: FrameIdx, dt: f64, dets: &FrameDetections) -> f64 {
        let c = &self.cfg;
        if self.held_in_still_hole(t, dets) {
            return c.gate_base_mm;
        }
        let speed = t.vel.norm();
        let mut g = c.gate_base_mm + 1.5 * speed * dt;
        let just_kicked = t.kicked_at.is_some_and(|k| frame.saturating_sub(k) <= 3);
        // Slow items may be struck or pushed harder at any moment.
        let slow = speed < 0.1 * c.max_speed_mm_s;
        if t.state == TrackState::Tentative || slow || just_kicked {
            g += c.max_speed_mm_s * dt;
        }
        let since = t.last_seen.unwrap_or(t.born);
        let unseen_s = frame.saturating_sub(since) as f64 / c.fps;
        // A coin still in its hole is only missed: its gate does not grow with the
        // time unseen (a kick may still move it).
        if unseen_s > dt * 1.5 && !t.in_unmoved_hole(t.was_carried, c) {
            g += (c.max_speed_mm_s * (unseen_s - dt)).min(c.lost_gate_max_mm);
        }
        g
    }

    /// Gates, costs and assigns one kind; stores matches in `Track::det`. Returns
    /// which detections were used.
    fn associate(
        &mut self,
        kind: ItemKind,
        frame: FrameIdx,
        dt: f64,
        dets: &FrameDetections,
        pts: &[(Point, f64)],
    ) -> Vec<bool> {
        let rows: Vec<usize> = (0..self.tracks.len())
            .filter(|&i| self.tracks[i].active() && self.tracks[i].kind == kind)
            .collect();
        let mut used = vec![false; pts.len()];
        if rows.is_empty() || pts.is_empty() {
            return used;
        }
        let gates: Vec<f64> = rows
            .iter()
            .map(|&i| self.gate(&self.tracks[i], frame, dt, dets))
            .collect();
        let queries: Vec<(Point, f64)> = rows
            .iter()
            .zip(&gates)
            .map(|(&i, g)| {
                let [(a, _), (b, _)] = self.tracks[i].pred;
                (
                    Point::from((a.coords + b.coords) / 2.0),
                    g + (a - b).norm() / 2.0,
                )
            })
            .collect();
        let cands = gate_candidates(pts, &queries);
        // A coin seen, a moment after a coin was taken off the table unseen in its
        // fish's hole, where that coin was last seen is that coin, left behind: no
        // established track takes it here, and the newcomer it makes is given that
        // coin's name once confirmed (`Tracker::coin_left_behind`; a newcomer kept
        // from its own sightings would be confirmed only after the moment had
        // passed). Sweep-013: a tag tipping over the edge slid off its coin, which
        // was taken off with it; seen where it lay the frame after, it went to
        // another coin unseen for 4 frames, 142 mm away, and the two names were
        // swapped. Only for a moment: later, another coin may come to lie there.
        let left_behind: Vec<bool> = match kind {
            ItemKind::Coin => pts
                .iter()
                .map(|&(p, _)| {
                    self.left_behind_at(p, usize::MAX, frame, |_| false)
                        .is_some_and(|k| self.removed_a_moment_ago(&self.tracks[k], frame))
                })
                .collect(),
            ItemKind::Fish => vec![false; pts.len()],
        };
        // Nor is a coin thrown out of a hole it rode in unseen (a guess) given a
        // sighting that a coin taken off the table with its fish by inference a
        // moment ago explains better: that coin may have been knocked loose from
        // the hole as its tag was struck over the edge, and stayed on the table
        // (seed 531046's sweep-009 and 777's sweep-008: seen 28 and 17 mm from
        // where it was last seen, 3 and 2 frames after, the sighting went to a coin
        // riding in the striking tag about 40 and 180 mm away, and the two losses
        // were swapped). The newcomer it makes is named by `Tracker::lost_coin_near`.
        let knocked_loose: Vec<Option<f64>> = match kind {
            ItemKind::Coin => pts
                .iter()
                .map(|&(p, _)| self.knocked_loose_near(p, frame))
                .collect(),
            ItemKind::Fish => vec![None; pts.len()],
        };
        // A coin seen in the hole of a fish whose own coin is off the table is that
        // coin put back (a newcomer, named so once confirmed), not another coin lying
        // still in a hole of its own elsewhere that nothing struck (seed 777's
        // sweep-010: coin:3 put back into fish:3's hole went to coin:2, at rest in
        // fish:2's hole 55 mm away and unseen in that look, and the jump was cut
        // as a shot), nor a coin lost at rest somewhere (seed 531046's sweep-008: a
        // coin thrown out of a hole unseen and never found took coin:3's put-back
        // into fish:3's hole, its gate grown over 100 frames).
        let put_back: Vec<Option<TrackId>> = match kind {
            ItemKind::Coin => (0..pts.len())
                .map(|j| self.put_back_into(j, frame, dets))
                .collect(),
            ItemKind::Fish => vec![None; pts.len()],
        };
        // So too a tag of one player's colour while that player's tag is off the
        // table: that tag put back, not another player's tag lying still and missed
        // in that look (seed 777's sweep-027: fish:1, put back 58 mm from fish:0
        // while the look missed fish:0, went to fish:0, and the jump was cut as a
        // shot).
        let tag_put_back: Vec<Option<PlayerIdx>> = match kind {
            ItemKind::Fish => dets
                .fish
                .iter()
                .map(|d| {
                    argmax(&d.player_scores)
                        .filter(|&(k, s)| {
                            s >= 0.5 && self.revivable(ItemId::fish(k), frame).is_some()
                        })
                        .map(|(k, _)| k)
                })
                .collect(),
            ItemKind::Coin => vec![None; pts.len()],
        };
        let mut cost = DMatrix::from_element(rows.len(), pts.len(), f64::INFINITY);
        let mut hyp = DMatrix::from_element(rows.len(), pts.len(), 0usize);
        for (r, &i) in rows.iter().enumerate() {
            let t = &self.tracks[i];
            for &j in &cands[r] {
                if left_behind[j] && t.state != TrackState::Tentative {
                    continue;
                }
                if put_back[j].is_some_and(|fish| {
                    t.state != TrackState::Tentative
                        && t.rides != Some(fish)
                        && t.vel.norm() < self.cfg.still_speed_mm_s
                }) {
                    continue;
                }
                if tag_put_back[j].is_some_and(|k| {
                    let own = |id: ItemId| dets.fish[j].player_scores.get(id.owner).copied();
                    t.state != TrackState::Tentative
                        && t.item
                            .is_some_and(|id| id.owner != k && own(id) < Some(0.5))
                        && t.vel.norm() < self.cfg.still_speed_mm_s
                }) {
                    continue;
                }
                let (d, h) = self.distance(t, kind, j, dets);
                if d > gates[r] {
                    continue;
                }
                if knocked_loose[j]
                    .is_some_and(|k| t.was_carried && t.state != TrackState::Tentative && k < d)
                {
                    continue;
                }
                if kind == ItemKind::Coin
                    && t.was_carried
                    && !self.thrown_could_reach(t, dets.coins[j].pt_in_table, frame, dets)
                {
                    continue;
                }
                cost[(r, j)] = self.cost(t, kind, j, d, frame, dets);
                hyp[(r, j)] = h;
            }
        }
        let a = assign(&cost, self.cfg.max_match_cost_mm);
        for (r, j) in a.matches {
            let i = rows[r];
            let h = hyp[(r, j)];
            let hole = (h == 2)
                .then(|| self.hole_seen_now(&self.tracks[i], dets))
                .flatten();
            let t = &mut self.tracks[i];
            t.det = Some(j);
            if h == 1 {
                t.pred[0] = t.pred[1];
            }
            if let Some(hole) = hole {
                t.pred[0] = hole;
            }
            used[j] = true;
        }
        used
    }

    /// Whether a coin carried unseen in a hole could have been thrown out of it to
    /// `q` by `frame`. A coin leaves a hole with the hole's velocity at that moment
    /// and then slides on, slowing: it lies near the run from one of the hole's
    /// places along the hole's velocity there, give or take the rim's push (a cone
    /// about that run, half as wide as it is long), and it cannot land back behind
    /// where the hole took it from, against the way the hole has gone since (seed
    /// 777's sweep-015: a coin riding in a tag flicked forward was given a sighting
    /// 31 mm beyond the near edge, 51 mm behind where it lay and 300 mm behind its
    /// hole, and taken off there; the gate of an item unseen for six frames spans
    /// hundreds of mm). Both give or take how far a hole read may be from the true
    /// one: as far as the hole lies from the tag's centre of mass, for a tag read
    /// turned about it (seed 531046's sweep-024: a coin 20 mm from a hole read so).
    /// Only where the fish was seen: one unseen is extrapolated, and a coin thrown
    /// from a tag struck unseen went where nothing measured says (the foreign
    /// f11: a tag lost for eleven frames in a collision).
    fn thrown_could_reach(
        &self,
        t: &Track,
        q: Point,
        frame: FrameIdx,
        dets: &FrameDetections,
    ) -> bool {
        let c = &self.cfg;
        // Only a hole seen now is known to be where it is read.
        let Some(seen) = self
            .carrier(t)
            .and_then(|f| f.det)
            .and_then(|j| dets.fish.get(j))
        else {
            return true;
        };
        // A tag seen falling beyond the edge takes its coin down with it, wherever
        // its hole went while unseen: the coin's fall is seen where it is (seed 777's
        // sweep-037: a tag turned over the edge between two looks, and the fall of
        // its coin, off every run of its hole, went to a coin at rest 70 mm away).
        let com = c.centre_of_mass(
            ItemKind::Fish,
            &Pose::fish(seen.pt_in_table.x, seen.pt_in_table.y, seen.theta),
        );
        if c.table.signed_distance(com) < -c.off_table_margin_mm {
            return true;
        }
        let slack = c.gate_base_mm + c.hole_reach() + c.footprint.centroid().coords.norm();
        let (Some(&(_, start, _)), Some(&(_, now, _))) = (t.ride_path.first(), t.ride_path.last())
        else {
            return true;
        };
        // A hole that has not gone farther than that from where the coin lay has
        // carried it nowhere: such a coin leaves only when struck, and goes where the
        // blow sends it (the gate's business).
        let gone = now - start;
        if gone.norm() <= slack {
            return true;
        }
        (q - start).dot(&gone) / gone.norm() >= -slack
            && t.ride_path.iter().any(|&(f, p, v)| {
                let run = v * (frame.saturating_sub(f) as f64 / c.fps);
                let along = if run.norm() > 0.0 {
                    ((q - p).dot(&run) / run.norm_squared()).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                (q - (p + run * along)).norm() <= slack + 0.5 * along * run.norm()
            })
    }

    /// The fish track whose hole coin sighting `j` lies in, when that fish's own
    /// coin is off the table and may be put back ([`Tracker::revivable`]).
    fn put_back_into(&self, j: usize, frame: FrameIdx, dets: &FrameDetections) -> Option<TrackId> {
        let det = dets.coins.get(j)?;
        let hole = det.in_hole_of?;
        let fish = self
            .tracks
            .iter()
            .find(|f| f.kind == ItemKind::Fish && f.det == Some(hole) && f.state.on_table())?;
        let owner = fish.item?.owner;
        let coin = self.revivable(ItemId::coin(owner), frame)?;
        matches!(self.tracks[coin].state, TrackState::Removed(_)).then_some(fish.id)
    }

    /// Distance from a track's predictions to a detection, and which prediction.
    fn distance(
        &self,
        t: &Track,
        kind: ItemKind,
        j: usize,
        dets: &FrameDetections,
    ) -> (f64, usize) {
        let d = |p: Point| match kind {
            ItemKind::Fish => (p - dets.fish[j].pt_in_table).norm(),
            ItemKind::Coin => match &dets.coins[j].streak {
                Some(s) => streak_distance(p, s),
                None => (p - dets.coins[j].pt_in_table).norm(),
            },
        };
        let (d0, d1) = (d(t.pred[0].0), d(t.pred[1].0));
        let in_hole = self.hole_seen_now(t, dets).map(|(p, _)| d(p));
        match in_hole {
            Some(d2) if d2 < d0.min(d1) => (d2, 2),
            _ if d1 < d0 => (d1, 1),
            _ => (d0, 0),
        }
    }

    /// Where the hole a coin rides in is seen in this frame (its fish matched, fish
    /// being matched before coins), with the fish's predicted velocity: a third
    /// prediction for the coin. A coin carried unseen is placed where its fish was
    /// predicted, which a fish just struck is not; the coin seen in that fish's hole
    /// is this one (sweep-013: a coin seen in the hole of a fish just struck went to
    /// another coin unseen for 14 frames whose prediction lay 22 mm off, not to the
    /// hole's own, placed 20 mm off by its fish's extrapolation).
    fn hole_seen_now(&self, t: &Track, dets: &FrameDetections) -> Option<(Point, Vector)> {
        if t.kind != ItemKind::Coin {
            return None;
        }
        let f = self.carrier(t)?;
        let seen = dets.fish.get(f.det?)?;
        Some((seen.pt_in_table, f.pred[0].1))
    }

    fn cost(
        &self,
        t: &Track,
        kind: ItemKind,
        j: usize,
        d: f64,
        frame: FrameIdx,
        dets: &FrameDetections,
    ) -> f64 {
        let c = &self.cfg;
        let mut cost = d;
        if t.vel.norm() < c.still_speed_mm_s && d > c.gate_base_mm {
            // Nothing near that could have struck it: an unlikely explanation.
            cost += if t.kick_ok {
                c.kick_penalty_mm
            } else {
                3.0 * c.kick_penalty_mm
            };
        }
        if t.last_seen.is_none_or(|s| frame.saturating_sub(s) > 1) {
            cost += c.lost_penalty_mm;
        }
        if t.state == TrackState::Tentative {
            // An established track explains a detection better than a newcomer.
            cost += 2.0 * c.kick_penalty_mm;
        }
        let conf = match kind {
            ItemKind::Fish => dets.fish[j].confidence,
            ItemKind::Coin => dets.coins[j].confidence,
        };
        cost += (1.0 - conf.clamp(0.0, 1.0)) * c.gate_base_mm / 2.0;
        if kind == ItemKind::Fish {
            let det = &dets.fish[j];
            if let Some(k) = t.owner_guess() {
                if let Some(s) = det.player_scores.get(k) {
                    cost += c.colour_weight_mm * (1.0 - s.clamp(0.0, 1.0));
                }
            }
            if t.last_seen.is_some() {
                cost += c.angle_weight_mm * wrap(det.theta - t.theta).abs();
            }
        }
        cost
    }

    fn update_matched(
        &mut self,
        i: usize,
        j: usize,
        frame: FrameIdx,
        dt: f64,
        dets: &FrameDetections,
        events: &mut Vec<TrackEvent>,
    ) {
        let cfg = self.cfg.clone();
        let t = &mut self.tracks[i];
        let z = match t.kind {
            ItemKind::Fish => dets.fish[j].pt_in_table,
            ItemKind::Coin => dets.coins[j].pt_in_table,
        };
        let streak = match t.kind {
            ItemKind::Fish => None,
            ItemKind::Coin => dets.coins[j].streak,
        };
        let (hp, hv) = t.pred[0];
        let residual = z - hp;
        match t.last_seen {
            None => {
                t.pos = z;
                t.vel = Vector::zeros();
            }
            Some(ls) if residual.norm() > cfg.kick_residual_mm || frame.saturating_sub(ls) > 2 => {
                // A kick or a reappearance: restart the velocity from the jump. A
                // coin carried unseen in a hole until the last frame was there
                // then, not where it was last seen: if it is seen out of the hole
                // now, it was thrown out on the way, from the hole's last place.
                let (from, span) = if t.was_carried {
                    (t.pos, dt.max(1.0 / cfg.fps))
                } else {
                    (
                        t.last_seen_pos,
                        frame.saturating_sub(ls).max(1) as f64 / cfg.fps,
                    )
                };
                let moved = z - from;
                t.pos = z;
                t.vel = if residual.norm() > cfg.kick_residual_mm {
                    t.kicked_at = Some(frame);
                    t.jumped_at = Some(frame);
                    along_streak(moved / span, streak)
                } else {
                    hv + residual * (cfg.filter_beta / dt.max(1e-9))
                };
            }
            Some(_) => {
                if residual.norm() > cfg.kick_residual_mm / 2.0 {
                    // Accelerating (a soft push): the velocity lags for a few frames.
                    t.kicked_at = Some(frame);
                }
                t.pos = hp + residual * cfg.filter_alpha;
                t.vel = if dt > 0.0 {
                    hv + residual * (cfg.filter_beta / dt)
                } else {
                    hv
                };
            }
        }
        if t.kind == ItemKind::Fish {
            let det = &dets.fish[j];
            t.theta = if t.last_seen.is_some() {
                t.theta + wrap(det.theta - t.theta)
            } else {
                det.theta
            };
            t.partly_hidden = det.partly_hidden;
            t.best_fit = t.best_fit.max(det.confidence);
            if !det.player_scores.is_empty() {
                let w = if t.hits == 0 {
                    1.0
                } else {
                    1.0 - (-dt.max(1.0 / cfg.fps) / cfg.colour_smoothing_s.max(1e-9)).exp()
                };
                t.colour.resize(cfg.players, 0.0);
                for k in 0..cfg.players {
                    let s = det
                        .player_scores
                        .get(k)
                        .copied()
                        .unwrap_or(0.0)
                        .clamp(0.0, 1.0);
                    t.colour[k] = (1.0 - w) * t.colour[k] + w * s;
                }
            }
        } else {
            t.partly_hidden = false;
        }
        if let TrackState::Lost { since } = t.state {
            events.push(TrackEvent::Reacquired {
                track: t.id,
                unseen_frames: frame.saturating_sub(since),
            });
            t.state = TrackState::Tracked;
        }
        t.hits = t.hits.saturating_add(1);
        t.hole_empty_since = None;
        t.ride_path.clear();
        t.last_seen = Some(frame);
        t.last_seen_pos = t.pos;
        t.seen_now = true;
        t.hidden_by = None;
        let com = cfg.centre_of_mass(t.kind, &t.pose());
        // A fish whose hole is beyond the edge hangs over it or is already falling.
        // A falling tag lies below the table plane, which projects it back toward
        // the camera, so its centre of mass can still read on the table while it
        // drops: the exit is measured from before it hung over.
        let hangs_over = cfg.table.signed_distance(t.pos) < -cfg.off_table_margin_mm;
        if cfg.table.signed_distance(com) >= -cfg.off_table_margin_mm {
            if !hangs_over {
                t.last_com_on_table = com;
            }
        } else if t.state != TrackState::Tentative {
            let reason = RemovalReason::OffTable {
                frame,
                exit: edge_crossing(&cfg.table, t.last_com_on_table, com),
                evidence: ExitEvidence::SeenOffTable,
            };
            events.push(t.remove(reason, frame, t.vel));
        }
    }

    fn update_unmatched(
        &mut self,
        i: usize,
        frame: FrameIdx,
        dt: f64,
        dets: &FrameDetections,
        tentative_timeout: u64,
        events: &mut Vec<TrackEvent>,
    ) {
        let cfg = self.cfg.clone();
        // Fish that lie on the table now, for "a fish lies on this coin".
        let fish_now: Vec<(TrackId, Pose)> = self
            .tracks
            .iter()
            .filter(|f| f.kind == ItemKind::Fish && f.state.on_table() && f.seen_now)
            .map(|f| (f.id, f.pose()))
            .collect();
        let t = &mut self.tracks[i];
        let since = t.last_seen.unwrap_or(t.born);
        if t.state == TrackState::Tentative {
            if frame.saturating_sub(since) > tentative_timeout {
                t.state = TrackState::Removed(RemovalReason::Unconfirmed);
            }
            return;
        }
        if t.kind == ItemKind::Coin {
            let ride = t.rides.and_then(|_| {
                let t = &self.tracks[i];
                self.riding(t)
            });
            match ride {
                Some(Ok((p, v))) => {
                    let occluded = dets.occluded(p, cfg.occluder_margin_mm);
                    let empty = self.hole_seen_empty(i, dets);
                    let carrier_seen = self.carrier(&self.tracks[i]).is_some_and(|f| f.seen_now);
                    let t = &mut self.tracks[i];
                    if carrier_seen && cfg.table.signed_distance(p) < -cfg.hole_reach() {
                        // Its hole is seen so far beyond the edge that a coin in it
                        // has its centre over the floor: it fell through the hole.
                        let reason = RemovalReason::OffTable {
                            frame,
                            exit: edge_crossing(&cfg.table, t.last_com_on_table, p),
                            evidence: ExitEvidence::Extrapolated,
                        };
                        t.pos = p;
                        t.hidden_by = None;
                        t.rides = None;
                        t.hole_empty_since = None;
                        events.push(t.remove(reason, frame, v));
                        return;
                    }
                    if t.state == TrackState::Tracked {
                        t.state = TrackState::Lost { since: frame };
                        events.push(TrackEvent::Lost { track: t.id });
                    }
                    // A coin cannot have been thrown out of a hole that has not
                    // moved since it was seen in it: then it is only missed.
                    // Nor is a hole that looks empty evidence for a coin the eye has
                    // never made out (placed there by R2): it does not see that coin.
                    let empty = empty
                        && t.last_seen.is_some()
                        && (p - t.last_seen_pos).norm() > cfg.footprint.hole_radius();
                    t.hole_empty_since = if empty {
                        t.hole_empty_since.or(Some(frame))
                    } else {
                        None
                    };
                    let gone = t.hole_empty_since.is_some_and(|f| {
                        frame.saturating_sub(f) + 1 >= cfg.frames(cfg.hole_empty_s)
                    });
                    if gone {
                        // Its fish lies still, wholly seen, and nothing is in its
                        // hole: the coin was thrown out unseen somewhere on the way.
                        // It stays lost where it was last known to be; the shot
                        // judge decides where it went.
                        t.rides = None;
                        t.hole_empty_since = None;
                        t.vel = Vector::zeros();
                        t.hidden_by = None;
                        return;
                    }
                    if !t.was_carried {
                        t.ride_path.clear();
                        t.ride_path.push((frame.saturating_sub(1), t.pos, t.vel));
                    }
                    // A hole lying still adds no place to go from (a coin never seen
                    // in a still hole would otherwise grow the path all match long).
                    let still = |q: Point, u: Vector| {
                        (q - p).norm() < 1.0 && u.norm() < cfg.still_speed_mm_s
                    };
                    let moved = !t.ride_path.last().is_some_and(|&(_, q, u)| still(q, u))
                        || v.norm() >= cfg.still_speed_mm_s;
                    // A fish not seen is only extrapolated: its place and speed say
                    // nothing of where a coin could have left it.
                    if carrier_seen && moved {
                        t.ride_path.push((frame, p, v));
                    }
                    t.pos = p;
                    t.vel = v;
                    t.carried = true;
                    if cfg.table.signed_distance(p) >= -cfg.off_table_margin_mm {
                        // In the hole it is where the hole is: should it fall, it
                        // went over the edge from the hole's last place on the table.
                        t.last_com_on_table = p;
                    }
                    t.hidden_by = occluded.then_some(Hider::Occluder);
                    return;
                }
                Some(Err(RemovalReason::OffTable { frame: f, exit, .. })) => {
                    // It fell with its fish: it left the table where the fish did,
                    // from where the fish was last and as fast as the fish fell (the
                    // coin's own place and velocity were the hole's a frame before,
                    // at rest if the fish was struck from rest; then the coin's fall,
                    // seen beyond the edge, is out of its reach and a coin on the
                    // table takes it: sweep-008 of seed 531046).
                    let reason = RemovalReason::OffTable {
                        frame: f,
                        exit,
                        evidence: ExitEvidence::Extrapolated,
                    };
                    let t = &self.tracks[i];
                    let (pos, fall_vel) = self
                        .carrier(t)
                        .map_or((t.pos, t.vel), |f| (f.pos, f.fall_vel));
                    let t = &mut self.tracks[i];
                    t.hidden_by = None;
                    t.rides = None;
                    t.pos = pos;
                    events.push(t.remove(reason, frame, fall_vel));
                    return;
                }
                _ => self.tracks[i].hole_empty_since = None,
            }
        }
        let t = &mut self.tracks[i];
        let (p, v) = if t.kind == ItemKind::Coin {
            t.pred[1]
        } else {
            t.pred[0]
        };
        let prev_pos = t.pos;
        let pose_then = |p: Point| match t.kind {
            ItemKind::Fish => Pose::fish(p.x, p.y, t.theta),
            ItemKind::Coin => Pose::coin(p.x, p.y),
        };
        let com = cfg.centre_of_mass(t.kind, &pose_then(p));
        let radius = match t.kind {
            ItemKind::Coin => cfg.coin_radius,
            ItemKind::Fish => cfg.footprint.reach(),
        };

        // A blob over the floor near where this item should be: it fell.
        let blob = dets.off_table.iter().find(|b| {
            b.kind.is_none_or(|k| ItemKind::from(k) == t.kind)
                && (b.pt_in_table - p).norm()
                    <= cfg.gate_base_mm + b.radius_mm + radius + v.norm() * dt
        });
        let last_edge_gap = cfg.table.signed_distance(t.last_com_on_table);
        let edge_zone = 3.0 * t.vel.norm() * dt.max(1.0 / cfg.fps) + radius + cfg.gate_base_mm;
        let crossed = cfg.table.signed_distance(com) < -cfg.off_table_margin_mm;
        let removal = if let Some(b) = blob {
            Some(RemovalReason::OffTable {
                frame: since + frame.saturating_sub(since).div_ceil(2),
                exit: edge_crossing(&cfg.table, t.last_com_on_table, b.pt_in_table),
                evidence: ExitEvidence::OffTableBlob,
            })
        } else if crossed && last_edge_gap < edge_zone && frame.saturating_sub(since) <= 3 {
            let prev_com = cfg.centre_of_mass(t.kind, &pose_then(prev_pos));
            Some(RemovalReason::OffTable {
                frame,
                exit: edge_crossing(&cfg.table, prev_com, com),
                evidence: ExitEvidence::Extrapolated,
            })
        } else if t.kind == ItemKind::Fish
            && cfg.table.signed_distance(t.last_seen_pos) < -cfg.off_table_margin_mm
            && t.vel.norm() >= cfg.still_speed_mm_s
            && frame.saturating_sub(since) <= 3
            && !dets.occluded(t.last_seen_pos, cfg.occluder_margin_mm)
        {
            // Last seen moving with its hole beyond the edge, and gone with nothing
            // over it: nothing beyond the edge can hide or hold it, so it fell. (A
            // fish at rest hanging over the edge and missed for a frame stays.)
            Some(RemovalReason::OffTable {
                frame,
                exit: edge_crossing(&cfg.table, t.last_com_on_table, t.last_seen_pos),
                evidence: ExitEvidence::Extrapolated,
            })
        } else {
            None
        };
        if let Some(reason) = removal {
            t.hidden_by = None;
            events.push(t.remove(reason, frame, t.vel));
            return;
        }
        if crossed {
            // Predicted off the table but never seen near the edge: keep it where
            // it was; the shot judge decides lost or hidden from what it knows.
            t.vel = Vector::zeros();
        } else {
            t.pos = p;
            t.vel = v;
        }
        if dets.occluded(t.pos, cfg.occluder_margin_mm) {
            // Under a hand: stays where it was last seen.
            t.hidden_by = Some(Hider::Occluder);
            t.vel = Vector::zeros();
            if t.last_seen.is_some() {
                t.pos = prev_pos;
            }
        } else if t.kind == ItemKind::Coin {
            let under = fish_now.iter().find(|(_, fp)| {
                let placed = cfg.footprint.placed(fp);
                placed.outline_contains(t.pos)
                    && (t.pos - placed.hole.center).norm() > cfg.hole_reach()
            });
            t.hidden_by = under.map(|(id, _)| Hider::Fish(*id));
            if t.hidden_by.is_some() && t.vel.norm() < 4.0 * cfg.still_speed_mm_s {
                t.vel = Vector::zeros();
            }
        } else {
            t.hidden_by = None;
        }
        if t.state == TrackState::Tracked {
            t.state = TrackState::Lost { since: frame };
            events.push(TrackEvent::Lost { track: t.id });
        }
    }

    fn births(
        &mut self,
        frame: FrameIdx,
        dets: &FrameDetections,
        fish_used: &[bool],
        coin_used: &[bool],
    ) {
        let cfg = self.cfg.clone();
        let mut new = Vec::new();
        for (j, d) in dets.fish.iter().enumerate() {
            if fish_used[j]
                || !cfg.table.contains(cfg.centre_of_mass(
                    ItemKind::Fish,
                    &Pose::fish(d.pt_in_table.x, d.pt_in_table.y, d.theta),
                ))
            {
                continue;
            }
            // A second detection of a fish already matched (split outline) is no new fish.
            let dup = self.tracks.iter().any(|t| {
                t.kind == ItemKind::Fish
                    && t.seen_now
                    && (t.pos - d.pt_in_table).norm() < cfg.footprint.hole_radius()
            });
            if !dup {
                new.push((
                    ItemKind::Fish,
                    d.pt_in_table,
                    d.theta,
                    d.player_scores.clone(),
                    d.partly_hidden,
                    d.confidence,
                ));
            }
        }
        for (j, d) in dets.coins.iter().enumerate() {
            if coin_used[j]
                || d.streak.is_some()
                || d.rim_gap_in_view
                || !cfg.table.contains(d.pt_in_table)
            {
                continue;
            }
            let dup = self.tracks.iter().any(|t| {
                t.kind == ItemKind::Coin
                    && t.seen_now
                    && (t.pos - d.pt_in_table).norm() < cfg.coin_radius
            });
            if !dup {
                new.push((
                    ItemKind::Coin,
                    d.pt_in_table,
                    0.0,
                    Vec::new(),
                    false,
                    d.confidence,
                ));
            }
        }
        for (kind, p, theta, scores, partly_hidden, fit) in new {
            let id = self.new_id();
            let mut colour = vec![0.0; cfg.players];
            for (k, c) in colour.iter_mut().enumerate() {
                *c = scores.get(k).copied().unwrap_or(0.0).clamp(0.0, 1.0);
            }
            self.tracks.push(Track {
                born: frame,
                last_seen: Some(frame),
                hits: 1,
                colour,
                best_fit: fit,
                seen_now: true,
                partly_hidden,
                // A coin's sighting has no angle (`theta` 0): its pose is its point.
                ..Track::fresh(
                    id,
                    kind,
                    Pose::fish(p.x, p.y, theta),
                    TrackState::Tentative,
                    &cfg,
                )
            });
        }
    }

    /// Whether the track holding `id` is one a put-back may take over: off the
    /// table, or not seen for a while and not known to be hidden.
    fn revivable(&self, id: ItemId, frame: FrameIdx) -> Option<usize> {
        let i = self.tracks.iter().position(|t| t.item == Some(id))?;
        let t = &self.tracks[i];
        let unseen = frame.saturating_sub(t.last_seen.unwrap_or(t.born));
        let ok = match t.state {
            TrackState::Removed(RemovalReason::OffTable { .. }) => true,
            TrackState::Lost { .. } => unseen > self.cfg.frames(self.cfg.confirm_s),
            _ => false,
        };
        ok.then_some(i)
    }

    /// Moves a confirmed newcomer into the old track of the same item.
    fn revive(
        &mut self,
        old: usize,
        new: usize,
        from: IdentityOrigin,
        events: &mut Vec<TrackEvent>,
    ) {
        let n = self.tracks[new].clone();
        let o = &mut self.tracks[old];
        o.state = TrackState::Tracked;
        o.pos = n.pos;
        o.vel = n.vel;
        o.theta = n.theta;
        o.last_seen = n.last_seen;
        o.last_seen_pos = n.last_seen_pos;
        o.last_com_on_table = n.last_com_on_table;
        o.seen_now = n.seen_now;
        o.hidden_by = None;
        o.partly_hidden = n.partly_hidden;
        o.switch_since = None;
        o.rides = n.rides;
        if n.kind == ItemKind::Fish {
            o.colour = n.colour.clone();
        }
        let (oid, item) = (o.id, o.item);
        self.tracks[new].state = TrackState::Removed(RemovalReason::MergedInto(oid));
        if let Some(item) = item {
            events.push(TrackEvent::Revived { track: oid, item });
        }
        events.push(TrackEvent::Origin {
            track: oid,
            item,
            from,
        });
    }

    fn confirm(&mut self, frame: FrameIdx, events: &mut Vec<TrackEvent>) {
        let need = self.cfg.frames(self.cfg.confirm_s).min(u32::MAX as u64) as u32;
        let ready =
            |t: &Track, kind| t.kind == kind && t.state == TrackState::Tentative && t.hits >= need;
        // Fish first: a coin's identity may come from the hole it lies in.
        let fish: Vec<usize> = (0..self.tracks.len())
            .filter(|&i| ready(&self.tracks[i], ItemKind::Fish))
            .collect();
        if !fish.is_empty() {
            let players = self.cfg.players;
            let taken = |k: PlayerIdx| {
                self.tracks.iter().any(|t| {
                    t.item == Some(ItemId::fish(k))
                        && t.state.on_table()
                        && t.state != TrackState::Tentative
                })
            };
            let revivable: Vec<bool> = (0..players)
                .map(|k| self.revivable(ItemId::fish(k), frame).is_some())
                .collect();
            let cost = DMatrix::from_fn(fish.len(), players, |r, k| {
                let s = self.tracks[fish[r]].colour.get(k).copied().unwrap_or(0.0);
                if taken(k) && !revivable[k] {
                    f64::INFINITY
                } else {
                    1.0 - s
                }
            });
            let a = assign(&cost, 1.4);
            let mut labels = vec![None; fish.len()];
            for (r, k) in a.matches {
                labels[r] = Some(k);
            }
            for (r, &i) in fish.iter().enumerate() {
                // A tag put back is set down on the table and let go: seen whole at
                // some moment, it fits a tag's outline. A newcomer of a player's
                // colour that never did is scenery (a strip or a floor of that
                // colour beyond the edge, sweep-017: a fit of 0.2 of 1, 700 mm from
                // where the tag went off, revived as that tag "put back" and taken
                // off there again, its exit 812 mm off): it stays a newcomer. And a tag
                // put back lies on the table: a newcomer whose centre of mass has gone
                // beyond the edge is a falling tag seen again (sweep-009: a tag slid
                // off the side edge, seen in its fall, revived there and cut as a
                // shot of its own).
                let revives = labels[r].and_then(|k| self.revivable(ItemId::fish(k), frame));
                let t = &self.tracks[i];
                let on_table = self.cfg.table.contains(
                    self.cfg
                        .centre_of_mass(ItemKind::Fish, &Pose::fish(t.pos.x, t.pos.y, t.theta)),
                );
                if revives.is_some() && (t.best_fit < PUT_BACK_MIN_FIT || !on_table) {
                    continue;
                }
                self.tracks[i].state = TrackState::Tracked;
                match labels[r] {
                    Some(k) => {
                        let id = ItemId::fish(k);
                        if let Some(old) = revives {
                            self.revive(old, i, IdentityOrigin::PutBack, events);
                        } else {
                            self.tracks[i].item = Some(id);
                            events.push(TrackEvent::Confirmed {
                                track: self.tracks[i].id,
                                item: Some(id),
                            });
                            events.push(TrackEvent::Origin {
                                track: self.tracks[i].id,
                                item: Some(id),
                                from: IdentityOrigin::FirstSight,
                            });
                        }
                    }
                    None => {
                        events.push(TrackEvent::Confirmed {
                            track: self.tracks[i].id,
                            item: None,
                        });
                        events.push(TrackEvent::Origin {
                            track: self.tracks[i].id,
                            item: None,
                            from: IdentityOrigin::UnknownOwner,
                        });
                    }
                }
            }
        }
        // Newcomers, and coins still without a name (a put-back confirmed while its
        // fish was unseen is named as soon as the fish is back around it).
        let coins: Vec<usize> = (0..self.tracks.len())
            .filter(|&i| {
                let t = &self.tracks[i];
                ready(t, ItemKind::Coin)
                    || (t.kind == ItemKind::Coin
                        && t.item.is_none()
                        && t.state == TrackState::Tracked)
            })
            .collect();
        for i in coins {
            let newcomer = self.tracks[i].state == TrackState::Tentative;
            let p = self.tracks[i].pos;
            // A coin in the hole of a fish not yet confirmed waits for its name.
            let fish_pending = self.tracks.iter().any(|f| {
                f.kind == ItemKind::Fish
                    && f.state == TrackState::Tentative
                    && (f.pos - p).norm() <= self.cfg.hole_reach()
            });
            if fish_pending {
                continue;
            }
            let hole_owner = self
                .tracks
                .iter()
                .filter(|f| {
                    f.kind == ItemKind::Fish
                        && f.state.on_table()
                        && f.state != TrackState::Tentative
                })
                .filter(|f| (f.pos - p).norm() <= self.cfg.hole_reach())
                .find_map(|f| f.item.map(|id| id.owner));
            self.tracks[i].state = TrackState::Tracked;
            let mut label = None;
            if let Some(k) = hole_owner {
                let id = ItemId::coin(k);
                if let Some(old) = self.revivable(id, frame) {
                    self.revive(old, i, IdentityOrigin::PutBack, events);
                    continue;
                }
                if !self.tracks.iter().any(|t| t.item == Some(id)) {
                    label = Some(id);
                }
            }
            if label.is_none() {
                if let Some(old) = self.coin_left_behind(i, frame) {
                    self.revive(old, i, IdentityOrigin::LeftBehind, events);
                    continue;
                }
            }
            if label.is_none() && newcomer {
                if let Some(old) = self.lost_coin_near(i, frame) {
                    self.revive(old, i, IdentityOrigin::NearVanished, events);
                    continue;
                }
            }
            self.tracks[i].item = label;
            if newcomer {
                events.push(TrackEvent::Confirmed {
                    track: self.tracks[i].id,
                    item: label,
                });
            } else if let Some(to) = label {
                events.push(TrackEvent::IdentityChanged {
                    track: self.tracks[i].id,
                    from: None,
                    to,
                });
            }
            if newcomer || label.is_some() {
                events.push(TrackEvent::Origin {
                    track: self.tracks[i].id,
                    item: label,
                    from: if label.is_some() {
                        IdentityOrigin::FirstSight
                    } else {
                        IdentityOrigin::UnknownOwner
                    },
                });
            }
        }
    }

    /// At a match's opening (R2) every coin lies in its owner's hole. Once every
    /// player's fish is known, the eye is given [`OPENING_LOOK_S`] (or until a fish
    /// moves) to find the coins; then each coin it has no track for is placed, unseen,
    /// in its owner's hole, and carried with that fish from then on. Only when the
    /// coins missing are exactly the holes with no coin over them: a coin found loose
    /// instead (a clip that does not open a match by R2) leaves an empty hole
    /// unexplained, and nothing is guessed. Decided once.
    fn place_unseen_coins_by_r2(&mut self, frame: FrameIdx, events: &mut Vec<TrackEvent>) {
        let players = self.cfg.players;
        let fish: Vec<Option<usize>> = (0..players)
            .map(|k| {
                self.tracks
                    .iter()
                    .position(|t| t.item == Some(ItemId::fish(k)) && t.state == TrackState::Tracked)
            })
            .collect();
        let named: Vec<usize> = fish.iter().flatten().copied().collect();
        let moving = named
            .iter()
            .any(|&i| self.tracks[i].vel.norm() >= self.cfg.still_speed_mm_s);
        if named.len() < players {
            if moving {
                // The match is under way before its fish were all known.
                self.opening_pending = false;
            }
            return;
        }
        let known_at = *self.opening_known_at.get_or_insert(frame);
        if !moving && frame < known_at + self.cfg.frames(OPENING_LOOK_S) {
            return;
        }
        self.opening_pending = false;
        let coins: Vec<&Track> = self
            .tracks
            .iter()
            .filter(|t| {
                t.kind == ItemKind::Coin && (t.state.on_table() || t.state == TrackState::Tentative)
            })
            .collect();
        // A coin centred over the hole, however far the eye reads it from the centre.
        let reach = self.cfg.footprint.hole_radius();
        let empty_holes: Vec<(usize, usize)> = fish
            .iter()
            .enumerate()
            .filter_map(|(k, f)| f.map(|i| (k, i)))
            .filter(|&(k, i)| {
                let hole = self.tracks[i].pos;
                !coins
                    .iter()
                    .any(|c| c.item == Some(ItemId::coin(k)) || (c.pos - hole).norm() <= reach)
            })
            .collect();
        if coins.len() + empty_holes.len() != players {
            return;
        }
        // A nameless coin over a hole now is that hole's owner's. So is one only
        // glimpsed so far (still tentative): it filled the hole in the count above,
        // and R2 says a coin lies there, so it is confirmed as that coin. Left
        // tentative, it would be dropped unseen and the hole's owner would have no
        // coin at all (f09: the struck tag's coin, glimpsed once as the hand came,
        // was then never placed, and the mover's coin, thrown off unseen, took its
        // sighting at rest).
        let nameless_over_holes: Vec<(usize, TrackId, ItemId)> = (0..self.tracks.len())
            .filter(|&c| {
                let t = &self.tracks[c];
                t.kind == ItemKind::Coin
                    && t.item.is_none()
                    && (t.state.on_table() || t.state == TrackState::Tentative)
            })
            .filter_map(|c| {
                let p = self.tracks[c].pos;
                fish.iter().enumerate().find_map(|(k, f)| {
                    let f = &self.tracks[(*f)?];
                    ((f.pos - p).norm() <= reach).then_some((c, f.id, ItemId::coin(k)))
                })
            })
            .collect();
        for (c, carrier, id) in nameless_over_holes {
            if self.tracks.iter().any(|t| t.item == Some(id)) {
                continue;
            }
            let t = &mut self.tracks[c];
            t.item = Some(id);
            t.rides = Some(carrier);
            if t.state == TrackState::Tentative {
                t.state = TrackState::Tracked;
                events.push(TrackEvent::Confirmed {
                    track: t.id,
                    item: Some(id),
                });
            } else {
                events.push(TrackEvent::IdentityChanged {
                    track: t.id,
                    from: None,
                    to: id,
                });
            }
            events.push(TrackEvent::Origin {
                track: t.id,
                item: Some(id),
                from: IdentityOrigin::Opening,
            });
        }
        for (k, i) in empty_holes {
            let hole = &self.tracks[i];
            let (carrier, pose) = (hole.id, Pose::coin(hole.pos.x, hole.pos.y));
            let id = self.new_id();
            let mut coin = Track::known(id, ItemId::coin(k), pose, &self.cfg);
            coin.born = frame;
            coin.rides = Some(carrier);
            self.tracks.push(coin);
            events.push(TrackEvent::Confirmed {
                track: id,
                item: Some(ItemId::coin(k)),
            });
            events.push(TrackEvent::Origin {
                track: id,
                item: Some(ItemId::coin(k)),
                from: IdentityOrigin::Opening,
            });
        }
    }

    /// Every player has exactly one coin (R1), so when the coins named so far leave
    /// one player's coin unaccounted for and exactly one nameless coin has ever been
    /// confirmed, that coin is the player's: a coin lying loose at the start of a
    /// video is then known without a start state. With two or more unaccounted for,
    /// nothing is guessed.
    fn name_by_elimination(&mut self, events: &mut Vec<TrackEvent>) {
        let mut nameless = (0..self.tracks.len()).filter(|&i| {
            let t = &self.tracks[i];
            t.kind == ItemKind::Coin
                && t.item.is_none()
                && !matches!(
                    t.state,
                    TrackState::Tentative
                        | TrackState::Removed(
                            RemovalReason::Unconfirmed | RemovalReason::MergedInto(_)
                        )
                )
        });
        let (Some(i), None) = (nameless.next(), nameless.next()) else {
            return;
        };
        let mut unclaimed = (0..self.cfg.players)
            .map(ItemId::coin)
            .filter(|&id| !self.tracks.iter().any(|t| t.item == Some(id)));
        let (Some(id), None) = (unclaimed.next(), unclaimed.next()) else {
            return;
        };
        self.tracks[i].item = Some(id);
        events.push(TrackEvent::IdentityChanged {
            track: self.tracks[i].id,
            from: None,
            to: id,
        });
        events.push(TrackEvent::Origin {
            track: self.tracks[i].id,
            item: Some(id),
            from: IdentityOrigin::Elimination,
        });
    }

    /// A coin that was carried unseen in a hole (under the hand, in the blur) and is
    /// now seen again where it was last seen, though that hole has left the place
    /// (or the table): the fish was flicked out from over it and the coin stayed.
    /// Carrying it along was the guess; where it lies now is the evidence.
    fn coin_left_behind(&self, i: usize, frame: FrameIdx) -> Option<usize> {
        self.left_behind_at(self.tracks[i].pos, i, frame, |t| t.carried)
    }

    /// The identified coin, carried unseen in a hole that has since left the place
    /// where the coin was last seen (`carried` says whether a track was carried in
    /// the frame that counts), or taken off the table with its fish by inference a
    /// moment before `frame`, whose last sighting lies nearest `p` within the base
    /// gate; `except` is never it.
    fn left_behind_at(
        &self,
        p: Point,
        except: usize,
        frame: FrameIdx,
        carried: impl Fn(&Track) -> bool,
    ) -> Option<usize> {
        let c = &self.cfg;
        (0..self.tracks.len())
            .filter(|&k| k != except)
            .filter(|&k| {
                let t = &self.tracks[k];
                let hole_left = match t.state {
                    TrackState::Lost { .. } => {
                        carried(t) && (t.pos - t.last_seen_pos).norm() > c.footprint.hole_radius()
                    }
                    // Taken off with its fish: it went over the edge from the hole's
                    // last place on the table, far from where it was last seen; or
                    // a moment ago, when its fish tipped over the edge in a frame
                    // (sweep-013: the tag slid off its coin as it fell, and the
                    // coin, seen where it lay the frame after, went to another).
                    // A coin put back where it lay comes seconds later.
                    TrackState::Removed(RemovalReason::OffTable { evidence, .. }) => {
                        evidence.is_predicted()
                            && ((t.last_com_on_table - t.last_seen_pos).norm()
                                > c.footprint.hole_radius()
                                || self.removed_a_moment_ago(t, frame))
                    }
                    _ => false,
                };
                t.kind == ItemKind::Coin && t.item.is_some() && hole_left
            })
            .map(|k| (k, (self.tracks[k].last_seen_pos - p).norm()))
            .filter(|&(_, d)| d <= c.gate_base_mm)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    }

    /// How far `p` lies from where the nearest coin taken off the table with its
    /// fish by inference a moment ago was last seen, if that coin could have got
    /// there since: knocked loose as fast as its fish fell, or as it last moved.
    fn knocked_loose_near(&self, p: Point, frame: FrameIdx) -> Option<f64> {
        let c = &self.cfg;
        self.tracks
            .iter()
            .filter(|t| {
                t.kind == ItemKind::Coin
                    && t.item.is_some()
                    && matches!(
                        t.state,
                        TrackState::Removed(RemovalReason::OffTable { evidence, .. })
                            if evidence.is_predicted()
                    )
                    && self.removed_a_moment_ago(t, frame)
            })
            .filter_map(|t| {
                let unseen = frame.saturating_sub(t.last_seen.unwrap_or(t.born)) as f64 / c.fps;
                let speed = t.fall_vel.norm().max(t.vel.norm());
                let d = (t.last_seen_pos - p).norm();
                (d <= c.gate_base_mm + speed * unseen).then_some(d)
            })
            .min_by(f64::total_cmp)
    }

    /// An identified coin that vanished (not known to be hidden) and could have
    /// reached the newcomer `i` since it was last seen: the nearest such.
    fn lost_coin_near(&self, i: usize, frame: FrameIdx) -> Option<usize> {
        let p = self.tracks[i].pos;
        let c = &self.cfg;
        (0..self.tracks.len())
            .filter(|&k| {
                let t = &self.tracks[k];
                let vanished = match t.state {
                    TrackState::Lost { .. } => {
                        t.hidden_by.is_none() && !t.in_unmoved_hole(t.carried, c)
                    }
                    TrackState::Removed(RemovalReason::OffTable { evidence, .. }) => {
                        evidence.is_predicted()
                    }
                    _ => false,
                };
                t.kind == ItemKind::Coin && t.item.is_some() && vanished
            })
            .filter_map(|k| {
                let t = &self.tracks[k];
                let unseen = frame.saturating_sub(t.last_seen.unwrap_or(t.born)) as f64 / c.fps;
                let d = (t.last_seen_pos - p).norm();
                (d <= c.gate_base_mm + c.max_speed_mm_s * unseen).then_some((k, d))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    }

    fn fish_identity(&mut self, frame: FrameIdx, events: &mut Vec<TrackEvent>) {
        let hold = self.cfg.frames(self.cfg.identity_hold_s);
        for i in 0..self.tracks.len() {
            let t = &self.tracks[i];
            if t.kind != ItemKind::Fish || !t.state.on_table() || !t.seen_now {
                continue;
            }
            let Some((best, best_s)) = argmax(&t.colour) else {
                continue;
            };
            let current = t.item.map(|id| id.owner);
            let cur_s = current
                .and_then(|k| t.colour.get(k).copied())
                .unwrap_or(0.0);
            if current == Some(best) || best_s < cur_s + self.cfg.identity_margin {
                self.tracks[i].switch_since = None;
                continue;
            }
            if current.is_none() && best_s >= 0.5 {
                // Naming a nameless fish is no switch: no need to wait.
                let to = ItemId::fish(best);
                match self.tracks.iter().position(|o| o.item == Some(to)) {
                    Some(h)
                        if !matches!(
                            self.tracks[h].state,
                            TrackState::Tracked | TrackState::Tentative
                        ) =>
                    {
                        // fish:K unseen while a fish with its colour is seen: found again.
                        self.revive(h, i, IdentityOrigin::PutBack, events);
                    }
                    Some(_) => {}
                    None => {
                        self.tracks[i].item = Some(to);
                        events.push(TrackEvent::IdentityChanged {
                            track: self.tracks[i].id,
                            from: None,
                            to,
                        });
                        events.push(TrackEvent::Origin {
                            track: self.tracks[i].id,
                            item: Some(to),
                            from: IdentityOrigin::FirstSight,
                        });
                    }
                }
                continue;
            }
            let since = match t.switch_since {
                Some((k, f)) if k == best => f,
                _ => {
                    self.tracks[i].switch_since = Some((best, frame));
                    frame
                }
            };
            if frame.saturating_sub(since) + 1 < hold {
                continue;
            }
            let to = ItemId::fish(best);
            let holder = self.tracks.iter().position(|o| o.item == Some(to));
            if let Some(h) = holder {
                let other = &self.tracks[h];
                let other_prefers_ours = match current {
                    Some(k) => {
                        other.colour.get(k).copied().unwrap_or(0.0)
                            > other.colour.get(best).copied().unwrap_or(0.0)
                    }
                    None => false,
                };
                if other.state.on_table() && !other_prefers_ours {
                    continue;
                }
                let from_other = self.tracks[h].item;
                self.tracks[h].item = current.map(ItemId::fish);
                self.tracks[h].switch_since = None;
                if let Some(k) = current {
                    events.push(TrackEvent::IdentityChanged {
                        track: self.tracks[h].id,
                        from: from_other,
                        to: ItemId::fish(k),
                    });
                }
            }
            let from = self.tracks[i].item;
            self.tracks[i].item = Some(to);
            self.tracks[i].switch_since = None;
            events.push(TrackEvent::IdentityChanged {
                track: self.tracks[i].id,
                from,
                to,
            });
        }
    }
}
