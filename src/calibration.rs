//! Camera intrinsics (`camera.json`) and the table plane (`table.json`) of
//! DESIGN.md: their formats, and the pure maths every stage uses to go between
//! pixels and table millimetres (distortion, homography), and the pure maths of
//! judging a table calibration: the pose of a rigid camera with known intrinsics
//! fitted to the table's corners and sides ([`fit_rigid_pose`]), which sides show
//! their side face, whether the corners and the seen aspect agree with that camera
//! ([`judge_table_fit`]: a [`TableDoubt`] names the doubtful corner), and how far a
//! point may be off ([`worst_position_uncertainty_mm`] from the edge points' scatter;
//! [`position_uncertainty_map`] over the table, with the intrinsics' doubts of
//! [`CameraDoubtKeys`] too). No OpenCV: the solvers
//! that estimate these from images live in `vision::calibrate`. The printable
//! chessboard page is `board`; the lens (focal length, `k1`) fitted to the table's
//! edges with no chessboard is `table_lens`.
//! Uses: model, geometry, config.

pub mod board;
pub mod refit;
pub mod table_lens;

use crate::config::{load_checked, save_json, ConfigError};
use crate::geometry::{Point, Table, TableError};
use crate::limits;
use nalgebra::{Matrix3, Point2, Vector3};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `camera.json`: intrinsics of one camera at one resolution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CameraIntrinsics {
    /// `[width, height]` in pixels.
    pub image_size: [u32; 2],
    /// 3x3, rows.
    pub camera_matrix: [[f64; 3]; 3],
    /// OpenCV order `[k1, k2, p1, p2, k3]`.
    pub dist_coeffs: [f64; 5],
    #[serde(default)]
    pub rms_px: f64,
    #[serde(default)]
    pub views: usize,
    /// Per-view RMS reprojection error (px), in the order of `view_names`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_view_rms_px: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub view_names: Vec<String>,
}

impl CameraIntrinsics {
    pub fn fx(&self) -> f64 {
        self.camera_matrix[0][0]
    }
    pub fn fy(&self) -> f64 {
        self.camera_matrix[1][1]
    }
    pub fn cx(&self) -> f64 {
        self.camera_matrix[0][2]
    }
    pub fn cy(&self) -> f64 {
        self.camera_matrix[1][2]
    }

    /// Loads `camera.json`, checked as [`CameraIntrinsics::validate`] says.
    pub fn load(path: &Path) -> Result<CameraIntrinsics, ConfigError> {
        let camera: CameraIntrinsics = load_checked(path)?;
        camera.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(camera)
    }

    /// What every pixel-to-mm map relies on: an image size within
    /// [`limits::MAX_IMAGE_SIDE_PX`], positive focal lengths, the principal point near
    /// the image, the last row `[0, 0, 1]`, bounded distortion. A one-line reason.
    pub fn validate(&self) -> Result<(), String> {
        let [w, h] = self.image_size;
        for (name, v) in [("image_size[0] (width)", w), ("image_size[1] (height)", h)] {
            limits::check_range(
                name,
                f64::from(v),
                1.0,
                f64::from(limits::MAX_IMAGE_SIDE_PX),
                "px",
            )?;
        }
        for (name, v) in [
            ("camera_matrix[0][0] (fx)", self.fx()),
            ("camera_matrix[1][1] (fy)", self.fy()),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "{name} is {v}, not a positive focal length (pixels, up to {})",
                    limits::MAX_FOCAL_PX
                ));
            }
            limits::check_range(name, v, 0.0, limits::MAX_FOCAL_PX, "px")?;
        }
        // The principal point lies in the image; a whole image off is still a lens.
        let (w, h) = (f64::from(w), f64::from(h));
        limits::check_range("camera_matrix[0][2] (cx)", self.cx(), -w, 2.0 * w, "px")?;
        limits::check_range("camera_matrix[1][2] (cy)", self.cy(), -h, 2.0 * h, "px")?;
        let m = &self.camera_matrix;
        limits::check_range(
            "camera_matrix[0][1] (skew)",
            m[0][1],
            -limits::MAX_FOCAL_PX,
            limits::MAX_FOCAL_PX,
            "px",
        )?;
        if m[1][0] != 0.0 || m[2] != [0.0, 0.0, 1.0] {
            return Err(format!(
                "camera_matrix is {m:?}: its row 1 must start with 0 and its row 2 be [0, 0, 1]"
            ));
        }
        for (i, k) in self.dist_coeffs.iter().enumerate() {
            limits::check_range(
                &format!("dist_coeffs[{i}]"),
                *k,
                -limits::MAX_DISTORTION,
                limits::MAX_DISTORTION,
                "",
            )?;
        }
        limits::check_range(
            "rms_px",
            self.rms_px,
            0.0,
            f64::from(limits::MAX_IMAGE_SIDE_PX),
            "px",
        )?;
        limits::check_count(
            "per_view_rms_px",
            self.per_view_rms_px.len(),
            limits::MAX_FRAMES as usize,
        )?;
        Ok(())
    }

    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        save_json(self, path)
    }

    /// Applies the lens distortion to a normalised image point (x/z, y/z).
    pub fn distort_normalised(&self, p: Point2<f64>) -> Point2<f64> {
        let [k1, k2, p1, p2, k3] = self.dist_coeffs;
        let (x, y) = (p.x, p.y);
        let r2 = x * x + y * y;
        let radial = 1.0 + k1 * r2 + k2 * r2 * r2 + k3 * r2 * r2 * r2;
        Point2::new(
            x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x),
            y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y,
        )
    }

    /// A normalised point to (distorted) pixels.
    pub fn pixel_from_normalised(&self, p: Point2<f64>) -> Point2<f64> {
        let d = self.distort_normalised(p);
        Point2::new(self.fx() * d.x + self.cx(), self.fy() * d.y + self.cy())
    }

    /// Removes the lens distortion from a pixel: the undistorted pixel (same camera
    /// matrix, no distortion). Iterative, as OpenCV's `undistortPoints`.
    pub fn undistort_pixel(&self, px: Point2<f64>) -> Point2<f64> {
        let target = Point2::new(
            (px.x - self.cx()) / self.fx(),
            (px.y - self.cy()) / self.fy(),
        );
        let mut p = target;
        for _ in 0..20 {
            let d = self.distort_normalised(p);
            p += target - d;
        }
        Point2::new(self.fx() * p.x + self.cx(), self.fy() * p.y + self.cy())
    }

    /// [`CameraIntrinsics::undistort_pixel`] for many pixels.
    pub fn undistort_pixels(&self, px: &[Point2<f64>]) -> Vec<Point2<f64>> {
        px.iter().map(|&p| self.undistort_pixel(p)).collect()
    }

    /// Adds the lens distortion to an undistorted pixel.
    pub fn distort_pixel(&self, px: Point2<f64>) -> Point2<f64> {
        let n = Point2::new(
            (px.x - self.cx()) / self.fx(),
            (px.y - self.cy()) / self.fy(),
        );
        self.pixel_from_normalised(n)
    }
}

/// A plane-to-plane projective map, kept with its inverse so it cannot be singular.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Homography {
    forward: Matrix3<f64>,
    inverse: Matrix3<f64>,
}

impl Homography {
    /// `None` when the matrix is not invertible or not finite.
    pub fn from_matrix(m: Matrix3<f64>) -> Option<Homography> {
        if m.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let inverse = m.try_inverse()?;
        Some(Homography {
            forward: m,
            inverse,
        })
    }

    pub fn from_rows(rows: [[f64; 3]; 3]) -> Option<Homography> {
        Homography::from_matrix(Matrix3::from_fn(|r, c| rows[r][c]))
    }

