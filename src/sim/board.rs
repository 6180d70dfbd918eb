//! Chessboard views for the calibration scenario: poses of a 9x6-inner-corner board
//! with 25 mm squares held in front of the camera, varied from the seed, each with
//! every corner well inside the image. Pure. Uses: sim::camera, sim::truth.

use super::camera::SimCamera;
use super::truth::BoardSpec;
use nalgebra::{Matrix3, Point2, Rotation3, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The board the calibration engineer expects.
pub const BOARD: BoardSpec = BoardSpec {
    cols: 9,
    rows: 6,
    square_mm: 25.0,
};

/// One pose of the board: `p_cam = rotation * p_board + translation`, board frame
/// in mm with the origin at the first inner corner, x along a row, z out of the back.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardPose {
    pub rotation: Matrix3<f64>,
    pub translation: Vector3<f64>,
}

impl BoardPose {
    /// The inner corners in the distorted image, row by row.
    pub fn corners_px(&self, camera: &SimCamera, board: &BoardSpec) -> Vec<Point2<f64>> {
        let mut out = Vec::new();
        for r in 0..board.rows {
            for c in 0..board.cols {
                let p = Vector3::new(c as f64 * board.square_mm, r as f64 * board.square_mm, 0.0);
                let q = self.rotation * p + self.translation;
                let n = Point2::new(q.x / q.z, q.y / q.z);
                out.push(camera.intrinsics.pixel_from_normalised(n));
            }
        }
        out
    }

    /// The board's brightness (0 black .. 1 white) where a camera ray `d_cam` (camera
    /// frame, through the centre) meets it, or `None` if the ray misses the card.
    pub fn shade(&self, d_cam: &Vector3<f64>, board: &BoardSpec) -> Option<f64> {
        let n = self.rotation.column(2).into_owned();
        let denom = n.dot(d_cam);
        if denom.abs() < 1e-9 {
            return None;
        }
        let t = n.dot(&self.translation) / denom;
        if t <= 0.0 {
            return None;
        }
        let p = self.rotation.transpose() * (d_cam * t - self.translation);
        let s = board.square_mm;
        // The printed squares span [-s, cols*s] x [-s, rows*s]; a white margin of one
        // square more around them.
        let (x, y) = (p.x / s, p.y / s);
        let (cols, rows) = (board.cols as f64, board.rows as f64);
        if x < -2.0 || y < -2.0 || x > cols + 1.0 || y > rows + 1.0 {
            return None;
        }
        if x < -1.0 || y < -1.0 || x > cols || y > rows {
            return Some(0.92);
        }
        let black = ((x.floor() as i64 + y.floor() as i64).rem_euclid(2)) == 0;
        Some(if black { 0.08 } else { 0.92 })
    }
}

/// `count` board poses in front of `camera`, varied by `seed`: tilted up to ±35°,
/// spread over the image, every inner corner at least 4% inside the image.
pub fn board_poses(
    camera: &SimCamera,
    board: &BoardSpec,
    count: usize,
    seed: u64,
) -> Vec<BoardPose> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x00B0_A4D5);
    let [w, h] = camera.intrinsics.image_size;
    let (w, h) = (w as f64, h as f64);
    let fx = camera.intrinsics.fx();
    let size =
        Vector3::new((board.cols - 1) as f64, (board.rows - 1) as f64, 0.0) * board.square_mm;
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < 20_000 {
        tries += 1;
        // Board about half the image wide at distance d.
        let frac = rng.random_range(0.4..0.7);
        let d = fx * size.x / (frac * w);
        let k = out.len();
        // Cycle the tilt direction so views differ (needed for a good fx).
        let ax = rng.random_range(-0.6..0.6) + if k % 3 == 0 { 0.3 } else { 0.0 };
        let ay = rng.random_range(-0.6..0.6) - if k % 3 == 1 { 0.3 } else { 0.0 };
        let az = rng.random_range(-0.35..0.35);
        let rot = Rotation3::from_euler_angles(ax, ay, az).into_inner();
        let cx = rng.random_range(-0.3..0.3) * w / fx * d;
        let cy = rng.random_range(-0.3..0.3) * h / fx * d;
        let centre = Vector3::new(cx, cy, d);
        let translation = centre - rot * (size / 2.0);
        let pose = BoardPose {
            rotation: rot,
            translation,
        };
        // The board must face the camera.
        if (rot.column(2).into_owned()).dot(&centre.normalize()) < 0.45 {
            continue;
        }
        let ok = pose
            .corners_px(camera, board)
            .iter()
            .all(|p| p.x > 0.04 * w && p.x < 0.96 * w && p.y > 0.04 * h && p.y < 0.96 * h);
        if ok {
            out.push(pose);
        }
    }
    out
}
