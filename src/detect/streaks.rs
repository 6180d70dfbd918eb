//! Coins too fast to show a rim: motion-blur streaks in a top-down view (pure Rust).
//!
//! A coin that moves `L` mm while the shutter is open leaves a stadium `2R` wide and
//! `2R + L` long in which every point shows the coin for only the part of the
//! exposure the coin covered it: the picture there is a mix of the table and the
//! coin, `table + a·(coin − table)`, with `a` the covered fraction. However long the
//! streak, the covered fractions add up to one coin's area (the coin's light is only
//! spread out). This module finds such streaks:
//!
//! 1. Each pixel's colour is read as "how much coin" (`a`) by a matched filter along
//!    `coin − table`, taken against the bare table as last seen still at that pixel
//!    ([`StreakMemory`]: the table's own grain, seams and stains are no evidence, only
//!    what changed is) and whitened by the spread of what is left (noise, exposure
//!    drift); also how far the colour lies off that line.
//! 2. Smoothed `a` is thresholded (relative to its noise) into connected regions,
//!    away from what is already explained: found tags (grown by a few mm), found
//!    coins, occluders (a hand) and everything off the table or never seen bare.
//! 3. Each region about a coin wide is fitted with the blur model of a disc of the
//!    known radius swept along a segment (least squares over the segment's ends, an
//!    amplitude and a local background), and kept only if it is that: amplitude
//!    about one coin, clearly longer than a coin, coloured along `coin − table`, well
//!    above the noise, away from hands and found coins, mostly seen, and of the
//!    coin's width when the width is left free.
//!
//! Everything is in physical units (mm, the coin radius) and learned looks; nothing
//! depends on how the picture was made. Precision comes before recall: a phantom
//! coin can change a score, a missed streak only leaves the tracker to predict.
//!
//! Uses: geometry, and detect's views (its [`TopView`]); called by [`super::Detector`].

use super::{TopGrid, TopView};
use crate::geometry::{Disc, PlacedFish, Point};
use nalgebra::{Matrix3, Vector2, Vector3};

/// A coin's motion-blur streak: the segment its centre swept while the shutter was
/// open (the two ends in no particular order), table mm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoinStreak {
    pub from: Point,
    pub to: Point,
    /// How sure the fit is, 0..1 (how much of the region the model explains).
    pub confidence: f64,
}

impl CoinStreak {
    pub fn midpoint(&self) -> Point {
        Point::from((self.from.coords + self.to.coords) / 2.0)
    }

    pub fn length(&self) -> f64 {
        (self.to - self.from).norm()
    }
}

/// What the streak search needs from the detector for one view.
pub struct StreakScene<'a> {
    pub view: &'a TopView<'a>,
    /// Per pixel of the view: on the table.
    pub on_table: &'a [bool],
    /// Per pixel: under an occluder (a hand) when > 0.5.
    pub hidden: &'a [f32],
    /// A coin's colour, red-green-blue (learned from coins seen in holes).
    pub coin_rgb: [f64; 3],
    pub coin_radius: f64,
    /// Tags found in this view: they explain what lies on and around them.
    pub fish: &'a [PlacedFish],
    /// Coins found in this view (round, not streaked).
    pub coins: &'a [Disc],
}

/// Tunables, in physical units and in units of the coin's own contrast.
#[derive(Debug, Clone, PartialEq)]
pub struct StreakConfig {
    /// Shortest sweep reported, in coin radii: a coin blurred less keeps a round rim.
    pub min_travel_radii: f64,
    /// Longest sweep reported, mm.
    pub max_travel_mm: f64,
    /// The fitted coin amount must lie in this range (1 = one coin's worth of light).
    pub amplitude: (f64, f64),
    /// Smallest amplitude over its standard error.
    pub min_snr: f64,
    /// Tags and coins found explain this much around them, mm.
    pub explained_margin_mm: f64,
    /// A streak this close to an occluder is left alone, mm (a hand's blurred rim).
    pub occluder_margin_mm: f64,
    /// Largest share of a streak's area that may be unseen (off the table, under a tag).
    pub max_unseen: f64,
    /// Largest colour distance off the table-to-coin line over the distance along
    /// it (both squared, in units of the table's spread) over the streak's core.
    pub max_off_line: f64,
    /// The radius the region itself prefers must lie in this range, in coin radii
    /// (an edge's blur makes a sweep look a little wider).
    pub width: (f64, f64),
}

impl Default for StreakConfig {
    fn default() -> Self {
        StreakConfig {
            min_travel_radii: 1.0,
            max_travel_mm: 250.0,
            amplitude: (0.65, 1.6),
            min_snr: 12.0,
            explained_margin_mm: 3.0,
            occluder_margin_mm: 6.0,
            max_unseen: 0.3,
            max_off_line: 0.25,
            width: (0.85, 1.2),
        }
    }
}

/// Why a candidate region is not reported (for tests and tuning).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Streak,
    TooShort,
    TooLong,
    Amplitude,
    Faint,
    Width,
    Colour,
    Unseen,
    NearOccluder,
    NearCoin,
}

/// A fitted region and what was measured on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub streak: CoinStreak,
    pub amplitude: f64,
    pub snr: f64,
    /// The radius the region itself prefers, over the coin's (measured only when
    /// every other test passed, else NaN).
    pub width_ratio: f64,
    pub off_line: f64,
    pub unseen: f64,
    /// The most coin seen just beyond an end or beside the sweep, over its core's.
    pub around: f64,
    pub verdict: Verdict,
}

/// The streaks in one view.
pub fn find_streaks(scene: &StreakScene, config: &StreakConfig) -> Vec<CoinStreak> {
    candidates(scene, config)
        .into_iter()
        .filter(|c| c.verdict == Verdict::Streak)
        .map(|c| c.streak)
        .collect()
}

/// Per-pixel evidence: coin amount `a`, off-line distance, and what may be used.
struct Evidence {
    w: usize,
    h: usize,
    a: Vec<f32>,
    off: Vec<f32>,
    /// 0 usable; else why not (bits).
    mask: Vec<u8>,
    /// Standard deviation of `a` on bare table.
    sigma_a: f64,
    /// The exposure now over the remembered table's, per channel.
    gain: [f64; 3],
    /// Grey levels of noise about the reference (the largest channel's).
    noise: f64,
}

