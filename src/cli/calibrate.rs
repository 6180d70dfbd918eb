//! `fishtrack calibrate board|camera|table`: turns the arguments into calls on
//! `calibration::board` and `vision::calibrate` and prints what a person calibrating
//! wants to know (what to print and pass on, which views were used or dropped, where
//! the board was never seen, how well the table fits).
//! Uses: calibration, vision (capture, calibrate), cli helpers.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum CalibrateCommand {
    /// A chessboard to print, at true scale (writes chessboard-<paper>.pdf and .png).
    ///
    /// Writes the board as a PDF and as a 300 dpi PNG for each paper asked for. The
    /// page states the board's size and square size, the `calibrate camera --board
    /// --square` arguments that match it, and carries a 100 mm ruler: print at 100 %
    /// (actual size, no "fit to page") and check the ruler before photographing the
    /// board. A board too large for the paper is refused, naming the largest square
    /// that fits. Glue the print flat on something stiff.
    Board(BoardArgs),
    /// Camera intrinsics from chessboard views (writes camera.json).
    ///
    /// Shows a printed chessboard to the camera from many angles, all over the picture.
    /// From a folder or glob every image is a view; from a video, sharp frames with
    /// varied board positions are picked. Views without the whole board, or whose
    /// error is far above the rest, are left out (and named). A --board smaller than
    /// the board in the views (a part of its grid is found too, and calibrates to a
    /// wrong focal length) is refused, naming the size seen; so is a size found in too
    /// few views when a neighbouring size is found instead. The result keeps the
    /// RMS reprojection error and per-view errors, how well each intrinsic parameter
    /// is known (standard deviations and their covariance, which `calibrate table`
    /// carries into how far a point on the table may be off), and the command prints how many
    /// corners were seen in each ninth of the picture, so you know where to add views.
    Camera(CameraArgs),
    /// The table plane from a frame of the empty table (writes table.json).
    ///
    /// The table top (which must contrast with the floor and cover the picture's
    /// centre) is found automatically: corner 0 is the corner nearest the picture's
    /// bottom-left among the two that start a W-long side, the others follow
    /// counter-clockwise as seen from above. Or give the corners with --corners.
    /// Where the table's side face is in view (the camera stands beyond that side),
    /// the top's edge is taken where the top's colour ends, not where the face meets
    /// the floor. When found automatically, the table.json written is that of a rigid
    /// camera with the given intrinsics fitted to every edge point (given corners are
    /// kept as given, and only judged by that fit), with the worst-case position error over the table
    /// (`position_uncertainty_mm`) from the edge fits' scatter and, where camera.json
    /// states it (`calibrate camera` writes intrinsics_std_dev), the intrinsics'
    /// uncertainty. Also writes a check picture (the undistorted frame with the
    /// outline, a grid and the map of that uncertainty over the table).
    ///
    /// A calibration that disagrees with itself is refused (exit code 1, no
    /// table.json, the check picture still written): when a seen corner lies over
    /// 2 mm from where the rigid camera puts it, or the table's W/H seen differs from
    /// --size by over 1 %. One line names the doubtful corner and why; --force writes
    /// it anyway, with that line as a warning.
    ///
    /// With --no-chessboard (instead of --camera) the camera is found from the table
    /// too: its focal length (square pixels) and first radial distortion term k1, the
    /// principal point taken at the picture's centre, from the table's known size and
    /// straight sides in one or more frames (a folder or glob of images, or --frames N
    /// of a video). Writes camera.json (with "source": "table") beside table.json, and
    /// prints how far the focal length may be off, from the edges' scatter and from
    /// the principal point being assumed. A table seen square-on gives no focal length
    /// and is refused in one line (tilt the camera 25–40° from vertical); the same
    /// self-consistency refusal applies, and then neither file is written. A chessboard
    /// calibration (`calibrate camera`) is the more accurate, above all for wide lenses.
    Table(TableArgs),
    /// The table re-fitted from a later frame after the camera was bumped (writes a new table.json).
    ///
    /// Reads a frame from the camera as it stands now and the table.json made before
    /// it moved. The table's edges are looked for only in a band around where the
    /// old calibration puts them (--band), so items and hands on the table may stay
    /// (where they leave most of each edge in view). First it says how far the table's
    /// outline has moved, in mm at the table's edges, and how much of the edges was
    /// seen; "cannot tell" (exit code 1) when too little was. When it moved by more
    /// than 3 mm (or with --always) the camera's pose is fitted again to the edges,
    /// with the old intrinsics and table size, and judged as `calibrate table` judges
    /// its fit: a corner over 2 mm from the rigid camera's, or the W/H seen over 1 %
    /// off, is refused in one line (exit code 1; --force writes it anyway). The new
    /// table.json is written to -o, never over the old one, with a check picture
    /// beside it. A camera moved further than the band (about 2° at a 70° lens) is not
    /// followed: calibrate the table again from a frame of the empty table.
    Refit(RefitArgs),
}

/// Which paper `calibrate board` lays the chessboard out for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PaperChoice {
    /// ISO A4, 210 x 297 mm.
    A4,
    /// US Letter, 8.5 x 11 in.
    Letter,
    /// Both.
    All,
}

