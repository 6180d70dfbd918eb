//! The simulator's true camera: a pinhole with radial lens distortion (k1, k2) at
//! an oblique pose above the table, and what follows from it — projection of table
//! points (with height) into the distorted image, pixel rays back to a plane, and
//! the `camera.json` / `table.json` a perfect calibration would give. Pure.
//! Uses: calibration, geometry.

use crate::calibration::{CameraIntrinsics, Homography, TableFile};
use crate::geometry::{Point, Table};
use nalgebra::{Matrix3, Point2, Point3, Vector3};
use serde::{Deserialize, Serialize};

/// Why a camera cannot film the table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CameraError {
    #[error("impossible camera: {0}")]
    Impossible(String),
    #[error("the table is not in view of the camera: corner {corner} projects to ({u:.0}, {v:.0}) px, outside the {w}x{h} image")]
    TableOutOfView {
        corner: usize,
        u: f64,
        v: f64,
        w: u32,
        h: u32,
    },
}

/// How to set up the camera (all optional in a scenario file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CameraSpec {
    /// Angle of the optical axis from vertical, degrees (20–40 is typical).
    pub tilt_deg: f64,
    /// Horizontal field of view, degrees (sets fx).
    pub hfov_deg: f64,
    /// Distance from the camera to the table centre, mm; `None`: as close as lets the
    /// whole table (plus a margin) fit in the image.
    pub distance_mm: Option<f64>,
    /// Radial distortion.
    pub k1: f64,
    pub k2: f64,
    /// Rotation of the camera about its optical axis, degrees.
    pub roll_deg: f64,
    /// Turn of the camera about the vertical, degrees (0: looking along table +y).
    pub yaw_deg: f64,
}

impl Default for CameraSpec {
    fn default() -> Self {
        CameraSpec {
            tilt_deg: 30.0,
            hfov_deg: 62.0,
            distance_mm: None,
            k1: -0.08,
            k2: 0.02,
            roll_deg: 0.0,
            yaw_deg: 0.0,
        }
    }
}

/// A calibrated camera with its pose: `p_cam = rotation * p_table + translation` (mm).
#[derive(Debug, Clone, PartialEq)]
pub struct SimCamera {
    pub intrinsics: CameraIntrinsics,
    /// Table frame to camera frame (x right, y down, z forward).
    pub rotation: Matrix3<f64>,
    pub translation: Vector3<f64>,
}

/// The extrinsics as written in truth.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extrinsics {
    /// 3x3 rows: table frame -> camera frame.
    pub rotation: [[f64; 3]; 3],
    /// mm: `p_cam = R p_table + t`.
    pub translation_mm: [f64; 3],
    /// Camera centre in the table frame, mm.
    pub position_mm: [f64; 3],
}

/// Fraction of the image kept free around the table on each side.
const VIEW_MARGIN: f64 = 0.06;

impl SimCamera {
    /// A camera looking at the table centre from `spec`; with no distance given, the
    /// nearest distance at which the table fits in the image.
    pub fn looking_at_table(
        table: &Table,
        size: [u32; 2],
        spec: &CameraSpec,
    ) -> Result<SimCamera, CameraError> {
        let [w, h] = size;
        if w < 16 || h < 16 {
            return Err(CameraError::Impossible(format!(
                "image size {w}x{h} is too small"
            )));
        }
        if !(0.0..80.0).contains(&spec.tilt_deg) {
            return Err(CameraError::Impossible(format!(
                "tilt {}° from vertical must be in [0, 80)",
                spec.tilt_deg
            )));
        }
        if !(10.0..150.0).contains(&spec.hfov_deg) {
            return Err(CameraError::Impossible(format!(
                "horizontal field of view {}° must be in [10, 150)",
                spec.hfov_deg
            )));
        }
        let fx = w as f64 / 2.0 / (spec.hfov_deg.to_radians() / 2.0).tan();
        let intrinsics = CameraIntrinsics {
            image_size: size,
            camera_matrix: [
                [fx, 0.0, w as f64 / 2.0],
                [0.0, fx, h as f64 / 2.0],
                [0.0, 0.0, 1.0],
            ],
            dist_coeffs: [spec.k1, spec.k2, 0.0, 0.0, 0.0],
            rms_px: 0.0,
            views: 0,
            per_view_rms_px: vec![],
            view_names: vec![],
        };
        let (lo, hi) = table.bounds();
        let centre = Point3::new((lo.x + hi.x) / 2.0, (lo.y + hi.y) / 2.0, 0.0);
        let make = |d: f64| SimCamera::from_look_at(intrinsics.clone(), centre, d, spec);
        match spec.distance_mm {
            Some(d) => {
                if !(d.is_finite() && d > 0.0) {
                    return Err(CameraError::Impossible(format!(
                        "distance {d} mm must be positive"
                    )));
                }
                let cam = make(d);
                cam.check_table_in_view(table)?;
                Ok(cam)
            }
            None => {
                // The fit improves monotonically with distance: bisect.
                let (mut near, mut far) = (100.0, 50_000.0);
                let far_cam = make(far);
                far_cam.check_table_in_view(table)?;
                for _ in 0..40 {
                    let mid = 0.5 * (near + far);
                    if make(mid).fits_with_margin(table, VIEW_MARGIN) {
                        far = mid;
                    } else {
                        near = mid;
                    }
                }
                Ok(make(far))
            }
        }
    }

