//! Put-back search benchmark: 8 players on a crowded table. The exit point is
//! blocked by a row of fish lying along the edge, so the R6c search must walk the
//! edge; R6a must turn a fish around a coin among neighbours; a whole shot's duties
//! chain fish and coins of several players (R10). Target: median under 1 ms.

use criterion::{criterion_group, criterion_main, Criterion};
use fishtrack::config::{Game, Items, Player};
use fishtrack::geometry::{Point, Table};
use fishtrack::model::{ItemId, Pose};
use fishtrack::record::{LostItem, Shot};
use fishtrack::rules::{coin_put_back_verdict, fish_put_back_pose, judge_shot, MatchState, Scene};
use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::hint::black_box;

fn game() -> Game {
    let players = (0..8)
        .map(|i| Player {
            name: format!("P{i}"),
            color: "#808080".into(),
        })
        .collect();
    Game::new(players, 3, Items::default_set())
}

/// Players 1–7: fish side by side along the right edge around y = 350 (blocking
/// the exit), their coins scattered just inside them.
fn crowded() -> BTreeMap<ItemId, Pose> {
    let mut poses = BTreeMap::new();
    for p in 1..8 {
        let y = 350.0 + 32.0 * (p as f64 - 4.0);
        poses.insert(ItemId::fish(p), Pose::fish(985.0, y, PI));
        poses.insert(ItemId::coin(p), Pose::coin(900.0, y + 5.0 * (p % 3) as f64));
    }
    poses
}

/// Players 1–7 spread over the right third of the table (a fixed pseudo-random
/// pattern), two of them touching the right edge near the exit.
fn scatter() -> Scene {
    let mut poses = BTreeMap::new();
    let spots = [
        (975.0, 340.0, 2.9),
        (960.0, 395.0, -2.6),
        (900.0, 300.0, 1.0),
        (850.0, 420.0, 0.3),
        (930.0, 480.0, -1.2),
        (800.0, 330.0, 2.2),
        (880.0, 220.0, -0.4),
    ];
    for (k, (x, y, th)) in spots.iter().enumerate() {
        let p = k + 1;
        poses.insert(ItemId::fish(p), Pose::fish(*x, *y, *th));
        poses.insert(
            ItemId::coin(p),
            Pose::coin(x - 40.0 * th.cos(), y - 40.0 * th.sin()),
        );
    }
    Scene::from_poses(poses)
}

fn bench(c: &mut Criterion) {
    let g = game();
    let t = Table::rectangle(1000.0, 700.0);
    let mut scene = Scene::from_poses(crowded());

    let mut group = c.benchmark_group("putback_8_players");
    // A crowded but ordinary table: 16 items scattered near the exit edge.
    let scattered = scatter();
    group.bench_function("R6bc_fish_and_coin_lost_scattered", |b| {
        b.iter(|| fish_put_back_pose(&g, &t, black_box(&scattered), 0, Point::new(1000.0, 350.0)))
    });

    group.bench_function("R6c_fish_and_coin_lost_exit_blocked", |b| {
        b.iter(|| fish_put_back_pose(&g, &t, black_box(&scene), 0, Point::new(1000.0, 350.0)))
    });

    // Own coin jammed against coin:3: R6a is impossible (the hole cannot take it
    // without touching), so this is R6a's refusal followed by the whole edge walk.
    scene
        .poses
        .insert(ItemId::coin(0), Pose::coin(900.0, 330.0));
    group.bench_function("R6a_around_a_crowded_coin", |b| {
        b.iter(|| fish_put_back_pose(&g, &t, black_box(&scene), 0, Point::new(1000.0, 350.0)))
    });
    // Own coin free beside the row of fish: R6a succeeds after turning the fish
    // past its neighbours.
    scene
        .poses
        .insert(ItemId::coin(0), Pose::coin(919.0, 465.0));
    group.bench_function("R6a_coin_beside_the_crowd", |b| {
        b.iter(|| fish_put_back_pose(&g, &t, black_box(&scene), 0, Point::new(1000.0, 350.0)))
    });
    scene.poses.remove(&ItemId::coin(0));

    scene
        .poses
        .insert(ItemId::fish(0), Pose::fish(700.0, 350.0, 0.0));
    group.bench_function("R8_coin_verdict", |b| {
        b.iter(|| coin_put_back_verdict(&g, &t, black_box(&scene), 0))
    });

    // A whole shot: player 0 knocks three fish and two coins off the crowded edge.
    let mut start = crowded();
    start.insert(ItemId::fish(0), Pose::fish(700.0, 350.0, 0.0));
    start.insert(ItemId::coin(0), Pose::coin(700.0, 350.0));
    let lost_ids = [
        ItemId::fish(3),
        ItemId::coin(3),
        ItemId::fish(4),
        ItemId::fish(5),
        ItemId::coin(6),
    ];
    let mut end = start.clone();
    for id in &lost_ids {
        end.remove(id);
    }
    let shot = Shot {
        index: 0,
        player: 0,
        flick_frame: 10,
        rest_frame: 100,
        first_moved: Some(ItemId::fish(0)),
        start,
        end,
        lost: lost_ids
            .iter()
            .map(|id| LostItem {
                item: *id,
                frame: 50,
                exit: Pose::coin(1000.0, 350.0),
            })
            .collect(),
        ..Default::default()
    };
    let state = MatchState::new(&g);
    group.bench_function("judge_shot_5_lost", |b| {
        b.iter(|| judge_shot(&g, &t, &state, black_box(&shot)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
