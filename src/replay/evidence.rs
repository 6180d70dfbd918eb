//! Evidence crops (issue #17): for every call a record makes — each observation
//! decision, put-back and violation — small PNGs of the table top seen from above
//! at the frames that decided it, with what was measured drawn on (the item's
//! outline, its path, the table edge, the exit, the hole and its reach, a scale bar
//! in mm, the frame number), and `index.json` linking each call to its files.
//!
//! A crop is cut straight from the camera frame through the table calibration: each
//! crop pixel's table point goes through `TableCalibration::pixel_from_table` and is
//! read bilinearly, the map `vision::rectify` builds its remap from, so a crop's
//! millimetres are the ones the detector measured in. This runs after the analysis
//! (`analyse --evidence`, `replay`), reading only the frames named: never inside the
//! frame pipeline. Pure but for where frames come from ([`FrameImages`]; the video
//! reader [`VideoFrames`] comes with the `opencv` feature, through `vision::capture`).
//! Uses: model, record, calibration, geometry, replay (`Scene`, `draw`, `font`).

use super::draw::{self, Color, Px};
use super::{diagram, font, timeline, Scene};
use crate::calibration::TableCalibration;
use crate::geometry::Point;
use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::{Call, Flagged, Shot};
use image::{Rgb, RgbImage};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The index's file name in the evidence folder.
pub const INDEX_FILE: &str = "index.json";
/// The index's format version.
pub const INDEX_VERSION: u32 = 1;
/// The finest scale of a crop (px per mm): about twice the demo camera's own, so a
/// crop is never blurrier than the frame while a tag still fits in 200 px or so.
pub const CROP_MAX_PX_PER_MM: f64 = 2.0;
/// The least a crop shows across (mm): a coin with a tag's length around it.
pub const CROP_MIN_MM: f64 = 100.0;
/// A crop's longest side (px): a flick's path is shown whole, at a smaller scale.
pub const CROP_MAX_SIDE_PX: u32 = 320;
/// A crop's short side is at least this share of its long side.
const CROP_MIN_ASPECT: f64 = 0.6;
/// Room around what a crop shows (mm).
const CROP_PAD_MM: f64 = 12.0;
/// An item this far from its start has set off (mm): beyond a rest pose's jitter.
const MOVED_MM: f64 = 2.0;
/// Frames after the last deciding frame of a mover call in which an item setting
/// off is still shown in its crops.
const SET_OFF_FRAMES: FrameIdx = 3;
/// Crops per call at most: the first deciding frames and the last.
pub const MAX_CROPS_PER_CALL: usize = 6;
/// Where the camera saw nothing (outside its picture).
const OUTSIDE_RGB: Color = [40, 40, 40];
/// The table edge.
const EDGE_RGB: Color = [255, 221, 0];
/// How far from a hole's centre a coin counts as in.
const REACH_RGB: Color = [0, 200, 255];
/// Lines drawn around what is measured, so they read on any background.
const HALO_RGB: Color = [255, 255, 255];

/// Why evidence crops could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("reading the video: {0}")]
    Frame(String),
    #[error("video frame {frame} is {width}x{height} px, but the table calibration's camera is {cal_w}x{cal_h}: the video or --table is not the one the record was made with")]
    FrameSize {
        frame: FrameIdx,
        width: u32,
        height: u32,
        cal_w: u32,
        cal_h: u32,
    },
    #[error(transparent)]
    Replay(#[from] super::ReplayError),
    #[error("writing the index: {0}")]
    Json(#[from] serde_json::Error),
}

/// Where video frames come from, as RGB images. Asked for frames in increasing order.
pub trait FrameImages {
    /// Frame `index`, or `None` when it cannot be read (damaged, past the end).
    fn frame(&mut self, index: FrameIdx) -> Result<Option<RgbImage>, EvidenceError>;
}

/// `index.json`: every call of the record with its crops (docs/formats.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceIndex {
    pub version: u32,
    /// The video the crops were cut from, as given.
    pub video: String,
    /// The game's review threshold: a call less sure than this is `flagged`.
    pub review_below: f64,
    /// In record order: shot by shot, each shot's decisions, put-backs, violations.
    pub calls: Vec<CallCrops>,
}

/// One call of a record and its crops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallCrops {
    /// The shot's record `index`.
    pub shot: usize,
    pub call: Call,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<ItemId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<ItemId>,
    /// A violation's R11 code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub confidence: f64,
    /// Less sure than `review_below` and not settled by an amendment.
    pub flagged: bool,
    /// The call's sentence, from the record.
    pub why: String,
    pub crops: Vec<Crop>,
    /// Frames that were to be cropped but could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<FrameIdx>,
}

impl CallCrops {
    /// Whether this entry is `call` of shot `shot`.
    pub fn is(&self, shot: usize, call: &Flagged<'_>) -> bool {
        self.shot == shot
            && self.call == call.call
            && self.item == call.item
            && self.other == call.other
            && self.code.as_deref() == call.code
    }

