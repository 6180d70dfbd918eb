//! The analysis driver, driven in-process: the bundled match through the video
//! source once (shared by the tests), then its recorded detections through the
//! driver again. Checks that each shot is told the moment it is judged (before the
//! source ends), that events come in frame order and agree with the record, that a
//! listener can stop the analysis, and that the journal reads back to the match
//! state (also when cut anywhere).
#![cfg(feature = "opencv")]

use fishtrack::calibration::TableCalibration;
use fishtrack::config::Game;
use fishtrack::driver::{
    self, journal, CameraLog, CameraNote, CameraState, Collect, DriverError, Event, EventLine,
    Flow, FrameSource, Journal, Listener, Outcome, Recorded, Settings, SourceEnd, SourceInfo,
    Start, Step, VideoSource,
};
use fishtrack::track::FrameDetections;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::{Arc, Mutex};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn settings() -> Settings {
    let calibration =
        TableCalibration::load(&repo("calibration/table.json")).expect("bundled calibration");
    let game = Game::load(&repo("calibration/game.json")).expect("bundled game");
    Settings::new(game, calibration)
}

/// Keeps the events and every frame's detections.
#[derive(Default)]
struct Keep {
    events: Vec<EventLine>,
    detections: Vec<FrameDetections>,
    /// Frames read when each event was told.
    told_at: Vec<u64>,
    frames: u64,
}

impl Listener for Keep {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        self.events.push(line.clone());
        self.told_at.push(self.frames);
        Ok(())
    }

    fn detections(&mut self, dets: &FrameDetections) -> Result<(), DriverError> {
        self.detections.push(dets.clone());
        Ok(())
    }

    fn progress(&mut self, frames: u64) {
        self.frames = frames;
    }
}

struct Demo {
    spec: String,
    fps: Option<f64>,
    kept: Keep,
    outcome: Outcome,
}

/// The bundled match analysed from its video, once for all the tests here.
fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(|| {
        let settings = settings();
        let spec = repo("samples/demo/match.avi")
            .to_string_lossy()
            .into_owned();
        let source = VideoSource::open(&spec, &settings).expect("open the demo");
        let fps = driver::FrameSource::info(&source).fps;
        let mut kept = Keep::default();
        let outcome = driver::run(&settings, None, source, &mut kept).expect("analyse the demo");
        Demo {
            spec,
            fps,
            kept,
            outcome,
        }
    })
}

/// `events` as a journal reads them back: serde_json's float parsing may land one
/// ulp off a written pose, the same way every time.
fn as_read(events: &[EventLine]) -> Vec<EventLine> {
    events
        .iter()
        .map(|e| serde_json::from_str(&e.to_json().expect("json")).expect("parse"))
        .collect()
}

/// The demo's recorded detections from frame `from` on, run from `start` (a resume).
fn resume_demo(d: &Demo, from: u64, start: &driver::Start) -> driver::Outcome {
    let rest: Vec<FrameDetections> = d
        .kept
        .detections
        .iter()
        .filter(|f| f.frame >= from)
        .cloned()
        .collect();
    let source = Recorded::new(&d.spec, d.fps, rest).starting_at(from);
    driver::run(&settings(), Some(start), source, &mut Collect::default()).expect("resume")
}

fn shot_overs(events: &[EventLine]) -> Vec<&EventLine> {
    events
        .iter()
        .filter(|e| matches!(e.event, Event::ShotOver { .. }))
        .collect()
}

#[test]
fn each_shot_is_told_when_judged_before_the_source_ends() {
    let d = demo();
    let record = &d.outcome.record;
    assert!(record.shots.len() >= 2, "the demo has several shots");
    let overs = shot_overs(&d.kept.events);
    assert_eq!(overs.len(), record.shots.len(), "one shot_over per shot");
    let mut running = vec![0; record.players.len()];
    for (k, (line, shot)) in overs.iter().zip(&record.shots).enumerate() {
        let Event::ShotOver {
            shot: index,
            score,
            scores,
            rest,
            flick_frame,
            ..
        } = &line.event
        else {
            unreachable!()
        };
        assert_eq!(*index, shot.index);
        assert_eq!(
            line.frame, shot.rest_frame,
            "shot {k}: told at its rest frame"
        );
        assert_eq!(*flick_frame, shot.flick_frame);
        assert_eq!(score, &shot.score, "shot {k}: its points");
        assert_eq!(rest, &shot.end, "shot {k}: its rest poses");
        for (r, s) in running.iter_mut().zip(score) {
            *r += s;
        }
        assert_eq!(scores, &running, "shot {k}: running scores");
        assert!(
            line.known_at >= line.frame,
            "shot {k}: known after its rest"
        );
    }
    // Every shot that came to rest before the video's end was told while frames were
    // still coming, not at the end.
    let last_frame = d.outcome.frames - 1;
    let early = overs.iter().filter(|l| l.known_at < last_frame).count();
    assert!(
        early >= overs.len() - 1,
        "only {early} of {} shots told before the end",
        overs.len()
    );
    let first = &overs[0];
    assert!(
        first.known_at < last_frame && first.known_at <= first.frame + 30,
        "the first shot was told at frame {}, rest at {}",
        first.known_at,
        first.frame
    );
    let Event::ShotOver { scores, .. } = &overs[overs.len() - 1].event else {
        unreachable!()
    };
    assert_eq!(
        scores, &record.scores,
        "the last running scores are the record's"
    );
    assert_eq!(scores, &d.outcome.state.scores);
}

