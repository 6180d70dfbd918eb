//! `record.json` (DESIGN.md): what `analyse` writes and `score`, `replay` and
//! `report` read — one entry per shot with its observations (poses, tracks, lost
//! items, coins in holes, stacking) and its judgement (score, put-backs,
//! violations). Also `state.json`, the opening state of a clip. Uses: model, config.

use crate::config::{ConfigError, FinePolicy, Game};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The format version this build writes. Version 2 added `decisions` (every call's
/// confidence and evidence) to a shot and `evidence` to put-backs and violations; a
/// version-1 record (written before) reads as it is, its calls without evidence.
/// Version 3 added `identity` to a shot (what the tracker saw of each item's
/// identity); older records read as they are, without it.
pub const RECORD_VERSION: u32 = 3;
/// The oldest format version this build reads.
pub const OLDEST_RECORD_VERSION: u32 = 1;

/// The video a record was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct VideoInfo {
    pub path: String,
    pub fps: f64,
    pub frames: u64,
    pub width: u32,
    pub height: u32,
    /// Frames that could not be decoded, that FFmpeg decoded with errors (their
    /// picture partly guessed), or whose picture shows macroblock damage FFmpeg did
    /// not report, and were skipped (container indices, in order): nothing was seen
    /// in them. `frames` counts them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged_frames: Vec<FrameIdx>,
    /// The shots (their `index`) a damaged frame falls in: a frame falls in the
    /// first shot whose rest frame is at or after it (after the previous shot's
    /// rest: its interlude, flick and motion). The shot also says so in `notes`.
    /// Frames after the last shot's rest fall in no shot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged_shots: Vec<usize>,
    /// Why the frames of `damaged_frames` were called damaged: stretches of
    /// consecutive frames with one reason, in order (absent in records of older
    /// builds, and for frames whose reason is not known, as of recorded detections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damage: Vec<DamagedStretch>,
    /// Why reading stopped before the end the container claims (a file cut short,
    /// a damaged stretch too long to read past): what came after was not seen, so
    /// the shots in it are missing and the last one may be cut. Absent: read to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// A bumped camera (`live`, `analyse --recalibrate`): each time the table's
    /// outline was found moved, the frame, how far, and the table calibration used
    /// from that frame on (or why none could be). Absent: never checked, or never moved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalibrations: Vec<Recalibrated>,
}

/// The table found moved in the picture at `frame` (a bumped camera).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recalibrated {
    pub frame: FrameIdx,
    /// How far the outline lay from the calibration then in use, worst over the
    /// table's edges (mm).
    pub shift_mm: f64,
    /// The re-fitted calibration's table corners in the picture (px), used from
    /// `frame` on; absent when the re-fit was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_corners_px: Option<Vec<[f64; 2]>>,
    /// Why the re-fit was refused: the shots after it (to the next re-fit) are
    /// measured with a table that is off, and say so in their notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// Why a frame was called damaged (`video.damage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DamageReason {
    /// The frame could not be decoded at all.
    Undecodable,
    /// FFmpeg decoded it with errors (its picture partly concealed guesswork).
    DecoderErrors,
    /// Its picture shows macroblock damage FFmpeg did not report.
    Picture,
    /// Predicted from a damaged frame: after one, every frame up to the next key
    /// frame is built on the damaged picture and carries its damage on.
    Predicted,
    /// A reason this build does not know (a record of a newer one).
    #[serde(other)]
    Other,
}

/// Frames `from` to `to` (both included) damaged for one reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamagedStretch {
    pub from: FrameIdx,
    pub to: FrameIdx,
    pub reason: DamageReason,
}

impl DamagedStretch {
    /// `frames` (in order) with their reasons, as stretches of consecutive frames
    /// with one reason.
    pub fn stretches(frames: impl IntoIterator<Item = (FrameIdx, DamageReason)>) -> Vec<Self> {
        let mut out: Vec<DamagedStretch> = Vec::new();
        for (f, reason) in frames {
            match out.last_mut() {
                Some(last) if last.reason == reason && last.to + 1 == f => last.to = f,
                _ => out.push(DamagedStretch {
                    from: f,
                    to: f,
                    reason,
                }),
            }
        }
        out
    }
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
    /// How sure the duty is, from what it was decided on (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Evidence>,
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
    /// How sure the call is, from what it was decided on (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Evidence>,
}

pub use crate::config::DEFAULT_REVIEW_BELOW;
/// Most decisions a shot may hold, and most frames or measurements one may name.
pub const MAX_DECISIONS: usize = 10_000;
/// A lost item's exit point is called right when it lies within this of the true
/// crossing (mm): a fish put back from an exit this far off is still put back where
/// a referee would put it (R6 keeps it within a tag's width of the exit).
pub const EXIT_TOLERANCE_MM: f64 = 25.0;

/// How sure a call is whose deciding quantity lies `margin` beyond its threshold
/// (negative: on the other side), when the quantity is known to about `scale`: a
/// logistic, 0.5 at the threshold, 0.88 two scales beyond it, 0.98 four.
pub fn sure(margin: f64, scale: f64) -> f64 {
    let z = margin / scale.max(1e-9);
    if !z.is_finite() {
        return if z > 0.0 { 1.0 } else { 0.0 };
    }
    1.0 / (1.0 + (-z).exp())
}

/// How much a call resting on an item seen in `frames` frames can be trusted on that
/// count alone: each sighting halves the chance that all of them were misreads
/// (1 frame 0.5, 2 frames 0.75, 4 frames 0.94).
pub fn seen_factor(frames: usize) -> f64 {
    1.0 - 0.5f64.powi(frames.min(64) as i32)
}

