//! The calibration solvers: camera intrinsics from chessboard views (OpenCV's standard
//! procedure: `findChessboardCorners` with adaptive threshold + normalisation,
//! `cornerSubPix` 11x11, `calibrateCamera` with the 5-coefficient model) or from the
//! empty table itself (focal length and `k1`), and the table plane from one frame of
//! the empty table (found automatically, or from four clicked corners). The formats and the pure maths (homography, line fits, corner order) are
//! in `calibration`; this module only adds what needs pixels.
//! Uses: calibration, geometry, model, vision::capture, vision::rectify; OpenCV calib3d/imgproc.
//!
//! # Table corners found automatically
//! The table top must contrast with the floor and cover the image centre. It is
//! segmented (colour distance to the centre's colour, Otsu threshold, the central
//! connected region; and that region grown under a smooth shading model with thin
//! dark seams closed over, round by round), each region roughly outlined by a
//! quadrilateral, and the outline whose corners a rigid camera with the known
//! intrinsics and size fits best is kept (a plank, a lit patch or the top joined to
//! its legs is no rectangle of that size). Then each edge is measured
//! to a fraction of a pixel: across the edge, at every pixel along it, the position of
//! the steepest change is found on the *original* frame sampled at undistorted
//! positions, and a robust straight line is fitted in undistorted pixels (where table
//! edges are straight). Adjacent lines intersect in the corners, numbered as
//! `calibration::order_table_corners` says: counter-clockwise seen from above, edge
//! 0→1 the table's `W` side, corner 0 the one nearest the image's bottom-left.
//!
//! That outer boundary is the top's edge only where the camera cannot see the
//! table's side face. Where it stands beyond a side (`calibration::sides_showing_face`,
//! from a first pose), the face shows below the top's edge, and the outer boundary is
//! the face's lower edge: there the side is measured again from the inside, where
//! the colour last leaves the top's own (grain, seams and folds come back to it; the
//! face and the floor do not). A darker rim along the top's edge looks the same, so
//! both readings are kept and `solve_table` lets a rigid camera with the known
//! intrinsics and table size decide: the reading it fits best is the top's.
//!
//! # The table plane
//! `solve_table` fits that rigid camera's pose to every edge point
//! (`calibration::fit_rigid_pose`, started from the homography of the corners), and
//! writes its homography and corners; given corners are kept as given. How far the
//! seen corners lie from the rigid camera's, and the table's aspect as seen, are
//! judged by `calibration::judge_table_fit`; the fit's covariance gives the
//! worst-case position error over the table.
//!
//! # The lens from the table (no chessboard)
//! `solve_lens_from_table` finds the focal length and `k1` from one or more frames
//! of the empty table: found with a guessed lens (each `k1` of `K1_STARTS`), the
//! focal length from the corners' closed form, the table found again with it, then
//! `calibration::table_lens::fit_focal_and_k1` on every edge point; the best start
//! is kept and the table found again with each lens fitted until it settles.
//! `solve_table` then writes the table plane with that lens, judged as above.

use crate::calibration::table_lens::{
    camera_with, fit_focal_and_k1, focal_from_homographies, LensError, LensFit, TableView,
    MAX_FOCAL_PER_WIDTH, MIN_FOCAL_PER_WIDTH,
};
use crate::calibration::{
    corner_offsets_mm, coverage_grid, fit_rigid_pose, judge_table_fit, order_table_corners,
    position_uncertainty_map, rectangle_corners_mm, sides_showing_face, CameraIntrinsics,
    Homography, IntrinsicDoubt, Line2, PoseObservations, RigidPose, RimPull, TableCalibration,
    TableDoubt, TableFile, UncertaintyMap,
};
use crate::model::FrameIdx;
use crate::vision::board_size::{check_board_size, whole_board_size, FRAMES_KEPT_FOR_OTHER_SIZES};
use crate::vision::capture::{CaptureError, FrameSource};
use crate::vision::rectify::{RectifyError, Undistorter};
use nalgebra::{Point2, Vector2};
use opencv::core::{Mat, Point2f, Point3f, Scalar, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, core, imgproc};

/// The most inner corners a chessboard may have along either side.
pub const MAX_BOARD_CORNERS: u32 = 100;
/// The fewest inner corners either way OpenCV's chessboard finder looks for: it
/// refuses smaller patterns with a two-line assertion.
pub const MIN_FINDABLE_CORNERS: u32 = 3;

/// Why a calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(
        "--board must be like 9x6 (inner corners per row x per column, each 2 to {max}), got {0:?}", max = MAX_BOARD_CORNERS
    )]
    BadBoard(String),
    #[error("--square (the side of one chessboard square) must be a number of mm above 0 and up to {max}, got {0}", max = crate::limits::MAX_SQUARE_MM)]
    BadSquare(f64),
    #[error("no {cols}x{rows} chessboard found in any of the {read} images read (check --board: it counts inner corners)")]
    NoBoard { read: usize, cols: u32, rows: u32 },
    #[error("the board in these views has {seen_cols}x{seen_rows} inner corners, not {cols}x{rows} (a further row or column of corners lies beyond the {cols}x{rows} grid in {views} of {of} views): pass --board {seen_cols}x{seen_rows}")]
    LargerBoard {
        cols: u32,
        rows: u32,
        seen_cols: u32,
        seen_rows: u32,
        views: usize,
        of: usize,
    },
    #[error("a {cols}x{rows} chessboard is found in {found} of the {read} images read, but a {seen_cols}x{seen_rows} one is: pass --board {seen_cols}x{seen_rows} (it counts inner corners, one fewer than squares each way)")]
    OtherBoard {
        found: usize,
        read: usize,
        cols: u32,
        rows: u32,
        seen_cols: u32,
        seen_rows: u32,
    },
    #[error("only {usable} usable board views (of {read} read); at least {needed} are needed, from varied angles")]
    TooFewViews {
        usable: usize,
        read: usize,
        needed: usize,
    },
    #[error("{name} is {got_w}x{got_h} but the first image is {want_w}x{want_h}: all views must come from one camera mode")]
    MixedSizes {
        name: String,
        got_w: i32,
        got_h: i32,
        want_w: i32,
        want_h: i32,
    },
    #[error("the camera calibration is for {cam_w}x{cam_h} but the frame is {got_w}x{got_h}")]
    CameraSize {
        cam_w: u32,
        cam_h: u32,
        got_w: i32,
        got_h: i32,
    },
    #[error("table not found: {0}; give its corners with --corners \"u,v;u,v;u,v;u,v\"")]
    TableNotFound(String),
    #[error("table not found: {0}; without a chessboard the whole table top must be found (calibrate the camera with a chessboard, then the corners may be given with --corners)")]
    LensTableNotFound(String),
    #[error("bad table corners: {0}")]
    BadCorners(String),
    #[error("the calibration did not converge to finite numbers")]
    Diverged,
    #[error(transparent)]
    Lens(#[from] LensError),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Rectify(#[from] RectifyError),
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

/// A chessboard: inner corners per row (`cols`) and per column (`rows`), square side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chessboard {
    pub cols: u32,
    pub rows: u32,
    pub square_mm: f64,
}

impl Chessboard {
    /// Parses `"9x6"` (inner corners) with the square side in mm.
    pub fn parse(spec: &str, square_mm: f64) -> Result<Chessboard, CalibrateError> {
        let bad = || CalibrateError::BadBoard(spec.to_string());
        let (a, b) = spec.split_once(['x', 'X']).ok_or_else(bad)?;
        let cols: u32 = a.trim().parse().map_err(|_| bad())?;
        let rows: u32 = b.trim().parse().map_err(|_| bad())?;
        // A board of more than 100 is no printable board (and would size the corner lists).
        if !(2..=MAX_BOARD_CORNERS).contains(&cols) || !(2..=MAX_BOARD_CORNERS).contains(&rows) {
            return Err(bad());
        }
        if !(square_mm.is_finite() && square_mm > 0.0 && square_mm <= crate::limits::MAX_SQUARE_MM)
        {
            return Err(CalibrateError::BadSquare(square_mm));
        }
        Ok(Chessboard {
            cols,
            rows,
            square_mm,
        })
    }

    pub(crate) fn pattern_size(&self) -> Size {
        Size::new(self.cols as i32, self.rows as i32)
    }

    pub fn corner_count(&self) -> usize {
        (self.cols * self.rows) as usize
    }

    /// The board's corners on its own plane (mm), in the order `findChessboardCorners`
    /// reports them: row by row, `cols` per row.
    pub fn object_points(&self) -> Vector<Point3f> {
        let mut v = Vector::new();
        for r in 0..self.rows {
            for c in 0..self.cols {
                v.push(Point3f::new(
                    (c as f64 * self.square_mm) as f32,
                    (r as f64 * self.square_mm) as f32,
                    0.0,
                ));
            }
        }
        v
    }
}

/// One view of the board: its refined inner corners in (distorted) pixels.
#[derive(Debug, Clone)]
pub struct BoardView {
    pub name: String,
    pub index: FrameIdx,
    pub corners_px: Vec<Point2<f64>>,
    /// The smallest distance between neighbouring corners as first found (px).
    pub square_px: f64,
}

/// Greyscale copy of a BGR (or already grey) frame.
pub fn to_gray(image: &Mat) -> Result<Mat, CalibrateError> {
    if image.channels() == 1 {
        return Ok(image.clone());
    }
    let mut gray = Mat::default();
    imgproc::cvt_color(image, &mut gray, imgproc::COLOR_BGR2GRAY, 0)?;
    Ok(gray)
}

/// The `cornerSubPix` half-window (OpenCV's `winSize`; the window is `2n+1` wide).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubpixWindow {
    /// OpenCV's standard procedure: 11 (a 23x23 window) whatever the board's size.
    #[default]
    Standard,
    /// A fixed half-size.
    Fixed(i32),
    /// 11, or smaller when the squares are so small that the window would reach the
    /// next corner (which biases the refinement).
    Auto,
}

/// The standard half-window.
pub const STANDARD_SUBPIX_HALF: i32 = 11;

impl SubpixWindow {
    /// Parses `standard`, `auto` or a half-size in pixels.
    pub fn parse(text: &str) -> Option<SubpixWindow> {
        match text.trim() {
            "standard" => Some(SubpixWindow::Standard),
            "auto" => Some(SubpixWindow::Auto),
            n => n
                .parse()
                .ok()
                .filter(|&n: &i32| (1..=50).contains(&n))
                .map(SubpixWindow::Fixed),
        }
    }

    fn half_size(&self, min_spacing_px: f64) -> i32 {
        match *self {
            SubpixWindow::Standard => STANDARD_SUBPIX_HALF,
            SubpixWindow::Fixed(n) => n,
            SubpixWindow::Auto => {
                if min_spacing_px >= (2 * STANDARD_SUBPIX_HALF + 2) as f64 {
                    STANDARD_SUBPIX_HALF
                } else {
                    (((min_spacing_px - 2.0) / 2.0).floor() as i32).clamp(2, STANDARD_SUBPIX_HALF)
                }
            }
        }
    }
}

/// The smallest distance between neighbouring inner corners (px): the squares' size.
pub fn min_corner_spacing(corners: &[Point2<f64>], board: &Chessboard) -> f64 {
    let cols = board.cols as usize;
    let mut min_spacing = f64::INFINITY;
    for (i, p) in corners.iter().enumerate() {
        if i % cols + 1 < cols {
            if let Some(q) = corners.get(i + 1) {
                min_spacing = min_spacing.min((p - q).norm());
            }
        }
        if let Some(q) = corners.get(i + cols) {
            min_spacing = min_spacing.min((p - q).norm());
        }
    }
    min_spacing
}

pub(crate) fn find_flags() -> i32 {
    calib3d::CALIB_CB_ADAPTIVE_THRESH | calib3d::CALIB_CB_NORMALIZE_IMAGE
}

/// Refined inner corners (px, row by row) and the square size in pixels.
pub type BoardCorners = (Vec<Point2<f64>>, f64);

/// Finds and refines the board's inner corners in a greyscale image, with the square
/// size in pixels (smallest corner spacing as first found); `None` when the whole board
/// is not visible.
pub fn find_board(
    gray: &Mat,
    board: &Chessboard,
    window: SubpixWindow,
) -> Result<Option<BoardCorners>, CalibrateError> {
    let mut corners = Vector::<Point2f>::new();
    if !calib3d::find_chessboard_corners(gray, board.pattern_size(), &mut corners, find_flags())? {
        return Ok(None);
    }
    refine_corners(gray, board, corners, window).map(Some)
}

fn refine_corners(
    gray: &Mat,
    board: &Chessboard,
    mut corners: Vector<Point2f>,
    window: SubpixWindow,
) -> Result<BoardCorners, CalibrateError> {
    let rough: Vec<Point2<f64>> = corners
        .iter()
        .map(|p| Point2::new(p.x as f64, p.y as f64))
        .collect();
    let spacing = min_corner_spacing(&rough, board);
    sub_pixel(gray, &mut corners, window.half_size(spacing))?;
    let refined = corners
        .iter()
        .map(|p| Point2::new(p.x as f64, p.y as f64))
        .collect();
    Ok((refined, spacing))
}

/// Refines corners in place with `cornerSubPix` (half-window `half`, 30 iterations
/// or 0.001 px).
pub(crate) fn sub_pixel(
    gray: &Mat,
    corners: &mut Vector<Point2f>,
    half: i32,
) -> Result<(), CalibrateError> {
    let criteria = TermCriteria::new(core::TermCriteria_EPS + core::TermCriteria_COUNT, 30, 1e-3)?;
    imgproc::corner_sub_pix(
        gray,
        corners,
        Size::new(half, half),
        Size::new(-1, -1),
        criteria,
    )?;
    Ok(())
}

/// What a search for board views found.
#[derive(Debug, Clone, Default)]
pub struct ViewSearch {
    pub views: Vec<BoardView>,
    /// How many frames were looked at.
    pub read: usize,
    /// Frames (images) in which no board was found, by name.
    pub missed: Vec<String>,
    pub image_size: [u32; 2],
}

fn image_size_of(m: &Mat) -> [u32; 2] {
    [m.cols().max(0) as u32, m.rows().max(0) as u32]
}

/// Every image of a folder/glob is one candidate view (OpenCV's standard procedure:
/// all images, no selection). `progress` is called once per image.
pub fn collect_views_from_images(
    source: &mut FrameSource,
    board: &Chessboard,
    window: SubpixWindow,
    progress: &mut dyn FnMut(),
) -> Result<ViewSearch, CalibrateError> {
    let mut search = ViewSearch::default();
    let (mut seen, mut kept) = (vec![], vec![]);
    let mut first: Option<(i32, i32)> = None;
    while let Some(frame) = source.next_frame()? {
        progress();
        search.read += 1;
        let (w, h) = (frame.image.cols(), frame.image.rows());
        match first {
            None => {
                first = Some((w, h));
                search.image_size = image_size_of(&frame.image);
            }
            Some((fw, fh)) if (fw, fh) != (w, h) => {
                return Err(CalibrateError::MixedSizes {
                    name: frame.name,
                    got_w: w,
                    got_h: h,
                    want_w: fw,
                    want_h: fh,
                })
            }
            Some(_) => {}
        }
        let gray = to_gray(&frame.image)?;
        match find_board(&gray, board, window)? {
            Some((corners_px, square_px)) => {
                seen.push(whole_board_size(&gray, &corners_px, board)?);
                search.views.push(BoardView {
                    name: frame.name,
                    index: frame.index,
                    corners_px,
                    square_px,
                })
            }
            None => {
                if kept.len() < FRAMES_KEPT_FOR_OTHER_SIZES {
                    kept.push(gray);
                }
                search.missed.push(frame.name)
            }
        }
    }
    check_board_size(&search, &seen, &kept, board)?;
    Ok(search)
}

/// The most frames of a video examined for boards (evenly spaced).
const VIDEO_FRAMES_EXAMINED: u64 = 300;
/// Frames are searched at this width first (fast), then refined at full size.
const VIDEO_SEARCH_WIDTH: i32 = 640;

/// A coarse board pose: position column and row, size, tilt both ways.
type PoseKey = (u8, u8, u8, u8, u8);
/// A video frame with a board: sharpness, index, grey frame, rough corners.
type Candidate = (f64, FrameIdx, Mat, Vec<Point2<f64>>);