const OFF_TABLE: u8 = 1;
const EXPLAINED: u8 = 2;
const NEAR_HAND: u8 = 4;
/// No remembered bare table there yet (only when a memory is used).
const NO_REFERENCE: u8 = 8;
/// What the fit cannot use.
const UNSEEN: u8 = OFF_TABLE | EXPLAINED | NO_REFERENCE;

/// Every fitted region with its verdict (no memory of earlier views).
pub fn candidates(scene: &StreakScene, config: &StreakConfig) -> Vec<Candidate> {
    run(scene, config, None).map_or(Vec::new(), |r| r.0)
}

/// What the table looked like where nothing was going on, remembered from view to
/// view in the grid of the largest view seen: the table's own pattern (grain, seams,
/// stains) is then no evidence, only what changed is. A view of another scale, or
/// not on the remembered pixels, finds nothing (precision first).
#[derive(Debug, Clone, Default)]
pub struct StreakMemory {
    grid: Option<TopGrid>,
    rgb: Vec<[f32; 3]>,
    valid: Vec<bool>,
    /// Each pixel as last seen (in the remembered exposure), to tell still from moving.
    last: Vec<[f32; 3]>,
    last_valid: Vec<bool>,
}

impl StreakMemory {
    /// Where pixel (0, 0) of a view lies in the remembered grid, if the view lies
    /// wholly inside it on the same pixels.
    fn offset(&self, g: &TopGrid) -> Option<(usize, usize)> {
        self.grid.as_ref()?.offset_of(g)
    }

    /// The streaks in one view, read against what the table looked like before;
    /// then remembers the still, unexplained table of this view.
    pub fn find(&mut self, scene: &StreakScene, config: &StreakConfig) -> Vec<CoinStreak> {
        let g = scene.view.grid;
        let fits = self.offset(&g).is_some();
        let larger = self
            .grid
            .is_none_or(|m| g.width * g.height > m.width * m.height);
        if !fits && larger {
            let n = g.width * g.height;
            *self = StreakMemory {
                grid: Some(g),
                rgb: vec![[0.0; 3]; n],
                valid: vec![false; n],
                last: vec![[0.0; 3]; n],
                last_valid: vec![false; n],
            };
        }
        // A view off the remembered pixels has no bare table to be read against.
        let Some(at) = self.offset(&g) else {
            return Vec::new();
        };
        let at = Some(at);
        let Some((cands, ev, _)) = run(scene, config, at.map(|o| (&*self, o))) else {
            // Nothing to judge yet (a first look): remember the view as last seen.
            if let (Some((u0, v0)), Some(m)) = (at, self.grid) {
                if scene.view.rgb.len() >= 3 * g.width * g.height {
                    for v in 0..g.height {
                        for u in 0..g.width {
                            let j = (v + v0) * m.width + u + u0;
                            let x = pixel_rgb(scene.view, v * g.width + u);
                            self.last[j] = [x[0] as f32, x[1] as f32, x[2] as f32];
                            self.last_valid[j] = true;
                        }
                    }
                }
            }
            return Vec::new();
        };
        if let (Some((u0, v0)), Some(m)) = (at, self.grid) {
            // Still: no channel changed by more than the noise allows since last seen.
            let still = (4.0 * ev.noise).clamp(6.0, 16.0);
            for v in 0..g.height {
                for u in 0..g.width {
                    let i = v * g.width + u;
                    let j = (v + v0) * m.width + u + u0;
                    let x = pixel_rgb(scene.view, i);
                    let now = [
                        (x[0] / ev.gain[0]) as f32,
                        (x[1] / ev.gain[1]) as f32,
                        (x[2] / ev.gain[2]) as f32,
                    ];
                    // Bare table (nothing found on it, no hand) that stood still since
                    // it was last seen is the table's own look; anything moving is not.
                    if ev.mask[i] & !NO_REFERENCE == 0
                        && self.last_valid[j]
                        && (0..3).all(|k| ((now[k] - self.last[j][k]) as f64).abs() <= still)
                    {
                        self.rgb[j] = now;
                        self.valid[j] = true;
                    }
                    self.last[j] = now;
                    self.last_valid[j] = ev.mask[i] & OFF_TABLE == 0;
                }
            }
        }
        cands
            .into_iter()
            .filter(|c| c.verdict == Verdict::Streak)
            .map(|c| c.streak)
            .collect()
    }
}

fn pixel_rgb(view: &TopView, i: usize) -> Vector3<f64> {
    let p = &view.rgb[3 * i..3 * i + 3];
    if view.bgr {
        Vector3::new(p[2] as f64, p[1] as f64, p[0] as f64)
    } else {
        Vector3::new(p[0] as f64, p[1] as f64, p[2] as f64)
    }
}

/// The candidates, the evidence they came from, and which pixels lay in any region.
fn run(
    scene: &StreakScene,
    config: &StreakConfig,
    memory: Option<(&StreakMemory, (usize, usize))>,
) -> Option<(Vec<Candidate>, Evidence, Vec<bool>)> {
    let g = scene.view.grid;
    let (w, h) = (g.width, g.height);
    let n = w * h;
    if n == 0
        || scene.view.rgb.len() < 3 * n
        || scene.on_table.len() < n
        || scene.hidden.len() < n
        || g.mm_per_px <= 0.0
        || scene.coin_radius <= 0.0
    {
        return None;
    }
    let ev = evidence(scene, config, memory)?;
    let r_px = scene.coin_radius / g.mm_per_px;
    // Smoothing over about a coin radius fills the gaps a stroboscopic blur leaves
    // and averages the noise, without widening the streak much.
    let k = ((r_px / 2.0).round() as usize).max(1);
    let s = masked_box_mean(&ev.a, &ev.mask, w, h, k);
    let sigma_s = ev.sigma_a / (2 * k + 1) as f64;
    let hi = (0.10f64).max(6.0 * sigma_s) as f32;
    let lo = (0.05f64).max(3.0 * sigma_s) as f32;
    let regions = regions_above(&s, &ev.mask, w, h, lo, hi);
    let min_area = 0.5 * std::f64::consts::PI * r_px * r_px;
    // The longest sweep, a little wider than a coin.
    let max_area = 3.0 * r_px * (config.max_travel_mm / g.mm_per_px + 3.0 * r_px);
    let mut out = Vec::new();
    let mut busy = vec![false; n];
    for region in regions {
        for &i in &region {
            busy[i] = true;
        }
        if (region.len() as f64) < min_area || region.len() as f64 > max_area {
            continue;
        }
        // Beside a hand nothing is told from its blurred rim: no fit.
        if region.iter().any(|&i| ev.mask[i] & NEAR_HAND != 0) {
            continue;
        }
        if let Some(c) = fit_region(scene, config, &ev, &s, &region) {
            out.push(c);
        }
    }
    Some((out, ev, busy))
}

