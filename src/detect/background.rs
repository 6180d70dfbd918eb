//! The bare table as last seen, pixel by pixel: what a hand or an arm changes,
//! whatever its colour. A hand can share the table's hue and brightness (skin on
//! light wood), so the colour tests of the occluder search miss it; against the
//! table remembered at the same pixel it stands out. Items found in a frame, and
//! pixels that were never seen bare, are not remembered, nor is a pixel seen for
//! the first time while the table around it reads changed; the camera's exposure and
//! white balance drift is taken out by a per-channel gain before comparing, and the
//! threshold follows the noise measured in the same frame. What of a view is
//! remembered (the table where nothing was found over it) is decided here too
//! (`Detector::remember_bare_table`).

use super::coverage::OCCLUDED;
use super::look::median_of;
use super::raster::grow_square;
use super::{Detector, Sightings, TopGrid, TopView};

/// A pixel differs from the remembered table when some channel, after the gain,
/// differs by more than this many noise sigmas …
const CHANGE_SIGMAS: f32 = 5.0;
/// … and by at least this many grey levels (compression blocks, fine grain).
const CHANGE_MIN_LEVELS: f32 = 14.0;
/// When more than this share of the remembered pixels changed at once in a whole
/// view, the scene is new (the camera moved, the light changed): memory starts again.
const NEW_SCENE_SHARE: f64 = 0.4;
/// A view is whole, for the new-scene rule, when it holds at least this share of
/// the remembered grid: a part is cut around what changed (a hand may fill most of
/// it), so the share changed there says nothing of the scene.
const WHOLE_VIEW_SHARE: f64 = 0.9;
/// How fast a remembered pixel follows a bare table that drifts (share per frame).
const FOLLOW: f32 = 0.1;
/// A changed pixel that has stayed as it is for this many looks, with nothing found
/// over it, is the table now (a shadow that moved with an item, light that changed):
/// a hand is never that still for so long while it plays.
const ABSORB_LOOKS: u16 = 30;

/// The bare table remembered on a top-view grid.
#[derive(Debug, Clone, Default)]
pub(crate) struct TableMemory {
    grid: Option<TopGrid>,
    rgb: Vec<[f32; 3]>,
    valid: Vec<bool>,
    /// Each pixel as last looked at, and for how many looks it has stayed so.
    last: Vec<[f32; 3]>,
    still_for: Vec<u16>,
    /// The exposure gain and change threshold of the last whole view compared: a
    /// part mostly changed is judged by them.
    whole: Option<([f32; 3], f32)>,
}

/// How one view compares with the memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Comparison {
    /// Where the view's pixel (0, 0) lies in the remembered grid.
    offset: (usize, usize),
    /// Per channel: the view's level over the remembered one (exposure drift).
    gain: [f32; 3],
    /// A channel that differs by more than this has changed.
    threshold: f32,
}

fn rgb_of(view: &TopView, i: usize) -> [f32; 3] {
    let p = &view.rgb[3 * i..3 * i + 3];
    let (r, g, b) = if view.bgr {
        (p[2], p[1], p[0])
    } else {
        (p[0], p[1], p[2])
    };
    [r as f32, g as f32, b as f32]
}

impl TableMemory {
    /// Where pixel (0, 0) of a view lies in the remembered grid, if the view lies
    /// wholly inside it on the same pixels.
    fn offset(&self, g: &TopGrid) -> Option<(usize, usize)> {
        self.grid.as_ref()?.offset_of(g)
    }