/// How a board lies in the image, coarsely: frames with the same key add little to
/// each other, so only the sharpest of each is kept.
fn pose_key(corners: &[Point2<f64>], board: &Chessboard, size: [u32; 2]) -> PoseKey {
    let n = corners.len().max(1) as f64;
    let (w, h) = (size[0] as f64, size[1] as f64);
    let cx = corners.iter().map(|p| p.x).sum::<f64>() / n / w;
    let cy = corners.iter().map(|p| p.y).sum::<f64>() / n / h;
    let (cols, rows) = (board.cols as usize, board.rows as usize);
    let at = |r: usize, c: usize| corners[r * cols + c];
    let top = (at(0, cols - 1) - at(0, 0)).norm();
    let bottom = (at(rows - 1, cols - 1) - at(rows - 1, 0)).norm();
    let left = (at(rows - 1, 0) - at(0, 0)).norm();
    let right = (at(rows - 1, cols - 1) - at(0, cols - 1)).norm();
    let area_frac = 0.5 * (top + bottom) * 0.5 * (left + right) / (w * h);
    let bin3 = |v: f64| ((v * 3.0).floor().clamp(0.0, 2.0)) as u8;
    let tilt = |a: f64, b: f64| {
        let r = a / b.max(1e-9);
        if r < 0.93 {
            0
        } else if r > 1.07 {
            2
        } else {
            1
        }
    };
    let size_bin = if area_frac < 0.08 {
        0
    } else if area_frac < 0.2 {
        1
    } else {
        2
    };
    (
        bin3(cx),
        bin3(cy),
        size_bin,
        tilt(top, bottom),
        tilt(left, right),
    )
}

/// Variance of the Laplacian over the board's bounding box: higher is sharper.
fn sharpness(gray: &Mat, corners: &[Point2<f64>]) -> Result<f64, CalibrateError> {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for p in corners {
        x0 = x0.min(p.x);
        y0 = y0.min(p.y);
        x1 = x1.max(p.x);
        y1 = y1.max(p.y);
    }
    let x0 = (x0.floor() as i32).clamp(0, gray.cols() - 1);
    let y0 = (y0.floor() as i32).clamp(0, gray.rows() - 1);
    let x1 = (x1.ceil() as i32).clamp(x0 + 1, gray.cols());
    let y1 = (y1.ceil() as i32).clamp(y0 + 1, gray.rows());
    let roi = Mat::roi(gray, core::Rect::new(x0, y0, x1 - x0, y1 - y0))?;
    let mut lap = Mat::default();
    imgproc::laplacian(
        &roi,
        &mut lap,
        core::CV_64F,
        3,
        1.0,
        0.0,
        core::BORDER_DEFAULT,
    )?;
    let (mut mean, mut std) = (Mat::default(), Mat::default());
    core::mean_std_dev(&lap, &mut mean, &mut std, &core::no_array())?;
    let s = *std.at_2d::<f64>(0, 0)?;
    Ok(s * s)
}

/// Picks sharp, well-spread board views from a video: examines up to 300 evenly spaced
/// frames at reduced size, keeps the sharpest frame for each coarse board pose
/// (position 3x3, size, tilt both ways), drops blurred ones (under a third of the
/// median sharpness), keeps at most `max_views` (sharpest first) and refines those at
/// full resolution. `progress` is called once per frame (examined or skipped).
pub fn collect_views_from_video(
    source: &mut FrameSource,
    board: &Chessboard,
    max_views: usize,
    window: SubpixWindow,
    progress: &mut dyn FnMut(),
) -> Result<ViewSearch, CalibrateError> {
    let stride = source
        .len()
        .map(|n| n.div_ceil(VIDEO_FRAMES_EXAMINED).max(1))
        .unwrap_or(1);
    let mut search = ViewSearch::default();
    let mut best: std::collections::HashMap<PoseKey, Candidate> = Default::default();
    let (mut seen, mut kept) = (vec![], vec![]);
    let mut index: FrameIdx = 0;
    loop {
        if index % stride != 0 {
            if !source.skip_frame()? {
                break;
            }
            progress();
            index += 1;
            continue;
        }
        // A live camera never ends: stop after as many frames as a video would give.
        if source.len().is_none() && search.read as u64 >= VIDEO_FRAMES_EXAMINED {
            break;
        }
        let Some(frame) = source.next_frame()? else {
            break;
        };
        index += 1;
        progress();
        search.read += 1;
        if search.image_size == [0, 0] {
            search.image_size = image_size_of(&frame.image);
        }
        let gray = to_gray(&frame.image)?;
        let scale = (VIDEO_SEARCH_WIDTH as f64 / gray.cols().max(1) as f64).min(1.0);
        let small = if scale < 1.0 {
            let mut s = Mat::default();
            imgproc::resize(
                &gray,
                &mut s,
                Size::new(0, 0),
                scale,
                scale,
                imgproc::INTER_AREA,
            )?;
            s
        } else {
            gray.clone()
        };
        let mut corners = Vector::<Point2f>::new();
        let flags = find_flags() | calib3d::CALIB_CB_FAST_CHECK;
        if !calib3d::find_chessboard_corners(&small, board.pattern_size(), &mut corners, flags)? {
            // Spread over the video: its first frames are often all the same.
            if kept.len() < FRAMES_KEPT_FOR_OTHER_SIZES && search.missed.len() % 50 == 0 {
                kept.push(small);
            }
            search.missed.push(frame.name);
            continue;
        }
        let rough: Vec<Point2<f64>> = corners
            .iter()
            .map(|p| Point2::new(p.x as f64 / scale, p.y as f64 / scale))
            .collect();
        let key = pose_key(&rough, board, search.image_size);
        let sharp = sharpness(&gray, &rough)?;
        let replace = best.get(&key).is_none_or(|b| sharp > b.0);
        if replace {
            best.insert(key, (sharp, frame.index, gray, rough));
        }
    }
    let mut picked: Vec<Candidate> = best.into_values().collect();
    let mut sharp_values: Vec<f64> = picked.iter().map(|p| p.0).collect();
    sharp_values.sort_by(f64::total_cmp);
    let median = sharp_values
        .get(sharp_values.len() / 2)
        .copied()
        .unwrap_or(0.0);
    picked.retain(|p| p.0 >= median / 3.0);
    picked.sort_by(|a, b| b.0.total_cmp(&a.0));
    picked.truncate(max_views.max(1));
    picked.sort_by_key(|p| p.1);
    for (_, idx, gray, rough) in picked {
        // Full-size search (reliable); failing that, refine the reduced-size corners.
        let (corners_px, square_px) = match find_board(&gray, board, window)? {
            Some(c) => c,
            None => {
                let guess: Vector<Point2f> = rough
                    .iter()
                    .map(|p| Point2f::new(p.x as f32, p.y as f32))
                    .collect();
                refine_corners(&gray, board, guess, window)?
            }
        };
        seen.push(whole_board_size(&gray, &corners_px, board)?);
        search.views.push(BoardView {
            name: format!("frame {idx}"),
            index: idx,
            square_px,
            corners_px,
        });
    }
    check_board_size(&search, &seen, &kept, board)?;
    Ok(search)
}

/// When a view's error is "far above the rest": over `factor` times the median
/// per-view RMS **and** over `floor_px` (a view at 1 px is not an outlier however good
/// the others are). `limit_px`, when set, replaces both with a fixed limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlierRule {
    pub factor: f64,
    pub floor_px: f64,
    pub limit_px: Option<f64>,
}

impl Default for OutlierRule {
    fn default() -> Self {
        OutlierRule {
            factor: 5.0,
            floor_px: 1.5,
            limit_px: None,
        }
    }
}

impl OutlierRule {
    fn limit(&self, per_view: &[f64]) -> f64 {
        if let Some(l) = self.limit_px {
            return l;
        }
        let mut v = per_view.to_vec();
        v.sort_by(f64::total_cmp);
        let median = v.get(v.len() / 2).copied().unwrap_or(0.0);
        (self.factor * median).max(self.floor_px)
    }
}

/// The fewest views a calibration accepts.
pub const MIN_VIEWS: usize = 5;

/// A solved camera, with the views left out and why.
#[derive(Debug, Clone)]
pub struct CameraSolution {
    pub camera: CameraIntrinsics,
    /// `(view name, its RMS px when dropped)`.
    pub dropped: Vec<(String, f64)>,
    /// Corners of the used views per 3x3 image cell (`[row][col]`, row 0 on top).
    pub coverage: [[usize; 3]; 3],
    /// 1 sigma of `[fx, fy, cx, cy, k1, k2, p1, p2, k3]` (OpenCV's
    /// `stdDeviationsIntrinsics`), as far as OpenCV gave them.
    pub intrinsics_std_dev: Vec<f64>,
    /// The covariance of the same nine (the views' poses marginalised out), from the
    /// reprojection's Jacobian at the solution; `None` when singular.
    pub intrinsics_covariance: Option<[[f64; 9]; 9]>,
}

struct RawSolution {
    rms: f64,
    k: Mat,
    dist: Mat,
    per_view: Vec<f64>,
    std_dev: Vec<f64>,
    covariance: Option<[[f64; 9]; 9]>,
}

/// The covariance of `[fx, fy, cx, cy, k1, k2, p1, p2, k3]` at a chessboard solution:
/// the reprojection's Jacobian (OpenCV's `projectPoints`) over the intrinsics and every
/// view's pose, the poses eliminated (Schur complement), scaled by the residuals'
/// variance — what OpenCV's standard deviations are the diagonal of, with the
/// correlations kept (k2 and k3 compensate each other almost exactly).
fn intrinsics_covariance(
    object: &Vector<Vector<Point3f>>,
    rvecs: &Vector<Mat>,
    tvecs: &Vector<Mat>,
    k: &Mat,
    dist: &Mat,
    rms: f64,
) -> Result<Option<[[f64; 9]; 9]>, CalibrateError> {
    use nalgebra::{SMatrix, SVector};
    let mut schur = SMatrix::<f64, 9, 9>::zeros();
    let mut points = 0usize;
    for v in 0..object.len() {
        let obj = object.get(v)?;
        let (mut projected, mut jac) = (Mat::default(), Mat::default());
        calib3d::project_points(
            &obj,
            &rvecs.get(v)?,
            &tvecs.get(v)?,
            k,
            dist,
            &mut projected,
            &mut jac,
            0.0,
        )?;
        // Columns: rotation (3), translation (3), fx fy, cx cy, k1 k2 p1 p2 k3.
        if jac.cols() < 15 {
            return Ok(None);
        }
        let mut a = SMatrix::<f64, 9, 9>::zeros();
        let mut b = SMatrix::<f64, 9, 6>::zeros();
        let mut c = SMatrix::<f64, 6, 6>::zeros();
        for r in 0..jac.rows() {
            let row = |i: i32| jac.at_2d::<f64>(r, i).copied();
            let e =
                SVector::<f64, 6>::from_iterator((0..6).map(row).collect::<Result<Vec<_>, _>>()?);
            let n =
                SVector::<f64, 9>::from_iterator((6..15).map(row).collect::<Result<Vec<_>, _>>()?);
            a += n * n.transpose();
            b += n * e.transpose();
            c += e * e.transpose();
        }
        let Some(c_inv) = c.try_inverse() else {
            return Ok(None);
        };
        schur += a - b * c_inv * b.transpose();
        points += obj.len();
    }
    // The residuals' variance as OpenCV scales its deviations (the squared errors'
    // sum over the points less the unknowns, not over the 2 coordinates a point: a
    // wider, safer figure), so that the diagonal is OpenCV's deviations squared.
    let unknowns = 9 + 6 * object.len();
    let dof = points.saturating_sub(unknowns).max(1);
    let variance = rms * rms * points as f64 / dof as f64;
    let Some(inverse) = schur.try_inverse() else {
        return Ok(None);
    };
    let cov = inverse * variance;
    if cov.iter().any(|v| !v.is_finite()) {
        return Ok(None);
    }
    Ok(Some(std::array::from_fn(|r| {
        std::array::from_fn(|c| cov[(r, c)])
    })))
}

fn calibrate_once(
    views: &[&BoardView],
    board: &Chessboard,
    size: [u32; 2],
) -> Result<RawSolution, CalibrateError> {
    let mut object = Vector::<Vector<Point3f>>::new();
    let mut image = Vector::<Vector<Point2f>>::new();
    let obj = board.object_points();
    for v in views {
        object.push(obj.clone());
        image.push(
            v.corners_px
                .iter()
                .map(|p| Point2f::new(p.x as f32, p.y as f32))
                .collect(),
        );
    }
    let mut k = Mat::default();
    let mut dist = Mat::default();
    let (mut rvecs, mut tvecs) = (Vector::<Mat>::new(), Vector::<Mat>::new());
    let (mut sd_in, mut sd_ex, mut per_view) = (Mat::default(), Mat::default(), Mat::default());
    // OpenCV's defaults: the full 5-coefficient model, 30 iterations or machine epsilon.
    let criteria = TermCriteria::new(
        core::TermCriteria_COUNT + core::TermCriteria_EPS,
        30,
        f64::EPSILON,
    )?;
    let rms = calib3d::calibrate_camera_extended(
        &object,
        &image,
        Size::new(size[0] as i32, size[1] as i32),
        &mut k,
        &mut dist,
        &mut rvecs,
        &mut tvecs,
        &mut sd_in,
        &mut sd_ex,
        &mut per_view,
        0,
        criteria,
    )?;
    let per_view: Vec<f64> = (0..views.len())
        .map(|i| per_view.at::<f64>(i as i32).copied())
        .collect::<Result<_, _>>()?;
    // The first nine of OpenCV's 18: fx, fy, cx, cy, k1, k2, p1, p2, k3.
    let std_dev: Vec<f64> = (0..9.min(sd_in.total() as i32))
        .map(|i| sd_in.at::<f64>(i).copied())
        .collect::<Result<_, _>>()?;
    let covariance = intrinsics_covariance(&object, &rvecs, &tvecs, &k, &dist, rms)?;
    Ok(RawSolution {
        rms,
        k,
        dist,
        per_view,
        std_dev,
        covariance,
    })
}

/// Calibrates the camera from board views: `calibrateCamera` with the 5-coefficient
/// model; views whose error is far above the rest (see [`OutlierRule`]) are dropped,
/// worst first, and the camera solved again, never going under [`MIN_VIEWS`].
pub fn solve_camera(
    views: &[BoardView],
    image_size: [u32; 2],
    board: &Chessboard,
    rule: OutlierRule,
    read: usize,
) -> Result<CameraSolution, CalibrateError> {
    if views.len() < MIN_VIEWS {
        return Err(CalibrateError::TooFewViews {
            usable: views.len(),
            read,
            needed: MIN_VIEWS,
        });
    }
    let mut used: Vec<&BoardView> = views.iter().collect();
    let mut dropped = vec![];
    let mut raw = calibrate_once(&used, board, image_size)?;
    // One view at a time: a single bad view inflates everyone's error.
    while used.len() > MIN_VIEWS {
        let limit = rule.limit(&raw.per_view);
        let Some((worst, &err)) = raw
            .per_view
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
        else {
            break;
        };
        if err <= limit {
            break;
        }
        dropped.push((used[worst].name.clone(), err));
        used.remove(worst);
        raw = calibrate_once(&used, board, image_size)?;
    }
    if let Some(l) = rule.limit_px {
        if raw.per_view.iter().any(|&e| e > l) {
            return Err(CalibrateError::TooFewViews {
                usable: raw.per_view.iter().filter(|&&e| e <= l).count(),
                read,
                needed: MIN_VIEWS,
            });
        }
    }
    let mut camera_matrix = [[0.0; 3]; 3];
    for (r, row) in camera_matrix.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *raw.k.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    let mut dist_coeffs = [0.0; 5];
    for (i, d) in dist_coeffs.iter_mut().enumerate() {
        *d = *raw.dist.at::<f64>(i as i32)?;
    }
    if !raw.rms.is_finite()
        || camera_matrix
            .iter()
            .flatten()
            .chain(&dist_coeffs)
            .any(|v| !v.is_finite())
    {
        return Err(CalibrateError::Diverged);
    }
    let all_corners: Vec<Point2<f64>> = used
        .iter()
        .flat_map(|v| v.corners_px.iter().copied())
        .collect();
    let camera = CameraIntrinsics {
        image_size,
        camera_matrix,
        dist_coeffs,
        rms_px: raw.rms,
        views: used.len(),
        per_view_rms_px: raw.per_view.clone(),
        view_names: used.iter().map(|v| v.name.clone()).collect(),
    };
    Ok(CameraSolution {
        camera,
        dropped,
        coverage: coverage_grid(&all_corners, image_size),
        intrinsics_std_dev: raw.std_dev.clone(),
        intrinsics_covariance: raw.covariance,
    })
}

