//! The simulator's renderer: draws a [`Truth`] through its true camera into video
//! frames and writes them with OpenCV's `VideoWriter` (MJPG .avi, mp4v .mp4), and
//! renders the calibration images (chessboard views, the empty table) as PNG.
//!
//! Speed: the static table and floor are rendered once per camera (per pixel:
//! undistort -> ray -> table or floor plane, 2x2 supersampled); each frame then
//! draws the items by projecting their outlines (anti-aliased `fillPoly`, sub-pixel
//! shift) in order of height. Motion blur averages sub-frame renders, but only over
//! the rectangle that moving items sweep; noise comes from precomputed patterns.
//! Uses: config, geometry, calibration, sim (camera, truth, scenario, board).

use crate::config::{parse_hex_color, Items};
use crate::geometry::{FishFootprint, Point, Table};
use crate::model::ItemId;
use crate::sim::board::BoardPose;
use crate::sim::camera::SimCamera;
use crate::sim::scenario::RenderSpec;
use crate::sim::truth::{BoardSpec, FrameTruth, HandTruth, ItemTruth, Truth};
use nalgebra::{Point2, Point3, Vector3};
use opencv::core::{self, Mat, Rect, Scalar, Vector as CvVec};
use opencv::imgproc;
use opencv::prelude::*;
use opencv::videoio;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::path::Path;

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error("{0}")]
    Invalid(String),
}

type Result<T> = std::result::Result<T, RenderError>;

/// Sub-pixel bits of the polygon coordinates (fillPoly `shift`).
const SHIFT: i32 = 4;
const ONE: f64 = (1 << SHIFT) as f64;
/// Precomputed noise patterns (a frame picks one at random).
const NOISE_PATTERNS: usize = 8;

/// Colours, BGR.
const SKIN: [f64; 3] = [140.0, 170.0, 220.0];
// Brass kopecks: yellower and brighter than the wood.
const COIN_TOP: [f64; 3] = [60.0, 175.0, 215.0];
const COIN_RIM: [f64; 3] = [30.0, 95.0, 130.0];
const COIN_RING: [f64; 3] = [120.0, 210.0, 240.0];

fn bgr(c: [f64; 3]) -> Scalar {
    Scalar::new(c[0], c[1], c[2], 0.0)
}

fn scaled(c: [f64; 3], k: f64) -> [f64; 3] {
    [
        (c[0] * k).min(255.0),
        (c[1] * k).min(255.0),
        (c[2] * k).min(255.0),
    ]
}

/// Procedural wood for the table top (BGR 0..255) at a table point (mm).
fn wood(x: f64, y: f64) -> [f64; 3] {
    let plank = (y / 140.0).floor();
    let yy = y - plank * 140.0;
    let grain = 0.5
        + 0.5
            * (0.22
                * (y + 9.0 * (x * 0.004 + plank * 1.7).sin() + 2.5 * (x * 0.037 + plank).sin()))
            .sin();
    let fine = 0.5 + 0.5 * (1.3 * y + 3.0 * (x * 0.02).sin() + plank * 3.1).sin();
    let seam = if !(1.2..=138.8).contains(&yy) {
        0.65
    } else {
        1.0
    };
    let tone = (0.82 + 0.12 * grain + 0.04 * fine + 0.03 * (plank * 2.3).sin()) * seam;
    [88.0 * tone, 140.0 * tone, 190.0 * tone]
}

/// The floor: grey-green tiles of 300 mm.
fn floor(x: f64, y: f64) -> [f64; 3] {
    let (u, v) = (x.rem_euclid(300.0), y.rem_euclid(300.0));
    let seam = u < 4.0 || v < 4.0;
    let checker = (((x / 300.0).floor() + (y / 300.0).floor()) as i64).rem_euclid(2) as f64;
    if seam {
        [40.0, 45.0, 45.0]
    } else {
        let k = 1.0 + 0.06 * checker;
        [75.0 * k, 88.0 * k, 80.0 * k]
    }
}

