//! Tracker accuracy against ground truth (`fishtrack eval`): a record made by
//! `analyse` compared with the simulator's truth, shot by shot and frame by frame;
//! several such comparisons pooled into totals; the evaluation set's definition
//! ([`Suite`], `eval/suite.json`); the random sweep's clips ([`sweep_clips`]); and
//! how far a table calibration fishtrack made itself is from the simulator's true one
//! ([`check_calibration`], for `eval --calibration table|no-chessboard`).
//! Pure; the truth reaches it through [`TruthPoses`] (per-frame true poses) and a
//! truth record (shots with the true flick/rest frames, lost items, scores).
//! Uses: model, record, sim::look, calibration, geometry.

use crate::calibration::TableCalibration;
use crate::geometry::Point;
use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::{Record, Shot};
use crate::sim::look::Look;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// True poses frame by frame.
pub trait TruthPoses {
    /// The true pose of `item` at `frame`, if it is on the table then.
    fn pose_at(&self, item: ItemId, frame: FrameIdx) -> Option<Pose>;
    /// Every item the truth knows.
    fn items(&self) -> Vec<ItemId>;
}

/// Median, 95th percentile and count of a list of errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Spread {
    pub median: f64,
    pub p95: f64,
    pub max: f64,
    pub count: usize,
}

impl Spread {
    pub fn of(mut v: Vec<f64>) -> Spread {
        v.retain(|x| x.is_finite());
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Spread {
            median: at(0.5),
            p95: at(0.95),
            max: v[v.len() - 1],
            count: v.len(),
        }
    }
}

/// Every figure of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Evaluation {
    /// Shots in the truth, in the record, and matched between them.
    pub truth_shots: usize,
    pub record_shots: usize,
    pub matched_shots: usize,
    /// Position error of items at rest (start and end poses), mm.
    pub rest_position_mm: Spread,
    /// Fish angle error at rest, degrees.
    pub rest_angle_deg: Spread,
    /// Position error of tracked items while they move, mm.
    pub motion_position_mm: Spread,
    /// Times a track's identity jumped to another item.
    pub identity_switches: usize,
    pub lost_true_positive: usize,
    pub lost_false_positive: usize,
    pub lost_false_negative: usize,
    /// Where lost items crossed the edge, mm.
    pub exit_point_mm: Spread,
    /// |record − truth| flick and rest frames.
    pub flick_frame: Spread,
    pub rest_frame: Spread,
    /// Shots whose points equal the truth's.
    pub score_agreement: usize,
    /// Whether the final totals agree.
    pub totals_agree: bool,
    /// The record's calls with evidence checked against the truth (lost, exits,
    /// coins in and out of holes, stacking, the first item moved, put-backs,
    /// violations, and the lost items it missed): how many were wrong, how many of
    /// those were flagged for review, how many right ones were flagged too.
    pub review: ReviewCount,
    /// The wrong calls that were not flagged, one line each (`shot N: call item
    /// (other) conf C: why`; a shot of the record the truth does not have, a missed
    /// lost item or coin in a hole say so): what a referee reading the review list
    /// would not have been sent to look at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed: Vec<String>,
}

/// Calls against the truth and the review flags (issue #17's targets: every wrong
/// call flagged, at most 10 % of the right ones).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct ReviewCount {
    pub calls: usize,
    pub wrong: usize,
    pub wrong_flagged: usize,
    pub correct_flagged: usize,
}

impl ReviewCount {
    fn add(&mut self, wrong: bool, flagged: bool) {
        self.calls += 1;
        if wrong {
            self.wrong += 1;
            self.wrong_flagged += usize::from(flagged);
        } else {
            self.correct_flagged += usize::from(flagged);
        }
    }

    /// The share of right calls flagged.
    pub fn correct_flagged_share(&self) -> f64 {
        let right = self.calls - self.wrong;
        if right == 0 {
            0.0
        } else {
            self.correct_flagged as f64 / right as f64
        }
    }

    /// `wrong flagged/wrong, right flagged %`, as the tables print it.
    pub fn cell(&self) -> String {
        if self.calls == 0 {
            return "-".into();
        }
        format!(
            "{}/{} {:.0}%",
            self.wrong_flagged,
            self.wrong,
            100.0 * self.correct_flagged_share()
        )
    }
}

impl Evaluation {
    pub fn lost_precision(&self) -> f64 {
        ratio(
            self.lost_true_positive,
            self.lost_true_positive + self.lost_false_positive,
        )
    }
    pub fn lost_recall(&self) -> f64 {
        ratio(
            self.lost_true_positive,
            self.lost_true_positive + self.lost_false_negative,
        )
    }

