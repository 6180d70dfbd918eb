//! Each player's colour coverage of every pixel (how far its chroma lies from the
//! table's toward the player's), the `blocked` bits: per pixel, what a player's
//! tag cannot show there (another player's colour, an occluder), and the players'
//! colours the scenery beyond the table's edge shows of itself.

use super::look::{dist2, DARKEST_COLOURED};
use super::occluder::off_highlight_line;
use super::raster::grow_bits;
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
/// much brighter than both a tag and the table cannot be a blend of the two.
const GLARE_BRIGHTER: f64 = 1.1;

impl Detector {
    /// Each player's colour coverage of every pixel, and the `blocked` bits.
    ///
    /// A pixel's coverage for a player is how far its chroma lies from the table's
    /// toward the player's (anti-aliased edges count partly), zero when it lies off
    /// that line or nearer another player's colour.
    ///
    /// In a `settled` look a pixel of a player's colour washed toward neutral by a
    /// highlight, brighter than both the player's tag (as the first whole view
    /// showed it) and the table, is wholly that player's: measured from the table,
    /// such a pixel reads as a faint blend of the table and the tag, and a glossy
    /// tag at rest under the light's reflection as little of a tag (sweep-024: a
    /// blue tag on grey cloth at coverage 0.4, fitted turned about). A blend of a
    /// tag and the table (a blurred edge, a smear) is never brighter than both. A
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
        // The brightness a highlight must reach for each player (none for a player
        // whose tag's brightness is unknown), and the least of them.
        let table_grey = self.table_look.grey;
        let glare_above: Vec<Option<f64>> = (0..players)
            .map(|k| {
                let tag = self.player_greys.get(k).copied().flatten()?;
                Some(GLARE_BRIGHTER * tag.max(table_grey))
            })
            .collect();
        let least_glare = glare_above
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
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
                let lit = glare_above
                    .iter()
                    .enumerate()
                    .filter(|(_, above)| above.is_some_and(|a| self.grey[i] as f64 > a))
                    .filter_map(|(k, _)| {
                        off_highlight_line(c64, self.players[k], off as f64).map(|x| (k, x))
                    })
                    .min_by(|a, b| a.1.total_cmp(&b.1));
                if let Some((k, _)) = lit {
                    self.coverages[k * n + i] = 1.0;
                    if k < PLAYER_BITS {
                        bits |= 1 << k;
                    }
                }
            }
            self.blocked[i] = bits;
        }
        // Grown by a pixel: the mixed pixels where two tags meet belong to neither.
        grow_bits(&mut self.blocked, &mut self.blocked_tmp, g.width, g.height);
        self.mark_occluded();
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
