//! Capsule bounds of a polygon (the points within a radius of a segment): one
//! capsule that holds the polygon and one that lies inside it, around the same
//! segment. Most "do these two shapes come within a clearance" questions are then
//! settled by one segment distance: clear when the outer capsules are, overlapping
//! when the inner ones meet; only the thin band between needs the polygon tests of
//! `shapes`, whose answers these verdicts never contradict. Uses: shapes, table.

use super::shapes::{point_in_polygon, segment_distance};
use super::table::closest_on_segment;
use super::{Disc, Point, Vector};

/// How far from a threshold a bound must be to decide (mm): covers the rounding of
/// bounds computed in one frame and turned or moved into another.
pub const BOUND_ROUNDING_MM: f64 = 1e-6;

/// A segment `a`–`b` with two radii: every point of the polygon lies within `outer`
/// of the segment, and every point within `inner` of it lies inside the polygon
/// (`inner` is 0 when the segment is not inside).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapsuleBounds {
    pub a: Point,
    pub b: Point,
    pub outer: f64,
    pub inner: f64,
}

/// What capsule bounds tell about two shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// Certainly farther apart than the clearance.
    Clear,
    /// Certainly closer than the clearance (overlapping), and still so after
    /// either shape moves by less than `slack` mm.
    Overlap { slack: f64 },
    /// Too close to call: ask the polygon test.
    Unsure,
}

impl CapsuleBounds {
    /// Bounds of a simple polygon around its principal axis, trimmed at each end by
    /// half the polygon's width (a stadium gets its own spine and radius).
    pub fn of_polygon(poly: &[Point]) -> CapsuleBounds {
        let n = poly.len().max(1) as f64;
        let mean = poly.iter().fold(Vector::zeros(), |acc, p| acc + p.coords) / n;
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for p in poly {
            let d = p.coords - mean;
            sxx += d.x * d.x;
            sxy += d.x * d.y;
            syy += d.y * d.y;
        }
        let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        let dir = Vector::new(angle.cos(), angle.sin());
        let across = Vector::new(-dir.y, dir.x);
        let (mut tlo, mut thi, mut ulo, mut uhi) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for p in poly {
            let d = p.coords - mean;
            let (t, u) = (dir.dot(&d), across.dot(&d));
            tlo = tlo.min(t);
            thi = thi.max(t);
            ulo = ulo.min(u);
            uhi = uhi.max(u);
        }
        let half = (uhi - ulo) / 2.0;
        let mid = mean + across * ((uhi + ulo) / 2.0);
        let (t0, t1) = if tlo + half <= thi - half {
            (tlo + half, thi - half)
        } else {
            let m = (tlo + thi) / 2.0;
            (m, m)
        };
        let a = Point::from(mid + dir * t0);
        let b = Point::from(mid + dir * t1);
        let outer = poly
            .iter()
            .map(|p| (p - closest_on_segment(*p, a, b)).norm())
            .fold(0.0, f64::max);
        let m = poly.len();
        let inner = if m >= 3 && point_in_polygon(a, poly) {
            (0..m)
                .map(|i| segment_distance(a, b, poly[i], poly[(i + 1) % m]))
                .fold(f64::INFINITY, f64::min)
        } else {
            0.0
        };
        CapsuleBounds { a, b, outer, inner }
    }

    /// The bounds turned by the rotation (cos, sin) about the origin, then moved by
    /// `by`: the bounds of the polygon turned and moved the same way.
    pub fn turned_moved(&self, cos: f64, sin: f64, by: Vector) -> CapsuleBounds {
        let turn = |p: Point| Point::new(cos * p.x - sin * p.y, sin * p.x + cos * p.y) + by;
        CapsuleBounds {
            a: turn(self.a),
            b: turn(self.b),
            ..*self
        }
    }

    /// The bounds moved by `by`.
    pub fn moved(&self, by: Vector) -> CapsuleBounds {
        CapsuleBounds {
            a: self.a + by,
            b: self.b + by,
            ..*self
        }
    }

    /// Distance from a point to the segment.
    pub fn axis_distance(&self, p: Point) -> f64 {
        (p - closest_on_segment(p, self.a, self.b)).norm()
    }
}