#[derive(Debug, Args)]
pub struct BoardArgs {
    /// The paper to print on.
    #[arg(long, value_enum, default_value_t = PaperChoice::All)]
    pub paper: PaperChoice,
    /// Inner corners of the chessboard, per row x per column (9x6 is 10x7 squares), as
    /// `calibrate camera --board` takes it.
    #[arg(long, default_value = "9x6")]
    pub board: String,
    /// Side of one chessboard square, in mm.
    #[arg(long, default_value_t = 25.0, value_name = "MM")]
    pub square: f64,
    /// The folder to write chessboard-<paper>.pdf and chessboard-<paper>.png into.
    #[arg(short, long, default_value = ".", value_name = "DIR")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct CameraArgs {
    /// Board views: a folder of images, a glob like "shots/*.png" (quote it), a video,
    /// or `webcam:N` (a live camera: 300 frames are examined).
    #[arg(long, value_name = "DIR|GLOB|VIDEO")]
    pub images: String,
    /// Inner corners of the chessboard, per row x per column (a board of 10x7 squares
    /// is 9x6; `calibrate board` prints the value for the board it writes).
    #[arg(long, default_value = "9x6")]
    pub board: String,
    /// Side of one chessboard square, in mm, as measured on the print.
    #[arg(long, default_value_t = 25.0, value_name = "MM")]
    pub square: f64,
    /// Where to write camera.json.
    #[arg(short, long, default_value = "camera.json")]
    pub output: PathBuf,
    /// From a video: the most views to use (sharpest of each board position).
    #[arg(long, default_value_t = 40)]
    pub max_views: usize,
    /// Drop every view whose RMS error is above this (px), instead of the automatic
    /// rule (over 5x the median view and over 1.5 px).
    #[arg(long, value_name = "PX")]
    pub max_view_rms: Option<f64>,
    /// Corner refinement window (cornerSubPix half-size): `standard` (11, OpenCV's
    /// usual procedure), `auto` (smaller when the squares are under 24 px), or a number.
    #[arg(long, default_value = "standard", value_name = "standard|auto|N")]
    pub subpix_window: String,
    /// Print the result as JSON on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TableArgs {
    /// A frame of the empty table: an image, a video (see --frame), or `webcam:N`.
    /// With --no-chessboard also a folder or a glob ("frames/*.png", quoted) of
    /// images of it, each a frame (the first is the one table.json is for).
    #[arg(long, value_name = "FRAME|VIDEO")]
    pub image: String,
    /// The camera's intrinsics (from `fishtrack calibrate camera`), for the frame's
    /// resolution. Not with --no-chessboard, which finds them from the table.
    #[arg(
        long,
        value_name = "camera.json",
        required_unless_present = "no_chessboard",
        conflicts_with = "no_chessboard"
    )]
    pub camera: Option<PathBuf>,
    /// No chessboard: find the camera's focal length and first radial distortion
    /// term (k1) from the table itself, its known size and straight sides, and write
    /// camera.json too (see --camera-output). The principal point is taken at the
    /// picture's centre and the other distortion terms as zero. The camera must look
    /// at the table at a slant (20° or more from straight down): a table seen
    /// square-on gives no focal length, and is refused. --size must be right to the
    /// millimetre: with the focal length free, a wrong W/H moves it rather than
    /// being refused.
    #[arg(long)]
    pub no_chessboard: bool,
    /// With --no-chessboard: where to write the camera.json found (by default
    /// camera.json beside the table.json, which is not replaced if it came from
    /// elsewhere than a table, such as a chessboard).
    #[arg(long, value_name = "camera.json", requires = "no_chessboard")]
    pub camera_output: Option<PathBuf>,
    /// With --no-chessboard and a video: how many frames to use, spread evenly from
    /// --frame to the end (the camera must not move between them).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        requires = "no_chessboard"
    )]
    pub frames: u64,
    /// The table top's size in mm, W x H: W along the edge from corner 0 to corner 1.
    #[arg(long, default_value = "1000x700", value_name = "WxH")]
    pub size: String,
    /// The table corners in the frame's pixels, "u,v;u,v;u,v;u,v": corner 0 -> (0,0),
    /// 1 -> (W,0), 2 -> (W,H), 3 -> (0,H), counter-clockwise seen from above.
    #[arg(long, value_name = "u,v;u,v;u,v;u,v", conflicts_with = "no_chessboard")]
    pub corners: Option<String>,
    /// Which video frame to use (counting from 0).
    #[arg(long, default_value_t = 0)]
    pub frame: u64,
    /// Where to write table.json.
    #[arg(short, long, default_value = "table.json")]
    pub output: PathBuf,
    /// The check picture; by default next to the output, `<name>_check.png`.
    #[arg(long, value_name = "PNG")]
    pub check: Option<PathBuf>,
    /// Grid spacing of the check picture, in mm.
    #[arg(long, default_value_t = 100.0, value_name = "MM")]
    pub grid: f64,
    /// Print the result as JSON on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Write table.json even when the calibration disagrees with itself (a corner
    /// over 2 mm from the rigid camera's, or the seen W/H over 1 % from --size),
    /// with a warning instead of the refusal.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct RefitArgs {
    /// A frame from the camera as it stands now: an image, a video (see --frame), or
    /// `webcam:N`.
    #[arg(long, value_name = "FRAME|VIDEO")]
    pub image: String,
    /// Which video frame to use (counting from 0).
    #[arg(long, default_value_t = 0)]
    pub frame: u64,
    /// The table.json made before the camera moved (its camera and table size are kept).
    #[arg(long, value_name = "OLD.json")]
    pub table: PathBuf,
    /// Where to write the re-fitted table.json; must not be the old one. Without it
    /// nothing is written.
    #[arg(short, long, value_name = "NEW.json")]
    pub output: Option<PathBuf>,
    /// Re-fit even when the table has not moved by more than 3 mm, or when too
    /// little of its edges was seen to tell.
    #[arg(long)]
    pub always: bool,
    /// Write the re-fitted table.json even when it disagrees with itself, with a
    /// warning instead of the refusal.
    #[arg(long)]
    pub force: bool,
    /// How far either side of the old outline its edges are looked for, in
    /// (undistorted) pixels.
    #[arg(long, default_value_t = 40.0, value_name = "PX")]
    pub band: f64,
    /// The check picture; by default next to the output, `<name>_check.png`.
    #[arg(long, value_name = "PNG")]
    pub check: Option<PathBuf>,
    /// Print the result as JSON on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: CalibrateCommand) -> anyhow::Result<()> {
    match cmd {
        CalibrateCommand::Board(a) => imp::board(a),
        CalibrateCommand::Camera(a) => imp::camera(a),
        CalibrateCommand::Table(a) => imp::table(a),
        CalibrateCommand::Refit(a) => imp::refit(a),
    }
}

