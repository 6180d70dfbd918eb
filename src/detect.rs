//! Detection of fish and coins in a top-down view of the table (a rectified frame),
//! in table millimetres. Pure Rust on an RGB buffer: the rectification that makes
//! the view (one OpenCV `remap`) lives in `vision::rectify`; this module never sees
//! the camera, so any lens or camera pose works once the view is rectified.
//!
//! - **Fish**: each player's colour is separated from the table's own colour in a
//!   brightness-free chromaticity plane; a pixel's *coverage* is how far its chroma
//!   lies from the table's toward the player's (anti-aliased edges count partly),
//!   and the pose comes from the coverage-weighted moments matched to the moments
//!   of the known outline (`items.json`, any shape), then refined by maximising the
//!   agreement between the placed footprint and the coverage.
//! - **Coins**: a gradient Hough transform for the known coin radius, peaks refined
//!   by a least-squares circle fit to the edge pixels around them; with
//!   [`DetectorConfig::coin_streaks`], coins too fast for a rim as blur streaks
//!   ([`streaks`], which reads this module's views).
//! - **Exposure**: a moving tag's smear, against its travel since the frame before,
//!   tells how long the shutter was open ([`FishSighting::exposure_share`]): the
//!   tracker needs it to place moving items at a frame's instant.
//! - **Occluders** (a hand, an arm): regions too large for a coin whose colour is
//!   neither the table's nor a player's, or which changed since the table was seen
//!   bare there (`background`: a hand can share the table's hue and brightness),
//!   as discs about a tag's reach wide; no coin is reported under them, and two
//!   coins lying flat never overlap.
//!
//! Uses: model, config, geometry, track (its detection types are this stage's
//! output).

use crate::config::Items;
use crate::geometry::table::closest_on_segment;
use crate::geometry::{FishFootprint, Point, Table, Vector};
use crate::model::{FrameIdx, PlayerIdx, Pose};
use crate::track::{CoinDetection, FishDetection, FrameDetections, Occluder, Streak};
use nalgebra::Rotation2;

mod background;
pub mod streaks;

/// How a top-down image maps to the table: pixel (u, v) (its centre) shows the table
/// point `origin_mm + (u, ±v) * mm_per_px` — `−v` when `y_down` (the usual picture
/// of a table seen from above, +y up the page).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopGrid {
    pub width: usize,
    pub height: usize,
    pub mm_per_px: f64,
    pub origin_mm: Point,
    pub y_down: bool,
}

impl TopGrid {
    /// A grid covering the table's bounds plus `margin_mm` on every side, +y down the rows.
    pub fn covering(table: &Table, mm_per_px: f64, margin_mm: f64) -> TopGrid {
        let (lo, hi) = table.bounds();
        let origin_mm = Point::new(lo.x - margin_mm, lo.y - margin_mm);
        let width = ((hi.x - lo.x + 2.0 * margin_mm) / mm_per_px).ceil() as usize + 1;
        let height = ((hi.y - lo.y + 2.0 * margin_mm) / mm_per_px).ceil() as usize + 1;
        TopGrid {
            width,
            height,
            mm_per_px,
            origin_mm,
            y_down: false,
        }
    }

    fn sign_y(&self) -> f64 {
        if self.y_down {
            -1.0
        } else {
            1.0
        }
    }

    pub fn table_from_px(&self, u: f64, v: f64) -> Point {
        self.origin_mm + Vector::new(u, v * self.sign_y()) * self.mm_per_px
    }

    pub fn px_from_table(&self, p: Point) -> (f64, f64) {
        let d = (p - self.origin_mm) / self.mm_per_px;
        (d.x, d.y * self.sign_y())
    }

    /// Where pixel (0, 0) of `part` lies in this grid, if `part` lies wholly inside
    /// it on the same pixels (a part of the view cut from the whole).
    pub fn offset_of(&self, part: &TopGrid) -> Option<(usize, usize)> {
        if (self.mm_per_px - part.mm_per_px).abs() > 1e-9 * self.mm_per_px
            || self.y_down != part.y_down
        {
            return None;
        }
        let (u, v) = self.px_from_table(part.origin_mm);
        let (ur, vr) = (u.round(), v.round());
        if (u - ur).abs() > 0.01 || (v - vr).abs() > 0.01 || ur < 0.0 || vr < 0.0 {
            return None;
        }
        let (u, v) = (ur as usize, vr as usize);
        (u + part.width <= self.width && v + part.height <= self.height).then_some((u, v))
    }
}

/// A top-down colour image (row-major, 3 bytes a pixel) with its grid.
#[derive(Debug, Clone, Copy)]
pub struct TopView<'a> {
    pub grid: TopGrid,
    pub rgb: &'a [u8],
    /// The bytes are in OpenCV's blue-green-red order rather than red-green-blue.
    pub bgr: bool,
}

/// A fish found in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FishSighting {
    /// Whose colour it shows.
    pub player: PlayerIdx,
    pub pose: Pose,
    /// Seen tag area over the expected area (1 = wholly visible).
    pub visible_fraction: f64,
    /// Agreement of the placed footprint with the colour coverage, 0..1.
    pub fit: f64,
    /// The share of the frame interval the shutter was open, read from the tag's
    /// motion blur against its travel since the frame before (see
    /// `Detector::exposure_share`); `None` when it was not measured.
    pub exposure_share: Option<f64>,
}

/// A coin found in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CoinSighting {
    pub pt_in_table: Point,
    pub radius_mm: f64,
    /// Fraction of the rim seen as an edge, 0..1 (for a streak: the fit's confidence).
    pub rim_seen: f64,
    /// Seen only as a motion-blur streak: the segment its centre swept during the
    /// exposure (`pt_in_table` is its midpoint). See [`streaks`].
    pub streak: Option<Streak>,
}

/// Everything found in one top-down frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sightings {
    pub fish: Vec<FishSighting>,
    pub coins: Vec<CoinSighting>,
    /// Large regions that are neither table, tag nor coin (a hand, an arm), as
    /// discs (centre, radius) in table mm: what lies under them is hidden.
    pub occluders: Vec<(Point, f64)>,
}

impl Sightings {
    /// The sightings moved from where the items appear on the table plane to where
    /// they stand. A point `h` mm above the table, seen from a camera whose centre is
    /// at `camera` (table mm, `z` its height), appears pushed away from the camera's
    /// foot point by the factor `z / (z - h)`: about 2 mm for a tag's top seen
    /// obliquely. What is seen of an item is its top face together with the sides
    /// facing the camera, which sweep from the top face down to the table: the fitted
    /// outline sits halfway, at half the item's thickness (plus a tag's thickness for
    /// a coin lying on a tag).
    /// `footprint` is the tags' shape (`FishFootprint::new(items)`, made once by the caller).
    pub fn seen_from(
        mut self,
        camera: &nalgebra::Point3<f64>,
        items: &Items,
        footprint: &FishFootprint,
    ) -> Sightings {
        let foot = Point::new(camera.x, camera.y);
        let height = camera.z;
        let lower = |p: Point, h: f64| -> Point {
            if height <= h + 1.0 {
                return p;
            }
            foot + (p - foot) * ((height - h) / height)
        };
        let placed: Vec<_> = self
            .fish
            .iter()
            .map(|f| footprint.placed(&f.pose))
            .collect();
        for c in &mut self.coins {
            let on_tag = placed.iter().any(|f| f.covers(c.pt_in_table));
            let h = 0.5 * items.coin.thickness + if on_tag { items.fish.thickness } else { 0.0 };
            c.pt_in_table = lower(c.pt_in_table, h);
            if let Some(s) = &mut c.streak {
                s.from = lower(s.from, h);
                s.to = lower(s.to, h);
            }
        }
        for f in &mut self.fish {
            let p = lower(f.pose.point(), 0.5 * items.fish.thickness);
            f.pose.x = p.x;
            f.pose.y = p.y;
        }
        self
    }

    /// The tracker's input for one frame. A coin inside a found tag's hole is marked
    /// as shown by that hole; players' colour scores are one-hot (one tag a colour).
    pub fn to_frame_detections(
        &self,
        frame: FrameIdx,
        players: usize,
        footprint: &FishFootprint,
    ) -> FrameDetections {
        let fish: Vec<FishDetection> = self
            .fish
            .iter()
            .map(|f| {
                let mut scores = vec![0.0; players];
                if f.player < players {
                    scores[f.player] = f.fit.max(0.5);
                }
                FishDetection {
                    pt_in_table: f.pose.point(),
                    theta: f.pose.angle(),
                    player_scores: scores,
                    confidence: f.fit,
                    partly_hidden: f.visible_fraction < 0.9,
                    exposure_share: f.exposure_share,
                }
            })
            .collect();
        let coins = self
            .coins
            .iter()
            .map(|c| {
                let in_hole_of = self.fish.iter().position(|f| {
                    let hole = footprint.placed(&f.pose).hole;
                    (c.pt_in_table - hole.center).norm() + c.radius_mm * 0.8 < hole.radius
                });
                // A streak's midpoint in a hole is no coin resting there.
                let in_hole_of = in_hole_of.filter(|_| c.streak.is_none());
                CoinDetection {
                    pt_in_table: c.pt_in_table,
                    radius_mm: Some(c.radius_mm),
                    confidence: c.rim_seen,
                    streak: c.streak,
                    in_hole_of,
                }
            })
            .collect();
        let occluders = self
            .occluders
            .iter()
            .map(|&(center, radius)| Occluder::Disc { center, radius })
            .collect();
        FrameDetections {
            frame,
            fish,
            coins,
            occluders,
            off_table: Vec::new(),
        }
    }
}

/// What a caller already knows about a frame, to look faster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints {
    /// Each player's fish pose when last seen (indexed by player): a partly hidden tag
    /// is fitted from there before any wider search.
    pub fish: Vec<Option<Pose>>,
    /// The view is only a part of the table (perhaps mostly hand): keep the table's
    /// and floor's looks learned from whole views.
    pub partial_view: bool,
    /// Things are moving: fit poses to a quarter of a millimetre rather than to the
    /// last hundredth (motion blur leaves no more to find, and it is much cheaper).
    pub quick: bool,
    /// Each player's fish pose in the frame just before this one, if it was seen
    /// there: the travel that motion blur is measured against.
    pub previous_frame: Vec<Option<Pose>>,
}

/// An agreement (0..2) that a locally refined pose must reach to be taken without
/// the wide search: most of the material covered, the hole clear.
const GOOD_FIT: f64 = 1.6;
/// While things move, a best agreement (0..2) below this means a tag smeared past
/// recognition: placed by its colour's centroid instead.
const SMEARED_FIT: f64 = 1.4;
/// The occluder search's coverage of a pixel that is odd only in having changed
/// since the table was seen bare there (`Detector::detect_occluders`).
const CHANGED_ONLY: f32 = 0.75;
/// Players with a bit of their own in `Detector::blocked`.
const PLAYER_BITS: usize = 6;
/// `Detector::blocked`: under a found occluder.
const OCCLUDED: u8 = 1 << 7;

/// The `blocked` bits that hide what `player`'s tag would show: the other players'
/// colours and occluders (a player past the sixth has no bit and sees only those).
fn unknown_bits(player: usize) -> u8 {
    let players = (1u8 << PLAYER_BITS) - 1;
    let own = if player < PLAYER_BITS {
        1u8 << player
    } else {
        0
    };
    (players & !own) | OCCLUDED
}

/// Fits closer than this (of 0..2) cannot tell two poses apart: a pixel of blur or
/// parallax along a tag's outline moves the agreement by about as much.
const AMBIGUOUS_FIT: f64 = 0.1;
/// Shorter travel between frames (of a tag's farthest point, mm) leaves too little
/// blur to measure the exposure by.
const MIN_BLUR_SWEEP_MM: f64 = 8.0;
/// The longest exposure tried, as a share of the frame interval: a little past the
/// whole interval, so that a shutter open throughout shows as a best fit inside the range.
const BLUR_MAX_SHARE: f64 = 1.2;
/// How many exposures are tried, evenly up to [`BLUR_MAX_SHARE`].
const BLUR_SHARES: usize = 24;
/// Colour coverage below this is taken for noise near the table's colour and read
/// as none (`Detector::player_coverages`; the exposure reading predicts it so).
const COVERAGE_FLOOR: f64 = 0.2;
/// How far (as a share of the travel) the centre of a smear may lie from the fitted
/// pose of the smeared tag.
const BLUR_MAX_OFFSET: f64 = 0.15;
/// Blur readings taken from every moving tag until there are this many …
const BLUR_READINGS_WANTED: u32 = 15;
/// … and after that from one tag sighting in this many.
const BLUR_LATER_EVERY: u32 = 10;
/// How many of the wide search's best grid places are refined.
const WIDE_REFINED: usize = 6;