fn evidence(
    scene: &StreakScene,
    config: &StreakConfig,
    memory: Option<(&StreakMemory, (usize, usize))>,
) -> Option<Evidence> {
    let g = scene.view.grid;
    let (w, h) = (g.width, g.height);
    let n = w * h;
    let rgb = |i: usize| pixel_rgb(scene.view, i);
    // The remembered table under a view pixel, if any.
    let remembered = |i: usize| -> Option<Vector3<f64>> {
        let (m, (u0, v0)) = memory?;
        let mg = m.grid?;
        let j = (i / w + v0) * mg.width + i % w + u0;
        m.valid[j].then(|| Vector3::new(m.rgb[j][0] as f64, m.rgb[j][1] as f64, m.rgb[j][2] as f64))
    };
    // What is already explained, and the hand's surroundings.
    let mut explained = vec![0u8; n];
    let hand: Vec<u8> = scene.hidden[..n].iter().map(|&x| (x > 0.5) as u8).collect();
    let margin = config.explained_margin_mm;
    for f in scene.fish {
        mark_polygon(&g, &f.outline, margin, &mut explained);
    }
    for c in scene.coins {
        let reach = c.radius + margin;
        let (lo, hi) = px_box(&g, c.center, reach, w, h);
        for v in lo.1..hi.1 {
            for u in lo.0..hi.0 {
                if (g.table_from_px(u as f64, v as f64) - c.center).norm() <= reach {
                    explained[v * w + u] = 1;
                }
            }
        }
    }
    let near_hand = dilate(
        &hand,
        w,
        h,
        (config.occluder_margin_mm / g.mm_per_px).ceil() as usize,
    );
    let mut mask = vec![0u8; n];
    for i in 0..n {
        mask[i] = if scene.on_table[i] { 0 } else { OFF_TABLE }
            | if explained[i] != 0 { EXPLAINED } else { 0 }
            | if near_hand[i] != 0 { NEAR_HAND } else { 0 };
        // With a memory, only what changed since the table was seen bare is evidence:
        // where it was never seen bare, the table's own pattern could pass for a coin.
        if memory.is_some() && remembered(i).is_none() {
            mask[i] |= NO_REFERENCE;
        }
    }
    // The table's colour and spread, from a sparse sample of usable pixels.
    let step = 2;
    let mut sample: Vec<Vector3<f64>> = Vec::new();
    let mut sample_at: Vec<usize> = Vec::new();
    for v in (0..h).step_by(step) {
        for u in (0..w).step_by(step) {
            let i = v * w + u;
            // The table's mean colour comes from all of its bare pixels.
            if mask[i] & !NO_REFERENCE == 0 {
                sample.push(rgb(i));
                sample_at.push(i);
            }
        }
    }
    if sample.len() < 200 {
        return None;
    }
    let median = |k: usize| -> f64 {
        let mut c: Vec<f64> = sample.iter().map(|x| x[k]).collect();
        let mid = c.len() / 2;
        *c.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1
    };
    let table = Vector3::new(median(0), median(1), median(2));
    // The exposure may have drifted since the table was remembered: one gain a channel.
    let mut gain = [1.0; 3];
    let pairs: Vec<(Vector3<f64>, Vector3<f64>)> = sample_at
        .iter()
        .filter_map(|&i| remembered(i).map(|m| (rgb(i), m)))
        .collect();
    if pairs.len() >= 200 {
        for (k, gk) in gain.iter_mut().enumerate() {
            let mut r: Vec<f64> = pairs
                .iter()
                .filter(|(_, m)| m[k] > 8.0)
                .map(|(x, m)| x[k] / m[k])
                .collect();
            if !r.is_empty() {
                let mid = r.len() / 2;
                *gk = *r.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1;
            }
        }
    }
    let reference = |i: usize| -> Vector3<f64> {
        match remembered(i) {
            Some(m) => Vector3::new(m[0] * gain[0], m[1] * gain[1], m[2] * gain[2]),
            None => table,
        }
    };
    // The spread about the reference where the evidence will be read: the
    // remembered table where there is one.
    let referenced: Vec<usize> = sample_at
        .iter()
        .copied()
        .filter(|&i| mask[i] & NO_REFERENCE == 0)
        .collect();
    let spread_at = if referenced.len() >= 200 {
        &referenced
    } else {
        &sample_at
    };
    let devs: Vec<Vector3<f64>> = spread_at.iter().map(|&i| rgb(i) - reference(i)).collect();
    let mad = |k: usize| -> f64 {
        let mut c: Vec<f64> = devs.iter().map(|x| x[k].abs()).collect();
        let mid = c.len() / 2;
        *c.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1
    };
    let spread = Vector3::new(mad(0), mad(1), mad(2)) * 1.4826;
    let mut cov = Matrix3::zeros();
    let mut count = 0.0;
    for &d in &devs {
        if (0..3).all(|k| d[k].abs() <= 4.0 * spread[k].max(1.0)) {
            cov += d * d.transpose();
            count += 1.0;
        }
    }
    if count < 100.0 {
        return None;
    }
    // A grey level of quantisation at least in every direction.
    cov = cov / count + Matrix3::identity();
    let inv = cov.try_inverse()?;
    let coin = Vector3::from(scene.coin_rgb);
    let d = coin - table;
    let q = d.dot(&(inv * d));
    if q <= 0.0 {
        return None;
    }
    let sigma_a = 1.0 / q.sqrt();
    // A coin no clearer than this against the table cannot be told from its grain.
    if sigma_a > 0.15 {
        return None;
    }
    let wv = inv * d / q;
    let mut a = vec![0f32; n];
    let mut off = vec![0f32; n];
    for i in 0..n {
        if mask[i] & OFF_TABLE != 0 {
            continue;
        }
        let x = rgb(i) - reference(i);
        let ai = wv.dot(&x);
        let r = x - d * ai;
        a[i] = ai as f32;
        off[i] = r.dot(&(inv * r)) as f32;
    }
    Some(Evidence {
        w,
        h,
        a,
        off,
        mask,
        sigma_a,
        gain,
        noise: spread.max(),
    })
}