    /// What the call is about, in words: `lost coin:1`, `coin-in coin:0 / fish:0`,
    /// `violation 3`.
    pub fn what(&self) -> String {
        match (self.item, self.other, &self.code) {
            (_, _, Some(code)) => format!("violation {code}"),
            (Some(i), Some(o), None) => format!("{} {i} / {o}", self.call.as_str()),
            (Some(i), None, None) => format!("{} {i}", self.call.as_str()),
            (None, _, None) => self.call.as_str().to_string(),
        }
    }
}

/// One crop: a PNG in the evidence folder. Pixel `(i, j)`'s centre shows the table
/// point `(cx + (i + 0.5 - width/2) * mm_per_px, cy - (j + 0.5 - height/2) * mm_per_px)`
/// for `center_mm = [cx, cy]`: +x right, +y up, as the diagrams.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crop {
    pub frame: FrameIdx,
    /// File name in the evidence folder.
    pub file: String,
    pub center_mm: [f64; 2],
    pub mm_per_px: f64,
    pub width: u32,
    pub height: u32,
}

impl Crop {
    /// The crop pixel (continuous, x right, y down) showing table point `p`.
    pub fn px_from_table(&self, p: Point) -> Px {
        (
            (p.x - self.center_mm[0]) / self.mm_per_px + self.width as f64 / 2.0,
            (self.center_mm[1] - p.y) / self.mm_per_px + self.height as f64 / 2.0,
        )
    }

    /// The table point at crop pixel position `(x, y)` (continuous).
    pub fn table_from_px(&self, (x, y): Px) -> Point {
        Point::new(
            self.center_mm[0] + (x - self.width as f64 / 2.0) * self.mm_per_px,
            self.center_mm[1] - (y - self.height as f64 / 2.0) * self.mm_per_px,
        )
    }
}

/// What a crop draws over the picture, in table mm.
#[derive(Debug, Clone, PartialEq)]
enum Mark {
    /// An item's outline: solid where it was seen in this frame, dashed where this is
    /// only its last known pose.
    Item {
        item: ItemId,
        pose: Pose,
        seen: bool,
    },
    /// Where an item went from the flick to this frame.
    /// `whole`: the crop shows all of it (a mover call's flick); else only its end
    /// near the item, clipped.
    Path {
        item: ItemId,
        pts: Vec<Point>,
        whole: bool,
    },
    /// Where a lost item crossed the edge, and the line it was extrapolated along.
    Exit { at: Point, from: Option<Point> },
    /// A fish's hole and, dashed, how far from its centre a coin still counts as in.
    Hole {
        center: Point,
        radius: f64,
        reach: Option<f64>,
    },
    /// Where the rules put a lost item back.
    Target { item: ItemId, pose: Pose },
    /// Another item that lies in the crop at this frame: drawn thin, for context.
    Beside { item: ItemId, pose: Pose },
}

/// A crop planned: which call, which frame, what it shows.
#[derive(Debug, Clone)]
struct Planned {
    call: usize,
    frame: FrameIdx,
    crop: Crop,
    marks: Vec<Mark>,
    header: String,
}

/// Every crop the record's calls ask for, and the index they will make.
#[derive(Debug, Clone)]
pub struct EvidencePlan {
    index: EvidenceIndex,
    crops: Vec<Planned>,
}

impl EvidencePlan {
    /// Plans the crops of every call of `scene`'s record (the index's `video` is `video`).
    pub fn new(scene: &Scene, video: &str) -> EvidencePlan {
        let below = scene.game.review_below();
        let mut index = EvidenceIndex {
            version: INDEX_VERSION,
            video: video.to_string(),
            review_below: below,
            calls: Vec::new(),
        };
        let mut crops = Vec::new();
        let mut names = BTreeSet::new();
        for shot in &scene.record.shots {
            for call in shot.calls() {
                let n = index.calls.len();
                let flagged = call.evidence.confidence < below && !shot.amended(&call);
                for frame in crop_frames(shot, &call) {
                    let marks = marks(scene, shot, &call, frame);
                    let file = unique_name(&mut names, file_name(shot.index, &call, frame));
                    let crop = frame_crop(scene, &marks, frame, file);
                    let mut marks = marks;
                    marks.extend(beside(shot, &marks, &crop, frame));
                    crops.push(Planned {
                        call: n,
                        frame,
                        crop,
                        marks,
                        header: header(shot.index, &call),
                    });
                }
                index.calls.push(CallCrops {
                    shot: shot.index,
                    call: call.call,
                    item: call.item,
                    other: call.other,
                    code: call.code.map(str::to_string),
                    confidence: call.evidence.confidence,
                    flagged,
                    why: call.evidence.why.clone(),
                    crops: Vec::new(),
                    unread: Vec::new(),
                });
            }
        }
        EvidencePlan { index, crops }
    }

    /// How many crops the plan holds.
    pub fn len(&self) -> usize {
        self.crops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.crops.is_empty()
    }
}

