//! The analysis driver: frames from any source → detections → tracks → shots → rules,
//! emitting each shot and event as soon as it is known. Used by `analyse` and `live`.
//!
//! - [`FrameSource`]: where each frame's detections come from — a video file, a
//!   folder of images or a camera through `vision` ([`VideoSource`], with the
//!   `opencv` feature: decoding, coarse views, change gate and looks on threads of
//!   their own), or detections recorded before ([`Recorded`]: tests, `--detections`
//!   files).
//! - [`Settings`]: what the analysis is told (set-up, calibration, scale, flags),
//!   resolved already: no command-line types here.
//! - [`Listener`]: gets every [`EventLine`] (events.rs, documented in docs/live.md)
//!   the moment it is known, every frame's detections and the progress.
//! - [`run`]: one clip, returning the [`Outcome`] (the record and match state);
//!   [`Chain`] carries a match from one clip into the next.
//! - [`start`]: where a clip starts mid-match; [`journal`]: the events on disk, and
//!   where a match stood when they stop.
//! - [`board`]: the scoreboard page `live` serves; a referee's amendment from it (or
//!   the undoing of one) is made between two frames ([`Listener::amendment`],
//!   `amending.rs`, through `amend`).
//!
//! Uses: model, config, geometry, calibration, record, rules, amend, track, pipeline,
//! limits; vision (capture and top views) for [`VideoSource`] only.

mod amending;
pub mod board;
pub mod events;
pub mod journal;
mod kept;
mod recorded;
pub mod start;
#[cfg(feature = "opencv")]
mod video;

pub use amending::{AmendAsk, Correction};
pub use events::{
    CameraState, Duty, Event, EventLine, MadeBefore, ScoreChange, TableShape, EVENT_VERSION,
};
pub use journal::{Journal, JournalError, JournalRead, ResumePoint};
pub use kept::KeptShots;
pub use recorded::Recorded;
pub use start::{Start, StartError};
#[cfg(feature = "opencv")]
pub use video::{LiveOptions, VideoSource};

use crate::calibration::TableCalibration;
use crate::config::Game;
use crate::model::{FrameIdx, PlayerIdx};
use crate::pipeline::{Analysis, PipelineError};
use crate::record::{PutBack, Recalibrated, Record, VideoInfo};
use crate::rules::MatchState;
use crate::track::{FrameDetections, StrangerTag};

/// Why an analysis could not run to a record.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{video}: no frame could be read ({why})")]
    NoFrameRead { video: String, why: String },
    #[error("{0}: the video has no frames")]
    NoFrames(String),
    /// A listener could not take an event or a frame (writing it failed).
    #[error("{what}: {source}")]
    Output {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line}: not a frame's detections ({source})")]
    Detections {
        path: String,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The file the judged shots are kept in ([`Settings::keep_shots_in`]).
    #[error("the judged shots' file {path}: {source}")]
    Kept {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[cfg(feature = "opencv")]
    #[error(transparent)]
    TopView(#[from] crate::vision::topview::TopViewError),
    #[cfg(feature = "opencv")]
    #[error(transparent)]
    Capture(#[from] crate::vision::capture::CaptureError),
}

/// What an analysis is told, resolved: no command-line types.
#[derive(Debug, Clone)]
pub struct Settings {
    pub game: Game,
    pub calibration: TableCalibration,
    /// Scale of the top view the detector works on, mm per pixel.
    pub mm_per_px: f64,
    /// Frames per second when the source's own figure is wrong or missing.
    pub fps: Option<f64>,
    /// Detect on the whole table in every frame (not only where it changed).
    pub every_frame: bool,
    /// Also look for coins as motion-blur streaks.
    pub streaks: bool,
    /// Watch for a bumped camera: at rest, now and then, the table's outline checked
    /// against the calibration in use, and re-fitted when it moved (`live` by
    /// default, `analyse --recalibrate`; [`VideoSource`] only).
    pub recalibrate: bool,
    /// Keep the shots judged in a file in this folder, not in memory (`live`: a match
    /// of hours would otherwise hold every shot's tracks until its end); the
    /// outcome's record then has none, and [`Outcome::kept`] reads them.
    pub keep_shots_in: Option<std::path::PathBuf>,
}

impl Settings {
    /// Defaults for everything but the set-up and the calibration: 1 mm per pixel,
    /// the source's frame rate, the change gate on, no streaks.
    pub fn new(game: Game, calibration: TableCalibration) -> Settings {
        Settings {
            game,
            calibration,
            mm_per_px: 1.0,
            fps: None,
            every_frame: false,
            streaks: false,
            recalibrate: false,
            keep_shots_in: None,
        }
    }

    /// The frame rate the analysis runs at: the one given, else the source's when
    /// within the limits (outside them it is a damaged header), else 30.
    pub fn fps_for(&self, source: Option<f64>) -> f64 {
        let source =
            source.filter(|f| (crate::limits::MIN_FPS..=crate::limits::MAX_FPS).contains(f));
        self.fps.or(source).unwrap_or(30.0)
    }
}

/// What a source says about itself before its first frame.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceInfo {
    /// What it was opened from (a path, `webcam:0`).
    pub spec: String,
    /// Its frame rate, if it says.
    pub fps: Option<f64>,
    /// How many frames it holds, if it says (a file's container claim; none for a camera).
    pub frames: Option<u64>,
    /// The index of the first frame it gives (0 for a file read from its start; a
    /// resume goes on from a later one): frames missing after it are damaged.
    pub first: FrameIdx,
}

/// How much of the view the looks covered ([`VideoSource`] only).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LookSummary {
    /// Pixels looked at over pixels in all frames' whole views.
    pub pixel_share: f64,
    pub wholes: u64,
    pub parts: u64,
    pub reused: u64,
}

/// How a source's run ended.
#[derive(Debug, Clone, Default)]
pub struct SourceEnd {
    /// Why reading stopped before the source's end (damage too long to read past);
    /// `None`: read to the end, or stopped on request.
    pub stopped: Option<String>,
    pub looked: Option<LookSummary>,
}

/// Whether a source goes on after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Go,
    Stop,
}

