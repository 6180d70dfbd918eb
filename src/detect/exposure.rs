//! Exposure: how long the shutter was open, as a share of the frame interval, read
//! from a moving tag's motion blur against its travel since the frame before
//! (`Detector::exposure_share`), and how often it is read.

use super::coverage::{unknown_bits, COVERAGE_FLOOR, OCCLUDED};
use super::{wrap_angle, Detector, TopGrid};
use crate::geometry::table::closest_on_segment;
use crate::geometry::{Point, Vector};
use crate::model::Pose;

/// Shorter travel between frames (of a tag's farthest point, mm) leaves too little
/// blur to measure the exposure by.
const MIN_BLUR_SWEEP_MM: f64 = 8.0;
/// The longest exposure tried, as a share of the frame interval: a little past the
/// whole interval, so that a shutter open throughout shows as a best fit inside the range.
const BLUR_MAX_SHARE: f64 = 1.2;
/// How many exposures are tried, evenly up to [`BLUR_MAX_SHARE`].
const BLUR_SHARES: usize = 24;
/// How far (as a share of the travel) the centre of a smear may lie from the fitted
/// pose of the smeared tag.
const BLUR_MAX_OFFSET: f64 = 0.15;
/// Blur readings taken from every moving tag until there are this many …
pub(super) const BLUR_READINGS_WANTED: u32 = 15;
/// … and after that from one tag sighting in this many.
pub(super) const BLUR_LATER_EVERY: u32 = 10;

impl Detector {
    /// How long the shutter was open, as a share of the frame interval, read from a
    /// moving tag's motion blur: the tag travelled from `before` (its pose in the
    /// frame before) to `pose` (where its blurred image is centred), and the image is
    /// the tag averaged over the part of that travel the exposure spanned. The share
    /// whose blurred footprint best explains the colour coverage is the answer.
    /// Nothing here is particular to a camera: a longer exposure smears the tag over
    /// more of its travel, on any footage. `None` when the travel is too short to
    /// tell shares apart (or too long to be one tag's), or the evidence has no clear
    /// best share.
    pub(super) fn exposure_share(
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
}
