//! `fishtrack live SOURCE`: a match scored while it is played. Resolves the
//! arguments as `analyse` does (the shared part lives there), opens the source (a
//! camera, a stream, or a file read as fast as it decodes or at its frame rate),
//! runs the library's driver with a listener that prints every event as a JSON line
//! on stdout and appends it to the journal, and writes the record when the match is
//! over, the source ends, or Ctrl-C/SIGTERM asks it to stop. `--resume` goes on from
//! a journal after a crash. Uses: driver, record, analyse (settings, start, output).

use anyhow::{bail, Context};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::analyse::{check_scale_and_fps, load_settings, load_start, Pending, SettingsArgs};
use crate::amend::Request;
use crate::calibration::TableCalibration;
use crate::driver::board::Board;
use crate::driver::{
    self, AmendAsk, CameraState, Correction, DriverError, Event, EventLine, Journal, JournalRead,
    Listener, LiveOptions, ResumePoint, Settings, Start, VideoSource,
};
use crate::model::FrameIdx;
use crate::record::{Recalibrated, Record, Shot, VideoInfo};
use std::collections::{BTreeMap, VecDeque};

/// `live --help`'s text (the subcommand's, in cli/mod.rs: a variant's doc line
/// would hide an `Args` struct's own).
pub const LONG_ABOUT: &str =
    "Score a match while it is played: every event (a flick the moment it starts, a shot \
judged, an item lost, a violation, R11 5 the moment 30 s pass without a flick, the scores, whose \
move it is and what must be put back, the camera's state) as one JSON object a line on stdout, \
the moment it is known (schema: docs/live.md).\n\n\
SOURCE is a camera (webcam:N, /dev/videoN), a network stream (rtsp://, udp://, http://, … \
through OpenCV's FFmpeg backend) or a video file. A file is read as fast as it decodes, or \
with --realtime at its frame rate by the wall clock, dropping frames when the analysis falls \
behind, as a camera would (told as camera frames_dropped events). A camera or stream that stops \
(a read fails, or no frame for 2 s) is told lost at once and opened again with growing waits \
(then reconnected); one that never opens is an error.\n\n\
Every event is also appended to the journal (--journal, or a new file named after -o and the \
time), written, flushed and fsynced before the next: after a crash or a power loss, \
`live SOURCE --resume JOURNAL` goes on with the same scores, mover, duties and identities; on a \
file it goes on from the frame after the last one journaled: the frames before are analysed \
again first, as fast as they decode and told to no one, so the match goes on in exactly the \
state it had (--resume-from-rest: from the last rest poses instead, as a camera resumes). \
The journal also keeps each judged shot's record (shot_record lines, not printed), so the \
record after a camera's resume holds every shot.\n\n\
live ends by itself when the match is over (every player made their moves and the last shot \
came to rest), when the source ends, or on Ctrl-C / SIGTERM; each way the record (-o) is \
written. A second Ctrl-C ends at once, without it (the journal has everything).\n\n\
While it runs, a scoreboard page (scores, whose move, the move timer, the table drawn with the \
items at rest, the last shot's paths and exits and what must be put back dashed where it goes, \
with its rule and the coin's verdict, in type to read from across the room; it reconnects by \
itself) is served at http://127.0.0.1:8350/ (--port, --listen), the events at /events. On this \
machine the page also takes a referee's corrections (\"Correct a call\": a lost or not-lost \
item, the mover, a violation dropped, each with why; and Undo beside each amendment made): made \
as `fishtrack amend` and `fishtrack amend --undo K` make them, journaled (an amended event; \
--resume makes it again), the scores re-computed at once; one the rules or the record refuse is \
one line on the page and changes nothing.";

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
fishtrack live webcam:0 --table table.json --game game.json -o match.json --save match.mkv\n  \
fishtrack live rtsp://10.0.0.7/stream --journal match.jsonl\n  \
fishtrack live samples/demo/match.avi --realtime\n  \
fishtrack live samples/demo/match.avi --realtime --resume match.jsonl\n\n\
Exit codes:\n  \
0  done: the record written\n  \
1  bad input or output (one line on stderr says what)")]
pub struct LiveArgs {
    /// webcam:N, /dev/videoN, an rtsp:// udp:// http:// stream, or a video file.
    pub source: String,
    /// Table calibration (table.json) of the camera [default: calibration/table.json].
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Match set-up (game.json) [default: calibration/game.json].
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// Start mid-match from a record.json or a state.json (as `analyse --start`);
    /// with --resume on a file, give the one the resumed run was given.
    #[arg(long)]
    pub start: Option<PathBuf>,
    /// The record, written when live ends.
    #[arg(short, long, value_name = "FILE", default_value = "record.json")]
    pub output: PathBuf,
    /// The journal to start (never overwritten) [default: beside -o, named after it
    /// and the time: record-20261203T104500Z.journal.jsonl].
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "resume")]
    pub journal: Option<PathBuf>,
    /// Go on with the match in this journal (after a crash): same state; a file
    /// source goes on from the frame after the last one journaled.
    #[arg(long, value_name = "JOURNAL")]
    pub resume: Option<PathBuf>,
    /// With --resume on a file: start from the journal's last rest poses and match
    /// state at the frame after the last one journaled, as a camera resumes, instead
    /// of first analysing the frames already journaled again (unpaced, nothing told
    /// twice), which gives exactly the state the crashed run had.
    #[arg(long, requires = "resume")]
    pub resume_from_rest: bool,
    /// Read a video file at its frame rate, dropping frames when behind, as a camera
    /// delivers them.
    #[arg(long)]
    pub realtime: bool,
    /// With --realtime, read this many times faster than filmed (tests, demos);
    /// implies --realtime.
    #[arg(long, value_name = "FACTOR")]
    pub realtime_speed: Option<f64>,
    /// With --realtime: never drop a frame; when the analysis falls behind, the
    /// reading waits for it (a file replayed in time, every frame analysed: tests,
    /// demos; not as a camera delivers it).
    #[arg(long)]
    pub no_drop: bool,
    /// Also write the frames read to this video (Motion JPEG in .mkv/.avi, MPEG-4 in
    /// .mp4), at the source's frame rate. Never overwrites a file.
    #[arg(long, value_name = "FILE.mkv")]
    pub save: Option<PathBuf>,
    /// How long a lost camera or stream is tried again before live ends, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub reconnect_for: f64,
    /// Scale of the top view the detector works on, mm per pixel.
    #[arg(long, default_value_t = 1.0)]
    pub mm_per_px: f64,
    /// Frames per second, when the source's own figure is wrong or missing.
    #[arg(long)]
    pub fps: Option<f64>,
    /// Detect on the whole table in every frame instead of only where it changed.
    #[arg(long)]
    pub every_frame: bool,
    /// Also look for coins as motion-blur streaks.
    #[arg(long)]
    pub streaks: bool,
    /// Do not watch for a bumped camera. By default, at rests (at most once a
    /// second, at once after the whole picture moved) the table's outline is checked
    /// against the calibration; moved over 3 mm, the table is re-fitted from its
    /// edges and the match goes on with it (a camera bumped event; journaled, so a
    /// resume keeps it). A re-fit refused is one warning line and the shots after it
    /// are noted as doubtful: calibrate the table again.
    #[arg(long)]
    pub no_recalibrate: bool,
    /// The scoreboard page's port (http://127.0.0.1:PORT/: scores, mover, move timer,
    /// duties, in large type; the events as server-sent events at /events); 0: none.
    #[arg(long, value_name = "PORT", default_value_t = 8350)]
    pub port: u16,
    /// The address the scoreboard listens on (0.0.0.0: every network the machine is
    /// on; the default, this machine only). Other machines may watch; amendments are
    /// taken from this machine only.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub listen: std::net::IpAddr,
    /// Print nothing on stderr but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// Where a resumed match stood, from its journal.
