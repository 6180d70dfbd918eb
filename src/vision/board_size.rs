//! Whether the chessboard found for `--board` is the whole board: a grid of the given
//! size is also found on a larger board (OpenCV's `findChessboardCorners` takes any
//! part of it), and calibrating with the wrong size gives a good-looking RMS and a
//! wrong focal length. Beyond each side of a found grid the four squares around each
//! point of the next line of corners are read; a line of X-corners that continues
//! the board's colouring grows the grid. Also, when the given size is found in too
//! few views, which neighbouring or common size is.
//! Uses: calibration (homography fits), vision::calibrate (board detection); OpenCV.

use crate::calibration::Homography;
use crate::vision::calibrate::{
    find_flags, median_of, min_corner_spacing, sub_pixel, CalibrateError, Chessboard, ViewSearch,
    MIN_VIEWS, STANDARD_SUBPIX_HALF,
};
use nalgebra::Point2;
use opencv::calib3d;
use opencv::core::{Mat, Point2f, Vector};
use opencv::prelude::*;

/// A corner of a board grid: `(column, row)`, counted in squares.
type GridPoint = (i32, i32);
/// A board's size in inner corners: `(per row, per column)`, as `--board` gives it.
pub type BoardSize = (u32, u32);

/// A further line of corners: its second-weakest and median X-corner strength, as
/// fractions of the found grid's own corners next to it.
const LINE_WEAKEST: f64 = 0.3;
const LINE_MEDIAN: f64 = 0.5;

/// How far a found grid is extended on each side at most when looking for the whole board.
const MAX_EXTRA_LINES: i32 = 20;

/// The found grid, keyed by `(column, row)` in board squares; grows as lines of
/// corners are found beyond it.
struct Grid {
    corners: std::collections::HashMap<GridPoint, Point2<f64>>,
    /// Whether the `(+,+)/(-,-)` squares of corners with `c + r` even are the light
    /// ones: the board's colouring, which a further line of its corners continues.
    ab_light_when_even: bool,
    cols: std::ops::RangeInclusive<i32>,
    rows: std::ops::RangeInclusive<i32>,
}

/// Mean grey level of the `(2h+1)²` box around `p`; `None` when it leaves the image.
fn box_mean(gray: &Mat, p: Point2<f64>, h: i32) -> Result<Option<f64>, CalibrateError> {
    let (x, y) = (p.x.round() as i32, p.y.round() as i32);
    if x - h < 0 || y - h < 0 || x + h >= gray.cols() || y + h >= gray.rows() {
        return Ok(None);
    }
    let mut sum = 0u64;
    for yy in y - h..=y + h {
        let row = gray.at_row::<u8>(yy)?;
        sum += row[(x - h) as usize..=(x + h) as usize]
            .iter()
            .map(|&v| v as u64)
            .sum::<u64>();
    }
    Ok(Some(sum as f64 / ((2 * h + 1) * (2 * h + 1)) as f64))
}

/// Where the four squares around a corner are read, in squares from it: close to the
/// corner, since a board's border squares are often cut narrower than the others.
const QUADRANT_OFFSET: f64 = 0.3;

/// The grey levels of the four squares around grid point `(c, r)`, read through
/// `img_from_grid`: `[(+,+), (-,-), (+,-), (-,+)]` (column, row offsets); `None` when
/// they are not all in the image.
fn quadrants(
    gray: &Mat,
    img_from_grid: &Homography,
    (c, r): GridPoint,
) -> Result<Option<[f64; 4]>, CalibrateError> {
    let at = |dc: f64, dr: f64| img_from_grid.apply(Point2::new(c as f64 + dc, r as f64 + dr));
    let side = (at(0.5, 0.0) - at(-0.5, 0.0))
        .norm()
        .min((at(0.0, 0.5) - at(0.0, -0.5)).norm());
    let h = ((side * 0.1) as i32).max(1);
    let o = QUADRANT_OFFSET;
    let mut q = [0.0; 4];
    for (k, (dc, dr)) in [(o, o), (-o, -o), (o, -o), (-o, o)].into_iter().enumerate() {
        match box_mean(gray, at(dc, dr), h)? {
            Some(v) => q[k] = v,
            None => return Ok(None),
        }
    }
    Ok(Some(q))
}