/// A float image for sub-pixel sampling.
struct Plane {
    w: usize,
    h: usize,
    data: Vec<f32>,
}

impl Plane {
    /// Bilinear sample; `None` outside.
    fn sample(&self, p: Point2<f64>) -> Option<f64> {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x <= (self.w - 1) as f64 && p.y <= (self.h - 1) as f64) {
            return None;
        }
        let (x0, y0) = (p.x.floor() as usize, p.y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(self.w - 1), (y0 + 1).min(self.h - 1));
        let (fx, fy) = (p.x - x0 as f64, p.y - y0 as f64);
        let at = |x: usize, y: usize| self.data[y * self.w + x] as f64;
        let top = at(x0, y0) * (1.0 - fx) + at(x1, y0) * fx;
        let bottom = at(x0, y1) * (1.0 - fx) + at(x1, y1) * fx;
        Some(top * (1.0 - fy) + bottom * fy)
    }
}

/// Per-pixel colour distance to `reference` (BGR), as a float plane.
fn colour_distance(bgr: &Mat, reference: [f64; 3]) -> Result<Plane, CalibrateError> {
    let (w, h) = (bgr.cols() as usize, bgr.rows() as usize);
    let mut data = Vec::with_capacity(w * h);
    for y in 0..h as i32 {
        let row = bgr.at_row::<core::Vec3b>(y)?;
        for p in row {
            let d = (0..3)
                .map(|c| (p[c] as f64 - reference[c]).powi(2))
                .sum::<f64>()
                .sqrt();
            data.push(d as f32);
        }
    }
    Ok(Plane { w, h, data })
}

fn dist3(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Per-pixel projection of the colour on `axis` (a linear signal: a pixel that mixes
/// two colours gets the same mix of their values, so edges stay unbiased).
fn colour_projection(bgr: &Mat, axis: [f64; 3]) -> Result<Plane, CalibrateError> {
    let (w, h) = (bgr.cols() as usize, bgr.rows() as usize);
    let mut data = Vec::with_capacity(w * h);
    for y in 0..h as i32 {
        for p in bgr.at_row::<core::Vec3b>(y)? {
            data.push(
                (p[0] as f64 * axis[0] + p[1] as f64 * axis[1] + p[2] as f64 * axis[2]) as f32,
            );
        }
    }
    Ok(Plane { w, h, data })
}

pub(crate) fn median_of(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The signals whose steepest rise marks the table's edge.
struct EdgeSignals {
    /// The one that separates the table from the floor better, for the outline.
    chosen: Plane,
    /// The hue signal when `chosen` is the colour distance and the floor's colour
    /// differs from the table's in hue at all: per side, its reading is taken where
    /// it disagrees with the colour distance's ([`hue_reading_wins`]).
    hue: Option<Plane>,
}

/// The signal whose steepest rise marks the table's edge. When the table and the
/// floor differ in hue: the part of the colour orthogonal to the table's colour
/// (along the floor's such part), which is 0 on the table *at any brightness*, so a
/// darker rim, an edge seam or a shadow does not move the edge. Otherwise plain colour
/// distance to the table. Both are judged from samples just inside and just outside
/// the rough outline: the one that separates them better (in units of their spread) wins.
fn edge_signal(
    undistorted: &Mat,
    smooth: &Mat,
    quad: &[Point2<f64>; 4],
) -> Result<EdgeSignals, CalibrateError> {
    let centre =
        Point2::from((quad[0].coords + quad[1].coords + quad[2].coords + quad[3].coords) / 4.0);
    let (w, h) = (undistorted.cols(), undistorted.rows());
    let mut inside = vec![];
    let mut outside = vec![];
    for k in 0..4 {
        let (a, b) = (quad[k], quad[(k + 1) % 4]);
        let dir = (b - a).normalize();
        let mut normal = Vector2::new(-dir.y, dir.x);
        if normal.dot(&(a - centre)) < 0.0 {
            normal = -normal;
        }
        for i in 1..40 {
            let q = a + (b - a) * (i as f64 / 40.0);
            for (offset, bucket) in [(-25.0, &mut inside), (25.0, &mut outside)] {
                let p = q + normal * offset;
                let (x, y) = (p.x.round() as i32, p.y.round() as i32);
                if x >= 0 && y >= 0 && x < w && y < h {
                    let c = undistorted.at_2d::<core::Vec3b>(y, x)?;
                    // The undistorted frame is black where no camera pixel maps.
                    if c[0] as u32 + c[1] as u32 + c[2] as u32 > 0 {
                        bucket.push([c[0] as f64, c[1] as f64, c[2] as f64]);
                    }
                }
            }
        }
    }
    if inside.is_empty() || outside.is_empty() {
        return Err(CalibrateError::TableNotFound(
            "no floor visible around it".into(),
        ));
    }
    let med3 = |v: &[[f64; 3]]| [0, 1, 2].map(|c| median_of(v.iter().map(|p| p[c]).collect()));
    let (table, floor) = (med3(&inside), med3(&outside));
    let spread = |v: &[f64], m: f64| median_of(v.iter().map(|x| (x - m).abs()).collect());
    let score = |f: &dyn Fn([f64; 3]) -> f64| {
        let ti: Vec<f64> = inside.iter().map(|&p| f(p)).collect();
        let fo: Vec<f64> = outside.iter().map(|&p| f(p)).collect();
        let (mt, mf) = (median_of(ti.clone()), median_of(fo.clone()));
        (mf - mt) / (spread(&ti, mt) + spread(&fo, mf) + 1e-9)
    };
    let t_norm = dist3(table, [0.0; 3]).max(1e-9);
    let t_hat = table.map(|v| v / t_norm);
    let along = floor[0] * t_hat[0] + floor[1] * t_hat[1] + floor[2] * t_hat[2];
    let perp = [0, 1, 2].map(|c| floor[c] - along * t_hat[c]);
    let perp_norm = dist3(perp, [0.0; 3]);
    let colour_score = score(&|p| dist3(p, table));
    let mut hue = None;
    if perp_norm > 1e-6 {
        let axis = perp.map(|v| v / perp_norm);
        let hue_score = score(&|p| p[0] * axis[0] + p[1] * axis[1] + p[2] * axis[2]);
        if hue_score >= 4.0 || hue_score >= colour_score {
            return Ok(EdgeSignals {
                chosen: colour_projection(smooth, axis)?,
                hue: None,
            });
        }
        // The floor may differ from the top mostly in brightness, and then the
        // colour distance separates them better; but it also rises over a darker
        // rim or bevel inside the top's edge, and where the floor is as dark as
        // that shade the rise's centroid lies on the rim (1–2 px inside on random
        // looks 4 and 38; outward on look 13's lighter floor). Kept for the sides.
        hue = Some(colour_projection(smooth, axis)?);
    }
    Ok(EdgeSignals {
        chosen: colour_distance(smooth, table)?,
        hue,
    })
}

/// How many of its own standard errors the hue's line must lie from the colour
/// distance's, at an end of the side, to be taken instead: a 3-sigma disagreement
/// is no noise of the hue's, and the hue, blind to brightness, cannot be pulled by
/// the top's shading; the colour distance can.
const HUE_DISAGREEMENT_SIGMAS: f64 = 3.0;

/// Whether a side's hue reading (its line and the points it kept) is to be taken
/// over the colour distance's line: where the two agree within the hue's noise the
/// colour distance, steeper and less noisy, stands; where they disagree by more
/// ([`HUE_DISAGREEMENT_SIGMAS`]), the colour distance was pulled by a darker rim,
/// bevel or shading of the top (look 38: 1.8 px inside on every clear side, the
/// hue within 0.2 px but with a spread of 0.5–0.7 px a point).
fn hue_reading_wins(
    side: &Side,
    colour: &Line2,
    hue: (&Line2, &[Point2<f64>]),
    stations: usize,
) -> bool {
    let (line, kept) = hue;
    // An edge found along most of the side, not a few stray rises.
    if kept.len() < 10 || 2 * kept.len() < stations {
        return false;
    }
    let n = kept.len() as f64;
    let rms = (kept.iter().map(|&p| line.distance(p).powi(2)).sum::<f64>() / n).sqrt();
    // A line's offset at the ends of a uniform spread of points is twice as
    // uncertain as at their middle; neighbouring samples share their errors
    // ([`EDGE_SAMPLE_CORRELATION`]).
    let se_end = 2.0 * rms * (EDGE_SAMPLE_CORRELATION / n).sqrt();
    // Where each line crosses the side's normal at its measured ends.
    let across = |l: &Line2, q: Point2<f64>| {
        let along_normal = l.normal.dot(&side.normal);
        (along_normal.abs() > 1e-6).then(|| -l.distance(q) / along_normal)
    };
    let skip = (CORNER_SKIP_FRACTION * side.len).max(CORNER_SKIP_PX);
    [skip, side.len - skip].iter().any(|&t| {
        let q = side.a + side.dir * t;
        match (across(line, q), across(colour, q)) {
            (Some(h), Some(c)) => (h - c).abs() > HUE_DISAGREEMENT_SIGMAS * se_end,
            _ => false,
        }
    })
}

/// The median colour of the central tenth of the frame (each way): the table's colour.
fn centre_colour(bgr: &Mat) -> Result<[f64; 3], CalibrateError> {
    let (w, h) = (bgr.cols(), bgr.rows());
    let mut channels: [Vec<u8>; 3] = Default::default();
    for y in (h * 9 / 20)..(h * 11 / 20).max(h * 9 / 20 + 1) {
        for x in (w * 9 / 20)..(w * 11 / 20).max(w * 9 / 20 + 1) {
            let p = bgr.at_2d::<core::Vec3b>(y, x)?;
            for c in 0..3 {
                channels[c].push(p[c]);
            }
        }
    }
    let mut out = [0.0; 3];
    for c in 0..3 {
        channels[c].sort_unstable();
        out[c] = channels[c][channels[c].len() / 2] as f64;
    }
    Ok(out)
}

fn to_bgr(image: &Mat) -> Result<Mat, CalibrateError> {
    if image.channels() == 3 {
        return Ok(image.clone());
    }
    let mut out = Mat::default();
    imgproc::cvt_color(image, &mut out, imgproc::COLOR_GRAY2BGR, 0)?;
    Ok(out)
}

/// The table found in a frame, in undistorted pixels: its corners numbered as
/// `calibration::order_table_corners` says (table corner order), and per side `k`
/// (corner `k` to `k + 1`) the edge points its line was fitted to.
#[derive(Debug, Clone)]
pub struct TableDetection {
    pub corners_undistorted: [Point2<f64>; 4],
    pub side_points_undistorted: [Vec<Point2<f64>>; 4],
    /// Sides whose side face the camera sees, measured at the top's own edge (where
    /// the colour last leaves the top's).
    pub face_in_view: [bool; 4],
    /// Each side's line, as in `corners_undistorted`.
    lines: [Line2; 4],
    /// For the sides with a face in view, the outer boundary's line and points too:
    /// a darker rim along the top's edge looks like a face, and only a rigid camera
    /// can tell which of the two is the top's edge ([`TableDetection::variants`]).
    outer: [Option<(Line2, Vec<Point2<f64>>)>; 4],
    /// Sides the camera stands beyond (outside the vertical plane through them),
    /// whose side face shows however thin.
    showing: [bool; 4],
}

/// One reading of the table's sides: corners, each side's points, and which sides
/// were taken at the top's edge inside a side face.
pub type SideVariant = ([Point2<f64>; 4], [Vec<Point2<f64>>; 4], [bool; 4]);

impl TableDetection {
    /// Every way to read the sides with a face in view (the top's edge or the outer
    /// boundary), the found one first.
    pub fn variants(&self) -> Vec<SideVariant> {
        let open: Vec<usize> = (0..4).filter(|&k| self.outer[k].is_some()).collect();
        let mut out = vec![];
        for mask in 0..(1usize << open.len()) {
            let mut lines = self.lines;
            let mut points = self.side_points_undistorted.clone();
            let mut face = self.face_in_view;
            for (bit, &k) in open.iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    if let Some((line, kept)) = &self.outer[k] {
                        lines[k] = *line;
                        points[k] = kept.clone();
                        face[k] = false;
                    }
                }
            }
            if let Ok(corners) = corners_of(&lines) {
                out.push((corners, points, face));
            }
        }
        out
    }
}

/// The region of the frame under its centre whose colour is near `reference`
/// (per pixel, `dist`): Otsu's threshold on the distance, an opening that cuts thin
/// bridges to look-alike floor, and the connected region under the centre (if an
/// item sits there, the largest one touching the central box). 255 inside.
fn central_region(dist: &Plane, at_most: Option<f64>) -> Result<(Mat, bool, f64), CalibrateError> {
    let not_found = |why: &str| CalibrateError::TableNotFound(why.to_string());
    let (w, h) = (dist.w as i32, dist.h as i32);
    let bytes: Vec<u8> = dist
        .data
        .iter()
        .map(|&d| d.clamp(0.0, 255.0) as u8)
        .collect();
    let dist8 = Mat::new_rows_cols_with_data(h, w, &bytes)?.try_clone()?;
    let mut mask = Mat::default();
    let otsu = imgproc::threshold(
        &dist8,
        &mut mask,
        0.0,
        255.0,
        imgproc::THRESH_BINARY_INV | imgproc::THRESH_OTSU,
    )?;
    if otsu < 6.0 {
        return Err(not_found(
            "the table does not contrast with its surroundings",
        ));
    }
    let otsu = at_most.map_or(otsu, |m| otsu.min(m));
    // All four corners must be in the picture, so a region reaching its border has
    // run into a floor or wall like the top: tighter thresholds are tried then.
    let mut last = None;
    for factor in CENTRAL_THRESHOLD_FACTORS {
        let threshold = (otsu * factor).floor();
        imgproc::threshold(
            &dist8,
            &mut mask,
            threshold,
            255.0,
            imgproc::THRESH_BINARY_INV,
        )?;
        let (region, touches_border) = central_component(&mask)?;
        if !touches_border {
            return Ok((region, false, threshold));
        }
        last = Some((region, true, threshold));
    }
    last.ok_or_else(|| not_found("no region like the image centre's colour"))
}

/// Otsu's threshold on the colour distance, then these fractions of it while the
/// central region reaches the picture's border.
const CENTRAL_THRESHOLD_FACTORS: [f64; 4] = [1.0, 0.75, 0.55, 0.4];

/// `src` after one morphological `op` (`imgproc::MORPH_OPEN`, `MORPH_CLOSE`) with an
/// elliptical kernel `side` pixels across, `border` beyond the picture.
fn morphed(src: &Mat, op: i32, side: i32, border: i32) -> Result<Mat, CalibrateError> {
    let kernel = imgproc::get_structuring_element(
        imgproc::MORPH_ELLIPSE,
        Size::new(side, side),
        core::Point::new(-1, -1),
    )?;
    let mut out = Mat::default();
    imgproc::morphology_ex(
        src,
        &mut out,
        op,
        &kernel,
        core::Point::new(-1, -1),
        1,
        border,
        Scalar::all(0.0),
    )?;
    Ok(out)
}

/// The connected region of `mask` under the picture's centre (if an item sits
/// there, the largest one touching the central box), after an opening that cuts
/// thin bridges to look-alike floor; 255 inside, and whether it reaches the
/// picture's border.
fn central_component(mask: &Mat) -> Result<(Mat, bool), CalibrateError> {
    let not_found = |why: &str| CalibrateError::TableNotFound(why.to_string());
    let (w, h) = (mask.cols(), mask.rows());
    let opened = morphed(mask, imgproc::MORPH_OPEN, 7, core::BORDER_CONSTANT)?;
    let (mut labels, mut stats, mut centroids) = (Mat::default(), Mat::default(), Mat::default());
    let n = imgproc::connected_components_with_stats(
        &opened,
        &mut labels,
        &mut stats,
        &mut centroids,
        8,
        core::CV_32S,
    )?;
    // The region under the centre; if an item sits there, the largest region touching
    // the central box.
    let mut label = *labels.at_2d::<i32>(h / 2, w / 2)?;
    if label == 0 {
        let mut best = (0, 0);
        for y in (h * 2 / 5)..(h * 3 / 5) {
            for x in (w * 2 / 5)..(w * 3 / 5) {
                let l = *labels.at_2d::<i32>(y, x)?;
                if l > 0 {
                    let area = *stats.at_2d::<i32>(l, imgproc::CC_STAT_AREA)?;
                    if area > best.1 {
                        best = (l, area);
                    }
                }
            }
        }
        label = best.0;
    }
    if label <= 0 || label >= n {
        return Err(not_found("no region like the image centre's colour"));
    }
    let stat = |k| stats.at_2d::<i32>(label, k).copied();
    let area = stat(imgproc::CC_STAT_AREA)? as f64;
    if area < 0.04 * (w * h) as f64 {
        return Err(not_found("the central region is too small to be the table"));
    }
    let (left, top) = (stat(imgproc::CC_STAT_LEFT)?, stat(imgproc::CC_STAT_TOP)?);
    let (right, bottom) = (
        left + stat(imgproc::CC_STAT_WIDTH)?,
        top + stat(imgproc::CC_STAT_HEIGHT)?,
    );
    // Quadrilateral corners within 3 px of the border are refused as out of it.
    let touches_border = left <= 3 || top <= 3 || right >= w - 3 || bottom >= h - 3;
    let mut region = Mat::default();
    core::compare(
        &labels,
        &Scalar::all(label as f64),
        &mut region,
        core::CMP_EQ,
    )?;
    Ok((region, touches_border))
}

/// The quadrilateral outlining a region (its convex hull simplified to four
/// corners); refused when it is no quadrilateral or runs out of the picture.
fn quad_of_region(region: &Mat) -> Result<[Point2<f64>; 4], CalibrateError> {
    let not_found = |why: &str| CalibrateError::TableNotFound(why.to_string());
    let (w, h) = (region.cols(), region.rows());
    let mut contours = Vector::<Vector<core::Point>>::new();
    imgproc::find_contours(
        region,
        &mut contours,
        imgproc::RETR_EXTERNAL,
        imgproc::CHAIN_APPROX_NONE,
        core::Point::new(0, 0),
    )?;
    let contour = contours
        .iter()
        .max_by_key(|c| c.len())
        .ok_or_else(|| not_found("no outline"))?;
    let mut hull = Vector::<core::Point>::new();
    imgproc::convex_hull(&contour, &mut hull, false, true)?;
    let perimeter = imgproc::arc_length(&hull, true)?;
    let mut quad = Vector::<core::Point>::new();
    for step in 1..=40 {
        imgproc::approx_poly_dp(&hull, &mut quad, perimeter * 0.005 * step as f64, true)?;
        if quad.len() <= 4 {
            break;
        }
    }
    if quad.len() != 4 {
        return Err(not_found(&format!(
            "its outline is not a quadrilateral ({} sides)",
            quad.len()
        )));
    }
    let pts: Vec<Point2<f64>> = quad
        .iter()
        .map(|p| Point2::new(p.x as f64, p.y as f64))
        .collect();
    for p in &pts {
        if p.x < 3.0 || p.y < 3.0 || p.x > (w - 4) as f64 || p.y > (h - 4) as f64 {
            return Err(not_found(
                "it runs out of the picture (all four corners must be visible)",
            ));
        }
    }
    Ok([pts[0], pts[1], pts[2], pts[3]])
}

/// The table's colour as a smooth function of the picture position: per channel
/// a polynomial in x and y (affine, or with `quadratic` of the second degree),
/// least squares over the pixels of `region` (every `REGION_SAMPLE_STEP`th each
/// way). A lamp's falloff, a spotlight and vignetting shade the top smoothly, so
/// one colour for the whole top leaves its far or dim part out; this does not.
fn shading_model(
    bgr: &Mat,
    region: &Mat,
    quadratic: bool,
) -> Result<Option<[Vec<f64>; 3]>, CalibrateError> {
    let (w, h) = (bgr.cols(), bgr.rows());
    let n = if quadratic { 6 } else { 3 };
    let mut normal = nalgebra::DMatrix::<f64>::zeros(n, n);
    let mut rhs = nalgebra::DMatrix::<f64>::zeros(n, 3);
    for y in (0..h).step_by(REGION_SAMPLE_STEP) {
        for x in (0..w).step_by(REGION_SAMPLE_STEP) {
            if *region.at_2d::<u8>(y, x)? == 0 {
                continue;
            }
            let terms = shading_terms(x, y, w, h, quadratic);
            let c = bgr.at_2d::<core::Vec3b>(y, x)?;
            for i in 0..n {
                for j in 0..n {
                    normal[(i, j)] += terms[i] * terms[j];
                }
                for ch in 0..3 {
                    rhs[(i, ch)] += terms[i] * c[ch] as f64;
                }
            }
        }
    }
    let Some(solved) = normal.cholesky().map(|c| c.solve(&rhs)) else {
        return Ok(None);
    };
    Ok(Some(
        [0, 1, 2].map(|ch| solved.column(ch).iter().copied().collect()),
    ))
}

/// Regions are sampled every this many pixels for the shading model.
const REGION_SAMPLE_STEP: usize = 4;

/// The shading model's terms at a pixel: 1, x, y (and x², xy, y²), x and y
/// scaled to [-1, 1] over the picture so the normal equations stay well scaled.
fn shading_terms(x: i32, y: i32, w: i32, h: i32, quadratic: bool) -> [f64; 6] {
    let u = 2.0 * x as f64 / w as f64 - 1.0;
    let v = 2.0 * y as f64 / h as f64 - 1.0;
    if quadratic {
        [1.0, u, v, u * u, u * v, v * v]
    } else {
        [1.0, u, v, 0.0, 0.0, 0.0]
    }
}

/// Per-pixel colour distance to the shading model's colour at that pixel.
fn shaded_distance(bgr: &Mat, model: &[Vec<f64>; 3]) -> Result<Plane, CalibrateError> {
    let (w, h) = (bgr.cols(), bgr.rows());
    let mut data = Vec::with_capacity((w * h) as usize);
    for y in 0..h {
        let row = bgr.at_row::<core::Vec3b>(y)?;
        for (x, p) in row.iter().enumerate() {
            let terms = shading_terms(x as i32, y, w, h, true);
            let mut d2 = 0.0;
            for ch in 0..3 {
                let m: f64 = model[ch].iter().zip(&terms).map(|(a, t)| a * t).sum();
                d2 += (p[ch] as f64 - m).powi(2);
            }
            data.push(d2.sqrt() as f32);
        }
    }
    Ok(Plane {
        w: w as usize,
        h: h as usize,
        data,
    })
}

/// Rounds of fitting the shading model to the region and growing the region with it.
const SHADING_ROUNDS: usize = 4;

/// The table top as one region however it is lit and whatever lines cross it:
/// each round's region, the first the region of the centre's colour. Thin dark
/// lines (plank seams, a floor's grout) are first closed over: a seam has the
/// top's material on both sides and is no boundary of it, and a grout line must
/// not join the table to a look-alike floor. Then the region is grown with the
/// shading model fitted to it, affine first (a small region would bend a
/// quadratic), until it settles or reaches the picture's border (the top is
/// wholly in the picture: it has run into the floor).
fn shaded_table_regions(blurred: &Mat) -> Result<Vec<Mat>, CalibrateError> {
    // Seams are 2–3 mm, a few pixels at a table filling the picture; the kernel
    // scales with the picture.
    let side = (blurred.cols() / 140).max(3) | 1;
    let closed = morphed(blurred, imgproc::MORPH_CLOSE, side, core::BORDER_REPLICATE)?;
    let (mut region, touches_border, _) =
        central_region(&colour_distance(&closed, centre_colour(&closed)?)?, None)?;
    if touches_border {
        return Ok(vec![region]);
    }
    let mut regions = vec![region.clone()];
    let mut area = core::count_non_zero(&region)?;
    for round in 0..SHADING_ROUNDS {
        let Some(model) = shading_model(&closed, &region, round > 0)? else {
            break;
        };
        let Ok((grown, touches_border, _)) =
            central_region(&shaded_distance(&closed, &model)?, None)
        else {
            break;
        };
        if touches_border {
            break;
        }
        let grown_area = core::count_non_zero(&grown)?;
        region = grown;
        regions.push(region.clone());
        let settled = (grown_area - area).abs() * 100 < area;
        area = grown_area;
        if settled && round > 0 {
            break;
        }
    }
    Ok(regions)
}

/// `region` with what juts out of it narrower than a 40th of the picture's width
/// taken off (an opening): floor boards or tiles like the top join it in tongues
/// along its edge, and the convex hull of a tongue puts a rough corner tens of
/// pixels off, beyond the reach of the edge search. The table's own corners are
/// rounded by it a little, which the edge search, clear of the corners, ignores.
fn without_protrusions(region: &Mat) -> Result<Mat, CalibrateError> {
    let side = (region.cols() / 40).max(3) | 1;
    morphed(region, imgproc::MORPH_OPEN, side, core::BORDER_CONSTANT)
}

/// Rough quadrilaterals of the table in the undistorted frame (undistorted
/// pixels): the region of the centre's colour alone (the first reading), then the
/// region grown under a smooth shading with seams closed over
/// ([`shaded_table_regions`], each round's region as it is and
/// [`without_protrusions`]). At least one, or why none was found.
fn rough_table_quads(undistorted: &Mat) -> Result<Vec<[Point2<f64>; 4]>, CalibrateError> {
    let mut blurred = Mat::default();
    imgproc::gaussian_blur(
        undistorted,
        &mut blurred,
        Size::new(5, 5),
        0.0,
        0.0,
        core::BORDER_DEFAULT,
    )?;
    let plain = central_region(&colour_distance(&blurred, centre_colour(&blurred)?)?, None)
        .and_then(|r| quad_of_region(&r.0));
    // A region that is no quadrilateral in the picture is no candidate; the
    // first reading's reason is the plainer one to tell when none is.
    let mut quads = vec![];
    let plain_error = match plain {
        Ok(q) => {
            quads.push(q);
            None
        }
        Err(e) => Some(e),
    };
    if let Ok(regions) = shaded_table_regions(&blurred) {
        for region in &regions {
            quads.extend(quad_of_region(region));
            quads.extend(quad_of_region(&without_protrusions(region)?));
        }
    }
    match plain_error {
        Some(e) if quads.is_empty() => Err(e),
        _ => Ok(quads),
    }
}

/// Corners are rounded by blur and segmentation: each side is measured clear of
/// them, from this fraction of its length (and at least `CORNER_SKIP_PX`) in.
const CORNER_SKIP_FRACTION: f64 = 0.05;
const CORNER_SKIP_PX: f64 = 12.0;

/// The thickest table top looked for (mm): a side face seen below the top's edge is
/// at most this tall, which bounds how far inside the outer boundary the top's edge
/// can lie. Kitchen and game tables are 18–45 mm thick.
pub const MAX_TOP_THICKNESS_MM: f64 = 60.0;

/// A side of the quadrilateral to measure: from `a` to `b` (undistorted px) with the
/// outward unit normal.
struct Side {
    a: Point2<f64>,
    dir: Vector2<f64>,
    len: f64,
    normal: Vector2<f64>,
}

impl Side {
    fn new(a: Point2<f64>, b: Point2<f64>, centre: Point2<f64>) -> Option<Side> {
        let along = b - a;
        let len = along.norm();
        if len < 20.0 {
            return None;
        }
        let dir = along / len;
        let mut normal = Vector2::new(-dir.y, dir.x);
        if normal.dot(&(a - centre)) < 0.0 {
            normal = -normal;
        }
        Some(Side {
            a,
            dir,
            len,
            normal,
        })
    }

    /// The points along the side, one a pixel, clear of the corners.
    fn stations(&self) -> impl Iterator<Item = Point2<f64>> + '_ {
        let skip = (CORNER_SKIP_FRACTION * self.len).max(CORNER_SKIP_PX);
        let n = (self.len - 2.0 * skip).max(0.0).floor() as usize;
        (0..n).map(move |i| self.a + self.dir * (skip + i as f64))
    }
}

