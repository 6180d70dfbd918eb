//! Where to look, frame by frame. Most of a match is a still table: a coarse top view
//! compared with the view at the last full look tells which part of the table changed
//! since, so `analyse` detects only there (and not at all while nothing changed), and
//! reuses what it saw everywhere else. A fresh full-quality look is taken once the
//! scene settles, and becomes the new reference.
//!
//! Pure: coarse views arrive as bytes on a [`TopGrid`]; the detector's [`Sightings`]
//! are cut and merged by table regions here. Uses: detect, geometry.

use crate::detect::{CoinSighting, FishSighting, Sightings, TopGrid};
use crate::geometry::{FishFootprint, Point};
use crate::model::Pose;

/// An axis-aligned rectangle in table mm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmBox {
    pub min: Point,
    pub max: Point,
}

impl MmBox {
    /// The box of a disc.
    pub fn around(center: Point, radius: f64) -> MmBox {
        MmBox {
            min: Point::new(center.x - radius, center.y - radius),
            max: Point::new(center.x + radius, center.y + radius),
        }
    }

    pub fn grown(&self, by: f64) -> MmBox {
        MmBox {
            min: Point::new(self.min.x - by, self.min.y - by),
            max: Point::new(self.max.x + by, self.max.y + by),
        }
    }

    pub fn union(&self, other: &MmBox) -> MmBox {
        MmBox {
            min: Point::new(self.min.x.min(other.min.x), self.min.y.min(other.min.y)),
            max: Point::new(self.max.x.max(other.max.x), self.max.y.max(other.max.y)),
        }
    }

    pub fn intersects(&self, other: &MmBox) -> bool {
        self.min.x <= other.max.x
            && other.min.x <= self.max.x
            && self.min.y <= other.max.y
            && other.min.y <= self.max.y
    }

    pub fn contains_box(&self, other: &MmBox) -> bool {
        self.min.x <= other.min.x
            && self.min.y <= other.min.y
            && other.max.x <= self.max.x
            && other.max.y <= self.max.y
    }

    pub fn center(&self) -> Point {
        Point::from((self.min.coords + self.max.coords) / 2.0)
    }

    /// Half the diagonal: the radius of a disc covering the box.
    pub fn radius(&self) -> f64 {
        (self.max - self.min).norm() / 2.0
    }
}

/// Tunables of the change gate.
#[derive(Debug, Clone, PartialEq)]
pub struct GateConfig {
    /// A coarse pixel has changed when one of its channels differs by more than this
    /// many grey levels (after the frame's overall exposure is matched).
    pub threshold: u8,
    /// Frames in a row with no change from one to the next before the scene is settled.
    pub settle_frames: u32,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            threshold: 28,
            settle_frames: 3,
        }
    }
}

/// What changed in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The box of everything that differs from the reference view, `None` when
    /// nothing does.
    pub since_reference: Option<MmBox>,
    /// Nothing changed from frame to frame for `settle_frames` frames.
    pub settled: bool,
}

/// Compares coarse top views with a reference view and with the previous frame.
#[derive(Debug, Clone)]
pub struct ChangeGate {
    grid: TopGrid,
    config: GateConfig,
    reference: Option<Vec<u8>>,
    previous: Option<Vec<u8>>,
    current: Vec<u8>,
    still_frames: u32,
    mask: Vec<u8>,
    /// The reference scaled to the current exposure, and that scale.
    matched: Option<Vec<u8>>,
    gain: f32,
    observed: u64,
}

/// Frames between two estimates of the exposure drift.
const GAIN_EVERY: u64 = 8;

impl ChangeGate {
    /// A gate for coarse views (3 bytes a pixel) laid out as `grid` says.
    pub fn new(grid: TopGrid, config: GateConfig) -> ChangeGate {
        ChangeGate {
            grid,
            config,
            reference: None,
            previous: None,
            current: Vec::new(),
            still_frames: 0,
            mask: Vec::new(),
            matched: None,
            gain: 1.0,
            observed: 0,
        }
    }

