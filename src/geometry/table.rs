//! The table top: a convex polygon in the table frame.

use super::{Point, Vector};

/// Why a polygon cannot be a table top.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TableError {
    #[error("a table needs at least 3 corners, got {0}")]
    TooFewCorners(usize),
    #[error("table corner {0} is not a finite number")]
    NotFinite(usize),
    #[error("the table polygon is not convex (at corner {0})")]
    NotConvex(usize),
    #[error("the table polygon has no area")]
    Degenerate,
}

/// A convex table top, corners counter-clockwise seen from above.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    corners: Vec<Point>,
}

fn cross(a: Vector, b: Vector) -> f64 {
    a.x * b.y - a.y * b.x
}

impl Table {
    /// A table from corners as the JSON files write them (`[[x, y], ...]`, mm).
    pub fn from_corners(corners: &[[f64; 2]]) -> Result<Table, TableError> {
        Table::new(corners.iter().map(|&[x, y]| Point::new(x, y)).collect())
    }

    /// Validates a convex polygon; a clockwise one is reversed to counter-clockwise.
    /// Collinear corners are allowed; reflex ones are not.
    pub fn new(mut corners: Vec<Point>) -> Result<Table, TableError> {
        let n = corners.len();
        if n < 3 {
            return Err(TableError::TooFewCorners(n));
        }
        if let Some(i) = corners
            .iter()
            .position(|p| !(p.x.is_finite() && p.y.is_finite()))
        {
            return Err(TableError::NotFinite(i));
        }
        let area2: f64 = (0..n)
            .map(|i| cross(corners[i].coords, corners[(i + 1) % n].coords))
            .sum();
        if area2.abs() < 1e-9 {
            return Err(TableError::Degenerate);
        }
        let reversed = area2 < 0.0;
        if reversed {
            corners.reverse();
        }
        let scale = area2.abs().sqrt();
        for i in 0..n {
            let a = corners[i];
            let b = corners[(i + 1) % n];
            let c = corners[(i + 2) % n];
            if cross(b - a, c - b) < -1e-9 * scale * scale {
                let at = (i + 1) % n;
                return Err(TableError::NotConvex(if reversed {
                    n - 1 - at
                } else {
                    at
                }));
            }
        }
        Ok(Table { corners })
    }

    /// The usual rectangular table `[0, w] x [0, h]`.
    pub fn rectangle(width: f64, height: f64) -> Table {
        Table {
            corners: vec![
                Point::new(0.0, 0.0),
                Point::new(width, 0.0),
                Point::new(width, height),
                Point::new(0.0, height),
            ],
        }
    }

    pub fn corners(&self) -> &[Point] {
        &self.corners
    }

    /// The corners as `[x, y]` pairs (mm), as the files keep them ([`Table::from_corners`]
    /// reads them back).
    pub fn corners_mm(&self) -> Vec<[f64; 2]> {
        self.corners.iter().map(|p| [p.x, p.y]).collect()
    }