    /// Compares a view with the memory: `None` while nothing under it is known.
    /// `on_table` marks the view's pixels on the table top.
    pub(crate) fn compare(&mut self, view: &TopView, on_table: &[bool]) -> Option<Comparison> {
        let g = view.grid;
        let offset = self.offset(&g)?;
        let m = self.grid?;
        let mut ratios: [Vec<f32>; 3] = Default::default();
        let mut pairs = Vec::new();
        for v in (0..g.height).step_by(3) {
            for u in (0..g.width).step_by(3) {
                let i = v * g.width + u;
                let j = (v + offset.1) * m.width + u + offset.0;
                if !on_table[i] || !self.valid[j] {
                    continue;
                }
                let now = rgb_of(view, i);
                let then = self.rgb[j];
                for c in 0..3 {
                    if then[c] > 8.0 {
                        ratios[c].push(now[c] / then[c]);
                    }
                }
                pairs.push((now, then));
            }
        }
        // Too little of the view known to judge its exposure by.
        if pairs.len() < 200 {
            return None;
        }
        let mut gain = [1.0f32; 3];
        for c in 0..3 {
            gain[c] = median_of(&mut ratios[c]).unwrap_or(1.0);
        }
        let mut diffs: Vec<f32> = pairs
            .iter()
            .map(|(now, then)| {
                (0..3)
                    .map(|c| (now[c] - gain[c] * then[c]).abs())
                    .fold(0.0, f32::max)
            })
            .collect();
        // The largest of three channels' absolute differences: its median is about
        // 1.5 sigma of one channel's noise.
        let sigma = median_of(&mut diffs).unwrap_or(0.0) / 1.5;
        let threshold = (CHANGE_SIGMAS * sigma).max(CHANGE_MIN_LEVELS);
        let changed = diffs.iter().filter(|d| **d > threshold).count();
        let whole = (g.width * g.height) as f64 >= WHOLE_VIEW_SHARE * (m.width * m.height) as f64;
        if changed as f64 > NEW_SCENE_SHARE * diffs.len() as f64 {
            if whole {
                self.grid = None;
                return None;
            }
            // A part is cut around what changed, a hand perhaps filling most of it:
            // the hand, not the scene, is new. Starting again here learned the hand
            // as the bare table, left as a ghost "hand" once it had gone.
            let (gain, threshold) = self.whole.unwrap_or(([1.0; 3], threshold));
            return Some(Comparison {
                offset,
                gain,
                threshold,
            });
        }
        if whole {
            self.whole = Some((gain, threshold));
        }
        Some(Comparison {
            offset,
            gain,
            threshold,
        })
    }

    /// Whether pixel `i` of the view differs from the table remembered there (false
    /// where nothing is remembered).
    pub(crate) fn changed(&self, view: &TopView, c: &Comparison, i: usize) -> bool {
        let Some(m) = self.grid.as_ref() else {
            return false;
        };
        let g = view.grid;
        let (u, v) = (i % g.width, i / g.width);
        let j = (v + c.offset.1) * m.width + u + c.offset.0;
        if !self.valid[j] {
            return false;
        }
        let now = rgb_of(view, i);
        let then = self.rgb[j];
        (0..3).any(|k| (now[k] - c.gain[k] * then[k]).abs() > c.threshold)
    }