struct Resumed {
    point: ResumePoint,
    /// The journal's events.
    events: Vec<EventLine>,
    /// The records of the shots judged before, in order.
    shots: Vec<Shot>,
    /// The frame rate the journal's times were written at, when it says.
    fps: Option<f64>,
}

pub fn run(args: LiveArgs) -> anyhow::Result<super::Done> {
    check_scale_and_fps(args.mm_per_px, args.fps)?;
    let pace = pace(&args)?;
    if !(args.reconnect_for.is_finite() && args.reconnect_for >= 0.0) {
        bail!(
            "--reconnect-for must be a number of seconds, 0 or more, got {}",
            args.reconnect_for
        );
    }
    let is_live = crate::vision::capture::is_live_spec(&args.source);
    if !is_live && !Path::new(&args.source).exists() {
        bail!(
            "{}: no such file (a source is webcam:N, /dev/videoN, a stream URL or a video file)",
            args.source
        );
    }
    if pace.is_some() && is_live {
        bail!(
            "--realtime reads a file at its frame rate; {} is live already",
            args.source
        );
    }
    if let Some(save) = args.save.as_deref().filter(|p| p.exists()) {
        bail!(
            "--save {}: already exists (name another file)",
            save.display()
        );
    }
    let mut settings = load_settings(SettingsArgs {
        table: args.table.as_deref(),
        game: args.game.as_deref(),
        mm_per_px: args.mm_per_px,
        fps: args.fps,
        every_frame: args.every_frame,
        streaks: args.streaks,
        recalibrate: !args.no_recalibrate,
    })?;

    let resumed = match &args.resume {
        Some(path) => {
            let (journal, read) = Journal::resume_match(path)
                .with_context(|| format!("resuming the journal {}", path.display()))?;
            let resumed = resumed_from(path, &read, &settings)?;
            if resumed.is_none() && !args.quiet {
                eprintln!(
                    "fishtrack: {}: nothing journaled yet; the match starts afresh",
                    path.display()
                );
            }
            Some((journal, resumed))
        }
        None => None,
    };
    let pending = Pending::create(&args.output)?;
    // The match was over when the journal ends: only the record is left to write.
    if let Some(r) = resumed
        .as_ref()
        .and_then(|(_, r)| r.as_ref())
        .filter(|r| r.point.over)
    {
        let record = record_of_journal(&args.source, &settings, r);
        pending.write(&record)?;
        if !args.quiet {
            eprintln!(
                "fishtrack: the match in the journal was over; wrote {}",
                args.output.display()
            );
        }
        return Ok(super::Done::Clean);
    }

    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signals(&stop)?;
    // A file resumed is analysed again from its start up to the last frame journaled,
    // told to no one: the match goes on in the very state it had. A camera cannot be
    // read again: it goes on from the last rest poses and the journal's match state.
    let (journal, resumed) = match resumed {
        Some((journal, r)) => (Some(journal), r),
        None => (None, None),
    };
    let replay = resumed.is_some() && !is_live && !args.resume_from_rest;
    let journaled_to = resumed.as_ref().and_then(|r| r.point.last_frame);
    let after = journaled_to.map_or(0, |f| f + 1);
    // A match resumed from rest after a bumped camera goes on with the table
    // calibration re-fitted then (a replay finds the bump again itself).
    if let Some(file) = resumed
        .as_ref()
        .filter(|_| !replay)
        .and_then(|r| r.point.calibration.clone())
    {
        settings.calibration =
            TableCalibration::from_file(file, "the journal's re-fitted table")
                .context("resuming with the table re-fitted after the camera was bumped")?;
    }
    let start: Option<Start> = match (&resumed, &args.start) {
        (Some(r), _) if !replay => {
            let mut start = r.point.start(&settings.game);
            // An amendment made in the resumed run is made on them too.
            start.earlier.clone_from(&r.shots);
            Some(start)
        }
        (_, Some(p)) => Some(load_start(p, &settings)?),
        _ => None,
    };
    let (first, catch_up) = if replay { (0, after) } else { (after, 0) };
    let source = VideoSource::open_live(
        &args.source,
        &settings,
        LiveOptions {
            pace,
            drop_behind: !args.no_drop,
            reconnect_for: std::time::Duration::from_secs_f64(args.reconnect_for),
            stop: Arc::clone(&stop),
            first,
            catch_up,
            save: args.save.clone(),
        },
    )?;
    // A new journal is started only once the source is open.
    let journal = match journal {
        Some(j) => j,
        None => {
            let path = args
                .journal
                .clone()
                .unwrap_or_else(|| default_journal(&args.output));
            Journal::create(&path).context("starting the journal")?
        }
    };
    if !args.quiet {
        let verb = if resumed.is_some() {
            "going on with"
        } else {
            "writing"
        };
        eprintln!(
            "fishtrack: {verb} the journal {} (after a crash: fishtrack live {} --resume {})",
            journal.path().display(),
            args.source,
            journal.path().display()
        );
    }
    let board = serve_board(&args);
    // A match of hours judges hundreds of shots: they wait for the record in a file
    // beside the journal, not in memory.
    settings.keep_shots_in = Some(
        journal
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    );
    let mut out = Out {
        board,
        journal,
        stdout: std::io::stdout(),
        printing: true,
        stop,
        over: false,
        // A resumed run opens with the match's state again: shown, not journaled twice.
        repeated: if resumed.is_some() && !replay { 2 } else { 0 },
        replay: resumed.as_ref().filter(|_| replay).map(|r| Replay {
            until: journaled_to.unwrap_or(0),
            journaled: r.events.iter().filter_map(told).collect(),
            told: Vec::new(),
            amendments: r.events.iter().filter_map(journaled_amendment).collect(),
        }),
        frames: 0,
        quiet: args.quiet,
        earlier: start.as_ref().map_or(0, |s| s.earlier.len()),
        records: BTreeMap::new(),
    };
    let outcome = driver::run(&settings, start.as_ref(), source, &mut out)?;
    let mut record = outcome.record;
    let mut kept = outcome.kept;
    if let Some(replayed) = &out.replay {
        if !replayed.told.starts_with(&replayed.journaled) {
            eprintln!(
                "fishtrack: warning: the frames analysed again did not give the journal's {} events (frames dropped in the run resumed?); the match went on as analysed now",
                replayed.journaled.len()
            );
        }
    }
    if let Some(r) = resumed.filter(|_| !replay) {
        // The journal's shots, as amended in this run if they were.
        let mut shots: Vec<Shot> = r
            .shots
            .into_iter()
            .map(|s| out.records.remove(&s.index).unwrap_or(s))
            .collect();
        shots.append(&mut record.shots);
        record.shots = shots;
        record.scores = outcome.state.scores.clone();
        let mut recalibrations = journaled_recalibrations(&r.events);
        recalibrations.append(&mut record.video.recalibrations);
        record.video.recalibrations = recalibrations;
    }
    let shots = record.shots.len() + kept.as_ref().map_or(0, |k| k.len());
    match kept.as_mut() {
        // The shots in memory (the journal's, resumed) first, then this run's.
        Some(k) => {
            let before = std::mem::take(&mut record.shots);
            let shots = before.into_iter().map(Ok).chain(k.shots());
            pending.write_with_shots(&record, shots)?;
        }
        None => pending.write(&record)?,
    }
    if !args.quiet {
        let why = if out.over {
            "the match is over"
        } else if outcome.stopped_on_request {
            "stopped"
        } else {
            "the source ended"
        };
        eprintln!(
            "fishtrack: {why}; wrote {} ({shots} shots, scores {})",
            args.output.display(),
            scores_line(&record)
        );
        if let Some(line) = &outcome.damage {
            eprintln!("fishtrack: warning: {}: {line}", args.source);
        }
    }
    Ok(super::Done::Clean)
}