    /// The edges as (start, end) pairs, counter-clockwise.
    pub fn edges(&self) -> impl Iterator<Item = (Point, Point)> + '_ {
        let n = self.corners.len();
        (0..n).map(move |i| (self.corners[i], self.corners[(i + 1) % n]))
    }

    /// Axis-aligned bounds: (min, max).
    pub fn bounds(&self) -> (Point, Point) {
        let mut lo = self.corners[0];
        let mut hi = self.corners[0];
        for p in &self.corners {
            lo = Point::new(lo.x.min(p.x), lo.y.min(p.y));
            hi = Point::new(hi.x.max(p.x), hi.y.max(p.y));
        }
        (lo, hi)
    }

    /// Distance from `p` to the nearest edge: positive inside, negative outside
    /// (outside, the exact distance to the polygon).
    pub fn signed_distance(&self, p: Point) -> f64 {
        let mut inside_margin = f64::INFINITY;
        let mut outside = false;
        for (a, b) in self.edges() {
            let e = b - a;
            let len = e.norm();
            // Left of a CCW edge is inside.
            let d = cross(e, p - a) / len;
            if d < 0.0 {
                outside = true;
            }
            inside_margin = inside_margin.min(d);
        }
        if outside {
            -(p - self.nearest_edge_point(p)).norm()
        } else {
            inside_margin
        }
    }

    pub fn contains(&self, p: Point) -> bool {
        self.signed_distance(p) >= 0.0
    }

    /// The point of the table's boundary nearest to `p`.
    pub fn nearest_edge_point(&self, p: Point) -> Point {
        let mut best = self.corners[0];
        let mut best_d = f64::INFINITY;
        for (a, b) in self.edges() {
            let q = closest_on_segment(p, a, b);
            let d = (p - q).norm_squared();
            if d < best_d {
                best_d = d;
                best = q;
            }
        }
        best
    }

    /// Whether every point of a polygon lies on the table (a convex table holds a
    /// polygon exactly when it holds its vertices).
    pub fn contains_polygon(&self, pts: &[Point]) -> bool {
        pts.iter().all(|p| self.contains(*p))
    }

    /// The smallest signed distance of a polygon's vertices to the edge: how far the
    /// polygon stays inside (negative: it overhangs by that much).
    pub fn polygon_margin(&self, pts: &[Point]) -> f64 {
        pts.iter()
            .map(|p| self.signed_distance(*p))
            .fold(f64::INFINITY, f64::min)
    }

    /// The area of the disc (`c`, `r`) that lies over the table, mm².
    pub fn disc_area_on_table(&self, c: Point, r: f64) -> f64 {
        // Clip a fine polygonal disc by the convex table (Sutherland–Hodgman).
        const N: usize = 128;
        let mut poly: Vec<Point> = (0..N)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / N as f64;
                c + Vector::new(r * a.cos(), r * a.sin())
            })
            .collect();
        for (a, b) in self.edges() {
            let e = b - a;
            poly = clip_half_plane(&poly, |p| cross(e, p - a));
            if poly.is_empty() {
                return 0.0;
            }
        }
        polygon_area(&poly).abs()
    }

    /// The table shrunk by `margin` on every side: the points at least `margin` from
    /// the edge, as a convex polygon (empty when nothing is that far in).
    pub fn inset(&self, margin: f64) -> Vec<Point> {
        let mut poly = self.corners.clone();
        for (a, b) in self.edges() {
            let e = b - a;
            let n = Vector::new(-e.y, e.x) / e.norm();
            poly = clip_half_plane(&poly, |p| n.dot(&(p - a)) - margin);
            if poly.is_empty() {
                break;
            }
        }
        poly
    }

    /// Whether a disc of radius `r` fits wholly on the table with its centre within
    /// `reach` of `c` (used for "the coin fits on the part of the table inside the hole").
    pub fn disc_fits_near(&self, c: Point, reach: f64, r: f64) -> bool {
        if reach < 0.0 {
            return false;
        }
        let inset = self.inset(r);
        match inset.len() {
            0 => false,
            _ => distance_to_convex(&inset, c) <= reach + 1e-9,
        }
    }
}

/// A place on the table boundary, found by walking the perimeter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgePlace {
    /// The boundary point.
    pub point: Point,
    /// Unit direction of the edge there (counter-clockwise).
    pub tangent: Vector,
    /// Unit normal pointing into the table.
    pub inward: Vector,
    /// Which edge (index of its start corner).
    pub edge: usize,
}

impl Table {
    /// The length of the boundary, mm.
    pub fn perimeter(&self) -> f64 {
        self.edges().map(|(a, b)| (b - a).norm()).sum()
    }

    /// The arc length (mm, counter-clockwise from corner 0) of the boundary point
    /// nearest to `p`: where along the edge a point "is".
    pub fn perimeter_position(&self, p: Point) -> f64 {
        let mut best = (f64::INFINITY, 0.0);
        let mut start = 0.0;
        for (a, b) in self.edges() {
            let q = closest_on_segment(p, a, b);
            let d = (p - q).norm_squared();
            if d < best.0 {
                best = (d, start + (q - a).norm());
            }
            start += (b - a).norm();
        }
        best.1
    }

