//! The HTML match report: one self-contained file (no network, no external
//! scripts) with the players, the score table shot by shot, violations with their
//! evidence, each shot's events and diagram (base64 PNG data URIs), and an
//! interactive replay of each shot drawn from its tracks on a canvas (play, pause,
//! scrub, speed; frame and time shown). The record travels inside the page as JSON
//! (`<script type="application/json" id="match-data">`) and plain JS draws from it,
//! so what the page shows is what the record says. Opened with `#selftest`, the
//! page presses its own play button and writes what changed on the canvas, plus any
//! script errors, into `<pre id="selftest-result">` (for the headless browser test).
//!
//! The winner line at the top and each shot's points with their rules come from the
//! rules engine (`rules::rescore_detailed` on the scene's game and table): the page
//! only words what the engine decided. A referee's amendments (`fishtrack amend`) are
//! listed after the violations. With the evidence crops `replay` wrote beside the
//! page (`evidence/`), "Review first" embeds the flagged calls' crops and each shot
//! links every call's crops, collapsed. Uses: record, rules, amend, Scene, evidence.

use super::evidence::{Crop, EvidenceIndex, Written};
use super::Scene;
use crate::model::{FrameIdx, ItemId};
use crate::rules::{MatchState, PointEntry};
use serde_json::json;

/// Standard base64 (RFC 4648, with padding).
pub fn base64_encode(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(ABC[(n >> 18) as usize & 63] as char);
        out.push(ABC[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            ABC[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            ABC[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

fn seconds(scene: &Scene, frame: FrameIdx) -> String {
    format!("{:.2} s", frame as f64 / scene.fps)
}

/// A point count with its sign (`+1`, `0`, `-1`).
pub(crate) fn signed(v: i32) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// What the rules engine says about the record: each shot's points with their
/// rules, and the match state after the last shot.
struct Verdicts {
    /// Per shot in record order; `None` where the engine's points differ from the
    /// record's (the record is what the page reports, and reasons that do not add up
    /// to it would mislead).
    points: Vec<Option<Vec<PointEntry>>>,
    state: Option<MatchState>,
    /// Why some reasons are missing, for the reader.
    note: Option<String>,
}

fn verdicts(scene: &Scene) -> Verdicts {
    let rec = &scene.record;
    match super::export::points_per_shot(&scene.game, &scene.table, rec) {
        Ok(super::export::PerShot {
            points,
            differ,
            state,
        }) => {
            let note = (!differ.is_empty()).then(|| {
                format!(
                    "The rules engine gives other points than the record for shot(s) {}: their rules are not shown.",
                    differ.join(", ")
                )
            });
            Verdicts {
                points,
                state: Some(state),
                note,
            }
        }
        Err(e) => Verdicts {
            points: vec![None; rec.shots.len()],
            state: None,
            note: Some(format!(
                "The rules could not be re-run on this record ({e}): the points are shown without their rules."
            )),
        },
    }
}

/// A few words on what each rule of a points line is about.
fn rule_words(rule: &str) -> &'static str {
    match rule {
        "R5" => "items lost in the move",
        "R7" => "fine: own coin still not back",
        "R11" => "violation",
        _ => "rule",
    }
}

/// The winner line: who won (or a draw) with the final totals, or who leads when
/// the match is not over. Totals are the record's; whether the match is over is
/// the rules engine's (moves counted in turn), else all planned moves made.
pub(crate) fn winner_line(scene: &Scene, over: Option<bool>) -> String {
    let rec = &scene.record;
    let n = scene.player_count();
    let total = |p: usize| rec.scores.get(p).copied().unwrap_or(0);
    let totals: Vec<String> = (0..n)
        .map(|p| format!("{} {}", scene.player_name(p), signed(total(p))))
        .collect();
    let best = (0..n).map(total).max().unwrap_or(0);
    let top: Vec<&str> = (0..n)
        .filter(|&p| total(p) == best)
        .map(|p| scene.player_name(p))
        .collect();
    let due = scene.game.moves_per_player as usize * n;
    let over = over.unwrap_or(rec.shots.len() >= due);
    let head = match (over, top.len()) {
        (true, 1) => format!("Winner: {}", top[0]),
        (true, _) => format!("Draw: {}", top.join(" and ")),
        (false, 1) => format!(
            "Match not finished ({} of {due} moves): {} leads",
            rec.shots.len().min(due),
            top[0]
        ),
        (false, _) => format!(
            "Match not finished ({} of {due} moves): {} level",
            rec.shots.len().min(due),
            top.join(" and ")
        ),
    };
    let which = if over {
        "final totals"
    } else {
        "totals so far"
    };
    format!("{head} — {which} {}", totals.join(", "))
}

/// Whose each item named in `text` is: `coin:1 is Boris's`.
fn owners_in(scene: &Scene, text: &str) -> Vec<String> {
    let mut seen: Vec<ItemId> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == ':')) {
        if let Ok(id) = word.parse::<ItemId>() {
            if id.owner < scene.player_count() && !seen.contains(&id) {
                seen.push(id);
            }
        }
    }
    seen.iter()
        .map(|id| format!("{id} is {}'s", scene.player_name(id.owner)))
        .collect()
}

/// One points line of a shot: rule, whom it moved and by how much, why.
fn point_line(scene: &Scene, e: &PointEntry) -> String {
    let owners = owners_in(scene, &e.reason);
    let whose = if owners.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"id\">({})</span>",
            escape(&owners.join(", "))
        )
    };
    format!(
        "<li class=\"rule\" data-rule=\"{rule}\" data-player=\"{p}\"><b>{rule}</b> <span class=\"id\">{words}</span>: \
         <b>{name} {pts}</b> — {reason}{whose}</li>",
        rule = escape(&e.rule),
        p = e.player,
        words = rule_words(&e.rule),
        name = escape(scene.player_name(e.player)),
        pts = signed(e.points),
        reason = escape(&e.reason),
    )
}

