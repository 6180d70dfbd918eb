//! The camera's lens from the table itself, with no chessboard (`calibrate table
//! --no-chessboard`): the focal length `f` (square pixels, `fx = fy`) and the first
//! radial distortion term `k1`, the principal point at the image centre and the other
//! distortion terms zero. Pure maths, no OpenCV: finding the table's edges in a frame
//! is `vision::calibrate`.
//!
//! - [`focal_from_homographies`]: the closed form that starts the fit (Zhang's two
//!   constraints on the image of the absolute conic, one view of a plane, with the
//!   principal point known and square pixels: the table's sides are square to each
//!   other and its `W` and `H` are known, so the homography's first two columns,
//!   carried back through `K`, must be orthogonal and of equal length). A view of
//!   the table square-on (image plane parallel to the table) has no vanishing points,
//!   and gives no focal length: `None`.
//! - [`fit_focal_and_k1`]: Levenberg–Marquardt over `f`, `k1` and a rigid pose per
//!   view, on the distances of edge points (distorted pixels, undistorted with the
//!   `f` and `k1` being fitted) from the projected sides. The table's known rectangle
//!   fixes `f`; its straight sides, sampled along their whole length, fix `k1`.
//!   Refuses ([`LensError::NotDetermined`]) when the edges do not pin `f` down to
//!   [`MAX_FOCAL_UNCERTAINTY`]; says how far `f` moves if the principal point is
//!   not at the centre.
//!
//! Uses: calibration (CameraIntrinsics, RigidPose, Line2).

use super::{CameraIntrinsics, Line2, RigidPose};
use nalgebra::{DMatrix, DVector, Matrix3, Point2, Vector3};

/// The most the focal length's 3-sigma uncertainty (from the fit's covariance,
/// widened for neighbouring edge samples that share blur) may be, as a fraction of
/// `f`, before the lens is refused as not determined; also the share of the
/// principal point's doubt above which the command warns.
pub const MAX_FOCAL_UNCERTAINTY: f64 = 0.02;

/// The focal lengths a fit may end at, per image width: a horizontal field of view
/// from about 3° to 157°. Beyond, the edges were not the table's.
pub const MIN_FOCAL_PER_WIDTH: f64 = 0.1;
pub const MAX_FOCAL_PER_WIDTH: f64 = 20.0;

/// Under this angle between the optical axis and the table's normal (degrees) the
/// refusal says the table is seen square-on.
pub const SQUARE_ON_DEG: f64 = 10.0;

/// Why the lens cannot be found from the table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LensError {
    #[error("the focal length is not determined: the table is seen square-on (the camera's axis {tilt_deg:.1}° from the table's normal), and a view square to a plane gives no focal length; tilt the camera so that it looks at the table at 20° or more from straight down, or calibrate with a chessboard")]
    SquareOn { tilt_deg: f64 },
    #[error("the focal length is not determined: {focal_px:.0} px ± {uncertainty_pct:.1} % (3 sigma, limit {limit_pct:.0} %) with the camera's axis {tilt_deg:.1}° from the table's normal and the edges fitted to {rms_px:.2} px RMS; tilt the camera further from straight down, check the table's outline in the picture, or calibrate with a chessboard")]
    NotDetermined {
        focal_px: f64,
        uncertainty_pct: f64,
        limit_pct: f64,
        tilt_deg: f64,
        rms_px: f64,
    },
    #[error("too few edge points to fit the lens ({points} for {parameters} parameters)")]
    TooFewPoints { points: usize, parameters: usize },
    #[error("the table's edges fit no plausible lens (the fit ran to a focal length of {focal_px:.1} px, k1 {k1:.4}): check that the whole table top is in view and stands out from the floor, or calibrate with a chessboard")]
    Diverged { focal_px: f64, k1: f64 },
}

/// A camera with square pixels, the principal point at the image centre and only the
/// first radial distortion term.
pub fn camera_with(image_size: [u32; 2], focal_px: f64, k1: f64) -> CameraIntrinsics {
    let mut camera = CameraIntrinsics::pinhole(image_size, focal_px);
    camera.dist_coeffs[0] = k1;
    camera
}

