//! Item footprints in the plane: the fish (a simple polygon with a round hole) and
//! the coin (a disc), placed at a pose, and the overlap tests between them.

use super::table::{closest_on_segment, polygon_area, Table};
use super::{Point, Vector};
use crate::config::Items;
use crate::model::Pose;
use nalgebra::{Rotation2, Vector2};

/// A disc: a coin, or a fish's hole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disc {
    pub center: Point,
    pub radius: f64,
}

impl Disc {
    pub fn new(center: Point, radius: f64) -> Disc {
        Disc { center, radius }
    }
    /// Whether `other` lies wholly inside this disc.
    pub fn contains_disc(&self, other: &Disc) -> bool {
        (other.center - self.center).norm() + other.radius <= self.radius + 1e-9
    }
}

/// The shape of every fish, in the fish frame (origin at the hole centre).
#[derive(Debug, Clone, PartialEq)]
pub struct FishFootprint {
    /// Counter-clockwise outline.
    outline: Vec<Point>,
    hole_radius: f64,
    /// Radius around the hole centre that encloses the whole outline.
    reach: f64,
}

impl FishFootprint {
    pub fn new(items: &Items) -> FishFootprint {
        let mut outline: Vec<Point> = items
            .fish
            .outline
            .iter()
            .map(|&[x, y]| Point::new(x, y))
            .collect();
        if polygon_area(&outline) < 0.0 {
            outline.reverse();
        }
        let reach = outline.iter().map(|p| p.coords.norm()).fold(0.0, f64::max);
        FishFootprint {
            outline,
            hole_radius: items.fish.hole_radius,
            reach,
        }
    }

    /// The outline in the fish frame, counter-clockwise.
    pub fn outline(&self) -> &[Point] {
        &self.outline
    }

    pub fn hole_radius(&self) -> f64 {
        self.hole_radius
    }

    /// The largest distance from the hole centre to the outline.
    pub fn reach(&self) -> f64 {
        self.reach
    }

    /// Area of the tag material (outline minus hole), mm².
    pub fn area(&self) -> f64 {
        polygon_area(&self.outline) - std::f64::consts::PI * self.hole_radius.powi(2)
    }

    /// The centre of mass of the tag material, in the fish frame.
    pub fn centroid(&self) -> Point {
        let n = self.outline.len();
        let mut a = 0.0;
        let mut c = Vector::zeros();
        for i in 0..n {
            let p = self.outline[i].coords;
            let q = self.outline[(i + 1) % n].coords;
            let w = p.x * q.y - q.x * p.y;
            a += w;
            c += (p + q) * w;
        }
        let outline_area = a / 2.0;
        let outline_centroid = c / (6.0 * outline_area);
        // The hole (centred at the origin) removes mass at the origin only.
        let hole_area = std::f64::consts::PI * self.hole_radius.powi(2);
        Point::from(outline_centroid * outline_area / (outline_area - hole_area))
    }

    /// Where the tag's centre of mass lies at `pose`, in the table frame.
    pub fn centre_of_mass(&self, pose: &Pose) -> Point {
        pose.point() + Rotation2::new(pose.angle()) * self.centroid().coords
    }

    /// Checks that the outline is simple and holds the hole with material around it.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.outline.len();
        if polygon_area(&self.outline).abs() < 1e-9 {
            return Err("fish outline has no area".into());
        }
        for i in 0..n {
            for j in i + 1..n {
                let adjacent = j == i + 1 || (i == 0 && j == n - 1);
                if adjacent {
                    continue;
                }
                let (a, b) = (self.outline[i], self.outline[(i + 1) % n]);
                let (c, d) = (self.outline[j], self.outline[(j + 1) % n]);
                if segment_distance(a, b, c, d) < 1e-9 {
                    return Err(format!(
                        "fish outline is not a simple polygon (edges {i} and {j} cross)"
                    ));
                }
            }
        }
        let origin = Point::origin();
        if !point_in_polygon(origin, &self.outline) {
            return Err("the hole centre (the fish frame's origin) is outside the outline".into());
        }
        let rim = boundary_distance(origin, &self.outline);
        if rim < self.hole_radius {
            return Err(format!(
                "the hole (radius {} mm) does not fit inside the outline (room {:.2} mm)",
                self.hole_radius, rim
            ));
        }
        Ok(())
    }

    /// The footprint at a pose in the table frame.
    pub fn placed(&self, pose: &Pose) -> PlacedFish {
        let rot = Rotation2::new(pose.angle());
        let t = Vector2::new(pose.x, pose.y);
        PlacedFish {
            outline: self.outline.iter().map(|p| rot * p + t).collect(),
            hole: Disc::new(Point::new(pose.x, pose.y), self.hole_radius),
            reach: self.reach,
        }
    }
}

/// A fish footprint in the table frame.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedFish {
    /// Counter-clockwise outline, table mm.
    pub outline: Vec<Point>,
    pub hole: Disc,
    /// Radius around the hole centre that encloses the outline.
    pub reach: f64,
}