/// Tunables, in physical units.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectorConfig {
    /// A pixel belongs to a player's colour when its chroma is at most this far
    /// (in r/(r+g+b), g/(r+g+b) units) from the line between table and player chroma.
    pub chroma_off_line: f64,
    /// Smallest seen fraction of a tag to report it.
    pub min_visible_fraction: f64,
    /// Smallest fraction of a coin's rim that must be seen.
    pub min_rim_seen: f64,
    /// Also look for coins too fast for a rim, as motion-blur streaks
    /// ([`streaks`]). Off by default: it costs about a third more detection
    /// work (1.3 CPU-s on the 388-frame bench video) for little the evaluation set
    /// shows (a lost coin's exit point a little nearer).
    pub coin_streaks: bool,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            chroma_off_line: 0.06,
            min_visible_fraction: 0.25,
            min_rim_seen: 0.45,
            coin_streaks: false,
        }
    }
}

/// Moments of the tag material in the fish frame.
#[derive(Debug, Clone)]
struct Template {
    area: f64,
    centroid: Vector,
    /// Angle of the major axis in the fish frame.
    axis: f64,
    /// Major/minor second moment ratio: near 1, the axis says nothing.
    elongation: f64,
    /// How far the material reaches from its centroid, mm.
    centroid_reach: f64,
    /// Sample points on the material and in the hole (fish frame), for agreement.
    material: Vec<Vector>,
    hole: Vec<Vector>,
    /// Sample points on the material within a few millimetres of the hole's edge.
    rim: Vec<Vector>,
    /// Thinner sample sets for the coarse search.
    coarse_material: Vec<Vector>,
    coarse_hole: Vec<Vector>,
    /// The footprint rasterised in the fish frame: 1 on material (grown by a pixel's
    /// width), 0 elsewhere.
    raster: Vec<u8>,
    /// The same without the growth: the material exactly, for measuring blur.
    exact: Vec<u8>,
    raster_half: f64,
    raster_step: f64,
    raster_side: usize,
}

impl Template {
    /// Whether a fish-frame point lies on the tag material (or within a pixel of it).
    fn on_material(&self, p: Vector) -> bool {
        self.lookup(&self.raster, p)
    }

    /// Whether a fish-frame point lies on the tag material, to the raster's step.
    fn on_exact_material(&self, p: Vector) -> bool {
        self.lookup(&self.exact, p)
    }

    fn lookup(&self, raster: &[u8], p: Vector) -> bool {
        // Rounded by adding a half and truncating (cheap; valid for non-negatives).
        let u = (p.x + self.raster_half) / self.raster_step + 0.5;
        let v = (p.y + self.raster_half) / self.raster_step + 0.5;
        if !(u >= 0.0 && v >= 0.0) {
            return false;
        }
        // Through i32 the conversion is one instruction (a huge value saturates, and
        // fails the test below all the same).
        let (u, v) = (u as i32 as usize, v as i32 as usize);
        if u >= self.raster_side || v >= self.raster_side {
            return false;
        }
        raster[v * self.raster_side + u] != 0
    }
}

impl Template {
    fn new(footprint: &FishFootprint) -> Template {
        let step = 0.25;
        let r = footprint.reach();
        let placed = footprint.placed(&Pose::fish(0.0, 0.0, 0.0));
        // Nothing of the tag lies outside its outline's box (the hole is within it).
        let (lo, hi) = placed.outline.iter().fold(
            (
                Vector::repeat(f64::INFINITY),
                Vector::repeat(f64::NEG_INFINITY),
            ),
            |(lo, hi), p| (lo.inf(&p.coords), hi.sup(&p.coords)),
        );
        // Grid points (i, j) at `step` mm, on the material and in the hole.
        let mut on = Vec::new();
        let mut hole_ij = Vec::new();
        let n = (r / step).ceil() as i64;
        let index_span = |lo: f64, hi: f64| {
            ((lo / step).floor() as i64).max(-n)..=((hi / step).ceil() as i64).min(n)
        };
        for i in index_span(lo.x, hi.x) {
            for j in index_span(lo.y, hi.y) {
                let p = Point::new(i as f64 * step, j as f64 * step);
                if placed.covers(p) {
                    on.push((i, j));
                } else if p.coords.norm() < footprint.hole_radius() - 1.5 {
                    hole_ij.push((i, j));
                }
            }
        }
        let at = |(i, j): (i64, i64)| Vector::new(i as f64 * step, j as f64 * step);
        let pts: Vec<Vector> = on.iter().map(|&ij| at(ij)).collect();
        let (area, centroid, cov) = moments(pts.iter().map(|p| (*p, step * step)));
        let (axis, elongation) = axis_of(&cov);
        let centroid_reach = pts
            .iter()
            .map(|p| (p - centroid).norm())
            .fold(0.0, f64::max);
        // Agreement samples: a coarser square grid keeps refinement cheap. A square
        // grid through the hole centre samples the tag evenly in every direction (so
        // the fit has no favoured turn); taking every k-th point in scan order would
        // lay a sheared lattice that pulls the angle one way.
        let thin = |ij: &[(i64, i64)], about: usize| -> Vec<Vector> {
            let m = ((ij.len() as f64 / about.max(1) as f64).sqrt().round() as i64).max(1);
            ij.iter()
                .filter(|(i, j)| i % m == 0 && j % m == 0)
                .map(|&p| at(p))
                .collect()
        };
        let hole = thin(&hole_ij, hole_ij.len() / 16);
        let raster_step = 0.5;
        let raster_half = r + 1.0;
        let raster_side = (2.0 * raster_half / raster_step).ceil() as usize + 1;
        let mut raster = vec![0u8; raster_side * raster_side];
        let mut exact = vec![0u8; raster_side * raster_side];
        // Only raster cells within a pixel's growth of the outline's box can be set.
        let cell_span = |lo: f64, hi: f64| {
            let first = ((lo - 1.0 + raster_half) / raster_step).floor().max(0.0) as usize;
            let last = ((hi + 1.0 + raster_half) / raster_step).ceil().max(0.0) as usize;
            first..(last + 1).min(raster_side)
        };
        for v in cell_span(lo.y, hi.y) {
            for u in cell_span(lo.x, hi.x) {
                let p = Point::new(
                    u as f64 * raster_step - raster_half,
                    v as f64 * raster_step - raster_half,
                );
                // Grown by a pixel's width so anti-aliased rims count as explained.
                let near = placed.covers(p)
                    || (placed.outline_contains(p)
                        && (p.coords.norm() - footprint.hole_radius()).abs() < 1.0)
                    || crate::geometry::shapes::boundary_distance(p, &placed.outline) < 1.0;
                raster[v * raster_side + u] = near as u8;
                exact[v * raster_side + u] = placed.covers(p) as u8;
            }
        }
        let coarse_material = thin(&on, 100);
        let rim_ij: Vec<(i64, i64)> = on
            .iter()
            .filter(|&&ij| at(ij).norm() < footprint.hole_radius() + 4.0)
            .copied()
            .collect();
        let rim = thin(&rim_ij, 60);
        let coarse_hole = thin(&hole_ij, 30);
        Template {
            area,
            centroid,
            axis,
            elongation,
            centroid_reach,
            material: thin(&on, 400),
            hole,
            rim,
            coarse_material,
            coarse_hole,
            raster,
            exact,
            raster_half,
            raster_step,
            raster_side,
        }
    }
}

/// Area, centroid and covariance of weighted points.
fn moments(points: impl Iterator<Item = (Vector, f64)>) -> (f64, Vector, nalgebra::Matrix2<f64>) {
    let mut w = 0.0;
    let mut s = Vector::zeros();
    let mut ss = nalgebra::Matrix2::zeros();
    for (p, wi) in points {
        w += wi;
        s += p * wi;
        ss += p * p.transpose() * wi;
    }
    if w <= 0.0 {
        return (0.0, Vector::zeros(), nalgebra::Matrix2::zeros());
    }
    let c = s / w;
    (w, c, ss / w - c * c.transpose())
}

/// Major-axis angle and elongation of a covariance.
fn axis_of(cov: &nalgebra::Matrix2<f64>) -> (f64, f64) {
    let (a, b, c) = (cov[(0, 0)], cov[(0, 1)], cov[(1, 1)]);
    let angle = 0.5 * (2.0 * b).atan2(a - c);
    let tr = a + c;
    let det = a * c - b * b;
    let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
    let (l1, l2) = (tr / 2.0 + disc, tr / 2.0 - disc);
    (angle, if l2 > 1e-12 { l1 / l2 } else { f64::INFINITY })
}

/// Finds fish and coins in top-down views. Owns its scratch buffers, reused frame to frame.
#[derive(Clone)]
pub struct Detector {
    footprint: FishFootprint,
    template: Template,
    coin_radius: f64,
    players: Vec<[f64; 2]>,
    table: Table,
    config: DetectorConfig,
    chroma: Vec<[f32; 2]>,
    /// Scratch for the occluder search.
    coverage: Vec<f32>,
    /// Each player's colour coverage, player after player (`players * n` values).
    coverages: Vec<f32>,
    /// Per pixel, what the fit of a player's tag cannot see there, each grown by a
    /// pixel: bit `k` (k < 6) where player `k`'s colour is (another player's tag lies
    /// over it or borders it), [`OCCLUDED`] under a found occluder.
    blocked: Vec<u8>,
    /// Scratch for growing `blocked`.
    blocked_tmp: Vec<u8>,
    labels: Vec<u32>,
    grey: Vec<f32>,
    votes: Vec<u16>,
    /// 1 where an occluder (a hand) hides the table, else 0.
    hidden: Vec<f32>,
    /// Some pixel of `hidden` is 1.
    any_hidden: bool,
    /// Which pixels of `on_table_grid` lie on the table, computed once per grid.
    on_table: Vec<bool>,
    on_table_grid: Option<TopGrid>,
    /// How the table and the floor look this frame: (chroma, mean grey).
    table_look: Look,
    floor_look: Look,
    /// How a coin looks, learned from coins seen in holes (R2: every coin starts in one).
    coin_look: Option<Look>,
    /// The table and floor looks come from a whole view.
    looks_known: bool,
    /// Moving tags seen well enough to read the exposure from, and readings taken.
    blur_candidates: u32,
    blur_readings: u32,
    /// The bare table as last seen, for the streak search.
    streak_memory: streaks::StreakMemory,
    /// The bare table as last seen, pixel by pixel, for the occluder search.
    table_memory: background::TableMemory,
    /// Scratch: which pixels the table memory may learn from.
    bare_scratch: Vec<u8>,
}

/// The colour of a surface: chroma and mean grey.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Look {
    chroma: [f64; 2],
    grey: f64,
}

impl Look {
    /// How different two looks are: chroma distance, and brightness as a ratio, in
    /// units of "clearly different".
    fn distance(&self, other: &Look, chroma_unit: f64) -> f64 {
        let dc = dist2(self.chroma, other.chroma).sqrt() / chroma_unit;
        let ratio = (self.grey.max(1.0) / other.grey.max(1.0)).ln().abs() / 0.15;
        dc.max(ratio)
    }
}

/// The median of a sample (reordered in place), `None` when it is empty.
pub(crate) fn median_of(v: &mut [f32]) -> Option<f32> {
    if v.is_empty() {
        return None;
    }
    let mid = v.len() / 2;
    Some(*v.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1)
}

/// Squared distance between two chroma points (`hypot` is needlessly slow per pixel).
fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])
}

/// Chromaticity (r, g) / (r + g + b), free of brightness.
fn chroma_of(rgb: [f64; 3]) -> [f64; 2] {
    let s = (rgb[0] + rgb[1] + rgb[2]).max(1.0);
    [rgb[0] / s, rgb[1] / s]
}

impl Detector {
    pub fn new(
        items: &Items,
        player_rgb: &[[u8; 3]],
        table: Table,
        config: DetectorConfig,
    ) -> Self {
        let footprint = FishFootprint::new(items);
        let template = Template::new(&footprint);
        Detector {
            template,
            footprint,
            coin_radius: items.coin.radius,
            players: player_rgb
                .iter()
                .map(|c| chroma_of([c[0] as f64, c[1] as f64, c[2] as f64]))
                .collect(),
            table,
            config,
            chroma: Vec::new(),
            coverage: Vec::new(),
            coverages: Vec::new(),
            blocked: Vec::new(),
            blocked_tmp: Vec::new(),
            labels: Vec::new(),
            grey: Vec::new(),
            votes: Vec::new(),
            hidden: Vec::new(),
            any_hidden: false,
            on_table: Vec::new(),
            on_table_grid: None,
            table_look: Look {
                chroma: [1.0 / 3.0; 2],
                grey: 128.0,
            },
            floor_look: Look {
                chroma: [1.0 / 3.0; 2],
                grey: 128.0,
            },
            coin_look: None,
            looks_known: false,
            blur_candidates: 0,
            blur_readings: 0,
            streak_memory: Default::default(),
            table_memory: Default::default(),
            bare_scratch: Vec::new(),
        }
    }

