//! The frame source of pixels: a video file, a folder of images or a camera opened
//! through `vision`, decoded, gated and looked at on threads of their own, handing
//! on each frame's detections. Memory stays flat however long the video: at most a
//! few frames wait at each stage. Uses: vision (capture, top views), detect.

use super::{
    BumpNote, CameraLog, CameraNote, CameraState, DriverError, Flow, FrameSource, LookSummary,
    Settings, SourceEnd, SourceInfo, Step,
};
use crate::calibration::refit::{
    check_bump, refit_table, BgrFrame, BumpVerdict, OutlineSearch, RefitError,
};
use crate::calibration::{Homography, TableCalibration};
use crate::detect::Sightings;
use crate::detect::{Detector, DetectorConfig};
use crate::model::FrameIdx;
use crate::vision::topview::{
    gate_views, stream_views, Feed, FeedNote, FrameGate, FramePool, FrameReader, Gated,
    TopViewError, TopViews, Watcher, COARSE_MM_PER_PX,
};
use crate::watch::MmBox;
use opencv::prelude::*;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

/// Decoded frames waiting for the change gate, with their coarse views (a 1280x720
/// frame is 2.8 MB, its coarse view 0.6 MB).
const FRAMES_AHEAD: usize = 8;
/// Images past the gate waiting for their look (only frames a look needs keep
/// theirs): enough that the decoding runs on well ahead while this thread works
/// through a moving table, few enough that memory stays flat however long the video
/// (8: 2.16 s and 187 MB on the bundled-size match; 16: 1.98 s, 208 MB; 40: 1.92 s,
/// 273 MB).
const IMAGES_AHEAD: usize = 16;
/// Frames past the change gate waiting for their look (those without an image
/// cost a few bytes): while this thread works through a moving table, the other
/// core decodes the still frames after it.
const GATED_AHEAD: usize = 512;
/// The same for a live source, in seconds of frames: a camera's frames wait at most
/// this long before the look falls behind and the source drops frames (512 frames
/// would be 17 s of latency at 30 frames/s).
const LIVE_GATED_AHEAD_S: f64 = 1.0;
/// Threads making coarse views.
const COARSE_WORKERS: usize = 2;
/// Floor shown around the table in the top view, mm: falling items are seen there.
const VIEW_MARGIN_MM: f64 = 40.0;

/// Frames from anything `vision` opens (a video file, a folder or glob of images,
/// `webcam:N`), checked against the calibration's image size.
pub struct VideoSource {
    spec: String,
    reader: FrameReader,
    coarse: TopViews,
    /// The first frame given (a resumed file, a camera numbered on).
    first: FrameIdx,
    /// What happens to a live source, and the bump checks' findings.
    camera: Option<CameraLog>,
    /// Opened by `live` (a camera, a stream, a file read as one).
    live: bool,
    /// A file read at its frame rate times this (a live source: none).
    pace: Option<f64>,
}

/// How often a live source's reading is looked at while no frame comes.
const STALL_TICK: Duration = Duration::from_millis(100);
/// No frame for this long (or for [`STALL_FRAMES`] frames' time, when longer) is a
/// lost camera, told at once: a stream that stalls can keep a read waiting for
/// seconds before it fails (OpenCV's read timeout is 10 s).
const STALL_S: f64 = 2.0;
const STALL_FRAMES: f64 = 10.0;
/// The same before the first frame: a network stream waits for its first key frame.
const FIRST_STALL_S: f64 = 10.0;

/// Watches a live source for frames that stop coming.
struct StallWatch {
    /// The frame period, seconds (paced: as read).
    period_s: f64,
    /// The frame expected next.
    next: FrameIdx,
    /// Whether any frame came yet.
    started: bool,
    waited: Duration,
    /// Told as lost since the last frame.
    told: bool,
}

impl StallWatch {
    fn new(fps: f64, pace: Option<f64>, first: FrameIdx) -> StallWatch {
        StallWatch {
            period_s: 1.0 / (fps * pace.unwrap_or(1.0)).max(1e-3),
            next: first,
            started: false,
            waited: Duration::ZERO,
            told: false,
        }
    }

    /// A frame came.
    fn frame(&mut self, index: FrameIdx) {
        self.next = index + 1;
        self.started = true;
        self.waited = Duration::ZERO;
        self.told = false;
    }