    pub fn rows(&self) -> [[f64; 3]; 3] {
        let m = &self.forward;
        [
            [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
            [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
            [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
        ]
    }

    pub fn matrix(&self) -> &Matrix3<f64> {
        &self.forward
    }

    pub fn inverse(&self) -> Homography {
        Homography {
            forward: self.inverse,
            inverse: self.forward,
        }
    }

    pub fn apply(&self, p: Point2<f64>) -> Point2<f64> {
        let v = self.forward * Vector3::new(p.x, p.y, 1.0);
        Point2::new(v.x / v.z, v.y / v.z)
    }

    /// How much the map enlarges a small area about `p`: the determinant of its
    /// Jacobian there, `det H / w³` with `w` the third coordinate of `H (p, 1)`.
    pub fn area_scale_at(&self, p: Point2<f64>) -> f64 {
        let w = (self.forward.row(2) * Vector3::new(p.x, p.y, 1.0))[0];
        (self.forward.determinant() / (w * w * w)).abs()
    }
}

/// `table.json` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableFile {
    pub corners_mm: Vec<[f64; 2]>,
    pub image_corners_px: Vec<[f64; 2]>,
    /// Maps **undistorted** pixels to table mm.
    pub homography: [[f64; 3]; 3],
    pub camera: CameraIntrinsics,
    #[serde(default)]
    pub reprojection_error_mm: f64,
}

/// Why a table calibration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{path}: {source}")]
    Table { path: String, source: TableError },
    #[error("{0}: the homography is singular")]
    SingularHomography(String),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl TableFile {
    /// The file of a table whose `corners` (mm) a rigid camera sees through
    /// `table_from_undistorted`: each corner's image point as the camera shows it
    /// (distorted), for `calibrate table` and its re-fit alike.
    pub fn seen_through(
        corners: &[Point2<f64>],
        table_from_undistorted: &Homography,
        camera: &CameraIntrinsics,
        reprojection_error_mm: f64,
    ) -> TableFile {
        let image_from_table = table_from_undistorted.inverse();
        TableFile {
            corners_mm: corners.iter().map(|p| [p.x, p.y]).collect(),
            image_corners_px: corners
                .iter()
                .map(|&p| {
                    let d = camera.distort_pixel(image_from_table.apply(p));
                    [d.x, d.y]
                })
                .collect(),
            homography: table_from_undistorted.rows(),
            camera: camera.clone(),
            reprojection_error_mm,
        }
    }

    /// The bounds of [`crate::limits`] and what the maps rely on: the table within
    /// [`limits::MAX_TABLE_SIDE_MM`], as many image corners as table corners, each
    /// inside the camera's image, and the camera itself ([`CameraIntrinsics::validate`]).
    /// A one-line reason naming the field.
    pub fn validate(&self) -> Result<(), String> {
        limits::check_table_corners("corners_mm", &self.corners_mm)?;
        self.camera.validate().map_err(|e| format!("camera.{e}"))?;
        // The image corners only show where the table was found; a file made in code
        // may leave them out.
        if !self.image_corners_px.is_empty() && self.image_corners_px.len() != self.corners_mm.len()
        {
            return Err(format!(
                "image_corners_px has {} corners, corners_mm {}: they must be the same corners",
                self.image_corners_px.len(),
                self.corners_mm.len()
            ));
        }
        let [w, h] = self.camera.image_size;
        let (w, h) = (f64::from(w), f64::from(h));
        for (i, [u, v]) in self.image_corners_px.iter().enumerate() {
            // Half a pixel beyond the border: a corner on the image's last pixel.
            let inside = u.is_finite()
                && v.is_finite()
                && (-0.5..=w + 0.5).contains(u)
                && (-0.5..=h + 0.5).contains(v);
            if !inside {
                return Err(format!(
                    "image_corners_px[{i}] is ({u}, {v}), outside the camera's {w} x {h} image: the table must be wholly in view"
                ));
            }
        }
        for (r, row) in self.homography.iter().enumerate() {
            for (c, x) in row.iter().enumerate() {
                if !x.is_finite() {
                    return Err(format!("homography[{r}][{c}] is {x}, not a finite number"));
                }
            }
        }
        Ok(())
    }
}

/// A loaded table calibration: the table polygon and the maps between pixels and mm.
#[derive(Debug, Clone)]
pub struct TableCalibration {
    pub table: Table,
    pub camera: CameraIntrinsics,
    /// Undistorted pixels -> table mm.
    pub table_from_undistorted: Homography,
    pub file: TableFile,
}

impl TableCalibration {
    pub fn from_file(file: TableFile, origin: &str) -> Result<TableCalibration, CalibrationError> {
        file.validate()
            .map_err(|message| CalibrationError::Invalid {
                path: origin.to_string(),
                message,
            })?;
        let corners = file
            .corners_mm
            .iter()
            .map(|&[x, y]| Point::new(x, y))
            .collect();
        let table = Table::new(corners).map_err(|source| CalibrationError::Table {
            path: origin.to_string(),
            source,
        })?;
        let h = Homography::from_rows(file.homography)
            .ok_or_else(|| CalibrationError::SingularHomography(origin.to_string()))?;
        let calibration = TableCalibration {
            table,
            camera: file.camera.clone(),
            table_from_undistorted: h,
            file,
        };
        calibration.check_consistent(origin)?;
        Ok(calibration)
    }

    /// The homography must take each image corner to its table corner: a file whose
    /// corners and map disagree (one edited, or shifted, without the other) would put
    /// every item in the wrong place, and show only later as colours never seen.
    /// The tolerance is 5 % of the table's diagonal (20 mm at least): a fit over the
    /// table's edges leaves a corner some millimetres off, never that far.
    fn check_consistent(&self, origin: &str) -> Result<(), CalibrationError> {
        let (lo, hi) = self.table.bounds();
        let tolerance = (0.05 * (hi - lo).norm()).max(20.0);
        for (i, (px, mm)) in self
            .file
            .image_corners_px
            .iter()
            .zip(&self.file.corners_mm)
            .enumerate()
        {
            let mapped = self.table_from_pixel(Point2::new(px[0], px[1]));
            let off = (mapped - Point::new(mm[0], mm[1])).norm();
            if off.is_nan() || off > tolerance {
                return Err(CalibrationError::Invalid {
                    path: origin.to_string(),
                    message: format!(
                        "image_corners_px[{i}] maps to ({:.0}, {:.0}) mm by the homography, {off:.0} mm from corners_mm[{i}] ({}, {}): the file's corners and homography disagree (calibrate the table again)",
                        mapped.x, mapped.y, mm[0], mm[1]
                    ),
                });
            }
        }
        Ok(())
    }

    pub fn load(path: &Path) -> Result<TableCalibration, CalibrationError> {
        let file: TableFile = load_checked(path)?;
        TableCalibration::from_file(file, &path.display().to_string())
    }

    /// A (distorted) image pixel to table mm.
    pub fn table_from_pixel(&self, px: Point2<f64>) -> Point {
        self.table_from_undistorted
            .apply(self.camera.undistort_pixel(px))
    }

    /// Table mm to the (distorted) image pixel.
    pub fn pixel_from_table(&self, p: Point) -> Point2<f64> {
        let undistorted = self.table_from_undistorted.inverse().apply(p);
        self.camera.distort_pixel(undistorted)
    }
}

impl Homography {
    /// The homography mapping each `from[i]` to `to[i]` (at least 4 pairs, least squares
    /// beyond that), by the normalised DLT. `None` for degenerate input (collinear points).
    pub fn from_correspondences(from: &[Point2<f64>], to: &[Point2<f64>]) -> Option<Homography> {
        if from.len() < 4 || from.len() != to.len() {
            return None;
        }
        // Hartley normalisation keeps the SVD well conditioned for pixel-sized numbers.
        let (nf, tf) = normalising_transform(from)?;
        let (nt, tt) = normalising_transform(to)?;
        let mut a = nalgebra::DMatrix::<f64>::zeros(2 * from.len(), 9);
        for (i, (p, q)) in nf.iter().zip(&nt).enumerate() {
            let (x, y, u, v) = (p.x, p.y, q.x, q.y);
            let r0 = [-x, -y, -1.0, 0.0, 0.0, 0.0, u * x, u * y, u];
            let r1 = [0.0, 0.0, 0.0, -x, -y, -1.0, v * x, v * y, v];
            for c in 0..9 {
                a[(2 * i, c)] = r0[c];
                a[(2 * i + 1, c)] = r1[c];
            }
        }
        // The null vector of A: smallest eigenvector of AᵀA (A may have fewer rows than 9).
        let ata = a.transpose() * &a;
        let eig = nalgebra::SymmetricEigen::new(ata);
        let (imin, _) = eig
            .eigenvalues
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))?;
        // A second (near-)null vector means the points do not pin the map down.
        let mut sorted: Vec<f64> = eig.eigenvalues.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        if sorted[1] <= 1e-12 * sorted[8].max(1e-300) {
            return None;
        }
        let h = eig.eigenvectors.column(imin);
        let hn = Matrix3::from_fn(|r, c| h[3 * r + c]);
        let m = tt.try_inverse()? * hn * tf;
        let m = m / m[(2, 2)];
        Homography::from_matrix(m)
    }
}

/// Translates the centroid to 0 and scales the mean distance to √2.
fn normalising_transform(pts: &[Point2<f64>]) -> Option<(Vec<Point2<f64>>, Matrix3<f64>)> {
    let n = pts.len() as f64;
    let cx = pts.iter().map(|p| p.x).sum::<f64>() / n;
    let cy = pts.iter().map(|p| p.y).sum::<f64>() / n;
    let mean = pts
        .iter()
        .map(|p| ((p.x - cx).powi(2) + (p.y - cy).powi(2)).sqrt())
        .sum::<f64>()
        / n;
    if mean.is_nan() || mean <= 1e-12 {
        return None;
    }
    let s = std::f64::consts::SQRT_2 / mean;
    let t = Matrix3::new(s, 0.0, -s * cx, 0.0, s, -s * cy, 0.0, 0.0, 1.0);
    let out = pts
        .iter()
        .map(|p| Point2::new(s * (p.x - cx), s * (p.y - cy)))
        .collect();
    Some((out, t))
}

impl CameraIntrinsics {
    pub fn matrix(&self) -> Matrix3<f64> {
        Matrix3::from_fn(|r, c| self.camera_matrix[r][c])
    }

    /// An ideal camera (no distortion) of the given size and focal length, centred.
    pub fn pinhole(image_size: [u32; 2], focal_px: f64) -> CameraIntrinsics {
        let (w, h) = (image_size[0] as f64, image_size[1] as f64);
        CameraIntrinsics {
            image_size,
            camera_matrix: [
                [focal_px, 0.0, w / 2.0],
                [0.0, focal_px, h / 2.0],
                [0.0, 0.0, 1.0],
            ],
            dist_coeffs: [0.0; 5],
            rms_px: 0.0,
            views: 0,
            per_view_rms_px: vec![],
            view_names: vec![],
        }
    }
}

/// How many of `pts_in_image` fall in each cell of a `3x3` grid over the image
/// (`[row][col]`, row 0 at the top): where a calibration has seen the board.
pub fn coverage_grid(pts_in_image: &[Point2<f64>], image_size: [u32; 2]) -> [[usize; 3]; 3] {
    let mut grid = [[0usize; 3]; 3];
    let (w, h) = (image_size[0].max(1) as f64, image_size[1].max(1) as f64);
    for p in pts_in_image {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x < w && p.y < h) {
            continue;
        }
        let col = ((p.x / w * 3.0) as usize).min(2);
        let row = ((p.y / h * 3.0) as usize).min(2);
        grid[row][col] += 1;
    }
    grid
}

/// Names of the 3x3 grid cells, `[row][col]`.
pub const COVERAGE_CELL_NAMES: [[&str; 3]; 3] = [
    ["top-left", "top", "top-right"],
    ["left", "centre", "right"],
    ["bottom-left", "bottom", "bottom-right"],
];

/// The cells of a coverage grid that hold clearly fewer corners than the best-covered
/// ones (under a quarter of the busiest cell): where more board views are needed, since
/// distortion is only known where corners were seen.
pub fn sparse_cells(grid: &[[usize; 3]; 3]) -> Vec<&'static str> {
    let most = grid.iter().flatten().copied().max().unwrap_or(0);
    let mut out = vec![];
    for (r, row) in grid.iter().enumerate() {
        for (c, &n) in row.iter().enumerate() {
            if n * 4 < most {
                out.push(COVERAGE_CELL_NAMES[r][c]);
            }
        }
    }
    out
}

/// A straight line `n · p = d` with unit normal `n`, in some 2D frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line2 {
    pub normal: nalgebra::Vector2<f64>,
    pub offset: f64,
}

