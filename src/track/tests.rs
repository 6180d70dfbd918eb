//! The tracker and shot judge on synthetic detection streams in which a coin
//! leaves the hole of the fish that carries it: seen loose once on the way, never
//! seen again with the fish at rest and its hole empty, or dropped through a hole
//! that hangs over the edge. Each says where the coin went, not where its fish did.

use super::motion::advance;
use super::{
    CoinDetection, FishDetection, FrameDetections, Streak, TrackEvent, Tracker, TrackerConfig,
};
use crate::config::Items;
use crate::geometry::{Point, Table, Vector};
use crate::model::{FrameIdx, ItemId, Pose};
use crate::record::{Call, Shot, StartState, DEFAULT_REVIEW_BELOW};
use crate::shots::{ShotConfig, ShotCutter};

/// One frame's detections: player 0's fish (hole centre, heading) and coins.
fn frame(f: FrameIdx, fish: Option<(Point, f64)>, coins: &[Point]) -> FrameDetections {
    let fish: Vec<(usize, Point, f64)> = fish.into_iter().map(|(p, a)| (0, p, a)).collect();
    frame_of(f, 1, &fish, coins)
}

/// One frame's detections: fish `(player, hole centre, heading)` and coins.
fn frame_of(
    f: FrameIdx,
    players: usize,
    fish: &[(usize, Point, f64)],
    coins: &[Point],
) -> FrameDetections {
    FrameDetections {
        frame: f,
        fish: fish
            .iter()
            .map(|&(k, p, theta)| FishDetection {
                pt_in_table: p,
                theta,
                player_scores: (0..players)
                    .map(|j| if j == k { 1.0 } else { 0.0 })
                    .collect(),
                confidence: 1.0,
                partly_hidden: false,
                exposure_share: None,
            })
            .collect(),
        coins: coins
            .iter()
            .map(|&p| CoinDetection {
                pt_in_table: p,
                radius_mm: Some(7.5),
                confidence: 1.0,
                streak: None,
                in_hole_of: None,
                rim_gap_in_view: false,
            })
            .collect(),
        ..Default::default()
    }
}

/// A frame in which the coin is seen only as a blur streak from `from` to `to`.
fn with_streak(mut d: FrameDetections, from: Point, to: Point) -> FrameDetections {
    d.coins.push(CoinDetection {
        pt_in_table: Point::from((from.coords + to.coords) / 2.0),
        radius_mm: Some(7.5),
        confidence: 1.0,
        streak: Some(Streak { from, to }),
        in_hole_of: None,
        rim_gap_in_view: false,
    });
    d
}

/// Tracker and shot cutter over the stream: the shots.
fn shots(fps: f64, dets: &[FrameDetections]) -> Vec<Shot> {
    shots_of(fps, 1, dets)
}

fn shots_of(fps: f64, players: usize, dets: &[FrameDetections]) -> Vec<Shot> {
    run(fps, players, dets, Tracker::new)
}

/// The same, for a clip that opens a match (no start state: R2 holds).
fn shots_at_opening(fps: f64, players: usize, dets: &[FrameDetections]) -> Vec<Shot> {
    run(fps, players, dets, Tracker::at_opening)
}

/// The tracker's config at `fps` for `players` on the 1000 × 700 table, default items.
fn table_config(fps: f64, players: usize) -> TrackerConfig {
    TrackerConfig::new(
        fps,
        players,
        Table::rectangle(1000.0, 700.0),
        &Items::default_set(),
    )
    .unwrap()
}

fn run(
    fps: f64,
    players: usize,
    dets: &[FrameDetections],
    tracker: fn(TrackerConfig) -> Tracker,
) -> Vec<Shot> {
    let cfg = table_config(fps, players);
    let cutter = ShotCutter::new(ShotConfig::from_tracker(&cfg));
    cut(cutter, tracker(cfg), dets)
}

/// Every shot `cutter` cuts from what `tracker` makes of the stream.
fn cut(mut cutter: ShotCutter, mut tracker: Tracker, dets: &[FrameDetections]) -> Vec<Shot> {
    let mut out: Vec<Shot> = dets
        .iter()
        .filter_map(|d| cutter.push(tracker.update(d.frame, d)))
        .collect();
    out.extend(cutter.finish());
    out
}

/// A tracker at `fps` for `players` on the 1000 × 700 table, started from `poses`
/// (a clip that does not open a match), and its config.
fn started(fps: f64, players: usize, poses: &[(ItemId, Pose)]) -> (TrackerConfig, Tracker) {
    let cfg = table_config(fps, players);
    let start = StartState {
        poses: poses.iter().copied().collect(),
        ..StartState::default()
    };
    (cfg.clone(), Tracker::with_start(cfg, &start))
}

/// Tracker and shot cutter over the stream of a clip that starts from `poses` (as
/// `analyse --start` runs them): the shots.
fn shots_started(
    fps: f64,
    players: usize,
    poses: &[(ItemId, Pose)],
    dets: &[FrameDetections],
) -> Vec<Shot> {
    let (cfg, tracker) = started(fps, players, poses);
    let cutter = ShotCutter::with_start(
        ShotConfig::from_tracker(&cfg),
        &poses.iter().copied().collect(),
    );
    cut(cutter, tracker, dets)
}

/// Where the coin of shot 0 left the table, if it did.
fn coin_exit(shots: &[Shot]) -> Option<Point> {
    shots
        .first()?
        .lost
        .iter()
        .find(|l| l.item == ItemId::coin(0))
        .map(|l| l.exit.point())
}

/// Checks that shot 0 of `dets` finds coin:0 lost, leaving the table within
/// `within_mm` of `truth`.
fn assert_coin_left_near(fps: f64, dets: &[FrameDetections], truth: Point, within_mm: f64) {
    let shots = shots(fps, dets);
    let exit =
        coin_exit(&shots).unwrap_or_else(|| panic!("{fps} fps: coin:0 not lost: {shots:#?}"));
    assert!(
        (exit - truth).norm() < within_mm,
        "{fps} fps: exit {exit:?}, truly {truth:?}; notes {:?}",
        shots[0].notes
    );
}

/// The first point where a slider from `p` at `v` leaves the 1000 × 700 table.
fn true_exit(p: Point, v: Vector) -> Point {
    let (mut p, mut v) = (p, v);
    while (0.0..=1000.0).contains(&p.x) && (0.0..=700.0).contains(&p.y) {
        (p, v) = advance(p, v, 1e-4, 2000.0);
        assert!(v.norm() > 0.0, "the slider stops on the table at {p:?}");
    }
    p
}

/// Each scenario at both frame rates: its times are in seconds.
const RATES: [f64; 2] = [30.0, 60.0];

/// The frames of a clip `secs` long, and the time of each.
fn frames(fps: f64, secs: f64) -> impl Iterator<Item = (FrameIdx, f64)> {
    (0..(secs * fps).round() as FrameIdx).map(move |f| (f, f as f64 / fps))
}

/// Where the hole of the fish flicked in the thrown-coin scenarios is at time `t`,
/// and how far it has turned: it rests at (300, 200), then from 0.3 s runs for
/// 11/30 s at 1500 mm/s along an arc of radius 300 mm about (300, 500).
fn arc_hole(t: f64) -> (Point, f64) {
    let centre = Point::new(300.0, 500.0);
    let (r, w) = (300.0, 1500.0 / 300.0);
    let a = w * (t - 0.3).clamp(0.0, 11.0 / 30.0);
    (centre + Vector::new(r * a.sin(), -r * a.cos()), a)
}

/// A fish with its coin in its hole rests at (300, 200), then (from 0.3 s) is
/// flicked along an arc (hole speed 1500 mm/s, radius 300 mm) for 0.37 s and
/// stops. 1/6 s in, its coin flies out along the arc's tangent at 3000 mm/s; it is
/// seen loose once, 1/30 s later, and then never (too fast for a rim). The coin
/// rode unseen in the hole until it left: its track must leave the hole from where
/// the hole was then, not from where the coin was last seen at rest.
#[test]
fn a_coin_thrown_out_of_a_moving_fish_follows_the_loose_sighting_off_the_table() {
    for fps in RATES {
        let hole = arc_hole;
        let t_out = 0.3 + 5.0 / 30.0;
        let (p0, a0) = hole(t_out);
        let v0 = Vector::new(a0.cos(), a0.sin()) * 3000.0;
        let coin_at = |t: f64| advance(p0, v0, t - t_out, 2000.0).0;
        let seen = ((t_out + 1.0 / 30.0) * fps).round() as FrameIdx;
        let dets: Vec<FrameDetections> = frames(fps, 2.0)
            .map(|(f, t)| {
                let (p, a) = hole(t);
                let coins: Vec<Point> = if t <= 0.3 {
                    vec![p]
                } else if f == seen {
                    vec![coin_at(t)]
                } else {
                    vec![]
                };
                frame(f, Some((p, a)), &coins)
            })
            .collect();
        assert_coin_left_near(fps, &dets, true_exit(p0, v0), 40.0);
    }
}