/// Starts the scoreboard (`--port`, `--listen`); one that cannot listen is a warning:
/// the match is scored all the same.
fn serve_board(args: &LiveArgs) -> Option<Board> {
    if args.port == 0 {
        return None;
    }
    let addr = std::net::SocketAddr::new(args.listen, args.port);
    match Board::serve(addr) {
        Ok(board) => {
            if !args.quiet {
                eprintln!("fishtrack: the scoreboard is at http://{}/", board.addr());
            }
            Some(board)
        }
        Err(e) => {
            eprintln!(
                "fishtrack: warning: no scoreboard: cannot listen on {addr} ({e}); --port another, or 0 for none"
            );
            None
        }
    }
}

/// The pace factor of `--realtime` / `--realtime-speed`.
fn pace(args: &LiveArgs) -> anyhow::Result<Option<f64>> {
    match args.realtime_speed {
        Some(f) if !(f.is_finite() && (0.01..=100.0).contains(&f)) => {
            bail!("--realtime-speed must be between 0.01 and 100, got {f}")
        }
        Some(f) => Ok(Some(f)),
        None => Ok(args.realtime.then_some(1.0)),
    }
}

/// Ctrl-C, SIGTERM and SIGHUP set `stop` (the record is written); a second one ends
/// at once (the journal holds every event).
fn stop_on_signals(stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
    let flag = Arc::clone(stop);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .context("cannot catch Ctrl-C")
}