#[test]
fn events_come_in_frame_order_and_agree_with_the_record() {
    let d = demo();
    let events = &d.kept.events;
    assert!(
        matches!(events[0].event, Event::MatchReady { .. }),
        "{:?}",
        events[0]
    );
    assert!(matches!(
        events[1].event,
        Event::MoveReady { number: 1, .. }
    ));
    for w in events.windows(2) {
        assert!(w[0].known_at <= w[1].known_at, "{:?} then {:?}", w[0], w[1]);
    }
    // Frames go in order but for the flicks, told as their motion starts, before
    // their interlude's put-backs.
    let judged: Vec<&EventLine> = events
        .iter()
        .filter(|e| !matches!(e.event, Event::Flick { .. }))
        .collect();
    for w in judged.windows(2) {
        assert!(w[0].frame <= w[1].frame, "{:?} then {:?}", w[0], w[1]);
    }
    for (line, told_at) in events.iter().zip(&d.kept.told_at) {
        assert!(
            line.known_at <= *told_at,
            "{line:?} known after it was told"
        );
        assert_eq!(line.version, driver::EVENT_VERSION);
        let fps = d.outcome.record.video.fps;
        assert!((line.t_s - line.frame as f64 / fps).abs() < 1e-9);
    }
    let record = &d.outcome.record;
    let lost: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ItemLost { shot, item, exit } => Some((*shot, *item, *exit, e.frame)),
            _ => None,
        })
        .collect();
    let mut in_record: Vec<_> = record
        .shots
        .iter()
        .flat_map(|s| {
            s.lost
                .iter()
                .map(move |l| (s.index, l.item, l.exit, l.frame))
        })
        .collect();
    // Told in the order they left the table.
    in_record.sort_by_key(|(shot, _, _, frame)| (*shot, *frame));
    assert!(!lost.is_empty(), "the demo loses items");
    assert_eq!(
        lost, in_record,
        "item_lost events are the record's lost items"
    );
    // Each shot's flick is told once, as its motion starts (the first item moved is
    // not known yet then); the judged first item and flick frame are its shot_over's.
    let flicks: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Flick {
                shot,
                first_moved: None,
                first_moved_known: false,
                ..
            } => Some(*shot),
            _ => None,
        })
        .collect();
    let judged: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ShotOver {
                shot,
                first_moved,
                flick_frame,
                ..
            } => Some((*shot, *first_moved, *flick_frame)),
            _ => None,
        })
        .collect();
    let in_record: Vec<_> = record
        .shots
        .iter()
        .map(|s| (s.index, s.first_moved, s.flick_frame))
        .collect();
    assert_eq!(judged, in_record);
    assert_eq!(
        flicks,
        record.shots.iter().map(|s| s.index).collect::<Vec<_>>(),
        "{events:#?}"
    );
    // After each shot: the next move (its duties the rules'), or the match's end.
    let after: Vec<&Event> = events
        .iter()
        .skip_while(|e| !matches!(e.event, Event::ShotOver { .. }))
        .filter(|e| matches!(e.event, Event::MoveReady { .. } | Event::MatchOver { .. }))
        .map(|e| &e.event)
        .collect();
    assert_eq!(after.len(), record.shots.len());
    for (e, shot) in after.iter().zip(&record.shots) {
        if let Event::MoveReady {
            shot: next, duties, ..
        } = e
        {
            assert_eq!(*next, shot.index + 1);
            let items: Vec<_> = duties.iter().map(|d| d.item).collect();
            let asked: Vec<_> = shot.put_back.iter().map(|p| p.item).collect();
            assert_eq!(
                items, asked,
                "shot {}: the duties are its put-backs",
                shot.index
            );
        }
    }
    if d.outcome.state.is_over() {
        assert!(matches!(after[after.len() - 1], Event::MatchOver { .. }));
    }
}

#[test]
fn recorded_detections_give_the_same_record_and_events() {
    let d = demo();
    let source = Recorded::new(&d.spec, d.fps, d.kept.detections.clone());
    let mut again = Collect::default();
    let outcome = driver::run(&settings(), None, source, &mut again).expect("replay");
    assert_eq!(outcome.record, d.outcome.record);
    assert_eq!(again.events, d.kept.events);
    assert_eq!(again.frames, d.outcome.frames);
}

/// Stops after the first shot is over.
struct StopAfterShot(Collect);

impl Listener for StopAfterShot {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        self.0.event(line)
    }
    fn progress(&mut self, frames: u64) {
        self.0.progress(frames);
    }
    fn stop(&mut self) -> bool {
        !shot_overs(&self.0.events).is_empty()
    }
}

#[test]
fn a_listener_can_stop_the_analysis_after_a_shot() {
    let d = demo();
    let source =
        Recorded::new(&d.spec, d.fps, d.kept.detections.clone()).claiming(d.outcome.frames);
    let mut stop = StopAfterShot(Collect::default());
    let outcome = driver::run(&settings(), None, source, &mut stop).expect("run");
    assert!(outcome.stopped_on_request);
    assert!(outcome.frames < d.outcome.frames, "stopped early");
    assert_eq!(outcome.record.shots, d.outcome.record.shots[..1]);
    assert_eq!(
        outcome.record.video.stopped, None,
        "a stop asked for is no damage"
    );
    assert_eq!(outcome.frames, stop.0.frames);
}

