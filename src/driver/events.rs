//! What the driver says as a match is played: one [`EventLine`] per thing that
//! happened, serialised as one JSON object a line (`live`'s stdout and its journal),
//! versioned by [`EVENT_VERSION`]. docs/live.md documents the schema.
//! Uses: model, config, record, rules.

use crate::config::Items;
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{Change, PutBack, Shot};
use crate::rules::PointEntry;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema version this build writes and reads (older ones too). Adding a field or
/// an event kind keeps it; renaming, removing or changing the meaning of one raises it.
/// 2: `flick` is told the moment motion starts (its `frame` the frame motion was seen;
/// the first item moved, judged later, in `shot_over`); `flick_withdrawn`; a `violation`
/// may be told as it happens (`judged: false`: R11 5, 30 s without a flick).
/// 3: `amended` (a referee's correction from the scoreboard page: it changes the
/// match state a resume starts from, so a reader that does not know it must refuse
/// the journal rather than skip it); `match_ready`'s `table` and `colors`,
/// `shot_over`'s `paths` (for the page's table diagram; absent from older lines).
/// 4: `camera` `bumped` (the table found moved in the picture: `shift_mm`, and the
/// re-fitted calibration in `table`, which a resume goes on with, or `refused`): a
/// reader that does not know it would resume with the old calibration.
/// 5: `amended`'s `undone` (a referee's undo from the page: amendment `number` undone,
/// which a reader that does not know it would replay as that amendment made again).
pub const EVENT_VERSION: u32 = 5;

/// The table and the items' shapes, for drawing the table (table mm): what the
/// scoreboard page needs to draw rest poses and put-back poses to scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableShape {
    /// The table top's corners, in order (corner 0 first).
    pub corners: Vec<[f64; 2]>,
    /// The fish's outline in the fish frame (hole centre at the origin, +x to the
    /// tag's far end).
    pub fish: Vec<[f64; 2]>,
    pub hole_radius: f64,
    pub coin_radius: f64,
}

impl TableShape {
    /// The shapes of `items` on a table with these `corners` (mm).
    pub fn new(corners: Vec<[f64; 2]>, items: &Items) -> TableShape {
        TableShape {
            corners,
            fish: items.fish.outline.clone(),
            hole_radius: items.fish.hole_radius,
            coin_radius: items.coin.radius,
        }
    }
}

/// How far apart (mm) the points of a path drawn on the page are at least: a shot's
/// track has a sighting a frame, far more than a diagram needs.
pub const PATH_STEP_MM: f64 = 4.0;
/// Most points a path keeps (the rest are thinned evenly).
pub const PATH_POINTS: usize = 64;

/// Each item's path from the flick to its rest or its loss, thinned for drawing: a
/// point at least [`PATH_STEP_MM`] from the last kept, the last sighting always, at
/// most [`PATH_POINTS`], rounded to 0.1 mm; items that did not move are left out.
pub fn shot_paths(shot: &Shot) -> BTreeMap<ItemId, Vec<[f64; 2]>> {
    let round = |v: f64| (v * 10.0).round() / 10.0;
    let mut out = BTreeMap::new();
    for (item, rows) in &shot.tracks {
        let points: Vec<[f64; 2]> = rows
            .iter()
            .filter(|r| r.len() >= 3 && r[1].is_finite() && r[2].is_finite())
            .map(|r| [r[1], r[2]])
            .collect();
        let mut kept: Vec<[f64; 2]> = Vec::new();
        for p in &points {
            let far = kept
                .last()
                .is_none_or(|q| (p[0] - q[0]).hypot(p[1] - q[1]) >= PATH_STEP_MM);
            if far {
                kept.push(*p);
            }
        }
        if let (Some(last), Some(kept_last)) = (points.last(), kept.last()) {
            if last != kept_last {
                kept.push(*last);
            }
        }
        if kept.len() < 2 {
            continue;
        }
        if kept.len() > PATH_POINTS {
            let n = kept.len();
            kept = (0..PATH_POINTS)
                .map(|k| kept[k * (n - 1) / (PATH_POINTS - 1)])
                .collect();
        }
        out.insert(
            *item,
            kept.into_iter()
                .map(|[x, y]| [round(x), round(y)])
                .collect(),
        );
    }
    out
}

