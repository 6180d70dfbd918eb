//! Video frames → top-down views of the table for the detector, and the watcher that
//! decides per frame how much of that view to look at: decode (`capture`), a cheap
//! coarse view for the change gate (`watch`), and a full-scale `remap` of only the
//! part of the table that changed, handed to `detect`. The stages run on threads of
//! their own, in frame order: decoding and coarse views ([`stream_views`]), the gate
//! ([`gate_views`], [`FrameGate`]: it never waits for a look), then the looks
//! ([`Watcher`]) on the caller's thread.
//! Uses: capture, rectify, detect, watch, calibration.

use super::capture::{CaptureError, FrameSource};
use super::rectify::{RectifyError, Sampling, TableRectifier};
use crate::calibration::TableCalibration;
use crate::detect::{Detector, Hints, Sightings, TopGrid, TopView};
use crate::geometry::FishFootprint;
use crate::model::{FrameIdx, Pose};
use crate::watch::{self, Change, ChangeGate, GateConfig, MmBox};
use nalgebra::Point2;
use opencv::core::Mat;
use opencv::prelude::*;

/// Why top views could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TopViewError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Rectify(#[from] RectifyError),
    #[error("{video}: frames are {frame_w}x{frame_h} but the calibration was made at {cal_w}x{cal_h}; calibrate this camera at this resolution")]
    SizeMismatch {
        video: String,
        frame_w: i32,
        frame_h: i32,
        cal_w: u32,
        cal_h: u32,
    },
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error("a look needed a frame the change gate had let go (a bug)")]
    NoImage,
    #[error("{path}: cannot write the video ({why})")]
    Save { path: String, why: String },
    #[error("{spec}: the source ends before frame {first}, where the reading should go on")]
    ResumePastEnd { spec: String, first: FrameIdx },
}

/// One decoded camera frame (BGR).
pub struct CameraFrame {
    pub index: FrameIdx,
    pub image: Mat,
}

/// Decodes a video's frames, checking that they have the calibrated size.
pub struct FrameReader {
    source: FrameSource,
    camera_size: [u32; 2],
    /// How a live source is read (`live`); none: as fast as it decodes.
    feed: Option<FeedReading>,
}

/// What happened to a live source, told to a [`Feed`]'s `notes` as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedNote {
    /// The source opened; its first frame will be `at`.
    Connected { at: FrameIdx, detail: String },
    /// Frames stopped coming after frame `at - 1`.
    Lost { at: FrameIdx, detail: String },
    /// Frames come again from `at`; the `skipped` frames before it (the time it was
    /// lost, at its frame rate) were never seen.
    Reconnected {
        at: FrameIdx,
        skipped: u64,
        detail: String,
    },
    /// `count` frames from `first` were dropped: the analysis was behind a paced
    /// source, as a camera's frames are gone when nobody takes them.
    Dropped { first: FrameIdx, count: u64 },
}

/// How a live source is read: what `live`'s options say ([`Feed`] adds the frame
/// rate and where its notes go).
pub struct FeedOptions {
    /// A file read at its frame rate times this factor (1: as filmed), by the wall
    /// clock; frames due more than [`PACE_SLACK_FRAMES`] frames ago are dropped.
    pub pace: Option<f64>,
    /// Whether a paced file drops frames when behind (a camera's way); false: the
    /// reading waits for the analysis instead (a file replayed in time, every frame).
    pub drop_behind: bool,
    /// A camera or stream that stops is opened again, with growing waits, for this long.
    pub reconnect_for: std::time::Duration,
    /// Set from outside (Ctrl-C): the reading ends at the next frame or wait.
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The frame to start at: a file skips to it (a resume); a camera's frames are
    /// numbered on from it.
    pub first: FrameIdx,
    /// Frames before this one are read as fast as they decode, unpaced (a resume
    /// that analyses the frames already journaled again, to the same state); the
    /// source is connected, and paced, from it.
    pub catch_up: FrameIdx,
    /// Where every frame read is also written (`--save`), at the source's frame rate.
    pub save: Option<std::path::PathBuf>,
}

/// How a live source is read, and who hears what happens to it.
pub struct Feed {
    pub options: FeedOptions,
    /// The frame rate to pace and save at when the source's own is wrong (`--fps`).
    pub fps: Option<f64>,
    pub notes: Box<dyn FnMut(FeedNote) + Send>,
}