/// Something that happened to a live source (a camera, a stream, a file read at its
/// frame rate), told as a `camera` event when the driver reaches frame `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraNote {
    /// The first frame after it happened.
    pub at: FrameIdx,
    pub state: CameraState,
    /// Frames that never reached the analysis: the first and how many (dropped
    /// behind a paced source, missed while a camera was lost). They are not damage.
    pub skipped: Option<(FrameIdx, u64)>,
    pub detail: String,
    /// For [`CameraState::Bumped`]: what the bump check found and did.
    pub bump: Option<BumpNote>,
}

/// A bumped camera, as the source found it at a rest: the table's outline moved in
/// the picture, and the calibration used from then on.
#[derive(Debug, Clone, PartialEq)]
pub struct BumpNote {
    /// How far the outline lay from the calibration in use (mm, worst at the edges).
    pub shift_mm: f64,
    /// The table calibration used from the note's frame on (a re-fit, or the one
    /// in use when the table is back where it puts it); `Err`: why the re-fit was
    /// refused, the calibration left as it was.
    pub refit: Result<Box<crate::calibration::TableFile>, String>,
}

/// Where a live source leaves its [`CameraNote`]s for the driver (shared with the
/// source's reading thread).
#[derive(Debug, Clone, Default)]
pub struct CameraLog(std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<CameraNote>>>);

impl CameraLog {
    pub fn push(&self, note: CameraNote) {
        if let Ok(mut notes) = self.0.lock() {
            notes.push_back(note);
        }
    }

    /// The loss noted next, when frames stopped after frame `last`: known as soon as
    /// `last` is analysed, before any frame of the source opened again comes.
    pub fn take_lost_after(&self, last: FrameIdx) -> Option<CameraNote> {
        let mut notes = self.0.lock().ok()?;
        let front = notes.front()?;
        if front.state == CameraState::Lost && front.at <= last + 1 {
            notes.pop_front()
        } else {
            None
        }
    }

    /// The notes up to frame `upto` (all with `None`), in order.
    pub fn take(&self, upto: Option<FrameIdx>) -> Vec<CameraNote> {
        let Ok(mut notes) = self.0.lock() else {
            return Vec::new();
        };
        let n = notes
            .iter()
            .take_while(|c| upto.is_none_or(|u| c.at <= u))
            .count();
        notes.drain(..n).collect()
    }
}

/// What a source hands the driver.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// The next frame's detections.
    Frame(&'a FrameDetections),
    /// No frame came for a moment (a live source waiting on its camera): every frame
    /// read so far has been handed over, so what the [`CameraLog`] says happened after
    /// the last one (a camera lost) is told now, not when frames come again.
    Waiting,
}

/// Where frames come from, as each frame's detections, in frame order.
pub trait FrameSource {
    fn info(&self) -> SourceInfo;

    /// Where a live source tells what happens to it (none for a file read as fast
    /// as it decodes, or recorded detections).
    fn camera_log(&self) -> Option<CameraLog> {
        None
    }

    /// Reads the source to its end, or until `frame` says [`Flow::Stop`], handing
    /// `frame` every frame's detections in order (their `frame` is the source's
    /// index: a frame that could not be read leaves a gap), and, for a live source,
    /// [`Step::Waiting`] now and then while no frame comes. Damage that ends the
    /// reading early is [`SourceEnd::stopped`], not an error: what was read stands.
    fn run(
        self,
        settings: &Settings,
        frame: &mut dyn FnMut(Step<'_>) -> Result<Flow, DriverError>,
    ) -> Result<SourceEnd, DriverError>;
}

/// Gets what the driver knows, as soon as it knows it. Every method has a default
/// that does nothing.
pub trait Listener {
    /// Before the first frame.
    fn begin(&mut self, _info: &SourceInfo) {}

    /// An event (see [`Event`]).
    fn event(&mut self, _line: &EventLine) -> Result<(), DriverError> {
        Ok(())
    }

    /// A judged shot's record, as the `shot_record` line a journal keeps (told just
    /// before the shot's `shot_over`; not an event to show).
    fn shot_record(&mut self, _line: &EventLine) -> Result<(), DriverError> {
        Ok(())
    }

    /// A frame's detections, after the pipeline took them.
    fn detections(&mut self, _dets: &FrameDetections) -> Result<(), DriverError> {
        Ok(())
    }

    /// Frames read so far (the last one's index + 1).
    fn progress(&mut self, _frames: u64) {}

    /// Asked after every frame (and while a live source waits for its camera): a
    /// referee's amendment to make now, or one to undo ([`Correction`], from the
    /// scoreboard page), if one waits. It is made on every shot judged so far, the
    /// match re-scored, and told as an `amended` event (with the changed shots'
    /// `shot_record`s); its answer goes back through the [`AmendAsk`].
    fn amendment(&mut self) -> Option<AmendAsk> {
        None
    }

    /// Asked after every frame: true ends the analysis there (Ctrl-C, the match over),
    /// and the record covers what was read.
    fn stop(&mut self) -> bool {
        false
    }
}

/// A listener that keeps every event (tests, tools).
#[derive(Debug, Default)]
pub struct Collect {
    pub events: Vec<EventLine>,
    pub frames: u64,
}

impl Listener for Collect {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        self.events.push(line.clone());
        Ok(())
    }