/// The focal length (px) of a camera with square pixels and its principal point at
/// `principal`, from the homographies `image_from_table` (table mm to undistorted
/// pixels) of one or more views of a rectangle whose true size they were made with.
///
/// With `K = [f 0 cx; 0 f cy; 0 0 1]`, `K⁻¹ H = λ [r1 r2 t]`; with the principal
/// point moved to the origin and `w = 1/f²`, `ω = diag(w, w, 1)`:
/// `h1ᵀ ω h2 = 0` (the sides are square) and `h1ᵀ ω h1 = h2ᵀ ω h2` (`W` and `H` are
/// the true lengths). Each is linear in `w`; all views' constraints are solved
/// together in least squares. `None` when `w` comes out not positive or not finite:
/// no vanishing point, as for a view square-on, gives no focal length.
pub fn focal_from_homographies(
    image_from_table: &[Matrix3<f64>],
    principal: Point2<f64>,
    image_size: [u32; 2],
) -> Option<f64> {
    // Pixels scaled to about 1 over the image, so that `w` is about 1 too.
    let s = 0.5 * f64::from(image_size[0]).hypot(f64::from(image_size[1]));
    if s.is_nan() || s <= 0.0 {
        return None;
    }
    let to_unit = Matrix3::new(
        1.0 / s,
        0.0,
        -principal.x / s,
        0.0,
        1.0 / s,
        -principal.y / s,
        0.0,
        0.0,
        1.0,
    );
    let (mut aa, mut ab) = (0.0, 0.0);
    for h in image_from_table {
        let m = to_unit * h;
        let norm = m.norm();
        if !(norm.is_finite() && norm > 0.0) {
            return None;
        }
        let m = m / norm;
        let (h1, h2) = (m.column(0), m.column(1));
        // a * w + b = 0 for each constraint.
        let constraints = [
            (h1[0] * h2[0] + h1[1] * h2[1], h1[2] * h2[2]),
            (
                h1[0] * h1[0] + h1[1] * h1[1] - h2[0] * h2[0] - h2[1] * h2[1],
                h1[2] * h1[2] - h2[2] * h2[2],
            ),
        ];
        for (a, b) in constraints {
            aa += a * a;
            ab += a * b;
        }
    }
    let w = -ab / aa;
    let focal = s / w.sqrt();
    (w > 0.0 && focal.is_finite()).then_some(focal)
}

/// One frame of the table for [`fit_focal_and_k1`]: points measured on its sides in
/// the frame's own (distorted) pixels, side `k` from corner `k` to `k + 1`, and a
/// pose to start from.
#[derive(Debug, Clone)]
pub struct TableView {
    pub side_points_px: Vec<(usize, Point2<f64>)>,
    pub start: RigidPose,
}

/// The lens fitted to the table, with each view's pose.
#[derive(Debug, Clone)]
pub struct LensFit {
    /// `f` and `k1` fitted, principal point at the centre, other terms zero;
    /// `rms_px` the fit's RMS and `views` how many frames it used.
    pub camera: CameraIntrinsics,
    pub poses: Vec<RigidPose>,
    /// RMS of the edge points' distances from the projected sides (undistorted px).
    pub rms_px: f64,
    /// How far `f` may be off (px): its two parts below, in quadrature.
    pub focal_uncertainty_px: f64,
    /// 3-sigma of `f` from the fit's covariance (widened by the correlation given).
    pub focal_statistical_px: f64,
    /// How far `f` moves with the principal point moved by the doubt given.
    pub focal_principal_px: f64,
    /// 3-sigma of `k1` from the fit's covariance.
    pub k1_uncertainty: f64,
    /// Per view, the angle between the optical axis and the table's normal (degrees).
    pub tilt_deg: Vec<f64>,
}

