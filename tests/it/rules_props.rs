//! Property tests of the rules engine: computed put-back poses are legal on random
//! tables (R6a/b/c, R9), and scoring conserves points (R5).

use fishtrack::config::{Game, Items, Player};
use fishtrack::geometry::{
    fish_disc_overlap, fish_edge_gap, fish_fish_overlap, Disc, FishFootprint, Point, Table,
};
use fishtrack::model::{ItemId, Pose};
use fishtrack::record::{LostItem, Shot};
use fishtrack::rules::{fish_put_back_pose, judge_shot, MatchState, Scene, EDGE_TOUCH_MM};
use proptest::prelude::*;
use std::collections::BTreeMap;

const W: f64 = 1000.0;
const H: f64 = 700.0;

fn game(n: usize) -> Game {
    let players = (0..n)
        .map(|i| Player {
            name: format!("P{i}"),
            color: "#808080".into(),
        })
        .collect();
    Game::new(players, 3, Items::default_set())
}

/// A point on the boundary of the W x H table from an arc length.
fn boundary_point(s: f64) -> Point {
    Table::rectangle(W, H).place_at(s).point
}

prop_compose! {
    fn item_pose()(x in 0.0..W, y in 0.0..H, th in -3.2..3.2f64) -> Pose {
        Pose::fish(x, y, th)
    }
}

prop_compose! {
    /// Up to 7 other players' fish and coins anywhere on the table, maybe the own
    /// coin, and an exit point on the edge.
    fn crowded()(others in prop::collection::vec((item_pose(), item_pose()), 0..8),
                 own_coin in prop::option::of(item_pose()),
                 exit_s in 0.0..(2.0 * (W + H)))
        -> (BTreeMap<ItemId, Pose>, Point)
    {
        let mut poses = BTreeMap::new();
        for (k, (f, c)) in others.iter().enumerate() {
            poses.insert(ItemId::fish(k + 1), *f);
            poses.insert(ItemId::coin(k + 1), Pose::coin(c.x, c.y));
        }
        if let Some(c) = own_coin {
            poses.insert(ItemId::coin(0), Pose::coin(c.x, c.y));
        }
        (poses, boundary_point(exit_s))
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn put_back_pose_is_legal((poses, exit) in crowded()) {
        let g = game(8);
        let t = Table::rectangle(W, H);
        let scene = Scene::from_poses(poses.clone());
        let r = fish_put_back_pose(&g, &t, &scene, 0, exit);
        let foot = FishFootprint::new(&g.items);
        let coin_r = g.items.coin.radius;
        if let Some(pose) = r.pose {
            let fish = foot.placed(&pose);
            prop_assert!(t.contains(fish.hole.center), "{}: hole off the table", r.rule);
            for (id, p) in &poses {
                if *id == ItemId::coin(0) {
                    continue;
                }
                let hit = if id.is_fish() {
                    fish_fish_overlap(&fish, &foot.placed(p), 0.0)
                } else {
                    fish_disc_overlap(&fish, &Disc::new(p.point(), coin_r), 0.0)
                };
                prop_assert!(!hit, "{} pose {:?} overlaps {}", r.rule, pose, id);
            }
            match r.rule {
                "R6a" => {
                    let c = poses[&ItemId::coin(0)].point();
                    prop_assert!(fish.hole.contains_disc(&Disc::new(c, coin_r)), "R6a: coin not in the hole");
                }
                "R6b" | "R6c" => {
                    let gap = fish_edge_gap(&t, &fish);
                    prop_assert!((0.0..=EDGE_TOUCH_MM).contains(&gap), "{}: edge gap {}", r.rule, gap);
                    if !poses.contains_key(&ItemId::coin(0)) {
                        // R9: the coin must then fit in the hole on the table.
                        prop_assert!(t.disc_fits_near(fish.hole.center, fish.hole.radius - coin_r, coin_r));
                        for (id, p) in &poses {
                            if id.is_coin() {
                                let d = (p.point() - fish.hole.center).norm();
                                prop_assert!(d >= fish.hole.radius + coin_r, "R9: {} in the hole", id);
                            }
                        }
                    }
                }
                other => prop_assert!(false, "unexpected rule {}", other),
            }
        } else {
            prop_assert_eq!(r.rule, "R6");
        }
    }

    #[test]
    fn put_back_is_deterministic((poses, exit) in crowded()) {
        let g = game(8);
        let t = Table::rectangle(W, H);
        let scene = Scene::from_poses(poses);
        let a = fish_put_back_pose(&g, &t, &scene, 0, exit);
        let b = fish_put_back_pose(&g, &t, &scene, 0, exit);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn scoring_conserves(players in 2usize..6, mover_seed in 0usize..100,
                         lost_mask in prop::collection::vec(any::<bool>(), 12)) {
        let g = game(players);
        let t = Table::rectangle(W, H);
        let mover = mover_seed % players;
        let mut start = BTreeMap::new();
        let mut lost = Vec::new();
        for p in 0..players {
            let (x, y) = (100.0 + 150.0 * p as f64, 100.0 + 80.0 * p as f64);
            start.insert(ItemId::fish(p), Pose::fish(x, y, 0.0));
            start.insert(ItemId::coin(p), Pose::coin(x, y));
            for (k, id) in [ItemId::fish(p), ItemId::coin(p)].into_iter().enumerate() {
                if lost_mask[(2 * p + k) % lost_mask.len()] {
                    lost.push(LostItem { item: id, frame: 5, exit: Pose::coin(W, y) });
                }
            }
        }
        let mut end = start.clone();
        for l in &lost {
            end.remove(&l.item);
        }
        let shot = Shot {
            index: 0, player: mover, flick_frame: 1, rest_frame: 10,
            first_moved: Some(ItemId::fish(mover)),
            start, end, lost: lost.clone(), ..Default::default()
        };
        let mut before = MatchState::new(&g);
        before.next_player = mover;
        let (state, j) = judge_shot(&g, &t, &before, &shot)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let plus = lost.iter().filter(|l| l.item.is_coin() && l.item.owner != mover).count() as i32;
        let minus = lost.len() as i32 - plus;
        prop_assert_eq!(j.score[mover], plus - minus);
        for p in 0..players {
            if p != mover {
                prop_assert_eq!(j.score[p], 0);
            }
        }
        prop_assert_eq!(state.scores.iter().sum::<i32>(), plus - minus);
        // Every lost item gets exactly one put-back entry, in R10/R9 order.
        let mut items: Vec<ItemId> = j.put_back.iter().map(|p| p.item).collect();
        let sorted = { let mut s = items.clone(); s.sort(); s };
        prop_assert_eq!(&items, &sorted);
        items.dedup();
        prop_assert_eq!(items.len(), lost.len());
    }
}
