//! Fish: the tag's template (moments, sample points and rasters of the known
//! outline), and a player's tag found in its colour coverage: blobs, moments, starts,
//! the agreement of a placed footprint with the coverage, its local refinement, the
//! wide search for a partly hidden tag, the hole, the track kept when the
//! evidence cannot tell poses apart, and the angle read from the outline's edge.

use super::coverage::unknown_bits;
use super::look::{dist2, DARKEST_COLOURED};
use super::raster::{bilinear, label_blobs, Blob};
use super::{Detector, FishSighting, TopGrid};
use crate::geometry::{FishFootprint, Point, Vector};
use crate::model::Pose;
use nalgebra::Rotation2;

/// An agreement (0..2) that a locally refined pose must reach to be taken without
/// the wide search: most of the material covered, the hole clear.
pub(super) const GOOD_FIT: f64 = 1.6;
/// While things move, a best agreement (0..2) below this means a tag smeared past
/// recognition: placed by its colour's centroid instead.
const SMEARED_FIT: f64 = 1.4;

/// Fits closer than this (of 0..2) cannot tell two poses apart: a pixel of blur or
/// parallax along a tag's outline moves the agreement by about as much.
const AMBIGUOUS_FIT: f64 = 0.1;

/// A tag beside a hand is kept where it settled when at least this share of the
/// colour seen lies on it there (see `Detector::kept_under_hand`).
const KEPT_UNDER_HAND: f64 = 0.9;

/// A tag read within this (mm, as [`moved_by`]) of where it settled has not moved
/// since: readings of a tag at rest scatter by a few tenths.
const AT_REST_MM: f64 = 2.0;

/// The most of a tag's colour one tag can show, in tag areas: a tag smeared over
/// about its width in an exposure, with the blur at its ends.
const SMEARED_AREA: f64 = 2.0;

/// How many of the wide search's best grid places are refined.
const WIDE_REFINED: usize = 6;
/// A pixel in a tag's hole this much darker than the tag's material (two of
/// [`super::look::Look::distance`]'s brightness units) is what shows through the
/// hole, whatever its chroma.
const THROUGH_HOLE_DARKER: f32 = 0.74;

/// Spacing (mm) of the outline samples [`Detector::angle_from_outline`] reads.
const EDGE_SAMPLE_MM: f64 = 1.0;
/// How far (mm) either side of where the outline is expected the coverage is read
/// across it: more than a region fit is off, less than the narrowest material
/// between a tag's outline and its hole (3 mm on the other renderer's tags).
const EDGE_REACH_MM: f64 = 2.5;
/// The step (mm) of the profiles read across the outline: a quarter of the view's
/// millimetre pixel.
const EDGE_PROFILE_STEP_MM: f64 = 0.25;
/// An edge read this far (mm) from where the fit puts it counts fully; farther ones
/// count less (Huber): a coin, a printed number or a highlight at the edge.
const EDGE_HUBER_MM: f64 = 0.5;
/// The least fall of coverage (of 0..1) across the outline that is read as the
/// tag's edge.
const EDGE_CONTRAST: f64 = 0.5;
/// Gauss-Newton steps of the outline fit (it settles in two or three).
const EDGE_ITERATIONS: usize = 5;
/// The outline fit is refused when it moves the tag more than this (mm, as
/// [`moved_by`]): a region fit is never that far off, and a fit that far is led
/// away by something at the edge.
const EDGE_MOST_MM: f64 = 3.0;