/// A call's confidence and what it was decided on (record version 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Evidence {
    /// 0 to 1: how sure the call is, computed from what was measured (margins to the
    /// thresholds that decided it, frames seen), not set per kind of call.
    pub confidence: f64,
    /// The frames that decided it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<FrameIdx>,
    /// What was measured there: name → value, each name ending in its unit (`_mm`,
    /// `_mm_s`, `_frames`, `_s`) or, for a count of frames seen, `frames_seen`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub measured: BTreeMap<String, f64>,
    /// What hid the item when it was not seen (`hand`, `fish:1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_by: Option<String>,
    /// One sentence for the referee: what was decided, and on what.
    pub why: String,
}

impl Evidence {
    /// Evidence with a confidence (clamped to 0..1) and a sentence.
    pub fn new(confidence: f64, why: impl Into<String>) -> Evidence {
        Evidence {
            confidence: if confidence.is_finite() {
                confidence.clamp(0.0, 1.0)
            } else {
                0.0
            },
            why: why.into(),
            ..Evidence::default()
        }
    }

    /// Adds a measurement (rounded to 0.01, so records stay short and stable).
    pub fn with(mut self, name: &str, value: f64) -> Evidence {
        if value.is_finite() {
            self.measured
                .insert(name.to_string(), (value * 100.0).round() / 100.0);
        }
        self
    }

    /// A call about `item` is no surer than that the track it rests on is that item
    /// (`id`, record version 3: a swapped track makes the wrong item's call): lowered
    /// to the identity's confidence where that is less, saying why.
    pub fn no_surer_than_identity(mut self, item: ItemId, id: &Identity) -> Evidence {
        if id.confidence < self.confidence {
            self.confidence = id.confidence;
            self.why = format!(
                "{}; but which item this is is in doubt: {item}: {}",
                self.why, id.why
            );
            self = self.with("identity_confidence", id.confidence);
        }
        self
    }

    /// Adds the deciding frames (sorted, each once).
    pub fn at(mut self, frames: impl IntoIterator<Item = FrameIdx>) -> Evidence {
        self.frames.extend(frames);
        self.frames.sort_unstable();
        self.frames.dedup();
        self
    }

    /// Names what hid the item.
    pub fn hidden(mut self, by: Option<String>) -> Evidence {
        self.hidden_by = by;
        self
    }

    fn validate(&self, at: &str) -> Result<(), String> {
        use crate::limits::check_count;
        if !(0.0..=1.0).contains(&self.confidence) {
            return Err(format!(
                "{at}.confidence is {}, expected 0 to 1",
                self.confidence
            ));
        }
        check_count(&format!("{at}.frames"), self.frames.len(), MAX_DECISIONS)?;
        check_count(
            &format!("{at}.measured"),
            self.measured.len(),
            MAX_DECISIONS,
        )?;
        for f in &self.frames {
            check_frame(&format!("{at}.frames"), *f)?;
        }
        for (k, v) in &self.measured {
            if !v.is_finite() || v.abs() > 1e12 {
                return Err(format!(
                    "{at}.measured.{k} is {v}, expected a finite number"
                ));
            }
        }
        check_count(
            &format!("{at}.why (characters)"),
            self.why.chars().count(),
            MAX_AMENDMENT_TEXT,
        )
    }
}

/// What kind of call a [`Decision`] is (`call` in JSON, kebab-case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    /// `item` was seen leaving the table (the tracker followed it over the edge).
    Lost,
    /// `item` vanished unseen and was judged lost: its path leaves the table.
    LostUnseen,
    /// Where lost `item` crossed the edge (`lost[].exit`).
    Exit,
    /// `item` was not seen at rest and was judged still on the table (hidden).
    OnTable,
    /// At rest, coin `item` lies in the hole of fish `other`.
    CoinIn,
    /// At rest, coin `item` lies outside the hole of fish `other` (the nearest, or
    /// the one it lay in at the flick).
    CoinOut,
    /// At rest, `item` lies on `other`.
    Stacking,
    /// `item` was the first item set moving (R11 1.1/3).
    FirstMoved,
    /// The put-back duty of `item` (`put_back[]`): its legal pose or verdict.
    PutBack,
    /// A violation (`violations[]`); `code` names it.
    Violation,
}

impl Call {
    pub fn as_str(self) -> &'static str {
        match self {
            Call::Lost => "lost",
            Call::LostUnseen => "lost-unseen",
            Call::Exit => "exit",
            Call::OnTable => "on-table",
            Call::CoinIn => "coin-in",
            Call::CoinOut => "coin-out",
            Call::Stacking => "stacking",
            Call::FirstMoved => "first-moved",
            Call::PutBack => "put-back",
            Call::Violation => "violation",
        }
    }
}

/// One observation call of a shot with its confidence and evidence (version 2):
/// the lost items, exits, hidden items kept on the table, coins in and out of holes,
/// stacking and the first item moved. Put-backs and violations carry theirs in
/// `put_back[].decision` and `violations[].decision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub call: Call,
    pub item: ItemId,
    /// The second item the call names (the fish of a hole, the item under).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<ItemId>,
    #[serde(flatten)]
    pub evidence: Evidence,
}

/// A call less sure than the review threshold, for the referee to look at first.
#[derive(Debug, Clone, PartialEq)]
pub struct Flagged<'a> {
    pub shot: usize,
    pub call: Call,
    pub item: Option<ItemId>,
    pub other: Option<ItemId>,
    /// The violation's R11 code.
    pub code: Option<&'a str>,
    pub evidence: &'a Evidence,
}

impl Flagged<'_> {
    /// One line: `shot 3: lost coin:1 (confidence 0.42): why`.
    pub fn line(&self) -> String {
        let what = match (self.item, self.other, self.code) {
            (_, _, Some(code)) => format!("violation {code}"),
            (Some(i), Some(o), None) => format!("{} {i} / {o}", self.call.as_str()),
            (Some(i), None, None) => format!("{} {i}", self.call.as_str()),
            (None, _, None) => self.call.as_str().to_string(),
        };
        format!(
            "shot {}: {what} (confidence {:.2}): {}",
            self.shot, self.evidence.confidence, self.evidence.why
        )
    }
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
    /// A referee's corrections of this shot's calls (`fishtrack amend`), in the order
    /// made. The rules judge the shot as amended; a dropped violation stays dropped
    /// whenever the record is re-scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amendments: Vec<Amendment>,
    /// Every observation call with its confidence and evidence (version 2; absent
    /// from older records).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// What the tracker saw of each item's identity in the interlude and the shot
    /// (version 3; absent from older records, and for an item nothing happened to).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub identity: BTreeMap<ItemId, Identity>,
}

