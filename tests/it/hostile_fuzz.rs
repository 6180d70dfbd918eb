//! Mutation fuzzing on the stable toolchain (issue 16 item 5): every parser
//! (record, state, game, items, camera, table, scenario, suite) fed inputs mutated
//! from the bundled samples — bytes flipped, numbers replaced by huge, NaN-like,
//! negative or overflowing values, keys dropped, values of another type, array
//! entries duplicated — and what a parser accepts is passed on to the stage that
//! uses it (the rules engine for a record, the detector for a game's or an items
//! file's tag, the maps of a camera or a table, the start poses of a scenario). The
//! rules engine also gets arbitrary shots and the detector arbitrary outlines and
//! images. Each case must end without a panic, within [`CASE_LIMIT`], in a typed
//! error or a valid result (an abort would end the test binary, so fails too).
//!
//! A short pass (`SHORT_CASES` a target) runs with the other tests; `make fuzz`
//! runs each target for `FUZZ_SECS` seconds instead, appending its counts to the
//! file `FUZZ_OUT` names. The mutations come from a seeded generator: a failure
//! prints the target, the case number and the seed to rerun it (`FUZZ_SEED`).

use fishtrack::calibration::{CameraIntrinsics, TableCalibration};
use fishtrack::config::{load_checked, load_items, load_json, Game, Items, Player};
use fishtrack::detect::{Detector, DetectorConfig, TopGrid, TopView};
use fishtrack::eval::Suite;
use fishtrack::geometry::Table;
use fishtrack::model::{ItemId, Pose};
use fishtrack::record::{LostItem, Record, Shot, StartState};
use fishtrack::sim::Scenario;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest one case may take: the slowest accepted inputs (a record rescored,
/// a detector run) take milliseconds; a hang is what this catches.
const CASE_LIMIT: Duration = Duration::from_secs(10);
/// Cases per target in the short pass.
const SHORT_CASES: usize = 150;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn seed_text(rel: &str) -> String {
    std::fs::read_to_string(repo(rel)).unwrap_or_else(|e| panic!("seed {rel}: {e}"))
}

/// What one target's run came to.
#[derive(Debug, Default)]
struct Counts {
    cases: usize,
    accepted: usize,
    refused: usize,
    panics: usize,
    hangs: usize,
    slowest: Duration,
}

/// How long a target runs: `FUZZ_SECS` seconds, else [`SHORT_CASES`] cases.
enum Budget {
    Cases(usize),
    Secs(f64),
}

fn budget() -> Budget {
    match std::env::var("FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        Some(s) if s > 0.0 => Budget::Secs(s),
        _ => Budget::Cases(SHORT_CASES),
    }
}

fn base_seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
}

/// Outcome of a case: whether the input was accepted by its parser.
type Check = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// Runs `check` on mutated `seeds` (written to `file_name` in a fresh folder) until
/// the budget is spent; panics with the counts on a panic or a hang.
fn fuzz(target: &str, seeds: &[String], file_name: &str, check: Check) -> Counts {
    fuzz_with(
        target,
        &budget(),
        |rng| {
            let k = rng.random_range(0..seeds.len());
            mutate(rng, &seeds[k])
        },
        file_name,
        check,
    )
}

fn fuzz_with(
    target: &str,
    budget: &Budget,
    mut make: impl FnMut(&mut ChaCha8Rng) -> Vec<u8>,
    file_name: &str,
    check: Check,
) -> Counts {
    let dir = tempfile::tempdir().expect("temp dir");
    let seed = base_seed() ^ fxhash(target);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = Counts::default();
    let began = Instant::now();
    loop {
        let more = match budget {
            Budget::Cases(n) => counts.cases < *n,
            Budget::Secs(s) => began.elapsed().as_secs_f64() < *s,
        };
        if !more {
            break;
        }
        let case_dir = dir.path().join(format!("{}", counts.cases % 4));
        std::fs::create_dir_all(&case_dir).expect("case dir");
        let path = case_dir.join(file_name);
        std::fs::write(&path, make(&mut rng)).expect("write case");
        let (tx, rx) = std::sync::mpsc::channel();
        let check = check.clone();
        let p = path.clone();
        let t0 = Instant::now();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&p)));
            let _ = tx.send(r);
        });
        counts.cases += 1;
        match rx.recv_timeout(CASE_LIMIT) {
            Ok(Ok(true)) => counts.accepted += 1,
            Ok(Ok(false)) => counts.refused += 1,
            Ok(Err(_)) => counts.panics += 1,
            Err(_) => counts.hangs += 1,
        }
        counts.slowest = counts.slowest.max(t0.elapsed());
        if counts.panics + counts.hangs > 0 {
            let kept = dir.keep().join("failing");
            let _ = std::fs::copy(&path, &kept);
            report(target, &counts);
            panic!(
                "fuzz {target}: case {} (FUZZ_SEED={}) panicked or hung; the input is kept in {}",
                counts.cases - 1,
                base_seed(),
                kept.display()
            );
        }
    }
    report(target, &counts);
    counts
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

