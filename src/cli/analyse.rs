//! `fishtrack analyse`: a recorded match in, `record.json` and a scoreboard out.
//! Parses the arguments, resolves them into the driver's [`Settings`] and start, runs
//! the library's analysis driver (`driver`: decoding, change gate, looks, tracking,
//! shots and rules, on threads of their own, memory flat) on each video, and prints.
//! Several videos are analysed in parallel, one record each; `--chain` runs them
//! as one match. Uses: driver, record, score (the scoreboard).

use anyhow::{bail, Context};
use clap::Args;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

use crate::calibration::TableCalibration;
use crate::config::Game;
use crate::driver::{
    self, CameraState, Chain, Chained, DriverError, Event, EventLine, Listener, Outcome, Settings,
    SourceInfo, Start, VideoSource,
};
use crate::model::PlayerIdx;
use crate::record::Record;
use crate::track::{FrameDetections, StrangerTag};

/// `analyse --help`: the command's whole explanation (set on the subcommand too, whose
/// one-line doc comment would otherwise replace it).
pub const LONG_ABOUT: &str = "Detect, track and score a recorded match.\n\n\
With no VIDEO, analyses the bundled sample (samples/demo/match.avi) with the bundled \
calibration. With several videos (or a folder), analyses them in parallel and writes one \
record each into the -o folder; with --chain they are one match, each clip continuing the \
last, and one record is written.\n\n\
--start takes a previous record.json (its last shot's rest poses and the match state so far) \
or a state.json: {\"poses\": {\"fish:0\": {\"x\":..,\"y\":..,\"theta\":..}, \"coin:1\": {\"x\":..,\"y\":..}}, \
\"next_player\": 1, \"scores\": [0, 0]} (only poses is required).\n\n\
A frame that cannot be decoded, that FFmpeg decodes with errors (its picture partly \
guessed), or whose picture shows macroblock damage FFmpeg did not report, and the frames predicted from it up to the next key frame, are skipped and counted (video.damaged_frames in the record, video.damage says why; the shot it falls in \
says so in its notes); reading goes on to the container's end. The \
record (and --detections file) is written under a temporary name beside its place and renamed \
there when done, so a failed run leaves nothing half-written; the output folder is checked \
before the analysis starts.";

#[derive(Debug, Args)]
#[command(
    long_about = LONG_ABOUT,
    after_help = "Exit codes:\n  \
0  done; every record written, nothing that could change a score\n  \
1  bad input or output: nothing useful was written (or, after a record was written, a \
player's colour was never seen, or a tag of a colour no player has was: the game file may \
not be this match's; --force scores it)\n  \
3  done with a warning that may change a score: damaged frames fall in a shot, a video \
could not be read to its end (cut short: a shot past the cut may be missing or cut), some \
videos of several could not be analysed (their records are missing), or with --force a \
player's colour was never seen or a tag of no player's colour was"
)]
pub struct AnalyseArgs {
    /// Video files or folders of videos (default: the bundled sample).
    pub videos: Vec<PathBuf>,
    /// Table calibration (table.json) of the camera that filmed the videos
    /// [default: calibration/table.json].
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Match set-up (game.json): players and their colours, moves, items
    /// [default: calibration/game.json].
    #[arg(long)]
    pub game: Option<PathBuf>,
    /// The state the (first) clip starts from: a record.json or a state.json.
    #[arg(long)]
    pub start: Option<PathBuf>,
    /// Treat the videos as consecutive clips of one match; write one record.
    #[arg(long)]
    pub chain: bool,
    /// Output: the record file (one video or --chain), else a folder of records
    /// [default: record.json; with several videos, out/].
    #[arg(short, long, value_name = "FILE|DIR")]
    pub output: Option<PathBuf>,
    /// Scale of the top view the detector works on, mm per pixel.
    #[arg(long, default_value_t = 1.0)]
    pub mm_per_px: f64,
    /// Frames per second, when the video's own figure is wrong or missing.
    #[arg(long)]
    pub fps: Option<f64>,
    /// Don't print the scoreboard at the end.
    #[arg(long)]
    pub quiet: bool,
    /// Also write every frame's detections (JSON lines), to replay the tracker
    /// without video or to look at what the detector saw (one video only).
    #[arg(long, value_name = "FILE.jsonl")]
    pub detections: Option<PathBuf>,
    /// Also write, into DIR, small PNG crops of the table top seen from above at the
    /// frames that decided each call (a loss, an exit, a coin in a hole, the first
    /// item moved, ...), with what was measured drawn on, and index.json linking
    /// each call to its crops (one video only; docs/formats.md).
    #[arg(long, value_name = "DIR")]
    pub evidence: Option<PathBuf>,
    /// Detect on the whole table in every frame instead of only where it changed
    /// (several times slower; to check that skipping still tables loses nothing).
    #[arg(long)]
    pub every_frame: bool,
    /// Also look for coins too fast to show a rim, as motion-blur streaks (slower:
    /// about half as much CPU time again on the bench video).
    #[arg(long)]
    pub streaks: bool,
    /// Watch for a bumped camera: at rests (at most once a second, at once after
    /// the whole picture moved) the table's outline is checked against the
    /// calibration; moved over 3 mm, the table is re-fitted from its edges and the
    /// analysis goes on with it (record: video.recalibrations). A re-fit refused is
    /// one warning line, the shots after it noted as doubtful, and exit code 3.
    #[arg(long)]
    pub recalibrate: bool,
    /// Score the match even when a player's colour never shows on the table, or a
    /// tag of a colour no player has does (the game file may be wrong, or a
    /// player's tag was out of view): print the scoreboard, warn, and exit 3
    /// instead of refusing with exit 1.
    #[arg(long)]
    pub force: bool,
}