/// One shot's points changed by an amendment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreChange {
    pub shot: usize,
    pub before: Vec<i32>,
    pub after: Vec<i32>,
}

/// One event with when it happened and when it was known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventLine {
    /// [`EVENT_VERSION`] of the writer.
    pub version: u32,
    /// The frame the event is about (a flick's frame, an item's exit frame, a shot's
    /// rest frame), container indices from 0.
    pub frame: FrameIdx,
    /// `frame` in seconds from the start of the source.
    pub t_s: f64,
    /// The last frame read when the event was known: `known_at - frame` frames of
    /// latency. A resume goes on from the frame after the last `known_at`.
    pub known_at: FrameIdx,
    #[serde(flatten)]
    pub event: Event,
}

/// The camera's state, as `camera` events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CameraState {
    /// The source opened and frames come.
    Connected,
    /// Frames stopped coming (a camera unplugged, a stream gone).
    Lost,
    /// Frames come again after a loss.
    Reconnected,
    /// Frames were dropped (the analysis fell behind a paced source).
    FramesDropped,
    /// The table's outline moved in the picture (a bumped camera): re-fitted, or
    /// the re-fit refused (the shots after it are doubtful), or back where the
    /// calibration in use puts it.
    Bumped,
}

/// A put-back duty: what must go back where before the next move (R6, R8, R9, R10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Duty {
    pub item: ItemId,
    /// For a fish the legal pose the rules computed, for a coin the hole centre;
    /// absent when there is none (then `rule` and `reason` say why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose: Option<Pose>,
    /// `R6a`, `R6b`, `R6c`, `R8a` … .
    pub rule: String,
    /// Coins only (R8): `possible` (must go back now), `optional` or `impossible`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Coins only: whether it may go back at all (`possible` or `optional`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may_go_back: Option<bool>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

impl From<&PutBack> for Duty {
    fn from(p: &PutBack) -> Duty {
        Duty {
            item: p.item,
            pose: p.pose,
            rule: p.rule.clone(),
            verdict: p.verdict.clone(),
            may_go_back: p.verdict.as_deref().map(|v| v != "impossible"),
            reason: p.reason.clone(),
        }
    }
}

/// An amendment made before the clip began, as `match_ready` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MadeBefore {
    /// Its number in the record (`{"undo": K}` names it).
    pub number: u32,
    pub shot: usize,
    /// In `fishtrack amend`'s words (`amend::summary`).
    pub summary: String,
    pub why: String,
}