/// Profiles are sampled every quarter pixel across the edge.
const PROFILE_STEP_PX: f64 = 0.25;

/// The centroid (in profile positions, px) of the positive gradient around its peak
/// `imax`, over at most `half_px` either way: unbiased for a symmetric blur, and
/// unlike a parabola through the peak it does not snap to the pixel grid (bilinear
/// samples make the gradient piecewise flat). The window stops where the gradient
/// falls to a tenth of its peak, so a second edge close by does not pull it.
fn gradient_centroid(
    grad: &[f64],
    imax: usize,
    half_px: f64,
    position: impl Fn(usize) -> f64,
) -> f64 {
    let half = (half_px / PROFILE_STEP_PX) as usize;
    let floor = 0.1 * grad[imax];
    let mut lo = imax;
    while lo > 0 && imax - lo < half && grad[lo - 1] > floor {
        lo -= 1;
    }
    let mut hi = imax;
    while hi + 1 < grad.len() && hi - imax < half && grad[hi + 1] > floor {
        hi += 1;
    }
    let (mut sum_g, mut sum_gs) = (0.0, 0.0);
    for (i, &g) in grad.iter().enumerate().take(hi + 1).skip(lo) {
        sum_g += g;
        sum_gs += g * position(i);
    }
    sum_gs / sum_g
}

/// Each outer-boundary profile is the mean of the profiles this far (px) either
/// side of its station along the side. Video and JPEG carry colour at half the
/// resolution (4:2:0) in blocks, so the hue signal's rise is twice as blurred and
/// uneven from one block to the next: on a light top over a dark grey floor its
/// steepest point fell at either end of the rise, two readings about 3 px apart
/// taken in turn along a side, and a stretch of one tilted the side's line (0.8 px
/// at a corner). Averaging over two colour samples along the side evens the blocks
/// out; the side is straight there (its profiles are taken in undistorted pixels).
const PROFILE_ALONG_PX: i32 = 2;
/// How far either side of the steepest point the rise's centroid is taken (px):
/// the whole of a rise blurred over twice the luma's width (the colour's half
/// resolution), not just the half of it around one of its two peaks.
const OUTER_CENTROID_HALF_PX: f64 = 4.0;

/// Measures a side as the steepest rise of `signal` (0 on the table, rising off it)
/// within `reach_px` of the side: the table's outer boundary. Edge points with the
/// strength of their step.
fn measure_outer_side(
    side: &Side,
    signal: &Plane,
    camera: &CameraIntrinsics,
    reach_px: f64,
) -> Vec<(Point2<f64>, f64)> {
    let n_steps = (2.0 * reach_px / PROFILE_STEP_PX) as i32;
    let position = |i: usize| -reach_px + (i as f64 + 1.0) * PROFILE_STEP_PX;
    let mut edge = vec![];
    let along = -PROFILE_ALONG_PX..=PROFILE_ALONG_PX;
    let count = along.clone().count() as f64;
    for q in side.stations() {
        let profile: Option<Vec<f64>> = (0..=n_steps)
            .map(|i| {
                let s = -reach_px + i as f64 * PROFILE_STEP_PX;
                let mut sum = 0.0;
                for j in along.clone() {
                    let p = q + side.dir * j as f64 + side.normal * s;
                    sum += signal.sample(camera.distort_pixel(p))?;
                }
                Some(sum / count)
            })
            .collect();
        let Some(profile) = profile else { continue };
        let grad: Vec<f64> = (1..profile.len() - 1)
            .map(|i| profile[i + 1] - profile[i - 1])
            .collect();
        let Some((imax, &gmax)) = grad.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)) else {
            continue;
        };
        if gmax <= 0.0 || imax == 0 || imax + 1 >= grad.len() {
            continue;
        }
        let s = gradient_centroid(&grad, imax, OUTER_CENTROID_HALF_PX, position);
        edge.push((q + side.normal * s, gmax));
    }
    edge
}