    fn from_look_at(
        intrinsics: CameraIntrinsics,
        target: Point3<f64>,
        distance: f64,
        spec: &CameraSpec,
    ) -> SimCamera {
        let tilt = spec.tilt_deg.to_radians();
        let yaw = spec.yaw_deg.to_radians();
        // From the target, back toward -y (rotated by yaw) and up.
        let back = Vector3::new(yaw.sin(), -yaw.cos(), 0.0);
        let pos = target + (back * tilt.sin() + Vector3::z() * tilt.cos()) * distance;
        let z_cam = (target - pos).normalize();
        let right = Vector3::new(yaw.cos(), yaw.sin(), 0.0);
        let x0 = (right - z_cam * z_cam.dot(&right)).normalize();
        let y0 = z_cam.cross(&x0);
        let roll = spec.roll_deg.to_radians();
        let x_cam = x0 * roll.cos() + y0 * roll.sin();
        let y_cam = z_cam.cross(&x_cam);
        let rotation =
            Matrix3::from_rows(&[x_cam.transpose(), y_cam.transpose(), z_cam.transpose()]);
        let translation = -(rotation * pos.coords);
        SimCamera {
            intrinsics,
            rotation,
            translation,
        }
    }

    /// The camera centre in the table frame.
    pub fn position(&self) -> Vector3<f64> {
        -(self.rotation.transpose() * self.translation)
    }

    pub fn extrinsics(&self) -> Extrinsics {
        let r = &self.rotation;
        let p = self.position();
        Extrinsics {
            rotation: [
                [r[(0, 0)], r[(0, 1)], r[(0, 2)]],
                [r[(1, 0)], r[(1, 1)], r[(1, 2)]],
                [r[(2, 0)], r[(2, 1)], r[(2, 2)]],
            ],
            translation_mm: [self.translation.x, self.translation.y, self.translation.z],
            position_mm: [p.x, p.y, p.z],
        }
    }

    /// A point of the table frame (mm, z up) in the distorted image; `None` when it
    /// lies behind (or too near) the camera.
    pub fn project(&self, p_in_table: Point3<f64>) -> Option<Point2<f64>> {
        let c = self.rotation * p_in_table.coords + self.translation;
        if c.z < 1.0 {
            return None;
        }
        let n = Point2::new(c.x / c.z, c.y / c.z);
        // Far outside the image the polynomial folds back: clamp the radius where
        // the distortion stops being monotonic.
        let r2 = n.coords.norm_squared();
        let lim = self.monotonic_r2_limit();
        let n = if r2 > lim {
            Point2::from(n.coords * (lim / r2).sqrt())
        } else {
            n
        };
        Some(self.intrinsics.pixel_from_normalised(n))
    }

    /// Largest r² for which the radial factor r(1 + k1 r² + k2 r⁴) still grows.
    fn monotonic_r2_limit(&self) -> f64 {
        let [k1, k2, ..] = self.intrinsics.dist_coeffs;
        // d/dr [r + k1 r³ + k2 r⁵] = 1 + 3 k1 r² + 5 k2 r⁴ > 0.
        let mut r2 = 0.0;
        while r2 < 16.0 {
            let next = r2 + 0.01;
            if 1.0 + 3.0 * k1 * next + 5.0 * k2 * next * next <= 0.05 {
                break;
            }
            r2 = next;
        }
        r2
    }

    /// A table point (z = 0) in the distorted image.
    pub fn project_table(&self, p: Point) -> Option<Point2<f64>> {
        self.project(Point3::new(p.x, p.y, 0.0))
    }

    /// The ray through a distorted pixel: (camera centre, unit direction) in the table frame.
    pub fn ray(&self, px: Point2<f64>) -> (Vector3<f64>, Vector3<f64>) {
        let u = self.intrinsics.undistort_pixel(px);
        self.ray_undistorted(u)
    }