/// Everything the analysis of one clip needs besides the video.
struct Setup {
    settings: Settings,
    detections: Option<PathBuf>,
    quiet: bool,
}

/// Checks `--mm-per-px` and `--fps` (`analyse` and `live`).
pub(super) fn check_scale_and_fps(mm_per_px: f64, fps: Option<f64>) -> anyhow::Result<()> {
    if !(mm_per_px.is_finite() && (0.1..=10.0).contains(&mm_per_px)) {
        bail!("--mm-per-px must be between 0.1 and 10, got {}", mm_per_px);
    }
    if let Some(fps) = fps {
        crate::limits::check_range(
            "--fps",
            fps,
            crate::limits::MIN_FPS,
            crate::limits::MAX_FPS,
            "frames/s",
        )
        .map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// The options `analyse` and `live` share, as given.
pub(super) struct SettingsArgs<'a> {
    pub table: Option<&'a Path>,
    pub game: Option<&'a Path>,
    pub mm_per_px: f64,
    pub fps: Option<f64>,
    pub every_frame: bool,
    pub streaks: bool,
    pub recalibrate: bool,
}

/// Loads `--table` and `--game` (the bundled ones by default) into the driver's settings.
pub(super) fn load_settings(args: SettingsArgs) -> anyhow::Result<Settings> {
    let table_path = args
        .table
        .map(Path::to_path_buf)
        .unwrap_or_else(|| super::bundled_dir("calibration").join("table.json"));
    let game_path = args
        .game
        .map(Path::to_path_buf)
        .unwrap_or_else(|| super::bundled_dir("calibration").join("game.json"));
    let calibration = TableCalibration::load(&table_path)
        .with_context(|| format!("loading the table calibration {}", table_path.display()))?;
    let game = Game::load(&game_path)
        .with_context(|| format!("loading the game set-up {}", game_path.display()))?;
    Ok(Settings {
        game,
        calibration,
        mm_per_px: args.mm_per_px,
        fps: args.fps,
        every_frame: args.every_frame,
        streaks: args.streaks,
        recalibrate: args.recalibrate,
        // `analyse` writes the record from memory; `live` sets a folder.
        keep_shots_in: None,
    })
}

pub fn run(args: AnalyseArgs) -> anyhow::Result<super::Done> {
    check_scale_and_fps(args.mm_per_px, args.fps)?;
    let videos = resolve_videos(&args.videos)?;
    let settings = load_settings(SettingsArgs {
        table: args.table.as_deref(),
        game: args.game.as_deref(),
        mm_per_px: args.mm_per_px,
        fps: args.fps,
        every_frame: args.every_frame,
        streaks: args.streaks,
        recalibrate: args.recalibrate,
    })?;
    let detections = args
        .detections
        .as_deref()
        .map(Pending::create)
        .transpose()?;
    let setup = Setup {
        settings,
        detections: detections.as_ref().map(|d| d.path().to_path_buf()),
        quiet: args.quiet,
    };
    if setup.detections.is_some() && videos.len() > 1 {
        bail!("--detections takes one video");
    }
    if args.evidence.is_some() && videos.len() > 1 {
        bail!("--evidence takes one video");
    }
    let start = match &args.start {
        Some(p) => Some(load_start(p, &setup.settings)?),
        None => None,
    };
    let single = videos.len() == 1 || args.chain;
    let output = args.output.clone().unwrap_or_else(|| {
        if single {
            PathBuf::from("record.json")
        } else {
            PathBuf::from("out")
        }
    });

    if single {
        let pending = Pending::create(&output)?;
        let (record, colours) = analyse_clips(&videos, &setup, start)?;
        let wrong = colours.wrong(&setup.settings.game);
        pending.write(&record)?;
        if let Some(d) = detections {
            d.commit()?;
        }
        eprintln!("fishtrack: wrote {}", output.display());
        if let Some(dir) = &args.evidence {
            super::replay::evidence_of_analysis(&record, &setup.settings, &videos[0], dir)?;
        }
        if let Some(wrong) = wrong.as_ref().filter(|_| !args.force) {
            // A score with a player missing, or one too many, is likely a wrong
            // game file: no scoreboard, the record kept for a look.
            bail!(
                "{wrong}: check game.json, or pass --force to score it anyway (the record was written)"
            );
        }
        if !args.quiet {
            print_scoreboard(&output)?;
        }
        if let Some(wrong) = wrong {
            eprintln!("fishtrack: warning: {wrong} (scored anyway: --force)");
            return Ok(super::Done::Warned);
        }
        return Ok(done_by(&record));
    }
    std::fs::create_dir_all(&output).with_context(|| format!("creating {}", output.display()))?;
    // Every record's place is claimed before any analysis: an unwritable folder fails now.
    let work = videos
        .iter()
        .map(|v| {
            let out = output.join(format!(
                "{}.record.json",
                v.file_stem().and_then(|s| s.to_str()).unwrap_or("video")
            ));
            Ok((v.clone(), Pending::create(&out)?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let results: Vec<(PathBuf, anyhow::Result<(PathBuf, super::Done)>)> = work
        .into_par_iter()
        .map(|(v, pending)| {
            let out = pending.dest.clone();
            let r = analyse_clips(std::slice::from_ref(&v), &setup, start.clone()).and_then(
                |(rec, colours)| {
                    pending.write(&rec)?;
                    if let Some(missing) = colours.wrong(&setup.settings.game) {
                        if !args.force {
                            bail!("wrote {} but {missing}", out.display());
                        }
                        eprintln!(
                            "fishtrack: warning: {}: {missing} (scored anyway: --force)",
                            v.display()
                        );
                        return Ok((out, super::Done::Warned));
                    }
                    Ok((out, done_by(&rec)))
                },
            );
            (v, r)
        })
        .collect();
    let mut failed = Vec::new();
    let mut done = super::Done::Clean;
    for (v, r) in &results {
        match r {
            Ok((out, d)) => {
                eprintln!("fishtrack: {} -> {}", v.display(), out.display());
                done = done.max(*d);
            }
            Err(e) => {
                failed.push(v.display().to_string());
                eprintln!("fishtrack: {}: {e:#}", v.display());
            }
        }
    }
    if failed.len() == results.len() {
        bail!("no video could be analysed");
    }
    if !failed.is_empty() {
        eprintln!(
            "fishtrack: warning: {} of {} videos could not be analysed ({}); their records are missing",
            failed.len(),
            results.len(),
            failed.join(", ")
        );
        done = super::Done::Warned;
    }
    Ok(done)
}

/// What the video showed of the players' colours.
#[derive(Debug, Default)]
struct ColoursSeen {
    /// Players whose colour never showed.
    unseen: Vec<PlayerIdx>,
    /// Whole tags of a colour no player has.
    strangers: Vec<StrangerTag>,
}

impl ColoursSeen {
    /// What is wrong with the game file by what the video showed, in one line.
    fn wrong(&self, game: &Game) -> Option<String> {
        let mut said = Vec::new();
        if !self.unseen.is_empty() {
            said.push(colours_missing(game, &self.unseen));
        }
        if !self.strangers.is_empty() {
            said.push(strangers_seen(game, &self.strangers));
        }
        (!said.is_empty()).then(|| said.join("; "))
    }
}

/// "a tag of a colour no player has (#2fb24a at 412,230 mm) was seen (players:
/// Anna (#d62728), Boris (#1f77b4))".
fn strangers_seen(game: &Game, strangers: &[StrangerTag]) -> String {
    let tags: Vec<String> = strangers
        .iter()
        .map(|t| {
            format!(
                "#{:02x}{:02x}{:02x} at {:.0},{:.0} mm",
                t.rgb[0], t.rgb[1], t.rgb[2], t.pt_in_table.x, t.pt_in_table.y
            )
        })
        .collect();
    let players: Vec<String> = game
        .players
        .iter()
        .map(|p| format!("{} ({})", p.name, p.color))
        .collect();
    format!(
        "{} of a colour no player has ({}) {} seen (players: {})",
        if tags.len() == 1 { "a tag" } else { "tags" },
        tags.join(", "),
        if tags.len() == 1 { "was" } else { "were" },
        players.join(", ")
    )
}

/// "the colour of Greta (#00ff00) was never seen in the video (seen: Anna (#d62728))":
/// which players' colours showed and which (`unseen`) did not.
fn colours_missing(game: &Game, unseen: &[PlayerIdx]) -> String {
    let named = |seen: bool| {
        let names: Vec<String> = game
            .players
            .iter()
            .enumerate()
            .filter(|(k, _)| unseen.contains(k) != seen)
            .map(|(_, p)| format!("{} ({})", p.name, p.color))
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    format!(
        "the colour of {} was never seen in the video (seen: {})",
        named(false),
        named(true)
    )
}

/// How an analysis that wrote `record` ended: with a warning when damaged frames
/// fall in a shot (its judgement may be wrong), or when reading stopped before the
/// video's end (the shots past the cut are missing, the last one may be cut short).
fn done_by(record: &Record) -> super::Done {
    let refused = record
        .video
        .recalibrations
        .iter()
        .any(|r| r.refused.is_some());
    if record.video.damaged_shots.is_empty() && record.video.stopped.is_none() && !refused {
        super::Done::Clean
    } else {
        super::Done::Warned
    }
}

/// A file written whole under a temporary name in the folder it goes to, and
/// renamed into place only when done: a failed run leaves no half-written file
/// (the temporary is removed when dropped). Made before the work starts, so that
/// an output folder that cannot be made or written in fails at once.
pub(super) struct Pending {
    dest: PathBuf,
    tmp: PathBuf,
    kept: bool,
}

impl Pending {
    pub(super) fn create(dest: &Path) -> anyhow::Result<Pending> {
        if dest.is_dir() {
            bail!("{}: is a folder, not a file name", dest.display());
        }
        let name = dest
            .file_name()
            .with_context(|| format!("{}: not a file name", dest.display()))?;
        let dir = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        // As before, a missing folder is made (`-o out/demo/record.json`).
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot make the output folder {}", dir.display()))?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write in the output folder {}", dir.display()))?;
        Ok(Pending {
            dest: dest.to_path_buf(),
            tmp,
            kept: false,
        })
    }

    /// Where to write meanwhile.
    fn path(&self) -> &Path {
        &self.tmp
    }

    /// Saves `record` and puts it in place.
    pub(super) fn write(self, record: &Record) -> anyhow::Result<()> {
        record
            .save(&self.tmp)
            .with_context(|| format!("writing {}", self.dest.display()))?;
        self.commit()
    }

    /// Saves `record` with its shots taken one at a time from `shots`
    /// ([`Record::save_with_shots`]), and puts it in place.
    pub(super) fn write_with_shots<I, E>(self, record: &Record, shots: I) -> anyhow::Result<()>
    where
        I: Iterator<Item = Result<crate::record::Shot, E>>,
        E: std::fmt::Display,
    {
        record
            .save_with_shots(shots, &self.tmp)
            .with_context(|| format!("writing {}", self.dest.display()))?;
        self.commit()
    }

    fn commit(mut self) -> anyhow::Result<()> {
        std::fs::rename(&self.tmp, &self.dest)
            .with_context(|| format!("writing {}", self.dest.display()))?;
        self.kept = true;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Expands folders into the videos they hold; no argument means the bundled sample.
fn resolve_videos(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    if given.is_empty() {
        return Ok(vec![super::bundled_dir("samples")
            .join("demo")
            .join("match.avi")]);
    }
    let mut out = Vec::new();
    for p in given {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading the folder {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                        ["avi", "mp4", "mkv", "mov"].contains(&e.to_ascii_lowercase().as_str())
                    })
                })
                .collect();
            found.sort();
            if found.is_empty() {
                bail!(
                    "{}: no videos (.avi .mp4 .mkv .mov) in this folder",
                    p.display()
                );
            }
            out.extend(found);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            bail!("{}: no such file or folder", p.display());
        }
    }
    Ok(out)
}

/// Reads `--start` against the set-up (`analyse` and `live`).
pub(super) fn load_start(path: &Path, s: &Settings) -> anyhow::Result<Start> {
    Ok(Start::load(path, &s.game, &s.calibration.table)?)
}

/// Analyses consecutive clips as one match: the record, the players whose colour
/// was never seen in any clip, and the tags of no player's colour seen in any.
fn analyse_clips(
    videos: &[PathBuf],
    setup: &Setup,
    start: Option<Start>,
) -> anyhow::Result<(Record, ColoursSeen)> {
    let mut chain = Chain::new(start);
    for video in videos {
        let outcome = analyse_one(video, setup, chain.start())?;
        chain.add(outcome);
    }
    let Chained {
        record,
        unseen,
        strangers,
    } = chain.finish().context("no video given")?;
    Ok((record, ColoursSeen { unseen, strangers }))
}

/// What the command line shows while the driver runs: the progress bar, and every
/// frame's detections into the `--detections` file.
struct Shown {
    bar: Option<indicatif::ProgressBar>,
    dump: Option<std::io::BufWriter<std::fs::File>>,
}

impl Listener for Shown {
    fn begin(&mut self, info: &SourceInfo) {
        self.bar = Some(super::progress_bar(info.frames.unwrap_or(0), "analysing"));
    }

    fn detections(&mut self, dets: &FrameDetections) -> Result<(), DriverError> {
        if let Some(out) = self.dump.as_mut() {
            use std::io::Write;
            serde_json::to_writer(&mut *out, dets)?;
            out.write_all(b"\n").map_err(|source| DriverError::Output {
                what: "the detections file".to_string(),
                source,
            })?;
        }
        Ok(())
    }

    fn progress(&mut self, frames: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(frames);
        }
    }

    fn event(&mut self, line: &EventLine) -> Result<(), DriverError> {
        if let Some(text) = bump_line(line) {
            match &self.bar {
                Some(bar) => bar.suspend(|| eprintln!("{text}")),
                None => eprintln!("{text}"),
            }
        }
        Ok(())
    }
}

/// A bumped camera's event as the one line `analyse` and `live` print on stderr
/// (a refused re-fit as a warning).
pub(crate) fn bump_line(line: &EventLine) -> Option<String> {
    let Event::Camera {
        state: CameraState::Bumped,
        detail,
        refused,
        ..
    } = &line.event
    else {
        return None;
    };
    let at = format!("frame {} ({:.1} s)", line.frame, line.t_s);
    Some(match refused {
        Some(_) => format!("fishtrack: WARNING: {at}: {detail}"),
        None => format!("fishtrack: {at}: {detail}"),
    })
}

fn analyse_one(video: &Path, setup: &Setup, start: Option<&Start>) -> anyhow::Result<Outcome> {
    let spec = video.to_string_lossy().to_string();
    let began = std::time::Instant::now();
    let source = VideoSource::open(&spec, &setup.settings)?;
    let dump = match &setup.detections {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    let mut shown = Shown { bar: None, dump };
    let outcome = driver::run(&setup.settings, start, source, &mut shown);
    if let Some(bar) = &shown.bar {
        bar.finish_and_clear();
    }
    let outcome = outcome?;
    // The buffered detections are written out with the record (`Pending::commit`).
    if let (Some(mut out), Some(path)) = (shown.dump.take(), &setup.detections) {
        use std::io::Write;
        out.flush()
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let frames = outcome.frames;
    if let Some(why) = &outcome.record.video.stopped {
        eprintln!(
            "fishtrack: warning: {}: stopped after {frames} frames ({why}); the record covers what was read, and a shot after frame {} may be missing or cut",
            video.display(),
            frames.saturating_sub(1)
        );
    }
    if !setup.quiet {
        let took = began.elapsed().as_secs_f64();
        let stats = outcome.looked.unwrap_or_default();
        eprintln!(
            "fishtrack: {}: {frames} frames in {took:.1} s ({:.0} frames/s); looked at {:.1} % of the view ({} whole, {} in part, {} unchanged)",
            video.display(),
            frames as f64 / took.max(1e-9),
            100.0 * stats.pixel_share,
            stats.wholes,
            stats.parts,
            stats.reused,
        );
    }
    if let Some(line) = &outcome.damage {
        eprintln!("fishtrack: warning: {}: {line}", video.display());
    }
    Ok(outcome)
}

fn print_scoreboard(record: &Path) -> anyhow::Result<()> {
    super::score::run(super::score::ScoreArgs {
        record: Some(record.to_path_buf()),
        game: None,
        table: None,
        json: false,
        wide: false,
    })
}