#[test]
fn a_recording_cut_short_says_so() {
    let d = demo();
    let half = d.kept.detections.len() / 2;
    let source = Recorded::new(&d.spec, d.fps, d.kept.detections[..half].to_vec())
        .claiming(d.outcome.frames);
    let outcome = driver::run(&settings(), None, source, &mut Collect::default()).expect("run");
    assert_eq!(outcome.frames, half as u64);
    let why = outcome.record.video.stopped.expect("stopped");
    assert!(why.contains("may be truncated"), "{why}");
    let none = Recorded::new(&d.spec, d.fps, vec![]);
    let err = driver::run(&settings(), None, none, &mut Collect::default()).expect_err("no frames");
    assert!(err.to_string().contains("has no frames"), "{err}");
}

#[test]
fn the_journal_reads_back_to_the_match_state() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("match.jsonl");
    let mut j = Journal::create(&path).expect("journal");
    let source = Recorded::new(&d.spec, d.fps, d.kept.detections.clone());
    let outcome = driver::run(&settings(), None, source, &mut j).expect("run");
    assert_eq!(j.written(), d.kept.events.len());
    let read = journal::read(&path).expect("read back");
    assert!(read.notes.is_empty(), "{:?}", read.notes);
    assert_eq!(read.events, as_read(&d.kept.events));
    let point = read.resume_point().expect("a match");
    let state = &outcome.state;
    assert_eq!(point.scores, state.scores);
    assert_eq!(point.mover, state.next_player);
    assert_eq!(point.moves_made, state.moves_made);
    assert_eq!(point.shots, outcome.record.shots.len());
    assert_eq!(point.over, state.is_over());
    let last = outcome.record.shots.last().expect("shots");
    assert_eq!(point.rest, last.end);
    assert_eq!(point.rest_frame, Some(last.rest_frame));
    let duties: Vec<_> = point.duties.iter().map(|d| d.item).collect();
    let pending: Vec<_> = state.duties.iter().map(|p| p.item).collect();
    assert_eq!(duties, pending);
    let max_known = d.kept.events.iter().map(|e| e.known_at).max();
    assert_eq!(point.last_frame, max_known);
    // The start made from it carries the match state on.
    let start: Start = point.start(&settings().game);
    let carried = start.state.expect("a state");
    assert_eq!(carried.scores, state.scores);
    assert_eq!(carried.next_player, state.next_player);
    assert_eq!(carried.moves_made, state.moves_made);
    assert_eq!(carried.shots_judged, state.shots_judged);
    assert_eq!(carried.off_table, state.off_table);
}

#[test]
fn the_journal_cut_anywhere_loses_no_whole_event() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("match.jsonl");
    let mut j = Journal::create(&path).expect("journal");
    for e in &d.kept.events {
        j.append(e).expect("append");
    }
    let bytes = std::fs::read(&path).expect("read");
    let read_back = as_read(&d.kept.events);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    for _ in 0..40 {
        let at = rng.random_range(0..=bytes.len());
        let read = journal::parse(&bytes[..at]).expect("a torn tail is no error");
        let whole = bytes[..at].iter().filter(|b| **b == b'\n').count();
        assert!(
            read.events.len() == whole || read.events.len() == whole + 1,
            "cut at {at}: {} events from {whole} lines",
            read.events.len()
        );
        assert_eq!(read.events, read_back[..read.events.len()], "cut at {at}");
        // Resuming the cut journal and writing the rest gives the whole journal.
        let cut = dir.path().join("cut.jsonl");
        std::fs::write(&cut, &bytes[..at]).expect("write");
        let (mut j, read) = Journal::resume(&cut).expect("resume");
        for e in &d.kept.events[read.events.len()..] {
            j.append(e).expect("append");
        }
        assert_eq!(std::fs::read(&cut).expect("read"), bytes, "cut at {at}");
    }
}

#[test]
fn a_match_resumed_from_its_journal_after_a_shot_ends_with_the_same_scores() {
    let d = demo();
    let overs = shot_overs(&d.kept.events);
    assert!(overs.len() >= 2);
    // The journal up to the first shot over, as a crash would leave it.
    let upto = d
        .kept
        .events
        .iter()
        .position(|e| matches!(e.event, Event::ShotOver { .. }))
        .expect("a shot");
    let read = journal::JournalRead {
        events: d.kept.events[..=upto].to_vec(),
        ..Default::default()
    };
    let point = read.resume_point().expect("a match");
    let from = point.last_frame.expect("a frame") + 1;
    let start = point.start(&settings().game);
    let outcome = resume_demo(d, from, &start);
    assert_eq!(outcome.record.scores, d.outcome.record.scores);
    let shots: Vec<_> = outcome
        .record
        .shots
        .iter()
        .map(|s| (s.index, &s.score))
        .collect();
    let whole: Vec<_> = d.outcome.record.shots[1..]
        .iter()
        .map(|s| (s.index, &s.score))
        .collect();
    assert_eq!(shots, whole);
}