    /// No frame came for `more`: the camera note to leave when that makes a stall.
    fn waited(&mut self, more: Duration) -> Option<CameraNote> {
        self.waited += more;
        let limit = if self.started {
            STALL_S.max(STALL_FRAMES * self.period_s)
        } else {
            FIRST_STALL_S.max(STALL_FRAMES * self.period_s)
        };
        if self.told || self.waited.as_secs_f64() < limit {
            return None;
        }
        self.told = true;
        Some(CameraNote {
            at: self.next,
            state: CameraState::Lost,
            skipped: None,
            detail: format!("no frame for {:.1} s", self.waited.as_secs_f64()),
            bump: None,
        })
    }
}

/// How `live` reads a source (the frame reader's own options).
pub use crate::vision::topview::FeedOptions as LiveOptions;

impl VideoSource {
    /// Opens `spec` for an analysis under `settings`.
    pub fn open(spec: &str, settings: &Settings) -> Result<VideoSource, DriverError> {
        let reader = FrameReader::open(spec, settings.calibration.camera.image_size)?;
        // A bump found is told as a `camera` event, through the log.
        let log = settings.recalibrate.then(CameraLog::default);
        let mut source = VideoSource::reading(spec, reader, settings, 0, log, None)?;
        source.live = false;
        Ok(source)
    }

    /// A source of `reader`'s frames, with the coarse views its change gate needs.
    fn reading(
        spec: &str,
        reader: FrameReader,
        settings: &Settings,
        first: FrameIdx,
        camera: Option<CameraLog>,
        pace: Option<f64>,
    ) -> Result<VideoSource, DriverError> {
        let coarse = TopViews::coarse(
            &settings.calibration,
            COARSE_MM_PER_PX.max(settings.mm_per_px),
            VIEW_MARGIN_MM,
        )?;
        Ok(VideoSource {
            spec: spec.to_string(),
            reader,
            coarse,
            first,
            camera,
            live: true,
            pace,
        })
    }

    /// Opens `spec` for `live`: a camera, a stream or a file, read as `options` say;
    /// what happens to it is told as `camera` events.
    pub fn open_live(
        spec: &str,
        settings: &Settings,
        options: LiveOptions,
    ) -> Result<VideoSource, DriverError> {
        let log = CameraLog::default();
        let notes = log.clone();
        let pace = options.pace;
        let first = options.first;
        let feed = Feed {
            options,
            fps: settings.fps,
            notes: Box::new(move |note| notes.push(camera_note(note))),
        };
        let reader = FrameReader::open_feed(spec, settings.calibration.camera.image_size, feed)?;
        VideoSource::reading(spec, reader, settings, first, Some(log), pace)
    }
}

/// A reader's note as the driver's.
fn camera_note(note: FeedNote) -> CameraNote {
    match note {
        FeedNote::Connected { at, detail } => CameraNote {
            at,
            state: CameraState::Connected,
            skipped: None,
            detail,
            bump: None,
        },
        FeedNote::Lost { at, detail } => CameraNote {
            at,
            state: CameraState::Lost,
            skipped: None,
            detail,
            bump: None,
        },
        FeedNote::Reconnected {
            at,
            skipped,
            detail,
        } => CameraNote {
            at,
            state: CameraState::Reconnected,
            skipped: Some((at - skipped, skipped)),
            detail,
            bump: None,
        },
        FeedNote::Dropped { first, count } => CameraNote {
            at: first + count,
            state: CameraState::FramesDropped,
            skipped: Some((first, count)),
            detail: format!(
                "frames {first} to {} dropped: the analysis fell behind the source",
                first + count - 1
            ),
            bump: None,
        },
    }
}

