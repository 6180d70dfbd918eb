//! `fishtrack amend`: correcting a record's calls. On the bundled demo record (Anna
//! and Boris, six shots: Boris's coin falls in shot 2 and stays off, so his move in
//! shot 3 costs him −1 by R7): an amended loss re-scores the shot and the later ones
//! as the rules say, an undo gives the record back exactly, a contradiction is one
//! line and exit 1 with the file untouched, a patch makes several at once, `score`
//! marks the amended shots and the HTML report lists them.

use fishtrack::amend::{self, Change, Request};
use fishtrack::config::Game;
use fishtrack::geometry::Table;
use fishtrack::model::ItemId;
use fishtrack::record::Record;
use std::path::{Path, PathBuf};

const WHEN: &str = "2026-12-02T10:00:00Z";

fn demo_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json")
}

/// The demo record re-scored by this build's rules (what `amend` starts from), with
/// its set-up and table.
fn demo() -> (Game, Table, Record) {
    let rec = Record::load(&demo_path()).expect("the demo record is bundled");
    let game = rec.game.clone().expect("the demo embeds its game");
    let table =
        Table::from_corners(rec.table_mm.as_deref().expect("and its table")).expect("table");
    let rec = fishtrack::rules::rescore(&game, &table, &rec).expect("scores");
    (game, table, rec)
}

fn req(shot: usize, change: Change) -> Request {
    Request {
        shot,
        change,
        why: "the referee saw it".into(),
    }
}

fn shots_and_scores(r: &Record) -> String {
    serde_json::to_string(&(&r.shots, &r.scores)).expect("serialises")
}

