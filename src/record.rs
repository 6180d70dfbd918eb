//! `record.json` (DESIGN.md): what `analyse` writes and `score`, `replay` and
//! `report` read — one entry per shot with its observations (poses, tracks, lost
//! items, coins in holes, stacking) and its judgement (score, put-backs,
//! violations). Also `state.json`, the opening state of a clip. Uses: model, config.

use crate::config::{ConfigError, FinePolicy, Game};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The format version this build writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// The video a record was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct VideoInfo {
    pub path: String,
    pub fps: f64,
    pub frames: u64,
    pub width: u32,
    pub height: u32,
    /// Frames that could not be decoded and were skipped (container indices, in
    /// order): nothing was seen in them. `frames` counts them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged_frames: Vec<FrameIdx>,
    /// The shots (their `index`) a damaged frame falls in: a frame falls in the
    /// first shot whose rest frame is at or after it (after the previous shot's
    /// rest: its interlude, flick and motion). The shot also says so in `notes`.
    /// Frames after the last shot's rest fall in no shot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged_shots: Vec<usize>,
}

/// An item that left the table during a shot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostItem {
    pub item: ItemId,
    /// The frame in which it left the table.
    pub frame: FrameIdx,
    /// Where it crossed the table edge (table mm).
    pub exit: Pose,
}

/// One stacking relation: `top` lies (partly) on `under`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stacking {
    pub top: ItemId,
    pub under: ItemId,
}

/// Where a lost item must be (or was) put back, and by which rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PutBack {
    pub item: ItemId,
    /// For a fish, the legal pose the rules engine computed; for a coin, the hole
    /// centre it goes to. Absent when no legal pose exists (then `rule` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose: Option<Pose>,
    /// The rule that decided it: `R6a`, `R6b`, `R6c`, `R8a` … .
    pub rule: String,
    /// For coins: `possible`, `optional` or `impossible` (R8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Free text: why.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// A camera-visible violation (R11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// R11 code: `1.1`, `2.1`, `2.2`, `2.3`, `3`, `4.2`, `5`.
    pub code: String,
    pub player: PlayerIdx,
    pub frame: FrameIdx,
    pub evidence: String,
    /// The fine applied under the set-up's fine policy (0 or −1).
    #[serde(default)]
    pub fine: i32,
}

/// What happened between the previous shot's rest and this shot's flick: the
/// observed put-backs and anything else that moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Interlude {
    /// Items that appeared on the table (put back), in the order they appeared,
    /// with the frame and the pose where they came to rest.
    #[serde(default)]
    pub placed: Vec<PlacedItem>,
    /// Items already on the table that moved during the interlude (mm moved).
    #[serde(default)]
    pub disturbed: Vec<DisturbedItem>,
    /// The frame at which every duty was done and the table was ready (R11 code 5 timing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_frame: Option<FrameIdx>,
}

/// An item put back on the table between shots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacedItem {
    pub item: ItemId,
    pub frame: FrameIdx,
    pub pose: Pose,
}

/// An item on the table that moved while no move was in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisturbedItem {
    pub item: ItemId,
    pub frame: FrameIdx,
    pub distance_mm: f64,
}

/// A track row: `[frame, x, y]` for coins, `[frame, x, y, theta]` for fish.
pub type TrackRow = Vec<f64>;

/// One shot: observations and judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Shot {
    pub index: usize,
    /// Whose move it was (the mover by turn order).
    pub player: PlayerIdx,
    /// The frame the flick was struck in: the last one in which everything still lay
    /// at rest (the simulator's truth counts it the same way).
    pub flick_frame: FrameIdx,
    /// The first frame in which every item on the table is still again.
    pub rest_frame: FrameIdx,
    /// The item seen to move first (R11 1.1 / 3 evidence); absent if unseen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_moved: Option<ItemId>,
    /// Poses of every item on the table at the flick.
    pub start: BTreeMap<ItemId, Pose>,
    /// Rest poses of every item still on the table.
    pub end: BTreeMap<ItemId, Pose>,
    /// Where each item was in the frames it was seen, flick to rest: the pose at the
    /// moment the frame's exposure ended (a moving item's sighting, mid-exposure, is
    /// moved ahead by its velocity times half the exposure).
    #[serde(default)]
    pub tracks: BTreeMap<ItemId, Vec<TrackRow>>,
    #[serde(default)]
    pub lost: Vec<LostItem>,
    #[serde(default)]
    pub coins_in_holes: BTreeMap<ItemId, ItemId>,
    #[serde(default)]
    pub stacking: Vec<Stacking>,
    /// Points each player got for this shot (R5, R7 fines, R11 fines and annulment).
    #[serde(default)]
    pub score: Vec<i32>,
    #[serde(default)]
    pub put_back: Vec<PutBack>,
    #[serde(default)]
    pub violations: Vec<Violation>,
    /// What happened before this shot's flick since the previous rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Interlude>,
    /// Items whose identity or fate the tracker is unsure of, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// For fish lying on other items at rest: whether the fish still touches the
    /// table (R8c/R8d). A stacked fish missing here counts as a doubt (R8e).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub touches_table: BTreeMap<ItemId, bool>,
    /// Items whose rest pose, stacking or hole contents are in doubt (hidden, partly
    /// unseen): any coin put-back that depends on them is impossible (R8e).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubt: Vec<ItemId>,
    /// Items on the table whose owner is not known (a loose coin in a clip analysed
    /// without `--start`: coins are twins, so it is reported, not guessed). They are
    /// not in `start`, `end`, `tracks` or `lost`, and the rules cannot score them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownItem>,
}