impl FrameSource for VideoSource {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            spec: self.spec.clone(),
            fps: self.reader.fps(),
            frames: self.reader.len(),
            first: self.first,
        }
    }

    fn camera_log(&self) -> Option<CameraLog> {
        self.camera.clone()
    }

    fn run(
        self,
        settings: &Settings,
        on_frame: &mut dyn FnMut(Step<'_>) -> Result<Flow, DriverError>,
    ) -> Result<SourceEnd, DriverError> {
        let VideoSource {
            reader,
            coarse,
            first: self_first,
            camera: log,
            live,
            pace,
            spec,
        } = self;
        let reader_fps = settings.fps_for(reader.fps());
        let gated_ahead = if live {
            let fps = settings.fps_for(reader.fps());
            ((LIVE_GATED_AHEAD_S * fps).ceil() as usize).max(FRAMES_AHEAD)
        } else {
            GATED_AHEAD
        };
        let game = &settings.game;
        let players = game.player_count();
        // Tops of tags and coins stand above the table; where they really are depends
        // on where the camera looks from.
        let mut camera = settings.calibration.camera_position_mm();
        let mut bumps = settings
            .recalibrate
            .then(|| BumpWatch::new(&settings.calibration, reader_fps));
        let mut stopped: Option<String> = None;
        // Other threads decode, make the coarse views and run the change gate while
        // this one looks and tracks, side by side on the two cores: OpenCV's capture
        // decodes on one thread, the coarse views are made on two, and the gate, which
        // needs no look's result (see `FrameGate`), runs ahead on its own. Frames the
        // gate lets through without an image cost nothing to keep, so while this
        // thread works through a moving table the decoding runs on through the still
        // table after it.
        let pool = FramePool::default();
        // The stages below already keep both cores busy; OpenCV's own thread pool
        // (splitting each remap) would only add hand-offs between them.
        crate::vision::capture::use_one_opencv_thread()?;
        let stats = std::thread::scope(|scope| -> Result<_, DriverError> {
            let views = stream_views(scope, reader, &coarse, &pool, COARSE_WORKERS, FRAMES_AHEAD);
            let gate = FrameGate::new(coarse.grid(), settings.every_frame);
            let mut gated = gate_views(scope, views, gate, gated_ahead, IMAGES_AHEAD);
            // Built while the first frames decode.
            let full = TopViews::new(&settings.calibration, settings.mm_per_px, VIEW_MARGIN_MM)?;
            let view_area = grid_area(&full.grid());
            let colours: Vec<[u8; 3]> = game
                .players
                .iter()
                .map(|p| p.rgb().unwrap_or([0, 0, 0]))
                .collect();
            let detector = Detector::new(
                &game.items,
                &colours,
                settings.calibration.table.clone(),
                DetectorConfig {
                    coin_streaks: settings.streaks,
                    ..DetectorConfig::default()
                },
            )
            .seen_through(settings.calibration.table_from_undistorted.inverse())
            .looked_at_from(camera);
            let mut watcher = Watcher::new(full, coarse.grid(), detector, players)
                .always_whole(settings.every_frame);
            // A camera or stream is watched for frames that stop coming; a file
            // (paced or not) cannot be lost, and is read as `analyse` reads it.
            let mut watch = (live && crate::vision::capture::is_live_spec(&spec))
                .then(|| StallWatch::new(reader_fps, pace, self_first));
            loop {
                let item = match watch.as_mut() {
                    None => gated.next_frame(),
                    Some(w) => match gated.next_frame_timeout(STALL_TICK) {
                        Ok(item) => Some(item),
                        Err(RecvTimeoutError::Disconnected) => None,
                        Err(RecvTimeoutError::Timeout) => {
                            if let (Some(mut note), Some(log)) = (w.waited(STALL_TICK), &log) {
                                note.detail = format!("{spec}: {}", note.detail);
                                log.push(note);
                            }
                            if on_frame(Step::Waiting)? == Flow::Stop {
                                break;
                            }
                            continue;
                        }
                    },
                };
                let Some(item) = item else { break };
                let Gated {
                    index,
                    change,
                    frame,
                } = match item {
                    Ok(x) => x,
                    Err(e @ TopViewError::SizeMismatch { .. }) => return Err(e.into()),
                    Err(e) => {
                        stopped = Some(format!("{e}"));
                        break;
                    }
                };
                let mut seen = watcher.look(frame.as_ref(), &change)?;
                // At a rest (a settled frame looked at afresh), now and then: has the
                // camera been bumped? From a re-fit on, what the views (made with the
                // first calibration) show is put where the re-fitted one says.
                if let (Some(bumps), Some(image)) = (bumps.as_mut(), frame.as_ref()) {
                    let whole = change
                        .since_reference
                        .is_some_and(|b| box_area(&b) > BUMP_VIEW_SHARE * view_area);
                    if let Some(note) = bumps.look(index, &image.image, change.settled, whole)? {
                        camera = bumps.current.camera_position_mm();
                        if let Some(log) = &log {
                            log.push(note);
                        }
                    }
                }
                if let Some(to_table) = bumps.as_ref().and_then(|b| b.to_table) {
                    seen = onto_table(seen, &to_table);
                }
                if let Some(frame) = frame {
                    pool.give(frame.image);
                    gated.done_with_image();
                }
                if let Some(camera) = &camera {
                    seen = seen.seen_from(camera, &game.items, watcher.footprint());
                }
                let dets = seen.to_frame_detections(index, players, watcher.footprint());
                if let Some(w) = watch.as_mut() {
                    w.frame(index);
                }
                if on_frame(Step::Frame(&dets))? == Flow::Stop {
                    break;
                }
            }
            Ok(watcher.stats())
        })?;
        Ok(SourceEnd {
            stopped,
            looked: Some(LookSummary {
                pixel_share: stats.pixel_share,
                wholes: stats.wholes,
                parts: stats.parts,
                reused: stats.reused,
            }),
        })
    }
}