/// The data the page's script draws from.
fn page_data(scene: &Scene) -> serde_json::Value {
    let (lo, hi) = scene.table.bounds();
    let players: Vec<_> = scene
        .game
        .players
        .iter()
        .map(|p| json!({ "name": p.name, "color": p.color }))
        .collect();
    json!({
        "players": players,
        "fps": scene.fps,
        "table": scene.table.corners().iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(),
        "bounds": [[lo.x, lo.y], [hi.x, hi.y]],
        "fish_outline": scene.footprint.outline().iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(),
        "hole_radius": scene.footprint.hole_radius(),
        "coin_radius": scene.game.items.coin.radius,
        "record": scene.record,
    })
}

/// "Review first": every call less sure than the game's `review_below` that no
/// amendment settled, least sure first within a shot, each with its sentence, its
/// frames and what was measured; a line saying there are none when there are none
/// (and nothing for a record without evidence, version 1). With crops written
/// (`evidence`), each flagged call's crops follow its row, embedded.
fn review_html(scene: &Scene, evidence: &Written) -> String {
    let rec = &scene.record;
    if rec.shots.iter().all(|s| s.calls().is_empty()) {
        return String::new();
    }
    let below = scene.game.review_below();
    let flagged: Vec<_> = rec.shots.iter().flat_map(|s| s.flagged(below)).collect();
    let mut h = String::from("<h2 id=\"review\">Review first</h2>\n");
    if flagged.is_empty() {
        h.push_str(&format!(
            "<p class=\"note\">Every call is at least {below:.2} sure: nothing to review first.</p>\n"
        ));
        return h;
    }
    h.push_str(&format!(
        "<p class=\"note\">{} call{} less sure than {below:.2} (the game's <code>review_below</code>): look at these first; <code>fishtrack amend</code> corrects one.</p>\n",
        flagged.len(),
        if flagged.len() == 1 { "" } else { "s" }
    ));
    h.push_str("<table id=\"review-table\"><tr><th>shot</th><th>call</th><th>confidence</th><th>why</th><th>frames</th><th>measured</th></tr>\n");
    for f in &flagged {
        let what = match (f.item, f.other, f.code) {
            (_, _, Some(code)) => format!("violation {code}"),
            (Some(i), Some(o), None) => format!("{} {i} / {o}", f.call.as_str()),
            (Some(i), None, None) => format!("{} {i}", f.call.as_str()),
            (None, _, None) => f.call.as_str().to_string(),
        };
        let e = f.evidence;
        let frames = e
            .frames
            .iter()
            .map(|x| format!("{x} ({})", seconds(scene, *x)))
            .collect::<Vec<_>>()
            .join(", ");
        let mut measured: Vec<String> =
            e.measured.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if let Some(by) = &e.hidden_by {
            measured.push(format!("hidden by {by}"));
        }
        h.push_str(&format!(
            "<tr class=\"flagged\"><td><a href=\"#shot-{}\">{}</a></td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            f.shot,
            f.shot,
            escape(&what),
            e.confidence,
            escape(&e.why),
            escape(&frames),
            escape(&measured.join("; ")),
        ));
        let crops = evidence
            .index
            .as_ref()
            .and_then(|i| i.calls.iter().find(|c| c.is(f.shot, f)));
        if let Some(c) = crops.filter(|c| !c.crops.is_empty()) {
            h.push_str("<tr class=\"crops\"><td colspan=\"6\">");
            for crop in &c.crops {
                let src = match evidence.flagged_png.get(&crop.file) {
                    Some(png) => format!("data:image/png;base64,{}", base64_encode(png)),
                    None => format!("{EVIDENCE_DIR}/{}", escape(&crop.file)),
                };
                h.push_str(&crop_figure(crop, &src, &e.why));
            }
            h.push_str("</td></tr>\n");
        }
    }
    h.push_str("</table>\n");
    h
}

/// The folder, beside the report, that `replay` writes the crops into.
pub const EVIDENCE_DIR: &str = "evidence";