/// Removes the radial distortion `k1` from a pixel of a camera with focal length
/// `f` centred at `c`: the undistorted pixel. Newton's method on the radius
/// (`r_d = r (1 + k1 r²)`); `None` where the lens folds back (no unique radius).
fn undistort(p: Point2<f64>, f: f64, k1: f64, c: Point2<f64>) -> Option<Point2<f64>> {
    let (x, y) = ((p.x - c.x) / f, (p.y - c.y) / f);
    let rd = x.hypot(y);
    if rd == 0.0 {
        return Some(p);
    }
    let mut r = rd;
    for _ in 0..30 {
        let g = r * (1.0 + k1 * r * r) - rd;
        let dg = 1.0 + 3.0 * k1 * r * r;
        if dg.is_nan() || dg <= 1e-6 {
            return None;
        }
        let step = g / dg;
        r -= step;
        if step.abs() < 1e-15 {
            break;
        }
    }
    let scale = r / rd;
    (scale.is_finite() && scale > 0.0)
        .then(|| Point2::new(c.x + f * x * scale, c.y + f * y * scale))
}

/// The residuals (undistorted px) of every view's side points for the parameters
/// (`f`, `k1`, the poses) and the principal point `c`; written to `out`.
fn residuals(
    image_size: [u32; 2],
    c: Point2<f64>,
    corners_mm: &[Point2<f64>],
    views: &[TableView],
    params: &Params,
    out: &mut Vec<f64>,
) -> Option<()> {
    out.clear();
    let (f, k1, poses) = (params.f, params.k1, &params.poses);
    let mut camera = CameraIntrinsics::pinhole(image_size, f);
    camera.camera_matrix[0][2] = c.x;
    camera.camera_matrix[1][2] = c.y;
    let n = corners_mm.len();
    for (view, pose) in views.iter().zip(poses) {
        let projected: Vec<Point2<f64>> = corners_mm
            .iter()
            .map(|p| pose.undistorted_pixel(&camera, p.x, p.y, 0.0))
            .collect::<Option<_>>()?;
        let sides: Vec<Line2> = (0..n)
            .map(|k| Line2::through(projected[k], projected[(k + 1) % n]))
            .collect::<Option<_>>()?;
        for &(k, p) in &view.side_points_px {
            out.push(sides.get(k)?.distance(undistort(p, f, k1, c)?));
        }
    }
    Some(())
}

/// The parameters as a point of the search: `f`, `k1` and each view's pose.
#[derive(Debug, Clone)]
struct Params {
    f: f64,
    k1: f64,
    poses: Vec<RigidPose>,
}

impl Params {
    fn count(&self) -> usize {
        2 + 6 * self.poses.len()
    }

    /// The parameters moved by `d` (f, k1, then per view a turn and a shift).
    fn moved(&self, d: &[f64]) -> Params {
        Params {
            f: self.f + d[0],
            k1: self.k1 + d[1],
            poses: self
                .poses
                .iter()
                .enumerate()
                .map(|(v, p)| {
                    let o = 2 + 6 * v;
                    p.nudged(
                        Vector3::new(d[o], d[o + 1], d[o + 2]),
                        Vector3::new(d[o + 3], d[o + 4], d[o + 5]),
                    )
                })
                .collect(),
        }
    }

    /// Central-difference step per parameter: 1e-6 of `f`, 1e-6 of `k1`, 1e-6 rad,
    /// 1e-6 of the camera's distance.
    fn step(&self, j: usize) -> f64 {
        match j {
            0 => 1e-6 * self.f,
            1 => 1e-6,
            _ => {
                let v = (j - 2) / 6;
                if (j - 2) % 6 < 3 {
                    1e-6
                } else {
                    1e-6 * self.poses[v].translation_mm.norm().max(1.0)
                }
            }
        }
    }
}

/// A converged Levenberg–Marquardt search: where it ended, its cost (sum of
/// squared residuals), the number of residuals and the last Jacobian.
struct Converged {
    params: Params,
    cost: f64,
    points: usize,
    jacobian: DMatrix<f64>,
}