    fn progress(&mut self, frames: u64) {
        self.frames = frames;
    }
}

/// Every event also written to a journal.
impl Listener for Journal {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        Ok(self.append(line)?)
    }
}

/// One clip analysed.
#[derive(Debug)]
pub struct Outcome {
    pub record: Record,
    /// The match state after its last shot.
    pub state: MatchState,
    /// Players whose colour never showed.
    pub unseen: Vec<PlayerIdx>,
    /// Whole tags of a colour no player has, as first reported.
    pub strangers: Vec<StrangerTag>,
    /// Frames up to the last one read (damaged ones among them).
    pub frames: u64,
    pub looked: Option<LookSummary>,
    /// The one line saying what damaged frames there were and what they may change.
    pub damage: Option<String>,
    /// Whether a listener ended it before the source's end.
    pub stopped_on_request: bool,
    /// With [`Settings::keep_shots_in`]: the shots of `record`, which holds none.
    pub kept: Option<KeptRecord>,
}

/// A record's shots kept in a file ([`Settings::keep_shots_in`]), with the notes
/// the end of the analysis added to them (damaged frames, a bump not re-fitted).
#[derive(Debug)]
pub struct KeptRecord {
    shots: KeptShots,
    own: std::ops::Range<usize>,
    notes: std::collections::BTreeMap<usize, Vec<String>>,
}

impl KeptRecord {
    /// How many shots the record has.
    pub fn len(&self) -> usize {
        self.own.len()
    }

    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// The record's shots in order, read one at a time, as they would be in
    /// `Outcome::record` had they been kept in memory.
    pub fn shots(&mut self) -> impl Iterator<Item = Result<crate::record::Shot, DriverError>> + '_ {
        let notes = &self.notes;
        self.shots.read(self.own.clone()).map(move |shot| {
            let mut shot = shot?;
            shot.notes
                .extend(notes.get(&shot.index).into_iter().flatten().cloned());
            Ok(shot)
        })
    }

    /// Bytes of the file they are kept in.
    pub fn bytes(&self) -> u64 {
        self.shots.bytes()
    }
}

