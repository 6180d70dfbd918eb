//! Occluders (a hand, an arm): regions on or over the table whose colour is neither
//! the table's nor a player's, or which changed since the table was seen bare there,
//! too large for a coin; as discs about two tags' reach wide, and as the `hidden`
//! pixels under which nothing is reported.

use super::background::Comparison;
use super::fish::GOOD_FIT;
use super::look::dist2;
use super::raster::{self, label_blobs, Blob};
use super::{Detector, FishSighting, TopGrid, TopView};
use crate::geometry::shapes::{boundary_distance, point_in_polygon};
use crate::geometry::{PlacedFish, Point};

/// The occluder search's coverage of a pixel that is odd only in having changed
/// since the table was seen bare there (`Detector::detect_occluders`).
const CHANGED_ONLY: f32 = 0.75;

/// A pixel this many times [`super::DetectorConfig::chroma_off_line`] from the
/// table's chroma is odd in colour: not table (its grain and shading stay within),
/// so a player's colour or an occluder. Player colours are learned from regions this
/// far out too ([`Detector::learn_player_colours`]).
pub(super) const ODD_CHROMA: f64 = 1.5;

/// A tag whose fit (0..1) reaches this is placed well enough to explain what is
/// printed on it (`Detector::forget_tag_prints`): [`super::fish::GOOD_FIT`] halved.
const WELL_FOUND: f64 = GOOD_FIT / 2.0;
/// An odd region with at least this share of its pixels on a well-found tag is the
/// tag's own print, not a hand.
const PRINT_INSIDE_SHARE: f64 = 0.9;
/// How far past a tag's outline its print still reaches: the dark, blurred ring of
/// its edge, a pixel or two at the usual scale.
const PRINT_MARGIN_MM: f64 = 2.0;

/// The chroma of white light as the camera shows it: what a highlight adds.
const NEUTRAL: [f64; 2] = [1.0 / 3.0, 1.0 / 3.0];
/// A glossy tag under the light's reflection shows its colour plus white: its chroma
/// moves from the player's toward neutral (the dichromatic model). Where skin lies
/// on that line, a pixel keeps at least this share of its player's saturation to be
/// taken for the tag under a highlight. Read on the sweep: a red tag under its
/// highlight keeps 0.5 of it (sweep-037), a green one 0.6 (sweep-013); the flicking
/// hand on the red line keeps 0.25, skin lying that close to the neutral point.
const HIGHLIGHT_KEEPS: f64 = 0.4;

/// The chroma of skin under white light (r, g of r + g + b; a light skin tone, RGB
/// 224, 172, 140). Darker skin lies farther out along the same line from neutral:
/// skin is warm, between red and yellow, whatever its shade.
const SKIN: [f64; 2] = [224.0 / 536.0, 172.0 / 536.0];

/// A player's highlight line (from neutral to the player's chroma) and how much of
/// the player's saturation a pixel on it must keep, worked out once per look, not
/// per pixel.
#[derive(Clone, Copy, Debug)]
pub(super) struct HighlightLine {
    player: [f64; 2],
    /// How far (chroma) a pixel may lie off the line.
    off: f64,
    /// The least share for the occluder search to defer a pixel ([`Self::defers`]).
    deferred: f64,
    /// The least share for the tags' coverage to count a pixel ([`Self::counts`]).
    counted: f64,
}

impl HighlightLine {
    /// Where skin lies on the line (a warm player: red, orange, yellow), a pixel keeps
    /// at least [`HIGHLIGHT_KEEPS`] of the saturation either way: that sets the hand
    /// apart. On another line (blue, green) nothing but the tag washes that way. The
    /// occluder search then defers any share, and the coverage counts a pixel told
    /// from neutral, `off` away from it: a light-blue tag under a broad highlight
    /// kept 0.3 to 0.45 of its saturation over its whole top, was taken for a hand
    /// over itself and never found at rest (seed 531046's sweep-037: a false loss,
    /// two points).
    pub(super) fn new(player: [f64; 2], off: f64) -> HighlightLine {
        let (deferred, counted) = if skin_on_line(player, off) {
            (HIGHLIGHT_KEEPS, HIGHLIGHT_KEEPS)
        } else {
            let saturation =
                ((player[0] - NEUTRAL[0]).powi(2) + (player[1] - NEUTRAL[1]).powi(2)).sqrt();
            (0.0, (off / saturation).min(HIGHLIGHT_KEEPS))
        };
        HighlightLine {
            player,
            off,
            deferred,
            counted,
        }
    }

