//! The simulator's renderer: draws a [`Truth`] through its true camera into video
//! frames and writes them with OpenCV's `VideoWriter` (MJPG .avi, mp4v .mp4, H.264),
//! and renders the calibration images (chessboard views, the empty table) as PNG.
//! How it all looks is the scenario's `sim::look::Look`: the original look takes
//! the original code path (same bytes); any other adds soft cast shadows, shaded
//! and glossy tags, other table and floor materials, the table's side, and a
//! camera stage (light colour, white balance and auto-exposure over time,
//! vignetting, defocus) before the noise, and hides an item falling past an edge
//! wherever the table top lies in front of it.
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
use crate::sim::look::{
    Codec, FloorLook, FloorMaterial, Light, Look, TableLook, TableMaterial, TagLook,
};
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
// Copper (a random look's coins lie between brass and these) and tarnish.
const COPPER_TOP: [f64; 3] = [70.0, 120.0, 200.0];
const COPPER_RIM: [f64; 3] = [35.0, 65.0, 120.0];
const COPPER_RING: [f64; 3] = [110.0, 165.0, 235.0];
const COIN_TARNISH: [f64; 3] = [62.0, 92.0, 96.0];

/// Raised whenever the renderer draws a clip's pixels differently: `fishtrack eval`
/// draws a kept clip again when the revision it was drawn by differs (the truth
/// alone calls a video current that the renderer now draws otherwise). 2: an item
/// falling past an edge is hidden where the table top lies in front of it.
pub const REVISION: u32 = 2;

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

/// A look's `[r, g, b]` as BGR floats.
fn bgr_of(rgb: [u8; 3]) -> [f64; 3] {
    [rgb[2] as f64, rgb[1] as f64, rgb[0] as f64]
}

/// Procedural planks (BGR 0..255) at a table point (mm): wavy grain, fine grain, a
/// tone per plank and dark seams (`seam` of the light between planks). `contrast`
/// scales the grain; the original wood is `TableLook::default()` with contrast 1
/// and seam 0.65 (factors of exactly 1 leave its numbers as they were).
fn planks(x: f64, y: f64, t: &TableLook, colour: [f64; 3], seam: f64, contrast: f64) -> [f64; 3] {
    let (x, y) = if t.planks_along_x { (x, y) } else { (y, x) };
    let (w, g) = (t.plank_mm, t.grain_scale);
    let plank = (y / w).floor();
    let yy = y - plank * w;
    let grain = 0.5
        + 0.5
            * (0.22
                * g
                * (y + 9.0 * (x * 0.004 * g + plank * 1.7).sin()
                    + 2.5 * (x * 0.037 * g + plank).sin()))
            .sin();
    let fine = 0.5 + 0.5 * (1.3 * g * y + 3.0 * (x * 0.02 * g).sin() + plank * 3.1).sin();
    let seam = if !(1.2..=w - 1.2).contains(&yy) {
        seam
    } else {
        1.0
    };
    let tone =
        (0.82 + 0.12 * contrast * grain + 0.04 * contrast * fine + 0.03 * (plank * 2.3).sin())
            * seam;
    [colour[0] * tone, colour[1] * tone, colour[2] * tone]
}