/// How an item's track came by its name, and when (`identity[].origin`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdentitySource {
    pub frame: FrameIdx,
    /// `first-sight`, `unknown-owner`, `opening`, `elimination`, `put-back`,
    /// `left-behind`, `near-vanished`, `hole-owner`, `regrouped` (`track::IdentityOrigin`).
    pub from: String,
}

/// The track changed its name (`identity[].changes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdentityChange {
    pub frame: FrameIdx,
    /// The name before (absent: it had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<ItemId>,
    pub to: ItemId,
}

/// A sighting far from the track's prediction (`jumps`), or the first after an
/// unseen stretch (`seen_again`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdentitySighting {
    pub frame: FrameIdx,
    /// How far the sighting lay from where the track was predicted or held.
    pub mm: f64,
    /// Frames unseen before it (`seen_again` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unseen_frames: Option<u64>,
    /// Other items of its kind predicted at least as near that sighting (coins;
    /// fish are told apart by colour): items it may have been.
    pub lookalikes: u32,
}

/// What the tracker saw of one item's identity in a shot (interlude and shot):
/// the evidence that the track named `item` is that item (record version 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The tracker's track number (kept through the shots of one clip).
    pub track: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<IdentitySource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<IdentityChange>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jumps: Vec<IdentitySighting>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_again: Vec<IdentitySighting>,
    /// The longest run of frames it went unseen while on the table.
    #[serde(default)]
    pub longest_unseen_frames: u64,
    /// How sure the name is, 0 to 1 (the calls about the item are no surer).
    pub confidence: f64,
    /// Why it is less than sure (empty when sure).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// Most amendments a record may hold.
pub const MAX_AMENDMENTS: usize = 10_000;
/// Longest `why` or `when` of an amendment, and longest violation code (characters).
pub const MAX_AMENDMENT_TEXT: usize = 2_000;

/// A referee's correction of one call of a shot (`fishtrack amend`): what was changed,
/// why, when, and the shot's values it replaced (so that it can be undone). Kept in the
/// shot it corrects ([`Shot::amendments`]); numbered 1, 2, … over the whole record in
/// the order made. Added to record.json in format version 1 (an optional key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Amendment {
    /// 1, 2, … over the record, in the order made (`amend --undo K` names it).
    pub number: u32,
    /// What was changed: `what` names the kind, the other keys its values.
    #[serde(flatten)]
    pub change: Change,
    /// Why (the referee's words).
    pub why: String,
    /// When it was made: UTC, RFC 3339 (`2026-12-02T09:30:00Z`).
    pub when: String,
    /// The shot's values it replaced.
    #[serde(default)]
    pub before: Before,
    /// The record's totals before it was made.
    #[serde(default)]
    pub scores_before: Vec<i32>,
    /// The record's totals just after it was made (later amendments may change them).
    #[serde(default)]
    pub scores_after: Vec<i32>,
}

/// The call an amendment corrects (`what` in JSON, kebab-case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "kebab-case")]
pub enum Change {
    /// `item` left the table in this shot (`--lost`): it is taken out of the rest
    /// poses, and its exit is put where its last sighting is nearest the edge.
    Lost { item: ItemId },
    /// `item` did not leave the table (`--not-lost`): it rests where it was last seen.
    NotLost { item: ItemId },
    /// Lost `item` crossed the table's edge at `exit` (`--exit`).
    Exit { item: ItemId, exit: Pose },
    /// At rest, `coin` lies in the hole of `fish` (`--coin-in`).
    CoinIn { coin: ItemId, fish: ItemId },
    /// `player` made this move, with their own fish (`--mover`, R11 1.1/3).
    Mover { player: PlayerIdx },
    /// The shot's violations of R11 `code` did not happen (`--drop-violation`).
    DropViolation { code: String },
}

/// The shot's values an amendment replaced: each key present is a field of the shot
/// as it was just before (restored whole by an undo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Before {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<Vec<LostItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<BTreeMap<ItemId, Pose>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coins_in_holes: Option<BTreeMap<ItemId, ItemId>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacking: Option<Vec<Stacking>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touches_table: Option<BTreeMap<ItemId, bool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<Vec<ItemId>>,
    /// The mover and the item seen to move first (a `mover` amendment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mover: Option<MoverBefore>,
    /// The shot's violations (a `drop-violation` amendment; re-scoring restores them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violations: Option<Vec<Violation>>,
    /// Later shots whose mover followed the turn order and moved with it (a `mover`
    /// amendment that makes a shot count or not): shot index → the mover before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub later_players: BTreeMap<usize, PlayerIdx>,
    /// A later shot's interlude as it was, when a `not-lost` amendment took the item's
    /// put-back out of it (the camera saw again an item that had never left): shot
    /// index → its `before`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub later_interludes: BTreeMap<usize, Interlude>,
}

/// A shot's mover and first-moved item before a `mover` amendment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoverBefore {
    pub player: PlayerIdx,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_moved: Option<ItemId>,
}

impl Change {
    /// The items the change names.
    pub fn items(&self) -> Vec<ItemId> {
        match self {
            Change::Lost { item } | Change::NotLost { item } | Change::Exit { item, .. } => {
                vec![*item]
            }
            Change::CoinIn { coin, fish } => vec![*coin, *fish],
            Change::Mover { .. } | Change::DropViolation { .. } => Vec::new(),
        }
    }