/// Marks the pixels inside a polygon (table mm) or within `margin` mm of its outline:
/// rows filled between the outline's crossings, the outline stamped with squares.
fn mark_polygon(g: &TopGrid, poly: &[Point], margin: f64, out: &mut [u8]) {
    let (w, h) = (g.width, g.height);
    let n = poly.len();
    if n < 3 {
        return;
    }
    let px: Vec<(f64, f64)> = poly.iter().map(|&p| g.px_from_table(p)).collect();
    let (v_lo, v_hi) = px
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let mut xs = Vec::new();
    let v_end = v_hi.floor().min(h as f64 - 1.0);
    let rows = if v_end >= 0.0 {
        v_lo.ceil().max(0.0) as usize..v_end as usize + 1
    } else {
        0..0
    };
    for v in rows {
        let y = v as f64;
        xs.clear();
        for k in 0..n {
            let (a, b) = (px[k], px[(k + 1) % n]);
            if (a.1 <= y) != (b.1 <= y) {
                xs.push(a.0 + (y - a.1) / (b.1 - a.1) * (b.0 - a.0));
            }
        }
        xs.sort_by(|a, b| a.total_cmp(b));
        for pair in xs.chunks(2) {
            if let [x0, x1] = *pair {
                let u0 = x0.ceil().max(0.0) as usize;
                let u1 = x1.floor().min(w as f64 - 1.0);
                if u1 >= 0.0 {
                    for u in u0..=u1 as usize {
                        out[v * w + u] = 1;
                    }
                }
            }
        }
    }
    let k = (margin / g.mm_per_px).ceil() as i64;
    for j in 0..n {
        let (a, b) = (px[j], px[(j + 1) % n]);
        let steps = ((b.0 - a.0).hypot(b.1 - a.1) * 2.0).ceil().max(1.0) as usize;
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (cu, cv) = (
                (a.0 + (b.0 - a.0) * t).round() as i64,
                (a.1 + (b.1 - a.1) * t).round() as i64,
            );
            for dv in -k..=k {
                for du in -k..=k {
                    let (u, v) = (cu + du, cv + dv);
                    if u >= 0 && v >= 0 && (u as usize) < w && (v as usize) < h {
                        out[v as usize * w + u as usize] = 1;
                    }
                }
            }
        }
    }
}

/// Pixel bounds `[lo, hi)` of a disc, clamped to the view.
fn px_box(g: &TopGrid, c: Point, r: f64, w: usize, h: usize) -> ((usize, usize), (usize, usize)) {
    let (cu, cv) = g.px_from_table(c);
    let rp = r / g.mm_per_px + 1.0;
    let clamp = |x: f64, m: usize| x.max(0.0).min(m as f64) as usize;
    (
        (clamp((cu - rp).floor(), w), clamp((cv - rp).floor(), h)),
        (
            clamp((cu + rp).ceil() + 1.0, w),
            clamp((cv + rp).ceil() + 1.0, h),
        ),
    )
}

/// Summed-area table of `f(i)` over a `w` x `h` grid, `(w + 1) * (h + 1)` entries.
fn integral(w: usize, h: usize, f: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut s = vec![0.0; (w + 1) * (h + 1)];
    for v in 0..h {
        let mut row = 0.0;
        for u in 0..w {
            row += f(v * w + u);
            s[(v + 1) * (w + 1) + u + 1] = s[v * (w + 1) + u + 1] + row;
        }
    }
    s
}

fn box_sum(s: &[f64], w: usize, h: usize, u: usize, v: usize, k: usize) -> f64 {
    let (u0, v0) = (u.saturating_sub(k), v.saturating_sub(k));
    let (u1, v1) = ((u + k + 1).min(w), (v + k + 1).min(h));
    let ww = w + 1;
    s[v1 * ww + u1] - s[v0 * ww + u1] - s[v1 * ww + u0] + s[v0 * ww + u0]
}

/// 1 where any pixel within `k` (square) is set.
fn dilate(bits: &[u8], w: usize, h: usize, k: usize) -> Vec<u8> {
    if !bits.iter().any(|&b| b != 0) {
        return vec![0; w * h];
    }
    let s = integral(w, h, |i| bits[i] as f64);
    let mut out = vec![0u8; w * h];
    for v in 0..h {
        for u in 0..w {
            out[v * w + u] = (box_sum(&s, w, h, u, v, k) > 0.5) as u8;
        }
    }
    out
}

/// The mean of `a` over the usable pixels of each `(2k + 1)` square (0 where none).
fn masked_box_mean(a: &[f32], mask: &[u8], w: usize, h: usize, k: usize) -> Vec<f32> {
    let usable = |i: usize| mask[i] & UNSEEN == 0;
    let sa = integral(w, h, |i| if usable(i) { a[i] as f64 } else { 0.0 });
    let sn = integral(w, h, |i| usable(i) as u8 as f64);
    let mut out = vec![0f32; w * h];
    for v in 0..h {
        for u in 0..w {
            let i = v * w + u;
            if !usable(i) {
                continue;
            }
            let c = box_sum(&sn, w, h, u, v, k);
            if c > 0.0 {
                out[i] = (box_sum(&sa, w, h, u, v, k) / c) as f32;
            }
        }
    }
    out
}