/// How clearly four squares make an X-corner whose `(+,+)/(-,-)` diagonal is the light
/// one (`ab_light`) or the dark one: the margin between the darker square of the
/// light diagonal and the lighter square of the dark one, in grey levels. Negative
/// when the squares do not make that X-corner.
fn x_corner_strength(q: [f64; 4], ab_light: bool) -> f64 {
    let [a, b, e, f] = q;
    if ab_light {
        a.min(b) - e.max(f)
    } else {
        e.min(f) - a.max(b)
    }
}

impl Grid {
    fn from_found(
        gray: &Mat,
        corners: &[Point2<f64>],
        board: &Chessboard,
    ) -> Result<Option<Grid>, CalibrateError> {
        let cols = board.cols as i32;
        let keyed: Vec<(GridPoint, Point2<f64>)> = corners
            .iter()
            .enumerate()
            .map(|(i, &p)| ((i as i32 % cols, i as i32 / cols), p))
            .collect();
        let (from, to): (Vec<Point2<f64>>, Vec<Point2<f64>>) = keyed
            .iter()
            .map(|&((c, r), p)| (Point2::new(c as f64, r as f64), p))
            .unzip();
        let Some(img_from_grid) = Homography::from_correspondences(&from, &to) else {
            return Ok(None);
        };
        // The colouring by vote over the found corners (a glare spot cannot flip it).
        let mut votes = 0i64;
        for &((c, r), _) in &keyed {
            if let Some(q) = quadrants(gray, &img_from_grid, (c, r))? {
                let ab_lighter = q[0] + q[1] > q[2] + q[3];
                votes += if ab_lighter == ((c + r) % 2 == 0) {
                    1
                } else {
                    -1
                };
            }
        }
        Ok(Some(Grid {
            corners: keyed.into_iter().collect(),
            ab_light_when_even: votes >= 0,
            cols: 0..=cols - 1,
            rows: 0..=board.rows as i32 - 1,
        }))
    }

    /// [`x_corner_strength`] at `(c, r)` for this board's colouring.
    fn strength(
        &self,
        gray: &Mat,
        img_from_grid: &Homography,
        (c, r): GridPoint,
    ) -> Result<Option<f64>, CalibrateError> {
        let ab_light = self.ab_light_when_even == ((c + r).rem_euclid(2) == 0);
        Ok(quadrants(gray, img_from_grid, (c, r))?.map(|q| x_corner_strength(q, ab_light)))
    }

    fn size(&self) -> BoardSize {
        (
            self.cols.clone().count() as u32,
            self.rows.clone().count() as u32,
        )
    }

    /// The grid points of the line one step beyond the side that `(dc, dr)` points to,
    /// and the grid points of the (up to) three known lines next to it.
    fn next_line(&self, (dc, dr): GridPoint) -> (Vec<GridPoint>, Vec<GridPoint>) {
        let (c0, c1, r0, r1) = (
            *self.cols.start(),
            *self.cols.end(),
            *self.rows.start(),
            *self.rows.end(),
        );
        let (line, near): (Vec<GridPoint>, Vec<GridPoint>) = if dc != 0 {
            let c = if dc > 0 { c1 + 1 } else { c0 - 1 };
            let line = (r0..=r1).map(|r| (c, r)).collect();
            let near = (1..=3)
                .map(|k| c - dc * k)
                .filter(|cc| self.cols.contains(cc))
                .flat_map(|cc| (r0..=r1).map(move |r| (cc, r)))
                .collect();
            (line, near)
        } else {
            let r = if dr > 0 { r1 + 1 } else { r0 - 1 };
            let line = (c0..=c1).map(|c| (c, r)).collect();
            let near = (1..=3)
                .map(|k| r - dr * k)
                .filter(|rr| self.rows.contains(rr))
                .flat_map(|rr| (c0..=c1).map(move |c| (c, rr)))
                .collect();
            (line, near)
        };
        (line, near)
    }