    /// The violation codes this change drops from its shot, if any.
    pub fn dropped_code(&self) -> Option<&str> {
        match self {
            Change::DropViolation { code } => Some(code),
            _ => None,
        }
    }
}

impl Amendment {
    /// Checks the amendment's numbers, ids and texts; `at` names it in messages.
    pub fn validate(&self, at: &str, players: usize) -> Result<(), String> {
        use crate::limits::check_count;
        if self.number == 0 {
            return Err(format!("{at}.number is 0: amendments are numbered from 1"));
        }
        for item in self.change.items() {
            check_item(at, &item, players)?;
        }
        match &self.change {
            Change::Exit { exit, .. } => check_pose(&format!("{at}.exit"), exit)?,
            Change::Mover { player } if *player >= players => {
                return Err(format!(
                    "{at}.player is {player}: player {player} does not exist (there are {players})"
                ))
            }
            Change::DropViolation { code } if code.is_empty() => {
                return Err(format!("{at}.code is empty"))
            }
            _ => {}
        }
        let text = |field: &str, value: &str| {
            check_count(
                &format!("{at}.{field} (characters)"),
                value.chars().count(),
                MAX_AMENDMENT_TEXT,
            )
        };
        text("why", &self.why)?;
        text("when", &self.when)?;
        if let Some(code) = self.change.dropped_code() {
            text("code", code)?;
        }
        check_count(
            &format!("{at}.scores_before"),
            self.scores_before.len(),
            players,
        )?;
        check_count(
            &format!("{at}.scores_after"),
            self.scores_after.len(),
            players,
        )?;
        let b = &self.before;
        let at = format!("{at}.before");
        for (i, l) in b.lost.iter().flatten().enumerate() {
            check_item(&format!("{at}.lost[{i}]"), &l.item, players)?;
            check_frame(&format!("{at}.lost[{i}].frame"), l.frame)?;
            check_pose(&format!("{at}.lost[{i}].exit"), &l.exit)?;
        }
        for (item, pose) in b.end.iter().flatten() {
            check_item(&format!("{at}.end"), item, players)?;
            check_pose(&format!("{at}.end.{item}"), pose)?;
        }
        for (coin, fish) in b.coins_in_holes.iter().flatten() {
            check_item(&format!("{at}.coins_in_holes"), coin, players)?;
            check_item(&format!("{at}.coins_in_holes"), fish, players)?;
        }
        for s in b.stacking.iter().flatten() {
            check_item(&format!("{at}.stacking"), &s.top, players)?;
            check_item(&format!("{at}.stacking"), &s.under, players)?;
        }
        for item in b.touches_table.iter().flat_map(|t| t.keys()) {
            check_item(&format!("{at}.touches_table"), item, players)?;
        }
        for item in b.doubt.iter().flatten() {
            check_item(&format!("{at}.doubt"), item, players)?;
        }
        if let Some(m) = &b.mover {
            if m.player >= players {
                return Err(format!("{at}.mover.player {} does not exist", m.player));
            }
            if let Some(item) = &m.first_moved {
                check_item(&format!("{at}.mover.first_moved"), item, players)?;
            }
        }
        for (&shot, i) in &b.later_interludes {
            for (k, p) in i.placed.iter().enumerate() {
                let at = format!("{at}.later_interludes.{shot}.placed[{k}]");
                check_item(&at, &p.item, players)?;
                check_frame(&format!("{at}.frame"), p.frame)?;
                check_pose(&format!("{at}.pose"), &p.pose)?;
            }
            for (k, d) in i.disturbed.iter().enumerate() {
                let at = format!("{at}.later_interludes.{shot}.disturbed[{k}]");
                check_item(&at, &d.item, players)?;
                check_frame(&format!("{at}.frame"), d.frame)?;
            }
        }
        for (&shot, &player) in &b.later_players {
            if player >= players {
                return Err(format!(
                    "{at}.later_players: shot {shot}: player {player} does not exist"
                ));
            }
        }
        Ok(())
    }
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

/// A one-line reason when an item id names a player past `players`.
fn check_item(field: &str, item: &ItemId, players: usize) -> Result<(), String> {
    if item.owner >= players {
        return Err(format!(
            "{field}: {item}: player {} does not exist (there are {players})",
            item.owner
        ));
    }
    Ok(())
}

fn check_frame(field: &str, frame: FrameIdx) -> Result<(), String> {
    crate::limits::check_range(
        field,
        frame as f64,
        0.0,
        crate::limits::MAX_FRAMES as f64,
        "",
    )
}

fn check_pose(field: &str, pose: &Pose) -> Result<(), String> {
    crate::limits::check_pose(field, pose.x, pose.y, pose.theta)
}

fn check_row(field: &str, row: &[f64]) -> Result<(), String> {
    if !(3..=4).contains(&row.len()) {
        return Err(format!(
            "{field} has {} numbers, expected [frame, x, y] or [frame, x, y, theta]",
            row.len()
        ));
    }
    let max = crate::limits::MAX_FRAMES as f64;
    crate::limits::check_range(&format!("{field}[0] (frame)"), row[0], 0.0, max, "")?;
    crate::limits::check_pose(field, row[1], row[2], row.get(3).copied())
}

impl Shot {
    /// Checks the shot's numbers against [`crate::limits`]; `at` names it in messages.
    pub fn validate(&self, at: &str, players: usize) -> Result<(), String> {
        use crate::limits::check_count;
        if self.player >= players {
            return Err(format!(
                "{at}.player is {p}: player {p} does not exist (there are {players})",
                p = self.player
            ));
        }
        check_frame(&format!("{at}.flick_frame"), self.flick_frame)?;
        check_frame(&format!("{at}.rest_frame"), self.rest_frame)?;
        check_count(&format!("{at}.score"), self.score.len(), players)?;
        for (name, poses) in [("start", &self.start), ("end", &self.end)] {
            for (item, pose) in poses {
                check_item(&format!("{at}.{name}"), item, players)?;
                check_pose(&format!("{at}.{name}.{item}"), pose)?;
            }
        }
        for (item, rows) in &self.tracks {
            check_item(&format!("{at}.tracks"), item, players)?;
            for (i, row) in rows.iter().enumerate() {
                check_row(&format!("{at}.tracks.{item} row {i}"), row)?;
            }
        }
        for (i, l) in self.lost.iter().enumerate() {
            check_item(&format!("{at}.lost[{i}]"), &l.item, players)?;
            check_frame(&format!("{at}.lost[{i}].frame"), l.frame)?;
            check_pose(&format!("{at}.lost[{i}].exit"), &l.exit)?;
        }
        for (coin, fish) in &self.coins_in_holes {
            check_item(&format!("{at}.coins_in_holes"), coin, players)?;
            check_item(&format!("{at}.coins_in_holes"), fish, players)?;
        }
        for (i, st) in self.stacking.iter().enumerate() {
            check_item(&format!("{at}.stacking[{i}]"), &st.top, players)?;
            check_item(&format!("{at}.stacking[{i}]"), &st.under, players)?;
        }
        for (i, p) in self.put_back.iter().enumerate() {
            check_item(&format!("{at}.put_back[{i}]"), &p.item, players)?;
            if let Some(pose) = &p.pose {
                check_pose(&format!("{at}.put_back[{i}].pose"), pose)?;
            }
        }
        for (i, v) in self.violations.iter().enumerate() {
            if v.player >= players {
                return Err(format!(
                    "{at}.violations[{i}].player is {p}: player {p} does not exist (there are {players})",
                    p = v.player
                ));
            }
            check_frame(&format!("{at}.violations[{i}].frame"), v.frame)?;
        }
        if let Some(b) = &self.before {
            for (i, p) in b.placed.iter().enumerate() {
                check_item(&format!("{at}.before.placed[{i}]"), &p.item, players)?;
                check_frame(&format!("{at}.before.placed[{i}].frame"), p.frame)?;
                check_pose(&format!("{at}.before.placed[{i}].pose"), &p.pose)?;
            }
            for (i, d) in b.disturbed.iter().enumerate() {
                check_item(&format!("{at}.before.disturbed[{i}]"), &d.item, players)?;
                check_frame(&format!("{at}.before.disturbed[{i}].frame"), d.frame)?;
            }
            if let Some(f) = b.ready_frame {
                check_frame(&format!("{at}.before.ready_frame"), f)?;
            }
        }
        for item in self.touches_table.keys() {
            check_item(&format!("{at}.touches_table"), item, players)?;
        }
        for item in &self.doubt {
            check_item(&format!("{at}.doubt"), item, players)?;
        }
        for (i, u) in self.unknown.iter().enumerate() {
            let at = format!("{at}.unknown[{i}]");
            check_count(&format!("{at}.owners"), u.owners.len(), players)?;
            for (name, pose) in [("start", &u.start), ("end", &u.end)] {
                if let Some(pose) = pose {
                    check_pose(&format!("{at}.{name}"), pose)?;
                }
            }
            for (r, row) in u.track_rows.iter().enumerate() {
                check_row(&format!("{at}.track_rows row {r}"), row)?;
            }
            if let Some(l) = &u.lost {
                check_frame(&format!("{at}.lost.frame"), l.frame)?;
                check_pose(&format!("{at}.lost.exit"), &l.exit)?;
            }
        }
        check_count(
            &format!("{at}.amendments"),
            self.amendments.len(),
            MAX_AMENDMENTS,
        )?;
        for (i, a) in self.amendments.iter().enumerate() {
            a.validate(&format!("{at}.amendments[{i}]"), players)?;
        }
        crate::limits::check_count(
            &format!("{at}.decisions"),
            self.decisions.len(),
            MAX_DECISIONS,
        )?;
        for (i, d) in self.decisions.iter().enumerate() {
            let at = format!("{at}.decisions[{i}]");
            check_item(&at, &d.item, players)?;
            if let Some(o) = &d.other {
                check_item(&format!("{at}.other"), o, players)?;
            }
            d.evidence.validate(&at)?;
        }
        crate::limits::check_count(
            &format!("{at}.identity"),
            self.identity.len(),
            MAX_DECISIONS,
        )?;
        for (item, id) in &self.identity {
            let at = format!("{at}.identity.{item}");
            check_item(&at, item, players)?;
            if !(0.0..=1.0).contains(&id.confidence) {
                return Err(format!(
                    "{at}.confidence is {}, expected 0 to 1",
                    id.confidence
                ));
            }
            let n = id.changes.len() + id.jumps.len() + id.seen_again.len();
            crate::limits::check_count(&format!("{at} (entries)"), n, MAX_DECISIONS)?;
        }
        for (i, p) in self.put_back.iter().enumerate() {
            if let Some(e) = &p.decision {
                e.validate(&format!("{at}.put_back[{i}].decision"))?;
            }
        }
        for (i, v) in self.violations.iter().enumerate() {
            if let Some(e) = &v.decision {
                e.validate(&format!("{at}.violations[{i}].decision"))?;
            }
        }
        Ok(())
    }