/// One crop with its frame (and time) under it.
fn crop_figure(crop: &Crop, src: &str, why: &str) -> String {
    format!(
        "<figure class=\"crop\"><a href=\"{EVIDENCE_DIR}/{file}\"><img src=\"{src}\" width=\"{w}\" height=\"{h}\" loading=\"lazy\" alt=\"frame {frame}: {why}\"></a><figcaption>frame {frame}</figcaption></figure>",
        file = escape(&crop.file),
        w = crop.width,
        h = crop.height,
        frame = crop.frame,
        why = escape(why),
    )
}

/// A shot's calls with their crops, collapsed: every call, not only the flagged
/// ones, each linking the crops in the evidence folder.
fn shot_evidence_html(index: &EvidenceIndex, shot: usize) -> String {
    let calls: Vec<_> = index.calls.iter().filter(|c| c.shot == shot).collect();
    if calls.is_empty() {
        return String::new();
    }
    let crops: usize = calls.iter().map(|c| c.crops.len()).sum();
    let mut h = format!(
        "<details class=\"evidence\"><summary>Evidence: {} call{}, {crops} crop{}</summary>\n<ul>\n",
        calls.len(),
        if calls.len() == 1 { "" } else { "s" },
        if crops == 1 { "" } else { "s" },
    );
    for c in calls {
        h.push_str(&format!(
            "<li{}><b>{}</b> ({:.2}): {}<div class=\"crops\">",
            if c.flagged { " class=\"flagged\"" } else { "" },
            escape(&c.what()),
            c.confidence,
            escape(&c.why)
        ));
        for crop in &c.crops {
            let src = format!("{EVIDENCE_DIR}/{}", escape(&crop.file));
            h.push_str(&crop_figure(crop, &src, &c.why));
        }
        h.push_str("</div></li>\n");
    }
    h.push_str("</ul></details>\n");
    h
}

/// The referee's amendments (`fishtrack amend`): what, why, when, the value before →
/// after and the totals before → after; nothing when the record has none.
fn amendments_html(scene: &Scene) -> String {
    let rec = &scene.record;
    let all = rec.amendments();
    if all.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h2>Amendments</h2>\n<p class=\"note\">Calls corrected by a referee after the analysis; the points above are the amended ones.</p>\n");
    h.push_str("<table id=\"amendments\"><tr><th>#</th><th>shot</th><th>what</th><th>before → after</th><th>totals before → after</th><th>why</th><th>when (UTC)</th></tr>\n");
    for (shot, a) in all {
        let (what, before, after) = crate::amend::describe(a, &rec.players);
        h.push_str(&format!(
            "<tr><td>{}</td><td><a href=\"#shot-{shot}\">{shot}</a></td><td>{}</td><td>{} → {}</td><td>{} → {}</td><td>{}</td><td>{}</td></tr>\n",
            a.number,
            escape(&what),
            escape(&before),
            escape(&after),
            escape(&crate::amend::totals_text(&rec.players, &a.scores_before)),
            escape(&crate::amend::totals_text(&rec.players, &a.scores_after)),
            escape(&a.why),
            escape(&a.when),
        ));
    }
    h.push_str("</table>\n");
    h
}

/// Builds the report. `diagrams_png[i]` is the PNG of `record.shots[i]` (missing
/// entries are left out); `notes` are lines shown at the top (e.g. "no video").
pub fn report_html(scene: &Scene, diagrams_png: &[Vec<u8>], notes: &[String]) -> String {
    report_html_with_evidence(scene, diagrams_png, notes, &Written::default())
}