/// A fish carries its coin along y = 40, 40 mm from the near edge, and comes to
/// rest at x = 690, wholly seen, its hole empty: the coin was thrown out unseen on
/// the way (nothing loose is ever seen). It is lost over the near edge, not
/// riding in the empty hole; when it is put back into that hole before the shot's
/// rest window ends, that is a put-back, not where it lay at rest.
#[test]
fn a_coin_gone_unseen_from_the_hole_of_a_resting_fish_is_lost_not_kept_in_it() {
    for fps in RATES {
        let at = |t: f64| {
            let t = (t - 1.0 / 3.0).max(0.0);
            advance(Point::new(200.0, 40.0), Vector::new(1400.0, 0.0), t, 2000.0).0
        };
        let rests = 1.0 / 3.0 + 0.7;
        for put_back in [None, Some(rests + 0.43)] {
            let dets: Vec<FrameDetections> = frames(fps, 4.0)
                .map(|(f, t)| {
                    let p = at(t);
                    let back = put_back.is_some_and(|b| t >= b);
                    let coins = if t < 1.0 / 3.0 || back {
                        vec![p]
                    } else {
                        vec![]
                    };
                    frame(f, Some((p, std::f64::consts::FRAC_PI_2)), &coins)
                })
                .collect();
            let shots = shots(fps, &dets);
            let exit = coin_exit(&shots).unwrap_or_else(|| {
                panic!("{fps} fps, put back {put_back:?}: coin:0 not lost: {shots:#?}")
            });
            assert!(exit.y.abs() < 1e-6, "{fps} fps: exit {exit:?}");
            assert!(
                !shots[0].end.contains_key(&ItemId::coin(0)),
                "{fps} fps: {:?}",
                shots[0].end
            );
            // Where along the edge it crossed is a guess: flagged for review.
            let exit_call = shots[0]
                .decisions
                .iter()
                .find(|d| d.call == Call::Exit && d.item == ItemId::coin(0))
                .map(|d| d.evidence.confidence);
            assert!(
                exit_call.is_some_and(|c| c < DEFAULT_REVIEW_BELOW),
                "{fps} fps: exit call {exit_call:?}"
            );
        }
    }
}

/// A fish lies with its coin seen in its hole 400 mm from the near edge and is
/// flicked straight over that edge; the coin is not seen again, the fish is seen
/// beyond the edge. The coin is lost with it, but where it crossed is known only if
/// it stayed in the hole all the way: its exit is called from where the coin was
/// last seen, 400 mm back, and flagged for review (before: "0 mm from where it was
/// last seen", as sure as the loss; seed 531046's sweep-001 had such a coin cross
/// 420 mm from there).
#[test]
fn a_coin_carried_off_unseen_has_its_exit_called_from_where_it_was_last_seen() {
    for fps in RATES {
        let hole = |t: f64| {
            advance(
                Point::new(500.0, 400.0),
                Vector::new(0.0, -2500.0),
                (t - 0.3).max(0.0),
                2000.0,
            )
            .0
        };
        let dets: Vec<FrameDetections> = frames(fps, 2.0)
            .map(|(f, t)| {
                let p = hole(t);
                let coins = if t < 0.3 { vec![p] } else { vec![] };
                let fish = (p.y > -40.0).then_some((p, -std::f64::consts::FRAC_PI_2));
                frame(f, fish, &coins)
            })
            .collect();
        let shots = shots(fps, &dets);
        let lost: Vec<ItemId> = shots[0].lost.iter().map(|l| l.item).collect();
        assert!(lost.contains(&ItemId::coin(0)), "{fps} fps: lost {lost:?}");
        let exit = shots[0]
            .decisions
            .iter()
            .find(|d| d.call == Call::Exit && d.item == ItemId::coin(0))
            .map(|d| (d.evidence.confidence, d.evidence.why.clone()));
        assert!(
            exit.as_ref()
                .is_some_and(|(c, _)| *c < DEFAULT_REVIEW_BELOW),
            "{fps} fps: exit call {exit:?}"
        );
    }
}

/// A fish pushed slowly toward the near edge comes to rest with its hole 6 mm
/// over it (its body, and so its centre of mass, still on the table), a finger
/// left on its tail (partly hidden: its empty hole alone proves nothing). The coin
/// in the hole, unseen since the push, has its centre over the floor: it fell
/// through the hole where the hole crossed the edge.
#[test]
fn a_coin_in_a_hole_that_comes_to_hang_over_the_edge_falls_through_it() {
    for fps in RATES {
        // Slides 212 mm under friction: from 206 mm to 6 mm beyond the edge.
        let v0 = (2.0 * 2000.0 * 212.0f64).sqrt();
        let at = |t: f64| {
            let t = (t - 1.0 / 3.0).max(0.0);
            advance(Point::new(500.0, 206.0), Vector::new(0.0, -v0), t, 2000.0).0
        };
        assert!((at(5.0).y + 6.0).abs() < 1e-6);
        let dets: Vec<FrameDetections> = frames(fps, 2.0)
            .map(|(f, t)| {
                let p = at(t);
                let coins = if t < 1.0 / 3.0 { vec![p] } else { vec![] };
                let mut d = frame(f, Some((p, std::f64::consts::FRAC_PI_2)), &coins);
                d.fish[0].partly_hidden = t > 0.5;
                d
            })
            .collect();
        let shots = shots(fps, &dets);
        let exit =
            coin_exit(&shots).unwrap_or_else(|| panic!("{fps} fps: coin:0 not lost: {shots:#?}"));
        assert!(
            (exit - Point::new(500.0, 0.0)).norm() < 2.0,
            "{fps} fps: exit {exit:?}"
        );
        assert!(shots[0].lost.iter().all(|l| l.item != ItemId::fish(0)));
    }
}

/// Where player 0's fish slides at time `t` in [`coin_falls_beside_a_riding_one`].
fn riding_fish_at(t: f64) -> Point {
    let t = (t - 1.0 / 3.0).max(0.0);
    advance(Point::new(780.0, 60.0), Vector::new(900.0, 0.0), t, 2000.0).0
}

/// Player 1's coin, loose at (975, 60), is struck off the far edge and seen
/// dropping beyond it until 0.6 s, but for the times within `unseen`, after which
/// it is seen `turned` off its line, while player 0's fish slides toward that edge
/// with its coin riding unseen in its hole (a lost track, whose gate grows while it
/// is unseen): the shots.
fn coin_falls_beside_a_riding_one(fps: f64, unseen: (f64, f64), turned: Vector) -> Vec<Shot> {
    let loose_at = |t: f64| Point::new(975.0 + 600.0 * (t - 1.0 / 3.0).max(0.0), 60.0);
    let rests = 1.0 / 3.0 + 0.45;
    let dets: Vec<FrameDetections> = frames(fps, 2.3)
        .map(|(f, t)| {
            let p = riding_fish_at(t);
            let mut coins = Vec::new();
            if t < 1.0 / 3.0 || t > rests {
                coins.push(p);
            }
            if t < 0.6 && !(unseen.0..unseen.1).contains(&t) {
                coins.push(
                    loose_at(t)
                        + if t >= unseen.1 {
                            turned
                        } else {
                            Vector::zeros()
                        },
                );
            }
            frame_of(f, 2, &[(0, p, std::f64::consts::PI)], &coins)
        })
        .collect();
    shots_of(fps, 2, &dets)
}

/// That in the first shot of [`coin_falls_beside_a_riding_one`] only the falling
/// coin (coin:1) was lost, and the riding coin (coin:0) is on the table at rest.
fn assert_only_the_falling_coin_lost(shots: &[Shot], fps: f64) {
    let lost: Vec<ItemId> = shots[0].lost.iter().map(|l| l.item).collect();
    assert_eq!(lost, vec![ItemId::coin(1)], "{fps} fps: {:#?}", shots[0]);
    assert!(shots[0].end.contains_key(&ItemId::coin(0)), "{fps} fps");
}

/// [`coin_falls_beside_a_riding_one`], seen all the way. The sightings beyond the
/// edge are the falling coin's own: the riding coin does not take them and fall
/// instead; it is seen back in its hole when the fish rests.
#[test]
fn a_fallen_coin_keeps_its_sightings_beyond_the_edge_from_a_coin_riding_nearby() {
    for fps in RATES {
        let shots = coin_falls_beside_a_riding_one(fps, (0.0, 0.0), Vector::zeros());
        assert_only_the_falling_coin_lost(&shots, fps);
        let exit = shots[0].lost[0].exit.point();
        assert!(
            (exit - Point::new(1000.0, 60.0)).norm() < 3.0,
            "{fps} fps: exit {exit:?}"
        );
        // Had it taken a sighting beyond the edge, it would have fallen there and
        // been put back into its hole at rest: its rows show where it was seen.
        for r in shots[0].tracks.get(&ItemId::coin(0)).into_iter().flatten() {
            let d = (Point::new(r[1], r[2]) - riding_fish_at(r[0] / fps)).norm();
            assert!(
                d < 5.0,
                "{fps} fps: coin:0 seen {d:.0} mm from its hole: {r:?}"
            );
        }
    }
}