/// A hash of a lattice point to [0, 1).
fn lattice(ix: i64, iy: i64, salt: u64) -> f64 {
    let mut h = (ix as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (iy as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ salt.wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^= h >> 31;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 29;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Smooth value noise in [0, 1] with features of about `scale` mm.
fn value_noise(x: f64, y: f64, scale: f64, salt: u64) -> f64 {
    let (u, v) = (x / scale, y / scale);
    let (i, j) = (u.floor(), v.floor());
    let smooth = |t: f64| t * t * (3.0 - 2.0 * t);
    let (a, b) = (smooth(u - i), smooth(v - j));
    let (i, j) = (i as i64, j as i64);
    let at = |di: i64, dj: i64| lattice(i + di, j + dj, salt);
    let near = at(0, 0) + (at(1, 0) - at(0, 0)) * a;
    let far = at(0, 1) + (at(1, 1) - at(0, 1)) * a;
    near + (far - near) * b
}

/// The table top's material (BGR 0..255) at a table point (mm).
fn table_texture(x: f64, y: f64, t: &TableLook) -> [f64; 3] {
    let c = bgr_of(t.colour);
    let k = match t.material {
        TableMaterial::Planks => return planks(x, y, t, c, 0.65, t.grain),
        // A printed wood: faint grain, barely visible joints.
        TableMaterial::Laminate => return planks(x, y, t, c, 0.93, 0.25 * t.grain),
        TableMaterial::Cloth => {
            // Warp and weft every 2.4 mm, uneven threads, soft folds.
            let p = 2.4 / t.grain_scale;
            let weave =
                (std::f64::consts::TAU * x / p).sin() * (std::f64::consts::TAU * y / p).sin();
            let thread = value_noise(x, y, 1.5, 1) - 0.5;
            let folds = value_noise(x, y, 140.0, 2) - 0.5;
            0.9 + 0.04 * t.grain * weave + 0.06 * t.grain * thread + 0.08 * folds
        }
        TableMaterial::Felt => {
            let fibre = value_noise(x, y, 0.8, 3) - 0.5;
            let mottle = value_noise(x, y, 60.0, 4) - 0.5;
            0.92 + 0.08 * t.grain * fibre + 0.06 * mottle
        }
    };
    scaled(c, k)
}

/// The floor (BGR 0..255) at a floor point (mm): the original grey-green tiles of
/// 300 mm with `FloorLook::default()`, or carpet, or boards.
fn floor(x: f64, y: f64, f: &FloorLook) -> [f64; 3] {
    let c = bgr_of(f.colour);
    match f.material {
        FloorMaterial::Tiles => {
            let s = f.tile_mm;
            let (u, v) = (x.rem_euclid(s), y.rem_euclid(s));
            let seam = u < 4.0 || v < 4.0;
            let checker = (((x / s).floor() + (y / s).floor()) as i64).rem_euclid(2) as f64;
            if seam {
                bgr_of(f.grout)
            } else {
                let k = 1.0 + f.checker * checker;
                [c[0] * k, c[1] * k, c[2] * k]
            }
        }
        FloorMaterial::Carpet => {
            let fibre = value_noise(x, y, 2.0, 5) - 0.5;
            let mottle = value_noise(x, y, 250.0, 6) - 0.5;
            scaled(c, 0.9 + 0.2 * fibre + 0.15 * mottle)
        }
        FloorMaterial::Wood => {
            let boards = TableLook {
                plank_mm: f.tile_mm / 2.0,
                ..TableLook::default()
            };
            planks(x, y, &boards, c, 0.55, 1.0)
        }
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
    /// Whether the look is not the original one: then frames go through the look's
    /// shading, shadows and camera stage (the original path stays as it was, so
    /// its frames stay byte for byte the same).
    styled: bool,
    /// Unit vector toward the light, table frame.
    light: Vector3<f64>,
    coin: CoinColours,
    /// Where the table top is in the image (255), for any styled look: shadows are
    /// kept on it, and it hides what falls behind it.
    table_mask: Option<Mat>,
    /// Items and the hand cast shadows (a styled look whose light has any).
    shadows: bool,
    /// Per pixel: vignetting × the lamp's falloff over the table (styled only).
    pixel_gain: Vec<f32>,
    /// The auto-exposure's gain and the frame brightness it holds to.
    ae_gain: f64,
    ae_target: Option<f64>,
    background: Mat,
    noise: Vec<(Mat, Mat)>,
    rng: ChaCha8Rng,
    size: [u32; 2],
    /// 2x2 sub-pixel camera rays, reused by the calibration renders.
    rays: Vec<[f32; 2]>,
}

/// The coin's colours (BGR) and where its highlight sits (× radius, table frame).
#[derive(Debug, Clone, Copy)]
struct CoinColours {
    top: [f64; 3],
    rim: [f64; 3],
    ring: [f64; 3],
    highlight: f64,
    highlight_at: (f64, f64),
}

impl CoinColours {
    fn of(look: &Look) -> CoinColours {
        let c = &look.coins;
        let a = look.light.azimuth_deg.to_radians();
        // Exactly the original offset (−1, 1) at the original light azimuth.
        let highlight_at = if look.light.azimuth_deg == Light::default().azimuth_deg {
            (-1.0, 1.0)
        } else {
            (
                std::f64::consts::SQRT_2 * a.cos(),
                std::f64::consts::SQRT_2 * a.sin(),
            )
        };
        let finish = |brass: [f64; 3], copper: [f64; 3]| -> [f64; 3] {
            if c.copper == 0.0 && c.tarnish == 0.0 {
                return brass;
            }
            let m = mix(brass, copper, c.copper);
            mix(m, scaled(COIN_TARNISH, m[1] / 175.0), c.tarnish)
        };
        CoinColours {
            top: finish(COIN_TOP, COPPER_TOP),
            rim: finish(COIN_RIM, COPPER_RIM),
            ring: finish(COIN_RING, COPPER_RING),
            highlight: c.highlight,
            highlight_at,
        }
    }
}

fn mix(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// A player's colour (BGR) as the look prints it: hue turned, saturation and
/// value scaled (HSV), so the four palette hues stay apart.
fn printed(c: [f64; 3], tags: &TagLook, player: usize) -> [f64; 3] {
    let shift = tags.hue_shift_deg.get(player).copied().unwrap_or(0.0);
    let [b, g, r] = c.map(|v| v / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let d = max - min;
    let hue = if d <= 0.0 {
        0.0
    } else if max == r {
        60.0 * ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    let sat = if max <= 0.0 { 0.0 } else { d / max };
    let (h, s, v) = (
        (hue + shift).rem_euclid(360.0),
        (sat * tags.saturation).clamp(0.0, 1.0),
        (max * tags.value).clamp(0.0, 1.0),
    );
    let k = |n: f64| {
        let k = (n + h / 60.0).rem_euclid(6.0);
        v - v * s * k.min(4.0 - k).clamp(0.0, 1.0)
    };
    [k(1.0) * 255.0, k(3.0) * 255.0, k(5.0) * 255.0]
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
        let look = &spec.look;
        let styled = !look.is_original();
        let colours = truth
            .game
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let [r, g, b] = parse_hex_color(&p.color).unwrap_or([200, 200, 200]);
                let mut c = [b as f64, g as f64, r as f64];
                let lum = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
                let ink = if lum > 140.0 {
                    [30.0, 30.0, 30.0]
                } else {
                    [235.0, 235.0, 235.0]
                };
                if styled {
                    c = printed(c, &look.tags, i);
                }
                (c, ink)
            })
            .collect();
        let size = truth.camera.image_size;
        let rays = sample_rays(&camera);
        let l = look.light_direction();
        let mut r = Renderer {
            footprint: FishFootprint::new(&truth.game.items),
            items: truth.game.items.clone(),
            camera,
            table,
            colours,
            spec: spec.clone(),
            styled,
            light: Vector3::new(l[0], l[1], l[2]),
            coin: CoinColours::of(look),
            table_mask: None,
            shadows: false,
            pixel_gain: vec![],
            ae_gain: 1.0,
            ae_target: None,
            background: Mat::default(),
            noise: vec![],
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_F00D),
            size,
            rays: vec![],
        };
        let bg = r.shade_scene_background(&rays);
        r.background = mat_from_bgr(size[0], size[1], &bg)?;
        r.noise = r.make_noise(seed)?;
        if styled {
            r.pixel_gain = r.pixel_gains(&rays);
            r.table_mask = Some(r.table_mask()?);
            r.shadows = look.light.shadow_strength > 0.0;
        }
        r.rays = rays;
        Ok(r)
    }

    fn shade_scene_background(&self, rays: &[[f32; 2]]) -> Vec<u8> {
        let rt = self.camera.rotation.transpose();
        let pos = self.camera.position();
        let table = &self.table;
        let look = &self.spec.look;
        let depth = look.floor.depth_mm;
        let side = look.table.side_mm;
        let light = self.light;
        shade_image(&self.camera, rays, |d_cam| {
            let d = rt * d_cam;
            if d.z < -1e-9 {
                let t = -pos.z / d.z;
                let p = pos + d * t;
                if table.contains(Point::new(p.x, p.y)) {
                    // A darker band along the edge: the table's rim.
                    let m = table.signed_distance(Point::new(p.x, p.y));
                    let k = if m < 6.0 { 0.7 + 0.05 * m } else { 1.0 };
                    return scaled(table_texture(p.x, p.y, &look.table), k);
                }
                if side > 0.0 {
                    // Inside the table's outline `side` mm lower: the ray went in
                    // through the side face. Lit by how much that face turns to the light.
                    let q = pos + d * ((-side - pos.z) / d.z);
                    let qp = Point::new(q.x, q.y);
                    if table.contains(qp) {
                        let sd = |dx: f64, dy: f64| {
                            table.signed_distance(Point::new(q.x + dx, q.y + dy))
                        };
                        let n = Vector3::new(
                            sd(-1.0, 0.0) - sd(1.0, 0.0),
                            sd(0.0, -1.0) - sd(0.0, 1.0),
                            0.0,
                        );
                        let facing = if n.norm() > 0.0 {
                            n.normalize().dot(&light).max(0.0)
                        } else {
                            0.0
                        };
                        let c = table_texture(q.x, q.y + q.z, &look.table);
                        return scaled(c, 0.42 + 0.45 * facing);
                    }
                }
                let t = (-depth - pos.z) / d.z;
                let p = pos + d * t;
                // Under the table edge: its shadow on the floor.
                let shade = if table.signed_distance(Point::new(p.x, p.y)) > -60.0 {
                    0.6
                } else {
                    1.0
                };
                return scaled(floor(p.x, p.y, &look.floor), shade);
            }
            [120.0, 110.0, 100.0]
        })
    }

    /// Per pixel (styled looks): vignetting (cos⁴-like, stronger toward the
    /// corners) times the lamp's falloff across the table plane, brightest
    /// toward the light.
    fn pixel_gains(&self, rays: &[[f32; 2]]) -> Vec<f32> {
        let look = &self.spec.look;
        let [w, h] = self.size;
        let (w, h) = (w as usize, h as usize);
        let rt = self.camera.rotation.transpose();
        let pos = self.camera.position();
        let (lo, hi) = self.table.bounds();
        let centre = Point::new((lo.x + hi.x) / 2.0, (lo.y + hi.y) / 2.0);
        let reach = ((hi.x - lo.x).hypot(hi.y - lo.y) / 2.0).max(1.0);
        let toward = Vector3::new(self.light.x, self.light.y, 0.0);
        let toward = if toward.norm() > 1e-6 {
            toward.normalize()
        } else {
            toward
        };
        let (vig, fall) = (look.camera.vignetting, look.light.falloff);
        (0..w * h)
            .into_par_iter()
            .map(|i| {
                let (x, y) = ((i % w) as f64 + 0.5, (i / w) as f64 + 0.5);
                let (u, v) = ((x / w as f64 - 0.5) * 2.0, (y / h as f64 - 0.5) * 2.0);
                let r2 = (u * u + v * v) / 2.0;
                let mut g = 1.0 - vig * r2 * r2.sqrt();
                if fall > 0.0 {
                    let r = rays[i * 4];
                    let d = rt * Vector3::new(r[0] as f64, r[1] as f64, 1.0);
                    if d.z < -1e-9 {
                        let p = pos + d * (-pos.z / d.z);
                        let off = Vector3::new(p.x - centre.x, p.y - centre.y, 0.0) / reach;
                        // −1 on the far side from the lamp, +1 under it.
                        let along = off.dot(&toward).clamp(-1.5, 1.5);
                        g *= 1.0 - fall * (0.5 - 0.5 * along) - 0.3 * fall * off.norm_squared();
                    }
                }
                g.max(0.0) as f32
            })
            .collect()
    }

    /// The table top's pixels (255) as a one-channel mask.
    fn table_mask(&self) -> Result<Mat> {
        let [w, h] = self.size;
        let mut mask =
            Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC1, Scalar::all(0.0))?;
        let corners = self.table.corners();
        let mut ring: CvVec<core::Point> = CvVec::new();
        // Edges subdivided: the lens bends them.
        for (i, a) in corners.iter().enumerate() {
            let b = corners[(i + 1) % corners.len()];
            for k in 0..64 {
                let t = k as f64 / 64.0;
                let p = Point3::new(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, 0.0);
                ring.push(self.project(p, (0, 0)));
            }
        }
        let mut cs: CvVec<CvVec<core::Point>> = CvVec::new();
        cs.push(ring);
        imgproc::fill_poly(
            &mut mask,
            &cs,
            Scalar::all(255.0),
            imgproc::LINE_8,
            SHIFT,
            core::Point::new(0, 0),
        )?;
        Ok(mask)
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

    /// An item below the table top's plane (falling past an edge) shows only where
    /// the top does not hide it. Placed by its centre alone, a tag whose hole showed
    /// just past the edge was drawn whole over the top (and over a tag lying there)
    /// while it fell beyond a side edge, where no camera above the table could see
    /// it: drawn on a copy, it is kept only off the top's picture.
    fn draw_behind_the_top(
        &self,
        img: &mut Mat,
        top: &Mat,
        id: ItemId,
        it: &ItemTruth,
        off: (i32, i32),
    ) -> Result<()> {
        let mut layer = img.try_clone()?;
        self.draw_item(&mut layer, id, it, off)?;
        let top = Mat::roi(top, Rect::new(off.0, off.1, img.cols(), img.rows()))?;
        let mut open = Mat::default();
        core::bitwise_not(&top, &mut open, &core::no_array())?;
        layer.copy_to_masked(img, &open)?;
        Ok(())
    }

    fn draw_item(&self, img: &mut Mat, id: ItemId, it: &ItemTruth, off: (i32, i32)) -> Result<()> {
        // A styled look hides what lies behind the top pixel by pixel (above).
        if self.table_mask.is_none() && self.hidden_by_table(Point3::new(it.x, it.y, it.z)) {
            return Ok(());
        }
        if id.is_coin() {
            let c = Point::new(it.x, it.y);
            let r = self.items.coin.radius;
            let top = it.z + self.items.coin.thickness;
            let k = &self.coin;
            self.fill(img, &[&Self::circle(c, r, 28)], it.z, k.rim, off)?;
            self.fill(img, &[&Self::circle(c, r, 28)], top, k.top, off)?;
            self.fill(
                img,
                &[
                    &Self::circle(c, r * 0.86, 24),
                    &Self::circle(c, r * 0.78, 24),
                ],
                top,
                k.ring,
                off,
            )?;
            // A highlight toward the light (originally table -x, +y).
            let (hx, hy) = k.highlight_at;
            let hl = Point::new(c.x + hx * r * 0.35, c.y + hy * r * 0.35);
            self.fill(
                img,
                &[&Self::circle(hl, r * 0.25, 12)],
                top,
                scaled(k.ring, k.highlight),
                off,
            )?;
            return Ok(());
        }
        let (mut colour, ink) = self
            .colours
            .get(id.owner)
            .copied()
            .unwrap_or(([180.0; 3], [30.0; 3]));
        let (outline, hole) = self.fish_outline(it);
        let top = it.z + self.items.fish.thickness;
        if self.styled {
            colour = self.tag_shading(colour, id, it);
        }
        // A fish lying on something is lit a little more (closer to the lamp).
        let lift = 1.0 + 0.04 * it.z.clamp(0.0, 5.0);
        let side = self.spec.look.tags.side_shade;
        self.fill(img, &[&outline, &hole], it.z, scaled(colour, side), off)?;
        self.fill(img, &[&outline, &hole], top, scaled(colour, lift), off)?;
        self.draw_number(img, id.owner + 1, it, top, ink, off)
    }

    /// A tag's colour under the look's light: no tag lies quite flat, so each
    /// (by its id, over time by its angle) tilts a little toward or away from
    /// the lamp (diffuse), and where the lamp's reflection meets the camera it
    /// washes out toward white (specular).
    fn tag_shading(&self, c: [f64; 3], id: ItemId, it: &ItemTruth) -> [f64; 3] {
        let tags = &self.spec.look.tags;
        let salt = id.owner as u64 * 2 + u64::from(id.is_fish());
        let a = std::f64::consts::TAU * lattice(id.owner as i64, 7, salt) + it.theta.unwrap_or(0.0);
        let tilt = 0.05 + 0.1 * lattice(id.owner as i64, 11, salt);
        let n = Vector3::new(tilt * a.cos(), tilt * a.sin(), 1.0).normalize();
        let l = self.light;
        let diffuse = 1.0 + tags.diffuse * 4.0 * (n.dot(&l) - l.z);
        let eye = (self.camera.position() - Vector3::new(it.x, it.y, it.z)).normalize();
        let mirror = n * (2.0 * n.dot(&l)) - l;
        let spec = tags.specular * mirror.dot(&eye).max(0.0).powf(tags.shininess);
        let c = scaled(c, diffuse.clamp(0.6, 1.4));
        [
            c[0] + (255.0 - c[0]) * spec,
            c[1] + (255.0 - c[1]) * spec,
            c[2] + (255.0 - c[2]) * spec,
        ]
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
        let thick = (1.6 * self.spec.look.tags.ink_weight * px_per_mm)
            .round()
            .max(1.0) as i32;
        imgproc::polylines(img, &lines, false, bgr(ink), thick, imgproc::LINE_AA, SHIFT)?;
        Ok(())
    }

    /// The hand and arm as table-frame polygons, each with its brightness.
    fn hand_parts(h: &HandTruth) -> [(Vec<Point3<f64>>, f64); 4] {
        let (s, c) = h.arm_theta.sin_cos();
        let at = |along: f64, side: f64, z: f64| {
            Point3::new(
                h.x + c * along - s * side,
                h.y + s * along + c * side,
                h.z + z,
            )
        };
        let arm = vec![
            at(110.0, -38.0, 45.0),
            at(520.0, -45.0, 230.0),
            at(520.0, 45.0, 230.0),
            at(110.0, 38.0, 45.0),
        ];
        let fist: Vec<Point3<f64>> = (0..20)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 20.0;
                at(85.0 + 42.0 * a.cos(), 36.0 * a.sin(), 28.0)
            })
            .collect();
        let finger = vec![
            at(0.0, -8.0, 2.0),
            at(70.0, -9.0, 20.0),
            at(70.0, 9.0, 20.0),
            at(0.0, 8.0, 2.0),
        ];
        let tip: Vec<Point3<f64>> = (0..12)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 12.0;
                at(4.0 * a.cos(), 8.0 * a.sin(), 2.0)
            })
            .collect();
        [(arm, 0.9), (fist, 1.0), (finger, 1.05), (tip, 1.1)]
    }

    fn draw_hand(&self, img: &mut Mat, h: &HandTruth, off: (i32, i32)) -> Result<()> {
        for (pts, k) in Self::hand_parts(h) {
            let mut cs: CvVec<CvVec<core::Point>> = CvVec::new();
            cs.push(pts.iter().map(|p| self.project(*p, off)).collect());
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

    /// An item's top face as a table-frame polygon (what casts its shadow).
    fn item_top(&self, id: ItemId, it: &ItemTruth) -> Vec<Point3<f64>> {
        let (outline, z) = if id.is_coin() {
            (
                Self::circle(Point::new(it.x, it.y), self.items.coin.radius, 28),
                it.z + self.items.coin.thickness,
            )
        } else {
            (self.fish_outline(it).0, it.z + self.items.fish.thickness)
        };
        outline.iter().map(|p| Point3::new(p.x, p.y, z)).collect()
    }

    /// Where a point's shadow falls on the table plane.
    fn shadow_of(&self, p: Point3<f64>) -> Point3<f64> {
        let l = self.light;
        Point3::new(p.x - l.x * p.z / l.z, p.y - l.y * p.z / l.z, 0.0)
    }

    /// The shadows' blur (Gaussian sigma), pixels.
    fn shadow_sigma_px(&self) -> f64 {
        let px_per_mm = self.camera.intrinsics.fx() / self.camera.position().z.max(1.0);
        (self.spec.look.light.shadow_softness_mm * px_per_mm / 2.0).max(0.3)
    }

    /// Soft shadows that `polys` (table-frame points above the table) cast along
    /// the light onto the table plane, darkening what `img` (at `off` in the
    /// frame) already shows, on the table top only.
    fn cast_shadows(
        &self,
        img: &mut Mat,
        polys: &[Vec<Point3<f64>>],
        off: (i32, i32),
    ) -> Result<()> {
        let Some(table_mask) = self.table_mask.as_ref().filter(|_| self.shadows) else {
            return Ok(());
        };
        let one = 1i32 << SHIFT;
        let mut contours: CvVec<CvVec<core::Point>> = CvVec::new();
        let (mut lo, mut hi) = ((i32::MAX, i32::MAX), (i32::MIN, i32::MIN));
        for poly in polys {
            if poly.iter().any(|p| p.z < 0.0) {
                continue;
            }
            let v: CvVec<core::Point> = poly
                .iter()
                .map(|p| self.project(self.shadow_of(*p), off))
                .collect();
            for q in &v {
                lo = (lo.0.min(q.x), lo.1.min(q.y));
                hi = (hi.0.max(q.x), hi.1.max(q.y));
            }
            contours.push(v);
        }
        if contours.is_empty() {
            return Ok(());
        }
        let sigma = self.shadow_sigma_px();
        // Soft shadows are drawn at a lower resolution: their edges are blurred anyway.
        let down: i32 = if sigma >= 6.0 {
            4
        } else if sigma >= 3.0 {
            2
        } else {
            1
        };
        let pad = (3.0 * sigma).ceil() as i32 + 2;
        let x0 = lo.0.div_euclid(one) - pad;
        let y0 = lo.1.div_euclid(one) - pad;
        let x1 = hi.0.div_euclid(one) + pad + 1;
        let y1 = hi.1.div_euclid(one) + pad + 1;
        let rect = Rect::new(x0, y0, x1 - x0, y1 - y0) & Rect::new(0, 0, img.cols(), img.rows());
        if rect.width <= 0 || rect.height <= 0 {
            return Ok(());
        }
        let (mw, mh) = (
            (rect.width + down - 1) / down,
            (rect.height + down - 1) / down,
        );
        let mut mask = Mat::new_rows_cols_with_default(mh, mw, core::CV_8UC1, Scalar::all(0.0))?;
        imgproc::fill_poly(
            &mut mask,
            &contours,
            Scalar::all(255.0),
            imgproc::LINE_AA,
            SHIFT + down.trailing_zeros() as i32,
            core::Point::new(-rect.x * one, -rect.y * one),
        )?;
        let mut soft = Mat::default();
        imgproc::gaussian_blur_def(&mask, &mut soft, core::Size::new(0, 0), sigma / down as f64)?;
        if down > 1 {
            let mut up = Mat::default();
            imgproc::resize(
                &soft,
                &mut up,
                core::Size::new(mw * down, mh * down),
                0.0,
                0.0,
                imgproc::INTER_LINEAR,
            )?;
            soft = up;
        }
        let strength = self.spec.look.light.shadow_strength as f32 / (255.0 * 255.0);
        for y in 0..rect.height {
            let m = soft.at_row::<u8>(y)?;
            let t = table_mask.at_row::<u8>(off.1 + rect.y + y)?;
            let row = img.at_row_mut::<core::Vec3b>(rect.y + y)?;
            for x in 0..rect.width as usize {
                let shade = m[x] as f32 * t[off.0 as usize + rect.x as usize + x] as f32;
                if shade <= 0.0 {
                    continue;
                }
                let k = 1.0 - strength * shade;
                let px = &mut row[rect.x as usize + x];
                for c in 0..3 {
                    px[c] = (px[c] as f32 * k).round() as u8;
                }
            }
        }
        Ok(())
    }

    /// Draws the items of `items` (with the hand) over `img`, lowest first; with
    /// cast shadows, the items' shadows under them and the hand's over them.
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
        if self.shadows {
            let tops: Vec<Vec<Point3<f64>>> = order
                .iter()
                .map(|(id, it)| self.item_top(*id, it))
                .collect();
            self.cast_shadows(img, &tops, off)?;
        }
        for (id, it) in order {
            match &self.table_mask {
                Some(top) if it.z < 0.0 => self.draw_behind_the_top(img, top, *id, it, off)?,
                _ => self.draw_item(img, *id, it, off)?,
            }
        }
        if let Some(h) = hand {
            if self.shadows {
                let parts: Vec<Vec<Point3<f64>>> =
                    Self::hand_parts(h).into_iter().map(|(p, _)| p).collect();
                self.cast_shadows(img, &parts, off)?;
            }
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
        // With cast shadows, the blurred shadow too.
        let mut pts = pts;
        let mut pad = 0;
        if self.shadows {
            let shadows: Vec<Point3<f64>> = pts
                .iter()
                .filter(|p| p.z >= 0.0)
                .map(|p| self.shadow_of(*p))
                .collect();
            pts.extend(shadows);
            pad = (3.0 * self.shadow_sigma_px()).ceil() as i32 + 2;
        }
        let mut lo = (f64::INFINITY, f64::INFINITY);
        let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in pts {
            let q = self.camera.project(p)?;
            lo = (lo.0.min(q.x), lo.1.min(q.y));
            hi = (hi.0.max(q.x), hi.1.max(q.y));
        }
        Some(Rect::new(
            lo.0.floor() as i32 - 3 - pad,
            lo.1.floor() as i32 - 3 - pad,
            (hi.0 - lo.0).ceil() as i32 + 7 + 2 * pad,
            (hi.1 - lo.1).ceil() as i32 + 7 + 2 * pad,
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

    /// Exposure drift and sensor noise (a styled look: its camera stage).
    fn finish(&mut self, frame: &mut Mat, t_s: f64) -> Result<()> {
        if self.styled {
            return self.camera_stage(frame, t_s);
        }
        let a = self.spec.exposure_drift;
        if a > 0.0 {
            let mut out = Mat::default();
            frame.convert_to(&mut out, -1, self.exposure_drift(t_s), 0.0)?;
            *frame = out;
        }
        self.add_noise(frame)
    }

    /// The slow exposure drift's gain at `t_s` seconds.
    fn exposure_drift(&self, t_s: f64) -> f64 {
        let a = self.spec.exposure_drift;
        1.0 + a * (std::f64::consts::TAU * t_s / 7.0).sin()
            + 0.5 * a * (std::f64::consts::TAU * t_s / 2.3 + 1.0).sin()
    }

    fn add_noise(&mut self, frame: &mut Mat) -> Result<()> {
        if !self.noise.is_empty() {
            let k = self.rng.random_range(0..self.noise.len());
            let (pos, neg) = &self.noise[k];
            let mut out = Mat::default();
            core::add(&*frame, pos, &mut out, &core::no_array(), -1)?;
            core::subtract(&out, neg, frame, &core::no_array(), -1)?;
        }
        Ok(())
    }

    /// What a styled look's camera does to the light that reaches it: defocus,
    /// the light's colour, white balance drifting, exposure drifting and
    /// auto-exposure following the frame's brightness, vignetting and the lamp's
    /// falloff (per pixel), then sensor noise.
    fn camera_stage(&mut self, frame: &mut Mat, t_s: f64) -> Result<()> {
        let look = &self.spec.look;
        let cam = &look.camera;
        if cam.defocus_px > 0.05 {
            let sigma = cam.defocus_px * self.size[0] as f64 / 1280.0;
            let mut out = Mat::default();
            imgproc::gaussian_blur_def(&*frame, &mut out, core::Size::new(0, 0), sigma)?;
            *frame = out;
        }
        let wb = cam.white_balance_drift;
        let tau = std::f64::consts::TAU;
        // Blue and red swing against each other (the auto white balance hunting),
        // green a little.
        let balance = [
            1.0 + wb * (tau * t_s / 11.0 + 0.3).sin(),
            1.0 + 0.3 * wb * (tau * t_s / 13.0 + 2.0).sin(),
            1.0 + wb * (tau * t_s / 9.0 + 4.1).sin(),
        ];
        let light = look.light_gains_bgr();
        let exposure = self.exposure_drift(t_s) * self.ae_gain;
        let gain: [f32; 3] = [0, 1, 2].map(|c| (light[c] * balance[c] * exposure) as f32);
        let w = self.size[0] as usize;
        let pixel_gain = &self.pixel_gain;
        frame
            .data_bytes_mut()?
            .par_chunks_mut(w * 3)
            .zip(pixel_gain.par_chunks(w))
            .for_each(|(row, g)| {
                for (px, &m) in row.chunks_exact_mut(3).zip(g) {
                    for c in 0..3 {
                        px[c] = (px[c] as f32 * gain[c] * m).round().min(255.0) as u8;
                    }
                }
            });
        if cam.auto_exposure > 0.0 {
            // The camera meters this frame and moves its gain for the next toward
            // the brightness it saw first.
            let m = core::mean_def(&*frame)?;
            let lum = 0.114 * m[0] + 0.587 * m[1] + 0.299 * m[2];
            let target = *self.ae_target.get_or_insert(lum);
            if lum > 1.0 {
                let step = 1.0 + cam.auto_exposure * (target / lum - 1.0);
                self.ae_gain = (self.ae_gain * step).clamp(0.5, 2.0);
            }
        }
        self.add_noise(frame)
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

/// A video file for frames: MJPG in .avi (the default), mp4v in .mp4, or H.264
/// in either.
pub struct VideoOut {
    writer: videoio::VideoWriter,
}

impl VideoOut {
    pub fn create(path: &Path, fps: f64, size: [u32; 2]) -> Result<VideoOut> {
        VideoOut::create_with(path, fps, size, None)
    }

    /// As [`VideoOut::create`], with the codec (`mjpg`, `mp4v`, `h264`) chosen.
    pub fn create_with(
        path: &Path,
        fps: f64,
        size: [u32; 2],
        codec: Option<&str>,
    ) -> Result<VideoOut> {
        VideoOut::create_compressed(path, fps, size, codec, None)
    }

    /// As [`VideoOut::create_with`], with MJPG's JPEG quality (30–95; `None`: 80).
    /// The FFmpeg codecs keep OpenCV's own rate (H.264 at CRF 23): Debian's
    /// OpenCV 4.6 sets no encoder option of FFmpeg's, nor reads
    /// OPENCV_FFMPEG_WRITER_OPTIONS for a writer (tried: the file stays the same).
    pub fn create_compressed(
        path: &Path,
        fps: f64,
        size: [u32; 2],
        codec: Option<&str>,
        quality: Option<f64>,
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
            "h264" | "avc1" => videoio::VideoWriter::fourcc('a', 'v', 'c', '1')?,
            other => {
                return Err(RenderError::Invalid(format!(
                    "unsupported codec `{other}` (use mjpg, mp4v or h264)"
                )))
            }
        };
        let frame_size = core::Size::new(size[0] as i32, size[1] as i32);
        let name = path.to_string_lossy();
        let mjpg = fourcc == videoio::VideoWriter::fourcc('M', 'J', 'P', 'G')?;
        // OpenCV's own AVI writer only knows MJPG: the others go through FFmpeg.
        let mut writer = if mjpg {
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
                "cannot open {} for writing (codec {})",
                path.display(),
                codec.unwrap_or(by_ext)
            )));
        }
        // JPEG quality of MJPG frames: smaller files, still sharp.
        let _ = writer.set(videoio::VIDEOWRITER_PROP_QUALITY, quality.unwrap_or(80.0));
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

/// Renders every frame of a truth into a video (in the look's codec and quality
/// where `codec` is `None`); `progress` is told after each frame.
pub fn render_video(
    truth: &Truth,
    spec: &RenderSpec,
    path: &Path,
    codec: Option<&str>,
    mut progress: impl FnMut(u64),
) -> Result<()> {
    let mut r = Renderer::new(truth, spec, truth.seed)?;
    // The look's compression, unless the caller chose a codec.
    let look = &spec.look.compression;
    let codec = codec.or(look.codec.map(Codec::name));
    let mut out = VideoOut::create_compressed(
        path,
        truth.video.fps,
        truth.camera.image_size,
        codec,
        look.quality,
    )?;
    let mut prev: Option<&FrameTruth> = None;
    for f in &truth.frames {
        let img = r.render_frame(prev, f, truth.video.fps)?;
        out.write(&img)?;
        prev = Some(f);
        progress(f.frame);
    }
    out.finish()
}