/// What a resume starts from: the journal's match state and shot records, checked
/// against the game; none when the journal is empty (a crash before its first line).
fn resumed_from(
    path: &Path,
    read: &JournalRead,
    settings: &Settings,
) -> anyhow::Result<Option<Resumed>> {
    for note in &read.notes {
        eprintln!("fishtrack: {}: {note}", path.display());
    }
    if read.events.is_empty() {
        return Ok(None);
    }
    let Some(point) = read.resume_point() else {
        bail!(
            "{}: no match_ready event: not a live journal, or empty",
            path.display()
        );
    };
    let names: Vec<String> = settings
        .game
        .players
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let journaled = read.events.iter().find_map(|e| match &e.event {
        Event::MatchReady { players, .. } => Some(players.clone()),
        _ => None,
    });
    if journaled.as_ref().is_some_and(|p| *p != names) {
        bail!(
            "{}: the journal's players {:?} are not this game's {:?} (pass its --game)",
            path.display(),
            journaled.unwrap_or_default(),
            names
        );
    }
    // A shot's record is written before its shot_over: a record without one (a
    // crash between the two) is told again by the resumed run.
    let mut shots: Vec<Shot> = Vec::new();
    for e in &read.events {
        if let Event::ShotRecord { record } = &e.event {
            if record.index < point.shots {
                shots.retain(|s| s.index != record.index);
                shots.push((**record).clone());
            }
        }
    }
    shots.sort_by_key(|s| s.index);
    if shots.len() != point.shots {
        bail!(
            "{}: {} shots were judged but {} have their record (a journal from before shot records were kept?)",
            path.display(),
            point.shots,
            shots.len()
        );
    }
    let fps = read
        .events
        .iter()
        .find(|e| e.frame > 0 && e.t_s > 0.0)
        .map(|e| e.frame as f64 / e.t_s);
    Ok(Some(Resumed {
        point,
        events: read.events.clone(),
        shots,
        fps,
    }))
}

