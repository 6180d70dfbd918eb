//! Each player's colour coverage of every pixel (how far its chroma lies from the
//! table's toward the player's), the `blocked` bits: per pixel, what a player's
//! tag cannot show there (another player's colour, an occluder), and the players'
//! colours the scenery beyond the table's edge shows of itself.

use super::look::{dist2, DARKEST_COLOURED};
use super::occluder::HighlightLine;
use super::raster::{grow_bits, label_blobs};
use super::{Detector, TopGrid};

/// The players' colours that the scenery beyond the table's edge shows in the first
/// whole view (a side face or a floor of a tag's colour: a red tag's on a maroon
/// face), pixel by pixel on that view's grid, a bit per player.
/// At a match's opening every tag lies on the table (R2), so what shows a player's
/// colour beyond the edge then is scenery for that player's tag; it stays put. A tag
/// later seen over it explains it; no tag is to be placed by it. A clip that continues
/// a match may open with a tag hanging over the edge: its overhang is then taken for
/// scenery too, which only spares the poses that do not cover it its weight.
#[derive(Debug, Clone, Default)]
pub(super) struct EdgeScenery {
    grid: Option<TopGrid>,
    bits: Vec<u8>,
    /// Where the current view's pixel (0, 0) lies in `grid`.
    offset: Option<(usize, usize)>,
}

impl EdgeScenery {
    /// Learns the scenery from a whole view's players' coverages (`players` of them,
    /// player after player), once.
    pub(super) fn learn_once(
        &mut self,
        g: &TopGrid,
        on_table: &[bool],
        coverages: &[f32],
        players: usize,
    ) {
        if self.grid.is_some() {
            return;
        }
        let n = g.width * g.height;
        self.bits = (0..n)
            .map(|i| {
                if on_table[i] {
                    return 0;
                }
                (0..players)
                    .filter(|k| coverages[k * n + i] > 0.0)
                    .fold(0u8, |b, k| b | scenery_bit(k))
            })
            .collect();
        // Grown by two pixels: coverage near the floor flickers with noise.
        let mut scratch = Vec::new();
        grow_bits(&mut self.bits, &mut scratch, g.width, g.height);
        grow_bits(&mut self.bits, &mut scratch, g.width, g.height);
        self.grid = Some(*g);
    }

    /// Places the view `g` on the learned grid for [`Self::at`].
    pub(super) fn view(&mut self, g: &TopGrid) {
        self.offset = self.grid.and_then(|m| m.offset_of(g));
    }

    /// Whether pixel (u, v) of the current view showed scenery of `player`'s colour.
    pub(super) fn at(&self, u: usize, v: usize, player: usize) -> bool {
        match (self.offset, self.grid) {
            (Some((ou, ov)), Some(m)) => {
                self.bits[(v + ov) * m.width + u + ou] & scenery_bit(player) != 0
            }
            _ => false,
        }
    }
}

/// A player's bit in [`EdgeScenery`]: scenery of one player's colour spares only that
/// player's tag (a floor that reads as one player's colour is no evidence about
/// another's: match-2p's grey-green tiles read bluish against the wood, and a red tag
/// falling over them was placed back on the table by its part there). Players past the
/// eighth share the last bit.
fn scenery_bit(player: usize) -> u8 {
    1 << player.min(7)
}

/// Players with a bit of their own in `Detector::blocked`.
pub(super) const PLAYER_BITS: usize = 6;
/// `Detector::blocked`: under a found occluder.
pub(super) const OCCLUDED: u8 = 1 << 7;

/// The `blocked` bits that hide what `player`'s tag would show: the other players'
/// colours and occluders (a player past the sixth has no bit and sees only those).
pub(super) fn unknown_bits(player: usize) -> u8 {
    let players = (1u8 << PLAYER_BITS) - 1;
    let own = if player < PLAYER_BITS {
        1u8 << player
    } else {
        0
    };
    (players & !own) | OCCLUDED
}

/// Colour coverage below this is taken for noise near the table's colour and read
/// as none (`Detector::player_coverages`; the exposure reading predicts it so).
pub(super) const COVERAGE_FLOOR: f64 = 0.2;

/// A highlight brightens a surface by more than the shading across a table does
/// (the light's fall-off and the lens's vignetting, about a tenth): a pixel this
/// much brighter than a tag and than a blend of it and the table at its coverage
/// cannot be either.
const GLARE_BRIGHTER: f64 = 1.1;

