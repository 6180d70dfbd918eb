//! The replay's annotated video (OpenCV): over the original frames, each item's
//! outline and id in its player's colour, fading trajectories, lost items marked
//! where they crossed the edge, coins in holes, the legal put-back poses, the
//! running score, the shot number and mover. Table mm go to pixels through
//! `calibration::TableCalibration::pixel_from_table`; what to draw at each frame
//! comes from `replay::timeline` (pure), so this file only draws and does video I/O.
//! Output: MJPG `.avi`, the input's frame size and rate; without `--slow` and
//! `--shot`, the input's frame count. Frames are JPEG-encoded here (libjpeg-turbo
//! through `imgcodecs`) and stored by `replay::avi`; see `annotate_video` for the
//! pipeline. Labels (item ids, put-backs, lost items) are placed by
//! `replay::labels` among a few positions around what each names, so that no two
//! overlap, none leaves the frame and none covers the banner; [`Annotator::labels_at`]
//! gives the boxes for tests. Uses: calibration, record, replay, opencv.

use crate::calibration::TableCalibration;
use crate::geometry::Point;
use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::VideoInfo;
use crate::replay::avi::{AviError, MjpegAviWriter};
use crate::replay::labels::{place_labels, LabelBox, LabelItem};
use crate::replay::timeline::{row_frame, row_pose, Phase};
use crate::replay::{FrameState, Scene};
use opencv::core::{Mat, Point as CvPoint, Rect, Scalar, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, videoio};
use std::path::{Path, PathBuf};

/// Why a video could not be annotated.
#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    #[error("cannot open video {0}")]
    Open(PathBuf),
    #[error("cannot write video {path}: {source}")]
    Io { path: PathBuf, source: AviError },
    #[error("{0}")]
    Mismatch(String),
    #[error("cannot decode frame {frame} of {path}")]
    Decode { path: PathBuf, frame: FrameIdx },
    #[error("{path} ended after {read} frames, expected {expected}")]
    Ended {
        path: PathBuf,
        read: u64,
        expected: u64,
    },
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error(transparent)]
    Replay(#[from] crate::replay::ReplayError),
}

/// What a video file holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoProbe {
    /// Frames stored in the file, counted (see [`probe_video`]).
    pub frames: u64,
    /// The frame count the container states (0 if none), which `frames` overrides.
    pub frames_claimed: u64,
    pub width: u32,
    pub height: u32,
    pub fps: f64,
}

/// Opens a video and reads its size and rate from the container, and counts its
/// frames. The container's own count (`CAP_PROP_FRAME_COUNT`) is a claim: a header
/// written when recording began, or an estimate from the duration for containers
/// without one, and wrong for a file cut short. So the frames are counted by reading
/// the stored packets without decoding them (FFmpeg's raw mode: about 40 ms for 45 MB
/// of 1280x720 MJPG), one packet per frame; where raw mode is not available they
/// are decoded and counted, which is exact but slow.
pub fn probe_video(path: &Path) -> Result<VideoProbe, AnnotateError> {
    let mut cap = open(path)?;
    let claimed = cap.get(videoio::CAP_PROP_FRAME_COUNT)?;
    let mut probe = VideoProbe {
        frames: 0,
        frames_claimed: if claimed.is_finite() && claimed >= 1.0 {
            claimed.round() as u64
        } else {
            0
        },
        width: cap.get(videoio::CAP_PROP_FRAME_WIDTH)?.max(0.0) as u32,
        height: cap.get(videoio::CAP_PROP_FRAME_HEIGHT)?.max(0.0) as u32,
        fps: cap.get(videoio::CAP_PROP_FPS)?,
    };
    // Raw mode must be set before the first read; if refused, `grab` decodes.
    let _ = cap.set(videoio::CAP_PROP_FORMAT, -1.0)?;
    while cap.grab()? {
        probe.frames += 1;
    }
    Ok(probe)
}

fn open(path: &Path) -> Result<videoio::VideoCapture, AnnotateError> {
    let name = path
        .to_str()
        .ok_or_else(|| AnnotateError::Open(path.to_path_buf()))?;
    let cap = videoio::VideoCapture::from_file(name, videoio::CAP_ANY)
        .map_err(|_| AnnotateError::Open(path.to_path_buf()))?;
    if !cap.is_opened()? {
        return Err(AnnotateError::Open(path.to_path_buf()));
    }
    Ok(cap)
}