/// Bound for [`super::fish_fish_overlap`] of two fish outlines with these bounds.
pub fn fish_fish_bound(a: &CapsuleBounds, b: &CapsuleBounds, clearance: f64) -> Bound {
    // The polygon test compares boundary distances with this (a touch counts).
    let gap = clearance.max(1e-12);
    let d = segments_distance(a.a, a.b, b.a, b.b);
    if d >= a.outer + b.outer + gap + BOUND_ROUNDING_MM {
        Bound::Clear
    } else if d < a.inner + b.inner - BOUND_ROUNDING_MM {
        // The inner capsules meet, so the interiors do.
        Bound::Overlap {
            slack: a.inner + b.inner - BOUND_ROUNDING_MM - d,
        }
    } else {
        Bound::Unsure
    }
}

/// Bound for [`super::fish_disc_overlap`] of a fish (outline bounds, hole) and a disc.
pub fn fish_disc_bound(fish: &CapsuleBounds, hole: &Disc, d: &Disc, clearance: f64) -> Bound {
    let grown = Disc::new(d.center, d.radius + clearance);
    let dist = fish.axis_distance(d.center);
    if dist >= fish.outer + grown.radius + BOUND_ROUNDING_MM {
        Bound::Clear
    } else if dist < fish.inner + grown.radius - BOUND_ROUNDING_MM {
        // The grown disc reaches into the outline; only a hole around it saves it.
        if hole.contains_disc(&grown) {
            Bound::Clear
        } else {
            // Moved by less than the slack, the disc still reaches in and the hole
            // still does not hold it.
            let out_of_hole =
                (grown.center - hole.center).norm() + grown.radius - hole.radius - 1e-9;
            Bound::Overlap {
                slack: (fish.inner + grown.radius - BOUND_ROUNDING_MM - dist)
                    .min(out_of_hole - BOUND_ROUNDING_MM),
            }
        }
    } else {
        Bound::Unsure
    }
}