/// Draws one scene (items, hand) through a camera into images.
pub struct Renderer {
    camera: SimCamera,
    table: Table,
    items: Items,
    footprint: FishFootprint,
    /// Per player: fish colour (BGR) and number colour.
    colours: Vec<([f64; 3], [f64; 3])>,
    spec: RenderSpec,
    /// Table floor.
    floor_depth_mm: f64,
    background: Mat,
    noise: Vec<(Mat, Mat)>,
    rng: ChaCha8Rng,
    size: [u32; 2],
    /// 2x2 sub-pixel camera rays, reused by the calibration renders.
    rays: Vec<[f32; 2]>,
}

/// Undistorted normalised camera rays of the 2x2 sub-pixel samples, row-major.
fn sample_rays(camera: &SimCamera) -> Vec<[f32; 2]> {
    let [w, h] = camera.intrinsics.image_size;
    let k = &camera.intrinsics;
    (0..h as usize)
        .into_par_iter()
        .flat_map_iter(|y| {
            let mut row = Vec::with_capacity(w as usize * 4);
            for x in 0..w as usize {
                for (dx, dy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
                    let px = Point2::new(x as f64 + dx - 0.5, y as f64 + dy - 0.5);
                    let u = k.undistort_pixel(px);
                    row.push([
                        ((u.x - k.cx()) / k.fx()) as f32,
                        ((u.y - k.cy()) / k.fy()) as f32,
                    ]);
                }
            }
            row
        })
        .collect()
}

fn mat_from_bgr(w: u32, h: u32, data: &[u8]) -> Result<Mat> {
    let mut m =
        Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC3, Scalar::all(0.0))?;
    m.data_bytes_mut()?.copy_from_slice(data);
    Ok(m)
}

/// Shades every pixel (2x2 samples) by a function of its camera ray (camera frame).
fn shade_image(
    camera: &SimCamera,
    rays: &[[f32; 2]],
    shade: impl Fn(&Vector3<f64>) -> [f64; 3] + Sync,
) -> Vec<u8> {
    let [w, h] = camera.intrinsics.image_size;
    let w = w as usize;
    let mut out = vec![0u8; w * h as usize * 3];
    out.par_chunks_mut(w * 3).enumerate().for_each(|(y, row)| {
        for x in 0..w {
            let mut acc = [0.0; 3];
            for s in 0..4 {
                let r = rays[(y * w + x) * 4 + s];
                let c = shade(&Vector3::new(r[0] as f64, r[1] as f64, 1.0));
                for i in 0..3 {
                    acc[i] += c[i];
                }
            }
            for i in 0..3 {
                row[x * 3 + i] = (acc[i] / 4.0).round().clamp(0.0, 255.0) as u8;
            }
        }
    });
    out
}