/// How far a paced file's reading may fall behind the clock before frames are
/// dropped, in frames: a camera keeps a few frames in its buffers (V4L2's default is 4).
pub const PACE_SLACK_FRAMES: f64 = 4.0;
/// The first wait before a lost source is opened again; each next wait doubles, up
/// to [`RECONNECT_MAX_WAIT_S`].
const RECONNECT_FIRST_WAIT_S: f64 = 0.5;
const RECONNECT_MAX_WAIT_S: f64 = 8.0;

/// A [`Feed`] being read.
struct FeedReading {
    feed: Feed,
    spec: String,
    fps: f64,
    /// Added to the source's indices (a camera numbered on, one opened again).
    offset: FrameIdx,
    /// The index after the last frame handed out.
    next_out: FrameIdx,
    /// The wall clock and frame index of the first paced frame.
    clock: Option<(std::time::Instant, FrameIdx)>,
    /// The run of frames being dropped: first and count.
    dropping: Option<(FrameIdx, u64)>,
    writer: Option<opencv::videoio::VideoWriter>,
}

impl FrameReader {
    pub fn open(video: &str, camera_size: [u32; 2]) -> Result<FrameReader, TopViewError> {
        Ok(FrameReader {
            source: FrameSource::open(video)?,
            camera_size,
            feed: None,
        })
    }

    /// Opens `spec` read as `feed` says: paced, skipped to its first frame,
    /// reconnected when lost, saved.
    pub fn open_feed(
        spec: &str,
        camera_size: [u32; 2],
        mut feed: Feed,
    ) -> Result<FrameReader, TopViewError> {
        let mut source = FrameSource::open(spec)?;
        let fps = feed
            .fps
            .or(source.fps())
            .filter(|f| (crate::limits::MIN_FPS..=crate::limits::MAX_FPS).contains(f))
            .unwrap_or(30.0);
        let mut offset = 0;
        if source.is_live() {
            offset = feed.options.first;
        } else if !source.skip_to(feed.options.first)? {
            return Err(TopViewError::ResumePastEnd {
                spec: spec.to_string(),
                first: feed.options.first,
            });
        }
        let writer = match &feed.options.save {
            Some(path) => Some(open_writer(path, fps, camera_size)?),
            None => None,
        };
        (feed.notes)(FeedNote::Connected {
            at: feed.options.first.max(feed.options.catch_up),
            detail: spec.to_string(),
        });
        let first = feed.options.first;
        Ok(FrameReader {
            source,
            camera_size,
            feed: Some(FeedReading {
                feed,
                spec: spec.to_string(),
                fps,
                offset,
                next_out: first,
                clock: None,
                dropping: None,
                writer,
            }),
        })
    }

    pub fn fps(&self) -> Option<f64> {
        self.source.fps()
    }

    /// Frames in the video, when the container says.
    pub fn len(&self) -> Option<u64> {
        self.source.len()
    }

    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// The next frame, `None` at the end.
    pub fn next_frame(&mut self) -> Result<Option<CameraFrame>, TopViewError> {
        self.next_frame_into(Mat::default())
    }

    /// The next frame, decoded into `buffer` (a frame done with) when it fits.
    pub fn next_frame_into(&mut self, buffer: Mat) -> Result<Option<CameraFrame>, TopViewError> {
        if self.feed.is_some() {
            return self.next_fed(buffer);
        }
        let Some(frame) = self.source.next_frame_into(buffer)? else {
            return Ok(None);
        };
        self.checked(frame.index, frame.image)
    }

    /// The frame `index` with `image`, checked against the calibrated size.
    fn checked(&self, index: FrameIdx, image: Mat) -> Result<Option<CameraFrame>, TopViewError> {
        let frame = CameraFrame { index, image };
        let [cw, ch] = self.camera_size;
        let (w, h) = (frame.image.cols(), frame.image.rows());
        if w as u32 != cw || h as u32 != ch {
            return Err(TopViewError::SizeMismatch {
                video: self.source.spec().to_string(),
                frame_w: w,
                frame_h: h,
                cal_w: cw,
                cal_h: ch,
            });
        }
        Ok(Some(CameraFrame {
            index: frame.index,
            image: frame.image,
        }))
    }