    /// Remembers the bare table in a view. `free(i)` is `None` where something was
    /// found over pixel `i` (or it is off the table), else whether its colour looks
    /// like the table's. A free pixel never remembered is remembered when it looks
    /// like the table; a remembered one follows slow drift while unchanged, and is
    /// replaced once it has changed and stayed still for [`ABSORB_LOOKS`] looks.
    /// A first view, or a larger one than remembered, starts the memory.
    pub(crate) fn remember(
        &mut self,
        view: &TopView,
        comparison: Option<&Comparison>,
        free: impl Fn(usize) -> Option<bool>,
    ) {
        let g = view.grid;
        let n = g.width * g.height;
        if view.rgb.len() < 3 * n {
            return;
        }
        let larger = self
            .grid
            .is_none_or(|m| g.width * g.height > m.width * m.height);
        if self.offset(&g).is_none() && larger {
            self.grid = Some(g);
            self.rgb = vec![[0.0; 3]; n];
            self.valid = vec![false; n];
            self.last = vec![[0.0; 3]; n];
            self.still_for = vec![0; n];
            self.whole = None;
        }
        let (Some(offset), Some(m)) = (self.offset(&g), self.grid) else {
            return;
        };
        let threshold = comparison.map_or(CHANGE_MIN_LEVELS, |c| c.threshold);
        for i in 0..n {
            let (u, v) = (i % g.width, i / g.width);
            let j = (v + offset.1) * m.width + u + offset.0;
            let now = rgb_of(view, i);
            let still = (0..3).all(|k| (now[k] - self.last[j][k]).abs() <= threshold);
            self.still_for[j] = if still {
                self.still_for[j].saturating_add(1)
            } else {
                0
            };
            self.last[j] = now;
            let Some(table_like) = free(i) else {
                continue;
            };
            if !self.valid[j] {
                if table_like {
                    self.rgb[j] = now;
                    self.valid[j] = true;
                }
                continue;
            }
            let Some(c) = comparison else {
                continue;
            };
            let then = self.rgb[j];
            let own = |k: usize| now[k] / c.gain[k].max(1e-3);
            if (0..3).any(|k| (now[k] - c.gain[k] * then[k]).abs() > c.threshold) {
                if self.still_for[j] >= ABSORB_LOOKS {
                    self.rgb[j] = [own(0), own(1), own(2)];
                }
                continue;
            }
            for (k, m) in self.rgb[j].iter_mut().enumerate() {
                *m += FOLLOW * (own(k) - then[k]);
            }
        }
    }
}