    /// Adds the line beyond side `(dc, dr)` when it is a line of X-corners of this
    /// board's colouring: every point on it in the image, all but the weakest at least
    /// [`LINE_WEAKEST`] and the median at least [`LINE_MEDIAN`] as strong as the grid's
    /// own corners next to it (measured on the photos: such lines read 0.65–1, the
    /// paper and background past a board's edge below 0 for most points). Its corners are refined so the next line is predicted
    /// from measured points, not extrapolated ones. `false` when there is no such line
    /// (or the image ends there).
    fn extend(
        &mut self,
        gray: &Mat,
        (dc, dr): GridPoint,
        half_window: i32,
    ) -> Result<bool, CalibrateError> {
        let (line, near) = self.next_line((dc, dr));
        let from: Vec<Point2<f64>> = near
            .iter()
            .map(|&(c, r)| Point2::new(c as f64, r as f64))
            .collect();
        let to: Vec<Point2<f64>> = near.iter().map(|k| self.corners[k]).collect();
        let Some(img_from_grid) = Homography::from_correspondences(&from, &to) else {
            return Ok(false);
        };
        let border = near.iter().filter(|&&(c, r)| {
            (dc != 0 && c == line[0].0 - dc) || (dr != 0 && r == line[0].1 - dr)
        });
        let mut own = vec![];
        for &k in border {
            if let Some(s) = self.strength(gray, &img_from_grid, k)? {
                own.push(s);
            }
        }
        let contrast = median_of(own);
        if contrast <= 0.0 {
            return Ok(false);
        }
        let mut strengths = vec![];
        for &k in &line {
            match self.strength(gray, &img_from_grid, k)? {
                Some(s) => strengths.push(s),
                None => return Ok(false),
            }
        }
        strengths.sort_by(f64::total_cmp);
        // All but the weakest one clearly X-corners of this board's colouring, and
        // most of them nearly as clear as its own: a background rarely continues the
        // colouring all along a line.
        if strengths.len() < 2
            || strengths[1] < LINE_WEAKEST * contrast
            || strengths[strengths.len() / 2] < LINE_MEDIAN * contrast
        {
            return Ok(false);
        }
        let mut guess: Vector<Point2f> = line
            .iter()
            .map(|&(c, r)| {
                let p = img_from_grid.apply(Point2::new(c as f64, r as f64));
                Point2f::new(p.x as f32, p.y as f32)
            })
            .collect();
        sub_pixel(gray, &mut guess, half_window)?;
        for (&k, p) in line.iter().zip(guess.iter()) {
            self.corners.insert(k, Point2::new(p.x as f64, p.y as f64));
        }
        let (c, r) = line[0];
        if dc != 0 {
            self.cols = self.cols.start().min(&c).to_owned()..=self.cols.end().max(&c).to_owned();
        } else {
            self.rows = self.rows.start().min(&r).to_owned()..=self.rows.end().max(&r).to_owned();
        }
        Ok(true)
    }
}

/// The size (inner corners per row x per column) of the whole chessboard of which
/// `corners` (found for `board`, row by row) are a part: one square beyond each side
/// of the grid, the four squares around each point of the next line are read; while
/// they make a line of X-corners the grid grows that way. A correctly given board
/// comes back unchanged: past its last corners are its border squares and the paper.
pub fn whole_board_size(
    gray: &Mat,
    corners: &[Point2<f64>],
    board: &Chessboard,
) -> Result<BoardSize, CalibrateError> {
    if corners.len() != board.corner_count() {
        return Ok((board.cols, board.rows));
    }
    let spacing = min_corner_spacing(corners, board);
    let half_window = ((spacing / 4.0) as i32).clamp(2, STANDARD_SUBPIX_HALF);
    let Some(mut grid) = Grid::from_found(gray, corners, board)? else {
        return Ok((board.cols, board.rows));
    };
    for side in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
        for _ in 0..MAX_EXTRA_LINES {
            if !grid.extend(gray, side, half_window)? {
                break;
            }
        }
    }
    Ok(grid.size())
}