/// The crops written: the index, and the PNGs of the flagged calls (for a report to
/// embed).
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub index: Option<EvidenceIndex>,
    /// File name → PNG bytes, for the crops of flagged calls.
    pub flagged_png: BTreeMap<String, Vec<u8>>,
}

/// Writes every planned crop into `dir` (created if missing) and `dir/index.json`,
/// reading the frames from `frames` in increasing order; `progress(done, total)`
/// after each frame.
pub fn write_crops(
    scene: &Scene,
    calibration: &TableCalibration,
    plan: EvidencePlan,
    frames: &mut dyn FrameImages,
    dir: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written, EvidenceError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| EvidenceError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let EvidencePlan { mut index, crops } = plan;
    let mut by_frame: BTreeMap<FrameIdx, Vec<Planned>> = BTreeMap::new();
    for c in crops {
        by_frame.entry(c.frame).or_default().push(c);
    }
    let total = by_frame.values().map(Vec::len).sum::<usize>() as u64;
    let mut done = 0;
    let mut flagged_png = BTreeMap::new();
    let [cal_w, cal_h] = calibration.camera.image_size;
    for (frame, planned) in by_frame {
        let image = frames.frame(frame)?;
        if let Some(img) = &image {
            if img.width() != cal_w || img.height() != cal_h {
                return Err(EvidenceError::FrameSize {
                    frame,
                    width: img.width(),
                    height: img.height(),
                    cal_w,
                    cal_h,
                });
            }
        }
        for p in planned {
            done += 1;
            let entry = &mut index.calls[p.call];
            let Some(img) = &image else {
                entry.unread.push(frame);
                continue;
            };
            let crop = render_crop(scene, calibration, img, &p);
            let png = super::diagram::png_bytes(&crop)?;
            let path = dir.join(&p.crop.file);
            std::fs::write(&path, &png).map_err(io(&path))?;
            if entry.flagged {
                flagged_png.insert(p.crop.file.clone(), png);
            }
            entry.crops.push(p.crop);
        }
        progress(done, total);
    }
    for c in &mut index.calls {
        c.crops.sort_by_key(|k| k.frame);
    }
    let path = dir.join(INDEX_FILE);
    let text = serde_json::to_string_pretty(&index)?;
    std::fs::write(&path, text + "\n").map_err(io(&path))?;
    Ok(Written {
        index: Some(index),
        flagged_png,
    })
}

/// The frames to crop for a call: its deciding frames (the first ones and the last,
/// at most [`MAX_CROPS_PER_CALL`]); a call naming none is shown at the frame it is
/// about (a violation's) or the shot's rest.
fn crop_frames(shot: &Shot, call: &Flagged<'_>) -> Vec<FrameIdx> {
    let mut frames = call.evidence.frames.clone();
    frames.sort_unstable();
    frames.dedup();
    if frames.len() > MAX_CROPS_PER_CALL {
        let last = frames[frames.len() - 1];
        frames.truncate(MAX_CROPS_PER_CALL - 1);
        frames.push(last);
    }
    if frames.is_empty() {
        let at = call
            .code
            .and_then(|code| shot.violations.iter().find(|v| v.code == code))
            .map_or(shot.rest_frame, |v| v.frame);
        frames.push(at);
    }
    frames
}

/// `shot03-lost-coin1-f0412.png`: shot, call, item(s) or violation code, frame.
fn file_name(shot: usize, call: &Flagged<'_>, frame: FrameIdx) -> String {
    let id = |i: ItemId| i.to_string().replace(':', "");
    let mut name = format!("shot{shot:02}-{}", call.call.as_str());
    if let Some(code) = call.code {
        // A code comes from the record: only letters, digits and dots reach a file name.
        let safe: String = code
            .chars()
            .take(16)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        name.push('-');
        name.push_str(&safe);
    }
    for i in call.item.iter().chain(call.other.iter()) {
        name.push('-');
        name.push_str(&id(*i));
    }
    format!("{name}-f{frame:04}")
}

/// `name.png`, or `name-2.png`, … when taken (two violations of one code in a shot).
fn unique_name(taken: &mut BTreeSet<String>, name: String) -> String {
    let mut k = 1;
    loop {
        let file = if k == 1 {
            format!("{name}.png")
        } else {
            format!("{name}-{k}.png")
        };
        if taken.insert(file.clone()) {
            return file;
        }
        k += 1;
    }
}

/// The crop's first line: `S2 LOST C1 0.64`.
fn header(shot: usize, call: &Flagged<'_>) -> String {
    let mut h = format!("S{shot} {}", call.call.as_str());
    if let Some(code) = call.code {
        h.push(' ');
        h.push_str(code);
    }
    for i in call.item.iter().chain(call.other.iter()) {
        h.push(' ');
        h.push_str(&super::short_label(*i));
    }
    format!("{h} {:.2}", call.evidence.confidence).to_uppercase()
}

