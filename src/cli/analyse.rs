//! `fishtrack analyse`: a recorded match in, `record.json` and a scoreboard out.
//! Streams the video (memory stays flat; decoding on a thread of its own), looks
//! only where the table changed (`vision::topview::Watcher`), tracks, cuts shots
//! and judges them with the rules engine.
//! Several videos are analysed in parallel, one record each; `--chain` runs them
//! as one match. Uses: vision (frames), detect, pipeline, rules, record.

use anyhow::{bail, Context};
use clap::Args;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

use crate::calibration::TableCalibration;
use crate::config::{load_json, Game};
use crate::detect::{Detector, DetectorConfig};
use crate::geometry::Table;
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::pipeline::Analysis;
use crate::record::{Record, StartState, VideoInfo};
use crate::rules::MatchState;
use crate::track::StrangerTag;
use crate::vision::topview::{
    gate_views, stream_views, FrameGate, FramePool, FrameReader, Gated, LookStats, TopViewError,
    TopViews, Watcher, COARSE_MM_PER_PX,
};

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
/// Threads making coarse views.
const COARSE_WORKERS: usize = 2;
/// Floor shown around the table in the top view, mm: falling items are seen there.
const VIEW_MARGIN_MM: f64 = 40.0;

#[derive(Debug, Args)]
#[command(
    long_about = "Detect, track and score a recorded match.\n\n\
With no VIDEO, analyses the bundled sample (samples/demo/match.avi) with the bundled \
calibration. With several videos (or a folder), analyses them in parallel and writes one \
record each into the -o folder; with --chain they are one match, each clip continuing the \
last, and one record is written.\n\n\
--start takes a previous record.json (its last shot's rest poses and the match state so far) \
or a state.json: {\"poses\": {\"fish:0\": {\"x\":..,\"y\":..,\"theta\":..}, \"coin:1\": {\"x\":..,\"y\":..}}, \
\"next_player\": 1, \"scores\": [0, 0]} (only poses is required).\n\n\
A frame that cannot be decoded, or that FFmpeg decodes with errors (its picture partly \
guessed), is skipped and counted (video.damaged_frames in the record; the shot it falls in \
says so in its notes); reading goes on to the container's end. The \
record (and --detections file) is written under a temporary name beside its place and renamed \
there when done, so a failed run leaves nothing half-written; the output folder is checked \
before the analysis starts.",
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
    /// Detect on the whole table in every frame instead of only where it changed
    /// (several times slower; to check that skipping still tables loses nothing).
    #[arg(long)]
    pub every_frame: bool,
    /// Also look for coins too fast to show a rim, as motion-blur streaks (slower:
    /// about half as much CPU time again on the bench video).
    #[arg(long)]
    pub streaks: bool,
    /// Score the match even when a player's colour never shows on the table, or a
    /// tag of a colour no player has does (the game file may be wrong, or a
    /// player's tag was out of view): print the scoreboard, warn, and exit 3
    /// instead of refusing with exit 1.
    #[arg(long)]
    pub force: bool,
}

/// Everything the analysis of one clip needs besides the video.
struct Setup {
    game: Game,
    calibration: TableCalibration,
    mm_per_px: f64,
    fps: Option<f64>,
    detections: Option<PathBuf>,
    quiet: bool,
    every_frame: bool,
    streaks: bool,
}