    /// The figures as (name, value) rows of a printed table.
    pub fn rows(&self) -> Vec<(String, String)> {
        let s = |x: &Spread| {
            format!(
                "median {:.2}  p95 {:.2}  max {:.2}  (n={})",
                x.median, x.p95, x.max, x.count
            )
        };
        vec![
            (
                "shots (truth/record/matched)".into(),
                format!(
                    "{}/{}/{}",
                    self.truth_shots, self.record_shots, self.matched_shots
                ),
            ),
            ("rest position error mm".into(), s(&self.rest_position_mm)),
            ("rest angle error deg".into(), s(&self.rest_angle_deg)),
            (
                "motion position error mm".into(),
                s(&self.motion_position_mm),
            ),
            (
                "identity switches".into(),
                self.identity_switches.to_string(),
            ),
            (
                "lost items precision / recall".into(),
                format!(
                    "{:.1}% / {:.1}%  (tp {}, fp {}, fn {})",
                    100.0 * self.lost_precision(),
                    100.0 * self.lost_recall(),
                    self.lost_true_positive,
                    self.lost_false_positive,
                    self.lost_false_negative
                ),
            ),
            ("exit point error mm".into(), s(&self.exit_point_mm)),
            (
                "review: wrong calls flagged, right calls flagged".into(),
                format!(
                    "{}/{}, {}/{} ({:.1}%)  ({} calls)",
                    self.review.wrong_flagged,
                    self.review.wrong,
                    self.review.correct_flagged,
                    self.review.calls - self.review.wrong,
                    100.0 * self.review.correct_flagged_share(),
                    self.review.calls
                ),
            ),
            ("flick frame error".into(), s(&self.flick_frame)),
            ("rest frame error".into(), s(&self.rest_frame)),
            (
                "score agreement".into(),
                format!(
                    "{}/{} shots, totals {}",
                    self.score_agreement,
                    self.truth_shots,
                    if self.totals_agree { "agree" } else { "differ" }
                ),
            ),
        ]
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// The raw error samples behind an evaluation, so several can be pooled.
#[derive(Debug, Clone, Default)]
pub struct EvalSamples {
    pub rest_position: Vec<f64>,
    pub rest_angle: Vec<f64>,
    pub motion_position: Vec<f64>,
    pub exit_point: Vec<f64>,
    pub flick_frame: Vec<f64>,
    pub rest_frame: Vec<f64>,
}

/// A track row's identity may be called switched when the row lies this much nearer
/// to another item of its kind than to its own (mm).
const SWITCH_MARGIN_MM: f64 = 5.0;
/// Shots are paired when their flick frames differ by at most this many seconds.
const SHOT_MATCH_SECONDS: f64 = 1.0;
/// An item moves when its true position changes this much between frames (mm).
const MOVING_MM_PER_FRAME: f64 = 0.5;

/// Compares a record with the truth.
pub fn evaluate(
    record: &Record,
    truth: &Record,
    poses: &dyn TruthPoses,
) -> (Evaluation, EvalSamples) {
    let fps = if truth.video.fps > 0.0 {
        truth.video.fps
    } else {
        30.0
    };
    let tolerance = (SHOT_MATCH_SECONDS * fps) as i64;
    let mut e = Evaluation {
        truth_shots: truth.shots.len(),
        record_shots: record.shots.len(),
        ..Default::default()
    };
    let mut s = EvalSamples::default();
    let mut used = vec![false; record.shots.len()];
    for t in &truth.shots {
        let best = record
            .shots
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .map(|(i, r)| (i, (r.flick_frame as i64 - t.flick_frame as i64).abs()))
            .filter(|(_, d)| *d <= tolerance)
            .min_by_key(|(_, d)| *d);
        let Some((i, _)) = best else {
            e.lost_false_negative += t.lost.len();
            continue;
        };
        used[i] = true;
        e.matched_shots += 1;
        compare_shot(&record.shots[i], t, poses, &mut e, &mut s);
        review_calls(
            &record.shots[i],
            t,
            record.review_below(),
            &mut e.review,
            &mut e.missed,
        );
    }
    let below = record.review_below();
    for (i, r) in record.shots.iter().enumerate() {
        if !used[i] {
            e.lost_false_positive += r.lost.len();
            // A shot the truth does not have: every call of it is wrong.
            for c in r.calls() {
                let flagged = c.evidence.confidence < below && !r.amended(&c);
                e.review.add(true, flagged);
                if !flagged {
                    e.missed.push(format!(
                        "{} (a shot the truth does not have)",
                        missed_line(&c)
                    ));
                }
            }
        }
    }
    e.totals_agree = record.scores == truth.scores;
    e.set_spreads(&s);
    (e, s)
}

impl Evaluation {
    /// Every spread from its samples.
    fn set_spreads(&mut self, s: &EvalSamples) {
        self.rest_position_mm = Spread::of(s.rest_position.clone());
        self.rest_angle_deg = Spread::of(s.rest_angle.clone());
        self.motion_position_mm = Spread::of(s.motion_position.clone());
        self.exit_point_mm = Spread::of(s.exit_point.clone());
        self.flick_frame = Spread::of(s.flick_frame.clone());
        self.rest_frame = Spread::of(s.rest_frame.clone());
    }
}

impl EvalSamples {
    pub fn extend(&mut self, other: &EvalSamples) {
        self.rest_position.extend_from_slice(&other.rest_position);
        self.rest_angle.extend_from_slice(&other.rest_angle);
        self.motion_position
            .extend_from_slice(&other.motion_position);
        self.exit_point.extend_from_slice(&other.exit_point);
        self.flick_frame.extend_from_slice(&other.flick_frame);
        self.rest_frame.extend_from_slice(&other.rest_frame);
    }
}

/// The totals of several evaluations: counts summed, and every spread taken over
/// all their samples together (a median of medians would let a short clip weigh as
/// much as a whole match). The totals agree when every part's totals agree.
pub fn pool<'a>(
    parts: impl IntoIterator<Item = (&'a Evaluation, &'a EvalSamples)>,
) -> (Evaluation, EvalSamples) {
    let mut e = Evaluation {
        totals_agree: true,
        ..Default::default()
    };
    let mut all = EvalSamples::default();
    let mut any = false;
    for (p, s) in parts {
        any = true;
        e.truth_shots += p.truth_shots;
        e.record_shots += p.record_shots;
        e.matched_shots += p.matched_shots;
        e.identity_switches += p.identity_switches;
        e.lost_true_positive += p.lost_true_positive;
        e.lost_false_positive += p.lost_false_positive;
        e.lost_false_negative += p.lost_false_negative;
        e.review.calls += p.review.calls;
        e.review.wrong += p.review.wrong;
        e.review.wrong_flagged += p.review.wrong_flagged;
        e.review.correct_flagged += p.review.correct_flagged;
        e.missed.extend(p.missed.iter().cloned());
        e.score_agreement += p.score_agreement;
        e.totals_agree &= p.totals_agree;
        all.extend(s);
    }
    e.totals_agree &= any;
    e.set_spreads(&all);
    (e, all)
}

/// The evaluation set (`eval/suite.json`): clips the simulator renders and
/// `analyse` is measured on. Every clip is fixed by its fields, so the set is the
/// same on every machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// What the set covers, for people.
    #[serde(default)]
    pub description: String,
    /// Image size of every clip that does not give its own, WIDTHxHEIGHT.
    #[serde(default = "default_suite_size")]
    pub size: String,
    /// The top-view scale `analyse` works at (mm per pixel); its own default if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mm_per_px: Option<f64>,
    pub clips: Vec<ClipSpec>,
}