/// Levenberg–Marquardt over `f`, `k1` and the poses from `start`, with the
/// principal point at `c` (numeric derivatives, Marquardt's diagonal damping).
fn search(
    image_size: [u32; 2],
    c: Point2<f64>,
    corners_mm: &[Point2<f64>],
    views: &[TableView],
    start: Params,
) -> Result<Converged, LensError> {
    let mut params = start;
    let np = params.count();
    let points: usize = views.iter().map(|v| v.side_points_px.len()).sum();
    let diverged = |p: &Params| LensError::Diverged {
        focal_px: p.f,
        k1: p.k1,
    };
    let eval = |p: &Params, out: &mut Vec<f64>| residuals(image_size, c, corners_mm, views, p, out);
    let mut r = Vec::with_capacity(points);
    eval(&params, &mut r).ok_or_else(|| diverged(&params))?;
    let mut current: f64 = r.iter().map(|v| v * v).sum();
    let mut jacobian = DMatrix::<f64>::zeros(points, np);
    let (mut plus, mut minus) = (Vec::new(), Vec::new());
    let mut lambda = 1e-3;
    let mut d = vec![0.0; np];
    for _ in 0..200 {
        for j in 0..np {
            let h = params.step(j);
            d.iter_mut().for_each(|v| *v = 0.0);
            d[j] = h;
            eval(&params.moved(&d), &mut plus).ok_or_else(|| diverged(&params))?;
            d[j] = -h;
            eval(&params.moved(&d), &mut minus).ok_or_else(|| diverged(&params))?;
            for (i, (a, b)) in plus.iter().zip(&minus).enumerate() {
                jacobian[(i, j)] = (a - b) / (2.0 * h);
            }
        }
        let jtj = jacobian.transpose() * &jacobian;
        let jtr = jacobian.transpose() * DVector::from_column_slice(&r);
        let mut improved = false;
        for _ in 0..12 {
            let mut a = jtj.clone();
            for k in 0..np {
                a[(k, k)] += lambda * jtj[(k, k)].max(1e-12);
            }
            let Some(step) = a.lu().solve(&(-&jtr)) else {
                lambda *= 10.0;
                continue;
            };
            let candidate = params.moved(step.as_slice());
            let cost = (candidate.f > 0.0)
                .then(|| eval(&candidate, &mut plus))
                .flatten()
                .map(|()| plus.iter().map(|v| v * v).sum::<f64>());
            match cost {
                Some(c) if c < current => {
                    let gain = current - c;
                    params = candidate;
                    current = c;
                    lambda = (lambda / 10.0).max(1e-12);
                    improved = gain > 1e-12 * current.max(1e-12);
                    break;
                }
                _ => lambda *= 10.0,
            }
        }
        eval(&params, &mut r).ok_or_else(|| diverged(&params))?;
        if !improved {
            break;
        }
    }
    let width = f64::from(image_size[0]);
    let usable = params.f.is_finite()
        && (MIN_FOCAL_PER_WIDTH * width..=MAX_FOCAL_PER_WIDTH * width).contains(&params.f)
        && params.f <= crate::limits::MAX_FOCAL_PX
        && params.k1.is_finite()
        && params.k1.abs() < 2.0
        && current.is_finite();
    if !usable {
        return Err(diverged(&params));
    }
    Ok(Converged {
        params,
        cost: current,
        points,
        jacobian,
    })
}

/// The angle between a pose's optical axis and the table's normal (degrees).
fn tilt_of(pose: &RigidPose) -> f64 {
    pose.camera_from_table[(2, 2)]
        .abs()
        .clamp(0.0, 1.0)
        .acos()
        .to_degrees()
}