    /// Whether `c` may be the player's colour washed toward neutral by a highlight,
    /// for the occluder search to leave to the tags found (`Detector::reclaim_glare`
    /// gives back every such pixel no tag of that player covers): on the line (within
    /// `off` of it), keeping no more than all of the player's saturation and more
    /// than the deferred share. Where no skin lies on the line any share will do:
    /// only a tag of that player found there keeps the pixel from the occluders, and
    /// no hand is of that colour. A glossy blue tag put back by the near edge under a
    /// warm light's highlight kept 0.28 of its saturation, was a "hand" over itself
    /// for 300 frames, and was taken for that player's tag only in its next flight
    /// (seed 777's sweep-020: a shot missed, the moves after it one player out). A
    /// player coloured nearly neutral has no such line.
    fn defers(&self, c: [f64; 2]) -> bool {
        along_and_across(c, NEUTRAL, self.player, self.off).is_some_and(|(along, across)| {
            across < self.off && along > self.deferred && along <= 1.0
        })
    }

    /// How far `c` lies from the line when it is the player's colour washed by a
    /// highlight, keeping at least the counted share: for the tags' coverage, which
    /// counts such a pixel wholly the tag's (a pixel nearer neutral is told from a
    /// grey cloth's glint by nothing but the tag found, which the coverage is there
    /// to find).
    pub(super) fn counts(&self, c: [f64; 2]) -> Option<f64> {
        let (along, across) = along_and_across(c, NEUTRAL, self.player, self.off)?;
        ((self.counted..=1.0).contains(&along) && across < self.off).then_some(across)
    }
}

/// Whether skin lies on the line from neutral to `player`'s chroma (within `off` of
/// it, on the player's side): a warm player (red, orange, yellow).
fn skin_on_line(player: [f64; 2], off: f64) -> bool {
    along_and_across(SKIN, NEUTRAL, player, off)
        .is_some_and(|(along, across)| along > 0.0 && across < off)
}

/// Where `c` lies on the chroma line from `from` to `to`: the share of the way along
/// it, and the distance off it. None when the two lie too close for a line (within
/// [`ODD_CHROMA`] times `off`: a colour like the table's, or nearly neutral).
fn along_and_across(c: [f64; 2], from: [f64; 2], to: [f64; 2], off: f64) -> Option<(f64, f64)> {
    let axis = [to[0] - from[0], to[1] - from[1]];
    let len2 = axis[0] * axis[0] + axis[1] * axis[1];
    if len2 < ODD_CHROMA * ODD_CHROMA * off * off {
        return None;
    }
    let d = [c[0] - from[0], c[1] - from[1]];
    let along = (d[0] * axis[0] + d[1] * axis[1]) / len2;
    let across = (d[0] * axis[1] - d[1] * axis[0]).abs() / len2.sqrt();
    Some((along, across))
}

/// Whether `c` shows `player`'s colour fuller than it was learned: on the line from
/// the table's chroma through the player's (within `off` of it), at or past the
/// player's. A tag seen at the opening under the light's reflection is learned
/// washed, and the same tag out of the reflection shows its colour fuller: the
/// coverage counts such a pixel wholly the player's (`Detector::player_coverages`),
/// and so must the occluder search (sweep-024: a red tag learned as (202, 102, 96),
/// seen later as (216, 51, 46), was taken for a hand over itself, and read turned
/// about for 40 frames).
fn fuller_than(c: [f64; 2], table: [f64; 2], player: [f64; 2], off: f64) -> bool {
    along_and_across(c, table, player, off)
        .is_some_and(|(along, across)| along >= 1.0 && across < off)
}

/// An occluder's pixels (indices into the view) and which of the occluder discs
/// cover it.
#[derive(Debug, Clone)]
pub(super) struct OccluderBlob {
    pixels: Vec<usize>,
    discs: std::ops::Range<usize>,
}

