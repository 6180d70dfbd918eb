//! Tracker accuracy against ground truth (`fishtrack eval`): a record made by
//! `analyse` compared with the simulator's truth, shot by shot and frame by frame.
//! Pure; the truth reaches it through [`TruthPoses`] (per-frame true poses) and a
//! truth record (shots with the true flick/rest frames, lost items, scores).
//! Uses: model, record.

use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::{Record, Shot};
use serde::Serialize;
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
    }
    for (i, r) in record.shots.iter().enumerate() {
        if !used[i] {
            e.lost_false_positive += r.lost.len();
        }
    }
    e.totals_agree = record.scores == truth.scores;
    e.rest_position_mm = Spread::of(s.rest_position.clone());
    e.rest_angle_deg = Spread::of(s.rest_angle.clone());
    e.motion_position_mm = Spread::of(s.motion_position.clone());
    e.exit_point_mm = Spread::of(s.exit_point.clone());
    e.flick_frame = Spread::of(s.flick_frame.clone());
    e.rest_frame = Spread::of(s.rest_frame.clone());
    (e, s)
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
                (Some((o, _)), None) if o != *id => Some(o),
                _ => Some(*id),
            };
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

/// |a − b| as angles, in [0, π].
pub fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
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
}