impl Renderer {
    /// A renderer for the camera, table and items of a truth.
    pub fn new(truth: &Truth, spec: &RenderSpec, seed: u64) -> Result<Renderer> {
        let camera = SimCamera {
            intrinsics: truth.camera.clone(),
            rotation: nalgebra::Matrix3::from_fn(|r, c| truth.extrinsics.rotation[r][c]),
            translation: Vector3::from(truth.extrinsics.translation_mm),
        };
        let table = truth
            .table()
            .map_err(|e| RenderError::Invalid(format!("truth table: {e}")))?;
        let colours = truth
            .game
            .players
            .iter()
            .map(|p| {
                let [r, g, b] = parse_hex_color(&p.color).unwrap_or([200, 200, 200]);
                let c = [b as f64, g as f64, r as f64];
                let lum = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
                let ink = if lum > 140.0 {
                    [30.0, 30.0, 30.0]
                } else {
                    [235.0, 235.0, 235.0]
                };
                (c, ink)
            })
            .collect();
        let size = truth.camera.image_size;
        let rays = sample_rays(&camera);
        let mut r = Renderer {
            footprint: FishFootprint::new(&truth.game.items),
            items: truth.game.items.clone(),
            camera,
            table,
            colours,
            spec: spec.clone(),
            floor_depth_mm: 750.0,
            background: Mat::default(),
            noise: vec![],
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_F00D),
            size,
            rays: vec![],
        };
        let bg = r.shade_scene_background(&rays);
        r.background = mat_from_bgr(size[0], size[1], &bg)?;
        r.noise = r.make_noise(seed)?;
        r.rays = rays;
        Ok(r)
    }

    fn shade_scene_background(&self, rays: &[[f32; 2]]) -> Vec<u8> {
        let rt = self.camera.rotation.transpose();
        let pos = self.camera.position();
        let table = &self.table;
        let depth = self.floor_depth_mm;
        shade_image(&self.camera, rays, |d_cam| {
            let d = rt * d_cam;
            if d.z < -1e-9 {
                let t = -pos.z / d.z;
                let p = pos + d * t;
                if table.contains(Point::new(p.x, p.y)) {
                    // A darker band along the edge: the table's rim.
                    let m = table.signed_distance(Point::new(p.x, p.y));
                    let k = if m < 6.0 { 0.7 + 0.05 * m } else { 1.0 };
                    return scaled(wood(p.x, p.y), k);
                }
                let t = (-depth - pos.z) / d.z;
                let p = pos + d * t;
                // Under the table edge: its shadow on the floor.
                let shade = if table.signed_distance(Point::new(p.x, p.y)) > -60.0 {
                    0.6
                } else {
                    1.0
                };
                return scaled(floor(p.x, p.y), shade);
            }
            [120.0, 110.0, 100.0]
        })
    }

    fn make_noise(&self, seed: u64) -> Result<Vec<(Mat, Mat)>> {
        let sigma = self.spec.noise_sigma;
        if sigma <= 0.0 {
            return Ok(vec![]);
        }
        let [w, h] = self.size;
        let n = w as usize * h as usize * 3;
        let mut out = Vec::new();
        for k in 0..NOISE_PATTERNS {
            let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(31).wrapping_add(k as u64));
            let mut pos = vec![0u8; n];
            let mut neg = vec![0u8; n];
            for i in 0..n {
                // Box–Muller.
                let u1: f64 = rng.random_range(1e-12..1.0);
                let u2: f64 = rng.random::<f64>();
                let g = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos() * sigma;
                let v = g.round().clamp(-127.0, 127.0);
                if v > 0.0 {
                    pos[i] = v as u8;
                } else {
                    neg[i] = (-v) as u8;
                }
            }
            out.push((mat_from_bgr(w, h, &pos)?, mat_from_bgr(w, h, &neg)?));
        }
        Ok(out)
    }

    /// The static table and floor.
    pub fn background(&self) -> &Mat {
        &self.background
    }

    pub fn camera(&self) -> &SimCamera {
        &self.camera
    }

    fn project(&self, p: Point3<f64>, off: (i32, i32)) -> core::Point {
        let q = self.camera.project(p).unwrap_or(Point2::new(-1e4, -1e4));
        core::Point::new(
            (q.x * ONE).round().clamp(-1e8, 1e8) as i32 - off.0 * ONE as i32,
            (q.y * ONE).round().clamp(-1e8, 1e8) as i32 - off.1 * ONE as i32,
        )
    }

    fn fish_outline(&self, it: &ItemTruth) -> (Vec<Point>, Vec<Point>) {
        let pose = it.pose();
        let f = self.footprint.placed(&pose);
        let r = self.items.fish.hole_radius;
        let hole = (0..24)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 24.0;
                Point::new(pose.x + r * a.cos(), pose.y + r * a.sin())
            })
            .collect();
        (f.outline, hole)
    }

    fn circle(c: Point, r: f64, n: usize) -> Vec<Point> {
        (0..n)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                Point::new(c.x + r * a.cos(), c.y + r * a.sin())
            })
            .collect()
    }

    fn fill(
        &self,
        img: &mut Mat,
        rings: &[&[Point]],
        z: f64,
        colour: [f64; 3],
        off: (i32, i32),
    ) -> Result<()> {
        let mut contours: CvVec<CvVec<core::Point>> = CvVec::new();
        for ring in rings {
            let v: CvVec<core::Point> = ring
                .iter()
                .map(|p| self.project(Point3::new(p.x, p.y, z), off))
                .collect();
            contours.push(v);
        }
        imgproc::fill_poly(
            img,
            &contours,
            bgr(colour),
            imgproc::LINE_AA,
            SHIFT,
            core::Point::new(0, 0),
        )?;
        Ok(())
    }

    /// Whether a falling item at `p` is hidden from the camera by the table top.
    fn hidden_by_table(&self, p: Point3<f64>) -> bool {
        if p.z >= 0.0 {
            return false;
        }
        let c = self.camera.position();
        let s = c.z / (c.z - p.z);
        let q = c + (p.coords - c) * s;
        self.table.signed_distance(Point::new(q.x, q.y)) > 2.0
    }

    fn draw_item(&self, img: &mut Mat, id: ItemId, it: &ItemTruth, off: (i32, i32)) -> Result<()> {
        if self.hidden_by_table(Point3::new(it.x, it.y, it.z)) {
            return Ok(());
        }
        if id.is_coin() {
            let c = Point::new(it.x, it.y);
            let r = self.items.coin.radius;
            let top = it.z + self.items.coin.thickness;
            self.fill(img, &[&Self::circle(c, r, 28)], it.z, COIN_RIM, off)?;
            self.fill(img, &[&Self::circle(c, r, 28)], top, COIN_TOP, off)?;
            self.fill(
                img,
                &[
                    &Self::circle(c, r * 0.86, 24),
                    &Self::circle(c, r * 0.78, 24),
                ],
                top,
                COIN_RING,
                off,
            )?;
            // A highlight toward the light (table -x, +y).
            let hl = Point::new(c.x - r * 0.35, c.y + r * 0.35);
            self.fill(
                img,
                &[&Self::circle(hl, r * 0.25, 12)],
                top,
                scaled(COIN_RING, 1.08),
                off,
            )?;
            return Ok(());
        }
        let (colour, ink) = self
            .colours
            .get(id.owner)
            .copied()
            .unwrap_or(([180.0; 3], [30.0; 3]));
        let (outline, hole) = self.fish_outline(it);
        let top = it.z + self.items.fish.thickness;
        // A fish lying on something is lit a little more (closer to the lamp).
        let lift = 1.0 + 0.04 * it.z.clamp(0.0, 5.0);
        self.fill(img, &[&outline, &hole], it.z, scaled(colour, 0.55), off)?;
        self.fill(img, &[&outline, &hole], top, scaled(colour, lift), off)?;
        self.draw_number(img, id.owner + 1, it, top, ink, off)
    }

    /// The tag's number in seven-segment strokes on the tail, along the fish axis.
    fn draw_number(
        &self,
        img: &mut Mat,
        n: usize,
        it: &ItemTruth,
        z: f64,
        ink: [f64; 3],
        off: (i32, i32),
    ) -> Result<()> {
        const SEG: [[(f64, f64); 2]; 7] = [
            [(0.0, 1.0), (0.6, 1.0)],
            [(0.6, 1.0), (0.6, 0.5)],
            [(0.6, 0.5), (0.6, 0.0)],
            [(0.0, 0.0), (0.6, 0.0)],
            [(0.0, 0.0), (0.0, 0.5)],
            [(0.0, 0.5), (0.0, 1.0)],
            [(0.0, 0.5), (0.6, 0.5)],
        ];
        const DIGITS: [u8; 10] = [0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F];
        let text: Vec<u32> = n
            .to_string()
            .chars()
            .filter_map(|c| c.to_digit(10))
            .collect();
        let reach = self
            .footprint
            .outline()
            .iter()
            .map(|p| p.x)
            .fold(0.0, f64::max);
        let height = 12.0;
        let pitch = 0.9 * height;
        let total = pitch * text.len() as f64 - 0.3 * height;
        let centre_x = reach * 0.62;
        let (s, c) = it.pose().angle().sin_cos();
        let mut lines: CvVec<CvVec<core::Point>> = CvVec::new();
        for (k, d) in text.iter().enumerate() {
            let mask = DIGITS[*d as usize % 10];
            for (i, seg) in SEG.iter().enumerate() {
                if mask & (1 << i) == 0 {
                    continue;
                }
                let mut line = CvVec::new();
                for &(u, v) in seg {
                    // Reading along +x of the fish: digit x along fish x, digit up along fish +y.
                    let fx = centre_x - total / 2.0 + pitch * k as f64 + u * height;
                    let fy = (v - 0.5) * height;
                    let p = Point3::new(it.x + c * fx - s * fy, it.y + s * fx + c * fy, z);
                    line.push(self.project(p, off));
                }
                lines.push(line);
            }
        }
        let px_per_mm = self.camera.intrinsics.fx() / self.camera.position().z.max(1.0);
        let thick = (1.6 * px_per_mm).round().max(1.0) as i32;
        imgproc::polylines(img, &lines, false, bgr(ink), thick, imgproc::LINE_AA, SHIFT)?;
        Ok(())
    }

    fn draw_hand(&self, img: &mut Mat, h: &HandTruth, off: (i32, i32)) -> Result<()> {
        let (s, c) = h.arm_theta.sin_cos();
        let at = |along: f64, side: f64, z: f64| {
            Point3::new(
                h.x + c * along - s * side,
                h.y + s * along + c * side,
                h.z + z,
            )
        };
        let poly = |pts: &[Point3<f64>]| -> CvVec<core::Point> {
            pts.iter().map(|p| self.project(*p, off)).collect()
        };
        let arm = poly(&[
            at(110.0, -38.0, 45.0),
            at(520.0, -45.0, 230.0),
            at(520.0, 45.0, 230.0),
            at(110.0, 38.0, 45.0),
        ]);
        let fist: Vec<Point3<f64>> = (0..20)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 20.0;
                at(85.0 + 42.0 * a.cos(), 36.0 * a.sin(), 28.0)
            })
            .collect();
        let finger = poly(&[
            at(0.0, -8.0, 2.0),
            at(70.0, -9.0, 20.0),
            at(70.0, 9.0, 20.0),
            at(0.0, 8.0, 2.0),
        ]);
        let tip: Vec<Point3<f64>> = (0..12)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 12.0;
                at(4.0 * a.cos(), 8.0 * a.sin(), 2.0)
            })
            .collect();
        for (p, k) in [
            (arm, 0.9),
            (poly(&fist), 1.0),
            (finger, 1.05),
            (poly(&tip), 1.1),
        ] {
            let mut cs: CvVec<CvVec<core::Point>> = CvVec::new();
            cs.push(p);
            imgproc::fill_poly(
                img,
                &cs,
                bgr(scaled(SKIN, k)),
                imgproc::LINE_AA,
                SHIFT,
                core::Point::new(0, 0),
            )?;
        }
        Ok(())
    }

    /// Draws the items of `items` (with the hand) over `img`, lowest first.
    fn draw_items(
        &self,
        img: &mut Mat,
        items: &[(ItemId, ItemTruth)],
        hand: Option<&HandTruth>,
        off: (i32, i32),
    ) -> Result<()> {
        let mut order: Vec<&(ItemId, ItemTruth)> = items.iter().collect();
        order.sort_by(|a, b| {
            a.1.z
                .total_cmp(&b.1.z)
                .then(a.0.is_fish().cmp(&b.0.is_fish()))
        });
        for (id, it) in order {
            self.draw_item(img, *id, it, off)?;
        }
        if let Some(h) = hand {
            self.draw_hand(img, h, off)?;
        }
        Ok(())
    }

    /// The image rectangle an item (or the hand) covers, in pixels.
    fn bounds_of(
        &self,
        id: Option<ItemId>,
        it: &ItemTruth,
        hand: Option<&HandTruth>,
    ) -> Option<Rect> {
        let pts: Vec<Point3<f64>> = if let Some(h) = hand {
            let (s, c) = h.arm_theta.sin_cos();
            [
                (0.0, -10.0, 0.0),
                (0.0, 10.0, 0.0),
                (130.0, -45.0, 45.0),
                (130.0, 45.0, 45.0),
                (520.0, -45.0, 230.0),
                (520.0, 45.0, 230.0),
                (40.0, 0.0, 70.0),
            ]
            .iter()
            .map(|&(a, sd, z)| Point3::new(h.x + c * a - s * sd, h.y + s * a + c * sd, h.z + z))
            .collect()
        } else {
            let r = if id.is_some_and(|i| i.is_fish()) {
                self.footprint.reach()
            } else {
                self.items.coin.radius
            };
            let mut v = Vec::new();
            for k in 0..8 {
                let a = std::f64::consts::TAU * k as f64 / 8.0;
                for z in [it.z, it.z + 3.0] {
                    v.push(Point3::new(
                        it.x + r * 1.09 * a.cos(),
                        it.y + r * 1.09 * a.sin(),
                        z,
                    ));
                }
            }
            v
        };
        let mut lo = (f64::INFINITY, f64::INFINITY);
        let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in pts {
            let q = self.camera.project(p)?;
            lo = (lo.0.min(q.x), lo.1.min(q.y));
            hi = (hi.0.max(q.x), hi.1.max(q.y));
        }
        Some(Rect::new(
            lo.0.floor() as i32 - 3,
            lo.1.floor() as i32 - 3,
            (hi.0 - lo.0).ceil() as i32 + 7,
            (hi.1 - lo.1).ceil() as i32 + 7,
        ))
    }

    /// The frame `cur` as the camera sees it: motion blur from `prev` (the frame
    /// before), exposure drift and sensor noise.
    pub fn render_frame(
        &mut self,
        prev: Option<&FrameTruth>,
        cur: &FrameTruth,
        fps: f64,
    ) -> Result<Mat> {
        let n = self.spec.subframes.max(1) as usize;
        let shutter = self.spec.shutter.clamp(0.0, 1.0);
        // Items that move between the two frames are blurred; the rest are drawn once.
        let mut still: Vec<(ItemId, ItemTruth)> = Vec::new();
        let mut moving: Vec<(ItemId, ItemTruth, ItemTruth)> = Vec::new();
        for (id, it) in &cur.items {
            match prev.and_then(|p| p.items.get(id)) {
                Some(a) if n > 1 && shutter > 0.0 && moved(a, it) => moving.push((*id, *a, *it)),
                _ => still.push((*id, *it)),
            }
        }
        let hand_moves = n > 1
            && shutter > 0.0
            && match (prev.and_then(|p| p.hand), cur.hand) {
                (Some(a), Some(b)) => {
                    (a.x - b.x).abs() + (a.y - b.y).abs() + (a.z - b.z).abs() > 0.05
                }
                _ => false,
            };
        let mut frame = self.background.try_clone()?;
        if moving.is_empty() && !hand_moves {
            self.draw_items(&mut frame, &still, cur.hand.as_ref(), (0, 0))?;
        } else {
            // Moving items are drawn over the still ones (they rarely overlap).
            self.draw_items(
                &mut frame,
                &still,
                if hand_moves { None } else { cur.hand.as_ref() },
                (0, 0),
            )?;
            let lerp_hand = |u: f64| -> Option<HandTruth> {
                let b = cur.hand?;
                let a = prev.and_then(|p| p.hand).unwrap_or(b);
                Some(HandTruth {
                    x: a.x + (b.x - a.x) * u,
                    y: a.y + (b.y - a.y) * u,
                    arm_theta: a.arm_theta + angle_diff(b.arm_theta, a.arm_theta) * u,
                    z: a.z + (b.z - a.z) * u,
                })
            };
            let us: Vec<f64> = (0..n)
                .map(|k| 1.0 - shutter + shutter * (k as f64 + 0.5) / n as f64)
                .collect();
            let sub = |u: f64| -> Vec<(ItemId, ItemTruth)> {
                moving
                    .iter()
                    .map(|(id, a, b)| (*id, lerp(a, b, u)))
                    .collect()
            };
            // The swept rectangle.
            let mut roi: Option<Rect> = None;
            for &u in &[us[0], us[n - 1]] {
                for (id, it) in sub(u) {
                    roi = union(roi, self.bounds_of(Some(id), &it, None));
                }
                if hand_moves {
                    if let Some(h) = lerp_hand(u) {
                        roi = union(
                            roi,
                            self.bounds_of(
                                None,
                                &ItemTruth {
                                    x: 0.0,
                                    y: 0.0,
                                    theta: None,
                                    z: 0.0,
                                    on_table: true,
                                },
                                Some(&h),
                            ),
                        );
                    }
                }
            }
            let full = Rect::new(0, 0, self.size[0] as i32, self.size[1] as i32);
            if let Some(roi) = roi
                .map(|r| r & full)
                .filter(|r| r.width > 0 && r.height > 0)
            {
                let base = Mat::roi(&frame, roi)?.try_clone()?;
                let mut acc = Mat::new_rows_cols_with_default(
                    roi.height,
                    roi.width,
                    core::CV_16UC3,
                    Scalar::all(0.0),
                )?;
                let mut scratch = Mat::default();
                let mut tmp = Mat::default();
                for &u in &us {
                    base.copy_to(&mut scratch)?;
                    self.draw_items(
                        &mut scratch,
                        &sub(u),
                        lerp_hand(u).as_ref().filter(|_| hand_moves),
                        (roi.x, roi.y),
                    )?;
                    core::add(&acc, &scratch, &mut tmp, &core::no_array(), core::CV_16UC3)?;
                    std::mem::swap(&mut acc, &mut tmp);
                }
                let mut dst = Mat::roi_mut(&mut frame, roi)?;
                acc.convert_to(&mut dst, core::CV_8UC3, 1.0 / n as f64, 0.0)?;
            }
        }
        self.finish(&mut frame, cur.frame as f64 / fps)?;
        Ok(frame)
    }

    /// Exposure drift and sensor noise.
    fn finish(&mut self, frame: &mut Mat, t_s: f64) -> Result<()> {
        let a = self.spec.exposure_drift;
        if a > 0.0 {
            let gain = 1.0
                + a * (std::f64::consts::TAU * t_s / 7.0).sin()
                + 0.5 * a * (std::f64::consts::TAU * t_s / 2.3 + 1.0).sin();
            let mut out = Mat::default();
            frame.convert_to(&mut out, -1, gain, 0.0)?;
            *frame = out;
        }
        if !self.noise.is_empty() {
            let k = self.rng.random_range(0..self.noise.len());
            let (pos, neg) = &self.noise[k];
            let mut out = Mat::default();
            core::add(&*frame, pos, &mut out, &core::no_array(), -1)?;
            core::subtract(&out, neg, frame, &core::no_array(), -1)?;
        }
        Ok(())
    }

    /// A chessboard view held in front of the camera over the background.
    pub fn render_board(&self, pose: &BoardPose, board: &BoardSpec) -> Result<Mat> {
        let rays = &self.rays;
        let mut data: Vec<u8> = self.background.data_bytes()?.to_vec();
        let [w, _] = self.size;
        let w = w as usize;
        data.par_chunks_mut(w * 3).enumerate().for_each(|(y, row)| {
            for x in 0..w {
                let mut acc = 0.0;
                let mut hits = 0;
                for s in 0..4 {
                    let r = rays[(y * w + x) * 4 + s];
                    if let Some(v) = pose.shade(&Vector3::new(r[0] as f64, r[1] as f64, 1.0), board)
                    {
                        acc += v;
                        hits += 1;
                    }
                }
                if hits == 0 {
                    continue;
                }
                for i in 0..3 {
                    let behind = row[x * 3 + i] as f64;
                    let card = acc / hits as f64 * [225.0, 232.0, 235.0][i];
                    let v = (card * hits as f64 + behind * (4 - hits) as f64) / 4.0;
                    row[x * 3 + i] = v.round().clamp(0.0, 255.0) as u8;
                }
            }
        });
        let mut m = mat_from_bgr(self.size[0], self.size[1], &data)?;
        let mut blurred = Mat::default();
        // A touch of lens softness.
        imgproc::gaussian_blur_def(&m, &mut blurred, core::Size::new(3, 3), 0.6)?;
        m = blurred;
        Ok(m)
    }
}