/// Checks that a record was made from this video: same frame size, same frame
/// count (the frames [`probe_video`] counted, not the container's claim, so a cut
/// file whose header still states the full count is refused, and a good file whose
/// container estimates its count is not), and every shot inside it. A record
/// without video info (zeros) passes the size and count checks. A frame stored
/// but not decodable is only found while rendering ([`AnnotateError::Ended`]).
pub fn check_record_matches(
    record_video: &VideoInfo,
    scene: &Scene,
    video: &Path,
    probe: &VideoProbe,
) -> Result<(), AnnotateError> {
    let name = video.display();
    if record_video.width > 0
        && record_video.height > 0
        && (record_video.width, record_video.height) != (probe.width, probe.height)
    {
        return Err(AnnotateError::Mismatch(format!(
            "the record is of a {}x{} video but {name} is {}x{}",
            record_video.width, record_video.height, probe.width, probe.height
        )));
    }
    if record_video.frames > 0 && record_video.frames != probe.frames {
        let claim = if probe.frames_claimed > 0 && probe.frames_claimed != probe.frames {
            format!(" (its header says {})", probe.frames_claimed)
        } else {
            String::new()
        };
        return Err(AnnotateError::Mismatch(format!(
            "the record is of a video of {} frames but {name} has {}{claim}",
            record_video.frames, probe.frames
        )));
    }
    if let Some(s) = scene
        .record
        .shots
        .iter()
        .find(|s| s.rest_frame >= probe.frames)
    {
        return Err(AnnotateError::Mismatch(format!(
            "shot {} rests at frame {} but {name} has only {} frames",
            s.index, s.rest_frame, probe.frames
        )));
    }
    Ok(())
}

/// Checks that a table calibration was made for this frame size.
pub fn check_calibration_matches(
    calib: &TableCalibration,
    table_path: &Path,
    probe: &VideoProbe,
) -> Result<(), AnnotateError> {
    let [w, h] = calib.camera.image_size;
    if w > 0 && h > 0 && (w, h) != (probe.width, probe.height) {
        return Err(AnnotateError::Mismatch(format!(
            "{} is calibrated for {w}x{h} images but the video is {}x{}",
            table_path.display(),
            probe.width,
            probe.height
        )));
    }
    Ok(())
}

/// `--slow` and `--shot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnnotateOptions {
    /// Frames between a flick and its rest are written this many times (1 = real time).
    pub slow: u32,
    /// Only this shot (record `index`), with a second before and after.
    pub shot: Option<usize>,
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnnotateSummary {
    pub frames_written: u64,
    pub width: u32,
    pub height: u32,
    pub fps: f64,
}

/// Fixed-point sub-pixel drawing: OpenCV `shift` bits.
const SHIFT: i32 = 4;
const ONE: f64 = (1 << SHIFT) as f64;
/// Trajectories fade to grey over two seconds in this many steps.
const FADE_LEVELS: usize = 5;
/// Line height of the banner text (px).
const BANNER_LINE_PX: i32 = 22;
/// Width of the banner's backdrop (px).
const BANNER_WIDTH_PX: i32 = 360;
/// Font of every label and the banner.
const FONT: i32 = imgproc::FONT_HERSHEY_SIMPLEX;
/// Thickness of the dark outline under label text (px); also what a label measures.
const OUTLINE_PX: i32 = 3;
/// Room kept around a label's text inside its box (px).
const LABEL_PAD_PX: i32 = 2;

/// A label waiting for its place: its text and look, and the box of what it names.
struct Pending {
    text: String,
    scale: f64,
    color: [u8; 3],
    anchor: LabelBox,
}

/// A label in its place.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedLabel {
    pub text: String,
    /// The pixels the label covers (its text with the outline and a small pad).
    pub bbox: LabelBox,
    /// Where the text's baseline starts.
    origin: CvPoint,
    scale: f64,
    color: [u8; 3],
}

/// The labels of one frame: those placed, and how many found no room (left out
/// rather than drawn over another).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameLabels {
    pub placed: Vec<PlacedLabel>,
    pub left_out: usize,
}

fn bgr([r, g, b]: [u8; 3]) -> Scalar {
    Scalar::new(b as f64, g as f64, r as f64, 0.0)
}

fn mix(a: [u8; 3], b: [u8; 3], t: f64) -> [u8; 3] {
    crate::replay::draw::mix(a, b, t)
}

/// One item's track rows as (frame, sub-pixel point).
type PixelTrack = Vec<(FrameIdx, CvPoint)>;

/// Draws the record's view of each frame on top of it.
pub struct Annotator<'a> {
    scene: &'a Scene,
    calib: &'a TableCalibration,
    /// Per shot, per tracked item: (frame, sub-pixel point) of every track row.
    tracks_px: Vec<Vec<(ItemId, PixelTrack)>>,
    coin_radius_mm: f64,
}

