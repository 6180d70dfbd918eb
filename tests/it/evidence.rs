//! Issue #17 items 1 and 2: every call's confidence and evidence in the record
//! (version 2), older records still read, the review threshold from the game file,
//! the rules' calls as sure as the observations they rest on, and eval's count of
//! wrong calls among the flagged ones.

use fishtrack::config::{parse_checked, Game, GameFile, Items, Player};
use fishtrack::eval::{evaluate, TruthPoses};
use fishtrack::model::{FrameIdx, ItemId, Pose};
use fishtrack::record::{
    sure, Call, Decision, DisturbedItem, Evidence, Identity, Interlude, LostItem, PlacedItem,
    Record, Shot, OLDEST_RECORD_VERSION, RECORD_VERSION,
};
use std::path::Path;

fn game() -> Game {
    let players = ["#d62728", "#1f77b4"]
        .iter()
        .enumerate()
        .map(|(i, c)| Player {
            name: format!("P{i}"),
            color: (*c).into(),
        })
        .collect();
    Game::new(players, 3, Items::default_set())
}

fn record(shots: Vec<Shot>) -> Record {
    Record {
        version: RECORD_VERSION,
        video: Default::default(),
        players: vec!["P0".into(), "P1".into()],
        shots,
        scores: vec![0, 0],
        game: Some(game()),
        table_mm: Some(vec![
            [0.0, 0.0],
            [1000.0, 0.0],
            [1000.0, 700.0],
            [0.0, 700.0],
        ]),
    }
}

fn shot(index: usize) -> Shot {
    Shot {
        index,
        player: index % 2,
        flick_frame: 10 + 100 * index as u64,
        rest_frame: 60 + 100 * index as u64,
        start: [
            (ItemId::fish(0), Pose::fish(200.0, 300.0, 0.0)),
            (ItemId::fish(1), Pose::fish(600.0, 300.0, 0.0)),
            (ItemId::coin(0), Pose::coin(200.0, 300.0)),
            (ItemId::coin(1), Pose::coin(600.0, 300.0)),
        ]
        .into(),
        end: [
            (ItemId::fish(0), Pose::fish(200.0, 300.0, 0.0)),
            (ItemId::fish(1), Pose::fish(600.0, 300.0, 0.0)),
            (ItemId::coin(0), Pose::coin(200.0, 300.0)),
            (ItemId::coin(1), Pose::coin(600.0, 300.0)),
        ]
        .into(),
        ..Shot::default()
    }
}

fn lose(s: &mut Shot, item: ItemId, confidence: f64) {
    s.end.remove(&item);
    s.lost.push(LostItem {
        item,
        frame: s.flick_frame + 5,
        exit: Pose::coin(1000.0, 300.0),
    });
    s.decisions.push(Decision {
        call: Call::Lost,
        item,
        other: None,
        evidence: Evidence::new(confidence, format!("{item} seen near the edge"))
            .at([s.flick_frame + 4])
            .with("frames_seen", 3.0),
    });
}

#[test]
fn the_margin_decides_the_confidence() {
    assert!((sure(0.0, 1.0) - 0.5).abs() < 1e-12);
    assert!(sure(2.0, 1.0) > sure(1.0, 1.0));
    assert!(sure(-1.0, 1.0) < 0.5);
    // The scale: a margin known less precisely is less sure.
    assert!(sure(2.0, 4.0) < sure(2.0, 1.0));
}

#[test]
fn a_version_1_record_reads_and_scores_without_evidence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut r = record(vec![shot(0)]);
    r.version = OLDEST_RECORD_VERSION;
    let path = dir.path().join("old.json");
    r.save(&path).expect("save");
    let back = Record::load(&path).expect("a version-1 record loads");
    assert!(back.flagged().is_empty());
    let table = fishtrack::geometry::Table::from_corners(back.table_mm.as_ref().expect("table"))
        .expect("table");
    let scored = fishtrack::rules::rescore(&game(), &table, &back).expect("scores");
    // No observation evidence in, no rules' evidence out: the old record stays as it was.
    assert!(scored.shots.iter().all(|s| s.calls().is_empty()));
    // A newer version than this build's is refused in one line.
    r.version = RECORD_VERSION + 1;
    r.save(&path).expect("save");
    let e = Record::load(&path).expect_err("a newer record is refused");
    assert!(e.to_string().contains("not supported"), "{e}");
}

