//! Tracker and shot-cutter throughput: 8 players (16 items) on the table, every
//! coin sliding and bouncing, one second of detections (30 frames) per iteration;
//! and the optimal assignment on a 32 × 32 cost matrix. The tracker must keep up
//! with a live camera: target well under 1 ms per frame (measured: ~1.35 ms per
//! 30 frames, i.e. ~45 µs a frame; assign 32 × 32 ~0.65 ms).

use criterion::{criterion_group, criterion_main, Criterion};
use fishtrack::config::Items;
use fishtrack::geometry::{Point, Table};
use fishtrack::shots::{ShotConfig, ShotCutter};
use fishtrack::track::{
    assign, CoinDetection, FishDetection, FrameDetections, Tracker, TrackerConfig,
};
use nalgebra::DMatrix;
use std::hint::black_box;

const PLAYERS: usize = 8;

/// Fish resting in two rows; coins crossing the table on straight lines.
fn frames(n: u64) -> Vec<FrameDetections> {
    (0..n)
        .map(|f| {
            let t = f as f64 / 30.0;
            let fish = (0..PLAYERS)
                .map(|k| {
                    let mut scores = vec![0.1; PLAYERS];
                    scores[k] = 0.9;
                    FishDetection {
                        pt_in_table: Point::new(
                            100.0 + 110.0 * k as f64,
                            if k % 2 == 0 { 120.0 } else { 580.0 },
                        ),
                        theta: 0.0,
                        player_scores: scores,
                        confidence: 0.9,
                        partly_hidden: false,
                        exposure_share: None,
                    }
                })
                .collect();
            let coins = (0..PLAYERS)
                .map(|k| CoinDetection {
                    pt_in_table: Point::new(
                        100.0 + 110.0 * k as f64,
                        250.0 + 40.0 * k as f64 * (t * 2.0).sin().abs(),
                    ),
                    radius_mm: Some(7.5),
                    confidence: 0.9,
                    streak: None,
                    in_hole_of: None,
                    rim_gap_in_view: false,
                })
                .collect();
            FrameDetections {
                frame: f,
                fish,
                coins,
                ..Default::default()
            }
        })
        .collect()
}

fn bench_tracker(c: &mut Criterion) {
    let items = Items::default_set();
    let cfg = TrackerConfig::new(30.0, PLAYERS, Table::rectangle(1000.0, 700.0), &items)
        .expect("valid config");
    let dets = frames(30);
    c.bench_function("track+shots: 30 frames, 16 items", |b| {
        b.iter(|| {
            let mut tracker = Tracker::new(cfg.clone());
            let mut cutter = ShotCutter::new(ShotConfig::from_tracker(&cfg));
            let mut shots = 0;
            for d in &dets {
                let tf = tracker.update(d.frame, d);
                shots += cutter.push(tf).is_some() as usize;
            }
            black_box(shots)
        })
    });
}

fn bench_assign(c: &mut Criterion) {
    // A deterministic, awkward matrix (no dominant diagonal).
    let m = DMatrix::from_fn(32, 32, |i, j| {
        ((i * 37 + j * 101) % 97) as f64 + ((i as f64) - (j as f64)).abs()
    });
    c.bench_function("assign 32x32", |b| {
        b.iter(|| black_box(assign(black_box(&m), 60.0)))
    });
}

criterion_group!(benches, bench_tracker, bench_assign);
criterion_main!(benches);