/// As the last, but the falling coin goes unseen for 0.05 s once beyond the edge
/// (blurred, or lost against the floor) before it is seen dropping again, 40 mm
/// on: at 60 frames/s that is three frames unseen. The sightings after the gap
/// are still its own, not the riding coin's, whose gate has grown meanwhile (seed
/// 777's sweep-010, 60 frames/s: a coin seen falling, unseen for three frames, and
/// its next sighting beyond the edge taken by a coin riding in a tag nearby, which
/// was called lost).
#[test]
fn a_fallen_coin_unseen_a_moment_keeps_its_sightings_beyond_the_edge() {
    for fps in RATES {
        let shots = coin_falls_beside_a_riding_one(
            fps,
            (0.4 + 0.5 / fps, 0.45 + 0.5 / fps),
            Vector::zeros(),
        );
        assert_only_the_falling_coin_lost(&shots, fps);
    }
}

/// As the last, but the coin goes unseen just before the edge, so that it is taken
/// off on a prediction, and is seen again beyond the edge 45 mm off the line it
/// was predicted on (turned by a blow unseen). Its speed and way were guesses:
/// the sightings of its fall are still its own, not the riding coin's (seed 777's
/// sweep-022: a coin struck at rest unseen, its fall seen 43 mm from where it was
/// predicted, went to a coin lost 79 mm away, which was called lost).
#[test]
fn a_coin_taken_off_on_a_prediction_keeps_its_fall_seen_off_the_predicted_line() {
    for fps in RATES {
        let shots = coin_falls_beside_a_riding_one(fps, (0.36, 0.43), Vector::new(0.0, 45.0));
        assert_only_the_falling_coin_lost(&shots, fps);
    }
}

/// As the first, but the coin flies out between two frames and is seen once,
/// 0.058 s later, only as a blur streak (shutter open half the frame): the jump
/// from the hole's last place points a little the wrong way (8 mm off at the edge
/// at 30 fps); the streak shows the way it went.
#[test]
fn a_streak_shows_which_way_a_coin_thrown_out_between_two_frames_went() {
    for fps in RATES {
        let hole = arc_hole;
        let t_out = 0.3 + 0.1417;
        let (p0, a0) = hole(t_out);
        let v0 = Vector::new(a0.cos(), a0.sin()) * 3000.0;
        let coin_at = |t: f64| advance(p0, v0, t - t_out, 2000.0).0;
        let seen = (0.5 * fps).round() as FrameIdx;
        let dets: Vec<FrameDetections> = frames(fps, 2.0)
            .map(|(f, t)| {
                let (p, a) = hole(t);
                let coins: Vec<Point> = if t <= 0.3 { vec![p] } else { vec![] };
                let d = frame(f, Some((p, a)), &coins);
                if f == seen {
                    with_streak(d, coin_at(t - 0.5 / fps), coin_at(t))
                } else {
                    d
                }
            })
            .collect();
        assert_coin_left_near(fps, &dets, true_exit(p0, v0), 3.0);
    }
}

/// A hand covers a fish at rest with its coin in the hole; under the hand the fish
/// is flicked away and the coin, unseen, is taken along as riding in the hole. The
/// fish slides 250 mm and rests; when the hand lifts, the coin is seen exactly where
/// it lay: it never left that spot (the fish slid out from around it). It is the
/// same coin, not a stranger, and nothing was lost.
#[test]
fn a_coin_seen_again_where_it_lay_after_its_fish_left_stayed_behind() {
    use super::Occluder;
    for fps in RATES {
        let rest = Point::new(500.0, 350.0);
        let v0 = (2.0 * 2000.0 * 250.0f64).sqrt();
        let at = |t: f64| {
            let t = (t - 0.4).max(0.0);
            advance(rest, Vector::new(v0, 0.0), t, 2000.0).0
        };
        let dets: Vec<FrameDetections> = frames(fps, 3.0)
            .map(|(f, t)| {
                let hand = (0.25..0.9).contains(&t);
                let coins = if hand { vec![] } else { vec![rest] };
                let mut d = frame(f, Some((at(t), 0.0)), &coins);
                if hand {
                    d.occluders.push(Occluder::Disc {
                        center: Point::new(470.0, 350.0),
                        radius: 45.0,
                    });
                }
                d
            })
            .collect();
        let shots = shots(fps, &dets);
        let shot = shots
            .first()
            .unwrap_or_else(|| panic!("{fps} fps: no shot"));
        assert!(shot.lost.is_empty(), "{fps} fps: lost {:?}", shot.lost);
        let coin = shot
            .end
            .get(&ItemId::coin(0))
            .unwrap_or_else(|| panic!("{fps} fps: coin:0 not at rest: {:?}", shot.notes));
        assert!(
            (coin.point() - rest).norm() < 2.0,
            "{fps} fps: coin:0 at {:?}; notes {:?}",
            coin.point(),
            shot.notes
        );
    }
}

/// A match opens (no start state) with two fish at rest, coin:0 seen in fish:0's
/// hole at (300, 400); fish:1 lies at (500, 100) and is flicked at 1.5 s straight off
/// the near edge. `more_coins(frame)` are the other coins seen in a frame. The items
/// lost over the clip.
fn lost_as_fish1_leaves_an_opening(
    fps: f64,
    more_coins: impl Fn(FrameIdx) -> Vec<Point>,
) -> Vec<ItemId> {
    let hole0 = Point::new(300.0, 400.0);
    let dets: Vec<FrameDetections> = frames(fps, 3.0)
        .map(|(f, t)| {
            let hole1 = advance(
                fish1_at_opening(),
                Vector::new(0.0, -1400.0),
                (t - 1.5).max(0.0),
                2000.0,
            )
            .0;
            let fish: Vec<_> = [(0, hole0, 0.0), (1, hole1, -std::f64::consts::FRAC_PI_2)]
                .into_iter()
                .filter(|(_, p, _)| p.y > -20.0)
                .collect();
            let coins: Vec<Point> = std::iter::once(hole0).chain(more_coins(f)).collect();
            frame_of(f, 2, &fish, &coins)
        })
        .collect();
    shots_at_opening(fps, 2, &dets)
        .iter()
        .flat_map(|s| s.lost.iter().map(|l| l.item))
        .collect()
}

/// Where fish:1 lies in [`lost_as_fish1_leaves_an_opening`] until it is flicked.
fn fish1_at_opening() -> Point {
    Point::new(500.0, 100.0)
}

/// In that opening the eye never makes out coin:1 in fish:1's hole. By R2 coin:1 lay
/// in that hole, so it left the table with its fish (both lost). When instead a coin
/// is seen loose elsewhere at the opening (not a match opened by R2), nothing is
/// placed in the empty hole, and fish:1 leaves alone.
#[test]
fn a_coin_never_seen_in_its_hole_at_a_matchs_opening_leaves_with_its_fish() {
    for fps in RATES {
        for loose in [None, Some(Point::new(700.0, 500.0))] {
            let lost = lost_as_fish1_leaves_an_opening(fps, |_| loose.into_iter().collect());
            assert!(lost.contains(&ItemId::fish(1)), "{fps} fps: lost {lost:?}");
            assert_eq!(
                lost.contains(&ItemId::coin(1)),
                loose.is_none(),
                "{fps} fps, loose {loose:?}: lost {lost:?}"
            );
        }
    }
}

/// As above, but the eye glimpses coin:1 in its hole for a single frame just as the
/// opening look ends (a hand coming, a flicker): too short to confirm it. R2 still
/// says the coin lies there, so it is that hole's coin, and it leaves with its fish.
/// Before, the glimpse filled the hole when the coins were counted, then was dropped
/// unconfirmed, and coin:1 was never on the table at all.
#[test]
fn a_coin_glimpsed_once_in_its_hole_at_a_matchs_opening_is_its_owners() {
    for fps in RATES {
        // Every fish is named once confirmed (`confirm_s`, from the first frame);
        // the opening look ends a second later, and the glimpse falls on the frame
        // before the count.
        let frames_of = |s: f64| (s * fps).round().max(1.0) as FrameIdx;
        let glimpse = frames_of(table_config(fps, 2).confirm_s) - 1 + frames_of(1.0) - 1;
        let lost = lost_as_fish1_leaves_an_opening(fps, |f| {
            if f == glimpse {
                vec![fish1_at_opening()]
            } else {
                vec![]
            }
        });
        assert!(
            lost.contains(&ItemId::fish(1)) && lost.contains(&ItemId::coin(1)),
            "{fps} fps: lost {lost:?}"
        );
    }
}