fn report(target: &str, c: &Counts) {
    let line = format!(
        "fuzz {target}: {} cases, {} accepted, {} refused, {} panics, {} hangs, slowest {:.0} ms",
        c.cases,
        c.accepted,
        c.refused,
        c.panics,
        c.hangs,
        c.slowest.as_secs_f64() * 1000.0
    );
    println!("{line}");
    if let Ok(out) = std::env::var("FUZZ_OUT") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Hostile numbers: huge, tiny, negative, out of every integer type, not JSON
/// numbers at all (NaN, Infinity: serde_json refuses them, as it must).
const NUMBERS: &[&str] = &[
    "1e308",
    "-1e308",
    "1e155",
    "1e18",
    "-1",
    "0",
    "-0",
    "NaN",
    "Infinity",
    "1e400",
    "5e-324",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "-2147483649",
    "3.5",
    "99999999999",
    "53000",
    "1e6",
    "0.0001",
    "7",
];

/// One to three mutations of `text`.
fn mutate(rng: &mut ChaCha8Rng, text: &str) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..=3) {
        bytes = match rng.random_range(0..6) {
            0 => flip(rng, bytes),
            1 | 2 => replace_number(rng, bytes),
            3 => structural(rng, bytes, drop_key),
            4 => structural(rng, bytes, duplicate_entry),
            _ => structural(rng, bytes, swap_type),
        };
    }
    bytes
}

fn flip(rng: &mut ChaCha8Rng, mut b: Vec<u8>) -> Vec<u8> {
    if b.is_empty() {
        return b;
    }
    for _ in 0..rng.random_range(1..=4) {
        let i = rng.random_range(0..b.len());
        b[i] = if rng.random_bool(0.5) {
            b[i] ^ (1 << rng.random_range(0..8))
        } else {
            rng.random()
        };
    }
    b
}

fn replace_number(rng: &mut ChaCha8Rng, b: Vec<u8>) -> Vec<u8> {
    // Number tokens: a digit run with its sign, point and exponent.
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphabetic() && b[i - 1] != b':')
        {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b".eE+-".contains(&b[j])) {
                j += 1;
            }
            spans.push((start, j));
            i = j;
        } else {
            i += 1;
        }
    }
    if spans.is_empty() {
        return b;
    }
    let (s, e) = spans[rng.random_range(0..spans.len())];
    let n = NUMBERS[rng.random_range(0..NUMBERS.len())];
    [&b[..s], n.as_bytes(), &b[e..]].concat()
}

/// Applies `op` to a random place of the parsed JSON (text that does not parse is
/// left as it is).
fn structural(rng: &mut ChaCha8Rng, b: Vec<u8>, op: fn(&mut ChaCha8Rng, &mut Value)) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<Value>(&b) else {
        return b;
    };
    let target = pick(rng, &mut v);
    op(rng, target);
    serde_json::to_vec(&v).unwrap_or(b)
}

/// A random object or array inside `v` (walks down a random path).
fn pick<'a>(rng: &mut ChaCha8Rng, v: &'a mut Value) -> &'a mut Value {
    let depth = rng.random_range(0..6);
    let mut here = v;
    for _ in 0..depth {
        let n = match &*here {
            Value::Object(o) => o.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if n == 0 {
            break;
        }
        let k = rng.random_range(0..n);
        let is_container = match &*here {
            Value::Object(o) => o
                .values()
                .nth(k)
                .is_some_and(|c| c.is_object() || c.is_array()),
            Value::Array(a) => a[k].is_object() || a[k].is_array(),
            _ => false,
        };
        if !is_container {
            break;
        }
        here = match here {
            Value::Object(o) => o.values_mut().nth(k).expect("k < len"),
            Value::Array(a) => &mut a[k],
            _ => unreachable!("checked a container"),
        };
    }
    here
}