    /// Every call of the shot that carries evidence: the observation calls, then the
    /// put-backs, then the violations.
    pub fn calls(&self) -> Vec<Flagged<'_>> {
        let mut out: Vec<Flagged<'_>> = self
            .decisions
            .iter()
            .map(|d| Flagged {
                shot: self.index,
                call: d.call,
                item: Some(d.item),
                other: d.other,
                code: None,
                evidence: &d.evidence,
            })
            .collect();
        out.extend(self.put_back.iter().filter_map(|p| {
            Some(Flagged {
                shot: self.index,
                call: Call::PutBack,
                item: Some(p.item),
                other: None,
                code: None,
                evidence: p.decision.as_ref()?,
            })
        }));
        out.extend(self.violations.iter().filter_map(|v| {
            Some(Flagged {
                shot: self.index,
                call: Call::Violation,
                item: None,
                other: None,
                code: Some(v.code.as_str()),
                evidence: v.decision.as_ref()?,
            })
        }));
        out
    }

    /// Whether a referee's amendment of this shot settled the call: one naming its
    /// item (a lost, not-lost, exit or coin-in amendment), a mover amendment for
    /// the first item moved, or the dropped violation itself.
    pub fn amended(&self, call: &Flagged<'_>) -> bool {
        self.amendments
            .iter()
            .any(|a| match (&a.change, call.call) {
                (Change::Mover { .. }, Call::FirstMoved | Call::Violation) => true,
                (Change::DropViolation { code }, Call::Violation) => call.code == Some(code),
                (c, Call::FirstMoved | Call::Violation) => {
                    let _ = c;
                    false
                }
                (c, _) => {
                    let named = c.items();
                    call.item.is_some_and(|i| named.contains(&i))
                }
            })
    }