/// An item seen on the table whose identity is not known (see [`Shot::unknown`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnknownItem {
    /// The tracker's number for it: the same item keeps it through the shots of one clip.
    pub track: u32,
    /// `coin` or `fish`.
    pub kind: String,
    /// The players it may belong to: those whose item of this kind is not
    /// identified anywhere in the shot.
    pub owners: Vec<PlayerIdx>,
    /// Its pose at the flick, if it was on the table then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Pose>,
    /// Its rest pose, if it is on the table at rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Pose>,
    /// Where it was seen from the flick to rest, when it moved (rows as in `tracks`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub track_rows: Vec<TrackRow>,
    /// When and where it left the table, if it did in this shot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<UnknownLost>,
}

/// When and where an item of unknown owner crossed the table edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnknownLost {
    pub frame: FrameIdx,
    pub exit: Pose,
}

impl Shot {
    /// Moves every frame number of the shot by `offset`: a clip's shot placed in a
    /// record of several clips (`analyse --chain`) counts frames from the first clip.
    pub fn shift_frames(&mut self, offset: FrameIdx) {
        let f = |x: &mut FrameIdx| *x += offset;
        f(&mut self.flick_frame);
        f(&mut self.rest_frame);
        for rows in self.tracks.values_mut() {
            for r in rows {
                if let Some(x) = r.first_mut() {
                    *x += offset as f64;
                }
            }
        }
        for l in &mut self.lost {
            f(&mut l.frame);
        }
        for v in &mut self.violations {
            f(&mut v.frame);
        }
        if let Some(b) = &mut self.before {
            for p in &mut b.placed {
                f(&mut p.frame);
            }
            for d in &mut b.disturbed {
                f(&mut d.frame);
            }
            if let Some(r) = &mut b.ready_frame {
                f(r);
            }
        }
        for u in &mut self.unknown {
            for r in &mut u.track_rows {
                if let Some(x) = r.first_mut() {
                    *x += offset as f64;
                }
            }
            if let Some(l) = &mut u.lost {
                f(&mut l.frame);
            }
        }
    }
}

/// `record.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    #[serde(default)]
    pub video: VideoInfo,
    pub players: Vec<String>,
    pub shots: Vec<Shot>,
    /// Totals after the last shot.
    #[serde(default)]
    pub scores: Vec<i32>,
    /// The set-up the record was made under (an extension of DESIGN.md): lets `score`
    /// re-run the rules without guessing the items, the table or the fine policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Game>,
    /// The table polygon (mm), counter-clockwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_mm: Option<Vec<[f64; 2]>>,
}

impl Record {
    pub fn load(path: &Path) -> Result<Record, ConfigError> {
        let record: Record = crate::config::load_json(path)?;
        if record.version != RECORD_VERSION {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "record version {} is not supported (this build reads version {RECORD_VERSION})",
                    record.version
                ),
            });
        }
        Ok(record)
    }

    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        crate::config::save_json(self, path)
    }

    /// Appends the record of the clip that came next (`analyse --chain`): its shots,
    /// their frames counted on from this record's as if the clips were one video, its
    /// final scores and its frames.
    pub fn append_clip(&mut self, clip: Record) {
        let offset = self.video.frames;
        self.shots.extend(clip.shots.into_iter().map(|mut s| {
            s.shift_frames(offset);
            s
        }));
        self.scores = clip.scores;
        self.video
            .damaged_frames
            .extend(clip.video.damaged_frames.iter().map(|f| f + offset));
        self.video.damaged_shots.extend(clip.video.damaged_shots);
        self.video.frames += clip.video.frames;
    }

    /// The fine policy recorded with the game, or none.
    pub fn fine_policy(&self) -> FinePolicy {
        self.game
            .as_ref()
            .map(|g| g.fine_policy)
            .unwrap_or_default()
    }
}

/// `state.json`: where a clip starts mid-match. Only `poses` is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StartState {
    pub poses: BTreeMap<ItemId, Pose>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_player: Option<PlayerIdx>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<Vec<i32>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_example_parses() {
        let text = r#"{ "version": 1,
          "video": { "path": "m.avi", "fps": 30.0, "frames": 300, "width": 1280, "height": 720 },
          "players": ["Anna", "Boris"],
          "shots": [ {
              "index": 0, "player": 0, "flick_frame": 31, "rest_frame": 140,
              "start": { "fish:0": {"x": 0, "y": 0, "theta": 0}, "coin:0": {"x": 0, "y": 0} },
              "end":   { "fish:0": {"x": 5, "y": 0, "theta": 0} },
              "tracks": { "fish:0": [[31, 100.0, 50.0, 0.1]], "coin:1": [[31, 200.0, 80.0]] },
              "lost": [ { "item": "coin:1", "frame": 77, "exit": {"x": 1000.0, "y": 312.5} } ],
              "coins_in_holes": { "coin:0": "fish:0" },
              "stacking": [ { "top": "fish:0", "under": "coin:1" } ],
              "score": [1, 0],
              "put_back": [ { "item": "fish:1", "pose": {"x": 0, "y": 0, "theta": 0}, "rule": "R6b" } ],
              "violations": [ { "code": "3", "player": 1, "frame": 29, "evidence": "..." } ]
          } ],
          "scores": [1, 0] }"#;
        let r: Record = crate::config::parse_json(text, Path::new("r.json")).unwrap();
        assert_eq!(r.shots[0].lost[0].item, ItemId::coin(1));
        assert_eq!(r.shots[0].coins_in_holes[&ItemId::coin(0)], ItemId::fish(0));
        assert_eq!(r.shots[0].start[&ItemId::fish(0)].theta, Some(0.0));
        assert_eq!(r.shots[0].start[&ItemId::coin(0)].theta, None);
    }
}