    pub fn footprint(&self) -> &FishFootprint {
        &self.footprint
    }

    /// Detects everything in one top-down frame.
    pub fn detect(&mut self, view: &TopView) -> Sightings {
        self.detect_with(view, &Hints::default())
    }

    /// Detects everything in a top-down frame, or in a part of one, using what the
    /// caller already knows.
    pub fn detect_with(&mut self, view: &TopView, hints: &Hints) -> Sightings {
        let g = view.grid;
        let n = g.width * g.height;
        if view.rgb.len() < n * 3 || n == 0 {
            return Sightings::default();
        }
        self.chroma.resize(n, [0.0; 2]);
        self.grey.resize(n, 0.0);
        // One loop per channel order: each then vectorises.
        if view.bgr {
            chroma_and_grey::<2, 0>(&view.rgb[..3 * n], &mut self.chroma, &mut self.grey);
        } else {
            chroma_and_grey::<0, 2>(&view.rgb[..3 * n], &mut self.chroma, &mut self.grey);
        }
        if self.on_table_grid != Some(g) {
            // Row by row: a row crosses the (convex) table in one span of pixels.
            self.on_table.clear();
            self.on_table.resize(n, false);
            for v in 0..g.height {
                let y = g.table_from_px(0.0, v as f64).y;
                if let Some((x0, x1)) = row_span(&self.table, y) {
                    let (u0, _) = g.px_from_table(Point::new(x0, y));
                    let (u1, _) = g.px_from_table(Point::new(x1, y));
                    let first = u0.min(u1).ceil().max(0.0) as usize;
                    let last = u0.max(u1).floor().min(g.width as f64 - 1.0);
                    if last >= 0.0 {
                        for u in first..=last as usize {
                            self.on_table[v * g.width + u] = true;
                        }
                    }
                }
            }
            self.on_table_grid = Some(g);
        }
        // A part of the table may be mostly hand: its median says little.
        if !hints.partial_view || !self.looks_known {
            self.table_look = self.surface_look(&g, true);
            self.floor_look = self.surface_look(&g, false);
            self.looks_known = true;
        }
        let table_chroma = self.table_look.chroma;
        let memory = self.table_memory.compare(view, &self.on_table);
        let mut sightings = Sightings {
            occluders: self.detect_occluders(&g, table_chroma, view, memory.as_ref()),
            ..Default::default()
        };
        self.player_coverages(&g, table_chroma);
        for player in 0..self.players.len() {
            let prior = hints.fish.get(player).copied().flatten();
            if let Some(mut f) = self.detect_fish(&g, player, prior, hints.quick) {
                if let Some(before) = hints.previous_frame.get(player).copied().flatten() {
                    // Blur spreads a tag's colour thin at its ends, so less of it
                    // counts as seen: what hides a tag is checked pixel by pixel.
                    if f.visible_fraction > 0.6 && f.fit * 2.0 >= GOOD_FIT {
                        // The exposure is the camera's: once it is well known, an
                        // occasional reading keeps it up to date.
                        self.blur_candidates += 1;
                        if self.blur_readings < BLUR_READINGS_WANTED
                            || self.blur_candidates % BLUR_LATER_EVERY == 0
                        {
                            f.exposure_share = self.exposure_share(&g, player, &f.pose, &before);
                            self.blur_readings += f.exposure_share.is_some() as u32;
                        }
                    }
                }
                sightings.fish.push(f);
            }
        }
        sightings.coins = self.detect_coins(&g, &sightings.fish, &sightings.occluders);
        self.learn_coin_look(&g, &sightings);
        let streaks = self.coin_streaks(view, &sightings);
        sightings.coins.extend(streaks);
        self.remember_bare_table(view, memory.as_ref(), &sightings);
        sightings
    }

    /// Remembers the table where this view shows it bare: on the table, no odd or
    /// changed colour (`coverage`, the occluder search's), no player's colour, no coin.
    fn remember_bare_table(
        &mut self,
        view: &TopView,
        memory: Option<&background::Comparison>,
        seen: &Sightings,
    ) {
        let g = view.grid;
        let n = g.width * g.height;
        // 0: something found over it, 1: free but odd, 2: free and like the table.
        let bare = &mut self.bare_scratch;
        bare.clear();
        bare.extend((0..n).map(|i| {
            let free = self.blocked.get(i).is_none_or(|b| *b & !OCCLUDED == 0);
            let like_table = self.coverage.get(i).is_some_and(|c| *c < 1.0);
            u8::from(free) * (1 + u8::from(like_table))
        }));
        let r = (self.coin_radius + 2.0) / g.mm_per_px;
        for c in &seen.coins {
            let (cu, cv) = g.px_from_table(c.pt_in_table);
            let (u0, u1) = (
                (cu - r).floor().max(0.0) as usize,
                (cu + r).ceil().max(0.0) as usize,
            );
            let (v0, v1) = (
                (cv - r).floor().max(0.0) as usize,
                (cv + r).ceil().max(0.0) as usize,
            );
            for v in v0..=v1.min(g.height.saturating_sub(1)) {
                for u in u0..=u1.min(g.width.saturating_sub(1)) {
                    bare[v * g.width + u] = 0;
                }
            }
        }
        let bare = &self.bare_scratch;
        self.table_memory
            .remember(view, memory, |i| (bare[i] > 0).then_some(bare[i] == 2));
    }

    /// The median look of the table (or of the floor seen around it; black pixels
    /// outside the camera's view left out), from a sparse sample.
    fn surface_look(&self, g: &TopGrid, table: bool) -> Look {
        let (mut r, mut gg, mut grey) = (Vec::new(), Vec::new(), Vec::new());
        for v in (0..g.height).step_by(4) {
            for u in (0..g.width).step_by(4) {
                let i = v * g.width + u;
                if self.on_table[i] == table && self.grey[i] > 8.0 {
                    r.push(self.chroma[i][0]);
                    gg.push(self.chroma[i][1]);
                    grey.push(self.grey[i]);
                }
            }
        }
        let median = |v: &mut Vec<f32>, default: f64| median_of(v).map_or(default, f64::from);
        Look {
            chroma: [median(&mut r, 1.0 / 3.0), median(&mut gg, 1.0 / 3.0)],
            grey: median(&mut grey, 128.0),
        }
    }

    /// The mean look of the pixels within `r_px` of (cu, cv).
    fn disc_look(&self, g: &TopGrid, cu: f64, cv: f64, r_px: f64) -> Option<Look> {
        let (mut sr, mut sg, mut sy, mut n) = (0.0, 0.0, 0.0, 0.0);
        let k = r_px.ceil() as i64;
        for dv in -k..=k {
            for du in -k..=k {
                if ((du * du + dv * dv) as f64) > r_px * r_px {
                    continue;
                }
                let (u, v) = (cu.round() as i64 + du, cv.round() as i64 + dv);
                if u < 0 || v < 0 || u as usize >= g.width || v as usize >= g.height {
                    continue;
                }
                let i = v as usize * g.width + u as usize;
                sr += self.chroma[i][0] as f64;
                sg += self.chroma[i][1] as f64;
                sy += self.grey[i] as f64;
                n += 1.0;
            }
        }
        (n > 0.0).then(|| Look {
            chroma: [sr / n, sg / n],
            grey: sy / n,
        })
    }

    /// Whether a circle found by its edges looks like a coin: its inside differs from
    /// the surface around (table or floor), is no player's colour, and — once the
    /// coin's look is known — is nearer to it than to that surface.
    fn looks_like_coin(&self, g: &TopGrid, cu: f64, cv: f64, r_px: f64) -> Option<Look> {
        let inside = self.disc_look(g, cu, cv, 0.6 * r_px)?;
        let p = g.table_from_px(cu, cv);
        let surface = if self.table.contains(p) {
            self.table_look
        } else {
            self.floor_look
        };
        let unit = 0.5 * self.config.chroma_off_line;
        if self
            .players
            .iter()
            .any(|c| dist2(inside.chroma, *c) < 4.0 * unit * unit)
        {
            return None;
        }
        let to_surface = inside.distance(&surface, unit);
        let plausible = match self.coin_look {
            // Coins can look much like the table; once their look is known, nearer to
            // it than to the surface is enough.
            Some(coin) => {
                let to_coin = inside.distance(&coin, unit);
                to_coin < to_surface && to_coin < 1.5
            }
            None => to_surface >= 1.0,
        };
        if !plausible {
            return None;
        }
        Some(inside)
    }

    /// Coins too fast to show a rim, seen as motion-blur streaks where nothing found
    /// (tags, coins, occluders) explains them; none before a coin's look is known.
    fn coin_streaks(&mut self, view: &TopView, seen: &Sightings) -> Vec<CoinSighting> {
        if !self.config.coin_streaks {
            return Vec::new();
        }
        let Some(coin) = self.coin_look else {
            return Vec::new();
        };
        let [cr, cg] = coin.chroma;
        let fish: Vec<_> = seen
            .fish
            .iter()
            .map(|f| self.footprint.placed(&f.pose))
            .collect();
        let coins: Vec<_> = seen
            .coins
            .iter()
            .map(|c| crate::geometry::Disc::new(c.pt_in_table, c.radius_mm))
            .collect();
        let scene = streaks::StreakScene {
            view,
            on_table: &self.on_table,
            hidden: &self.hidden,
            coin_rgb: [
                3.0 * coin.grey * cr,
                3.0 * coin.grey * cg,
                3.0 * coin.grey * (1.0 - cr - cg),
            ],
            coin_radius: self.coin_radius,
            fish: &fish,
            coins: &coins,
        };
        self.streak_memory
            .find(&scene, &streaks::StreakConfig::default())
            .into_iter()
            .map(|s| CoinSighting {
                pt_in_table: s.midpoint(),
                radius_mm: self.coin_radius,
                rim_seen: s.confidence,
                streak: Some(Streak {
                    from: s.from,
                    to: s.to,
                }),
            })
            .collect()
    }

    /// Learns (slowly) how coins look from coins seen in the holes of wholly seen tags.
    fn learn_coin_look(&mut self, g: &TopGrid, seen: &Sightings) {
        let r_px = self.coin_radius / g.mm_per_px;
        if self.coin_look.is_none() {
            // Every coin starts in its owner's hole (R2): what shows at the centre of a
            // wholly seen hole, if it is not the table, is a coin.
            let unit = 0.5 * self.config.chroma_off_line;
            for f in seen.fish.iter().filter(|f| f.visible_fraction > 0.95) {
                let (cu, cv) = g.px_from_table(f.pose.point());
                let Some(look) = self.disc_look(g, cu, cv, 0.5 * r_px) else {
                    continue;
                };
                if self.table.contains(f.pose.point())
                    && look.distance(&self.table_look, unit) > 0.3
                    && !self
                        .players
                        .iter()
                        .any(|c| dist2(look.chroma, *c) < 4.0 * unit * unit)
                {
                    self.coin_look = Some(look);
                    break;
                }
            }
        }
        for c in &seen.coins {
            let in_hole = seen.fish.iter().any(|f| {
                f.visible_fraction > 0.95
                    && (f.pose.point() - c.pt_in_table).norm() + self.coin_radius
                        <= self.footprint.hole_radius() + 1.0
            });
            if !in_hole {
                continue;
            }
            let (cu, cv) = g.px_from_table(c.pt_in_table);
            if let Some(look) = self.disc_look(g, cu, cv, 0.6 * r_px) {
                self.coin_look = Some(match self.coin_look {
                    None => look,
                    Some(old) => Look {
                        chroma: [
                            0.9 * old.chroma[0] + 0.1 * look.chroma[0],
                            0.9 * old.chroma[1] + 0.1 * look.chroma[1],
                        ],
                        grey: 0.9 * old.grey + 0.1 * look.grey,
                    },
                });
            }
        }
    }