/// A flick is told the moment its motion starts: at a frame between the judged flick
/// and the rest, long before the shot_over (known a still window after the rest).
#[test]
fn a_flick_is_told_as_its_motion_starts() {
    let d = demo();
    let record = &d.outcome.record;
    for shot in &record.shots {
        let flick = d
            .kept
            .events
            .iter()
            .find(|e| matches!(e.event, Event::Flick { shot: k, .. } if k == shot.index))
            .expect("a flick per shot");
        let over = d
            .kept
            .events
            .iter()
            .find(|e| matches!(e.event, Event::ShotOver { shot: k, .. } if k == shot.index))
            .expect("a shot_over per shot");
        assert_eq!(flick.known_at, flick.frame, "{flick:?}");
        assert!(
            flick.frame >= shot.flick_frame && flick.frame <= shot.rest_frame,
            "shot {}: flick told at {} (judged flick {}, rest {})",
            shot.index,
            flick.frame,
            shot.flick_frame,
            shot.rest_frame
        );
        assert!(flick.known_at < over.known_at);
        // Within a few frames of the judged flick (measured: 1 to 3).
        assert!(flick.frame - shot.flick_frame <= 10, "{flick:?} {shot:?}");
    }
}

/// The demo's detections with `pause` still frames (copies of frame `at`) put
/// after frame `at`, every later frame numbered on.
fn paused_demo(at: u64, pause: u64) -> Vec<FrameDetections> {
    let d = demo();
    let mut frames = Vec::new();
    for f in &d.kept.detections {
        if f.frame <= at {
            frames.push(f.clone());
        } else {
            frames.push(FrameDetections {
                frame: f.frame + pause,
                ..f.clone()
            });
        }
        if f.frame == at {
            frames.extend((1..=pause).map(|k| FrameDetections {
                frame: at + k,
                ..f.clone()
            }));
        }
    }
    frames
}

#[test]
fn a_move_not_flicked_in_30_s_is_told_at_once_then_judged() {
    let d = demo();
    let fps = d.fps.expect("the demo's frame rate");
    // A move with nothing to put back first, paused 35 s once it is ready (its
    // move_ready is known the frame the shot before is cut, the table still).
    let (shot, ready, cut) = d
        .kept
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::MoveReady { shot, duties, .. } if *shot > 0 && duties.is_empty() => {
                Some((*shot, e.frame, e.known_at))
            }
            _ => None,
        })
        .expect("the demo has a move without duties after its first");
    let pause = (35.0 * fps) as u64;
    let source = Recorded::new("paused", d.fps, paused_demo(cut, pause));
    let mut kept = Keep::default();
    let outcome = driver::run(&settings(), None, source, &mut kept).expect("run");
    let late: Vec<&EventLine> = kept
        .events
        .iter()
        .filter(|e| matches!(&e.event, Event::Violation { code, .. } if code == "5"))
        .collect();
    // Told as it happened: 30 s of frames after the ready frame, before the flick.
    let early: Vec<&&EventLine> = late
        .iter()
        .filter(|e| matches!(e.event, Event::Violation { judged: false, .. }))
        .collect();
    assert_eq!(early.len(), 1, "{late:#?}");
    let early = early[0];
    let at = ready + (30.0 * fps).ceil() as u64;
    assert!(
        early.known_at >= at && early.known_at <= at + 1,
        "{early:?}, ready at {ready}"
    );
    let flick = outcome.record.shots[shot].flick_frame;
    assert!(early.known_at < flick, "{early:?}, flick at {flick}");
    let mover = outcome.record.shots[shot].player;
    assert!(
        matches!(early.event, Event::Violation { shot: k, player, fine: 0, .. } if k == shot && player == mover),
        "{early:?}"
    );
    // Then judged with the shot, as the record has it.
    assert!(
        late.iter().any(
            |e| matches!(e.event, Event::Violation { judged: true, shot: k, .. } if k == shot)
        ),
        "{late:#?}"
    );
    assert!(outcome.record.shots[shot]
        .violations
        .iter()
        .any(|v| v.code == "5"));
    // Without the pause, none.
    assert!(!d
        .kept
        .events
        .iter()
        .any(|e| matches!(&e.event, Event::Violation { code, .. } if code == "5")));
}

/// A live source that loses its camera at frame `lost_at`: it leaves the notes a
/// reader would (twice `lost`: the stall seen first, then the read that failed), says
/// it is waiting, and looks at what the listener was told meanwhile; then frames come
/// again, after a reconnection (`gap` frames missed) or, with `gap` none, a stall
/// that only ended.
struct LosingCamera {
    frames: Vec<FrameDetections>,
    lost_at: u64,
    gap: Option<u64>,
    log: CameraLog,
    told: Arc<Mutex<Vec<EventLine>>>,
    /// The events told while the source waited.
    told_while_waiting: Arc<Mutex<Vec<EventLine>>>,
}

impl FrameSource for LosingCamera {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            spec: "camera".into(),
            fps: Some(30.0),
            frames: None,
            first: 0,
        }
    }

    fn camera_log(&self) -> Option<CameraLog> {
        Some(self.log.clone())
    }

    fn run(
        self,
        _settings: &Settings,
        frame: &mut dyn FnMut(Step<'_>) -> Result<Flow, DriverError>,
    ) -> Result<SourceEnd, DriverError> {
        let lost = |detail: &str| CameraNote {
            at: self.lost_at,
            state: CameraState::Lost,
            skipped: None,
            detail: detail.into(),
            bump: None,
        };
        let mut back = 0;
        for dets in &self.frames {
            if dets.frame < back {
                continue;
            }
            if dets.frame == self.lost_at {
                self.log.push(lost("no frame for 2.0 s"));
                frame(Step::Waiting)?;
                self.log.push(lost("the read failed"));
                frame(Step::Waiting)?;
                *self.told_while_waiting.lock().expect("lock") =
                    self.told.lock().expect("lock").clone();
                if let Some(gap) = self.gap {
                    back = self.lost_at + gap;
                    self.log.push(CameraNote {
                        at: back,
                        state: CameraState::Reconnected,
                        skipped: Some((self.lost_at, gap)),
                        detail: "open again".into(),
                        bump: None,
                    });
                    continue;
                }
            }
            if frame(Step::Frame(dets))? == Flow::Stop {
                break;
            }
        }
        Ok(SourceEnd::default())
    }
}

