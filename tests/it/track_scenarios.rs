//! Tracker + shot cutter on synthetic detection streams: scripted items slide with
//! friction, coins collide as equal discs, items fall off edges, hands cover items,
//! detections are noisy, missed, streaked or skipped. Ground truth comes from the
//! same script, so every check compares against what really happened.

use fishtrack::config::Items;
use fishtrack::geometry::{FishFootprint, Point, Table, Vector};
use fishtrack::model::{FrameIdx, ItemId, Pose};
use fishtrack::record::{Shot, StartState};
use fishtrack::shots::{ShotConfig, ShotCutter};
use fishtrack::track::{
    BlobKind, CoinDetection, FishDetection, FrameDetections, Occluder, OffTableBlob, Streak,
    TrackFrame, TrackState, Tracker, TrackerConfig,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

const FPS: f64 = 30.0;
const W: f64 = 1000.0;
const H: f64 = 700.0;
/// The "real" friction differs a little from the tracker's default (2000 mm/s²).
const TRUE_DECEL: f64 = 1800.0;
const COIN_R: f64 = 7.5;

struct Script {
    players: usize,
    frames: u64,
    items: Vec<(ItemId, Pose)>,
    /// (frame, item, velocity): the item is struck half-way between `frame` and `frame + 1`.
    kicks: Vec<(FrameIdx, ItemId, Vector)>,
    /// Hand discs: (from, to exclusive, centre, radius).
    hands: Vec<(FrameIdx, FrameIdx, Point, f64)>,
    /// Items put (back) on the table at a frame.
    placements: Vec<(FrameIdx, ItemId, Pose)>,
    /// Chance that a detection is missed in a frame.
    p_miss: f64,
    /// Coins faster than this are seen only every other frame, as a streak.
    fast_mm_s: f64,
    /// Items the detector stops seeing from a frame on (too faint a streak).
    invisible_from: Vec<(ItemId, FrameIdx)>,
    /// Items the detector misses in frames `[from, to)` (blur, a hand).
    unseen: Vec<(ItemId, FrameIdx, FrameIdx)>,
    /// Falling items are seen against the floor for this many frames.
    blob_frames: u64,
    seed: u64,
}

impl Script {
    fn new(players: usize, frames: u64, items: Vec<(ItemId, Pose)>) -> Script {
        Script {
            players,
            frames,
            items,
            kicks: vec![],
            hands: vec![],
            placements: vec![],
            p_miss: 0.05,
            fast_mm_s: 1500.0,
            invisible_from: vec![],
            unseen: vec![],
            blob_frames: 0,
            seed: 7,
        }
    }
}

#[derive(Clone)]
struct Body {
    id: ItemId,
    pos: Point,
    vel: Vector,
    theta: f64,
    on_table: bool,
    present: bool,
    /// (frame, exit point of the centre of mass) when it fell.
    exit: Option<(FrameIdx, Point)>,
    fell_at: Option<FrameIdx>,
}

#[derive(Clone)]
struct TruthFrame {
    bodies: Vec<Body>,
}

impl TruthFrame {
    fn get(&self, id: ItemId) -> Option<&Body> {
        self.bodies.iter().find(|b| b.id == id && b.present)
    }
}

fn footprint() -> FishFootprint {
    FishFootprint::new(&Items::default_set())
}

fn com(b: &Body) -> Point {
    if b.id.is_fish() {
        let c = footprint().centroid();
        b.pos + nalgebra::Rotation2::new(b.theta) * c.coords
    } else {
        b.pos
    }
}

fn inside(p: Point) -> bool {
    p.x >= 0.0 && p.x <= W && p.y >= 0.0 && p.y <= H
}

/// Where the segment a→b (a inside) crosses the rectangle's boundary.
fn crossing(a: Point, b: Point) -> Point {
    let mut t: f64 = 1.0;
    for (pa, pb, lim) in [
        (a.x, b.x, 0.0),
        (a.x, b.x, W),
        (a.y, b.y, 0.0),
        (a.y, b.y, H),
    ] {
        if (pb - lim) * (pa - lim) < 0.0 {
            t = t.min((lim - pa) / (pb - pa));
        }
    }
    a + (b - a) * t
}

fn simulate(s: &Script) -> Vec<TruthFrame> {
    let mut bodies: Vec<Body> = s
        .items
        .iter()
        .map(|(id, p)| Body {
            id: *id,
            pos: p.point(),
            vel: Vector::zeros(),
            theta: p.angle(),
            on_table: true,
            present: true,
            exit: None,
            fell_at: None,
        })
        .collect();
    let sub = 40;
    let h = 1.0 / FPS / sub as f64;
    let mut out = Vec::new();
    for f in 0..s.frames {
        for (pf, id, pose) in &s.placements {
            if *pf == f {
                bodies.retain(|b| b.id != *id);
                bodies.push(Body {
                    id: *id,
                    pos: pose.point(),
                    vel: Vector::zeros(),
                    theta: pose.angle(),
                    on_table: true,
                    present: true,
                    exit: None,
                    fell_at: None,
                });
            }
        }
        if f > 0 {
            for k in 0..sub {
                let t_in = (k as f64 + 0.5) / sub as f64;
                for (kf, id, v) in &s.kicks {
                    // Struck half-way between kf and kf + 1.
                    if *kf + 1 == f && (t_in - 0.5).abs() < 0.5 / sub as f64 {
                        if let Some(b) = bodies.iter_mut().find(|b| b.id == *id && b.on_table) {
                            b.vel = *v;
                        }
                    }
                }
                for b in bodies.iter_mut().filter(|b| b.present) {
                    let sp = b.vel.norm();
                    if sp > 0.0 {
                        let dec = if b.on_table { TRUE_DECEL } else { 0.0 };
                        let ns = (sp - dec * h).max(0.0);
                        b.pos += b.vel / sp * ((sp + ns) / 2.0 * h);
                        b.vel = b.vel / sp * ns;
                    }
                }
                // Coin–coin collisions, equal masses, elastic.
                for i in 0..bodies.len() {
                    for j in i + 1..bodies.len() {
                        let (a, b) = (&bodies[i], &bodies[j]);
                        if !(a.id.is_coin() && b.id.is_coin() && a.on_table && b.on_table) {
                            continue;
                        }
                        let d = b.pos - a.pos;
                        let dist = d.norm();
                        if !(1e-9..2.0 * COIN_R).contains(&dist) {
                            continue;
                        }
                        let n = d / dist;
                        let rel = (a.vel - b.vel).dot(&n);
                        if rel <= 0.0 {
                            continue;
                        }
                        let dv = n * rel;
                        bodies[i].vel -= dv;
                        bodies[j].vel += dv;
                    }
                }
                for b in bodies.iter_mut().filter(|b| b.on_table) {
                    let c = com(b);
                    if !inside(c) {
                        let prev = c - b.vel * h;
                        let e = crossing(prev, c);
                        let t_cross = (f as f64 - 1.0 + (k as f64 + 1.0) / sub as f64) / 1.0;
                        b.on_table = false;
                        b.fell_at = Some(f);
                        b.exit = Some((t_cross.ceil() as u64, e));
                    }
                }
            }
        }
        out.push(TruthFrame {
            bodies: bodies.clone(),
        });
    }
    out
}

fn noise(rng: &mut ChaCha8Rng, sigma: f64) -> Vector {
    // Sum of uniforms: close enough to a normal for noise.
    let mut g = || (0..6).map(|_| rng.random::<f64>() - 0.5).sum::<f64>() * sigma * (2.0f64).sqrt();
    Vector::new(g(), g())
}

fn detect(s: &Script, truth: &[TruthFrame]) -> Vec<FrameDetections> {
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let fp = footprint();
    truth
        .iter()
        .enumerate()
        .map(|(f, tf)| {
            let f = f as u64;
            let mut d = FrameDetections::empty(f);
            for (a, b, c, r) in &s.hands {
                if f >= *a && f < *b {
                    d.occluders.push(Occluder::Disc {
                        center: *c,
                        radius: *r,
                    });
                }
            }
            let hidden_by_hand = |p: Point| d.occluders.iter().any(|o| o.covers(p, 0.0));
            let fish_now: Vec<_> = tf
                .bodies
                .iter()
                .filter(|b| b.id.is_fish() && b.on_table && b.present)
                .map(|b| fp.placed(&Pose::fish(b.pos.x, b.pos.y, b.theta)))
                .collect();
            for b in tf.bodies.iter().filter(|b| b.present) {
                let speed = b.vel.norm();
                let miss = rng.random::<f64>() < s.p_miss
                    || s.invisible_from
                        .iter()
                        .any(|(id, from)| *id == b.id && f >= *from)
                    || s.unseen
                        .iter()
                        .any(|(id, a, z)| *id == b.id && (*a..*z).contains(&f));
                if !b.on_table {
                    if b.fell_at.is_some_and(|ff| f < ff + s.blob_frames) {
                        d.off_table.push(OffTableBlob {
                            pt_in_table: com(b),
                            radius_mm: if b.id.is_fish() { 25.0 } else { COIN_R },
                            kind: Some(if b.id.is_fish() {
                                BlobKind::Fish
                            } else {
                                BlobKind::Coin
                            }),
                            player_scores: vec![],
                        });
                    }
                    continue;
                }
                let sigma = if speed < 30.0 { 0.3 } else { 2.0 };
                let p = b.pos + noise(&mut rng, sigma);
                if b.id.is_fish() {
                    if hidden_by_hand(com(b)) || miss {
                        continue;
                    }
                    let scores = (0..s.players)
                        .map(|k| {
                            if k == b.id.owner {
                                0.85 + 0.1 * rng.random::<f64>()
                            } else {
                                0.05 + 0.15 * rng.random::<f64>()
                            }
                        })
                        .collect();
                    d.fish.push(FishDetection {
                        pt_in_table: p,
                        theta: b.theta + 0.01 * (rng.random::<f64>() - 0.5),
                        player_scores: scores,
                        confidence: 0.9,
                        partly_hidden: false,
                        exposure_share: None,
                    });
                } else {
                    let under = fish_now.iter().any(|pf| {
                        pf.outline_contains(b.pos)
                            && (b.pos - pf.hole.center).norm() > pf.hole.radius - COIN_R + 1.0
                    });
                    if hidden_by_hand(b.pos) || under || miss {
                        continue;
                    }
                    let mut det = CoinDetection {
                        pt_in_table: p,
                        radius_mm: Some(COIN_R),
                        confidence: 0.9,
                        streak: None,
                        in_hole_of: None,
                        rim_gap_in_view: false,
                    };
                    if speed > s.fast_mm_s {
                        if f % 2 == 1 {
                            continue;
                        }
                        let half = b.vel * (0.25 / FPS);
                        det.streak = Some(Streak {
                            from: p - half,
                            to: p + half,
                        });
                        det.confidence = 0.4;
                    }
                    d.coins.push(det);
                }
            }
            d
        })
        .collect()
}

struct Outcome {
    truth: Vec<TruthFrame>,
    frames: Vec<TrackFrame>,
    shots: Vec<Shot>,
}

fn run(s: &Script, start: Option<&StartState>) -> Outcome {
    let truth = simulate(s);
    let dets = detect(s, &truth);
    let (frames, shots) = track_and_cut(s.players, &dets, start);
    Outcome {
        truth,
        frames,
        shots,
    }
}

/// The tracker and the shot cutter over a detection stream: its frames and shots.
fn track_and_cut(
    players: usize,
    dets: &[FrameDetections],
    start: Option<&StartState>,
) -> (Vec<TrackFrame>, Vec<Shot>) {
    let cfg =
        TrackerConfig::new(FPS, players, Table::rectangle(W, H), &Items::default_set()).unwrap();
    let mut cutter = ShotCutter::new(ShotConfig::from_tracker(&cfg));
    let mut tracker = match start {
        Some(st) => Tracker::with_start(cfg, st),
        None => Tracker::new(cfg),
    };
    let mut frames = Vec::new();
    let mut shots = Vec::new();
    for d in dets {
        let tf = tracker.update(d.frame, d);
        if std::env::var_os("TRACK_DUMP").is_some() {
            let dets: Vec<String> = d
                .fish
                .iter()
                .map(|f| format!("F({:.0},{:.0})", f.pt_in_table.x, f.pt_in_table.y))
                .chain(d.coins.iter().map(|c| {
                    format!(
                        "C({:.0},{:.0}){}",
                        c.pt_in_table.x,
                        c.pt_in_table.y,
                        if c.streak.is_some() { "~" } else { "" }
                    )
                }))
                .collect();
            eprintln!("frame {} dets {}", d.frame, dets.join(" "));
            for t in &tf.items {
                let item = t.item.map(|i| i.to_string()).unwrap_or("?".into());
                eprintln!(
                    "   {:?} {item} {:?} ({:.1},{:.1}) v=({:.0},{:.0}) seen={} hid={:?}",
                    t.track.0,
                    t.state,
                    t.pose.x,
                    t.pose.y,
                    t.velocity_mm_s.x,
                    t.velocity_mm_s.y,
                    t.seen,
                    t.hidden_by
                );
            }
        }
        frames.push(tf.clone());
        shots.extend(cutter.push(tf));
    }
    shots.extend(cutter.finish());
    (frames, shots)
}

/// Frames where an identified, seen track sits on another item's true position.
fn identity_errors(o: &Outcome) -> Vec<String> {
    let mut errs = Vec::new();
    for (tf, truth) in o.frames.iter().zip(&o.truth) {
        for t in tf.items.iter().filter(|t| t.seen && t.state.on_table()) {
            let Some(id) = t.item else { continue };
            let nearest = truth
                .bodies
                .iter()
                .filter(|b| b.present && b.on_table && b.id.kind == id.kind)
                .map(|b| (b.id, (b.pos - t.pose.point()).norm()))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((nid, d)) = nearest {
                if nid != id && d < 12.0 {
                    errs.push(format!(
                        "frame {}: track {:?} says {id} but sits on {nid}",
                        tf.frame, t.track
                    ));
                }
            }
        }
    }
    errs
}

/// The first frame in which any item is displaced from its pose at frame 0.
fn true_flick(truth: &[TruthFrame], after: FrameIdx) -> FrameIdx {
    let base = &truth[after as usize];
    (after as usize..truth.len())
        .find(|&f| {
            truth[f].bodies.iter().any(|b| {
                base.get(b.id).is_some_and(|b0| {
                    b0.on_table && (!b.on_table || (b.pos - b0.pos).norm() > 0.01)
                })
            })
        })
        .unwrap() as FrameIdx
}

/// The first frame after `from` at which every body on the table is at rest.
fn true_rest(truth: &[TruthFrame], from: FrameIdx) -> FrameIdx {
    (from as usize..truth.len())
        .find(|&f| {
            truth[f]
                .bodies
                .iter()
                .all(|b| !b.on_table || b.vel.norm() == 0.0)
        })
        .unwrap() as FrameIdx
}

fn start_state(items: &[(ItemId, Pose)]) -> StartState {
    StartState {
        poses: items.iter().cloned().collect::<BTreeMap<_, _>>(),
        ..Default::default()
    }
}

fn fish(k: usize) -> ItemId {
    ItemId::fish(k)
}
fn coin(k: usize) -> ItemId {
    ItemId::coin(k)
}

fn twin_coins_swap_in_a_collision_and_the_struck_one_flies_off_the_edge_with(seed: u64) {
    let items = vec![
        (fish(0), Pose::fish(200.0, 350.0, 0.0)),
        (fish(1), Pose::fish(800.0, 600.0, std::f64::consts::PI)),
        (coin(0), Pose::coin(348.5, 350.0)),
        (coin(1), Pose::coin(378.5, 350.0)),
    ];
    let mut s = Script::new(2, 120, items.clone());
    s.seed = seed;
    // fish:0 slides into coin:0 and stops dead, giving it its momentum (scripted: the
    // test's physics has no fish–coin contacts); coin:0 then hits coin:1 head-on.
    s.kicks = vec![
        (20, fish(0), Vector::new(900.0, 0.0)),
        (23, fish(0), Vector::zeros()),
        (23, coin(0), Vector::new(1700.0, 0.0)),
    ];
    s.blob_frames = 1;
    let o = run(&s, Some(&start_state(&items)));
    let errs = identity_errors(&o);
    assert!(errs.is_empty(), "identity switches:\n{}", errs.join("\n"));
    assert_eq!(
        o.shots.len(),
        1,
        "one shot, got {:?}",
        o.shots
            .iter()
            .map(|s| (s.flick_frame, s.rest_frame))
            .collect::<Vec<_>>()
    );
    let shot = &o.shots[0];
    let flick = true_flick(&o.truth, 0);
    assert!(
        shot.flick_frame.abs_diff(flick) <= 1,
        "flick {} vs true {flick}",
        shot.flick_frame
    );
    assert_eq!(shot.first_moved, Some(fish(0)));
    // coin:0 stopped at the contact; coin:1 took its velocity and left at x = 1000.
    let last = o.truth.last().unwrap();
    let (exit_frame, exit) = last.get(coin(1)).unwrap().exit.expect("coin:1 fell");
    assert_eq!(
        shot.lost.len(),
        1,
        "lost: {:?}\nnotes: {:?}",
        shot.lost,
        shot.notes
    );
    let l = &shot.lost[0];
    assert_eq!(l.item, coin(1));
    let err = (l.exit.point() - exit).norm();
    assert!(err < 10.0, "exit {:?} vs true {exit} ({err:.1} mm)", l.exit);
    assert!(
        l.frame.abs_diff(exit_frame) <= 2,
        "exit frame {} vs {exit_frame}",
        l.frame
    );
    let c0 = shot.end[&coin(0)].point();
    assert!(
        (c0 - last.get(coin(0)).unwrap().pos).norm() < 3.0,
        "coin:0 rests at {c0}"
    );
    let rest = true_rest(&o.truth, flick);
    assert!(
        shot.rest_frame + 2 >= rest && shot.rest_frame <= rest + 4,
        "rest {} vs true {rest}",
        shot.rest_frame
    );
    assert!(shot.tracks[&coin(1)].len() >= 3);
}

fn a_hand_over_the_movers_fish_for_ten_frames_keeps_its_track_and_the_flick_with(seed: u64) {
    // No start state: fish are named by colour, coins by the hole they lie in.
    let items = vec![
        (fish(0), Pose::fish(300.0, 200.0, 0.0)),
        (coin(0), Pose::coin(300.0, 200.0)),
        (fish(1), Pose::fish(700.0, 500.0, std::f64::consts::PI)),
        (coin(1), Pose::coin(700.0, 500.0)),
    ];
    let mut s = Script::new(2, 110, items);
    s.hands = vec![(25, 35, Point::new(300.0, 200.0), 70.0)];
    s.kicks = vec![(29, fish(0), Vector::new(1000.0, 0.0))];
    s.seed = seed;
    let o = run(&s, None);
    let errs = identity_errors(&o);
    assert!(errs.is_empty(), "identity switches:\n{}", errs.join("\n"));
    // The fish was matched, not re-created: one track carries fish:0 throughout.
    let ids: std::collections::BTreeSet<_> = o
        .frames
        .iter()
        .flat_map(|f| {
            f.items
                .iter()
                .filter(|t| t.item == Some(fish(0)))
                .map(|t| t.track)
        })
        .collect();
    assert_eq!(ids.len(), 1, "fish:0 tracks {ids:?}");
    assert_eq!(o.shots.len(), 1);
    let shot = &o.shots[0];
    let flick = true_flick(&o.truth, 0);
    assert!(
        shot.flick_frame.abs_diff(flick) <= 1,
        "flick {} vs true {flick}",
        shot.flick_frame
    );
    assert_eq!(shot.first_moved, Some(fish(0)));
    assert_eq!(shot.player, 0);
    assert!(shot.lost.is_empty(), "{:?}", shot.lost);
    assert_eq!(shot.start.len(), 4, "start {:?}", shot.start);
    assert_eq!(shot.coins_in_holes.get(&coin(1)), Some(&fish(1)));
    assert_eq!(
        shot.coins_in_holes.get(&coin(0)),
        None,
        "the fish slid away from coin:0"
    );
    let f0 = shot.end[&fish(0)].point();
    let truth_f0 = o.truth.last().unwrap().get(fish(0)).unwrap().pos;
    assert!(
        (f0 - truth_f0).norm() < 2.0,
        "fish:0 rests at {f0} vs {truth_f0}"
    );
}

fn a_fish_that_comes_to_rest_on_a_coin_hides_it_and_it_is_stacked_not_lost_with(seed: u64) {
    let items = vec![
        (fish(0), Pose::fish(200.0, 350.0, 0.0)),
        (fish(1), Pose::fish(800.0, 100.0, 0.0)),
        (coin(1), Pose::coin(395.0, 352.0)),
    ];
    let mut s = Script::new(2, 100, items.clone());
    s.seed = seed;
    s.kicks = vec![(15, fish(0), Vector::new(800.0, 0.0))];
    let o = run(&s, Some(&start_state(&items)));
    assert!(identity_errors(&o).is_empty());
    assert_eq!(o.shots.len(), 1);
    let shot = &o.shots[0];
    assert!(
        shot.lost.is_empty(),
        "lost {:?} notes {:?}",
        shot.lost,
        shot.notes
    );
    assert!(
        shot.stacking
            .iter()
            .any(|st| st.top == fish(0) && st.under == coin(1)),
        "stacking {:?} notes {:?}",
        shot.stacking,
        shot.notes
    );
    assert!(shot.end.contains_key(&coin(1)));
    assert!(shot.doubt.contains(&coin(1)));
    assert!(
        shot.notes.iter().any(|n| n.contains("coin:1")),
        "{:?}",
        shot.notes
    );
}

fn an_unseen_fast_coin_is_judged_from_its_path_under_a_fish_or_off_the_table_with(seed: u64) {
    // coin:0 heads for fish:1 and stops under it; coin:1 heads for the top edge.
    // Each is seen for three frames after it is struck, then never again.
    let items = vec![
        (fish(0), Pose::fish(100.0, 100.0, 0.0)),
        (fish(1), Pose::fish(600.0, 300.0, 0.0)),
        (coin(0), Pose::coin(400.0, 305.0)),
        (coin(1), Pose::coin(300.0, 250.0)),
    ];
    let mut s = Script::new(2, 120, items.clone());
    s.seed = seed;
    s.kicks = vec![
        (10, fish(0), Vector::new(400.0, 0.0)),
        (12, coin(0), Vector::new(929.5, 0.0)),
        (12, coin(1), Vector::new(0.0, 1500.0)),
    ];
    s.invisible_from = vec![(coin(0), 16), (coin(1), 16)];
    s.p_miss = 0.0;
    let o = run(&s, Some(&start_state(&items)));
    let last = o.truth.last().unwrap();
    let c0 = last.get(coin(0)).unwrap();
    assert!(c0.on_table, "script: coin:0 stays on the table");
    assert_eq!(o.shots.len(), 1);
    let shot = &o.shots[0];
    assert!(
        shot.stacking
            .iter()
            .any(|st| st.top == fish(1) && st.under == coin(0)),
        "stacking {:?} notes {:?}",
        shot.stacking,
        shot.notes
    );
    let (_, exit) = last.get(coin(1)).unwrap().exit.expect("coin:1 fell");
    let l = shot
        .lost
        .iter()
        .find(|l| l.item == coin(1))
        .unwrap_or_else(|| panic!("coin:1 not lost: {:?}", shot.notes));
    // Never seen near the edge: extrapolated 330 mm from three sightings with 2 mm
    // noise (about 5 mm standard error), so a wider bound than for seen exits.
    assert!(
        (l.exit.point() - exit).norm() < 20.0,
        "exit {:?} vs {exit}; notes {:?}",
        l.exit,
        shot.notes
    );
    assert!(!shot.lost.iter().any(|l| l.item == coin(0)));
    assert!(
        shot.notes.iter().filter(|n| n.contains("vanished")).count() >= 2,
        "{:?}",
        shot.notes
    );
}

fn put_backs_between_shots_revive_the_old_identities_with(seed: u64) {
    let items = vec![
        (fish(0), Pose::fish(60.0, 350.0, 0.0)),
        (coin(0), Pose::coin(60.0, 350.0)),
        (fish(1), Pose::fish(700.0, 500.0, 0.0)),
        (coin(1), Pose::coin(700.0, 500.0)),
    ];
    let mut s = Script::new(2, 200, items);
    // Shot 1: fish:0 is flicked off the left edge, coin:1 off the top edge.
    s.kicks = vec![
        (20, fish(0), Vector::new(-900.0, 0.0)),
        (21, coin(1), Vector::new(0.0, 900.0)),
    ];
    s.blob_frames = 2;
    // Interlude: both put back — the fish over its coin, the coin into fish:1's hole.
    s.placements = vec![
        (95, fish(0), Pose::fish(60.0, 350.0, 0.3)),
        (105, coin(1), Pose::coin(700.0, 500.0)),
    ];
    // Shot 2: fish:1 moves.
    s.kicks.push((150, fish(1), Vector::new(-500.0, 0.0)));
    s.seed = seed;
    let o = run(&s, None);
    let errs = identity_errors(&o);
    assert!(errs.is_empty(), "identity switches:\n{}", errs.join("\n"));
    assert_eq!(
        o.shots.len(),
        2,
        "{:?}",
        o.shots
            .iter()
            .map(|s| (s.flick_frame, s.rest_frame))
            .collect::<Vec<_>>()
    );
    let lost: Vec<ItemId> = o.shots[0].lost.iter().map(|l| l.item).collect();
    assert!(
        lost.contains(&fish(0)) && lost.contains(&coin(1)),
        "lost {lost:?}"
    );
    let fish_exit = o.shots[0]
        .lost
        .iter()
        .find(|l| l.item == fish(0))
        .unwrap()
        .exit
        .point();
    let true_exit = o.truth[90]
        .bodies
        .iter()
        .find(|b| b.id == fish(0))
        .unwrap()
        .exit
        .unwrap()
        .1;
    assert!(
        (fish_exit - true_exit).norm() < 10.0,
        "fish exit {fish_exit} vs {true_exit}"
    );
    let second = &o.shots[1];
    assert_eq!(second.first_moved, Some(fish(1)));
    let before = second.before.as_ref().expect("interlude");
    let placed: Vec<(ItemId, FrameIdx)> = before.placed.iter().map(|p| (p.item, p.frame)).collect();
    assert!(
        placed
            .iter()
            .any(|&(i, f)| i == fish(0) && f.abs_diff(95) <= 3),
        "placed {placed:?}"
    );
    assert!(
        placed
            .iter()
            .any(|&(i, f)| i == coin(1) && f.abs_diff(105) <= 3),
        "placed {placed:?}"
    );
    assert!(
        before.disturbed.is_empty(),
        "disturbed {:?}",
        before.disturbed
    );
    assert_eq!(
        second
            .start
            .get(&coin(1))
            .map(|p| (p.point() - Point::new(700.0, 500.0)).norm() < 2.0),
        Some(true)
    );
    // After the put-backs both coins sit in their owners' holes at the second rest
    // (fish:1 moved away from coin:1, so only coin:0 stays).
    assert_eq!(second.coins_in_holes.get(&coin(0)), Some(&fish(0)));
}

// Each scenario with its own noise seed, then all of them over more seeds: the
// checks must hold for any draw of noise and missed detections, not one lucky one.

#[test]
fn twin_coins_swap_in_a_collision_and_the_struck_one_flies_off_the_edge() {
    twin_coins_swap_in_a_collision_and_the_struck_one_flies_off_the_edge_with(7);
}

#[test]
fn a_hand_over_the_movers_fish_for_ten_frames_keeps_its_track_and_the_flick() {
    a_hand_over_the_movers_fish_for_ten_frames_keeps_its_track_and_the_flick_with(11);
}

#[test]
fn a_fish_that_comes_to_rest_on_a_coin_hides_it_and_it_is_stacked_not_lost() {
    a_fish_that_comes_to_rest_on_a_coin_hides_it_and_it_is_stacked_not_lost_with(7);
}

#[test]
fn an_unseen_fast_coin_is_judged_from_its_path_under_a_fish_or_off_the_table() {
    an_unseen_fast_coin_is_judged_from_its_path_under_a_fish_or_off_the_table_with(7);
}

#[test]
fn put_backs_between_shots_revive_the_old_identities() {
    put_backs_between_shots_revive_the_old_identities_with(3);
}

/// Two fish slide one behind the other, each with its coin in the hole; both coins
/// vanish in the blur and reappear in their holes, the trailing coin first, where
/// the leading one was last seen. A coin held where it vanished would take the other's
/// place; a coin that rides in its fish's hole does not (the swap `make eval` saw).
fn unseen_coins_ride_in_the_holes_of_their_moving_fish_with(seed: u64) {
    let items = vec![
        (fish(0), Pose::fish(300.0, 350.0, 0.0)),
        (coin(0), Pose::coin(300.0, 350.0)),
        (fish(1), Pose::fish(300.0, 150.0, 0.0)),
        (coin(1), Pose::coin(300.0, 150.0)),
    ];
    let mut s = Script::new(2, 80, items.clone());
    s.seed = seed;
    s.p_miss = 0.0;
    let v = Vector::new(0.0, 900.0);
    s.kicks = vec![
        (10, fish(0), v),
        (10, coin(0), v),
        (10, fish(1), v),
        (10, coin(1), v),
    ];
    // The trailing coin shows first, next to where the leading one vanished.
    s.unseen = vec![(coin(0), 9, 50), (coin(1), 9, 40)];
    let o = run(&s, Some(&start_state(&items)));
    let errs = identity_errors(&o);
    assert!(errs.is_empty(), "seed {seed}: {errs:#?}");
    let last = o.frames.last().unwrap();
    let truth = o.truth.last().unwrap();
    for c in [coin(0), coin(1)] {
        let t = last
            .get(c)
            .unwrap_or_else(|| panic!("seed {seed}: {c} lost its track"));
        let p = truth.get(c).unwrap().pos;
        assert!(
            (t.pose.point() - p).norm() < 3.0,
            "seed {seed}: {c} tracked at {:?}, truly at {p:?}",
            t.pose
        );
    }
    // The trailing coin really ends near where the leading one vanished.
    let c0_then = o.truth[8].get(coin(0)).unwrap().pos;
    assert!((truth.get(coin(1)).unwrap().pos - c0_then).norm() < 40.0);
}

/// A fish is flicked out from over its coin while a hand hides the coin; the coin
/// stays where it lay, the fish slides away under the hand's other end. Carried
/// unseen, the coin's track went with the hole; seen again where it lay, it is the
/// same coin, not "a coin of unknown owner" with its own track taken off with the
/// fish (another renderer's clip: the mover's coin then counted as lost).
fn a_coin_a_fish_is_flicked_out_from_over_keeps_its_name_with(seed: u64) {
    let items = vec![
        (fish(0), Pose::fish(300.0, 120.0, 0.0)),
        (coin(0), Pose::coin(300.0, 120.0)),
        (fish(1), Pose::fish(700.0, 350.0, 0.0)),
        (coin(1), Pose::coin(700.0, 350.0)),
    ];
    let mut s = Script::new(2, 70, items.clone());
    s.seed = seed;
    s.p_miss = 0.0;
    s.kicks = vec![(10, fish(0), Vector::new(0.0, 2200.0))];
    // A hand over the coin until the fish has gone, and the arm beside the fish's
    // path: the fish is seen, the hole it carries the coin in is not.
    s.hands = vec![(4, 16, Point::new(300.0, 120.0), 30.0)];
    for y in (0..24).map(|k| 200.0 + 20.0 * k as f64) {
        s.hands.push((10, 30, Point::new(237.0, y), 62.0));
    }
    let o = run(&s, None);
    let errs = identity_errors(&o);
    assert!(errs.is_empty(), "seed {seed}: {errs:#?}");
    let last = o.frames.last().unwrap();
    let t = last
        .get(coin(0))
        .unwrap_or_else(|| panic!("seed {seed}: coin:0 has no track at the end"));
    assert!(
        t.state.on_table() && (t.pose.point() - Point::new(300.0, 120.0)).norm() < 3.0,
        "seed {seed}: coin:0 {:?} at {:?}, truly where it lay",
        t.state,
        t.pose
    );
    for shot in &o.shots {
        assert!(
            shot.lost.iter().all(|l| l.item != coin(0)),
            "seed {seed}: coin:0 counted lost: {:?}",
            shot.lost
        );
    }
}

/// Without a start state a coin lying loose is nobody's by its hole; with every
/// other coin in its owner's hole it can only be the last player's (R1: one coin
/// each), so its loss scores. With two coins loose, nothing is guessed.
fn a_loose_coin_is_named_by_elimination_with(seed: u64, players: usize) {
    let mut items = vec![
        (fish(0), Pose::fish(300.0, 350.0, 0.0)),
        (coin(0), Pose::coin(300.0, 350.0)),
        (fish(1), Pose::fish(300.0, 600.0, 0.3)),
        (coin(1), Pose::coin(900.0, 350.0)),
    ];
    if players == 3 {
        items.push((fish(2), Pose::fish(600.0, 150.0, 1.0)));
        items.push((coin(2), Pose::coin(700.0, 500.0)));
    }
    let mut s = Script::new(players, 90, items);
    s.seed = seed;
    s.kicks = vec![
        (30, fish(0), Vector::new(600.0, 0.0)),
        (33, coin(1), Vector::new(1400.0, 0.0)),
    ];
    let o = run(&s, None);
    assert!(identity_errors(&o).is_empty());
    assert_eq!(
        o.shots.len(),
        1,
        "{:?}",
        o.shots.iter().map(|s| s.flick_frame).collect::<Vec<_>>()
    );
    let shot = &o.shots[0];
    let lost: Vec<ItemId> = shot.lost.iter().map(|l| l.item).collect();
    if players == 2 {
        assert_eq!(lost, vec![coin(1)], "notes {:?}", shot.notes);
        assert!(shot.unknown.is_empty(), "{:?}", shot.unknown);
    } else {
        assert!(lost.is_empty(), "guessed an owner: {lost:?}");
        assert_eq!(shot.unknown.len(), 2, "{:?}", shot.unknown);
        assert!(shot.unknown.iter().any(|u| u.lost.is_some()));
    }
}

#[test]
fn a_loose_coin_is_named_by_elimination_and_two_are_not_guessed() {
    for seed in [7, 8, 9] {
        a_loose_coin_is_named_by_elimination_with(seed, 2);
        a_loose_coin_is_named_by_elimination_with(seed, 3);
    }
}

#[test]
fn a_coin_a_fish_is_flicked_out_from_over_keeps_its_name() {
    for seed in [7, 8, 9] {
        a_coin_a_fish_is_flicked_out_from_over_keeps_its_name_with(seed);
    }
}

#[test]
fn unseen_coins_ride_in_the_holes_of_their_moving_fish() {
    unseen_coins_ride_in_the_holes_of_their_moving_fish_with(7);
}

#[test]
fn every_scenario_holds_over_many_noise_seeds() {
    if let Some(seed) = std::env::var("TRACK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        an_unseen_fast_coin_is_judged_from_its_path_under_a_fish_or_off_the_table_with(seed);
        return;
    }
    // TRACK_SEEDS=N widens the sweep by hand (60 seeds pass at the time of writing).
    let n: u64 = std::env::var("TRACK_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    for seed in 100..100 + n {
        eprintln!("noise seed {seed}");
        twin_coins_swap_in_a_collision_and_the_struck_one_flies_off_the_edge_with(seed);
        a_hand_over_the_movers_fish_for_ten_frames_keeps_its_track_and_the_flick_with(seed);
        a_fish_that_comes_to_rest_on_a_coin_hides_it_and_it_is_stacked_not_lost_with(seed);
        an_unseen_fast_coin_is_judged_from_its_path_under_a_fish_or_off_the_table_with(seed);
        put_backs_between_shots_revive_the_old_identities_with(seed);
        unseen_coins_ride_in_the_holes_of_their_moving_fish_with(seed);
    }
}

/// A falling tag is seen below the table plane, which projects it back toward the
/// camera: its centre of mass can read on the table while its hole is already
/// beyond the edge. Seen moving like that and then gone, it fell; a fish at rest
/// hanging over the edge that the detector misses for a frame did not.
#[test]
fn a_fish_seen_moving_over_the_edge_then_gone_fell_but_one_resting_there_did_not() {
    let cfg = TrackerConfig::new(FPS, 2, Table::rectangle(W, H), &Items::default_set()).unwrap();
    let fish_at = |x: f64, y: f64, theta: f64| FishDetection {
        pt_in_table: Point::new(x, y),
        theta,
        player_scores: vec![0.9, 0.05],
        confidence: 0.9,
        partly_hidden: false,
        exposure_share: None,
    };
    // Tail pointing back into the table (theta = -90°): the centre of mass trails
    // the hole by the tag's centroid offset. The fish slows as if it might stop, so
    // no prediction carries its centre of mass over the edge.
    let back = -std::f64::consts::FRAC_PI_2;
    for moving in [true, false] {
        let mut tracker = Tracker::new(cfg.clone());
        let mut ys: Vec<Option<f64>> = vec![Some(600.0); 10];
        if moving {
            ys.extend([630.0, 655.0, 675.0, 690.0, 701.0, 709.0, 715.0].map(Some));
        } else {
            ys.extend([Some(705.0); 6]);
        }
        ys.extend([None, Some(705.0).filter(|_| !moving), None, None]);
        let mut last = None;
        for (f, y) in ys.iter().enumerate() {
            let mut d = FrameDetections::empty(f as u64);
            if let Some(y) = y {
                d.fish.push(fish_at(300.0, *y, back));
            }
            last = Some(tracker.update(f as u64, &d));
        }
        let tf = last.unwrap();
        let t = tf.get(fish(0)).expect("fish:0 tracked");
        if moving {
            assert!(!t.state.on_table(), "state {:?}", t.state);
        } else {
            assert!(t.state.on_table(), "state {:?}", t.state);
        }
    }
}

/// A coin sighting at (x, y) in table mm.
fn coin_at(x: f64, y: f64) -> CoinDetection {
    CoinDetection {
        pt_in_table: Point::new(x, y),
        radius_mm: Some(COIN_R),
        confidence: 0.5,
        streak: None,
        in_hole_of: None,
        rim_gap_in_view: false,
    }
}

/// The state of the one coin tracked after `frames` frames whose sightings `coins`
/// gives frame by frame.
fn the_one_coin_after(frames: u64, coins: impl Fn(u64) -> Vec<CoinDetection>) -> TrackState {
    let cfg = TrackerConfig::new(FPS, 2, Table::rectangle(W, H), &Items::default_set()).unwrap();
    let mut tracker = Tracker::new(cfg);
    let mut last = None;
    for f in 0..frames {
        let mut d = FrameDetections::empty(f);
        d.coins = coins(f);
        last = Some(tracker.update(f, &d));
    }
    let tf = last.expect("frames");
    let tracked: Vec<_> = tf
        .items
        .iter()
        .filter(|t| t.kind == fishtrack::model::ItemKind::Coin && t.state != TrackState::Tentative)
        .collect();
    assert_eq!(tracked.len(), 1, "one coin tracked: {tracked:?}");
    tracked[0].state
}

/// Something beyond the edge that the detector reads as a coin in every frame (the
/// table's front face, a coin on the floor) is scenery: a coin that vanishes
/// while sliding on the table (too blurred to see) must not be "found" there and
/// called fallen.
#[test]
fn a_coin_lost_on_the_table_is_not_found_in_a_still_sighting_beyond_the_edge() {
    let state = the_one_coin_after(40, |f| {
        let mut d = vec![coin_at(470.0, -15.0)];
        // Still until frame 20, then sliding along +x at 1200 mm/s, unseen from 24.
        match f {
            0..=20 => d.push(coin_at(300.0, 60.0)),
            21..=23 => d.push(coin_at(300.0 + 40.0 * (f - 20) as f64, 60.0)),
            _ => {}
        }
        d
    });
    assert!(
        state.on_table(),
        "taken off the table by the still sighting: {state:?}"
    );
}

/// Scenery beyond the edge hidden for a while (an arm reaching over the edge to flick)
/// is still scenery when the arm has gone: a coin that vanished while sliding on the
/// table must not be "found" there the moment it shows again (sweep-037: the coin in
/// the mover's hole called fallen where the floor showed again as the arm withdrew).
#[test]
fn scenery_beyond_the_edge_seen_again_after_an_arm_hid_it_takes_no_lost_coin() {
    let state = the_one_coin_after(60, |f| {
        let mut d = Vec::new();
        // Seen from the start, hidden under the arm from frame 13 to 32.
        if !(13..=32).contains(&f) {
            d.push(coin_at(450.0, -17.0));
        }
        // Still until frame 23, then sliding along +x at 600 mm/s, unseen from 31.
        match f {
            0..=23 => d.push(coin_at(300.0, 60.0)),
            24..=30 => d.push(coin_at(300.0 + 20.0 * (f - 23) as f64, 60.0)),
            _ => {}
        }
        d
    });
    assert!(
        state.on_table(),
        "taken off the table by the scenery seen again: {state:?}"
    );
}

/// Two resting fish whose colours the detector misreads (swapped) for `bad` frames.
fn colour_misread(bad: std::ops::Range<u64>) -> Vec<TrackFrame> {
    let cfg = TrackerConfig::new(FPS, 2, Table::rectangle(W, H), &Items::default_set()).unwrap();
    let mut tracker = Tracker::new(cfg);
    (0..80)
        .map(|f| {
            let swap = bad.contains(&f);
            let mut d = FrameDetections::empty(f);
            for (k, x) in [(0usize, 200.0), (1, 260.0)] {
                let owner = if swap { 1 - k } else { k };
                let mut scores = vec![0.1, 0.1];
                scores[owner] = 0.9;
                d.fish.push(FishDetection {
                    pt_in_table: Point::new(x, 300.0),
                    theta: 0.0,
                    player_scores: scores,
                    confidence: 1.0,
                    partly_hidden: false,
                    exposure_share: None,
                });
            }
            tracker.update(f, &d)
        })
        .collect()
}

fn owner_at(frames: &[TrackFrame], f: usize, x: f64) -> Option<ItemId> {
    frames[f]
        .items
        .iter()
        .find(|t| (t.pose.x - x).abs() < 5.0)
        .and_then(|t| t.item)
}

#[test]
fn a_fish_keeps_its_colour_identity_through_a_brief_misread_but_not_a_lasting_one() {
    // Four frames of swapped colours: no identity changes.
    let frames = colour_misread(30..34);
    for f in 5..80 {
        assert_eq!(owner_at(&frames, f, 200.0), Some(fish(0)), "frame {f}");
        assert_eq!(owner_at(&frames, f, 260.0), Some(fish(1)), "frame {f}");
    }
    // Swapped from frame 30 on: the identities follow the colour, but only after the
    // hold time (0.5 s), never on the first frame.
    let frames = colour_misread(30..80);
    assert_eq!(owner_at(&frames, 31, 200.0), Some(fish(0)));
    assert_eq!(owner_at(&frames, 79, 200.0), Some(fish(1)));
    assert_eq!(owner_at(&frames, 79, 260.0), Some(fish(0)));
    let switched = (0..80)
        .find(|&f| owner_at(&frames, f, 200.0) == Some(fish(1)))
        .unwrap();
    assert!(switched >= 40, "switched at frame {switched}");
}

#[test]
fn detection_streams_round_trip_as_json_lines() {
    let s = Script::new(
        2,
        40,
        vec![
            (fish(0), Pose::fish(100.0, 100.0, 0.5)),
            (coin(0), Pose::coin(100.0, 100.0)),
        ],
    );
    let mut s = s;
    s.hands = vec![(5, 10, Point::new(100.0, 100.0), 40.0)];
    let dets = detect(&s, &simulate(&s));
    let jsonl: String = dets
        .iter()
        .map(|d| serde_json::to_string(d).unwrap() + "\n")
        .collect();
    let back: Vec<FrameDetections> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // serde_json's float parsing may differ in the last bit; compare to 1e-9 mm.
    assert_eq!(back.len(), dets.len());
    for (a, b) in back.iter().zip(&dets) {
        assert_eq!(
            (a.frame, a.fish.len(), a.coins.len(), a.occluders.len()),
            (b.frame, b.fish.len(), b.coins.len(), b.occluders.len())
        );
        for (x, y) in a.coins.iter().zip(&b.coins) {
            assert!((x.pt_in_table - y.pt_in_table).norm() < 1e-9);
        }
        for (x, y) in a.fish.iter().zip(&b.fish) {
            assert!(
                (x.pt_in_table - y.pt_in_table).norm() < 1e-9 && (x.theta - y.theta).abs() < 1e-12
            );
        }
    }
    // Minimal hand-written lines parse too (defaults for the optional keys).
    let d: FrameDetections = serde_json::from_str(
        r#"{"frame": 3, "coins": [{"pt_in_table": [10, 20]}], "occluders": [{"shape": "disc", "center": [0, 0], "radius": 5}]}"#,
    )
    .unwrap();
    assert_eq!(d.coins[0].confidence, 1.0);
    assert!(d.occluded(Point::new(3.0, 0.0), 0.0));
}

/// Two coins 30 mm apart (a start state names them); coin:0 goes unseen for frames
/// `10..20` and is then seen at `x_again`; coin:1 stays seen at 430, or, with
/// `coin1_hidden`, goes unseen from frame 10 on.
fn twin_coin_seen_again(x_again: f64, coin1_hidden: bool) -> Vec<TrackFrame> {
    let items = vec![
        (fish(0), Pose::fish(200.0, 550.0, 0.0)),
        (fish(1), Pose::fish(800.0, 550.0, 0.0)),
        (coin(0), Pose::coin(400.0, 300.0)),
        (coin(1), Pose::coin(430.0, 300.0)),
    ];
    let cfg = TrackerConfig::new(FPS, 2, Table::rectangle(W, H), &Items::default_set()).unwrap();
    let mut tracker = Tracker::with_start(cfg, &start_state(&items));
    (0..40)
        .map(|f| {
            let mut d = FrameDetections::empty(f);
            for (k, x) in [(0usize, 200.0), (1, 800.0)] {
                let mut scores = vec![0.1, 0.1];
                scores[k] = 0.9;
                d.fish.push(FishDetection {
                    pt_in_table: Point::new(x, 550.0),
                    theta: 0.0,
                    player_scores: scores,
                    confidence: 1.0,
                    partly_hidden: false,
                    exposure_share: None,
                });
            }
            let mut coin_at = |x: f64| {
                d.coins.push(CoinDetection {
                    pt_in_table: Point::new(x, 300.0),
                    radius_mm: None,
                    confidence: 1.0,
                    streak: None,
                    in_hole_of: None,
                    rim_gap_in_view: false,
                })
            };
            if f < 10 {
                coin_at(400.0);
            } else if f >= 20 {
                coin_at(x_again);
            }
            if f < 10 || !coin1_hidden {
                coin_at(430.0);
            }
            tracker.update(f, &d)
        })
        .collect()
}

#[test]
fn a_coin_seen_again_as_near_an_unseen_twin_is_recorded_with_that_look_alike() {
    use fishtrack::track::TrackEvent;
    let seen_again = |frames: &[TrackFrame]| -> Vec<(u64, f64, u32)> {
        frames
            .iter()
            .flat_map(|tf| &tf.events)
            .filter_map(|e| match *e {
                TrackEvent::SeenAgain {
                    unseen_frames,
                    mm,
                    lookalikes,
                    ..
                } => Some((unseen_frames, mm, lookalikes)),
                _ => None,
            })
            .collect()
    };
    // Seen again 15 mm from where coin:0 was held and 15 mm from coin:1, unseen too:
    // either could have made that sighting.
    let s = seen_again(&twin_coin_seen_again(415.0, true));
    assert!(
        s.iter()
            .any(|&(n, mm, k)| n >= 9 && (mm - 15.0).abs() < 1.0 && k == 1),
        "{s:?}"
    );
    // The same sighting while coin:1 is seen where it lies: coin:1 made its own
    // sighting, so it is no look-alike.
    let frames = twin_coin_seen_again(415.0, false);
    let at = |f: usize, x: f64| {
        frames[f]
            .items
            .iter()
            .find(|t| t.seen && (t.pose.x - x).abs() < 3.0)
            .and_then(|t| t.item)
    };
    assert_eq!(at(25, 415.0), Some(coin(0)), "the tracker's own choice");
    let s = seen_again(&frames);
    assert!(s.iter().any(|&(n, _, _)| n >= 9), "{s:?}");
    assert!(s.iter().all(|&(_, _, k)| k == 0), "{s:?}");
    // Seen again where it was held, coin:1 unseen: nothing else as near.
    let s = seen_again(&twin_coin_seen_again(401.0, true));
    assert!(s.iter().any(|&(n, _, k)| n >= 9 && k == 0), "{s:?}");
}

/// A whole tag of player `k` of two, read clearly in that player's colour.
fn tag_of_two(p: Pose, k: usize) -> FishDetection {
    FishDetection {
        pt_in_table: p.point(),
        theta: p.theta.unwrap_or(0.0),
        player_scores: if k == 0 {
            vec![0.9, 0.05]
        } else {
            vec![0.05, 0.9]
        },
        confidence: 0.9,
        partly_hidden: false,
        exposure_share: None,
    }
}

/// A tag tipping over the edge is seen badly (tilted, blurred), its speed read low,
/// then not at all (sweep-002, -006, -026, -032): a tag that nothing could hide and
/// that is not seen again has left the table, though as seen it could not reach the
/// edge; it fell where its path meets the edge.
#[test]
fn a_tag_gone_unseen_with_nothing_to_hide_it_fell_though_it_read_too_slow_to() {
    let items = vec![
        (fish(0), Pose::fish(200.0, 300.0, 0.0)),
        (fish(1), Pose::fish(500.0, 600.0, -1.4)),
        (coin(0), Pose::coin(100.0, 100.0)),
        (coin(1), Pose::coin(800.0, 300.0)),
    ];
    // fish:0 is flicked at frame 20 and stops; fish:1, struck at 25, is seen sliding
    // towards the edge at y = 700 ever slower (as misread), tail first (its centre
    // of mass trailing), then never again.
    let fish1_y = [600.0, 625.0, 645.0, 658.0, 665.0, 668.0];
    let dets: Vec<FrameDetections> = (0..90u64)
        .map(|f| {
            let mut d = FrameDetections::empty(f);
            let x0 = 200.0 + 12.0 * (f.clamp(20, 30) - 20) as f64;
            d.fish.push(tag_of_two(Pose::fish(x0, 300.0, 0.0), 0));
            let k = f.saturating_sub(25) as usize;
            if let Some(y) = fish1_y.get(k) {
                d.fish.push(tag_of_two(Pose::fish(500.0, *y, -1.4), 1));
            }
            d.coins = vec![coin_at(100.0, 100.0), coin_at(800.0, 300.0)];
            d
        })
        .collect();
    let (_, shots) = track_and_cut(2, &dets, Some(&start_state(&items)));
    assert_eq!(shots.len(), 1, "{shots:?}");
    let shot = &shots[0];
    let lost = shot
        .lost
        .iter()
        .find(|l| l.item == fish(1))
        .unwrap_or_else(|| panic!("fish:1 not lost: {:?}", shot.notes));
    assert!(
        (lost.exit.y - H).abs() < 1e-6 && (lost.exit.x - 500.0).abs() < 60.0,
        "exit {:?}; notes {:?}",
        lost.exit,
        shot.notes
    );
    assert!(!shot.end.contains_key(&fish(1)), "{:?}", shot.end);
}

/// A coin sliding along the far edge, its centre 3 mm inside it, is seen slowing and
/// then never again, with nothing near to hide it (seed 531046's sweep-007: its path
/// as read ran along the edge, not over it). It fell, at the nearest edge, a call as
/// sure as the few millimetres either side it could have crossed. One that vanishes
/// as far from every edge as it could slide is kept on the table. One that vanishes
/// fast, 40 mm inside the edge, fell too, but where is a guess a referee should see.
#[test]
fn a_coin_gone_unseen_by_the_edge_with_nothing_to_hide_it_fell() {
    use fishtrack::record::{Call, DEFAULT_REVIEW_BELOW};
    let slow = [400.0, 412.0, 422.0, 430.0, 436.0];
    let fast = [400.0, 430.0, 458.0, 484.0, 508.0];
    for (y, xs) in [(H - 3.0, slow), (350.0, slow), (H - 40.0, fast)] {
        let items = vec![
            (fish(0), Pose::fish(200.0, 150.0, 0.0)),
            (fish(1), Pose::fish(800.0, 150.0, 0.0)),
            (coin(0), Pose::coin(200.0, 150.0)),
            (coin(1), Pose::coin(400.0, y)),
        ];
        // fish:0 is flicked at frame 20 and stops; coin:1, struck at 25, slides along
        // +x ever slower, then is never seen again.
        let dets: Vec<FrameDetections> = (0..90u64)
            .map(|f| {
                let mut d = FrameDetections::empty(f);
                let x0 = 200.0 + 12.0 * (f.clamp(20, 30) - 20) as f64;
                d.fish.push(tag_of_two(Pose::fish(x0, 150.0, 0.0), 0));
                d.fish.push(tag_of_two(Pose::fish(800.0, 150.0, 0.0), 1));
                d.coins = vec![coin_at(x0, 150.0)];
                let k = f.saturating_sub(25) as usize;
                if f < 25 {
                    d.coins.push(coin_at(400.0, y));
                } else if let Some(x) = xs.get(k) {
                    d.coins.push(coin_at(*x, y));
                }
                d
            })
            .collect();
        let (_, shots) = track_and_cut(2, &dets, Some(&start_state(&items)));
        assert_eq!(shots.len(), 1, "{shots:?}");
        let shot = &shots[0];
        let lost = shot.lost.iter().find(|l| l.item == coin(1));
        if y == 350.0 {
            assert!(lost.is_none(), "lost mid-table: {:?}", shot.notes);
            assert!(shot.end.contains_key(&coin(1)), "{:?}", shot.end);
            continue;
        }
        let lost = lost.unwrap_or_else(|| panic!("coin:1 not lost: {:?}", shot.notes));
        assert!(!shot.end.contains_key(&coin(1)), "{:?}", shot.end);
        assert!((lost.exit.y - H).abs() < 1e-6, "exit {:?}", lost.exit);
        let sure = |call: Call| {
            shot.decisions
                .iter()
                .find(|d| d.call == call && d.item == coin(1))
                .map(|d| d.evidence.confidence)
                .unwrap_or_else(|| panic!("no {call:?} call: {:?}", shot.decisions))
        };
        let (lost_sure, exit_sure) = (sure(Call::LostUnseen), sure(Call::Exit));
        if xs == slow {
            // A few millimetres either side: the exit as sure as the loss.
            assert!((lost.exit.x - 436.0).abs() < 10.0, "exit {:?}", lost.exit);
            assert!(
                exit_sure >= lost_sure - 1e-9,
                "exit {exit_sure}, lost {lost_sure}"
            );
        } else {
            assert!(
                exit_sure < DEFAULT_REVIEW_BELOW && exit_sure < lost_sure,
                "exit {exit_sure}, lost {lost_sure}"
            );
        }
    }
}