/// At most one bump check in this much video (seconds) at rests where little
/// changed; a rest after a change over most of the view (the picture itself moved)
/// is always checked. A check costs about 50 ms at 1280x720.
const BUMP_CHECK_EVERY_S: f64 = 1.0;
/// A change over this share of the whole view is checked for a bump at once.
const BUMP_VIEW_SHARE: f64 = 0.5;

/// Watches for a bumped camera: the table's outline at rests checked against the
/// calibration in use (`calibration::refit`), re-fitted when it moved.
struct BumpWatch {
    /// The calibration the top views were made with (undistorted px to mm).
    built: Homography,
    /// The calibration in use.
    current: TableCalibration,
    /// The views' mm to the table's, once a re-fit differs from `built`.
    to_table: Option<Homography>,
    /// Frames between two checks at quiet rests.
    every: u64,
    last: Option<FrameIdx>,
    /// The last bump's re-fit was refused (told once, until a re-fit or the table
    /// is back).
    refused: bool,
    /// The checks failed for a reason no later frame mends (a bug): stop checking.
    off: bool,
}

impl BumpWatch {
    fn new(calibration: &TableCalibration, fps: f64) -> BumpWatch {
        BumpWatch {
            built: calibration.table_from_undistorted,
            current: calibration.clone(),
            to_table: None,
            every: (BUMP_CHECK_EVERY_S * fps).round().max(1.0) as u64,
            last: None,
            refused: false,
            off: false,
        }
    }

    /// A frame looked at with its image: checked when it is the first, or a settled
    /// one (a rest) and a check is due (`whole`: the change since the last rest
    /// covered most of the view, a check is due at once). The note to tell when the
    /// calibration in use changed, or a re-fit was refused.
    fn look(
        &mut self,
        index: FrameIdx,
        image: &opencv::core::Mat,
        settled: bool,
        whole: bool,
    ) -> Result<Option<CameraNote>, DriverError> {
        let first = self.last.is_none();
        let due = self.last.is_none_or(|l| index >= l + self.every);
        if self.off || !(first || (settled && (due || whole))) {
            return Ok(None);
        }
        self.last = Some(index);
        let owned;
        let image = if image.is_continuous() {
            image
        } else {
            owned = image
                .try_clone()
                .map_err(crate::vision::topview::TopViewError::from)?;
            &owned
        };
        let (w, h) = (image.cols().max(0) as usize, image.rows().max(0) as usize);
        let bytes = image
            .data_bytes()
            .map_err(crate::vision::topview::TopViewError::from)?;
        let found = BgrFrame::new(w, h, 3 * w, bytes).and_then(|frame| self.check(frame));
        let bump = match found {
            Ok(bump) => bump,
            // A frame or a calibration the checks cannot use: no later frame mends it.
            Err(_) => {
                self.off = true;
                None
            }
        };
        let Some(bump) = bump else {
            return Ok(None);
        };
        let detail = match &bump.refit {
            Ok(_) if self.refused => {
                format!(
                    "the table is back where the calibration in use puts it ({:.1} mm): the shots from here are measured right again",
                    bump.shift_mm
                )
            }
            Ok(_) => format!(
                "the camera was bumped: the table's outline moved {:.1} mm at its edges; re-fitted from this frame, the match goes on with the new table calibration",
                bump.shift_mm
            ),
            Err(why) if self.refused => {
                // Told once; the shots stay doubtful.
                let _ = why;
                return Ok(None);
            }
            Err(why) => format!(
                "the camera was bumped: the table's outline moved {:.1} mm at its edges, and the table could not be re-fitted ({why}); the shots from here may be scored wrong: calibrate the table again",
                bump.shift_mm
            ),
        };
        self.refused = bump.refit.is_err();
        Ok(Some(CameraNote {
            at: index,
            state: CameraState::Bumped,
            skipped: None,
            detail,
            bump: Some(bump),
        }))
    }