/// What happened. Serialised with its kind in `"event"` (snake case), its fields
/// beside the [`EventLine`]'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The analysis began: who plays, the scores and whose move it is, where the
    /// items lie when known (a start or a resume; empty for a fresh match, whose
    /// items are named as they are first seen).
    MatchReady {
        players: Vec<String>,
        moves_per_player: u32,
        scores: Vec<i32>,
        mover: PlayerIdx,
        #[serde(default)]
        poses: BTreeMap<ItemId, Pose>,
        /// The table and the items' shapes, to draw them (version 3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        table: Option<TableShape>,
        /// Each player's colour, `#rrggbb`, in move order (version 3).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        colors: Vec<String>,
        /// The amendments in force on the shots judged before this clip (a record
        /// continued, a camera resumed), so that a page joining then lists them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        amendments: Vec<MadeBefore>,
        /// Why amendments will be refused in this run, when they will be (a match
        /// started from a state.json, without the shots before it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        amend_refused: Option<String>,
    },
    /// The next move may be made once the duties are done: its number (1 = the
    /// match's first move; moves out of turn do not count), who makes it, and what
    /// must be put back first, in put-back order.
    MoveReady {
        number: u32,
        /// Index the next shot will have in the record.
        shot: usize,
        mover: PlayerIdx,
        #[serde(default)]
        duties: Vec<Duty>,
    },
    /// A shot was struck: by whom by turn order, and the item seen to move first
    /// (absent if unseen or not known yet; another player's fish is R11 1.1 or 3).
    /// Told the moment the motion is seen, when the first item moved is not known
    /// yet (`first_moved_known: false`: the judged one comes in the `shot_over`).
    Flick {
        shot: usize,
        mover: PlayerIdx,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_moved: Option<ItemId>,
        /// Whether `first_moved` is the judged one (true: told with the shot's
        /// judgement, as every version-1 flick was).
        #[serde(default = "yes")]
        first_moved_known: bool,
    },
    /// The motion a `flick` was told for came to nothing (no item went anywhere: a
    /// hand, a nudge): no shot; the move is still to be made.
    FlickWithdrawn {
        shot: usize,
        mover: PlayerIdx,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        detail: String,
    },
    /// An item left the table, crossing its edge at `exit` (table mm).
    ItemLost {
        shot: usize,
        item: ItemId,
        exit: Pose,
    },
    /// An item was put back on the table between shots, and where it came to rest;
    /// `duty` is what the rules asked for it, `legal` whether no put-back violation
    /// (R11 2.1, 2.3) names it.
    PutBackSeen {
        /// The shot whose interlude it was put back in.
        shot: usize,
        item: ItemId,
        pose: Pose,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duty: Option<Duty>,
        legal: bool,
    },
    /// A camera-visible violation (R11 code), with its evidence and fine. Told with
    /// the shot's judgement (`judged: true`), and R11 5 also the moment 30 s pass
    /// without a flick (`judged: false`, no fine: the judgement follows with the shot).
    Violation {
        shot: usize,
        code: String,
        player: PlayerIdx,
        evidence: String,
        fine: i32,
        #[serde(default = "yes")]
        judged: bool,
    },
    /// A shot came to rest and was judged: its points with their rules, the running
    /// scores, the rest poses (identities for a resume), the match state after it.
    ShotOver {
        shot: usize,
        mover: PlayerIdx,
        /// Whether it counted as the mover's move (false when out of turn).
        counted: bool,
        flick_frame: FrameIdx,
        /// The item seen to move first, as judged (absent if unseen).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_moved: Option<ItemId>,
        /// Points each player got for this shot.
        score: Vec<i32>,
        /// Where the points came from (R5, R7, R11).
        points: Vec<PointEntry>,
        /// Running totals after this shot.
        scores: Vec<i32>,
        /// Whose move is next.
        next_mover: PlayerIdx,
        /// Moves each player has made so far.
        moves_made: Vec<u32>,
        /// Rest poses of every item on the table.
        rest: BTreeMap<ItemId, Pose>,
        /// Items off the table after it.
        #[serde(default)]
        off_table: Vec<ItemId>,
        /// What must be put back before the next move.
        #[serde(default)]
        duties: Vec<Duty>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
        /// Each item's path from the flick on, thinned ([`shot_paths`]), for the
        /// page's diagram of the shot (version 3).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        paths: BTreeMap<ItemId, Vec<[f64; 2]>>,
    },
    /// A referee's amendment of a judged shot (from the scoreboard page, made by the
    /// library's `amend` as `fishtrack amend` makes it), or the undoing of one
    /// (`undone`, by the library's `amend::undo` as `fishtrack amend --undo K` does),
    /// and the match as re-scored: the totals, whose move, the duties, the rest poses
    /// replace those told before.
    Amended {
        /// 1, 2, … over the match, as the record numbers amendments; for an undo, the
        /// number of the amendment undone.
        number: u32,
        /// Amendment `number` was undone (version 5): `shot`, `what` and its keys and
        /// `why` are that amendment's, `when` is when it was undone.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        undone: bool,
        /// The shot amended.
        shot: usize,
        /// What was changed (`what`: `lost`, `not-lost`, `exit`, `coin-in`,
        /// `mover`, `drop-violation`, and its keys, as in a patch file).
        #[serde(flatten)]
        change: Change,
        why: String,
        /// UTC, RFC 3339.
        when: String,
        /// The change in words (`shot 0: coin:1 lost: on the table at (10, 20) →
        /// lost`; for an undo `shot 0: coin:1 lost (back to: on the table at (10,
        /// 20); was: lost)`).
        summary: String,
        scores_before: Vec<i32>,
        /// Running totals after it.
        scores: Vec<i32>,
        /// The shots whose points changed.
        #[serde(default)]
        shots_changed: Vec<ScoreChange>,
        /// The match after the last shot, as re-scored: the next move's number,
        /// whose it is, moves made, what lies where and what is off the table
        /// (with where it left), the duties, violations charged per player.
        number_next: u32,
        next_mover: PlayerIdx,
        moves_made: Vec<u32>,
        rest: BTreeMap<ItemId, Pose>,
        #[serde(default)]
        off_table: Vec<ItemId>,
        #[serde(default)]
        exits: BTreeMap<ItemId, Pose>,
        #[serde(default)]
        duties: Vec<Duty>,
        #[serde(default)]
        violations: Vec<u32>,
        /// Every player has made all their moves (an amended mover can end it).
        #[serde(default)]
        over: bool,
    },
    /// Every player has made all their moves.
    MatchOver { scores: Vec<i32>, shots: usize },
    /// The source's state.
    Camera {
        state: CameraState,
        /// Frames dropped, for `frames_dropped`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dropped: Option<u64>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        detail: String,
        /// For `bumped`: how far the table's outline lay from the calibration in
        /// use, worst over its edges (mm).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shift_mm: Option<f64>,
        /// For `bumped`: the table calibration (table.json's content) used from this
        /// frame on; absent when the re-fit was refused.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        table: Option<Box<crate::calibration::TableFile>>,
        /// For `bumped`: why the re-fit was refused (the shots after it are
        /// doubtful until the next re-fit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refused: Option<String>,
    },
    /// The record of a judged shot (record.json's `shots` entry), in the journal only
    /// (`live` prints it nowhere else): written just before its `shot_over`, so that a
    /// resumed match's record holds the shots judged before the crash whole.
    ShotRecord { record: Box<crate::record::Shot> },
}