    /// The next frame of a live source ([`Feed`]).
    fn next_fed(&mut self, buffer: Mat) -> Result<Option<CameraFrame>, TopViewError> {
        let Some(mut reading) = self.feed.take() else {
            return Ok(None);
        };
        let out = self.read_fed(&mut reading, buffer);
        if out.as_ref().map_or(true, Option::is_none) {
            reading.end_drops();
        }
        self.feed = Some(reading);
        out
    }

    fn read_fed(
        &mut self,
        r: &mut FeedReading,
        mut buffer: Mat,
    ) -> Result<Option<CameraFrame>, TopViewError> {
        use std::sync::atomic::Ordering;
        loop {
            if r.feed.options.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let index = self.source.next_index() + r.offset;
            if let Some(speed) = r
                .feed
                .options
                .pace
                .filter(|_| index >= r.feed.options.catch_up)
            {
                let per_frame = 1.0 / (r.fps * speed);
                let (t0, f0) = *r.clock.get_or_insert((std::time::Instant::now(), index));
                let due = index.saturating_sub(f0) as f64 * per_frame;
                let now = t0.elapsed().as_secs_f64();
                if now < due {
                    sleep_unless_stopped(due - now, &r.feed.options.stop);
                    continue;
                }
                if r.feed.options.drop_behind && now - due > PACE_SLACK_FRAMES * per_frame {
                    // Behind the clock: a camera hands out its newest frame, those
                    // before it are gone. Then that frame is read, whatever skipping
                    // to it cost (a file must be decoded to skip; a camera's are free).
                    let newest = f0 + (now / per_frame).floor() as FrameIdx;
                    let mut at = index;
                    while at < newest {
                        if !self.source.skip_frame()? {
                            return Ok(None);
                        }
                        match &mut r.dropping {
                            Some((_, n)) => *n += 1,
                            None => r.dropping = Some((at, 1)),
                        }
                        at = self.source.next_index() + r.offset;
                    }
                }
            }
            let live = self.source.is_live();
            let lost = match self.source.next_frame_into(std::mem::take(&mut buffer)) {
                Ok(Some(frame)) => {
                    r.end_drops();
                    let index = frame.index + r.offset;
                    r.next_out = index + 1;
                    let out = self.checked(index, frame.image)?;
                    if let (Some(writer), Some(frame)) = (r.writer.as_mut(), out.as_ref()) {
                        writer.write(&frame.image).map_err(|e| TopViewError::Save {
                            path: r
                                .feed
                                .options
                                .save
                                .as_deref()
                                .unwrap_or(std::path::Path::new(""))
                                .display()
                                .to_string(),
                            why: e.to_string(),
                        })?;
                    }
                    return Ok(out);
                }
                Ok(None) if !live => return Ok(None),
                Err(e) if !live => return Err(e.into()),
                Ok(None) => "no more frames came".to_string(),
                Err(e) => e.to_string(),
            };
            (r.feed.notes)(FeedNote::Lost {
                at: r.next_out,
                detail: format!("{}: {lost}", r.spec),
            });
            if !self.reconnect(r) {
                return Ok(None);
            }
        }
    }

    /// Opens a lost camera or stream again, waiting longer after each failure: true
    /// once it is open, false when [`FeedOptions::reconnect_for`] is over or a stop was asked for.
    fn reconnect(&mut self, r: &mut FeedReading) -> bool {
        let began = std::time::Instant::now();
        let mut wait = RECONNECT_FIRST_WAIT_S;
        loop {
            if !sleep_unless_stopped(wait, &r.feed.options.stop)
                || began.elapsed() > r.feed.options.reconnect_for
            {
                return false;
            }
            wait = (wait * 2.0).min(RECONNECT_MAX_WAIT_S);
            let Ok(source) = FrameSource::open(&r.spec) else {
                continue;
            };
            // The frames filmed meanwhile were never seen: numbered past, not damage.
            let skipped = (began.elapsed().as_secs_f64() * r.fps).round() as u64;
            r.offset = r.next_out + skipped;
            r.clock = None;
            (r.feed.notes)(FeedNote::Reconnected {
                at: r.offset,
                skipped,
                detail: format!(
                    "{}: open again after {:.1} s",
                    r.spec,
                    began.elapsed().as_secs_f64()
                ),
            });
            self.source = source;
            return true;
        }
    }
}

impl FeedReading {
    /// Tells the run of frames being dropped, if any, as over.
    fn end_drops(&mut self) {
        if let Some((first, count)) = self.dropping.take() {
            (self.feed.notes)(FeedNote::Dropped { first, count });
        }
    }
}