/// Keeps the events where a source can see them.
struct Shared(Arc<Mutex<Vec<EventLine>>>);

impl Listener for Shared {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        self.0.lock().expect("lock").push(line.clone());
        Ok(())
    }
}

#[test]
fn a_lost_camera_is_told_while_it_is_away_once_and_then_its_return() {
    let frames = demo().kept.detections.clone();
    for gap in [Some(20), None] {
        let told = Arc::new(Mutex::new(Vec::new()));
        let waiting = Arc::new(Mutex::new(Vec::new()));
        let source = LosingCamera {
            frames: frames.clone(),
            lost_at: 150,
            gap,
            log: CameraLog::default(),
            told: Arc::clone(&told),
            told_while_waiting: Arc::clone(&waiting),
        };
        let outcome =
            driver::run(&settings(), None, source, &mut Shared(Arc::clone(&told))).expect("run");
        let camera = |events: &[EventLine]| -> Vec<(CameraState, u64, u64)> {
            events
                .iter()
                .filter_map(|e| match &e.event {
                    Event::Camera { state, .. } => Some((*state, e.frame, e.known_at)),
                    _ => None,
                })
                .collect()
        };
        // Told while the source waited, known at the last frame read.
        let lost = (CameraState::Lost, 149, 149);
        assert_eq!(camera(&waiting.lock().expect("lock")), [lost], "{gap:?}");
        let back = 150 + gap.unwrap_or(0);
        assert_eq!(
            camera(&told.lock().expect("lock")),
            [lost, (CameraState::Reconnected, back, back)],
            "{gap:?}"
        );
        // The frames missed are a gap, not damage.
        assert!(outcome.record.video.damaged_frames.is_empty(), "{gap:?}");
    }
}

/// The scoreboard's amendments, in-process: a board the listener serves, amendments
/// (or undos) POSTed to it over HTTP after the first shot is over (as the page
/// does), made by the driver, journaled with the shot records they changed; the
/// listener stops right after the last, as a crash would.
struct Refereed {
    board: fishtrack::driver::board::Board,
    journal: Journal,
    kept: Collect,
    /// Shot overs seen before the driver waits for the page's POSTs.
    wait_after: usize,
    /// POSTs still to wait for, each made between the same two frames.
    awaited: usize,
    /// Stop once this many `amended` events are told (a crash right after).
    stop_after_amended: Option<usize>,
}

