//! Occluders (a hand, an arm): regions on or over the table whose colour is neither
//! the table's nor a player's, or which changed since the table was seen bare there,
//! too large for a coin; as discs about two tags' reach wide, and as the `hidden`
//! pixels under which nothing is reported.

use super::background::Comparison;
use super::look::dist2;
use super::raster::{label_blobs, Blob};
use super::{Detector, FishSighting, TopGrid, TopView};
use crate::geometry::table::closest_on_segment;
use crate::geometry::Point;

/// The occluder search's coverage of a pixel that is odd only in having changed
/// since the table was seen bare there (`Detector::detect_occluders`).
const CHANGED_ONLY: f32 = 0.75;
/// An occluder lies on a found tag when its hidden pixels lie within this of the
/// tag's outline (mm): a tag 2.5 mm thick under light 30 degrees above the table
/// casts a shadow 4.3 mm past its edge, and the hidden mask is the odd region
/// grown by two pixels.
const ON_TAG_MM: f64 = 6.0;
/// … and this share of its pixels does.
const ON_TAG_SHARE: f64 = 0.9;

impl Detector {
    /// Regions on or over the table whose colour is neither the table's nor a
    /// player's, too large for a coin, and not a tag already found.
    pub(super) fn detect_occluders(
        &mut self,
        g: &TopGrid,
        table: [f64; 2],
        view: &TopView,
        memory: Option<&Comparison>,
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

    /// Lets go of occluders that are a found tag's own look: an odd-coloured region
    /// lying wholly on a tag, touching no other occluder, is its printed number,
    /// its shading or a highlight (a blue tag's shaded half under another
    /// renderer's light was taken for a hand, hiding the coin in its hole). A hand
    /// is larger than a tag, and an arm is a chain of discs.
    pub(super) fn release_tag_occluders(
        &mut self,
        g: &TopGrid,
        fish: &[FishSighting],
        occluders: &mut Vec<(Point, f64)>,
    ) {
        if occluders.is_empty() || fish.is_empty() {
            return;
        }
        let placed: Vec<_> = fish
            .iter()
            .map(|f| self.footprint.placed(&f.pose))
            .collect();
        let on_tag = |p: Point| {
            placed.iter().any(|f| {
                (p - f.hole.center).norm() < f.reach + ON_TAG_MM
                    && (f.outline_contains(p)
                        || (0..f.outline.len()).any(|i| {
                            let (a, b) = (f.outline[i], f.outline[(i + 1) % f.outline.len()]);
                            (p - closest_on_segment(p, a, b)).norm() < ON_TAG_MM
                        }))
            })
        };
        let all = occluders.clone();
        let mut released = Vec::new();
        for (k, &(c, r)) in all.iter().enumerate() {
            let alone = all
                .iter()
                .enumerate()
                .all(|(j, &(o, ro))| j == k || (o - c).norm() > r + ro);
            if !alone {
                continue;
            }
            let (cu, cv) = g.px_from_table(c);
            let rp = r / g.mm_per_px;
            let (u0, u1) = (
                (cu - rp).floor().max(0.0) as usize,
                (cu + rp).ceil().max(0.0) as usize,
            );
            let (v0, v1) = (
                (cv - rp).floor().max(0.0) as usize,
                (cv + rp).ceil().max(0.0) as usize,
            );
            let (mut hidden, mut tagged) = (0usize, 0usize);
            let mut pixels = Vec::new();
            for v in v0..=v1.min(g.height.saturating_sub(1)) {
                for u in u0..=u1.min(g.width.saturating_sub(1)) {
                    let i = v * g.width + u;
                    if self.hidden[i] <= 0.0 {
                        continue;
                    }
                    let p = g.table_from_px(u as f64, v as f64);
                    if (p - c).norm() > r {
                        continue;
                    }
                    hidden += 1;
                    if on_tag(p) {
                        tagged += 1;
                    }
                    pixels.push(i);
                }
            }
            if hidden > 0 && tagged as f64 >= ON_TAG_SHARE * hidden as f64 {
                for i in pixels {
                    self.hidden[i] = 0.0;
                }
                released.push(k);
            }
        }
        if released.is_empty() {
            return;
        }
        *occluders = all
            .into_iter()
            .enumerate()
            .filter(|(k, _)| !released.contains(k))
            .map(|(_, o)| o)
            .collect();
        self.any_hidden = self.hidden.iter().any(|h| *h > 0.0);
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
}