    /// The ray through an undistorted pixel.
    pub fn ray_undistorted(&self, u: Point2<f64>) -> (Vector3<f64>, Vector3<f64>) {
        let k = &self.intrinsics;
        let d_cam = Vector3::new((u.x - k.cx()) / k.fx(), (u.y - k.cy()) / k.fy(), 1.0);
        let d = (self.rotation.transpose() * d_cam).normalize();
        (self.position(), d)
    }

    /// Undistorted pixels -> table mm (the plane z = 0).
    pub fn table_from_undistorted(&self) -> Option<Homography> {
        let k = Matrix3::from_fn(|r, c| self.intrinsics.camera_matrix[r][c]);
        let r = &self.rotation;
        let m = Matrix3::from_columns(&[
            r.column(0).into_owned(),
            r.column(1).into_owned(),
            self.translation,
        ]);
        let undistorted_from_table = k * m;
        let inv = undistorted_from_table.try_inverse()?;
        Homography::from_matrix(inv / inv[(2, 2)])
    }

    fn fits_with_margin(&self, table: &Table, margin: f64) -> bool {
        let [w, h] = self.intrinsics.image_size;
        let (mw, mh) = (w as f64 * margin, h as f64 * margin);
        table.corners().iter().all(|&c| {
            self.rotation_depth(c) > 1.0
                && self.project_table(c).is_some_and(|p| {
                    p.x >= mw && p.x <= w as f64 - mw && p.y >= mh && p.y <= h as f64 - mh
                })
        })
    }

    fn rotation_depth(&self, p: Point) -> f64 {
        (self.rotation * Vector3::new(p.x, p.y, 0.0) + self.translation).z
    }

    /// Every table corner must be in front of the camera and inside the image.
    pub fn check_table_in_view(&self, table: &Table) -> Result<(), CameraError> {
        let [w, h] = self.intrinsics.image_size;
        for (i, &c) in table.corners().iter().enumerate() {
            let depth = self.rotation_depth(c);
            let p = self.project_table(c).filter(|_| depth > 1.0);
            let inside =
                p.is_some_and(|p| p.x >= 0.0 && p.x < w as f64 && p.y >= 0.0 && p.y < h as f64);
            if !inside {
                let p = p.unwrap_or(Point2::new(f64::NAN, f64::NAN));
                return Err(CameraError::TableOutOfView {
                    corner: i,
                    u: p.x,
                    v: p.y,
                    w,
                    h,
                });
            }
        }
        Ok(())
    }

    /// The `table.json` of this camera and table: what a perfect calibration gives.
    pub fn table_file(&self, table: &Table) -> Option<TableFile> {
        let h = self.table_from_undistorted()?;
        Some(TableFile {
            corners_mm: table.corners().iter().map(|c| [c.x, c.y]).collect(),
            image_corners_px: table
                .corners()
                .iter()
                .filter_map(|&c| self.project_table(c).map(|p| [p.x, p.y]))
                .collect(),
            homography: h.rows(),
            camera: self.intrinsics.clone(),
            reprojection_error_mm: 0.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_camera_sees_the_table_and_the_homography_matches_projection() {
        let table = Table::rectangle(1000.0, 700.0);
        let cam = SimCamera::looking_at_table(&table, [640, 360], &CameraSpec::default()).unwrap();
        cam.check_table_in_view(&table).unwrap();
        let tf = cam.table_file(&table).unwrap();
        let cal = crate::calibration::TableCalibration::from_file(tf, "sim").unwrap();
        for p in [
            Point::new(10.0, 20.0),
            Point::new(500.0, 350.0),
            Point::new(990.0, 680.0),
        ] {
            let px = cam.project_table(p).unwrap();
            let back = cal.table_from_pixel(px);
            assert!((back - p).norm() < 0.05, "{p:?} -> {back:?}");
        }
        // Tilted: the near edge (y = 0) looks wider than the far edge.
        let c = table.corners();
        let near = (cam.project_table(c[1]).unwrap() - cam.project_table(c[0]).unwrap()).norm();
        let far = (cam.project_table(c[2]).unwrap() - cam.project_table(c[3]).unwrap()).norm();
        assert!(near > far * 1.1, "{near} {far}");
    }

    #[test]
    fn a_camera_too_close_is_refused() {
        let table = Table::rectangle(1000.0, 700.0);
        let spec = CameraSpec {
            distance_mm: Some(300.0),
            ..CameraSpec::default()
        };
        let err = SimCamera::looking_at_table(&table, [640, 360], &spec).unwrap_err();
        assert!(err.to_string().contains("not in view"), "{err}");
    }
}