fn moved(a: &ItemTruth, b: &ItemTruth) -> bool {
    (a.x - b.x).abs() + (a.y - b.y).abs() + (a.z - b.z).abs() > 0.01
        || (a.theta.unwrap_or(0.0) - b.theta.unwrap_or(0.0)).abs() > 1e-4
}

fn angle_diff(b: f64, a: f64) -> f64 {
    (b - a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
}

fn lerp(a: &ItemTruth, b: &ItemTruth, u: f64) -> ItemTruth {
    ItemTruth {
        x: a.x + (b.x - a.x) * u,
        y: a.y + (b.y - a.y) * u,
        theta: match (a.theta, b.theta) {
            (Some(p), Some(q)) => Some(p + angle_diff(q, p) * u),
            (_, q) => q,
        },
        z: a.z + (b.z - a.z) * u,
        on_table: b.on_table,
    }
}

fn union(a: Option<Rect>, b: Option<Rect>) -> Option<Rect> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a | b),
        (x, None) | (None, x) => x,
    }
}

/// A video file for frames: MJPG in .avi (the default), mp4v in .mp4.
pub struct VideoOut {
    writer: videoio::VideoWriter,
}

impl VideoOut {
    pub fn create(path: &Path, fps: f64, size: [u32; 2]) -> Result<VideoOut> {
        VideoOut::create_with(path, fps, size, None)
    }