/// A coin carried unseen in a hole that has not moved since (here placed there by
/// R2 at a match's opening and never made out) is still there: a coin sighted 250 mm
/// away a second later (put back into another fish's hole), beyond a kick's reach in
/// a frame, is another coin, not this one having jumped.
#[test]
fn a_coin_unseen_in_a_hole_that_has_not_moved_takes_no_sighting_from_afar() {
    for fps in RATES {
        let (hole0, hole1) = (Point::new(300.0, 400.0), Point::new(500.0, 300.0));
        let cfg = table_config(fps, 2);
        let mut tracker = Tracker::at_opening(cfg);
        let elsewhere = Point::new(750.0, 300.0);
        let mut last = None;
        for (f, t) in frames(fps, 3.0) {
            let mut coins = vec![hole0];
            if t > 2.0 {
                coins.push(elsewhere);
            }
            let d = frame_of(f, 2, &[(0, hole0, 0.0), (1, hole1, 0.0)], &coins);
            last = Some(tracker.update(f, &d));
        }
        let last = last.unwrap();
        let coin1 = last
            .get(ItemId::coin(1))
            .unwrap_or_else(|| panic!("{fps} fps: coin:1 not placed by R2: {last:#?}"));
        assert!(
            (coin1.pose.point() - hole1).norm() < 1.0,
            "{fps} fps: coin:1 at {:?}, its hole at {hole1:?}",
            coin1.pose
        );
    }
}

/// A coin lies in the hole of a fish at rest near the near edge; a hand comes over
/// the coin (the fish stays seen where it lay) and the eye sights a coin-like
/// speck beyond the edge, 90 mm off. Nothing moving came near the coin and a hand
/// may not touch it (R4): it is only hidden, and it is not taken off the table
/// with that speck.
#[test]
fn a_coin_in_a_still_hole_under_a_hand_takes_no_sighting_beyond_the_edge() {
    use super::Occluder;
    for fps in RATES {
        let hole = Point::new(250.0, 30.0);
        let speck = Point::new(170.0, -12.0);
        let dets: Vec<FrameDetections> = frames(fps, 3.0)
            .map(|(f, t)| {
                let hand = (1.0..2.0).contains(&t);
                let mut coins = if hand { vec![] } else { vec![hole] };
                if (1.2..1.3).contains(&t) {
                    coins.push(speck);
                }
                let mut d = frame(f, Some((hole, 0.0)), &coins);
                if hand {
                    d.occluders.push(Occluder::Disc {
                        center: Point::new(230.0, 45.0),
                        radius: 40.0,
                    });
                }
                d
            })
            .collect();
        let cfg = table_config(fps, 1);
        let mut tracker = Tracker::new(cfg);
        let mut last = None;
        for d in &dets {
            last = Some(tracker.update(d.frame, d));
            let coin = last.as_ref().and_then(|s| s.get(ItemId::coin(0)));
            if let Some(c) = coin.filter(|_| d.frame > 0) {
                assert!(
                    c.state.on_table() && (c.pose.point() - hole).norm() < 5.0,
                    "{fps} fps, frame {}: coin:0 {c:?}",
                    d.frame
                );
            }
        }
        let last = last.unwrap();
        assert!(last.get(ItemId::coin(0)).is_some(), "{fps} fps: {last:#?}");
    }
}

/// A fish with its coin in its hole is flicked and stops dead a frame later (it
/// struck something); its coin is blurred away in the frame between, so it is carried
/// on at the fish's speed, one frame's travel past the hole. Another coin flies
/// unseen over the place where the fish stopped. The coin then seen in the stopped
/// fish's hole is the one it carried, not the flyer whose prediction lies nearer
/// (sweep-013: a coin seen in the hole of a fish just struck went to another coin
/// unseen for 14 frames; names rotated for the rest of the match).
#[test]
fn the_coin_seen_in_a_hole_just_stopped_is_the_one_it_carried() {
    use crate::model::Pose;
    use crate::record::StartState;
    for fps in RATES {
        let rest = Point::new(400.0, 300.0);
        let stop = rest + Vector::new(1200.0 / fps, 0.0);
        let hole1 = Point::new(700.0, 500.0);
        let k = (1.5 * fps) as FrameIdx;
        let flyer = |t: f64| Point::new(stop.x, stop.y - 300.0 * (1.5 - t));
        let flyer_start = flyer(0.8);
        let mut table_cfg = table_config(fps, 2);
        // Without friction the flyer's prediction runs straight over the stop.
        table_cfg.friction_decel_mm_s2 = 0.0;
        let start = StartState {
            poses: [
                (ItemId::fish(0), Pose::fish(rest.x, rest.y, 0.0)),
                (ItemId::coin(0), Pose::coin(rest.x, rest.y)),
                (ItemId::fish(1), Pose::fish(hole1.x, hole1.y, 0.0)),
                (ItemId::coin(1), Pose::coin(flyer_start.x, flyer_start.y)),
            ]
            .into(),
            ..StartState::default()
        };
        let mut tracker = Tracker::with_start(table_cfg, &start);
        for (f, t) in frames(fps, 1.5 + 2.0 / fps) {
            let fish0 = if f + 1 < k { rest } else { stop };
            let mut coins = vec![];
            if f + 1 != k {
                coins.push(fish0);
            }
            if t < 0.8 {
                coins.push(flyer_start);
            } else if t < 1.2 {
                coins.push(flyer(t));
            }
            let d = frame_of(f, 2, &[(0, fish0, 0.0), (1, hole1, 0.0)], &coins);
            let seen = tracker.update(f, &d);
            if f == k {
                let coin0 = seen.get(ItemId::coin(0));
                assert!(
                    coin0.is_some_and(|c| c.state == super::TrackState::Tracked
                        && (c.pose.point() - stop).norm() < 3.0),
                    "{fps} fps: coin:0 not seen in the stopped hole at {stop:?}: {coin0:?}"
                );
            }
        }
    }
}

/// A fish at rest by the near edge, its coin seen in its hole, tips over the edge
/// in one frame (seen beyond it, its coin unseen): the coin is taken off with it.
/// The frame after, the coin is seen where it lay: the tag slid off it as it fell,
/// and it is that coin, not another one carried unseen nearby in a moving fish's
/// hole whose gate has grown (sweep-013: the names of the two coins were swapped,
/// and each one's fall was scored as the other's).
#[test]
fn a_coin_seen_where_it_lay_as_its_fish_fell_is_that_coin() {
    for fps in RATES {
        let rest = Point::new(300.0, 12.0);
        let fell = Point::new(290.0, -30.0);
        let k = (1.0 * fps) as FrameIdx;
        // fish:1 runs by at 700 mm/s, its coin unseen in its hole from 0.8 s.
        let runner = |t: f64| Point::new(330.0 + 700.0 * (t - 0.8).max(0.0), 150.0);
        let cfg = table_config(fps, 2);
        let mut tracker = Tracker::at_opening(cfg);
        let mut last = None;
        for (f, t) in frames(fps, 1.5) {
            let mut fish = vec![(1, runner(t), 0.0)];
            let mut coins = vec![];
            if f < k {
                fish.push((0, rest, 0.0));
                coins.push(rest);
            } else if f == k {
                fish.push((0, fell, 0.0));
            } else {
                coins.push(rest);
            }
            if t < 0.8 {
                coins.push(runner(t));
            }
            let d = frame_of(f, 2, &fish, &coins);
            last = Some(tracker.update(f, &d));
        }
        let last = last.unwrap();
        let coin0 = last.get(ItemId::coin(0));
        assert!(
            coin0.is_some_and(|c| c.state.on_table() && (c.pose.point() - rest).norm() < 3.0),
            "{fps} fps: coin:0 not where it lay at {rest:?}: {coin0:?}"
        );
        let coin1 = last.get(ItemId::coin(1)).map(|c| c.pose.point());
        assert!(
            coin1.is_none_or(|p| (p - rest).norm() > 20.0),
            "{fps} fps: coin:1 took coin:0's place: {coin1:?}"
        );
    }
}