    /// Each player's colour coverage of every pixel, and the `blocked` bits.
    ///
    /// A pixel's coverage for a player is how far its chroma lies from the table's
    /// toward the player's (anti-aliased edges count partly), zero when it lies off
    /// that line or nearer another player's colour.
    fn player_coverages(&mut self, g: &TopGrid, table: [f64; 2]) {
        let n = g.width * g.height;
        let players = self.players.len();
        self.coverages.clear();
        self.coverages.resize(players * n, 0.0);
        self.blocked.clear();
        self.blocked.resize(n, 0);
        // Per player: the table-to-player axis, its squared length and length.
        let axes: Vec<Option<([f64; 2], f64, f64)>> = self
            .players
            .iter()
            .map(|target| {
                let axis = [target[0] - table[0], target[1] - table[1]];
                let len2 = axis[0] * axis[0] + axis[1] * axis[1];
                // A player coloured like the table cannot be seen.
                (len2 >= 1e-6).then(|| (axis, len2, len2.sqrt()))
            })
            .collect();
        // Coverage below `COVERAGE_FLOOR` (0.2, squared here) counts as none, and
        // `along` never exceeds |d| / len: pixels that close to the table's colour
        // need no more work.
        let near_table2 = axes
            .iter()
            .flatten()
            .map(|&(_, len2, _)| 0.04 * len2)
            .fold(f64::INFINITY, f64::min);
        let off = self.config.chroma_off_line as f32;
        for i in 0..n {
            let c = self.chroma[i];
            let c64 = [c[0] as f64, c[1] as f64];
            let d = [c64[0] - table[0], c64[1] - table[1]];
            if d[0] * d[0] + d[1] * d[1] < near_table2 {
                continue;
            }
            // A pixel nearer another player's colour is theirs.
            let nearest = self
                .players
                .iter()
                .map(|p| dist2(c64, *p))
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(usize::MAX, |(k, _)| k);
            let mut bits = 0u8;
            for (k, axis) in axes.iter().enumerate() {
                let Some((axis, len2, len)) = *axis else {
                    continue;
                };
                let along = (d[0] * axis[0] + d[1] * axis[1]) / len2;
                let across = (d[0] * axis[1] - d[1] * axis[0]).abs() / len;
                let mut a = if (across as f32) < off {
                    along as f32
                } else {
                    0.0
                };
                if a > 0.3 && k != nearest {
                    a = 0.0;
                }
                // Noise near the table colour is not coverage.
                let a = if a < COVERAGE_FLOOR as f32 {
                    0.0
                } else {
                    a.min(1.0)
                };
                self.coverages[k * n + i] = a;
                if a > 0.5 && k < PLAYER_BITS {
                    bits |= 1 << k;
                }
            }
            self.blocked[i] = bits;
        }
        // Grown by a pixel: the mixed pixels where two tags meet belong to neither.
        grow_bits(&mut self.blocked, &mut self.blocked_tmp, g.width, g.height);
        if self.any_hidden {
            for (b, h) in self.blocked.iter_mut().zip(&self.hidden) {
                if *h > 0.5 {
                    *b |= OCCLUDED;
                }
            }
        }
    }

    fn detect_fish(
        &mut self,
        g: &TopGrid,
        player: usize,
        prior: Option<Pose>,
        quick: bool,
    ) -> Option<FishSighting> {
        let n = g.width * g.height;
        if self.coverages.len() < (player + 1) * n {
            return None; // A player coloured like the table cannot be seen.
        }
        // The largest blob of confident pixels, plus blobs near it (a hand can split a tag).
        let blobs = label_blobs(
            &self.coverages[player * n..(player + 1) * n],
            g.width,
            g.height,
            0.5,
            &mut self.labels,
        );
        let px_area = g.mm_per_px * g.mm_per_px;
        let min_px = (self.template.area * 0.05 / px_area) as usize;
        let best = blobs
            .iter()
            .filter(|b| b.count >= min_px.max(4))
            .max_by_key(|b| b.count)?;
        let reach_px = 2.0 * self.footprint.reach() / g.mm_per_px;
        let keep: Vec<u32> = blobs
            .iter()
            .filter(|b| b.count >= 4)
            .filter(|b| {
                let d = ((b.cx - best.cx).powi(2) + (b.cy - best.cy).powi(2)).sqrt();
                d < reach_px
            })
            .map(|b| b.label)
            .collect();
        // Coverage-weighted moments over the kept blobs and the pixels bordering them.
        let (u0, u1, v0, v1) = keep.iter().fold((usize::MAX, 0, usize::MAX, 0), |acc, l| {
            let b = &blobs[(*l - 1) as usize];
            (
                acc.0.min(b.u0),
                acc.1.max(b.u1),
                acc.2.min(b.v0),
                acc.3.max(b.v1),
            )
        });
        let (u0, v0) = (u0.saturating_sub(1), v0.saturating_sub(1));
        let (u1, v1) = ((u1 + 1).min(g.width - 1), (v1 + 1).min(g.height - 1));
        let labels = &self.labels;
        let coverage = &self.coverages[player * n..(player + 1) * n];
        let near_kept = |u: usize, v: usize| {
            let mut hit = false;
            for dv in -1i64..=1 {
                for du in -1i64..=1 {
                    let (uu, vv) = (u as i64 + du, v as i64 + dv);
                    if uu >= 0 && vv >= 0 && (uu as usize) < g.width && (vv as usize) < g.height {
                        let l = labels[vv as usize * g.width + uu as usize];
                        hit |= l != 0 && keep.contains(&l);
                    }
                }
            }
            hit
        };
        let mut pts = Vec::new();
        for v in v0..=v1 {
            for u in u0..=u1 {
                let w = coverage[v * g.width + u];
                if w > 0.0 && near_kept(u, v) {
                    pts.push((
                        g.table_from_px(u as f64, v as f64).coords,
                        w as f64 * px_area,
                    ));
                }
            }
        }
        let (area, centroid, cov) = moments(pts.iter().copied());
        let visible_fraction = area / self.template.area;
        if visible_fraction < self.config.min_visible_fraction {
            return None;
        }
        let (axis_b, _) = axis_of(&cov);
        // Blob points (thinned) for the "explained" term of the agreement.
        let step = (pts.len() / 300).max(1);
        let blob: Vec<(Vector, f64)> = pts.iter().step_by(step).copied().collect();
        let fully_seen = visible_fraction > 0.9;
        let elongated = self.template.elongation > 1.2;
        // Local fits from a few good starts: the moments' axis (either way round), the
        // pose last seen, and that pose's angle moved onto what is seen now.
        let mut starts = Vec::new();
        let at_centroid = |theta: f64| {
            let c = Rotation2::new(theta) * self.template.centroid;
            Pose::fish(centroid.x - c.x, centroid.y - c.y, theta)
        };
        if elongated {
            let base = axis_b - self.template.axis;
            starts.push(at_centroid(base));
            starts.push(at_centroid(base + std::f64::consts::PI));
        }
        let prior =
            prior.filter(|p| (p.point().coords - centroid).norm() < 4.0 * self.footprint.reach());
        if let Some(p) = prior {
            starts.push(p);
            starts.push(at_centroid(p.angle()));
        }
        if !fully_seen || !elongated {
            // Partly hidden or round: the moments say little; try every 30 degrees too,
            // about the blob's centroid and about the hole if one is seen: the round
            // hole with its rim pins the tag's position whichever way round it lies.
            // Not while things move: blur smears the hole, and a look must keep pace.
            let hole = if quick {
                None
            } else {
                self.find_hole(g, player, &pts)
            };
            for a in 0..12 {
                let theta = a as f64 * std::f64::consts::TAU / 12.0;
                starts.push(at_centroid(theta));
                if let Some(h) = hole {
                    starts.push(Pose::fish(h.x, h.y, theta));
                }
            }
        }
        let mut scored: Vec<(f64, Pose)> = starts
            .into_iter()
            .map(|p| (self.agreement(g, player, &p, &blob, true), p))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut picked: Vec<Pose> = scored.iter().take(3).map(|s| s.1).collect();
        // A partly hidden tag is also fitted from where it was last seen: the pose
        // that continues its track, to compare the best-fitting one with.
        if let Some(p) = prior.filter(|_| !fully_seen) {
            if !picked.contains(&p) {
                picked.push(p);
            }
        }
        let mut candidates: Vec<(f64, Pose)> = Vec::new();
        for start in picked {
            let fit = self.agreement(g, player, &start, &blob, quick);
            let (pose, fit) = self.refine(g, player, start, fit, &blob, quick);
            candidates.push((fit, pose));
            // A wholly seen tag that fits well has no other reading; while things move
            // the first good reading is taken too (the readings of a partly hidden tag
            // are weighed against its track only at rest, below).
            if (fully_seen || quick) && fit >= GOOD_FIT {
                break;
            }
        }
        let best_of = |c: &[(f64, Pose)]| {
            c.iter()
                .copied()
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap_or((f64::NEG_INFINITY, scored[0].1))
        };
        let (best_fit, best_pose) = best_of(&candidates);
        // A partly hidden tag can be explained by a wrong pose too (its seen half fits
        // the other way round): a local fit is trusted only when it keeps about the
        // angle the tag was last seen at (it may have slid far, it has not turned over).
        let near_prior = prior.is_some_and(|p| continues(&p, &best_pose));
        if !fully_seen && (best_fit < GOOD_FIT || !near_prior) {
            // Nothing near explains it: search positions around the seen part at every
            // angle (rare: a tag mostly hidden, or turned over since last seen). A
            // coarse grid against a thinned blob finds the few places worth refining.
            let reach = self.footprint.reach();
            let grid_step = 6.0;
            let k = (reach / grid_step).ceil() as i64;
            let thin_blob: Vec<(Vector, f64)> = blob.iter().step_by(4).copied().collect();
            // The seen part's centroid lies on the tag (or, smeared, about where the
            // tag's centroid passed): places that put the tag's centroid farther from it
            // than the material reaches (and a grid step more) cannot explain it.
            let within = self.template.centroid_reach + grid_step;
            // The best place at each angle, so that the few refined are different ideas:
            // every other grid point first, then the grid points around the best of them
            // (the agreement varies over a tag's half-width, wider than the grid step).
            let mut found: Vec<(f64, Pose)> = Vec::new();
            for a in 0..36 {
                let theta = a as f64 * std::f64::consts::TAU / 36.0;
                let tag_centroid = Rotation2::new(theta) * self.template.centroid;
                let mut best_here = (f64::NEG_INFINITY, Pose::fish(centroid.x, centroid.y, theta));
                let mut best_ij = None;
                let try_at = |i: i64, j: i64, best_here: &mut (f64, Pose)| {
                    let offset = Vector::new(i as f64 * grid_step, j as f64 * grid_step);
                    if (offset + tag_centroid).norm() > within {
                        return false;
                    }
                    let c = Pose::fish(centroid.x + offset.x, centroid.y + offset.y, theta);
                    let f = self.agreement(g, player, &c, &thin_blob, true);
                    let better = f > best_here.0;
                    if better {
                        *best_here = (f, c);
                    }
                    better
                };
                let k2 = k - k % 2;
                for i in (-k2..=k2).step_by(2) {
                    for j in (-k2..=k2).step_by(2) {
                        if try_at(i, j, &mut best_here) {
                            best_ij = Some((i, j));
                        }
                    }
                }
                if let Some((bi, bj)) = best_ij {
                    for (di, dj) in [
                        (-1, -1),
                        (-1, 0),
                        (-1, 1),
                        (0, -1),
                        (0, 1),
                        (1, -1),
                        (1, 0),
                        (1, 1),
                    ] {
                        try_at(bi + di, bj + dj, &mut best_here);
                    }
                }
                found.push(best_here);
            }
            found.sort_by(|a, b| b.0.total_cmp(&a.0));
            for &(_, start) in found.iter().take(WIDE_REFINED) {
                let fit = self.agreement(g, player, &start, &blob, quick);
                let (pose, fit) = self.refine(g, player, start, fit, &blob, quick);
                candidates.push((fit, pose));
            }
        }
        let (mut best_fit, mut best_pose) = best_of(&candidates);
        // What is seen of a partly hidden tag may fit a pose that breaks its track as
        // well as, or a little better than, one that continues it (another tag or a
        // hand over the part that tells them apart): keep the track's unless the
        // evidence clearly says otherwise.
        // Not while things move: blur leaves too little to tell readings apart, and the
        // prior is a frame's travel old.
        if let Some(p) = prior.filter(|_| !fully_seen && !quick) {
            // The prior itself is a reading too: a hand passing over a tag at rest
            // leaves too little of it seen to pin it anew.
            candidates.push((self.agreement(g, player, &p, &blob, quick), p));
            let reach = self.footprint.reach();
            let moved = |c: &Pose| {
                (c.point() - p.point()).norm() + reach * wrap_angle(c.angle() - p.angle()).abs()
            };
            if let Some(&(fit, pose)) = candidates
                .iter()
                .filter(|(fit, _)| *fit >= best_fit - AMBIGUOUS_FIT)
                .min_by(|a, b| moved(&a.1).total_cmp(&moved(&b.1)))
            {
                (best_fit, best_pose) = (fit, pose);
            }
        }
        if quick && best_fit < SMEARED_FIT {
            // Smeared past recognition (a tag moving its own length in an exposure):
            // no placement of the sharp outline explains the smear, and the best one
            // may sit anywhere along it. The colour's centroid is still the tag's
            // centroid mid-exposure, whatever the tag's shape.
            best_pose = at_centroid(best_pose.angle());
        }
        best_pose.theta = Some(wrap_angle(best_pose.angle()));
        Some(FishSighting {
            player,
            pose: best_pose,
            visible_fraction,
            fit: (best_fit / 2.0).clamp(0.0, 1.0),
            exposure_share: None,
        })
    }