    /// The boundary place at arc length `s` (taken modulo the perimeter).
    pub fn place_at(&self, s: f64) -> EdgePlace {
        let total = self.perimeter();
        let mut s = s.rem_euclid(total);
        let n = self.corners.len();
        for i in 0..n {
            let (a, b) = (self.corners[i], self.corners[(i + 1) % n]);
            let len = (b - a).norm();
            if len <= 0.0 {
                continue;
            }
            if s <= len || i == n - 1 {
                let tangent = (b - a) / len;
                return EdgePlace {
                    point: a + tangent * s.min(len),
                    tangent,
                    inward: Vector::new(-tangent.y, tangent.x),
                    edge: i,
                };
            }
            s -= len;
        }
        // Unreachable for a valid table (it has area); keep a sane answer anyway.
        EdgePlace {
            point: self.corners[0],
            tangent: Vector::new(1.0, 0.0),
            inward: Vector::new(0.0, 1.0),
            edge: 0,
        }
    }

    /// The shortest distance along the boundary between two arc lengths.
    pub fn perimeter_distance(&self, s: f64, t: f64) -> f64 {
        let total = self.perimeter();
        let d = (s - t).rem_euclid(total);
        d.min(total - d)
    }

    /// The point of the table shrunk by `margin` nearest to `p` (`p` itself when it is
    /// that far inside); `None` when nothing is `margin` from the edge.
    pub fn nearest_point_inset(&self, p: Point, margin: f64) -> Option<Point> {
        let inset = self.inset(margin);
        nearest_in_convex(&inset, p)
    }
}

/// The point of a convex polygon (counter-clockwise; a point or segment also works)
/// nearest to `p`; `None` for an empty polygon.
pub fn nearest_in_convex(poly: &[Point], p: Point) -> Option<Point> {
    let n = poly.len();
    if n == 0 {
        return None;
    }
    if n >= 3 && (0..n).all(|i| cross(poly[(i + 1) % n] - poly[i], p - poly[i]) >= 0.0) {
        return Some(p);
    }
    let mut best = poly[0];
    let mut best_d = f64::INFINITY;
    for i in 0..n {
        let q = closest_on_segment(p, poly[i], poly[(i + 1) % n]);
        let d = (p - q).norm_squared();
        if d < best_d {
            best_d = d;
            best = q;
        }
    }
    Some(best)
}

/// Keeps the part of a convex polygon where `side(p) >= 0` (Sutherland–Hodgman).
fn clip_half_plane(poly: &[Point], side: impl Fn(Point) -> f64) -> Vec<Point> {
    let mut out = Vec::with_capacity(poly.len() + 2);
    for i in 0..poly.len() {
        let p = poly[i];
        let q = poly[(i + 1) % poly.len()];
        let (sp, sq) = (side(p), side(q));
        if sp >= 0.0 {
            out.push(p);
        }
        if (sp >= 0.0) != (sq >= 0.0) {
            let t = sp / (sp - sq);
            out.push(p + (q - p) * t);
        }
    }
    out
}

/// Distance from `p` to a convex polygon (counter-clockwise; 0 inside). A single
/// point or a segment is handled too.
pub fn distance_to_convex(poly: &[Point], p: Point) -> f64 {
    let n = poly.len();
    let inside = n >= 3 && (0..n).all(|i| cross(poly[(i + 1) % n] - poly[i], p - poly[i]) >= 0.0);
    if inside {
        return 0.0;
    }
    (0..n)
        .map(|i| (p - closest_on_segment(p, poly[i], poly[(i + 1) % n])).norm())
        .fold(f64::INFINITY, f64::min)
}

