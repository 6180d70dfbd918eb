//! Coins: a gradient Hough transform for the radius at which coins' rims show, peaks
//! refined by a least-squares circle fit to the edge pixels around them, kept when
//! the inside looks like a coin; the coin's look learned from coins seen in holes,
//! the rim's radius from loose coins seen whole; and coins too fast for a rim handed
//! to the streak search ([`super::streaks`]).

use super::fish::GOOD_FIT;
use super::look::{dist2, Look};
use super::raster::EdgeBuckets;
use super::{CoinSighting, Detector, FishSighting, Sightings, TopGrid, TopView};
use crate::geometry::Point;
use crate::track::Streak;

/// How many looks of coins found by their rims are kept while the coins' look is
/// not known (a match shows a few coins; more adds nothing).
const MAX_RIM_COIN_LOOKS: usize = 32;

/// The radius at which coins' rims show, learned from loose coins seen whole.
///
/// A camera does not draw a coin's rim at its true radius: defocus and the coin's
/// own edge spread it, and the shadow a coin casts on the table darkens a ring
/// around it. On another renderer's clips loose coins showed their steepest edges
/// 8.5 to 10 mm from their centres (7.5 mm coins), on ours 7 to 8. A fit at the true
/// radius then slides to one side of that wider ring (3 to 4 mm off at rest), so the
/// Hough votes and the fit use the radius the rims are seen at.
#[derive(Clone, Debug, Default)]
pub(super) struct RimRadius {
    /// The latest readings (mm), one per loose coin per frame.
    readings: std::collections::VecDeque<f64>,
}

impl RimRadius {
    /// Readings kept: a few seconds of a few coins.
    const KEPT: usize = 64;
    /// Readings before the learned radius replaces the true one (a reading needs a
    /// rim seen nearly whole and round, so a few agreeing ones are enough; the
    /// median then outvotes an odd one).
    const WANTED: usize = 3;
    /// How far the seen rim may lie from the true radius, as a share of it: beyond,
    /// a reading is something else (a hole's rim, two coins touching).
    const SPREAD: (f64, f64) = (0.8, 1.4);

    /// The radius to look for coins' rims at (mm), given the coins' true radius.
    pub(super) fn at(&self, true_radius: f64) -> f64 {
        if self.readings.len() < Self::WANTED {
            return true_radius;
        }
        let mut v: Vec<f64> = self.readings.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = 0.5 * (v[(n - 1) / 2] + v[n / 2]);
        median.clamp(Self::SPREAD.0 * true_radius, Self::SPREAD.1 * true_radius)
    }

    fn add(&mut self, reading_mm: f64) {
        if self.readings.len() == Self::KEPT {
            self.readings.pop_front();
        }
        self.readings.push_back(reading_mm);
    }
}

impl Detector {
    /// Whether a circle found by its edges looks like a coin: its inside differs from
    /// the surface around (table or floor), is no player's colour, and — once the
    /// coin's look is known — is nearer to it than to that surface.
    pub(super) fn looks_like_coin(&self, g: &TopGrid, cu: f64, cv: f64, r_px: f64) -> Option<Look> {
        self.judge_inside(g, cu, cv, 0.6 * r_px)
    }

    /// The look of the disc of `inner` pixels about (cu, cv), if it is a coin's.
    fn judge_inside(&self, g: &TopGrid, cu: f64, cv: f64, inner: f64) -> Option<Look> {
        self.judge_inside_by(g, cu, cv, inner, false)
    }