#[cfg(not(feature = "opencv"))]
mod imp {
    pub fn board(_: super::BoardArgs) -> anyhow::Result<()> {
        anyhow::bail!(
            "`fishtrack calibrate` needs OpenCV: rebuild with the default `opencv` feature"
        )
    }
    pub fn camera(_: super::CameraArgs) -> anyhow::Result<()> {
        anyhow::bail!(
            "`fishtrack calibrate` needs OpenCV: rebuild with the default `opencv` feature"
        )
    }
    pub fn table(_: super::TableArgs) -> anyhow::Result<()> {
        anyhow::bail!(
            "`fishtrack calibrate` needs OpenCV: rebuild with the default `opencv` feature"
        )
    }
    pub fn refit(_: super::RefitArgs) -> anyhow::Result<()> {
        anyhow::bail!(
            "`fishtrack calibrate` needs OpenCV: rebuild with the default `opencv` feature"
        )
    }
}

#[cfg(feature = "opencv")]
mod imp {
    use super::{BoardArgs, CameraArgs, PaperChoice, RefitArgs, TableArgs};
    use crate::calibration::board::{BoardPage, Paper};
    use crate::calibration::refit::{
        check_bump, refit_table, BgrFrame, BumpCheck, BumpVerdict, OutlineSearch, MOVED_MM,
    };
    use crate::calibration::table_lens::MAX_FOCAL_UNCERTAINTY;
    use crate::calibration::{
        sparse_cells, CameraDoubtKeys, CameraIntrinsics, TableCalibration, TableDoubt, TableFile,
    };
    use crate::cli::progress_bar;
    use crate::vision::calibrate::{
        collect_views_from_images, collect_views_from_video, draw_table_check, parse_corners,
        solve_camera, solve_lens_from_table, solve_table_with_doubts, Chessboard, OutlierRule,
        SubpixWindow, MIN_FINDABLE_CORNERS, STANDARD_SUBPIX_HALF,
    };
    use crate::vision::capture::{Frame, FrameSource};
    use anyhow::{bail, Context};
    use opencv::core::{Mat, Vector};
    use opencv::imgcodecs;
    use serde::Serialize;
    use std::path::{Path, PathBuf};

    /// `writeln!` into the summary buffer (writing to a String cannot fail).
    macro_rules! say {
        ($o:expr, $($t:tt)*) => {{
            use std::fmt::Write as _;
            let _ = writeln!($o, $($t)*);
        }};
    }

    pub fn board(a: BoardArgs) -> anyhow::Result<()> {
        let mut o = String::new();
        let board = Chessboard::parse(&a.board, a.square)?;
        let papers: &[Paper] = match a.paper {
            PaperChoice::A4 => &[Paper::A4],
            PaperChoice::Letter => &[Paper::Letter],
            PaperChoice::All => &Paper::ALL,
        };
        // Every page is laid out before any is written: a board too large for one
        // paper leaves no half-done set behind.
        let pages = papers
            .iter()
            .map(|&p| BoardPage::layout(p, board.cols, board.rows, board.square_mm))
            .collect::<Result<Vec<_>, _>>()?;
        std::fs::create_dir_all(&a.output)
            .with_context(|| format!("cannot create {}", a.output.display()))?;
        for page in &pages {
            let stem = a.output.join(format!("chessboard-{}", page.paper.slug()));
            let (pdf, png) = (stem.with_extension("pdf"), stem.with_extension("png"));
            write_bytes(&pdf, &page.to_pdf())?;
            write_bytes(&png, &page.to_png()?)?;
            say!(
                o,
                "wrote {} and {} ({} {}, {}x{} squares of {} mm)",
                pdf.display(),
                png.display(),
                page.paper,
                if page.landscape {
                    "landscape"
                } else {
                    "portrait"
                },
                board.cols + 1,
                board.rows + 1,
                board.square_mm
            );
        }
        say!(
            o,
            "print at 100 % (actual size, no fit to page) and check that the ruler measures 100 mm"
        );
        say!(
            o,
            "then: fishtrack calibrate camera --images DIR {}",
            pages[0].camera_args()
        );
        emit(&o)
    }