impl PlacedFish {
    /// Whether a point lies on the tag material (inside the outline, outside the hole).
    pub fn covers(&self, p: Point) -> bool {
        point_in_polygon(p, &self.outline) && (p - self.hole.center).norm() > self.hole.radius
    }

    /// Whether a point lies inside the outline (hole included).
    pub fn outline_contains(&self, p: Point) -> bool {
        point_in_polygon(p, &self.outline)
    }
}

/// Whether two fish come closer than `clearance` (or overlap).
pub fn fish_fish_overlap(a: &PlacedFish, b: &PlacedFish, clearance: f64) -> bool {
    if (a.hole.center - b.hole.center).norm() > a.reach + b.reach + clearance {
        return false;
    }
    // Bounding boxes further apart than the clearance cannot meet; this cheap test
    // spares the quadratic edge-to-edge distance for most neighbours.
    fish_fish_overlap_boxed(
        a,
        bounding_box(&a.outline),
        b,
        bounding_box(&b.outline),
        clearance,
    )
}

/// [`fish_fish_overlap`] with both outlines' bounds (min, max) already known.
pub fn fish_fish_overlap_boxed(
    a: &PlacedFish,
    abox: (Point, Point),
    b: &PlacedFish,
    bbox: (Point, Point),
    clearance: f64,
) -> bool {
    let ((alo, ahi), (blo, bhi)) = (abox, bbox);
    let gap = clearance.max(1e-12);
    if alo.x - bhi.x >= gap || blo.x - ahi.x >= gap || alo.y - bhi.y >= gap || blo.y - ahi.y >= gap
    {
        return false;
    }
    // Two simple polygons meet when their boundaries come within the clearance, or
    // when one lies wholly inside the other (then any one vertex is inside).
    boundaries_within_boxed(&a.outline, &b.outline, bbox, gap)
        || point_in_polygon(a.outline[0], &b.outline)
        || point_in_polygon(b.outline[0], &a.outline)
}

/// Whether two polygon boundaries come closer than `gap` (> 0) anywhere. Segment
/// pairs whose bounding boxes are `gap` apart are skipped; stops at the first hit.
pub fn boundaries_within(a: &[Point], b: &[Point], gap: f64) -> bool {
    boundaries_within_boxed(a, b, bounding_box(b), gap)
}

fn boundaries_within_boxed(a: &[Point], b: &[Point], bbox: (Point, Point), gap: f64) -> bool {
    let (n, m) = (a.len(), b.len());
    let (blo, bhi) = bbox;
    for i in 0..n {
        let (p, q) = (a[i], a[(i + 1) % n]);
        let (plo, phi) = (
            Point::new(p.x.min(q.x) - gap, p.y.min(q.y) - gap),
            Point::new(p.x.max(q.x) + gap, p.y.max(q.y) + gap),
        );
        if plo.x > bhi.x || plo.y > bhi.y || phi.x < blo.x || phi.y < blo.y {
            continue;
        }
        for j in 0..m {
            let (r, s) = (b[j], b[(j + 1) % m]);
            if r.x.max(s.x) < plo.x
                || r.x.min(s.x) > phi.x
                || r.y.max(s.y) < plo.y
                || r.y.min(s.y) > phi.y
            {
                continue;
            }
            if segment_distance(p, q, r, s) < gap {
                return true;
            }
        }
    }
    false
}

/// Whether a disc comes closer than `clearance` to the material of a fish. A disc
/// that stays `clearance` clear of the rim inside the hole does not overlap.
pub fn fish_disc_overlap(f: &PlacedFish, d: &Disc, clearance: f64) -> bool {
    let grown = Disc::new(d.center, d.radius + clearance);
    if (d.center - f.hole.center).norm() > f.reach + grown.radius {
        return false;
    }
    if f.hole.contains_disc(&grown) {
        return false;
    }
    point_in_polygon(d.center, &f.outline) || boundary_distance(d.center, &f.outline) < grown.radius
}

/// Whether two discs come closer than `clearance`.
pub fn disc_disc_overlap(a: &Disc, b: &Disc, clearance: f64) -> bool {
    (a.center - b.center).norm() < a.radius + b.radius + clearance
}

/// The smallest distance from the fish's outline to the table edge: negative when
/// it overhangs (by that much).
pub fn fish_edge_gap(table: &Table, f: &PlacedFish) -> f64 {
    table.polygon_margin(&f.outline)
}

/// Axis-aligned bounds of a point set: (min, max).
pub fn bounding_box(pts: &[Point]) -> (Point, Point) {
    let mut lo = Point::new(f64::INFINITY, f64::INFINITY);
    let mut hi = Point::new(f64::NEG_INFINITY, f64::NEG_INFINITY);
    for p in pts {
        lo = Point::new(lo.x.min(p.x), lo.y.min(p.y));
        hi = Point::new(hi.x.max(p.x), hi.y.max(p.y));
    }
    (lo, hi)
}