    /// Compares the next frame's coarse view. Before the first [`rebase`](Self::rebase)
    /// everything counts as changed.
    pub fn observe(&mut self, view: &[u8]) -> Change {
        let n = self.grid.width * self.grid.height;
        let view = &view[..(n * 3).min(view.len())];
        if self.observed % GAIN_EVERY == 0 {
            self.match_exposure(view);
        }
        self.observed += 1;
        let since_reference = match &self.matched {
            Some(reference) if reference.len() == view.len() => changed_box(
                &self.grid,
                reference,
                view,
                self.config.threshold,
                &mut self.mask,
            ),
            _ => Some(self.whole()),
        };
        // A frame that matches the reference needs no look whether or not it matches
        // the previous one: the previous frame is compared with only after a change
        // (half the work while the table is still).
        let moved = since_reference.is_some()
            && match &self.previous {
                Some(prev) if prev.len() == view.len() => any_change(
                    &self.grid,
                    prev,
                    view,
                    self.config.threshold,
                    &mut self.mask,
                ),
                _ => true,
            };
        self.still_frames = if moved { 0 } else { self.still_frames + 1 };
        self.current.clear();
        self.current.extend_from_slice(view);
        std::mem::swap(
            &mut self.current,
            self.previous.get_or_insert_with(Vec::new),
        );
        Change {
            since_reference,
            settled: self.still_frames >= self.config.settle_frames,
        }
    }

    /// The last observed frame becomes the reference: a full look was taken at it.
    pub fn rebase(&mut self) {
        if let Some(prev) = &self.previous {
            self.reference = Some(prev.clone());
            self.matched = Some(prev.clone());
            self.gain = 1.0;
        }
    }

    /// Scales the reference to the exposure of `view`, when the camera's exposure
    /// has drifted enough to matter: a slow drift is no change on the table.
    fn match_exposure(&mut self, view: &[u8]) {
        let Some(reference) = &self.reference else {
            return;
        };
        if reference.len() != view.len() {
            return;
        }
        let gain = exposure_gain(reference, view);
        if (gain - self.gain).abs() < 0.01 {
            return;
        }
        self.gain = gain;
        // Bytes take 256 values: scale each once.
        let scaled: Vec<u8> = (0..=255u8)
            .map(|x| (x as f32 * gain).round().min(255.0) as u8)
            .collect();
        self.matched = Some(reference.iter().map(|&x| scaled[x as usize]).collect());
    }

    /// The whole view's box.
    pub fn whole(&self) -> MmBox {
        let g = &self.grid;
        let a = g.table_from_px(0.0, 0.0);
        let b = g.table_from_px(g.width as f64 - 1.0, g.height as f64 - 1.0);
        MmBox {
            min: Point::new(a.x.min(b.x), a.y.min(b.y)),
            max: Point::new(a.x.max(b.x), a.y.max(b.y)),
        }
    }
}

/// The box (table mm) of the pixels that differ between two views, or `None`.
/// A pixel counts when it and at least one 8-neighbour differ by more than
/// `threshold` in some channel: lone noisy pixels change nothing.
fn changed_box(
    grid: &TopGrid,
    before: &[u8],
    after: &[u8],
    threshold: u8,
    mask: &mut Vec<u8>,
) -> Option<MmBox> {
    let [u0, u1, v0, v1] = changed_pixels(grid, before, after, threshold, mask, false)?;
    // Each pixel stands for a square of its own size around its centre.
    let a = grid.table_from_px(u0 as f64 - 0.5, v0 as f64 - 0.5);
    let b = grid.table_from_px(u1 as f64 + 0.5, v1 as f64 + 0.5);
    Some(MmBox {
        min: Point::new(a.x.min(b.x), a.y.min(b.y)),
        max: Point::new(a.x.max(b.x), a.y.max(b.y)),
    })
}

/// Whether any pixel differs between two views, as [`changed_box`] counts one; it
/// stops at the first (a moving scene shows one within a few rows).
fn any_change(
    grid: &TopGrid,
    before: &[u8],
    after: &[u8],
    threshold: u8,
    mask: &mut Vec<u8>,
) -> bool {
    changed_pixels(grid, before, after, threshold, mask, true).is_some()
}

