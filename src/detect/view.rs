//! The top-down view detection works on and what it finds there: [`TopGrid`] (how
//! pixels map to table millimetres), [`TopView`] (the pixels), and the sightings of
//! one frame ([`FishSighting`], [`CoinSighting`], [`Sightings`]) with their
//! correction for height ([`Sightings::seen_from`]) and their hand-over to the
//! tracker ([`Sightings::to_frame_detections`]).

use crate::config::Items;
use crate::geometry::{FishFootprint, Point, Table, Vector};
use crate::model::{FrameIdx, PlayerIdx, Pose};
use crate::track::{CoinDetection, FishDetection, FrameDetections, Occluder, StrangerTag, Streak};

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

    pub(super) fn sign_y(&self) -> f64 {
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
    /// exposure (`pt_in_table` is its midpoint). See [`super::streaks`].
    pub streak: Option<Streak>,
    /// Which of 36 equal sectors about the centre showed the rim (bit `k`: the
    /// sector from `k` × 10° − 180°, angles in the view's pixel axes).
    pub rim_sectors: u64,
    /// A quarter of the rim or more, in one stretch, went unseen where nothing could
    /// hide it (on the bare table top, clear of its edge, every tag, hand and other
    /// coin), and the inside does not set it apart from the table: a grain, a seam
    /// or a shadow's edge read as a rim, or a coin blurred along its path. A coin at
    /// rest in the open shows its whole rim, or an inside unlike the table (a copper
    /// coin on light wood loses its rim on its lit side).
    pub rim_gap_in_view: bool,
}

/// Everything found in one top-down frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sightings {
    pub fish: Vec<FishSighting>,
    pub coins: Vec<CoinSighting>,
    /// Large regions that are neither table, tag nor coin (a hand, an arm), as
    /// discs (centre, radius) in table mm: what lies under them is hidden.
    pub occluders: Vec<(Point, f64)>,
    /// Whole tags of a colour no player has, once (in the view the players' colours
    /// were learned from).
    pub strangers: Vec<StrangerSighting>,
}

/// A tag-shaped region of a colour no player of the game has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrangerSighting {
    /// Its centroid, table mm.
    pub centre: Point,
    /// Its colour as seen.
    pub rgb: [u8; 3],
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
        let parallax = Parallax {
            foot: Point::new(camera.x, camera.y),
            height: camera.z,
        };
        let lower = |p: Point, h: f64| -> Point {
            if parallax.height <= h + 1.0 {
                return p;
            }
            parallax.lower(p, h)
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
                    rim_gap_in_view: c.rim_gap_in_view,
                }
            })
            .collect();
        let occluders = self
            .occluders
            .iter()
            .map(|&(center, radius)| Occluder::Disc { center, radius })
            .collect();
        let strangers = self
            .strangers
            .iter()
            .map(|s| StrangerTag {
                pt_in_table: s.centre,
                rgb: s.rgb,
            })
            .collect();
        FrameDetections {
            frame,
            fish,
            coins,
            occluders,
            off_table: Vec::new(),
            strangers,
        }
    }
}

/// Where the camera looks from: a point `h` above the table appears on the table
/// plane pushed away from the camera's foot point by the factor `z / (z - h)`.
pub(super) struct Parallax {
    pub(super) foot: Point,
    /// The camera's height above the table (infinite: seen from straight above).
    pub(super) height: f64,
}

impl Parallax {
    /// Where a point at `p`, `h` above the table, appears.
    pub(super) fn appear(&self, p: Point, h: f64) -> Point {
        if !self.height.is_finite() {
            return p;
        }
        self.foot + (p - self.foot) * (self.height / (self.height - h))
    }

    /// Where a point seen at `seen`, `h` above the table, stands.
    pub(super) fn lower(&self, seen: Point, h: f64) -> Point {
        if !self.height.is_finite() {
            return seen;
        }
        self.foot + (seen - self.foot) * ((self.height - h) / self.height)
    }
}