pub fn run(args: AnalyseArgs) -> anyhow::Result<super::Done> {
    if !(args.mm_per_px.is_finite() && args.mm_per_px >= 0.1 && args.mm_per_px <= 10.0) {
        bail!(
            "--mm-per-px must be between 0.1 and 10, got {}",
            args.mm_per_px
        );
    }
    if let Some(fps) = args.fps {
        crate::limits::check_range(
            "--fps",
            fps,
            crate::limits::MIN_FPS,
            crate::limits::MAX_FPS,
            "frames/s",
        )
        .map_err(anyhow::Error::msg)?;
    }
    let videos = resolve_videos(&args.videos)?;
    let table_path = args
        .table
        .clone()
        .unwrap_or_else(|| super::bundled_dir("calibration").join("table.json"));
    let game_path = args
        .game
        .clone()
        .unwrap_or_else(|| super::bundled_dir("calibration").join("game.json"));
    let calibration = TableCalibration::load(&table_path)
        .with_context(|| format!("loading the table calibration {}", table_path.display()))?;
    let game = Game::load(&game_path)
        .with_context(|| format!("loading the game set-up {}", game_path.display()))?;
    let detections = args
        .detections
        .as_deref()
        .map(Pending::create)
        .transpose()?;
    let setup = Setup {
        game,
        calibration,
        mm_per_px: args.mm_per_px,
        fps: args.fps,
        detections: detections.as_ref().map(|d| d.path().to_path_buf()),
        quiet: args.quiet,
        every_frame: args.every_frame,
        streaks: args.streaks,
    };
    if setup.detections.is_some() && videos.len() > 1 {
        bail!("--detections takes one video");
    }
    let start = match &args.start {
        Some(p) => Some(load_start(p, &setup)?),
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
        let wrong = colours.wrong(&setup.game);
        pending.write(&record)?;
        if let Some(d) = detections {
            d.commit()?;
        }
        eprintln!("fishtrack: wrote {}", output.display());
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
                    if let Some(missing) = colours.wrong(&setup.game) {
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
    if record.video.damaged_shots.is_empty() && record.video.stopped.is_none() {
        super::Done::Clean
    } else {
        super::Done::Warned
    }
}

/// A file written whole under a temporary name in the folder it goes to, and
/// renamed into place only when done: a failed run leaves no half-written file
/// (the temporary is removed when dropped). Made before the work starts, so that
/// an output folder that cannot be made or written in fails at once.
struct Pending {
    dest: PathBuf,
    tmp: PathBuf,
    kept: bool,
}

impl Pending {
    fn create(dest: &Path) -> anyhow::Result<Pending> {
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
    fn write(self, record: &Record) -> anyhow::Result<()> {
        record
            .save(&self.tmp)
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

/// The opening poses and match state of a clip.
#[derive(Clone)]
struct Start {
    poses: StartState,
    state: Option<MatchState>,
}

/// Reads `--start`: a previous record (its last rest poses and match state) or a state.json.
fn load_start(path: &Path, setup: &Setup) -> anyhow::Result<Start> {
    let value: serde_json::Value = load_json(path)?;
    if value.get("shots").is_some() {
        let record = Record::load(path)?;
        return start_from_record(&record, setup).with_context(|| format!("{}", path.display()));
    }
    let poses = StartState::load(path)?;
    validate_start(&poses, setup).with_context(|| format!("{}", path.display()))?;
    let state = MatchState::from_start(&setup.game, &poses);
    Ok(Start {
        poses,
        state: Some(state),
    })
}

fn start_from_record(record: &Record, setup: &Setup) -> anyhow::Result<Start> {
    let names: Vec<&str> = setup.game.players.iter().map(|p| p.name.as_str()).collect();
    if record
        .players
        .iter()
        .map(String::as_str)
        .ne(names.iter().copied())
    {
        bail!(
            "the record is from another game set-up (players {:?}, this game has {:?})",
            record.players,
            names
        );
    }
    // Same names but other colours (or another count) is another set-up as well.
    if let Some(g) = &record.game {
        let colours = |ps: &[crate::config::Player]| -> Vec<String> {
            ps.iter().map(|p| p.color.to_ascii_lowercase()).collect()
        };
        if colours(&g.players) != colours(&setup.game.players) {
            bail!(
                "the record is from another game set-up (colours {:?}, this game has {:?})",
                colours(&g.players),
                colours(&setup.game.players)
            );
        }
    }
    let Some(last) = record.shots.last() else {
        bail!("the record has no shots to continue from");
    };
    let state = record_end_state(record, setup)?;
    let poses = StartState {
        poses: last.end.clone(),
        next_player: Some(state.next_player),
        scores: Some(state.scores.clone()),
    };
    validate_start(&poses, setup)?;
    Ok(Start {
        poses,
        state: Some(continued(state)),
    })
}

/// The match state after a record's last shot. A record of a whole match is
/// rescored from the start of the match; a record of a clip that itself continued
/// a match (its first shot's index is not 0) is rescored from the state it opened
/// with, read back from the record: whose move it was (its first shot's mover by
/// turn), the scores before it (its totals less its shots' points), the items on the
/// table (its first shot's start, less what was put back before that flick), the
/// moves made (its first shot's index, in turn from player 0).
fn record_end_state(record: &Record, setup: &Setup) -> anyhow::Result<MatchState> {
    let game = &setup.game;
    let table = &setup.calibration.table;
    let Some(first) = record.shots.first().filter(|s| s.index > 0) else {
        let (_, _, state) = crate::rules::rescore_detailed(game, table, record)?;
        return Ok(state);
    };
    let players = game.player_count();
    let scores: Vec<i32> = (0..players)
        .map(|p| {
            let total = record.scores.get(p).copied().unwrap_or(0);
            total
                - record
                    .shots
                    .iter()
                    .map(|s| s.score.get(p).copied().unwrap_or(0))
                    .sum::<i32>()
        })
        .collect();
    let mut poses = first.start.clone();
    if let Some(b) = &first.before {
        for p in &b.placed {
            poses.remove(&p.item);
        }
    }
    let opening = StartState {
        poses,
        next_player: Some(first.player),
        scores: Some(scores),
    };
    let mut state = MatchState::from_start(game, &opening).with_fps(record.video.fps);
    state.shots_judged = first.index;
    // The shots before it, taken as made in turn from player 0.
    for (p, m) in state.moves_made.iter_mut().enumerate() {
        *m = (0..first.index).filter(|k| k % players == p).count() as u32;
    }
    for shot in &record.shots {
        let (next, _) = crate::rules::judge_shot(game, table, &state, shot)?;
        state = next;
    }
    Ok(state)
}

/// A match state carried into the next clip: its frame numbers belong to the
/// previous video, so they are forgotten (the next clip's first interlude starts
/// at its first frame).
fn continued(mut state: MatchState) -> MatchState {
    state.last_rest_frame = None;
    state
}

fn validate_start(start: &StartState, setup: &Setup) -> anyhow::Result<()> {
    let players = setup.game.player_count();
    let table: &Table = &setup.calibration.table;
    for (id, pose) in &start.poses {
        if id.owner >= players {
            bail!(
                "{id} names player {} but the game has {players} players",
                id.owner
            );
        }
        check_pose(id, pose, table)?;
    }
    if let Some(p) = start.next_player {
        if p >= players {
            bail!("next_player is {p} but the game has {players} players");
        }
    }
    if let Some(s) = &start.scores {
        if s.len() != players {
            bail!(
                "scores has {} entries but the game has {players} players",
                s.len()
            );
        }
    }
    Ok(())
}

fn check_pose(id: &ItemId, pose: &Pose, table: &Table) -> anyhow::Result<()> {
    if !(pose.x.is_finite() && pose.y.is_finite() && pose.theta.is_none_or(f64::is_finite)) {
        bail!("{id}: its pose is not a finite number");
    }
    if !table.contains(pose.point()) {
        bail!(
            "{id} at ({:.1}, {:.1}) mm lies off the table",
            pose.x,
            pose.y
        );
    }
    Ok(())
}

/// Analyses consecutive clips as one match: the record, the players whose colour
/// was never seen in any clip, and the tags of no player's colour seen in any.
fn analyse_clips(
    videos: &[PathBuf],
    setup: &Setup,
    start: Option<Start>,
) -> anyhow::Result<(Record, ColoursSeen)> {
    let mut start = start;
    let mut merged: Option<Record> = None;
    let mut unseen_everywhere: Option<Vec<PlayerIdx>> = None;
    let mut strangers = Vec::new();
    for video in videos {
        let (record, state, seen) = analyse_one(video, setup, start.as_ref())?;
        unseen_everywhere = Some(match unseen_everywhere {
            None => seen.unseen,
            Some(u) => u.into_iter().filter(|n| seen.unseen.contains(n)).collect(),
        });
        strangers.extend(seen.strangers);
        let next_poses = record.shots.last().map(|s| s.end.clone());
        merged = Some(match merged {
            None => record,
            Some(mut m) => {
                m.video.path = format!("{} + {}", m.video.path, record.video.path);
                m.append_clip(record);
                m
            }
        });
        // The next clip opens where this one came to rest, with its match state.
        if let Some(poses) = next_poses {
            start = Some(Start {
                poses: StartState {
                    poses,
                    next_player: Some(state.next_player),
                    scores: Some(state.scores.clone()),
                },
                state: Some(continued(state)),
            });
        }
    }
    let record = merged.context("no video given")?;
    let colours = ColoursSeen {
        unseen: unseen_everywhere.unwrap_or_default(),
        strangers,
    };
    Ok((record, colours))
}

fn analyse_one(
    video: &Path,
    setup: &Setup,
    start: Option<&Start>,
) -> anyhow::Result<(Record, MatchState, ColoursSeen)> {
    let spec = video.to_string_lossy().to_string();
    let began = std::time::Instant::now();
    let reader = FrameReader::open(&spec, setup.calibration.camera.image_size)?;
    // A container's frame rate outside the limits is no frame rate (a damaged header).
    let container_fps = reader
        .fps()
        .filter(|f| (crate::limits::MIN_FPS..=crate::limits::MAX_FPS).contains(f));
    let fps = setup.fps.or(container_fps).unwrap_or(30.0);
    let expected = reader.len();
    let coarse = TopViews::coarse(
        &setup.calibration,
        COARSE_MM_PER_PX.max(setup.mm_per_px),
        VIEW_MARGIN_MM,
    )?;
    let players = setup.game.player_count();
    // Tops of tags and coins stand above the table; where they really are depends
    // on where the camera looks from.
    let camera = setup.calibration.camera_position_mm();
    let mut analysis = Analysis::new(
        &setup.game,
        setup.calibration.table.clone(),
        fps,
        start.map(|s| &s.poses),
        start.and_then(|s| s.state.clone()),
    )?;
    let bar = super::progress_bar(expected.unwrap_or(0), "analysing");
    let mut stopped: Option<String> = None;
    // Frames up to the last one read, damaged ones among them.
    let mut frames: u64 = 0;
    let mut damaged: Vec<FrameIdx> = Vec::new();
    let mut dump = match &setup.detections {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    // Other threads decode, make the coarse views and run the change gate while this
    // one looks and tracks, side by side on the two cores: OpenCV's capture decodes
    // on one thread, the coarse views are made on two, and the gate, which needs no
    // look's result (see `FrameGate`), runs ahead on its own. Frames the gate lets
    // through without an image cost nothing to keep, so while this thread works
    // through a moving table the decoding runs on through the still table after it.
    let pool = FramePool::default();
    // The stages below already keep both cores busy; OpenCV's own thread pool
    // (splitting each remap) would only add hand-offs between them.
    opencv::core::set_num_threads(1).context("OpenCV threads")?;
    let stats = std::thread::scope(|scope| -> anyhow::Result<LookStats> {
        let views = stream_views(scope, reader, &coarse, &pool, COARSE_WORKERS, FRAMES_AHEAD);
        let gate = FrameGate::new(coarse.grid(), setup.every_frame);
        let mut gated = gate_views(scope, views, gate, GATED_AHEAD, IMAGES_AHEAD);
        // Built while the first frames decode.
        let full = TopViews::new(&setup.calibration, setup.mm_per_px, VIEW_MARGIN_MM)?;
        let colours: Vec<[u8; 3]> = setup
            .game
            .players
            .iter()
            .map(|p| p.rgb().unwrap_or([0, 0, 0]))
            .collect();
        let detector = Detector::new(
            &setup.game.items,
            &colours,
            setup.calibration.table.clone(),
            DetectorConfig {
                coin_streaks: setup.streaks,
                ..DetectorConfig::default()
            },
        );
        let mut watcher =
            Watcher::new(full, coarse.grid(), detector, players).always_whole(setup.every_frame);
        while let Some(item) = gated.next_frame() {
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
            if let Some(frame) = frame {
                pool.give(frame.image);
                gated.done_with_image();
            }
            if let Some(camera) = &camera {
                seen = seen.seen_from(camera, &setup.game.items, watcher.footprint());
            }
            let dets = seen.to_frame_detections(index, players, watcher.footprint());
            analysis.push(index, &dets)?;
            if let Some(out) = dump.as_mut() {
                use std::io::Write;
                serde_json::to_writer(&mut *out, &dets)?;
                out.write_all(b"\n")?;
            }
            // A frame that failed to decode leaves a gap in the indices.
            damaged.extend(frames..index);
            frames = index + 1;
            bar.set_position(frames);
        }
        Ok(watcher.stats())
    })?;
    bar.finish_and_clear();
    if frames == 0 {
        match stopped {
            Some(why) => bail!("{}: no frame could be read ({why})", video.display()),
            None => bail!("{}: the video has no frames", video.display()),
        }
    }
    if stopped.is_none() {
        if let Some(expected) = expected.filter(|n| frames < *n) {
            stopped = Some(format!(
                "the file says {expected} frames; it may be truncated"
            ));
        }
    }
    if let Some(why) = &stopped {
        eprintln!(
            "fishtrack: warning: {}: stopped after {frames} frames ({why}); the record covers what was read, and a shot after frame {} may be missing or cut",
            video.display(),
            frames.saturating_sub(1)
        );
    }
    if !setup.quiet {
        let took = began.elapsed().as_secs_f64();
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
    let [width, height] = setup.calibration.camera.image_size;
    let info = VideoInfo {
        path: spec,
        fps,
        frames,
        width,
        height,
        damaged_frames: damaged,
        damaged_shots: Vec::new(),
        stopped: stopped.clone(),
    };
    let colours = ColoursSeen {
        unseen: analysis.colours_never_seen(),
        strangers: analysis.strangers().to_vec(),
    };
    let (mut record, state) = analysis.finish(info)?;
    mark_damage(&mut record);
    if let Some(line) = damage_warning(&record) {
        eprintln!("fishtrack: warning: {}: {line}", video.display());
    }
    Ok((record, state, colours))
}

/// Marks the shots `record`'s damaged frames fall in: each falls in the first shot
/// whose rest frame is at or after it (see `VideoInfo::damaged_shots`), which says
/// so in its notes.
fn mark_damage(record: &mut Record) {
    let damaged = &record.video.damaged_frames;
    let mut after: Option<FrameIdx> = None;
    let mut shots = Vec::new();
    for shot in &mut record.shots {
        let inside: Vec<FrameIdx> = damaged
            .iter()
            .copied()
            .filter(|f| after.is_none_or(|a| *f > a) && *f <= shot.rest_frame)
            .collect();
        after = Some(shot.rest_frame);
        if inside.is_empty() {
            continue;
        }
        shot.notes.push(format!(
            "{} could not be decoded whole and {} skipped: what happened then is unseen, so this shot's judgement may be wrong",
            frames_named(&inside),
            if inside.len() == 1 { "was" } else { "were" }
        ));
        shots.push(shot.index);
    }
    record.video.damaged_shots = shots;
}

/// The one line saying what damaged frames `record` has and what they may change.
fn damage_warning(record: &Record) -> Option<String> {
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

fn print_scoreboard(record: &Path) -> anyhow::Result<()> {
    super::score::run(super::score::ScoreArgs {
        record: Some(record.to_path_buf()),
        game: None,
        table: None,
        json: false,
        wide: false,
    })
}
