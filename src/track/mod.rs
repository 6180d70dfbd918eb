//! Tracking (pure): identities frame to frame from detections, in table
//! millimetres, through blur, coin–coin collisions, hands and stacking. No OpenCV,
//! no I/O. Uses: model, config, geometry, record (`StartState`), kiddo (in `gate`).
//!
//! # Public API (detector → tracker → shot cutter)
//! - [`FrameDetections`] (`fish: Vec<FishDetection>`, `coins: Vec<CoinDetection>`,
//!   `occluders: Vec<Occluder>`, `off_table: Vec<OffTableBlob>`): what the detector
//!   reports per frame, table mm; serde, so streams can be stored as JSONL.
//! - [`TrackerConfig::new(fps, players, table, &items)`](TrackerConfig::new): defaults
//!   in seconds, mm and mm/s (converted with the real fps); public fields to tune.
//! - [`Tracker::new(cfg)`](Tracker::new), [`Tracker::at_opening(cfg)`](Tracker::at_opening)
//!   (a clip that opens a match: coins not found are in their holes, R2) or
//!   [`Tracker::with_start(cfg, &start)`](Tracker::with_start)
//!   (identities from `state.json` poses), then
//!   [`Tracker::update(frame, &dets) -> TrackFrame`](Tracker::update) once per frame,
//!   in order, **even with no detections**.
//! - [`TrackFrame`]: every track's [`TrackedItem`] (`item: Option<ItemId>`, `state:
//!   TrackState`, `pose`, `velocity_mm_s`, `seen`, `hidden_by`) plus [`TrackEvent`]s.
//!   Feed these to `shots::ShotCutter`. A moving item's `pose` is where it was
//!   mid-exposure; `TrackFrame::exposure` ([`Timing`], learned from the detector's
//!   blur readings by [`Exposure`]) places it at the frame's instant.
//! - Identity evidence (observational, deciding nothing): [`TrackEvent::Origin`] (how a
//!   track came by its name: [`IdentityOrigin`]), [`TrackEvent::Jumped`] and
//!   [`TrackEvent::SeenAgain`] (a sighting far from the prediction or after an unseen
//!   stretch, with the look-alike coins predicted as near it). Pushed after the
//!   decisions they observe; the shot judge turns them into the record's `identity`.
//! - [`assign(cost, max_cost) -> Assignment`](assign()) (optimal, Hungarian) and the
//!   motion model ([`motion`]) are pure functions of their own.
//!
//! # How identities are kept
//! - Fish: colour (`player_scores`) smoothed over time; a fish changes identity only
//!   after its colour has said so for `identity_hold_s` (never on one frame). The
//!   colour also enters the match cost, so two fish that touch keep their tracks.
//! - Coins are twins: identity from the start (in the hole of fish K → `coin:K`, or
//!   the nearest `StartState` pose) and then continuity only. The motion model
//!   predicts coin–coin collisions (equal discs exchange normal velocity), and the
//!   cost takes the better of the free and the collision prediction per track.
//!   Loose coins struck unseen and seen again apart within a moment are named
//!   together, by the least total squared displacement from where each was last seen.
//!   Two coins' tracks found crossed (a coin seen again in the hole another left by a
//!   jump) are exchanged back, and [`TrackEvent::Retold`] tells the shot cutter that
//!   the frames since that jump were the other coin's.
//! - Hands: an unseen item under an occluder is held where it was last seen; its
//!   gate grows with time unseen so it is re-acquired (matched, not re-created) when
//!   the hand leaves, even if it moved meanwhile.
//! - Put-backs: a new fish whose colour is a fish that fell off, or a new coin in
//!   the hole of fish K while `coin:K` is off the table, revives the old track.
//! - A coin seen in a fish's hole rides in it: while unseen (blur, a hand) it is
//!   carried with the fish ([`TrackedItem::carried_by`]). It leaves the hole when
//!   it is seen loose (its velocity restarts from where the hole was, turned along
//!   its blur streak if it was seen as one), when the hole's centre is seen so far
//!   beyond the edge that the coin's is too (it fell through), or when the fish,
//!   moved since the coin was seen in it, lies still and wholly seen with its hole
//!   empty for `hole_empty_s` (thrown out unseen: it stays lost, the shot judge
//!   says where it went).
//! - Off the table: seen beyond the edge, matched to a floor blob, or last seen
//!   near the edge and predicted across it → `Removed(OffTable { frame, exit })`.
//!   For `fallen_owns_s` an item that fell keeps the sightings of it dropping
//!   beyond the edge (unless it went unseen longer than `fall_gap_s` before one; one
//!   taken off on a prediction as far off as anything could have gone), so no lost
//!   item's grown gate takes them.
//!   An item that vanishes elsewhere stays `Lost` where the model puts it; the shot
//!   judge decides lost vs hidden.

mod assign;
pub mod detections;
mod exposure;
mod gate;
pub mod motion;
pub mod state;
#[cfg(test)]
mod tests;
mod tracker;

pub use assign::{assign, assignment_cost, Assignment};
pub use detections::{
    BlobKind, CoinDetection, FishDetection, FrameDetections, Occluder, OffTableBlob, StrangerTag,
    Streak,
};
pub use exposure::{Exposure, Timing};
pub use state::{ExitEvidence, RemovalReason, TrackId, TrackState};
pub use tracker::{
    edge_crossing, Hider, IdentityOrigin, TrackError, TrackEvent, TrackFrame, TrackedItem, Tracker,
    TrackerConfig,
};