/// Fits `f`, `k1` and a rigid pose per view to the views' side points
/// (Levenberg–Marquardt from `focal_start`, `k1_start` and each view's start pose,
/// numeric derivatives), the principal point at the image centre.
///
/// How well `f` is known (`focal_uncertainty_px`) has two parts, added in
/// quadrature: the fit's covariance (3 sigma, the residuals' variance widened by
/// `correlation` for residuals that are not independent), and how far `f` moves
/// when the principal point is taken `principal_doubt_px` off the centre, each way
/// along each axis (the centre is assumed, not measured; the nearer the view is to
/// square-on, the more `f` depends on it). Refuses when the first part is over
/// [`MAX_FOCAL_UNCERTAINTY`] of `f`: the edges do not determine it
/// ([`LensError::SquareOn`] when every view, at its start and as fitted, is within
/// [`SQUARE_ON_DEG`] of square-on).
pub fn fit_focal_and_k1(
    image_size: [u32; 2],
    corners_mm: &[Point2<f64>],
    views: &[TableView],
    focal_start: f64,
    k1_start: f64,
    correlation: f64,
    principal_doubt_px: f64,
) -> Result<LensFit, LensError> {
    let start = Params {
        f: focal_start,
        k1: k1_start,
        poses: views.iter().map(|v| v.start).collect(),
    };
    let np = start.count();
    let points: usize = views.iter().map(|v| v.side_points_px.len()).sum();
    if points < 2 * np {
        return Err(LensError::TooFewPoints {
            points,
            parameters: np,
        });
    }
    let centre = Point2::new(
        f64::from(image_size[0]) / 2.0,
        f64::from(image_size[1]) / 2.0,
    );
    // One view seen at a slant is enough to find `f`; a view is square-on only when
    // both its start and its fit say so (a fit to edges found wrong can end anywhere).
    let start_tilt = views.iter().map(|v| tilt_of(&v.start)).fold(0.0, f64::max);
    let fitted = search(image_size, centre, corners_mm, views, start.clone());
    let square_on = |fit_tilt: f64| {
        (start_tilt.max(fit_tilt) < SQUARE_ON_DEG).then(|| LensError::SquareOn {
            tilt_deg: start_tilt.max(fit_tilt),
        })
    };
    let fitted = match fitted {
        Ok(f) => f,
        Err(e) => return Err(square_on(0.0).unwrap_or(e)),
    };
    let Converged {
        params,
        cost,
        points,
        jacobian,
    } = fitted;
    let rms_px = (cost / points as f64).sqrt();
    let tilt_deg: Vec<f64> = params.poses.iter().map(tilt_of).collect();
    let most_tilt = tilt_deg.iter().copied().fold(0.0, f64::max);
    let variance = cost / (points.saturating_sub(np).max(1)) as f64 * correlation.max(1.0);
    let covariance = (jacobian.transpose() * &jacobian).try_inverse();
    let sigma = |k: usize| {
        covariance
            .as_ref()
            .map(|c| 3.0 * (c[(k, k)] * variance).max(0.0).sqrt())
            .filter(|s| s.is_finite())
    };
    let (focal_sigma, k1_sigma) = (sigma(0), sigma(1));
    // The principal point's share: refits from the solution with it moved.
    let mut principal_shift: Option<f64> = Some(0.0);
    if principal_doubt_px > 0.0 {
        for (dx, dy) in [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)] {
            let c = centre + nalgebra::Vector2::new(dx, dy) * principal_doubt_px;
            let moved = search(image_size, c, corners_mm, views, params.clone())
                .ok()
                .map(|m| (m.params.f - params.f).abs());
            principal_shift = principal_shift.zip(moved).map(|(a, b)| a.max(b));
        }
    }
    let focal_uncertainty = focal_sigma
        .zip(principal_shift)
        .map(|(s, p)| s.hypot(p))
        .filter(|u| u.is_finite());
    // Refused when the edges do not pin `f` down; the principal point's share is
    // an assumption's, reported, not refused (the table's positions hardly depend on
    // it: the homography absorbs it).
    let not_determined = focal_sigma.is_none_or(|s| s > MAX_FOCAL_UNCERTAINTY * params.f)
        || focal_uncertainty.is_none();
    if not_determined {
        if let Some(e) = square_on(most_tilt) {
            return Err(e);
        }
        return Err(LensError::NotDetermined {
            focal_px: params.f,
            uncertainty_pct: focal_sigma.map_or(f64::INFINITY, |u| 100.0 * u / params.f),
            limit_pct: 100.0 * MAX_FOCAL_UNCERTAINTY,
            tilt_deg: most_tilt,
            rms_px,
        });
    }
    let mut camera = camera_with(image_size, params.f, params.k1);
    camera.rms_px = rms_px;
    camera.views = views.len();
    Ok(LensFit {
        camera,
        poses: params.poses,
        rms_px,
        focal_uncertainty_px: focal_uncertainty.unwrap_or(f64::INFINITY),
        focal_statistical_px: focal_sigma.unwrap_or(f64::INFINITY),
        focal_principal_px: principal_shift.unwrap_or(f64::INFINITY),
        k1_uncertainty: k1_sigma.unwrap_or(f64::INFINITY),
        tilt_deg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::rectangle_corners_mm;

    const SIZE: [u32; 2] = [1280, 720];

    /// A camera at `centre` (table mm) looking at the point `target` of the table.
    fn pose(centre: Vector3<f64>, target: Vector3<f64>, roll: f64) -> RigidPose {
        let z = (target - centre).normalize();
        let hint = Vector3::new(roll.cos(), roll.sin(), 0.0);
        RigidPose::looking_along(centre, z, hint)
    }

    /// The homography table mm -> undistorted px of `pose` through a pinhole `f`.
    fn homography(f: f64, pose: &RigidPose) -> Matrix3<f64> {
        let cam = CameraIntrinsics::pinhole(SIZE, f);
        let mut m = Matrix3::zeros();
        m.set_column(0, &pose.camera_from_table.column(0));
        m.set_column(1, &pose.camera_from_table.column(1));
        m.set_column(2, &pose.translation_mm);
        cam.matrix() * m
    }

    /// Side points of the 1000 x 700 table as the camera sees them, distorted by
    /// `k1`, along each whole side.
    fn view(f: f64, k1: f64, pose: &RigidPose) -> Vec<(usize, Point2<f64>)> {
        let cam = camera_with(SIZE, f, k1);
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let mut out = vec![];
        for k in 0..4 {
            let (a, b) = (rect[k], rect[(k + 1) % 4]);
            for i in 1..60 {
                let p = a + (b - a) * (i as f64 / 60.0);
                let u = pose.undistorted_pixel(&cam, p.x, p.y, 0.0).unwrap();
                out.push((k, cam.distort_pixel(u)));
            }
        }
        out
    }

    #[test]
    fn undistort_inverts_the_lens() {
        for k1 in [-0.3, -0.08, 0.0, 0.12] {
            let cam = camera_with(SIZE, 900.0, k1);
            let c = Point2::new(640.0, 360.0);
            for p in [(5.0, 7.0), (640.0, 360.0), (1200.0, 700.0), (300.0, 90.0)] {
                let u = Point2::new(p.0, p.1);
                let d = cam.distort_pixel(u);
                let back = undistort(d, 900.0, k1, c).unwrap();
                assert!((back - u).norm() < 1e-9, "{k1} {u:?} -> {back:?}");
            }
        }
    }

    /// Square-on, both constraints vanish: no focal length.
    #[test]
    fn a_view_square_on_gives_no_focal_length() {
        let above = pose(
            Vector3::new(500.0, 350.0, 1500.0),
            Vector3::new(500.0, 350.0, 0.0),
            0.3,
        );
        let h = homography(1000.0, &above);
        assert_eq!(
            focal_from_homographies(&[h], Point2::new(640.0, 360.0), SIZE),
            None
        );
    }

    /// The fit finds `f` and `k1` from the sides alone, from a start 12 % off, and
    /// each view's pose; two views together as well.
    #[test]
    fn the_fit_recovers_focal_length_and_k1() {
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let truth_f = 1040.0;
        let truth_k1 = -0.11;
        let poses = [
            pose(
                Vector3::new(300.0, -700.0, 1300.0),
                Vector3::new(500.0, 350.0, 0.0),
                0.1,
            ),
            pose(
                Vector3::new(1400.0, 200.0, 1200.0),
                Vector3::new(480.0, 380.0, 0.0),
                1.4,
            ),
        ];
        for n in [1, 2] {
            let views: Vec<TableView> = poses[..n]
                .iter()
                .map(|p| TableView {
                    side_points_px: view(truth_f, truth_k1, p),
                    start: p.nudged(
                        Vector3::new(0.01, -0.02, 0.01),
                        Vector3::new(20.0, -30.0, 40.0),
                    ),
                })
                .collect();
            let fit = fit_focal_and_k1(SIZE, &rect, &views, 0.88 * truth_f, 0.0, 1.0, 0.0).unwrap();
            let f = fit.camera.fx();
            assert!((f - truth_f).abs() < 1e-3 * truth_f, "{n} views: f {f}");
            assert_eq!(fit.camera.fy(), f);
            assert!(
                (fit.camera.dist_coeffs[0] - truth_k1).abs() < 1e-4,
                "{:?}",
                fit.camera.dist_coeffs
            );
            assert!(fit.rms_px < 1e-6, "{}", fit.rms_px);
            assert_eq!(fit.camera.views, n);
            for (got, want) in fit.poses.iter().zip(&poses) {
                assert!((got.camera_centre_mm() - want.camera_centre_mm()).norm() < 0.5);
            }
        }
    }

    /// Seen square-on, with a little noise on the edges, the fit is refused and says so.
    #[test]
    fn a_square_on_fit_is_refused() {
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let above = pose(
            Vector3::new(500.0, 350.0, 1500.0),
            Vector3::new(500.0, 351.0, 0.0),
            0.0,
        );
        let mut points = view(1000.0, -0.05, &above);
        for (i, (_, p)) in points.iter_mut().enumerate() {
            p.y += if i % 2 == 0 { 0.2 } else { -0.2 };
        }
        let views = [TableView {
            side_points_px: points,
            start: above,
        }];
        let err = fit_focal_and_k1(SIZE, &rect, &views, 900.0, 0.0, 3.0, 0.0).unwrap_err();
        assert!(matches!(err, LensError::SquareOn { .. }), "{err:?}");
        let line = err.to_string();
        assert!(
            line.contains("square-on") && line.contains("tilt the camera"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    /// The nearer square-on, the more `f` depends on the principal point assumed:
    /// the uncertainty says so, and past the limit the fit is refused as not determined.
    #[test]
    fn the_principal_point_doubt_grows_toward_square_on() {
        let rect = rectangle_corners_mm(1000.0, 700.0);
        let target = Vector3::new(500.0, 350.0, 0.0);
        let at = |tilt_deg: f64| {
            let t = tilt_deg.to_radians();
            let p = pose(
                target + Vector3::new(0.0, -t.sin(), t.cos()) * 1600.0,
                target,
                0.0,
            );
            let views = [TableView {
                side_points_px: view(1000.0, -0.08, &p),
                start: p,
            }];
            fit_focal_and_k1(SIZE, &rect, &views, 1000.0, -0.08, 1.0, 10.0)
        };
        let steep = at(40.0).unwrap();
        let shallow = at(22.0).unwrap();
        assert!(
            steep.focal_statistical_px < 1e-3,
            "{}",
            steep.focal_statistical_px
        );
        assert!(
            steep.focal_principal_px > 0.5
                && shallow.focal_principal_px > 1.5 * steep.focal_principal_px,
            "{} {}",
            steep.focal_principal_px,
            shallow.focal_principal_px
        );
        assert_eq!(
            steep.focal_uncertainty_px,
            steep.focal_statistical_px.hypot(steep.focal_principal_px)
        );
        // Exact edges pin `f` down even near square-on; the doubt is the
        // principal point's alone, and is not refused.
        let near = at(12.0).unwrap();
        assert!(
            near.focal_principal_px > 1.5 * shallow.focal_principal_px,
            "{} {}",
            near.focal_principal_px,
            shallow.focal_principal_px
        );
        assert!(near.focal_statistical_px < 1e-3);
    }

    proptest::proptest! {
        /// From any slanted view of the table (15–70° from straight down, any turn
        /// about the vertical and the optical axis), the closed form gives back the
        /// focal length of an exact homography.
        #[test]
        fn closed_form_recovers_the_focal_length(
            f in 400.0..4000.0f64,
            tilt in 15.0..70.0f64,
            azimuth in 0.0..360.0f64,
            roll in -0.5..0.5f64,
            distance in 900.0..4000.0f64,
            target in proptest::array::uniform2(200.0..600.0f64),
        ) {
            let (t, a) = (tilt.to_radians(), azimuth.to_radians());
            let target = Vector3::new(target[0] + 200.0, target[1], 0.0);
            let centre = target
                + Vector3::new(t.sin() * a.cos(), t.sin() * a.sin(), t.cos()) * distance;
            let p = pose(centre, target, a + std::f64::consts::FRAC_PI_2 + roll);
            let got = focal_from_homographies(&[homography(f, &p)], Point2::new(640.0, 360.0), SIZE);
            let got = got.unwrap_or(f64::NAN);
            proptest::prop_assert!((got - f).abs() < 1e-6 * f, "f {} got {}", f, got);
        }
    }
}
