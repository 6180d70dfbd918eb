//! `fishtrack simulate`: plays a scenario (built-in or JSON file) and writes the
//! rendered video (or calibration PNGs), `truth.json`, the true `camera.json` and
//! `table.json`, and the match's `game.json` (players and items inline, for
//! `analyse --game`) into the output folder (and `look.json`, when the look is not
//! the original). Rendering needs the `opencv` feature; `--truth-only` works
//! without it.

use crate::sim::look::Look;
use crate::sim::{simulate, Scenario, SimOptions};
use anyhow::{bail, Context};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = "Writes into the output folder: the video (video.avi), truth.json, camera.json, \
table.json and game.json (the players and items as played: analyse --game takes it as it is; \
look.json too for a look not the original).\n\
Built-in scenarios: single-shot, match, chessboard, empty-table, stacking, \
coin-collision, table-clearing. A scenario file is JSON, every key optional (its format: the \
module documentation of src/sim/scenario.rs).\n\
Example: fishtrack simulate --scenario match --seed 7 -o out/\n\
A random look (materials, light, shadows, camera, H.264): \
fishtrack simulate --scenario match --players 3 --look random --look-seed 4 -o out/"
)]
pub struct SimulateArgs {
    /// A built-in scenario name or a scenario JSON file.
    #[arg(long, default_value = "single-shot")]
    pub scenario: String,
    /// Random seed: the same seed gives the same truth and video.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder (created if missing); required, as a simulation writes several files.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Image size WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x720")]
    pub size: String,
    /// Frames per second of the video.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// Camera angle from vertical, degrees (overrides the scenario).
    #[arg(long)]
    pub camera_tilt: Option<f64>,
    /// Camera distance to the table centre, mm (default: as near as fits the table).
    #[arg(long)]
    pub camera_distance: Option<f64>,
    /// Video file name inside the output folder (.avi: MJPG, .mp4: mp4v).
    #[arg(long, default_value = "video.avi")]
    pub video: String,
    /// Video codec: `mjpg` (default for .avi) or `mp4v` (default for .mp4; far smaller).
    #[arg(long)]
    pub codec: Option<String>,
    /// Also write the true camera.json and table.json into this folder (e.g. `calibration`).
    #[arg(long)]
    pub calibration_out: Option<PathBuf>,
    /// Motion-blur sub-frames (overrides the scenario; 1 = no blur).
    #[arg(long)]
    pub subframes: Option<u32>,
    /// Sensor noise sigma in grey levels (overrides the scenario).
    #[arg(long)]
    pub noise: Option<f64>,
    /// No flicking hand.
    #[arg(long)]
    pub no_hand: bool,
    /// Players of a generated match (1 to 4, from the palette: Anna, Boris, Vera,
    /// Gleb), instead of the scenario's own; not for scripted starts or shots.
    #[arg(long, value_name = "N")]
    pub players: Option<usize>,
    /// Moves per player of a generated match, instead of the scenario's own.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub moves: Option<u32>,
    /// How frames look: `original` (the default), `random` (a look drawn from
    /// --look-seed, noise and exposure drift included: see src/sim/look.rs), or a
    /// look JSON file (every key optional). Overrides the scenario's `render.look`.
    #[arg(long, value_name = "original|random|FILE.json")]
    pub look: Option<String>,
    /// Seed of `--look random` (default: --seed).
    #[arg(long, requires = "look")]
    pub look_seed: Option<u64>,
    /// Number of chessboard views (chessboard scenario).
    #[arg(long, default_value_t = 18)]
    pub views: usize,
    /// Also write these frames as PNG (comma-separated frame indices), for a look.
    #[arg(long, value_delimiter = ',')]
    pub png_frames: Vec<u64>,
    /// Also write record.json: the truth as a record, judged by the rules engine.
    #[arg(long)]
    pub record: bool,
    /// Write truth.json, camera.json, table.json and game.json only (no rendering).
    #[arg(long)]
    pub truth_only: bool,
}