fn default_suite_size() -> String {
    "1280x720".into()
}

/// One clip of the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipSpec {
    /// Unique; also the clip's folder name under the work folder.
    pub name: String,
    /// A built-in scenario name, or a scenario file relative to the suite file.
    pub scenario: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Whether the flicking hand is drawn.
    #[serde(default = "default_hand")]
    pub hand: bool,
    /// Play a generated scenario with this many players (2 to 4) instead of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub players: Option<usize>,
    /// Moves per player of a generated scenario, instead of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<u32>,
    /// WIDTHxHEIGHT, instead of the suite's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// What this clip is for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// How the clip looks: a number draws a random look (with noise and exposure
    /// drift) from that seed, an object is a look (`sim::look`, every key
    /// optional); absent: the original look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look: Option<LookChoice>,
}

/// A clip's look: drawn from a seed, or given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LookChoice {
    Seed(u64),
    Look(Box<Look>),
}

fn default_seed() -> u64 {
    1
}
fn default_fps() -> f64 {
    30.0
}
fn default_hand() -> bool {
    true
}

/// Why a suite cannot be run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SuiteError {
    #[error("the suite has no clips")]
    Empty,
    #[error("clip `{0}`: a name may hold only letters, digits, `-`, `_` and `.`, and not start with `.`")]
    BadName(String),
    #[error("two clips are called `{0}`")]
    Duplicate(String),
    #[error("clip `{name}`: {message}")]
    Clip { name: String, message: String },
}

impl Suite {
    /// Checks what the file alone can tell: names usable as folders and unique,
    /// frame rates and player counts in range. Scenarios are checked when played.
    pub fn validate(&self) -> Result<(), SuiteError> {
        if self.clips.is_empty() {
            return Err(SuiteError::Empty);
        }
        let mut seen = std::collections::BTreeSet::new();
        for c in &self.clips {
            let ok = !c.name.is_empty()
                && !c.name.starts_with('.')
                && c.name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch));
            if !ok {
                return Err(SuiteError::BadName(c.name.clone()));
            }
            if !seen.insert(c.name.as_str()) {
                return Err(SuiteError::Duplicate(c.name.clone()));
            }
            let bad = |message: String| SuiteError::Clip {
                name: c.name.clone(),
                message,
            };
            if !(c.fps.is_finite() && (5.0..=240.0).contains(&c.fps)) {
                return Err(bad(format!("fps {} must be in [5, 240]", c.fps)));
            }
            if let Some(n) = c.players {
                if !(2..=4).contains(&n) {
                    return Err(bad(format!("players {n}: the set plays 2 to 4")));
                }
            }
            if c.moves == Some(0) {
                return Err(bad("moves must be at least 1".into()));
            }
            if let Some(LookChoice::Look(look)) = &c.look {
                look.check_ranges().map_err(|e| bad(e.to_string()))?;
            }
        }
        if let Some(m) = self.mm_per_px {
            if !(m.is_finite() && (0.1..=10.0).contains(&m)) {
                return Err(SuiteError::Clip {
                    name: "(suite)".into(),
                    message: format!("mm_per_px {m} must be in [0.1, 10]"),
                });
            }
        }
        Ok(())
    }
}

/// Player counts, moves per player and frame rates a sweep draws from.
pub const SWEEP_PLAYERS: std::ops::RangeInclusive<usize> = 2..=4;
pub const SWEEP_MOVES: std::ops::RangeInclusive<u32> = 1..=3;
pub const SWEEP_FPS: [f64; 2] = [30.0, 60.0];