/// As [`report_html`], with the evidence crops `replay` wrote into `evidence/`
/// beside the report: the flagged calls' crops embedded under "Review first", and
/// every call's crops linked, collapsed, in its shot.
pub fn report_html_with_evidence(
    scene: &Scene,
    diagrams_png: &[Vec<u8>],
    notes: &[String],
    evidence: &Written,
) -> String {
    let rec = &scene.record;
    let mut h = String::new();
    let title = format!("Fish match: {}", rec.players.join(" vs "));
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>{}</title>\n", escape(&title)));
    h.push_str("<style>\n");
    h.push_str(CSS);
    h.push_str("</style></head><body>\n");
    h.push_str(&format!("<h1>{}</h1>\n", escape(&title)));
    let verdicts = verdicts(scene);
    let over = verdicts.state.as_ref().map(MatchState::is_over);
    h.push_str(&format!(
        "<p class=\"winner\" id=\"winner\">{}</p>\n",
        escape(&winner_line(scene, over))
    ));
    let mut meta = format!(
        "{} shots · {} players · {:.1} fps",
        rec.shots.len(),
        scene.player_count(),
        scene.fps
    );
    if !rec.video.path.is_empty() {
        meta.push_str(&format!(" · video {}", escape(&rec.video.path)));
    }
    h.push_str(&format!("<p class=\"meta\">{meta}</p>\n"));
    for n in notes.iter().chain(verdicts.note.iter()) {
        h.push_str(&format!("<p class=\"note\">{}</p>\n", escape(n)));
    }

    // The calls to look at first, before anything else the referee reads.
    h.push_str(&review_html(scene, evidence));

    // Players and their final totals (the score table below is built by the script).
    h.push_str("<h2>Players</h2>\n<ul class=\"players\">\n");
    for (i, p) in scene.game.players.iter().enumerate() {
        let total = rec.scores.get(i).copied().unwrap_or(0);
        h.push_str(&format!(
            "<li><span class=\"swatch\" style=\"background:{}\"></span>{} <span class=\"id\">(P{i}, fish:{i}, coin:{i})</span> — <b>{}</b></li>\n",
            escape(&p.color),
            escape(&p.name),
            signed(total)
        ));
    }
    h.push_str("</ul>\n");
    h.push_str("<h2>Score, shot by shot</h2>\n<table id=\"score-table\"></table>\n<p id=\"score-check\" class=\"note\" hidden></p>\n");

    // Violations with evidence.
    h.push_str("<h2>Violations</h2>\n");
    let violations: Vec<_> = rec
        .shots
        .iter()
        .flat_map(|s| s.violations.iter().map(move |v| (s, v)))
        .collect();
    if violations.is_empty() {
        h.push_str("<p>None seen by the camera.</p>\n");
    } else {
        h.push_str("<table id=\"violations\"><tr><th>shot</th><th>code (R11)</th><th>player</th><th>frame</th><th>time</th><th>fine</th><th>evidence</th></tr>\n");
        for (s, v) in violations {
            h.push_str(&format!(
                "<tr><td><a href=\"#shot-{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                s.index,
                s.index,
                escape(&v.code),
                escape(scene.player_name(v.player)),
                v.frame,
                seconds(scene, v.frame),
                signed(v.fine),
                escape(&v.evidence)
            ));
        }
        h.push_str("</table>\n");
    }

    h.push_str(&amendments_html(scene));

    // Legend shared by diagrams and canvases.
    h.push_str(LEGEND);

    // One section per shot.
    for (pos, s) in rec.shots.iter().enumerate() {
        h.push_str(&format!(
            "<section class=\"shot\" id=\"shot-{}\"><h2>Shot {} — {} moves</h2>\n",
            s.index,
            s.index,
            escape(scene.player_name(s.player))
        ));
        let pts: Vec<String> = s.score.iter().map(|v| signed(*v)).collect();
        h.push_str(&format!(
            "<p class=\"meta\">flick frame {} ({}) → rest frame {} ({}) · points {}</p>\n",
            s.flick_frame,
            seconds(scene, s.flick_frame),
            s.rest_frame,
            seconds(scene, s.rest_frame),
            if pts.is_empty() {
                "none".into()
            } else {
                pts.join(" ")
            }
        ));
        match verdicts.points.get(pos) {
            Some(Some(points)) if !points.is_empty() => {
                h.push_str("<ul class=\"points\">\n");
                for e in points {
                    h.push_str(&point_line(scene, e));
                    h.push('\n');
                }
                h.push_str("</ul>\n");
            }
            Some(Some(_)) => {
                h.push_str("<p class=\"points\">No points: nothing lost, no fine.</p>\n")
            }
            _ => {}
        }
        h.push_str("<div class=\"pair\">\n");
        if let Some(png) = diagrams_png.get(pos) {
            h.push_str(&format!(
                "<figure><img class=\"diagram\" alt=\"diagram of shot {}\" src=\"data:image/png;base64,{}\"><figcaption>Diagram (to scale, 100 mm grid)</figcaption></figure>\n",
                s.index,
                base64_encode(png)
            ));
        }
        h.push_str(&format!(
            "<figure class=\"player\" data-pos=\"{pos}\"><canvas width=\"600\" height=\"450\"></canvas>\
             <div class=\"controls\"><button class=\"play\">▶ play</button> \
             <input class=\"scrub\" type=\"range\" min=\"0\" max=\"0\" step=\"1\" value=\"0\"> \
             <select class=\"speed\"><option value=\"0.1\">0.1×</option><option value=\"0.25\">0.25×</option><option value=\"0.5\">0.5×</option><option value=\"1\" selected>1×</option><option value=\"2\">2×</option></select> \
             <span class=\"readout\"></span></div><figcaption>Replay from the tracks</figcaption></figure>\n"
        ));
        h.push_str("</div>\n<ul class=\"events\">\n");
        let mut events: Vec<String> = Vec::new();
        if let Some(first) = &s.first_moved {
            events.push(format!("first item seen moving: {first}"));
        }
        for l in &s.lost {
            events.push(format!(
                "<b class=\"lost\">lost</b> {} at frame {} ({}), exit ({:.0}, {:.0}) mm",
                l.item,
                l.frame,
                seconds(scene, l.frame),
                l.exit.x,
                l.exit.y
            ));
        }
        for (coin, fish) in &s.coins_in_holes {
            events.push(format!("{coin} lies in the hole of {fish}"));
        }
        for st in &s.stacking {
            events.push(format!("{} lies on {}", st.top, st.under));
        }
        for pb in &s.put_back {
            let at = pb
                .pose
                .map(|p| match p.theta {
                    Some(t) => format!(" at ({:.0}, {:.0}) mm, {:.0}°", p.x, p.y, t.to_degrees()),
                    None => format!(" at ({:.0}, {:.0}) mm", p.x, p.y),
                })
                .unwrap_or_default();
            let verdict = pb
                .verdict
                .as_ref()
                .map(|v| format!(" — <b class=\"verdict-{}\">{}</b>", escape(v), escape(v)))
                .unwrap_or_default();
            let reason = if pb.reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape(&pb.reason))
            };
            events.push(format!(
                "put back {}{at} by {}{verdict}{reason}",
                pb.item,
                escape(&pb.rule)
            ));
        }
        for v in &s.violations {
            events.push(format!(
                "<b class=\"lost\">violation {}</b> by {} at frame {}: {}",
                escape(&v.code),
                escape(scene.player_name(v.player)),
                v.frame,
                escape(&v.evidence)
            ));
        }
        if let Some(before) = &s.before {
            for p in &before.placed {
                events.push(format!(
                    "before the flick: {} placed at frame {}",
                    p.item, p.frame
                ));
            }
            for d in &before.disturbed {
                events.push(format!(
                    "before the flick: {} moved {:.1} mm at frame {}",
                    d.item, d.distance_mm, d.frame
                ));
            }
        }
        for n in &s.notes {
            events.push(format!("<i>unsure:</i> {}", escape(n)));
        }
        if events.is_empty() {
            events.push("nothing lost, nothing to put back".into());
        }
        for e in events {
            h.push_str(&format!("<li>{e}</li>\n"));
        }
        h.push_str("</ul>\n");
        if let Some(index) = &evidence.index {
            h.push_str(&shot_evidence_html(index, s.index));
        }
        h.push_str("</section>\n");
    }

    h.push_str("<pre id=\"selftest-result\" hidden></pre>\n");
    // `<` is escaped so that no string in the record can close the script element.
    let data = page_data(scene).to_string().replace('<', "\\u003c");
    h.push_str("<script type=\"application/json\" id=\"match-data\">");
    h.push_str(&data);
    h.push_str("</script>\n<script>\n");
    h.push_str(SCRIPT);
    h.push_str("</script>\n</body></html>\n");
    h
}