    /// How long the shutter was open, as a share of the frame interval, read from a
    /// moving tag's motion blur: the tag travelled from `before` (its pose in the
    /// frame before) to `pose` (where its blurred image is centred), and the image is
    /// the tag averaged over the part of that travel the exposure spanned. The share
    /// whose blurred footprint best explains the colour coverage is the answer.
    /// Nothing here is particular to a camera: a longer exposure smears the tag over
    /// more of its travel, on any footage. `None` when the travel is too short to
    /// tell shares apart (or too long to be one tag's), or the evidence has no clear
    /// best share.
    fn exposure_share(
        &self,
        g: &TopGrid,
        player: usize,
        pose: &Pose,
        before: &Pose,
    ) -> Option<f64> {
        let reach = self.footprint.reach();
        let travel = pose.point() - before.point();
        let turn = wrap_angle(pose.angle() - before.angle());
        // How far the tag's farthest point moved between the frames, mm.
        let sweep = travel.norm() + turn.abs() * reach;
        if !(MIN_BLUR_SWEEP_MM..=reach * 3.0).contains(&sweep) {
            return None;
        }
        let n = g.width * g.height;
        let coverage = self.coverages.get(player * n..(player + 1) * n)?;
        // Poses along the travel, `q` of it from `pose` for `q` in `±span / 2`, about
        // a millimetre apart at the tag's farthest point. A shutter open for share `k`
        // whose smear is centred `o` of the travel from `pose` (the fit of a heavily
        // smeared tag need not sit at the smear's centre) averages the samples with
        // `|q - o| <= k / 2`. The span reaches a little past the whole interval, so
        // that a shutter open throughout still shows as a best fit inside the range.
        let span = BLUR_MAX_SHARE + 2.0 * BLUR_MAX_OFFSET;
        // Finer than a twentieth of the share step says nothing more.
        let m = ((sweep * span).ceil() as usize).clamp(2 * BLUR_SHARES, 5 * BLUR_SHARES);
        let q_of = |j: usize| ((j as f64 + 0.5) / m as f64 - 0.5) * span;
        let placed: Vec<(f64, f64, Vector)> = (0..m)
            .map(|j| {
                let q = q_of(j);
                let (sin, cos) = (pose.angle() + q * turn).sin_cos();
                (sin, cos, pose.point().coords + travel * q)
            })
            .collect();
        // Each (share, offset) tried as a range of samples `lo..hi`.
        let index_of = |q: f64| (((q / span + 0.5) * m as f64).round().max(0.0) as usize).min(m);
        let step = BLUR_MAX_SHARE / BLUR_SHARES as f64;
        let offsets = (BLUR_MAX_OFFSET / step).round() as i64;
        // (index of the share, lo, hi): share `(index + 1) * step`.
        let mut windows: Vec<(usize, usize, usize)> = Vec::new();
        for k in 0..BLUR_SHARES {
            for o in -offsets..=offsets {
                let (share, off) = ((k + 1) as f64 * step, o as f64 * step);
                let (lo, hi) = (index_of(off - share / 2.0), index_of(off + share / 2.0));
                if hi > lo {
                    windows.push((k, lo, hi));
                }
            }
        }
        // Per window: sums of observed·predicted and predicted², and of observed²
        // (the residual after the best gain follows from these).
        let mut cp = vec![0.0; windows.len()];
        let mut pp = vec![0.0; windows.len()];
        let mut cc = 0.0;
        let unknown = unknown_bits(player);
        let lo = pose.point() - travel.abs() * (span / 2.0) - Vector::repeat(reach + 2.0);
        let hi = pose.point() + travel.abs() * (span / 2.0) + Vector::repeat(reach + 2.0);
        let (ua, va) = g.px_from_table(lo);
        let (ub, vb) = g.px_from_table(hi);
        let clamp_u = |x: f64| x.clamp(0.0, g.width as f64 - 1.0) as usize;
        let clamp_v = |x: f64| x.clamp(0.0, g.height as f64 - 1.0) as usize;
        // Material hits over the samples, cumulated: `hits[j]` over samples `..j`.
        let mut hits = vec![0u16; m + 1];
        let on_material = |p: Vector, &(sin, cos, c): &(f64, f64, Vector)| {
            let d = p - c;
            self.template
                .on_exact_material(Vector::new(cos * d.x + sin * d.y, -sin * d.x + cos * d.y))
        };
        // A smeared tag mixes its colour with the table's, which the occluder search
        // can take for a hand: under an occluder, a pixel that shows the player's
        // colour is the tag; one that does not is unknown (a hand, or the smear's
        // faint end), but only other tags and the table's edge count as hiding it.
        let hidden_here =
            |i: usize| !self.on_table[i] || self.blocked[i] & unknown & !OCCLUDED != 0;
        let unknown_here = |i: usize| self.blocked[i] & OCCLUDED != 0 && coverage[i] <= 0.0;
        let (mut hidden, mut used) = (0usize, 0usize);
        // The hole's path over the samples: no tag point is farther from it than `reach`.
        let (first, last) = (Point::from(placed[0].2), Point::from(placed[m - 1].2));
        // Every third pixel each way: the smear spans thousands, a ninth of them says
        // as much.
        for v in (clamp_v(va.min(vb))..=clamp_v(va.max(vb))).step_by(3) {
            for u in (clamp_u(ua.min(ub))..=clamp_u(ua.max(ub))).step_by(3) {
                let i = v * g.width + u;
                let p = g.table_from_px(u as f64, v as f64).coords;
                if (Point::from(p) - closest_on_segment(Point::from(p), first, last)).norm()
                    > reach + 1.0
                {
                    // Beyond the smear's reach: table, whatever the exposure.
                    if !hidden_here(i) && !unknown_here(i) {
                        let c = coverage[i] as f64;
                        cc += c * c;
                    }
                    continue;
                }
                if hidden_here(i) {
                    // Unknown here: it counts against the reading if the smear
                    // could reach it.
                    hidden += placed.iter().any(|s| on_material(p, s)) as usize;
                    continue;
                }
                if unknown_here(i) {
                    continue;
                }
                for (j, s) in placed.iter().enumerate() {
                    hits[j + 1] = hits[j] + on_material(p, s) as u16;
                }
                let c = coverage[i] as f64;
                cc += c * c;
                if hits[m] == 0 {
                    // Beyond any smear: table, whatever the exposure.
                    continue;
                }
                used += 1;
                for (w, &(_, lo, hi)) in windows.iter().enumerate() {
                    let pred = (hits[hi] - hits[lo]) as f64 / (hi - lo) as f64;
                    // Coverage this faint reads as none (`player_coverages`).
                    let pred = if pred < COVERAGE_FLOOR { 0.0 } else { pred };
                    cp[w] += c * pred;
                    pp[w] += pred * pred;
                }
            }
        }
        if hidden * 10 > used {
            // Much of the smear is unknown: its length cannot be read.
            return None;
        }
        // Per share, the residual at its best offset.
        let mut residual = [f64::INFINITY; BLUR_SHARES];
        for (w, &(k, _, _)) in windows.iter().enumerate() {
            if pp[w] > 0.0 {
                residual[k] = residual[k].min(cc - cp[w] * cp[w] / pp[w]);
            }
        }
        let (best, _) = residual
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))?;
        if best == 0 || best + 1 == residual.len() {
            // At the end of the range: no minimum seen, only a bound.
            return None;
        }
        // The parabola through the best and its neighbours.
        let (a, b, c) = (residual[best - 1], residual[best], residual[best + 1]);
        let curve = a - 2.0 * b + c;
        if curve.is_nan() || curve <= 0.0 {
            return None;
        }
        let vertex = (0.5 * (a - c) / curve).clamp(-0.5, 0.5);
        Some((best as f64 + 1.0 + vertex) * step)
    }

    /// The centre of the tag's hole if it shows: the place near the seen coverage
    /// `pts` where the material ring around a hole-sized disc is most covered and the
    /// disc itself most clear. Pixels the tag cannot show are left out; a hole less
    /// than half seen is not looked for.
    fn find_hole(&self, g: &TopGrid, player: usize, pts: &[(Vector, f64)]) -> Option<Point> {
        let (w, h) = (g.width, g.height);
        let n = w * h;
        let coverage = &self.coverages[player * n..(player + 1) * n];
        let unknown = unknown_bits(player);
        let (mut lo, mut hi) = (
            Vector::repeat(f64::INFINITY),
            Vector::repeat(f64::NEG_INFINITY),
        );
        for (p, _) in pts {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        if pts.is_empty() {
            return None;
        }
        let mean_over = |t: Vector, samples: &[Vector]| -> Option<f64> {
            let (mut sum, mut seen) = (0.0f32, 0usize);
            for p in samples {
                let (u, v) = g.px_from_table(Point::from(t + p));
                if !(u >= 0.0 && v >= 0.0 && u < w as f64 - 0.5 && v < h as f64 - 0.5) {
                    continue;
                }
                let i = (v + 0.5) as usize * w + (u + 0.5) as usize;
                if self.blocked[i] & unknown != 0 {
                    continue;
                }
                sum += coverage[i];
                seen += 1;
            }
            (2 * seen >= samples.len()).then(|| sum as f64 / seen as f64)
        };
        let step = g.mm_per_px.max(1.0);
        let mut best: Option<(f64, Point)> = None;
        let mut y = lo.y;
        while y <= hi.y {
            let mut x = lo.x;
            while x <= hi.x {
                let t = Vector::new(x, y);
                if let (Some(rim), Some(inside)) = (
                    mean_over(t, &self.template.rim),
                    mean_over(t, &self.template.coarse_hole),
                ) {
                    let score = rim - inside;
                    if best.is_none_or(|b| score > b.0) {
                        best = Some((score, Point::from(t)));
                    }
                }
                x += step;
            }
            y += step;
        }
        // Mostly covered around, mostly clear inside.
        best.filter(|b| b.0 > 0.5).map(|b| b.1)
    }

    /// How well a placed footprint explains what is seen, 0..2: the mean coverage on
    /// its material minus that in its hole, plus the share of the blob's coverage
    /// that falls on its material. Pixels the tag cannot show are left out of the
    /// means: those under a hand, and those of another player's colour (a tag lying
    /// over this one, or seen through its hole). Counting them as bare table would
    /// make a tag half covered by another fit back to front as well as the right way
    /// round: its hole put under the other tag "looks clear" too.
    fn agreement(
        &self,
        g: &TopGrid,
        player: usize,
        pose: &Pose,
        blob: &[(Vector, f64)],
        coarse: bool,
    ) -> f64 {
        let t = Vector::new(pose.x, pose.y);
        // Fish frame -> pixel as one affine map, so each sample costs a few multiplies.
        let (s, c) = pose.angle().sin_cos();
        let (k, sy) = (1.0 / g.mm_per_px, g.sign_y());
        let (bu, bv) = g.px_from_table(Point::from(t));
        let (a11, a12, a21, a22) = (k * c, -k * s, sy * k * s, sy * k * c);
        let (w, h) = (g.width, g.height);
        let coverage = &self.coverages[player * w * h..(player + 1) * w * h];
        let blocked = self.blocked.as_slice();
        let others = unknown_bits(player);
        // A sample is judged by its nearest pixel inside `[0, w - 0.5) x [0, h - 0.5)`
        // and read (bilinear, 0 outside) only within that: `bilinear` reads nothing
        // beyond `[0, w - 1) x [0, h - 1)`. A blocked sample is never read.
        let (near_u, near_v) = (w as f64 - 0.5, h as f64 - 0.5);
        let mean_over = |samples: &[Vector], unknown: u8| {
            let (mut sum, mut n) = (0.0f32, 0usize);
            for p in samples {
                let u = a11 * p.x + a12 * p.y + bu;
                let v = a21 * p.x + a22 * p.y + bv;
                // Written so that NaN fails the test too.
                if u >= 0.0 && v >= 0.0 && u < near_u && v < near_v {
                    // In range here: through i32, the conversion is one instruction.
                    let i = (v + 0.5) as i32 as usize * w + (u + 0.5) as i32 as usize;
                    if blocked[i] & unknown != 0 {
                        continue;
                    }
                    sum += bilinear(coverage, w, h, u, v);
                }
                n += 1;
            }
            (sum as f64, n)
        };
        let (material, hole) = if coarse {
            (&self.template.coarse_material, &self.template.coarse_hole)
        } else {
            (&self.template.material, &self.template.hole)
        };
        let (ms, mn) = mean_over(material, others);
        if (mn as f64) < 0.2 * material.len() as f64 {
            return f64::NEG_INFINITY; // Almost all hidden: says nothing.
        }
        let (hs, hn) = mean_over(hole, others);
        // A hole that cannot be seen is as likely covered as clear: counting it clear
        // would favour any pose that tucks its hole under another tag. While things
        // move (`coarse` fits) blur smears holes anyway and hides nothing of this.
        let unseen = if coarse { 0.0 } else { 0.5 };
        let hole_covered = if coarse {
            if hn > 0 {
                hs / hn as f64
            } else {
                0.0
            }
        } else {
            (hs + unseen * (hole.len() - hn) as f64) / hole.len().max(1) as f64
        };
        let (mut explained, mut total) = (0.0, 0.0);
        for (p, wt) in blob {
            total += wt;
            let d = p - t;
            // The inverse rotation, written out.
            if self
                .template
                .on_material(Vector::new(c * d.x + s * d.y, -s * d.x + c * d.y))
            {
                explained += wt;
            }
        }
        ms / mn as f64 - hole_covered + explained / total.max(1e-9)
    }

    fn refine(
        &self,
        g: &TopGrid,
        player: usize,
        start: Pose,
        start_fit: f64,
        blob: &[(Vector, f64)],
        quick: bool,
    ) -> (Pose, f64) {
        let mut pose = start;
        let mut fit = start_fit;
        let mut step_mm = 4.0;
        let mut step_rad = 0.1;
        let last_step = if quick { 0.25 } else { 0.05 };
        while step_mm > last_step {
            let mut improved = false;
            for (dx, dy, dt) in [
                (1.0, 0.0, 0.0),
                (-1.0, 0.0, 0.0),
                (0.0, 1.0, 0.0),
                (0.0, -1.0, 0.0),
                (0.0, 0.0, 1.0),
                (0.0, 0.0, -1.0),
            ] {
                let cand = Pose::fish(
                    pose.x + dx * step_mm,
                    pose.y + dy * step_mm,
                    pose.angle() + dt * step_rad,
                );
                let f = self.agreement(g, player, &cand, blob, quick);
                if f > fit + 1e-9 {
                    fit = f;
                    pose = cand;
                    improved = true;
                }
            }
            if !improved {
                step_mm /= 2.0;
                step_rad /= 2.0;
            }
        }
        (pose, fit)
    }

    /// Regions on or over the table whose colour is neither the table's nor a
    /// player's, too large for a coin, and not a tag already found.
    fn detect_occluders(
        &mut self,
        g: &TopGrid,
        table: [f64; 2],
        view: &TopView,
        memory: Option<&background::Comparison>,
    ) -> Vec<(Point, f64)> {
        let n = g.width * g.height;
        self.coverage.resize(n, 0.0);
        self.hidden.clear();
        self.any_hidden = false;
        self.hidden.resize(n, 0.0);
        // Brightness is judged against the table's, which a part of the view that is
        // mostly hand would not show.
        let grey_median = self.table_look.grey as f32;
        let off = self.config.chroma_off_line;
        for i in 0..n {
            if !self.on_table[i] {
                // Beyond the edge (the floor, the table's side) only what changed since
                // it was seen bare counts: an arm reaching over the edge, not the
                // scenery's own colours.
                let changed = memory.is_some_and(|m| self.table_memory.changed(view, m, i));
                self.coverage[i] = if changed { CHANGED_ONLY } else { 0.0 };
                continue;
            }
            let c = self.chroma[i];
            let c64 = [c[0] as f64, c[1] as f64];
            let dt2 = dist2(c64, table);
            // Skin and wood can share a hue; brightness tells them apart.
            let ratio = self.grey[i] / grey_median.max(1.0);
            let odd_brightness = !(0.35..=1.4).contains(&ratio);
            // Only an odd pixel needs the players' colours (most are plain table).
            let odd = dt2 > 2.25 * off * off || odd_brightness;
            let changed = !odd && memory.is_some_and(|m| self.table_memory.changed(view, m, i));
            self.coverage[i] = if (odd || changed)
                && !self
                    .players
                    .iter()
                    .any(|p| dist2(c64, *p) < 4.0 * off * off)
            {
                // Odd in colour, or only changed since the table was seen bare.
                if odd {
                    1.0
                } else {
                    CHANGED_ONLY
                }
            } else {
                0.0
            };
        }
        let blobs = label_blobs(&self.coverage, g.width, g.height, 0.5, &mut self.labels);
        let px_area = g.mm_per_px * g.mm_per_px;
        let coin_area = std::f64::consts::PI * self.coin_radius * self.coin_radius;
        let mut out = Vec::new();
        let labels = &self.labels;
        let coverage = &self.coverage;
        // A region seen only as changed from the bare table must be larger than a
        // tag to be a hand: a tag or a coin that moved leaves its shadow's or its
        // own ghost behind, never more.
        let odd_count = |b: &Blob| {
            (b.v0..=b.v1)
                .flat_map(|v| (b.u0..=b.u1).map(move |u| v * g.width + u))
                .filter(|&i| labels[i] == b.label && coverage[i] == 1.0)
                .count()
        };
        let tag_area = self.template.area;
        let large: Vec<&Blob> = blobs
            .iter()
            .filter(|b| b.count as f64 * px_area > 4.0 * coin_area)
            .filter(|b| {
                b.count as f64 * px_area > tag_area
                    || odd_count(b) as f64 * px_area > 4.0 * coin_area
            })
            .collect();
        for b in large {
            let center = g.table_from_px(b.cx, b.cy);
            if self.table.signed_distance(center) < -self.footprint.reach() {
                continue; // Wholly over the floor: nothing on the table is hidden.
            }
            out.extend(self.occluder_discs(g, b));
            // Mark the blob, grown by two pixels, as hidden.
            for v in b.v0..=b.v1 {
                for u in b.u0..=b.u1 {
                    if self.labels[v * g.width + u] != b.label {
                        continue;
                    }
                    for vv in v.saturating_sub(2)..(v + 3).min(g.height) {
                        for uu in u.saturating_sub(2)..(u + 3).min(g.width) {
                            self.hidden[vv * g.width + uu] = 1.0;
                            self.any_hidden = true;
                        }
                    }
                }
            }
        }
        out
    }

    /// Discs that together cover an occluder's blob. A hand is about a tag across
    /// and one disc holds it; an arm reaching over the table is long and thin, and
    /// one disc around it would hide half the table: it is cut into cells about two
    /// tags' reach wide, a disc around the blob's pixels in each.
    fn occluder_discs(&self, g: &TopGrid, b: &Blob) -> Vec<(Point, f64)> {
        let cell = ((2.0 * self.footprint.reach() / g.mm_per_px).ceil() as usize).max(1);
        let (cols, rows) = ((b.u1 - b.u0) / cell + 1, (b.v1 - b.v0) / cell + 1);
        // Per cell: the bounding box of the blob's pixels in it.
        let mut boxes = vec![None::<(usize, usize, usize, usize)>; cols * rows];
        for v in b.v0..=b.v1 {
            for u in b.u0..=b.u1 {
                if self.labels[v * g.width + u] != b.label {
                    continue;
                }
                let k = ((v - b.v0) / cell) * cols + (u - b.u0) / cell;
                boxes[k] = Some(match boxes[k] {
                    None => (u, u, v, v),
                    Some((u0, u1, v0, v1)) => (u0.min(u), u1.max(u), v0.min(v), v1.max(v)),
                });
            }
        }
        boxes
            .into_iter()
            .flatten()
            .map(|(u0, u1, v0, v1)| {
                let a = g.table_from_px(u0 as f64, v0 as f64);
                let z = g.table_from_px(u1 as f64, v1 as f64);
                let center = Point::from((a.coords + z.coords) / 2.0);
                (center, (z - a).norm() / 2.0 + g.mm_per_px)
            })
            .collect()
    }

    fn detect_coins(
        &mut self,
        g: &TopGrid,
        fish: &[FishSighting],
        occluders: &[(Point, f64)],
    ) -> Vec<CoinSighting> {
        let (w, h) = (g.width, g.height);
        let r_px = self.coin_radius / g.mm_per_px;
        // Sobel gradients of the grey image, row by row.
        let grey = &self.grey;
        let mut edges: Vec<(usize, usize, f32, f32)> = Vec::new();
        // A row's gradients in one branch-free (vectorised) pass, then its edges.
        let mut gxs = vec![0.0f32; w];
        let mut gys = vec![0.0f32; w];
        for v in 1..h.saturating_sub(1) {
            let up = &grey[(v - 1) * w..v * w];
            let mid = &grey[v * w..(v + 1) * w];
            let down = &grey[(v + 1) * w..(v + 2) * w];
            for u in 1..w - 1 {
                gxs[u] = (up[u + 1] + 2.0 * mid[u + 1] + down[u + 1])
                    - (up[u - 1] + 2.0 * mid[u - 1] + down[u - 1]);
                gys[u] = (down[u - 1] + 2.0 * down[u] + down[u + 1])
                    - (up[u - 1] + 2.0 * up[u] + up[u + 1]);
            }
            for u in 1..w - 1 {
                let (gx, gy) = (gxs[u], gys[u]);
                let m2 = gx * gx + gy * gy;
                // Most pixels are flat: the root only where it can pass (the rounded
                // root of at most 1600 is at most 40).
                if m2 <= 1600.0 {
                    continue;
                }
                let m = m2.sqrt();
                if m > 40.0 {
                    edges.push((u, v, gx / m, gy / m));
                }
            }
        }
        // Edges of the tags' outlines are not coin rims. The rims of their holes stay: a
        // coin in a hole lies within a few millimetres of its rim, and with those edges
        // removed the coins of the bundled match were found at their holes' centres, up
        // to 2.5 mm off. The known-radius fit tells a hole's rim (larger) from a coin's.
        let placed: Vec<_> = fish
            .iter()
            .map(|f| self.footprint.placed(&f.pose))
            .collect();
        let near_mm = 1.5f64.max(1.5 * g.mm_per_px);
        // Each outline segment with its box grown by `near_mm` (and a hair for
        // rounding): a point outside the box is farther than that from the segment.
        let segments: Vec<Vec<(Point, Point, Point, Point)>> = placed
            .iter()
            .map(|f| {
                let grow = near_mm + 1e-9;
                (0..f.outline.len())
                    .map(|i| {
                        let (a, b) = (f.outline[i], f.outline[(i + 1) % f.outline.len()]);
                        let lo = Point::new(a.x.min(b.x) - grow, a.y.min(b.y) - grow);
                        let hi = Point::new(a.x.max(b.x) + grow, a.y.max(b.y) + grow);
                        (a, b, lo, hi)
                    })
                    .collect()
            })
            .collect();
        edges.retain(|&(u, v, _, _)| {
            let p = g.table_from_px(u as f64, v as f64);
            !placed.iter().zip(&segments).any(|(f, segments)| {
                let dh = (p - f.hole.center).norm();
                // The outline's distance below `near_mm`: some segment's is.
                dh < f.reach + near_mm
                    && segments.iter().any(|&(a, b, lo, hi)| {
                        p.x >= lo.x
                            && p.x <= hi.x
                            && p.y >= lo.y
                            && p.y <= hi.y
                            && (p - crate::geometry::table::closest_on_segment(p, a, b)).norm()
                                < near_mm
                    })
            })
        });
        // Vote for centres at the coin radius along both gradient directions.
        self.votes.clear();
        self.votes.resize(w * h, 0);
        for &(u, v, nx, ny) in &edges {
            for s in [-1.0f32, 1.0] {
                let cu = (u as f32 + s * nx * r_px as f32).round();
                let cv = (v as f32 + s * ny * r_px as f32).round();
                if cu >= 0.0 && cv >= 0.0 && (cu as usize) < w && (cv as usize) < h {
                    let i = cv as usize * w + cu as usize;
                    self.votes[i] = self.votes[i].saturating_add(1);
                }
            }
        }
        // Peaks: 3x3 sums, local maxima within the coin radius.
        let circumference = std::f64::consts::TAU * r_px;
        let min_votes = (circumference * self.config.min_rim_seen * 0.6) as u32;
        let sum3 = |u: usize, v: usize| -> u32 {
            let mut s = 0u32;
            for dv in 0..3 {
                for du in 0..3 {
                    s += self.votes[(v + dv - 1) * w + (u + du - 1)] as u32;
                }
            }
            s
        };
        let mut peaks: Vec<(u32, usize, usize)> = Vec::new();
        for v in 1..h.saturating_sub(1) {
            for u in 1..w.saturating_sub(1) {
                if self.votes[v * w + u] == 0 {
                    continue;
                }
                let s = sum3(u, v);
                if s >= min_votes {
                    peaks.push((s, u, v));
                }
            }
        }
        peaks.sort_by_key(|p| std::cmp::Reverse(p.0));
        let mut coins: Vec<CoinSighting> = Vec::new();
        let mut taken: Vec<(f64, f64)> = Vec::new();
        // A fit only looks at edges near its candidate: bucket them once.
        let buckets = EdgeBuckets::new(&edges, w, h, (r_px + 8.0).ceil() as usize);
        let mut near = Vec::new();
        // `hypot` only where the squared distance is too near the limit to tell.
        let apart = r_px * 1.2;
        let (clear_in, clear_out) = (apart * apart * (1.0 - 1e-9), apart * apart * (1.0 + 1e-9));
        // How far a fit can move a centre (plus a hair for rounding).
        let fit_shift_mm = 2.0 * Self::FIT_BANDS_PX.iter().sum::<f64>() * g.mm_per_px + 1e-6;
        // Under a hand (the occluders' pixels, grown a little), whatever circle the
        // fit finds is a finger or a knuckle, not a coin that can be seen.
        let hidden = &self.hidden;
        let any_hidden = self.any_hidden;
        let hidden_at = |u: f64, v: f64| {
            let (u, v) = (u.round(), v.round());
            any_hidden
                && u >= 0.0
                && v >= 0.0
                && (u as usize) < w
                && (v as usize) < h
                && hidden[v as usize * w + u as usize] > 0.0
        };
        for &(_, u, v) in &peaks {
            if taken.iter().any(|&(tu, tv)| {
                let (du, dv) = (tu - u as f64, tv - v as f64);
                let d2 = du * du + dv * dv;
                d2 < clear_in || (d2 <= clear_out && du.hypot(dv) < apart)
            }) {
                continue;
            }
            taken.push((u as f64, v as f64));
            // Deep under a hand, whatever circle the fit finds there is dropped below.
            let at = g.table_from_px(u as f64, v as f64);
            if hidden_at(u as f64, v as f64)
                || occluders
                    .iter()
                    .any(|(center, radius)| (at - center).norm() < *radius - fit_shift_mm)
            {
                continue;
            }
            // The fit moves the centre by a few pixels at most; the margin covers it.
            buckets.near(u, v, r_px + 6.0, &mut near);
            if let Some(c) = self
                .fit_circle(g, &near, u as f64, v as f64, r_px)
                .filter(|c| {
                    let (cu, cv) = g.px_from_table(c.pt_in_table);
                    self.looks_like_coin(g, cu, cv, r_px).is_some()
                })
            {
                // A coin cannot lie across a tag in the plane: such a circle is a rim.
                let disc = crate::geometry::Disc::new(c.pt_in_table, self.coin_radius);
                let covered = placed
                    .iter()
                    .any(|f| crate::geometry::fish_disc_overlap(f, &disc, -1.5));
                let (hu, hv) = g.px_from_table(c.pt_in_table);
                let under_hand = hidden_at(hu, hv)
                    || occluders
                        .iter()
                        .any(|(center, radius)| (c.pt_in_table - center).norm() < *radius);
                // Circles beyond the edge are kept: a coin seen falling there is the
                // tracker's evidence that it left the table.
                if !covered
                    && !under_hand
                    && !coins.iter().any(|o| {
                        // Two coins lying flat cannot overlap: a second circle this
                        // near a found one is the same coin's rim or its hole's.
                        (o.pt_in_table - c.pt_in_table).norm() < 1.6 * self.coin_radius
                    })
                {
                    coins.push(c);
                }
            }
        }
        coins
    }

    /// The bands (pixels either side of the radius) of `fit_circle`'s rounds: each
    /// round moves the centre by at most twice its band.
    const FIT_BANDS_PX: [f64; 6] = [2.0, 1.6, 1.3, 1.1, 1.0, 1.0];

    fn fit_circle(
        &self,
        g: &TopGrid,
        edges: &[(usize, usize, f32, f32)],
        cu: f64,
        cv: f64,
        r_px: f64,
    ) -> Option<CoinSighting> {
        let mut cu = cu;
        let mut cv = cv;
        let mut rim_seen = 0.0;
        let mut mean_r = r_px;
        // Fit the centre with the radius known: robust where another edge (a hole's
        // rim) runs close to the coin's. The band narrows as the centre settles.
        for (round, band) in Self::FIT_BANDS_PX.into_iter().enumerate() {
            let last = round + 1 == Self::FIT_BANDS_PX.len();
            let mut pts = Vec::new();
            let mut bins = [false; 36];
            // Squared bounds of the band, a hair wide: most edges fail them, rootless.
            let inner = (r_px - band).max(0.0) * (1.0 - 1e-9);
            let outer = (r_px + band) * (1.0 + 1e-9);
            let (inner2, outer2) = (inner * inner, outer * outer);
            for &(u, v, nx, ny) in edges {
                let (du, dv) = (u as f64 - cu, v as f64 - cv);
                let d2 = du * du + dv * dv;
                if d2 > outer2 || d2 < inner2 {
                    continue;
                }
                let d = d2.sqrt();
                if (d - r_px).abs() > band || d < 1e-6 {
                    continue;
                }
                let radial = ((du * nx as f64 + dv * ny as f64) / d).abs();
                if radial < 0.8 {
                    continue;
                }
                // Only the last round's share of the rim is kept.
                if last {
                    let a = dv.atan2(du);
                    let bin = (((a + std::f64::consts::PI) / std::f64::consts::TAU * 36.0)
                        as usize)
                        .min(35);
                    bins[bin] = true;
                }
                pts.push((du, dv, d));
            }
            rim_seen = bins.iter().filter(|b| **b).count() as f64 / 36.0;
            if pts.len() < 8 {
                return None;
            }
            let n = pts.len() as f64;
            let (mut su, mut sv) = (0.0, 0.0);
            mean_r = 0.0;
            for &(du, dv, d) in &pts {
                su += (d - r_px) * du / d;
                sv += (d - r_px) * dv / d;
                mean_r += d / n;
            }
            cu += 2.0 * su / n;
            cv += 2.0 * sv / n;
        }
        let r = mean_r;
        if rim_seen < self.config.min_rim_seen || (r / r_px - 1.0).abs() > 0.2 {
            return None;
        }
        Some(CoinSighting {
            pt_in_table: g.table_from_px(cu, cv),
            radius_mm: r * g.mm_per_px,
            rim_seen,
            streak: None,
        })
    }
}