impl<'a> Annotator<'a> {
    pub fn new(scene: &'a Scene, calib: &'a TableCalibration) -> Annotator<'a> {
        let mut a = Annotator {
            scene,
            calib,
            tracks_px: Vec::new(),
            coin_radius_mm: scene.game.items.coin.radius,
        };
        a.tracks_px = scene
            .record
            .shots
            .iter()
            .map(|shot| {
                shot.tracks
                    .iter()
                    .map(|(id, rows)| {
                        let pts = rows
                            .iter()
                            .filter_map(|r| {
                                row_pose(*id, r).map(|p| (row_frame(r), a.px(p.point())))
                            })
                            .collect();
                        (*id, pts)
                    })
                    .collect()
            })
            .collect();
        a
    }

    /// Table mm to a sub-pixel OpenCV point (scaled by 2^SHIFT).
    fn px(&self, p: Point) -> CvPoint {
        let q = self.calib.pixel_from_table(p);
        let clamp = |v: f64| (v * ONE).clamp(-1e8, 1e8).round() as i32;
        CvPoint::new(clamp(q.x), clamp(q.y))
    }

    fn px_plain(&self, p: Point) -> CvPoint {
        let q = self.px(p);
        CvPoint::new(q.x >> SHIFT, q.y >> SHIFT)
    }

    /// The projected radius (px) of a circle of `r_mm` at `c`.
    fn radius_px(&self, c: Point, r_mm: f64) -> i32 {
        let a = self.calib.pixel_from_table(c);
        let b = self.calib.pixel_from_table(Point::new(c.x + r_mm, c.y));
        let d = self.calib.pixel_from_table(Point::new(c.x, c.y + r_mm));
        ((((a - b).norm() + (a - d).norm()) / 2.0) * ONE).round() as i32
    }

    fn text(
        &self,
        img: &mut Mat,
        s: &str,
        at: CvPoint,
        scale: f64,
        c: [u8; 3],
    ) -> opencv::Result<()> {
        // Kept inside the frame: a label at an exit point must not be cut off.
        let mut base = 0;
        let size = imgproc::get_text_size(s, FONT, scale, OUTLINE_PX, &mut base)?;
        let x = at.x.min(img.cols() - size.width - 2).max(2);
        let y = at.y.min(img.rows() - base - 2).max(size.height + 2);
        let at = CvPoint::new(x, y);
        // A dark outline under the colour keeps labels legible on any background.
        imgproc::put_text(
            img,
            s,
            at,
            imgproc::FONT_HERSHEY_SIMPLEX,
            scale,
            Scalar::all(0.0),
            3,
            imgproc::LINE_AA,
            false,
        )?;
        imgproc::put_text(
            img,
            s,
            at,
            imgproc::FONT_HERSHEY_SIMPLEX,
            scale,
            bgr(c),
            1,
            imgproc::LINE_AA,
            false,
        )
    }

    fn item(
        &self,
        img: &mut Mat,
        id: ItemId,
        pose: &Pose,
        c: [u8; 3],
        thick: i32,
    ) -> opencv::Result<()> {
        if id.is_fish() {
            let placed = self.scene.footprint.placed(pose);
            let poly: Vector<CvPoint> = placed.outline.iter().map(|p| self.px(*p)).collect();
            let polys: Vector<Vector<CvPoint>> = Vector::from_iter([poly]);
            imgproc::polylines(img, &polys, true, bgr(c), thick, imgproc::LINE_AA, SHIFT)?;
            let r = self.radius_px(placed.hole.center, placed.hole.radius);
            imgproc::circle(
                img,
                self.px(placed.hole.center),
                r,
                bgr(c),
                1,
                imgproc::LINE_AA,
                SHIFT,
            )?;
        } else {
            let r = self.radius_px(pose.point(), self.coin_radius_mm);
            imgproc::circle(
                img,
                self.px(pose.point()),
                r,
                bgr(c),
                thick,
                imgproc::LINE_AA,
                SHIFT,
            )?;
        }
        Ok(())
    }

    /// One stretch of trajectory at one fade level: older is greyer and thinner.
    fn trail(
        &self,
        img: &mut Mat,
        pts: &Vector<CvPoint>,
        c: [u8; 3],
        level: usize,
    ) -> opencv::Result<()> {
        if pts.len() < 2 {
            return Ok(());
        }
        let t = level as f64 / FADE_LEVELS as f64;
        let col = mix(c, [128, 128, 128], t);
        let thick = if t < 0.25 {
            3
        } else if t < 0.6 {
            2
        } else {
            1
        };
        let polys: Vector<Vector<CvPoint>> = Vector::from_iter([pts.clone()]);
        imgproc::polylines(img, &polys, false, bgr(col), thick, imgproc::LINE_AA, SHIFT)
    }

    /// Draws frame `frame`'s annotations on `img`; `slow` > 1 is noted in the banner.
    pub fn draw(&self, img: &mut Mat, frame: FrameIdx, slow: u32) -> opencv::Result<()> {
        let scene = self.scene;
        let state = scene.state_at(frame);
        let fade_frames = 2.0 * scene.fps;
        self.banner_backdrop(img)?;

        // Trajectories of the current shot up to this frame, older parts fading to grey
        // and thinner, so direction and recency read at a glance.
        if let Some(pos) = state.shot {
            for (id, pts) in &self.tracks_px[pos] {
                let c = scene.item_rgb(*id);
                // Segments are grouped by fade level and drawn as one polyline each.
                let mut run: Vector<CvPoint> = Vector::new();
                let mut run_level = usize::MAX;
                for w in pts.windows(2) {
                    let (f1, p1) = w[1];
                    if f1 > frame {
                        break;
                    }
                    let age = (frame - f1) as f64 / fade_frames;
                    let level = ((age * FADE_LEVELS as f64) as usize).min(FADE_LEVELS - 1);
                    if level != run_level {
                        self.trail(img, &run, c, run_level)?;
                        run.clear();
                        run.push(w[0].1);
                        run_level = level;
                    }
                    run.push(p1);
                }
                self.trail(img, &run, c, run_level)?;
            }
        }

        // Items at their poses, fish under coins.
        let mut items = state.items.clone();
        items.sort_by_key(|(id, _)| (id.is_coin(), *id));
        for (id, pose) in &items {
            let c = scene.item_rgb(*id);
            self.item(img, *id, pose, c, 2)?;
        }

        // After the rest: coins in holes, and where lost fish may legally go back.
        if let (Some(pos), Phase::Resting) = (state.shot, state.phase) {
            for (coin, _) in &state.coins_in_holes {
                if let Some((_, p)) = state.items.iter().find(|(i, _)| i == coin) {
                    let r = self.radius_px(p.point(), self.coin_radius_mm + 3.0);
                    imgproc::circle(
                        img,
                        self.px(p.point()),
                        r,
                        bgr([255, 255, 255]),
                        2,
                        imgproc::LINE_AA,
                        SHIFT,
                    )?;
                }
            }
            for pb in &scene.record.shots[pos].put_back {
                if let (true, Some(pose)) = (pb.item.is_fish(), &pb.pose) {
                    let c = mix(scene.item_rgb(pb.item), [255, 255, 255], 0.4);
                    self.item(img, pb.item, pose, c, 1)?;
                }
            }
        }

        // Lost items: a red cross where each crossed the edge, an arrow outward.
        for lost in &state.lost {
            let exit = lost.exit.point();
            let e = self.px_plain(exit);
            let red = Scalar::new(0.0, 0.0, 255.0, 0.0);
            let k = 9;
            imgproc::line(
                img,
                CvPoint::new(e.x - k, e.y - k),
                CvPoint::new(e.x + k, e.y + k),
                red,
                3,
                imgproc::LINE_AA,
                0,
            )?;
            imgproc::line(
                img,
                CvPoint::new(e.x - k, e.y + k),
                CvPoint::new(e.x + k, e.y - k),
                red,
                3,
                imgproc::LINE_AA,
                0,
            )?;
            let out = crate::replay::diagram::outward_normal(&scene.table, exit);
            let tip = self.px_plain(exit + out * 60.0);
            imgproc::arrowed_line(img, e, tip, red, 2, imgproc::LINE_AA, 0, 0.3)?;
        }

        // Labels last, each in a free place, so none covers another.
        let labels = self.place(self.pending_labels(&state), (img.cols(), img.rows()))?;
        for l in &labels.placed {
            self.label(img, l)?;
        }
        self.banner(img, &state, frame, slow)
    }

    /// The box (px) an item covers at a pose.
    fn item_box(&self, id: ItemId, pose: &Pose) -> LabelBox {
        let corners: Vec<Point> = if id.is_fish() {
            self.scene.footprint.placed(pose).outline.clone()
        } else {
            let (p, r) = (pose.point(), self.coin_radius_mm);
            vec![
                Point::new(p.x - r, p.y - r),
                Point::new(p.x + r, p.y - r),
                Point::new(p.x + r, p.y + r),
                Point::new(p.x - r, p.y + r),
            ]
        };
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for c in corners {
            let q = self.calib.pixel_from_table(c);
            if q.x.is_finite() && q.y.is_finite() {
                (x0, y0, x1, y1) = (x0.min(q.x), y0.min(q.y), x1.max(q.x), y1.max(q.y));
            }
        }
        if x0 > x1 {
            return LabelBox::new(0.0, 0.0, 0.0, 0.0);
        }
        LabelBox::new(x0, y0, x1 - x0, y1 - y0)
    }

    /// What frame `state` labels: every item on the table (a coin in a hole at rest
    /// says whose), the legal put-back poses at rest, the items lost so far.
    fn pending_labels(&self, state: &FrameState) -> Vec<Pending> {
        let scene = self.scene;
        let resting = state.phase == Phase::Resting && state.shot.is_some();
        let mut items = state.items.clone();
        items.sort_by_key(|(id, _)| (id.is_coin(), *id));
        let mut out: Vec<Pending> = items
            .iter()
            .map(|(id, pose)| {
                let hole = state
                    .coins_in_holes
                    .iter()
                    .find(|(c, _)| c == id)
                    .filter(|_| resting);
                Pending {
                    text: match hole {
                        Some((_, fish)) => format!("{id} in {fish}"),
                        None => id.to_string(),
                    },
                    scale: 0.45,
                    // The owner's colour, not a coin's darker shade: legible on the outline.
                    color: scene.player_rgb(id.owner),
                    anchor: self.item_box(*id, pose),
                }
            })
            .collect();
        if let (Some(pos), true) = (state.shot, resting) {
            for pb in &scene.record.shots[pos].put_back {
                if let (true, Some(pose)) = (pb.item.is_fish(), &pb.pose) {
                    out.push(Pending {
                        text: format!("{} put back ({})", pb.item, pb.rule),
                        scale: 0.4,
                        color: mix(scene.item_rgb(pb.item), [255, 255, 255], 0.4),
                        anchor: self.item_box(pb.item, pose),
                    });
                }
            }
        }
        for lost in &state.lost {
            let e = self.calib.pixel_from_table(lost.exit.point());
            out.push(Pending {
                text: format!("{} lost @{}", lost.item, lost.frame),
                scale: 0.5,
                color: [255, 60, 60],
                anchor: LabelBox::around(e.x, e.y, 20.0, 20.0),
            });
        }
        out
    }

    /// Measures the labels and places them in a frame of `size` (cols, rows), off
    /// the banner.
    fn place(&self, pending: Vec<Pending>, size: (i32, i32)) -> opencv::Result<FrameLabels> {
        let pad = LABEL_PAD_PX as f64;
        let mut measured = Vec::with_capacity(pending.len());
        for p in &pending {
            let mut base = 0;
            let t = imgproc::get_text_size(&p.text, FONT, p.scale, OUTLINE_PX, &mut base)?;
            measured.push((t.width as f64, t.height as f64, base as f64));
        }
        let items: Vec<LabelItem> = pending
            .iter()
            .zip(&measured)
            .map(|(p, &(w, h, base))| LabelItem {
                anchor: p.anchor,
                size: (w + 2.0 * pad, h + base + 2.0 * pad),
            })
            .collect();
        let banner = LabelBox::new(
            0.0,
            0.0,
            BANNER_WIDTH_PX.min(size.0) as f64,
            (BANNER_LINE_PX * 3 + 12).min(size.1) as f64,
        );
        let frame = (size.0 as f64, size.1 as f64);
        let mut out = FrameLabels::default();
        for ((b, p), &(_, h, _)) in place_labels(&items, frame, &[banner], &[])
            .into_iter()
            .zip(pending)
            .zip(&measured)
        {
            match b {
                Some(bbox) => out.placed.push(PlacedLabel {
                    origin: CvPoint::new(
                        (bbox.x + pad).round() as i32,
                        (bbox.y + pad + h).round() as i32,
                    ),
                    text: p.text,
                    bbox,
                    scale: p.scale,
                    color: p.color,
                }),
                None => out.left_out += 1,
            }
        }
        Ok(out)
    }

    /// The labels of `frame` in a frame of `size` (cols, rows) as [`Annotator::draw`]
    /// places them.
    pub fn labels_at(&self, frame: FrameIdx, size: (i32, i32)) -> opencv::Result<FrameLabels> {
        let state = self.scene.state_at(frame);
        self.place(self.pending_labels(&state), size)
    }

    /// Draws a placed label: a dark outline under the colour, legible on anything.
    fn label(&self, img: &mut Mat, l: &PlacedLabel) -> opencv::Result<()> {
        for (c, thick) in [(Scalar::all(0.0), OUTLINE_PX), (bgr(l.color), 1)] {
            imgproc::put_text(
                img,
                &l.text,
                l.origin,
                FONT,
                l.scale,
                c,
                thick,
                imgproc::LINE_AA,
                false,
            )?;
        }
        Ok(())
    }

    /// The banner's dark backdrop, drawn first so that annotations stay on top of it.
    fn banner_backdrop(&self, img: &mut Mat) -> opencv::Result<()> {
        let bw = BANNER_WIDTH_PX.min(img.cols());
        let bh = (BANNER_LINE_PX * 3 + 12).min(img.rows());
        if bw <= 0 || bh <= 0 {
            return Ok(());
        }
        let mut roi = Mat::roi_mut(img, Rect::new(0, 0, bw, bh))?;
        let copy = roi.try_clone()?;
        copy.convert_to(&mut roi, -1, 0.35, 0.0)
    }

    /// The banner, top left: shot and mover, running score, frame and time.
    fn banner(
        &self,
        img: &mut Mat,
        state: &FrameState,
        frame: FrameIdx,
        slow: u32,
    ) -> opencv::Result<()> {
        let scene = self.scene;
        let line_h = BANNER_LINE_PX;
        let head = match (state.shot, state.mover) {
            (Some(pos), Some(m)) => {
                let s = &scene.record.shots[pos];
                let what = if state.phase == Phase::Moving {
                    "moves"
                } else {
                    "moved"
                };
                format!("Shot {}  {} {what}", s.index, scene.player_name(m))
            }
            (None, Some(m)) => format!("Before the first shot  ({} to move)", scene.player_name(m)),
            _ => "No shots".to_string(),
        };
        let mover_c = state
            .mover
            .map(|m| scene.player_rgb(m))
            .unwrap_or([255, 255, 255]);
        self.text(img, &head, CvPoint::new(8, line_h), 0.6, mover_c)?;
        let mut x = 8;
        for (p, total) in state.scores.iter().enumerate() {
            let s = format!("{} {total}", scene.player_name(p));
            self.text(
                img,
                &s,
                CvPoint::new(x, 2 * line_h),
                0.6,
                scene.player_rgb(p),
            )?;
            let mut base = 0;
            let size =
                imgproc::get_text_size(&s, imgproc::FONT_HERSHEY_SIMPLEX, 0.6, 1, &mut base)?;
            x += size.width + 18;
        }
        let mut t = format!("frame {frame}  {:.2} s", frame as f64 / scene.fps);
        if slow > 1 && state.phase == Phase::Moving {
            t.push_str(&format!("  slow x{slow}"));
        }
        self.text(img, &t, CvPoint::new(8, 3 * line_h), 0.5, [230, 230, 230])
    }
}