/// The bounds `[u0, u1, v0, v1]` of the counted pixels of [`changed_box`], or with
/// `first_only` of the first row that has one.
fn changed_pixels(
    grid: &TopGrid,
    before: &[u8],
    after: &[u8],
    threshold: u8,
    mask: &mut Vec<u8>,
    first_only: bool,
) -> Option<[usize; 4]> {
    let (w, h) = (grid.width, grid.height);
    let n = (w * h * 3).min(before.len()).min(after.len());
    // Pixels whose three channels are all there.
    let pixels = n / 3;
    mask.clear();
    mask.resize(w * h, 0);
    let mut bounds: Option<[usize; 4]> = None;
    let mut add_row = |mask: &[u8], v: usize| {
        // The box needs only the row's first and last counted pixel.
        let first = (0..w).find(|&u| counts(mask, w, h, u, v))?;
        let last = (first..w)
            .rev()
            .find(|&u| counts(mask, w, h, u, v))
            .unwrap_or(first);
        let b = bounds.get_or_insert([first, last, v, v]);
        *b = [b[0].min(first), b[1].max(last), b[2].min(v), b[3].max(v)];
        Some(())
    };
    // Most rows of most frames hold no change: a row is first screened with one
    // vectorised pass (the largest difference in it), and only a row over the
    // threshold gets its per-pixel mask. A changed row's pixels are counted once
    // the row after it has its mask (their neighbours are then all known).
    let mut waiting: Option<usize> = None;
    let mut row_changed: Vec<u8> = Vec::with_capacity(3 * w);
    for v in 0..h {
        let (p0, p1) = (v * w, ((v + 1) * w).min(pixels));
        if p0 >= p1 {
            break;
        }
        let (a, b) = (&before[3 * p0..3 * p1], &after[3 * p0..3 * p1]);
        let changed = largest_difference(a, b) > threshold;
        if changed {
            // Each byte tested in one vectorised pass, then a pixel's three gathered.
            row_changed.clear();
            row_changed.extend(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| (x.abs_diff(*y) > threshold) as u8),
            );
            for (m, c) in mask[p0..p1].iter_mut().zip(row_changed.chunks_exact(3)) {
                *m = c[0] | c[1] | c[2];
            }
        }
        if let Some(row) = waiting.take() {
            if add_row(mask, row).is_some() && first_only {
                return bounds;
            }
        }
        if changed {
            waiting = Some(v);
        }
    }
    if let Some(row) = waiting {
        add_row(mask, row);
    }
    bounds
}

/// Whether the changed pixel `(u, v)` of `mask` (w x h) counts: it has a changed
/// 8-neighbour.
fn counts(mask: &[u8], w: usize, h: usize, u: usize, v: usize) -> bool {
    if mask[v * w + u] == 0 {
        return false;
    }
    let mut neighbours = 0;
    for vv in v.saturating_sub(1)..(v + 2).min(h) {
        for uu in u.saturating_sub(1)..(u + 2).min(w) {
            neighbours += mask[vv * w + uu] as u32;
        }
    }
    neighbours >= 2
}

/// The largest difference between two byte slices' elements (the compiler
/// vectorises the fold).
fn largest_difference(a: &[u8], b: &[u8]) -> u8 {
    a.iter()
        .zip(b)
        .fold(0u8, |m, (&x, &y)| m.max(x.abs_diff(y)))
}

/// How much brighter `after` is than `before` overall: the median ratio of a sparse
/// sample of pixels bright enough to say.
fn exposure_gain(before: &[u8], after: &[u8]) -> f32 {
    let mut ratios: Vec<f32> = before
        .chunks_exact(3)
        .zip(after.chunks_exact(3))
        .step_by(13)
        .filter_map(|(a, b)| {
            let (sa, sb) = (
                a.iter().map(|&x| x as f32).sum::<f32>(),
                b.iter().map(|&x| x as f32).sum::<f32>(),
            );
            (sa > 60.0).then_some(sb / sa)
        })
        .collect();
    if ratios.is_empty() {
        return 1.0;
    }
    let mid = ratios.len() / 2;
    let (_, m, _) = ratios.select_nth_unstable_by(mid, |a, b| a.total_cmp(b));
    m.clamp(0.5, 2.0)
}