/// Analyses one clip from `source`, starting from `start` (mid-match) or the start
/// of a match, telling `listener` everything as it is known.
pub fn run<S: FrameSource, L: Listener + ?Sized>(
    settings: &Settings,
    start: Option<&Start>,
    source: S,
    listener: &mut L,
) -> Result<Outcome, DriverError> {
    let info = source.info();
    let fps = settings.fps_for(info.fps);
    let game = &settings.game;
    let mut analysis = Analysis::new(
        game,
        settings.calibration.table.clone(),
        fps,
        start.map(|s| &s.poses),
        start.and_then(|s| s.state.clone()),
    )?;
    listener.begin(&info);
    let camera = source.camera_log();
    let mut tell = Teller {
        fps,
        duties: analysis.state().duties.clone(),
        said: 0,
        lost: false,
        flicked: None,
        // A fresh clip's first move has no ready frame (the rules judge no delay
        // for it: the match starts when the players are ready); a start's is its first.
        ready: start.map(|_| info.first),
        late_told: false,
        over: false,
        recalibrations: Vec::new(),
    };
    let state = analysis.state();
    // The shots judged before this clip, which an amendment is made on too.
    let mut earlier = start.map(|s| s.earlier.clone()).unwrap_or_default();
    // A resumed source starts at a later frame: the match is ready there.
    let first = info.first;
    let names: Vec<String> = game.players.iter().map(|p| p.name.clone()).collect();
    tell.emit(
        &mut *listener,
        first,
        first,
        Event::MatchReady {
            players: game.players.iter().map(|p| p.name.clone()).collect(),
            moves_per_player: game.moves_per_player,
            scores: state.scores.clone(),
            mover: state.next_player,
            poses: start.map(|s| s.poses.poses.clone()).unwrap_or_default(),
            table: Some(events::TableShape::new(
                settings.calibration.table.corners_mm(),
                &game.items,
            )),
            colors: game.players.iter().map(|p| p.color.clone()).collect(),
            amendments: made_before(&earlier, &names),
            amend_refused: refused_here(&earlier, state),
        },
    )?;
    let ready = move_ready(state);
    tell.emit(&mut *listener, first, first, ready)?;
    let mut kept = match &settings.keep_shots_in {
        Some(folder) => Some(Keeping {
            shots: KeptShots::create(folder)?,
            first: state.shots_judged,
            put: 0,
        }),
        None => None,
    };

    let mut frames: u64 = info.first;
    let mut damaged: Vec<FrameIdx> = Vec::new();
    // Frames a live source skipped (dropped, missed while lost): gaps, not damage.
    let mut skipped: Vec<(FrameIdx, u64)> = Vec::new();
    let mut on_request = false;
    let end = source.run(settings, &mut |step: Step<'_>| {
        let dets = match step {
            Step::Frame(dets) => dets,
            Step::Waiting => {
                // Every frame read is analysed: a camera lost after the last one is
                // told now (its note is about the frame after it), while the source
                // tries to open it again.
                let last = frames.max(first + 1) - 1;
                for note in camera
                    .as_ref()
                    .map(|c| c.take(Some(frames)))
                    .unwrap_or_default()
                {
                    skipped.extend(note.skipped);
                    tell.camera(&mut *listener, note, last)?;
                }
                tell.amend_asked(
                    &mut *listener,
                    settings,
                    &mut earlier,
                    &mut analysis,
                    kept.as_mut(),
                    last,
                )?;
                if listener.stop() {
                    on_request = true;
                    return Ok(Flow::Stop);
                }
                return Ok(Flow::Go);
            }
        };
        let index = dets.frame;
        let notes = camera
            .as_ref()
            .map(|c| c.take(Some(index)))
            .unwrap_or_default();
        skipped.extend(notes.iter().filter_map(|n| n.skipped));
        // A frame that failed to decode leaves a gap in the indices.
        damaged.extend((frames..index).filter(|f| !within(&skipped, *f)));
        analysis.push(index, dets)?;
        tell.shots(&mut *listener, &analysis, &damaged, index)?;
        if let Some(k) = kept.as_mut() {
            k.keep(&mut analysis)?;
        }
        tell.motion(&mut *listener, &analysis, index)?;
        // Told after the shots judged at this frame: their frames are earlier.
        for note in notes {
            tell.camera(&mut *listener, note, index)?;
        }
        // The source stopped after this frame: told now, whatever comes next.
        if let Some(note) = camera.as_ref().and_then(|c| c.take_lost_after(index)) {
            tell.camera(&mut *listener, note, index)?;
        }
        // Frames come again after a stall the source told as a loss, without
        // opening anything again (a stream that was only slow).
        else if tell.lost {
            tell.camera(
                &mut *listener,
                CameraNote {
                    at: index,
                    state: CameraState::Reconnected,
                    skipped: None,
                    detail: format!("{}: frames come again", info.spec),
                    bump: None,
                },
                index,
            )?;
        }
        listener.detections(dets)?;
        frames = index + 1;
        listener.progress(frames);
        tell.amend_asked(
            &mut *listener,
            settings,
            &mut earlier,
            &mut analysis,
            kept.as_mut(),
            index,
        )?;
        if listener.stop() {
            on_request = true;
            return Ok(Flow::Stop);
        }
        Ok(Flow::Go)
    })?;
    let mut stopped = end.stopped;
    if frames == info.first {
        return Err(match stopped {
            Some(why) => DriverError::NoFrameRead {
                video: info.spec,
                why,
            },
            None => DriverError::NoFrames(info.spec),
        });
    }
    if stopped.is_none() && !on_request {
        if let Some(expected) = info.frames.filter(|n| frames < *n) {
            stopped = Some(format!(
                "the file says {expected} frames; it may be truncated"
            ));
        }
    }
    let [width, height] = settings.calibration.camera.image_size;
    // Why each damaged frame was skipped, as the capture noted (a file read
    // through `vision`; recorded detections carry no reasons).
    #[cfg(feature = "opencv")]
    let damage = crate::vision::capture::damage_of(&info.spec, &damaged);
    #[cfg(not(feature = "opencv"))]
    let damage = Vec::new();
    let video = VideoInfo {
        path: info.spec,
        fps,
        frames,
        width,
        height,
        damage,
        damaged_frames: damaged,
        damaged_shots: Vec::new(),
        stopped,
        recalibrations: Vec::new(),
    };
    let unseen = analysis.colours_never_seen();
    let strangers = analysis.strangers().to_vec();
    analysis.close()?;
    tell.shots(
        &mut *listener,
        &analysis,
        &video.damaged_frames,
        frames.saturating_sub(1),
    )?;
    if let Some(camera) = &camera {
        for note in camera.take(None) {
            tell.camera(&mut *listener, note, frames.saturating_sub(1))?;
        }
    }
    if let Some(k) = kept.as_mut() {
        // Every shot a skeleton: the notes added below are then all a kept shot lacks.
        k.keep(&mut analysis)?;
    }
    let (mut record, state) = analysis.finish(video)?;
    mark_damage(&mut record);
    record.video.recalibrations = std::mem::take(&mut tell.recalibrations);
    mark_bump_doubt(&mut record);
    let damage = damage_warning(&record);
    let kept = kept.map(|k| {
        let own = k.first..k.first + record.shots.len();
        let notes = std::mem::take(&mut record.shots)
            .into_iter()
            .filter(|s| !s.notes.is_empty())
            .map(|s| (s.index, s.notes))
            .collect();
        KeptRecord {
            shots: k.shots,
            own,
            notes,
        }
    });
    Ok(Outcome {
        record,
        state,
        unseen,
        strangers,
        frames,
        looked: end.looked,
        damage,
        stopped_on_request: on_request,
        kept,
    })
}

/// The judged shots kept in a file ([`Settings::keep_shots_in`]) while the analysis
/// runs: each shot, once told, is written there and the analysis keeps only its
/// skeleton (what the driver reads of a shot told: its index, mover, frames).
struct Keeping {
    shots: KeptShots,
    /// The index of the analysis's first shot (the shots before are `earlier`).
    first: usize,
    /// The analysis's shots written to the file (and made skeletons) so far.
    put: usize,
}

impl Keeping {
    /// Writes the shots told since the last call to the file, and leaves the
    /// analysis their skeletons.
    fn keep(&mut self, analysis: &mut Analysis) -> Result<(), DriverError> {
        for shot in &analysis.shots()[self.put..] {
            self.shots.put(shot)?;
        }
        analysis.shed_judged(self.put, shed);
        self.put = analysis.shots().len();
        Ok(())
    }

    /// Every shot judged, whole: `earlier`'s, then the analysis's from the file.
    fn all(
        &mut self,
        earlier: &[crate::record::Shot],
        analysis: &Analysis,
    ) -> Result<Vec<crate::record::Shot>, DriverError> {
        let own = self
            .shots
            .read_all(self.first..self.first + analysis.shots().len())?;
        Ok(earlier.iter().cloned().chain(own).collect())
    }

