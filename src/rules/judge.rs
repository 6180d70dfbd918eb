//! Judging one shot: the put-backs observed before it (R6–R10, R11 2.x, 4.2), the
//! turn (R3, R11 1.1 and 3), the delay (R11 5), its points (R5, R7 fines, R11 fines
//! and annulment), and the put-back duties it leaves (R6, R8, R9, R10).
//! Uses: config, geometry, model, record, scene, putback, coin, state.

use super::coin::{coin_put_back_verdict, Verdict};
use super::putback::{check_fish_pose, fish_put_back_pose, OBSERVED_TOLERANCE_MM};
use super::scene::Scene;
use super::state::MatchState;
use super::RulesError;
use crate::config::{FinePolicy, Game};
use crate::geometry::{FishFootprint, Table};
use crate::model::{FrameIdx, ItemId, PlayerIdx};
use crate::record::{PutBack, Shot, Violation};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// R11 code 5: a move may take at most this long from "ready" to the flick.
pub const MAX_MOVE_SECONDS: f64 = 30.0;
/// An item on the table that moved less than this between shots did not move (mm).
pub const DISTURB_TOLERANCE_MM: f64 = 2.0;

/// One line of a shot's points: who, how many, by which rule, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointEntry {
    pub player: PlayerIdx,
    pub points: i32,
    /// `R5`, `R7`, `R11`.
    pub rule: String,
    pub reason: String,
}

/// The rules' verdict on one shot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotJudgement {
    /// Who moved (the shot's `player`).
    pub mover: PlayerIdx,
    /// Whether the shot counts as the mover's move (false when out of turn).
    pub counted: bool,
    /// Points per player for this shot.
    pub score: Vec<i32>,
    /// Where the points came from.
    pub points: Vec<PointEntry>,
    /// What must be put back after this shot, in order (R9/R10).
    pub put_back: Vec<PutBack>,
    /// Violations seen from the previous rest up to this shot's rest.
    pub violations: Vec<Violation>,
}

