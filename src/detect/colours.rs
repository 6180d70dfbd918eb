//! The players' colours as this camera shows them, learned from the first whole view:
//! `game.json`'s colours are only a hint. The light's colour, white balance and
//! shading turn a tag's hue on camera, and one turned far enough lies nearer another
//! player's nominal colour than its own (a red tag under cold light reads magenta,
//! nearer purple): then it is never seen as its player's. Each tag-sized region of
//! clearly non-table colour is given to the player whose nominal colour lies in the
//! nearest direction from the table's colour, one region a player, and the median
//! chroma of its core becomes that player's colour where it is clearly not the
//! nominal one. A whole tag of a colour left over once every player has theirs is a
//! stranger: a tag of no player's, so the game file is not this match's.

use super::fish::{axis_of, moments};
use super::look::dist2;
use super::occluder::ODD_CHROMA;
use super::raster::{label_blobs, Blob};
use super::{Detector, StrangerSighting, TopGrid};
use crate::geometry::{Point, Vector};

/// A region of a tag's colour covers this share of a tag's area or more (the hole,
/// a coin in it, and a dark outline take the rest)...
const MIN_TAG_SHARE: f64 = 0.4;
/// ... and at most this share (a larger one is two tags touching, or not a tag).
const MAX_TAG_SHARE: f64 = 1.3;
/// A region of a tag's colour, its pixels counted whole, covers up to this share of
/// a tag's area: the blurred edge of a saturated colour and the tag's side seen
/// obliquely count in full (at 3 mm a pixel, nearly twice the tag's area).
const MAX_BLOB_SHARE: f64 = 3.0;
/// The most a tag's hue, seen from the table's colour, is turned from its player's
/// nominal one by light and white balance (degrees) and still taken for theirs.
const MAX_TURN_DEG: f64 = 40.0;
/// A region covering this share of a tag's area or more is a tag seen whole (its
/// print, a number on it and its shaded edge take the rest)...
const WHOLE_TAG_SHARE: f64 = 0.7;
/// ... and at most this share (two tags touching make twice a tag's; a saturated
/// colour's blurred edge and the tag's side seen obliquely add to one)...
const MAX_WHOLE_TAG_SHARE: f64 = 1.7;
/// ... when it reaches from its centroid no farther than a tag does, and its
/// elongation (major/minor second moment) is a tag's, each within this factor.
const SHAPE_TOLERANCE: f64 = 1.3;

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
        // A region the occluder search would call odd in colour may be a tag: learning
        // looks as far out as that search does, or a tag between the two (one of the
        // table's hue, only more saturated) would be taken for a hand and never seen.
        let far = ODD_CHROMA * self.config.chroma_off_line;
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
        let regions: Vec<Region> = blobs
            .iter()
            .filter(|b| {
                let area = b.count as f64 * px_area;
                (MIN_TAG_SHARE * tag_area..=MAX_BLOB_SHARE * tag_area).contains(&area)
            })
            .map(|b| self.region(g, b, table))
            .collect();
        let nominal = self.players.clone();
        // Only a colour clearly not the nominal one is learned: within the off-line
        // tolerance of it, the nominal colour reads the tag fully, and the seen one
        // would only add its noise. Past it, the tag reads weak (a hue washed out
        // toward the table's), off the line, or nearer another player's colour.
        let (sized, chromas) = pick(&regions, |r| r.tag_sized);
        let off = self.config.chroma_off_line;
        self.player_greys = vec![None; nominal.len()];
        for (player, k) in assign_by_hue(&nominal, &chromas, table) {
            self.player_greys[player] = Some(sized[k].grey);
            let seen = chromas[k];
            if dist2(seen, nominal[player]) > off * off {
                self.players[player] = seen;
            }
        }
        // A whole tag of its own colour left over once every player has theirs is a
        // tag of no player's: the game file is not this match's (a player left out).
        // While a player lacks a whole tag, a leftover may be that player's tag turned
        // past recognition, so it is not called a stranger.
        let (whole, chromas) = pick(&regions, |r| r.whole_tag);
        let pairs = assign_by_hue(&nominal, &chromas, table);
        let coloured = nominal.iter().filter(|c| dist2(**c, table) >= 1e-6).count();
        if pairs.len() == coloured {
            self.strangers = (0..whole.len())
                .filter(|k| !pairs.iter().any(|p| p.1 == *k))
                .map(|k| StrangerSighting {
                    centre: whole[k].centre,
                    rgb: whole[k].rgb,
                })
                .collect();
        }
    }

    /// What a region of non-table colour shows: its colour, and whether it has a
    /// tag's size and a whole tag's shape.
    fn region(&self, g: &TopGrid, b: &Blob, table: [f64; 2]) -> Region {
        struct Px {
            from_table: f64,
            chroma: [f64; 2],
            grey: f64,
            at: Vector,
        }
        let mut seen: Vec<Px> = Vec::with_capacity(b.count);
        for v in b.v0..=b.v1 {
            for u in b.u0..=b.u1 {
                let i = v * g.width + u;
                if self.labels[i] == b.label {
                    let chroma = [self.chroma[i][0] as f64, self.chroma[i][1] as f64];
                    seen.push(Px {
                        from_table: dist2(chroma, table),
                        chroma,
                        grey: self.grey[i] as f64,
                        at: g.table_from_px(u as f64, v as f64).coords,
                    });
                }
            }
        }
        // The region's edge mixes the tag's colour with the table's: its core, the
        // half farther from the table's colour, is the tag's, and its median (each
        // coordinate) leaves the noise out.
        seen.sort_by(|a, b| a.from_table.total_cmp(&b.from_table));
        let core = &seen[seen.len() / 2..];
        let median_of = |value: &dyn Fn(&Px) -> f64, otherwise: f64| {
            let mut x: Vec<f64> = core.iter().map(value).collect();
            x.sort_by(f64::total_cmp);
            x.get(x.len() / 2).copied().unwrap_or(otherwise)
        };
        let chroma = [
            median_of(&|p| p.chroma[0], table[0]),
            median_of(&|p| p.chroma[1], table[1]),
        ];
        let grey = median_of(&|p| p.grey, 0.0);
        let channel = |share: f64| (3.0 * grey * share).round().clamp(0.0, 255.0) as u8;
        let rgb = [
            channel(chroma[0]),
            channel(chroma[1]),
            channel(1.0 - chroma[0] - chroma[1]),
        ];
        // Each pixel counts for the share of the tag's colour in it (its place on the
        // line from the table's colour to the core's): a blurred edge, the tag's side
        // seen obliquely and a coin in the hole count for what of the tag they show.
        let line = [chroma[0] - table[0], chroma[1] - table[1]];
        let line2 = dist2(chroma, table).max(1e-12);
        let px_area = g.mm_per_px * g.mm_per_px;
        let share = |p: &Px| {
            let t =
                ((p.chroma[0] - table[0]) * line[0] + (p.chroma[1] - table[1]) * line[1]) / line2;
            t.clamp(0.0, 1.0) * px_area
        };
        let (area, centroid, cov) = moments(seen.iter().map(|p| (p.at, share(p))));
        let reach = seen
            .iter()
            .filter(|p| share(p) > 0.5 * px_area)
            .map(|p| (p.at - centroid).norm())
            .fold(0.0, f64::max);
        let (_, elongation) = axis_of(&cov);
        let t = &self.template;
        let whole_tag = (WHOLE_TAG_SHARE * t.area..=MAX_WHOLE_TAG_SHARE * t.area).contains(&area)
            && reach <= SHAPE_TOLERANCE * t.centroid_reach + g.mm_per_px
            && (t.elongation / SHAPE_TOLERANCE..=t.elongation * SHAPE_TOLERANCE)
                .contains(&elongation);
        let raw = b.count as f64 * px_area;
        Region {
            chroma,
            grey,
            rgb,
            centre: Point::from(centroid),
            // Counted whole, a coin in the hole and a dark rim (the tag's side seen
            // obliquely) push one tag past `MAX_TAG_SHARE`; a region of a whole tag's
            // shape and share-weighted area is one tag all the same.
            tag_sized: raw <= MAX_TAG_SHARE * t.area || whole_tag,
            whole_tag,
        }
    }
}

/// The regions `keep` picks, and their chromas.
fn pick(regions: &[Region], keep: impl Fn(&Region) -> bool) -> (Vec<&Region>, Vec<[f64; 2]>) {
    let picked: Vec<&Region> = regions.iter().filter(|r| keep(r)).collect();
    let chromas = picked.iter().map(|r| r.chroma).collect();
    (picked, chromas)
}

/// A region of clearly non-table colour the size of a tag.
struct Region {
    /// Median chroma of its core.
    chroma: [f64; 2],
    /// Median grey of its core.
    grey: f64,
    /// Its colour as seen (the core's median chroma at its median brightness).
    rgb: [u8; 3],
    /// Its centroid, table mm.
    centre: Point,
    /// No larger than a tag (more is two tags touching, or not a tag), or a whole
    /// tag: its colour may be learned.
    tag_sized: bool,
    /// Seen whole and shaped as a tag: nearly all of a tag's area, no farther from
    /// its centroid than a tag reaches, as elongated as a tag.
    whole_tag: bool,
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