impl Listener for Refereed {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        self.board.publish(line);
        self.journal.append(line)?;
        self.kept.event(line)
    }
    fn shot_record(&mut self, line: &EventLine) -> Result<(), DriverError> {
        Ok(self.journal.append(line)?)
    }
    fn progress(&mut self, frames: u64) {
        self.kept.progress(frames);
    }
    fn amendment(&mut self) -> Option<driver::AmendAsk> {
        if shot_overs(&self.kept.events).len() < self.wait_after {
            return None;
        }
        if self.awaited == 0 {
            return self.board.amendment();
        }
        // The page's POST is on its way: the match waits for it (a live match takes
        // it between two frames, whenever it comes).
        self.awaited -= 1;
        let limit = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < limit {
            if let Some(mut ask) = self.board.amendment() {
                ask.when = "2026-12-03T10:45:00Z".into();
                return Some(ask);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("no amendment came");
    }
    fn stop(&mut self) -> bool {
        self.stop_after_amended.is_some_and(|n| {
            self.kept
                .events
                .iter()
                .filter(|e| matches!(e.event, Event::Amended { .. }))
                .count()
                >= n
        })
    }
}

/// POSTs `body` to the board as the page does; the status line and the answer.
fn post_amendment(addr: std::net::SocketAddr, token: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "POST /amend HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Fishtrack-Token: {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    text
}

/// Runs the demo's detections with `bodies` POSTed one after the other (each once
/// the last is answered) after shot `after` is over, all made between the same two
/// frames; stops once `stop_after` `amended` events are told. The POSTs' answers,
/// the outcome and the listener.
fn corrected_run(
    dir: &Path,
    name: &str,
    after: usize,
    bodies: &[&str],
    stop_after: Option<usize>,
) -> (Vec<String>, Outcome, Refereed) {
    let d = demo();
    let mut listener = Refereed {
        board: fishtrack::driver::board::Board::serve("127.0.0.1:0".parse().expect("addr"))
            .expect("serve"),
        journal: Journal::create(&dir.join(name)).expect("journal"),
        kept: Collect::default(),
        wait_after: after,
        awaited: bodies.len(),
        stop_after_amended: stop_after,
    };
    let (addr, token) = (listener.board.addr(), listener.board.token().to_string());
    let bodies: Vec<String> = bodies.iter().map(|b| b.to_string()).collect();
    let poster = std::thread::spawn(move || {
        bodies
            .iter()
            .map(|body| post_amendment(addr, &token, body))
            .collect::<Vec<String>>()
    });
    let source = Recorded::new(&d.spec, d.fps, d.kept.detections.clone());
    let outcome = driver::run(&settings(), None, source, &mut listener).expect("run");
    (poster.join().expect("post"), outcome, listener)
}

/// [`corrected_run`] with one POST; stops after its `amended` when `stop`.
fn amended_run(
    dir: &Path,
    name: &str,
    after: usize,
    body: &str,
    stop: bool,
) -> (String, Outcome, Refereed) {
    let (mut answers, outcome, listener) =
        corrected_run(dir, name, after, &[body], stop.then_some(1));
    (answers.remove(0), outcome, listener)
}

#[test]
fn an_amendment_from_the_page_is_made_journaled_and_resumed_from() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    let body = r#"{"shot":0,"what":"lost","item":"coin:1","why":"fell behind the hand"}"#;
    let (answer, outcome, listener) = amended_run(dir.path(), "whole.jsonl", 1, body, false);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.contains("amendment 1: shot 0: coin:1 lost"),
        "{answer}"
    );
    // Told once, right after the first shot_over, with the re-scored match.
    let told: Vec<&EventLine> = listener
        .kept
        .events
        .iter()
        .filter(|e| matches!(e.event, Event::Amended { .. }))
        .collect();
    assert_eq!(told.len(), 1);
    let Event::Amended {
        number,
        scores_before,
        scores,
        off_table,
        duties,
        ..
    } = &told[0].event
    else {
        unreachable!()
    };
    assert_eq!(*number, 1);
    let first = &d.outcome.record.shots[0];
    assert_eq!(scores_before, &first.score);
    // R5: Boris's coin knocked off by Anna's move is Anna's point.
    assert_eq!(scores, &vec![first.score[0] + 1, first.score[1]]);
    assert_eq!(off_table, &vec![fishtrack::model::ItemId::coin(1)]);
    assert!(duties
        .iter()
        .any(|d| d.item == fishtrack::model::ItemId::coin(1)));
    // The record is the one `fishtrack amend` makes of the record without it (but
    // the totals it kept at the moment: live made it after the first shot).
    let game = settings().game;
    let table = settings().calibration.table;
    let request: fishtrack::amend::Request = serde_json::from_str(body).expect("request");
    let offline = fishtrack::amend::amend(
        &game,
        &table,
        &d.outcome.record,
        &[request],
        "2026-12-03T10:45:00Z",
    )
    .expect("amend");
    let strip = |r: &fishtrack::record::Record| -> Vec<fishtrack::record::Shot> {
        r.shots
            .iter()
            .cloned()
            .map(|mut s| {
                for a in &mut s.amendments {
                    a.scores_before.clear();
                    a.scores_after.clear();
                }
                s
            })
            .collect()
    };
    assert_eq!(strip(&outcome.record), strip(&offline.record));
    assert_eq!(outcome.record.scores, offline.record.scores);
    assert_ne!(outcome.record.scores, d.outcome.record.scores);

    // A crash right after it: the journal resumes in the amended state, and the
    // match goes on to the same end.
    let (_, _, crashed) = amended_run(dir.path(), "crash.jsonl", 1, body, true);
    let read = journal::read(&dir.path().join("crash.jsonl")).expect("read");
    assert!(matches!(
        read.events.last().map(|e| &e.event),
        Some(Event::Amended { .. })
    ));
    let point = read.resume_point().expect("a match");
    assert_eq!(&point.scores, scores);
    assert_eq!(point.off_table, vec![fishtrack::model::ItemId::coin(1)]);
    assert!(point
        .duties
        .iter()
        .any(|d| d.item == fishtrack::model::ItemId::coin(1)));
    // The journal holds the amended shot's record (after the judged one).
    let last_record = read
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            Event::ShotRecord { record } if record.index == 0 => Some(record),
            _ => None,
        })
        .expect("shot 0's record");
    assert_eq!(last_record.amendments.len(), 1);
    drop(crashed);
    let from = point.last_frame.expect("a frame") + 1;
    let mut start = point.start(&settings().game);
    start.earlier = vec![(**last_record).clone()];
    let resumed = resume_demo(d, from, &start);
    assert_eq!(resumed.record.scores, outcome.record.scores);
}

#[test]
fn an_amendment_that_contradicts_the_record_changes_nothing() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    // fish:0 was not lost in shot 0: it cannot be "not lost".
    let body = r#"{"shot":0,"what":"not-lost","item":"fish:0","why":"the referee says so"}"#;
    let (answer, outcome, listener) = amended_run(dir.path(), "j.jsonl", 1, body, false);
    assert!(answer.starts_with("HTTP/1.1 409"), "{answer}");
    let line = answer.split("\"line\":\"").nth(1).unwrap_or_default();
    assert!(line.starts_with("shot 0: "), "{answer}");
    assert!(!line.contains('\n'), "one line: {answer}");
    assert!(!listener
        .kept
        .events
        .iter()
        .any(|e| matches!(e.event, Event::Amended { .. })));
    assert_eq!(outcome.record, d.outcome.record);
    assert_eq!(listener.kept.events, d.kept.events);
}

/// The page's amendment of the demo's first shot: Boris's coin knocked off.
const LOST_COIN: &str = r#"{"shot":0,"what":"lost","item":"coin:1","why":"fell behind the hand"}"#;

/// The one line of a POST's answer (`{"ok": .., "line": ..}` after the head).
fn answer_line(answer: &str) -> String {
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let value: serde_json::Value = serde_json::from_str(body).expect("a JSON answer");
    value["line"].as_str().expect("a line").to_string()
}