    /// [`Self::judge_inside`]; `strict`: unlike the surface around it, as every coin
    /// had to be before the coins' look was known, not merely nearer that look.
    fn judge_inside_by(
        &self,
        g: &TopGrid,
        cu: f64,
        cv: f64,
        inner: f64,
        strict: bool,
    ) -> Option<Look> {
        let p = g.table_from_px(cu, cv);
        let on_table = self.table.contains(p);
        // A circle across the table's edge is judged by its part on the centre's side,
        // clear of the edge: the table's side face and the floor beyond differ from the
        // table top, so a circle drawn by the edge and the grain beside it looked unlike
        // the table, as a coin does (phantom coins on the edge).
        let margin = self.edge_band_mm(g, p);
        let inside = if self.table.signed_distance(p).abs() < inner * g.mm_per_px + margin {
            let w = g.width;
            self.disc_look_where(g, cu, cv, inner, |i| {
                let q = g.table_from_px((i % w) as f64, (i / w) as f64);
                let d = self.table.signed_distance(q);
                if on_table {
                    d >= margin
                } else {
                    d <= -margin
                }
            })?
        } else {
            self.disc_look(g, cu, cv, inner)?
        };
        let surface = if on_table {
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
        let plausible = match self.coin_look.filter(|_| !strict) {
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
    pub(super) fn coin_streaks(&mut self, view: &TopView, seen: &Sightings) -> Vec<CoinSighting> {
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
        let scene = super::streaks::StreakScene {
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
            .find(&scene, &super::streaks::StreakConfig::default())
            .into_iter()
            .map(|s| CoinSighting {
                pt_in_table: s.midpoint(),
                radius_mm: self.coin_radius,
                rim_seen: s.confidence,
                streak: Some(Streak {
                    from: s.from,
                    to: s.to,
                }),
                rim_sectors: 0,
                rim_gap_in_view: false,
            })
            .collect()
    }

    /// Whether a coin centred at `p` lies wholly inside the hole of the tag `f`.
    fn lies_in_hole(&self, f: &FishSighting, p: Point) -> bool {
        (f.pose.point() - p).norm() + self.coin_radius <= self.footprint.hole_radius() + 1.0
    }

    /// Learns (slowly) how coins look from coins seen in the holes of wholly seen tags;
    /// first, from the centre of such a hole or from the first coins found in holes.
    pub(super) fn learn_coin_look(&mut self, g: &TopGrid, seen: &Sightings) {
        let r_px = self.coin_radius / g.mm_per_px;
        let unit = 0.5 * self.config.chroma_off_line;
        if self.coin_look.is_none() {
            // Circles reaching over the table's edge are left out: the edge and its
            // corners draw the phantom circles that pass the loose test.
            let clear_of_edge = |p: Point| self.table.signed_distance(p) > self.coin_radius;
            // Nor circles in tags' holes: where a millimetre is less than a pixel, an
            // empty hole's rim draws a coin's circle around the table seen through it,
            // and a hole's centre must not teach by resembling itself.
            let loose = |p: Point| !seen.fish.iter().any(|f| self.lies_in_hole(f, p));
            let room = MAX_RIM_COIN_LOOKS.saturating_sub(self.rim_coin_looks.len());
            let looks: Vec<Look> = seen
                .coins
                .iter()
                .filter(|c| {
                    c.streak.is_none() && clear_of_edge(c.pt_in_table) && loose(c.pt_in_table)
                })
                .filter_map(|c| {
                    let (cu, cv) = g.px_from_table(c.pt_in_table);
                    self.disc_look(g, cu, cv, 0.6 * r_px)
                })
                .take(room)
                .collect();
            self.rim_coin_looks.extend(looks);
        }
        if self.coin_look.is_none() {
            // Every coin starts in its owner's hole (R2): what shows at the centre of a
            // wholly seen hole, if it is not the table, is a coin, if the tag is placed
            // right (a tag placed turned about, its hole on its own printed patch, had
            // the look learned from the print, and no coin was found in a hole after).
            // A clip may open with the coins loose, though, and an empty hole shows the
            // table lit unlike its median (0.3 off it): once coins were found by their
            // rims, a hole's centre teaches only if it looks like one of them (an empty
            // hole learned as the coins' look refused every real coin after).
            for f in seen
                .fish
                .iter()
                .filter(|f| f.visible_fraction > 0.95 && f.fit * 2.0 >= GOOD_FIT)
            {
                let (cu, cv) = g.px_from_table(f.pose.point());
                let Some(look) = self.disc_look(g, cu, cv, 0.5 * r_px) else {
                    continue;
                };
                if self.table.contains(f.pose.point())
                    && look.distance(&self.table_look, unit) > 0.3
                    && (self.rim_coin_looks.is_empty()
                        || self
                            .rim_coin_looks
                            .iter()
                            .any(|c| look.distance(c, unit) < 1.0))
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
        if self.coin_look.is_none() {
            // No tag wholly seen (a tag's print and shading cost it coverage): the first
            // circles of a coin's size found in tags' holes, clearly unlike the table
            // (the loose test), are coins; where they agree, their median is the look.
            let looks: Vec<Look> = seen
                .coins
                .iter()
                .filter(|c| {
                    c.streak.is_none()
                        && seen
                            .fish
                            .iter()
                            .any(|f| self.lies_in_hole(f, c.pt_in_table))
                })
                .filter_map(|c| {
                    let (cu, cv) = g.px_from_table(c.pt_in_table);
                    self.disc_look(g, cu, cv, 0.6 * r_px)
                })
                .collect();
            let agree = looks
                .iter()
                .enumerate()
                .all(|(k, a)| looks[k + 1..].iter().all(|b| a.distance(b, unit) < 1.0));
            if !looks.is_empty() && agree {
                let median = |key: fn(&Look) -> f64| {
                    let mut v: Vec<f64> = looks.iter().map(key).collect();
                    v.sort_by(f64::total_cmp);
                    let n = v.len();
                    0.5 * (v[(n - 1) / 2] + v[n / 2])
                };
                self.coin_look = Some(Look {
                    chroma: [median(|l| l.chroma[0]), median(|l| l.chroma[1])],
                    grey: median(|l| l.grey),
                });
            }
        }
        for c in &seen.coins {
            let in_hole = seen
                .fish
                .iter()
                .any(|f| f.visible_fraction > 0.95 && self.lies_in_hole(f, c.pt_in_table));
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

    pub(super) fn detect_coins(
        &mut self,
        g: &TopGrid,
        fish: &[FishSighting],
        occluders: &[(Point, f64)],
    ) -> Vec<CoinSighting> {
        let (w, h) = (g.width, g.height);
        let r_px = self.rim_radius.at(self.coin_radius) / g.mm_per_px;
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
        let lying: Vec<bool> = fish
            .iter()
            .map(|f| self.table.contains(self.footprint.centre_of_mass(&f.pose)))
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
        // Nor are the table's own edges: its border against the floor or its side
        // face drew coin-sized circles with whatever texture or corner lay beside
        // it (phantom coins along the edge and in the corners, then named after a
        // real coin that went unseen). A coin overhanging the edge keeps the rest
        // of its rim.
        let table = &self.table;
        edges.retain(|&(u, v, _, _)| {
            let p = g.table_from_px(u as f64, v as f64);
            table.signed_distance(p).abs() >= self.edge_band_mm(g, p)
                && !placed.iter().zip(&segments).any(|(f, segments)| {
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
                .and_then(|c| {
                    let at = self.where_circle_is_coin(g, c.pt_in_table, r_px, fish)?;
                    Some(CoinSighting {
                        pt_in_table: at,
                        ..c
                    })
                })
            {
                // A coin cannot lie across a tag in the plane: such a circle is a rim.
                // A tag whose centre of mass is beyond the edge lies in no plane: it
                // falls, or hangs down the table's side, and a coin left on the table
                // over it is seen (seed 777's sweep-019: a tag hanging down the near
                // edge hid the coin that slid out of its hole for 45 frames, and that
                // coin was taken as gone over the edge with its tag).
                let disc = crate::geometry::Disc::new(c.pt_in_table, self.coin_radius);
                let covered = placed
                    .iter()
                    .zip(&lying)
                    .any(|(f, &lying)| lying && crate::geometry::fish_disc_overlap(f, &disc, -1.5));
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
        let readings: Vec<f64> = coins
            .iter()
            .filter(|c| self.shows_whole_rim(c, &coins, &placed, occluders))
            .filter_map(|c| {
                let (cu, cv) = g.px_from_table(c.pt_in_table);
                let reach = Self::RIM_SEARCH.1 * self.coin_radius / g.mm_per_px;
                buckets.near(
                    cu.round() as usize,
                    cv.round() as usize,
                    reach + 1.0,
                    &mut near,
                );
                rim_reading(&near, cu, cv, self.coin_radius / g.mm_per_px)
            })
            .collect();
        for px in readings {
            self.rim_radius.add(px * g.mm_per_px);
        }
        coins
    }

    /// Marks the coins whose rim went unseen over a quarter of its round or more, in
    /// one stretch, where nothing could hide it ([`CoinSighting::rim_gap_in_view`]):
    /// the rim's point of each unseen sector on the table top clear of its edge band,
    /// and the coin clear of every tag (a hole's rim and a tag's side cross a coin's),
    /// every hand and every other coin; and its inside no more unlike the table than
    /// a coin had to be before the coins' look was known. Seed 531046's sweep-009: a
    /// plank's seam curving at the far edge showed half a rim (18 of 36 sectors, all
    /// on one side) and made a coin that revived one carried off the table in its tag.
    pub(super) fn mark_rim_gaps(
        &self,
        g: &TopGrid,
        fish: &[FishSighting],
        occluders: &[(Point, f64)],
        coins: &mut [CoinSighting],
    ) {
        /// A quarter of the rim's 36 sectors, in one stretch.
        const GAP_SECTORS: usize = 9;
        let placed: Vec<_> = fish
            .iter()
            .map(|f| self.footprint.placed(&f.pose))
            .collect();
        let centres: Vec<Point> = coins.iter().map(|c| c.pt_in_table).collect();
        for (i, c) in coins.iter_mut().enumerate() {
            let p = c.pt_in_table;
            let r = c.radius_mm;
            let around = crate::geometry::Disc::new(p, r + 2.0 * g.mm_per_px);
            let clear = c.streak.is_none()
                && placed.iter().all(|f| {
                    (p - f.hole.center).norm() > f.hole.radius + r
                        && !crate::geometry::fish_disc_overlap(f, &around, 0.0)
                })
                && occluders
                    .iter()
                    .all(|(centre, radius)| (p - centre).norm() > radius + r)
                && centres
                    .iter()
                    .enumerate()
                    .all(|(k, o)| k == i || (o - p).norm() > 2.0 * r + 2.0 * g.mm_per_px);
            if !clear {
                continue;
            }
            let (cu, cv) = g.px_from_table(p);
            let r_px = r / g.mm_per_px;
            let gap_in_view: Vec<bool> = (0..36)
                .map(|k| {
                    let a = (k as f64 + 0.5) / 36.0 * std::f64::consts::TAU - std::f64::consts::PI;
                    let q = g.table_from_px(cu + r_px * a.cos(), cv + r_px * a.sin());
                    c.rim_sectors & (1 << k) == 0
                        && self.table.signed_distance(q) > self.edge_band_mm(g, q)
                })
                .collect();
            // One stretch of rim missing, not sectors scattered about it: a rim a few
            // pixels round (a low-resolution camera) leaves sectors empty all over.
            let longest = (0..36)
                .map(|start| {
                    (0..36)
                        .take_while(|k| gap_in_view[(start + k) % 36])
                        .count()
                })
                .max()
                .unwrap_or(0);
            // Where the rim cannot vouch for a coin, its inside can: a copper coin on
            // light wood shows no rim on its lit side (seed 777's sweep-023: 15
            // sectors in one stretch), but its inside is unlike the table.
            c.rim_gap_in_view = longest >= GAP_SECTORS
                && self.judge_inside_by(g, cu, cv, 0.6 * r_px, true).is_none();
        }
    }

    /// Keeps the coins found whose insides look like the coins' look.
    pub(super) fn rejudge_coins(
        &self,
        g: &TopGrid,
        fish: &[FishSighting],
        coins: &mut Vec<CoinSighting>,
    ) {
        let r_px = self.rim_radius.at(self.coin_radius) / g.mm_per_px;
        coins.retain(|c| self.circle_looks_like_coin(g, c.pt_in_table, r_px, fish));
    }

    /// Whether a circle read at `p` looks like a coin: by its own inside or, when it
    /// is read where a coin seated in a tag's hole can lie ([`Detector::seat_coins`]),
    /// by the middle of that hole, which a seated coin covers wherever it lies in its
    /// play. The rim fit slides between a seated coin's rim and the hole's larger
    /// one, and the circle's own inside then takes in table through the hole beside
    /// the coin (seed 531046's sweep-029: coins in their holes by the far edge, read
    /// 5 mm toward the hole's rim, looked like the table there and were never seen).
    pub(super) fn circle_looks_like_coin(
        &self,
        g: &TopGrid,
        p: Point,
        r_px: f64,
        fish: &[FishSighting],
    ) -> bool {
        self.where_circle_is_coin(g, p, r_px, fish).is_some()
    }

    /// Where a circle read at `p` shows a coin ([`Self::circle_looks_like_coin`]): at
    /// `p` when its own inside says so, else in the middle of the hole whose middle
    /// does (the circle's place then says nothing of where in its play it lies).
    pub(super) fn where_circle_is_coin(
        &self,
        g: &TopGrid,
        p: Point,
        r_px: f64,
        fish: &[FishSighting],
    ) -> Option<Point> {
        let (cu, cv) = g.px_from_table(p);
        if self.looks_like_coin(g, cu, cv, r_px).is_some() {
            return Some(p);
        }
        let play = self.footprint.hole_radius() - self.coin_radius;
        if play <= 0.0 {
            return None;
        }
        let parallax = self.parallax();
        fish.iter().find_map(|f| {
            let seen = f.pose.point();
            let band = self.edge_band_mm(g, seen);
            // Clear of the coin's own rim by as much as an edge shows in the picture.
            let covered = (self.coin_radius - play - band) / g.mm_per_px;
            if (p - seen).norm() > play + band || covered < 1.0 {
                return None;
            }
            // The hole's middle where a coin seated there shows: the tag is read at
            // half its thickness, the coin at half its own.
            let hole = parallax.lower(seen, 0.5 * self.fish_thickness);
            let middle = parallax.appear(hole, 0.5 * self.coin_thickness);
            let (hu, hv) = g.px_from_table(middle);
            self.judge_inside(g, hu, hv, covered.min(0.6 * r_px))
                .map(|_| middle)
        })
    }

    /// Where the search for a coin's rim looks, in true radii from its centre.
    const RIM_SEARCH: (f64, f64) = (0.7, 1.6);

    /// Whether nothing but the table lies within the rim search of a found coin: no
    /// tag (a hole's rim is the wrong circle), no other coin, no hand, not the
    /// table's edge.
    fn shows_whole_rim(
        &self,
        c: &CoinSighting,
        coins: &[CoinSighting],
        placed: &[crate::geometry::PlacedFish],
        occluders: &[(Point, f64)],
    ) -> bool {
        let reach = Self::RIM_SEARCH.1 * self.coin_radius;
        let p = c.pt_in_table;
        let around = crate::geometry::Disc::new(p, reach);
        c.streak.is_none()
            && self.table.signed_distance(p) > reach + self.coin_radius
            && placed.iter().all(|f| {
                (p - f.hole.center).norm() > f.hole.radius + reach
                    && !crate::geometry::fish_disc_overlap(f, &around, 0.0)
            })
            && coins
                .iter()
                .all(|o| std::ptr::eq(o, c) || (o.pt_in_table - p).norm() > 2.0 * reach)
            && occluders
                .iter()
                .all(|(center, radius)| (p - center).norm() > radius + reach)
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
        let mut rim_sectors = 0u64;
        let mut mean_r = r_px;
        // Fit the centre with the radius known: robust where another edge (a hole's
        // rim) runs close to the coin's. The band narrows as the centre settles.
        for (round, band) in Self::FIT_BANDS_PX.into_iter().enumerate() {
            let last = round + 1 == Self::FIT_BANDS_PX.len();
            let mut pts = Vec::new();
            // Which of 36 sectors show the rim, a bit each.
            let mut sectors = 0u64;
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
                    sectors |= 1 << sector_of(du, dv, 36);
                }
                pts.push((du, dv, d));
            }
            rim_seen = sectors.count_ones() as f64 / 36.0;
            rim_sectors = sectors;
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
            // The coin's own size, not its rim's (what holes and overlaps are judged by).
            radius_mm: self.coin_radius * r / r_px,
            rim_seen,
            streak: None,
            rim_sectors,
            rim_gap_in_view: false,
        })
    }
}

/// How far (px) the sector means of a whole, round rim scatter about its circle
/// however sharp the picture: its edge pixels lie anywhere across the Sobel's three
/// pixels and on the pixel grid, and the coin's side face and shadow widen the rim
/// toward the camera and away from the light. Where a coin is 7 px round (a 1280x720
/// camera over a metre of table) a tenth of its radius is below that: on another
/// renderer's wood its loose coins scattered 1.2 to 1.5 px, no reading was taken,
/// and the fit at the true radius slid 3 to 4 mm toward the shadow side of the rim.
const RIM_SCATTER_PX: f64 = 1.5;

/// Which of `sectors` equal sectors about a centre the offset `(du, dv)` lies in.
fn sector_of(du: f64, dv: f64, sectors: usize) -> usize {
    let a = dv.atan2(du);
    (((a + std::f64::consts::PI) / std::f64::consts::TAU * sectors as f64) as usize)
        .min(sectors - 1)
}

/// How far from its centre a coin's rim shows (px), from the radial edges between
/// [`Detector::RIM_SEARCH`] true radii `r_px` of `(cu, cv)`: per 10° sector the mean
/// of their positions, a circle fitted to those (its centre free: the found centre
/// may sit to one side of a rim wider than the true radius), twice, the second time
/// around the fitted centre. None unless nearly every sector shows a rim and they lie
/// on one circle (a coin blurred by motion, or half hidden, is no reading).
///
/// "On one circle" to within a tenth of the radius, but never less than
/// [`RIM_SCATTER_PX`]: a rim a few pixels round is read no closer than its pixels.
fn rim_reading(edges: &[(usize, usize, f32, f32)], cu: f64, cv: f64, r_px: f64) -> Option<f64> {
    const SECTORS: usize = 36;
    let (lo, hi) = (Detector::RIM_SEARCH.0 * r_px, Detector::RIM_SEARCH.1 * r_px);
    let (mut cu, mut cv) = (cu, cv);
    let mut radius = r_px;
    for _ in 0..2 {
        let mut sum = [(0.0f64, 0.0f64); SECTORS];
        let mut count = [0u32; SECTORS];
        for &(u, v, nx, ny) in edges {
            let (du, dv) = (u as f64 - cu, v as f64 - cv);
            let d = du.hypot(dv);
            if d < lo || d > hi || ((du * nx as f64 + dv * ny as f64) / d).abs() < 0.8 {
                continue;
            }
            let k = sector_of(du, dv, SECTORS);
            sum[k].0 += du;
            sum[k].1 += dv;
            count[k] += 1;
        }
        let points: Vec<(f64, f64)> = (0..SECTORS)
            .filter(|&k| count[k] > 0)
            .map(|k| (sum[k].0 / count[k] as f64, sum[k].1 / count[k] as f64))
            .collect();
        if points.len() * 6 < SECTORS * 5 {
            return None;
        }
        let (du, dv, r, rms) = fit_free_circle(&points)?;
        if rms > (0.1 * r_px).max(RIM_SCATTER_PX) {
            return None;
        }
        cu += du;
        cv += dv;
        radius = r;
    }
    (lo..=hi).contains(&radius).then_some(radius)
}

/// The circle through `points` in the least-squares sense of its algebraic
/// distance (Kåsa's fit): centre, radius and the points' RMS distance from it.
fn fit_free_circle(points: &[(f64, f64)]) -> Option<(f64, f64, f64, f64)> {
    // x² + y² + D x + E y + F = 0, solved in the least-squares sense.
    let mut a = nalgebra::Matrix3::<f64>::zeros();
    let mut b = nalgebra::Vector3::<f64>::zeros();
    for &(x, y) in points {
        let row = nalgebra::Vector3::new(x, y, 1.0);
        a += row * row.transpose();
        b -= row * (x * x + y * y);
    }
    let s = a.lu().solve(&b)?;
    let (cx, cy) = (-0.5 * s[0], -0.5 * s[1]);
    let r2 = cx * cx + cy * cy - s[2];
    let r = r2.sqrt();
    if !r.is_finite() || r <= 0.0 {
        return None;
    }
    let ms = points
        .iter()
        .map(|&(x, y)| ((x - cx).hypot(y - cy) - r).powi(2))
        .sum::<f64>()
        / points.len() as f64;
    Some((cx, cy, r, ms.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The edge pixels (as the Sobel pass gives them) of a coin's rim seen as an
    /// ellipse of semi-axes `a` across and `b` along the view (a side face and a
    /// shadow widen it toward the camera), centred at `c`.
    fn ring_edges(c: (f64, f64), a: f64, b: f64) -> Vec<(usize, usize, f32, f32)> {
        let mut edges = Vec::new();
        for v in 0..80usize {
            for u in 0..100usize {
                let (du, dv) = (u as f64 - c.0, v as f64 - c.1);
                let d = du.hypot(dv);
                if d > 0.0 && ((du / a).hypot(dv / b) - 1.0).abs() * a.min(b) < 0.9 {
                    edges.push((u, v, (du / d) as f32, (dv / d) as f32));
                }
            }
        }
        edges
    }

    /// Edge pixels along arcs of the `radii` about `c` from `from` to `to` degrees,
    /// their normals pointing outward (`out`) or inward.
    fn arc_edges(
        c: (f64, f64),
        radii: &[f64],
        from: u32,
        to: u32,
        out: bool,
    ) -> Vec<(usize, usize, f32, f32)> {
        let sign = if out { 1.0 } else { -1.0 };
        (from..=to)
            .step_by(2)
            .flat_map(|deg| {
                let t = f64::from(deg).to_radians();
                radii.iter().map(move |r| {
                    (
                        (c.0 + r * t.cos()).round() as usize,
                        (c.1 + r * t.sin()).round() as usize,
                        (sign * t.cos()) as f32,
                        (sign * t.sin()) as f32,
                    )
                })
            })
            .collect()
    }

    #[test]
    fn a_coins_rim_a_few_pixels_round_read_amid_its_highlight_and_the_grain_is_a_reading() {
        // Another renderer's loose copper coin on wood at a millimetre a pixel (foreign
        // f08): its rim shows as a ring about 8.5 px across the view and 9.5 along
        // it, a highlight on its top face draws an inner arc, the grain beyond its
        // shadow an outer one; the sector means scatter 0.8 to 1.5 px about one
        // circle. Such a rim was refused as "not round", the rim's radius was never
        // learned, and the fit at the true 7.5 px slid 3 mm toward the shadow.
        let c = (50.3, 40.6);
        let mut edges = ring_edges(c, 8.6, 9.4);
        edges.extend(arc_edges(c, &[5.4, 5.9], 200, 290, false));
        edges.extend(arc_edges(c, &[11.2, 11.8], 20, 80, true));
        // The search starts where the fit at the true radius left the centre.
        let r = rim_reading(&edges, c.0 + 0.4, c.1 + 2.5, 7.5);
        let r = r.expect("a whole rim a few pixels round gives a reading");
        assert!((8.2..9.3).contains(&r), "read at {r:.2} px");
    }

    #[test]
    fn edges_scattered_beyond_a_pixel_and_a_half_are_no_reading() {
        // What the allowance must not let through: a ring among edges a few pixels
        // inside and outside it all round (the grain's own rings, a pattern on the
        // table) scatters the sector means by 2 px; its radius says nothing.
        let c = (50.3, 40.6);
        let mut edges = ring_edges(c, 9.0, 9.0);
        for start in [0, 90, 180, 270] {
            edges.extend(arc_edges(c, &[5.4, 5.9], start, start + 40, false));
            edges.extend(arc_edges(
                c,
                &[11.5, 12.0, 12.5],
                start + 45,
                start + 85,
                true,
            ));
        }
        assert_eq!(rim_reading(&edges, c.0, c.1, 7.5), None);
    }
}