/// JPEG quality of the annotated video: what OpenCV's MJPG writer gave (about 47 dB
/// PSNR on the demo video), for a third of its CPU time through libjpeg-turbo.
pub const JPEG_QUALITY: i32 = 95;

/// Encodes frames as JPEG with libjpeg-turbo (OpenCV `imencode`), reusing its buffers.
pub struct JpegEncoder {
    params: Vector<i32>,
    buf: Vector<u8>,
}

impl Default for JpegEncoder {
    fn default() -> Self {
        JpegEncoder {
            params: Vector::from_iter([imgcodecs::IMWRITE_JPEG_QUALITY, JPEG_QUALITY]),
            buf: Vector::new(),
        }
    }
}

impl JpegEncoder {
    /// The JPEG bytes of a BGR image; valid until the next call.
    pub fn encode(&mut self, img: &Mat) -> opencv::Result<&[u8]> {
        if !imgcodecs::imencode(".jpg", img, &mut self.buf, &self.params)? {
            return Err(opencv::Error::new(
                opencv::core::StsError,
                "JPEG encoding failed",
            ));
        }
        Ok(self.buf.as_slice())
    }
}

/// A frame on its way through the pipeline; `seq` is its place among the distinct
/// frames of the plan.
struct Job {
    seq: usize,
    frame: FrameIdx,
    data: Packet,
}

