//! Camera intrinsics (`camera.json`) and the table plane (`table.json`) of
//! DESIGN.md: their formats, and the pure maths every stage uses to go between
//! pixels and table millimetres (distortion, homography). No OpenCV: the solvers
//! that estimate these from images live in `vision::calibrate`.
//! Uses: model, geometry, config.

use crate::config::{load_json, save_json, ConfigError};
use crate::geometry::{Point, Table, TableError};
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

    pub fn load(path: &Path) -> Result<CameraIntrinsics, ConfigError> {
        load_json(path)
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
        let target = Point2::new((px.x - self.cx()) / self.fx(), (px.y - self.cy()) / self.fy());
        let mut p = target;
        for _ in 0..20 {
            let d = self.distort_normalised(p);
            p += target - d;
        }
        Point2::new(self.fx() * p.x + self.cx(), self.fy() * p.y + self.cy())
    }

    /// Adds the lens distortion to an undistorted pixel.
    pub fn distort_pixel(&self, px: Point2<f64>) -> Point2<f64> {
        let n = Point2::new((px.x - self.cx()) / self.fx(), (px.y - self.cy()) / self.fy());
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
        Ok(TableCalibration {
            table,
            camera: file.camera.clone(),
            table_from_undistorted: h,
            file,
        })
    }

    pub fn load(path: &Path) -> Result<TableCalibration, CalibrationError> {
        let file: TableFile = load_json(path)?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
        for &(u, v) in &[(10.0, 10.0), (640.0, 360.0), (1200.0, 700.0), (300.0, 500.0)] {
            let p = Point2::new(u, v);
            let back = cam.distort_pixel(cam.undistort_pixel(p));
            assert!((back - p).norm() < 1e-6, "{p:?} -> {back:?}");
        }
    }

    #[test]
    fn singular_homography_is_refused() {
        assert!(Homography::from_rows([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]]).is_none());
        let h = Homography::from_rows([[2.0, 0.0, 5.0], [0.0, 3.0, 1.0], [0.0, 0.0, 1.0]]).unwrap();
        let p = Point2::new(4.0, 7.0);
        assert!((h.inverse().apply(h.apply(p)) - p).norm() < 1e-12);
    }
}
