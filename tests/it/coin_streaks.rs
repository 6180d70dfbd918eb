//! Coins too fast to show a rim, through the simulator: a fish flicked into a coin
//! sends it across the table at 2-2.5 m/s; every frame is rendered (motion blur over
//! the shutter time), rectified and run through the detector, and each streak it
//! reports is checked against the truth's path of the coin during that frame's
//! exposure. Small images, one short shot, no hand.
#![cfg(feature = "opencv")]

use fishtrack::calibration::TableCalibration;
use fishtrack::detect::{Detector, DetectorConfig, TopView};
use fishtrack::geometry::Point;
use fishtrack::model::ItemId;
use fishtrack::sim::{simulate, Scenario, SimOptions};
use fishtrack::vision::render::Renderer;
use fishtrack::vision::topview::TopViews;
use opencv::prelude::*;

#[test]
fn a_coin_flicked_fast_is_seen_as_streaks_along_its_true_path() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/streaks/coin-flicked-fast.json"
    );
    let scenario = Scenario::resolve(path).expect("scenario");
    let opts = SimOptions {
        seed: 1,
        size: [960, 540],
        ..SimOptions::default()
    };
    let truth = simulate(&scenario, &opts).expect("simulate");
    let fps = truth.video.fps;
    let shutter = scenario.render.shutter;
    let cal = TableCalibration::from_file(truth.table.clone(), "truth").expect("calibration");
    let views = TopViews::new(&cal, 1.0, 40.0).expect("top views");
    let colours: Vec<[u8; 3]> = truth
        .game
        .players
        .iter()
        .map(|p| p.rgb().expect("colour"))
        .collect();
    let mut detector = Detector::new(
        &truth.game.items,
        &colours,
        cal.table.clone(),
        DetectorConfig {
            coin_streaks: true,
            ..DetectorConfig::default()
        },
    );
    let mut renderer = Renderer::new(&truth, &scenario.render, truth.seed).expect("renderer");
    let flick = truth.shots[0].flick_frame as usize;
    let coin = ItemId::coin(1);
    let radius = truth.game.items.coin.radius;
    // Frame 0 (everything at rest: the coins' look is learned), then the shot.
    let frames: Vec<usize> = std::iter::once(0)
        .chain(flick.saturating_sub(2)..(flick + 14).min(truth.frames.len()))
        .collect();
    let (mut fast_frames, mut matched, mut errors) = (0, 0, Vec::new());
    for &k in &frames {
        let cur = &truth.frames[k];
        let prev = k.checked_sub(1).map(|p| &truth.frames[p]);
        let image = renderer.render_frame(prev, cur, fps).expect("render");
        let top = views.whole(&image).expect("rectify");
        let seen = detector.detect(&TopView {
            grid: views.grid(),
            rgb: top.data_bytes().expect("bytes"),
            bgr: true,
        });
        // Where the flicked coin was while the shutter was open.
        let exposure = prev.and_then(|p| {
            let (a, b) = (p.items.get(&coin)?, cur.items.get(&coin)?);
            let at = |u: f64| Point::new(a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u);
            let on = |p: Point| cal.table.signed_distance(p) > radius;
            let (from, to) = (at(1.0 - shutter), at(1.0));
            (on(from) && on(to)).then_some((from, to))
        });
        let fast = exposure.filter(|(a, b)| (b - a).norm() * fps / shutter > 1500.0);
        if fast.is_some() {
            fast_frames += 1;
        }
        for s in seen.coins.iter().filter_map(|c| c.streak) {
            // Every streak is this coin's (nothing else moves fast but the fish that
            // carries the other coin in its hole), at its true place.
            let (a, b) =
                exposure.unwrap_or_else(|| panic!("frame {k}: a streak {s:?} with no coin moving"));
            let err = ((s.from - a).norm().max((s.to - b).norm()))
                .min((s.from - b).norm().max((s.to - a).norm()));
            assert!(
                err < 5.0,
                "frame {k}: streak {s:?} is {err:.1} mm off the coin's path {a} -> {b}"
            );
            if fast.is_some() {
                matched += 1;
                errors.push(err);
            }
        }
    }
    eprintln!("fast frames {fast_frames}, streaks on them {matched}, end errors {errors:.1?}");
    assert!(
        fast_frames >= 5,
        "the shot sends the coin fast: {fast_frames} frames"
    );
    assert!(
        matched * 4 >= fast_frames * 3,
        "only {matched} of {fast_frames} fast frames show a streak"
    );
}