impl Detector {
    /// Each player's colour coverage of every pixel, and the `blocked` bits.
    ///
    /// A pixel's coverage for a player is how far its chroma lies from the table's
    /// toward the player's (anti-aliased edges count partly), zero when it lies off
    /// that line or nearer another player's colour.
    ///
    /// In a `settled` look a pixel of a player's colour washed toward neutral by a
    /// highlight, brighter than the player's tag (as the first whole view showed it)
    /// and than a blend of it and the table at its coverage would be, is wholly that
    /// player's: measured from the table, such a pixel reads as a faint blend of the
    /// table and the tag, and a glossy tag at rest under the light's reflection as
    /// little of a tag (sweep-024: a blue tag on grey cloth at coverage 0.4, fitted
    /// turned about). A blend of a tag and the table (a blurred edge, a smear) is no
    /// brighter than its share of each. Where such a pixel is not brighter than the
    /// table too (a dark tag washed no brighter than a light table: seed 777's
    /// sweep-005, a red tag of grey 59 washed to 96 on cloth of 90, not found and
    /// its place taken for a hand to the end of the move), it counts only within a
    /// region of such pixels larger than a coin ([`Detector::keep_washed_tags`]). A
    /// hand of a tag's hue may be as bright: the occluder search gives back what no
    /// tag found explains (`Detector::reclaim_glare`). Not while things move: a
    /// moving tag's fit leans on its smear as it shows.
    pub(super) fn player_coverages(&mut self, g: &TopGrid, table: [f64; 2], settled: bool) {
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
        let lines: Vec<HighlightLine> = self
            .players
            .iter()
            .map(|p| HighlightLine::new(*p, off as f64))
            .collect();
        // Each player's tag brightness (none for a player whose tag's brightness is
        // unknown), and the least brightness any highlight must exceed.
        let table_grey = self.table_look.grey;
        let tag_greys: Vec<Option<f64>> = (0..players)
            .map(|k| self.player_greys.get(k).copied().flatten())
            .collect();
        let least_glare = tag_greys
            .iter()
            .flatten()
            .map(|&tag| GLARE_BRIGHTER * tag)
            .fold(f64::INFINITY, f64::min);
        // Pixels lit like a dark tag washed no brighter than the table (pixel,
        // player): taken for the tag only where they make a region larger than a coin.
        let mut washed: Vec<(usize, usize)> = Vec::new();
        for i in 0..n {
            // A pixel too dark for a chroma shows no player's colour: the black
            // where the camera does not see read as purple (its chroma, 0, 0, lies
            // on purple's line from a warm table) and outweighed the purple tag.
            if self.grey[i] < DARKEST_COLOURED {
                continue;
            }
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
            if settled && self.grey[i] as f64 > least_glare {
                // The player whose highlight line passes nearest, if any.
                let lit = tag_greys
                    .iter()
                    .enumerate()
                    .filter_map(|(k, tag)| {
                        // A highlight adds light to the tag: it outshines the tag,
                        // and what a blend of the tag and the table at the pixel's
                        // coverage would show.
                        let tag = (*tag)?;
                        let a = self.coverages[k * n + i] as f64;
                        let blend = a * tag + (1.0 - a) * table_grey;
                        (self.grey[i] as f64 > GLARE_BRIGHTER * tag.max(blend)).then_some((k, tag))
                    })
                    .filter_map(|(k, tag)| lines[k].counts(c64).map(|x| (k, tag, x)))
                    .min_by(|a, b| a.2.total_cmp(&b.2));
                if let Some((k, tag, _)) = lit {
                    if self.grey[i] as f64 > GLARE_BRIGHTER * tag.max(table_grey) {
                        self.coverages[k * n + i] = 1.0;
                        if k < PLAYER_BITS {
                            bits |= 1 << k;
                        }
                    } else if k == nearest && self.on_table[i] {
                        // Only on the table top, and not nearer another player's
                        // colour: the scenery beyond the edge (a side face, a floor)
                        // can be as bright and of the tag's hue over more than a
                        // tag's area, and a pink tag lies on a red one's line.
                        washed.push((i, k));
                    }
                }
            }
            self.blocked[i] = bits;
        }
        self.keep_washed_tags(g, &washed);
        // Grown by a pixel: the mixed pixels where two tags meet belong to neither.
        grow_bits(&mut self.blocked, &mut self.blocked_tmp, g.width, g.height);
        self.mark_occluded();
    }

    /// Counts wholly a player's those of the `washed` pixels (pixel, player) that
    /// together make a region larger than two coins. A dark tag washed by the
    /// light's reflection is no brighter than a light table, only brighter than a
    /// blend of the two; so is a copper coin (on the line from neutral to a red tag)
    /// lying in another tag's hole, which, taken for the red tag, hid that tag's hole
    /// from its fit. A coin's region is a coin's size; a tag's is larger.
    fn keep_washed_tags(&mut self, g: &TopGrid, washed: &[(usize, usize)]) {
        if washed.is_empty() {
            return;
        }
        let n = g.width * g.height;
        let mut mask = vec![0.0f32; n];
        for &(i, _) in washed {
            mask[i] = 1.0;
        }
        let mut labels = Vec::new();
        let blobs = label_blobs(&mask, g.width, g.height, 0.5, &mut labels);
        let px_area = g.mm_per_px * g.mm_per_px;
        let coin_area = std::f64::consts::PI * self.coin_radius * self.coin_radius;
        let large: Vec<u32> = blobs
            .iter()
            .filter(|b| b.count as f64 * px_area > 2.0 * coin_area)
            .map(|b| b.label)
            .collect();
        for &(i, k) in washed {
            if large.contains(&labels[i]) {
                self.coverages[k * n + i] = 1.0;
                if k < PLAYER_BITS {
                    self.blocked[i] |= 1 << k;
                }
            }
        }
    }

    /// Marks what the occluders hide in `blocked`.
    pub(super) fn mark_occluded(&mut self) {
        if self.any_hidden {
            for (b, h) in self.blocked.iter_mut().zip(&self.hidden) {
                if *h > 0.5 {
                    *b |= OCCLUDED;
                }
            }
        }
    }
}