    /// After an amendment: the shots it changed written again, and the whole shots
    /// it left in the analysis made skeletons.
    fn amended(
        &mut self,
        changed: &[crate::record::Shot],
        analysis: &mut Analysis,
    ) -> Result<(), DriverError> {
        for shot in changed.iter().filter(|s| s.index >= self.first) {
            self.shots.put(shot)?;
        }
        analysis.shed_judged(0, shed);
        Ok(())
    }
}

/// Leaves of a shot told, and of its judgement, what the driver still reads: which
/// shot it is, whose, its frames; who moved and whether it counted.
fn shed(shot: &mut crate::record::Shot, judgement: &mut crate::rules::ShotJudgement) {
    *shot = crate::record::Shot {
        index: shot.index,
        player: shot.player,
        flick_frame: shot.flick_frame,
        rest_frame: shot.rest_frame,
        ..crate::record::Shot::default()
    };
    *judgement = crate::rules::ShotJudgement {
        mover: judgement.mover,
        counted: judgement.counted,
        score: Vec::new(),
        points: Vec::new(),
        put_back: Vec::new(),
        violations: Vec::new(),
    };
}

/// Turns the pipeline's shots into events, each shot's once.
struct Teller {
    fps: f64,
    /// The duties pending before the next shot.
    duties: Vec<PutBack>,
    /// Shots told so far.
    said: usize,
    /// Whether the camera was told lost and not yet back.
    lost: bool,
    /// The shot whose `flick` was told as its motion started, not yet judged.
    flicked: Option<usize>,
    /// The frame the next move was ready at, as far as the driver knows (the last
    /// `move_ready`'s); none before a fresh clip's first move and once the match is over.
    ready: Option<FrameIdx>,
    /// Whether the next move's R11 5 was told as it happened.
    late_told: bool,
    /// The match is over: no motion is a flick any more.
    over: bool,
    /// Every bump check that found the table moved, in order.
    recalibrations: Vec<Recalibrated>,
}

impl Teller {
    fn emit<L: Listener + ?Sized>(
        &self,
        listener: &mut L,
        frame: FrameIdx,
        known_at: FrameIdx,
        event: Event,
    ) -> Result<(), DriverError> {
        listener.event(&EventLine::new(frame, known_at, self.fps, event))
    }

    /// Tells a live source's note as a `camera` event, known at frame `known_at`. A
    /// loss is told once: a stall the source noticed first and the read failure that
    /// ends it are one loss.
    fn camera<L: Listener + ?Sized>(
        &mut self,
        listener: &mut L,
        note: CameraNote,
        known_at: FrameIdx,
    ) -> Result<(), DriverError> {
        match note.state {
            CameraState::Lost if self.lost => return Ok(()),
            CameraState::Lost => self.lost = true,
            CameraState::Reconnected => self.lost = false,
            CameraState::Connected | CameraState::FramesDropped | CameraState::Bumped => {}
        }
        let bump = note.bump.as_ref();
        if let Some(b) = bump {
            self.recalibrations.push(Recalibrated {
                frame: note.at,
                shift_mm: round_mm(b.shift_mm),
                image_corners_px: b.refit.as_ref().ok().map(|t| t.image_corners_px.clone()),
                refused: b.refit.as_ref().err().cloned(),
            });
        }
        let event = Event::Camera {
            state: note.state,
            dropped: note.skipped.map(|(_, n)| n),
            detail: note.detail,
            shift_mm: bump.map(|b| round_mm(b.shift_mm)),
            table: bump.and_then(|b| b.refit.as_ref().ok().cloned()),
            refused: bump.and_then(|b| b.refit.as_ref().err().cloned()),
        };
        // A run of dropped frames is about its first; the others about `at`.
        let about = match (note.state, note.skipped) {
            (CameraState::FramesDropped, Some((first, _))) => first,
            _ => note.at,
        };
        let at = about.min(known_at);
        self.emit(listener, at, known_at, event)
    }

    /// Tells the shots judged since the last call, `known_at` the last frame read.
    fn shots<L: Listener + ?Sized>(
        &mut self,
        listener: &mut L,
        analysis: &Analysis,
        damaged: &[FrameIdx],
        known_at: FrameIdx,
    ) -> Result<(), DriverError> {
        // The driver tells after every frame, and a frame completes at most one
        // shot: only the last shot can be new, and the state is the one after it.
        while self.said < analysis.shots().len() {
            let k = self.said;
            debug_assert_eq!(k + 1, analysis.shots().len());
            self.said += 1;
            let after = k
                .checked_sub(1)
                .and_then(|j| analysis.shots().get(j))
                .map(|s| s.rest_frame);
            let lines = shot_events(analysis, k, &self.duties, damaged, after);
            // A flick told as its motion started is not told again: the judged
            // first item moved is the `shot_over`'s.
            let early = self.flicked.take() == Some(analysis.shots()[k].index);
            for (frame, event) in lines {
                if early && matches!(event, Event::Flick { .. }) {
                    continue;
                }
                let mut event = event;
                if let Event::ShotOver { notes, .. } = &mut event {
                    notes.extend(bump_doubt(&self.recalibrations, frame));
                }
                if matches!(event, Event::ShotOver { .. }) {
                    let record = Box::new(analysis.shots()[k].clone());
                    let line = EventLine::new(
                        frame,
                        known_at.max(frame),
                        self.fps,
                        Event::ShotRecord { record },
                    );
                    listener.shot_record(&line)?;
                }
                self.emit(&mut *listener, frame, known_at.max(frame), event)?;
            }
            let state = analysis.state();
            self.duties.clone_from(&state.duties);
            let rest = analysis.shots()[k].rest_frame;
            let next = if state.is_over() {
                self.ready = None;
                self.over = true;
                Event::MatchOver {
                    scores: state.scores.clone(),
                    shots: state.shots_judged,
                }
            } else {
                self.ready = Some(rest);
                self.late_told = false;
                move_ready(state)
            };
            self.emit(&mut *listener, rest, known_at.max(rest), next)?;
        }
        Ok(())
    }
}