/// The closest point to `p` on segment `ab`.
pub fn closest_on_segment(p: Point, a: Point, b: Point) -> Point {
    let ab = b - a;
    let len2 = ab.norm_squared();
    if len2 == 0.0 {
        return a;
    }
    let t = ((p - a).dot(&ab) / len2).clamp(0.0, 1.0);
    a + ab * t
}

/// Signed area (positive for counter-clockwise).
pub fn polygon_area(pts: &[Point]) -> f64 {
    let n = pts.len();
    (0..n)
        .map(|i| cross(pts[i].coords, pts[(i + 1) % n].coords))
        .sum::<f64>()
        / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_convex_and_accepts_clockwise() {
        let dart = vec![
            Point::new(0.0, 0.0),
            Point::new(10.0, 5.0),
            Point::new(0.0, 10.0),
            Point::new(3.0, 5.0),
        ];
        assert!(matches!(Table::new(dart), Err(TableError::NotConvex(_))));
        let cw = vec![
            Point::new(0.0, 0.0),
            Point::new(0.0, 10.0),
            Point::new(10.0, 10.0),
            Point::new(10.0, 0.0),
        ];
        let t = Table::new(cw).unwrap();
        assert!(polygon_area(t.corners()) > 0.0);
        assert!(matches!(
            Table::new(vec![Point::new(0.0, 0.0), Point::new(1.0, 1.0)]),
            Err(TableError::TooFewCorners(2))
        ));
    }

    #[test]
    fn signed_distance_inside_and_outside() {
        let t = Table::rectangle(1000.0, 700.0);
        assert!((t.signed_distance(Point::new(10.0, 350.0)) - 10.0).abs() < 1e-12);
        assert!((t.signed_distance(Point::new(-3.0, 350.0)) + 3.0).abs() < 1e-12);
        assert!((t.signed_distance(Point::new(1003.0, 704.0)) + 5.0).abs() < 1e-12);
    }

    #[test]
    fn disc_area_on_table_halves_at_the_edge() {
        let t = Table::rectangle(1000.0, 700.0);
        let full = std::f64::consts::PI * 100.0;
        let inside = t.disc_area_on_table(Point::new(500.0, 350.0), 10.0);
        let half = t.disc_area_on_table(Point::new(0.0, 350.0), 10.0);
        assert!((inside - full).abs() / full < 0.01);
        assert!((half - full / 2.0).abs() / full < 0.01);
        assert_eq!(t.disc_area_on_table(Point::new(-50.0, 350.0), 10.0), 0.0);
    }

    #[test]
    fn disc_fits_near_the_edge_only_with_room() {
        let t = Table::rectangle(1000.0, 700.0);
        // Hole of radius 10 centred 2 mm inside the edge: a 7.5 mm coin needs its centre
        // 7.5 mm in, the hole lets it sit at most 2.5 mm from the hole centre: 4.5 < 7.5.
        assert!(!t.disc_fits_near(Point::new(2.0, 350.0), 2.5, 7.5));
        assert!(t.disc_fits_near(Point::new(5.0, 350.0), 2.5, 7.5));
        assert!(t.disc_fits_near(Point::new(500.0, 350.0), 2.5, 7.5));
    }

    #[test]
    fn perimeter_walk_round_trips() {
        let t = Table::rectangle(1000.0, 700.0);
        assert!((t.perimeter() - 3400.0).abs() < 1e-9);
        let s = t.perimeter_position(Point::new(1003.0, 312.5));
        assert!((s - 1312.5).abs() < 1e-9);
        let place = t.place_at(s);
        assert!((place.point - Point::new(1000.0, 312.5)).norm() < 1e-9);
        assert!((place.inward - Vector::new(-1.0, 0.0)).norm() < 1e-12);
        assert!((t.perimeter_distance(10.0, 3390.0) - 20.0).abs() < 1e-9);
        let q = t.nearest_point_inset(Point::new(2.0, 350.0), 7.5).unwrap();
        assert!((q - Point::new(7.5, 350.0)).norm() < 1e-9);
    }
}