/// Sleeps `secs` in short steps; false (at once) when `stop` is set.
fn sleep_unless_stopped(secs: f64, stop: &std::sync::atomic::AtomicBool) -> bool {
    const STEP_S: f64 = 0.05;
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.max(0.0));
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(std::time::Duration::from_secs_f64(STEP_S)));
    }
}

/// A video writer for `--save` at `path`: Motion JPEG (in .mkv, .avi), MPEG-4 part 2
/// in .mp4/.mov (what OpenCV's FFmpeg backend writes without extra codecs).
fn open_writer(
    path: &std::path::Path,
    fps: f64,
    [w, h]: [u32; 2],
) -> Result<opencv::videoio::VideoWriter, TopViewError> {
    use opencv::videoio::VideoWriter;
    let name = path.display().to_string();
    let fail = |why: String| TopViewError::Save {
        path: name.clone(),
        why,
    };
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let code = if matches!(ext.as_str(), "mp4" | "m4v" | "mov") {
        ['m', 'p', '4', 'v']
    } else {
        ['M', 'J', 'P', 'G']
    };
    let fourcc =
        VideoWriter::fourcc(code[0], code[1], code[2], code[3]).map_err(|e| fail(e.to_string()))?;
    let size = opencv::core::Size::new(w as i32, h as i32);
    let writer =
        VideoWriter::new(&name, fourcc, fps, size, true).map_err(|e| fail(e.to_string()))?;
    if !writer.is_opened().unwrap_or(false) {
        return Err(fail("OpenCV could not open it for writing".to_string()));
    }
    Ok(writer)
}

/// A decoded frame and its coarse view (on the coarse grid, channels in the frame's
/// order).
pub struct Viewed {
    pub frame: CameraFrame,
    pub coarse: Mat,
}

/// Frames with their coarse views, in order, as [`stream_views`] makes them.
pub struct ViewStream<'scope> {
    ready: Vec<std::sync::mpsc::Receiver<Result<Viewed, TopViewError>>>,
    next: usize,
    /// Where buffers done with go back to.
    pool: &'scope FramePool,
}

impl Iterator for ViewStream<'_> {
    type Item = Result<Viewed, TopViewError>;

    fn next(&mut self) -> Option<Self::Item> {
        let from = self.ready.get(self.next % self.ready.len().max(1))?;
        self.next += 1;
        // A closed channel: that worker has no frame `next`, so the video ended.
        from.recv().ok()
    }
}

/// Buffers done with, handed back so that the next frames are decoded, and their
/// coarse views made, into memory already mapped (a fresh 1280x720 frame costs
/// hundreds of page faults, and every frame is decoded and viewed).
#[derive(Default)]
pub struct FramePool {
    frames: std::sync::Mutex<Vec<Mat>>,
    coarse: std::sync::Mutex<Vec<Mat>>,
}

impl FramePool {
    /// Hands a frame's buffer back.
    pub fn give(&self, image: Mat) {
        give_to(&self.frames, image);
    }

    fn take(&self) -> Mat {
        take_from(&self.frames)
    }

    fn give_coarse(&self, view: Mat) {
        give_to(&self.coarse, view);
    }

    fn take_coarse(&self) -> Mat {
        take_from(&self.coarse)
    }
}

fn give_to(pool: &std::sync::Mutex<Vec<Mat>>, buffer: Mat) {
    if let Ok(mut pool) = pool.lock() {
        pool.push(buffer);
    }
}

fn take_from(pool: &std::sync::Mutex<Vec<Mat>>) -> Mat {
    pool.lock()
        .ok()
        .and_then(|mut pool| pool.pop())
        .unwrap_or_default()
}