fn drop_key(rng: &mut ChaCha8Rng, v: &mut Value) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            let k = o
                .keys()
                .nth(rng.random_range(0..o.len()))
                .cloned()
                .expect("k < len");
            o.remove(&k);
        }
        Value::Array(a) if !a.is_empty() => {
            a.remove(rng.random_range(0..a.len()));
        }
        _ => {}
    }
}

fn duplicate_entry(rng: &mut ChaCha8Rng, v: &mut Value) {
    if let Value::Array(a) = v {
        if !a.is_empty() && a.len() < 10_000 {
            let e = a[rng.random_range(0..a.len())].clone();
            a.insert(rng.random_range(0..=a.len()), e);
        }
    }
}

fn other_type(rng: &mut ChaCha8Rng) -> Value {
    match rng.random_range(0..6) {
        0 => Value::Null,
        1 => Value::Bool(true),
        2 => Value::String("fish:0".into()),
        3 => Value::Array(vec![]),
        4 => Value::Object(Default::default()),
        _ => serde_json::json!(-1),
    }
}

fn swap_type(rng: &mut ChaCha8Rng, v: &mut Value) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            let n = o.len();
            let k = o
                .keys()
                .nth(rng.random_range(0..n))
                .cloned()
                .expect("k < len");
            o.insert(k, other_type(rng));
        }
        Value::Array(a) if !a.is_empty() => {
            let n = a.len();
            a[rng.random_range(0..n)] = other_type(rng);
        }
        _ => {}
    }
}

/// Two players, the bundled tag.
fn game(players: usize) -> Game {
    let colours = [
        "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
    ];
    let players = (0..players.clamp(1, colours.len()))
        .map(|i| Player {
            name: format!("P{i}"),
            color: colours[i].into(),
        })
        .collect();
    Game::new(players, 3, Items::default_set())
}

/// The rules engine on an accepted record: its own game and table if it has them.
fn rescore(record: &Record) {
    let game = record
        .game
        .clone()
        .unwrap_or_else(|| game(record.players.len().max(2)));
    let table = record
        .table_mm
        .as_deref()
        .and_then(|c| Table::from_corners(c).ok())
        .unwrap_or_else(|| Table::rectangle(1000.0, 700.0));
    let _ = fishtrack::rules::rescore(&game, &table, record);
}

/// The detector with these items on a small table, over a picture made by `paint`.
fn detect(items: &Items, players: &[[u8; 3]], paint: &mut dyn FnMut(usize, &mut [u8])) {
    let table = Table::rectangle(300.0, 200.0);
    let grid = TopGrid::covering(&table, 2.0, 20.0);
    let mut rgb = vec![0u8; grid.width * grid.height * 3];
    paint(grid.width, &mut rgb);
    let mut detector = Detector::new(items, players, table, DetectorConfig::default());
    let view = TopView {
        grid,
        rgb: &rgb,
        bgr: false,
    };
    let _ = detector.detect(&view);
}

/// A table-brown picture with a patch of the first player's colour.
fn plain(width: usize, rgb: &mut [u8]) {
    for (i, px) in rgb.chunks_mut(3).enumerate() {
        let (x, y) = (i % width, i / width);
        let patch = (60..100).contains(&x) && (50..70).contains(&y);
        px.copy_from_slice(if patch {
            &[214, 39, 40]
        } else {
            &[150, 110, 70]
        });
    }
}