impl Detector {
    /// Remembers the table where this view shows it bare: on the table, no odd or
    /// changed colour (`coverage`, the occluder search's), no player's colour, no coin.
    pub(super) fn remember_bare_table(
        &mut self,
        view: &TopView,
        memory: Option<&Comparison>,
        seen: &Sightings,
    ) {
        let g = view.grid;
        let n = g.width * g.height;
        // A pixel seen for the first time (an item has just left it) is lit as the
        // bare table only where the table around it reads as remembered: a hand and
        // its shadow, still over the place a tag left, had it learned darker, and
        // once they had gone the bare table there read as a change to the end (a
        // tag-sized "hand" over the place). So nothing is first learned within a
        // tag's reach of a pixel that changed or lies under an occluder.
        let disturbed = &mut self.disturbed_scratch;
        disturbed.clear();
        disturbed.extend((0..n).map(|i| {
            let c = self.coverage.get(i).copied().unwrap_or(0.0);
            (c > 0.0 && c < 1.0) || self.hidden.get(i).is_some_and(|h| *h > 0.0)
        }));
        let reach_px = (self.footprint.reach() / g.mm_per_px).ceil() as usize;
        grow_square(
            &self.disturbed_scratch,
            g.width,
            g.height,
            reach_px,
            &mut self.grow_scratch,
            &mut self.disturbed_near,
        );
        // 0: something found over it, 1: free but odd (or not to be first learned
        // now), 2: free and like the table.
        let bare = &mut self.bare_scratch;
        bare.clear();
        bare.extend((0..n).map(|i| {
            let free = self.blocked.get(i).is_none_or(|b| *b & !OCCLUDED == 0);
            let like_table = self.coverage.get(i).is_some_and(|c| *c < 1.0)
                && !self.disturbed_near.get(i).copied().unwrap_or(false);
            u8::from(free) * (1 + u8::from(like_table))
        }));
        let r = (self.coin_radius + 2.0) / g.mm_per_px;
        for c in &seen.coins {
            let (cu, cv) = g.px_from_table(c.pt_in_table);
            let (u0, u1) = (
                (cu - r).floor().max(0.0) as usize,
                (cu + r).ceil().max(0.0) as usize,
            );
            let (v0, v1) = (
                (cv - r).floor().max(0.0) as usize,
                (cv + r).ceil().max(0.0) as usize,
            );
            for v in v0..=v1.min(g.height.saturating_sub(1)) {
                for u in u0..=u1.min(g.width.saturating_sub(1)) {
                    bare[v * g.width + u] = 0;
                }
            }
        }
        let bare = &self.bare_scratch;
        self.table_memory
            .remember(view, memory, |i| (bare[i] > 0).then_some(bare[i] == 2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{Point, Table};

    /// A wood-like table with grain, and where `hand` says, a hand whose colour lies
    /// near the wood's (skin on wood: only the memory tells it apart).
    fn paint(grid: &TopGrid, hand: impl Fn(Point) -> bool) -> Vec<u8> {
        let mut rgb = Vec::with_capacity(grid.width * grid.height * 3);
        for v in 0..grid.height {
            for u in 0..grid.width {
                let p = grid.table_from_px(u as f64, v as f64);
                let grain = 10.0 * (p.y * 0.4 + (p.x * 0.07).sin() * 2.0).sin();
                let c = if hand(p) {
                    [190.0, 140.0, 110.0]
                } else {
                    [165.0 + grain, 105.0 + 0.8 * grain, 60.0 + 0.5 * grain]
                };
                rgb.extend(c.map(|x: f64| x as u8));
            }
        }
        rgb
    }

    fn part(whole: &TopGrid, u0: usize, v0: usize, width: usize, height: usize) -> TopGrid {
        TopGrid {
            origin_mm: whole.table_from_px(u0 as f64, v0 as f64),
            width,
            height,
            ..*whole
        }
    }

    /// A look at only the part of the table around a hand (the watcher cuts it so)
    /// is mostly hand: that is no new scene. Before, the memory started again from
    /// that part, learned the hand as the bare table, and once the hand had gone the
    /// bare table there read as "changed" to the end: a ghost hand over the mover's
    /// coin (another renderer's clips, a hand reaching in over an edge).
    #[test]
    fn a_part_filled_by_a_hand_leaves_no_ghost_behind() {
        let table = Table::rectangle(300.0, 200.0);
        let whole = TopGrid::covering(&table, 1.0, 0.0);
        let on_table = |g: &TopGrid| vec![true; g.width * g.height];
        let mut memory = TableMemory::default();
        let bare = paint(&whole, |_| false);
        let bare_view = TopView {
            grid: whole,
            rgb: &bare,
            bgr: false,
        };
        memory.remember(&bare_view, None, |_| Some(true));
        assert!(memory.compare(&bare_view, &on_table(&whole)).is_some());
        // The hand fills most of the part looked at.
        // (45 % of it: more than the new-scene share, less than half, so that the
        // part's own medians still give the exposure.)
        let hand_at = |p: Point| (p - Point::new(150.0, 100.0)).norm() < 38.0;
        let cut = part(&whole, 100, 50, 100, 100);
        let with_hand = paint(&cut, hand_at);
        let hand_view = TopView {
            grid: cut,
            rgb: &with_hand,
            bgr: false,
        };
        let c = memory.compare(&hand_view, &on_table(&cut));
        let c = c.expect("a part mostly hand is compared with the memory, not a new scene");
        let centre = 50 * cut.width + 50;
        assert!(
            memory.changed(&hand_view, &c, centre),
            "the hand is a change"
        );
        // The detector lets the memory learn from such a look (nothing found there).
        memory.remember(&hand_view, Some(&c), |_| Some(true));
        // The hand has gone: the bare table there is no change.
        let gone = paint(&cut, |_| false);
        let gone_view = TopView {
            grid: cut,
            rgb: &gone,
            bgr: false,
        };
        let c = memory
            .compare(&gone_view, &on_table(&cut))
            .expect("the bare table is compared");
        let ghosts = (0..cut.width * cut.height)
            .filter(|&i| memory.changed(&gone_view, &c, i))
            .count();
        assert_eq!(
            ghosts, 0,
            "pixels still read as changed after the hand left"
        );
    }
}
