//! What a detector reports for one video frame, in table millimetres: the input of
//! [`super::Tracker::update`]. The detector (OpenCV, `vision`) or a test fills these;
//! they serialise as one JSON object per frame so detection streams can be stored
//! as JSONL and replayed without video (STYLE.md lesson 10). Uses: model, geometry.

use crate::geometry::shapes::point_in_polygon;
use crate::geometry::Point;
use crate::model::{FrameIdx, ItemKind};
use serde::{Deserialize, Serialize};

/// A fish seen on (or just beyond) the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FishDetection {
    /// Hole centre, table mm.
    pub pt_in_table: Point,
    /// Angle of the fish +x axis, radians CCW from table +x.
    pub theta: f64,
    /// Colour likelihood per player (index = player in move order), each in 0..=1.
    /// Empty when the colour could not be judged.
    #[serde(default)]
    pub player_scores: Vec<f64>,
    /// Detector confidence in 0..=1.
    #[serde(default = "one")]
    pub confidence: f64,
    /// Part of the outline is covered (a hand, another fish on top).
    #[serde(default)]
    pub partly_hidden: bool,
    /// The share of the frame interval the camera's shutter was open, as this
    /// sighting's motion blur shows it (a moving tag is smeared over that share of
    /// its travel); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure_share: Option<f64>,
}

/// A motion-blur streak: the segment a fast item swept during the exposure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Streak {
    pub from: Point,
    pub to: Point,
}

/// A coin (anonymous disc) seen on the table, possibly only as a streak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoinDetection {
    /// Centre, table mm (for a streak: its midpoint).
    pub pt_in_table: Point,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius_mm: Option<f64>,
    #[serde(default = "one")]
    pub confidence: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streak: Option<Streak>,
    /// Index into [`FrameDetections::fish`] of the fish whose hole shows this coin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_hole_of: Option<usize>,
    /// A quarter of its rim or more went unseen where nothing could hide it, its
    /// inside like the table (a grain, a seam, a shadow's edge, or a coin blurred
    /// along its path): it may continue a coin's track, but starts none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rim_gap_in_view: bool,
}

/// A region of the table hidden from the camera (a hand, an arm), table mm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum Occluder {
    Disc {
        center: Point,
        radius: f64,
    },
    /// A simple polygon, either winding.
    Polygon {
        corners: Vec<Point>,
    },
}

impl Occluder {
    /// Whether the point is hidden, with a margin (mm) added around the region.
    pub fn covers(&self, p: Point, margin: f64) -> bool {
        match self {
            Occluder::Disc { center, radius } => (p - center).norm() <= radius + margin,
            Occluder::Polygon { corners } => {
                corners.len() >= 3
                    && (point_in_polygon(p, corners)
                        || crate::geometry::shapes::boundary_distance(p, corners) <= margin)
            }
        }
    }
}

/// Something seen over the floor just outside the table edge: a falling item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffTableBlob {
    /// Centre, table mm (outside the table polygon).
    pub pt_in_table: Point,
    #[serde(default)]
    pub radius_mm: f64,
    /// What it looks like, when the detector can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<BlobKind>,
    #[serde(default)]
    pub player_scores: Vec<f64>,
}

/// What an off-table blob looks like (serialised `fish` / `coin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlobKind {
    Fish,
    Coin,
}

impl From<BlobKind> for ItemKind {
    fn from(k: BlobKind) -> ItemKind {
        match k {
            BlobKind::Fish => ItemKind::Fish,
            BlobKind::Coin => ItemKind::Coin,
        }
    }
}

/// A whole tag of a colour no player of the game has: the game file is not this
/// match's (reported once, in the view the players' colours were learned from).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrangerTag {
    /// Its centre, table mm.
    pub pt_in_table: Point,
    /// Its colour as the camera shows it.
    pub rgb: [u8; 3],
}

/// Everything a detector saw in one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FrameDetections {
    pub frame: FrameIdx,
    #[serde(default)]
    pub fish: Vec<FishDetection>,
    #[serde(default)]
    pub coins: Vec<CoinDetection>,
    #[serde(default)]
    pub occluders: Vec<Occluder>,
    #[serde(default)]
    pub off_table: Vec<OffTableBlob>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strangers: Vec<StrangerTag>,
}

impl FrameDetections {
    /// An empty frame (nothing seen): the tracker must still be called with it.
    pub fn empty(frame: FrameIdx) -> FrameDetections {
        FrameDetections {
            frame,
            ..Default::default()
        }
    }

    /// Whether any occluder hides `p` (with `margin` mm around each).
    pub fn occluded(&self, p: Point, margin: f64) -> bool {
        self.occluders.iter().any(|o| o.covers(p, margin))
    }
}

fn one() -> f64 {
    1.0
}