/// Decodes `reader`'s frames on a thread of its own (OpenCV's capture: one frame
/// after another) and makes their coarse views on `workers` threads (frame k on
/// worker k mod `workers`, so they come back in order), at most about `ahead`
/// frames before the caller takes them. Dropping the stream stops all of them.
pub fn stream_views<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    mut reader: FrameReader,
    coarse: &'scope TopViews,
    pool: &'scope FramePool,
    workers: usize,
    ahead: usize,
) -> ViewStream<'scope> {
    let workers = workers.max(1);
    let depth = ahead.div_ceil(workers).max(1);
    let mut inputs = Vec::new();
    let mut ready = Vec::new();
    for _ in 0..workers {
        // One frame waiting for each worker is enough: decoding is the slower half.
        let (to_worker, work) =
            std::sync::mpsc::sync_channel::<Result<CameraFrame, TopViewError>>(1);
        let (done, from_worker) = std::sync::mpsc::sync_channel(depth);
        inputs.push(to_worker);
        ready.push(from_worker);
        scope.spawn(move || {
            let mut scratch = Mat::default();
            for frame in work {
                let item = frame.and_then(|frame| {
                    let mut view = pool.take_coarse();
                    coarse.whole_into(&frame.image, &mut view, &mut scratch)?;
                    Ok(Viewed {
                        frame,
                        coarse: view,
                    })
                });
                let failed = item.is_err();
                // A closed channel means the caller gave up: stop.
                if done.send(item).is_err() || failed {
                    break;
                }
            }
        });
    }
    scope.spawn(move || {
        for k in 0.. {
            let Some(frame) = reader.next_frame_into(pool.take()).transpose() else {
                break;
            };
            let failed = frame.is_err();
            if inputs[k % workers].send(frame).is_err() || failed {
                break;
            }
        }
    });
    ViewStream {
        ready,
        next: 0,
        pool,
    }
}

/// Top-down views of the table at one scale: the whole view or a part of it.
pub struct TopViews {
    rectifier: TableRectifier,
    grid: TopGrid,
}

impl TopViews {
    /// Views read bilinearly: sub-pixel accurate, for detection.
    pub fn new(
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
    ) -> Result<TopViews, TopViewError> {
        TopViews::with_sampling(calibration, mm_per_px, margin_mm, Sampling::Bilinear)
    }

    /// Views for the change gate, made for every frame: read from the frame halved
    /// (`Sampling::HalvedNearest`), at about half the cost of bilinear views. The gate
    /// compares a pixel with itself in other frames: it needs a pixel to respond to
    /// small shifts, not to be placed to a fraction of a pixel.
    pub fn coarse(
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
    ) -> Result<TopViews, TopViewError> {
        TopViews::with_sampling(calibration, mm_per_px, margin_mm, Sampling::HalvedNearest)
    }

    fn with_sampling(
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
        sampling: Sampling,
    ) -> Result<TopViews, TopViewError> {
        let rectifier = TableRectifier::with_sampling(calibration, mm_per_px, margin_mm, sampling)?;
        let (w, h) = rectifier.size();
        let grid = TopGrid {
            width: w as usize,
            height: h as usize,
            mm_per_px,
            origin_mm: rectifier.table_from_rectified(Point2::new(0.0, 0.0)),
            y_down: true,
        };
        Ok(TopViews { rectifier, grid })
    }

    pub fn grid(&self) -> TopGrid {
        self.grid
    }

    /// The whole view, pixels laid out as `grid()` says (channels as in `frame`).
    pub fn whole(&self, frame: &Mat) -> Result<Mat, TopViewError> {
        Ok(self.rectifier.rectify(frame)?)
    }

    /// As [`TopViews::whole`], into `view`, with `scratch` for the work (both reused
    /// when they have the size needed).
    pub fn whole_into(
        &self,
        frame: &Mat,
        view: &mut Mat,
        scratch: &mut Mat,
    ) -> Result<(), TopViewError> {
        Ok(self.rectifier.rectify_into(frame, view, scratch)?)
    }

    /// The part of the view covering `region` (clipped to the view) and its grid;
    /// `None` when the region lies wholly outside the view.
    pub fn part(
        &self,
        frame: &Mat,
        region: &MmBox,
    ) -> Result<Option<(TopGrid, Mat)>, TopViewError> {
        let g = &self.grid;
        let (ua, va) = g.px_from_table(region.min);
        let (ub, vb) = g.px_from_table(region.max);
        let u0 = ua.min(ub).floor().max(0.0) as i32;
        let v0 = va.min(vb).floor().max(0.0) as i32;
        let u1 = (ua.max(ub).ceil() as i32).min(g.width as i32 - 1);
        let v1 = (va.max(vb).ceil() as i32).min(g.height as i32 - 1);
        if u1 < u0 || v1 < v0 {
            return Ok(None);
        }
        let top = self
            .rectifier
            .rectify_region(frame, u0, v0, u1 - u0 + 1, v1 - v0 + 1)?;
        if top.empty() {
            return Ok(None);
        }
        let grid = TopGrid {
            width: top.cols() as usize,
            height: top.rows() as usize,
            origin_mm: g.table_from_px(u0 as f64, v0 as f64),
            ..*g
        };
        Ok(Some((grid, top)))
    }
}

