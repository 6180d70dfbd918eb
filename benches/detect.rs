//! Detection speed on a top view of a whole table (1 mm per pixel, 1080 x 780 px):
//! two tags, three coins, a wood texture.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fishtrack::config::Items;
use fishtrack::detect::{Detector, DetectorConfig, TopGrid, TopView};
use fishtrack::geometry::{FishFootprint, Point, Table};
use fishtrack::model::Pose;

fn scene(grid: &TopGrid, items: &Items) -> Vec<u8> {
    let fp = FishFootprint::new(items);
    let fish = [
        (fp.placed(&Pose::fish(300.0, 300.0, 0.4)), [200u8, 30, 40]),
        (fp.placed(&Pose::fish(700.0, 400.0, 2.0)), [30, 60, 200]),
    ];
    let coins = [
        Point::new(300.0, 300.0),
        Point::new(500.0, 100.0),
        Point::new(800.0, 600.0),
    ];
    let mut out = vec![0u8; grid.width * grid.height * 3];
    for v in 0..grid.height {
        for u in 0..grid.width {
            let p = grid.table_from_px(u as f64, v as f64);
            let grain = 12.0 * (p.y * 0.35 + (p.x * 0.05).sin() * 3.0).sin();
            let mut c = [170.0 + grain, 120.0 + grain * 0.8, 75.0 + grain * 0.5];
            if coins.iter().any(|q| (p - q).norm() < items.coin.radius) {
                c = [200.0, 140.0, 90.0];
            }
            for (f, col) in &fish {
                if f.covers(p) {
                    c = [col[0] as f64, col[1] as f64, col[2] as f64];
                }
            }
            for k in 0..3 {
                out[(v * grid.width + u) * 3 + k] = c[k] as u8;
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let items = Items::default_set();
    let table = Table::rectangle(1000.0, 700.0);
    let grid = TopGrid::covering(&table, 1.0, 40.0);
    let rgb = scene(&grid, &items);
    let mut det = Detector::new(
        &items,
        &[[200, 30, 40], [30, 60, 200]],
        table,
        DetectorConfig::default(),
    );
    let mut g = c.benchmark_group("detect");
    g.throughput(Throughput::Elements(1));
    g.bench_function("table_1mm_per_px", |b| {
        b.iter(|| {
            det.detect(&TopView {
                grid,
                rgb: &rgb,
                bgr: false,
            })
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