/// The report's style sheet, shared by the other pages of this module (`summary`).
pub(crate) const CSS: &str = r#"
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1400px; color: #222; padding: 0 1em; }
h1 { margin-bottom: 0.2em; }
.meta { color: #555; }
.note { background: #fff3cd; border: 1px solid #e0c060; padding: 0.4em 0.8em; }
.players { list-style: none; padding: 0; }
.players li { margin: 0.2em 0; }
.swatch { display: inline-block; width: 1em; height: 1em; border: 1px solid #333; vertical-align: middle; margin-right: 0.4em; }
.id { color: #777; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: right; }
th { background: #eee; }
#violations td:last-child { text-align: left; }
tr.total td { font-weight: bold; background: #f4f4f4; }
.pair { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
figure { margin: 0; }
img.diagram { width: 600px; max-width: 100%; border: 1px solid #ccc; display: block; }
canvas { border: 1px solid #ccc; display: block; }
.controls { margin-top: 0.3em; display: flex; flex-wrap: wrap; gap: 0.5em; align-items: center; }
figure.player { width: 602px; }
.scrub { width: 240px; }
.readout { font-family: monospace; }
.lost { color: #d00; }
.verdict-possible { color: #0a0; } .verdict-optional { color: #e90; } .verdict-impossible { color: #d00; }
.legend span { margin-right: 1.2em; }
tr.crops td { text-align: left; background: #fafafa; }
figure.crop { display: inline-block; margin: 0.2em 0.4em 0.2em 0; vertical-align: top; }
figure.crop img { border: 1px solid #999; display: block; }
figure.crop figcaption { font-size: 0.85em; color: #555; }
details.evidence { margin: 0.5em 0; }
details.evidence li.flagged > b { color: #d00; }
.winner { font-size: 1.3em; font-weight: bold; }
ul.points { list-style: none; padding-left: 0; }
ul.points li { margin: 0.15em 0; }
section.shot { border-top: 2px solid #ddd; margin-top: 1.5em; }
"#;

const LEGEND: &str = r#"<h2>Shots</h2>
<p class="legend"><span>faint shape: start pose</span><span>line with dots: trajectory, one dot per frame</span><span>solid shape: rest pose</span><span style="color:#e60000">✕ and arrow: item lost over the edge there</span><span>dashed outline: legal put-back pose (R6)</span><span>coin ring: put-back verdict (R8) <b class="verdict-possible">possible</b> / <b class="verdict-optional">optional</b> / <b class="verdict-impossible">impossible</b></span></p>
"#;

const SCRIPT: &str = r##"
"use strict";
const pageErrors = [];
window.addEventListener('error', (e) => pageErrors.push(String(e.message || e)));
window.addEventListener('unhandledrejection', (e) => pageErrors.push(String(e.reason)));
const DATA = JSON.parse(document.getElementById('match-data').textContent);
const REC = DATA.record;
const TABLE_RGB = 'rgb(236,226,200)', EDGE_RGB = 'rgb(60,60,60)', LOST_RGB = 'rgb(230,0,0)';

function signed(v) { return v > 0 ? '+' + v : String(v); }
function playerName(p) { return (DATA.players[p] || { name: 'P' + p }).name; }
function parseId(id) { const [kind, k] = id.split(':'); return { fish: kind === 'fish', owner: Number(k) }; }
function mixHex(hex, t) {
  const n = parseInt(hex.slice(1), 16), c = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  return 'rgb(' + c.map((v) => Math.round(v * (1 - t))).join(',') + ')';
}
function itemColor(id) {
  const it = parseId(id), p = DATA.players[it.owner];
  const hex = p ? p.color : '#888888';
  return it.fish ? mixHex(hex, 0) : mixHex(hex, 0.35);
}

// ---- score table, shot by shot, from the record ----
function buildScoreTable() {
  const t = document.getElementById('score-table');
  const n = DATA.players.length;
  let head = '<tr><th>shot</th><th>mover</th>';
  for (let p = 0; p < n; p++) head += '<th>' + esc(playerName(p)) + '</th>';
  for (let p = 0; p < n; p++) head += '<th>total ' + esc(playerName(p)) + '</th>';
  head += '</tr>';
  const totals = new Array(n).fill(0);
  let rows = '';
  for (const s of REC.shots) {
    let r = '<tr class="shot-row" data-shot="' + s.index + '"><td><a href="#shot-' + s.index + '">' + s.index + '</a></td><td>' + esc(playerName(s.player)) + '</td>';
    for (let p = 0; p < n; p++) { const v = s.score[p] || 0; totals[p] += v; r += '<td class="pts">' + signed(v) + '</td>'; }
    for (let p = 0; p < n; p++) r += '<td class="run">' + signed(totals[p]) + '</td>';
    rows += r + '</tr>';
  }
  let foot = '<tr class="total"><td>total</td><td></td>';
  for (let p = 0; p < n; p++) foot += '<td class="final">' + signed(REC.scores[p] || 0) + '</td>';
  for (let p = 0; p < n; p++) foot += '<td></td>';
  t.innerHTML = head + rows + foot + '</tr>';
  const off = totals.map((v, p) => v !== (REC.scores[p] || 0));
  if (off.some((x) => x)) {
    const c = document.getElementById('score-check');
    c.hidden = false;
    c.textContent = 'The record\'s totals (' + REC.scores.join(', ') + ') differ from the sum of its shots (' + totals.join(', ') + ').';
  }
}
function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c])); }

// ---- canvas replay of one shot ----
function lastRowAt(rows, f) {
  let lo = 0, hi = rows.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (Math.round(rows[m][0]) <= f) lo = m + 1; else hi = m; }
  return lo > 0 ? rows[lo - 1] : null;
}
class ShotPlayer {
  constructor(fig, shot) {
    this.shot = shot;
    this.canvas = fig.querySelector('canvas');
    this.ctx = this.canvas.getContext('2d', { willReadFrequently: true });
    this.button = fig.querySelector('.play');
    this.scrub = fig.querySelector('.scrub');
    this.speed = fig.querySelector('.speed');
    this.readout = fig.querySelector('.readout');
    const [[x0, y0], [x1, y1]] = DATA.bounds;
    this.margin = 24;
    this.scale = (this.canvas.width - 2 * this.margin) / Math.max(x1 - x0, 1);
    this.canvas.height = Math.ceil((y1 - y0) * this.scale + 2 * this.margin);
    this.x0 = x0; this.y1 = y1;
    this.first = shot.flick_frame; this.last = shot.rest_frame;
    this.frame = this.first; this.t = this.first; this.playing = false; this.timer = null;
    this.scrub.min = this.first; this.scrub.max = this.last; this.scrub.value = this.first;
    const ids = new Set([...Object.keys(shot.start || {}), ...Object.keys(shot.tracks || {})]);
    this.ids = [...ids].sort();
    this.lostAt = {};
    for (const l of shot.lost || []) this.lostAt[l.item] = l;
    this.button.addEventListener('click', () => this.toggle());
    this.scrub.addEventListener('input', () => { this.pause(); this.seek(Number(this.scrub.value)); });
    this.draw();
  }
  px(x, y) { return [this.margin + (x - this.x0) * this.scale, this.margin + (this.y1 - y) * this.scale]; }
  poseAt(id, f) {
    const s = this.shot, lost = this.lostAt[id];
    if (lost && f >= lost.frame) return null;
    if (f >= s.rest_frame && s.end && s.end[id]) return s.end[id];
    const rows = (s.tracks || {})[id];
    if (rows) { const r = lastRowAt(rows, f); if (r) return { x: r[1], y: r[2], theta: r.length > 3 ? r[3] : 0 }; }
    return (s.start || {})[id] || null;
  }
  toggle() { if (this.playing) this.pause(); else this.play(); }
  play() {
    if (this.frame >= this.last) this.seek(this.first);
    this.playing = true; this.button.textContent = '❚❚ pause';
    this.wall = performance.now();
    const tick = () => {
      if (!this.playing) return;
      const now = performance.now();
      this.t += (now - this.wall) / 1000 * DATA.fps * Number(this.speed.value);
      this.wall = now;
      if (this.t >= this.last) { this.t = this.last; this.setFrame(this.last); this.pause(); return; }
      this.setFrame(Math.floor(this.t));
      this.timer = setTimeout(tick, 16);
    };
    this.timer = setTimeout(tick, 16);
  }
  pause() { this.playing = false; clearTimeout(this.timer); this.button.textContent = '▶ play'; }
  seek(f) { this.t = f; this.setFrame(f); }
  setFrame(f) { if (f !== this.frame) { this.frame = f; this.scrub.value = f; } this.draw(); }
  draw() {
    const c = this.ctx, s = this.shot, f = this.frame, k = this.scale;
    c.fillStyle = '#fff'; c.fillRect(0, 0, this.canvas.width, this.canvas.height);
    c.beginPath();
    DATA.table.forEach(([x, y], i) => { const [u, v] = this.px(x, y); if (i) c.lineTo(u, v); else c.moveTo(u, v); });
    c.closePath(); c.fillStyle = TABLE_RGB; c.fill(); c.lineWidth = 2; c.strokeStyle = EDGE_RGB; c.stroke();
    // Trails up to the current frame, older parts fainter.
    for (const [id, rows] of Object.entries(s.tracks || {})) {
      c.strokeStyle = itemColor(id); c.lineWidth = 2;
      let prev = null;
      for (const r of rows) {
        if (Math.round(r[0]) > f) break;
        const p = this.px(r[1], r[2]);
        if (prev) { c.globalAlpha = Math.max(0.15, 1 - (f - r[0]) / (2 * DATA.fps)); c.beginPath(); c.moveTo(prev[0], prev[1]); c.lineTo(p[0], p[1]); c.stroke(); }
        prev = p;
      }
      c.globalAlpha = 1;
    }
    // Items: fish first, coins on top.
    const fishFirst = [...this.ids].sort((a, b) => (parseId(b).fish - parseId(a).fish));
    for (const id of fishFirst) {
      const pose = this.poseAt(id, f);
      if (!pose) continue;
      const it = parseId(id);
      c.fillStyle = itemColor(id); c.strokeStyle = '#1e1e1e'; c.lineWidth = 1;
      c.beginPath();
      if (it.fish) {
        const th = pose.theta || 0, co = Math.cos(th), si = Math.sin(th);
        DATA.fish_outline.forEach(([x, y], i) => {
          const [u, v] = this.px(pose.x + co * x - si * y, pose.y + si * x + co * y);
          if (i) c.lineTo(u, v); else c.moveTo(u, v);
        });
        c.closePath();
        const [hu, hv] = this.px(pose.x, pose.y);
        c.moveTo(hu + DATA.hole_radius * k, hv);
        c.arc(hu, hv, DATA.hole_radius * k, 0, 2 * Math.PI);
        c.fill('evenodd'); c.stroke();
      } else {
        const [u, v] = this.px(pose.x, pose.y);
        c.arc(u, v, DATA.coin_radius * k, 0, 2 * Math.PI); c.fill(); c.stroke();
      }
      const [u, v] = this.px(pose.x, pose.y);
      c.fillStyle = '#000'; c.font = '11px sans-serif';
      c.fillText(id, u + 6, v - (it.fish ? 12 : -14));
    }
    // Lost items: a cross where each crossed the edge.
    for (const l of s.lost || []) {
      if (l.frame > f) continue;
      const [u, v] = this.px(l.exit.x, l.exit.y);
      c.strokeStyle = LOST_RGB; c.lineWidth = 3;
      c.beginPath(); c.moveTo(u - 7, v - 7); c.lineTo(u + 7, v + 7); c.moveTo(u - 7, v + 7); c.lineTo(u + 7, v - 7); c.stroke();
      c.fillStyle = LOST_RGB; c.font = 'bold 12px sans-serif'; c.fillText(l.item + ' lost', u + 9, v - 9);
    }
    const secs = f / DATA.fps, rel = (f - s.flick_frame) / DATA.fps;
    this.readout.textContent = 'frame ' + f + ' · ' + secs.toFixed(3) + ' s (flick +' + rel.toFixed(3) + ' s)';
  }
}

// ---- self-test: press play on the first shot that moves, compare the canvas ----
function movingItem(shot) {
  for (const [id, rows] of Object.entries(shot.tracks || {})) {
    if (rows.length < 2) continue;
    const a = rows[0], b = rows[rows.length - 1];
    if (Math.hypot(b[1] - a[1], b[2] - a[2]) > 5) return id;
  }
  return null;
}
function selftest(players) {
  const out = document.getElementById('selftest-result');
  const res = { errors: pageErrors, shots: REC.shots.length, players: players.length };
  const report = () => { out.textContent = JSON.stringify(res); out.hidden = false; document.body.setAttribute('data-selftest', 'done'); };
  const pl = players.find((p) => movingItem(p.shot));
  if (!pl) { res.error = 'no shot with a moving item'; report(); return; }
  const id = movingItem(pl.shot);
  pl.seek(pl.first);
  const start = pl.poseAt(id, pl.first);
  const it = parseId(id);
  // Sample a pixel on the item's material: the centre of a coin, mid-tag for a fish.
  let sx = start.x, sy = start.y;
  if (it.fish) {
    const far = DATA.fish_outline.reduce((m, p) => (Math.hypot(p[0], p[1]) > Math.hypot(m[0], m[1]) ? p : m), [0, 0]);
    const lx = far[0] * 0.75, ly = far[1] * 0.75, th = start.theta || 0;
    sx += Math.cos(th) * lx - Math.sin(th) * ly; sy += Math.sin(th) * lx + Math.cos(th) * ly;
  }
  const [u, v] = pl.px(sx, sy).map(Math.floor);
  const pixel = () => Array.from(pl.ctx.getImageData(u, v, 1, 1).data.slice(0, 3));
  const before = pl.ctx.getImageData(0, 0, pl.canvas.width, pl.canvas.height).data;
  res.item = id; res.shot = pl.shot.index; res.sample_px = [u, v];
  res.pixel_before = pixel(); res.frame_before = pl.frame; res.readout_before = pl.readout.textContent;
  pl.button.click();
  res.playing_after_click = pl.playing;
  setTimeout(() => {
    const after = pl.ctx.getImageData(0, 0, pl.canvas.width, pl.canvas.height).data;
    let changed = 0;
    for (let i = 0; i < after.length; i += 4) if (after[i] !== before[i] || after[i + 1] !== before[i + 1] || after[i + 2] !== before[i + 2]) changed++;
    res.changed_pixels = changed; res.pixel_after = pixel(); res.frame_after = pl.frame;
    res.readout_after = pl.readout.textContent;
    res.item_color = itemColor(id);
    report();
  }, 1500);
}

let players = [];
try {
  buildScoreTable();
  document.querySelectorAll('figure.player').forEach((fig) => {
    const shot = REC.shots[Number(fig.dataset.pos)];
    if (shot) players.push(new ShotPlayer(fig, shot));
  });
} catch (e) { pageErrors.push(String(e && e.stack || e)); }
if (/selftest/.test(location.hash + location.search)) selftest(players);
"##;

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_scene(scores: Vec<i32>) -> Scene {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/replay/record.json");
        let mut rec = crate::record::Record::load(std::path::Path::new(path)).expect("fixture");
        rec.scores = scores;
        Scene::new(rec, None, None).expect("valid fixture")
    }

    #[test]
    fn winner_line_names_the_winner_a_draw_or_the_leader() {
        let s = fixture_scene(vec![2, -1]);
        assert_eq!(
            winner_line(&s, Some(true)),
            "Winner: Anna — final totals Anna +2, Boris -1"
        );
        let s = fixture_scene(vec![0, 0]);
        assert_eq!(
            winner_line(&s, Some(true)),
            "Draw: Anna and Boris — final totals Anna 0, Boris 0"
        );
        // Two of six moves made: a leader, not a winner.
        let s = fixture_scene(vec![-1, 1]);
        let n = s.record.shots.len();
        assert_eq!(
            winner_line(&s, Some(false)),
            format!("Match not finished ({n} of 6 moves): Boris leads — totals so far Anna -1, Boris +1")
        );
        assert_eq!(winner_line(&s, None), winner_line(&s, Some(false)));
    }

    #[test]
    fn each_shot_lists_its_points_with_rules_and_whose_items() {
        let s = fixture_scene(vec![1, -1]);
        let html = report_html(&s, &[], &[]);
        let v = verdicts(&s);
        let mut lines = 0;
        for (shot, points) in s.record.shots.iter().zip(&v.points) {
            let points = points
                .as_ref()
                .expect("the fixture's points are the engine's");
            let at = html
                .find(&format!("id=\"shot-{}\"", shot.index))
                .expect("a section");
            let section = &html[at..at + html[at..].find("</section>").expect("closed")];
            assert_eq!(section.matches("<li class=\"rule\"").count(), points.len());
            for e in points {
                lines += 1;
                let who = format!("{} {}", s.player_name(e.player), signed(e.points));
                assert!(
                    section.contains(&format!("data-rule=\"{}\"", e.rule)),
                    "{section}"
                );
                assert!(section.contains(&escape(&e.reason)), "{section}");
                assert!(section.contains(&who), "`{who}` missing: {section}");
            }
        }
        assert!(lines > 0, "the fixture has points");
        assert!(html.contains("id=\"winner\""), "a winner line");
        assert_eq!(
            owners_in(&s, "lost fish:0, coin:1"),
            ["fish:0 is Anna's", "coin:1 is Boris's"]
        );
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(input.as_bytes()), want);
        }
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