/// The scale of the change gate's coarse view, mm per pixel: fine enough that a coin
/// creeping a millimetre shows, coarse enough to cost a fraction of a decode.
pub const COARSE_MM_PER_PX: f64 = 2.0;

/// How a frame was looked at (for the statistics `analyse` reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookKind {
    /// Nothing near an item changed: what was seen before still holds.
    Reused,
    /// A part of the table was looked at.
    Part,
    /// The whole table was looked at.
    Whole,
}

/// Counts of each kind of look, and the share of the view's pixels detected on.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LookStats {
    pub reused: u64,
    pub parts: u64,
    pub wholes: u64,
    /// Pixels looked at, over pixels in all frames' whole views.
    pub pixel_share: f64,
}

/// Decides for each frame where to look, looks there, and keeps what it saw.
pub struct Watcher {
    views: TopViews,
    /// The box of the gate's whole coarse view.
    whole: MmBox,
    detector: Detector,
    footprint: FishFootprint,
    players: usize,
    /// What was seen at the gate's reference view.
    reference: Option<Sightings>,
    /// What was seen at the previous frame.
    previous: Option<Sightings>,
    /// Each player's tag's turn into the previous frame from the frame before it
    /// (radians), when seen in both: of its axis, within a quarter turn either way,
    /// for one of the two readings may have been the tag read end for end.
    turn: Vec<Option<f64>>,
    /// Each player's fish pose when last seen anywhere: a tag under a hand can go
    /// unseen through a settled look, which then leaves it out of the reference.
    last_seen: Vec<Option<Pose>>,
    /// Each player's fish pose in the last settled look that saw it.
    settled: Vec<Option<Pose>>,
    stats: LookStats,
    pixels_seen: f64,
    pixels_all: f64,
    /// Look at the whole view in every frame (for checking the gate; slow).
    always_whole: bool,
}

/// The change gate of a [`Watcher`], run apart from it (on a thread of its own in
/// `analyse`): it compares each frame's coarse view with the reference and the
/// previous frame, and takes a new reference exactly where the watcher takes a new
/// reference look. That place does not depend on what the looks find: the first
/// frame, and then any settled frame that differs from the reference (it is looked
/// at, part or whole, and being settled makes it the reference); with
/// `always_whole`, any settled frame. So the gate can run ahead of the looks.
pub struct FrameGate {
    gate: ChangeGate,
    always_whole: bool,
    started: bool,
}

impl FrameGate {
    pub fn new(coarse_grid: TopGrid, always_whole: bool) -> FrameGate {
        FrameGate {
            gate: ChangeGate::new(coarse_grid, GateConfig::default()),
            always_whole,
            started: false,
        }
    }

    /// Whether the next frame will be looked at whatever it shows: the first one, or
    /// every one with `always_whole`. Any other only when it differs from the reference.
    pub fn needs_image(&self) -> bool {
        self.always_whole || !self.started
    }

    /// What changed in the next frame, whose coarse view is `coarse`.
    pub fn observe(&mut self, coarse: &[u8]) -> Change {
        let change = self.gate.observe(coarse);
        let looked_afresh = !self.started
            || (change.settled && (self.always_whole || change.since_reference.is_some()));
        if looked_afresh {
            self.gate.rebase();
        }
        self.started = true;
        change
    }
}

/// A frame past the gate: what changed in it, and its image unless no look will
/// need it.
pub struct Gated {
    pub index: FrameIdx,
    pub change: Change,
    pub frame: Option<CameraFrame>,
}

/// Frames past the gate, in order ([`gate_views`]).
pub struct GatedStream {
    gated: std::sync::mpsc::Receiver<Result<Gated, TopViewError>>,
    tokens: std::sync::mpsc::SyncSender<()>,
}

impl GatedStream {
    /// The next frame, `None` at the end.
    pub fn next_frame(&mut self) -> Option<Result<Gated, TopViewError>> {
        self.gated.recv().ok()
    }