/// The clips of a random sweep (`fishtrack eval --sweep N --seed S`): whole
/// generated matches of 2–4 players with 1–3 moves each, at 30 or 60 fps, the
/// hand on (three in four) or off, each with its own seed and random look. The
/// same `seed` gives the same clips, and the first `n` of a longer sweep.
pub fn sweep_clips(n: usize, seed: u64) -> Vec<ClipSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let players = rng.random_range(SWEEP_PLAYERS);
            let moves = rng.random_range(SWEEP_MOVES);
            let fps = SWEEP_FPS[rng.random_range(0..SWEEP_FPS.len())];
            let hand = rng.random_bool(0.75);
            let clip_seed = rng.random_range(1..1_000_000u64);
            let look = rng.random_range(1..1_000_000u64);
            ClipSpec {
                name: format!("sweep-{i:03}"),
                scenario: "match".into(),
                seed: clip_seed,
                fps,
                hand,
                players: Some(players),
                moves: Some(moves),
                size: None,
                note: String::new(),
                look: Some(LookChoice::Seed(look)),
            }
        })
        .collect()
}

fn compare_shot(
    r: &Shot,
    t: &Shot,
    poses: &dyn TruthPoses,
    e: &mut Evaluation,
    s: &mut EvalSamples,
) {
    s.flick_frame
        .push((r.flick_frame as f64 - t.flick_frame as f64).abs());
    s.rest_frame
        .push((r.rest_frame as f64 - t.rest_frame as f64).abs());
    for (mine, theirs) in [(&r.start, &t.start), (&r.end, &t.end)] {
        for (id, p) in mine {
            if let Some(q) = theirs.get(id) {
                s.rest_position.push((p.point() - q.point()).norm());
                if let (Some(a), Some(b)) = (p.theta, q.theta) {
                    s.rest_angle.push(angle_diff(a, b).to_degrees());
                }
            }
        }
    }
    // Motion error and identity switches along each track.
    let all = poses.items();
    for (id, rows) in &r.tracks {
        let mut last_match: Option<ItemId> = None;
        for row in rows {
            if row.len() < 3 || row[0] < 0.0 {
                continue;
            }
            let frame = row[0] as FrameIdx;
            let p = nalgebra::Point2::new(row[1], row[2]);
            if let Some(q) = poses.pose_at(*id, frame) {
                let prev = frame.checked_sub(1).and_then(|f| poses.pose_at(*id, f));
                let moving =
                    prev.is_some_and(|pp| (pp.point() - q.point()).norm() > MOVING_MM_PER_FRAME);
                if moving {
                    s.motion_position.push((p - q.point()).norm());
                }
            }
            // Which true item of the same kind is this row nearest to?
            let nearest = all
                .iter()
                .filter(|o| o.kind == id.kind)
                .filter_map(|o| {
                    poses
                        .pose_at(*o, frame)
                        .map(|q| (*o, (q.point() - p).norm()))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let own = poses.pose_at(*id, frame).map(|q| (q.point() - p).norm());
            let matched = match (nearest, own) {
                (Some((o, d)), Some(own_d)) if o != *id && own_d - d > SWITCH_MARGIN_MM => Some(o),
                // The truth has this item off the table (falling, or gone): the row is
                // another item's only if it lies right on that item.
                (Some((o, d)), None) if o != *id && d < SWITCH_MARGIN_MM => Some(o),
                (_, None) => None,
                _ => Some(*id),
            };
            if matched.is_none() {
                continue;
            }
            if let (Some(prev), Some(now)) = (last_match, matched) {
                if prev != now {
                    e.identity_switches += 1;
                }
            }
            last_match = matched;
        }
    }
    let truth_lost: BTreeMap<ItemId, &crate::record::LostItem> =
        t.lost.iter().map(|l| (l.item, l)).collect();
    let mine_lost: BTreeMap<ItemId, &crate::record::LostItem> =
        r.lost.iter().map(|l| (l.item, l)).collect();
    for (id, l) in &mine_lost {
        match truth_lost.get(id) {
            Some(tl) => {
                e.lost_true_positive += 1;
                s.exit_point.push((l.exit.point() - tl.exit.point()).norm());
            }
            None => e.lost_false_positive += 1,
        }
    }
    e.lost_false_negative += truth_lost
        .keys()
        .filter(|id| !mine_lost.contains_key(id))
        .count();
    if r.score == t.score {
        e.score_agreement += 1;
    }
}

/// Checks each call of record shot `r` that carries evidence against truth shot `t`
/// (whose put-backs and violations the rules filled from the true observations).
fn review_calls(r: &Shot, t: &Shot, below: f64, out: &mut ReviewCount, missed: &mut Vec<String>) {
    use crate::record::{Call, EXIT_TOLERANCE_MM};
    let calls = r.calls();
    if calls.is_empty() {
        return;
    }
    let flagged = |c: &crate::record::Flagged<'_>| c.evidence.confidence < below && !r.amended(c);
    let true_lost = |i: ItemId| t.lost.iter().find(|l| l.item == i);
    for c in &calls {
        // Violations name no item (their code is compared).
        let item = c.item.unwrap_or(ItemId::fish(0));
        let wrong = match c.call {
            Call::Lost | Call::LostUnseen => true_lost(item).is_none(),
            Call::Exit => match (true_lost(item), r.lost.iter().find(|l| l.item == item)) {
                (Some(tl), Some(l)) => {
                    (tl.exit.point() - l.exit.point()).norm() > EXIT_TOLERANCE_MM
                }
                _ => true,
            },
            Call::OnTable => true_lost(item).is_some(),
            Call::CoinIn => t.coins_in_holes.get(&item) != c.other.as_ref(),
            Call::CoinOut => c.other.is_some() && t.coins_in_holes.get(&item) == c.other.as_ref(),
            Call::Stacking => !t
                .stacking
                .iter()
                .any(|s| Some(s.under) == c.other && s.top == item),
            Call::FirstMoved => t.first_moved.is_some() && t.first_moved != Some(item),
            Call::PutBack => !t.put_back.iter().any(|p| {
                p.item == item
                    && p.verdict
                        == r.put_back
                            .iter()
                            .find(|q| q.item == item)
                            .and_then(|q| q.verdict.clone())
            }),
            Call::Violation => !t.violations.iter().any(|v| Some(v.code.as_str()) == c.code),
        };
        out.add(wrong, flagged(c));
        if wrong && !flagged(c) {
            missed.push(missed_line(c));
        }
    }
    // A lost item the record missed: wrong, flagged if any call about it was.
    for l in &t.lost {
        if r.lost.iter().any(|m| m.item == l.item) {
            continue;
        }
        let any = calls
            .iter()
            .any(|c| (c.item == Some(l.item) || c.other == Some(l.item)) && flagged(c));
        out.add(true, any);
        if !any {
            missed.push(format!(
                "shot {}: {} lost, not called lost (truth)",
                r.index, l.item
            ));
        }
    }
    // A coin in a hole the record missed (no call about it): wrong, and unflagged.
    for (coin, fish) in &t.coins_in_holes {
        if r.coins_in_holes.get(coin) == Some(fish) || !r.end.contains_key(coin) {
            continue;
        }
        if calls
            .iter()
            .any(|c| c.item == Some(*coin) && matches!(c.call, Call::CoinOut))
        {
            continue;
        }
        out.add(true, false);
        missed.push(format!(
            "shot {}: {coin} in {fish}'s hole, not called (truth)",
            r.index
        ));
    }
}

/// One line naming a call for [`Evaluation::missed`].
fn missed_line(c: &crate::record::Flagged<'_>) -> String {
    let call = serde_json::to_value(c.call)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!(
        "shot {}: {call}{}{}{} conf {:.2}: {}",
        c.shot,
        c.code.map(|k| format!(" {k}")).unwrap_or_default(),
        c.item.map(|i| format!(" {i}")).unwrap_or_default(),
        c.other.map(|i| format!(" ({i})")).unwrap_or_default(),
        c.evidence.confidence,
        c.evidence.why
    )
}

/// |a − b| as angles, in [0, π].
pub fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

/// How far a table calibration made by fishtrack (`calibrate table`) is from the
/// true one: where it puts each table corner in the picture, where it puts points of
/// the table, and its focal length.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CalibrationCheck {
    /// Per corner of ours (its `image_corners_px`), px from where the true camera
    /// sees that table point.
    pub corner_px: Vec<f64>,
    /// The largest of `corner_px`.
    pub worst_corner_px: f64,
    /// Over a grid of [`CHECK_GRID`] table points: where ours maps the pixel at which
    /// the true calibration sees each point, the worst distance from it (mm).
    pub worst_table_mm: f64,
    /// Ours numbers the corners from the truth's opposite corner (a rectangle's
    /// half-turn: the same table seen, corner 0 at the truth's corner 2).
    pub half_turn: bool,
    /// Ours' focal length against the truth's, % (fx), when its camera is its own
    /// (`--no-chessboard`); `None` when it used the true camera.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focal_error_percent: Option<f64>,
    /// What ours claims (`position_uncertainty_mm` in its table.json), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_mm: Option<f64>,
}

/// The table points [`check_calibration`] measures: `CHECK_GRID[0]` x `CHECK_GRID[1]`
/// evenly over the table's bounds (corners included), those on the table.
pub const CHECK_GRID: [usize; 2] = [11, 8];

/// How far `ours` is from `truth` ([`CalibrationCheck`]), for the same camera and
/// table. Corner 0 of ours may be the truth's corner 0 or, a half-turn about the
/// table's centre, the opposite one: whichever puts the table nearer is taken.
pub fn check_calibration(truth: &TableCalibration, ours: &TableCalibration) -> CalibrationCheck {
    let (lo, hi) = ours.table.bounds();
    let mut grid = Vec::new();
    for i in 0..CHECK_GRID[0] {
        for j in 0..CHECK_GRID[1] {
            let u = i as f64 / (CHECK_GRID[0] - 1) as f64;
            let v = j as f64 / (CHECK_GRID[1] - 1) as f64;
            let p = Point::new(lo.x + u * (hi.x - lo.x), lo.y + v * (hi.y - lo.y));
            // On the table, or on its outline (a corner, a side).
            if ours.table.signed_distance(p) >= -1e-6 {
                grid.push(p);
            }
        }
    }
    let turn = |p: Point, half: bool| {
        if half {
            Point::new(lo.x + hi.x - p.x, lo.y + hi.y - p.y)
        } else {
            p
        }
    };
    let worst_for = |half: bool| {
        grid.iter()
            .map(|&p| {
                let px = truth.pixel_from_table(turn(p, half));
                let d = (ours.table_from_pixel(px) - p).norm();
                if d.is_finite() {
                    d
                } else {
                    f64::INFINITY
                }
            })
            .fold(0.0, f64::max)
    };
    let (straight, turned) = (worst_for(false), worst_for(true));
    let half_turn = turned < straight;
    let corners: Vec<nalgebra::Point2<f64>> =
        if ours.file.image_corners_px.len() == ours.table.corners().len() {
            ours.file
                .image_corners_px
                .iter()
                .map(|&[u, v]| nalgebra::Point2::new(u, v))
                .collect()
        } else {
            ours.table
                .corners()
                .iter()
                .map(|&c| ours.pixel_from_table(c))
                .collect()
        };
    let corner_px: Vec<f64> = ours
        .table
        .corners()
        .iter()
        .zip(&corners)
        .map(|(&c, px)| (truth.pixel_from_table(turn(c, half_turn)) - px).norm())
        .collect();
    let same_camera = ours.camera.camera_matrix == truth.camera.camera_matrix
        && ours.camera.dist_coeffs == truth.camera.dist_coeffs;
    CalibrationCheck {
        worst_corner_px: corner_px.iter().copied().fold(0.0, f64::max),
        corner_px,
        worst_table_mm: straight.min(turned),
        half_turn,
        focal_error_percent: (!same_camera)
            .then(|| 100.0 * (ours.camera.fx() / truth.camera.fx() - 1.0)),
        claimed_mm: None,
    }
}

/// Several clips' [`CalibrationCheck`]s together: the median and worst of each figure.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CalibrationSummary {
    pub clips: usize,
    pub worst_corner_px: Spread,
    pub worst_table_mm: Spread,
    /// |focal error| %, over the clips that found their own camera.
    pub focal_error_percent: Spread,
    /// Clips whose table error is over what their calibration claimed.
    pub over_claim: usize,
}

