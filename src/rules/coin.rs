//! Whether a lost coin may go back into its owner's hole (R8a–e) and where: the
//! verdict `possible | optional | impossible` with the deciding rule and why. Every
//! doubt — fish not seen, stacking not observed, a hidden item near the hole —
//! counts as impossible (R8e). Uses: config, geometry, model, scene.

use super::scene::{fish_fish_penetration, Obstacles, Scene, Shape};
use crate::config::Game;
use crate::geometry::{fish_disc_overlap, Disc, FishFootprint, Point, Table};
use crate::model::{ItemId, PlayerIdx, Pose};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Overlap deeper than this (mm) between the owner's fish and another item, with no
/// stacking observed between them, means the stacking is unknown (R8e).
pub const STACKING_TOLERANCE_MM: f64 = 1.0;

/// R8's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The coin must be put back now (R7); not doing so is violation 2.2.
    Possible,
    /// The owner may put it back or not.
    Optional,
    /// It may not be put back now.
    Impossible,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Possible => "possible",
            Verdict::Optional => "optional",
            Verdict::Impossible => "impossible",
        }
    }

    /// Whether the coin may be put back at all.
    pub fn allowed(&self) -> bool {
        !matches!(self, Verdict::Impossible)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict on one lost coin.
#[derive(Debug, Clone, PartialEq)]
pub struct CoinPutBack {
    pub item: ItemId,
    pub verdict: Verdict,
    /// `R8a` … `R8e`.
    pub rule: &'static str,
    pub reason: String,
    /// Where the coin goes (inside the hole, on the table) when it may go back.
    pub pose: Option<Pose>,
}

/// R8: may `owner`'s lost coin go back into the hole of `owner`'s fish, as the
/// items of `scene` lie now? (`scene` must not hold the coin itself.)
pub fn coin_put_back_verdict(
    game: &Game,
    table: &Table,
    scene: &Scene,
    owner: PlayerIdx,
) -> CoinPutBack {
    let coin_id = ItemId::coin(owner);
    let fish_id = ItemId::fish(owner);
    let verdict = |verdict, rule, reason: String, pose| CoinPutBack {
        item: coin_id,
        verdict,
        rule,
        reason,
        pose,
    };
    let impossible = |rule, reason: String| verdict(Verdict::Impossible, rule, reason, None);

    let Some(fish_pose) = scene.poses.get(&fish_id) else {
        return impossible(
            "R8e",
            format!("{fish_id} is not on the table (or was not seen)"),
        );
    };
    if scene.doubt.contains(&fish_id) {
        return impossible("R8e", format!("the pose of {fish_id} is in doubt"));
    }
    let footprint = FishFootprint::new(&game.items);
    let fish = footprint.placed(fish_pose);
    let hole = fish.hole;
    let obstacles = Obstacles::build(game, scene, &[fish_id, coin_id]);

    // What touches the fish or its hole, and whether each contact was observed.
    let related = |id: ItemId| {
        scene
            .stacking
            .iter()
            .any(|s| (s.top == fish_id && s.under == id) || (s.top == id && s.under == fish_id))
    };
    let in_hole = obstacles.in_disc(&hole);
    for (id, shape) in obstacles.near(hole.center, fish.reach, 0.0) {
        let overlaps = match shape {
            Shape::Fish(other) => fish_fish_penetration(&fish, other, STACKING_TOLERANCE_MM),
            Shape::Coin(d) => {
                let shrunk = Disc::new(d.center, (d.radius - STACKING_TOLERANCE_MM).max(0.0));
                fish_disc_overlap(&fish, &shrunk, 0.0)
            }
        };
        let touches = overlaps || in_hole.contains(&id);
        if touches && scene.doubt.contains(&id) {
            return impossible(
                "R8e",
                format!("{id}, touching {fish_id} or its hole, is in doubt"),
            );
        }
        if overlaps && !related(id) {
            return impossible(
                "R8e",
                format!("{fish_id} and {id} overlap but which lies on which was not observed"),
            );
        }
    }

    let under: Vec<ItemId> = scene
        .stacking
        .iter()
        .filter(|s| s.top == fish_id)
        .map(|s| s.under)
        .collect();
    let on_fish = under.iter().any(|i| i.is_fish());
    let on_coin = under.iter().any(|i| i.is_coin());
    let coins_in_hole: Vec<ItemId> = in_hole.iter().copied().filter(|i| i.is_coin()).collect();
    let fish_in_hole: Vec<ItemId> = in_hole.iter().copied().filter(|i| i.is_fish()).collect();
    let coin_r = game.items.coin.radius;
    let wholly_in_hole = coins_in_hole.iter().copied().find(|id| {
        scene
            .poses
            .get(id)
            .is_some_and(|p| hole.contains_disc(&Disc::new(p.point(), coin_r)))
    });
    let list = |ids: &[ItemId]| {
        ids.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };

    if let Some(other) = wholly_in_hole {
        return impossible(
            "R8b",
            format!("{other} already lies in the hole of {fish_id}"),
        );
    }
    let touch = || scene.touches_table.get(&fish_id).copied();

    if !on_fish && !on_coin {
        // R8a: flat on the table.
        if !coins_in_hole.is_empty() {
            return impossible(
                "R8b",
                format!("{} lies in the hole of {fish_id}", list(&coins_in_hole)),
            );
        }
        if !fish_in_hole.is_empty() {
            return impossible(
                "R8e",
                format!("{} covers the hole of {fish_id}", list(&fish_in_hole)),
            );
        }
        return by_table_fit(table, &hole, coin_r, coin_id, "R8a", Verdict::Possible);
    }
    match touch() {
        None => {
            return impossible(
                "R8e",
                format!(
                    "{fish_id} lies on {}; whether it touches the table is unknown",
                    list(&under)
                ),
            )
        }
        Some(false) => {
            let rule = if on_fish { "R8d" } else { "R8c" };
            return impossible(
                rule,
                format!(
                    "{fish_id} lies on {} and does not touch the table",
                    list(&under)
                ),
            );
        }
        Some(true) => {}
    }
    if !on_fish {
        // R8c: on coins only.
        if !in_hole.is_empty() {
            return impossible(
                "R8c",
                format!("{} reaches into the hole of {fish_id}", list(&in_hole)),
            );
        }
        return by_table_fit(table, &hole, coin_r, coin_id, "R8c", Verdict::Possible);
    }
    // R8d: on other fish (and maybe coins).
    if !in_hole.is_empty() {
        return impossible(
            "R8d",
            format!("{} reaches into the hole of {fish_id}", list(&in_hole)),
        );
    }
    by_table_fit(table, &hole, coin_r, coin_id, "R8d", Verdict::Optional)
}

/// The table part of R8a: `best` (possible, or optional under R8d) when the coin fits
/// wholly on the table inside the hole; else optional if it would not fall (its
/// centre over the table); else impossible.
fn by_table_fit(
    table: &Table,
    hole: &Disc,
    coin_r: f64,
    coin_id: ItemId,
    rule: &'static str,
    best: Verdict,
) -> CoinPutBack {
    let room = hole.radius - coin_r;
    let mk = |verdict, reason: String, pose| CoinPutBack {
        item: coin_id,
        verdict,
        rule,
        reason,
        pose,
    };
    if table.disc_fits_near(hole.center, room, coin_r) {
        let at = table
            .nearest_point_inset(hole.center, coin_r)
            .map(|q| toward(hole.center, q, room))
            .unwrap_or(hole.center);
        let why = match best {
            Verdict::Possible => "the coin fits wholly on the table inside the hole",
            _ => "the fish lies on another fish but touches the table and its hole is clear",
        };
        return mk(best, why.to_string(), Some(Pose::coin(at.x, at.y)));
    }
    if table.disc_fits_near(hole.center, room, 0.0) {
        let mut at = table
            .nearest_point_inset(hole.center, coin_r)
            .map(|q| toward(hole.center, q, room))
            .unwrap_or(hole.center);
        if !table.contains(at) {
            at = toward(hole.center, table.nearest_edge_point(hole.center), room);
        }
        return mk(
            Verdict::Optional,
            "the hole overhangs the edge: the coin does not fit wholly on the table but would not fall"
                .to_string(),
            Some(Pose::coin(at.x, at.y)),
        );
    }
    mk(
        Verdict::Impossible,
        "the hole overhangs the edge so far that the coin would fall".to_string(),
        None,
    )
}

/// The point at most `room` from `from` on the way to `to`.
fn toward(from: Point, to: Point, room: f64) -> Point {
    let d = to - from;
    let n = d.norm();
    if n <= room {
        to
    } else {
        from + d * (room / n)
    }
}