fn amended_events(events: &[EventLine]) -> Vec<&Event> {
    events
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, Event::Amended { .. }))
        .collect()
}

fn without_amended(events: &[EventLine]) -> Vec<EventLine> {
    events
        .iter()
        .filter(|e| !matches!(e.event, Event::Amended { .. }))
        .cloned()
        .collect()
}

#[test]
fn an_amendment_undone_from_the_page_gives_back_the_scores_and_the_call() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    let undo = r#"{"undo":1}"#;
    let (answers, outcome, listener) =
        corrected_run(dir.path(), "j.jsonl", 1, &[LOST_COIN, undo, undo], None);
    for a in &answers[..2] {
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let undone_line = answer_line(&answers[1]);
    assert!(
        undone_line.starts_with("undid amendment 1: shot 0: coin:1 lost (back to: on the table at"),
        "{undone_line}"
    );
    let told = amended_events(&listener.kept.events);
    assert_eq!(told.len(), 2, "{told:?}");
    let (
        Event::Amended {
            undone: false,
            scores_before: before_amending,
            scores: amended,
            off_table: amended_off,
            ..
        },
        Event::Amended {
            undone: true,
            number: 1,
            shot: 0,
            scores_before: before_undoing,
            scores: undone,
            off_table: undone_off,
            duties: undone_duties,
            ..
        },
    ) = (told[0], told[1])
    else {
        panic!("an amendment, then its undo: {told:?}");
    };
    let coin = fishtrack::model::ItemId::coin(1);
    // The amendment moved the scores and put the coin off the table; the undo gives
    // both back.
    assert_ne!(amended, before_amending);
    assert!(amended_off.contains(&coin));
    assert_eq!(before_undoing, amended);
    assert_eq!(undone, before_amending);
    assert!(!undone_off.contains(&coin), "{undone_off:?}");
    assert!(!undone_duties.iter().any(|d| d.item == coin));
    assert!(undone_line.ends_with(&format!(
        "scores {}",
        fishtrack::amend::totals_text(&d.outcome.record.players, undone)
    )));
    // Undone already: the library's refusal, as `fishtrack amend --undo 1` gives it
    // on the record as it now is; one line, and nothing told.
    assert!(answers[2].starts_with("HTTP/1.1 409"), "{}", answers[2]);
    let (game, table) = (settings().game, settings().calibration.table);
    let refusal = fishtrack::amend::undo(&game, &table, &outcome.record, 1)
        .expect_err("nothing to undo")
        .to_string();
    assert_eq!(answer_line(&answers[2]), refusal);
    assert!(refusal.contains("amendment 1 does not exist"), "{refusal}");
    // The match goes on as if it had never been amended: shot 0's call, the
    // record, every other event.
    let (shot, plain) = (&outcome.record.shots[0], &d.outcome.record.shots[0]);
    assert!(shot.amendments.is_empty());
    assert_eq!(shot.lost, plain.lost);
    assert_eq!(shot.end, plain.end);
    assert_eq!(outcome.record, d.outcome.record);
    assert_eq!(without_amended(&listener.kept.events), d.kept.events);
}

#[test]
fn a_journal_resumed_after_an_undo_is_in_the_state_without_the_crash() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("crash.jsonl");
    // A crash right after the undo.
    let (answers, _, crashed) = corrected_run(
        dir.path(),
        "crash.jsonl",
        1,
        &[LOST_COIN, r#"{"undo":1}"#],
        Some(2),
    );
    drop(crashed);
    for a in &answers {
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let read = journal::read(&path).expect("read");
    assert!(
        matches!(
            read.events.last().map(|e| &e.event),
            Some(Event::Amended { undone: true, .. })
        ),
        "{:?}",
        read.events.last()
    );
    // The journal's version says undos can be in it.
    assert!(read
        .events
        .iter()
        .all(|e| e.version == driver::EVENT_VERSION));
    // The state it resumes from is the one of the match never amended, journaled to
    // the same frame.
    let point = read.resume_point().expect("a match");
    let until = point.last_frame.expect("a frame");
    let plain = journal::JournalRead {
        events: as_read(&d.kept.events)
            .into_iter()
            .filter(|e| e.known_at <= until)
            .collect(),
        ..Default::default()
    };
    let mut plain_point = plain.resume_point().expect("a match");
    assert_eq!(plain_point.shots, 1);
    plain_point.last_frame = point.last_frame;
    assert_eq!(point, plain_point);
    // Shot 0's last record is the one judged, without the amendment.
    let records: Vec<fishtrack::record::Shot> = read
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::ShotRecord { record } => Some((**record).clone()),
            _ => None,
        })
        .collect();
    assert_eq!(records.len(), 3, "judged, amended, undone");
    let judged = records.first().expect("shot 0 judged");
    let last = records.last().expect("shot 0 undone");
    assert_eq!(last.index, 0);
    assert!(last.amendments.is_empty());
    assert_eq!(last, judged);
    assert_ne!(&records[1], judged);
    // Resumed (as a camera resumes, from rest), the match ends as the uninterrupted
    // one did.
    let mut start = point.start(&settings().game);
    start.earlier = vec![last.clone()];
    let resumed = resume_demo(d, until + 1, &start);
    assert_eq!(resumed.record.scores, d.outcome.record.scores);
}