/// The box a fish's footprint can occupy.
fn fish_box(f: &FishSighting, footprint: &FishFootprint) -> MmBox {
    MmBox::around(f.pose.point(), footprint.reach())
}

fn coin_box(c: &CoinSighting) -> MmBox {
    MmBox::around(c.pt_in_table, c.radius_mm)
}

/// Whether a changed box touches anything seen before (fish or coin, with `margin`).
pub fn touches_items(
    changed: &MmBox,
    seen: &[&Sightings],
    footprint: &FishFootprint,
    margin: f64,
) -> bool {
    let area = changed.grown(margin);
    seen.iter().any(|s| {
        s.fish
            .iter()
            .any(|f| fish_box(f, footprint).intersects(&area))
            || s.coins.iter().any(|c| coin_box(c).intersects(&area))
    })
}

/// Whether a change, while the scene is not settled, lies only over bare table (a hand
/// passing): it touches nothing seen `before` (the reference look and the frame
/// before), and no tag where an earlier settled look saw it and the reference look did
/// not (`unseen_tags`). A tag held still under the flicking hand until the gate settled is
/// missing from the reference; without its place from before, its flight, begun under
/// the hand, was taken for the hand's and not looked at until everything stopped.
pub fn over_bare_table(
    changed: &MmBox,
    before: &[&Sightings],
    unseen_tags: &[Pose],
    footprint: &FishFootprint,
    margin: f64,
) -> bool {
    let area = changed.grown(margin);
    !touches_items(changed, before, footprint, margin)
        && !unseen_tags
            .iter()
            .any(|p| MmBox::around(p.point(), footprint.reach()).intersects(&area))
}

/// The region to look at for a change: the changed box grown by `margin`, then grown
/// again until every item and occluder seen before that it touches lies wholly inside
/// it. An item cut in half by the region's border would be misjudged; so would a hand:
/// the part of it inside a small region is too small to be a hand, and what the look
/// finds in the region replaces what was seen there before, so a finger that moved
/// while the hand lay still took the whole hand away, and the finger joints under it
/// were read as coins.
pub fn region_to_look(
    changed: &MmBox,
    seen: &[&Sightings],
    footprint: &FishFootprint,
    margin: f64,
) -> MmBox {
    let mut region = changed.grown(margin);
    let boxes: Vec<MmBox> = seen
        .iter()
        .flat_map(|s| {
            s.fish
                .iter()
                .map(|f| fish_box(f, footprint))
                .chain(s.coins.iter().map(coin_box))
                .chain(s.occluders.iter().map(|&(c, r)| MmBox::around(c, r)))
        })
        .collect();
    // Each pass can only grow the region; a handful settles any real table.
    for _ in 0..8 {
        let mut grown = region;
        for b in &boxes {
            if b.intersects(&grown) && !grown.contains_box(b) {
                grown = grown.union(&b.grown(1.0));
            }
        }
        if grown == region {
            break;
        }
        region = grown;
    }
    region
}