impl Detector {
    /// Regions on or over the table whose colour is neither the table's nor a
    /// player's, too large for a coin, and not a tag already found. In a `settled`
    /// look a player's colour washed by a highlight is left to the tags found.
    pub(super) fn detect_occluders(
        &mut self,
        g: &TopGrid,
        table: [f64; 2],
        view: &TopView,
        memory: Option<&Comparison>,
        settled: bool,
    ) -> Vec<(Point, f64)> {
        let n = g.width * g.height;
        self.coverage.resize(n, 0.0);
        self.hidden.clear();
        self.any_hidden = false;
        self.hidden.resize(n, 0.0);
        self.glare.clear();
        // Brightness is judged against the table's, which a part of the view that is
        // mostly hand would not show.
        let grey_median = self.table_look.grey as f32;
        let off = self.config.chroma_off_line;
        let lines: Vec<HighlightLine> = self
            .players
            .iter()
            .map(|p| HighlightLine::new(*p, off))
            .collect();
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
            let odd = dt2 > ODD_CHROMA * ODD_CHROMA * off * off || odd_brightness;
            let changed = !odd && memory.is_some_and(|m| self.table_memory.changed(view, m, i));
            // Odd in colour, or only changed since the table was seen bare.
            let unexplained = if odd { 1.0 } else { CHANGED_ONLY };
            self.coverage[i] = if !(odd || changed)
                || self
                    .players
                    .iter()
                    .any(|p| dist2(c64, *p) < 4.0 * off * off || fuller_than(c64, table, *p, off))
            {
                0.0
            } else if let Some(player) = lines.iter().position(|l| settled && l.defers(c64)) {
                // A tag's colour under a highlight, or a hand of that hue: the tags
                // found decide (`Detector::reclaim_glare`). Not in a quick look
                // (things moving): a moving tag's smear over a table near neutral
                // lies on the same line, and the tag's fit under blur leans on its
                // smear hidden (round-3p's flicked tag was read on another one).
                self.glare.push((i, player, unexplained));
                0.0
            } else {
                unexplained
            };
        }
        self.occluders_from_coverage(g)
    }

    /// The occluders the coverage shows: its regions too large for a coin (and, when
    /// only changed, for a tag), as discs, their pixels kept and marked hidden.
    fn occluders_from_coverage(&mut self, g: &TopGrid) -> Vec<(Point, f64)> {
        // The table's edge band blends the top with what lies beyond it: along a felt
        // table's edge over a light wooden floor, a strip as long as the table and odd
        // in colour made "hands" two tags wide in every frame (seed 777's sweep-019: no
        // coin was looked for within 60 mm of the far edge). Only a region found
        // without the band takes the band's pixels beside it: a hand put over the edge
        // crosses the band, and a tag by the edge is read with those pixels hidden, not
        // as bare table where it should show (seed 531046's sweep-013: a tag put back
        // there was read 50 mm inward).
        let mut band: Vec<(usize, f32)> = Vec::new();
        for (i, c) in self.coverage.iter_mut().enumerate() {
            if *c > 0.0 && self.edge_band.get(i).copied().unwrap_or(false) {
                band.push((i, std::mem::take(c)));
            }
        }
        let mut large = self.large_blobs(g);
        if !band.is_empty() && !large.is_empty() {
            let in_large: Vec<bool> = {
                let labels: Vec<u32> = large.iter().map(|b| b.label).collect();
                self.labels.iter().map(|l| labels.contains(l)).collect()
            };
            let reach = (self.coin_radius.max(1.5) / g.mm_per_px).ceil() as usize + 1;
            let mut beside = Vec::new();
            raster::grow_square(
                &in_large,
                g.width,
                g.height,
                reach,
                &mut self.grow_scratch,
                &mut beside,
            );
            let mut restored = false;
            for &(i, c) in &band {
                if beside[i] {
                    self.coverage[i] = c;
                    restored = true;
                }
            }
            if restored {
                large = self.large_blobs(g);
            }
        }
        self.occluder_blobs.clear();
        let mut out = Vec::new();
        for b in large {
            let center = g.table_from_px(b.cx, b.cy);
            if self.table.signed_distance(center) < -self.footprint.reach() {
                continue; // Wholly over the floor: nothing on the table is hidden.
            }
            let first_disc = out.len();
            out.extend(self.occluder_discs(g, &b));
            let pixels: Vec<usize> = (b.v0..=b.v1)
                .flat_map(|v| (b.u0..=b.u1).map(move |u| v * g.width + u))
                .filter(|&i| self.labels[i] == b.label)
                .collect();
            self.occluder_blobs.push(OccluderBlob {
                pixels,
                discs: first_disc..out.len(),
            });
        }
        self.mark_hidden(g);
        out
    }

    /// The coverage's regions too large for a coin (and, when only changed, for a
    /// tag), labelled in `labels`.
    fn large_blobs(&mut self, g: &TopGrid) -> Vec<Blob> {
        let blobs = label_blobs(&self.coverage, g.width, g.height, 0.5, &mut self.labels);
        let px_area = g.mm_per_px * g.mm_per_px;
        let coin_area = std::f64::consts::PI * self.coin_radius * self.coin_radius;
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
        blobs
            .into_iter()
            .filter(|b| b.count as f64 * px_area > 4.0 * coin_area)
            .filter(|b| {
                b.count as f64 * px_area > tag_area
                    || odd_count(b) as f64 * px_area > 4.0 * coin_area
            })
            .collect()
    }

    /// The occluders' pixels, each grown by two pixels, marked in `hidden`.
    fn mark_hidden(&mut self, g: &TopGrid) {
        self.hidden.iter_mut().for_each(|h| *h = 0.0);
        self.any_hidden = false;
        for b in &self.occluder_blobs {
            for &i in &b.pixels {
                let (u, v) = (i % g.width, i / g.width);
                for vv in v.saturating_sub(2)..(v + 3).min(g.height) {
                    for uu in u.saturating_sub(2)..(u + 3).min(g.width) {
                        self.hidden[vv * g.width + uu] = 1.0;
                        self.any_hidden = true;
                    }
                }
            }
        }
    }

    /// Forgets the occluders that lie on a tag found well this frame: a number printed
    /// on the tag, a highlight, its hole's rim and its dark outline are odd in colour
    /// and can join into a region larger than a coin, which then hid the coin in the
    /// hole. A hand over a tag reaches past the tag's outline; a print does not.
    pub(super) fn forget_tag_prints(
        &mut self,
        g: &TopGrid,
        fish: &[FishSighting],
        occluders: &mut Vec<(Point, f64)>,
    ) {
        if self.occluder_blobs.is_empty() {
            return;
        }
        let tags: Vec<PlacedFish> = fish
            .iter()
            .filter(|f| f.fit >= WELL_FOUND)
            .map(|f| self.footprint.placed(&f.pose))
            .collect();
        if tags.is_empty() {
            return;
        }
        let on_a_tag = |p: Point| {
            tags.iter().any(|t| {
                (p - t.hole.center).norm() <= t.reach + PRINT_MARGIN_MM
                    && (point_in_polygon(p, &t.outline)
                        || boundary_distance(p, &t.outline) <= PRINT_MARGIN_MM)
            })
        };
        let before = self.occluder_blobs.len();
        self.occluder_blobs.retain(|b| {
            let inside = b
                .pixels
                .iter()
                .filter(|&&i| on_a_tag(g.table_from_px((i % g.width) as f64, (i / g.width) as f64)))
                .count();
            (inside as f64) < PRINT_INSIDE_SHARE * b.pixels.len() as f64
        });
        if self.occluder_blobs.len() == before {
            return;
        }
        // The discs of the blobs kept, in order (every disc is some blob's).
        let all = std::mem::take(occluders);
        for b in &mut self.occluder_blobs {
            let start = occluders.len();
            occluders.extend_from_slice(&all[b.discs.clone()]);
            b.discs = start..occluders.len();
        }
        self.mark_hidden(g);
    }

    /// Gives the occluder search back the pixels it excused as a tag under a
    /// highlight ([`HighlightLine::defers`]) that no tag of that player found this frame
    /// covers: by colour alone a glossy tag under the light's reflection and a hand
    /// of its hue (skin lies on the line from neutral to a yellow or orange tag)
    /// cannot be told apart, the tag's outline can. Renews the occluders when any
    /// pixel came back, and returns the players whose pixels did: their tags were
    /// looked for with those pixels in view.
    pub(super) fn reclaim_glare(
        &mut self,
        g: &TopGrid,
        fish: &[FishSighting],
        occluders: &mut Vec<(Point, f64)>,
    ) -> Vec<usize> {
        let mut players = Vec::new();
        if self.glare.is_empty() {
            return players;
        }
        let tags: Vec<(usize, PlacedFish)> = fish
            .iter()
            .map(|f| (f.player, self.footprint.placed(&f.pose)))
            .collect();
        for &(i, player, unexplained) in &self.glare {
            let p = g.table_from_px((i % g.width) as f64, (i / g.width) as f64);
            let on_its_tag = tags.iter().any(|(k, t)| {
                *k == player
                    && (t.covers(p)
                        || (!t.outline_contains(p)
                            && boundary_distance(p, &t.outline) <= PRINT_MARGIN_MM))
            });
            if !on_its_tag {
                self.coverage[i] = unexplained;
                if !players.contains(&player) {
                    players.push(player);
                }
            }
        }
        if !players.is_empty() {
            *occluders = self.occluders_from_coverage(g);
        }
        players
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