    /// As [`VideoOut::create`], with the codec (`mjpg`, `mp4v`) chosen.
    pub fn create_with(
        path: &Path,
        fps: f64,
        size: [u32; 2],
        codec: Option<&str>,
    ) -> Result<VideoOut> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("avi")
            .to_ascii_lowercase();
        let by_ext = match ext.as_str() {
            "mp4" | "m4v" | "mov" => "mp4v",
            "avi" => "mjpg",
            other => {
                return Err(RenderError::Invalid(format!(
                    "unsupported video extension `.{other}` (use .avi or .mp4)"
                )))
            }
        };
        let fourcc = match codec.unwrap_or(by_ext).to_ascii_lowercase().as_str() {
            "mp4v" => videoio::VideoWriter::fourcc('m', 'p', '4', 'v')?,
            "mjpg" => videoio::VideoWriter::fourcc('M', 'J', 'P', 'G')?,
            other => {
                return Err(RenderError::Invalid(format!(
                    "unsupported codec `{other}` (use mjpg or mp4v)"
                )))
            }
        };
        let frame_size = core::Size::new(size[0] as i32, size[1] as i32);
        let name = path.to_string_lossy();
        // OpenCV's own AVI writer only knows MJPG: mp4v goes through FFmpeg.
        let mut writer = if fourcc == videoio::VideoWriter::fourcc('M', 'J', 'P', 'G')? {
            videoio::VideoWriter::new(name.as_ref(), fourcc, fps, frame_size, true)?
        } else {
            videoio::VideoWriter::new_with_backend(
                name.as_ref(),
                videoio::CAP_FFMPEG,
                fourcc,
                fps,
                frame_size,
                true,
            )?
        };
        if !writer.is_opened()? {
            return Err(RenderError::Invalid(format!(
                "cannot open {} for writing",
                path.display()
            )));
        }
        // JPEG quality of MJPG frames: smaller files, still sharp.
        let _ = writer.set(videoio::VIDEOWRITER_PROP_QUALITY, 80.0);
        Ok(VideoOut { writer })
    }

    pub fn write(&mut self, frame: &Mat) -> Result<()> {
        self.writer.write(frame)?;
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.writer.release()?;
        Ok(())
    }
}

/// Writes an image (PNG or JPEG by extension).
pub fn write_image(path: &Path, img: &Mat) -> Result<()> {
    let ok = opencv::imgcodecs::imwrite(path.to_string_lossy().as_ref(), img, &CvVec::new())?;
    if !ok {
        return Err(RenderError::Invalid(format!(
            "cannot write {}",
            path.display()
        )));
    }
    Ok(())
}

/// Renders every frame of a truth into a video; `progress` is told after each frame.
pub fn render_video(
    truth: &Truth,
    spec: &RenderSpec,
    path: &Path,
    codec: Option<&str>,
    mut progress: impl FnMut(u64),
) -> Result<()> {
    let mut r = Renderer::new(truth, spec, truth.seed)?;
    let mut out = VideoOut::create_with(path, truth.video.fps, truth.camera.image_size, codec)?;
    let mut prev: Option<&FrameTruth> = None;
    for f in &truth.frames {
        let img = r.render_frame(prev, f, truth.video.fps)?;
        out.write(&img)?;
        prev = Some(f);
        progress(f.frame);
    }
    out.finish()
}