#[test]
fn the_game_file_sets_the_review_threshold() {
    let mut file = game().to_file();
    let text = serde_json::to_string(&file).expect("json");
    let g: GameFile = parse_checked(&text, Path::new("g.json")).expect("parses");
    assert_eq!(g.review_below, None);
    assert_eq!(
        game().review_below(),
        fishtrack::config::DEFAULT_REVIEW_BELOW
    );
    file.review_below = Some(0.6);
    let text = serde_json::to_string(&file).expect("json");
    let g: GameFile = parse_checked(&text, Path::new("g.json")).expect("parses");
    assert_eq!(g.review_below, Some(0.6));
    let mut bad = game();
    bad.review_below = Some(1.5);
    assert!(bad
        .validate()
        .expect_err("refused")
        .contains("review_below"));
}

#[test]
fn calls_below_the_threshold_are_flagged_unless_amended() {
    let mut s0 = shot(0);
    lose(&mut s0, ItemId::coin(1), 0.3);
    let mut s1 = shot(1);
    lose(&mut s1, ItemId::coin(0), 0.95);
    let mut r = record(vec![s0, s1]);
    let flagged = r.flagged();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!(flagged[0].shot, 0);
    assert_eq!(flagged[0].item, Some(ItemId::coin(1)));
    assert!(flagged[0].line().contains("confidence 0.30"));
    // A lower threshold in the game file flags nothing.
    if let Some(g) = r.game.as_mut() {
        g.review_below = Some(0.2);
    }
    assert!(r.flagged().is_empty());
}

#[test]
fn a_violation_is_as_sure_as_the_first_mover_it_rests_on() {
    let mut s = shot(0);
    s.first_moved = Some(ItemId::coin(0));
    s.decisions.push(Decision {
        call: Call::FirstMoved,
        item: ItemId::coin(0),
        other: None,
        evidence: Evidence::new(sure(0.5, 0.5), "coin:0 set off a frame before fish:0")
            .at([10, 11])
            .with("lead_frames", 1.0),
    });
    let r = record(vec![s]);
    let table = fishtrack::geometry::Table::from_corners(r.table_mm.as_ref().expect("table"))
        .expect("table");
    let scored = fishtrack::rules::rescore(&game(), &table, &r).expect("scores");
    let v = &scored.shots[0].violations;
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].code, "1.1");
    let d = v[0]
        .decision
        .as_ref()
        .expect("the violation carries evidence");
    assert!((d.confidence - sure(0.5, 0.5)).abs() < 1e-9);
    assert_eq!(d.measured.get("lead_frames"), Some(&1.0));
    assert!(scored.flagged().iter().any(|f| f.code == Some("1.1")));
}

/// fish:1 is lost over the right edge in shot 0, its exit only guessed (0.2), and put
/// back in the interlude before shot 1 touching the edge 60 mm from that exit: an R6b
/// put-back off its pose (2.3). Judged against a pose that follows a guessed exit,
/// the call is no surer than the exit, and so flagged (before: as sure as the 60 mm
/// margin alone, 1.00).
#[test]
fn a_put_back_judged_against_a_guessed_exit_is_no_surer_than_the_exit() {
    let fish1 = ItemId::fish(1);
    let mut s0 = shot(0);
    s0.start.remove(&ItemId::coin(1));
    s0.end.remove(&ItemId::coin(1));
    lose(&mut s0, fish1, 0.99);
    s0.lost[0].exit = Pose::fish(1000.0, 300.0, 0.0);
    s0.decisions.push(Decision {
        call: Call::Exit,
        item: fish1,
        other: None,
        evidence: Evidence::new(0.2, "fish:1 crossed the edge near (1000, 300), a guess"),
    });
    let table =
        fishtrack::geometry::Table::from_corners(record(vec![]).table_mm.as_ref().expect("table"))
            .expect("table");
    let duty = fishtrack::rules::rescore(&game(), &table, &record(vec![s0.clone()]))
        .expect("scores")
        .shots[0]
        .put_back
        .iter()
        .find(|p| p.item == fish1)
        .and_then(|p| p.pose)
        .expect("a legal pose for fish:1");
    let mut s1 = shot(1);
    s1.start.remove(&ItemId::coin(1));
    s1.end.remove(&ItemId::coin(1));
    let placed = Pose::fish(duty.x, duty.y + 60.0, duty.angle());
    s1.start.insert(fish1, placed);
    s1.end.insert(fish1, placed);
    s1.before = Some(Interlude {
        placed: vec![PlacedItem {
            item: fish1,
            frame: 80,
            pose: placed,
        }],
        ..Default::default()
    });
    s1.decisions.push(Decision {
        call: Call::FirstMoved,
        item: ItemId::fish(1),
        other: None,
        evidence: Evidence::new(0.99, "fish:1 set off"),
    });
    let scored = fishtrack::rules::rescore(&game(), &table, &record(vec![s0, s1])).expect("scores");
    let v = scored.shots[1]
        .violations
        .iter()
        .find(|v| v.code == "2.3")
        .unwrap_or_else(|| panic!("no 2.3: {:?}", scored.shots[1].violations));
    let d = v.decision.as_ref().expect("the violation carries evidence");
    assert!(d.confidence <= 0.2 + 1e-9, "{d:?}");
    assert!(scored.flagged().iter().any(|f| f.code == Some("2.3")));
}