/// Where `item` is at `frame` of `shot` and whether it was seen there: at rest its
/// rest pose, in the flick its last sighting at or before the frame (for a lost item
/// past its crossing, the last place it was seen), before the flick its start.
fn item_at(shot: &Shot, item: ItemId, frame: FrameIdx) -> Option<(Pose, bool)> {
    if frame >= shot.rest_frame {
        if let Some(p) = shot.end.get(&item) {
            return Some((*p, true));
        }
    }
    if let Some(rows) = shot.tracks.get(&item) {
        if let Some(row) = timeline::track_at(rows, frame) {
            if let Some(p) = timeline::row_pose(item, row) {
                return Some((p, timeline::row_frame(row) == frame));
            }
        }
    }
    if let Some(p) = shot.start.get(&item) {
        return Some((*p, frame <= shot.flick_frame));
    }
    shot.end.get(&item).map(|p| (*p, false))
}

/// The item's sightings from the flick to `frame`.
fn path_to(shot: &Shot, item: ItemId, frame: FrameIdx) -> Vec<Point> {
    let mut pts: Vec<Point> = shot
        .start
        .get(&item)
        .map(|p| p.point())
        .into_iter()
        .collect();
    if let Some(rows) = shot.tracks.get(&item) {
        pts.extend(
            rows.iter()
                .filter(|r| timeline::row_frame(r) <= frame)
                .filter_map(|r| timeline::row_pose(item, r))
                .map(|p| p.point()),
        );
    }
    pts
}

/// What a crop of `call` at `frame` draws, and so what it must show.
fn marks(scene: &Scene, shot: &Shot, call: &Flagged<'_>, frame: FrameIdx) -> Vec<Mark> {
    let mut out = Vec::new();
    let item_mark = |item: ItemId| {
        item_at(shot, item, frame).map(|(pose, seen)| Mark::Item { item, pose, seen })
    };
    let path = |item: ItemId| {
        let pts = path_to(shot, item, frame);
        let whole = matches!(call.call, Call::FirstMoved | Call::Violation);
        (pts.len() > 1).then_some(Mark::Path { item, pts, whole })
    };
    // The item whose motion a mover call or a violation is about.
    let mover_item = || {
        shot.first_moved
            .or_else(|| Some(ItemId::fish(shot.player)))
            .filter(|i| item_at(shot, *i, frame).is_some())
    };
    let focus = match call.call {
        Call::FirstMoved => call.item.or_else(mover_item),
        Call::Violation => mover_item(),
        _ => call.item,
    };
    let Some(item) = focus else {
        return out;
    };
    if matches!(call.call, Call::FirstMoved | Call::Violation) {
        // Who moved first is told against the others: each item that set off by
        // the last deciding frame (and a few after: the next item's start is told
        // by its motion) is shown, with its path to this frame.
        let last = call.evidence.frames.iter().max().copied().unwrap_or(frame);
        for other in shot.tracks.keys().filter(|o| **o != item) {
            let pts = path_to(shot, *other, last + SET_OFF_FRAMES);
            let moved = pts
                .first()
                .zip(pts.last())
                .is_some_and(|(a, b)| (b - a).norm() > MOVED_MM);
            if moved {
                out.extend(path(*other));
                out.extend(item_mark(*other));
            }
        }
    }
    let lost = shot.lost.iter().find(|l| l.item == item);
    match call.call {
        Call::CoinIn | Call::CoinOut => {
            if let Some(fish) = call.other {
                if let Some((pose, seen)) = item_at(shot, fish, frame) {
                    out.push(Mark::Item {
                        item: fish,
                        pose,
                        seen,
                    });
                    out.push(Mark::Hole {
                        center: pose.point(),
                        radius: scene.footprint.hole_radius(),
                        reach: call.evidence.measured.get("hole_reach_mm").copied(),
                    });
                }
            }
        }
        Call::Stacking => out.extend(call.other.and_then(item_mark)),
        _ => out.extend(path(item)),
    }
    out.extend(item_mark(item));
    if matches!(
        call.call,
        Call::Lost | Call::LostUnseen | Call::Exit | Call::PutBack
    ) {
        if let Some(l) = lost {
            let last_seen = item_at(shot, item, frame).map(|(p, _)| p.point());
            out.push(Mark::Exit {
                at: l.exit.point(),
                from: last_seen.filter(|_| call.call == Call::Exit),
            });
        }
    }
    if call.call == Call::PutBack {
        if let Some(pose) = shot
            .put_back
            .iter()
            .find(|p| Some(p.item) == call.item)
            .and_then(|p| p.pose)
        {
            out.push(Mark::Target { item, pose });
        }
    }
    out
}