/// Two tags collide, each with its coin riding unseen in its hole: fish:1, flicked
/// at 1500 mm/s, stops against fish:0, whose coin stays in its hole as it is
/// knocked away; fish:1's coin is thrown out past fish:0 and over the far edge. The
/// thrown coin's first sighting lies nearer fish:0's hole than fish:1's, so coin:0's
/// track takes it; the coin then seen in fish:0's stopped hole can only be taken by
/// coin:1's. That hole's own coin is coin:0: from then on each track follows what
/// the other did, and coin:1 is the one lost (sweep-032 and sweep-033 of seed
/// 531046: the two coins' names crossed, and each one's loss was scored as the
/// other's). The frames between the jump and the exchange are told anew: the shot's
/// rows have coin:0 only in its hole and coin:1 on the thrown path (sweep 777-031:
/// coin:2 was recorded flying 14 frames along coin:1's path and back into its hole).
#[test]
fn two_coins_crossed_in_a_collision_are_named_back_by_the_hole_one_is_seen_in() {
    for fps in RATES {
        let dt = 1.0 / fps;
        let flick = 0.5;
        // fish:1 runs from x = 600 to 330 and stops there (contact).
        let fish1 = |t: f64| Point::new(600.0 - 1500.0 * (t - flick).clamp(0.0, 0.18), 300.0);
        let contact = flick + 0.18;
        // fish:0 is knocked from x = 250 to 150 in 0.1 s.
        let fish0 = |t: f64| Point::new(250.0 - 1000.0 * (t - contact).clamp(0.0, 0.1), 300.0);
        // coin:1 thrown from the contact toward the far edge, past fish:0.
        let flyer =
            |t: f64| Point::new(290.0, 300.0) + Vector::new(-1500.0, 2400.0) * (t - contact);
        let poses = [
            (ItemId::fish(0), Pose::fish(250.0, 300.0, 1.5)),
            (ItemId::coin(0), Pose::coin(250.0, 300.0)),
            (ItemId::fish(1), Pose::fish(600.0, 300.0, 1.5)),
            (ItemId::coin(1), Pose::coin(600.0, 300.0)),
        ];
        let (_, mut tracker) = started(fps, 2, &poses);
        let mut last = None;
        let mut dets = Vec::new();
        for (f, t) in frames(fps, 1.5) {
            let moving0 = t > contact - dt && t < contact + 0.1 + dt;
            let mut coins = vec![];
            if t < flick {
                coins.push(fish1(t));
            }
            if !moving0 {
                coins.push(fish0(t) + Vector::new(0.0, 2.0));
            }
            let p = flyer(t);
            if t > contact + dt && p.y < 700.0 {
                coins.push(p);
            }
            let d = frame_of(f, 2, &[(0, fish0(t), 1.5), (1, fish1(t), 1.5)], &coins);
            last = Some(tracker.update(f, &d));
            dets.push(d);
        }
        let last = last.unwrap();
        let coin0 = last.get(ItemId::coin(0));
        assert!(
            coin0
                .is_some_and(|c| c.state.on_table()
                    && (c.pose.point() - Point::new(150.0, 302.0)).norm() < 3.0),
            "{fps} fps: coin:0 not in its fish's hole: {coin0:?}"
        );
        let coin1 = last.get(ItemId::coin(1));
        assert!(
            coin1.is_some_and(|c| !c.state.on_table()),
            "{fps} fps: coin:1 not off the table: {coin1:?}"
        );
        let shots = shots_started(fps, 2, &poses, &dets);
        let rows = |id: ItemId| -> Vec<(f64, Point)> {
            shots
                .iter()
                .flat_map(|s| s.tracks.get(&id).into_iter().flatten())
                .map(|r| (r[0] / fps, Point::new(r[1], r[2])))
                .collect()
        };
        let astray: Vec<_> = rows(ItemId::coin(0))
            .into_iter()
            .filter(|(t, p)| (p - (fish0(*t) + Vector::new(0.0, 2.0))).norm() > 10.0)
            .collect();
        assert!(
            astray.is_empty(),
            "{fps} fps: coin:0 recorded out of its hole: {astray:?}"
        );
        let thrown = rows(ItemId::coin(1))
            .into_iter()
            .filter(|(t, p)| (p - flyer(*t)).norm() <= 10.0)
            .count();
        assert!(
            thrown >= 2,
            "{fps} fps: coin:1 recorded on the thrown path {thrown} times"
        );
    }
}

/// fish:1, flicked with its coin riding unseen in its hole, stops against fish:0,
/// which rests by the far edge with coin:0 in its hole. fish:0 is knocked over the
/// edge (seen beyond it), and coin:0, taken off with it by inference, was knocked
/// loose instead: it is seen on the table 25 mm from where it lay, 0.1 s
/// after the blow. That is coin:0, not coin:1 thrown 39 mm out of the stopped hole
/// it rides in (seed 531046's sweep-009 and 777's sweep-008: the sighting went to
/// the riding coin, and the two coins' losses were swapped).
#[test]
fn a_coin_knocked_loose_as_its_tag_goes_over_the_edge_is_not_taken_for_a_riding_coin() {
    for fps in RATES {
        let dt = 1.0 / fps;
        let flick = 0.5;
        let fish1 = |t: f64| Point::new(300.0, 300.0 - 1500.0 * (t - flick).clamp(0.0, 0.15));
        let contact = flick + 0.15;
        let fish0 = |t: f64| Point::new(300.0, 40.0 - 1000.0 * (t - contact).max(0.0));
        let loose = |t: f64| {
            Point::new(300.0, 40.0) + Vector::new(250.0, 50.0) * (t - contact).clamp(0.0, 0.2)
        };
        let (_, mut tracker) = started(
            fps,
            2,
            &[
                (ItemId::fish(0), Pose::fish(300.0, 40.0, 1.5)),
                (ItemId::coin(0), Pose::coin(300.0, 40.0)),
                (ItemId::fish(1), Pose::fish(300.0, 300.0, 1.5)),
                (ItemId::coin(1), Pose::coin(300.0, 300.0)),
            ],
        );
        let mut last = None;
        for (f, t) in frames(fps, 1.5) {
            let mut fish = vec![(1, fish1(t), 1.5)];
            if fish0(t).y > -60.0 {
                fish.push((0, fish0(t), 1.5));
            }
            let mut coins = vec![];
            if t < flick {
                coins.extend([fish0(t), fish1(t)]);
            } else if t < contact {
                coins.push(fish0(t));
            } else if t > contact + 0.1 - dt / 2.0 {
                coins.push(loose(t));
            }
            last = Some(tracker.update(f, &frame_of(f, 2, &fish, &coins)));
        }
        let last = last.unwrap();
        let rest = loose(1.5);
        let coin0 = last.get(ItemId::coin(0));
        assert!(
            coin0.is_some_and(|c| c.state.on_table() && (c.pose.point() - rest).norm() < 5.0),
            "{fps} fps: coin:0 not where it was knocked: {coin0:?}"
        );
        let coin1 = last.get(ItemId::coin(1));
        assert!(
            coin1.is_none_or(|c| (c.pose.point() - rest).norm() > 20.0),
            "{fps} fps: coin:1 took coin:0's place: {coin1:?}"
        );
    }
}

/// coin:1 fell off the table; fish:1 lies 55 mm from fish:0, whose coin rests in its
/// hole. A coin then appears in fish:1's hole (put back) in a look that misses
/// coin:0 for a few frames. That coin is coin:1 put back, not coin:0 jumping 55 mm
/// from a hole of its own that nothing struck (seed 777's sweep-010: the jump was
/// cut as a shot, with a false 1.1 and every later mover shifted).
#[test]
fn a_coin_put_back_into_a_hole_whose_own_coin_fell_is_that_coin_not_a_resting_neighbour() {
    for fps in RATES {
        let (hole0, hole1) = (Point::new(300.0, 300.0), Point::new(355.0, 300.0));
        let (_, mut tracker) = started(
            fps,
            2,
            &[
                (ItemId::fish(0), Pose::fish(hole0.x, hole0.y, 1.5)),
                (ItemId::coin(0), Pose::coin(hole0.x, hole0.y)),
                (ItemId::fish(1), Pose::fish(hole1.x, hole1.y, 1.5)),
                (ItemId::coin(1), Pose::coin(500.0, 690.0)),
            ],
        );
        let mut last = None;
        let put_back = 1.5;
        for (f, t) in frames(fps, 2.5) {
            let mut coins = vec![];
            // coin:0 unseen for a tenth of a second as the other coin appears.
            if !(put_back..put_back + 0.1).contains(&t) {
                coins.push(hole0);
            }
            // coin:1 slides over the near edge at 300 mm/s from 0.3 s.
            let falling = Point::new(500.0, 690.0 + 300.0 * (t - 0.3).max(0.0));
            if falling.y < 712.0 {
                coins.push(falling);
            }
            if t >= put_back {
                coins.push(hole1);
            }
            let mut d = frame_of(f, 2, &[(0, hole0, 1.5), (1, hole1, 1.5)], &coins);
            for c in &mut d.coins {
                c.in_hole_of = [hole0, hole1]
                    .iter()
                    .position(|h| (h - c.pt_in_table).norm() < 3.0);
            }
            last = Some(tracker.update(f, &d));
        }
        let last = last.unwrap();
        for (k, hole) in [(0, hole0), (1, hole1)] {
            let coin = last.get(ItemId::coin(k));
            assert!(
                coin.is_some_and(|c| c.state.on_table() && (c.pose.point() - hole).norm() < 3.0),
                "{fps} fps: coin:{k} not in its fish's hole: {coin:?}"
            );
        }
    }
}