    /// The next frame, waiting at most `wait` (a live source watched for a stall):
    /// `Timeout` when none came, `Disconnected` at the end.
    pub fn next_frame_timeout(
        &mut self,
        wait: std::time::Duration,
    ) -> Result<Result<Gated, TopViewError>, std::sync::mpsc::RecvTimeoutError> {
        self.gated.recv_timeout(wait)
    }

    /// Says a frame's image is done with: the gate may hand over another.
    pub fn done_with_image(&self) {
        let _ = self.tokens.try_send(());
    }
}

/// Runs `gate` over `views` on a thread of its own and hands each frame on with what
/// changed in it. A frame that no look will need (it matches the reference) goes on
/// without its image, so the gate can run far ahead of the looks (up to
/// `frames_ahead`) while the table is still, with at most `images_ahead` images
/// waiting (memory stays flat): the decoding threads keep the second core busy while
/// this thread's caller looks at a moving table. The coarse views end here.
pub fn gate_views<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    views: ViewStream<'scope>,
    mut gate: FrameGate,
    frames_ahead: usize,
    images_ahead: usize,
) -> GatedStream {
    let (to_looks, gated) = std::sync::mpsc::sync_channel(frames_ahead.max(1));
    let images_ahead = images_ahead.max(1);
    let (tokens, budget) = std::sync::mpsc::sync_channel(images_ahead);
    for _ in 0..images_ahead {
        let _ = tokens.try_send(());
    }
    let pool = views.pool;
    scope.spawn(move || {
        for item in views {
            let item = item.and_then(|Viewed { frame, coarse }| {
                let needs_image = gate.needs_image();
                let change = gate.observe(coarse.data_bytes()?);
                pool.give_coarse(coarse);
                let keep = needs_image || change.since_reference.is_some();
                let index = frame.index;
                let frame = if keep {
                    Some(frame)
                } else {
                    pool.give(frame.image);
                    None
                };
                Ok(Gated {
                    index,
                    change,
                    frame,
                })
            });
            // An image waits for room; a closed budget means the looks gave up.
            if matches!(&item, Ok(Gated { frame: Some(_), .. })) && budget.recv().is_err() {
                break;
            }
            let failed = item.is_err();
            if to_looks.send(item).is_err() || failed {
                break;
            }
        }
    });
    GatedStream { gated, tokens }
}

/// Grown around a change so that what moved there is seen whole, mm.
const REGION_MARGIN_MM: f64 = 12.0;
/// Above this share of the whole view a part costs as much as the whole.
const WHOLE_VIEW_SHARE: f64 = 0.6;

impl Watcher {
    pub fn new(views: TopViews, coarse_grid: TopGrid, detector: Detector, players: usize) -> Self {
        Watcher {
            views,
            whole: ChangeGate::new(coarse_grid, GateConfig::default()).whole(),
            footprint: detector.footprint().clone(),
            detector,
            players,
            reference: None,
            previous: None,
            turn: vec![None; players],
            last_seen: vec![None; players],
            settled: vec![None; players],
            stats: LookStats::default(),
            pixels_seen: 0.0,
            pixels_all: 0.0,
            always_whole: false,
        }
    }

    /// Looks at the whole view in every frame: slow, but free of the change gate's
    /// judgement (to check it).
    pub fn always_whole(mut self, yes: bool) -> Self {
        self.always_whole = yes;
        self
    }

    pub fn footprint(&self) -> &FishFootprint {
        &self.footprint
    }

    pub fn stats(&self) -> LookStats {
        LookStats {
            pixel_share: if self.pixels_all > 0.0 {
                self.pixels_seen / self.pixels_all
            } else {
                0.0
            },
            ..self.stats
        }
    }