/// The items the crop shows at `frame` that its marks do not name.
fn beside(shot: &Shot, marks: &[Mark], crop: &Crop, frame: FrameIdx) -> Vec<Mark> {
    let named: BTreeSet<ItemId> = marks
        .iter()
        .filter_map(|m| match m {
            Mark::Item { item, .. } => Some(*item),
            _ => None,
        })
        .collect();
    let all: BTreeSet<ItemId> = shot
        .start
        .keys()
        .chain(shot.end.keys())
        .chain(shot.tracks.keys())
        .copied()
        .collect();
    all.into_iter()
        .filter(|i| !named.contains(i))
        .filter_map(|item| {
            let (pose, _) = item_at(shot, item, frame)?;
            let (x, y) = crop.px_from_table(pose.point());
            let inside =
                (0.0..crop.width as f64).contains(&x) && (0.0..crop.height as f64).contains(&y);
            inside.then_some(Mark::Beside { item, pose })
        })
        .collect()
}

/// The table box (min, max) a mark must show.
fn mark_bounds(scene: &Scene, m: &Mark) -> Vec<Point> {
    let disc = |c: Point, r: f64| vec![Point::new(c.x - r, c.y - r), Point::new(c.x + r, c.y + r)];
    let item = |item: ItemId, pose: &Pose| {
        if item.is_fish() {
            scene.footprint.placed(pose).outline
        } else {
            disc(pose.point(), scene.game.items.coin.radius)
        }
    };
    match m {
        Mark::Item { item: i, pose, .. }
        | Mark::Target { item: i, pose }
        | Mark::Beside { item: i, pose } => item(*i, pose),
        Mark::Path { pts, whole, .. } => {
            if *whole {
                pts.clone()
            } else {
                Vec::new()
            }
        }
        Mark::Exit { at, from } => {
            let mut v = disc(*at, 8.0);
            v.extend(from.iter().copied());
            v
        }
        Mark::Hole {
            center,
            radius,
            reach,
        } => disc(*center, radius.max(reach.unwrap_or(0.0)) + 6.0),
    }
}