/// Connected regions (8-neighbour) of usable pixels above `lo` holding a pixel above `hi`.
fn regions_above(s: &[f32], mask: &[u8], w: usize, h: usize, lo: f32, hi: f32) -> Vec<Vec<usize>> {
    let mut seen = vec![false; w * h];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if seen[start] || s[start] < hi || mask[start] & UNSEEN != 0 {
            continue;
        }
        let mut region = Vec::new();
        seen[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            region.push(i);
            let (u, v) = ((i % w) as i64, (i / w) as i64);
            for dv in -1..=1 {
                for du in -1..=1 {
                    let (uu, vv) = (u + du, v + dv);
                    if uu < 0 || vv < 0 || uu >= w as i64 || vv >= h as i64 {
                        continue;
                    }
                    let j = vv as usize * w + uu as usize;
                    if !seen[j] && s[j] >= lo && mask[j] & UNSEEN == 0 {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        out.push(region);
    }
    out
}

/// The share of the exposure during which a disc of radius `r` swept from `p0` to `p1`
/// covers `p` (all in pixels).
fn coverage(p: Vector2<f64>, p0: Vector2<f64>, p1: Vector2<f64>, r: f64) -> f64 {
    let d = p1 - p0;
    let len = d.norm();
    let q = p - p0;
    if len < 1e-6 {
        return (q.norm() <= r) as u8 as f64;
    }
    let e = d / len;
    let along = q.dot(&e);
    let perp = (q.x * e.y - q.y * e.x).abs();
    if perp >= r {
        return 0.0;
    }
    let half = (r * r - perp * perp).sqrt();
    let lo = (along - half).max(0.0);
    let hi = (along + half).min(len);
    ((hi - lo).max(0.0)) / len
}

/// Pixels of a fit window: position, coin amount, usable.
struct Window {
    pts: Vec<(Vector2<f64>, f64)>,
}

/// The pixels `[first, end)` along one axis that cover `a..b` (either order) grown by
/// `grow` pixels, clipped to `0..len`.
fn pixel_span(a: f64, b: f64, grow: f64, len: usize) -> (usize, usize) {
    (
        (a.min(b) - grow).floor().max(0.0) as usize,
        ((a.max(b) + grow).ceil() as usize + 1).min(len),
    )
}

/// Least squares `a ≈ amp·m + bg` for a sweep: (residual sum, amp, bg, Σ(m − m̄)²).
fn solve(win: &Window, p0: Vector2<f64>, p1: Vector2<f64>, r: f64) -> (f64, f64, f64, f64) {
    let (mut sm, mut sa, mut smm, mut sma, mut saa) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let n = win.pts.len() as f64;
    for &(p, a) in &win.pts {
        let m = coverage(p, p0, p1, r);
        sm += m;
        sa += a;
        smm += m * m;
        sma += m * a;
        saa += a * a;
    }
    if n < 3.0 {
        return (f64::INFINITY, 0.0, 0.0, 0.0);
    }
    let var_m = smm - sm * sm / n;
    if var_m <= 1e-9 {
        return (f64::INFINITY, 0.0, 0.0, 0.0);
    }
    let amp = (sma - sm * sa / n) / var_m;
    let bg = (sa - amp * sm) / n;
    // Σ(a − amp·m − bg)², expanded.
    let ss =
        saa + amp * amp * smm + n * bg * bg - 2.0 * amp * sma - 2.0 * bg * sa + 2.0 * amp * bg * sm;
    (ss.max(0.0), amp, bg, var_m)
}

fn fit_region(
    scene: &StreakScene,
    config: &StreakConfig,
    ev: &Evidence,
    s: &[f32],
    region: &[usize],
) -> Option<Candidate> {
    let g = scene.view.grid;
    let (w, h) = (ev.w, ev.h);
    let r = scene.coin_radius / g.mm_per_px;
    // Start: the region's weighted axis and its extent along it.
    let (mut sw, mut su, mut sv) = (0.0, 0.0, 0.0);
    for &i in region {
        let wt = s[i].max(0.0) as f64;
        sw += wt;
        su += wt * (i % w) as f64;
        sv += wt * (i / w) as f64;
    }
    if sw <= 0.0 {
        return None;
    }
    let c = Vector2::new(su / sw, sv / sw);
    let (mut cuu, mut cuv, mut cvv) = (0.0, 0.0, 0.0);
    for &i in region {
        let wt = s[i].max(0.0) as f64;
        let d = Vector2::new((i % w) as f64, (i / w) as f64) - c;
        cuu += wt * d.x * d.x;
        cuv += wt * d.x * d.y;
        cvv += wt * d.y * d.y;
    }
    // Across its axis a sweep is one coin wide: the spread of a disc's chords, R/2.
    // Anything much wider (a tag, a hand, a changed patch of light) is no coin's
    // and is not worth a fit.
    let (tr, det) = ((cuu + cvv) / sw, (cuu * cvv - cuv * cuv) / (sw * sw));
    let minor = (tr / 2.0 - (tr * tr / 4.0 - det).max(0.0).sqrt()).max(0.0);
    if minor.sqrt() > 0.8 * r {
        return None;
    }
    let angle = 0.5 * (2.0 * cuv).atan2(cuu - cvv);
    let e = Vector2::new(angle.cos(), angle.sin());
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &i in region {
        let t = (Vector2::new((i % w) as f64, (i / w) as f64) - c).dot(&e);
        lo = lo.min(t);
        hi = hi.max(t);
    }
    let max_len = config.max_travel_mm / g.mm_per_px;
    if hi - lo > max_len + 4.0 * r {
        return None;
    }
    let inset = (0.8 * r).min((hi - lo) / 2.0);
    let mut p0 = c + e * (lo + inset);
    let mut p1 = c + e * (hi - inset);
    // The window: everything within reach of the starting sweep, ends free to move.
    let reach = 2.0 * r + 8.0 / g.mm_per_px;
    let (bu0, bu1) = pixel_span(p0.x, p1.x, reach, w);
    let (bv0, bv1) = pixel_span(p0.y, p1.y, reach, h);
    let mut win = Window { pts: Vec::new() };
    for v in bv0..bv1 {
        for u in bu0..bu1 {
            let i = v * w + u;
            let p = Vector2::new(u as f64, v as f64);
            if segment_dist(p, p0, p1) > reach || ev.mask[i] & UNSEEN != 0 {
                continue;
            }
            win.pts.push((p, ev.a[i] as f64));
        }
    }
    if win.pts.len() < 20 {
        return None;
    }
    (p0, p1, _) = descend(&win, p0, p1, r, false);
    let (ss, amp, _bg, var_m) = solve(&win, p0, p1, r);
    let dof = (win.pts.len() as f64 - 6.0).max(1.0);
    let sigma_res = (ss / dof).sqrt().max(1e-9);
    let snr = amp * var_m.sqrt() / sigma_res;
    let len = (p1 - p0).norm();
    let e = if len > 1e-9 { (p1 - p0) / len } else { e };
    // The surroundings: beyond the ends and along the sides the table shows again.
    let (bg, amp_) = (_bg, amp);
    let (mut core_s, mut core_n) = (0.0, 0.0);
    let mut caps = [(0.0, 0.0); 2];
    let mut sides = [(0.0, 0.0); 2];
    for &(p, a) in &win.pts {
        let q = p - p0;
        let along = q.dot(&e);
        let across = q.x * e.y - q.y * e.x;
        let x = a - bg;
        if across.abs() < 0.5 * r && (0.0..=len).contains(&along) {
            core_s += x;
            core_n += 1.0;
        } else if across.abs() < 0.6 * r && along < -(r + 1.5) && along > -(2.0 * r + 1.5) {
            caps[0].0 += x;
            caps[0].1 += 1.0;
        } else if across.abs() < 0.6 * r && along > len + r + 1.5 && along < len + 2.0 * r + 1.5 {
            caps[1].0 += x;
            caps[1].1 += 1.0;
        } else if (r + 1.5..2.0 * r + 1.5).contains(&across.abs()) && (0.0..=len).contains(&along) {
            let k = (across > 0.0) as usize;
            sides[k].0 += x;
            sides[k].1 += 1.0;
        }
    }
    let _ = amp_;
    let core_level = if core_n > 0.0 { core_s / core_n } else { 0.0 };
    let mean = |(s, n): (f64, f64)| if n > 3.0 { s / n } else { 0.0 };
    let around = caps
        .iter()
        .chain(sides.iter())
        .map(|&c| mean(c))
        .fold(f64::NEG_INFINITY, f64::max)
        / core_level.max(1e-9);
    // Over the sweep itself: unseen share, colour off the coin line, the hand.
    let (mut inside, mut unseen, mut core, mut near_hand) = (0, 0, 0, false);
    let (mut off_sum, mut on_sum) = (0.0, 0.0);
    let (cu0, cu1) = pixel_span(p0.x, p1.x, r, w);
    let (cv0, cv1) = pixel_span(p0.y, p1.y, r, h);
    for v in cv0..cv1 {
        for u in cu0..cu1 {
            let p = Vector2::new(u as f64, v as f64);
            let dist = segment_dist(p, p0, p1);
            if dist > r {
                continue;
            }
            let i = v * w + u;
            inside += 1;
            if ev.mask[i] & UNSEEN != 0 {
                unseen += 1;
                continue;
            }
            near_hand |= ev.mask[i] & NEAR_HAND != 0;
            if dist < 0.6 * r {
                off_sum += ev.off[i] as f64;
                on_sum += (ev.a[i] as f64 / ev.sigma_a).powi(2);
                core += 1;
            }
        }
    }
    let unseen = unseen as f64 / inside.max(1) as f64;
    // Off the coin's colour line beyond the noise (2 on bare table), over what lies
    // along it: a coin's own shading leaves a little, a tag's or a hand's colour much.
    let off_line = if core > 0 && on_sum > 0.0 {
        (off_sum - 2.0 * core as f64).max(0.0) / on_sum
    } else {
        f64::INFINITY
    };
    let from = g.table_from_px(p0.x, p0.y);
    let to = g.table_from_px(p1.x, p1.y);
    let travel_mm = (to - from).norm();
    let near_coin = scene.coins.iter().any(|d| {
        crate::geometry::table::closest_on_segment(d.center, from, to)
            .coords
            .metric_distance(&d.center.coords)
            < d.radius + scene.coin_radius
    });
    let (amp_lo, amp_hi) = config.amplitude;
    let cheap = if travel_mm < config.min_travel_radii * scene.coin_radius {
        Verdict::TooShort
    } else if travel_mm > config.max_travel_mm {
        Verdict::TooLong
    } else if near_hand {
        Verdict::NearOccluder
    } else if unseen > config.max_unseen {
        Verdict::Unseen
    } else if near_coin {
        Verdict::NearCoin
    } else if !(amp_lo..=amp_hi).contains(&amp) {
        Verdict::Amplitude
    } else if snr < config.min_snr {
        Verdict::Faint
    } else if off_line > config.max_off_line {
        Verdict::Colour
    } else {
        Verdict::Streak
    };
    // Last (the dearest test): the width the region itself prefers.
    let width_ratio = if cheap == Verdict::Streak {
        descend(&win, p0, p1, r, true).2 / r
    } else {
        f64::NAN
    };
    let verdict =
        if cheap == Verdict::Streak && !(config.width.0..=config.width.1).contains(&width_ratio) {
            Verdict::Width
        } else {
            cheap
        };
    // A clear sweep of one coin's light: sure, though never as sure as a round rim.
    let confidence = ((1.0 - (amp - 1.0).abs()) * (snr / 60.0).min(1.0)).clamp(0.3, 0.9);
    Some(Candidate {
        streak: CoinStreak {
            from,
            to,
            confidence,
        },
        amplitude: amp,
        snr,
        width_ratio,
        off_line,
        unseen,
        around,
        verdict,
    })
}

fn segment_dist(p: Vector2<f64>, a: Vector2<f64>, b: Vector2<f64>) -> f64 {
    let (p, a, b) = (Point::from(p), Point::from(a), Point::from(b));
    (p - crate::geometry::table::closest_on_segment(p, a, b)).norm()
}

/// Coordinate descent on a sweep's two ends (and its radius when `free_r`).
fn descend(
    win: &Window,
    mut p0: Vector2<f64>,
    mut p1: Vector2<f64>,
    mut r: f64,
    free_r: bool,
) -> (Vector2<f64>, Vector2<f64>, f64) {
    let r0 = r;
    let mut best = solve(win, p0, p1, r).0;
    let mut step = 2.0;
    let dirs = [
        Vector2::new(1.0, 0.0),
        Vector2::new(-1.0, 0.0),
        Vector2::new(0.0, 1.0),
        Vector2::new(0.0, -1.0),
    ];
    while step >= 0.125 {
        let mut improved = false;
        for end in 0..2 {
            for d in &dirs {
                let (q0, q1) = if end == 0 {
                    (p0 + d * step, p1)
                } else {
                    (p0, p1 + d * step)
                };
                let ss = solve(win, q0, q1, r).0;
                if ss < best {
                    best = ss;
                    p0 = q0;
                    p1 = q1;
                    improved = true;
                }
            }
        }
        if free_r {
            for dr in [step / 2.0, -step / 2.0] {
                let rr = r + dr;
                if rr < 0.3 * r0 || rr > 3.0 * r0 {
                    continue;
                }
                let ss = solve(win, p0, p1, rr).0;
                if ss < best {
                    best = ss;
                    r = rr;
                    improved = true;
                }
            }
        }
        if !improved {
            step /= 2.0;
        }
    }
    (p0, p1, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Items;
    use crate::detect::TopGrid;
    use crate::geometry::FishFootprint;
    use crate::model::Pose;

    const WOOD: [f64; 3] = [170.0, 120.0, 70.0];
    const BRASS: [f64; 3] = [215.0, 175.0, 60.0];
    const RED: [f64; 3] = [214.0, 39.0, 40.0];
    const SKIN: [f64; 3] = [224.0, 172.0, 140.0];
    const R: f64 = 7.5;

    /// A synthetic top view at 1 mm a pixel: wood with grain (light and dark bands
    /// along x, their brightness along the wood's own colour) and sensor noise.
    struct Canvas {
        grid: TopGrid,
        /// Linear colour per pixel before quantisation.
        px: Vec<[f64; 3]>,
        on_table: Vec<bool>,
        hidden: Vec<f32>,
    }

    impl Canvas {
        fn new(w: usize, h: usize) -> Canvas {
            let grid = TopGrid {
                width: w,
                height: h,
                mm_per_px: 1.0,
                origin_mm: Point::new(0.0, 0.0),
                y_down: false,
            };
            let mut px = Vec::with_capacity(w * h);
            for v in 0..h {
                for u in 0..w {
                    let (x, y) = (u as f64, v as f64);
                    let grain = 1.0
                        + 0.05
                            * (std::f64::consts::TAU * (y + 3.0 * (x / 90.0).sin()) / 13.0).sin()
                        + 0.025 * (std::f64::consts::TAU * y / 4.7).sin();
                    px.push(WOOD.map(|c| c * grain));
                }
            }
            Canvas {
                grid,
                px,
                on_table: vec![true; w * h],
                hidden: vec![0.0; w * h],
            }
        }

        /// Mixes `colour` in by `cover(p)` (0..1) at every pixel, `p` in table mm.
        fn mix(&mut self, colour: [f64; 3], cover: impl Fn(Point) -> f64) {
            for v in 0..self.grid.height {
                for u in 0..self.grid.width {
                    let a = cover(self.grid.table_from_px(u as f64, v as f64));
                    if a > 0.0 {
                        let p = &mut self.px[v * self.grid.width + u];
                        for k in 0..3 {
                            p[k] += a * (colour[k] - p[k]);
                        }
                    }
                }
            }
        }

        /// A disc of radius `r` swept from `a` to `b` during the exposure: each
        /// pixel's share of the exposure under the disc, 4x4 samples within it.
        fn sweep(&mut self, colour: [f64; 3], a: Point, b: Point, r: f64) {
            let steps = 200;
            self.mix(colour, |p| {
                let mut hits = 0;
                for sy in 0..4 {
                    for sx in 0..4 {
                        let q = p + crate::geometry::Vector::new(
                            (sx as f64 + 0.5) / 4.0 - 0.5,
                            (sy as f64 + 0.5) / 4.0 - 0.5,
                        );
                        let d = b - a;
                        // The stretch of the sweep during which the disc covers q.
                        let len2 = d.norm_squared().max(1e-12);
                        let t = ((q - a).dot(&d) / len2).clamp(0.0, 1.0);
                        if (q - (a + d * t)).norm() > r {
                            continue;
                        }
                        for k in 0..steps {
                            let c = a + d * ((k as f64 + 0.5) / steps as f64);
                            hits += ((q - c).norm() <= r) as usize;
                        }
                    }
                }
                hits as f64 / (16 * steps) as f64
            });
        }

        /// The picture with noise (sigma 2 grey levels, a fixed pseudo-random sequence).
        fn bytes(&self) -> Vec<u8> {
            self.bytes_seeded(0)
        }

        fn bytes_seeded(&self, seed: u64) -> Vec<u8> {
            let mut state = 0x2545_f491_4f6c_dd1du64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut gauss = || {
                // Sum of uniforms: near enough to Gaussian for noise.
                let mut s = 0.0;
                for _ in 0..4 {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    s += (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                }
                s * 3.46
            };
            self.px
                .iter()
                .flat_map(|p| p.map(|c| (c + 2.0 * gauss()).round().clamp(0.0, 255.0) as u8))
                .collect()
        }

        /// The scene of these pixels, with what the detector found on them.
        fn scene<'a>(
            &'a self,
            view: &'a TopView<'a>,
            fish: &'a [PlacedFish],
            coins: &'a [Disc],
        ) -> StreakScene<'a> {
            StreakScene {
                view,
                on_table: &self.on_table,
                hidden: &self.hidden,
                coin_rgb: BRASS,
                coin_radius: R,
                fish,
                coins,
            }
        }

        /// Through a memory, as the detector calls it frame after frame.
        fn remembered(&self, memory: &mut StreakMemory, seed: u64) -> Vec<CoinStreak> {
            let rgb = self.bytes_seeded(seed);
            let view = TopView {
                grid: self.grid,
                rgb: &rgb,
                bgr: false,
            };
            memory.find(&self.scene(&view, &[], &[]), &StreakConfig::default())
        }

        fn streaks(&self, fish: &[PlacedFish], coins: &[Disc]) -> Vec<Candidate> {
            let rgb = self.bytes();
            let view = TopView {
                grid: self.grid,
                rgb: &rgb,
                bgr: false,
            };
            candidates(&self.scene(&view, fish, coins), &StreakConfig::default())
        }
    }

    fn found(c: &[Candidate]) -> Vec<CoinStreak> {
        c.iter()
            .filter(|c| c.verdict == Verdict::Streak)
            .map(|c| c.streak)
            .collect()
    }

    /// The larger of the two end errors, the ends matched either way round.
    fn end_error(s: &CoinStreak, a: Point, b: Point) -> f64 {
        let e1 = (s.from - a).norm().max((s.to - b).norm());
        let e2 = (s.from - b).norm().max((s.to - a).norm());
        e1.min(e2)
    }

    #[test]
    fn a_swept_coin_is_found_with_its_segment_at_any_angle_and_length() {
        let mut worst: f64 = 0.0;
        for (k, deg) in [0.0f64, 30.0, 75.0, 130.0, 200.0].iter().enumerate() {
            for travel in [20.0, 45.0, 90.0] {
                let mut c = Canvas::new(260, 200);
                let mid = Point::new(130.0 + k as f64, 100.0 - k as f64 * 0.7);
                let dir =
                    crate::geometry::Vector::new(deg.to_radians().cos(), deg.to_radians().sin());
                let (a, b) = (mid - dir * (travel / 2.0), mid + dir * (travel / 2.0));
                c.sweep(BRASS, a, b, R);
                let cands = c.streaks(&[], &[]);
                let got = found(&cands);
                assert_eq!(got.len(), 1, "{deg}° {travel} mm: {cands:?}");
                let err = end_error(&got[0], a, b);
                assert!(
                    err < 3.0,
                    "{deg}° {travel} mm: ends {err:.2} mm off: {:?}",
                    got[0]
                );
                worst = worst.max(err);
            }
        }
        eprintln!("worst end error {worst:.2} mm");
    }

    #[test]
    fn a_still_coin_and_bare_wood_are_no_streaks() {
        let mut c = Canvas::new(240, 160);
        c.sweep(BRASS, Point::new(120.0, 80.0), Point::new(121.0, 80.0), R);
        // The detector's round-coin stage explains a still coin; unexplained it is
        // still too short to be a streak.
        assert!(found(&c.streaks(&[], &[])).is_empty());
        let c = Canvas::new(240, 160);
        assert!(found(&c.streaks(&[], &[])).is_empty());
    }

    #[test]
    fn tags_hands_wood_and_table_edges_make_no_streaks() {
        let items = Items::default_set();
        let footprint = FishFootprint::new(&items);
        // A found tag's blurred outline (the fit explains it) and an unfound tag
        // swept fast (its colour is a player's, its width a tag's).
        let mut c = Canvas::new(320, 220);
        let tag = footprint.placed(&Pose::fish(90.0, 110.0, 0.3));
        let inside = |p: Point| tag.covers(p) as u8 as f64;
        c.mix(RED, |p| {
            // A pixel of soft edge.
            let n = [(-0.5, 0.0), (0.5, 0.0), (0.0, -0.5), (0.0, 0.5)];
            n.iter()
                .map(|&(dx, dy)| inside(p + crate::geometry::Vector::new(dx, dy)))
                .sum::<f64>()
                / 4.0
        });
        c.sweep(RED, Point::new(200.0, 60.0), Point::new(260.0, 90.0), 15.0);
        let cands = c.streaks(std::slice::from_ref(&tag), &[]);
        assert!(found(&cands).is_empty(), "tags: {cands:?}");

        // A hand (an occluder) with a blurred, skin-coloured rim reaching beyond it.
        let mut c = Canvas::new(320, 220);
        let (hc, hr) = (Point::new(160.0, 110.0), 45.0);
        c.sweep(SKIN, hc - crate::geometry::Vector::new(25.0, 0.0), hc, hr);
        let g = c.grid;
        for v in 0..g.height {
            for u in 0..g.width {
                if (g.table_from_px(u as f64, v as f64) - hc).norm() < hr - 4.0 {
                    c.hidden[v * g.width + u] = 1.0;
                }
            }
        }
        let cands = c.streaks(&[], &[]);
        assert!(found(&cands).is_empty(), "hand: {cands:?}");

        // A light band of wood a coin wide, and the table's edge against a dark floor.
        let mut c = Canvas::new(320, 220);
        let light = WOOD.map(|x| (x * 1.25).min(255.0));
        c.mix(light, |p| {
            let d = (p.y - 60.0).abs();
            if (40.0..200.0).contains(&p.x) && d < R {
                0.8
            } else {
                0.0
            }
        });
        let floor = [40.0, 40.0, 45.0];
        let g = c.grid;
        for v in 0..g.height {
            for u in 0..g.width {
                let p = g.table_from_px(u as f64, v as f64);
                if p.y > 170.0 {
                    c.on_table[v * g.width + u] = false;
                    c.px[v * g.width + u] = floor;
                } else if p.y > 168.0 {
                    // The edge's blur, on the table side.
                    let k = v * g.width + u;
                    let t = (p.y - 168.0) / 2.0;
                    for (px, fl) in c.px[k].iter_mut().zip(floor) {
                        *px += t * (fl - *px);
                    }
                }
            }
        }
        let cands = c.streaks(&[], &[]);
        assert!(found(&cands).is_empty(), "wood and edge: {cands:?}");
    }

    #[test]
    fn a_streak_beside_a_found_coin_or_hand_is_left_alone() {
        let mut c = Canvas::new(260, 200);
        let (a, b) = (Point::new(80.0, 100.0), Point::new(140.0, 100.0));
        c.sweep(BRASS, a, b, R);
        assert_eq!(found(&c.streaks(&[], &[])).len(), 1);
        // A found coin where the sweep ends: a collision the tracker sorts out.
        let near = [Disc::new(Point::new(150.0, 100.0), R)];
        assert!(found(&c.streaks(&[], &near)).is_empty());
        let g = c.grid;
        for v in 0..g.height {
            for u in 0..g.width {
                if (g.table_from_px(u as f64, v as f64) - Point::new(175.0, 100.0)).norm() < 30.0 {
                    c.hidden[v * g.width + u] = 1.0;
                }
            }
        }
        assert!(found(&c.streaks(&[], &[])).is_empty());
    }

    #[test]
    fn remembered_table_marks_are_no_streaks_but_a_new_sweep_is() {
        // A stain on the table just like a faint streak: alone in one picture it
        // cannot be told from one (and is reported), but it stays where it is.
        let mut c = Canvas::new(300, 200);
        c.sweep(BRASS, Point::new(60.0, 60.0), Point::new(120.0, 55.0), R);
        assert_eq!(found(&c.streaks(&[], &[])).len(), 1, "the stain alone");
        let mut memory = StreakMemory::default();
        for seed in 0..3 {
            let got = c.remembered(&mut memory, seed);
            assert!(got.is_empty(), "still table, look {seed}: {got:?}");
        }
        let (a, b) = (Point::new(90.0, 140.0), Point::new(150.0, 120.0));
        c.sweep(BRASS, a, b, R);
        let got = c.remembered(&mut memory, 3);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(end_error(&got[0], a, b) < 3.0, "{got:?}");
    }
}