/// Judges `shot` given the match so far; returns the state after it and the verdict.
pub fn judge_shot(
    game: &Game,
    table: &Table,
    state: &MatchState,
    shot: &Shot,
) -> Result<(MatchState, ShotJudgement), RulesError> {
    validate_shot(game, shot)?;
    let n = game.player_count();
    let mut next = state.clone();
    let mover = shot.player;
    let mut violations: Vec<Violation> = Vec::new();
    let mut points: Vec<PointEntry> = Vec::new();
    let flag = |violations: &mut Vec<Violation>, code: &str, player, frame, evidence: String| {
        violations.push(Violation {
            code: code.to_string(),
            player,
            frame,
            evidence,
            fine: 0,
            decision: None,
        });
    };

    // 1. The interlude: put-backs since the last rest (R6–R10, R11 2.x, 4.2).
    let last_placed_frame = check_interlude(game, table, state, shot, &mut next, &mut violations);
    for id in shot.start.keys() {
        // On the table at the flick: it was put back, whether or not that was seen.
        next.off_table.remove(id);
    }
    for duty in &state.duties {
        if !next.off_table.contains(&duty.item) {
            continue;
        }
        if duty.item.is_coin() && duty.verdict.as_deref() == Some(Verdict::Possible.as_str()) {
            flag(
                &mut violations,
                "2.2",
                duty.item.owner,
                shot.flick_frame,
                format!(
                    "{} could be put back ({}: {}) but the next move began without it",
                    duty.item, duty.rule, duty.reason
                ),
            );
        } else if duty.item.is_fish() && duty.pose.is_some() {
            flag(
                &mut violations,
                "2.3",
                duty.item.owner,
                shot.flick_frame,
                format!("{} was not put back before the next move", duty.item),
            );
        }
    }

    // 2. The turn (R3) and who set what moving (R11 1.1, 3).
    let mut counted = true;
    if state.is_over() {
        counted = false;
        flag(
            &mut violations,
            "3",
            mover,
            shot.flick_frame,
            format!(
                "moved after the end of the match (every player made {} moves)",
                game.moves_per_player
            ),
        );
    } else if mover != state.next_player {
        counted = false;
        flag(
            &mut violations,
            "3",
            mover,
            shot.flick_frame,
            format!(
                "moved out of turn: it was {}'s move ({})",
                game.players[state.next_player].name,
                ItemId::fish(state.next_player)
            ),
        );
    } else if let Some(first) = shot.first_moved.filter(|f| *f != ItemId::fish(mover)) {
        flag(
            &mut violations,
            "1.1",
            mover,
            shot.flick_frame,
            format!(
                "the first item set moving was {first}, not the mover's {}",
                ItemId::fish(mover)
            ),
        );
    }

    // 3. Delay (R11 5): from ready to the flick.
    if let Some(fps) = state.fps {
        let ready = shot
            .before
            .as_ref()
            .and_then(|b| b.ready_frame)
            .or_else(|| match (state.last_rest_frame, last_placed_frame) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            });
        if let Some(ready) = ready.filter(|r| *r <= shot.flick_frame) {
            let secs = (shot.flick_frame - ready) as f64 / fps;
            if secs > MAX_MOVE_SECONDS {
                flag(
                    &mut violations,
                    "5",
                    mover,
                    shot.flick_frame,
                    format!(
                        "{secs:.1} s from ready (frame {ready}) to the flick; at most {MAX_MOVE_SECONDS} s"
                    ),
                );
            }
        }
    }

    // A referee's amendment that dropped a violation (`fishtrack amend
    // --drop-violation`) holds whenever the shot is judged: no fine, no annulment.
    violations.retain(|v| {
        !shot
            .amendments
            .iter()
            .any(|a| a.change.dropped_code() == Some(v.code.as_str()))
    });

    // 4. Points: R7 fine, R5, R11 annulment and fines.
    let mut score = vec![0i32; n];
    let own_coin = ItemId::coin(mover);
    if counted && next.off_table.contains(&own_coin) {
        score[mover] -= 1;
        points.push(PointEntry {
            player: mover,
            points: -1,
            rule: "R7".into(),
            reason: format!("moved while {own_coin} was still not back"),
        });
    }
    let mut lost: Vec<ItemId> = shot.lost.iter().map(|l| l.item).collect();
    lost.sort();
    lost.dedup();
    let gained: Vec<ItemId> = lost
        .iter()
        .copied()
        .filter(|i| i.is_coin() && i.owner != mover)
        .collect();
    let penalised: Vec<ItemId> = lost
        .iter()
        .copied()
        .filter(|i| !(i.is_coin() && i.owner != mover))
        .collect();
    let cheated = violations
        .iter()
        .find(|v| v.player == mover && (v.code == "1.1" || v.code == "3"));
    if !gained.is_empty() {
        let names = join(&gained);
        match cheated {
            None => {
                score[mover] += gained.len() as i32;
                points.push(PointEntry {
                    player: mover,
                    points: gained.len() as i32,
                    rule: "R5".into(),
                    reason: format!("knocked off {names}"),
                });
            }
            Some(v) => points.push(PointEntry {
                player: mover,
                points: 0,
                rule: "R11".into(),
                reason: format!(
                    "+{} for {names} annulled: gained through violation {}",
                    gained.len(),
                    v.code
                ),
            }),
        }
    }
    if !penalised.is_empty() {
        score[mover] -= penalised.len() as i32;
        points.push(PointEntry {
            player: mover,
            points: -(penalised.len() as i32),
            rule: "R5".into(),
            reason: format!("lost {}", join(&penalised)),
        });
    }
    for v in violations.iter_mut() {
        let prior = next.violations[v.player];
        v.fine = match game.fine_policy {
            FinePolicy::None => 0,
            FinePolicy::Undisputed => -1,
            FinePolicy::Repeat if prior >= 1 => -1,
            FinePolicy::Repeat => 0,
        };
        next.violations[v.player] += 1;
        if v.fine != 0 {
            score[v.player] += v.fine;
            points.push(PointEntry {
                player: v.player,
                points: v.fine,
                rule: "R11".into(),
                reason: format!("fine for violation {}", v.code),
            });
        }
    }
    for (total, delta) in next.scores.iter_mut().zip(&score) {
        *total += delta;
    }
    if counted {
        next.advance_turn();
    }

    // 5. What must be put back now (R6–R10).
    for l in &shot.lost {
        next.off_table.insert(l.item);
        if l.item.is_fish() {
            next.exits.insert(l.item, l.exit.point());
        }
    }
    let mut put_back = duties(game, table, shot, &next);
    super::evidence::annotate(state, shot, &mut put_back, &mut violations);
    next.duties = put_back.clone();
    next.scene = Some(Scene::at_rest(shot));
    next.last_rest_frame = Some(shot.rest_frame);
    next.shots_judged += 1;

    Ok((
        next,
        ShotJudgement {
            mover,
            counted,
            score,
            points,
            put_back,
            violations,
        },
    ))
}