/// Board sizes tried when the given one is found nowhere: its neighbours (one corner
/// more or fewer each way, which includes counting squares instead of corners), then
/// boards people often print.
fn other_board_sizes(board: &Chessboard) -> Vec<BoardSize> {
    let (c, r) = (board.cols as i64, board.rows as i64);
    let mut sizes: Vec<(i64, i64)> = vec![];
    for (dc, dr) in [
        (-1, -1),
        (-1, 0),
        (0, -1),
        (1, 0),
        (0, 1),
        (1, 1),
        (-1, 1),
        (1, -1),
    ] {
        sizes.push((c + dc, r + dr));
    }
    sizes.extend([
        (9, 6),
        (7, 6),
        (8, 6),
        (9, 7),
        (7, 5),
        (8, 5),
        (10, 7),
        (6, 4),
    ]);
    let mut out: Vec<BoardSize> = vec![];
    for (a, b) in sizes {
        let s = (a as u32, b as u32);
        if a >= 2 && b >= 2 && (a, b) != (c, r) && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// A few frames without the given board, kept to look for another size in.
pub(crate) const FRAMES_KEPT_FOR_OTHER_SIZES: usize = 3;

/// The first other size (see [`other_board_sizes`]) found in one of `frames`, grown
/// to its whole board, with the number of `frames` it is found in.
fn other_board_seen(
    frames: &[Mat],
    board: &Chessboard,
) -> Result<Option<(BoardSize, usize)>, CalibrateError> {
    for (cols, rows) in other_board_sizes(board) {
        let other = Chessboard {
            cols,
            rows,
            square_mm: board.square_mm,
        };
        let mut whole = None;
        let mut hits = 0;
        for gray in frames {
            let mut corners = Vector::<Point2f>::new();
            let flags = find_flags() | calib3d::CALIB_CB_FAST_CHECK;
            if calib3d::find_chessboard_corners(gray, other.pattern_size(), &mut corners, flags)? {
                hits += 1;
                if whole.is_none() {
                    let found: Vec<Point2<f64>> = corners
                        .iter()
                        .map(|p| Point2::new(p.x as f64, p.y as f64))
                        .collect();
                    whole = Some(whole_board_size(gray, &found, &other)?);
                }
            }
        }
        if let Some(size) = whole {
            return Ok(Some((size, hits)));
        }
    }
    Ok(None)
}

/// Refuses views of a board larger than the one given: when at least a third of the
/// views show further corners beyond the found grid, the size most of them show is
/// named. A single view can be fooled by a checkered background; a third cannot.
fn check_whole_board(seen: &[BoardSize], board: &Chessboard) -> Result<(), CalibrateError> {
    let given = (board.cols, board.rows);
    let larger: Vec<BoardSize> = seen.iter().copied().filter(|&s| s != given).collect();
    if larger.is_empty() || larger.len() * 3 < seen.len() {
        return Ok(());
    }
    let mut counts: Vec<(BoardSize, usize)> = vec![];
    for s in &larger {
        match counts.iter_mut().find(|(k, _)| k == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((*s, 1)),
        }
    }
    let (size, views) = counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .unwrap_or((given, 0));
    Err(CalibrateError::LargerBoard {
        cols: board.cols,
        rows: board.rows,
        seen_cols: size.0,
        seen_rows: size.1,
        views,
        of: seen.len(),
    })
}

/// The board-size checks common to images and video: a larger board than the one
/// given (see [`check_whole_board`]), or, when the given one was found in too few
/// views, another size that is found in the `kept` frames (some without the board).
pub(crate) fn check_board_size(
    search: &ViewSearch,
    seen: &[BoardSize],
    kept: &[Mat],
    board: &Chessboard,
) -> Result<(), CalibrateError> {
    // Too few views of the given size may be chance finds on a board of another:
    // that size is named when it is found in more of the frames kept than the
    // given one in all of them.
    if search.views.len() < MIN_VIEWS {
        if let Some(((seen_cols, seen_rows), hits)) = other_board_seen(kept, board)? {
            if hits > search.views.len() && (seen_cols, seen_rows) != (board.cols, board.rows) {
                return Err(CalibrateError::OtherBoard {
                    found: search.views.len(),
                    read: search.read,
                    cols: board.cols,
                    rows: board.rows,
                    seen_cols,
                    seen_rows,
                });
            }
        }
    }
    check_whole_board(seen, board)
}