/// Another renderer's clip at 1920x1080: three loose coins lying together are struck
/// at once while the blur and the hand hide them, and come back one frame after
/// another, each 55–80 mm on. The first back lay nearer to where the middle coin had
/// been than to its own place and took its name; the second took the name left. Named
/// together once all are back (the least total squared displacement), each coin is
/// its own.
#[test]
fn coins_struck_together_unseen_are_named_together_when_seen_again() {
    use crate::model::Pose;
    use crate::record::StartState;
    let cfg = table_config(30.0, 3);
    let lying = [
        Point::new(391.0, 524.0),
        Point::new(401.0, 536.0),
        Point::new(385.0, 542.0),
    ];
    let rest = [
        Point::new(463.0, 514.0),
        Point::new(460.0, 548.0),
        Point::new(456.0, 593.0),
    ];
    let tags = [
        (0, Point::new(898.0, 424.0), 0.0),
        (1, Point::new(760.0, 190.0), 0.0),
    ];
    let mut poses: std::collections::BTreeMap<ItemId, Pose> = tags
        .iter()
        .map(|&(k, p, a)| (ItemId::fish(k), Pose::fish(p.x, p.y, a)))
        .collect();
    poses.insert(ItemId::fish(2), Pose::fish(300.0, 515.0, 0.3));
    for (k, p) in lying.iter().enumerate() {
        poses.insert(ItemId::coin(k), Pose::coin(p.x, p.y));
    }
    let start = StartState {
        poses,
        ..StartState::default()
    };
    let mut tracker = Tracker::with_start(cfg, &start);
    let mut last = None;
    for f in 0..90u64 {
        // The striker slides in from frame 38 at 1100 mm/s and stops short.
        let run = (f.saturating_sub(37) as f64 * 1100.0 / 30.0).min(140.0);
        let striker = Point::new(300.0 + run * 0.954, 515.0 + run * 0.298);
        let coins: Vec<Point> = match f {
            0..=37 => lying.to_vec(),
            38 => vec![lying[0], lying[2]],
            39..=41 => vec![],
            42 => vec![Point::new(442.0, 513.0)],
            43 => vec![Point::new(453.0, 512.0), Point::new(453.0, 551.0)],
            44 => vec![
                Point::new(459.0, 511.0),
                Point::new(457.0, 551.0),
                Point::new(450.0, 585.0),
            ],
            _ => rest.to_vec(),
        };
        let mut fish = tags.to_vec();
        fish.push((2, striker, 0.3));
        last = Some(tracker.update(f, &frame_of(f, 3, &fish, &coins)));
    }
    let last = last.unwrap();
    for (k, p) in rest.iter().enumerate() {
        let coin = last.get(ItemId::coin(k));
        assert!(
            coin.is_some_and(|c| (c.pose.point() - p).norm() < 3.0),
            "coin:{k} is not the coin come to rest at {p}: {coin:?}"
        );
    }
}

/// A tag slides off the near edge; a moment later a sighting of its player's colour
/// shows at the far edge and stays there: a strip of that colour beyond the edge,
/// fitting a tag's outline 0.2 of 1 (seed 531046's sweep-017). It is no tag put back:
/// the tag stays lost where it went off. The same sighting fitting a tag (0.85), the
/// tag set down there, is the tag put back and tracked again.
#[test]
fn a_tag_gone_off_the_table_is_not_put_back_by_scenery_of_its_colour() {
    // Where a sighting of its colour lies `k` frames after it first shows, and how
    // well it fits a tag: scenery on the table, a tag set down there, or a tag seen
    // in its fall, sliding off the side edge, fitting well only once beyond it
    // (sweep-009: revived there as put back, and cut as a shot of its own).
    let scenery = |_: f64| (Point::new(300.0, 690.0), 0.2);
    let set_down = |_: f64| (Point::new(300.0, 690.0), 0.85);
    let falling = |k: f64| {
        let p = Point::new((40.0 - 70.0 * k).max(-100.0), 600.0);
        (p, if p.x > 0.0 { 0.3 } else { 0.85 })
    };
    type Sighting = dyn Fn(f64) -> (Point, f64);
    let cases: [(&str, &Sighting, bool); 3] = [
        ("scenery", &scenery, false),
        ("set down", &set_down, true),
        ("falling", &falling, false),
    ];
    for fps in RATES {
        for (case, sighting, put_back) in cases {
            let n = (4.0 * fps) as FrameIdx;
            let struck = fps as FrameIdx;
            let start = Point::new(500.0, 300.0);
            let v = Vector::new(0.0, -1200.0);
            let mut dets = Vec::new();
            let mut gone = None;
            for f in 0..n {
                let t = (f as f64 - struck as f64).max(0.0) / fps;
                let (p, _) = advance(start, v, t, 2000.0);
                let mut d = if p.y > 20.0 && gone.is_none() {
                    frame(f, Some((p, -std::f64::consts::FRAC_PI_2)), &[])
                } else {
                    gone.get_or_insert(f);
                    frame(f, None, &[])
                };
                let shows = gone.map(|g| g + (fps / 3.0) as FrameIdx);
                if let Some(from) = shows.filter(|&from| f >= from) {
                    let (pt, fit) = sighting((f - from) as f64);
                    d.fish.push(FishDetection {
                        pt_in_table: pt,
                        theta: 0.0,
                        player_scores: vec![0.5_f64.max(fit)],
                        confidence: fit,
                        partly_hidden: false,
                        exposure_share: None,
                    });
                }
                dets.push(d);
            }
            let shots = shots(fps, &dets);
            let lost = shots
                .first()
                .and_then(|s| s.lost.iter().find(|l| l.item == ItemId::fish(0)))
                .unwrap_or_else(|| panic!("{fps} fps, {case}: not lost: {shots:#?}"));
            assert!(
                (lost.exit.point() - Point::new(500.0, 0.0)).norm() < 30.0,
                "{fps} fps, {case}: exit {:?}",
                lost.exit
            );
            // Whether the tracker ever took the tag for put back on the table.
            let cfg = table_config(fps, 1);
            let mut tracker = Tracker::new(cfg);
            let revived = dets.iter().any(|d| {
                tracker.update(d.frame, d).events.iter().any(
                    |e| matches!(e, TrackEvent::Revived { item, .. } if *item == ItemId::fish(0)),
                )
            });
            assert_eq!(revived, put_back, "{fps} fps, {case}");
        }
    }
}

/// As the last, but coin:0 lies lost somewhere near, unseen since the start (a coin
/// thrown out of its hole unseen and never found, whose gate has grown): the coin
/// that appears in fish:1's hole is still coin:1 put back (seed 531046's sweep-008:
/// the lost coin took it, and was then counted in the wrong hole for three shots).
#[test]
fn a_coin_put_back_into_a_hole_whose_own_coin_fell_is_that_coin_not_one_lost_nearby() {
    for fps in RATES {
        let (hole0, hole1) = (Point::new(300.0, 300.0), Point::new(355.0, 300.0));
        let (_, mut tracker) = started(
            fps,
            2,
            &[
                (ItemId::fish(0), Pose::fish(hole0.x, hole0.y, 1.5)),
                (ItemId::coin(0), Pose::coin(330.0, 380.0)),
                (ItemId::fish(1), Pose::fish(hole1.x, hole1.y, 1.5)),
                (ItemId::coin(1), Pose::coin(500.0, 690.0)),
            ],
        );
        let mut last = None;
        let put_back = 1.5;
        for (f, t) in frames(fps, 2.5) {
            let mut coins = vec![];
            let falling = Point::new(500.0, 690.0 + 300.0 * (t - 0.3).max(0.0));
            if falling.y < 712.0 {
                coins.push(falling);
            }
            if t >= put_back {
                coins.push(hole1);
            }
            let mut d = frame_of(f, 2, &[(0, hole0, 1.5), (1, hole1, 1.5)], &coins);
            for c in &mut d.coins {
                c.in_hole_of = ((hole1 - c.pt_in_table).norm() < 3.0).then_some(1);
            }
            last = Some(tracker.update(f, &d));
        }
        let last = last.unwrap();
        let coin = last.get(ItemId::coin(1));
        assert!(
            coin.is_some_and(|c| c.state.on_table() && (c.pose.point() - hole1).norm() < 3.0),
            "{fps} fps: coin:1 not in its fish's hole: {coin:?}"
        );
    }
}

/// A tag lies with its coin in its hole 40 mm from the near edge and is flicked
/// straight away from it; the coin rides unseen in the hole. One frame shows a coin
/// 52 mm behind where the coin lay, 12 mm beyond the near edge (scenery, or a
/// glint). A coin thrown from a hole goes on the way the hole went: that sighting
/// is not the riding coin's, which is seen in the hole again once the tag rests
/// (seed 777's sweep-015: taken for the coin, it was called off the table).
#[test]
fn a_coin_riding_in_a_flicked_tag_is_not_seen_behind_where_it_lay() {
    for fps in RATES {
        let start = Point::new(500.0, 40.0);
        let hole = |t: f64| advance(start, Vector::new(0.0, 1500.0), (t - 0.3).max(0.0), 2000.0).0;
        let rests = 0.3 + 1500.0 / 2000.0;
        let glint = ((0.3 + 0.2) * fps).round() as FrameIdx;
        let dets: Vec<FrameDetections> = frames(fps, 2.0)
            .map(|(f, t)| {
                let p = hole(t);
                let mut coins = vec![];
                if t < 0.3 || t > rests + 0.1 {
                    coins.push(p);
                }
                if f == glint {
                    coins.push(Point::new(485.0, -12.0));
                }
                frame(f, Some((p, std::f64::consts::FRAC_PI_2)), &coins)
            })
            .collect();
        let shots = shots(fps, &dets);
        assert!(
            shots[0].lost.is_empty(),
            "{fps} fps: lost {:?}",
            shots[0].lost
        );
        let end = shots[0].end.get(&ItemId::coin(0)).map(|p| p.point());
        assert!(
            end.is_some_and(|p| (p - hole(2.0)).norm() < 3.0),
            "{fps} fps: coin:0 ends at {end:?}, its hole at {:?}",
            hole(2.0)
        );
    }
}