impl Event {
    /// The kind as written in `"event"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::MatchReady { .. } => "match_ready",
            Event::MoveReady { .. } => "move_ready",
            Event::Flick { .. } => "flick",
            Event::FlickWithdrawn { .. } => "flick_withdrawn",
            Event::ItemLost { .. } => "item_lost",
            Event::PutBackSeen { .. } => "put_back_seen",
            Event::Violation { .. } => "violation",
            Event::ShotOver { .. } => "shot_over",
            Event::MatchOver { .. } => "match_over",
            Event::Camera { .. } => "camera",
            Event::ShotRecord { .. } => "shot_record",
            Event::Amended { .. } => "amended",
        }
    }
}

/// serde's default for flags that older lines lack.
fn yes() -> bool {
    true
}

impl EventLine {
    /// `event` about `frame`, known when `known_at` was read, at `fps`.
    pub fn new(frame: FrameIdx, known_at: FrameIdx, fps: f64, event: Event) -> EventLine {
        let t_s = if fps > 0.0 { frame as f64 / fps } else { 0.0 };
        EventLine {
            version: EVENT_VERSION,
            frame,
            t_s,
            known_at,
            event,
        }
    }

    /// One line of JSON, without the newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<EventLine> {
        let fish = ItemId::fish(1);
        let duty = Duty {
            item: ItemId::coin(0),
            pose: Some(Pose::coin(10.0, 20.0)),
            rule: "R8a".into(),
            verdict: Some("possible".into()),
            may_go_back: Some(true),
            reason: String::new(),
        };
        let events = vec![
            Event::MatchReady {
                players: vec!["Anna".into(), "Boris".into()],
                moves_per_player: 3,
                scores: vec![0, 0],
                mover: 0,
                poses: BTreeMap::new(),
                table: Some(TableShape::new(
                    vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 700.0], [0.0, 700.0]],
                    &Items::default_set(),
                )),
                colors: vec!["#d62728".into(), "#1f77b4".into()],
                amendments: vec![MadeBefore {
                    number: 1,
                    shot: 0,
                    summary: "shot 0: coin:1 lost: on the table at (537, 680) → lost".into(),
                    why: "fell behind the hand".into(),
                }],
                amend_refused: Some("started from a state.json".into()),
            },
            Event::Flick {
                shot: 0,
                mover: 0,
                first_moved: None,
                first_moved_known: false,
            },
            Event::FlickWithdrawn {
                shot: 0,
                mover: 0,
                detail: "nothing moved anywhere".into(),
            },
            Event::ItemLost {
                shot: 0,
                item: fish,
                exit: Pose::fish(0.0, 12.5, 1.0),
            },
            Event::ShotOver {
                shot: 0,
                mover: 0,
                counted: true,
                flick_frame: 3,
                first_moved: Some(ItemId::fish(0)),
                score: vec![1, 0],
                points: vec![PointEntry {
                    player: 0,
                    points: 1,
                    rule: "R5".into(),
                    reason: "fish:1 fell".into(),
                }],
                scores: vec![1, 0],
                next_mover: 1,
                moves_made: vec![1, 0],
                rest: BTreeMap::from([(ItemId::fish(0), Pose::fish(1.0, 2.0, 0.5))]),
                off_table: vec![fish],
                duties: vec![duty.clone()],
                notes: vec![],
                paths: BTreeMap::from([(fish, vec![[1.0, 2.0], [30.5, 2.0]])]),
            },
            Event::MoveReady {
                number: 2,
                shot: 1,
                mover: 1,
                duties: vec![duty.clone()],
            },
            Event::PutBackSeen {
                shot: 1,
                item: ItemId::coin(0),
                pose: Pose::coin(10.5, 20.0),
                duty: Some(duty),
                legal: true,
            },
            Event::Violation {
                shot: 1,
                code: "5".into(),
                player: 1,
                evidence: "31 s".into(),
                fine: 0,
                judged: false,
            },
            Event::MatchOver {
                scores: vec![1, 0],
                shots: 6,
            },
            Event::Camera {
                state: CameraState::FramesDropped,
                dropped: Some(4),
                detail: String::new(),
                shift_mm: None,
                table: None,
                refused: None,
            },
            Event::Amended {
                number: 1,
                undone: false,
                shot: 0,
                change: Change::Lost {
                    item: ItemId::coin(1),
                },
                why: "fell behind the hand".into(),
                when: "2026-12-03T10:45:00Z".into(),
                summary: "shot 0: coin:1 lost: on the table at (10, 20) → lost".into(),
                scores_before: vec![0, 0],
                scores: vec![1, 0],
                shots_changed: vec![ScoreChange {
                    shot: 0,
                    before: vec![0, 0],
                    after: vec![1, 0],
                }],
                number_next: 2,
                next_mover: 1,
                moves_made: vec![1, 0],
                rest: BTreeMap::from([(fish, Pose::fish(1.0, 2.0, 0.5))]),
                off_table: vec![ItemId::coin(1)],
                exits: BTreeMap::from([(ItemId::coin(1), Pose::coin(0.0, 5.0))]),
                duties: vec![],
                violations: vec![0, 0],
                over: false,
            },
        ];
        // The same amendment undone: the match as before it.
        let mut events = events;
        let mut undo = events.last().cloned().expect("the amendment above");
        if let Event::Amended {
            undone,
            when,
            summary,
            scores_before,
            scores,
            shots_changed,
            rest,
            off_table,
            exits,
            ..
        } = &mut undo
        {
            *undone = true;
            *when = "2026-12-03T10:47:00Z".into();
            *summary = "shot 0: coin:1 lost (back to: on the table at (10, 20); was: lost)".into();
            (*scores_before, *scores) = (vec![1, 0], vec![0, 0]);
            *shots_changed = vec![ScoreChange {
                shot: 0,
                before: vec![1, 0],
                after: vec![0, 0],
            }];
            rest.clear();
            off_table.clear();
            exits.clear();
        }
        events.push(undo);
        events
            .into_iter()
            .enumerate()
            .map(|(k, e)| EventLine::new(k as u64 * 10, k as u64 * 10 + 3, 30.0, e))
            .collect()
    }

    #[test]
    fn every_event_kind_round_trips_through_one_json_line() {
        for line in samples() {
            let json = line.to_json().expect("serialises");
            assert!(!json.contains('\n'), "{json}");
            let value: serde_json::Value = serde_json::from_str(&json).expect("json");
            assert_eq!(value["version"], EVENT_VERSION, "{json}");
            assert_eq!(value["event"], line.event.kind(), "{json}");
            let back: EventLine = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, line);
        }
    }

    #[test]
    fn a_version_1_flick_and_violation_read_as_judged() {
        let flick: EventLine = serde_json::from_str(
            r#"{"version":1,"frame":5,"t_s":0.1,"known_at":9,"event":"flick","shot":0,"mover":1}"#,
        )
        .expect("reads");
        assert!(matches!(
            flick.event,
            Event::Flick {
                first_moved_known: true,
                ..
            }
        ));
        let v: EventLine = serde_json::from_str(
            r#"{"version":1,"frame":5,"t_s":0.1,"known_at":9,"event":"violation","shot":0,"code":"5","player":1,"evidence":"","fine":-1}"#,
        )
        .expect("reads");
        assert!(matches!(v.event, Event::Violation { judged: true, .. }));
    }

    #[test]
    fn a_version_2_match_ready_and_shot_over_read_without_what_3_added() {
        let ready: EventLine = serde_json::from_str(
            r#"{"version":2,"frame":0,"t_s":0.0,"known_at":0,"event":"match_ready","players":["A"],"moves_per_player":1,"scores":[0],"mover":0,"poses":{}}"#,
        )
        .expect("reads");
        assert!(matches!(
            ready.event,
            Event::MatchReady { table: None, ref colors, .. } if colors.is_empty()
        ));
        let over: EventLine = serde_json::from_str(
            r#"{"version":2,"frame":9,"t_s":0.3,"known_at":12,"event":"shot_over","shot":0,"mover":0,"counted":true,"flick_frame":3,"score":[0],"points":[],"scores":[0],"next_mover":0,"moves_made":[1],"rest":{}}"#,
        )
        .expect("reads");
        assert!(matches!(over.event, Event::ShotOver { ref paths, .. } if paths.is_empty()));
    }

    #[test]
    fn an_amended_line_says_undone_only_for_an_undo() {
        let lines = samples();
        let told: Vec<String> = lines
            .iter()
            .filter(|l| l.event.kind() == "amended")
            .map(|l| l.to_json().expect("json"))
            .collect();
        assert_eq!(told.len(), 2);
        assert!(!told[0].contains("undone"), "{}", told[0]);
        assert!(told[1].contains("\"undone\":true"), "{}", told[1]);
        // A version-4 line (before undos) is an amendment made.
        let v4 = told[0].replacen(&format!("\"version\":{EVENT_VERSION}"), "\"version\":4", 1);
        let back: EventLine = serde_json::from_str(&v4).expect("reads");
        assert!(matches!(back.event, Event::Amended { undone: false, .. }));
    }

    #[test]
    fn a_path_is_thinned_to_steps_and_keeps_its_ends() {
        let mut shot = Shot::default();
        // 1 mm a frame for 300 frames, and a fish that never moved.
        let rows: Vec<Vec<f64>> = (0..300)
            .map(|k| vec![k as f64, 100.0 + k as f64, 50.0])
            .collect();
        shot.tracks.insert(ItemId::coin(0), rows);
        shot.tracks
            .insert(ItemId::fish(0), vec![vec![0.0, 5.0, 5.0, 0.0]; 40]);
        let paths = shot_paths(&shot);
        assert!(!paths.contains_key(&ItemId::fish(0)), "{paths:?}");
        let p = &paths[&ItemId::coin(0)];
        assert_eq!(p.first(), Some(&[100.0, 50.0]));
        assert_eq!(p.last(), Some(&[399.0, 50.0]));
        assert!(p.len() <= PATH_POINTS, "{}", p.len());
        assert!(p.len() >= PATH_POINTS / 2, "{}", p.len());
        assert!(p.windows(2).all(|w| w[1][0] > w[0][0]));
    }

    #[test]
    fn a_coin_duty_says_whether_it_may_go_back() {
        let mut p = PutBack {
            item: ItemId::coin(1),
            pose: None,
            rule: "R8c".into(),
            verdict: Some("impossible".into()),
            reason: "under a fish".into(),
            decision: None,
        };
        assert_eq!(Duty::from(&p).may_go_back, Some(false));
        p.verdict = Some("optional".into());
        assert_eq!(Duty::from(&p).may_go_back, Some(true));
        p.verdict = None;
        assert_eq!(Duty::from(&p).may_go_back, None);
    }
}