impl Teller {
    /// Makes every amendment the listener has been asked for since the last frame.
    fn amend_asked<L: Listener + ?Sized>(
        &mut self,
        listener: &mut L,
        settings: &Settings,
        earlier: &mut Vec<crate::record::Shot>,
        analysis: &mut Analysis,
        mut kept: Option<&mut Keeping>,
        known_at: FrameIdx,
    ) -> Result<(), DriverError> {
        while let Some(ask) = listener.amendment() {
            self.amend(
                listener,
                settings,
                (earlier, kept.as_deref_mut()),
                analysis,
                &ask,
                known_at,
            )?;
        }
        Ok(())
    }

    /// Makes a referee's amendment or undo ([`amending::make`]) and tells it: the
    /// changed shots' records, the `amended` event, and `match_over` if the amended
    /// match is over. One the rules or the record refuse is answered and changes
    /// nothing.
    fn amend<L: Listener + ?Sized>(
        &mut self,
        listener: &mut L,
        settings: &Settings,
        (earlier, mut kept): (&mut Vec<crate::record::Shot>, Option<&mut Keeping>),
        analysis: &mut Analysis,
        ask: &AmendAsk,
        known_at: FrameIdx,
    ) -> Result<(), DriverError> {
        let shots = match kept.as_deref_mut() {
            Some(k) => k.all(earlier, analysis)?,
            None => earlier.iter().chain(analysis.shots()).cloned().collect(),
        };
        let made = match amending::make(settings, shots, earlier.len(), analysis, self.fps, ask)? {
            Ok(made) => made,
            Err(line) => {
                ask.answer(Err(line));
                return Ok(());
            }
        };
        *earlier = made.earlier;
        if let Some(k) = kept {
            k.amended(&made.records, analysis)?;
        }
        for record in made.records {
            let line = EventLine::new(
                record.rest_frame.min(known_at),
                known_at,
                self.fps,
                Event::ShotRecord {
                    record: Box::new(record),
                },
            );
            listener.shot_record(&line)?;
        }
        self.emit(&mut *listener, known_at, known_at, made.amended)?;
        self.duties.clone_from(&made.state.duties);
        if made.state.is_over() && !self.over {
            self.over = true;
            self.ready = None;
            let over = Event::MatchOver {
                scores: made.state.scores.clone(),
                shots: made.state.shots_judged,
            };
            self.emit(&mut *listener, known_at, known_at, over)?;
        }
        ask.answer(Ok(made.line));
        Ok(())
    }

    /// After each frame: a shot's motion starting is told as its `flick` at once (the
    /// first item moved is judged with the shot), motion that came to nothing as
    /// `flick_withdrawn`, and a move not flicked 30 s after it was ready as R11 5.
    fn motion<L: Listener + ?Sized>(
        &mut self,
        listener: &mut L,
        analysis: &Analysis,
        index: FrameIdx,
    ) -> Result<(), DriverError> {
        let state = analysis.state();
        let shot = state.shots_judged;
        let mover = state.next_player;
        match (self.flicked, analysis.in_shot()) {
            (None, true) if !self.over => {
                self.flicked = Some(shot);
                let event = Event::Flick {
                    shot,
                    mover,
                    first_moved: None,
                    first_moved_known: false,
                };
                return self.emit(listener, index, index, event);
            }
            (Some(k), false) => {
                // A judged shot clears `flicked` in `shots`: still set, the motion
                // ended without one.
                self.flicked = None;
                let event = Event::FlickWithdrawn {
                    shot: k,
                    mover,
                    detail: "the motion came to nothing: no item went anywhere".into(),
                };
                return self.emit(listener, index, index, event);
            }
            _ => {}
        }
        // R11 5 as it happens: only without duties, as the move is ready when the
        // put-backs are done, which is known only with the next shot.
        let Some(ready) = self.ready else {
            return Ok(());
        };
        if self.late_told || self.flicked.is_some() || !self.duties.is_empty() || index < ready {
            return Ok(());
        }
        let secs = (index - ready) as f64 / self.fps;
        if secs <= crate::rules::MAX_MOVE_SECONDS {
            return Ok(());
        }
        self.late_told = true;
        let event = Event::Violation {
            shot,
            code: "5".into(),
            player: mover,
            evidence: format!(
                "{secs:.1} s since the move was ready (frame {ready}) and no flick yet; at most {} s",
                crate::rules::MAX_MOVE_SECONDS
            ),
            fine: 0,
            judged: false,
        };
        self.emit(listener, index, index, event)
    }
}

/// The next move's `move_ready`, from the rules' state.
/// The amendments in force on `earlier` (the shots judged before this clip), for
/// `match_ready`: a page joining a resumed or continued match lists them.
fn made_before(earlier: &[crate::record::Shot], players: &[String]) -> Vec<events::MadeBefore> {
    let mut made: Vec<events::MadeBefore> = earlier
        .iter()
        .flat_map(|shot| {
            shot.amendments.iter().map(|a| events::MadeBefore {
                number: a.number,
                shot: shot.index,
                summary: crate::amend::summary(shot.index, a, players, false),
                why: a.why.clone(),
            })
        })
        .collect();
    made.sort_by_key(|m| m.number);
    made
}