    /// The calls less sure than `below` that no amendment settled, least sure first.
    pub fn flagged(&self, below: f64) -> Vec<Flagged<'_>> {
        let mut out: Vec<Flagged<'_>> = self
            .calls()
            .into_iter()
            .filter(|c| c.evidence.confidence < below && !self.amended(c))
            .collect();
        out.sort_by(|a, b| a.evidence.confidence.total_cmp(&b.evidence.confidence));
        out
    }

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
        let evidence = self
            .decisions
            .iter_mut()
            .map(|d| &mut d.evidence)
            .chain(self.put_back.iter_mut().filter_map(|p| p.decision.as_mut()))
            .chain(
                self.violations
                    .iter_mut()
                    .filter_map(|v| v.decision.as_mut()),
            );
        for e in evidence {
            e.frames.iter_mut().for_each(f);
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

/// [`Record`] as it is written, its shots from elsewhere ([`Record::save_with_shots`]):
/// the same fields in the same order, skipped alike (a test holds the two equal).
#[derive(Serialize)]
struct RecordOut<'a, S: Serialize> {
    version: u32,
    video: &'a VideoInfo,
    players: &'a [String],
    shots: S,
    scores: &'a [i32],
    #[serde(skip_serializing_if = "Option::is_none")]
    game: Option<&'a Game>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table_mm: Option<&'a Vec<[f64; 2]>>,
}

/// Shots serialised as a sequence as they come (once: serialising takes them).
struct ShotStream<I>(std::cell::RefCell<Option<I>>);

