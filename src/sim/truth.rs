//! Ground truth of a simulation (`truth.json`): per frame the true pose of every
//! item, its height and whether it is on the table, the hand; per shot the flick,
//! the rest frame, lost items with their exit points, coins in holes and stacking
//! (the same keys as a record); the true camera and table. [`Truth::to_record`]
//! turns it into a `record::Record` so that replay and evaluation can use truth as
//! a record. Pure. Uses: model, config, calibration, record, sim::camera.

use super::camera::Extrinsics;
use crate::calibration::{CameraIntrinsics, TableFile};
use crate::config::{ConfigError, Game};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{
    Interlude, LostItem, PlacedItem, Record, Shot, Stacking, VideoInfo, RECORD_VERSION,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The format version of truth.json.
pub const TRUTH_VERSION: u32 = 1;

/// One item in one frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ItemTruth {
    pub x: f64,
    pub y: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theta: Option<f64>,
    /// Height of the item's underside above the table top, mm (> 0 when it lies on
    /// another item, < 0 while it falls).
    #[serde(default)]
    pub z: f64,
    pub on_table: bool,
}

impl ItemTruth {
    pub fn pose(&self) -> Pose {
        Pose {
            x: self.x,
            y: self.y,
            theta: self.theta,
        }
    }
}

/// The flicking hand: fingertip position (table mm), the direction the arm comes
/// from (radians, table frame), height of the fingertip above the table (mm).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HandTruth {
    pub x: f64,
    pub y: f64,
    pub arm_theta: f64,
    pub z: f64,
}

/// Everything true in one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameTruth {
    pub frame: FrameIdx,
    /// Every item in play: on the table, or falling (items already on the floor or
    /// not yet put back are absent).
    pub items: BTreeMap<ItemId, ItemTruth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand: Option<HandTruth>,
}

/// The flick of a shot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlickTruth {
    pub item: ItemId,
    /// Where the nail struck, in the fish frame (mm).
    pub point_in_fish: [f64; 2],
    /// The velocity the impulse gave the fish's centre of mass (mm/s, table frame).
    pub velocity_mm_s: [f64; 2],
}

/// One shot, with the same keys as a record's shot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotTruth {
    pub index: usize,
    pub player: PlayerIdx,
    /// The last frame before the flick's impulse.
    pub flick_frame: FrameIdx,
    /// The first frame at which everything is at rest (and nothing is still falling).
    pub rest_frame: FrameIdx,
    pub flick: FlickTruth,
    pub start: BTreeMap<ItemId, Pose>,
    pub end: BTreeMap<ItemId, Pose>,
    pub lost: Vec<LostItem>,
    pub coins_in_holes: BTreeMap<ItemId, ItemId>,
    pub stacking: Vec<Stacking>,
    /// Items put back before this shot's flick (after the previous shot).
    #[serde(default)]
    pub placed_before: Vec<PlacedItem>,
    /// How each put-back pose was chosen (`rules` engine or the simulator's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub put_back_notes: Vec<String>,
}

/// A rendered chessboard view (calibration scenario): camera-from-board pose and
/// the true inner corners in the distorted image, row by row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardViewTruth {
    pub image: String,
    pub rotation: [[f64; 3]; 3],
    pub translation_mm: [f64; 3],
    pub corners_px: Vec<[f64; 2]>,
}

/// `truth.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    pub version: u32,
    pub scenario: String,
    pub seed: u64,
    pub video: VideoInfo,
    pub players: Vec<String>,
    pub game: Game,
    /// The table polygon (mm), counter-clockwise.
    pub table_mm: Vec<[f64; 2]>,
    /// The true intrinsics in camera.json form.
    pub camera: CameraIntrinsics,
    pub extrinsics: Extrinsics,
    /// The true table.json (homography from undistorted pixels to table mm).
    pub table: TableFile,
    pub shots: Vec<ShotTruth>,
    pub frames: Vec<FrameTruth>,
    /// Chessboard views (calibration scenario only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub board_views: Vec<BoardViewTruth>,
    /// Chessboard geometry: inner corners and square size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<BoardSpec>,
}

/// A chessboard: `cols x rows` inner corners, squares of `square_mm`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoardSpec {
    pub cols: usize,
    pub rows: usize,
    pub square_mm: f64,
}

impl Truth {
    pub fn load(path: &Path) -> Result<Truth, ConfigError> {
        let t: Truth = crate::config::load_json(path)?;
        if t.version != TRUTH_VERSION {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "truth version {} is not supported (this build reads {TRUTH_VERSION})",
                    t.version
                ),
            });
        }
        Ok(t)
    }

    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        crate::config::save_json(self, path)
    }

    /// The table polygon the truth was played on.
    pub fn table(&self) -> Result<crate::geometry::Table, crate::geometry::TableError> {
        crate::geometry::Table::from_corners(&self.table_mm)
    }

    /// The truth as a record: shots with start, end, tracks (every frame from the
    /// flick to rest while on the table), lost, coins in holes, stacking and the
    /// put-backs before each shot. Scores are left at zero for the rules to fill.
    pub fn to_record(&self) -> Record {
        let by_frame: BTreeMap<FrameIdx, &FrameTruth> =
            self.frames.iter().map(|f| (f.frame, f)).collect();
        let shots = self
            .shots
            .iter()
            .map(|s| {
                let mut tracks: BTreeMap<ItemId, Vec<Vec<f64>>> = BTreeMap::new();
                for f in s.flick_frame..=s.rest_frame {
                    let Some(fr) = by_frame.get(&f) else { continue };
                    for (id, it) in &fr.items {
                        if !it.on_table {
                            continue;
                        }
                        let mut row = vec![f as f64, it.x, it.y];
                        if let Some(th) = it.theta {
                            row.push(th);
                        }
                        tracks.entry(*id).or_default().push(row);
                    }
                }
                let first_moved = Some(s.flick.item);
                Shot {
                    index: s.index,
                    player: s.player,
                    flick_frame: s.flick_frame,
                    rest_frame: s.rest_frame,
                    first_moved,
                    start: s.start.clone(),
                    end: s.end.clone(),
                    tracks,
                    lost: s.lost.clone(),
                    coins_in_holes: s.coins_in_holes.clone(),
                    stacking: s.stacking.clone(),
                    score: vec![0; self.players.len()],
                    put_back: vec![],
                    violations: vec![],
                    before: if s.placed_before.is_empty() {
                        None
                    } else {
                        Some(Interlude {
                            placed: s.placed_before.clone(),
                            disturbed: vec![],
                            ready_frame: s.placed_before.iter().map(|p| p.frame).max(),
                        })
                    },
                    notes: vec![],
                    ..Shot::default()
                }
            })
            .collect();
        Record {
            version: RECORD_VERSION,
            video: self.video.clone(),
            players: self.players.clone(),
            shots,
            scores: vec![0; self.players.len()],
            game: Some(self.game.clone()),
            table_mm: Some(self.table_mm.clone()),
        }
    }
}