/// Player 1's tag lies at rest by the far edge, its coin seen in its hole and then
/// no more.
/// Player 0's tag, its coin riding unseen, is flicked at it and stops; player 1's
/// tag is knocked over the edge and falls, and its coin is seen dropping beyond the
/// edge. Those sightings are the falling coin's, which fell as fast as its tag did:
/// the riding coin does not take them (seed 531046's sweep-008: the coin that fell
/// from rest was given no speed, its sightings were out of its reach, and the
/// mover's coin took them and was called off the table).
#[test]
fn a_coin_knocked_off_in_its_tag_keeps_its_fall_from_a_coin_riding_nearby() {
    for fps in RATES {
        let hit = 0.6;
        let mover = |t: f64| {
            advance(
                Point::new(700.0, 300.0),
                Vector::new(0.0, 1200.0),
                (t - 0.3).clamp(0.0, hit - 0.3),
                0.0,
            )
            .0
        };
        let struck = |t: f64| Point::new(700.0, 672.0 + 700.0 * (t - hit).max(0.0));
        let dets: Vec<FrameDetections> = frames(fps, 2.0)
            .map(|(f, t)| {
                let (p0, p1) = (mover(t), struck(t));
                let mut fish = vec![(0, p0, std::f64::consts::FRAC_PI_2)];
                if p1.y < 700.0 {
                    fish.push((1, p1, std::f64::consts::FRAC_PI_2));
                }
                let mut coins = vec![];
                if t < 0.3 || t > hit + 0.1 {
                    coins.push(p0);
                }
                if t < 0.3 || (p1.y >= 700.0 && p1.y < 760.0) {
                    coins.push(p1);
                }
                frame_of(f, 2, &fish, &coins)
            })
            .collect();
        let shots = shots_of(fps, 2, &dets);
        let lost: Vec<ItemId> = shots[0].lost.iter().map(|l| l.item).collect();
        assert!(
            !lost.contains(&ItemId::coin(0)) && lost.contains(&ItemId::coin(1)),
            "{fps} fps: lost {lost:?}"
        );
        // The fallen coin followed its own fall beyond the edge.
        let cfg = table_config(fps, 2);
        let mut tracker = Tracker::new(cfg);
        let last = dets.iter().map(|d| tracker.update(d.frame, d)).last();
        let fallen = last.as_ref().and_then(|l| l.get(ItemId::coin(1)));
        assert!(
            fallen.is_some_and(|c| !c.state.on_table() && c.pose.point().y > 730.0),
            "{fps} fps: coin:1 did not follow its fall: {fallen:?}"
        );
    }
}

/// fish:1 slid off the far edge. It is put back 58 mm beside fish:0, which lies at
/// rest and is missed for a tenth of a second as fish:1 appears. The tag of
/// player 1's colour is fish:1 put back, not fish:0 jumping 58 mm with nothing to
/// strike it (seed 777's sweep-027: the jump was cut as a shot of its own).
#[test]
fn a_tag_put_back_beside_a_missed_tag_is_the_tag_put_back() {
    let up = std::f64::consts::FRAC_PI_2;
    for fps in RATES {
        let (rest0, back1) = (Point::new(682.0, 16.0), Point::new(740.0, 16.0));
        let (_, mut tracker) = started(
            fps,
            2,
            &[
                (ItemId::fish(0), Pose::fish(rest0.x, rest0.y, up)),
                (ItemId::fish(1), Pose::fish(500.0, 600.0, up)),
            ],
        );
        let put_back = 1.5;
        let mut jumped = None;
        let mut last = None;
        for (f, t) in frames(fps, 2.5) {
            let mut fish = vec![];
            if !(put_back..put_back + 0.1).contains(&t) {
                fish.push((0, rest0, up));
            }
            let sliding = Point::new(500.0, 600.0 + 600.0 * (t - 0.3).max(0.0));
            if sliding.y < 720.0 {
                fish.push((1, sliding, up));
            }
            if t >= put_back {
                fish.push((1, back1, up));
            }
            let out = tracker.update(f, &frame_of(f, 2, &fish, &[]));
            if let Some(p) = out.get(ItemId::fish(0)).map(|i| i.pose.point()) {
                if (p - rest0).norm() > 5.0 {
                    jumped.get_or_insert((f, p));
                }
            }
            last = Some(out);
        }
        assert_eq!(jumped, None, "{fps} fps: fish:0 moved");
        let fish1 = last.as_ref().and_then(|l| l.get(ItemId::fish(1)));
        assert!(
            fish1.is_some_and(|i| i.state.on_table() && (i.pose.point() - back1).norm() < 3.0),
            "{fps} fps: fish:1 not put back: {fish1:?}"
        );
    }
}

/// fish:1 is flicked toward the near edge and goes from view short of it (blurred
/// past recognition): the shot judges it lost. Put back 80 mm from there, it is
/// read half hidden for a tenth of a second (the change where it appeared reads as a
/// hand over part of it), turned about, its hole 51 mm off, then whole where it lies.
/// Those readings are of the placing: one shot, not two (seed 531046's sweep-028
/// drawn anew, frames 58 to 61; sweep-013's put-back, read 9 mm and 20 degrees off,
/// made a shot too).
#[test]
fn a_tag_put_back_read_half_hidden_until_it_lies_placed_makes_no_shot() {
    let up = std::f64::consts::FRAC_PI_2;
    for fps in RATES {
        let (rest0, back1) = (Point::new(200.0, 300.0), Point::new(580.0, 16.0));
        let put_back = 1.5;
        let dets: Vec<FrameDetections> = frames(fps, 2.5)
            .map(|(f, t)| {
                let mut fish = vec![(0, rest0, up)];
                let (sliding, _) = advance(
                    Point::new(500.0, 300.0),
                    Vector::new(0.0, -1200.0),
                    (t - 0.3).max(0.0),
                    2000.0,
                );
                if sliding.y > 60.0 {
                    fish.push((1, sliding, up));
                }
                let placing = (put_back..put_back + 0.1).contains(&t);
                if placing {
                    // Read turned about, its hole at the other end of its length.
                    fish.push((1, back1 + Vector::new(0.0, 51.0), -up));
                } else if t >= put_back {
                    fish.push((1, back1, up));
                }
                let mut d = frame_of(f, 2, &fish, &[]);
                if placing {
                    let last = d.fish.len() - 1;
                    d.fish[last].partly_hidden = true;
                    d.fish[last].confidence = 0.41;
                }
                d
            })
            .collect();
        let poses = [
            (ItemId::fish(0), Pose::fish(rest0.x, rest0.y, up)),
            (ItemId::fish(1), Pose::fish(500.0, 300.0, up)),
        ];
        let shots = shots_started(fps, 2, &poses, &dets);
        let cut: Vec<_> = shots
            .iter()
            .map(|s| {
                (
                    s.flick_frame,
                    s.first_moved,
                    s.lost.iter().map(|l| l.item).collect::<Vec<_>>(),
                )
            })
            .collect();
        assert!(
            shots.len() == 1 && shots[0].lost.iter().any(|l| l.item == ItemId::fish(1)),
            "{fps} fps: shots (flick, first moved, lost): {cut:?}"
        );
    }
}

/// coin:0 lies loose and is lost from sight; a tenth of a second later a coin is put into
/// fish:0's hole 600 mm away, too far for coin:0 to have slid there unseen, and is
/// named coin:0 put back. A coin placed by hand did not slide from where coin:0
/// lay: no shot (seed 777's sweep-022: such a put-back was cut as a shot whose
/// mover was the coin).
#[test]
fn a_coin_put_back_far_from_where_it_was_last_seen_makes_no_shot() {
    let up = std::f64::consts::FRAC_PI_2;
    for fps in RATES {
        let (loose, hole) = (Point::new(200.0, 300.0), Point::new(800.0, 300.0));
        let (cfg, tracker) = started(
            fps,
            1,
            &[
                (ItemId::fish(0), Pose::fish(hole.x, hole.y, up)),
                (ItemId::coin(0), Pose::coin(loose.x, loose.y)),
            ],
        );
        let dets: Vec<FrameDetections> = frames(fps, 2.5)
            .map(|(f, t)| {
                let coins = match t {
                    t if t < 1.0 => vec![loose],
                    t if t < 1.1 => vec![],
                    _ => vec![hole],
                };
                let mut d = frame(f, Some((hole, up)), &coins);
                for c in &mut d.coins {
                    c.in_hole_of = ((c.pt_in_table - hole).norm() < 3.0).then_some(0);
                }
                d
            })
            .collect();
        let shots = cut(
            ShotCutter::new(ShotConfig::from_tracker(&cfg)),
            tracker,
            &dets,
        );
        assert!(shots.is_empty(), "{fps} fps: {shots:#?}");
    }
}