enum Packet {
    /// Decoded by the capture (FFmpeg).
    Image(Mat),
    /// A Motion-JPEG frame as stored (1 x N bytes), for a worker to decode.
    Jpeg(Mat),
}

/// Decodes stored Motion-JPEG frames to BGR with zune-jpeg (through `image`), into
/// buffers it keeps. Faster than FFmpeg's decoder with its colour conversion, and
/// than OpenCV's `imdecode` (which swaps channels in a plain loop); and silent,
/// where libjpeg prints "Corrupt JPEG data" for every frame of OpenCV's own MJPG
/// writer whose last byte is short of bits (frames that decode correctly).
#[derive(Default)]
struct FrameDecoder {
    rgb: Mat,
    bgr: Mat,
}

impl FrameDecoder {
    /// The frame in `packet` (1 x N bytes), or `None` if it is not a JPEG image
    /// this decoder reads.
    fn decode(&mut self, packet: &Mat) -> Option<&mut Mat> {
        use image::ImageDecoder;
        let bytes = packet.data_bytes().ok()?;
        let dec = image::codecs::jpeg::JpegDecoder::new(std::io::Cursor::new(bytes)).ok()?;
        let (w, h) = dec.dimensions();
        if dec.color_type() != image::ColorType::Rgb8 {
            return None; // grey or CMYK: left to FFmpeg
        }
        let (w, h) = (i32::try_from(w).ok()?, i32::try_from(h).ok()?);
        if (self.rgb.cols(), self.rgb.rows()) != (w, h) {
            self.rgb =
                Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8UC3, 0.into()).ok()?;
        }
        dec.read_image(self.rgb.data_bytes_mut().ok()?).ok()?;
        imgproc::cvt_color_def(&self.rgb, &mut self.bgr, imgproc::COLOR_RGB2BGR).ok()?;
        Some(&mut self.bgr)
    }
}