/// Why this run will refuse amendments, said at its start: the rules judge a match
/// again from its first shot, and a start without the shots before it (a
/// state.json) has not got them (`amending::make` refuses with the same line).
fn refused_here(earlier: &[crate::record::Shot], state: &MatchState) -> Option<String> {
    (state.shots_judged != earlier.len()).then(|| amending::FROM_STATE.to_string())
}

fn move_ready(state: &MatchState) -> Event {
    Event::MoveReady {
        number: state.total_moves() + 1,
        shot: state.shots_judged,
        mover: state.next_player,
        duties: state.duties.iter().map(Duty::from).collect(),
    }
}

/// Shot `k`'s events in frame order: its interlude's put-backs, the flick, the items
/// lost, the violations, the shot over. `duties` were pending before it; `after` is
/// the previous shot's rest frame.
fn shot_events(
    analysis: &Analysis,
    k: usize,
    duties: &[PutBack],
    damaged: &[FrameIdx],
    after: Option<FrameIdx>,
) -> Vec<(FrameIdx, Event)> {
    let shot = &analysis.shots()[k];
    let judgement = analysis.judgement(k);
    let state = analysis.state();
    let index = shot.index;
    let mut out: Vec<(FrameIdx, Event)> = Vec::new();
    for p in shot.before.iter().flat_map(|b| &b.placed) {
        let named = p.item.to_string();
        let legal = !shot
            .violations
            .iter()
            .any(|v| v.code == "2.3" && v.frame == p.frame && v.evidence.contains(&named));
        out.push((
            p.frame,
            Event::PutBackSeen {
                shot: index,
                item: p.item,
                pose: p.pose,
                duty: duties.iter().find(|d| d.item == p.item).map(Duty::from),
                legal,
            },
        ));
    }
    out.push((
        shot.flick_frame,
        Event::Flick {
            shot: index,
            mover: shot.player,
            first_moved: shot.first_moved,
            first_moved_known: true,
        },
    ));
    for l in &shot.lost {
        out.push((
            l.frame,
            Event::ItemLost {
                shot: index,
                item: l.item,
                exit: l.exit,
            },
        ));
    }
    for v in &shot.violations {
        out.push((
            v.frame,
            Event::Violation {
                shot: index,
                code: v.code.clone(),
                player: v.player,
                evidence: v.evidence.clone(),
                fine: v.fine,
                judged: true,
            },
        ));
    }
    let mut notes = shot.notes.clone();
    let inside = damaged_in(damaged, after, shot.rest_frame);
    if !inside.is_empty() {
        notes.push(damage_note(&inside));
    }
    out.push((
        shot.rest_frame,
        Event::ShotOver {
            shot: index,
            mover: shot.player,
            counted: judgement.is_none_or(|j| j.counted),
            flick_frame: shot.flick_frame,
            first_moved: shot.first_moved,
            score: shot.score.clone(),
            points: judgement.map(|j| j.points.clone()).unwrap_or_default(),
            scores: state.scores.clone(),
            next_mover: state.next_player,
            moves_made: state.moves_made.clone(),
            rest: shot.end.clone(),
            off_table: state.off_table.iter().copied().collect(),
            duties: state.duties.iter().map(Duty::from).collect(),
            notes,
            paths: events::shot_paths(shot),
        },
    ));
    // Stable: events of one frame keep the order above.
    out.sort_by_key(|(frame, _)| *frame);
    out
}

/// Carries a match from clip to clip (`analyse --chain`): each clip starts where
/// the last came to rest, with its match state, and the records are merged.
#[derive(Debug, Default)]
pub struct Chain {
    start: Option<Start>,
    merged: Option<Record>,
    unseen: Option<Vec<PlayerIdx>>,
    strangers: Vec<StrangerTag>,
}

/// A chain's end: one record, the players whose colour showed in no clip, the
/// strangers seen in any.
#[derive(Debug, Clone)]
pub struct Chained {
    pub record: Record,
    pub unseen: Vec<PlayerIdx>,
    pub strangers: Vec<StrangerTag>,
}

impl Chain {
    /// A chain whose first clip starts at `start`.
    pub fn new(start: Option<Start>) -> Chain {
        Chain {
            start,
            ..Chain::default()
        }
    }

    /// Where the next clip starts.
    pub fn start(&self) -> Option<&Start> {
        self.start.as_ref()
    }

    /// Adds the next clip's outcome.
    pub fn add(&mut self, outcome: Outcome) {
        let Outcome {
            record,
            state,
            unseen,
            strangers,
            ..
        } = outcome;
        self.unseen = Some(match self.unseen.take() {
            None => unseen,
            Some(u) => u.into_iter().filter(|n| unseen.contains(n)).collect(),
        });
        self.strangers.extend(strangers);
        let next_poses = record.shots.last().map(|s| s.end.clone());
        self.merged = Some(match self.merged.take() {
            None => record,
            Some(mut m) => {
                m.video.path = format!("{} + {}", m.video.path, record.video.path);
                m.append_clip(record);
                m
            }
        });
        // The next clip opens where this one came to rest, with its match state.
        if let Some(poses) = next_poses {
            self.start = Some(Start::after_clip(poses, state));
        }
    }

    /// The merged record; `None` when no clip was added.
    pub fn finish(self) -> Option<Chained> {
        Some(Chained {
            record: self.merged?,
            unseen: self.unseen.unwrap_or_default(),
            strangers: self.strangers,
        })
    }
}

/// Whether `frame` falls in one of the `(first, count)` runs.
fn within(runs: &[(FrameIdx, u64)], frame: FrameIdx) -> bool {
    runs.iter()
        .any(|(first, n)| frame >= *first && frame < first.saturating_add(*n))
}