impl Line2 {
    /// Total-least-squares fit (orthogonal distances). `None` for fewer than 2 distinct points.
    pub fn fit(pts: &[Point2<f64>]) -> Option<Line2> {
        if pts.len() < 2 {
            return None;
        }
        let n = pts.len() as f64;
        let cx = pts.iter().map(|p| p.x).sum::<f64>() / n;
        let cy = pts.iter().map(|p| p.y).sum::<f64>() / n;
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for p in pts {
            let (dx, dy) = (p.x - cx, p.y - cy);
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
        if sxx + syy <= 0.0 {
            return None;
        }
        // The direction is the major axis of the scatter; the normal is perpendicular.
        let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        let normal = nalgebra::Vector2::new(-angle.sin(), angle.cos());
        Some(Line2 {
            normal,
            offset: normal.x * cx + normal.y * cy,
        })
    }

    /// Fits, then drops points further than `3 x` the robust spread (and `min_keep_px`)
    /// from the line and refits, twice: one stray edge pixel must not tilt a table edge.
    pub fn fit_robust(pts: &[Point2<f64>], min_keep: f64) -> Option<(Line2, Vec<Point2<f64>>)> {
        let mut kept: Vec<Point2<f64>> = pts.to_vec();
        let mut line = Line2::fit(&kept)?;
        for _ in 0..3 {
            let mut d: Vec<f64> = kept.iter().map(|p| line.distance(*p).abs()).collect();
            d.sort_by(f64::total_cmp);
            let mad = d[d.len() / 2];
            let limit = (3.0 * 1.4826 * mad).max(min_keep);
            let next: Vec<Point2<f64>> = pts
                .iter()
                .copied()
                .filter(|p| line.distance(*p).abs() <= limit)
                .collect();
            if next.len() < 2 {
                break;
            }
            line = Line2::fit(&next)?;
            kept = next;
        }
        Some((line, kept))
    }

    /// The line through two points; `None` when they coincide.
    pub fn through(a: Point2<f64>, b: Point2<f64>) -> Option<Line2> {
        let d = b - a;
        let len = d.norm();
        if len.is_nan() || len <= 1e-12 {
            return None;
        }
        let normal = nalgebra::Vector2::new(-d.y / len, d.x / len);
        Some(Line2 {
            normal,
            offset: normal.x * a.x + normal.y * a.y,
        })
    }

    /// Signed distance (positive on the side the normal points to).
    pub fn distance(&self, p: Point2<f64>) -> f64 {
        self.normal.x * p.x + self.normal.y * p.y - self.offset
    }

    /// Where two lines cross; `None` when (nearly) parallel.
    pub fn intersect(&self, other: &Line2) -> Option<Point2<f64>> {
        let det = self.normal.x * other.normal.y - self.normal.y * other.normal.x;
        if det.abs() < 1e-9 {
            return None;
        }
        Some(Point2::new(
            (self.offset * other.normal.y - self.normal.y * other.offset) / det,
            (self.normal.x * other.offset - self.offset * other.normal.x) / det,
        ))
    }
}

/// A rectangle `[0,W]x[0,H]` (mm) as table corners 0..3, counter-clockwise from above.
pub fn rectangle_corners_mm(width_mm: f64, height_mm: f64) -> Vec<Point2<f64>> {
    vec![
        Point2::new(0.0, 0.0),
        Point2::new(width_mm, 0.0),
        Point2::new(width_mm, height_mm),
        Point2::new(0.0, height_mm),
    ]
}

/// Orders four corners of a rectangular table seen in an undistorted image as table
/// corners 0..3 (counter-clockwise seen from above), for a table `width_mm x height_mm`:
/// - the edge 0→1 is a `W` edge: of the two ways to assign `W` and `H` to the sides,
///   the one that makes the camera's view of the plane a rigid one (`K⁻¹H` with equal
///   column norms) is taken, so a table seen end-on still gets its long side right;
///   when `W ≈ H` or the view cannot tell, any side may be the `W` side;
/// - of the two corners that then remain possible, corner 0 is the one nearest the
///   image's bottom-left corner.
///
/// Returns the ordered corners and the table's measured aspect `W/H` (from the camera
/// matrix; compare it with the given size to catch a wrong `--size`).
pub fn order_table_corners(
    px_undistorted: &[Point2<f64>; 4],
    camera: &CameraIntrinsics,
    width_mm: f64,
    height_mm: f64,
) -> Option<([Point2<f64>; 4], f64)> {
    let c = Point2::new(
        px_undistorted.iter().map(|p| p.x).sum::<f64>() / 4.0,
        px_undistorted.iter().map(|p| p.y).sum::<f64>() / 4.0,
    );
    // Counter-clockwise seen from above is counter-clockwise on screen, where y points
    // down: decreasing atan2(y, x) in image coordinates.
    let mut ccw: Vec<Point2<f64>> = px_undistorted.to_vec();
    ccw.sort_by(|a, b| {
        (b.y - c.y)
            .atan2(b.x - c.x)
            .total_cmp(&(a.y - c.y).atan2(a.x - c.x))
    });
    let k_inv = camera.matrix().try_inverse()?;
    let rect = rectangle_corners_mm(width_mm, height_mm);
    let mut options = vec![];
    for start in 0..4 {
        let ordered: Vec<Point2<f64>> = (0..4).map(|i| ccw[(start + i) % 4]).collect();
        let img_from_table = Homography::from_correspondences(&rect, &ordered)?;
        let m = k_inv * img_from_table.matrix();
        let ratio = m.column(0).norm() / m.column(1).norm();
        options.push((start, ratio));
    }
    let skew = |r: f64| r.ln().abs();
    let even = skew(options[0].1).min(skew(options[2].1));
    let odd = skew(options[1].1).min(skew(options[3].1));
    // Decide W vs H only when the difference is clear; a square table cannot say.
    let allowed: Vec<usize> = if (even - odd).abs() < 0.02 {
        vec![0, 1, 2, 3]
    } else if even < odd {
        vec![0, 2]
    } else {
        vec![1, 3]
    };
    let bottom_left = Point2::new(0.0, camera.image_size[1] as f64);
    let start = *allowed.iter().min_by(|&&a, &&b| {
        (ccw[a] - bottom_left)
            .norm()
            .total_cmp(&(ccw[b] - bottom_left).norm())
    })?;
    let ordered = [0, 1, 2, 3].map(|i| ccw[(start + i) % 4]);
    let aspect = width_mm / height_mm * options[start].1;
    Some((ordered, aspect))
}

/// The rigid pose of the table plane in the camera frame, `(R, t)` with
/// `camera point = R * (x, y, 0) + t`, recovered from the homography and `K`
/// (the nearest true rotation, by SVD). `None` for a degenerate homography.
fn plane_pose(
    camera: &CameraIntrinsics,
    table_from_undistorted: &Homography,
) -> Option<(Matrix3<f64>, nalgebra::Vector3<f64>)> {
    let m = camera.matrix().try_inverse()? * table_from_undistorted.inverse().matrix();
    let (a, b) = (m.column(0).into_owned(), m.column(1).into_owned());
    let scale = 2.0 / (a.norm() + b.norm());
    let mut r = Matrix3::zeros();
    r.set_column(0, &(a * scale));
    r.set_column(1, &(b * scale));
    r.set_column(2, &(a * scale).cross(&(b * scale)));
    let svd = r.svd(true, true);
    let (u, vt) = (svd.u?, svd.v_t?);
    let mut rot = u * vt;
    let mut t: nalgebra::Vector3<f64> = m.column(2) * scale;
    if rot.determinant() < 0.0 {
        rot = -rot;
    }
    // The table lies in front of the camera.
    if t.z < 0.0 {
        t = -t;
        rot.set_column(0, &-rot.column(0));
        rot.set_column(1, &-rot.column(1));
    }
    Some((rot, t))
}

/// How far (RMS, mm) the table corners land from where a rigid camera (this `K`, the
/// plane pose recovered from the homography) would put them: 0 for a perfect
/// calibration, large when the corners, the size or the intrinsics disagree. Four
/// corners always fit a homography exactly, so this is the check that means something.
pub fn rigid_plane_residual_mm(
    camera: &CameraIntrinsics,
    table_from_undistorted: &Homography,
    corners_mm: &[Point2<f64>],
) -> Option<f64> {
    let k = camera.matrix();
    let (rot, t) = plane_pose(camera, table_from_undistorted)?;
    let mut sum = 0.0;
    for p in corners_mm {
        let cam = rot.column(0) * p.x + rot.column(1) * p.y + t;
        let px = k * cam;
        let px = Point2::new(px.x / px.z, px.y / px.z);
        let back = table_from_undistorted.apply(px);
        sum += (back - p).norm_squared();
    }
    Some((sum / corners_mm.len().max(1) as f64).sqrt())
}

/// A rigid camera's view of the table plane: `camera point = R * (x, y, 0) + t`
/// (table mm to camera mm, OpenCV axes). Unlike a free homography it has 6 degrees
/// of freedom, so the table's corners and sides over-determine it and what it leaves
/// over says whether the corners, the size and the intrinsics agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidPose {
    pub camera_from_table: Matrix3<f64>,
    pub translation_mm: Vector3<f64>,
}

impl RigidPose {
    /// The pose nearest to a homography (undistorted px -> table mm), by SVD; `None`
    /// for a degenerate homography.
    pub fn from_homography(
        camera: &CameraIntrinsics,
        table_from_undistorted: &Homography,
    ) -> Option<RigidPose> {
        let (camera_from_table, translation_mm) = plane_pose(camera, table_from_undistorted)?;
        Some(RigidPose {
            camera_from_table,
            translation_mm,
        })
    }

    /// A table point (mm, z up) in camera coordinates (mm).
    pub fn camera_point(&self, x: f64, y: f64, z: f64) -> Vector3<f64> {
        self.camera_from_table * Vector3::new(x, y, z) + self.translation_mm
    }

    /// Where a table point (mm, z up; z < 0 is below the top) appears, in undistorted
    /// pixels; `None` behind the camera.
    pub fn undistorted_pixel(
        &self,
        camera: &CameraIntrinsics,
        x: f64,
        y: f64,
        z: f64,
    ) -> Option<Point2<f64>> {
        let v = camera.matrix() * self.camera_point(x, y, z);
        (v.z > 1e-9).then(|| Point2::new(v.x / v.z, v.y / v.z))
    }

    /// The homography from undistorted pixels to table mm this pose implies.
    pub fn table_from_undistorted(&self, camera: &CameraIntrinsics) -> Option<Homography> {
        let mut m = Matrix3::zeros();
        m.set_column(0, &self.camera_from_table.column(0));
        m.set_column(1, &self.camera_from_table.column(1));
        m.set_column(2, &self.translation_mm);
        Homography::from_matrix(camera.matrix() * m).map(|h| h.inverse())
    }

    /// The camera's centre in table mm (z: height above the top).
    pub fn camera_centre_mm(&self) -> Vector3<f64> {
        -(self.camera_from_table.transpose() * self.translation_mm)
    }

    /// The pose turned by the rotation vector `w` (applied on the camera side) and
    /// shifted by `dt` mm.
    fn nudged(&self, w: Vector3<f64>, dt: Vector3<f64>) -> RigidPose {
        let turn = nalgebra::Rotation3::from_scaled_axis(w).into_inner();
        RigidPose {
            camera_from_table: turn * self.camera_from_table,
            translation_mm: turn * self.translation_mm + dt,
        }
    }

    /// For numerical derivatives by central differences, per pose parameter (turns
    /// about the camera's x, y, z, then shifts along them): the step and the pose
    /// nudged by plus and minus it. Steps of 1e-6 rad and 1e-6 of the distance: well
    /// inside the linear range.
    fn central_steps(&self) -> [(f64, RigidPose, RigidPose); 6] {
        let scale = self.translation_mm.norm().max(1.0);
        std::array::from_fn(|j| {
            let h = if j < 3 { 1e-6 } else { 1e-6 * scale };
            let mut d = nalgebra::Vector6::zeros();
            d[j] = h;
            let w = Vector3::new(d[0], d[1], d[2]);
            let t = Vector3::new(d[3], d[4], d[5]);
            (h, self.nudged(w, t), self.nudged(-w, -t))
        })
    }
}

#[cfg(test)]
impl RigidPose {
    /// A camera at `centre` (table mm) looking along the unit vector `z`, its image x
    /// along `x_hint` made square to `z` (tests set up cameras so).
    pub(crate) fn looking_along(
        centre: Vector3<f64>,
        z: Vector3<f64>,
        x_hint: Vector3<f64>,
    ) -> RigidPose {
        let x = (x_hint - z * z.dot(&x_hint)).normalize();
        let y = z.cross(&x);
        let r = Matrix3::from_rows(&[x.transpose(), y.transpose(), z.transpose()]);
        RigidPose {
            camera_from_table: r,
            translation_mm: -(r * centre),
        }
    }
}

/// What a rigid pose is fitted to, in undistorted pixels: seen table corners (index
/// into the corner list) and points measured on the table's sides (side `k` runs from
/// corner `k` to corner `k + 1`).
#[derive(Debug, Clone, Default)]
pub struct PoseObservations {
    pub corners: Vec<(usize, Point2<f64>)>,
    pub side_points: Vec<(usize, Point2<f64>)>,
}

/// A fitted pose and how well it fits.
#[derive(Debug, Clone)]
pub struct PoseFit {
    pub pose: RigidPose,
    /// RMS of the residuals (px): corners' distances, side points' distances from
    /// their projected side.
    pub rms_px: f64,
    /// Covariance of the pose parameters (rotation vector, translation mm) scaled by
    /// the residuals' own variance: how well the observations pin the pose down.
    pub covariance: nalgebra::Matrix6<f64>,
}

