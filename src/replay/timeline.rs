//! What the record says is on the table at any video frame — which shot, who moves,
//! the running score, every visible item's pose, what was lost and where — and
//! which input frames the annotated video writes (`--shot`, `--slow`). Pure; the
//! annotated video only draws what this module decides. Uses: model, record.

use super::{ReplayError, Scene};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{LostItem, Shot, TrackRow};

/// Where a frame lies relative to the shots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the first flick.
    Opening,
    /// Between a shot's flick and its rest.
    Moving,
    /// After a shot's rest, before the next flick (put-backs happen here).
    Resting,
}

/// The state of the table at one frame, as the record tells it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameState {
    pub frame: FrameIdx,
    pub phase: Phase,
    /// Position in `record.shots` of the current (or last finished) shot.
    pub shot: Option<usize>,
    /// The current shot's mover (the next shot's mover during the opening).
    pub mover: Option<PlayerIdx>,
    /// Running totals: every shot whose rest frame is at or before this frame.
    pub scores: Vec<i32>,
    /// Items on the table and their poses.
    pub items: Vec<(ItemId, Pose)>,
    /// The current shot's items already lost at this frame.
    pub lost: Vec<LostItem>,
    /// Coins lying in holes (`coin`, `fish`), once the shot is at rest.
    pub coins_in_holes: Vec<(ItemId, ItemId)>,
}

/// The pose a track row gives, `None` for a malformed row (rejected by `Scene::new`).
pub fn row_pose(item: ItemId, row: &TrackRow) -> Option<Pose> {
    match (item.is_fish(), row.as_slice()) {
        (true, [_, x, y, t, ..]) => Some(Pose::fish(*x, *y, *t)),
        (false, [_, x, y, ..]) => Some(Pose::coin(*x, *y)),
        _ => None,
    }
}

/// The frame of a track row.
pub fn row_frame(row: &TrackRow) -> FrameIdx {
    row.first()
        .map(|f| f.max(0.0).round() as FrameIdx)
        .unwrap_or(0)
}

/// The last track row at or before `frame` (rows are sorted by `Scene::new`).
pub fn track_at(rows: &[TrackRow], frame: FrameIdx) -> Option<&TrackRow> {
    let n = rows.partition_point(|r| row_frame(r) <= frame);
    n.checked_sub(1).map(|i| &rows[i])
}