/// The damaged frames after `after` up to `rest`.
fn damaged_in(damaged: &[FrameIdx], after: Option<FrameIdx>, rest: FrameIdx) -> Vec<FrameIdx> {
    damaged
        .iter()
        .copied()
        .filter(|f| after.is_none_or(|a| *f > a) && *f <= rest)
        .collect()
}

fn damage_note(inside: &[FrameIdx]) -> String {
    format!(
        "{} could not be decoded whole and {} skipped: what happened then is unseen, so this shot's judgement may be wrong",
        frames_named(inside),
        if inside.len() == 1 { "was" } else { "were" }
    )
}

/// Marks the shots `record`'s damaged frames fall in: each falls in the first shot
/// whose rest frame is at or after it (see `VideoInfo::damaged_shots`), which says
/// so in its notes.
pub fn mark_damage(record: &mut Record) {
    let damaged = &record.video.damaged_frames;
    let mut after: Option<FrameIdx> = None;
    let mut shots = Vec::new();
    for shot in &mut record.shots {
        let inside = damaged_in(damaged, after, shot.rest_frame);
        after = Some(shot.rest_frame);
        if inside.is_empty() {
            continue;
        }
        shot.notes.push(damage_note(&inside));
        shots.push(shot.index);
    }
    record.video.damaged_shots = shots;
}

/// Bump checks' figures in mm are kept to a hundredth (the check's own doubt is tenths).
fn round_mm(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The note for a shot resting at `rest` when the last bump before it was not
/// re-fitted: it was measured with a table that is off.
fn bump_doubt(recalibrations: &[Recalibrated], rest: FrameIdx) -> Option<String> {
    let last = recalibrations.iter().rev().find(|r| r.frame <= rest)?;
    let why = last.refused.as_ref()?;
    Some(format!(
        "the camera was bumped at frame {} (the table {:.1} mm from where the calibration puts it) and could not be re-fitted ({why}): positions are off by up to that much, so this shot's judgement may be wrong",
        last.frame, last.shift_mm
    ))
}

/// Notes the shots measured after a bump that could not be re-fitted (see
/// [`bump_doubt`]).
pub fn mark_bump_doubt(record: &mut Record) {
    let recalibrations = record.video.recalibrations.clone();
    for shot in &mut record.shots {
        shot.notes
            .extend(bump_doubt(&recalibrations, shot.rest_frame));
    }
}

/// The one line saying what damaged frames `record` has and what they may change.
pub fn damage_warning(record: &Record) -> Option<String> {
    let damaged = &record.video.damaged_frames;
    if damaged.is_empty() {
        return None;
    }
    let (n, list) = (damaged.len(), index_list(damaged));
    let (what, fall) = if n == 1 {
        ("damaged frame", "falls")
    } else {
        ("damaged frames", "fall")
    };
    let shots = &record.video.damaged_shots;
    Some(match shots.len() {
        0 => format!(
            "{n} {what} ({list}) skipped, after the last shot's rest; no score depends on it"
        ),
        1 => format!(
            "{n} {what} ({list}) {fall} in shot {}; its score may be wrong",
            shots[0]
        ),
        _ => format!(
            "{n} {what} ({list}) {fall} in shots {}; their scores may be wrong",
            index_list(shots)
        ),
    })
}

/// `frame 7` or `frames 7, 8, 9`.
fn frames_named(frames: &[FrameIdx]) -> String {
    match frames {
        [one] => format!("frame {one}"),
        _ => format!("frames {}", index_list(frames)),
    }
}

/// Numbers joined by commas, the first few when there are many.
fn index_list<T: std::fmt::Display>(items: &[T]) -> String {
    const SHOWN: usize = 10;
    let mut text = items
        .iter()
        .take(SHOWN)
        .map(T::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Shot;

    fn record_with(damaged: Vec<FrameIdx>, rests: &[FrameIdx]) -> Record {
        Record {
            version: crate::record::RECORD_VERSION,
            video: VideoInfo {
                damaged_frames: damaged,
                ..VideoInfo::default()
            },
            players: vec![],
            shots: rests
                .iter()
                .enumerate()
                .map(|(k, r)| Shot {
                    index: k,
                    rest_frame: *r,
                    ..Shot::default()
                })
                .collect(),
            scores: vec![],
            game: None,
            table_mm: None,
        }
    }

    #[test]
    fn damaged_frames_fall_in_the_first_shot_resting_at_or_after_them() {
        let mut r = record_with(vec![3, 10, 11, 40], &[10, 20, 30]);
        mark_damage(&mut r);
        // 3 and 10 up to shot 0's rest, 11 after it up to shot 1's; 40 after the last.
        assert_eq!(r.video.damaged_shots, vec![0, 1]);
        assert!(
            r.shots[0].notes[0].starts_with("frames 3, 10 could"),
            "{:?}",
            r.shots[0].notes
        );
        assert!(
            r.shots[1].notes[0].starts_with("frame 11 could"),
            "{:?}",
            r.shots[1].notes
        );
        assert!(r.shots[2].notes.is_empty());
        let line = damage_warning(&r).expect("a warning");
        assert!(
            line.contains("4 damaged frames (3, 10, 11, 40) fall in shots 0, 1"),
            "{line}"
        );
        let mut clean = record_with(vec![], &[10]);
        mark_damage(&mut clean);
        assert!(damage_warning(&clean).is_none());
    }

    #[test]
    fn a_long_list_is_cut_with_a_count() {
        let many: Vec<u64> = (0..13).collect();
        assert_eq!(index_list(&many), "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 3 more");
    }
}