/// Whether `input` is Motion-JPEG whose stored frames [`FrameDecoder`] reads
/// (checked on the first frame). Such frames are decoded on the workers, in
/// parallel; other codecs (mp4v, H.264) need the capture's decoder, one frame after
/// the other.
fn jpeg_packets_decodable(input: &Path, probe: &VideoProbe) -> bool {
    let check = || -> Result<bool, AnnotateError> {
        let mut cap = open(input)?;
        let fourcc = cap.get(videoio::CAP_PROP_FOURCC)? as u32;
        if !fourcc.to_le_bytes().eq_ignore_ascii_case(b"MJPG") {
            return Ok(false);
        }
        let mut packet = Mat::default();
        if !cap.set(videoio::CAP_PROP_FORMAT, -1.0)? || !cap.read(&mut packet)? {
            return Ok(false);
        }
        let size = (probe.width as i32, probe.height as i32);
        Ok(FrameDecoder::default()
            .decode(&packet)
            .is_some_and(|img| (img.cols(), img.rows()) == size))
    };
    // Any doubt means the capture's own decoder, which is slower but always right.
    check().unwrap_or(false)
}

/// Renders the annotated video of `input` into `output` (MJPG .avi). `progress` is
/// called with the number of frames written so far.
///
/// Three stages run at once: one thread reads (and, unless the input is Motion-JPEG,
/// decodes), a worker per core decodes JPEG input, draws and JPEG-encodes (frames
/// are independent), and the calling thread stores the JPEGs in plan order. A frame
/// that `--slow` repeats is drawn and encoded once and stored as many times as the
/// plan asks. Frame buffers are reused, so a frame costs no 2.7 MB allocation.
pub fn annotate_video(
    scene: &Scene,
    calib: &TableCalibration,
    input: &Path,
    output: &Path,
    opts: AnnotateOptions,
    progress: impl FnMut(u64),
) -> Result<AnnotateSummary, AnnotateError> {
    let probe = probe_video(input)?;
    annotate_probed_video(scene, calib, input, &probe, output, opts, progress)
}