/// The residuals (px) of `pose` against `obs` for the table polygon `corners_mm`.
fn pose_residuals(
    pose: &RigidPose,
    camera: &CameraIntrinsics,
    corners_mm: &[Point2<f64>],
    obs: &PoseObservations,
) -> Option<Vec<f64>> {
    let n = corners_mm.len();
    let projected: Vec<Point2<f64>> = corners_mm
        .iter()
        .map(|c| pose.undistorted_pixel(camera, c.x, c.y, 0.0))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(2 * obs.corners.len() + obs.side_points.len());
    for &(i, p) in &obs.corners {
        let q = projected.get(i)?;
        out.push(p.x - q.x);
        out.push(p.y - q.y);
    }
    let mut sides = Vec::with_capacity(n);
    for k in 0..n {
        sides.push(Line2::through(projected[k], projected[(k + 1) % n])?);
    }
    for &(k, p) in &obs.side_points {
        out.push(sides.get(k)?.distance(p));
    }
    Some(out)
}

/// Fits the rigid pose of a camera with known intrinsics to the table's corners and
/// sides (Levenberg–Marquardt from `start`, numeric derivatives): the
/// perspective-n-point problem with points and lines together. `None` when there are
/// fewer residuals than the pose's 6 parameters or the fit leaves finite numbers.
pub fn fit_rigid_pose(
    camera: &CameraIntrinsics,
    corners_mm: &[Point2<f64>],
    obs: &PoseObservations,
    start: RigidPose,
) -> Option<PoseFit> {
    let cost = |p: &RigidPose| {
        pose_residuals(p, camera, corners_mm, obs).map(|r| r.iter().map(|v| v * v).sum::<f64>())
    };
    let mut pose = start;
    let mut residuals = pose_residuals(&pose, camera, corners_mm, obs)?;
    if residuals.len() < 6 {
        return None;
    }
    let mut current = residuals.iter().map(|v| v * v).sum::<f64>();
    let mut lambda = 1e-3;
    let mut jacobian = nalgebra::DMatrix::<f64>::zeros(residuals.len(), 6);
    for _ in 0..100 {
        for (j, (h, plus, minus)) in pose.central_steps().iter().enumerate() {
            let plus = pose_residuals(plus, camera, corners_mm, obs)?;
            let minus = pose_residuals(minus, camera, corners_mm, obs)?;
            for (i, (a, b)) in plus.iter().zip(&minus).enumerate() {
                jacobian[(i, j)] = (a - b) / (2.0 * h);
            }
        }
        let r = nalgebra::DVector::from_column_slice(&residuals);
        let jtj = jacobian.transpose() * &jacobian;
        let jtr = jacobian.transpose() * r;
        let mut improved = false;
        for _ in 0..10 {
            let mut a = jtj.clone();
            for d in 0..6 {
                a[(d, d)] += lambda * jtj[(d, d)].max(1e-12);
            }
            let Some(step) = a.lu().solve(&(-&jtr)) else {
                lambda *= 10.0;
                continue;
            };
            let candidate = pose.nudged(
                Vector3::new(step[0], step[1], step[2]),
                Vector3::new(step[3], step[4], step[5]),
            );
            match cost(&candidate) {
                Some(c) if c < current => {
                    let gain = current - c;
                    pose = candidate;
                    current = c;
                    lambda = (lambda / 10.0).max(1e-12);
                    improved = gain > 1e-12 * current.max(1e-12);
                    break;
                }
                _ => lambda *= 10.0,
            }
        }
        residuals = pose_residuals(&pose, camera, corners_mm, obs)?;
        if !improved {
            break;
        }
    }
    let n = residuals.len();
    let rms_px = (current / n as f64).sqrt();
    let variance = current / (n.saturating_sub(6).max(1)) as f64;
    let jtj: nalgebra::Matrix6<f64> = {
        let m = jacobian.transpose() * &jacobian;
        nalgebra::Matrix6::from_fn(|r, c| m[(r, c)])
    };
    let covariance = jtj.try_inverse().map(|m| m * variance)?;
    let finite = pose.camera_from_table.iter().all(|v| v.is_finite())
        && pose.translation_mm.iter().all(|v| v.is_finite())
        && rms_px.is_finite();
    finite.then_some(PoseFit {
        pose,
        rms_px,
        covariance,
    })
}

/// How far each seen corner (undistorted px) lies from where the rigid pose puts
/// its table corner, measured on the table in mm (the seen corner taken through the
/// pose's own map).
pub fn corner_offsets_mm(
    camera: &CameraIntrinsics,
    pose: &RigidPose,
    corners_mm: &[Point2<f64>],
    seen_undistorted: &[Point2<f64>],
) -> Option<Vec<f64>> {
    let h = pose.table_from_undistorted(camera)?;
    Some(
        corners_mm
            .iter()
            .zip(seen_undistorted)
            .map(|(c, &p)| (h.apply(p) - c).norm())
            .collect(),
    )
}

/// The most the rigid fit may leave at a corner before the calibration is refused
/// (mm): a corner further off is a side found on the wrong boundary, a wrong size or
/// wrong intrinsics, and every position near it inherits the error.
pub const MAX_CORNER_OFFSET_MM: f64 = 2.0;
/// The most the table's shape seen by the camera (`W/H`) may differ from the given
/// size, as a fraction.
pub const MAX_ASPECT_MISMATCH: f64 = 0.01;

/// Why a table calibration disagrees with itself: the doubtful corner and the
/// reasons, said in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct TableDoubt {
    /// The corner the rigid fit misses most.
    pub corner: usize,
    /// How far the rigid fit misses it (mm).
    pub offset_mm: f64,
    pub aspect_seen: f64,
    pub aspect_given: f64,
    /// The corners were given (`--corners`), not found: the advice is to check them.
    pub corners_given: bool,
    /// The intrinsics were found from the table itself (`--no-chessboard`), not
    /// given: the advice is a chessboard calibration, not checking camera.json.
    pub lens_from_table: bool,
    /// A re-fit after the camera moved (`refit`): the advice is to calibrate the
    /// table again from a frame of the empty table.
    pub refit: bool,
}

impl TableDoubt {
    fn corner_bad(&self) -> bool {
        // Not a number is off too.
        self.offset_mm.is_nan() || self.offset_mm > MAX_CORNER_OFFSET_MM
    }

    fn aspect_mismatch(&self) -> f64 {
        (self.aspect_seen / self.aspect_given - 1.0).abs()
    }

    fn aspect_bad(&self) -> bool {
        let m = self.aspect_mismatch();
        m.is_nan() || m > MAX_ASPECT_MISMATCH
    }
}

impl std::fmt::Display for TableDoubt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the table calibration disagrees with itself: corner {} is doubtful, ",
            self.corner
        )?;
        if self.corner_bad() {
            write!(
                f,
                "{:.1} mm from where a rigid camera with these intrinsics and this size puts it (limit {MAX_CORNER_OFFSET_MM} mm)",
                self.offset_mm
            )?;
        }
        if self.aspect_bad() {
            if self.corner_bad() {
                write!(f, ", and ")?;
            }
            write!(
                f,
                "the table's W/H seen is {:.4}, not {:.4} ({:.1} %, limit {:.0} %)",
                self.aspect_seen,
                self.aspect_given,
                100.0 * self.aspect_mismatch(),
                100.0 * MAX_ASPECT_MISMATCH
            )?;
        }
        if self.refit {
            write!(
                f,
                ": hands or items over an edge, or a lens that changed? calibrate the table again from a frame of the empty table (calibrate table)"
            )
        } else if self.lens_from_table {
            write!(
                f,
                ": check --size and the check picture, or calibrate the camera with a chessboard (--force writes it anyway)"
            )
        } else if self.corners_given {
            write!(
                f,
                ": check the corners given with --corners, --size, camera.json and the check picture (--force writes it anyway)"
            )
        } else {
            write!(
                f,
                ": check --size, camera.json and the check picture, or give the corners with --corners (--force writes it anyway)"
            )
        }
    }
}

/// Judges a table fit: refuses it ([`TableDoubt`], naming the corner the rigid fit
/// misses most) when a corner is over [`MAX_CORNER_OFFSET_MM`] off or the seen aspect
/// is over [`MAX_ASPECT_MISMATCH`] from the given one. Not-a-number counts as off.
pub fn judge_table_fit(
    offsets_mm: &[f64],
    aspect_seen: f64,
    aspect_given: f64,
) -> Result<(), TableDoubt> {
    let (corner, offset_mm) = offsets_mm
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f64::NAN));
    let doubt = TableDoubt {
        corner,
        offset_mm,
        aspect_seen,
        aspect_given,
        corners_given: false,
        lens_from_table: false,
        refit: false,
    };
    if doubt.corner_bad() || doubt.aspect_bad() {
        return Err(doubt);
    }
    Ok(())
}

/// Which sides of the table show their side face to the camera: side `k` (corner
/// `k` to `k + 1` of `corners_mm`, counter-clockwise from above) does when the camera
/// stands outside the vertical plane through it. There the table's top ends at the
/// first transition seen from the inside; the side face lies beyond it.
pub fn sides_showing_face(pose: &RigidPose, corners_mm: &[Point2<f64>]) -> Vec<bool> {
    let c = pose.camera_centre_mm();
    let n = corners_mm.len();
    (0..n)
        .map(|k| {
            let (a, b) = (corners_mm[k], corners_mm[(k + 1) % n]);
            // Counter-clockwise: the outside is to the right of a -> b.
            let along = b - a;
            let cross = along.x * (c.y - a.y) - along.y * (c.x - a.x);
            cross < 0.0
        })
        .collect()
}

/// How far a worst-case pose error moves a point on the table: for each point of a
/// grid over the table (corners included), the 3-sigma radius (mm) of where a pixel
/// seen there maps to, from the fit's covariance; the largest over the grid.
/// `correlation` inflates the covariance for residuals that are not independent
/// (neighbouring edge samples share blur).
pub fn worst_position_uncertainty_mm(
    camera: &CameraIntrinsics,
    fit: &PoseFit,
    corners_mm: &[Point2<f64>],
    correlation: f64,
) -> Option<f64> {
    let grid = uncertainty_grid(corners_mm);
    let worst = edge_uncertainty_mm(camera, fit, &grid, correlation)?
        .into_iter()
        .fold(0.0, f64::max);
    worst.is_finite().then_some(worst)
}

/// One intrinsic parameter of a camera.json, or a direction among them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Intrinsic {
    Fx,
    Fy,
    /// `fx` and `fy` together (square pixels, as `--no-chessboard` fits them).
    Focal,
    Cx,
    Cy,
    /// `dist_coeffs[i]` (OpenCV order `k1, k2, p1, p2, k3`).
    Dist(usize),
    /// `[fx, fy, cx, cy, k1, k2, p1, p2, k3]` together, along this unit vector (an
    /// eigenvector of their covariance).
    Along([f64; 9]),
}

/// How far one intrinsic parameter may be off: 3 sigma, in its own units (px for
/// focal lengths and the principal point).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntrinsicDoubt {
    pub parameter: Intrinsic,
    pub three_sigma: f64,
}