    /// camera.json as written: the DESIGN.md keys plus what helps judge the calibration.
    #[derive(Serialize)]
    struct CameraOut<'a> {
        #[serde(flatten)]
        camera: &'a CameraIntrinsics,
        board: [u32; 2],
        square_mm: f64,
        /// Views left out for a far-above-the-rest error: `[name, rms_px]`.
        dropped_views: Vec<(String, f64)>,
        /// Images (frames) where the whole board was not found.
        no_board: Vec<String>,
        /// Corners of the used views in each ninth of the picture, rows top to bottom.
        coverage: [[usize; 3]; 3],
        /// 1 sigma of `[fx, fy, cx, cy, k1, k2, p1, p2, k3]` (OpenCV's
        /// stdDeviationsIntrinsics): `calibrate table` carries them into its
        /// position uncertainty.
        #[serde(skip_serializing_if = "<[f64]>::is_empty")]
        intrinsics_std_dev: &'a [f64],
        /// The covariance of the same nine, correlations kept (the views' poses
        /// marginalised out); `calibrate table` prefers it to the deviations.
        #[serde(skip_serializing_if = "Option::is_none")]
        intrinsics_covariance: Option<[[f64; 9]; 9]>,
    }

    pub fn camera(a: CameraArgs) -> anyhow::Result<()> {
        let mut o = String::new();
        let board = Chessboard::parse(&a.board, a.square)?;
        if board.cols.min(board.rows) < MIN_FINDABLE_CORNERS {
            bail!(
                "--board {}: a chessboard is found only with at least {MIN_FINDABLE_CORNERS} inner corners each way (a board of 4x4 squares or more)",
                a.board
            );
        }
        let window = SubpixWindow::parse(&a.subpix_window).with_context(|| {
            format!(
                "--subpix-window must be standard, auto or 1..50, got {:?}",
                a.subpix_window
            )
        })?;
        let mut source = FrameSource::open(&a.images)?;
        let bar = progress_bar(source.len().unwrap_or(0), "boards");
        let mut tick = || bar.inc(1);
        let search = if source.is_video() {
            collect_views_from_video(&mut source, &board, a.max_views, window, &mut tick)?
        } else {
            collect_views_from_images(&mut source, &board, window, &mut tick)?
        };
        bar.finish_and_clear();
        if search.views.is_empty() {
            return Err(crate::vision::calibrate::CalibrateError::NoBoard {
                read: search.read,
                cols: board.cols,
                rows: board.rows,
            }
            .into());
        }
        let rule = OutlierRule {
            limit_px: a.max_view_rms,
            ..OutlierRule::default()
        };
        let solution = solve_camera(&search.views, search.image_size, &board, rule, search.read)?;
        let cam = &solution.camera;
        let out = CameraOut {
            camera: cam,
            board: [board.cols, board.rows],
            square_mm: board.square_mm,
            dropped_views: solution.dropped.clone(),
            no_board: search.missed.clone(),
            coverage: solution.coverage,
            intrinsics_std_dev: &solution.intrinsics_std_dev,
            intrinsics_covariance: solution.intrinsics_covariance,
        };
        let text = serde_json::to_string_pretty(&out).context("serialising camera.json")?;
        write_file(&a.output, &(text.clone() + "\n"))?;
        if a.json {
            say!(o, "{text}");
            return emit(&o);
        }
        let [w, h] = cam.image_size;
        say!(
            o,
            "camera {w}x{h}: {} views used of {} read (board {}x{}, {} mm squares)",
            cam.views,
            search.read,
            board.cols,
            board.rows,
            board.square_mm
        );
        say!(
            o,
            "  RMS reprojection error {:.4} px; fx {:.3} fy {:.3} cx {:.3} cy {:.3}",
            cam.rms_px,
            cam.fx(),
            cam.fy(),
            cam.cx(),
            cam.cy()
        );
        let d = cam.dist_coeffs;
        say!(
            o,
            "  distortion k1 {:.5} k2 {:.5} p1 {:.5} p2 {:.5} k3 {:.5}",
            d[0],
            d[1],
            d[2],
            d[3],
            d[4]
        );
        if !search.missed.is_empty() {
            say!(
                o,
                "  no whole board in {} of {}: {}",
                search.missed.len(),
                search.read,
                shorten(&search.missed)
            );
        }
        for (name, err) in &solution.dropped {
            say!(
                o,
                "  dropped {name}: RMS {err:.2} px, far above the other views"
            );
        }
        let worst = cam
            .per_view_rms_px
            .iter()
            .zip(&cam.view_names)
            .max_by(|x, y| x.0.total_cmp(y.0));
        if let Some((err, name)) = worst {
            say!(o, "  worst view kept: {name} at {err:.3} px");
        }
        if window == SubpixWindow::Standard {
            let small: Vec<String> = search
                .views
                .iter()
                .filter(|v| v.square_px < (2 * STANDARD_SUBPIX_HALF + 2) as f64)
                .map(|v| v.name.clone())
                .collect();
            if !small.is_empty() {
                say!(o,
                    "  note: squares under 24 px in {} (the 23x23 refinement window reaches the next corner; --subpix-window auto avoids that)",
                    shorten(&small)
                );
            }
        }
        say!(o, "  corners seen per region of the picture:");
        let labels = ["top", "middle", "bottom"];
        say!(
            o,
            "  {:>8} {:>6} {:>6} {:>6}",
            "",
            "left",
            "centre",
            "right"
        );
        for (r, row) in solution.coverage.iter().enumerate() {
            say!(
                o,
                "  {:>8} {:>6} {:>6} {:>6}",
                labels[r],
                row[0],
                row[1],
                row[2]
            );
        }
        let sparse = sparse_cells(&solution.coverage);
        if sparse.is_empty() {
            say!(
                o,
                "  coverage is even: the board was seen all over the picture"
            );
        } else {
            say!(o,
                "  advice: few corners near the {}: add views with the board there (distortion is only known where corners were seen)",
                sparse.join(", ")
            );
        }
        say!(o, "wrote {}", a.output.display());
        emit(&o)
    }

    /// table.json as written: the DESIGN.md keys plus the fit measures.
    #[derive(Serialize)]
    struct TableOut<'a> {
        #[serde(flatten)]
        file: &'a TableFile,
        /// `"table"` when the camera's intrinsics were found from the table itself
        /// (`--no-chessboard`).
        #[serde(skip_serializing_if = "Option::is_none")]
        camera_source: Option<&'static str>,
        /// RMS distance of the measured edge points from the table's sides (automatic only).
        #[serde(skip_serializing_if = "Option::is_none")]
        edge_rms_mm: Option<f64>,
        /// The table's W/H as the camera sees it.
        measured_aspect: f64,
        corners_found_automatically: bool,
        /// Per corner: mm between the seen corner and the rigid camera's.
        corner_offsets_mm: &'a [f64],
        /// Worst-case (3 sigma) position error over the table, mm (automatic only):
        /// the edge fits' scatter and the intrinsics' doubts, per point in quadrature.
        #[serde(skip_serializing_if = "Option::is_none")]
        position_uncertainty_mm: Option<f64>,
        /// Its two parts, each the worst over the table: from the edges' scatter, and
        /// from the intrinsics' uncertainty as camera.json states it (0 when it states none).
        #[serde(skip_serializing_if = "Option::is_none")]
        position_uncertainty_edges_mm: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        position_uncertainty_intrinsics_mm: Option<f64>,
        /// Per side (corner k to k + 1): whether its side face was in view.
        side_face_in_view: [bool; 4],
        /// Why the calibration disagrees with itself, when written with --force.
        #[serde(skip_serializing_if = "Option::is_none")]
        forced_despite: Option<String>,
    }

    /// camera.json as `calibrate table --no-chessboard` writes it: the DESIGN.md keys
    /// plus where they came from and how well they are known.
    #[derive(Serialize)]
    struct LensOut<'a> {
        #[serde(flatten)]
        camera: &'a CameraIntrinsics,
        /// `"table"`: found from the table's size and sides, not a chessboard.
        source: &'static str,
        /// The table size the lens was fitted with, W x H mm.
        table_size_mm: [f64; 2],
        /// How far the focal length may be off (px): the two parts below in quadrature.
        focal_uncertainty_px: f64,
        /// 3 sigma of the focal length from the fit's covariance (the edge points'
        /// scatter), px.
        focal_statistical_px: f64,
        /// How far the focal length moves with the principal point moved
        /// `principal_point_doubt_px` off the centre (it is assumed there), px.
        focal_principal_px: f64,
        principal_point_doubt_px: f64,
        /// 3 sigma of k1 from the fit's covariance.
        k1_uncertainty: f64,
        /// Per frame, the angle of the optical axis from the table's normal (degrees).
        tilt_deg: &'a [f64],
        /// The focal length the corners' closed form gave, where the fit started.
        #[serde(skip_serializing_if = "Option::is_none")]
        focal_closed_form_px: Option<f64>,
    }

    /// The most frames `--no-chessboard` reads from a folder or glob.
    const MAX_LENS_FRAMES: usize = 50;

    /// The frames of the empty table: `--frame`, or with --no-chessboard every image
    /// of a folder or glob (from `--frame` on), or `--frames` frames of a video.
    fn table_frames(a: &TableArgs, source: &mut FrameSource) -> anyhow::Result<Vec<Frame>> {
        let missing = || format!("{}: there is no frame {}", a.image, a.frame);
        if !a.no_chessboard {
            let frame = source.frame_at(a.frame)?.with_context(missing)?;
            return Ok(vec![frame]);
        }
        if a.frames == 0 {
            bail!("--frames must be at least 1");
        }
        let mut frames = vec![];
        if source.is_video() {
            let last = source
                .len()
                .map_or(a.frame, |n| n.saturating_sub(1).max(a.frame));
            let n = a.frames;
            let indices: Vec<u64> = (0..n)
                .map(|i| {
                    if n == 1 {
                        a.frame
                    } else {
                        a.frame + (last - a.frame) * i / (n - 1)
                    }
                })
                .collect();
            for index in indices {
                if frames.last().is_some_and(|f: &Frame| f.index == index) {
                    continue;
                }
                let frame = source
                    .frame_at(index)?
                    .with_context(|| format!("{}: there is no frame {index}", a.image))?;
                frames.push(frame);
            }
        } else {
            let mut next = source.frame_at(a.frame)?;
            while let Some(frame) = next {
                frames.push(frame);
                if frames.len() >= MAX_LENS_FRAMES {
                    break;
                }
                next = source.next_frame()?;
            }
            if frames.is_empty() {
                bail!("{}", missing());
            }
        }
        Ok(frames)
    }

    pub fn table(a: TableArgs) -> anyhow::Result<()> {
        let mut o = String::new();
        let (w_mm, h_mm) = parse_size(&a.size)?;
        let corners = a.corners.as_deref().map(parse_corners).transpose()?;
        let camera_path = a
            .camera_output
            .clone()
            .unwrap_or_else(|| a.output.with_file_name("camera.json"));
        if a.no_chessboard && a.camera_output.is_none() {
            keep_other_cameras(&camera_path)?;
        }
        let mut source = FrameSource::open(&a.image)?;
        let frames = table_frames(&a, &mut source)?;
        let first = frames
            .first()
            .with_context(|| format!("{}: no frame read", a.image))?;
        let lens = if a.no_chessboard {
            let images: Vec<Mat> = frames.iter().map(|f| f.image.clone()).collect();
            let lens = solve_lens_from_table(&images, w_mm, h_mm)
                .with_context(|| format!("{}: no camera found from the table", a.image))?;
            Some(lens)
        } else {
            None
        };
        // The intrinsics and how far they may be off (camera.json's own keys; the
        // lens found here, its fit's).
        let (camera, doubt_keys) = match &lens {
            Some(lens) => {
                let mut camera = lens.fit.camera.clone();
                camera.view_names = frames.iter().map(|f| f.name.clone()).collect();
                let keys = CameraDoubtKeys {
                    focal_uncertainty_px: Some(lens.fit.focal_uncertainty_px),
                    k1_uncertainty: Some(lens.fit.k1_uncertainty),
                    principal_point_doubt_px: Some(lens.principal_doubt_px),
                    ..CameraDoubtKeys::default()
                };
                (camera, keys)
            }
            None => {
                let path = a
                    .camera
                    .as_ref()
                    .context("--camera camera.json is needed (or --no-chessboard)")?;
                let camera = CameraIntrinsics::load(path)?;
                let keys: CameraDoubtKeys = crate::config::load_json(path)
                    .with_context(|| format!("{}: its uncertainty keys", path.display()))?;
                (camera, keys)
            }
        };
        let mut solution = solve_table_with_doubts(
            &first.image,
            &camera,
            &doubt_keys.doubts(),
            w_mm,
            h_mm,
            corners,
        )?;
        if lens.is_some() {
            solution.doubt = solution.doubt.map(|d| TableDoubt {
                lens_from_table: true,
                ..d
            });
        }
        let origin = a.output.display().to_string();
        let calibration = TableCalibration::from_file(solution.file.clone(), &origin)?;
        let check_path = a.check.clone().unwrap_or_else(|| check_path_for(&a.output));
        // The check picture first: when the calibration is refused it shows why.
        write_check(
            &first.image,
            &calibration,
            a.grid,
            solution.uncertainty_map.as_ref(),
            &check_path,
        )?;
        if let Some(doubt) = &solution.doubt {
            if !a.force {
                let written = if lens.is_some() {
                    format!("{} and {}", camera_path.display(), a.output.display())
                } else {
                    a.output.display().to_string()
                };
                bail!(
                    "{doubt}; {written} not written, check picture {}",
                    check_path.display()
                );
            }
            eprintln!("fishtrack: warning: {doubt}");
        }
        if let Some(lens) = &lens {
            // Said in JSON mode too.
            let (doubt, f) = (lens.fit.focal_uncertainty_px, camera.fx());
            if doubt > MAX_FOCAL_UNCERTAINTY * f {
                eprintln!(
                    "fishtrack: warning: the focal length may be off by {:.1} % (over {:.0} %) if the principal point is not at the picture's centre (positions on the table depend little on it, heights above it more); tilt the camera further from straight down or calibrate with a chessboard",
                    100.0 * doubt / f,
                    100.0 * MAX_FOCAL_UNCERTAINTY
                );
            }
            let out = LensOut {
                camera: &camera,
                source: "table",
                table_size_mm: [w_mm, h_mm],
                focal_uncertainty_px: lens.fit.focal_uncertainty_px,
                focal_statistical_px: lens.fit.focal_statistical_px,
                focal_principal_px: lens.fit.focal_principal_px,
                principal_point_doubt_px: lens.principal_doubt_px,
                k1_uncertainty: lens.fit.k1_uncertainty,
                tilt_deg: &lens.fit.tilt_deg,
                focal_closed_form_px: lens.focal_closed_form_px,
            };
            let text = serde_json::to_string_pretty(&out).context("serialising camera.json")?;
            write_file(&camera_path, &(text + "\n"))?;
        }
        let out = TableOut {
            file: &solution.file,
            camera_source: lens.as_ref().map(|_| "table"),
            edge_rms_mm: solution.edge_rms_mm,
            measured_aspect: solution.measured_aspect,
            corners_found_automatically: solution.automatic,
            corner_offsets_mm: &solution.corner_offsets_mm,
            position_uncertainty_mm: solution.uncertainty_mm,
            position_uncertainty_edges_mm: solution
                .uncertainty_map
                .as_ref()
                .map(|m| m.worst_edges_mm()),
            position_uncertainty_intrinsics_mm: solution
                .uncertainty_map
                .as_ref()
                .map(|m| m.worst_intrinsics_mm()),
            side_face_in_view: solution.face_in_view,
            forced_despite: solution.doubt.as_ref().map(|d| d.to_string()),
        };
        let text = serde_json::to_string_pretty(&out).context("serialising table.json")?;
        write_file(&a.output, &(text.clone() + "\n"))?;
        if a.json {
            say!(o, "{text}");
            return emit(&o);
        }
        if let Some(lens) = &lens {
            let fit = &lens.fit;
            say!(
                o,
                "camera {}x{} from the table (no chessboard), {} frame{}: f {:.1} px, k1 {:.4} ± {:.4} (3 sigma), principal point taken at the centre ({:.1}, {:.1}), other distortion terms 0",
                camera.image_size[0],
                camera.image_size[1],
                fit.camera.views,
                if fit.camera.views == 1 { "" } else { "s" },
                camera.fx(),
                camera.dist_coeffs[0],
                fit.k1_uncertainty,
                camera.cx(),
                camera.cy()
            );
            say!(
                o,
                "  f may be off by {:.1} px ({:.1} %): {:.1} from the edges (3 sigma), {:.1} if the principal point is {:.1} px off the centre",
                fit.focal_uncertainty_px,
                100.0 * fit.focal_uncertainty_px / camera.fx(),
                fit.focal_statistical_px,
                fit.focal_principal_px,
                lens.principal_doubt_px
            );
            let tilts: Vec<String> = fit.tilt_deg.iter().map(|t| format!("{t:.1}")).collect();
            say!(
                o,
                "  edges fit the lens to {:.3} px RMS; camera axis {}° from the table's normal",
                fit.rms_px,
                tilts.join(", ")
            );
        }
        say!(
            o,
            "table {w_mm}x{h_mm} mm, corners {} (0 -> (0,0), 1 -> (W,0), 2 -> (W,H), 3 -> (0,H))",
            if solution.automatic {
                "found automatically"
            } else {
                "as given"
            }
        );
        for (k, (px, mm)) in solution
            .file
            .image_corners_px
            .iter()
            .zip(&solution.file.corners_mm)
            .enumerate()
        {
            say!(
                o,
                "  corner {k}: pixel ({:.2}, {:.2}) -> ({}, {}) mm",
                px[0],
                px[1],
                mm[0],
                mm[1]
            );
        }
        let offsets: Vec<String> = solution
            .corner_offsets_mm
            .iter()
            .map(|d| format!("{d:.2}"))
            .collect();
        say!(
            o,
            "  reprojection error {:.3} mm RMS (a rigid camera with these intrinsics vs the corners seen; per corner {} mm)",
            solution.file.reprojection_error_mm,
            offsets.join(", ")
        );
        if let Some(e) = solution.edge_rms_mm {
            say!(o, "  edges fit the rigid camera's sides to {e:.3} mm RMS");
        }
        let faces: Vec<String> = (0..4)
            .filter(|&k| solution.face_in_view[k])
            .map(|k| format!("{k}-{}", (k + 1) % 4))
            .collect();
        if !faces.is_empty() {
            say!(
                o,
                "  side face in view below side {}: edge taken where the top's colour ends",
                faces.join(", ")
            );
        }
        if let Some(map) = &solution.uncertainty_map {
            say!(
                o,
                "  a point on the table may be off by up to {:.2} mm (worst case over the table, 3 sigma: {:.2} from the edge fits, {:.2} from the intrinsics' uncertainty{}; map in the check picture)",
                map.worst_mm(),
                map.worst_edges_mm(),
                map.worst_intrinsics_mm(),
                if doubt_keys.doubts().is_empty() {
                    ", which camera.json does not state"
                } else {
                    ""
                }
            );
        }
        let given = w_mm / h_mm;
        say!(
            o,
            "  aspect W/H seen by the camera {:.4} (given {:.4})",
            solution.measured_aspect,
            given
        );
        if lens.is_some() {
            say!(o, "wrote {}", camera_path.display());
        }
        say!(
            o,
            "wrote {} and {}",
            a.output.display(),
            check_path.display()
        );
        emit(&o)
    }

    /// The re-fitted table.json: the DESIGN.md keys, the fit's measures as
    /// `calibrate table` writes them, and what it was re-fitted from.
    #[derive(Serialize)]
    struct RefitOut<'a> {
        #[serde(flatten)]
        file: &'a TableFile,
        measured_aspect: f64,
        corners_found_automatically: bool,
        corner_offsets_mm: &'a [f64],
        side_face_in_view: Vec<bool>,
        refit: RefitNote<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        forced_despite: Option<String>,
    }

    /// `refit` in the re-fitted table.json.
    #[derive(Serialize)]
    struct RefitNote<'a> {
        /// The old table.json.
        from_table: String,
        /// The frame the edges were found in.
        frame: &'a str,
        /// How far the table's outline had moved from the old calibration's (worst
        /// over its edges, mm), and per corner.
        shift_mm: Option<f64>,
        corner_shift_mm: &'a [f64],
        /// Per side, the share of its length whose edge agrees with the fit.
        seen_share: Vec<f64>,
        /// RMS (px) of the edge points from the fitted outline.
        edge_rms_px: Option<f64>,
    }

    /// The frame as packed BGR bytes for `calibration::refit` (a copy only when
    /// OpenCV's rows are not contiguous or the frame is grey).
    fn bgr_mat(image: &Mat) -> anyhow::Result<Mat> {
        use opencv::prelude::*;
        let bgr = if image.channels() == 3 {
            image.try_clone()?
        } else {
            let mut out = Mat::default();
            opencv::imgproc::cvt_color(image, &mut out, opencv::imgproc::COLOR_GRAY2BGR, 0)?;
            out
        };
        Ok(if bgr.is_continuous() {
            bgr
        } else {
            bgr.try_clone()?
        })
    }

    pub fn refit(a: RefitArgs) -> anyhow::Result<()> {
        use opencv::prelude::*;
        let mut o = String::new();
        if !(a.band.is_finite() && (2.0..=400.0).contains(&a.band)) {
            bail!("--band must be 2 to 400 px, got {}", a.band);
        }
        if let Some(out) = &a.output {
            let same = match (std::fs::canonicalize(out), std::fs::canonicalize(&a.table)) {
                (Ok(x), Ok(y)) => x == y,
                _ => out == &a.table,
            };
            if same {
                bail!(
                    "-o {} is the old calibration itself: write the re-fit to another file (the old one is what it is measured against)",
                    out.display()
                );
            }
        }
        let old = TableCalibration::load(&a.table)?;
        let mut source = FrameSource::open(&a.image)?;
        let frame = source
            .frame_at(a.frame)?
            .with_context(|| format!("{}: there is no frame {}", a.image, a.frame))?;
        let image = bgr_mat(&frame.image)?;
        let bytes = image.data_bytes()?;
        let (w, h) = (image.cols() as usize, image.rows() as usize);
        let view = BgrFrame::new(w, h, 3 * w, bytes)?;
        let check_search = OutlineSearch {
            band_px: a.band,
            ..OutlineSearch::CHECK
        };
        let started = std::time::Instant::now();
        let check = check_bump(view, &old, &check_search)?;
        let check_ms = started.elapsed().as_secs_f64() * 1e3;
        let not_json = !a.json;
        if not_json {
            say!(o, "{}", check.summary());
            say!(
                o,
                "  (the check took {check_ms:.0} ms on this {w}x{h} frame)"
            );
            say_corners(&mut o, &check);
        }
        let go = a.always || check.verdict == BumpVerdict::Moved;
        if !go {
            if check.verdict == BumpVerdict::Unknown {
                emit(&o)?;
                bail!(
                    "{}: take a frame with the table's edges clear, or --always to re-fit anyway",
                    check.summary()
                );
            }
            if a.json {
                say!(o, "{}", check_json(&check)?);
            } else {
                say!(
                    o,
                    "nothing to re-fit (moved by {MOVED_MM} mm or less){}",
                    match &a.output {
                        Some(p) =>
                            format!("; {} not written (--always re-fits anyway)", p.display()),
                        None => String::new(),
                    }
                );
            }
            return emit(&o);
        }
        let search = OutlineSearch {
            band_px: a.band,
            ..OutlineSearch::REFIT
        };
        let refit = refit_table(view, &old, &search)?;
        let origin = a
            .output
            .as_ref()
            .map_or_else(|| "the re-fit".to_string(), |p| p.display().to_string());
        let calibration = TableCalibration::from_file(refit.file.clone(), &origin)?;
        let check_path = a
            .output
            .as_ref()
            .map(|out| a.check.clone().unwrap_or_else(|| check_path_for(out)));
        if let Some(path) = &check_path {
            write_check(&frame.image, &calibration, 100.0, None, path)?;
        }
        if let Some(doubt) = &refit.doubt {
            if !a.force {
                emit(&o)?;
                let written = match (&a.output, &check_path) {
                    (Some(out), Some(c)) => format!(
                        "; {} not written, check picture {}",
                        out.display(),
                        c.display()
                    ),
                    _ => String::new(),
                };
                bail!("the camera has moved, and its re-fit is refused: {doubt} (--force writes it anyway){written}");
            }
            eprintln!("fishtrack: warning: {doubt}");
        }
        let note = RefitNote {
            from_table: a.table.display().to_string(),
            frame: &frame.name,
            shift_mm: refit.moved.shift_mm,
            corner_shift_mm: &refit.moved.corner_shift_mm,
            seen_share: refit.moved.sides.iter().map(|s| s.share()).collect(),
            edge_rms_px: refit.moved.edge_rms_px,
        };
        let out = RefitOut {
            file: &refit.file,
            measured_aspect: refit.measured_aspect,
            corners_found_automatically: true,
            corner_offsets_mm: &refit.corner_offsets_mm,
            side_face_in_view: refit.moved.sides.iter().map(|s| s.face_in_view).collect(),
            refit: note,
            forced_despite: refit.doubt.as_ref().map(|d| d.to_string()),
        };
        let text = serde_json::to_string_pretty(&out).context("serialising table.json")?;
        if let Some(path) = &a.output {
            write_file(path, &(text.clone() + "\n"))?;
        }
        if a.json {
            say!(o, "{text}");
            return emit(&o);
        }
        say!(o, "re-fitted: the rigid camera with the old intrinsics and table fitted to the edges seen");
        for (k, (px, old_px)) in refit
            .file
            .image_corners_px
            .iter()
            .zip(&old.file.image_corners_px)
            .enumerate()
        {
            say!(
                o,
                "  corner {k}: pixel ({:.2}, {:.2}), was ({:.2}, {:.2})",
                px[0],
                px[1],
                old_px[0],
                old_px[1]
            );
        }
        let offsets: Vec<String> = refit
            .corner_offsets_mm
            .iter()
            .map(|d| format!("{d:.2}"))
            .collect();
        say!(
            o,
            "  reprojection error {:.3} mm RMS (the rigid camera vs the corners seen; per corner {} mm); aspect W/H seen {:.4}",
            refit.file.reprojection_error_mm,
            offsets.join(", "),
            refit.measured_aspect
        );
        match (&a.output, &check_path) {
            (Some(out), Some(c)) => say!(o, "wrote {} and {}", out.display(), c.display()),
            _ => say!(
                o,
                "not written: give -o NEW.json to write the re-fitted table"
            ),
        }
        emit(&o)
    }

    /// Per corner, how far the table moved there.
    fn say_corners(o: &mut String, check: &BumpCheck) {
        if check.corner_shift_mm.is_empty() {
            return;
        }
        let per: Vec<String> = check
            .corner_shift_mm
            .iter()
            .map(|d| format!("{d:.1}"))
            .collect();
        say!(
            o,
            "  per corner {} mm; edges fit to {:.2} px RMS",
            per.join(", "),
            check.edge_rms_px.unwrap_or(f64::NAN)
        );
    }

    /// The bump check as JSON (`--json` when nothing is re-fitted).
    fn check_json(check: &BumpCheck) -> anyhow::Result<String> {
        let verdict = match check.verdict {
            BumpVerdict::Still => "still",
            BumpVerdict::Moved => "moved",
            BumpVerdict::Unknown => "unknown",
        };
        let v = serde_json::json!({
            "verdict": verdict,
            "shift_mm": check.shift_mm,
            "corner_shift_mm": check.corner_shift_mm,
            "doubt_mm": check.doubt_mm,
            "seen_share": check.seen_share(),
            "side_seen_share": check.sides.iter().map(|s| s.share()).collect::<Vec<f64>>(),
            "edge_rms_px": check.edge_rms_px,
            "unknown_because": check.unknown_because,
        });
        Ok(serde_json::to_string_pretty(&v)?)
    }

    /// `--no-chessboard` writes camera.json beside table.json unless told where: it
    /// must not replace one that did not come from the table (a chessboard's, more
    /// accurate, or anyone's), unasked.
    fn keep_other_cameras(default_path: &Path) -> anyhow::Result<()> {
        let Ok(text) = std::fs::read_to_string(default_path) else {
            return Ok(());
        };
        let from_table = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| v.get("source").and_then(|s| s.as_str()) == Some("table"));
        if !from_table {
            bail!(
                "{} exists and was not found from a table (a chessboard's camera?): it is not replaced; give --camera-output to write the camera found elsewhere, or --camera {} to use it",
                default_path.display(),
                default_path.display()
            );
        }
        Ok(())
    }

    /// Draws and writes the check picture.
    fn write_check(
        frame: &opencv::core::Mat,
        calibration: &TableCalibration,
        grid_mm: f64,
        map: Option<&crate::calibration::UncertaintyMap>,
        path: &Path,
    ) -> anyhow::Result<()> {
        let picture = draw_table_check(frame, calibration, grid_mm, map)?;
        // The check picture is written first, before the folder existed otherwise.
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let written = imgcodecs::imwrite(path, &picture, &Vector::new())
            .map_err(anyhow::Error::from)
            .and_then(|ok| {
                if ok {
                    Ok(())
                } else {
                    Err(anyhow::anyhow!("the encoder refused"))
                }
            });
        written.with_context(|| format!("cannot write {}", path.display()))
    }

    /// Parses `"1000x700"` into `(W, H)` mm.
    fn parse_size(text: &str) -> anyhow::Result<(f64, f64)> {
        let bad = || anyhow::anyhow!("--size must be like 1000x700 (mm), got {text:?}");
        let (a, b) = text.split_once(['x', 'X']).ok_or_else(bad)?;
        let w: f64 = a.trim().parse().map_err(|_| bad())?;
        let h: f64 = b.trim().parse().map_err(|_| bad())?;
        if !(w > 0.0 && h > 0.0 && w.is_finite() && h.is_finite()) {
            return Err(bad());
        }
        use crate::limits::{check_range, MAX_TABLE_SIDE_MM, MIN_TABLE_SIDE_MM};
        for (name, v) in [("--size width", w), ("--size height", h)] {
            check_range(name, v, MIN_TABLE_SIDE_MM, MAX_TABLE_SIDE_MM, "mm")
                .map_err(anyhow::Error::msg)?;
        }
        Ok((w, h))
    }

    fn check_path_for(output: &Path) -> PathBuf {
        let stem = output
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "table".into());
        output.with_file_name(format!("{stem}_check.png"))
    }

    /// Prints the summary at once; a closed pipe (`| head`) is an io error that
    /// `cli::main` treats as success, not a panic as `println!` would.
    fn emit(text: &str) -> anyhow::Result<()> {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        Ok(())
    }

    fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    fn write_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
        std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
    }

    fn shorten(names: &[String]) -> String {
        if names.len() <= 8 {
            return names.join(", ");
        }
        format!("{}, … ({} more)", names[..8].join(", "), names.len() - 8)
    }
}
