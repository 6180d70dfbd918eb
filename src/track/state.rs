//! The life cycle of a track (ByteTrack's `TrackState`, in table millimetres).
//! Uses: model, geometry.

use crate::geometry::Point;
use crate::model::FrameIdx;

/// A track's identity inside one [`super::Tracker`]; never reused, owned by the
/// tracker instance (no global counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrackId(pub u32);

/// Where a track is in its life.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrackState {
    /// Seen for too short a time to be trusted (no identity yet).
    Tentative,
    /// Seen in this frame or held where it was last seen.
    Tracked,
    /// Not seen since `since`; its pose is the motion model's prediction (a hidden
    /// item stays where it was last seen).
    Lost { since: FrameIdx },
    /// Gone for good (until it is put back and re-identified).
    Removed(RemovalReason),
}

impl TrackState {
    /// On the table as far as the tracker knows (tracked or lost, not removed or tentative).
    pub fn on_table(&self) -> bool {
        matches!(self, TrackState::Tracked | TrackState::Lost { .. })
    }
}

/// Why a track was removed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RemovalReason {
    /// It left the table: `frame` when it crossed the edge at `exit` (table mm).
    OffTable {
        frame: FrameIdx,
        exit: Point,
        evidence: ExitEvidence,
    },
    /// A tentative track that was never confirmed (noise).
    Unconfirmed,
    /// A tentative track found to be an old item put back; that track lives on.
    MergedInto(TrackId),
}

/// What showed that an item left the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitEvidence {
    /// Detected with its centre of mass beyond the edge.
    SeenOffTable,
    /// Matched to a blob over the floor.
    OffTableBlob,
    /// Last seen near the edge moving out; the prediction crossed it.
    Extrapolated,
}

impl ExitEvidence {
    /// Only predicted, not seen: the item may yet be found on the table (a coin
    /// thought to ride in its fish, one unseen in flight), so what is built on the
    /// exit stays provisional. Seen beyond the edge, it has fallen.
    pub fn is_predicted(self) -> bool {
        self == ExitEvidence::Extrapolated
    }
}