/// Even–odd point-in-polygon (any simple polygon).
pub fn point_in_polygon(p: Point, poly: &[Point]) -> bool {
    let n = poly.len();
    let mut inside = false;
    let mut j = n - 1;
    for i in 0..n {
        let (a, b) = (poly[i], poly[j]);
        if (a.y > p.y) != (b.y > p.y) {
            let x = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y);
            if p.x < x {
                inside = !inside;
            }
        }
        j = i;
    }
    inside
}

/// Distance from a point to a polygon's boundary.
pub fn boundary_distance(p: Point, poly: &[Point]) -> f64 {
    let n = poly.len();
    (0..n)
        .map(|i| (p - closest_on_segment(p, poly[i], poly[(i + 1) % n])).norm())
        .fold(f64::INFINITY, f64::min)
}

/// Smallest distance between two polygon boundaries (0 where they cross).
pub fn polygon_polygon_distance(a: &[Point], b: &[Point]) -> f64 {
    let (n, m) = (a.len(), b.len());
    let mut best = f64::INFINITY;
    for i in 0..n {
        let (p, q) = (a[i], a[(i + 1) % n]);
        for j in 0..m {
            best = best.min(segment_distance(p, q, b[j], b[(j + 1) % m]));
            if best == 0.0 {
                return 0.0;
            }
        }
    }
    best
}

/// Distance between segments `ab` and `cd` (0 when they cross).
pub fn segment_distance(a: Point, b: Point, c: Point, d: Point) -> f64 {
    let orient = |p: Point, q: Point, r: Point| (q - p).perp(&(r - p));
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    if o1 * o2 < 0.0 && o3 * o4 < 0.0 {
        return 0.0;
    }
    [
        (c - closest_on_segment(c, a, b)).norm(),
        (d - closest_on_segment(d, a, b)).norm(),
        (a - closest_on_segment(a, c, d)).norm(),
        (b - closest_on_segment(b, c, d)).norm(),
    ]
    .into_iter()
    .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fish() -> FishFootprint {
        FishFootprint::new(&Items::default_set())
    }

    #[test]
    fn default_fish_is_valid_and_its_centroid_lies_toward_the_tail() {
        let f = fish();
        assert!(f.validate().is_ok());
        assert!(f.centroid().x > 0.0 && f.centroid().y.abs() < 1e-9);
        assert!(f.area() > 0.0);
    }

    #[test]
    fn coin_in_hole_does_not_overlap_its_fish() {
        let f = fish().placed(&Pose::fish(100.0, 100.0, 0.7));
        let coin = Disc::new(Point::new(101.0, 100.5), 7.5);
        assert!(!fish_disc_overlap(&f, &coin, 0.0));
        // A coin half out of the hole lies on the rim.
        let rim = Disc::new(Point::new(100.0 + 6.0, 100.0), 7.5);
        assert!(fish_disc_overlap(&f, &rim, 0.0));
        // Far away: no overlap; near the tail within the clearance: overlap.
        assert!(!fish_disc_overlap(
            &f,
            &Disc::new(Point::new(300.0, 300.0), 7.5),
            1.0
        ));
    }

    #[test]
    fn fish_overlap_respects_clearance() {
        let a = fish().placed(&Pose::fish(100.0, 100.0, 0.0));
        // Side by side, 30 mm wide tags 32 mm apart: a 2 mm gap.
        let b = fish().placed(&Pose::fish(100.0, 132.0, 0.0));
        assert!(!fish_fish_overlap(&a, &b, 1.0));
        assert!(fish_fish_overlap(&a, &b, 3.0));
        let c = fish().placed(&Pose::fish(120.0, 110.0, 1.0));
        assert!(fish_fish_overlap(&a, &c, 0.0));
    }

    #[test]
    fn self_crossing_outline_is_rejected() {
        let mut items = Items::default_set();
        items.fish.outline = vec![[-20.0, -20.0], [40.0, 20.0], [40.0, -20.0], [-20.0, 30.0]];
        assert!(items
            .validate()
            .unwrap_err()
            .contains("not a simple polygon"));
    }

    #[test]
    fn fast_overlap_agrees_with_exhaustive_distance() {
        let f = fish();
        let a = f.placed(&Pose::fish(100.0, 100.0, 0.3));
        let mut checked = 0;
        for ix in 0..40 {
            for k in 0..12 {
                let pose = Pose::fish(40.0 + 4.0 * ix as f64, 110.0, 0.5 * k as f64);
                let b = f.placed(&pose);
                for clearance in [0.0, 1.0, 5.0] {
                    let slow = b.outline.iter().any(|p| point_in_polygon(*p, &a.outline))
                        || a.outline.iter().any(|p| point_in_polygon(*p, &b.outline))
                        || polygon_polygon_distance(&a.outline, &b.outline)
                            < f64::max(clearance, 1e-12);
                    assert_eq!(
                        fish_fish_overlap(&a, &b, clearance),
                        slow,
                        "{pose:?} {clearance}"
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 1440);
    }
}