/// Pools clips' calibration checks.
pub fn pool_calibration<'a>(
    checks: impl IntoIterator<Item = &'a CalibrationCheck>,
) -> CalibrationSummary {
    let checks: Vec<&CalibrationCheck> = checks.into_iter().collect();
    CalibrationSummary {
        clips: checks.len(),
        worst_corner_px: Spread::of(checks.iter().map(|c| c.worst_corner_px).collect()),
        worst_table_mm: Spread::of(checks.iter().map(|c| c.worst_table_mm).collect()),
        focal_error_percent: Spread::of(
            checks
                .iter()
                .filter_map(|c| c.focal_error_percent.map(f64::abs))
                .collect(),
        ),
        over_claim: checks
            .iter()
            .filter(|c| c.claimed_mm.is_some_and(|m| c.worst_table_mm > m))
            .count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::LostItem;

    struct Still(BTreeMap<ItemId, Vec<Pose>>);
    impl TruthPoses for Still {
        fn pose_at(&self, item: ItemId, frame: FrameIdx) -> Option<Pose> {
            self.0
                .get(&item)
                .and_then(|v| v.get(frame as usize).copied())
        }
        fn items(&self) -> Vec<ItemId> {
            self.0.keys().copied().collect()
        }
    }

    fn shot(flick: u64, lost: Option<(ItemId, f64)>, score: Vec<i32>) -> Shot {
        let mut s = Shot {
            flick_frame: flick,
            rest_frame: flick + 20,
            score,
            ..Default::default()
        };
        s.end.insert(ItemId::fish(0), Pose::fish(100.0, 100.0, 0.5));
        if let Some((item, y)) = lost {
            s.lost.push(LostItem {
                item,
                frame: flick + 5,
                exit: Pose::coin(1000.0, y),
            });
        }
        s
    }

    fn record(shots: Vec<Shot>) -> Record {
        Record {
            version: 1,
            video: Default::default(),
            players: vec!["a".into(), "b".into()],
            shots,
            scores: vec![1, 0],
            game: None,
            table_mm: None,
        }
    }

    #[test]
    fn perfect_record_scores_perfectly_and_errors_are_counted() {
        let poses = Still(BTreeMap::new());
        let truth = record(vec![shot(30, Some((ItemId::coin(1), 300.0)), vec![1, 0])]);
        let (e, _) = evaluate(&truth, &truth, &poses);
        assert_eq!(e.matched_shots, 1);
        assert_eq!(e.lost_precision(), 1.0);
        assert_eq!(e.lost_recall(), 1.0);
        assert_eq!(e.score_agreement, 1);
        assert_eq!(e.rest_position_mm.max, 0.0);

        let mut off = shot(31, None, vec![0, 0]);
        off.end
            .insert(ItemId::fish(0), Pose::fish(103.0, 104.0, 0.5));
        let (e, _) = evaluate(&record(vec![off]), &truth, &poses);
        assert_eq!(e.lost_false_negative, 1);
        assert_eq!(e.lost_recall(), 0.0);
        assert_eq!(e.score_agreement, 0);
        assert!((e.rest_position_mm.median - 5.0).abs() < 1e-9);
        assert_eq!(e.flick_frame.max, 1.0);
    }

    #[test]
    fn wrong_calls_not_flagged_are_listed_and_pooled() {
        use crate::record::{Call, Decision, Evidence};
        let poses = Still(BTreeMap::new());
        let truth = record(vec![shot(30, Some((ItemId::coin(1), 300.0)), vec![1, 0])]);
        // The record puts the exit 100 mm off: wrong. Sure of it, it is missed.
        let exit_call = |confidence: f64| {
            let mut s = shot(30, Some((ItemId::coin(1), 400.0)), vec![1, 0]);
            s.decisions.push(Decision {
                call: Call::Exit,
                item: ItemId::coin(1),
                other: None,
                evidence: Evidence::new(confidence, "coin:1 crossed the edge"),
            });
            record(vec![s])
        };
        let (sure, _) = evaluate(&exit_call(0.95), &truth, &poses);
        assert_eq!((sure.review.wrong, sure.review.wrong_flagged), (1, 0));
        assert_eq!(
            sure.missed,
            vec!["shot 0: exit coin:1 conf 0.95: coin:1 crossed the edge".to_string()]
        );
        let (unsure, _) = evaluate(&exit_call(0.3), &truth, &poses);
        assert_eq!((unsure.review.wrong, unsure.review.wrong_flagged), (1, 1));
        assert!(unsure.missed.is_empty());
        let (pooled, _) = pool([
            (&sure, &EvalSamples::default()),
            (&unsure, &EvalSamples::default()),
        ]);
        assert_eq!(pooled.missed.len(), 1);
    }

    #[test]
    fn totals_pool_the_samples_and_sum_the_counts() {
        let a_samples = EvalSamples {
            rest_position: vec![1.0, 2.0, 3.0],
            flick_frame: vec![0.0],
            ..Default::default()
        };
        let b_samples = EvalSamples {
            rest_position: (0..7).map(|k| 10.0 + k as f64).collect(),
            flick_frame: vec![2.0, 4.0],
            exit_point: vec![5.0],
            ..Default::default()
        };
        let mut a = Evaluation {
            truth_shots: 1,
            record_shots: 2,
            matched_shots: 1,
            identity_switches: 1,
            lost_true_positive: 2,
            lost_false_negative: 1,
            score_agreement: 1,
            totals_agree: true,
            ..Default::default()
        };
        a.set_spreads(&a_samples);
        let mut b = Evaluation {
            truth_shots: 3,
            record_shots: 3,
            matched_shots: 3,
            identity_switches: 2,
            lost_true_positive: 1,
            lost_false_positive: 1,
            score_agreement: 2,
            totals_agree: false,
            ..Default::default()
        };
        b.set_spreads(&b_samples);
        let (t, all) = pool([(&a, &a_samples), (&b, &b_samples)]);
        assert_eq!((t.truth_shots, t.record_shots, t.matched_shots), (4, 5, 4));
        assert_eq!(t.identity_switches, 3);
        assert_eq!(
            (
                t.lost_true_positive,
                t.lost_false_positive,
                t.lost_false_negative
            ),
            (3, 1, 1)
        );
        assert_eq!(t.score_agreement, 3);
        assert!(!t.totals_agree);
        assert_eq!(all.rest_position.len(), 10);
        // 1 2 3 10 11 12 13 14 15 16: the pooled median is sample 5 (index
        // round(4.5) = 5) = 12, not the mean of the medians (2 + 13) / 2 = 7.5.
        assert_eq!(t.rest_position_mm.median, 12.0);
        assert_eq!(t.rest_position_mm.count, 10);
        assert_eq!(t.rest_position_mm.max, 16.0);
        assert_eq!(t.rest_position_mm.p95, 16.0);
        assert_eq!(t.flick_frame.median, 2.0);
        assert_eq!(t.exit_point_mm.count, 1);
        assert_eq!(t.motion_position_mm, Spread::default());
        // Pooling one part changes nothing; pooling none agrees on nothing.
        let (one, _) = pool([(&a, &a_samples)]);
        assert_eq!(one, a);
        assert!(!pool([]).0.totals_agree);
    }

    #[test]
    fn a_suite_with_a_bad_or_repeated_clip_name_is_refused() {
        let clip = |name: &str| ClipSpec {
            name: name.into(),
            scenario: "match".into(),
            seed: 1,
            fps: 30.0,
            hand: true,
            players: None,
            moves: None,
            size: None,
            note: String::new(),
            look: None,
        };
        let suite = |clips| Suite {
            description: String::new(),
            size: "1280x720".into(),
            mm_per_px: None,
            clips,
        };
        assert_eq!(suite(vec![clip("a-1"), clip("b_2.x")]).validate(), Ok(()));
        assert_eq!(suite(vec![]).validate(), Err(SuiteError::Empty));
        assert!(matches!(
            suite(vec![clip("../up")]).validate(),
            Err(SuiteError::BadName(_))
        ));
        assert!(matches!(
            suite(vec![clip("a"), clip("a")]).validate(),
            Err(SuiteError::Duplicate(_))
        ));
        let mut fast = clip("fast");
        fast.fps = 1000.0;
        assert!(matches!(
            suite(vec![fast]).validate(),
            Err(SuiteError::Clip { .. })
        ));
    }

    #[test]
    fn a_track_that_jumps_to_the_other_coin_is_a_switch() {
        let mut m = BTreeMap::new();
        m.insert(
            ItemId::coin(0),
            (0..10)
                .map(|f| Pose::coin(100.0 + f as f64 * 10.0, 100.0))
                .collect(),
        );
        m.insert(
            ItemId::coin(1),
            (0..10).map(|_| Pose::coin(300.0, 100.0)).collect(),
        );
        let poses = Still(m);
        let mut s = shot(0, None, vec![0, 0]);
        let rows: Vec<Vec<f64>> = (0..10)
            .map(|f| {
                if f < 5 {
                    vec![f as f64, 100.0 + f as f64 * 10.0, 100.0]
                } else {
                    vec![f as f64, 300.0, 100.0]
                }
            })
            .collect();
        s.tracks.insert(ItemId::coin(0), rows);
        let truth = record(vec![shot(0, None, vec![0, 0])]);
        let (e, _) = evaluate(&record(vec![s]), &truth, &poses);
        assert_eq!(e.identity_switches, 1);
    }

    /// coin:0 falls off at frame 5 (the truth has no pose for it after); the track
    /// still sees it just beyond the edge. That is no switch to coin:1, 200 mm away;
    /// a row lying on coin:1 would be.
    #[test]
    fn a_row_of_an_item_off_the_table_is_no_switch_unless_it_lies_on_another() {
        let mut m = BTreeMap::new();
        m.insert(
            ItemId::coin(0),
            (0..5)
                .map(|f| Pose::coin(100.0, 20.0 - 4.0 * f as f64))
                .collect(),
        );
        m.insert(
            ItemId::coin(1),
            (0..10).map(|_| Pose::coin(300.0, 100.0)).collect(),
        );
        let poses = Still(m);
        let truth = record(vec![shot(0, None, vec![0, 0])]);
        let switches = |last: [f64; 2]| {
            let mut s = shot(0, None, vec![0, 0]);
            let mut rows: Vec<Vec<f64>> = (0..5)
                .map(|f| vec![f as f64, 100.0, 20.0 - 4.0 * f as f64])
                .collect();
            rows.push(vec![5.0, 100.0, -3.0]);
            rows.push(vec![6.0, last[0], last[1]]);
            s.tracks.insert(ItemId::coin(0), rows);
            evaluate(&record(vec![s]), &truth, &poses)
                .0
                .identity_switches
        };
        assert_eq!(switches([100.0, -6.0]), 0);
        assert_eq!(switches([300.0, 100.0]), 1);
    }

    fn calibration(rows: [[f64; 3]; 3], corners_px: [[f64; 2]; 4]) -> TableCalibration {
        let file = crate::calibration::TableFile {
            corners_mm: vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 700.0], [0.0, 700.0]],
            image_corners_px: corners_px.to_vec(),
            homography: rows,
            camera: crate::calibration::CameraIntrinsics::pinhole([1280, 720], 900.0),
            reprojection_error_mm: 0.0,
        };
        TableCalibration::from_file(file, "test").unwrap()
    }

    const PX: [[f64; 2]; 4] = [
        [100.0, 50.0],
        [1100.0, 50.0],
        [1100.0, 610.0],
        [100.0, 610.0],
    ];

    #[test]
    fn calibration_check_measures_the_offset_and_sees_the_half_turn() {
        let truth = calibration(
            [[1.0, 0.0, -100.0], [0.0, 1.25, -62.5], [0.0, 0.0, 1.0]],
            PX,
        );
        let same = check_calibration(&truth, &truth);
        assert!(
            same.worst_table_mm < 1e-9 && same.worst_corner_px < 1e-9,
            "{same:?}"
        );
        assert_eq!(same.corner_px.len(), 4);
        assert!(!same.half_turn && same.focal_error_percent.is_none());
        // Ours 2 px to the right everywhere: every point 2 mm off along x.
        let moved_px = PX.map(|[u, v]| [u + 2.0, v]);
        let moved = calibration(
            [[1.0, 0.0, -102.0], [0.0, 1.25, -62.5], [0.0, 0.0, 1.0]],
            moved_px,
        );
        let c = check_calibration(&truth, &moved);
        assert!((c.worst_table_mm - 2.0).abs() < 1e-9, "{c:?}");
        assert!((c.worst_corner_px - 2.0).abs() < 1e-9, "{c:?}");
        // The same table numbered from the opposite corner.
        let turned_px = [PX[2], PX[3], PX[0], PX[1]];
        let turned = calibration(
            [[-1.0, 0.0, 1100.0], [0.0, -1.25, 762.5], [0.0, 0.0, 1.0]],
            turned_px,
        );
        let t = check_calibration(&truth, &turned);
        assert!(
            t.half_turn && t.worst_table_mm < 1e-9 && t.worst_corner_px < 1e-9,
            "{t:?}"
        );
        let summary = pool_calibration([&same, &c, &t]);
        assert_eq!(summary.clips, 3);
        assert!((summary.worst_table_mm.max - 2.0).abs() < 1e-9);
    }
}