impl<I, E> Serialize for ShotStream<I>
where
    I: Iterator<Item = Result<Shot, E>>,
    E: std::fmt::Display,
{
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let Some(shots) = self.0.borrow_mut().take() else {
            return Err(S::Error::custom("the shots were written already"));
        };
        let mut seq = serializer.serialize_seq(None)?;
        for shot in shots {
            seq.serialize_element(&shot.map_err(S::Error::custom)?)?;
        }
        seq.end()
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
    /// A record, at this build's version, of `shots` played under `game` on the table
    /// `table_mm` (its corners), with the totals `scores`: the players are the game's.
    pub fn new(
        game: Game,
        table_mm: Vec<[f64; 2]>,
        video: VideoInfo,
        shots: Vec<Shot>,
        scores: Vec<i32>,
    ) -> Record {
        Record {
            version: RECORD_VERSION,
            video,
            players: game.players.iter().map(|p| p.name.clone()).collect(),
            shots,
            scores,
            game: Some(game),
            table_mm: Some(table_mm),
        }
    }

    pub fn load(path: &Path) -> Result<Record, ConfigError> {
        let record: Record = crate::config::load_checked(path)?;
        if !(OLDEST_RECORD_VERSION..=RECORD_VERSION).contains(&record.version) {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "record version {} is not supported (this build reads versions {OLDEST_RECORD_VERSION} to {RECORD_VERSION})",
                    record.version
                ),
            });
        }
        record.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(record)
    }

    /// Checks every number a reader sizes work or memory by against [`crate::limits`]
    /// (frame rate, frames, image size, players, shots, poses, track rows, the table),
    /// and that shot indices are distinct. Returns a one-line reason naming the field.
    pub fn validate(&self) -> Result<(), String> {
        use crate::limits::{self as l, check_count, check_range};
        let v = &self.video;
        if v.fps != 0.0 {
            check_range("video.fps", v.fps, l::MIN_FPS, l::MAX_FPS, "frames/s")?;
        }
        check_range(
            "video.frames",
            v.frames as f64,
            0.0,
            l::MAX_FRAMES as f64,
            "",
        )?;
        let side = f64::from(l::MAX_IMAGE_SIDE_PX);
        check_range("video.width", f64::from(v.width), 0.0, side, "px")?;
        check_range("video.height", f64::from(v.height), 0.0, side, "px")?;
        check_count(
            "video.damaged_frames",
            v.damaged_frames.len(),
            l::MAX_FRAMES as usize,
        )?;
        check_count("video.damage", v.damage.len(), l::MAX_FRAMES as usize)?;
        check_count("players", self.players.len(), l::MAX_PLAYERS)?;
        check_count("scores", self.scores.len(), l::MAX_PLAYERS)?;
        check_count("shots", self.shots.len(), l::MAX_SHOTS)?;
        // With no player list (a hand-made record), ids may name any player in bounds.
        let players = if self.players.is_empty() {
            l::MAX_PLAYERS
        } else {
            self.players.len()
        };
        let mut indices = std::collections::BTreeMap::new();
        for (n, shot) in self.shots.iter().enumerate() {
            if let Some(first) = indices.insert(shot.index, n) {
                return Err(format!(
                    "shots[{n}] has index {}, as shots[{first}] does: shot indices must be distinct",
                    shot.index
                ));
            }
            shot.validate(&format!("shots[{n}]"), players)
                .map_err(|e| format!("shot {}: {e}", shot.index))?;
        }
        let mut numbers = std::collections::BTreeMap::new();
        for (shot, a) in self.amendments() {
            if let Some(first) = numbers.insert(a.number, shot) {
                return Err(format!(
                    "amendment {} is in shot {first} and in shot {shot}: amendment numbers must be distinct",
                    a.number
                ));
            }
        }
        check_count("amendments", numbers.len(), MAX_AMENDMENTS)?;
        if let Some(game) = &self.game {
            game.validate().map_err(|e| format!("game: {e}"))?;
        }
        if let Some(corners) = &self.table_mm {
            l::check_table_corners("table_mm", corners)?;
        }
        Ok(())
    }

    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        crate::config::save_json(self, path)
    }

    /// Writes the record as [`save`](Self::save) does, byte for byte, but with its
    /// shots taken one at a time from `shots` instead of `self.shots` (a live
    /// match's, kept in a file: the whole record is never in memory). A shot that
    /// cannot be had ends the writing with its error.
    pub fn save_with_shots<I, E>(&self, shots: I, path: &Path) -> Result<(), ConfigError>
    where
        I: Iterator<Item = Result<Shot, E>>,
        E: std::fmt::Display,
    {
        let io = |source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let out = RecordOut {
            version: self.version,
            video: &self.video,
            players: &self.players,
            shots: ShotStream(std::cell::RefCell::new(Some(shots))),
            scores: &self.scores,
            game: self.game.as_ref(),
            table_mm: self.table_mm.as_ref(),
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut w = std::io::BufWriter::new(file);
        serde_json::to_writer_pretty(&mut w, &out)
            .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        use std::io::Write;
        w.write_all(b"\n").and_then(|()| w.flush()).map_err(io)
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
        self.video
            .damage
            .extend(clip.video.damage.iter().map(|d| DamagedStretch {
                from: d.from + offset,
                to: d.to + offset,
                ..*d
            }));
        self.video
            .recalibrations
            .extend(clip.video.recalibrations.into_iter().map(|r| Recalibrated {
                frame: r.frame + offset,
                ..r
            }));
        if self.video.stopped.is_none() {
            self.video.stopped = clip.video.stopped;
        }
        self.video.frames += clip.video.frames;
    }

    /// Every amendment of the record with the index of the shot it is in, in the order
    /// made (by number).
    pub fn amendments(&self) -> Vec<(usize, &Amendment)> {
        let mut all: Vec<(usize, &Amendment)> = self
            .shots
            .iter()
            .flat_map(|s| s.amendments.iter().map(move |a| (s.index, a)))
            .collect();
        all.sort_by_key(|(_, a)| a.number);
        all
    }

    /// The review threshold: the game's `review_below`, else [`DEFAULT_REVIEW_BELOW`].
    pub fn review_below(&self) -> f64 {
        self.game
            .as_ref()
            .map_or(DEFAULT_REVIEW_BELOW, |g| g.review_below())
    }

    /// Every call of the record below the review threshold that no amendment settled,
    /// shot by shot, least sure first within a shot.
    pub fn flagged(&self) -> Vec<Flagged<'_>> {
        let below = self.review_below();
        self.shots.iter().flat_map(|s| s.flagged(below)).collect()
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

impl StartState {
    /// Loads `state.json`, checked as [`StartState::validate`] says.
    pub fn load(path: &Path) -> Result<StartState, ConfigError> {
        let state: StartState = crate::config::load_checked(path)?;
        state.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(state)
    }

    /// Poses within range, ids, the next player and the scores within the player limit.
    pub fn validate(&self) -> Result<(), String> {
        use crate::limits::{check_count, MAX_PLAYERS};
        for (item, pose) in &self.poses {
            check_item("poses", item, MAX_PLAYERS)?;
            check_pose(&format!("poses.{item}"), pose)?;
        }
        if let Some(p) = self.next_player.filter(|&p| p >= MAX_PLAYERS) {
            return Err(format!(
                "next_player is {p}, at most {} allowed",
                MAX_PLAYERS - 1
            ));
        }
        if let Some(s) = &self.scores {
            check_count("scores", s.len(), MAX_PLAYERS)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_written_shot_by_shot_is_the_record_saved_whole() {
        let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/demo/record.json");
        let whole = Record::load(Path::new(demo)).expect("the demo's record");
        assert!(whole.shots.len() > 1 && whole.game.is_some());
        let mut without_game = whole.clone();
        without_game.game = None;
        without_game.table_mm = None;
        let mut no_shots = whole.clone();
        no_shots.shots.clear();
        let dir = tempfile::tempdir().expect("tempdir");
        for record in [whole, without_game, no_shots] {
            let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
            record.save(&a).expect("save");
            let shots = record.shots.iter().cloned().map(Ok::<Shot, String>);
            Record {
                shots: Vec::new(),
                ..record.clone()
            }
            .save_with_shots(shots, &b)
            .expect("save shot by shot");
            let (a, b) = (std::fs::read(a).expect("a"), std::fs::read(b).expect("b"));
            assert!(a == b, "{} bytes against {}", a.len(), b.len());
        }
        // A shot that cannot be read ends the writing with its error.
        let failing = [Err("shot 3 was never kept".to_string())].into_iter();
        let e = Record::load(Path::new(demo))
            .expect("record")
            .save_with_shots(failing, &dir.path().join("c.json"))
            .expect_err("a shot missing");
        assert!(e.to_string().contains("shot 3 was never kept"), "{e}");
    }

    fn two_shots() -> Record {
        let shot = |index| Shot {
            index,
            player: 0,
            start: [(ItemId::fish(0), Pose::fish(100.0, 100.0, 0.0))].into(),
            ..Shot::default()
        };
        Record {
            version: RECORD_VERSION,
            video: VideoInfo {
                fps: 30.0,
                frames: 300,
                ..VideoInfo::default()
            },
            players: vec!["Anna".into(), "Boris".into()],
            shots: vec![shot(0), shot(1)],
            scores: vec![0, 0],
            game: None,
            table_mm: Some(vec![
                [0.0, 0.0],
                [1000.0, 0.0],
                [1000.0, 700.0],
                [0.0, 700.0],
            ]),
        }
    }

    /// What the issue found accepted in silence: duplicate shot indices, poses at
    /// 1e308, a frame rate of 1e308, a 1e6 mm table, a track row at 1e308.
    #[test]
    fn a_record_out_of_bounds_names_the_field() {
        assert_eq!(two_shots().validate(), Ok(()));
        let refused = |change: &dyn Fn(&mut Record), field: &str| {
            let mut r = two_shots();
            change(&mut r);
            let e = r.validate().expect_err(field);
            assert!(e.contains(field), "{field}: {e}");
        };
        refused(&|r| r.shots[1].index = 0, "shots[1] has index 0");
        refused(
            &|r| {
                r.shots[0]
                    .end
                    .insert(ItemId::coin(1), Pose::coin(1e308, 0.0));
            },
            "shots[0].end.coin:1.x",
        );
        refused(&|r| r.video.fps = 1e308, "video.fps");
        refused(
            &|r| r.table_mm = Some(vec![[0.0, 0.0], [1e6, 0.0], [1e6, 700.0], [0.0, 700.0]]),
            "table_mm",
        );
        refused(
            &|r| {
                r.shots[0]
                    .tracks
                    .insert(ItemId::fish(0), vec![vec![31.0, 1e308, 0.0, 0.0]]);
            },
            "shots[0].tracks.fish:0 row 0.x",
        );
        refused(
            &|r| {
                r.shots[0]
                    .start
                    .insert(ItemId::fish(99), Pose::fish(0.0, 0.0, 0.0));
            },
            "fish:99: player 99 does not exist",
        );
        refused(&|r| r.shots[0].player = 5, "shots[0].player");
    }

    #[test]
    fn a_state_out_of_bounds_names_the_field() {
        let mut s = StartState::default();
        s.poses.insert(ItemId::fish(0), Pose::fish(10.0, 10.0, 0.0));
        assert_eq!(s.validate(), Ok(()));
        s.poses.insert(ItemId::coin(0), Pose::coin(0.0, -1e18));
        assert!(s.validate().unwrap_err().contains("poses.coin:0.y"));
    }

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

    #[test]
    fn a_chained_clips_damage_and_recalibrations_count_from_the_match_video_start() {
        let clip = |frames: u64| Record {
            video: VideoInfo {
                frames,
                damaged_frames: vec![3],
                damage: vec![DamagedStretch {
                    from: 3,
                    to: 3,
                    reason: DamageReason::Undecodable,
                }],
                recalibrations: vec![Recalibrated {
                    frame: 40,
                    shift_mm: 5.0,
                    image_corners_px: None,
                    refused: Some("no outline".into()),
                }],
                ..VideoInfo::default()
            },
            version: RECORD_VERSION,
            players: vec![],
            shots: vec![],
            scores: vec![],
            game: None,
            table_mm: None,
        };
        let mut merged = clip(100);
        merged.append_clip(clip(50));
        assert_eq!(merged.video.frames, 150);
        assert_eq!(merged.video.damaged_frames, vec![3, 103]);
        assert_eq!(merged.video.damage[1].from, 103);
        let frames: Vec<_> = merged
            .video
            .recalibrations
            .iter()
            .map(|r| r.frame)
            .collect();
        assert_eq!(frames, vec![40, 140]);
        assert_eq!(
            merged.video.recalibrations[1].refused.as_deref(),
            Some("no outline")
        );
    }

    #[test]
    fn damaged_frames_group_into_stretches_of_one_reason() {
        use DamageReason::*;
        let got = DamagedStretch::stretches([
            (4, Picture),
            (5, Predicted),
            (6, Predicted),
            (9, Predicted),
            (10, Undecodable),
            (11, Undecodable),
        ]);
        let want: Vec<(FrameIdx, FrameIdx, DamageReason)> = vec![
            (4, 4, Picture),
            (5, 6, Predicted),
            (9, 9, Predicted),
            (10, 11, Undecodable),
        ];
        let got: Vec<_> = got.iter().map(|d| (d.from, d.to, d.reason)).collect();
        assert_eq!(got, want);
    }

    /// Records without `video.damage` (older builds) still load; a reason this build
    /// does not know (a newer one's) loads as `Other`; the field is written only when
    /// there is damage, so a clean video's record is as before.
    #[test]
    fn video_damage_is_optional_and_open_to_new_reasons() {
        let old = r#"{ "version": 2, "video": { "path": "m.avi", "fps": 30.0, "frames": 9,
            "width": 8, "height": 8, "damaged_frames": [3] }, "players": [], "shots": [],
            "scores": [] }"#;
        let r: Record = crate::config::parse_json(old, Path::new("r.json")).unwrap();
        assert_eq!(r.video.damaged_frames, vec![3]);
        assert!(r.video.damage.is_empty());
        let newer = old.replace(
            r#""damaged_frames": [3] }"#,
            r#""damaged_frames": [3, 4], "damage": [
                {"from": 3, "to": 3, "reason": "decoder_errors"},
                {"from": 4, "to": 4, "reason": "cosmic_rays"}] }"#,
        );
        let r: Record = crate::config::parse_json(&newer, Path::new("r.json")).unwrap();
        let reasons: Vec<DamageReason> = r.video.damage.iter().map(|d| d.reason).collect();
        assert_eq!(
            reasons,
            vec![DamageReason::DecoderErrors, DamageReason::Other]
        );
        let written = serde_json::to_string(&VideoInfo::default()).unwrap();
        assert!(!written.contains("damage"), "{written}");
    }
}