pub(super) fn parse_size(s: &str) -> anyhow::Result<[u32; 2]> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .with_context(|| format!("--size `{s}`: expected WIDTHxHEIGHT, e.g. 1280x720"))?;
    let w: u32 = w
        .trim()
        .parse()
        .with_context(|| format!("--size `{s}`: bad width"))?;
    let h: u32 = h
        .trim()
        .parse()
        .with_context(|| format!("--size `{s}`: bad height"))?;
    if !(16..=8192).contains(&w) || !(16..=8192).contains(&h) {
        bail!("--size `{s}`: width and height must be in 16..8192");
    }
    Ok([w, h])
}

pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    use crate::limits::{self as l, check_range};
    let size = parse_size(&args.size)?;
    check_range("--fps", args.fps, l::MIN_FPS, l::MAX_FPS, "frames/s")
        .map_err(anyhow::Error::msg)?;
    if let Some(t) = args.camera_tilt {
        check_range("--camera-tilt", t, -89.0, 89.0, "deg").map_err(anyhow::Error::msg)?;
    }
    if let Some(d) = args.camera_distance {
        check_range(
            "--camera-distance",
            d,
            1.0,
            10.0 * l::MAX_TABLE_SIDE_MM,
            "mm",
        )
        .map_err(anyhow::Error::msg)?;
    }
    if let Some(n) = args.noise {
        check_range("--noise", n, 0.0, 255.0, "grey levels").map_err(anyhow::Error::msg)?;
    }
    if let Some(n) = args.players {
        l::check_count("--players", n, l::MAX_PLAYERS).map_err(anyhow::Error::msg)?;
    }
    // A chessboard view is a rendered PNG; ten thousand is no calibration.
    l::check_count("--views", args.views, 10_000).map_err(anyhow::Error::msg)?;
    let mut scenario = Scenario::resolve(&args.scenario)?;
    if args.no_hand {
        scenario.render.hand = false;
    }
    if let Some(n) = args.subframes {
        scenario.render.subframes = n.clamp(1, 64);
    }
    if let Some(n) = args.players {
        scenario = scenario.with_players(n)?;
    }
    if let Some(m) = args.moves {
        scenario = scenario.with_moves(m)?;
    }
    apply_look(&mut scenario, &args)?;
    if let Some(n) = args.noise {
        scenario.render.noise_sigma = n.max(0.0);
    }
    let opts = SimOptions {
        seed: args.seed,
        fps: args.fps,
        size,
        camera_tilt_deg: args.camera_tilt,
        camera_distance_mm: args.camera_distance,
        video_name: args.video.clone(),
    };
    let mut truth = simulate(&scenario, &opts)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    if !args.truth_only {
        render(&scenario, &mut truth, &args)?;
    }
    if !scenario.render.look.is_original() {
        // What was drawn, to see or to render again with --look look.json.
        crate::config::save_json(&scenario.render.look, &args.out.join("look.json"))?;
    }
    truth.save(&args.out.join("truth.json"))?;
    truth.camera.save(&args.out.join("camera.json"))?;
    crate::config::save_json(&truth.table, &args.out.join("table.json"))?;
    // The players and items as played, taken by `analyse --game` as they are.
    crate::config::save_json(&truth.game, &args.out.join("game.json"))?;
    if args.record {
        let record = super::eval::scored_truth(&truth).context("judging the simulated match")?;
        record.save(&args.out.join("record.json"))?;
    }
    if let Some(dir) = &args.calibration_out {
        truth.camera.save(&dir.join("camera.json"))?;
        crate::config::save_json(&truth.table, &dir.join("table.json"))?;
    }
    eprintln!(
        "simulate: {} (seed {}): {} frames, {} shots -> {}",
        truth.scenario,
        truth.seed,
        truth.frames.len(),
        truth.shots.len(),
        args.out.display()
    );
    Ok(())
}

