//! The players' colours as this camera shows them, learned from the first whole view:
//! `game.json`'s colours are only a hint. The light's colour, white balance and
//! shading turn a tag's hue on camera, and one turned far enough lies nearer another
//! player's nominal colour than its own (a red tag under cold light reads magenta,
//! nearer purple): then it is never seen as its player's. Each tag-sized region of
//! clearly non-table colour is given to the player whose nominal colour lies in the
//! nearest direction from the table's colour, one region a player, and the median
//! chroma of its core becomes that player's colour where it is clearly not the
//! nominal one.

use super::look::dist2;
use super::raster::label_blobs;
use super::{Detector, TopGrid};

/// A pixel this many times [`super::DetectorConfig::chroma_off_line`] from the
/// table's chroma is clearly not table: a tag's print (white or grey), a coin and the
/// table's own grain stay within it.
const CLEARLY_NOT_TABLE: f64 = 2.0;
/// A region of a tag's colour covers this share of a tag's area or more (the hole,
/// a coin in it, and a dark outline take the rest)...
const MIN_TAG_SHARE: f64 = 0.4;
/// ... and at most this share (a larger one is two tags touching, or not a tag).
const MAX_TAG_SHARE: f64 = 1.3;
/// The most a tag's hue, seen from the table's colour, is turned from its player's
/// nominal one by light and white balance (degrees) and still taken for theirs.
const MAX_TURN_DEG: f64 = 40.0;

impl Detector {
    /// Learns each player's colour from the tag-sized regions of non-table colour in
    /// this view (a whole one), once; players whose tag shows no such region keep
    /// their nominal colour.
    pub(super) fn learn_player_colours(&mut self, g: &TopGrid, table: [f64; 2]) {
        if self.colours_learned {
            return;
        }
        self.colours_learned = true;
        let n = g.width * g.height;
        let far = CLEARLY_NOT_TABLE * self.config.chroma_off_line;
        self.coverage.clear();
        self.coverage.resize(n, 0.0);
        for i in 0..n {
            let c = self.chroma[i];
            if self.on_table[i] && dist2([c[0] as f64, c[1] as f64], table) > far * far {
                self.coverage[i] = 1.0;
            }
        }
        let blobs = label_blobs(&self.coverage, g.width, g.height, 0.5, &mut self.labels);
        let px_area = g.mm_per_px * g.mm_per_px;
        let tag_area = self.template.area;
        let regions: Vec<[f64; 2]> = blobs
            .iter()
            .filter(|b| {
                let area = b.count as f64 * px_area;
                (MIN_TAG_SHARE * tag_area..=MAX_TAG_SHARE * tag_area).contains(&area)
            })
            .map(|b| {
                let mut seen: Vec<(f64, [f64; 2])> = Vec::with_capacity(b.count);
                for v in b.v0..=b.v1 {
                    for u in b.u0..=b.u1 {
                        let i = v * g.width + u;
                        if self.labels[i] == b.label {
                            let c = [self.chroma[i][0] as f64, self.chroma[i][1] as f64];
                            seen.push((dist2(c, table), c));
                        }
                    }
                }
                // The region's edge mixes the tag's colour with the table's: its
                // core, the half farther from the table's colour, is the tag's, and
                // its median (each coordinate) leaves the noise out.
                seen.sort_by(|a, b| a.0.total_cmp(&b.0));
                let core = &seen[seen.len() / 2..];
                let median_of = |k: usize| {
                    let mut x: Vec<f64> = core.iter().map(|(_, c)| c[k]).collect();
                    x.sort_by(f64::total_cmp);
                    x.get(x.len() / 2).copied().unwrap_or(table[k])
                };
                [median_of(0), median_of(1)]
            })
            .collect();
        // Only a colour clearly not the nominal one is learned: within the off-line
        // tolerance of it, the nominal colour reads the tag fully, and the seen one
        // would only add its noise. Past it, the tag reads weak (a hue washed out
        // toward the table's), off the line, or nearer another player's colour.
        let nominal = self.players.clone();
        let off = self.config.chroma_off_line;
        for (player, region) in assign_by_hue(&nominal, &regions, table) {
            if dist2(regions[region], nominal[player]) > off * off {
                self.players[player] = regions[region];
            }
        }
    }
}

/// Pairs players (by nominal chroma) with regions (by seen chroma), each at most
/// once, by the angle between their directions from the table's chroma: the
/// closest pair first, then the closest of the rest, none turned more than
/// [`MAX_TURN_DEG`]. Returns (player, region) pairs.
fn assign_by_hue(
    players: &[[f64; 2]],
    regions: &[[f64; 2]],
    table: [f64; 2],
) -> Vec<(usize, usize)> {
    let direction = |c: &[f64; 2]| (c[1] - table[1]).atan2(c[0] - table[0]);
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (p, nominal) in players.iter().enumerate() {
        if dist2(*nominal, table) < 1e-6 {
            continue; // Coloured like the table: no direction to compare.
        }
        for (r, seen) in regions.iter().enumerate() {
            let turn = super::fish::wrap_angle(direction(seen) - direction(nominal)).abs();
            if turn.to_degrees() <= MAX_TURN_DEG {
                pairs.push((turn, p, r));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut player_done, mut region_done) =
        (vec![false; players.len()], vec![false; regions.len()]);
    let mut out = Vec::new();
    for (_, p, r) in pairs {
        if !player_done[p] && !region_done[r] {
            player_done[p] = true;
            region_done[r] = true;
            out.push((p, r));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [f64; 2] = [0.42, 0.35];

    #[test]
    fn a_hue_turned_towards_another_players_colour_stays_its_own() {
        // Red (0.73, 0.13) seen as (0.52, 0.21): nearer purple (0.34, 0.24) than red
        // by distance, but nearer red's direction from the table.
        let players = [[0.73, 0.13], [0.34, 0.24]];
        let regions = [[0.31, 0.23], [0.52, 0.21]];
        let mut got = assign_by_hue(&players, &regions, TABLE);
        got.sort();
        assert_eq!(got, vec![(0, 1), (1, 0)]);
    }

    #[test]
    fn a_region_of_no_players_hue_is_nobodys() {
        let players = [[0.73, 0.13]];
        // Green, seen from a wood table: a quarter turn and more away from red.
        let regions = [[0.30, 0.50]];
        assert!(assign_by_hue(&players, &regions, TABLE).is_empty());
    }

    #[test]
    fn each_player_takes_one_region_and_each_region_one_player() {
        let players = [[0.73, 0.13], [0.70, 0.16]];
        let regions = [[0.60, 0.18]];
        let got = assign_by_hue(&players, &regions, TABLE);
        assert_eq!(got.len(), 1, "{got:?}");
    }
}