/// The frame's three colour channels as float planes, for sub-pixel colour samples.
fn colour_planes(bgr: &Mat) -> Result<[Plane; 3], CalibrateError> {
    let (w, h) = (bgr.cols() as usize, bgr.rows() as usize);
    let mut planes = [0, 1, 2].map(|_| Vec::with_capacity(w * h));
    for y in 0..h as i32 {
        for p in bgr.at_row::<core::Vec3b>(y)? {
            for c in 0..3 {
                planes[c].push(p[c] as f32);
            }
        }
    }
    Ok(planes.map(|data| Plane { w, h, data }))
}

/// Where the top's own colour (and how much it varies: grain, planks, noise) is
/// read, just inside the searched stretch (px).
const TOP_REFERENCE_PX: f64 = 10.0;
/// The least colour distance (BGR units) that counts as "off the top's colour",
/// whatever the top's own variation: sensor noise alone reaches a few units.
const MIN_OFF_TOP: f64 = 10.0;
/// An earlier stretch is taken for the face only if it stays this many times the
/// "off the top" level away from the top's colour: a face is a step off it, not a
/// drift about the level.
const FACE_STEP_FACTOR: f64 = 2.0;

/// Measures a side whose side face is in view. Across the stretch from `reach_in`
/// inside the outer boundary to `reach_out` beyond it, the colour's distance from
/// the top's own (the median of a stretch further in) is followed outward. Beyond
/// the top's edge the colour never again looks like the top's: neither the side
/// face (darker, or lit differently) nor the floor does, while grain, a plank seam
/// or a fold inside the top comes back to it. So the top ends where the distance
/// last rises above the top's own variation (twice what it reaches within the
/// reference stretch, taken per side), at the steepest rise there; or, where an
/// earlier stretch stays well off the top's colour (twice that) for `face_run_px`
/// (a rim's width seen there: a rim's ramp, a seam or a grain band is not that wide
/// and that far off), at the rise into it. Edge points with the height of their
/// rise.
fn measure_top_side(
    side: &Side,
    colour: &[Plane; 3],
    camera: &CameraIntrinsics,
    reach_in: f64,
    reach_out: f64,
    face_run_px: f64,
) -> Vec<(Point2<f64>, f64)> {
    let start = -reach_in - TOP_REFERENCE_PX;
    let n = ((reach_out - start) / PROFILE_STEP_PX) as usize + 1;
    let position = |i: usize| start + i as f64 * PROFILE_STEP_PX;
    let px = |d: f64| (d / PROFILE_STEP_PX).round() as usize;
    let reference_end = px(TOP_REFERENCE_PX);
    // First every station's distance profile and how far the top varies in it.
    let mut profiles = vec![];
    for q in side.stations() {
        let samples: Option<Vec<[f64; 3]>> = (0..n)
            .map(|i| {
                let p = camera.distort_pixel(q + side.normal * position(i));
                Some([
                    colour[0].sample(p)?,
                    colour[1].sample(p)?,
                    colour[2].sample(p)?,
                ])
            })
            .collect();
        let Some(samples) = samples else { continue };
        let top =
            [0, 1, 2].map(|c| median_of(samples[..reference_end].iter().map(|v| v[c]).collect()));
        let d: Vec<f64> = samples.iter().map(|&c| dist3(c, top)).collect();
        let mut inner: Vec<f64> = d[..reference_end].to_vec();
        inner.sort_by(f64::total_cmp);
        let variation = inner[inner.len() * 9 / 10];
        profiles.push((q, d, variation));
    }
    if profiles.is_empty() {
        return vec![];
    }
    let off_top = (2.0 * median_of(profiles.iter().map(|p| p.2).collect())).max(MIN_OFF_TOP);
    let mut edge = vec![];
    for (q, d, _) in profiles {
        // The last rise above `off_top`: everything from `last` on stays off the top.
        let Some(below) = d[reference_end..].iter().rposition(|&v| v <= off_top) else {
            continue;
        };
        let mut last = reference_end + below + 1;
        // Unless an earlier stretch stays well off the top for longer than a rim is
        // wide: that is the face, and a floor near the top's colour beyond it comes
        // back under `off_top`, its grout or a darker patch rising last (look 18
        // through a JPEG: the floor 11–20 from the top's colour against 16, half the
        // stations read on it, the good table refused). Well off, twice the level:
        // a slow shading of the top drifts about `off_top` over tens of pixels (the
        // chain test's render at 1920x1080, its top 10–13 from its own colour for
        // 20 px, was read there with the level alone, 12.5 mm in). The length is
        // clamped to the profile's (an unknown rim width is `f64::MAX`).
        let run = px(face_run_px.min(n as f64 * PROFILE_STEP_PX)).clamp(1, n);
        let well_off = FACE_STEP_FACTOR * off_top;
        if let Some(face) = (reference_end..last)
            .find(|&i| i + run <= n && d[i..i + run].iter().all(|&v| v > well_off))
        {
            // The rise into it: the last sample on the top's colour before it.
            if let Some(below) = d[reference_end..face].iter().rposition(|&v| v <= off_top) {
                last = reference_end + below + 1;
            }
        }
        if last + 1 >= n {
            continue;
        }
        // The steepest rise from a pixel before the crossing to 3 px after it (a
        // darker rim may cross first, its step to the face follows).
        let grad: Vec<f64> = (1..n - 1).map(|i| d[i + 1] - d[i - 1]).collect();
        let (lo, hi) = (
            last.saturating_sub(px(1.0)).max(1) - 1,
            (last + px(3.0)).min(grad.len() - 1),
        );
        let Some((imax, &gmax)) = grad[lo..=hi]
            .iter()
            .enumerate()
            .max_by(|x, y| x.1.total_cmp(y.1))
        else {
            continue;
        };
        if gmax <= 0.0 {
            continue;
        }
        let Some(s) = midpoint_crossing(&d, lo + imax + 1).map(|x| start + x * PROFILE_STEP_PX)
        else {
            continue;
        };
        edge.push((q + side.normal * s, gmax));
    }
    edge
}

/// Half the span over which a step's two levels are read (px): first past the
/// blur of the smoothed frame, then, from the crossing found, closer in, short of a
/// darker rim's ramp leading up to the step.
const STEP_LEVELS_PX: [f64; 2] = [1.25, 0.75];

/// `d` at a fractional index, linearly interpolated; `None` outside.
fn interpolate(d: &[f64], x: f64) -> Option<f64> {
    if !(x >= 0.0 && x <= (d.len() - 1) as f64) {
        return None;
    }
    let i = (x.floor() as usize).min(d.len() - 2);
    let f = x - i as f64;
    Some(d[i] * (1.0 - f) + d[i + 1] * f)
}

/// Where a rising step near profile index `at` (samples `PROFILE_STEP_PX` apart)
/// crosses halfway between its levels either side, as a fractional index: once
/// with the levels read [`STEP_LEVELS_PX`]`[0]` either side of `at`, then twice
/// more closer in around the crossing found. Unlike the gradient's centroid this is
/// not pulled by a ramp leading up to the step (a darker rim toward the edge), and
/// it is unbiased for a symmetric blur.
fn midpoint_crossing(d: &[f64], at: usize) -> Option<f64> {
    let mut x = at as f64;
    for (round, half_px) in [STEP_LEVELS_PX[0], STEP_LEVELS_PX[1], STEP_LEVELS_PX[1]]
        .into_iter()
        .enumerate()
    {
        let half = half_px / PROFILE_STEP_PX;
        let level = 0.5 * (interpolate(d, x - half)? + interpolate(d, x + half)?);
        // The crossing nearest `x`: search outward from it.
        let centre = x.floor() as usize;
        let reach = half.ceil() as usize;
        let mut found = None;
        'search: for k in 0..=reach {
            for i in [centre + k, centre.wrapping_sub(k + 1)] {
                if i + 1 >= d.len() {
                    continue;
                }
                let (a, b) = (d[i], d[i + 1]);
                if a <= level && b > level {
                    found = Some(i as f64 + (level - a) / (b - a));
                    break 'search;
                }
            }
        }
        match found {
            Some(f) => x = f,
            None if round == 0 => return None,
            None => break,
        }
    }
    Some(x)
}

/// Fits a side's line to its strong edge points: weak steps are items, shadows or
/// texture, not the table's edge.
fn fit_side(
    edge: &[(Point2<f64>, f64)],
    k: usize,
) -> Result<(Line2, Vec<Point2<f64>>), CalibrateError> {
    if edge.len() < 10 {
        return Err(CalibrateError::TableNotFound(format!(
            "side {k} has no clear edge"
        )));
    }
    let median = median_of(edge.iter().map(|e| e.1).collect());
    let strong: Vec<Point2<f64>> = edge
        .iter()
        .filter(|e| e.1 >= 0.4 * median)
        .map(|e| e.0)
        .collect();
    Line2::fit_robust(&strong, 0.5)
        .ok_or_else(|| CalibrateError::TableNotFound(format!("side {k} is not a line")))
}

/// The corners where adjacent lines cross: corner `k` between sides `k - 1` and `k`.
fn corners_of(lines: &[Line2; 4]) -> Result<[Point2<f64>; 4], CalibrateError> {
    let mut corners = [Point2::origin(); 4];
    for k in 0..4 {
        corners[k] = lines[(k + 3) % 4].intersect(&lines[k]).ok_or_else(|| {
            CalibrateError::TableNotFound("two adjacent sides are parallel".into())
        })?;
    }
    Ok(corners)
}

fn centre_of(quad: &[Point2<f64>; 4]) -> Point2<f64> {
    Point2::from((quad[0].coords + quad[1].coords + quad[2].coords + quad[3].coords) / 4.0)
}

/// Measures each side of `quad` across its whole length (its outer boundary) and
/// fits straight lines; the refined corners.
fn refine_quad(
    quad: &[Point2<f64>; 4],
    tableness: &Plane,
    camera: &CameraIntrinsics,
    reach_px: f64,
) -> Result<[Point2<f64>; 4], CalibrateError> {
    let centre = centre_of(quad);
    let mut lines = [Line2::through(quad[0], quad[1]).unwrap_or(Line2 {
        normal: Vector2::new(0.0, 1.0),
        offset: 0.0,
    }); 4];
    for k in 0..4 {
        let side = Side::new(quad[k], quad[(k + 1) % 4], centre)
            .ok_or_else(|| CalibrateError::TableNotFound("a table side is too short".into()))?;
        lines[k] = fit_side(&measure_outer_side(&side, tableness, camera, reach_px), k)?.0;
    }
    corners_of(&lines)
}

/// How far (undistorted px, along the side's outward normal) a side face up to
/// [`MAX_TOP_THICKNESS_MM`] tall reaches beyond the top's edge, at the side's middle.
fn face_reach_px(
    pose: &RigidPose,
    camera: &CameraIntrinsics,
    a_mm: Point2<f64>,
    b_mm: Point2<f64>,
    normal: Vector2<f64>,
) -> Option<f64> {
    let m = Point2::from((a_mm.coords + b_mm.coords) / 2.0);
    let top = pose.undistorted_pixel(camera, m.x, m.y, 0.0)?;
    let bottom = pose.undistorted_pixel(camera, m.x, m.y, -MAX_TOP_THICKNESS_MM)?;
    Some((bottom - top).dot(&normal))
}

/// How wide (undistorted px) a rim [`RIM_ALLOWANCE_MM`] wide along a side looks at
/// the side's middle, across it.
fn rim_width_px(
    pose: &RigidPose,
    camera: &CameraIntrinsics,
    a_mm: Point2<f64>,
    b_mm: Point2<f64>,
) -> Option<f64> {
    let m = Point2::from((a_mm.coords + b_mm.coords) / 2.0);
    let along = (b_mm - a_mm).try_normalize(1e-9)?;
    let inward = Vector2::new(-along.y, along.x) * RIM_ALLOWANCE_MM;
    let edge = pose.undistorted_pixel(camera, m.x, m.y, 0.0)?;
    let inside = pose.undistorted_pixel(camera, m.x + inward.x, m.y + inward.y, 0.0)?;
    Some((inside - edge).norm())
}

/// Outlines whose rigid camera puts a corner at most this factor times, plus
/// [`NEAR_BEST_OUTLINE_MM`], as far off as the best one's fit nearly as well: a
/// top's outer boundary and the same boundary found from another region differ by
/// a pixel's noise, a plank or a lit patch by tens of millimetres.
const NEAR_BEST_OUTLINE_FACTOR: f64 = 1.5;
const NEAR_BEST_OUTLINE_MM: f64 = 1.0;

/// The area of a quadrilateral (px²), its corners in order either way round.
fn quad_area(q: &[Point2<f64>; 4]) -> f64 {
    let twice: f64 = (0..4)
        .map(|k| {
            let (a, b) = (q[k], q[(k + 1) % 4]);
            a.x * b.y - b.x * a.y
        })
        .sum();
    twice.abs() / 2.0
}

/// A rough outline measured to the table's outer boundary: how far (mm, the
/// worst corner) a rigid camera with these intrinsics fitted to its corners puts
/// them from where they are seen, for a rectangle as wide as the table and of the
/// W/H the corners show, the edge signal measured on, and the corners in
/// table corner order (undistorted px).
fn outer_outline(
    undistorted: &Mat,
    smooth: &Mat,
    rough: &[Point2<f64>; 4],
    camera: &CameraIntrinsics,
    rect: &[Point2<f64>],
) -> Result<(f64, EdgeSignals, [Point2<f64>; 4]), CalibrateError> {
    let tableness = edge_signal(undistorted, smooth, rough)?;
    let first = refine_quad(rough, &tableness.chosen, camera, 10.0)?;
    let outer = refine_quad(&first, &tableness.chosen, camera, 4.0)?;
    let degenerate = || CalibrateError::TableNotFound("its corners are degenerate".into());
    let (ordered, _) =
        order_table_corners(&outer, camera, rect[2].x, rect[2].y).ok_or_else(degenerate)?;
    let obs = PoseObservations {
        corners: ordered.iter().copied().enumerate().collect(),
        ..Default::default()
    };
    // The W/H the corners show with these intrinsics (as the judgement reads it).
    let (w, h) = (rect[2].x, rect[2].y);
    let seen = Homography::from_correspondences(rect, &ordered)
        .and_then(|m| camera.matrix().try_inverse().map(|k| k * m.matrix()))
        .map(|m| w / h * m.column(0).norm() / m.column(1).norm())
        .filter(|a| a.is_finite() && *a > 0.0)
        .ok_or_else(degenerate)?;
    let rect = rectangle_corners_mm(w, w / seen);
    let worst = rigid_offsets(camera, &rect, &ordered, &obs)
        .map(|o| o.iter().copied().fold(0.0, f64::max))
        .unwrap_or(f64::INFINITY);
    Ok((worst, tableness, ordered))
}