/// Distance between segments `ab` and `cd` (0 when they cross), as
/// `shapes::segment_distance` but with one square root.
pub fn segments_distance(a: Point, b: Point, c: Point, d: Point) -> f64 {
    let orient = |p: Point, q: Point, r: Point| (q - p).perp(&(r - p));
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    if o1 * o2 < 0.0 && o3 * o4 < 0.0 {
        return 0.0;
    }
    let sq = |p: Point, s: Point, e: Point| (p - closest_on_segment(p, s, e)).norm_squared();
    sq(c, a, b)
        .min(sq(d, a, b))
        .min(sq(a, c, d))
        .min(sq(b, c, d))
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Items;
    use crate::geometry::{fish_disc_overlap, fish_fish_overlap, FishFootprint};
    use crate::model::Pose;

    #[test]
    fn one_root_segment_distance_agrees() {
        let mut x = 7u64;
        let mut r = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64 * 100.0
        };
        for _ in 0..2000 {
            let p: Vec<Point> = (0..4).map(|_| Point::new(r(), r())).collect();
            let (slow, fast) = (
                segment_distance(p[0], p[1], p[2], p[3]),
                segments_distance(p[0], p[1], p[2], p[3]),
            );
            assert!((slow - fast).abs() < 1e-9, "{p:?}");
        }
    }

    #[test]
    fn verdicts_hold_for_a_non_convex_outline() {
        // A tag with a notch cut into its tail, and its hole off the spine.
        let mut items = Items::default_set();
        items.fish.outline = vec![
            [-12.0, -14.0],
            [55.0, -14.0],
            [55.0, -3.0],
            [30.0, -1.0],
            [55.0, 4.0],
            [50.0, 16.0],
            [-12.0, 12.0],
        ];
        items.fish.hole_radius = 8.0;
        items.coin.radius = 6.0;
        let f = FishFootprint::new(&items);
        assert!(f.validate().is_ok());
        let local = CapsuleBounds::of_polygon(f.outline());
        let a = f.placed(&Pose::fish(100.0, 100.0, 0.0));
        let a_caps = local.turned_moved(1.0, 0.0, Vector::new(100.0, 100.0));
        let mut x = 11u64;
        let mut r = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut decided = 0;
        for _ in 0..4000 {
            let p = Pose::fish(40.0 + 120.0 * r(), 40.0 + 120.0 * r(), 7.0 * r());
            let b = f.placed(&p);
            let (s, c) = p.angle().sin_cos();
            let b_caps = local.turned_moved(c, s, Vector::new(p.x, p.y));
            let disc = Disc::new(Point::new(p.x, p.y), 6.0 * r());
            let clearance = 2.0 * r();
            let exact = fish_fish_overlap(&a, &b, clearance);
            match fish_fish_bound(&a_caps, &b_caps, clearance) {
                Bound::Clear => assert!(!exact, "{p:?}"),
                Bound::Overlap { .. } => assert!(exact, "{p:?}"),
                Bound::Unsure => decided -= 1,
            }
            let exact = fish_disc_overlap(&a, &disc, clearance);
            match fish_disc_bound(&a_caps, &a.hole, &disc, clearance) {
                Bound::Clear => assert!(!exact, "{disc:?}"),
                Bound::Overlap { .. } => assert!(exact, "{disc:?}"),
                Bound::Unsure => decided -= 1,
            }
            decided += 2;
        }
        assert!(decided > 4000, "only {decided} of 8000 decided");
    }

    #[test]
    fn default_fish_gets_its_spine() {
        let f = FishFootprint::new(&Items::default_set());
        let c = CapsuleBounds::of_polygon(f.outline());
        let (a, b) = if c.a.x < c.b.x {
            (c.a, c.b)
        } else {
            (c.b, c.a)
        };
        assert!((a - Point::new(0.0, 0.0)).norm() < 1e-9, "{c:?}");
        assert!((b - Point::new(45.0, 0.0)).norm() < 1e-9, "{c:?}");
        assert!((c.outer - 15.0).abs() < 1e-9 && c.inner > 14.9 && c.inner < 15.0);
    }

    #[test]
    fn verdicts_never_contradict_the_polygon_tests() {
        let f = FishFootprint::new(&Items::default_set());
        let local = CapsuleBounds::of_polygon(f.outline());
        let a_pose = Pose::fish(100.0, 100.0, 0.3);
        let a = f.placed(&a_pose);
        let (s, c) = a_pose.angle().sin_cos();
        let a_caps = local.turned_moved(c, s, Vector::new(100.0, 100.0));
        let (mut decided, mut total) = (0, 0);
        for ix in 0..60 {
            for iy in 0..9 {
                for k in 0..12 {
                    let p = Pose::fish(
                        30.0 + 2.7 * ix as f64,
                        70.0 + 7.3 * iy as f64,
                        0.53 * k as f64,
                    );
                    let b = f.placed(&p);
                    let (s, c) = p.angle().sin_cos();
                    let b_caps = CapsuleBounds::of_polygon(&b.outline);
                    let b_turned = local.turned_moved(c, s, Vector::new(p.x, p.y));
                    let disc = Disc::new(Point::new(p.x, p.y), 7.5 * (k % 3) as f64);
                    for clearance in [0.0, 0.5, 3.0] {
                        let exact = fish_fish_overlap(&a, &b, clearance);
                        for caps in [&b_caps, &b_turned] {
                            match fish_fish_bound(&a_caps, caps, clearance) {
                                Bound::Clear => assert!(!exact, "{p:?}"),
                                Bound::Overlap { slack } => {
                                    assert!(exact, "{p:?}");
                                    assert!(slack > 0.0);
                                    // Moved by just under the slack, still overlapping.
                                    let v = Vector::new(0.6, -0.8) * slack * 0.999;
                                    let moved =
                                        f.placed(&Pose::fish(p.x + v.x, p.y + v.y, p.angle()));
                                    assert!(
                                        fish_fish_overlap(&a, &moved, clearance),
                                        "{p:?} {slack}"
                                    );
                                }
                                Bound::Unsure => decided -= 1,
                            }
                            decided += 1;
                            total += 1;
                        }
                        let exact = fish_disc_overlap(&a, &disc, clearance);
                        match fish_disc_bound(&a_caps, &a.hole, &disc, clearance) {
                            Bound::Clear => assert!(!exact, "{disc:?}"),
                            Bound::Overlap { slack } => {
                                assert!(exact, "{disc:?}");
                                assert!(slack > 0.0);
                                let v = Vector::new(-0.6, 0.8) * slack * 0.999;
                                let moved = Disc::new(disc.center + v, disc.radius);
                                assert!(
                                    fish_disc_overlap(&a, &moved, clearance),
                                    "{disc:?} {slack}"
                                );
                            }
                            Bound::Unsure => decided -= 1,
                        }
                        decided += 1;
                        total += 1;
                    }
                }
            }
        }
        // The bounds must also be useful: nearly every pair is decided without polygons.
        assert!(decided * 100 > total * 95, "{decided} of {total}");
    }
}