/// Edge pixels `(u, v, nx, ny)` bucketed in square cells, for neighbourhood queries.
struct EdgeBuckets<'a> {
    edges: &'a [(usize, usize, f32, f32)],
    cell: usize,
    cols: usize,
    rows: usize,
    /// Edge indices sorted by cell; cell `k` holds `order[start[k]..start[k + 1]]`.
    order: Vec<u32>,
    start: Vec<u32>,
}

impl<'a> EdgeBuckets<'a> {
    fn new(edges: &'a [(usize, usize, f32, f32)], w: usize, h: usize, cell: usize) -> Self {
        let cell = cell.max(1);
        let (cols, rows) = (w / cell + 1, h / cell + 1);
        let cell_of = |e: &(usize, usize, f32, f32)| (e.1 / cell) * cols + e.0 / cell;
        let mut start = vec![0u32; cols * rows + 1];
        for e in edges {
            start[cell_of(e) + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut fill = start.clone();
        let mut order = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            let k = cell_of(e);
            order[fill[k] as usize] = i as u32;
            fill[k] += 1;
        }
        EdgeBuckets {
            edges,
            cell,
            cols,
            rows,
            order,
            start,
        }
    }

    /// The edges within `radius` pixels (in each axis) of `(u, v)`, into `out`.
    fn near(&self, u: usize, v: usize, radius: f64, out: &mut Vec<(usize, usize, f32, f32)>) {
        out.clear();
        let r = radius.ceil() as usize;
        let (c0, c1) = (u.saturating_sub(r) / self.cell, (u + r) / self.cell);
        let (r0, r1) = (v.saturating_sub(r) / self.cell, (v + r) / self.cell);
        for row in r0..=r1.min(self.rows - 1) {
            for col in c0..=c1.min(self.cols - 1) {
                let k = row * self.cols + col;
                for &i in &self.order[self.start[k] as usize..self.start[k + 1] as usize] {
                    let e = self.edges[i as usize];
                    if e.0.abs_diff(u) <= r && e.1.abs_diff(v) <= r {
                        out.push(e);
                    }
                }
            }
        }
    }
}

/// Where the line at height `y` crosses a convex table: `(x_min, x_max)`, or `None`.
fn row_span(table: &Table, y: f64) -> Option<(f64, f64)> {
    let corners = table.corners();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, a) in corners.iter().enumerate() {
        let b = corners[(i + 1) % corners.len()];
        let (ya, yb) = (a.y.min(b.y), a.y.max(b.y));
        if y < ya || y > yb {
            continue;
        }
        if (b.y - a.y).abs() < 1e-12 {
            lo = lo.min(a.x.min(b.x));
            hi = hi.max(a.x.max(b.x));
        } else {
            let x = a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x);
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// Each pixel's chromaticity (r, g) / (r + g + b) and mean grey; red is byte `R`
/// and blue byte `B` of each three.
fn chroma_and_grey<const R: usize, const B: usize>(
    pixels: &[u8],
    chroma: &mut [[f32; 2]],
    grey: &mut [f32],
) {
    for (p, (c, y)) in pixels
        .chunks_exact(3)
        .zip(chroma.iter_mut().zip(grey.iter_mut()))
    {
        let (r, gg, b) = (p[R] as f32, p[1] as f32, p[B] as f32);
        let s = (r + gg + b).max(1.0);
        *c = [r / s, gg / s];
        *y = s / 3.0;
    }
}

fn bilinear(img: &[f32], w: usize, h: usize, u: f64, v: f64) -> f32 {
    // Written so that NaN fails the test too.
    if !(u >= 0.0 && v >= 0.0 && u < (w - 1) as f64 && v < (h - 1) as f64) {
        return 0.0;
    }
    // Non-negative here, so truncation is the floor; in range, so through i32 the
    // conversion is one instruction.
    let (u0, v0) = (u as i32 as usize, v as i32 as usize);
    let (fu, fv) = ((u - u0 as f64) as f32, (v - v0 as f64) as f32);
    let i = v0 * w + u0;
    let top = img[i] * (1.0 - fu) + img[i + 1] * fu;
    let bottom = img[i + w] * (1.0 - fu) + img[i + w + 1] * fu;
    top * (1.0 - fv) + bottom * fv
}

/// Each pixel's bits ORed with its 8 neighbours' (a 3x3 dilation of every bit).
fn grow_bits(bits: &mut [u8], tmp: &mut Vec<u8>, w: usize, h: usize) {
    if w == 0 || h == 0 {
        return;
    }
    tmp.clear();
    tmp.resize(w * h, 0);
    for v in 0..h {
        let row = &bits[v * w..(v + 1) * w];
        let out = &mut tmp[v * w..(v + 1) * w];
        for u in 0..w {
            let mut b = row[u];
            if u > 0 {
                b |= row[u - 1];
            }
            if u + 1 < w {
                b |= row[u + 1];
            }
            out[u] = b;
        }
    }
    for v in 0..h {
        for u in 0..w {
            let mut b = tmp[v * w + u];
            if v > 0 {
                b |= tmp[(v - 1) * w + u];
            }
            if v + 1 < h {
                b |= tmp[(v + 1) * w + u];
            }
            bits[v * w + u] = b;
        }
    }
}

/// A connected blob of pixels above a threshold.
#[derive(Debug, Clone)]
struct Blob {
    label: u32,
    count: usize,
    cx: f64,
    cy: f64,
    u0: usize,
    u1: usize,
    v0: usize,
    v1: usize,
}

/// 8-connected labelling of `img > threshold`; labels are 1-based (0 = background).
fn label_blobs(
    img: &[f32],
    w: usize,
    h: usize,
    threshold: f32,
    labels: &mut Vec<u32>,
) -> Vec<Blob> {
    labels.clear();
    labels.resize(w * h, 0);
    let mut blobs = Vec::new();
    let mut stack = Vec::new();
    // Most pixels are background: whole runs of them are passed over at once (a
    // branch-free test per run), and only a run holding a candidate is walked.
    const RUN: usize = 32;
    // Not at most the threshold (NaN included, as the test used to read).
    let candidate = |x: f32| x > threshold || x.is_nan();
    let candidates = (0..w * h).step_by(RUN).flat_map(|run| {
        let end = (run + RUN).min(w * h);
        let any = img[run..end]
            .iter()
            .fold(false, |any, &x| any | candidate(x));
        (if any { run..end } else { run..run }).filter(|&i| candidate(img[i]))
    });
    for start in candidates {
        if labels[start] != 0 {
            continue;
        }
        let label = blobs.len() as u32 + 1;
        let mut b = Blob {
            label,
            count: 0,
            cx: 0.0,
            cy: 0.0,
            u0: usize::MAX,
            u1: 0,
            v0: usize::MAX,
            v1: 0,
        };
        labels[start] = label;
        // Pixels as (u, v): no division per pixel.
        stack.push((start % w, start / w));
        while let Some((u, v)) = stack.pop() {
            b.count += 1;
            b.cx += u as f64;
            b.cy += v as f64;
            b.u0 = b.u0.min(u);
            b.u1 = b.u1.max(u);
            b.v0 = b.v0.min(v);
            b.v1 = b.v1.max(v);
            for vv in v.saturating_sub(1)..(v + 2).min(h) {
                for uu in u.saturating_sub(1)..(u + 2).min(w) {
                    let j = vv * w + uu;
                    if labels[j] == 0 && img[j] > threshold {
                        labels[j] = label;
                        stack.push((uu, vv));
                    }
                }
            }
        }
        b.cx /= b.count as f64;
        b.cy /= b.count as f64;
        blobs.push(b);
    }
    blobs
}

/// Whether `pose` continues a track last seen at `prior`: about the same angle (a tag
/// may slide far, it does not turn over between two looks).
fn continues(prior: &Pose, pose: &Pose) -> bool {
    wrap_angle(prior.angle() - pose.angle()).abs() < 0.6
}

/// An angle in (−π, π].
pub fn wrap_angle(a: f64) -> f64 {
    let t = a.rem_euclid(std::f64::consts::TAU);
    if t > std::f64::consts::PI {
        t - std::f64::consts::TAU
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Draws a top view by supersampling: a textured table, fish in colours, coins.
    fn draw(
        grid: &TopGrid,
        items: &Items,
        fish: &[(Pose, [u8; 3])],
        coins: &[Point],
        hand: Option<(Point, f64)>,
    ) -> Vec<u8> {
        let fp = FishFootprint::new(items);
        let placed: Vec<_> = fish.iter().map(|(p, c)| (fp.placed(p), *c)).collect();
        let mut out = vec![0u8; grid.width * grid.height * 3];
        let ss = 4;
        for v in 0..grid.height {
            for u in 0..grid.width {
                let mut acc = [0.0f64; 3];
                for sy in 0..ss {
                    for sx in 0..ss {
                        let pu = u as f64 - 0.5 + (sx as f64 + 0.5) / ss as f64;
                        let pv = v as f64 - 0.5 + (sy as f64 + 0.5) / ss as f64;
                        let p = grid.table_from_px(pu, pv);
                        // Wood: brown with a soft grain.
                        let grain = 12.0 * (p.y * 0.35 + (p.x * 0.05).sin() * 3.0).sin();
                        let mut c = [170.0 + grain, 120.0 + grain * 0.8, 75.0 + grain * 0.5];
                        for coin in coins {
                            let d = (p - coin).norm();
                            if d < items.coin.radius {
                                let shade = 1.0 - 0.15 * d / items.coin.radius;
                                c = [235.0 * shade, 175.0 * shade, 110.0 * shade];
                            }
                        }
                        for (f, col) in &placed {
                            if f.covers(p) {
                                c = [col[0] as f64, col[1] as f64, col[2] as f64];
                            }
                        }
                        if let Some((hc, hr)) = hand {
                            if (p - hc).norm() < hr {
                                c = [225.0, 180.0, 160.0];
                            }
                        }
                        for k in 0..3 {
                            acc[k] += c[k];
                        }
                    }
                }
                for k in 0..3 {
                    out[(v * grid.width + u) * 3 + k] = (acc[k] / (ss * ss) as f64) as u8;
                }
            }
        }
        out
    }

    #[test]
    fn finds_fish_pose_and_coins_to_subpixel() {
        finds_fish_pose_and_coins_on(false);
    }

    #[test]
    fn finds_fish_pose_and_coins_in_a_y_down_picture() {
        finds_fish_pose_and_coins_on(true);
    }

    fn finds_fish_pose_and_coins_on(y_down: bool) {
        let items = Items::default_set();
        let table = Table::rectangle(300.0, 200.0);
        let mut grid = TopGrid::covering(&table, 1.0, 20.0);
        if y_down {
            grid.origin_mm.y = 220.0;
            grid.y_down = true;
        }
        let red = [200, 30, 40];
        let blue = [30, 60, 200];
        let fish = [
            (Pose::fish(80.3, 90.7, 0.4), red),
            (Pose::fish(200.2, 120.1, -2.5), blue),
        ];
        let coins = [Point::new(80.9, 90.2), Point::new(150.4, 40.6)];
        let rgb = draw(&grid, &items, &fish, &coins, None);
        let mut det = Detector::new(&items, &[red, blue], table, DetectorConfig::default());
        let s = det.detect(&TopView {
            grid,
            rgb: &rgb,
            bgr: false,
        });
        assert_eq!(s.fish.len(), 2, "{s:?}");
        for (f, (truth, _)) in s.fish.iter().zip(&fish) {
            let d = (f.pose.point() - truth.point()).norm();
            let da = wrap_angle(f.pose.angle() - truth.angle()).abs();
            eprintln!("fish {} off by {d} mm, {da} rad, {f:?}", f.player);
            assert!(d < 0.5, "fish {} off by {d} mm", f.player);
            assert!(
                da < 0.5f64.to_radians(),
                "fish {} angle off by {da} rad",
                f.player
            );
        }
        assert_eq!(s.coins.len(), 2, "{s:?}");
        for truth in &coins {
            let best = s
                .coins
                .iter()
                .map(|c| (c.pt_in_table - truth).norm())
                .fold(f64::INFINITY, f64::min);
            assert!(best < 0.5, "coin off by {best} mm");
        }
    }

    /// The fit has no favoured turn: over tags at many angles and sub-pixel offsets,
    /// the signed angle errors average out (a template sampled on a sheared lattice
    /// read every tag about 0.3° clockwise).
    #[test]
    fn fish_angles_carry_no_bias() {
        let items = Items::default_set();
        let table = Table::rectangle(200.0, 200.0);
        let grid = TopGrid::covering(&table, 1.0, 20.0);
        let red = [200, 30, 40];
        let mut errors = Vec::new();
        for k in 0..16 {
            let theta = -3.0 + 0.37 * k as f64;
            let truth = Pose::fish(100.0 + 0.13 * k as f64, 95.0 + 0.29 * (k % 5) as f64, theta);
            let rgb = draw(&grid, &items, &[(truth, red)], &[], None);
            let mut det = Detector::new(&items, &[red], table.clone(), DetectorConfig::default());
            let s = det.detect(&TopView {
                grid,
                rgb: &rgb,
                bgr: false,
            });
            assert_eq!(s.fish.len(), 1, "{s:?}");
            errors.push(wrap_angle(s.fish[0].pose.angle() - theta).to_degrees());
        }
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        eprintln!("signed angle errors (deg): {errors:.3?}, mean {mean:.3}");
        assert!(
            mean.abs() < 0.1,
            "mean signed angle error {mean:.3}° ({errors:.3?})"
        );
        assert!(
            errors.iter().all(|e| e.abs() < 0.5),
            "an angle off by 0.5° or more: {errors:.3?}"
        );
    }

    /// A moving tag photographed with the shutter open for a share of the frame
    /// interval is smeared over that share of its travel; the reading gives the share
    /// back, whatever the share, the direction and the turn.
    #[test]
    fn the_exposure_is_read_from_a_moving_tags_blur() {
        let items = Items::default_set();
        let table = Table::rectangle(260.0, 200.0);
        let grid = TopGrid::covering(&table, 1.0, 20.0);
        let red = [200, 30, 40];
        // Travel between frames: (dx, dy, turn), and the shares to read.
        let cases = [
            ((30.0, 0.0, 0.0), 0.25),
            ((24.0, -14.0, 0.2), 0.5),
            ((-12.0, 30.0, -0.3), 0.75),
            ((28.0, 10.0, 0.1), 1.0),
        ];
        for ((dx, dy, dt), share) in cases {
            let mid = Pose::fish(130.0, 100.0, 0.7);
            let before = Pose::fish(mid.x - dx, mid.y - dy, mid.angle() - dt);
            // The exposure as the mean of many instants spread evenly over it.
            let n = 24;
            let mut acc = vec![0.0f64; grid.width * grid.height * 3];
            for k in 0..n {
                let s = share * ((k as f64 + 0.5) / n as f64 - 0.5);
                let at = Pose::fish(mid.x + s * dx, mid.y + s * dy, mid.angle() + s * dt);
                for (a, b) in acc
                    .iter_mut()
                    .zip(draw(&grid, &items, &[(at, red)], &[], None))
                {
                    *a += b as f64 / n as f64;
                }
            }
            let rgb: Vec<u8> = acc.iter().map(|a| a.round() as u8).collect();
            let mut det = Detector::new(&items, &[red], table.clone(), DetectorConfig::default());
            let hints = Hints {
                fish: vec![Some(before)],
                quick: true,
                previous_frame: vec![Some(before)],
                ..Hints::default()
            };
            let s = det.detect_with(
                &TopView {
                    grid,
                    rgb: &rgb,
                    bgr: false,
                },
                &hints,
            );
            assert_eq!(s.fish.len(), 1, "{s:?}");
            let read = s.fish[0].exposure_share;
            eprintln!("share {share}: read {read:?}");
            let read = read.unwrap_or(f64::NAN);
            assert!(
                (read - share).abs() < 0.08,
                "shutter open {share} of the interval, read {read}"
            );
        }
    }

    #[test]
    fn a_hand_is_an_occluder_and_a_half_hidden_fish_is_still_found() {
        a_half_hidden_fish_is_found(Items::default_set());
    }

    /// As above for a narrow tag (22 mm across, a 17 mm hole): the wide search for a
    /// partly hidden tag, every other grid point first, does not step over it.
    #[test]
    fn a_half_hidden_narrow_fish_is_still_found() {
        let mut items = Items::default_set();
        items.fish.outline = vec![[-11.0, -11.0], [62.0, -11.0], [62.0, 11.0], [-11.0, 11.0]];
        items.fish.hole_radius = 8.5;
        a_half_hidden_fish_is_found(items);
    }

    fn a_half_hidden_fish_is_found(items: Items) {
        let table = Table::rectangle(300.0, 200.0);
        let grid = TopGrid::covering(&table, 1.0, 20.0);
        let red = [200, 30, 40];
        let truth = Pose::fish(120.0, 100.0, 0.3);
        // A hand over the tail of the tag.
        let hand = (Point::new(175.0, 118.0), 30.0);
        let rgb = draw(&grid, &items, &[(truth, red)], &[], Some(hand));
        let mut det = Detector::new(&items, &[red], table, DetectorConfig::default());
        let s = det.detect(&TopView {
            grid,
            rgb: &rgb,
            bgr: false,
        });
        assert_eq!(s.occluders.len(), 1, "{s:?}");
        assert!((s.occluders[0].0 - hand.0).norm() < 3.0);
        assert_eq!(s.fish.len(), 1);
        let f = &s.fish[0];
        assert!(f.visible_fraction < 0.9, "{f:?}");
        assert!((f.pose.point() - truth.point()).norm() < 2.0, "{f:?}");
        assert!(
            wrap_angle(f.pose.angle() - truth.angle()).abs() < 0.05,
            "{f:?}"
        );
        assert!(s.coins.is_empty(), "{s:?}");
    }

    /// A hand the colour of the table (skin over light wood) is no odd colour, but
    /// it is not the table seen before it came: it is found as an occluder, and the
    /// knuckle-sized circles on it are no coins. A coin beside it is still seen.
    #[test]
    fn a_hand_coloured_like_the_table_is_an_occluder_seen_by_what_changed() {
        let items = Items::default_set();
        let table = Table::rectangle(300.0, 200.0);
        let grid = TopGrid::covering(&table, 1.0, 20.0);
        let red = [200, 30, 40];
        let fish = [(Pose::fish(60.0, 60.0, 0.3), red)];
        let coin = Point::new(220.0, 150.0);
        let bare = draw(&grid, &items, &fish, &[coin], None);
        let mut det = Detector::new(&items, &[red], table, DetectorConfig::default());
        let view = |rgb| TopView {
            grid,
            rgb,
            bgr: false,
        };
        let first = det.detect(&view(&bare));
        assert!(first.occluders.is_empty(), "{first:?}");
        // A palm and four fingertips, a little lighter than the wood beneath, with
        // the wood's own hue: the colour tests alone pass it as table.
        let mut hand = bare.clone();
        let palm = Point::new(150.0, 90.0);
        let tips: Vec<Point> = (0..4)
            .map(|k| Point::new(125.0 + 16.0 * k as f64, 135.0))
            .collect();
        for v in 0..grid.height {
            for u in 0..grid.width {
                let p = grid.table_from_px(u as f64, v as f64);
                let on_hand = (p - palm).norm() < 35.0
                    || tips.iter().any(|t| {
                        (p - t).norm() < items.coin.radius
                            || ((p.x - t.x).abs() < items.coin.radius && p.y < t.y && p.y > palm.y)
                    });
                if on_hand {
                    let i = (v * grid.width + u) * 3;
                    for k in 0..3 {
                        hand[i + k] = (hand[i + k] as f64 * 1.2).min(255.0) as u8;
                    }
                }
            }
        }
        let s = det.detect(&view(&hand));
        assert!(
            s.occluders.iter().any(|(c, r)| (c - palm).norm() < *r),
            "the hand is not an occluder: {s:?}"
        );
        assert_eq!(s.coins.len(), 1, "{s:?}");
        assert!((s.coins[0].pt_in_table - coin).norm() < 1.0, "{s:?}");
        assert_eq!(s.fish.len(), 1, "{s:?}");
    }
}