#[test]
fn a_coin_found_not_lost_takes_back_the_point_and_the_later_r7_fine() {
    let (g, t, rec) = demo();
    assert_eq!(rec.scores, vec![1, -3], "the demo's totals");
    assert_eq!(rec.shots[2].score, vec![1, 0], "Anna knocks coin:1 off");
    assert_eq!(
        rec.shots[3].score,
        vec![0, -1],
        "R7: Boris moves without his coin"
    );
    let out = amend::amend(
        &g,
        &t,
        &rec,
        &[req(
            2,
            Change::NotLost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect("amends");
    let s = &out.record.shots;
    assert_eq!(s[2].score, vec![0, 0]);
    assert_eq!(s[3].score, vec![0, 0], "coin:1 was never off: no R7 fine");
    assert!(s[2].put_back.iter().all(|p| p.item != ItemId::coin(1)));
    assert_eq!(out.record.scores, vec![0, -2]);
    // It was "put back" before shot 4 (frame 282): the camera only saw it again
    // there. That put-back goes (no R11 2.3 for putting back an item never lost), and
    // the coin rests in shot 2 where it was seen again.
    let seen_again = rec.shots[4]
        .before
        .as_ref()
        .and_then(|b| b.placed.iter().find(|p| p.item == ItemId::coin(1)));
    let seen_again = seen_again
        .expect("the demo shows coin:1 put back before shot 4")
        .pose;
    assert_eq!(s[2].end.get(&ItemId::coin(1)), Some(&seen_again));
    assert!(s[4]
        .before
        .as_ref()
        .is_some_and(|b| b.placed.iter().all(|p| p.item != ItemId::coin(1))));
    assert!(s[4].violations.is_empty(), "{:?}", s[4].violations);
    assert_eq!(
        s[2].amendments[0].before.later_interludes.get(&4),
        rec.shots[4].before.as_ref()
    );
    let a = &s[2].amendments[0];
    assert_eq!((a.number, a.when.as_str()), (1, WHEN));
    assert_eq!(a.scores_before, vec![1, -3]);
    assert_eq!(a.scores_after, vec![0, -2]);
    // Earlier shots are untouched.
    assert_eq!(
        shots_and_scores(&Record {
            shots: s[..2].to_vec(),
            ..rec.clone()
        }),
        shots_and_scores(&Record {
            shots: rec.shots[..2].to_vec(),
            ..rec.clone()
        })
    );
}

#[test]
fn an_amended_loss_sets_the_later_put_back_duties() {
    let (g, t, rec) = demo();
    // Shot 4 (Anna's): coin:1 knocked off after all. Anna +1; shot 5 is Boris's move
    // with his coin off the table: R7 −1, and it is still to be put back after it.
    let out = amend::amend(
        &g,
        &t,
        &rec,
        &[req(
            4,
            Change::Lost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect("amends");
    let s = &out.record.shots;
    assert_eq!(s[4].score, vec![1, 0]);
    let duty = s[4].put_back.iter().find(|p| p.item == ItemId::coin(1));
    assert!(
        duty.is_some(),
        "a duty to put coin:1 back: {:?}",
        s[4].put_back
    );
    // coin:1 is on the table at shot 5's flick: put back in time, no R7 fine.
    assert!(s[5].start.contains_key(&ItemId::coin(1)));
    assert_eq!(s[5].score, rec.shots[5].score);
    assert_eq!(out.record.scores, vec![rec.scores[0] + 1, rec.scores[1]]);
    // Had it stayed off (the camera lost it from shot 5 on), Boris's move would cost
    // him −1 by R7 and the duty would carry on after shot 5.
    let mut unseen = rec.clone();
    for shot in &mut unseen.shots[5..] {
        shot.start.remove(&ItemId::coin(1));
        shot.end.remove(&ItemId::coin(1));
        shot.tracks.remove(&ItemId::coin(1));
        shot.coins_in_holes.remove(&ItemId::coin(1));
    }
    let unseen = fishtrack::rules::rescore(&g, &t, &unseen).expect("scores");
    let out = amend::amend(
        &g,
        &t,
        &unseen,
        &[req(
            4,
            Change::Lost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect("amends");
    let s = &out.record.shots;
    assert_eq!(s[5].score[1], unseen.shots[5].score[1] - 1, "R7 on shot 5");
    assert!(
        s[5].put_back.iter().any(|p| p.item == ItemId::coin(1)),
        "{:?}",
        s[5].put_back
    );
}

#[test]
fn an_item_lost_twice_is_refused() {
    let (g, t, rec) = demo();
    // coin:1 fell in shot 2 and was not put back: it cannot fall again in shot 3.
    let e = amend::amend(
        &g,
        &t,
        &rec,
        &[req(
            3,
            Change::Lost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect_err("lost twice");
    assert!(
        e.to_string()
            .contains("coin:1 was not on the table at the flick"),
        "{e}"
    );
    let e = amend::amend(
        &g,
        &t,
        &rec,
        &[req(
            2,
            Change::Lost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect_err("already lost");
    assert!(e.to_string().contains("already lost"), "{e}");
}

#[test]
fn undo_restores_shots_and_scores_byte_for_byte() {
    let (g, t, rec) = demo();
    let out = amend::amend(
        &g,
        &t,
        &rec,
        &[
            req(
                4,
                Change::Lost {
                    item: ItemId::fish(1),
                },
            ),
            req(
                2,
                Change::NotLost {
                    item: ItemId::coin(1),
                },
            ),
        ],
        WHEN,
    )
    .expect("amends");
    assert_ne!(shots_and_scores(&out.record), shots_and_scores(&rec));
    let back = amend::undo(&g, &t, &out.record, 1).expect("undoes 1");
    // Amendment 2 stays, as if made alone.
    let alone = amend::amend(
        &g,
        &t,
        &rec,
        &[req(
            2,
            Change::NotLost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect("amends");
    assert_eq!(back.record.scores, alone.record.scores);
    let back = amend::undo(&g, &t, &back.record, 2).expect("undoes 2");
    assert_eq!(shots_and_scores(&back.record), shots_and_scores(&rec));
}

#[test]
fn the_report_lists_the_amendments() {
    let (g, t, rec) = demo();
    let out = amend::amend(
        &g,
        &t,
        &rec,
        &[req(
            2,
            Change::NotLost {
                item: ItemId::coin(1),
            },
        )],
        WHEN,
    )
    .expect("amends");
    let scene = fishtrack::replay::Scene::new(out.record, None, None).expect("a scene");
    let html = fishtrack::replay::report_html(&scene, &[], &[]);
    let at = html.find("id=\"amendments\"").expect("an amendments table");
    let table = &html[at..at + html[at..].find("</table>").expect("closed")];
    for needle in [
        "coin:1 not lost",
        "the referee saw it",
        WHEN,
        "Anna 1, Boris -3 → Anna 0, Boris -2",
    ] {
        assert!(
            table.contains(&fishtrack::replay::html::escape(needle)),
            "{needle} missing: {table}"
        );
    }
    assert!(
        table.contains("<a href=\"#shot-2\">2</a>"),
        "a link to the shot: {table}"
    );
    let plain = fishtrack::replay::report_html(
        &fishtrack::replay::Scene::new(rec, None, None).expect("scene"),
        &[],
        &[],
    );
    assert!(
        !plain.contains("id=\"amendments\""),
        "no amendments, no table"
    );
}

/// The command line: drives the built binary on a copy of the demo record.
#[cfg(feature = "opencv")]
mod cli {
    use crate::common::run;
    use std::path::{Path, PathBuf};

    fn copy_demo(dir: &tempfile::TempDir) -> PathBuf {
        let p = dir.path().join("record.json");
        std::fs::copy(super::demo_path(), &p).expect("copies");
        p
    }

    fn s(p: &Path) -> &str {
        p.to_str().expect("a UTF-8 path")
    }

    fn json(p: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).expect("reads")).expect("JSON")
    }

    #[test]
    fn amend_prints_the_change_and_score_marks_the_shot() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rec = copy_demo(&dir);
        let (code, out, err) = run(&[
            "amend",
            s(&rec),
            "--shot",
            "2",
            "--not-lost",
            "coin:1",
            "--why",
            "hung on the edge",
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("amendment 1: shot 2: coin:1 not lost"),
            "{out}"
        );
        assert!(out.contains("shot 2: points +1 0 → 0 0"), "{out}");
        assert!(
            out.contains("total: Anna 1, Boris -3 → Anna 0, Boris -2"),
            "{out}"
        );
        let v = json(&rec);
        let a = &v["shots"][2]["amendments"][0];
        assert_eq!(a["what"], "not-lost");
        assert_eq!(a["item"], "coin:1");
        assert_eq!(a["why"], "hung on the edge");
        let when = a["when"].as_str().expect("a timestamp");
        assert!(
            when.len() == 20 && when.ends_with('Z') && when.as_bytes()[10] == b'T',
            "{when}"
        );
        assert_eq!(v["scores"], serde_json::json!([0, -2]));
        let (code, table, err) = run(&["score", s(&rec)]);
        assert_eq!(code, 0, "{err}");
        assert!(
            table
                .lines()
                .any(|l| l.trim_start().starts_with("2†  Anna")),
            "{table}"
        );
        assert!(
            table.contains("†: amended by a referee (1 amendment): shot 2"),
            "{table}"
        );
        let (code, listed, _) = run(&["amend", s(&rec), "--list"]);
        assert_eq!(code, 0);
        assert!(
            listed.contains("hung on the edge") && listed.contains("lost, exit"),
            "{listed}"
        );
    }

    #[test]
    fn a_contradiction_is_one_line_exit_1_and_the_file_is_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rec = copy_demo(&dir);
        let bytes = std::fs::read(&rec).expect("reads");
        for (args, needle) in [
            (
                vec!["--shot", "3", "--lost", "coin:1"],
                "coin:1 was not on the table at the flick",
            ),
            (
                vec!["--shot", "9", "--lost", "coin:1"],
                "shot 9 does not exist",
            ),
            (
                vec!["--shot", "1", "--lost", "coin:7"],
                "coin:7 does not exist",
            ),
            // Two changes in one call: the loss fits, the coin then cannot go into
            // the lost fish; neither is made.
            (
                vec![
                    "--shot",
                    "4",
                    "--lost",
                    "fish:1",
                    "--coin-in",
                    "coin:0",
                    "fish:1",
                ],
                "fish:1 is off the table",
            ),
            (
                vec!["--shot", "2", "--exit", "coin:1", "500,350"],
                "from the table's edge",
            ),
            (vec!["--shot", "2", "--mover", "Carla"], "no such player"),
        ] {
            let mut full = vec!["amend", s(&rec)];
            full.extend(&args);
            full.extend(["--why", "test"]);
            crate::common::assert_fails_with(&full, &[needle]);
            assert_eq!(
                std::fs::read(&rec).expect("reads"),
                bytes,
                "{args:?} changed the file"
            );
        }
        crate::common::assert_fails_with(
            &["amend", s(&rec), "--undo", "1"],
            &["amendment 1 does not exist"],
        );
        crate::common::assert_fails_with(
            &["amend", s(&rec), "--shot", "2", "--not-lost", "coin:1"],
            &["--why"],
        );
        assert_eq!(std::fs::read(&rec).expect("reads"), bytes);
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("lists").collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    #[test]
    fn a_patch_makes_several_and_undo_takes_them_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rec = copy_demo(&dir);
        // The record as this build's rules score it: what undo gives back.
        let (code, _, err) = run(&[
            "amend",
            s(&rec),
            "--shot",
            "4",
            "--lost",
            "fish:1",
            "--why",
            "w",
        ]);
        assert_eq!(code, 0, "{err}");
        let (code, _, err) = run(&["amend", s(&rec), "--undo", "1"]);
        assert_eq!(code, 0, "{err}");
        let start = json(&rec);
        let patch = dir.path().join("fixes.json");
        std::fs::write(
            &patch,
            r#"{ "version": 1, "amendments": [
                { "shot": 2, "what": "not-lost", "item": "coin:1", "why": "hung on the edge" },
                { "shot": 4, "what": "lost", "item": "fish:1" },
                { "shot": 4, "what": "exit", "item": "fish:1", "exit": {"x": 1000, "y": 300}, "why": "seen" } ] }"#,
        )
        .expect("writes");
        let (code, out, err) = run(&[
            "amend",
            s(&rec),
            "--patch",
            s(&patch),
            "--why",
            "default reason",
        ]);
        assert_eq!(code, 0, "{err}");
        for n in ["amendment 1:", "amendment 2:", "amendment 3:"] {
            assert!(out.contains(n), "{n}: {out}");
        }
        let v = json(&rec);
        assert_eq!(v["shots"][4]["amendments"][0]["why"], "default reason");
        assert_eq!(
            v["shots"][4]["lost"][0]["exit"],
            serde_json::json!({"x": 1000.0, "y": 300.0})
        );
        // Undone from the last, the record is as it was.
        for k in ["3", "2", "1"] {
            let (code, out, err) = run(&["amend", s(&rec), "--undo", k]);
            assert_eq!(code, 0, "{err}");
            assert!(out.contains(&format!("undid amendment {k}")), "{out}");
        }
        let back = json(&rec);
        assert_eq!(back["shots"], start["shots"]);
        assert_eq!(back["scores"], start["scores"]);
        // A patch with one bad entry changes nothing.
        let before = std::fs::read(&rec).expect("reads");
        std::fs::write(
            &patch,
            r#"{ "version": 1, "amendments": [
                { "shot": 2, "what": "not-lost", "item": "coin:1", "why": "x" },
                { "shot": 3, "what": "lost", "item": "coin:1", "why": "x" } ] }"#,
        )
        .expect("writes");
        crate::common::assert_fails_with(&["amend", s(&rec), "--patch", s(&patch)], &["shot 3"]);
        assert_eq!(std::fs::read(&rec).expect("reads"), before);
    }

    #[test]
    fn help_explains_every_flag_with_an_example() {
        let (code, out, _) = run(&["amend", "--help"]);
        assert_eq!(code, 0);
        for flag in [
            "--shot",
            "--lost",
            "--not-lost",
            "--exit",
            "--coin-in",
            "--mover",
            "--drop-violation",
            "--why",
            "--patch",
            "--undo",
            "--list",
        ] {
            assert!(
                out.contains(&format!("fishtrack amend record.json {flag}"))
                    || out.contains(&format!("E.g. `{flag}")),
                "{flag}: no example in {out}"
            );
        }
    }
}