/// Moments of the tag material in the fish frame.
#[derive(Debug, Clone)]
pub(super) struct Template {
    pub(super) area: f64,
    centroid: Vector,
    /// Angle of the major axis in the fish frame.
    axis: f64,
    /// Major/minor second moment ratio: near 1, the axis says nothing.
    pub(super) elongation: f64,
    /// How far the material reaches from its centroid, mm.
    pub(super) centroid_reach: f64,
    /// Sample points on the material and in the hole (fish frame), for agreement.
    material: Vec<Vector>,
    hole: Vec<Vector>,
    /// Sample points on the material within a few millimetres of the hole's edge.
    rim: Vec<Vector>,
    /// Points about a millimetre apart along the outline, each with its outward
    /// normal (fish frame), for [`Detector::angle_from_outline`].
    edge: Vec<(Vector, Vector)>,
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
    pub(super) fn on_exact_material(&self, p: Vector) -> bool {
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
    pub(super) fn new(footprint: &FishFootprint) -> Template {
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
        let edge = outline_samples(footprint.outline(), EDGE_SAMPLE_MM);
        Template {
            area,
            centroid,
            axis,
            elongation,
            centroid_reach,
            material: thin(&on, 400),
            hole,
            rim,
            edge,
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

/// Points about `spacing` apart along a counter-clockwise outline, each with its
/// outward normal.
fn outline_samples(outline: &[Point], spacing: f64) -> Vec<(Vector, Vector)> {
    let mut out = Vec::new();
    for (i, a) in outline.iter().enumerate() {
        let b = outline[(i + 1) % outline.len()];
        let d = b - a;
        let len = d.norm();
        if !len.is_finite() || len <= 1e-9 {
            continue;
        }
        let normal = Vector::new(d.y, -d.x) / len;
        let n = (len / spacing).ceil().max(1.0) as usize;
        for k in 0..n {
            let t = (k as f64 + 0.5) / n as f64;
            out.push((a.coords + d * t, normal));
        }
    }
    out
}

/// Where, along a profile of coverage read from inside a tag outward (samples
/// `step` apart), the tag's colour ends: a step from the inside's level (the first
/// quarter's mean) to the outside's (the last quarter's) at `x` leaves the profile
/// at the inside's level for `x` of its length, so the edge lies at the area under
/// the profile scaled between the two levels. Blur spreads the step evenly either
/// side, which leaves the area the same. `None` when the two levels are too close
/// to tell an edge (the colour does not end there: a hand, a printed number).
pub(super) fn edge_in_profile(profile: &[f64], step: f64) -> Option<f64> {
    // A quarter of the profile's length, both ends' samples counted.
    let quarter = (profile.len().saturating_sub(1)) / 4 + 1;
    if profile.len() < 2 * quarter + 1 {
        return None;
    }
    let mean = |p: &[f64]| p.iter().sum::<f64>() / p.len() as f64;
    let inside = mean(&profile[..quarter]);
    let outside = mean(&profile[profile.len() - quarter..]);
    let contrast = inside - outside;
    if contrast.is_nan() || contrast < EDGE_CONTRAST {
        return None;
    }
    let level = |x: f64| ((x - outside) / contrast).clamp(0.0, 1.0);
    Some(
        profile
            .windows(2)
            .map(|ab| 0.5 * (level(ab[0]) + level(ab[1])) * step)
            .sum(),
    )
}

/// A point of a tag's colour blob: where (table mm), its coverage weight (mm²), and
/// whether it counts against a pose that does not cover it: all but the scenery's
/// own colour beyond the table's edge ([`super::coverage::EdgeScenery`]).
type BlobPoint = (Vector, f64, bool);

/// Area, centroid and covariance of weighted points.
pub(super) fn moments(
    points: impl Iterator<Item = (Vector, f64)>,
) -> (f64, Vector, nalgebra::Matrix2<f64>) {
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
pub(super) fn axis_of(cov: &nalgebra::Matrix2<f64>) -> (f64, f64) {
    let (a, b, c) = (cov[(0, 0)], cov[(0, 1)], cov[(1, 1)]);
    let angle = 0.5 * (2.0 * b).atan2(a - c);
    let tr = a + c;
    let det = a * c - b * b;
    let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
    let (l1, l2) = (tr / 2.0 + disc, tr / 2.0 - disc);
    (angle, if l2 > 1e-12 { l1 / l2 } else { f64::INFINITY })
}

impl Detector {
    pub(super) fn detect_fish(
        &mut self,
        g: &TopGrid,
        player: usize,
        prior: Option<Pose>,
        settled: Option<Pose>,
        expected_angle: Option<f64>,
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
        // A blob mostly of scenery of the player's colour beyond the edge is measured
        // by its other pixels only: a floor of a tag's hue outgrows the tag (sweep-030:
        // a red tag at rest read on the red-brown floor past the far edge, then "lost"
        // there). A tag hanging over such scenery keeps its whole size, and the blob
        // is still seen when it is the only one: counted by its part on the table
        // alone, match-2p's blue tag tipping over a bluish floor went unseen in its
        // last frames, and its exit was placed 120 mm off.
        let tag_pixels = |b: &Blob| {
            let on_table = |u: usize, v: usize| self.on_table[v * g.width + u];
            // The table is convex: a box with its corners on it lies on it.
            if [(b.u0, b.v0), (b.u1, b.v0), (b.u0, b.v1), (b.u1, b.v1)]
                .iter()
                .all(|&(u, v)| on_table(u, v))
            {
                return b.count;
            }
            let labels = &self.labels;
            let own = (b.v0..=b.v1)
                .flat_map(|v| (b.u0..=b.u1).map(move |u| (u, v)))
                .filter(|&(u, v)| {
                    let i = v * g.width + u;
                    labels[i] == b.label
                        && (self.on_table[i] || !self.edge_scenery.at(u, v, player))
                })
                .count();
            if 2 * own < b.count {
                own
            } else {
                b.count
            }
        };
        let best = blobs
            .iter()
            .filter(|b| b.count >= min_px.max(4))
            .map(|b| (tag_pixels(b), b))
            .max_by_key(|(n, _)| *n)
            .map(|(_, b)| b)?;
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
        // Beyond the table's edge its side face or the floor may be of a tag's colour
        // (a red tag by a maroon side face) and join the tag's blob: which pixels lie
        // on the table top, and which count against a pose that does not cover them.
        let mut on_top = Vec::new();
        let mut counts_against = Vec::new();
        // Which points belong to the largest blob itself (not a blob beside it).
        let mut in_largest = Vec::new();
        let largest = best.label;
        let several = keep.len() > 1;
        for v in v0..=v1 {
            for u in u0..=u1 {
                let w = coverage[v * g.width + u];
                if w > 0.0 && near_kept(u, v) {
                    in_largest.push(labels[v * g.width + u] == largest);
                    let top = self.on_table[v * g.width + u];
                    on_top.push(top);
                    counts_against.push(top || !self.edge_scenery.at(u, v, player));
                    pts.push((
                        g.table_from_px(u as f64, v as f64).coords,
                        w as f64 * px_area,
                    ));
                }
            }
        }
        // Scenery of the player's colour beyond the edge may be the tag's overhang or
        // the floor. Together with what can only be the tag, more of it than a tag's
        // area (smeared, twice that) is not all tag, and which part is tag it cannot
        // say: where the tag is, how much of it shows and which way it lies are then
        // read from the rest. A red-brown floor learned as scenery of red outweighed
        // a red tag at rest by the far edge (seed 777's sweep-002: 2,200 pixels of tag
        // in a blob of 30,000; its colour's centroid put the tag 285 mm along the
        // edge, and the track followed).
        let scenery_may_be_tag =
            pts.iter().map(|p| p.1).sum::<f64>() <= SMEARED_AREA * self.template.area;
        let (area, centroid, cov) = moments(
            pts.iter()
                .zip(&counts_against)
                .filter(|(_, against)| **against || scenery_may_be_tag)
                .map(|(p, _)| *p),
        );
        let visible_fraction = area / self.template.area;
        // Blob points (thinned) for the "explained" term of the agreement.
        let step = (pts.len() / 300).max(1);
        let blob: Vec<BlobPoint> = pts
            .iter()
            .zip(&counts_against)
            .step_by(step)
            .map(|(&(p, w), &against)| (p, w, against))
            .collect();
        if visible_fraction < self.config.min_visible_fraction {
            // Too little seen to place a tag anew; but a tag a hand lies over (unseen:
            // see below) is still where it settled if all of its colour that shows
            // lies on it there. A tag that moved shows its colour off its old place.
            let kept = self.kept_under_hand(g, player, prior, settled, &blob, quick)?;
            return Some(FishSighting {
                player,
                pose: kept,
                visible_fraction,
                fit: 0.0,
                exposure_share: None,
            });
        }
        let (axis_b, _) = axis_of(&cov);
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
        if elongated && several {
            // The blobs beside the largest may be no part of the tag: the blend at
            // another tag's edge can read as this player's colour (blue on brown wood
            // reads purple), and their moments then start every fit askew (sweep-002:
            // a purple tag read 20 mm and 35 degrees off by a blue tag's rim). The
            // largest blob alone starts fits too.
            let own = pts
                .iter()
                .zip(&in_largest)
                .filter(|(_, own)| **own)
                .map(|(p, _)| *p);
            starts.extend(self.starts_from_part(own).into_iter().flatten());
        }
        let mut edge_starts = false;
        if elongated && on_top.contains(&false) {
            // The part on the table top alone starts fits too, so that scenery of a
            // tag's colour beyond the edge cannot decide where they begin; a tag that
            // truly overhangs the edge still fits its whole blob better.
            let top_part = pts
                .iter()
                .zip(&on_top)
                .filter(|(_, top)| **top)
                .map(|(p, _)| *p);
            if let Some(two) = self.starts_from_part(top_part) {
                starts.extend(two);
                edge_starts = true;
            }
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
            // are weighed against its track only at rest, below). Where the blob
            // reaches beyond the edge the readings are weighed against each other.
            if (fully_seen || quick) && fit >= GOOD_FIT && !edge_starts {
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
            let thin_blob: Vec<BlobPoint> = blob.iter().step_by(4).copied().collect();
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
        // Blur softens a moving tag's hole, and its two ends then fit about alike:
        // the first good fit may be the tag read end for end from the angle it is
        // expected at (sweep 777's sweep-002: fit 0.84 of 1, turned 178 degrees, its
        // hole 68 mm off). Read the other way round too, it is taken unless it fits
        // clearly worse. Only a tag wholly seen: a partly hidden one is weighed
        // against its track below, and a hand beside a spinning tag can leave one
        // end read wrong for frames (seed 531046's sweep-035: choosing by the
        // expected angle then kept it wrong for eight frames, not three).
        let expected_angle = expected_angle.filter(|_| prior.is_some());
        if let Some(e) =
            expected_angle.filter(|e| quick && fully_seen && end_for_end(best_pose.angle(), *e))
        {
            let start = at_centroid(best_pose.angle() + std::f64::consts::PI);
            let fit = self.agreement(g, player, &start, &blob, quick);
            let (pose, fit) = self.refine(g, player, start, fit, &blob, quick);
            if fit >= best_fit - AMBIGUOUS_FIT && !end_for_end(pose.angle(), e) {
                (best_fit, best_pose) = (fit, pose);
            }
            candidates.push((fit, pose));
        }
        // What is seen of a partly hidden tag may fit a pose that breaks its track as
        // well as, or a little better than, one that continues it (another tag or a
        // hand over the part that tells them apart): keep the track's unless the
        // evidence clearly says otherwise.
        // Not while things move (blur leaves too little to tell readings apart, and the
        // prior is a frame's travel old), unless a hand lies beside the tag (below).
        // Beside: within a tag's length of the tag's reach (the part of a hand over
        // the tag is what goes unseen, so what is seen of it ends short of the tag).
        // At rest: not moved since it settled. A tag in flight has its own smear
        // beside it, odd enough to read as hidden, and its prior is a frame's travel
        // old.
        let at_rest = |p: &Pose| {
            settled.is_some_and(|s| moved_by(&s, p, self.footprint.reach()) < AT_REST_MM)
        };
        let hand_beside = prior.is_some_and(|p| {
            !fully_seen
                && at_rest(&p)
                && self.hidden_within(g, p.point(), 2.0 * self.footprint.reach())
        });
        let mut smear_possible = quick;
        if let Some(p) = prior.filter(|_| !fully_seen && (!quick || hand_beside)) {
            // The prior itself is a reading too: a hand passing over a tag at rest
            // leaves too little of it seen to pin it anew.
            candidates.push((self.agreement(g, player, &p, &blob, quick), p));
            let moved = |c: &Pose| moved_by(&p, c, self.footprint.reach());
            // A hand beside the tag may lie over it unseen: skin can share the table's
            // colour, and where the tag lay the bare table was never seen, so nothing
            // there shows a change. The material under it then reads uncovered, which
            // favours poses that slide the tag out from under the hand. What a hand
            // cannot fake is the tag's colour: where it shows, the tag is. With a hand
            // beside the tag, readings are weighed by the colour they explain and their
            // hole alone. A hand moving near a tag at rest is not the tag moving: this
            // holds while things move too (the hand is what moves, `quick` says only
            // that something does), and a tag truly set off shows its colour off the
            // prior's material, which the prior then fails to explain.
            let score: Vec<f64> = if hand_beside {
                candidates
                    .iter()
                    .map(|(_, c)| {
                        self.agreement_terms(g, player, c, &blob, quick, true)
                            .without_material()
                    })
                    .collect()
            } else {
                candidates.iter().map(|c| c.0).collect()
            };
            let best_score = score.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if let Some((_, &(fit, pose))) = score
                .iter()
                .zip(&candidates)
                .filter(|(s, _)| **s >= best_score - AMBIGUOUS_FIT)
                .min_by(|a, b| moved(&a.1 .1).total_cmp(&moved(&b.1 .1)))
            {
                // A tag kept where it was is no smear to place by its colour.
                smear_possible &= pose != p;
                (best_fit, best_pose) = (fit, pose);
            }
        }
        // While the colour seen lies on the tag where it settled, a hand beside it
        // has not moved it: with little of a tag seen many places explain its
        // colour, and the one the comparison above picks may be any of them (and,
        // kept under the hand, stay there).
        let kept = (!fully_seen)
            .then(|| self.kept_under_hand(g, player, prior, settled, &blob, quick))
            .flatten();
        if let Some(kept) = kept {
            (best_fit, best_pose) = (self.agreement(g, player, &kept, &blob, quick), kept);
            smear_possible = false;
        }
        let smeared = smear_possible && best_fit < SMEARED_FIT;
        if smeared {
            // Smeared past recognition (a tag moving its own length in an exposure):
            // no placement of the sharp outline explains the smear, and the best one
            // may sit anywhere along it. The colour's centroid is still the tag's
            // centroid mid-exposure, whatever the tag's shape. Nor does the smear
            // show which end of its length the hole is at (the hole is smeared
            // shut). A reading nearly end for end from the angle the tag is expected
            // at is the other end read (`end_for_end`), and read the wrong way round
            // the hole lands a tag's length off (sweep-037: 53 mm, and a switch).
            let theta =
                expected_angle.map_or(best_pose.angle(), |e| same_end_as(best_pose.angle(), e));
            best_pose = at_centroid(theta);
        }
        // A tag placed by the region fit is turned as its outline says (not one
        // smeared past recognition, nor one kept under a hand where it settled).
        if !smeared && kept.is_none() {
            if let Some(theta) = self.angle_from_outline(g, player, &best_pose) {
                best_pose = Pose::fish(best_pose.x, best_pose.y, theta);
            }
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

    /// Fit starts from a part of a tag's blob (weighted points): the tag laid along the
    /// part's axis, either way round, its centroid on the part's; none when the part
    /// is too small to say where the tag lies.
    fn starts_from_part(&self, part: impl Iterator<Item = (Vector, f64)>) -> Option<[Pose; 2]> {
        let (area, centroid, cov) = moments(part);
        if area <= self.config.min_visible_fraction * self.template.area {
            return None;
        }
        let base = axis_of(&cov).0 - self.template.axis;
        Some([base, base + std::f64::consts::PI].map(|theta| {
            let c = Rotation2::new(theta) * self.template.centroid;
            Pose::fish(centroid.x - c.x, centroid.y - c.y, theta)
        }))
    }

    /// Where a tag is kept, a hand beside it, whatever the fits say: where it settled
    /// (or, never seen settled, where it was last seen) when at least
    /// [`KEPT_UNDER_HAND`] of the colour seen lies on it there.
    fn kept_under_hand(
        &self,
        g: &TopGrid,
        player: usize,
        prior: Option<Pose>,
        settled: Option<Pose>,
        blob: &[BlobPoint],
        quick: bool,
    ) -> Option<Pose> {
        settled.or(prior).filter(|at| {
            self.hidden_within(g, at.point(), 2.0 * self.footprint.reach())
                && self
                    .agreement_terms(g, player, at, blob, quick, true)
                    .colour_explained
                    >= KEPT_UNDER_HAND
        })
    }

    /// Whether an occluder (a hand) hides some pixel within `radius` mm of `at`.
    fn hidden_within(&self, g: &TopGrid, at: Point, radius: f64) -> bool {
        if !self.any_hidden {
            return false;
        }
        let (cu, cv) = g.px_from_table(at);
        let r = radius / g.mm_per_px;
        let clamp = |x: f64, len: usize| x.max(0.0).min(len as f64 - 1.0) as usize;
        let (u0, u1) = (clamp(cu - r, g.width), clamp(cu + r, g.width));
        let (v0, v1) = (clamp(cv - r, g.height), clamp(cv + r, g.height));
        (v0..=v1).any(|v| {
            (u0..=u1).any(|u| {
                let (du, dv) = (u as f64 - cu, v as f64 - cv);
                du * du + dv * dv <= r * r && self.hidden[v * g.width + u] > 0.5
            })
        })
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
        // The mean coverage over the samples about `t` (a sample darker than `darkest`
        // uncovered: see `THROUGH_HOLE_DARKER`), and the grey of what covers them.
        let mean_over = |t: Vector, samples: &[Vector], darkest: f32| -> Option<(f64, f32)> {
            let (mut sum, mut seen, mut lit) = (0.0f32, 0usize, 0.0f32);
            for p in samples {
                let (u, v) = g.px_from_table(Point::from(t + p));
                if !(u >= 0.0 && v >= 0.0 && u < w as f64 - 0.5 && v < h as f64 - 0.5) {
                    continue;
                }
                let i = (v + 0.5) as usize * w + (u + 0.5) as usize;
                if self.blocked[i] & unknown != 0 {
                    continue;
                }
                if self.grey[i] >= darkest {
                    sum += coverage[i];
                    lit += coverage[i] * self.grey[i];
                }
                seen += 1;
            }
            (2 * seen >= samples.len()).then(|| (sum as f64 / seen as f64, lit / sum.max(1e-6)))
        };
        let step = g.mm_per_px.max(1.0);
        let mut best: Option<(f64, Point)> = None;
        let mut y = lo.y;
        while y <= hi.y {
            let mut x = lo.x;
            while x <= hi.x {
                let t = Vector::new(x, y);
                let rim = mean_over(t, &self.template.rim, 0.0);
                let inside = rim.and_then(|(_, lit)| {
                    mean_over(t, &self.template.coarse_hole, lit * THROUGH_HOLE_DARKER)
                });
                if let (Some((rim, _)), Some((inside, _))) = (rim, inside) {
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
        blob: &[BlobPoint],
        coarse: bool,
    ) -> f64 {
        self.agreement_terms(g, player, pose, blob, coarse, false)
            .total()
    }

    /// The terms of [`Self::agreement`] apart, for the comparisons that cannot trust
    /// all of them. Where the material is almost all hidden the material term is −∞,
    /// and the others are left out too unless `all_terms`.
    fn agreement_terms(
        &self,
        g: &TopGrid,
        player: usize,
        pose: &Pose,
        blob: &[BlobPoint],
        coarse: bool,
        all_terms: bool,
    ) -> Agreement {
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
        let grey = self.grey.as_slice();
        let chroma = self.chroma.as_slice();
        let off = self.config.chroma_off_line;
        // A coin in the hole is what a hole shows, whatever player's colour it reads
        // as (copper lies on a red or orange tag's line): clear, and seen. Counted
        // unseen (another player's colour) or covered (this player's), it made the
        // true hole with its coin fit worse than a printed number read as the hole:
        // a tag read turned about at rest (sweep-001). Not where the coins' colour
        // is near this player's: there a hole put on the tag's own material would
        // read clear too.
        let coin = self
            .coin_look
            .map(|c| c.chroma)
            .filter(|c| dist2(*c, self.players[player]) > 4.0 * off * off);
        // Whether pixel `i` shows the coins' colour (chroma within `off` of theirs).
        let coin_coloured = |i: usize, coin: [f64; 2]| {
            let c = chroma[i];
            grey[i] >= DARKEST_COLOURED && dist2([c[0] as f64, c[1] as f64], coin) < off * off
        };
        // Coverage summed over the samples (and the grey of what covers them, weighed
        // by it); a sample darker than `darkest` counts as uncovered, and one of the
        // coins' colour too when `coin_clear`.
        let mean_over = |samples: &[Vector], unknown: u8, darkest: f32, coin_clear: bool| {
            let (mut sum, mut n, mut lit) = (0.0f32, 0usize, 0.0f32);
            for p in samples {
                let u = a11 * p.x + a12 * p.y + bu;
                let v = a21 * p.x + a22 * p.y + bv;
                // Written so that NaN fails the test too.
                if u >= 0.0 && v >= 0.0 && u < near_u && v < near_v {
                    // In range here: through i32, the conversion is one instruction.
                    let i = (v + 0.5) as i32 as usize * w + (u + 0.5) as i32 as usize;
                    if coin_clear && coin.is_some_and(|c| coin_coloured(i, c)) {
                        n += 1;
                        continue;
                    }
                    if blocked[i] & unknown != 0 {
                        continue;
                    }
                    if grey[i] >= darkest {
                        let c = bilinear(coverage, w, h, u, v);
                        sum += c;
                        lit += c * grey[i];
                    }
                }
                n += 1;
            }
            (sum as f64, n, lit / sum.max(1e-6))
        };
        let (material, hole) = if coarse {
            (&self.template.coarse_material, &self.template.coarse_hole)
        } else {
            (&self.template.material, &self.template.hole)
        };
        let (ms, mn, material_grey) = mean_over(material, others, 0.0, false);
        // Almost all hidden: the material says nothing.
        let material_hidden = (mn as f64) < 0.2 * material.len() as f64;
        if material_hidden && !all_terms {
            return Agreement::NOTHING;
        }
        // What shows through a hole is the table or a coin, in the tag's shade: of the
        // tag's colour only by chroma (copper and brass lie near yellow and orange
        // tags' chroma lines), never by brightness. A hole pixel clearly darker than
        // the material that covers the tag is no part of the tag.
        let (hs, hn, _) = mean_over(hole, others, material_grey * THROUGH_HOLE_DARKER, true);
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
        for &(p, wt, counts_against) in blob {
            let d = p - t;
            // The inverse rotation, written out.
            let on = self
                .template
                .on_material(Vector::new(c * d.x + s * d.y, -s * d.x + c * d.y));
            // The scenery's own colour beyond the table's edge (a side face or a floor
            // of the tag's colour) counts for a pose that lies over it, and never
            // against one that does not.
            if counts_against || on {
                total += wt;
            }
            if on {
                explained += wt;
            }
        }
        Agreement {
            material_covered: if material_hidden {
                f64::NEG_INFINITY
            } else {
                ms / mn as f64
            },
            hole_covered,
            colour_explained: explained / total.max(1e-9),
        }
    }

    fn refine(
        &self,
        g: &TopGrid,
        player: usize,
        start: Pose,
        start_fit: f64,
        blob: &[BlobPoint],
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

    /// The tag's angle read from its outline: the footprint turned so that its
    /// outline lies where the tag's colour is seen to end. The region fit maximises
    /// how much of the coverage the footprint explains, which stays flat while the
    /// footprint turns inside what shows of the tag: the side faces seen obliquely
    /// widen it, and a printed number or a highlight inside it is no colour (the
    /// other renderer's tags read 0.7° turned at rest, a median, up to 2.6°). Where
    /// the colour ends across the outline does not depend on what lies inside.
    ///
    /// Each outline sample reads the coverage across the outline (where nothing
    /// hides it, on the table top) and places the edge there ([`edge_in_profile`]);
    /// the pose, how far the side faces facing the camera show (0 to the whole
    /// thickness's parallax) and how far the colour reaches past the outline all
    /// round (the edge's spread, a bevel, a soft shadow) are fitted to those places
    /// by least squares (Huber). Only the angle is taken: where the tag stands
    /// stays the region fit's, which the side faces' and the shadow's unknown
    /// reach would pull along their directions. `None` when less than half the
    /// outline was read, or the fit would move the tag farther than a region fit
    /// is ever off.
    pub(super) fn angle_from_outline(
        &self,
        g: &TopGrid,
        player: usize,
        pose: &Pose,
    ) -> Option<f64> {
        let (w, h) = (g.width, g.height);
        let n = w * h;
        let coverage = self.coverages.get(player * n..(player + 1) * n)?;
        if self.on_table.len() != n || self.blocked.len() != n {
            return None;
        }
        let hidden = unknown_bits(player);
        let parallax = self.parallax();
        let thickness = self.fish_thickness;
        let steps = (2.0 * EDGE_REACH_MM / EDGE_PROFILE_STEP_MM).round() as usize;
        let mut profile = Vec::with_capacity(steps + 1);
        let mut p = *pose;
        // The side faces' share (0: the top face alone shows; 1: the side faces
        // facing the camera down to the table), held near a half unless the outline
        // says otherwise (seen from straight above there is nothing to tell it).
        let mut side = 0.5;
        const SIDE_PRIOR: f64 = 1.0;
        // How far (mm) the colour reaches past the outline all round.
        let mut swell = 0.0;
        for _ in 0..EDGE_ITERATIONS {
            let (s, c) = p.angle().sin_cos();
            let turn = |v: Vector| Vector::new(c * v.x - s * v.y, s * v.x + c * v.y);
            let t = Vector::new(p.x, p.y);
            let mut jtj = nalgebra::Matrix5::<f64>::zeros();
            let mut jtr = nalgebra::Vector5::<f64>::zeros();
            let mut read = 0usize;
            for &(fp, normal) in &self.template.edge {
                let arm = turn(fp);
                let q = t + arm;
                let m = turn(normal);
                // The top face appears pushed away from the camera by half the
                // thickness's parallax from the mid-height outline the pose places;
                // on the side facing the camera the side face may show down to the
                // table, as far again. `along`: the whole parallax along the normal.
                let at = Point::from(q);
                let along = m.dot(&(parallax.appear(at, thickness) - at));
                let (top, near) = (0.5 * along, (-along).max(0.0));
                let expected = top + side * near + swell;
                profile.clear();
                for k in 0..=steps {
                    let d = expected - EDGE_REACH_MM + k as f64 * EDGE_PROFILE_STEP_MM;
                    let (u, v) = g.px_from_table(Point::from(q + m * d));
                    // Written so that NaN fails the test too.
                    if !(u >= 0.0
                        && v >= 0.0
                        && u < w.saturating_sub(1) as f64
                        && v < h.saturating_sub(1) as f64)
                    {
                        break;
                    }
                    let i = (v + 0.5) as usize * w + (u + 0.5) as usize;
                    if self.blocked[i] & hidden != 0 || !self.on_table[i] {
                        break;
                    }
                    profile.push(bilinear(coverage, w, h, u, v) as f64);
                }
                let Some(at) = (profile.len() == steps + 1)
                    .then(|| edge_in_profile(&profile, EDGE_PROFILE_STEP_MM))
                    .flatten()
                else {
                    continue;
                };
                let r = at - EDGE_REACH_MM;
                let weight = EDGE_HUBER_MM / r.abs().max(EDGE_HUBER_MM);
                let j = nalgebra::Vector5::new(m.x, m.y, m.y * arm.x - m.x * arm.y, near, 1.0);
                jtj += j * j.transpose() * weight;
                jtr += j * (r * weight);
                read += 1;
            }
            if 2 * read < self.template.edge.len() {
                return None;
            }
            jtj[(3, 3)] += SIDE_PRIOR;
            jtr[3] += SIDE_PRIOR * (0.5 - side);
            let step = jtj.cholesky()?.solve(&jtr);
            if !step.iter().all(|x| x.is_finite()) {
                return None;
            }
            p = Pose::fish(p.x + step[0], p.y + step[1], p.angle() + step[2]);
            side = (side + step[3]).clamp(0.0, 1.0);
            swell += step[4];
            if step[0].hypot(step[1]) < 0.01 && step[2].abs() < 1e-4 {
                break;
            }
        }
        (moved_by(pose, &p, self.footprint.reach()) < EDGE_MOST_MM).then_some(p.angle())
    }
}

/// How well a placed tag agrees with a player's colour coverage (each term 0..1):
/// its material's unhidden samples covered, its hole covered (it should be clear),
/// and the seen colour lying on its material.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Agreement {
    material_covered: f64,
    hole_covered: f64,
    colour_explained: f64,
}

impl Agreement {
    /// Too little of the material unhidden to say anything.
    const NOTHING: Agreement = Agreement {
        material_covered: f64::NEG_INFINITY,
        hole_covered: 0.0,
        colour_explained: 0.0,
    };

    /// The agreement (0..2) the fits maximise.
    fn total(&self) -> f64 {
        self.material_covered - self.hole_covered + self.colour_explained
    }

    /// The agreement without the material term (as if all covered), for a tag a
    /// hand may cover unseen.
    fn without_material(&self) -> f64 {
        1.0 - self.hole_covered + self.colour_explained
    }
}

/// How far `to` lies from `from`: the travel of the tag's centre plus that of its
/// farthest point in the turn (`reach` from the centre).
fn moved_by(from: &Pose, to: &Pose, reach: f64) -> f64 {
    (to.point() - from.point()).norm() + reach * wrap_angle(to.angle() - from.angle()).abs()
}

/// Whether `pose` continues a track last seen at `prior`: about the same angle (a tag
/// may slide far, it does not turn over between two looks).
fn continues(prior: &Pose, pose: &Pose) -> bool {
    wrap_angle(prior.angle() - pose.angle()).abs() < 0.6
}

/// Whether a tag read at `theta` lies nearly end for end from the angle it is expected
/// at (more than three eighths of a turn from it): the expected angle follows a spin
/// the frame before showed, and a tag's spin changes far less than that in a frame.
fn end_for_end(theta: f64, expected: f64) -> bool {
    wrap_angle(theta - expected).abs() > 0.75 * std::f64::consts::PI
}

/// `theta`, or turned half a turn when it lies end for end from `expected`: an axis
/// read without telling its ends apart, laid the way the tag is expected to lie.
fn same_end_as(theta: f64, expected: f64) -> f64 {
    if end_for_end(theta, expected) {
        wrap_angle(theta + std::f64::consts::PI)
    } else {
        theta
    }
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