/// As [`annotate_video`], with `input` already probed by [`probe_video`] (which
/// reads the whole file to count its frames: worth doing once).
pub fn annotate_probed_video(
    scene: &Scene,
    calib: &TableCalibration,
    input: &Path,
    probe: &VideoProbe,
    output: &Path,
    opts: AnnotateOptions,
    mut progress: impl FnMut(u64),
) -> Result<AnnotateSummary, AnnotateError> {
    let probe = *probe;
    let plan = scene.frame_plan(probe.frames, opts.shot, opts.slow)?;
    let fps = if probe.fps.is_finite() && probe.fps > 0.0 {
        probe.fps
    } else {
        scene.fps
    };
    // The plan is non-decreasing: runs of one frame are what `--slow` repeats.
    let mut runs: Vec<(FrameIdx, u64)> = Vec::new();
    for &f in &plan {
        match runs.last_mut() {
            Some((g, n)) if *g == f => *n += 1,
            _ => runs.push((f, 1)),
        }
    }
    let annotator = Annotator::new(scene, calib);
    let job = Render {
        annotator: &annotator,
        input,
        output,
        probe,
        fps,
        slow: opts.slow,
        runs: &runs,
    };
    let raw = jpeg_packets_decodable(input, &probe);
    let written = match job.run(raw, &mut progress) {
        // A later frame libjpeg cannot read (the first one it could): start again
        // with the capture's decoder rather than refuse a video FFmpeg plays.
        Err(AnnotateError::Decode { .. }) if raw => job.run(false, &mut progress)?,
        r => r?,
    };
    progress(written);
    Ok(AnnotateSummary {
        frames_written: written,
        width: probe.width,
        height: probe.height,
        fps,
    })
}

/// One rendering pass of [`annotate_video`].
struct Render<'a> {
    annotator: &'a Annotator<'a>,
    input: &'a Path,
    output: &'a Path,
    probe: VideoProbe,
    fps: f64,
    slow: u32,
    runs: &'a [(FrameIdx, u64)],
}