/// `--look` and `--look-seed` applied to the scenario's render spec.
fn apply_look(scenario: &mut Scenario, args: &SimulateArgs) -> anyhow::Result<()> {
    match args.look.as_deref() {
        None => {}
        Some("original") => {
            if args.look_seed.is_some() {
                bail!("--look-seed goes with --look random");
            }
            scenario.render.look = Look::default();
        }
        Some("random") => scenario
            .render
            .randomise(args.look_seed.unwrap_or(args.seed)),
        Some(file) => {
            if args.look_seed.is_some() {
                bail!("--look-seed goes with --look random, not a look file");
            }
            let look: Look =
                crate::config::load_json(std::path::Path::new(file)).with_context(|| {
                    format!("--look {file}: expected original, random or a look JSON file")
                })?;
            look.check_ranges()
                .with_context(|| format!("--look {file}"))?;
            scenario.render.look = look;
        }
    }
    Ok(())
}

#[cfg(feature = "opencv")]
fn render(
    scenario: &Scenario,
    truth: &mut crate::sim::Truth,
    args: &SimulateArgs,
) -> anyhow::Result<()> {
    use crate::sim::board::{board_poses, BOARD};
    use crate::sim::scenario::Kind;
    use crate::sim::truth::BoardViewTruth;
    use crate::vision::render::{render_video, write_image, Renderer};
    match scenario.kind {
        Kind::Play => {
            let bar = super::progress_bar(truth.frames.len() as u64, "rendering");
            render_video(
                truth,
                &scenario.render,
                &args.out.join(&args.video),
                args.codec.as_deref(),
                |_| bar.inc(1),
            )?;
            bar.finish_and_clear();
            if !args.png_frames.is_empty() {
                let mut r = Renderer::new(truth, &scenario.render, truth.seed)?;
                for &f in &args.png_frames {
                    let Some(cur) = truth.frames.get(f as usize) else {
                        anyhow::bail!(
                            "--png-frames: frame {f} does not exist ({} frames)",
                            truth.frames.len()
                        );
                    };
                    let prev = f.checked_sub(1).and_then(|p| truth.frames.get(p as usize));
                    let img = r.render_frame(prev, cur, truth.video.fps)?;
                    write_image(&args.out.join(format!("frame_{f:05}.png")), &img)?;
                }
            }
        }
        Kind::EmptyTable => {
            let mut r = Renderer::new(truth, &scenario.render, truth.seed)?;
            let img = r.render_frame(None, &truth.frames[0], truth.video.fps)?;
            write_image(&args.out.join("empty_table.png"), &img)?;
            truth.video.path = "empty_table.png".into();
        }
        Kind::Chessboard => {
            let r = Renderer::new(truth, &scenario.render, truth.seed)?;
            let poses = board_poses(r.camera(), &BOARD, args.views.max(1), truth.seed);
            if poses.len() < args.views {
                anyhow::bail!("only {} chessboard views fit this camera", poses.len());
            }
            let bar = super::progress_bar(poses.len() as u64, "chessboard");
            let mut views = Vec::new();
            for (i, pose) in poses.iter().enumerate() {
                let name = format!("board_{i:02}.png");
                let img = r.render_board(pose, &BOARD)?;
                write_image(&args.out.join(&name), &img)?;
                let m = &pose.rotation;
                views.push(BoardViewTruth {
                    image: name,
                    rotation: [
                        [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
                        [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
                        [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
                    ],
                    translation_mm: [pose.translation.x, pose.translation.y, pose.translation.z],
                    corners_px: pose
                        .corners_px(r.camera(), &BOARD)
                        .iter()
                        .map(|p| [p.x, p.y])
                        .collect(),
                });
                bar.inc(1);
            }
            bar.finish_and_clear();
            truth.board_views = views;
            truth.board = Some(BOARD);
            truth.video.path = String::new();
            truth.video.frames = 0;
            // The empty table too, for `calibrate table` on the same camera.
            let mut r = r;
            let img = r.render_frame(None, &truth.frames[0], truth.video.fps)?;
            write_image(&args.out.join("empty_table.png"), &img)?;
        }
    }
    Ok(())
}

#[cfg(not(feature = "opencv"))]
fn render(_: &Scenario, _: &mut crate::sim::Truth, _: &SimulateArgs) -> anyhow::Result<()> {
    anyhow::bail!("rendering needs the `opencv` feature; use --truth-only")
}