    /// The bump check on `frame` against the calibration in use; when the table
    /// moved (and the re-fit's denser reading agrees), the re-fit, put in use.
    /// `None`: nothing to tell (still, or too little seen to tell).
    fn check(&mut self, frame: BgrFrame<'_>) -> Result<Option<BumpNote>, RefitError> {
        let check = check_bump(frame, &self.current, &OutlineSearch::CHECK)?;
        let shift_mm = check.shift_mm.unwrap_or_default();
        match check.verdict {
            BumpVerdict::Unknown => return Ok(None),
            // Back where the calibration in use puts it after a refused re-fit.
            BumpVerdict::Still if self.refused => {
                return Ok(Some(BumpNote {
                    shift_mm,
                    refit: Ok(Box::new(self.current.file.clone())),
                }))
            }
            BumpVerdict::Still => return Ok(None),
            BumpVerdict::Moved => {}
        }
        let refused = |why: String| {
            Ok(Some(BumpNote {
                shift_mm,
                refit: Err(why),
            }))
        };
        let refit = match refit_table(frame, &self.current, &OutlineSearch::REFIT) {
            Ok(refit) => refit,
            Err(e @ (RefitError::NotFound(_) | RefitError::Disagrees(_))) => {
                return refused(e.to_string())
            }
            Err(e) => return Err(e),
        };
        if let Some(doubt) = refit.doubt {
            return refused(RefitError::Disagrees(Box::new(doubt)).to_string());
        }
        // A reading every pixel that does not find the move: an item or a hand
        // at an edge misread by the sparser check.
        if refit.moved.verdict != BumpVerdict::Moved {
            return Ok(None);
        }
        let Ok(calibration) = TableCalibration::from_file(refit.file.clone(), "the re-fit") else {
            return refused("the re-fitted calibration is degenerate".into());
        };
        let to_table = Homography::from_matrix(
            calibration.table_from_undistorted.matrix() * self.built.inverse().matrix(),
        );
        let Some(to_table) = to_table else {
            return refused("the re-fitted calibration is degenerate".into());
        };
        self.to_table = Some(to_table);
        self.current = calibration;
        Ok(Some(BumpNote {
            shift_mm: refit.moved.shift_mm.unwrap_or(shift_mm),
            refit: Ok(Box::new(refit.file)),
        }))
    }
}

fn box_area(b: &MmBox) -> f64 {
    let d = b.max - b.min;
    d.x.max(0.0) * d.y.max(0.0)
}

fn grid_area(g: &crate::detect::TopGrid) -> f64 {
    g.width as f64 * g.height as f64 * g.mm_per_px * g.mm_per_px
}

/// What the views show, in the views' mm (the first calibration's), put where the
/// calibration in use puts it: `to_table` maps the one to the other on the table's
/// plane (both calibrations share the camera's intrinsics, so a pixel undistorted is
/// the same pixel for both). Before the height correction: that one needs the
/// camera's new position.
fn onto_table(mut seen: Sightings, to_table: &Homography) -> Sightings {
    let map = |p: crate::geometry::Point| to_table.apply(p);
    for f in &mut seen.fish {
        let p = f.pose.point();
        let q = map(p);
        if let Some(theta) = f.pose.theta {
            // The heading: where a point 10 mm ahead goes.
            let ahead = map(p + nalgebra::Vector2::new(theta.cos(), theta.sin()) * 10.0);
            f.pose.theta = Some((ahead.y - q.y).atan2(ahead.x - q.x));
        }
        f.pose.x = q.x;
        f.pose.y = q.y;
    }
    for c in &mut seen.coins {
        c.pt_in_table = map(c.pt_in_table);
        if let Some(s) = &mut c.streak {
            s.from = map(s.from);
            s.to = map(s.to);
        }
    }
    for o in &mut seen.occluders {
        o.0 = map(o.0);
    }
    for t in &mut seen.strangers {
        t.centre = map(t.centre);
    }
    seen
}
