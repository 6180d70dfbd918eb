//! The HTML report in headless Chromium: no script or console errors, the score
//! table the page builds matches the record shot by shot, and pressing play moves
//! an item on the canvas. The page tests itself when opened with `#selftest` (it
//! clicks play, waits, reads canvas pixels before and after) and writes the result
//! into `<pre id="selftest-result">`; we read it back with `--dump-dom`.
//! Without chromium the test skips, unless `CI` is set.

use crate::live_board::{chromium, HEADLESS};
use fishtrack::record::Record;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/replay")
        .join(name)
}

/// Loads the page headless and returns (dumped DOM, chromium's stderr).
fn dump_dom(browser: &Path, page: &Path, work: &Path) -> (String, String) {
    let profile = work.join("chromium-profile");
    let url = format!("file://{}#selftest", page.display());
    let o = Command::new(browser)
        .args(HEADLESS)
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The text of every element opening with `open` (up to the next `</`).
fn texts<'a>(html: &'a str, open: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(open) {
        let after = &rest[i + open.len()..];
        let end = after.find("</").unwrap_or(after.len());
        out.push(&after[..end]);
        rest = &after[end..];
    }
    out
}

#[test]
fn report_runs_in_chromium_and_matches_the_record() {
    let Some(browser) = chromium("the HTML report") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_fishtrack"))
        .arg("replay")
        .arg(data("record.json"))
        .args(["--no-video", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = out.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing fetched from anywhere.
    for bad in ["http://", "https://", "<script src", "<link "] {
        assert!(!html.contains(bad), "the report references `{bad}`");
    }
    assert_eq!(html.matches("data:image/png;base64,").count(), 2);

    let (dom, log) = dump_dom(&browser, &page, dir.path());
    for line in log.lines().filter(|l| l.contains("CONSOLE")) {
        assert!(
            !line.contains("Uncaught") && !line.contains("Error"),
            "console error: {line}"
        );
    }

    // The page's own test: no errors, and play moved an item.
    let result = texts(&dom, "<pre id=\"selftest-result\">");
    assert_eq!(result.len(), 1, "no self-test result in the DOM");
    let r: serde_json::Value = serde_json::from_str(&unescape(result[0])).expect("self-test JSON");
    assert_eq!(r["errors"], serde_json::json!([]), "{r}");
    assert_eq!(r["playing_after_click"], true, "{r}");
    assert!(
        r["frame_after"].as_u64() > r["frame_before"].as_u64(),
        "{r}"
    );
    assert!(r["changed_pixels"].as_u64().unwrap_or(0) > 100, "{r}");
    // The sampled pixel held the moving item before play, and no longer after.
    assert_ne!(r["pixel_before"], r["pixel_after"], "{r}");
    let rgb: Vec<u64> = r["pixel_before"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(
        format!("rgb({},{},{})", rgb[0], rgb[1], rgb[2]),
        r["item_color"].as_str().unwrap(),
        "{r}"
    );
    assert!(
        r["readout_after"].as_str().unwrap().starts_with("frame "),
        "{r}"
    );

    // The score table, shot by shot and in total, is the record's.
    let record = Record::load(&data("record.json")).unwrap();
    let signed = |v: i32| {
        if v > 0 {
            format!("+{v}")
        } else {
            v.to_string()
        }
    };
    let start = dom
        .find("<table id=\"score-table\">")
        .expect("score table in the DOM");
    let table = &dom[start..];
    let table = &table[..table.find("</table>").expect("score table closes")];
    let pts = texts(table, "<td class=\"pts\">");
    let run = texts(table, "<td class=\"run\">");
    let n = record.players.len();
    assert_eq!(pts.len(), record.shots.len() * n);
    let mut totals = vec![0; n];
    for (k, shot) in record.shots.iter().enumerate() {
        for p in 0..n {
            totals[p] += shot.score[p];
            assert_eq!(pts[k * n + p], signed(shot.score[p]), "shot {k} player {p}");
            assert_eq!(
                run[k * n + p],
                signed(totals[p]),
                "running total, shot {k} player {p}"
            );
        }
    }
    let finals = texts(table, "<td class=\"final\">");
    let want: Vec<String> = record.scores.iter().map(|v| signed(*v)).collect();
    assert_eq!(finals, want);
    assert!(
        dom.contains("<p id=\"score-check\" class=\"note\" hidden=\"\">"),
        "totals flagged as inconsistent"
    );
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// `fishtrack replay` on the bundled demo: each shot's section lists the rules
/// engine's points (as `fishtrack score --json` gives them: rule, player, points,
/// reason), and the top of the page says who won with the final totals.
#[test]
fn demo_report_gives_each_shots_rules_and_the_winner() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/record.json");
    let bin = env!("CARGO_BIN_EXE_fishtrack");
    let o = Command::new(bin)
        .arg("score")
        .arg(&demo)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("score --json");
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin)
        .arg("replay")
        .arg(&demo)
        .args(["--no-video", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();

    let players: Vec<&str> = v["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let signed = |v: i64| {
        if v > 0 {
            format!("+{v}")
        } else {
            v.to_string()
        }
    };
    let mut rules = Vec::new();
    for shot in v["shots"].as_array().unwrap() {
        let at = html
            .find(&format!("id=\"shot-{}\"", shot["index"]))
            .expect("a section per shot");
        let section = &html[at..at + html[at..].find("</section>").expect("closed")];
        let points = shot["points"].as_array().unwrap();
        assert_eq!(
            section.matches("<li class=\"rule\"").count(),
            points.len(),
            "{section}"
        );
        for e in points {
            let (rule, p) = (e["rule"].as_str().unwrap(), e["player"].as_u64().unwrap());
            let who = format!(
                "{} {}",
                players[p as usize],
                signed(e["points"].as_i64().unwrap())
            );
            for want in [
                format!("data-rule=\"{rule}\" data-player=\"{p}\""),
                escape(e["reason"].as_str().unwrap()),
                who,
            ] {
                assert!(section.contains(&want), "`{want}` missing: {section}");
            }
            rules.push(rule.to_string());
        }
    }
    // What the demo is for: points won and lost, and a fine.
    assert!(rules.iter().any(|r| r == "R5"), "{rules:?}");
    assert!(rules.iter().any(|r| r == "R7"), "{rules:?}");

    let line = texts(&html, "<p class=\"winner\" id=\"winner\">");
    assert_eq!(line.len(), 1, "one winner line");
    let line = line[0];
    let scores: Vec<i64> = v["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_i64().unwrap())
        .collect();
    let best = *scores.iter().max().unwrap();
    let top: Vec<&str> = (0..players.len())
        .filter(|&p| scores[p] == best)
        .map(|p| players[p])
        .collect();
    assert_eq!(v["match_over"], true, "the demo is a whole match");
    assert_eq!(top.len(), 1, "the demo has a winner: {scores:?}");
    assert!(line.starts_with(&format!("Winner: {}", top[0])), "{line}");
    for (p, s) in players.iter().zip(&scores) {
        assert!(line.contains(&format!("{p} {}", signed(*s))), "{line}");
    }
    assert!(
        html.find("id=\"winner\"") < html.find("<h2>"),
        "the winner line comes first"
    );
}