/// Finds the four corners of the top of a `width_mm x height_mm` table in a
/// (distorted) frame, numbered in table corner order, with the edge points of each side.
pub fn detect_table(
    frame: &Mat,
    camera: &CameraIntrinsics,
    width_mm: f64,
    height_mm: f64,
) -> Result<TableDetection, CalibrateError> {
    check_frame_size(frame, camera)?;
    let bgr = to_bgr(frame)?;
    let undistorted = Undistorter::new(camera)?.undistort(&bgr)?;
    let mut smooth = Mat::default();
    imgproc::gaussian_blur(
        &bgr,
        &mut smooth,
        Size::new(3, 3),
        0.8,
        0.8,
        core::BORDER_DEFAULT,
    )?;
    let rect = rectangle_corners_mm(width_mm, height_mm);
    // Each rough outline is measured to its outer boundary; a plank, a lit patch
    // or a top joined to its legs is no rectangle of the given size, and a rigid
    // camera with these intrinsics says so (its corners far from those seen):
    // the outline it fits best is the table's.
    // Judged as a rectangle of the W/H each outline shows, not of the given size:
    // a wrong size must be refused by the judgement with the top's own W/H, not
    // pick the outline of a part of the top that fits it. A plank is a rectangle
    // too but smaller than the top: of the outlines fitting nearly as well as the
    // best, the largest is kept.
    let mut outlines = vec![];
    let mut first_error = None;
    for rough in rough_table_quads(&undistorted)? {
        match outer_outline(&undistorted, &smooth, &rough, camera, &rect) {
            Ok(outline) => outlines.push(outline),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let best_fit = outlines.iter().map(|o| o.0).fold(f64::INFINITY, f64::min);
    let near_best =
        |worst: f64| worst <= NEAR_BEST_OUTLINE_FACTOR * best_fit + NEAR_BEST_OUTLINE_MM;
    let chosen = outlines
        .into_iter()
        .filter(|o| near_best(o.0))
        .max_by(|a, b| quad_area(&a.2).total_cmp(&quad_area(&b.2)));
    let (_, tableness, ordered) = match (chosen, first_error) {
        (Some(b), _) => b,
        (None, Some(e)) => return Err(e),
        (None, None) => return Err(CalibrateError::TableNotFound("no outline".into())),
    };
    let degenerate = || CalibrateError::TableNotFound("its corners are degenerate".into());
    // Where the camera stands says which sides show their side face: there the
    // outer boundary is the face's lower edge (or the floor's shadow line), and the
    // top ends further in.
    let pose = Homography::from_correspondences(&ordered, &rect)
        .and_then(|h| RigidPose::from_homography(camera, &h))
        .ok_or_else(degenerate)?;
    let showing = sides_showing_face(&pose, &rect);
    let colour = colour_planes(&smooth)?;
    let centre = centre_of(&ordered);
    let mut lines = [Line2::through(ordered[0], ordered[1]).ok_or_else(degenerate)?; 4];
    let mut points: [Vec<Point2<f64>>; 4] = Default::default();
    let mut face_in_view = [false; 4];
    let mut outer: [Option<(Line2, Vec<Point2<f64>>)>; 4] = Default::default();
    for k in 0..4 {
        let side = Side::new(ordered[k], ordered[(k + 1) % 4], centre)
            .ok_or_else(|| CalibrateError::TableNotFound("a table side is too short".into()))?;
        let reach =
            face_reach_px(&pose, camera, rect[k], rect[(k + 1) % 4], side.normal).unwrap_or(0.0);
        let (mut line, mut kept) = fit_side(
            &measure_outer_side(&side, &tableness.chosen, camera, 4.0),
            k,
        )?;
        if let Some(hue) = &tableness.hue {
            let stations = side.stations().count();
            if let Ok((l, p)) = fit_side(&measure_outer_side(&side, hue, camera, 4.0), k) {
                if hue_reading_wins(&side, &line, (&l, &p), stations) {
                    (line, kept) = (l, p);
                }
            }
        }
        (lines[k], points[k]) = (line, kept);
        // A face under a pixel tall cannot be told from the edge's own blur.
        if showing[k] && reach >= 1.0 {
            // A stretch well off the top's colour wider than a rim is the face.
            let rim = rim_width_px(&pose, camera, rect[k], rect[(k + 1) % 4]).unwrap_or(f64::MAX);
            let top = measure_top_side(&side, &colour, camera, reach + 2.0, 8.0, rim);
            if let Ok((line, kept)) = fit_side(&top, k) {
                outer[k] = Some((lines[k], std::mem::replace(&mut points[k], kept)));
                lines[k] = line;
                face_in_view[k] = true;
            }
        }
    }
    Ok(TableDetection {
        corners_undistorted: corners_of(&lines)?,
        side_points_undistorted: points,
        face_in_view,
        lines,
        outer,
        showing: [showing[0], showing[1], showing[2], showing[3]],
    })
}

fn check_frame_size(frame: &Mat, camera: &CameraIntrinsics) -> Result<(), CalibrateError> {
    let [cw, ch] = camera.image_size;
    if frame.cols() != cw as i32 || frame.rows() != ch as i32 {
        return Err(CalibrateError::CameraSize {
            cam_w: cw,
            cam_h: ch,
            got_w: frame.cols(),
            got_h: frame.rows(),
        });
    }
    Ok(())
}

/// A solved table plane and how well it fits.
#[derive(Debug, Clone)]
pub struct TableSolution {
    /// The file to write: its homography and image corners come from the rigid pose.
    pub file: TableFile,
    /// RMS distance (mm) of the measured edge points from the table's sides, when the
    /// table was found automatically: how straight and consistent the edges were.
    pub edge_rms_mm: Option<f64>,
    /// The table's `W/H` as the camera sees it (from the seen corners alone); should
    /// match the given size.
    pub measured_aspect: f64,
    /// Whether the corners were found automatically.
    pub automatic: bool,
    /// Per corner: how far the seen corner lies from the rigid pose's (mm).
    pub corner_offsets_mm: Vec<f64>,
    /// Why the calibration disagrees with itself, if it does.
    pub doubt: Option<TableDoubt>,
    /// The worst-case (3σ) position error over the table (mm), when the table was
    /// found automatically: the edge fits' scatter and the intrinsics' doubts given
    /// (none: the edges' alone), per point in quadrature.
    pub uncertainty_mm: Option<f64>,
    /// The map behind it: per point of a grid over the table, each part.
    pub uncertainty_map: Option<UncertaintyMap>,
    /// Sides whose side face was in view (measured at the top's own edge).
    pub face_in_view: [bool; 4],
}

/// Each side's edge points as pose observations.
fn side_observations(points: &[Vec<Point2<f64>>; 4]) -> PoseObservations {
    PoseObservations {
        corners: vec![],
        side_points: points
            .iter()
            .enumerate()
            .flat_map(|(k, pts)| pts.iter().map(move |&p| (k, p)))
            .collect(),
    }
}

/// How far each seen corner lies from a rigid camera fitted to `obs` (mm).
fn rigid_offsets(
    camera: &CameraIntrinsics,
    rect: &[Point2<f64>],
    corners: &[Point2<f64>; 4],
    obs: &PoseObservations,
) -> Option<Vec<f64>> {
    let start =
        RigidPose::from_homography(camera, &Homography::from_correspondences(corners, rect)?)?;
    let fit = fit_rigid_pose(camera, rect, obs, start)?;
    corner_offsets_mm(camera, &fit.pose, rect, corners)
}

/// How far inside the top's edge its reading inside a side face may fall (mm): a
/// rounded or bevelled edge, or a rim worn darker, shades the top toward its edge,
/// and where the face is lit like that shade no step marks the edge; the reading
/// then lands on the shading's ramp. Our renderer's rim is 6 mm wide; the readings
/// fell up to 3.4 mm inside on the random looks (docs/calibration.md).
const RIM_ALLOWANCE_MM: f64 = 6.0;

/// How far inside the top's edge a reading inside a side face is taken to lie at
/// most when the claim counts a rim's pull (mm): half the rim's width. The reading
/// is the midpoint of the colour's step away from the top's; where the face is lit
/// like the rim's darkest shade the whole step is the rim's ramp and its midpoint
/// half the rim's width in, and a face darker than that draws it out toward the
/// edge. The face sides' readings lay 0.1–2.4 mm inside the truth on the random
/// looks (docs/calibration.md). The judgement allows the whole width
/// ([`RIM_ALLOWANCE_MM`]) so as not to refuse a good table; counted in the claim,
/// the whole width put it at 8.4–8.6 mm on our two-face looks, 0.6–1.9 mm off.
const RIM_PULL_AT_MOST_MM: f64 = RIM_ALLOWANCE_MM / 2.0;

/// The pose's observations where one side's face is in view: the edge points of
/// the three sides clear of a face, alone. With the intrinsics, two of them give the
/// camera's turn, the third its distance, and the table's size places the fourth
/// side to a tenth of a pixel on our renders. That side's own readings are left out:
/// the top's edge read inside the face is pulled in by a darker rim or bevel (1.5–3.4
/// px on the random looks, where the face is lit like the rim's shade and no step
/// marks the top's end), and the outer boundary is the face's lower edge, a shadow
/// line or the legs (taken as a line parallel to the side at a depth fitted, it made
/// thick faces worse: 1.8 px on look 19 for 0.1). `None` without a face in view, or
/// with faces on two sides (two clear sides cannot place the camera): the readings
/// are then chosen as before ([`TableDetection::variants`]).
fn faced_observations(found: &TableDetection) -> Option<PoseObservations> {
    let faces = found.showing.iter().filter(|&&s| s).count();
    if faces != 1 {
        return None;
    }
    let clear: [Vec<Point2<f64>>; 4] = std::array::from_fn(|k| {
        if found.showing[k] {
            vec![]
        } else {
            found.side_points_undistorted[k].clone()
        }
    });
    Some(side_observations(&clear))
}

/// The seen corners with side `k`'s, read inside a side face, moved out toward the
/// rigid camera's side by the pull a rim or bevel may have on the reading, judged as
/// agreement; what is left is the fourth side's disagreement with the three clear
/// sides that placed the camera (the fit itself has nothing to spare), judged like any
/// corner's. The pull is one for the whole side, the mean of how far inside the rigid
/// side the reading lies at its two corners, at most [`RIM_ALLOWANCE_MM`]: a rim or
/// bevel runs the side's length, so a reading turned against the rigid side is no
/// rim's doing but a clear side misread (a short side's error turns the camera).
/// Each corner allowed its own pull, as before, let a turn of twice the allowance
/// pass. Not asked: the face's lower edge (the outer boundary) as a bound outward;
/// on thick faces that boundary is read at the top's own edge or on its rim, and it
/// refused looks 17, 19, 21 and 22 (docs/calibration.md). `None` when the pose maps
/// no pixels.
fn within_rim(
    camera: &CameraIntrinsics,
    pose: &RigidPose,
    rect: &[Point2<f64>],
    seen: &[Point2<f64>; 4],
    k: usize,
) -> Option<[Point2<f64>; 4]> {
    let to_table = pose.table_from_undistorted(camera)?;
    let to_pixel = to_table.inverse();
    let (a, b) = (rect[k], rect[(k + 1) % 4]);
    let along = (b - a).normalize();
    // Counter-clockwise seen from above: the outside is to the right of a -> b.
    let outward = Vector2::new(along.y, -along.x);
    let ends = [k, (k + 1) % 4];
    let on_table = ends.map(|c| to_table.apply(seen[c]));
    let inside = on_table.map(|p| -(p - a).dot(&outward));
    let pull = ((inside[0] + inside[1]) / 2.0).clamp(0.0, RIM_ALLOWANCE_MM);
    let mut out = *seen;
    for (p, &c) in on_table.iter().zip(&ends) {
        out[c] = to_pixel.apply(p + outward * pull);
    }
    Some(out)
}

/// Edge samples are a pixel apart, but smoothing and the lens's blur make
/// neighbours share their errors over about this many samples: the fit's
/// covariance is widened by it.
const EDGE_SAMPLE_CORRELATION: f64 = 3.0;

/// Solves the table plane of a `width_mm x height_mm` rectangle from a frame: corners
/// from `corners_px` (distorted pixels in table corner order 0..3) or found
/// automatically, then the pose of a rigid camera with these intrinsics fitted to
/// them (to every edge point when found automatically). Found automatically, the
/// written homography and corners are that camera's; given, they are kept exactly. `reprojection_error_mm` in the result is the RMS of how
/// far the seen corners lie from the rigid camera's; [`TableSolution::doubt`] says
/// when that, or the seen aspect, is too far off to trust.
pub fn solve_table(
    frame: &Mat,
    camera: &CameraIntrinsics,
    width_mm: f64,
    height_mm: f64,
    corners_px: Option<[Point2<f64>; 4]>,
) -> Result<TableSolution, CalibrateError> {
    solve_table_with_doubts(frame, camera, &[], width_mm, height_mm, corners_px)
}

/// [`solve_table`], with how far the camera's intrinsics may be off (`doubts`, from
/// camera.json's uncertainty keys): carried into the position uncertainty.
pub fn solve_table_with_doubts(
    frame: &Mat,
    camera: &CameraIntrinsics,
    doubts: &[IntrinsicDoubt],
    width_mm: f64,
    height_mm: f64,
    corners_px: Option<[Point2<f64>; 4]>,
) -> Result<TableSolution, CalibrateError> {
    check_frame_size(frame, camera)?;
    if !(width_mm > 0.0 && height_mm > 0.0 && width_mm.is_finite() && height_mm.is_finite()) {
        return Err(CalibrateError::BadCorners(format!(
            "the table size must be positive, got {width_mm}x{height_mm}"
        )));
    }
    let rect = rectangle_corners_mm(width_mm, height_mm);
    let mut observations = PoseObservations::default();
    let mut rim_sides = [false; 4];
    let (mut ordered, face_in_view, automatic) = match corners_px {
        Some(given) => {
            let (w, h) = (camera.image_size[0] as f64, camera.image_size[1] as f64);
            if let Some((i, p)) = given
                .iter()
                .enumerate()
                .find(|(_, p)| !(p.x >= 0.0 && p.y >= 0.0 && p.x <= w && p.y <= h))
            {
                return Err(CalibrateError::BadCorners(format!(
                    "corner {i} ({}, {}) is outside the {w}x{h} image",
                    p.x, p.y
                )));
            }
            let ordered = given.map(|p| camera.undistort_pixel(p));
            observations.corners = ordered.iter().copied().enumerate().collect();
            (ordered, [false; 4], false)
        }
        None => {
            let found = detect_table(frame, camera, width_mm, height_mm)?;
            if let Some(faced) = faced_observations(&found) {
                // A side face in view, three sides clear of one: their edges and
                // the table's size pin the camera; the top's edge read inside the
                // face only judges it (a rim or bevel darker toward the edge, or a
                // face lit like it, leaves no step where the top ends).
                observations = faced;
                rim_sides = found.showing;
                (found.corners_undistorted, found.face_in_view, true)
            } else if found.showing.iter().filter(|&&s| s).count() == 2 {
                // Faces on two sides: each read inside its face, where a rim pulls
                // the reading in (0.4–0.8 px on our two-face looks); the outer
                // boundary is the face's lower edge, further off (1.3–3.1 px), and
                // choosing between them by how well a rigid camera fits put
                // corners up to 3.8 px off (docs/calibration.md).
                observations = side_observations(&found.side_points_undistorted);
                rim_sides = found.face_in_view;
                (found.corners_undistorted, found.face_in_view, true)
            } else {
                // Where a face may be in view, its side was read both at the top's edge
                // and at the outer boundary; a darker rim along the top looks like a face.
                // The reading a rigid camera fits best is the top's: the other puts one
                // side a face's (or a rim's) width off, millimetres at the corners.
                let mut best: Option<(f64, SideVariant)> = None;
                for variant in found.variants() {
                    let obs = side_observations(&variant.1);
                    let worst = rigid_offsets(camera, &rect, &variant.0, &obs)
                        .map(|o| o.iter().copied().fold(0.0, f64::max))
                        .unwrap_or(f64::INFINITY);
                    if best.as_ref().is_none_or(|b| worst < b.0) {
                        best = Some((worst, variant));
                    }
                }
                let (_, (corners, points, face)) = best.ok_or_else(|| {
                    CalibrateError::TableNotFound("two adjacent sides are parallel".into())
                })?;
                observations = side_observations(&points);
                (corners, face, true)
            }
        }
    };
    let seen_from_table = Homography::from_correspondences(&rect, &ordered)
        .ok_or_else(|| CalibrateError::BadCorners("three of the corners are on one line".into()))?;
    // The corners must go round the table, not cross it: each maps in order, so check
    // that the image quadrilateral is convex and counter-clockwise as seen from above.
    let mut signs = vec![];
    for k in 0..4 {
        let (a, b, c) = (ordered[k], ordered[(k + 1) % 4], ordered[(k + 2) % 4]);
        let cross = (b - a).x * (c - b).y - (b - a).y * (c - b).x;
        signs.push(cross);
    }
    if !(signs.iter().all(|&s| s < 0.0) || signs.iter().all(|&s| s > 0.0)) {
        return Err(CalibrateError::BadCorners(
            "they do not go round the table in order (0 → (0,0), 1 → (W,0), 2 → (W,H), 3 → (0,H))"
                .into(),
        ));
    }
    let no_rigid_fit = || {
        CalibrateError::BadCorners(
            "no camera with these intrinsics sees a table of this size there".into(),
        )
    };
    let start =
        RigidPose::from_homography(camera, &seen_from_table.inverse()).ok_or_else(no_rigid_fit)?;
    let fit = fit_rigid_pose(camera, &rect, &observations, start).ok_or_else(no_rigid_fit)?;
    for k in (0..4).filter(|&k| rim_sides[k]) {
        ordered = within_rim(camera, &fit.pose, &rect, &ordered, k).ok_or_else(no_rigid_fit)?;
    }
    let measured_aspect = Homography::from_correspondences(&rect, &ordered)
        .and_then(|m| camera.matrix().try_inverse().map(|k| k * m.matrix()))
        .map(|m| width_mm / height_mm * m.column(0).norm() / m.column(1).norm())
        .unwrap_or(f64::NAN);
    // Corners found automatically are replaced by the rigid camera's, fitted to
    // every edge point; corners given by hand are kept as given (the user vouches for
    // them), and the rigid fit only judges them.
    let table_from_undistorted = if automatic {
        fit.pose
            .table_from_undistorted(camera)
            .ok_or_else(no_rigid_fit)?
    } else {
        seen_from_table.inverse()
    };
    let corner_offsets_mm =
        corner_offsets_mm(camera, &fit.pose, &rect, &ordered).ok_or_else(no_rigid_fit)?;
    let residual = (corner_offsets_mm.iter().map(|d| d * d).sum::<f64>()
        / corner_offsets_mm.len() as f64)
        .sqrt();
    let edge_rms_mm = (!observations.side_points.is_empty()).then(|| {
        let sum: f64 = observations
            .side_points
            .iter()
            .map(|&(k, p)| {
                let q = table_from_undistorted.apply(p);
                segment_distance(q, rect[k], rect[(k + 1) % 4]).powi(2)
            })
            .sum();
        (sum / observations.side_points.len() as f64).sqrt()
    });
    let uncertainty_map = automatic
        .then(|| {
            position_uncertainty_map(
                camera,
                &fit,
                &rect,
                &observations,
                EDGE_SAMPLE_CORRELATION,
                doubts,
                &RimPull {
                    sides: face_in_view,
                    at_most_mm: RIM_PULL_AT_MOST_MM,
                },
            )
        })
        .flatten();
    let uncertainty_mm = uncertainty_map.as_ref().map(UncertaintyMap::worst_mm);
    let doubt = judge_table_fit(&corner_offsets_mm, measured_aspect, width_mm / height_mm)
        .err()
        .map(|d| TableDoubt {
            corners_given: !automatic,
            ..d
        });
    let file = TableFile::seen_through(&rect, &table_from_undistorted, camera, residual);
    Ok(TableSolution {
        file,
        edge_rms_mm,
        measured_aspect,
        automatic,
        corner_offsets_mm,
        doubt,
        uncertainty_mm,
        uncertainty_map,
        face_in_view,
    })
}

/// The focal length the lens search starts from before the table is found: a
/// horizontal field of view of about 63°, the middle of webcams' and phones' range.
/// Only which side is `W` and where a side face may show depend on it; the corners'
/// closed form replaces it before the fit.
const FOCAL_GUESS_PER_WIDTH: f64 = 0.82;

/// The most rounds of finding the table with the lens so far and fitting the lens
/// again: the edges are measured along straight lines in the undistorted frame, so a
/// better `k1` finds them better.
const LENS_ROUNDS: usize = 4;

/// The `k1` the first round starts from, each in turn; the start whose fit leaves
/// the least RMS wins. The edges are measured along straight lines in the frame
/// undistorted with the lens so far, and kept where they are straight: with a lens
/// far from the truth only the straightest part of each side is kept, and the fit
/// sees too little bending to find `k1` (a lens of `k1` −0.18 seen with 0 stayed
/// near 0 and left 1.8 px RMS; started from −0.2 it left 0.13 px).
const K1_STARTS: [f64; 4] = [0.0, -0.1, -0.2, 0.1];

/// How far the true principal point may lie from the image centre, as a fraction
/// of the image's width (12.8 px at 1280): the lens found from the table assumes the
/// centre, and its focal length's uncertainty includes how far `f` moves with the
/// principal point moved this far (`calibration::table_lens::fit_focal_and_k1`).
/// Factory cameras are usually within about half of this.
const PRINCIPAL_POINT_DOUBT_PER_WIDTH: f64 = 0.01;

/// A round whose `f` moved under this fraction, and `k1` under
/// [`LENS_K1_SETTLED`], ends the search.
const LENS_F_SETTLED: f64 = 2e-4;
const LENS_K1_SETTLED: f64 = 2e-4;

/// The lens found from the table, and how the search went.
#[derive(Debug, Clone)]
pub struct LensSolution {
    pub fit: LensFit,
    /// The closed form's focal length from the corners of the first round (px),
    /// `None` when it gave none.
    pub focal_closed_form_px: Option<f64>,
    /// Rounds of finding the table and fitting the lens, after the first.
    pub rounds: usize,
    /// How far off the centre the principal point was taken to measure how much the
    /// focal length depends on it (px).
    pub principal_doubt_px: f64,
}

/// A frame's table as a view for the lens fit, and its corners (undistorted px).
type FoundView = (TableView, [Point2<f64>; 4]);

/// The table's edge points in one frame, as found with `camera`: the reading of
/// the sides a rigid camera with `camera` fits best, as a view for the lens fit
/// (distorted pixels), and its corners (undistorted px of `camera`).
fn table_view(
    frame: &Mat,
    camera: &CameraIntrinsics,
    rect: &[Point2<f64>],
) -> Result<FoundView, CalibrateError> {
    let found = detect_table(frame, camera, rect[2].x, rect[2].y)?;
    let mut best: Option<(f64, SideVariant)> = None;
    for variant in found.variants() {
        let obs = side_observations(&variant.1);
        let worst = rigid_offsets(camera, rect, &variant.0, &obs)
            .map(|o| o.iter().copied().fold(0.0, f64::max))
            .unwrap_or(f64::INFINITY);
        if best.as_ref().is_none_or(|b| worst < b.0) {
            best = Some((worst, variant));
        }
    }
    let (_, (corners, points, _)) = best
        .ok_or_else(|| CalibrateError::TableNotFound("two adjacent sides are parallel".into()))?;
    let degenerate = || CalibrateError::TableNotFound("its corners are degenerate".into());
    let start = Homography::from_correspondences(&corners, rect)
        .and_then(|h| RigidPose::from_homography(camera, &h))
        .ok_or_else(degenerate)?;
    let side_points_px = points
        .iter()
        .enumerate()
        .flat_map(|(k, pts)| pts.iter().map(move |&p| (k, camera.distort_pixel(p))))
        .collect();
    Ok((
        TableView {
            side_points_px,
            start,
        },
        corners,
    ))
}

/// Every frame's table found with `camera`.
fn table_views(
    frames: &[Mat],
    camera: &CameraIntrinsics,
    rect: &[Point2<f64>],
) -> Result<Vec<FoundView>, CalibrateError> {
    frames.iter().map(|f| table_view(f, camera, rect)).collect()
}

/// The first round from a start `k1`: the table found with a guessed focal length,
/// the focal length from its corners' closed form, the table found again with that,
/// and the lens fitted. The closed form's focal length too.
fn first_lens_round(
    frames: &[Mat],
    size: [u32; 2],
    rect: &[Point2<f64>],
    k1: f64,
) -> Result<(LensFit, Option<f64>), CalibrateError> {
    let mut camera = camera_with(size, FOCAL_GUESS_PER_WIDTH * f64::from(size[0]), k1);
    let found = table_views(frames, &camera, rect)?;
    let homographies: Vec<_> = found
        .iter()
        .filter_map(|(_, corners)| Homography::from_correspondences(rect, corners))
        .map(|h| *h.matrix())
        .collect();
    let centre = Point2::new(camera.cx(), camera.cy());
    // Which side is `W` and where a face shows depend on the focal length: the
    // table is found again with the closed form's.
    let width = f64::from(size[0]);
    let closed_form = focal_from_homographies(&homographies, centre, size)
        .filter(|f| (MIN_FOCAL_PER_WIDTH * width..=MAX_FOCAL_PER_WIDTH * width).contains(f));
    let views: Vec<TableView> = match closed_form {
        Some(f) => {
            camera = camera_with(size, f, k1);
            table_views(frames, &camera, rect)?
                .into_iter()
                .map(|v| v.0)
                .collect()
        }
        None => found.into_iter().map(|v| v.0).collect(),
    };
    let fit = fit_focal_and_k1(
        size,
        rect,
        &views,
        camera.fx(),
        k1,
        EDGE_SAMPLE_CORRELATION,
        0.0,
    )?;
    Ok((fit, closed_form))
}

/// The camera's focal length and first radial distortion term from one or more
/// frames of the empty `width_mm x height_mm` table, with no chessboard: square
/// pixels, the principal point at the image centre, the other distortion terms zero.
/// The table is found with a guessed lens, the focal length started from its corners
/// ([`focal_from_homographies`]), then `f`, `k1` and each frame's pose are fitted
/// to every edge point ([`fit_focal_and_k1`]), from each of [`K1_STARTS`] (the best
/// fit kept), and the table found again with the lens fitted, until the lens
/// settles. Refused ([`LensError`]) when the frames do not pin the focal length down
/// (the table seen square-on).
pub fn solve_lens_from_table(
    frames: &[Mat],
    width_mm: f64,
    height_mm: f64,
) -> Result<LensSolution, CalibrateError> {
    let first = frames
        .first()
        .ok_or_else(|| CalibrateError::TableNotFound("no frame to look at".into()))?;
    let size = image_size_of(first);
    for (i, f) in frames.iter().enumerate() {
        if image_size_of(f) != size {
            return Err(CalibrateError::MixedSizes {
                name: format!("frame {i}"),
                got_w: f.cols(),
                got_h: f.rows(),
                want_w: first.cols(),
                want_h: first.rows(),
            });
        }
    }
    if !(width_mm > 0.0 && height_mm > 0.0 && width_mm.is_finite() && height_mm.is_finite()) {
        return Err(CalibrateError::BadCorners(format!(
            "the table size must be positive, got {width_mm}x{height_mm}"
        )));
    }
    solve_lens(frames, size, width_mm, height_mm).map_err(|e| match e {
        CalibrateError::TableNotFound(why) => CalibrateError::LensTableNotFound(why),
        e => e,
    })
}

/// [`solve_lens_from_table`] once its input is checked.
fn solve_lens(
    frames: &[Mat],
    size: [u32; 2],
    width_mm: f64,
    height_mm: f64,
) -> Result<LensSolution, CalibrateError> {
    let rect = rectangle_corners_mm(width_mm, height_mm);
    let mut best: Option<(LensFit, Option<f64>)> = None;
    let mut first_error = None;
    for k1 in K1_STARTS {
        match first_lens_round(frames, size, &rect, k1) {
            Ok((fit, closed)) => {
                if best.as_ref().is_none_or(|b| fit.rms_px < b.0.rms_px) {
                    best = Some((fit, closed));
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let (mut fit, focal_closed_form_px) = match (best, first_error) {
        (Some(b), _) => b,
        (None, Some(e)) => return Err(e),
        (None, None) => return Err(CalibrateError::Diverged),
    };
    let mut rounds = 0;
    while rounds < LENS_ROUNDS {
        rounds += 1;
        let camera = fit.camera.clone();
        let views: Vec<TableView> = table_views(frames, &camera, &rect)?
            .into_iter()
            .map(|v| v.0)
            .collect();
        let next = fit_focal_and_k1(
            size,
            &rect,
            &views,
            camera.fx(),
            camera.dist_coeffs[0],
            EDGE_SAMPLE_CORRELATION,
            PRINCIPAL_POINT_DOUBT_PER_WIDTH * f64::from(size[0]),
        )?;
        let settled = (next.camera.fx() / camera.fx() - 1.0).abs() < LENS_F_SETTLED
            && (next.camera.dist_coeffs[0] - camera.dist_coeffs[0]).abs() < LENS_K1_SETTLED;
        fit = next;
        if settled {
            break;
        }
    }
    Ok(LensSolution {
        fit,
        focal_closed_form_px,
        rounds,
        principal_doubt_px: PRINCIPAL_POINT_DOUBT_PER_WIDTH * f64::from(size[0]),
    })
}

fn segment_distance(p: Point2<f64>, a: Point2<f64>, b: Point2<f64>) -> f64 {
    (p - crate::geometry::table::closest_on_segment(p, a, b)).norm()
}

/// Above this (mm) a point of the uncertainty map is drawn red; green at 0, yellow
/// at half of it: the limit a seen corner may be off before a calibration is refused.
const MAP_RED_MM: f64 = crate::calibration::MAX_CORNER_OFFSET_MM;

/// The check picture: the undistorted frame with the table outline (and corner
/// numbers) and a `grid_mm` grid drawn over it; with `map`, the position uncertainty
/// over the table: a disc at each of its points coloured green (0) through yellow to
/// red ([`MAP_RED_MM`] and over), every other one labelled in mm, and a line on top
/// saying the worst of each part.
pub fn draw_table_check(
    frame: &Mat,
    calibration: &TableCalibration,
    grid_mm: f64,
    map: Option<&UncertaintyMap>,
) -> Result<Mat, CalibrateError> {
    let bgr = to_bgr(frame)?;
    let mut out = Undistorter::new(&calibration.camera)?.undistort(&bgr)?;
    if let Some(map) = map {
        draw_uncertainty_map(&mut out, calibration, map)?;
    }
    let to_px = |x: f64, y: f64| {
        let p = calibration.undistorted_pixel_from_table(Point2::new(x, y));
        // Fixed point (4 fractional bits) keeps the drawing sub-pixel accurate.
        core::Point::new((p.x * 16.0).round() as i32, (p.y * 16.0).round() as i32)
    };
    let (lo, hi) = calibration.bounds_mm();
    let grid = if grid_mm > 0.0 { grid_mm } else { 100.0 };
    let grid_colour = Scalar::new(0.0, 200.0, 255.0, 0.0);
    let mut x = (lo.x / grid).ceil() * grid;
    while x <= hi.x + 1e-9 {
        imgproc::line(
            &mut out,
            to_px(x, lo.y),
            to_px(x, hi.y),
            grid_colour,
            1,
            imgproc::LINE_AA,
            4,
        )?;
        x += grid;
    }
    let mut y = (lo.y / grid).ceil() * grid;
    while y <= hi.y + 1e-9 {
        imgproc::line(
            &mut out,
            to_px(lo.x, y),
            to_px(hi.x, y),
            grid_colour,
            1,
            imgproc::LINE_AA,
            4,
        )?;
        y += grid;
    }
    let corners = &calibration.file.corners_mm;
    for k in 0..corners.len() {
        let (a, b) = (corners[k], corners[(k + 1) % corners.len()]);
        imgproc::line(
            &mut out,
            to_px(a[0], a[1]),
            to_px(b[0], b[1]),
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            2,
            imgproc::LINE_AA,
            4,
        )?;
        let p = calibration.undistorted_pixel_from_table(Point2::new(a[0], a[1]));
        imgproc::put_text(
            &mut out,
            &k.to_string(),
            core::Point::new(p.x as i32 + 6, p.y as i32 - 6),
            imgproc::FONT_HERSHEY_SIMPLEX,
            0.8,
            Scalar::new(0.0, 0.0, 255.0, 0.0),
            2,
            imgproc::LINE_AA,
            false,
        )?;
    }
    Ok(out)
}

/// The uncertainty map over the undistorted picture (see [`draw_table_check`]).
fn draw_uncertainty_map(
    out: &mut Mat,
    calibration: &TableCalibration,
    map: &UncertaintyMap,
) -> Result<(), CalibrateError> {
    let mut discs = out.try_clone()?;
    let total = map.total_mm();
    let n = crate::calibration::UNCERTAINTY_GRID;
    let colour = |mm: f64| {
        // BGR: green -> yellow -> red.
        let t = (mm / MAP_RED_MM).clamp(0.0, 1.0);
        let (r, g) = if t < 0.5 {
            (510.0 * t, 255.0)
        } else {
            (255.0, 510.0 * (1.0 - t))
        };
        Scalar::new(0.0, g, r, 0.0)
    };
    let mut labels = vec![];
    for (k, (p, mm)) in map.points_mm.iter().zip(&total).enumerate() {
        let px = calibration.undistorted_pixel_from_table(*p);
        if !(px.x.is_finite() && px.y.is_finite()) {
            continue;
        }
        let at = core::Point::new(px.x.round() as i32, px.y.round() as i32);
        imgproc::circle(&mut discs, at, 9, colour(*mm), -1, imgproc::LINE_AA, 0)?;
        let (i, j) = (k / n, k % n);
        if i % 2 == 0 && j % 2 == 0 {
            labels.push((at, format!("{mm:.2}")));
        }
    }
    let mut blended = Mat::default();
    core::add_weighted(&*out, 0.4, &discs, 0.6, 0.0, &mut blended, -1)?;
    *out = blended;
    for (at, text) in labels {
        for (colour, thickness) in [
            (Scalar::new(0.0, 0.0, 0.0, 0.0), 3),
            (Scalar::new(255.0, 255.0, 255.0, 0.0), 1),
        ] {
            imgproc::put_text(
                out,
                &text,
                core::Point::new(at.x + 11, at.y + 4),
                imgproc::FONT_HERSHEY_SIMPLEX,
                0.45,
                colour,
                thickness,
                imgproc::LINE_AA,
                false,
            )?;
        }
    }
    let legend = format!(
        "position uncertainty (3 sigma, mm): worst {:.2}; edges {:.2}, intrinsics {:.2}; red >= {:.0}",
        map.worst_mm(),
        map.worst_edges_mm(),
        map.worst_intrinsics_mm(),
        MAP_RED_MM
    );
    for (colour, thickness) in [
        (Scalar::new(0.0, 0.0, 0.0, 0.0), 4),
        (Scalar::new(255.0, 255.0, 255.0, 0.0), 1),
    ] {
        imgproc::put_text(
            out,
            &legend,
            core::Point::new(10, 24),
            imgproc::FONT_HERSHEY_SIMPLEX,
            0.6,
            colour,
            thickness,
            imgproc::LINE_AA,
            false,
        )?;
    }
    Ok(())
}

/// Parses `--corners "u,v;u,v;u,v;u,v"` (pixels of the original frame).
pub fn parse_corners(text: &str) -> Result<[Point2<f64>; 4], CalibrateError> {
    let bad = |why: String| CalibrateError::BadCorners(why);
    let parts: Vec<&str> = text
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if parts.len() != 4 {
        return Err(bad(format!(
            "expected 4 corners \"u,v;u,v;u,v;u,v\", got {} in {text:?}",
            parts.len()
        )));
    }
    let mut out = [Point2::origin(); 4];
    for (i, part) in parts.iter().enumerate() {
        let (u, v) = part
            .split_once(',')
            .ok_or_else(|| bad(format!("corner {i} {part:?} is not \"u,v\"")))?;
        let u: f64 = u
            .trim()
            .parse()
            .map_err(|_| bad(format!("corner {i}: {u:?} is not a number")))?;
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| bad(format!("corner {i}: {v:?} is not a number")))?;
        out[i] = Point2::new(u, v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check picture with an uncertainty map differs from the one without, and
    /// colours a point past the red limit red, one near nothing green.
    #[test]
    fn the_uncertainty_map_is_drawn_on_the_check_picture() {
        let file = TableFile {
            corners_mm: vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 700.0], [0.0, 700.0]],
            image_corners_px: vec![],
            // 2.5 mm a pixel, the table from (70, 30) to (470, 310).
            homography: [[2.5, 0.0, -175.0], [0.0, 2.5, -75.0], [0.0, 0.0, 1.0]],
            camera: CameraIntrinsics::pinhole([640, 360], 500.0),
            reprojection_error_mm: 0.0,
        };
        let calibration = TableCalibration::from_file(file, "test").unwrap();
        let frame =
            Mat::new_rows_cols_with_default(360, 640, opencv::core::CV_8UC3, Scalar::all(128.0))
                .unwrap();
        let plain = draw_table_check(&frame, &calibration, 100.0, None).unwrap();
        let n = crate::calibration::UNCERTAINTY_GRID;
        let points_mm: Vec<Point2<f64>> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                Point2::new(1000.0 * i as f64 / 8.0, 700.0 * j as f64 / 8.0)
            })
            .collect();
        // Nothing at the first point (corner 0), past the red limit at the last (corner 2).
        let intrinsics_mm: Vec<f64> = (0..n * n).map(|k| 3.0 * k as f64 / 80.0).collect();
        let map = UncertaintyMap {
            points_mm,
            edges_mm: vec![0.0; n * n],
            intrinsics_mm,
        };
        let drawn = draw_table_check(&frame, &calibration, 100.0, Some(&map)).unwrap();
        let (a, b) = (plain.data_bytes().unwrap(), drawn.data_bytes().unwrap());
        assert_eq!(a.len(), b.len());
        let differing = a.iter().zip(b).filter(|(x, y)| x != y).count();
        assert!(differing > 5000, "{differing} bytes differ");
        let bgr = |x: i32, y: i32| *drawn.at_2d::<opencv::core::Vec3b>(y, x).unwrap();
        // Just inside each corner's disc (away from the outline and the label).
        let green = bgr(70 + 3, 30 + 5);
        let red = bgr(470 - 3, 310 - 5);
        assert!(green[1] > green[2] + 40, "{green:?}");
        assert!(red[2] > red[1] + 40, "{red:?}");
    }

    #[test]
    fn board_and_corner_specs_parse() {
        let b = Chessboard::parse("9x6", 25.0).unwrap();
        assert_eq!((b.cols, b.rows, b.corner_count()), (9, 6, 54));
        let obj = b.object_points();
        assert_eq!(obj.get(10).unwrap(), Point3f::new(25.0, 25.0, 0.0));
        assert!(Chessboard::parse("9by6", 25.0).is_err());
        assert!(Chessboard::parse("1x6", 25.0).is_err());
        assert!(Chessboard::parse("9x6", 0.0).is_err());
        let c = parse_corners("1,2; 3.5,4;5,6;7,8").unwrap();
        assert_eq!(c[1], Point2::new(3.5, 4.0));
        assert!(parse_corners("1,2;3,4;5,6").is_err());
        assert!(parse_corners("1,2;3,4;5,6;7,x").is_err());
    }

    /// Renders a frame of `camera`'s size by supersampling each pixel 4x4 (distorted
    /// pixel -> undistorted -> `colour_at`), with sensor noise.
    fn draw(camera: &CameraIntrinsics, colour_at: impl Fn(Point2<f64>) -> [f64; 3]) -> Mat {
        let [w, h] = camera.image_size;
        let mut noise_state: u64 = 12345;
        let mut noise = move || {
            noise_state = noise_state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((noise_state >> 33) % 9) as f64 - 4.0
        };
        let mut frame =
            Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC3, Scalar::all(0.0))
                .unwrap();
        for y in 0..h as i32 {
            for x in 0..w as i32 {
                let mut sum = [0.0; 3];
                for sy in 0..4 {
                    for sx in 0..4 {
                        let p = Point2::new(
                            x as f64 + (sx as f64 - 1.5) / 4.0,
                            y as f64 + (sy as f64 - 1.5) / 4.0,
                        );
                        let colour = colour_at(camera.undistort_pixel(p));
                        for c in 0..3 {
                            sum[c] += colour[c] / 16.0;
                        }
                    }
                }
                let px = frame.at_2d_mut::<core::Vec3b>(y, x).unwrap();
                for c in 0..3 {
                    px[c] = (sum[c] + noise()).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
        frame
    }

    /// Where the ray through an undistorted pixel meets the horizontal plane at
    /// height `z` (table mm).
    fn ray_at_height(
        camera: &CameraIntrinsics,
        pose: &RigidPose,
        px: Point2<f64>,
        z: f64,
    ) -> Point2<f64> {
        let k_inv = camera.matrix().try_inverse().unwrap();
        let d =
            pose.camera_from_table.transpose() * (k_inv * nalgebra::Vector3::new(px.x, px.y, 1.0));
        let c = pose.camera_centre_mm();
        let l = (z - c.z) / d.z;
        Point2::new(c.x + l * d.x, c.y + l * d.y)
    }

    /// A camera 1.3 m from a 1000x700 table, tilted 10° so that it stands above the
    /// table (no side face in view).
    fn camera_above_table() -> (CameraIntrinsics, RigidPose) {
        let mut camera = CameraIntrinsics::pinhole([960, 540], 800.0);
        camera.dist_coeffs = [-0.12, 0.02, 0.0, 0.0, 0.0];
        let tilt = 10f64.to_radians();
        let centre =
            nalgebra::Vector3::new(500.0, 350.0 - 1300.0 * tilt.sin(), 1300.0 * tilt.cos());
        let z = nalgebra::Vector3::new(0.0, tilt.sin(), -tilt.cos());
        let x = nalgebra::Vector3::new(1.0, 0.0, 0.0);
        (camera, RigidPose::looking_along(centre, z, x))
    }

    /// The near side's reading inside its face judged against the rigid camera the
    /// three clear sides placed: a rim's pull along the whole side is agreement; a
    /// reading turned against the rigid side, or further in than a rim pulls, is not,
    /// and a corner of that side is named (the turn passed before, each corner
    /// allowed its own pull).
    #[test]
    fn the_face_sides_reading_judges_the_three_clear_sides() {
        let camera = CameraIntrinsics::pinhole([1280, 720], 900.0);
        let tilt = 35f64.to_radians();
        let centre =
            nalgebra::Vector3::new(500.0, 350.0 - 1500.0 * tilt.sin(), 1500.0 * tilt.cos());
        let z = nalgebra::Vector3::new(0.0, tilt.sin(), -tilt.cos());
        let pose = RigidPose::looking_along(centre, z, nalgebra::Vector3::new(1.0, 0.0, 0.0));
        let rect = rectangle_corners_mm(1000.0, 700.0);
        assert_eq!(
            sides_showing_face(&pose, &rect),
            [true, false, false, false]
        );
        let px = |x: f64, y: f64| pose.undistorted_pixel(&camera, x, y, 0.0).unwrap();
        // Side 0 runs along y = 0, its outside y < 0; the reading inside the face
        // `in0` and `in1` mm inside the rigid side at corners 0 and 1.
        let judged = |in0: f64, in1: f64| {
            let mut seen = [
                px(0.0, 0.0),
                px(1000.0, 0.0),
                px(1000.0, 700.0),
                px(0.0, 700.0),
            ];
            (seen[0], seen[1]) = (px(0.0, in0), px(1000.0, in1));
            let moved = within_rim(&camera, &pose, &rect, &seen, 0).unwrap();
            let offsets = corner_offsets_mm(&camera, &pose, &rect, &moved).unwrap();
            let verdict = judge_table_fit(&offsets, 1000.0 / 700.0, 1000.0 / 700.0);
            (offsets, verdict)
        };
        // A rim pulls the reading 3 mm in along the whole side: agreement.
        let (offsets, verdict) = judged(3.0, 3.0);
        assert!(offsets.iter().all(|&d| d < 1e-6), "{offsets:?}");
        assert!(verdict.is_ok());
        // Within the rim's allowance at each end, but 5 mm apart: the side turned.
        let (offsets, verdict) = judged(0.5, 5.5);
        assert!((offsets[0] - 2.5).abs() < 1e-6, "{offsets:?}");
        assert!(matches!(verdict, Err(d) if d.corner <= 1));
        // Further in than a rim pulls, or outside the rigid side.
        let (offsets, verdict) = judged(9.0, 9.0);
        assert!((offsets[0] - 3.0).abs() < 1e-6, "{offsets:?}");
        assert!(matches!(verdict, Err(d) if d.corner <= 1));
        let (offsets, verdict) = judged(-2.5, -2.5);
        assert!((offsets[1] - 2.5).abs() < 1e-6, "{offsets:?}");
        assert!(matches!(verdict, Err(d) if d.corner <= 1));
    }

    /// Draws a table (anti-aliased, with a darker rim along its edge like a seam or
    /// banding, and sensor noise) on a floor through a distorting camera, and checks
    /// that the corners come back within a twentieth of a pixel: the rim must not pull
    /// the edges inward, since it changes brightness, not hue, and from above the
    /// table no side face can be in view.
    #[test]
    fn detects_a_drawn_table_to_a_fraction_of_a_pixel() {
        let (camera, pose) = camera_above_table();
        let rect = rectangle_corners_mm(1000.0, 700.0);
        // Undistorted corners of the table, in table corner order.
        let truth: Vec<Point2<f64>> = rect
            .iter()
            .map(|c| pose.undistorted_pixel(&camera, c.x, c.y, 0.0).unwrap())
            .collect();
        let table_from_px = pose.table_from_undistorted(&camera).unwrap();
        let frame = draw(&camera, |p| {
            let q = table_from_px.apply(p);
            let inside = (0.0..=1000.0).contains(&q.x) && (0.0..=700.0).contains(&q.y);
            let rim = q.x.min(q.y).min(1000.0 - q.x).min(700.0 - q.y) < 3.0;
            match (inside, rim) {
                (true, false) => [60.0, 140.0, 40.0],
                (true, true) => [30.0, 70.0, 20.0],
                _ => [90.0, 90.0, 100.0],
            }
        });
        let found = detect_table(&frame, &camera, 1000.0, 700.0).unwrap();
        assert_eq!(found.face_in_view, [false; 4]);
        for (t, c) in truth.iter().zip(&found.corners_undistorted) {
            assert!(
                (c - t).norm() < 0.05,
                "corner {t:?}: {:?}",
                found.corners_undistorted
            );
        }
        let wrong = CameraIntrinsics::pinhole([640, 480], 800.0);
        assert!(matches!(
            detect_table(&frame, &wrong, 1000.0, 700.0),
            Err(CalibrateError::CameraSize { .. })
        ));
        let blank =
            Mat::new_rows_cols_with_default(540, 960, core::CV_8UC3, Scalar::all(90.0)).unwrap();
        assert!(matches!(
            detect_table(&blank, &camera, 1000.0, 700.0),
            Err(CalibrateError::TableNotFound(_))
        ));
    }

    /// A camera in front of the table's near side (0) and right of its right side
    /// (1) sees both their side faces, 30 mm tall, below the top: darker wood of the
    /// top's own hue. The top's corners come back within a tenth of a pixel, not the
    /// faces' lower edges about 7 px further out.
    #[test]
    fn finds_the_top_not_its_side_face() {
        let mut camera = CameraIntrinsics::pinhole([960, 540], 700.0);
        camera.dist_coeffs = [-0.1, 0.015, 0.0, 0.0, 0.0];
        let tilt = 38f64.to_radians();
        let centre =
            nalgebra::Vector3::new(1150.0, 350.0 - 1700.0 * tilt.sin(), 1700.0 * tilt.cos());
        let look_at = nalgebra::Vector3::new(500.0, 350.0, 0.0);
        let z = (look_at - centre).normalize();
        let x = nalgebra::Vector3::new(z.y, -z.x, 0.0);
        let pose = RigidPose::looking_along(centre, z, x);
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let on_table =
            |q: Point2<f64>| (0.0..=1000.0).contains(&q.x) && (0.0..=700.0).contains(&q.y);
        let frame = draw(&camera, |p| {
            if on_table(ray_at_height(&camera, &pose, p, 0.0)) {
                [70.0, 150.0, 200.0]
            } else if on_table(ray_at_height(&camera, &pose, p, -30.0)) {
                [40.0, 85.0, 115.0]
            } else {
                [95.0, 95.0, 100.0]
            }
        });
        let found = detect_table(&frame, &camera, 1000.0, 700.0).unwrap();
        for (k, c) in rect.iter().enumerate() {
            let truth = pose.undistorted_pixel(&camera, c.x, c.y, 0.0).unwrap();
            let got = found.corners_undistorted[k];
            assert!(
                (got - truth).norm() < 0.1,
                "corner {k}: {got:?}, truth {truth:?}"
            );
        }
        assert_eq!(found.face_in_view, [true, true, false, false]);
    }
}
