//! Undistortion and the top-down view of the table: each is a lookup map built once
//! from the pure maths in `calibration` (so pixels and mm agree exactly with
//! `TableCalibration::table_from_pixel`), after which every frame costs one `remap`
//! (a coarse view for the change gate: a `resize` to half and a nearest `remap`).
//! Uses: calibration, geometry; OpenCV imgproc for `remap` and `resize`.
//!
//! # The rectified view
//! A true top-down picture of the table, not mirrored: table +x points right and
//! table +y points **up** the picture. Rectified pixel `(u, v)` (integers at pixel
//! centres, OpenCV style) is the table point
//! `x = x_min - margin + u * mm_per_px`, `y = y_max + margin - v * mm_per_px`,
//! where `[x_min, x_max] x [y_min, y_max]` bounds the table polygon. An angle measured
//! in the picture as `atan2(-dv, du)` is therefore the table angle (CCW from +x).

use crate::calibration::{CameraIntrinsics, TableCalibration};
use crate::geometry::Point;
use nalgebra::Point2;
use opencv::core::{Mat, Scalar, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// Why a rectifier cannot be built or used.
#[derive(Debug, thiserror::Error)]
pub enum RectifyError {
    #[error("the scale must be a positive number of mm per pixel, got {0}")]
    BadScale(f64),
    #[error("the rectified view would be {0}x{1} pixels: too large (lower the resolution)")]
    TooLarge(i64, i64),
    #[error("the frame is {got_w}x{got_h} but the camera calibration is for {want_w}x{want_h}")]
    FrameSize {
        got_w: i32,
        got_h: i32,
        want_w: u32,
        want_h: u32,
    },
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

/// The largest rectified side we build, in pixels (a guard against a mm/px typo).
const MAX_SIDE_PX: i64 = 8192;

/// How a view's pixels are read from the camera frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Bilinear between the four nearest pixels: sub-pixel accurate.
    Bilinear,
    /// The frame is first halved (each pixel the mean of a 2x2 block) and the view
    /// reads the nearest pixel of that: about half the cost of `Bilinear` for a view
    /// coarser than the camera, as responsive to a small shift (an edge crossing a
    /// block moves its mean as it moves a bilinear read), less sub-pixel exact.
    HalvedNearest,
}

/// Builds fixed-point remap tables from a function giving, for each output pixel
/// `(u, v)`, the source (distorted image) pixel to read.
fn build_maps(
    cols: i32,
    rows: i32,
    nearest: bool,
    source_of: impl Fn(f64, f64) -> Point2<f64>,
) -> Result<(Mat, Mat), RectifyError> {
    let mut map_x =
        Mat::new_rows_cols_with_default(rows, cols, opencv::core::CV_32FC1, Scalar::all(0.0))?;
    let mut map_y =
        Mat::new_rows_cols_with_default(rows, cols, opencv::core::CV_32FC1, Scalar::all(0.0))?;
    {
        let xs = map_x.data_typed_mut::<f32>()?;
        let ys = map_y.data_typed_mut::<f32>()?;
        for v in 0..rows as usize {
            for u in 0..cols as usize {
                let p = source_of(u as f64, v as f64);
                let i = v * cols as usize + u;
                // Points that do not map (behind the camera, NaN) read the border colour.
                let ok = p.x.is_finite() && p.y.is_finite();
                xs[i] = if ok { p.x as f32 } else { -1e6 };
                ys[i] = if ok { p.y as f32 } else { -1e6 };
            }
        }
    }
    // Fixed-point maps make each remap about twice as fast and lose < 1/32 px.
    let (mut m1, mut m2) = (Mat::default(), Mat::default());
    imgproc::convert_maps(
        &map_x,
        &map_y,
        &mut m1,
        &mut m2,
        opencv::core::CV_16SC2,
        nearest,
    )?;
    Ok((m1, m2))
}

fn check_frame(frame: &Mat, camera: &CameraIntrinsics) -> Result<(), RectifyError> {
    let [w, h] = camera.image_size;
    if frame.cols() != w as i32 || frame.rows() != h as i32 {
        return Err(RectifyError::FrameSize {
            got_w: frame.cols(),
            got_h: frame.rows(),
            want_w: w,
            want_h: h,
        });
    }
    Ok(())
}

/// Removes lens distortion from whole frames (same camera matrix, no distortion), so
/// that the undistorted pixel `p` of the output is `camera.undistort_pixel` of the input.
pub struct Undistorter {
    camera: CameraIntrinsics,
    map1: Mat,
    map2: Mat,
}

impl Undistorter {
    pub fn new(camera: &CameraIntrinsics) -> Result<Undistorter, RectifyError> {
        let [w, h] = camera.image_size;
        let (map1, map2) = build_maps(w as i32, h as i32, false, |u, v| {
            camera.distort_pixel(Point2::new(u, v))
        })?;
        Ok(Undistorter {
            camera: camera.clone(),
            map1,
            map2,
        })
    }

    /// The undistorted frame (bilinear); the frame must have the camera's image size.
    pub fn undistort(&self, frame: &Mat) -> Result<Mat, RectifyError> {
        remap_frame(frame, &self.camera, &self.map1, &self.map2)
    }
}

/// One bilinear `remap` through precomputed maps, black where the maps point outside
/// the frame; the frame must have the camera's image size.
fn remap_frame(
    frame: &Mat,
    camera: &CameraIntrinsics,
    map1: &impl opencv::core::ToInputArray,
    map2: &impl opencv::core::ToInputArray,
) -> Result<Mat, RectifyError> {
    let mut out = Mat::default();
    check_frame(frame, camera)?;
    remap_into(frame, map1, map2, imgproc::INTER_LINEAR, &mut out)?;
    Ok(out)
}

/// One `remap` of `image` into `out`, black where the maps point outside it.
fn remap_into(
    image: &Mat,
    map1: &impl opencv::core::ToInputArray,
    map2: &impl opencv::core::ToInputArray,
    interpolation: i32,
    out: &mut Mat,
) -> Result<(), RectifyError> {
    imgproc::remap(
        image,
        out,
        map1,
        map2,
        interpolation,
        opencv::core::BORDER_CONSTANT,
        Scalar::all(0.0),
    )?;
    Ok(())
}

/// The top-down view of the table at a fixed scale (see the module docs for its frame).
pub struct TableRectifier {
    camera: CameraIntrinsics,
    mm_per_px: f64,
    /// Table mm at rectified pixel (0, 0): `(x_min - margin, y_max + margin)`.
    origin_mm: Point,
    size: Size,
    map1: Mat,
    map2: Mat,
    sampling: Sampling,
    /// The halved frame's size (with `Sampling::HalvedNearest`).
    halved: Size,
}

impl TableRectifier {
    /// Precomputes the map for the table polygon plus `margin_mm` all round, at
    /// `mm_per_px` millimetres per rectified pixel, read bilinearly.
    pub fn new(
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
    ) -> Result<TableRectifier, RectifyError> {
        TableRectifier::with_sampling(calibration, mm_per_px, margin_mm, Sampling::Bilinear)
    }

    /// As [`TableRectifier::new`], each view pixel read as `sampling` says.
    pub fn with_sampling(
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
        sampling: Sampling,
    ) -> Result<TableRectifier, RectifyError> {
        if !(mm_per_px.is_finite() && mm_per_px > 0.0) {
            return Err(RectifyError::BadScale(mm_per_px));
        }
        let margin = if margin_mm.is_finite() {
            margin_mm.max(0.0)
        } else {
            0.0
        };
        let (lo, hi) = calibration.bounds_mm();
        let cols = ((hi.x - lo.x + 2.0 * margin) / mm_per_px).ceil() as i64 + 1;
        let rows = ((hi.y - lo.y + 2.0 * margin) / mm_per_px).ceil() as i64 + 1;
        if cols > MAX_SIDE_PX || rows > MAX_SIDE_PX || cols < 1 || rows < 1 {
            return Err(RectifyError::TooLarge(cols, rows));
        }
        let origin_mm = Point::new(lo.x - margin, hi.y + margin);
        let table_at =
            |u: f64, v: f64| Point::new(origin_mm.x + u * mm_per_px, origin_mm.y - v * mm_per_px);
        let image_from_table = calibration.table_from_undistorted.inverse();
        let camera = &calibration.camera;
        let [w, h] = camera.image_size;
        let halved = Size::new((w as i32 + 1) / 2, (h as i32 + 1) / 2);
        // `resize` centres halved pixel i at frame pixel (i + 0.5) * scale - 0.5.
        let (sx, sy) = match sampling {
            Sampling::Bilinear => (1.0, 1.0),
            Sampling::HalvedNearest => (
                halved.width as f64 / w as f64,
                halved.height as f64 / h as f64,
            ),
        };
        let nearest = sampling == Sampling::HalvedNearest;
        let (map1, map2) = build_maps(cols as i32, rows as i32, nearest, |u, v| {
            let h = image_from_table.matrix()
                * nalgebra::Vector3::new(table_at(u, v).x, table_at(u, v).y, 1.0);
            // A table point behind the camera (h.z <= 0) has no pixel.
            if h.z <= 0.0 {
                return Point2::new(f64::NAN, f64::NAN);
            }
            let p = camera.distort_pixel(Point2::new(h.x / h.z, h.y / h.z));
            Point2::new((p.x + 0.5) * sx - 0.5, (p.y + 0.5) * sy - 0.5)
        })?;
        Ok(TableRectifier {
            camera: camera.clone(),
            mm_per_px,
            origin_mm,
            size: Size::new(cols as i32, rows as i32),
            map1,
            map2,
            sampling,
            halved,
        })
    }

    /// The top-down view of a (distorted) camera frame: one `remap`, bilinear, black
    /// outside the camera's view.
    pub fn rectify(&self, frame: &Mat) -> Result<Mat, RectifyError> {
        let mut out = Mat::default();
        self.rectify_into(frame, &mut out, &mut Mat::default())?;
        Ok(out)
    }

    /// As [`TableRectifier::rectify`], into `out`; `scratch` holds the halved frame
    /// with `Sampling::HalvedNearest`. Both are reused when they have the size and
    /// type needed.
    pub fn rectify_into(
        &self,
        frame: &Mat,
        out: &mut Mat,
        scratch: &mut Mat,
    ) -> Result<(), RectifyError> {
        check_frame(frame, &self.camera)?;
        match self.sampling {
            Sampling::Bilinear => {
                remap_into(frame, &self.map1, &self.map2, imgproc::INTER_LINEAR, out)
            }
            Sampling::HalvedNearest => {
                imgproc::resize(frame, scratch, self.halved, 0.0, 0.0, imgproc::INTER_AREA)?;
                remap_into(
                    scratch,
                    &self.map1,
                    &Mat::default(),
                    imgproc::INTER_NEAREST,
                    out,
                )
            }
        }
    }

    /// The part of the top view inside the rectangle `x, y, width, height` (rectified
    /// pixels, clipped to the view): the same pixels `rectify` gives there, for the
    /// cost of the rectangle only.
    pub fn rectify_region(
        &self,
        frame: &Mat,
        x: i32,
        y: i32,
        width: i32,
        height: i32,
    ) -> Result<Mat, RectifyError> {
        let x0 = x.clamp(0, self.size.width);
        let y0 = y.clamp(0, self.size.height);
        let x1 = (x + width).clamp(x0, self.size.width);
        let y1 = (y + height).clamp(y0, self.size.height);
        if x1 == x0 || y1 == y0 {
            return Ok(Mat::default());
        }
        let rect = opencv::core::Rect::new(x0, y0, x1 - x0, y1 - y0);
        if self.sampling != Sampling::Bilinear {
            let mut out = Mat::default();
            let mut halved = Mat::default();
            self.rectify_into(frame, &mut out, &mut halved)?;
            return Ok(Mat::roi(&out, rect)?.try_clone()?);
        }
        let map1 = Mat::roi(&self.map1, rect)?;
        let map2 = Mat::roi(&self.map2, rect)?;
        remap_frame(frame, &self.camera, &map1, &map2)
    }

    pub fn mm_per_px(&self) -> f64 {
        self.mm_per_px
    }

    /// `(width, height)` of the rectified view in pixels.
    pub fn size(&self) -> (i32, i32) {
        (self.size.width, self.size.height)
    }

    /// A rectified pixel (integers at pixel centres) to table mm.
    pub fn table_from_rectified(&self, px_in_rectified: Point2<f64>) -> Point {
        Point::new(
            self.origin_mm.x + px_in_rectified.x * self.mm_per_px,
            self.origin_mm.y - px_in_rectified.y * self.mm_per_px,
        )
    }

    /// Table mm to the rectified pixel.
    pub fn rectified_from_table(&self, pt_in_table: Point) -> Point2<f64> {
        Point2::new(
            (pt_in_table.x - self.origin_mm.x) / self.mm_per_px,
            (self.origin_mm.y - pt_in_table.y) / self.mm_per_px,
        )
    }

    /// A table angle (radians, CCW from table +x) to the angle of the same direction in
    /// the rectified picture measured as `atan2(dv, du)` with v pointing down: its negation.
    pub fn rectified_angle_from_table(theta_in_table: f64) -> f64 {
        -theta_in_table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::{Homography, TableFile};
    use opencv::core::{Point as CvPoint, Vec3b};

    fn calibration() -> TableCalibration {
        let mut camera = CameraIntrinsics::pinhole([640, 480], 600.0);
        camera.dist_coeffs = [-0.15, 0.03, 0.0005, -0.0003, 0.0];
        // Table (mm) -> undistorted pixels: a mild perspective view of a 400x300 table.
        let image_from_table =
            Homography::from_rows([[1.1, 0.12, 100.0], [0.02, -0.95, 400.0], [0.0, 0.0002, 1.0]])
                .unwrap();
        let file = TableFile {
            corners_mm: vec![[0.0, 0.0], [400.0, 0.0], [400.0, 300.0], [0.0, 300.0]],
            image_corners_px: vec![],
            homography: image_from_table.inverse().rows(),
            camera,
            reprojection_error_mm: 0.0,
        };
        TableCalibration::from_file(file, "test").unwrap()
    }

    #[test]
    fn pixel_and_mm_helpers_are_inverse() {
        let r = TableRectifier::new(&calibration(), 2.0, 10.0).unwrap();
        assert_eq!(r.size(), (211, 161));
        let p = Point::new(123.4, 56.7);
        let back = r.table_from_rectified(r.rectified_from_table(p));
        assert!((back - p).norm() < 1e-9);
        // Table corner 0 is bottom-left of the picture, 10 mm in from the border.
        let c0 = r.rectified_from_table(Point::new(0.0, 0.0));
        assert!((c0 - Point2::new(5.0, 155.0)).norm() < 1e-9, "{c0:?}");
    }

    /// A bright dot drawn at a table point's (distorted) pixel reappears at that
    /// point's rectified pixel: the map and the maths agree.
    #[test]
    fn rectified_view_puts_table_points_where_the_helpers_say() {
        let cal = calibration();
        let r = TableRectifier::new(&cal, 1.0, 0.0).unwrap();
        for &(x, y) in &[(50.0, 40.0), (200.0, 150.0), (350.0, 260.0)] {
            let mut frame =
                Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, Scalar::all(0.0))
                    .unwrap();
            let px = cal.pixel_from_table(Point::new(x, y));
            imgproc::circle(
                &mut frame,
                CvPoint::new((px.x * 16.0).round() as i32, (px.y * 16.0).round() as i32),
                3 * 16,
                Scalar::all(255.0),
                -1,
                imgproc::LINE_AA,
                4,
            )
            .unwrap();
            let top = r.rectify(&frame).unwrap();
            // Intensity-weighted centroid of the dot in the rectified view.
            let (mut sw, mut su, mut sv) = (0.0, 0.0, 0.0);
            for v in 0..top.rows() {
                for u in 0..top.cols() {
                    let w = top.at_2d::<Vec3b>(v, u).unwrap()[0] as f64;
                    sw += w;
                    su += w * u as f64;
                    sv += w * v as f64;
                }
            }
            assert!(sw > 0.0);
            let found = r.table_from_rectified(Point2::new(su / sw, sv / sw));
            assert!(
                (found - Point::new(x, y)).norm() < 0.3,
                "({x},{y}) -> {found:?}"
            );
        }
        let wrong =
            Mat::new_rows_cols_with_default(10, 10, opencv::core::CV_8UC3, Scalar::all(0.0))
                .unwrap();
        assert!(matches!(
            r.rectify(&wrong),
            Err(RectifyError::FrameSize { .. })
        ));
        assert!(matches!(
            TableRectifier::new(&cal, 0.0, 0.0),
            Err(RectifyError::BadScale(_))
        ));
    }

    /// A frame of table-coloured background with a coin-sized bright disc at table
    /// point `at` (anti-aliased, placed to 1/16 pixel).
    fn frame_with_disc(cal: &TableCalibration, at: Point, radius_mm: f64) -> Mat {
        let mut frame =
            Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, Scalar::all(60.0))
                .unwrap();
        let px = cal.pixel_from_table(at);
        let edge = cal.pixel_from_table(Point::new(at.x + radius_mm, at.y));
        imgproc::circle(
            &mut frame,
            CvPoint::new((px.x * 16.0).round() as i32, (px.y * 16.0).round() as i32),
            ((edge - px).norm() * 16.0).round() as i32,
            Scalar::new(200.0, 190.0, 170.0, 0.0),
            -1,
            imgproc::LINE_AA,
            4,
        )
        .unwrap();
        frame
    }

    /// The change gate's halved, nearest-read view puts things where the helpers
    /// say (to its pixel), and shows a coin that crept a millimetre.
    #[test]
    fn the_halved_view_is_placed_right_and_shows_a_millimetre_of_creep() {
        let cal = calibration();
        let mm_per_px = 2.0;
        let r =
            TableRectifier::with_sampling(&cal, mm_per_px, 10.0, Sampling::HalvedNearest).unwrap();
        let (mut view, mut scratch) = (Mat::default(), Mat::default());
        for &(x, y) in &[(60.0, 50.0), (200.0, 150.0), (330.0, 250.0)] {
            let frame = frame_with_disc(&cal, Point::new(x, y), 8.0);
            r.rectify_into(&frame, &mut view, &mut scratch).unwrap();
            let (mut sw, mut su, mut sv) = (0.0, 0.0, 0.0);
            for v in 0..view.rows() {
                for u in 0..view.cols() {
                    let w = (view.at_2d::<Vec3b>(v, u).unwrap()[0] as f64 - 60.0).max(0.0);
                    sw += w;
                    su += w * u as f64;
                    sv += w * v as f64;
                }
            }
            let found = r.table_from_rectified(Point2::new(su / sw, sv / sw));
            assert!(
                (found - Point::new(x, y)).norm() < 0.5 * mm_per_px,
                "({x},{y}) -> {found:?}"
            );
        }
        let (w, h) = r.size();
        let grid = crate::detect::TopGrid {
            width: w as usize,
            height: h as usize,
            mm_per_px,
            origin_mm: r.table_from_rectified(Point2::new(0.0, 0.0)),
            y_down: true,
        };
        let mut gate = crate::watch::ChangeGate::new(grid, Default::default());
        let still = frame_with_disc(&cal, Point::new(200.0, 150.0), 8.0);
        r.rectify_into(&still, &mut view, &mut scratch).unwrap();
        gate.observe(view.data_bytes().unwrap());
        gate.rebase();
        assert_eq!(
            gate.observe(view.data_bytes().unwrap()).since_reference,
            None
        );
        for (dx, dy) in [(1.0, 0.0), (0.0, 1.0), (-0.7, 0.7)] {
            let crept = frame_with_disc(&cal, Point::new(200.0 + dx, 150.0 + dy), 8.0);
            r.rectify_into(&crept, &mut view, &mut scratch).unwrap();
            let change = gate.observe(view.data_bytes().unwrap()).since_reference;
            let changed = change.unwrap_or_else(|| panic!("a creep of ({dx}, {dy}) mm unseen"));
            assert!((changed.center() - Point::new(200.0, 150.0)).norm() < 12.0);
        }
    }

    #[test]
    fn a_region_has_the_same_pixels_as_the_whole_view() {
        let cal = calibration();
        let r = TableRectifier::new(&cal, 1.5, 5.0).unwrap();
        let mut frame =
            Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, Scalar::all(0.0))
                .unwrap();
        opencv::core::randu(&mut frame, &Scalar::all(0.0), &Scalar::all(255.0)).unwrap();
        let whole = r.rectify(&frame).unwrap();
        let part = r.rectify_region(&frame, 40, 30, 70, 50).unwrap();
        assert_eq!((part.cols(), part.rows()), (70, 50));
        for v in 0..50 {
            for u in 0..70 {
                assert_eq!(
                    part.at_2d::<Vec3b>(v, u).unwrap(),
                    whole.at_2d::<Vec3b>(v + 30, u + 40).unwrap()
                );
            }
        }
        // Clipped at the view's border; empty when wholly outside.
        let (w, h) = r.size();
        let edge = r.rectify_region(&frame, w - 10, h - 5, 50, 50).unwrap();
        assert_eq!((edge.cols(), edge.rows()), (10, 5));
        assert!(r.rectify_region(&frame, w + 5, 0, 10, 10).unwrap().empty());
    }

    #[test]
    fn undistorter_matches_undistort_pixel() {
        let cal = calibration();
        let und = Undistorter::new(&cal.camera).unwrap();
        let mut frame =
            Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, Scalar::all(0.0))
                .unwrap();
        let px = Point2::new(560.0, 420.0);
        imgproc::circle(
            &mut frame,
            CvPoint::new((px.x * 16.0) as i32, (px.y * 16.0) as i32),
            2 * 16,
            Scalar::all(255.0),
            -1,
            imgproc::LINE_AA,
            4,
        )
        .unwrap();
        let out = und.undistort(&frame).unwrap();
        let want = cal.camera.undistort_pixel(px);
        let (mut sw, mut su, mut sv) = (0.0, 0.0, 0.0);
        for v in 0..out.rows() {
            for u in 0..out.cols() {
                let w = out.at_2d::<Vec3b>(v, u).unwrap()[0] as f64;
                sw += w;
                su += w * u as f64;
                sv += w * v as f64;
            }
        }
        let got = Point2::new(su / sw, sv / sw);
        assert!((got - want).norm() < 0.3, "{got:?} vs {want:?}");
        assert!(
            (want - px).norm() > 5.0,
            "the test needs visible distortion"
        );
    }
}