#[test]
fn fuzz_records_then_the_rules() {
    let seeds = [
        seed_text("samples/demo/record.json"),
        seed_text("tests/data/replay/record.json"),
    ];
    let c = fuzz(
        "record",
        &seeds,
        "record.json",
        Arc::new(|p| match Record::load(p) {
            Ok(r) => {
                rescore(&r);
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_states() {
    let record: Value = serde_json::from_str(&seed_text("samples/demo/record.json")).unwrap();
    let last = record["shots"]
        .as_array()
        .and_then(|s| s.last())
        .cloned()
        .unwrap_or_default();
    let state = serde_json::json!({
        "poses": last["end"], "next_player": 1, "scores": record["scores"],
    });
    let c = fuzz(
        "state",
        &[serde_json::to_string_pretty(&state).unwrap()],
        "state.json",
        Arc::new(|p| StartState::load(p).is_ok()),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_games_then_the_detector() {
    let mut inline: Value = serde_json::from_str(&seed_text("calibration/game.json")).unwrap();
    inline["items"] = serde_json::from_str(&seed_text("calibration/items.json")).unwrap();
    let seeds = [seed_text("calibration/game.json"), inline.to_string()];
    let c = fuzz(
        "game",
        &seeds,
        "game.json",
        Arc::new(|p| match Game::load(p) {
            Ok(g) => {
                let rgb: Vec<[u8; 3]> = g.players.iter().filter_map(|p| p.rgb()).collect();
                detect(&g.items, &rgb, &mut plain);
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_items_then_the_detector() {
    let c = fuzz(
        "items",
        &[seed_text("calibration/items.json")],
        "items.json",
        Arc::new(|p| match load_items(p) {
            Ok(items) => {
                detect(&items, &[[214, 39, 40], [31, 119, 180]], &mut plain);
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_cameras() {
    let seeds = [
        seed_text("calibration/camera.json"),
        seed_text("samples/demo/camera.json"),
    ];
    let c = fuzz(
        "camera",
        &seeds,
        "camera.json",
        Arc::new(|p| match CameraIntrinsics::load(p) {
            Ok(cam) => {
                let [w, h] = cam.image_size;
                let px = nalgebra::Point2::new(f64::from(w) / 3.0, f64::from(h) / 2.0);
                let _ = cam.distort_pixel(cam.undistort_pixel(px));
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_tables() {
    let seeds = [
        seed_text("calibration/table.json"),
        seed_text("samples/demo/table.json"),
    ];
    let c = fuzz(
        "table",
        &seeds,
        "table.json",
        Arc::new(|p| match TableCalibration::load(p) {
            Ok(t) => {
                let mm = t.table_from_pixel(nalgebra::Point2::new(640.0, 360.0));
                let _ = t.pixel_from_table(mm);
                let _ = t.camera_position_mm();
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_scenarios() {
    let seeds: Vec<String> = ["coin-cluster", "gentle", "lost-coin", "other-tags"]
        .iter()
        .map(|n| seed_text(&format!("eval/scenarios/{n}.json")))
        .collect();
    let c = fuzz(
        "scenario",
        &seeds,
        "scenario.json",
        Arc::new(|p| match Scenario::resolve(&p.to_string_lossy()) {
            Ok(s) => {
                if let Ok(table) = s.table() {
                    let _ = s.start_poses(&table, &s.items());
                }
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

#[test]
fn fuzz_suites() {
    let c = fuzz(
        "suite",
        &[seed_text("eval/suite.json")],
        "suite.json",
        Arc::new(|p| match load_json::<Suite>(p) {
            Ok(s) => s.validate().is_ok(),
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

/// Arbitrary shots, within the limits and past them, through the record's checks
/// and then the rules engine.
#[test]
fn fuzz_the_rules_on_arbitrary_shots() {
    let c = fuzz_with(
        "rules",
        &budget(),
        |rng| {
            let players = rng.random_range(1..=4);
            let coord = |rng: &mut ChaCha8Rng| -> f64 {
                match rng.random_range(0..10) {
                    0 => [1e308, -1e18, 1e155, -5.0][rng.random_range(0..4)],
                    _ => rng.random_range(-100.0..1100.0),
                }
            };
            let id = |rng: &mut ChaCha8Rng| {
                let owner = rng.random_range(0..players + 1);
                if rng.random_bool(0.5) {
                    ItemId::fish(owner)
                } else {
                    ItemId::coin(owner)
                }
            };
            let shots = (0..rng.random_range(0..8))
                .map(|i| {
                    let mut s = Shot {
                        index: if rng.random_bool(0.9) { i } else { 0 },
                        player: rng.random_range(0..players + 1),
                        flick_frame: 10 * i as u64,
                        rest_frame: 10 * i as u64 + rng.random_range(0..20),
                        ..Shot::default()
                    };
                    for _ in 0..rng.random_range(0..2 * players + 2) {
                        let item = id(rng);
                        let theta = item.is_fish().then(|| rng.random_range(-7.0..7.0));
                        let pose = Pose {
                            x: coord(rng),
                            y: coord(rng),
                            theta,
                        };
                        s.start.insert(item, pose);
                        if rng.random_bool(0.7) {
                            s.end.insert(
                                item,
                                Pose {
                                    x: coord(rng),
                                    ..pose
                                },
                            );
                        } else {
                            s.lost.push(LostItem {
                                item,
                                frame: s.flick_frame + 1,
                                exit: Pose::coin(coord(rng), coord(rng)),
                            });
                        }
                    }
                    if rng.random_bool(0.3) {
                        s.coins_in_holes.insert(id(rng), id(rng));
                    }
                    s
                })
                .collect();
            let mut g = game(players);
            g.moves_per_player = rng.random_range(1..4);
            let record = Record {
                version: fishtrack::record::RECORD_VERSION,
                video: Default::default(),
                players: g.players.iter().map(|p| p.name.clone()).collect(),
                shots,
                scores: vec![],
                game: Some(g),
                table_mm: Some(vec![
                    [0.0, 0.0],
                    [1000.0, 0.0],
                    [1000.0, 700.0],
                    [0.0, 700.0],
                ]),
            };
            serde_json::to_vec(&record).expect("a record serialises")
        },
        "record.json",
        Arc::new(|p| match Record::load(p) {
            Ok(r) => {
                rescore(&r);
                true
            }
            Err(_) => false,
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

/// Arbitrary outlines (random polygons, within the limits and past them) and
/// arbitrary pictures (noise, stripes, blocks of the players' colours).
#[test]
fn fuzz_the_detector_on_arbitrary_outlines_and_images() {
    let c = fuzz_with(
        "detector",
        &budget(),
        |rng| {
            let mut items = Items::default_set();
            let n = rng.random_range(3..40);
            let reach = [30.0f64, 75.0, 200.0, 600.0, 53_000.0][rng.random_range(0..5)];
            items.fish.outline = (0..n)
                .map(|k| {
                    let a = std::f64::consts::TAU * k as f64 / n as f64;
                    let r = rng.random_range(12.0..reach.max(13.0));
                    [r * a.cos() + rng.random_range(0.0..r / 2.0), r * a.sin()]
                })
                .collect();
            let mut text = serde_json::to_vec(&items).expect("items serialise");
            text.push(b'\n');
            text.extend(rng.random::<u64>().to_string().bytes());
            text
        },
        "items.txt",
        Arc::new(|p| {
            let text = std::fs::read_to_string(p).expect("case");
            let (json, noise) = text.rsplit_once('\n').expect("two lines");
            let items: Items = serde_json::from_str(json).expect("items parse");
            if items.validate().is_err() {
                return false;
            }
            let mut rng = ChaCha8Rng::seed_from_u64(noise.parse().unwrap_or(0));
            let kind = rng.random_range(0..3);
            detect(&items, &[[214, 39, 40], [31, 119, 180]], &mut |w, rgb| {
                for (i, px) in rgb.chunks_mut(3).enumerate() {
                    let v: [u8; 3] = match kind {
                        0 => rng.random(),
                        1 => {
                            let on = (i % w / 7 + i / w / 5) % 2 == 0;
                            if on {
                                [214, 39, 40]
                            } else {
                                [31, 119, 180]
                            }
                        }
                        _ => {
                            let on = (i % w / 40 + i / w / 30) % 3 == 0;
                            if on {
                                [214, 39, 40]
                            } else {
                                [150, 110, 70]
                            }
                        }
                    };
                    px.copy_from_slice(&v);
                }
            });
            true
        }),
    );
    assert!(c.accepted > 0 && c.refused > 0, "{c:?}");
}

/// The key-suggestion check itself on every sample: a sample loads as it is.
#[test]
fn every_sample_loads_with_the_checks() {
    for rel in ["calibration/game.json", "calibration/items.json"] {
        let p = repo(rel);
        let v: Result<Value, _> = load_checked(&p);
        assert!(v.is_ok(), "{rel}: {v:?}");
    }
    assert!(Game::load(&repo("calibration/game.json")).is_ok());
    assert!(CameraIntrinsics::load(&repo("calibration/camera.json")).is_ok());
    assert!(TableCalibration::load(&repo("calibration/table.json")).is_ok());
    assert!(TableCalibration::load(&repo("samples/demo/table.json")).is_ok());
    let r = Record::load(&repo("samples/demo/record.json"));
    assert!(r.is_ok(), "{:?}", r.err());
}