impl IntrinsicDoubt {
    /// `camera` with this parameter moved by `amount`.
    fn applied(&self, camera: &CameraIntrinsics, amount: f64) -> CameraIntrinsics {
        let mut c = camera.clone();
        let m = &mut c.camera_matrix;
        match self.parameter {
            Intrinsic::Fx => m[0][0] += amount,
            Intrinsic::Fy => m[1][1] += amount,
            Intrinsic::Focal => {
                m[0][0] += amount;
                m[1][1] += amount;
            }
            Intrinsic::Cx => m[0][2] += amount,
            Intrinsic::Cy => m[1][2] += amount,
            Intrinsic::Dist(i) => {
                if let Some(d) = c.dist_coeffs.get_mut(i) {
                    *d += amount;
                }
            }
            Intrinsic::Along(e) => {
                m[0][0] += amount * e[0];
                m[1][1] += amount * e[1];
                m[0][2] += amount * e[2];
                m[1][2] += amount * e[3];
                for (d, x) in c.dist_coeffs.iter_mut().zip(&e[4..]) {
                    *d += amount * x;
                }
            }
        }
        c
    }
}

/// The keys of a camera.json that say how well its intrinsics are known (read from
/// the same file as [`CameraIntrinsics`]; other keys ignored): a chessboard's
/// `intrinsics_covariance` (of `[fx, fy, cx, cy, k1, k2, p1, p2, k3]`, correlations
/// kept) or else its `intrinsics_std_dev` (1 sigma of the same, OpenCV's
/// `stdDeviationsIntrinsics`, taken as independent), or what `calibrate table
/// --no-chessboard` writes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CameraDoubtKeys {
    /// The covariance of the nine, correlations kept (`calibrate camera`).
    #[serde(default)]
    pub intrinsics_covariance: Option<[[f64; 9]; 9]>,
    #[serde(default)]
    pub intrinsics_std_dev: Option<Vec<f64>>,
    #[serde(default)]
    pub focal_uncertainty_px: Option<f64>,
    #[serde(default)]
    pub k1_uncertainty: Option<f64>,
    #[serde(default)]
    pub principal_point_doubt_px: Option<f64>,
}

impl CameraDoubtKeys {
    /// The doubts these keys state (none for a camera.json without them). The
    /// no-chessboard lens's focal doubt already holds the principal point's share;
    /// the principal point's own doubt is added as well (a worst case: they partly
    /// compensate).
    pub fn doubts(&self) -> Vec<IntrinsicDoubt> {
        let mut out = vec![];
        let mut push = |parameter, three_sigma: f64| {
            if three_sigma.is_finite() && three_sigma > 0.0 {
                out.push(IntrinsicDoubt {
                    parameter,
                    three_sigma,
                });
            }
        };
        if let Some(cov) = &self.intrinsics_covariance {
            // Independent directions: the covariance's eigenvectors, each 3 sigma
            // of its eigenvalue.
            let m = nalgebra::SMatrix::<f64, 9, 9>::from_fn(|r, c| cov[r][c]);
            if m.iter().all(|v| v.is_finite()) {
                let eigen = nalgebra::SymmetricEigen::new(m);
                for (i, &lambda) in eigen.eigenvalues.iter().enumerate() {
                    let e = eigen.eigenvectors.column(i);
                    push(
                        Intrinsic::Along(std::array::from_fn(|k| e[k])),
                        3.0 * lambda.max(0.0).sqrt(),
                    );
                }
                return out;
            }
        }
        if let Some(sd) = &self.intrinsics_std_dev {
            let params = [
                Intrinsic::Fx,
                Intrinsic::Fy,
                Intrinsic::Cx,
                Intrinsic::Cy,
                Intrinsic::Dist(0),
                Intrinsic::Dist(1),
                Intrinsic::Dist(2),
                Intrinsic::Dist(3),
                Intrinsic::Dist(4),
            ];
            for (p, s) in params.into_iter().zip(sd) {
                push(p, 3.0 * s);
            }
            return out;
        }
        if let Some(f) = self.focal_uncertainty_px {
            push(Intrinsic::Focal, f);
        }
        if let Some(k1) = self.k1_uncertainty {
            push(Intrinsic::Dist(0), k1);
        }
        if let Some(c) = self.principal_point_doubt_px {
            push(Intrinsic::Cx, c);
            push(Intrinsic::Cy, c);
        }
        out
    }
}

/// How far a point on the table may be off, over a grid on the table: per point the
/// 3-sigma radius (mm) from the edge fits' scatter and from the intrinsics' doubts.
#[derive(Debug, Clone, PartialEq)]
pub struct UncertaintyMap {
    /// The grid's points (table mm): [`UNCERTAINTY_GRID`] x [`UNCERTAINTY_GRID`] over
    /// the table's bounds, corners included, column by column.
    pub points_mm: Vec<Point2<f64>>,
    /// Per point: from the edge points' scatter (the pose's covariance) and each
    /// side's possible offset as a whole, in quadrature.
    pub edges_mm: Vec<f64>,
    /// Per point: from the intrinsics' doubts, each moved by its 3 sigma both ways
    /// with the pose fitted again to the same edge points, the moves in quadrature
    /// (parameters taken as independent).
    pub intrinsics_mm: Vec<f64>,
}

/// Points per side of the [`UncertaintyMap`]'s grid.
pub const UNCERTAINTY_GRID: usize = 9;

impl UncertaintyMap {
    /// Per point, both parts in quadrature.
    pub fn total_mm(&self) -> Vec<f64> {
        self.edges_mm
            .iter()
            .zip(&self.intrinsics_mm)
            .map(|(a, b)| a.hypot(*b))
            .collect()
    }
    pub fn worst_mm(&self) -> f64 {
        self.total_mm().into_iter().fold(0.0, f64::max)
    }
    pub fn worst_edges_mm(&self) -> f64 {
        self.edges_mm.iter().copied().fold(0.0, f64::max)
    }
    pub fn worst_intrinsics_mm(&self) -> f64 {
        self.intrinsics_mm.iter().copied().fold(0.0, f64::max)
    }
}

/// The grid of an [`UncertaintyMap`] over the polygon's bounds.
fn uncertainty_grid(corners_mm: &[Point2<f64>]) -> Vec<Point2<f64>> {
    let (lo, hi) = corners_mm.iter().fold(
        (
            Point2::new(f64::MAX, f64::MAX),
            Point2::new(f64::MIN, f64::MIN),
        ),
        |(lo, hi), p| {
            (
                Point2::new(lo.x.min(p.x), lo.y.min(p.y)),
                Point2::new(hi.x.max(p.x), hi.y.max(p.y)),
            )
        },
    );
    let n = (UNCERTAINTY_GRID - 1) as f64;
    let mut out = Vec::with_capacity(UNCERTAINTY_GRID * UNCERTAINTY_GRID);
    for i in 0..UNCERTAINTY_GRID {
        for j in 0..UNCERTAINTY_GRID {
            out.push(Point2::new(
                lo.x + (hi.x - lo.x) * i as f64 / n,
                lo.y + (hi.y - lo.y) * j as f64 / n,
            ));
        }
    }
    out
}

/// A side's edge points are cut into this many stretches along it, to see how far
/// its reading wanders as a whole from stretch to stretch.
const SIDE_STRETCHES: usize = 5;

/// Per grid point, the 3-sigma radius (mm) of whole sides read off: the fit's
/// covariance counts each edge point's scatter as averaging out along a side, but
/// what a side's reading shares over a stretch (a rim's or bevel's pull, colour
/// carried at half resolution, a shadow line) does not. Per side, the spread of
/// its stretches' mean offsets from the fitted side (sample SD over
/// [`SIDE_STRETCHES`]) is taken as how far the whole side may be off; each side's
/// points are moved by 3 times that both ways, the pose fitted again, and the
/// moves added in quadrature. With one face in view three sides place the table
/// with nothing to spare, and this is where their leverage shows: f12's clear
/// sides read 0.1–0.3 px off the truth and the near corners 0.85 px, while the
/// points' scatter alone claimed less. A side read off evenly along its whole
/// length (a shadow line along it) shows no spread and is not covered.
fn side_offset_uncertainty_mm(
    camera: &CameraIntrinsics,
    fit: &PoseFit,
    corners_mm: &[Point2<f64>],
    obs: &PoseObservations,
    grid: &[Point2<f64>],
) -> Option<Vec<f64>> {
    let h = fit.pose.table_from_undistorted(camera)?;
    let image_from_table = h.inverse();
    let seen: Vec<Point2<f64>> = grid.iter().map(|&p| image_from_table.apply(p)).collect();
    let mut sum_sq = vec![0.0; grid.len()];
    for k in 0..corners_mm.len() {
        let a = image_from_table.apply(corners_mm[k]);
        let b = image_from_table.apply(corners_mm[(k + 1) % corners_mm.len()]);
        let Some(line) = Line2::through(a, b) else {
            continue;
        };
        let dir = (b - a).normalize();
        let mut along: Vec<(f64, f64)> = obs
            .side_points
            .iter()
            .filter(|(side, _)| *side == k)
            .map(|&(_, p)| ((p - a).dot(&dir), line.distance(p)))
            .collect();
        if along.len() < 2 * SIDE_STRETCHES {
            continue;
        }
        along.sort_by(|x, y| x.0.total_cmp(&y.0));
        let size = along.len() / SIDE_STRETCHES;
        let means: Vec<f64> = along
            .chunks(size)
            .take(SIDE_STRETCHES)
            .map(|c| c.iter().map(|x| x.1).sum::<f64>() / c.len() as f64)
            .collect();
        let mean = means.iter().sum::<f64>() / means.len() as f64;
        let sd = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (means.len() - 1) as f64)
            .sqrt();
        let mut moved = vec![];
        for sign in [1.0, -1.0] {
            let shift = line.normal * (sign * 3.0 * sd);
            let to_table = refit_with_sides_moved(camera, fit, corners_mm, obs, |side, p| {
                if side == k {
                    p + shift
                } else {
                    p
                }
            })?;
            moved.push(
                seen.iter()
                    .map(|&px| to_table.apply(px))
                    .collect::<Vec<_>>(),
            );
        }
        for (s, (p, q)) in sum_sq.iter_mut().zip(moved[0].iter().zip(&moved[1])) {
            *s += ((p - q) / 2.0).norm_squared();
        }
    }
    let out: Vec<f64> = sum_sq.into_iter().map(f64::sqrt).collect();
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// The table as the camera sees it (undistorted pixels to table mm) once the pose is
/// fitted again to the side points moved by `moved(side, point)`, from `fit`'s pose:
/// how a possible offset of the edge readings carries to the table.
fn refit_with_sides_moved(
    camera: &CameraIntrinsics,
    fit: &PoseFit,
    corners_mm: &[Point2<f64>],
    obs: &PoseObservations,
    moved: impl Fn(usize, Point2<f64>) -> Point2<f64>,
) -> Option<Homography> {
    let moved_obs = PoseObservations {
        corners: obs.corners.clone(),
        side_points: obs
            .side_points
            .iter()
            .map(|&(side, p)| (side, moved(side, p)))
            .collect(),
    };
    fit_rigid_pose(camera, corners_mm, &moved_obs, fit.pose)?
        .pose
        .table_from_undistorted(camera)
}

/// Sides read inside their side face, and how far inside the top's edge such a
/// reading may lie (mm): a rim or bevel darker toward the edge pulls it in by one
/// amount along the whole side.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RimPull {
    /// Per side: its edge points were read inside a side face (at the top's own edge).
    pub sides: [bool; 4],
    /// The most a rim or bevel may pull such a reading in (mm on the table).
    pub at_most_mm: f64,
}