/// The crop showing every mark: their box padded, at least [`CROP_MIN_MM`] across,
/// at the finest scale that keeps it within [`CROP_MAX_SIDE_PX`].
fn frame_crop(scene: &Scene, marks: &[Mark], frame: FrameIdx, file: String) -> Crop {
    let pts: Vec<Point> = marks.iter().flat_map(|m| mark_bounds(scene, m)).collect();
    let (lo, hi) = if pts.is_empty() {
        scene.table.bounds()
    } else {
        let mut lo = Point::new(f64::INFINITY, f64::INFINITY);
        let mut hi = Point::new(f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in &pts {
            lo = Point::new(lo.x.min(p.x), lo.y.min(p.y));
            hi = Point::new(hi.x.max(p.x), hi.y.max(p.y));
        }
        (lo, hi)
    };
    let centre = Point::new((lo.x + hi.x) / 2.0, (lo.y + hi.y) / 2.0);
    let w_mm = (hi.x - lo.x + 2.0 * CROP_PAD_MM).max(CROP_MIN_MM);
    let h_mm = (hi.y - lo.y + 2.0 * CROP_PAD_MM).max(CROP_MIN_MM);
    // No sliver for a long straight path: the side across it shows what lies beside.
    let (w_mm, h_mm) = (
        w_mm.max(CROP_MIN_ASPECT * h_mm),
        h_mm.max(CROP_MIN_ASPECT * w_mm),
    );
    let px_per_mm = CROP_MAX_PX_PER_MM.min(CROP_MAX_SIDE_PX as f64 / w_mm.max(h_mm));
    let side = |mm: f64| ((mm * px_per_mm).round() as u32).clamp(16, CROP_MAX_SIDE_PX);
    Crop {
        frame,
        file,
        center_mm: [centre.x, centre.y],
        mm_per_px: 1.0 / px_per_mm,
        width: side(w_mm),
        height: side(h_mm),
    }
}

/// The frame's pixel at `(u, v)` (OpenCV convention: integers at pixel centres),
/// read bilinearly; `None` outside the picture.
fn bilinear(img: &RgbImage, u: f64, v: f64) -> Option<Color> {
    let (w, h) = (img.width() as f64, img.height() as f64);
    if !(u.is_finite() && v.is_finite()) || u < -0.5 || v < -0.5 || u > w - 0.5 || v > h - 0.5 {
        return None;
    }
    let u = u.clamp(0.0, w - 1.0);
    let v = v.clamp(0.0, h - 1.0);
    let (x0, y0) = (u.floor(), v.floor());
    let (fx, fy) = (u - x0, v - y0);
    let (x0, y0) = (x0 as u32, y0 as u32);
    let (x1, y1) = (
        (x0 + 1).min(img.width() - 1),
        (y0 + 1).min(img.height() - 1),
    );
    let p = |x, y| img.get_pixel(x, y).0;
    let (a, b, c, d) = (p(x0, y0), p(x1, y0), p(x0, y1), p(x1, y1));
    let mut out = [0u8; 3];
    for k in 0..3 {
        let top = a[k] as f64 * (1.0 - fx) + b[k] as f64 * fx;
        let bottom = c[k] as f64 * (1.0 - fx) + d[k] as f64 * fx;
        out[k] = (top * (1.0 - fy) + bottom * fy).round().clamp(0.0, 255.0) as u8;
    }
    Some(out)
}

/// The top view of `frame` over `crop`: each crop pixel's table point read from the
/// camera frame through the calibration (the rectifier's own map).
pub fn cut_top_view(frame: &RgbImage, calibration: &TableCalibration, crop: &Crop) -> RgbImage {
    RgbImage::from_fn(crop.width, crop.height, |i, j| {
        let p = crop.table_from_px((i as f64 + 0.5, j as f64 + 0.5));
        let px = calibration.pixel_from_table(p);
        Rgb(bilinear(frame, px.x, px.y).unwrap_or(OUTSIDE_RGB))
    })
}

/// Strokes `pts` with a white halo under it, so the line reads on wood, tag or floor.
fn halo_stroke(img: &mut RgbImage, pts: &[Px], width: f64, c: Color, closed: bool, dashed: bool) {
    draw::stroke(img, pts, width + 2.0, HALO_RGB, 0.6, closed);
    if dashed {
        draw::stroke_dashed(img, pts, width, (6.0, 4.0), c, 1.0, closed);
    } else {
        draw::stroke(img, pts, width, c, 1.0, closed);
    }
}

/// A circle as a closed polyline of crop pixels.
fn circle(crop: &Crop, c: Point, r: f64) -> Vec<Px> {
    (0..48)
        .map(|k| {
            let a = k as f64 / 48.0 * std::f64::consts::TAU;
            crop.px_from_table(Point::new(c.x + r * a.cos(), c.y + r * a.sin()))
        })
        .collect()
}

fn draw_item(
    img: &mut RgbImage,
    scene: &Scene,
    crop: &Crop,
    item: ItemId,
    pose: &Pose,
    c: Color,
    dashed: bool,
) {
    if item.is_fish() {
        let placed = scene.footprint.placed(pose);
        let outline: Vec<Px> = placed
            .outline
            .iter()
            .map(|p| crop.px_from_table(*p))
            .collect();
        halo_stroke(img, &outline, 2.0, c, true, dashed);
        let hole = circle(crop, placed.hole.center, placed.hole.radius);
        draw::stroke(img, &hole, 1.0, c, 0.9, true);
    } else {
        let ring = circle(crop, pose.point(), scene.game.items.coin.radius);
        halo_stroke(img, &ring, 2.0, c, true, dashed);
    }
}

/// The longest round length (mm) whose bar takes at most a third of `width_px`.
fn scale_bar_mm(px_per_mm: f64, width_px: u32) -> f64 {
    let room = width_px as f64 / 3.0;
    [200.0, 100.0, 50.0, 20.0, 10.0, 5.0]
        .into_iter()
        .find(|mm| mm * px_per_mm <= room)
        .unwrap_or(5.0)
}

/// Text on a dark box, at font scale 2 when it fits the crop, else 1.
fn caption(img: &mut RgbImage, x: i64, y: i64, text: &str, right_aligned: bool) -> (u32, u32) {
    let scale = if font::text_size(text, 2).0 + 8 <= img.width() {
        2
    } else {
        1
    };
    let (w, h) = font::text_size(text, scale);
    let x = if right_aligned { x - w as i64 } else { x };
    font::draw_label(img, x, y, text, scale, [255, 255, 255], [20, 20, 20]);
    (w, h)
}

/// A crop of one frame with its marks, header, scale bar and frame number drawn on.
fn render_crop(
    scene: &Scene,
    calibration: &TableCalibration,
    frame: &RgbImage,
    p: &Planned,
) -> RgbImage {
    let crop = &p.crop;
    let mut img = cut_top_view(frame, calibration, crop);
    let corners: Vec<Px> = scene
        .table
        .corners()
        .iter()
        .map(|c| crop.px_from_table(*c))
        .collect();
    draw::stroke(&mut img, &corners, 2.0, EDGE_RGB, 0.9, true);
    for m in &p.marks {
        match m {
            Mark::Path { item, pts, .. } => {
                let px: Vec<Px> = pts.iter().map(|q| crop.px_from_table(*q)).collect();
                halo_stroke(&mut img, &px, 1.5, scene.item_rgb(*item), false, false);
                for q in &px {
                    draw::disc(&mut img, *q, 1.8, scene.item_rgb(*item), 1.0);
                }
            }
            Mark::Hole { center, reach, .. } => {
                // The hole's rim is drawn with its fish; a coin's centre counts as in
                // within `reach` of the hole's centre.
                if let Some(r) = reach {
                    let reach_ring = circle(crop, *center, *r);
                    halo_stroke(&mut img, &reach_ring, 1.0, REACH_RGB, true, true);
                }
                draw::cross(&mut img, crop.px_from_table(*center), 4.0, 1.0, HALO_RGB);
            }
            Mark::Target { item, pose } => draw_item(
                &mut img,
                scene,
                crop,
                *item,
                pose,
                diagram::POSSIBLE_RGB,
                true,
            ),
            Mark::Beside { item, pose } => {
                let c = draw::mix(scene.item_rgb(*item), HALO_RGB, 0.3);
                draw_item(&mut img, scene, crop, *item, pose, c, true)
            }
            Mark::Item { .. } | Mark::Exit { .. } => {}
        }
    }
    for m in &p.marks {
        if let Mark::Item { item, pose, seen } = m {
            draw_item(
                &mut img,
                scene,
                crop,
                *item,
                pose,
                scene.item_rgb(*item),
                !seen,
            );
        }
    }
    // Each item named beside it (a coin in its own fish's hole is hard to tell apart).
    for m in &p.marks {
        if let Mark::Item { item, pose, .. } | Mark::Beside { item, pose } = m {
            let r = if item.is_fish() {
                scene.footprint.hole_radius()
            } else {
                scene.game.items.coin.radius
            } / crop.mm_per_px;
            let (x, y) = crop.px_from_table(pose.point());
            let text = super::short_label(*item);
            let (tw, th) = font::text_size(&text, 1);
            // Fish above right, coins below left: a coin in a hole keeps its own label.
            let (lx, ly) = if item.is_fish() {
                (x + r + 3.0, y - r - 3.0 - th as f64)
            } else {
                (x - r - 3.0 - tw as f64, y + r + 3.0)
            };
            let lx = lx.min(crop.width as f64 - tw as f64 - 2.0).max(2.0);
            let ly = ly.min(crop.height as f64 - th as f64 - 2.0).max(2.0);
            font::draw_label(
                &mut img,
                lx as i64,
                ly as i64,
                &text,
                1,
                scene.item_rgb(*item),
                HALO_RGB,
            );
        }
    }
    for m in &p.marks {
        if let Mark::Exit { at, from } = m {
            let at_px = crop.px_from_table(*at);
            if let Some(f) = from {
                let line = [crop.px_from_table(*f), at_px];
                halo_stroke(&mut img, &line, 1.5, diagram::LOST_RGB, false, true);
            }
            draw::cross(&mut img, at_px, 7.0, 4.0, HALO_RGB);
            draw::cross(&mut img, at_px, 6.0, 2.0, diagram::LOST_RGB);
        }
    }
    // The header names the call; the foot gives the scale and the frame.
    caption(&mut img, 3, 3, &p.header, false);
    let px_per_mm = 1.0 / crop.mm_per_px;
    let bar_mm = scale_bar_mm(px_per_mm, crop.width);
    let bar_px = bar_mm * px_per_mm;
    let foot = crop.height as f64 - 6.0;
    let bar = [(6.0, foot), (6.0 + bar_px, foot)];
    draw::stroke(&mut img, &bar, 5.0, [20, 20, 20], 0.85, false);
    draw::stroke(&mut img, &bar, 2.0, HALO_RGB, 1.0, false);
    let label = format!("{bar_mm:.0} MM");
    let (_, th) = font::text_size(&label, 1);
    font::draw_label(
        &mut img,
        6,
        (foot - 6.0) as i64 - th as i64,
        &label,
        1,
        [255, 255, 255],
        [20, 20, 20],
    );
    let fr = format!("FRAME {}", p.frame);
    let (_, fh) = font::text_size(&fr, 1);
    caption(
        &mut img,
        crop.width as i64 - 4,
        crop.height as i64 - 4 - fh as i64 * if crop.width >= 200 { 2 } else { 1 },
        &fr,
        true,
    );
    img
}

/// Frames read from a video file through `vision::capture`, each only when asked
/// for (skipped up to it, not decoded).
#[cfg(feature = "opencv")]
pub struct VideoFrames {
    source: crate::vision::capture::FrameSource,
}

#[cfg(feature = "opencv")]
impl VideoFrames {
    pub fn open(video: &str) -> Result<VideoFrames, EvidenceError> {
        let source = crate::vision::capture::FrameSource::open(video)
            .map_err(|e| EvidenceError::Frame(e.to_string()))?;
        Ok(VideoFrames { source })
    }
}

#[cfg(feature = "opencv")]
impl FrameImages for VideoFrames {
    fn frame(&mut self, index: FrameIdx) -> Result<Option<RgbImage>, EvidenceError> {
        let err = |e: crate::vision::capture::CaptureError| EvidenceError::Frame(e.to_string());
        match self.source.frame_at(index).map_err(err)? {
            // A damaged frame is skipped by the reader: the next one is not this one.
            Some(f) if f.index == index => Ok(Some(f.to_rgb().map_err(err)?)),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Decision, Evidence, Record, Violation};

    fn repo(p: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
    }

    /// The replay fixture with calls: shot 0's coin:1 lost (seen at frames 6 to 8),
    /// one call with ten frames, and shot 1 with two violations of one code and no
    /// frames.
    fn scene() -> Scene {
        let mut rec = Record::load(&repo("tests/data/replay/record.json")).expect("fixture");
        let s0 = &mut rec.shots[0];
        s0.decisions.push(Decision {
            call: Call::Lost,
            item: ItemId::coin(1),
            other: None,
            evidence: Evidence::new(0.5, "coin:1 left").at([8, 6]),
        });
        s0.decisions.push(Decision {
            call: Call::FirstMoved,
            item: ItemId::fish(0),
            other: None,
            evidence: Evidence::new(0.9, "fish:0 first").at(3..13),
        });
        let s1 = &mut rec.shots[1];
        let v = s1.violations[0].clone();
        s1.violations.push(Violation { ..v });
        for v in &mut s1.violations {
            v.decision = Some(Evidence::new(0.95, "late"));
        }
        Scene::new(rec, None, None).expect("valid fixture")
    }

    #[test]
    fn every_call_gets_its_frames_each_file_named_once() {
        let plan = EvidencePlan::new(&scene(), "match.avi");
        let files: Vec<&str> = plan.crops.iter().map(|c| c.crop.file.as_str()).collect();
        let unique: BTreeSet<&str> = files.iter().copied().collect();
        assert_eq!(unique.len(), files.len(), "{files:?}");
        let frames_of = |call: usize| -> Vec<FrameIdx> {
            plan.crops
                .iter()
                .filter(|c| c.call == call)
                .map(|c| c.frame)
                .collect()
        };
        let calls = &plan.index.calls;
        assert_eq!(calls.len(), 4);
        assert_eq!(calls[0].call, Call::Lost);
        assert!(calls[0].flagged && !calls[1].flagged);
        assert_eq!(frames_of(0), vec![6, 8]);
        assert!(files.contains(&"shot00-lost-coin1-f0006.png"), "{files:?}");
        // Ten deciding frames: the first five and the last.
        assert_eq!(frames_of(1), vec![3, 4, 5, 6, 7, 12]);
        // Violations name no frame: their own frame; the second of one code gets `-2`.
        assert_eq!(frames_of(2), vec![12]);
        assert!(files.contains(&"shot01-violation-5-f0012.png"), "{files:?}");
        assert!(
            files.contains(&"shot01-violation-5-f0012-2.png"),
            "{files:?}"
        );
    }

    #[test]
    fn a_crop_shows_the_item_where_the_calibration_puts_it() {
        let scene = scene();
        let calib = TableCalibration::load(&repo("calibration/table.json")).expect("bundled");
        // Frames painted green on a 10 mm disc at coin:1's sighting in frame 7,
        // blue elsewhere; frame 8 cannot be read.
        struct Painted<'a> {
            calib: &'a TableCalibration,
            at: Point,
        }
        impl FrameImages for Painted<'_> {
            fn frame(&mut self, index: FrameIdx) -> Result<Option<RgbImage>, EvidenceError> {
                if index == 8 {
                    return Ok(None);
                }
                let [w, h] = self.calib.camera.image_size;
                let mut img = RgbImage::from_pixel(w, h, Rgb([0, 0, 255]));
                let c = self.calib.pixel_from_table(self.at);
                for y in (c.y as i64 - 30).max(0)..(c.y as i64 + 30).min(h as i64) {
                    for x in (c.x as i64 - 30).max(0)..(c.x as i64 + 30).min(w as i64) {
                        let p = self
                            .calib
                            .table_from_pixel(nalgebra::Point2::new(x as f64, y as f64));
                        if (p - self.at).norm() < 10.0 {
                            img.put_pixel(x as u32, y as u32, Rgb([0, 255, 0]));
                        }
                    }
                }
                Ok(Some(img))
            }
        }
        let at = Point::new(795.0, 457.5);
        let dir = tempfile::tempdir().unwrap();
        let mut rec = scene.record.clone();
        rec.shots[0].decisions[0].evidence.frames = vec![7, 8];
        let scene = Scene::new(rec, None, None).unwrap();
        let plan = EvidencePlan::new(&scene, "match.avi");
        let mut frames = Painted { calib: &calib, at };
        let written = write_crops(
            &scene,
            &calib,
            plan,
            &mut frames,
            dir.path(),
            &mut |_, _| {},
        )
        .expect("written");
        let index = written.index.expect("an index");
        let lost = &index.calls[0];
        assert_eq!(lost.unread, vec![8]);
        let crop = &lost.crops[0];
        assert_eq!(crop.frame, 7);
        assert!(written.flagged_png.contains_key(&crop.file));
        let img = image::open(dir.path().join(&crop.file)).unwrap().to_rgb8();
        let green = |p: Point| {
            let (x, y) = crop.px_from_table(p);
            img.get_pixel(x as u32, y as u32).0 == [0, 255, 0]
        };
        // 4 mm from the disc's centre: green (the outline drawn is at the coin's rim,
        // 7.5 mm); 20 mm away: not.
        assert!(green(Point::new(at.x + 4.0, at.y)));
        assert!(green(Point::new(at.x, at.y - 4.0)));
        assert!(!green(Point::new(at.x + 20.0, at.y)));
        assert!(!green(Point::new(at.x, at.y + 20.0)));
        let read: EvidenceIndex =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(INDEX_FILE)).unwrap())
                .unwrap();
        assert_eq!(read, index);
    }
}