    /// Everything seen in `frame`, where a [`FrameGate`] (of the same `always_whole`)
    /// saw `change`.
    /// `frame` may be missing only where the gate said no look needs it.
    pub fn look(
        &mut self,
        frame: Option<&CameraFrame>,
        change: &Change,
    ) -> Result<Sightings, TopViewError> {
        let frame = || frame.ok_or(TopViewError::NoImage);
        let whole_px = (self.views.grid.width * self.views.grid.height) as f64;
        self.pixels_all += whole_px;
        let (seen, kind) = match (&self.reference, change.since_reference) {
            _ if self.always_whole => (self.look_whole(frame()?)?, LookKind::Whole),
            (None, _) => (self.look_whole(frame()?)?, LookKind::Whole),
            (Some(reference), None) => (reference.clone(), LookKind::Reused),
            (Some(reference), Some(changed)) => {
                let before: Vec<&Sightings> = std::iter::once(reference)
                    .chain(self.previous.as_ref())
                    .collect();
                let unseen_tags: Vec<Pose> = (0..self.players)
                    .filter(|&p| !reference.fish.iter().any(|f| f.player == p))
                    .filter_map(|p| self.settled.get(p).copied().flatten())
                    .collect();
                if !change.settled
                    && watch::over_bare_table(
                        &changed,
                        &before,
                        &unseen_tags,
                        &self.footprint,
                        REGION_MARGIN_MM,
                    )
                {
                    // Only something over bare table (a hand): the items stand as seen.
                    let mut seen = reference.clone();
                    seen.occluders.push((changed.center(), changed.radius()));
                    (seen, LookKind::Reused)
                } else {
                    let region =
                        watch::region_to_look(&changed, &before, &self.footprint, REGION_MARGIN_MM);
                    let share = area(&region) / area(&self.whole);
                    if share > WHOLE_VIEW_SHARE {
                        (self.look_whole(frame()?)?, LookKind::Whole)
                    } else {
                        (
                            self.look_part(frame()?, &region, !change.settled)?,
                            LookKind::Part,
                        )
                    }
                }
            }
        };
        match kind {
            LookKind::Reused => self.stats.reused += 1,
            LookKind::Part => self.stats.parts += 1,
            LookKind::Whole => {
                self.stats.wholes += 1;
                self.pixels_seen += whole_px;
            }
        }
        if kind != LookKind::Reused && (change.settled || self.reference.is_none()) {
            // A settled scene, looked at afresh, is the new reference (the gate
            // rebased on this frame: see `FrameGate::observe`).
            self.reference = Some(seen.clone());
            for f in &seen.fish {
                if let Some(slot) = self.settled.get_mut(f.player) {
                    *slot = Some(f.pose);
                }
            }
        }
        for f in &seen.fish {
            if let Some(slot) = self.last_seen.get_mut(f.player) {
                *slot = Some(f.pose);
            }
        }
        for (player, turn) in self.turn.iter_mut().enumerate() {
            let angle = |s: Option<&Sightings>| {
                s.and_then(|s| s.fish.iter().find(|f| f.player == player))
                    .map(|f| f.pose.angle())
            };
            *turn = angle(Some(&seen))
                .zip(angle(self.previous.as_ref()))
                .map(|(now, before)| 0.5 * crate::detect::wrap_angle(2.0 * (now - before)));
        }
        self.previous = Some(seen.clone());
        Ok(seen)
    }

    fn hints(&self, partial_view: bool, quick: bool) -> Hints {
        let fish = self.last_seen.clone();
        let settled = self.settled.clone();
        let mut previous_frame = vec![None; self.players];
        for f in self.previous.iter().flat_map(|s| &s.fish) {
            if let Some(slot) = previous_frame.get_mut(f.player) {
                *slot = Some(f.pose);
            }
        }
        Hints {
            fish,
            settled,
            partial_view,
            quick,
            previous_frame,
            turn: self.turn.clone(),
        }
    }

    fn look_whole(&mut self, frame: &CameraFrame) -> Result<Sightings, TopViewError> {
        let top = self.views.whole(&frame.image)?;
        let hints = self.hints(false, false);
        Ok(self.detector.detect_with(
            &TopView {
                grid: self.views.grid,
                rgb: top.data_bytes()?,
                bgr: true,
            },
            &hints,
        ))
    }

    fn look_part(
        &mut self,
        frame: &CameraFrame,
        region: &MmBox,
        quick: bool,
    ) -> Result<Sightings, TopViewError> {
        let hints = self.hints(true, quick);
        let fresh = match self.views.part(&frame.image, region)? {
            Some((grid, top)) => {
                self.pixels_seen += (grid.width * grid.height) as f64;
                self.detector.detect_with(
                    &TopView {
                        grid,
                        rgb: top.data_bytes()?,
                        bgr: true,
                    },
                    &hints,
                )
            }
            None => Sightings::default(),
        };
        let reference = self.reference.as_ref().cloned().unwrap_or_default();
        Ok(watch::merge(&reference, fresh, region, &self.footprint))
    }
}

fn area(b: &MmBox) -> f64 {
    let d = b.max - b.min;
    d.x.max(0.0) * d.y.max(0.0)
}