impl Scene {
    /// The position of the shot a frame belongs to: the last shot whose flick is at or
    /// before it; `None` before the first flick.
    pub fn shot_at(&self, frame: FrameIdx) -> Option<usize> {
        self.record
            .shots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.flick_frame <= frame)
            .max_by_key(|(_, s)| s.flick_frame)
            .map(|(i, _)| i)
    }

    /// Where an item is at `frame` during shot `shot` (flick..rest); `None` when it is
    /// not on the table (lost by then, or not there at all).
    pub fn pose_in_shot(&self, shot: &Shot, item: ItemId, frame: FrameIdx) -> Option<Pose> {
        if let Some(l) = shot.lost.iter().find(|l| l.item == item) {
            if frame >= l.frame {
                return None;
            }
        }
        if frame >= shot.rest_frame {
            if let Some(p) = shot.end.get(&item) {
                return Some(*p);
            }
        }
        if let Some(rows) = shot.tracks.get(&item) {
            if let Some(p) = track_at(rows, frame).and_then(|r| row_pose(item, r)) {
                return Some(p);
            }
        }
        shot.start.get(&item).copied()
    }

    /// The state of the table at `frame`.
    pub fn state_at(&self, frame: FrameIdx) -> FrameState {
        let players = self.player_count();
        let mut scores = vec![0; players];
        for s in self.record.shots.iter().filter(|s| s.rest_frame <= frame) {
            for (t, v) in scores.iter_mut().zip(&s.score) {
                *t += v;
            }
        }
        let Some(pos) = self.shot_at(frame) else {
            let first = self.record.shots.iter().min_by_key(|s| s.flick_frame);
            let mut items: Vec<(ItemId, Pose)> = first
                .map(|s| s.start.iter().map(|(k, v)| (*k, *v)).collect())
                .unwrap_or_default();
            items.sort_by_key(|(k, _)| *k);
            return FrameState {
                frame,
                phase: Phase::Opening,
                shot: None,
                mover: first.map(|s| s.player),
                scores,
                items,
                lost: Vec::new(),
                coins_in_holes: Vec::new(),
            };
        };
        let shot = &self.record.shots[pos];
        let lost: Vec<LostItem> = shot
            .lost
            .iter()
            .filter(|l| l.frame <= frame)
            .cloned()
            .collect();
        if frame < shot.rest_frame {
            let mut ids: Vec<ItemId> = shot
                .start
                .keys()
                .chain(shot.tracks.keys())
                .copied()
                .collect();
            ids.sort();
            ids.dedup();
            let items = ids
                .into_iter()
                .filter_map(|id| self.pose_in_shot(shot, id, frame).map(|p| (id, p)))
                .collect();
            return FrameState {
                frame,
                phase: Phase::Moving,
                shot: Some(pos),
                mover: Some(shot.player),
                scores,
                items,
                lost,
                coins_in_holes: Vec::new(),
            };
        }
        // At rest: the rest poses, then items put back before the next flick as they appear.
        let mut items: Vec<(ItemId, Pose)> = shot.end.iter().map(|(k, v)| (*k, *v)).collect();
        let next = self
            .record
            .shots
            .iter()
            .filter(|s| s.flick_frame > shot.flick_frame)
            .min_by_key(|s| s.flick_frame);
        if let Some(before) = next.and_then(|s| s.before.as_ref()) {
            for placed in before.placed.iter().filter(|p| p.frame <= frame) {
                items.retain(|(k, _)| *k != placed.item);
                items.push((placed.item, placed.pose));
            }
        }
        items.sort_by_key(|(k, _)| *k);
        FrameState {
            frame,
            phase: Phase::Resting,
            shot: Some(pos),
            mover: Some(shot.player),
            scores,
            items,
            lost,
            coins_in_holes: shot.coins_in_holes.iter().map(|(c, f)| (*c, *f)).collect(),
        }
    }

    /// The input frames a shot's clip covers: up to one second before the flick (not
    /// before the previous rest) to one second after the rest (not into the next flick).
    pub fn shot_window(&self, pos: usize, total_frames: u64) -> (FrameIdx, FrameIdx) {
        let shot = &self.record.shots[pos];
        let pad = self.fps.round().max(1.0) as u64;
        let prev_rest = self
            .record
            .shots
            .iter()
            .filter(|s| s.flick_frame < shot.flick_frame)
            .map(|s| s.rest_frame + 1)
            .max()
            .unwrap_or(0);
        let next_flick = self
            .record
            .shots
            .iter()
            .filter(|s| s.flick_frame > shot.flick_frame)
            .map(|s| s.flick_frame.saturating_sub(1))
            .min()
            .unwrap_or(u64::MAX);
        let first = shot
            .flick_frame
            .saturating_sub(pad)
            .max(prev_rest.min(shot.flick_frame));
        let last = (shot.rest_frame + pad)
            .min(next_flick.max(shot.rest_frame))
            .min(total_frames.saturating_sub(1));
        (first.min(last), last)
    }

    /// The sequence of input frames the annotated video writes: every frame (or one
    /// shot's window, by record `index`), frames between a flick and its rest written
    /// `slow` times each.
    pub fn frame_plan(
        &self,
        total_frames: u64,
        shot_index: Option<usize>,
        slow: u32,
    ) -> Result<Vec<FrameIdx>, ReplayError> {
        let (first, last) = match shot_index {
            Some(i) => self.shot_window(self.shot_position(i)?, total_frames),
            None if total_frames == 0 => return Ok(Vec::new()),
            None => (0, total_frames - 1),
        };
        let slow = slow.max(1) as usize;
        let mut plan = Vec::new();
        for f in first..=last.min(total_frames.saturating_sub(1)) {
            let moving = self
                .record
                .shots
                .iter()
                .any(|s| s.flick_frame <= f && f <= s.rest_frame);
            let times = if moving { slow } else { 1 };
            plan.extend(std::iter::repeat_n(f, times));
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Record, Shot, VideoInfo};
    use std::collections::BTreeMap;

    fn scene() -> Scene {
        let mut tracks = BTreeMap::new();
        tracks.insert(
            ItemId::fish(0),
            (10..=20)
                .map(|f| vec![f as f64, 100.0 + 10.0 * (f - 10) as f64, 100.0, 0.0])
                .collect(),
        );
        tracks.insert(
            ItemId::coin(1),
            vec![vec![12.0, 500.0, 300.0], vec![14.0, 600.0, 300.0]],
        );
        let shot = Shot {
            index: 0,
            player: 0,
            flick_frame: 10,
            rest_frame: 20,
            start: [
                (ItemId::fish(0), Pose::fish(100.0, 100.0, 0.0)),
                (ItemId::coin(1), Pose::coin(500.0, 300.0)),
            ]
            .into_iter()
            .collect(),
            end: [(ItemId::fish(0), Pose::fish(200.0, 100.0, 0.0))]
                .into_iter()
                .collect(),
            tracks,
            lost: vec![crate::record::LostItem {
                item: ItemId::coin(1),
                frame: 15,
                exit: Pose::coin(1000.0, 300.0),
            }],
            score: vec![1, 0],
            ..Default::default()
        };
        let record = Record {
            version: 1,
            video: VideoInfo {
                fps: 10.0,
                frames: 40,
                ..Default::default()
            },
            players: vec!["A".into(), "B".into()],
            shots: vec![shot],
            scores: vec![1, 0],
            game: None,
            table_mm: None,
        };
        Scene::new(record, None, None).unwrap()
    }

    #[test]
    fn state_follows_tracks_loses_items_and_scores_at_rest() {
        let s = scene();
        let st = s.state_at(5);
        assert_eq!(st.phase, Phase::Opening);
        assert_eq!(st.items.len(), 2);
        let st = s.state_at(13);
        assert_eq!(st.phase, Phase::Moving);
        assert_eq!(
            st.items[0],
            (ItemId::fish(0), Pose::fish(130.0, 100.0, 0.0))
        );
        assert_eq!(st.items[1], (ItemId::coin(1), Pose::coin(500.0, 300.0)));
        assert_eq!(st.scores, vec![0, 0]);
        let st = s.state_at(16);
        assert_eq!(st.items.len(), 1, "coin:1 is lost at frame 15");
        assert_eq!(st.lost.len(), 1);
        let st = s.state_at(25);
        assert_eq!(st.phase, Phase::Resting);
        assert_eq!(
            st.items,
            vec![(ItemId::fish(0), Pose::fish(200.0, 100.0, 0.0))]
        );
        assert_eq!(st.scores, vec![1, 0]);
    }

    #[test]
    fn frame_plan_repeats_moving_frames_and_cuts_shots() {
        let s = scene();
        assert_eq!(
            s.frame_plan(40, None, 1).unwrap(),
            (0..40).collect::<Vec<_>>()
        );
        let slow = s.frame_plan(40, None, 4).unwrap();
        assert_eq!(slow.len(), 40 + 3 * 11);
        assert_eq!(slow.iter().filter(|&&f| f == 15).count(), 4);
        assert_eq!(slow.iter().filter(|&&f| f == 25).count(), 1);
        let one = s.frame_plan(40, Some(0), 1).unwrap();
        assert_eq!(one.first(), Some(&0));
        assert_eq!(one.last(), Some(&30));
        assert!(s.frame_plan(40, Some(3), 1).is_err());
    }
}