/// The record of a match whose journal says it was over.
fn record_of_journal(source: &str, settings: &Settings, r: &Resumed) -> Record {
    let [width, height] = settings.calibration.camera.image_size;
    Record::new(
        settings.game.clone(),
        settings.calibration.table.corners_mm(),
        VideoInfo {
            path: source.to_string(),
            fps: settings.fps.or(r.fps).unwrap_or(30.0),
            frames: r.point.last_frame.map_or(0, |f| f + 1),
            width,
            height,
            recalibrations: journaled_recalibrations(&r.events),
            ..VideoInfo::default()
        },
        r.shots.clone(),
        r.point.scores.clone(),
    )
}

/// The bumps a journal's `camera` events tell, as the record keeps them.
fn journaled_recalibrations(events: &[EventLine]) -> Vec<Recalibrated> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            Event::Camera {
                state: CameraState::Bumped,
                shift_mm,
                table,
                refused,
                ..
            } => Some(Recalibrated {
                frame: e.frame,
                shift_mm: shift_mm.unwrap_or_default(),
                image_corners_px: table.as_ref().map(|t| t.image_corners_px.clone()),
                refused: refused.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// `Anna 1, Boris -3`.
fn scores_line(record: &Record) -> String {
    record
        .players
        .iter()
        .zip(&record.scores)
        .map(|(n, s)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `record-20261203T104500Z.journal.jsonl` beside `output`.
fn default_journal(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("live");
    output.with_file_name(format!(
        "{stem}-{}.journal.jsonl",
        utc_stamp(super::unix_now())
    ))
}

/// `20261203T104500Z` for seconds since 1970 (UTC): RFC 3339 without its separators,
/// for a file name.
fn utc_stamp(secs: u64) -> String {
    super::utc_timestamp(secs)
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect()
}

/// The listener: every event to stdout and the journal; stops at the match's end or
/// on a signal.
struct Out {
    /// The scoreboard page, when served.
    board: Option<Board>,
    journal: Journal,
    stdout: std::io::Stdout,
    /// False once stdout is gone (a closed pipe): the match goes on, journaled.
    printing: bool,
    stop: Arc<AtomicBool>,
    over: bool,
    /// Opening lines of a resumed run not to journal again.
    repeated: usize,
    /// A file resumed by analysing it again: what is told up to the journal's end.
    replay: Option<Replay>,
    /// Frames read so far.
    frames: u64,
    /// `--quiet`: a bumped camera's line not printed on stderr either.
    quiet: bool,
    /// Shots judged before this run (a resume from the journal's last rest).
    earlier: usize,
    /// The records of those shots told again in this run, by index (the last told of
    /// each: an amendment tells the shots it changed again). This run's own shots are
    /// the driver's to keep.
    records: BTreeMap<usize, Shot>,
}

/// The frames a resume analyses again, up to the last one journaled: their events
/// were journaled and shown before, so they are only kept to compare.
struct Replay {
    until: FrameIdx,
    /// The journal's events.
    journaled: Vec<Told>,
    /// The events of the frames analysed again.
    told: Vec<Told>,
    /// The journal's amendments and undos, made again in their order after the
    /// frame they were made after (its `known_at`), stamped as they were.
    amendments: VecDeque<(FrameIdx, AmendAsk)>,
}

/// A journaled `amended` event as the amendment to make again (or, `undone`, the
/// amendment to undo again).
fn journaled_amendment(line: &EventLine) -> Option<(FrameIdx, AmendAsk)> {
    let Event::Amended {
        number,
        undone,
        shot,
        change,
        why,
        when,
        ..
    } = &line.event
    else {
        return None;
    };
    let correction = if *undone {
        Correction::Undo(*number)
    } else {
        Correction::Amend(Request {
            shot: *shot,
            change: change.clone(),
            why: why.clone(),
        })
    };
    let ask = AmendAsk {
        correction,
        when: when.clone(),
        answer: None,
    };
    Some((line.known_at, ask))
}

/// What identifies an event told: its kind, frame and when it was known.
type Told = (&'static str, FrameIdx, FrameIdx);

/// An event as compared between a replay and its journal (camera events and shot
/// records aside: they depend on the run, not the match).
fn told(line: &EventLine) -> Option<Told> {
    match line.event {
        Event::Camera { .. } | Event::ShotRecord { .. } => None,
        _ => Some((line.event.kind(), line.frame, line.known_at)),
    }
}

impl Listener for Out {
    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        // A scoreboard is new with each run: it is told the replayed events too.
        if let Some(board) = &self.board {
            board.publish(line);
        }
        if let Some(replay) = self.replay.as_mut().filter(|r| line.known_at <= r.until) {
            replay.told.extend(told(line));
            // Told before and journaled; but one the crash came before (a move_ready
            // after the journal's last shot_over, known at the same frame) is told now.
            if replay.told.len() <= replay.journaled.len() || told(line).is_none() {
                return Ok(());
            }
        }
        if self.repeated > 0 {
            self.repeated -= 1;
        } else {
            self.journal.append(line)?;
        }
        if let Some(text) =
            super::analyse::bump_line(line).filter(|t| !self.quiet || t.contains("WARNING"))
        {
            eprintln!("{text}");
        }
        if self.printing {
            let text = line.to_json()?;
            let mut out = self.stdout.lock();
            if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
                self.printing = false;
            }
        }
        if matches!(line.event, Event::MatchOver { .. }) {
            self.over = true;
        }
        Ok(())
    }

    fn shot_record(&mut self, line: &EventLine) -> Result<(), DriverError> {
        if let Event::ShotRecord { record } = &line.event {
            if record.index < self.earlier {
                self.records.insert(record.index, (**record).clone());
            }
        }
        if self
            .replay
            .as_ref()
            .is_some_and(|r| line.known_at <= r.until)
        {
            return Ok(());
        }
        Ok(self.journal.append(line)?)
    }

    fn progress(&mut self, frames: u64) {
        self.frames = frames;
    }

    fn amendment(&mut self) -> Option<AmendAsk> {
        if let Some(replay) = self.replay.as_mut() {
            // The journal's, each after the frame it was made after.
            let due = replay
                .amendments
                .front()
                .is_some_and(|(at, _)| *at < self.frames);
            if due {
                return replay.amendments.pop_front().map(|(_, ask)| ask);
            }
            // The page's wait until the frames analysed again are behind: made
            // now, they would be taken for the journal's.
            if self.frames <= replay.until + 1 {
                return None;
            }
        }
        let mut ask = self.board.as_ref()?.amendment()?;
        ask.when = super::utc_now();
        Some(ask)
    }

    fn stop(&mut self) -> bool {
        self.over || self.stop.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps_follow_the_calendar() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        // 2026-12-03 10:45:00 UTC.
        assert_eq!(utc_stamp(1_796_294_700), "20261203T104500Z");
        // A leap day.
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
    }
}