impl Render<'_> {
    /// Writes the whole output; `raw`: the workers decode the stored JPEG frames.
    fn run(&self, raw: bool, progress: &mut dyn FnMut(u64)) -> Result<u64, AnnotateError> {
        let (input, output, probe, runs) = (self.input, self.output, self.probe, self.runs);
        let file = std::fs::File::create(output).map_err(|e| AnnotateError::Io {
            path: output.to_path_buf(),
            source: e.into(),
        })?;
        let io_err = |e: AviError| AnnotateError::Io {
            path: output.to_path_buf(),
            source: e,
        };
        let mut avi = MjpegAviWriter::create(
            std::io::BufWriter::with_capacity(1 << 20, file),
            probe.width,
            probe.height,
            self.fps,
        )
        .map_err(io_err)?;
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(1, 8);

        // Bounded queues keep a few frames in flight, enough to keep every stage busy.
        let (job_tx, job_rx) = std::sync::mpsc::sync_channel::<Job>(2 * workers);
        // Shared by the workers and dropped with the last of them, so the reader stops
        // (instead of waiting forever) when they do.
        let job_rx = std::sync::Arc::new(std::sync::Mutex::new(job_rx));
        type Done = Result<(usize, Vec<u8>), AnnotateError>;
        let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<Done>(4 * workers);
        // Decoded frames go back to the reader for reuse.
        let (pool_tx, pool_rx) = std::sync::mpsc::sync_channel::<Mat>(4 * workers);
        let mut written = 0u64;
        let rendered = std::thread::scope(|scope| -> Result<(), AnnotateError> {
            let read_done = done_tx.clone();
            scope.spawn(move || {
                let read = || -> Result<(), AnnotateError> {
                    let mut cap = open(input)?;
                    if raw && !cap.set(videoio::CAP_PROP_FORMAT, -1.0)? {
                        return Err(AnnotateError::Decode {
                            path: input.to_path_buf(),
                            frame: 0,
                        });
                    }
                    // `next` is the index of the frame the capture returns on its next read.
                    let mut next: FrameIdx = 0;
                    let ended = |read| AnnotateError::Ended {
                        path: input.to_path_buf(),
                        read,
                        expected: probe.frames,
                    };
                    for (seq, &(frame, _)) in runs.iter().enumerate() {
                        while next < frame {
                            if !cap.grab()? {
                                return Err(ended(next));
                            }
                            next += 1;
                        }
                        let mut m = if raw {
                            Mat::default()
                        } else {
                            pool_rx.try_recv().unwrap_or_default()
                        };
                        if !cap.read(&mut m)? || m.empty() {
                            return Err(ended(next));
                        }
                        next += 1;
                        let data = if raw {
                            Packet::Jpeg(m)
                        } else {
                            Packet::Image(m)
                        };
                        if job_tx.send(Job { seq, frame, data }).is_err() {
                            return Ok(()); // the workers stopped: nothing more to do
                        }
                    }
                    Ok(())
                };
                if let Err(e) = read() {
                    let _ = read_done.send(Err(e));
                }
            });
            for _ in 0..workers {
                let (job_rx, done_tx, pool_tx) = (job_rx.clone(), done_tx.clone(), pool_tx.clone());
                scope.spawn(move || {
                    let mut jpeg = JpegEncoder::default();
                    let mut decoder = FrameDecoder::default();
                    loop {
                        let job = match job_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(Job { seq, frame, data }) = job else {
                            return; // the reader is done
                        };
                        let (out, back) = match data {
                            Packet::Image(mut img) => {
                                (self.frame(&mut img, seq, frame, &mut jpeg), Some(img))
                            }
                            Packet::Jpeg(packet) => {
                                let out = match decoder.decode(&packet) {
                                    Some(img) => self.frame(img, seq, frame, &mut jpeg),
                                    None => Err(AnnotateError::Decode {
                                        path: input.to_path_buf(),
                                        frame,
                                    }),
                                };
                                (out, None)
                            }
                        };
                        let failed = out.is_err();
                        if done_tx.send(out).is_err() || failed {
                            return;
                        }
                        if let Some(img) = back {
                            let _ = pool_tx.try_send(img);
                        }
                    }
                });
            }
            drop(job_rx);
            drop(done_tx);
            drop(pool_tx);
            // Owned here so that returning early (an error) hangs up on the workers.
            let done_rx = done_rx;

            // Frames finish out of order; they are stored in plan order.
            let mut pending = std::collections::BTreeMap::new();
            let mut next_seq = 0;
            while next_seq < runs.len() {
                let Ok(done) = done_rx.recv() else {
                    return Err(AnnotateError::Ended {
                        path: input.to_path_buf(),
                        read: runs[next_seq].0,
                        expected: probe.frames,
                    });
                };
                let (seq, bytes) = done?;
                pending.insert(seq, bytes);
                while let Some(bytes) = pending.remove(&next_seq) {
                    for _ in 0..runs[next_seq].1 {
                        avi.write_frame(&bytes).map_err(io_err)?;
                        written += 1;
                        if written % 16 == 0 {
                            progress(written);
                        }
                    }
                    next_seq += 1;
                }
            }
            Ok(())
        });
        // Finished even after an error (the 4 GB limit, a frame that does not
        // decode): what was written stays a playable video.
        let finished = avi.finish().map_err(io_err);
        rendered?;
        finished?;
        Ok(written)
    }

    /// Draws on one decoded frame and JPEG-encodes it.
    fn frame(
        &self,
        img: &mut Mat,
        seq: usize,
        frame: FrameIdx,
        jpeg: &mut JpegEncoder,
    ) -> Result<(usize, Vec<u8>), AnnotateError> {
        let (w, h) = (self.probe.width as i32, self.probe.height as i32);
        if img.cols() != w || img.rows() != h {
            return Err(AnnotateError::Mismatch(format!(
                "{}: frame {frame} is {}x{}, expected {w}x{h}",
                self.input.display(),
                img.cols(),
                img.rows(),
            )));
        }
        self.annotator.draw(img, frame, self.slow)?;
        Ok((seq, jpeg.encode(img)?.to_vec()))
    }
}