/// Player 0's tag is flicked toward the near edge and stops short; a loose coin it
/// sent off slides on unseen and is seen dropping beyond the edge two frames after
/// everything on the table lay still. A second flick follows. The coin's fall is
/// the first shot's loss, seen late: the second shot is player 0's flick, and loses
/// nothing (seed 777's sweep-020: the fall made the next shot the coin's own, a
/// move too many, and its loss was counted twice).
#[test]
fn a_fall_seen_just_after_the_rest_is_that_shots_loss_not_the_next_shots_start() {
    let up = std::f64::consts::FRAC_PI_2;
    for fps in RATES {
        let tag = |t: f64| {
            let first = advance(
                Point::new(500.0, 300.0),
                Vector::new(0.0, -775.0),
                (t - 0.3).clamp(0.0, 1.0),
                2000.0,
            )
            .0;
            advance(first, Vector::new(600.0, 0.0), (t - 2.0).max(0.0), 2000.0).0
        };
        let coin = |t: f64| Point::new(300.0, 60.0 - 400.0 * (t - 0.35).max(0.0));
        let rest = 0.3 + 775.0 / 2000.0;
        let dets: Vec<FrameDetections> = frames(fps, 3.5)
            .map(|(f, t)| {
                let fish = [(0, tag(t), up), (1, Point::new(200.0, 500.0), up)];
                let mut coins = vec![];
                let p = coin(t);
                if t < 0.4 || (p.y < -5.0 && t > rest + 1.5 / fps && t < rest + 3.5 / fps) {
                    coins.push(Point::new(
                        p.x,
                        if t < 0.4 {
                            p.y
                        } else {
                            -10.0 - 15.0 * (t - rest) * fps
                        },
                    ));
                }
                frame_of(f, 2, &fish, &coins)
            })
            .collect();
        let poses = [
            (ItemId::fish(0), Pose::fish(500.0, 300.0, up)),
            (ItemId::fish(1), Pose::fish(200.0, 500.0, up)),
            (ItemId::coin(1), Pose::coin(300.0, 60.0)),
        ];
        let shots = shots_started(fps, 2, &poses, &dets);
        let moved: Vec<_> = shots
            .iter()
            .map(|s| {
                (
                    s.first_moved,
                    s.lost.iter().map(|l| l.item).collect::<Vec<_>>(),
                )
            })
            .collect();
        assert!(
            shots.len() == 2
                && shots[1].first_moved == Some(ItemId::fish(0))
                && shots[1].lost.is_empty(),
            "{fps} fps: shots (first moved, lost): {moved:?}"
        );
    }
}

/// Player 0's tag, its coin riding unseen, is flicked along the near edge past
/// player 2's tag, which lies at rest with its coin in its hole; between two looks it
/// turns over the edge, and it is next seen falling beyond it, its coin's fall seen
/// beside it, off every run its hole was seen on. That fall is the riding coin's:
/// a tag seen falling takes its coin with it. The coin at rest in its hole, 70 mm
/// away, does not take it, nor does the riding coin take the resting one's sighting.
/// The detections are those of seed 777's sweep-037, frames 488 to 503, where that
/// swap happened.
#[test]
fn a_tag_seen_falling_takes_its_riding_coin_not_a_coin_at_rest_nearby() {
    let fps = 30.0;
    let up = std::f64::consts::FRAC_PI_2;
    let tag1 = (1, Point::new(673.0, 16.0), up);
    // Frame by frame: player 0's tag (unseen: None), player 2's tag, and the coins seen
    // but the one in player 1's hole, which is seen throughout.
    type Seen = (
        Option<(f64, f64, f64)>,
        (f64, f64, f64),
        &'static [(f64, f64)],
    );
    let rows: [Seen; 16] = [
        (
            Some((388.0, 16.0, 1.55)),
            (526.0, 52.0, 0.43),
            &[(388.0, 17.0), (527.0, 53.0)],
        ),
        (
            Some((388.0, 16.0, 1.58)),
            (526.0, 52.0, 0.43),
            &[(388.0, 17.0), (527.0, 53.0)],
        ),
        (
            Some((388.0, 15.0, 1.58)),
            (526.0, 52.0, 0.43),
            &[(388.0, 17.0), (527.0, 53.0)],
        ),
        (
            Some((388.0, 17.0, 1.58)),
            (526.0, 52.0, 0.43),
            &[(388.0, 17.0), (527.0, 53.0)],
        ),
        (
            Some((388.0, 17.0, 1.57)),
            (526.0, 52.0, 0.43),
            &[(527.0, 53.0)],
        ),
        (
            Some((388.0, 16.0, 1.58)),
            (526.0, 52.0, 0.43),
            &[(527.0, 53.0)],
        ),
        (
            Some((388.0, 16.0, 1.58)),
            (526.0, 52.0, 0.43),
            &[(527.0, 53.0)],
        ),
        (
            Some((388.0, 16.0, 1.55)),
            (526.0, 52.0, 0.43),
            &[(527.0, 53.0)],
        ),
        (
            Some((414.0, 30.0, 0.14)),
            (526.0, 52.0, 0.43),
            &[(526.0, 53.0)],
        ),
        (Some((484.0, 38.0, -1.57)), (526.0, 52.0, 0.43), &[]),
        (None, (526.0, 54.0, 0.59), &[(527.0, 55.0)]),
        (
            Some((488.0, -45.0, 1.07)),
            (527.0, 53.0, 0.81),
            &[(527.0, 54.0), (500.0, -11.0)],
        ),
        (None, (528.0, 53.0, 0.95), &[(527.0, 54.0), (496.0, -29.0)]),
        (None, (528.0, 53.0, 0.97), &[(528.0, 54.0)]),
        (None, (528.0, 53.0, 0.97), &[(527.0, 54.0)]),
        (None, (528.0, 53.0, 0.96), &[(527.0, 54.0)]),
    ];
    let dets: Vec<FrameDetections> = (0..60)
        .map(|f: FrameIdx| {
            let (tag0, tag2, coins) = rows[(f as usize).min(rows.len() - 1)];
            let mut fish = vec![tag1, (2, Point::new(tag2.0, tag2.1), tag2.2)];
            fish.extend(tag0.map(|(x, y, a)| (0, Point::new(x, y), a)));
            let mut coins: Vec<Point> = coins.iter().map(|&(x, y)| Point::new(x, y)).collect();
            coins.push(Point::new(674.0, 16.0));
            frame_of(f, 3, &fish, &coins)
        })
        .collect();
    let poses = [
        (ItemId::fish(0), Pose::fish(388.2, 16.0, up)),
        (ItemId::coin(0), Pose::coin(388.2, 16.0)),
        (ItemId::fish(1), Pose::fish(673.6, 16.0, up)),
        (ItemId::coin(1), Pose::coin(673.6, 16.0)),
        (ItemId::fish(2), Pose::fish(525.7, 51.8, 0.45)),
        (ItemId::coin(2), Pose::coin(526.8, 53.9)),
    ];
    let shots = shots_started(fps, 3, &poses, &dets);
    let lost: Vec<ItemId> = shots
        .iter()
        .flat_map(|s| s.lost.iter().map(|l| l.item))
        .collect();
    assert!(
        lost.contains(&ItemId::coin(0)) && !lost.contains(&ItemId::coin(2)),
        "lost {lost:?}"
    );
}

/// A circle whose rim went unseen over a quarter of its round where nothing could
/// hide it (a grain, a seam: `rim_gap_in_view`) starts no track, however long it
/// stays; seen whole, the same circle is a coin (of unknown owner here). A coin
/// carried off in its tag was revived by such a circle 36 mm from where it had lain
/// (seed 531046's sweep-009, frame 410).
#[test]
fn a_circle_with_its_rim_missing_in_plain_view_starts_no_track() {
    let fps = 30.0;
    let hole = Point::new(500.0, 350.0);
    let circle = Point::new(300.0, 500.0);
    for gap in [true, false] {
        let (_, mut tracker) = started(
            fps,
            1,
            &[
                (ItemId::fish(0), Pose::fish(hole.x, hole.y, 0.0)),
                (ItemId::coin(0), Pose::coin(hole.x, hole.y)),
            ],
        );
        let mut tracked_there = false;
        for f in 0..(2.0 * fps) as FrameIdx {
            let mut d = frame(f, Some((hole, 0.0)), &[hole, circle]);
            d.coins[1].rim_gap_in_view = gap;
            let tf = tracker.update(f, &d);
            tracked_there |= tf.items.iter().any(|t| {
                t.kind == crate::model::ItemKind::Coin
                    && t.state == super::TrackState::Tracked
                    && (t.pose.point() - circle).norm() < 1.0
            });
        }
        assert_eq!(tracked_there, !gap, "rim gap in view: {gap}");
    }
}