/// The put-back duties after a shot, in put-back order: every item off the table,
/// owner by owner in move order (R10), fish before coin (R9), each placed in the
/// scene before the next is decided.
fn duties(game: &Game, table: &Table, shot: &Shot, state: &MatchState) -> Vec<PutBack> {
    let mut scene = Scene::at_rest(shot);
    for id in &state.off_table {
        scene.remove(*id);
    }
    let lost_now: BTreeSet<ItemId> = shot.lost.iter().map(|l| l.item).collect();
    let mut out = Vec::new();
    for &id in &state.off_table {
        let pending = if lost_now.contains(&id) {
            ""
        } else {
            "R7: still off the table; "
        };
        if id.is_fish() {
            let exit = state
                .exits
                .get(&id)
                .copied()
                .unwrap_or_else(|| table.corners()[0]);
            let r = fish_put_back_pose(game, table, &scene, id.owner, exit);
            if let Some(pose) = r.pose {
                scene.place(id, pose);
            }
            out.push(PutBack {
                item: id,
                pose: r.pose,
                rule: r.rule.to_string(),
                verdict: None,
                reason: format!("{pending}{}", r.reason),
                decision: None,
            });
        } else {
            let v = coin_put_back_verdict(game, table, &scene, id.owner);
            if let (true, Some(pose)) = (v.verdict.allowed(), v.pose) {
                scene.place(id, pose);
            }
            out.push(PutBack {
                item: id,
                pose: v.pose,
                rule: v.rule.to_string(),
                verdict: Some(v.verdict.as_str().to_string()),
                reason: format!("{pending}{}", v.reason),
                decision: None,
            });
        }
    }
    out
}