/// Per grid point, how far (mm) the calibration moves if the sides read inside a
/// side face were pulled in by a rim: an offset of a whole side, in one direction
/// only (a rim shades the top toward its edge, so the reading falls inside it,
/// never outside), that neither the points' scatter nor the stretches' spread sees.
/// With one face in view that side only judges the fit and this is nothing; with
/// two, both face sides place the camera with the two clear ones, and a pull on
/// them moves the table (on our two-face looks the table 0.97–1.90 mm off while the
/// claim without this said 0.72–1.34). Each pulled side's points are moved outward
/// on the table by `at_most_mm`, alone and all together (the pulls are unknown
/// between nothing and that), the pose fitted again, and the largest move per point
/// kept: a bound, not a spread. `None` when a fit fails.
fn rim_pull_uncertainty_mm(
    camera: &CameraIntrinsics,
    fit: &PoseFit,
    corners_mm: &[Point2<f64>],
    obs: &PoseObservations,
    grid: &[Point2<f64>],
    rim: &RimPull,
) -> Option<Vec<f64>> {
    let mut worst = vec![0.0; grid.len()];
    let pulled: Vec<usize> = (0..corners_mm.len().min(4))
        .filter(|&k| rim.sides[k] && obs.side_points.iter().any(|(side, _)| *side == k))
        .collect();
    if pulled.is_empty() || rim.at_most_mm <= 0.0 {
        return Some(worst);
    }
    let to_table = fit.pose.table_from_undistorted(camera)?;
    let image_from_table = to_table.inverse();
    let seen: Vec<Point2<f64>> = grid.iter().map(|&p| image_from_table.apply(p)).collect();
    // Each pulled side alone, then all of them: the extreme ends of the pulls' box
    // (a move is nearly linear in the pulls, so its largest is at a vertex).
    let mut sets: Vec<Vec<usize>> = pulled.iter().map(|&k| vec![k]).collect();
    if pulled.len() > 1 {
        sets.push(pulled.clone());
    }
    for set in sets {
        let moved = refit_with_sides_moved(camera, fit, corners_mm, obs, |k, p| {
            if !set.contains(&k) {
                return p;
            }
            let (a, b) = (corners_mm[k], corners_mm[(k + 1) % corners_mm.len()]);
            let along = (b - a).normalize();
            // Counter-clockwise seen from above: outside is right of a -> b.
            let outward = nalgebra::Vector2::new(along.y, -along.x);
            image_from_table.apply(to_table.apply(p) + outward * rim.at_most_mm)
        })?;
        for ((w, &px), p) in worst.iter_mut().zip(&seen).zip(grid) {
            *w = f64::max(*w, (moved.apply(px) - p).norm());
        }
    }
    worst.iter().all(|v| v.is_finite()).then_some(worst)
}