struct NoPoses;
impl TruthPoses for NoPoses {
    fn pose_at(&self, _: ItemId, _: FrameIdx) -> Option<Pose> {
        None
    }
    fn items(&self) -> Vec<ItemId> {
        Vec::new()
    }
}

#[test]
fn eval_counts_wrong_calls_among_the_flagged() {
    // The truth lost coin:1 in shot 0 and nothing in shot 1.
    let mut t0 = shot(0);
    t0.end.remove(&ItemId::coin(1));
    t0.lost.push(LostItem {
        item: ItemId::coin(1),
        frame: 15,
        exit: Pose::coin(1000.0, 300.0),
    });
    let truth = record(vec![t0, shot(1)]);
    // The record: coin:1 lost in shot 0 (right, sure), coin:0 lost in shot 1 (wrong,
    // flagged), and fish:1 lost in shot 1 (wrong, not flagged).
    let mut r0 = shot(0);
    lose(&mut r0, ItemId::coin(1), 0.99);
    let mut r1 = shot(1);
    lose(&mut r1, ItemId::coin(0), 0.2);
    lose(&mut r1, ItemId::fish(1), 0.9);
    let (e, _) = evaluate(&record(vec![r0, r1]), &truth, &NoPoses);
    assert_eq!(e.review.calls, 3);
    assert_eq!(e.review.wrong, 2);
    assert_eq!(e.review.wrong_flagged, 1);
    assert_eq!(e.review.correct_flagged, 0);
}

fn doubtful(confidence: f64) -> Identity {
    Identity {
        track: 3,
        origin: None,
        changes: Vec::new(),
        jumps: Vec::new(),
        seen_again: Vec::new(),
        longest_unseen_frames: 12,
        confidence,
        why: "its track was coin:0 until frame 40, then coin:1".into(),
    }
}

#[test]
fn a_disturbance_is_no_surer_than_which_item_was_disturbed() {
    // coin:1 moved 9 mm between moves (4.2: sure on its own), but the track that moved
    // was only taken for coin:1.
    let violation = |identity: Option<Identity>| {
        let mut s = shot(1);
        s.before = Some(Interlude {
            placed: Vec::new(),
            disturbed: vec![DisturbedItem {
                item: ItemId::coin(1),
                frame: 80,
                distance_mm: 9.0,
            }],
            ready_frame: None,
        });
        // A call with evidence, so that the rules annotate theirs.
        lose(&mut s, ItemId::coin(0), 0.99);
        if let Some(i) = identity {
            s.identity.insert(ItemId::coin(1), i);
        }
        let r = record(vec![shot(0), s]);
        let table = fishtrack::geometry::Table::from_corners(r.table_mm.as_ref().expect("table"))
            .expect("table");
        let scored = fishtrack::rules::rescore(&game(), &table, &r).expect("scores");
        let v = scored.shots[1]
            .violations
            .iter()
            .find(|v| v.code == "4.2")
            .cloned()
            .expect("a 4.2");
        v.decision.expect("evidence")
    };
    let sure_one = violation(None);
    assert!(sure_one.confidence > 0.99, "{sure_one:?}");
    let doubted = violation(Some(doubtful(0.5)));
    assert!((doubted.confidence - 0.5).abs() < 1e-9, "{doubted:?}");
    assert_eq!(doubted.measured.get("identity_confidence"), Some(&0.5));
    assert!(doubted.why.contains("in doubt"), "{}", doubted.why);
}

#[test]
fn a_version_3_record_keeps_its_identity_evidence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = shot(0);
    s.identity.insert(ItemId::coin(1), doubtful(0.5));
    let r = record(vec![s]);
    assert_eq!(r.version, 3);
    let path = dir.path().join("r.json");
    r.save(&path).expect("save");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains("\"longest_unseen_frames\": 12"), "{text}");
    let back = Record::load(&path).expect("loads");
    assert_eq!(back.shots[0].identity, r.shots[0].identity);
    // An identity's confidence out of 0..1 is refused.
    let mut bad = r.clone();
    if let Some(i) = bad.shots[0].identity.get_mut(&ItemId::coin(1)) {
        i.confidence = 1.5;
    }
    std::fs::write(&path, serde_json::to_string(&bad).expect("json")).expect("write");
    let e = Record::load(&path).expect_err("refused");
    assert!(e.to_string().contains("identity"), "{e}");
}