/// What is seen now: `fresh` (a look at `region` only) plus everything of `reference`
/// wholly outside the region, which cannot have changed.
///
/// A tag of the reference wholly outside the region is still there, so a fresh
/// sighting of the same player's tag inside it that fits no better is something
/// else of that colour: a floor of the player's hue beside a hand reaching past the
/// edge (sweep-029: a red tag at rest, fit 0.86, was replaced by the red-brown floor
/// under the next player's hand, fit 0.71, five times in one clip, each an identity
/// switch). A fresh sighting that fits better wins: the reference may itself have been
/// a poor reading (sweep-017: fit 0.19 on a lit cloth strip while the tag lay
/// elsewhere, where the look at its flick found it at 0.86).
pub fn merge(
    reference: &Sightings,
    fresh: Sightings,
    region: &MmBox,
    footprint: &FishFootprint,
) -> Sightings {
    let outside = |b: MmBox| !b.intersects(region);
    let mut out = fresh;
    for f in &reference.fish {
        if !outside(fish_box(f, footprint)) {
            continue;
        }
        let fresh_fits_better = out
            .fish
            .iter()
            .any(|g| g.player == f.player && g.fit > f.fit);
        if !fresh_fits_better {
            out.fish.retain(|g| g.player != f.player);
            out.fish.push(f.clone());
        }
    }
    for c in &reference.coins {
        if outside(coin_box(c)) {
            out.coins.push(c.clone());
        }
    }
    for &(center, radius) in &reference.occluders {
        if outside(MmBox::around(center, radius)) {
            out.occluders.push((center, radius));
        }
    }
    out.fish.sort_by_key(|f| f.player);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Items;

    fn grid() -> TopGrid {
        TopGrid {
            width: 60,
            height: 40,
            mm_per_px: 2.0,
            origin_mm: Point::new(-10.0, 70.0),
            y_down: true,
        }
    }

    fn blank(grey: u8) -> Vec<u8> {
        vec![grey; 60 * 40 * 3]
    }

    fn paint(view: &mut [u8], u0: usize, v0: usize, side: usize, value: u8) {
        for v in v0..v0 + side {
            for u in u0..u0 + side {
                view[3 * (v * 60 + u)..3 * (v * 60 + u) + 3].fill(value);
            }
        }
    }

    #[test]
    fn nothing_changes_until_something_does_and_then_only_there() {
        let mut gate = ChangeGate::new(grid(), GateConfig::default());
        let still = blank(120);
        assert!(
            gate.observe(&still).since_reference.is_some(),
            "no reference yet"
        );
        gate.rebase();
        for k in 0..3 {
            let c = gate.observe(&still);
            assert_eq!(c.since_reference, None);
            assert_eq!(c.settled, k >= 2, "frame {k}");
        }
        let mut moved = still.clone();
        paint(&mut moved, 20, 10, 5, 250);
        let c = gate.observe(&moved);
        assert!(!c.settled);
        let b = c.since_reference.expect("a change");
        // Pixels 20..25 x 10..15 at 2 mm from (-10, 70), y down.
        assert!(
            (b.min.x - 29.0).abs() < 1e-9 && (b.max.x - 39.0).abs() < 1e-9,
            "{b:?}"
        );
        assert!(
            (b.max.y - 51.0).abs() < 1e-9 && (b.min.y - 41.0).abs() < 1e-9,
            "{b:?}"
        );
    }

    /// The change test written plainly (every pixel, every neighbour): the screened
    /// version must find the same box.
    fn changed_box_plainly(grid: &TopGrid, before: &[u8], after: &[u8], t: u8) -> Option<MmBox> {
        let (w, h) = (grid.width, grid.height);
        let n = (w * h * 3).min(before.len()).min(after.len());
        let at = |u: usize, v: usize| -> u32 {
            let p = v * w + u;
            (3 * p + 2 < n && (0..3).any(|c| before[3 * p + c].abs_diff(after[3 * p + c]) > t))
                as u32
        };
        let mut found: Option<(usize, usize, usize, usize)> = None;
        for v in 0..h {
            for u in 0..w {
                let around: u32 = (v.saturating_sub(1)..(v + 2).min(h))
                    .flat_map(|vv| (u.saturating_sub(1)..(u + 2).min(w)).map(move |uu| (uu, vv)))
                    .map(|(uu, vv)| at(uu, vv))
                    .sum();
                if at(u, v) == 1 && around >= 2 {
                    let (a, b, c, d) = found.unwrap_or((u, u, v, v));
                    found = Some((a.min(u), b.max(u), c.min(v), d.max(v)));
                }
            }
        }
        let (u0, u1, v0, v1) = found?;
        let a = grid.table_from_px(u0 as f64 - 0.5, v0 as f64 - 0.5);
        let b = grid.table_from_px(u1 as f64 + 0.5, v1 as f64 + 0.5);
        Some(MmBox {
            min: Point::new(a.x.min(b.x), a.y.min(b.y)),
            max: Point::new(a.x.max(b.x), a.y.max(b.y)),
        })
    }

    #[test]
    fn the_screened_change_test_finds_what_the_plain_one_does() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let g = grid();
        let mut mask = Vec::new();
        for case in 0..300 {
            let before: Vec<u8> = (0..60 * 40 * 3)
                .map(|_| rng.random_range(90..110))
                .collect();
            let mut after = before.clone();
            // A few changed bytes, lone or in clumps, anywhere (edges included).
            for _ in 0..rng.random_range(0..6) {
                let (u, v) = (rng.random_range(0..60), rng.random_range(0..40));
                let side = rng.random_range(1..4);
                for vv in v..(v + side).min(40) {
                    for uu in u..(u + side).min(60) {
                        after[3 * (vv * 60 + uu) + rng.random_range(0..3)] = 250;
                    }
                }
            }
            // Sometimes a view cut short, as a truncated buffer would be.
            let cut = if case % 7 == 0 {
                rng.random_range(1..after.len())
            } else {
                after.len()
            };
            let got = changed_box(&g, &before, &after[..cut], 28, &mut mask);
            let want = changed_box_plainly(&g, &before, &after[..cut], 28);
            assert_eq!(got, want, "case {case}");
            let any = any_change(&g, &before, &after[..cut], 28, &mut mask);
            assert_eq!(any, want.is_some(), "case {case}");
        }
    }

    #[test]
    fn noise_and_exposure_drift_are_not_change() {
        let mut gate = ChangeGate::new(grid(), GateConfig::default());
        let base = blank(100);
        gate.observe(&base);
        gate.rebase();
        // 40 % brighter overall (beyond the threshold), and one lone pixel far off:
        // within a few frames the exposure is matched and nothing has changed.
        let mut drift = blank(140);
        paint(&mut drift, 5, 5, 1, 255);
        let changes: Vec<_> = (0..GAIN_EVERY + 1)
            .map(|_| gate.observe(&drift).since_reference)
            .collect();
        assert_eq!(changes.last(), Some(&None), "{changes:?}");
        // A real change under the new exposure still shows.
        let mut moved = drift.clone();
        paint(&mut moved, 30, 20, 3, 20);
        assert!(gate.observe(&moved).since_reference.is_some());
    }

    #[test]
    fn a_region_grows_to_hold_whole_items_and_merging_keeps_the_rest() {
        let items = Items::default_set();
        let footprint = FishFootprint::new(&items);
        let fish = |player, x, y| FishSighting {
            player,
            pose: Pose::fish(x, y, 0.0),
            visible_fraction: 1.0,
            fit: 1.0,
            exposure_share: None,
        };
        let coin = |x, y| CoinSighting {
            pt_in_table: Point::new(x, y),
            radius_mm: items.coin.radius,
            rim_seen: 1.0,
            streak: None,
            rim_sectors: u64::MAX >> 28,
            rim_gap_in_view: false,
        };
        let reference = Sightings {
            fish: vec![fish(0, 100.0, 100.0), fish(1, 600.0, 400.0)],
            coins: vec![coin(100.0, 100.0), coin(600.0, 400.0)],
            ..Default::default()
        };
        let changed = MmBox::around(Point::new(100.0 + footprint.reach(), 100.0), 3.0);
        assert!(touches_items(&changed, &[&reference], &footprint, 0.0));
        let far = MmBox::around(Point::new(350.0, 250.0), 3.0);
        assert!(!touches_items(&far, &[&reference], &footprint, 5.0));
        let region = region_to_look(&changed, &[&reference], &footprint, 5.0);
        assert!(region.contains_box(&MmBox::around(Point::new(100.0, 100.0), footprint.reach())));
        assert!(!region.intersects(&MmBox::around(Point::new(600.0, 400.0), footprint.reach())));
        // The fresh look found fish 0 moved and its coin gone; fish 1 and its coin stay.
        let fresh = Sightings {
            fish: vec![fish(0, 110.0, 100.0)],
            occluders: vec![(Point::new(90.0, 90.0), 30.0)],
            ..Default::default()
        };
        let merged = merge(&reference, fresh.clone(), &region, &footprint);
        assert_eq!(merged.fish.len(), 2);
        assert_eq!(merged.fish[0].pose.x, 110.0);
        assert_eq!(merged.fish[1].pose.x, 600.0);
        assert_eq!(merged.coins, vec![coin(600.0, 400.0)]);
        assert_eq!(merged.occluders.len(), 1);
        // Something of fish 1's colour inside the region that fits worse is not
        // fish 1, which lies unchanged outside it; one that fits better is.
        for (fit, x) in [(0.7, 600.0), (1.2, 90.0)] {
            let mut seen = fresh.clone();
            seen.fish.push(FishSighting {
                fit,
                ..fish(1, 90.0, 130.0)
            });
            let merged = merge(&reference, seen, &region, &footprint);
            assert_eq!(merged.fish.len(), 2);
            assert_eq!(merged.fish[1].pose.x, x, "fit {fit}: {merged:?}");
        }
    }

    /// Another renderer's clip at 1920x1080: the hand held the mover's tag still until
    /// the gate settled, so the reference look saw a hand and no tag there; the tag's
    /// flight, begun under the hand, touched nothing seen before and was taken for the
    /// hand for 10 frames, until everything stopped: a collision never looked at, and
    /// two coins' names exchanged.
    #[test]
    fn a_change_where_a_tag_lay_hidden_at_the_settled_look_may_be_the_tag_moving() {
        let footprint = FishFootprint::new(&Items::default_set());
        let tag = |player, x, y| FishSighting {
            player,
            pose: Pose::fish(x, y, 0.0),
            visible_fraction: 1.0,
            fit: 1.0,
            exposure_share: None,
        };
        // The settled look saw tag 1 and, over tag 0, only the hand.
        let reference = Sightings {
            fish: vec![tag(1, 200.0, 100.0)],
            occluders: vec![(Point::new(700.0, 500.0), 60.0)],
            ..Default::default()
        };
        let hidden = [Pose::fish(710.0, 480.0, 0.0)];
        let flight = MmBox::around(Point::new(740.0, 560.0), 30.0);
        assert!(!over_bare_table(
            &flight,
            &[&reference],
            &hidden,
            &footprint,
            12.0
        ));
        assert!(over_bare_table(
            &flight,
            &[&reference],
            &[],
            &footprint,
            12.0
        ));
        let near_tag = MmBox::around(Point::new(200.0 + footprint.reach(), 100.0), 3.0);
        assert!(!over_bare_table(
            &near_tag,
            &[&reference],
            &[],
            &footprint,
            12.0
        ));
        // A hand over bare table, away from every tag, leaves what was seen as it was,
        // also when the frame before added the hand's disc.
        let bare = MmBox::around(Point::new(450.0, 300.0), 40.0);
        assert!(over_bare_table(
            &bare,
            &[&reference],
            &hidden,
            &footprint,
            12.0
        ));
        let previous = Sightings {
            occluders: vec![(bare.center(), bare.radius())],
            ..reference.clone()
        };
        assert!(over_bare_table(
            &bare,
            &[&reference, &previous],
            &hidden,
            &footprint,
            12.0
        ));
    }

    /// Another renderer's clip (a hand lying still beside the mover's tag, one finger
    /// moving): the change was a finger's width, the region a finger's width, and the
    /// look there replaced the whole hand with the nothing it found (too little of a
    /// hand to be one); the finger joints left in view were read as coins, and the
    /// mover's coin, hidden in the finger's shadow, was matched to one of them, its
    /// shot starting 23 frames before the flick.
    #[test]
    fn a_finger_moving_under_a_still_hand_is_looked_at_with_the_whole_hand() {
        let footprint = FishFootprint::new(&Items::default_set());
        let hand = [
            (Point::new(690.0, 170.0), 67.0),
            (Point::new(750.0, 75.0), 53.0),
        ];
        let reference = Sightings {
            occluders: hand.to_vec(),
            ..Default::default()
        };
        let finger = MmBox::around(Point::new(745.0, 125.0), 5.0);
        let region = region_to_look(&finger, &[&reference], &footprint, 5.0);
        for (centre, radius) in hand {
            assert!(
                region.contains_box(&MmBox::around(centre, radius)),
                "the region {region:?} cuts the hand's disc at {centre:?}"
            );
        }
        // Nothing near: the region stays the change's.
        let far = MmBox::around(Point::new(200.0, 500.0), 5.0);
        assert_eq!(
            region_to_look(&far, &[&reference], &footprint, 5.0),
            far.grown(5.0)
        );
    }
}