/// Per grid point, the 3-sigma radius (mm) the fit's covariance leaves.
fn edge_uncertainty_mm(
    camera: &CameraIntrinsics,
    fit: &PoseFit,
    grid: &[Point2<f64>],
    correlation: f64,
) -> Option<Vec<f64>> {
    let h0 = fit.pose.table_from_undistorted(camera)?;
    let cov = fit.covariance * correlation.max(1.0);
    let image_from_table = h0.inverse();
    // The maps of the nudged poses do not depend on the point: made once.
    let steps: Vec<(f64, Homography, Homography)> = fit
        .pose
        .central_steps()
        .iter()
        .map(|(h, plus, minus)| {
            Some((
                *h,
                plus.table_from_undistorted(camera)?,
                minus.table_from_undistorted(camera)?,
            ))
        })
        .collect::<Option<_>>()?;
    let out: Vec<f64> = grid
        .iter()
        .map(|&p| {
            let px = image_from_table.apply(p);
            // d(table point seen at px)/d(pose parameters), numerically.
            let mut jac = nalgebra::Matrix2x6::<f64>::zeros();
            for (k, (h, plus, minus)) in steps.iter().enumerate() {
                let (a, b) = (plus.apply(px), minus.apply(px));
                jac[(0, k)] = (a.x - b.x) / (2.0 * h);
                jac[(1, k)] = (a.y - b.y) / (2.0 * h);
            }
            let c2 = jac * cov * jac.transpose();
            let largest = nalgebra::SymmetricEigen::new(c2)
                .eigenvalues
                .iter()
                .copied()
                .fold(0.0, f64::max);
            3.0 * largest.max(0.0).sqrt()
        })
        .collect();
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// The [`UncertaintyMap`] of a fitted pose: the edge part as
/// [`worst_position_uncertainty_mm`] computes it, per point, with each side's
/// possible offset as a whole in quadrature (`side_offset_uncertainty_mm`), and the
/// sides read inside a face possibly pulled in by a rim (`rim`,
/// `rim_pull_uncertainty_mm`), in quadrature too; the intrinsics' part by
/// moving each doubtful parameter by its 3 sigma each way, undistorting the same edge
/// observations (`obs`, undistorted with `camera`) with the moved camera, fitting the
/// pose again, and seeing where the pixel at which the fitted calibration sees each
/// grid point lands. `None` when a map is degenerate or a fit fails.
pub fn position_uncertainty_map(
    camera: &CameraIntrinsics,
    fit: &PoseFit,
    corners_mm: &[Point2<f64>],
    obs: &PoseObservations,
    correlation: f64,
    doubts: &[IntrinsicDoubt],
    rim: &RimPull,
) -> Option<UncertaintyMap> {
    let grid = uncertainty_grid(corners_mm);
    let scatter_mm = edge_uncertainty_mm(camera, fit, &grid, correlation)?;
    let offsets_mm = side_offset_uncertainty_mm(camera, fit, corners_mm, obs, &grid)?;
    let pull_mm = rim_pull_uncertainty_mm(camera, fit, corners_mm, obs, &grid, rim)?;
    let edges_mm: Vec<f64> = scatter_mm
        .iter()
        .zip(&offsets_mm)
        .zip(&pull_mm)
        .map(|((a, b), c)| a.hypot(*b).hypot(*c))
        .collect();
    let image_from_table = fit.pose.table_from_undistorted(camera)?.inverse();
    let raw: Vec<Point2<f64>> = grid
        .iter()
        .map(|&p| camera.distort_pixel(image_from_table.apply(p)))
        .collect();
    let mut sum_sq = vec![0.0; grid.len()];
    for doubt in doubts {
        let mut seen = vec![];
        for sign in [1.0, -1.0] {
            let moved = doubt.applied(camera, sign * doubt.three_sigma);
            let again = |p: Point2<f64>| moved.undistort_pixel(camera.distort_pixel(p));
            let moved_obs = PoseObservations {
                corners: obs.corners.iter().map(|&(i, p)| (i, again(p))).collect(),
                side_points: obs
                    .side_points
                    .iter()
                    .map(|&(k, p)| (k, again(p)))
                    .collect(),
            };
            let refit = fit_rigid_pose(&moved, corners_mm, &moved_obs, fit.pose)?;
            let h = refit.pose.table_from_undistorted(&moved)?;
            seen.push(
                raw.iter()
                    .map(|&px| h.apply(moved.undistort_pixel(px)))
                    .collect::<Vec<_>>(),
            );
        }
        for (s, (a, b)) in sum_sq.iter_mut().zip(seen[0].iter().zip(&seen[1])) {
            *s += ((a - b) / 2.0).norm_squared();
        }
    }
    let intrinsics_mm: Vec<f64> = sum_sq.into_iter().map(f64::sqrt).collect();
    intrinsics_mm
        .iter()
        .all(|v| v.is_finite())
        .then_some(UncertaintyMap {
            points_mm: grid,
            edges_mm,
            intrinsics_mm,
        })
}

impl TableCalibration {
    /// An undistorted pixel to table mm.
    pub fn table_from_undistorted_pixel(&self, px: Point2<f64>) -> Point {
        self.table_from_undistorted.apply(px)
    }

    /// Table mm to the undistorted pixel.
    pub fn undistorted_pixel_from_table(&self, p: Point) -> Point2<f64> {
        self.table_from_undistorted.inverse().apply(p)
    }

    /// Where the camera's centre is in table mm: `x`, `y`, and its height above the
    /// table plane. Items stand up from the table (a tag is millimetres thick), and
    /// their top faces appear shifted away from the camera's foot point by
    /// `height / (camera height - height)`; this is what undoes it. `None` when the
    /// homography is degenerate.
    pub fn camera_position_mm(&self) -> Option<nalgebra::Point3<f64>> {
        let (rot, t) = plane_pose(&self.camera, &self.table_from_undistorted)?;
        let c = -(rot.transpose() * t);
        (c.iter().all(|v| v.is_finite()) && c.z.abs() > 1.0)
            .then(|| nalgebra::Point3::new(c.x, c.y, c.z.abs()))
    }

    /// The axis-aligned bounds of the table polygon, `(min, max)` in mm.
    pub fn bounds_mm(&self) -> (Point, Point) {
        let xs = self.file.corners_mm.iter().map(|c| c[0]);
        let ys = self.file.corners_mm.iter().map(|c| c[1]);
        (
            Point::new(
                xs.clone().fold(f64::INFINITY, f64::min),
                ys.clone().fold(f64::INFINITY, f64::min),
            ),
            Point::new(
                xs.fold(f64::NEG_INFINITY, f64::max),
                ys.fold(f64::NEG_INFINITY, f64::max),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_homographys_area_scale_is_its_jacobians_determinant() {
        let h = Homography::from_rows([[1.2, 0.1, 30.0], [-0.05, 0.9, 10.0], [4e-4, 9e-4, 1.0]])
            .expect("invertible");
        let p = Point2::new(300.0, 200.0);
        let e = 1e-4;
        let d = |dx: f64, dy: f64| {
            let step = nalgebra::Vector2::new(dx, dy);
            let (a, b) = (h.apply(p + step), h.apply(p - step));
            (a - b) / (2.0 * e)
        };
        let (du, dv) = (d(e, 0.0), d(0.0, e));
        let numeric = (du.x * dv.y - du.y * dv.x).abs();
        let closed = h.area_scale_at(p);
        assert!(
            (closed - numeric).abs() < 1e-6 * numeric,
            "{closed} vs {numeric}"
        );
        // The inverse map shrinks what the map enlarges.
        let back = h.inverse().area_scale_at(h.apply(p));
        assert!((closed * back - 1.0).abs() < 1e-9, "{closed} x {back}");
    }

    fn camera() -> CameraIntrinsics {
        CameraIntrinsics {
            image_size: [1280, 720],
            camera_matrix: [[900.0, 0.0, 640.0], [0.0, 900.0, 360.0], [0.0, 0.0, 1.0]],
            dist_coeffs: [-0.2, 0.05, 0.001, -0.001, 0.0],
            rms_px: 0.0,
            views: 0,
            per_view_rms_px: vec![],
            view_names: vec![],
        }
    }

    #[test]
    fn undistort_inverts_distort() {
        let cam = camera();
        for &(u, v) in &[
            (10.0, 10.0),
            (640.0, 360.0),
            (1200.0, 700.0),
            (300.0, 500.0),
        ] {
            let p = Point2::new(u, v);
            let back = cam.distort_pixel(cam.undistort_pixel(p));
            assert!((back - p).norm() < 1e-6, "{p:?} -> {back:?}");
        }
    }

    /// A camera 1.1 m above a point beside the table, tilted toward it: the position
    /// comes back from the homography alone (either sign of its scale).
    #[test]
    fn camera_position_comes_back_from_the_homography() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        let centre = nalgebra::Vector3::new(480.0, -420.0, 1100.0);
        let tilt = 30f64.to_radians();
        // Camera axes in table coordinates: x along table +x, z (view) tilted toward +y.
        let x_axis = nalgebra::Vector3::new(1.0, 0.0, 0.0);
        let z_axis = nalgebra::Vector3::new(0.0, tilt.sin(), -tilt.cos());
        let y_axis = z_axis.cross(&x_axis);
        let cam_from_table =
            Matrix3::from_rows(&[x_axis.transpose(), y_axis.transpose(), z_axis.transpose()]);
        let t = -(cam_from_table * centre);
        let mut img_from_table = Matrix3::zeros();
        img_from_table.set_column(0, &cam_from_table.column(0));
        img_from_table.set_column(1, &cam_from_table.column(1));
        img_from_table.set_column(2, &t);
        for sign in [1.0, -1.0] {
            let h = Homography::from_matrix(cam.matrix() * img_from_table * sign).unwrap();
            let file = TableFile {
                corners_mm: vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 700.0], [0.0, 700.0]],
                image_corners_px: vec![],
                homography: h.inverse().rows(),
                camera: cam.clone(),
                reprojection_error_mm: 0.0,
            };
            let cal = TableCalibration::from_file(file, "test").unwrap();
            let got = cal.camera_position_mm().unwrap();
            assert!((got.coords - centre).norm() < 1e-6, "{got:?}");
        }
    }

    #[test]
    fn singular_homography_is_refused() {
        assert!(
            Homography::from_rows([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]).is_none()
        );
        let h = Homography::from_rows([[2.0, 0.0, 5.0], [0.0, 3.0, 1.0], [0.0, 0.0, 1.0]]).unwrap();
        let p = Point2::new(4.0, 7.0);
        assert!((h.inverse().apply(h.apply(p)) - p).norm() < 1e-12);
    }

    #[test]
    fn dlt_recovers_a_projective_map() {
        let h = Homography::from_rows([[1.2, 0.1, 30.0], [-0.05, 0.9, 12.0], [1e-4, 2e-4, 1.0]])
            .unwrap();
        let src: Vec<Point2<f64>> = [
            (0.0, 0.0),
            (1000.0, 0.0),
            (1000.0, 700.0),
            (0.0, 700.0),
            (420.0, 313.0),
        ]
        .iter()
        .map(|&(x, y)| Point2::new(x, y))
        .collect();
        let dst: Vec<Point2<f64>> = src.iter().map(|&p| h.apply(p)).collect();
        let fit = Homography::from_correspondences(&src[..4], &dst[..4]).unwrap();
        for &p in &src {
            assert!((fit.apply(p) - h.apply(p)).norm() < 1e-6);
        }
        let collinear: Vec<Point2<f64>> = (0..4)
            .map(|i| Point2::new(i as f64, 2.0 * i as f64))
            .collect();
        assert!(Homography::from_correspondences(&collinear, &dst[..4]).is_none());
    }

    #[test]
    fn line_fit_and_intersection() {
        let pts: Vec<Point2<f64>> = (0..50)
            .map(|i| Point2::new(i as f64, 3.0 + 0.5 * i as f64))
            .collect();
        let mut noisy = pts.clone();
        noisy.push(Point2::new(10.0, 40.0));
        let (line, kept) = Line2::fit_robust(&noisy, 0.5).unwrap();
        assert_eq!(kept.len(), 50);
        for p in &pts {
            assert!(line.distance(*p).abs() < 1e-9);
        }
        let vertical = Line2::fit(&[Point2::new(7.0, 0.0), Point2::new(7.0, 9.0)]).unwrap();
        let x = line.intersect(&vertical).unwrap();
        assert!((x - Point2::new(7.0, 6.5)).norm() < 1e-9);
    }

    #[test]
    fn coverage_counts_by_cell() {
        let pts = [
            Point2::new(1.0, 1.0),
            Point2::new(1279.0, 719.0),
            Point2::new(640.0, 360.0),
            Point2::new(-1.0, 5.0),
        ];
        let g = coverage_grid(&pts, [1280, 720]);
        assert_eq!(g, [[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
        assert_eq!(
            sparse_cells(&[[8, 8, 8], [8, 8, 8], [8, 1, 8]]),
            vec!["bottom"]
        );
    }

    /// A camera looking down at a 1000x700 table with a tilt: the pixel corners
    /// are ordered with the W side first, whatever order they come in.
    #[test]
    fn corners_are_ordered_from_bottom_left_with_w_first() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        // Pose: table 2 m away, tilted 30° about the image x axis, rotated 90° so that
        // the long side runs up the image.
        let (w, h) = (1000.0, 700.0);
        let tilt = 30f64.to_radians();
        let project = |x: f64, y: f64| {
            // Table (x, y) -> camera: x runs up the image (-y_cam), y runs left (-x_cam).
            let (xc, yc0) = (-(y - h / 2.0), -(x - w / 2.0));
            let (yc, zc) = (yc0 * tilt.cos(), 2000.0 + yc0 * tilt.sin());
            Point2::new(1000.0 * xc / zc + 640.0, 1000.0 * yc / zc + 360.0)
        };
        let truth = [
            project(0.0, 0.0),
            project(w, 0.0),
            project(w, h),
            project(0.0, h),
        ];
        let shuffled = [truth[2], truth[0], truth[3], truth[1]];
        let (ordered, aspect) = order_table_corners(&shuffled, &cam, w, h).unwrap();
        assert!((aspect - w / h).abs() < 1e-6, "aspect {aspect}");
        // Corner 0 is the one nearest bottom-left among the two with W first: truth[0] or truth[2].
        let expected = if (truth[0] - Point2::new(0.0, 720.0)).norm()
            < (truth[2] - Point2::new(0.0, 720.0)).norm()
        {
            [truth[0], truth[1], truth[2], truth[3]]
        } else {
            [truth[2], truth[3], truth[0], truth[1]]
        };
        for (a, b) in ordered.iter().zip(&expected) {
            assert!((a - b).norm() < 1e-9, "{ordered:?} vs {expected:?}");
        }
        let table_from_px =
            Homography::from_correspondences(&ordered, &rectangle_corners_mm(w, h)).unwrap();
        let residual =
            rigid_plane_residual_mm(&cam, &table_from_px, &rectangle_corners_mm(w, h)).unwrap();
        assert!(residual < 1e-6, "{residual}");
        // A wrong size is caught by the rigid check.
        let wrong =
            Homography::from_correspondences(&ordered, &rectangle_corners_mm(w, 500.0)).unwrap();
        assert!(
            rigid_plane_residual_mm(&cam, &wrong, &rectangle_corners_mm(w, 500.0)).unwrap() > 5.0
        );
    }

    /// A rigid camera looking at a 1000x700 table from `centre` (table mm) toward the
    /// table's middle.
    fn pose_from(centre: Vector3<f64>) -> RigidPose {
        let z = (Vector3::new(500.0, 350.0, 0.0) - centre).normalize();
        RigidPose::looking_along(centre, z, Vector3::new(1.0, 0.0, 0.0))
    }

    /// Points along each side of the table as the pose sees them (undistorted px).
    fn side_points(cam: &CameraIntrinsics, pose: &RigidPose) -> PoseObservations {
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let mut obs = PoseObservations::default();
        for k in 0..4 {
            let (a, b) = (rect[k], rect[(k + 1) % 4]);
            for i in 1..40 {
                let p = a + (b - a) * (i as f64 / 40.0);
                obs.side_points
                    .push((k, pose.undistorted_pixel(cam, p.x, p.y, 0.0).unwrap()));
            }
        }
        obs
    }

    #[test]
    fn rigid_pose_comes_back_from_sides_or_corners() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        let truth = pose_from(Vector3::new(450.0, -500.0, 1200.0));
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let start = truth.nudged(
            Vector3::new(0.02, -0.03, 0.01),
            Vector3::new(30.0, -20.0, 50.0),
        );
        let corners: Vec<Point2<f64>> = rect
            .iter()
            .map(|c| truth.undistorted_pixel(&cam, c.x, c.y, 0.0).unwrap())
            .collect();
        let by_corners = PoseObservations {
            corners: corners.iter().copied().enumerate().collect(),
            side_points: vec![],
        };
        for obs in [side_points(&cam, &truth), by_corners] {
            let fit = fit_rigid_pose(&cam, &rect, &obs, start).unwrap();
            assert!(fit.rms_px < 1e-6, "{}", fit.rms_px);
            assert!((fit.pose.camera_centre_mm() - truth.camera_centre_mm()).norm() < 1e-3);
            let offsets = corner_offsets_mm(&cam, &fit.pose, &rect, &corners).unwrap();
            assert!(offsets.iter().all(|&d| d < 1e-6), "{offsets:?}");
        }
        // Too few residuals for 6 parameters.
        let three = PoseObservations {
            corners: vec![(0, corners[0]), (1, corners[1])],
            side_points: vec![(0, corners[0])],
        };
        assert!(fit_rigid_pose(&cam, &rect, &three, start).is_none());
    }

    /// One side found 5 px outside the top's edge (its side face) cannot be fitted by
    /// a rigid camera: the fit spreads the disagreement over the corners and leaves
    /// one over the limit; the doubt names the one furthest off.
    #[test]
    fn a_side_found_on_the_face_leaves_its_corners_off() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        let truth = pose_from(Vector3::new(450.0, -500.0, 1200.0));
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let mut obs = side_points(&cam, &truth);
        let shifted = |p: Point2<f64>| p + nalgebra::Vector2::new(0.0, 5.0);
        for (k, p) in obs.side_points.iter_mut() {
            if *k == 0 {
                *p = shifted(*p);
            }
        }
        let seen: Vec<Point2<f64>> = rect
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = truth.undistorted_pixel(&cam, c.x, c.y, 0.0).unwrap();
                if i <= 1 {
                    shifted(p)
                } else {
                    p
                }
            })
            .collect();
        let start = RigidPose::from_homography(
            &cam,
            &Homography::from_correspondences(&seen, &rect).unwrap(),
        )
        .unwrap();
        let fit = fit_rigid_pose(&cam, &rect, &obs, start).unwrap();
        let offsets = corner_offsets_mm(&cam, &fit.pose, &rect, &seen).unwrap();
        let doubt = judge_table_fit(&offsets, 1000.0 / 700.0, 1000.0 / 700.0).unwrap_err();
        let furthest = (0..4).max_by(|&a, &b| offsets[a].total_cmp(&offsets[b]));
        assert_eq!(Some(doubt.corner), furthest, "{offsets:?}");
        assert!(doubt.offset_mm > MAX_CORNER_OFFSET_MM, "{offsets:?}");
        let line = doubt.to_string();
        assert!(!line.contains('\n'));
        assert!(
            line.contains(&format!("corner {} is doubtful", doubt.corner)),
            "{line}"
        );
    }

    #[test]
    fn a_fit_is_judged_by_its_worst_corner_and_its_aspect() {
        let given = 1000.0 / 700.0;
        assert!(judge_table_fit(&[0.3, 1.9, 0.2, 0.5], given * 1.009, given).is_ok());
        let doubt = judge_table_fit(&[0.3, 2.1, 0.2, 0.5], given, given).unwrap_err();
        assert_eq!((doubt.corner, doubt.offset_mm), (1, 2.1));
        assert!(doubt
            .to_string()
            .contains("corner 1 is doubtful, 2.1 mm from where"));
        assert!(!doubt.to_string().contains("W/H"));
        let doubt = judge_table_fit(&[0.3, 0.4, 1.2, 0.5], given * 1.02, given).unwrap_err();
        let given_corners = TableDoubt {
            corners_given: true,
            ..doubt.clone()
        }
        .to_string();
        assert!(
            given_corners.contains("check the corners given")
                && !given_corners.contains("or give the corners"),
            "{given_corners}"
        );
        assert!(
            doubt
                .to_string()
                .contains("or give the corners with --corners"),
            "{doubt}"
        );
        assert_eq!(doubt.corner, 2);
        let line = doubt.to_string();
        assert!(line.contains("corner 2 is doubtful, the table's W/H seen is 1.4571, not 1.4286 (2.0 %, limit 1 %)"), "{line}");
        assert!(judge_table_fit(&[0.3, f64::NAN, 0.2, 0.5], given, given).is_err());
        assert!(judge_table_fit(&[0.3, 0.3, 0.2, 0.5], f64::NAN, given).is_err());
    }

    #[test]
    fn side_faces_show_where_the_camera_stands_outside() {
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let above = pose_from(Vector3::new(450.0, 300.0, 1200.0));
        assert_eq!(sides_showing_face(&above, &rect), vec![false; 4]);
        let front_right = pose_from(Vector3::new(1100.0, -400.0, 1200.0));
        assert_eq!(
            sides_showing_face(&front_right, &rect),
            vec![true, true, false, false]
        );
        let behind = pose_from(Vector3::new(500.0, 1000.0, 1200.0));
        assert_eq!(
            sides_showing_face(&behind, &rect),
            vec![false, false, true, false]
        );
    }

    /// The worst-case position error grows with the edge points' scatter, and is
    /// nothing for a perfect fit.
    #[test]
    fn uncertainty_follows_the_scatter() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        let truth = pose_from(Vector3::new(450.0, -500.0, 1200.0));
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let exact = side_points(&cam, &truth);
        let fit = fit_rigid_pose(&cam, &rect, &exact, truth).unwrap();
        assert!(worst_position_uncertainty_mm(&cam, &fit, &rect, 1.0).unwrap() < 1e-3);
        let mut worst = vec![];
        for amplitude in [0.3, 1.0] {
            let mut noisy = exact.clone();
            for (i, (_, p)) in noisy.side_points.iter_mut().enumerate() {
                // A deterministic zig-zag across the side.
                p.y += if i % 2 == 0 { amplitude } else { -amplitude };
            }
            let fit = fit_rigid_pose(&cam, &rect, &noisy, truth).unwrap();
            worst.push(worst_position_uncertainty_mm(&cam, &fit, &rect, 1.0).unwrap());
        }
        assert!(worst[0] > 0.01 && worst[1] > 2.5 * worst[0], "{worst:?}");
    }

    /// The intrinsics' share of the map grows with their doubt and is nothing
    /// without one; the edge share does not depend on it; a chessboard's standard
    /// deviations and a no-chessboard lens's keys both become doubts.
    #[test]
    fn intrinsics_doubt_widens_the_uncertainty_map() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        let truth = pose_from(Vector3::new(450.0, -500.0, 1200.0));
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let mut obs = side_points(&cam, &truth);
        for (i, (_, p)) in obs.side_points.iter_mut().enumerate() {
            p.y += if i % 2 == 0 { 0.3 } else { -0.3 };
        }
        let fit = fit_rigid_pose(&cam, &rect, &obs, truth).unwrap();
        let map = |doubts: &[IntrinsicDoubt]| {
            position_uncertainty_map(&cam, &fit, &rect, &obs, 1.0, doubts, &RimPull::default())
                .unwrap()
        };
        let none = map(&[]);
        assert_eq!(none.points_mm.len(), UNCERTAINTY_GRID * UNCERTAINTY_GRID);
        assert_eq!(none.worst_intrinsics_mm(), 0.0);
        let edges = none.worst_edges_mm();
        // The edges' part is the scatter's and the whole-side term in quadrature:
        // never less than the scatter's (0.56 mm for 0.46 with this zig-zag).
        let scatter = worst_position_uncertainty_mm(&cam, &fit, &rect, 1.0).unwrap();
        assert!(
            edges >= scatter && edges < 2.0 * scatter,
            "{edges} vs {scatter}"
        );
        let focal = |px| IntrinsicDoubt {
            parameter: Intrinsic::Focal,
            three_sigma: px,
        };
        let small = map(&[focal(5.0)]);
        let large = map(&[focal(20.0)]);
        let k1 = map(&[
            focal(20.0),
            IntrinsicDoubt {
                parameter: Intrinsic::Dist(0),
                three_sigma: 0.02,
            },
        ]);
        assert!(small.worst_intrinsics_mm() > 0.01, "{small:?}");
        assert!(
            large.worst_intrinsics_mm() > 3.0 * small.worst_intrinsics_mm(),
            "{} vs {}",
            large.worst_intrinsics_mm(),
            small.worst_intrinsics_mm()
        );
        assert!(k1.worst_intrinsics_mm() > large.worst_intrinsics_mm());
        assert!(large.worst_mm() > small.worst_mm() && small.worst_mm() > none.worst_mm());
        assert!((large.worst_edges_mm() - edges).abs() < 1e-12);

        let board = CameraDoubtKeys {
            intrinsics_std_dev: Some(vec![1.0, 1.0, 0.5, 0.5, 0.001, 0.0, 0.0, 0.0, 0.0]),
            ..Default::default()
        };
        let d = board.doubts();
        assert_eq!(d.len(), 5, "{d:?}");
        assert_eq!(d[0].parameter, Intrinsic::Fx);
        assert!((d[0].three_sigma - 3.0).abs() < 1e-12);
        let lens: CameraDoubtKeys = serde_json::from_str(
            r#"{"focal_uncertainty_px": 12.0, "k1_uncertainty": 0.003, "principal_point_doubt_px": 12.8, "views": 1}"#,
        )
        .unwrap();
        let kinds: Vec<Intrinsic> = lens.doubts().iter().map(|d| d.parameter).collect();
        assert_eq!(
            kinds,
            [
                Intrinsic::Focal,
                Intrinsic::Dist(0),
                Intrinsic::Cx,
                Intrinsic::Cy
            ]
        );
        assert!(CameraDoubtKeys::default().doubts().is_empty());

        // k2 and k3 that compensate each other (correlation -0.98): with the
        // covariance, less than the same deviations taken as independent.
        let (s2, s3, rho) = (0.0076, 0.015, -0.98);
        let mut cov = [[0.0; 9]; 9];
        cov[5][5] = s2 * s2;
        cov[8][8] = s3 * s3;
        cov[5][8] = rho * s2 * s3;
        cov[8][5] = rho * s2 * s3;
        let joint = CameraDoubtKeys {
            intrinsics_covariance: Some(cov),
            ..Default::default()
        };
        let apart = CameraDoubtKeys {
            intrinsics_std_dev: Some(vec![0.0, 0.0, 0.0, 0.0, 0.0, s2, 0.0, 0.0, s3]),
            ..Default::default()
        };
        assert_eq!(joint.doubts().len(), 2, "{:?}", joint.doubts());
        assert!(matches!(joint.doubts()[0].parameter, Intrinsic::Along(_)));
        let (joint, apart) = (map(&joint.doubts()), map(&apart.doubts()));
        assert!(
            joint.worst_intrinsics_mm() > 0.0
                && joint.worst_intrinsics_mm() < 0.8 * apart.worst_intrinsics_mm(),
            "{} vs {}",
            joint.worst_intrinsics_mm(),
            apart.worst_intrinsics_mm()
        );
    }

    /// Two sides read inside their faces and pulled in by a rim, 2 mm along their
    /// whole length, and the fit takes them as they are: the table is off by more
    /// than the points' scatter and the stretches' spread claim (nothing here, the
    /// points lying exactly on the pulled sides). Counting the sides read inside a
    /// face as pulled up to 3 mm, the claim covers the error at every point.
    #[test]
    fn a_rims_pull_on_the_face_sides_is_in_the_claim() {
        let cam = CameraIntrinsics::pinhole([1280, 720], 1000.0);
        // Beyond sides 0 and 1: their faces show.
        let truth = pose_from(Vector3::new(1100.0, -400.0, 1200.0));
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let to_pixel = truth.table_from_undistorted(&cam).unwrap().inverse();
        let mut obs = side_points(&cam, &truth);
        let to_table = truth.table_from_undistorted(&cam).unwrap();
        for (k, p) in obs.side_points.iter_mut() {
            let inward = match *k {
                0 => nalgebra::Vector2::new(0.0, 2.0),
                1 => nalgebra::Vector2::new(-2.0, 0.0),
                _ => continue,
            };
            *p = to_pixel.apply(to_table.apply(*p) + inward);
        }
        let fit = fit_rigid_pose(&cam, &rect, &obs, truth).unwrap();
        let ours = fit.pose.table_from_undistorted(&cam).unwrap();
        let claim = |rim: &RimPull| {
            position_uncertainty_map(&cam, &fit, &rect, &obs, 1.0, &[], rim)
                .unwrap()
                .total_mm()
        };
        let without = claim(&RimPull::default());
        let with = claim(&RimPull {
            sides: [true, true, false, false],
            at_most_mm: 3.0,
        });
        let grid = uncertainty_grid(&rect);
        let errors: Vec<f64> = grid
            .iter()
            .map(|&p| (ours.apply(to_pixel.apply(p)) - p).norm())
            .collect();
        let worst = errors.iter().copied().fold(0.0, f64::max);
        assert!(
            worst > 1.0,
            "the pull moved the table by {worst:.2} mm only"
        );
        let short = |claims: &[f64]| errors.iter().zip(claims).filter(|(e, c)| c < e).count();
        assert!(short(&without) > 0, "{without:?}");
        assert_eq!(short(&with), 0, "errors {errors:.2?}, claimed {with:.2?}");
    }

    proptest::proptest! {
        /// From any camera position above and around the table, and a start off by
        /// a few degrees and centimetres, the fit to the sides finds the true pose.
        #[test]
        fn rigid_fit_recovers_any_pose(
            cx in -300.0..1300.0f64,
            cy in -600.0..1000.0f64,
            height in 900.0..2000.0f64,
            w in proptest::array::uniform3(-0.03..0.03f64),
            dt in proptest::array::uniform3(-40.0..40.0f64),
        ) {
            let cam = CameraIntrinsics::pinhole([1920, 1080], 1100.0);
            let truth = pose_from(Vector3::new(cx, cy, height));
            let rect = rectangle_corners_mm(1000.0, 700.0);
            let start = truth.nudged(Vector3::from(w), Vector3::from(dt));
            let fit = fit_rigid_pose(&cam, &rect, &side_points(&cam, &truth), start).unwrap();
            proptest::prop_assert!(fit.rms_px < 1e-6);
            proptest::prop_assert!((fit.pose.camera_centre_mm() - truth.camera_centre_mm()).norm() < 1e-2);
        }
    }
}
