//! Amend-and-re-score benchmark (issue 17): one referee's amendment to a 100-shot
//! record (4 players, 25 moves each, built by `amend::synthetic_record`) is checked,
//! applied, and every shot judged again by the rules; and its undo. On a quiet record
//! and on a busy one (a fish knocked off every fourth shot, so each of those shots
//! leaves a put-back search). Target: under 50 ms.
//!
//! `cargo bench --bench amend`

use criterion::{criterion_group, criterion_main, Criterion};
use fishtrack::amend::{self, Change, Request};
use fishtrack::geometry::Table;
use fishtrack::model::ItemId;
use std::hint::black_box;

const WHEN: &str = "2026-12-02T12:00:00Z";

fn req(shot: usize, change: Change) -> Request {
    Request {
        shot,
        change,
        why: "bench".into(),
    }
}

fn bench(c: &mut Criterion) {
    let game = amend::synthetic_game(4, 25);
    let table = Table::rectangle(1000.0, 700.0);
    let quiet = amend::synthetic_record(&game, &table, 100).expect("a record");
    // Every fourth shot its mover knocks the next player's fish off.
    let losses: Vec<Request> = (0..100)
        .step_by(4)
        .map(|k| {
            req(
                k,
                Change::Lost {
                    item: ItemId::fish((k + 1) % 4),
                },
            )
        })
        .collect();
    let busy = amend::amend(&game, &table, &quiet, &losses, WHEN)
        .expect("the losses fit")
        .record;
    let one = [req(
        1,
        Change::Lost {
            item: ItemId::coin(0),
        },
    )];
    let amended = amend::amend(&game, &table, &busy, &one, WHEN)
        .expect("fits")
        .record;
    let last = amend::next_number(&amended) - 1;

    let mut group = c.benchmark_group("amend_100_shots");
    group.bench_function("lost_coin_shot_1_quiet", |b| {
        b.iter(|| amend::amend(&game, &table, black_box(&quiet), &one, WHEN))
    });
    group.bench_function("lost_coin_shot_1_busy", |b| {
        b.iter(|| amend::amend(&game, &table, black_box(&busy), &one, WHEN))
    });
    group.bench_function("mover_shot_1_busy", |b| {
        let m = [req(1, Change::Mover { player: 0 })];
        b.iter(|| amend::amend(&game, &table, black_box(&busy), &m, WHEN))
    });
    group.bench_function("undo_last_busy", |b| {
        b.iter(|| amend::undo(&game, &table, black_box(&amended), last))
    });
    group.bench_function("undo_first_of_26_busy", |b| {
        b.iter(|| amend::undo(&game, &table, black_box(&amended), 1))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