#[test]
fn an_undo_the_record_refuses_changes_nothing() {
    let d = demo();
    let dir = tempfile::tempdir().expect("tempdir");
    // Amendment 2 (where coin:1 left the table) rests on amendment 1 (it was lost):
    // undoing 1 alone is refused, and so is an amendment the match does not have.
    let exit = r#"{"shot":0,"what":"exit","item":"coin:1","exit":{"x":0,"y":350},"why":"seen"}"#;
    let (made, reference, kept) = corrected_run(dir.path(), "a.jsonl", 1, &[LOST_COIN, exit], None);
    for a in &made {
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    }
    let (answers, outcome, listener) = corrected_run(
        dir.path(),
        "b.jsonl",
        1,
        &[LOST_COIN, exit, r#"{"undo":1}"#, r#"{"undo":7}"#],
        None,
    );
    // The same one-line refusals as `fishtrack amend --undo` on the record amended
    // the same way offline.
    let (game, table) = (settings().game, settings().calibration.table);
    let requests: Vec<fishtrack::amend::Request> = [LOST_COIN, exit]
        .iter()
        .map(|b| serde_json::from_str(b).expect("a request"))
        .collect();
    let offline = fishtrack::amend::amend(
        &game,
        &table,
        &d.outcome.record,
        &requests,
        "2026-12-03T10:45:00Z",
    )
    .expect("amends")
    .record;
    for (answer, k) in answers[2..].iter().zip([1, 7]) {
        assert!(answer.starts_with("HTTP/1.1 409"), "{answer}");
        let refusal = fishtrack::amend::undo(&game, &table, &offline, k)
            .expect_err("refused")
            .to_string();
        let line = answer_line(answer);
        assert_eq!(line, refusal);
        assert!(!line.contains('\n'), "{line}");
    }
    assert!(answer_line(&answers[2]).contains("undo 2 first"));
    assert!(answer_line(&answers[3]).contains("amendment 7 does not exist"));
    // Nothing changed: the events and the record are those of the two amendments
    // alone, and the journal holds no more lines.
    assert_eq!(amended_events(&listener.kept.events).len(), 2);
    assert_eq!(listener.kept.events, kept.kept.events);
    assert_eq!(outcome.record, reference.record);
    assert_ne!(outcome.record, d.outcome.record);
    let lines = |name: &str| {
        std::fs::read_to_string(dir.path().join(name))
            .expect("journal")
            .lines()
            .count()
    };
    assert_eq!(lines("b.jsonl"), lines("a.jsonl"));
}

/// The demo's detections with the page's amendment of shot 0 made after shot 4 is
/// over, the judged shots kept in memory or, `in_file`, in a file in `dir`: the
/// events told (as JSON) and the record as written.
fn kept_in_memory_or_file(dir: &Path, in_file: bool) -> (Vec<String>, Vec<u8>) {
    let d = demo();
    let name = if in_file { "file" } else { "memory" };
    let mut listener = Refereed {
        board: fishtrack::driver::board::Board::serve("127.0.0.1:0".parse().expect("addr"))
            .expect("serve"),
        journal: Journal::create(&dir.join(format!("{name}.jsonl"))).expect("journal"),
        kept: Collect::default(),
        wait_after: 5,
        awaited: 1,
        stop_after_amended: None,
    };
    let (addr, token) = (listener.board.addr(), listener.board.token().to_string());
    let poster = std::thread::spawn(move || {
        let body = r#"{"shot":0,"what":"lost","item":"coin:1","why":"fell behind the hand"}"#;
        post_amendment(addr, &token, body)
    });
    let mut settings = settings();
    if in_file {
        settings.keep_shots_in = Some(dir.to_path_buf());
    }
    let source = Recorded::new(&d.spec, d.fps, d.kept.detections.clone());
    let outcome = driver::run(&settings, None, source, &mut listener).expect("run");
    let answer = poster.join().expect("post");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let path = dir.join(format!("{name}.json"));
    match outcome.kept {
        Some(mut kept) => {
            assert!(in_file);
            assert!(outcome.record.shots.is_empty(), "shots left in memory");
            assert_eq!(kept.len(), d.outcome.record.shots.len());
            assert!(kept.bytes() > 0);
            outcome
                .record
                .save_with_shots(kept.shots(), &path)
                .expect("save shot by shot");
        }
        None => {
            assert!(!in_file);
            outcome.record.save(&path).expect("save");
        }
    }
    let events = listener
        .kept
        .events
        .iter()
        .map(|e| e.to_json().expect("json"))
        .collect();
    (events, std::fs::read(&path).expect("record"))
}

#[test]
fn shots_kept_in_a_file_give_the_record_and_events_of_shots_kept_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (told, record) = kept_in_memory_or_file(dir.path(), false);
    let (told_kept, record_kept) = kept_in_memory_or_file(dir.path(), true);
    // The amendment was made on shots read back from the file (every 4 judged are
    // moved there), and changed the record.
    assert!(told.iter().any(|e| e.contains("\"amended\"")));
    assert_eq!(told_kept, told);
    assert!(
        record_kept == record,
        "the records differ: {} bytes against {}",
        record_kept.len(),
        record.len()
    );
    let shots: serde_json::Value = serde_json::from_slice(&record_kept).expect("json");
    let shots = shots["shots"].as_array().expect("shots");
    assert_eq!(shots.len(), demo().outcome.record.shots.len());
    assert!(shots
        .iter()
        .all(|s| s["tracks"].as_object().is_some_and(|t| !t.is_empty())));
    // The file was never in the folder for anyone to find, nor is it left there.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["file.json", "file.jsonl", "memory.json", "memory.jsonl"]
    );
}
