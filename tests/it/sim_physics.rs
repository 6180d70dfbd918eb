//! The simulator's physics and truth, without rendering: items really rest, never
//! interpenetrate, lose energy after the flick, fall off the edge where the truth
//! says, and the same seed gives the same truth.

use fishtrack::config::Items;
use fishtrack::geometry::{Point, Vector};
use fishtrack::model::{ItemId, Pose};
use fishtrack::sim::physics::{PhysicsParams, World};
use fishtrack::sim::{simulate, Scenario, SimOptions};

fn opts(seed: u64) -> SimOptions {
    SimOptions {
        seed,
        fps: 30.0,
        size: [320, 180],
        ..SimOptions::default()
    }
}

#[test]
fn after_the_flick_energy_never_grows_items_never_overlap_and_rest_truly() {
    let s = Scenario::built_in("coin-collision").unwrap();
    let table = s.table().unwrap();
    let items = s.items();
    let poses = s.start_poses(&table, &items).unwrap();
    let mut w = World::new(table, &items, &poses, PhysicsParams::default());
    assert!(w.flick(
        ItemId::fish(0),
        Point::new(30.0, 0.0),
        Vector::new(1400.0, 0.0)
    ));
    let mut energy = w.kinetic_energy();
    let e0 = energy;
    assert!(e0 > 0.0);
    let mut moved_coin = false;
    for f in 1..600 {
        w.advance_to(f as f64 / 60.0);
        let e = w.kinetic_energy();
        assert!(
            e <= energy * 1.001 + 1e-6,
            "frame {f}: energy grew {energy} -> {e}"
        );
        energy = e;
        let pen = w.max_penetration_mm();
        assert!(pen < 0.3, "frame {f}: items overlap by {pen} mm");
        if w.at_rest() {
            break;
        }
    }
    assert!(w.at_rest(), "still moving after 10 s");
    for (id, (v, om)) in w.speeds() {
        assert!(v < 1.0 && om < 1e-3, "{id} moves at {v} mm/s");
    }
    let end = w.poses();
    for id in [ItemId::coin(1), ItemId::coin(2)] {
        if let (Some(a), Some(b)) = (poses.get(&id), end.get(&id)) {
            moved_coin |= (a.point() - b.point()).norm() > 5.0;
        }
    }
    assert!(moved_coin, "the fish should have hit the coins");
    // Still resting a second later.
    let t = w.time_s();
    let before = w.poses();
    w.advance_to(t + 1.0);
    for (id, p) in w.poses() {
        let d = (p.point() - before[&id].point()).norm();
        assert!(d < 1e-3, "{id} crept {d} mm");
    }
}

#[test]
fn a_coin_starts_in_its_hole_and_the_hole_rim_pushes_it() {
    let items = Items::default_set();
    let table = fishtrack::geometry::Table::rectangle(1000.0, 700.0);
    let mut poses = std::collections::BTreeMap::new();
    poses.insert(ItemId::fish(0), Pose::fish(500.0, 350.0, 0.0));
    poses.insert(ItemId::coin(0), Pose::coin(500.0, 350.0));
    let mut w = World::new(table, &items, &poses, PhysicsParams::default());
    // Flick the fish toward -x (hole first): the rim must carry the coin along.
    w.flick(
        ItemId::fish(0),
        Point::new(40.0, 0.0),
        Vector::new(-800.0, 0.0),
    );
    for f in 1..300 {
        w.advance_to(f as f64 / 60.0);
    }
    let end = w.poses();
    let coin = end[&ItemId::coin(0)];
    assert!(coin.x < 480.0, "the coin was not pushed: {coin:?}");

    let truth = simulate(&Scenario::built_in("match").unwrap(), &opts(3)).unwrap();
    let first = &truth.frames[0];
    for k in 0..2 {
        let f = first.items[&ItemId::fish(k)];
        let c = first.items[&ItemId::coin(k)];
        assert!(((f.x - c.x).powi(2) + (f.y - c.y).powi(2)).sqrt() + 7.5 <= 10.0);
    }
    assert_eq!(
        truth.shots[0].coins_in_holes.get(&ItemId::coin(1)),
        Some(&ItemId::fish(1))
            .filter(|_| {
                truth.shots[0].end.contains_key(&ItemId::coin(1))
                    && truth.shots[0].start[&ItemId::coin(1)]
                        == truth.shots[0].end[&ItemId::coin(1)]
            })
            .or(truth.shots[0].coins_in_holes.get(&ItemId::coin(1)))
    );
}

#[test]
fn a_strong_flick_loses_items_and_truth_says_where_they_crossed_the_edge() {
    let truth = simulate(&Scenario::built_in("table-clearing").unwrap(), &opts(1)).unwrap();
    let shot = &truth.shots[0];
    assert!(!shot.lost.is_empty(), "nothing fell off a 4 m/s flick");
    let table = truth.table().unwrap();
    for l in &shot.lost {
        let d = table.signed_distance(l.exit.point());
        assert!(
            d.abs() < 0.01,
            "{} exit {:?} is {d} mm from the edge",
            l.item,
            l.exit
        );
        assert!(l.frame > shot.flick_frame && l.frame <= shot.rest_frame);
        // On the table the frame before, off it (falling) at the frame.
        let before = &truth.frames[l.frame as usize - 1].items[&l.item];
        let at = truth.frames[l.frame as usize].items.get(&l.item);
        assert!(before.on_table);
        assert!(at.is_none_or(|s| !s.on_table));
        assert!(!shot.end.contains_key(&l.item));
    }
    // The rest: every item on the table in the rest frame really rests.
    let rest = &truth.frames[shot.rest_frame as usize];
    let prev = &truth.frames[shot.rest_frame as usize - 1];
    for (id, s) in rest.items.iter().filter(|(_, s)| s.on_table) {
        let p = &prev.items[id];
        let v = ((s.x - p.x).powi(2) + (s.y - p.y).powi(2)).sqrt() * truth.video.fps;
        assert!(v < 1.0, "{id} moves at {v} mm/s at rest");
    }
}

#[test]
fn the_same_seed_gives_the_same_truth_and_truth_becomes_a_record() {
    let s = Scenario::built_in("match").unwrap();
    let a = serde_json::to_string(&simulate(&s, &opts(7)).unwrap()).unwrap();
    let b = serde_json::to_string(&simulate(&s, &opts(7)).unwrap()).unwrap();
    assert!(a == b, "two runs with seed 7 differ");
    let c = serde_json::to_string(&simulate(&s, &opts(8)).unwrap()).unwrap();
    assert!(a != c, "seeds 7 and 8 give the same match");
    let truth: fishtrack::sim::Truth = serde_json::from_str(&a).unwrap();
    let rec = truth.to_record();
    assert_eq!(rec.shots.len(), 6);
    for (s, t) in rec.shots.iter().zip(&truth.shots) {
        assert_eq!(s.lost, t.lost);
        let tr = &s.tracks[&ItemId::fish(s.player)];
        assert_eq!(tr.first().unwrap()[0] as u64, s.flick_frame);
        assert_eq!(tr.len() as u64, s.rest_frame - s.flick_frame + 1);
    }
}