/// Checks the put-backs and other movements observed before `shot`; updates
/// `next.off_table`; returns the frame of the last put-back seen.
fn check_interlude(
    game: &Game,
    table: &Table,
    state: &MatchState,
    shot: &Shot,
    next: &mut MatchState,
    violations: &mut Vec<Violation>,
) -> Option<FrameIdx> {
    let interlude = shot.before.as_ref()?;
    // Before the first shot there is no rest to start from: setting up the table
    // (R2) is not a put-back.
    state.scene.as_ref()?;
    let mut push = |code: &str, player, frame, evidence: String| {
        violations.push(Violation {
            code: code.to_string(),
            player,
            frame,
            evidence,
            fine: 0,
            decision: None,
        });
    };
    let placed_ids: BTreeSet<ItemId> = interlude.placed.iter().map(|p| p.item).collect();
    let mut scene = state.scene.clone().unwrap_or_default();
    for id in &state.off_table {
        scene.remove(*id);
    }
    let footprint = FishFootprint::new(&game.items);
    let coin_r = game.items.coin.radius;

    for (k, p) in interlude.placed.iter().enumerate() {
        // Order (R9 own fish before own coin, R10 owners in move order).
        if let Some(later) = interlude.placed[k + 1..].iter().find(|q| q.item < p.item) {
            let rule = if later.item.owner == p.item.owner {
                "R9"
            } else {
                "R10"
            };
            push(
                "2.3",
                p.item.owner,
                p.frame,
                format!("{rule}: {} was put back before {}", p.item, later.item),
            );
        }
        if !next.off_table.contains(&p.item) {
            push(
                "2.3",
                p.item.owner,
                p.frame,
                format!("{} was put on the table although it was not lost", p.item),
            );
            scene.place(p.item, p.pose);
            continue;
        }
        if p.item.is_fish() {
            let exit = state
                .exits
                .get(&p.item)
                .copied()
                .unwrap_or_else(|| p.pose.point());
            let expected = fish_put_back_pose(game, table, &scene, p.item.owner, exit);
            if let Err(why) = check_fish_pose(game, table, &scene, &expected, &p.pose) {
                push("2.3", p.item.owner, p.frame, format!("{}: {why}", p.item));
            }
        } else {
            let v = coin_put_back_verdict(game, table, &scene, p.item.owner);
            if !v.verdict.allowed() {
                push(
                    "2.3",
                    p.item.owner,
                    p.frame,
                    format!(
                        "{} was put back although it may not be ({}: {})",
                        p.item, v.rule, v.reason
                    ),
                );
            } else if let Some(fish) = scene.poses.get(&ItemId::fish(p.item.owner)) {
                let hole = footprint.placed(fish).hole;
                let off = (p.pose.point() - hole.center).norm() + coin_r;
                if off > hole.radius + OBSERVED_TOLERANCE_MM || !table.contains(p.pose.point()) {
                    push(
                        "2.3",
                        p.item.owner,
                        p.frame,
                        format!("R7: {} was not put inside the hole of its fish", p.item),
                    );
                }
            }
        }
        scene.place(p.item, p.pose);
        next.off_table.remove(&p.item);
    }

    for d in &interlude.disturbed {
        if d.distance_mm < DISTURB_TOLERANCE_MM || placed_ids.contains(&d.item) {
            continue;
        }
        // Blame the put-back nearest in time; with none going on, nobody was entitled
        // to touch the table (4.2), and the camera cannot see whose hand it was.
        let nearest = interlude
            .placed
            .iter()
            .min_by_key(|p| p.frame.abs_diff(d.frame));
        match nearest {
            Some(p) => push(
                "2.1",
                p.item.owner,
                d.frame,
                format!(
                    "{} moved {:.1} mm while {} was being put back",
                    d.item, d.distance_mm, p.item
                ),
            ),
            None => push(
                "4.2",
                shot.player,
                d.frame,
                format!(
                    "{} moved {:.1} mm while no move was in progress (whose hand is unknown; charged to the next mover)",
                    d.item, d.distance_mm
                ),
            ),
        }
    }
    interlude.placed.iter().map(|p| p.frame).max()
}

/// Checks that a shot names only players and items of the game and finite poses.
pub fn validate_shot(game: &Game, shot: &Shot) -> Result<(), RulesError> {
    let n = game.player_count();
    if shot.player >= n {
        return Err(RulesError::UnknownPlayer {
            shot: shot.index,
            player: shot.player,
            players: n,
        });
    }
    let mut ids: Vec<ItemId> = Vec::new();
    ids.extend(shot.start.keys());
    ids.extend(shot.end.keys());
    ids.extend(shot.tracks.keys());
    ids.extend(shot.lost.iter().map(|l| l.item));
    for (c, f) in &shot.coins_in_holes {
        ids.extend([*c, *f]);
    }
    for s in &shot.stacking {
        ids.extend([s.top, s.under]);
    }
    ids.extend(shot.first_moved);
    ids.extend(shot.touches_table.keys());
    ids.extend(&shot.doubt);
    if let Some(b) = &shot.before {
        ids.extend(b.placed.iter().map(|p| p.item));
        ids.extend(b.disturbed.iter().map(|d| d.item));
    }
    if let Some(item) = ids.into_iter().find(|i| i.owner >= n) {
        return Err(RulesError::UnknownItem {
            shot: shot.index,
            item,
            players: n,
        });
    }
    let poses = shot
        .start
        .iter()
        .chain(&shot.end)
        .map(|(i, p)| (*i, *p))
        .chain(shot.lost.iter().map(|l| (l.item, l.exit)))
        .chain(
            shot.before
                .iter()
                .flat_map(|b| b.placed.iter().map(|p| (p.item, p.pose))),
        );
    for (item, p) in poses {
        if !(p.x.is_finite() && p.y.is_finite() && p.angle().is_finite()) {
            return Err(RulesError::BadPose {
                shot: shot.index,
                item,
            });
        }
    }
    Ok(())
}

fn join(ids: &[ItemId]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
