//! `live`'s scoreboard page in headless Chromium, driven through the DevTools
//! protocol (a websocket to the browser, `tungstenite`): an event the board publishes
//! shows on the page within 0.5 s (measured from the publish to the DOM holding it:
//! a MutationObserver set on the page before the publish answers when the text
//! appears), and the page comes back by itself when the server restarts (the board
//! stopped, the page says it is disconnected, a new board on the same port, an event
//! published: the page shows it). Only 127.0.0.1.
//! Without chromium the test fails when `CI` is set and otherwise says loudly that it
//! skipped.

use fishtrack::driver::board::Board;
use fishtrack::driver::{CameraState, Event, EventLine};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bound from a publish to the page showing it.
const SHOWN_WITHIN: Duration = Duration::from_millis(500);

/// Debian's Chromium, for the tests of pages (this module's and `replay_html`'s);
/// none when it is missing, said loudly with what was not tested (`untested`), and
/// a failure when `CI` is set.
pub(crate) fn chromium(untested: &str) -> Option<PathBuf> {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return Some(PathBuf::from(c));
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!("chromium is missing (scripts/setup installs it) and CI is set");
    }
    eprintln!(
        "\n*** SKIPPED: chromium not found at /usr/bin/chromium (scripts/setup installs it); {untested} was NOT tested ***\n"
    );
    None
}

/// How the tests start Chromium: headless, as root, and without the background
/// connections this machine's closed network refuses.
pub(crate) const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// A headless Chromium showing one page, and its DevTools connection to that page.
struct Browser {
    child: Child,
    devtools: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn open(binary: &Path, url: &str) -> Browser {
        let profile = tempfile::tempdir().expect("tempdir");
        let log = std::fs::File::create(profile.path().join("stderr.txt")).expect("log");
        let child = Command::new(binary)
            .args(HEADLESS)
            .args([
                "--window-size=1280,720",
                "--remote-debugging-address=127.0.0.1",
                // Port 0: the browser picks one and writes it to DevToolsActivePort.
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("run chromium");
        let mut browser = Browser {
            child,
            devtools: connect_page(profile.path(), url),
            next_id: 0,
            _profile: profile,
        };
        browser
            .devtools
            .get_mut()
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        browser
    }

    /// Calls a DevTools method and returns its result (events in between are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        match self.try_call(method, &params) {
            Ok(result) => result,
            Err(error) => panic!("{method}: {error}"),
        }
    }

    /// Calls a DevTools method: its result, or the error the browser answered.
    fn try_call(&mut self, method: &str, params: &Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.devtools
            .send(tungstenite::Message::text(message))
            .expect("send to chromium");
        loop {
            let message = self.devtools.read().expect("chromium answers");
            let Ok(text) = message.to_text() else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if v["id"] == id {
                return match v.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(v["result"].clone()),
                };
            }
        }
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its value.
    /// A page still loading has no context to evaluate in for a moment ("Cannot find
    /// default execution context"): asked again until it has, for up to 10 s.
    fn eval(&mut self, expression: &str) -> Value {
        let params = json!({"expression": expression, "returnByValue": true, "awaitPromise": true});
        let began = Instant::now();
        let r = loop {
            match self.try_call("Runtime.evaluate", &params) {
                Ok(r) => break r,
                Err(error)
                    if error.to_string().contains("execution context")
                        && began.elapsed() < Duration::from_secs(10) =>
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(error) => panic!("Runtime.evaluate {expression}: {error}"),
            }
        };
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }

    fn text(&mut self) -> String {
        // The page may not be parsed yet when the browser is first asked.
        self.eval("document.body ? document.body.innerText : ''")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Waits (up to `limit`) until the page's text holds `needle`; how long it took.
    fn wait_for_text(&mut self, needle: &str, limit: Duration) -> Duration {
        let began = Instant::now();
        loop {
            let text = self.text();
            if text.contains(needle) {
                return began.elapsed();
            }
            assert!(
                began.elapsed() < limit,
                "the page never showed {needle:?} in {limit:?}; it shows:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Publishes `line` on `board` and returns how long until the page's text holds
    /// `needle`: a MutationObserver is set first, and answers the moment it does.
    fn shown_after_publish(&mut self, board: &Board, line: &EventLine, needle: &str) -> Duration {
        let armed = self.eval(&format!(
            "(() => {{ const has = () => document.body.innerText.includes({n});
              if (has()) return false;
              window.__shown = new Promise(done => new MutationObserver((_, o) => {{
                if (has()) {{ o.disconnect(); done(true); }}
              }}).observe(document.body, {{childList: true, subtree: true, characterData: true}}));
              return true; }})()",
            n = json!(needle)
        ));
        assert_eq!(
            armed,
            json!(true),
            "{needle:?} is on the page before the publish"
        );
        let published = Instant::now();
        board.publish(line);
        assert_eq!(self.eval("window.__shown"), json!(true));
        published.elapsed()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The DevTools websocket of the page showing `url`, once the browser says its port.
fn connect_page(profile: &Path, url: &str) -> tungstenite::WebSocket<TcpStream> {
    let limit = Instant::now() + Duration::from_secs(60);
    let stderr = || std::fs::read_to_string(profile.join("stderr.txt")).unwrap_or_default();
    loop {
        assert!(
            Instant::now() < limit,
            "chromium's DevTools never answered; its stderr:\n{}",
            stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
        let Ok(port) = std::fs::read_to_string(profile.join("DevToolsActivePort")) else {
            continue;
        };
        let Some(port) = port
            .lines()
            .next()
            .and_then(|p| p.trim().parse::<u16>().ok())
        else {
            continue;
        };
        let Some(list) = http_get(port, "/json/list") else {
            continue;
        };
        let Ok(Value::Array(targets)) = serde_json::from_str::<Value>(&list) else {
            continue;
        };
        let page = targets
            .iter()
            .find(|t| t["type"] == "page" && t["url"].as_str() == Some(url));
        let Some(ws) = page.and_then(|t| t["webSocketDebuggerUrl"].as_str()) else {
            continue;
        };
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to chromium");
        let (socket, _) = tungstenite::client(ws, stream).expect("devtools handshake");
        return socket;
    }
}

/// A GET on chromium's DevTools HTTP port: the body.
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    // Read up to the body's length: the browser may keep the connection open.
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let length = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(usize::MAX);
        if body.len() >= length {
            return head.starts_with("HTTP/1.1 200").then(|| body.to_string());
        }
    }
}

fn line(frame: u64, event: Event) -> EventLine {
    EventLine::new(frame, frame, 30.0, event)
}

fn match_ready(players: &[&str]) -> EventLine {
    line(
        0,
        Event::MatchReady {
            players: players.iter().map(|p| p.to_string()).collect(),
            moves_per_player: 3,
            scores: vec![0; players.len()],
            mover: 0,
            poses: BTreeMap::new(),
            table: None,
            colors: vec![],
            amendments: vec![],
            amend_refused: None,
        },
    )
}

fn shot_over(shot: usize, scores: Vec<i32>) -> Event {
    let n = scores.len();
    Event::ShotOver {
        shot,
        mover: shot % n,
        counted: true,
        flick_frame: 90 + shot as u64,
        first_moved: None,
        score: vec![0; n],
        points: vec![],
        scores,
        next_mover: (shot + 1) % n,
        moves_made: vec![1; n],
        rest: BTreeMap::new(),
        off_table: vec![],
        duties: vec![],
        notes: vec![],
        paths: BTreeMap::new(),
    }
}

fn board_on(addr: SocketAddr) -> Board {
    // A port just freed can stay taken a moment (a connection still closing).
    let limit = Instant::now() + Duration::from_secs(10);
    loop {
        match Board::serve(addr) {
            Ok(b) => return b,
            Err(e) if Instant::now() > limit => panic!("cannot serve on {addr} again: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn an_event_published_shows_on_the_page_within_half_a_second() {
    let Some(chromium) = chromium("the scoreboard page") else {
        return;
    };
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    board.publish(&match_ready(&["Anna", "Boris"]));
    let url = format!("http://{}/", board.addr());
    let mut page = Browser::open(&chromium, &url);
    page.wait_for_text("Anna", Duration::from_secs(30));
    let mut took = Vec::new();
    for k in 0..6usize {
        let (event, needle) = match k % 3 {
            0 => (
                shot_over(k, vec![k as i32 + 7, -(k as i32)]),
                format!("shot {k} ("),
            ),
            1 => (
                Event::MoveReady {
                    number: 40 + k as u32,
                    shot: k + 1,
                    mover: 1,
                    duties: vec![],
                },
                format!("Move {}: Boris", 40 + k),
            ),
            _ => (
                Event::Camera {
                    state: if k == 2 {
                        CameraState::Lost
                    } else {
                        CameraState::FramesDropped
                    },
                    dropped: Some(k as u64),
                    detail: String::new(),
                    shift_mm: None,
                    table: None,
                    refused: None,
                },
                if k == 2 {
                    "camera lost".to_string()
                } else {
                    format!("({k} frames)")
                },
            ),
        };
        let event = line(200 + k as u64, event);
        took.push(page.shown_after_publish(&board, &event, &needle));
    }
    let slowest = took.iter().max().copied().unwrap_or_default();
    eprintln!("live_board: publish to the page's DOM: {took:?}, slowest {slowest:?}");
    assert!(
        slowest <= SHOWN_WITHIN,
        "an event took {slowest:?} to show (all: {took:?})"
    );
    // The scores are the last shot_over's.
    let text = page.text();
    assert!(text.contains("10") && text.contains("-3"), "{text}");
}

#[test]
fn the_page_comes_back_when_the_server_restarts() {
    let Some(chromium) = chromium("the scoreboard page") else {
        return;
    };
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    let addr = board.addr();
    board.publish(&match_ready(&["Anna", "Boris"]));
    let mut page = Browser::open(&chromium, &format!("http://{addr}/"));
    page.wait_for_text("Anna", Duration::from_secs(30));
    board.stop();
    page.wait_for_text("disconnected", Duration::from_secs(10));
    // Down for a while: the browser's retries are refused meanwhile.
    std::thread::sleep(Duration::from_millis(1500));
    let board = board_on(addr);
    let restarted = Instant::now();
    board.publish(&match_ready(&["Clara", "Dmitri"]));
    board.publish(&line(100, shot_over(0, vec![2, -1])));
    let back = page.wait_for_text("Clara", Duration::from_secs(15));
    eprintln!(
        "live_board: the page showed the restarted server's events {:?} after it started",
        restarted.elapsed().max(back)
    );
    let text = page.text();
    assert!(!text.contains("disconnected"), "{text}");
    assert!(!text.contains("Anna"), "the old match is gone: {text}");
    // And it goes on receiving from the new server.
    let took = page.shown_after_publish(
        &board,
        &line(
            300,
            Event::MoveReady {
                number: 77,
                shot: 1,
                mover: 1,
                duties: vec![],
            },
        ),
        "Move 77: Dmitri",
    );
    assert!(took <= SHOWN_WITHIN, "{took:?}");
}

#[test]
fn the_move_timer_runs_from_move_ready_and_stops_at_the_flick() {
    let Some(chromium) = chromium("the scoreboard page") else {
        return;
    };
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    board.publish(&match_ready(&["Anna", "Boris"]));
    let mut page = Browser::open(&chromium, &format!("http://{}/", board.addr()));
    page.wait_for_text("Anna", Duration::from_secs(30));
    let ready = Event::MoveReady {
        number: 5,
        shot: 4,
        mover: 0,
        duties: vec![],
    };
    page.shown_after_publish(&board, &line(400, ready), "Move 5: Anna");
    let timer = |page: &mut Browser| -> String {
        page.eval("document.getElementById('timer').textContent")
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(timer(&mut page), "0 s");
    page.wait_for_text("2 s", Duration::from_secs(5));
    let flick = Event::Flick {
        shot: 4,
        mover: 0,
        first_moved: None,
        first_moved_known: false,
    };
    page.shown_after_publish(&board, &line(470, flick), "flicked at");
    let stopped = timer(&mut page);
    let seconds = |t: &str| -> u64 {
        t.trim_start_matches("flicked at ")
            .trim_end_matches(" s")
            .parse()
            .unwrap_or_else(|_| panic!("a timer: {t:?}"))
    };
    assert!(seconds(&stopped) >= 2, "{stopped}");
    // Stopped at the flick.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(timer(&mut page), stopped);
    // Withdrawn: it runs on from the move's ready time.
    let withdrawn = Event::FlickWithdrawn {
        shot: 4,
        mover: 0,
        detail: String::new(),
    };
    let published = Instant::now();
    board.publish(&line(480, withdrawn));
    let running = loop {
        let t = timer(&mut page);
        if !t.contains("flicked") {
            break t;
        }
        assert!(published.elapsed() <= SHOWN_WITHIN, "still {t:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        seconds(&running) > seconds(&stopped),
        "{running} after {stopped}"
    );
    // R11 5 told as it happens is a call on the page, and once judged not again.
    let late = |judged| Event::Violation {
        shot: 4,
        code: "5".into(),
        player: 0,
        evidence: String::new(),
        fine: 0,
        judged,
    };
    page.shown_after_publish(&board, &line(1300, late(false)), "R11 5 (over 30 s)");
    board.publish(&line(1400, late(true)));
    board.publish(&line(1410, shot_over(4, vec![0, 0])));
    page.wait_for_text("shot 4 (", Duration::from_secs(5));
    let text = page.text();
    assert_eq!(text.matches("R11 5").count(), 1, "{text}");
}

/// A match after a shot that knocked Boris's fish and coin off: the table, the rest
/// poses, the shot's paths, the exits, and the duties (the fish's legal pose by R6b,
/// the coin's hole, which it may go back to).
fn a_shot_with_duties() -> Vec<EventLine> {
    use fishtrack::config::Items;
    use fishtrack::driver::{Duty, TableShape};
    use fishtrack::model::{ItemId, Pose};
    let ready = Event::MatchReady {
        players: vec!["Anna".into(), "Boris".into()],
        moves_per_player: 3,
        scores: vec![0, 0],
        mover: 0,
        poses: BTreeMap::new(),
        table: Some(TableShape::new(
            vec![[0.0, 0.0], [1000.0, 0.0], [1000.0, 700.0], [0.0, 700.0]],
            &Items::default_set(),
        )),
        colors: vec!["#d62728".into(), "#1f77b4".into()],
        amendments: vec![],
        amend_refused: None,
    };
    let (fish0, coin0, fish1, coin1) = (
        ItemId::fish(0),
        ItemId::coin(0),
        ItemId::fish(1),
        ItemId::coin(1),
    );
    let lost = |item, x, y| Event::ItemLost {
        shot: 0,
        item,
        exit: Pose::coin(x, y),
    };
    let duties = vec![
        Duty {
            item: fish1,
            pose: Some(Pose::fish(620.0, 60.0, 0.0)),
            rule: "R6b".into(),
            verdict: None,
            may_go_back: None,
            reason: String::new(),
        },
        Duty {
            item: coin1,
            pose: Some(Pose::coin(300.0, 420.0)),
            rule: "R8b".into(),
            verdict: Some("optional".into()),
            may_go_back: Some(true),
            reason: String::new(),
        },
    ];
    let over = Event::ShotOver {
        shot: 0,
        mover: 0,
        counted: true,
        flick_frame: 30,
        first_moved: Some(fish0),
        score: vec![2, 0],
        points: vec![],
        scores: vec![2, 0],
        next_mover: 1,
        moves_made: vec![1, 0],
        rest: BTreeMap::from([
            (fish0, Pose::fish(300.0, 420.0, 0.6)),
            (coin0, Pose::coin(700.0, 500.0)),
        ]),
        off_table: vec![fish1, coin1],
        duties: duties.clone(),
        notes: vec![],
        paths: BTreeMap::from([
            (fish0, vec![[150.0, 300.0], [220.0, 360.0], [300.0, 420.0]]),
            (fish1, vec![[500.0, 200.0], [560.0, 100.0], [610.0, 0.0]]),
            (coin1, vec![[520.0, 210.0], [700.0, 120.0], [820.0, 0.0]]),
        ]),
    };
    vec![
        line(0, ready),
        line(40, lost(fish1, 610.0, 0.0)),
        line(42, lost(coin1, 820.0, 0.0)),
        line(90, over),
        line(
            90,
            Event::MoveReady {
                number: 2,
                shot: 1,
                mover: 1,
                duties,
            },
        ),
    ]
}

#[test]
fn the_table_diagram_shows_what_must_be_put_back_and_the_last_shot() {
    let Some(chromium) = chromium("the scoreboard's table diagram") else {
        return;
    };
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    for e in a_shot_with_duties() {
        board.publish(&e);
    }
    let mut page = Browser::open(&chromium, &format!("http://{}/", board.addr()));
    page.wait_for_text("R6b", Duration::from_secs(30));
    let text = page.text();
    assert!(text.contains("Boris's fish R6b"), "{text}");
    assert!(text.contains("Boris's coin R8b may go back"), "{text}");
    // Shots are numbered from 0 everywhere on the page, as the amendments' summaries
    // and `fishtrack amend --shot N` number them.
    assert!(text.contains("After shot 0 (Anna)"), "{text}");
    assert!(text.contains("shot 0 (Anna)"), "{text}");
    assert!(!text.contains("shot 1"), "{text}");
    // On the table: the two duties dashed (the fish's outline, the coin's circle),
    // labelled with the rule and the verdict; the two exits crossed; three paths;
    // the two items at rest.
    let svg = page.eval(
        "(() => { const s = document.getElementById('table');
           return { dashed: s.querySelectorAll('[stroke-dasharray]').length,
                    dashedFish: s.querySelectorAll('polygon[stroke-dasharray]').length,
                    paths: s.querySelectorAll('polyline').length,
                    exits: s.querySelectorAll('path').length,
                    labels: [...s.querySelectorAll('text')].map(t => t.textContent),
                    box: s.getBoundingClientRect().width }; })()",
    );
    assert_eq!(svg["dashed"], 2, "{svg}");
    assert_eq!(svg["dashedFish"], 1, "{svg}");
    assert_eq!(svg["paths"], 3, "{svg}");
    // Each exit a cross drawn twice (a red one under the owner's colour).
    assert_eq!(svg["exits"], 4, "{svg}");
    let labels = svg["labels"].to_string();
    for want in [
        "Boris's fish R6b",
        "Boris's coin R8b may go back",
        "fish",
        "coin",
    ] {
        assert!(labels.contains(want), "{want}: {labels}");
    }
    // A screen's half at 1280x720.
    assert!(svg["box"].as_f64().unwrap_or(0.0) > 450.0, "{svg}");
    if let Some(path) = std::env::var_os("FISHTRACK_SCREENSHOT") {
        let shot = page.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = shot["data"].as_str().unwrap_or_default();
        std::fs::write(&path, base64(png)).expect("write the screenshot");
    }
    // The page amends: the form filled and sent as a referee would, the driver's
    // (here the test's) one-line answer shown.
    page.eval(
        "(() => { document.getElementById('fix').click();
           document.getElementById('a-what').value = 'not-lost';
           document.getElementById('a-what').dispatchEvent(new Event('change'));
           document.getElementById('a-item').value = 'coin:1';
           document.getElementById('a-why').value = 'it hung on the edge';
           document.querySelector('#amend .go').click(); return true; })()",
    );
    let asked = {
        let limit = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(a) = board.amendment() {
                break a;
            }
            assert!(Instant::now() < limit, "the page sent no amendment");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let fishtrack::driver::Correction::Amend(request) = &asked.correction else {
        panic!("an amendment, not {:?}", asked.correction);
    };
    assert_eq!(request.shot, 0);
    assert_eq!(request.why, "it hung on the edge");
    let option = page.eval("document.getElementById('a-shot').options[0].textContent");
    assert_eq!(option.as_str(), Some("shot 0 (Anna)"), "{option}");
    asked.answer(Err("shot 0: coin:1 was seen off the table".into()));
    page.wait_for_text("coin:1 was seen off the table", Duration::from_secs(5));

    // An amendment made is listed (number, what, why) with its Undo; the Undo sends
    // {"undo": K}, the answer is shown, and once the undo is told the list is empty.
    let made = amended(
        1,
        false,
        "shot 0: coin:1 not lost: lost, exit (820, 0) → on the table",
    );
    board.publish(&made);
    page.wait_for_text("Undo", Duration::from_secs(5));
    let listed = page.eval(
        "(() => [...document.querySelectorAll('#a-made [data-amendment]')]
            .map(r => r.getAttribute('data-amendment') + ' ' + r.innerText))()",
    );
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let row = listed[0].as_str().unwrap_or_default();
    assert!(row.starts_with("1 1 shot 0: coin:1 not lost"), "{row}");
    assert!(row.contains("(it hung on the edge)"), "{row}");
    page.eval("(() => { document.querySelector('#a-made button[data-undo=\"1\"]').click(); return true; })()");
    let asked = {
        let limit = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(a) = board.amendment() {
                break a;
            }
            assert!(Instant::now() < limit, "the page sent no undo");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    assert_eq!(asked.correction, fishtrack::driver::Correction::Undo(1));
    asked.answer(Ok("undid amendment 1: shot 0: coin:1 not lost".into()));
    page.wait_for_text("undid amendment 1: shot 0", Duration::from_secs(5));
    board.publish(&amended(
        1,
        true,
        "shot 0: coin:1 not lost (back to: lost, exit (820, 0); was: on the table)",
    ));
    page.wait_for_text("back to: lost", Duration::from_secs(5));
    let rows = page.eval("document.querySelectorAll('#a-made [data-amendment]').length");
    assert_eq!(rows, json!(0));
}

/// An `amended` event of shot 0 (coin:1 not lost), made or (`undone`) undone.
fn amended(number: u32, undone: bool, summary: &str) -> EventLine {
    let coin1 = fishtrack::model::ItemId::coin(1);
    line(
        100,
        Event::Amended {
            number,
            undone,
            shot: 0,
            change: fishtrack::record::Change::NotLost { item: coin1 },
            why: "it hung on the edge".into(),
            when: "2026-12-03T10:45:00Z".into(),
            summary: summary.into(),
            scores_before: vec![2, 0],
            scores: if undone { vec![2, 0] } else { vec![1, 0] },
            shots_changed: vec![],
            number_next: 2,
            next_mover: 1,
            moves_made: vec![1, 0],
            rest: BTreeMap::new(),
            off_table: if undone { vec![coin1] } else { vec![] },
            exits: BTreeMap::new(),
            duties: vec![],
            violations: vec![0, 0],
            over: false,
        },
    )
}

/// Standard base64 decoding (DevTools sends screenshots so).
#[test]
fn a_resumed_match_lists_its_earlier_amendments_and_a_state_start_says_why_none() {
    let Some(chromium) = chromium("the amendments a match_ready carries") else {
        return;
    };
    let ready = |amendments, amend_refused| {
        line(
            0,
            Event::MatchReady {
                players: vec!["Anna".into(), "Boris".into()],
                moves_per_player: 3,
                scores: vec![1, -3],
                mover: 1,
                poses: BTreeMap::new(),
                table: None,
                colors: vec![],
                amendments,
                amend_refused,
            },
        )
    };
    // A run resumed (or continued from a record) after amendment 2 was made: listed
    // with its Undo, as one made in this run is.
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    board.publish(&ready(
        vec![fishtrack::driver::MadeBefore {
            number: 2,
            shot: 1,
            summary: "shot 1: coin:0 lost: on the table at (10, 20) → lost".into(),
            why: "behind the hand".into(),
        }],
        None,
    ));
    board.publish(&line(40, shot_over(2, vec![1, -3])));
    let mut page = Browser::open(&chromium, &format!("http://{}/", board.addr()));
    page.wait_for_text("shot 2 (", Duration::from_secs(30));
    assert_eq!(
        page.eval("document.getElementById('fix').hidden"),
        json!(false)
    );
    // The list is in the form: open it.
    page.eval("document.getElementById('fix').click()");
    page.wait_for_text("behind the hand", Duration::from_secs(5));
    let row = page.eval("document.querySelector('#a-made [data-amendment=\"2\"]').innerText");
    assert!(
        row.as_str()
            .is_some_and(|r| r.contains("shot 1: coin:0 lost")),
        "{row}"
    );
    assert_eq!(
        page.eval("document.getElementById('fix').hidden"),
        json!(false)
    );
    drop(page);
    drop(board);
    // Started from a state.json: no form, the reason where its button would be.
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    board.publish(&ready(vec![], Some("started from a state.json".into())));
    board.publish(&line(40, shot_over(2, vec![1, -3])));
    let mut page = Browser::open(&chromium, &format!("http://{}/", board.addr()));
    page.wait_for_text(
        "No corrections here: started from a state.json",
        Duration::from_secs(30),
    );
    assert_eq!(
        page.eval("document.getElementById('fix').hidden"),
        json!(true)
    );
}

fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// A match of `shots` shots as the driver tells it, after [`a_shot_with_duties`]:
/// each move ready, its flick (one withdrawn first now and then), an item put back,
/// now and then an item lost, an R11 5 told as it happens and then judged, a
/// violation, dropped frames; an amendment halfway; the shot over with its paths
/// and rest poses; and last the camera back, for the pages to wait for.
fn a_long_match(shots: usize) -> Vec<EventLine> {
    use fishtrack::model::{ItemId, Pose};
    let items = [
        ItemId::fish(0),
        ItemId::coin(0),
        ItemId::fish(1),
        ItemId::coin(1),
    ];
    let mut out = a_shot_with_duties();
    for k in 1..shots {
        let (f, mover) = (100 * k as u64, k % 2);
        let violation = |code: &str, evidence: &str, fine, judged| Event::Violation {
            shot: k,
            code: code.into(),
            player: mover,
            evidence: evidence.into(),
            fine,
            judged,
        };
        let mut told = vec![];
        if k % 7 == 0 {
            told.push(Event::FlickWithdrawn {
                shot: k,
                mover,
                detail: "the motion came to nothing".into(),
            });
        }
        if k % 5 == 0 {
            told.push(violation("5", "31.0 s since the move was ready", 0, false));
        }
        told.push(Event::Flick {
            shot: k,
            mover,
            first_moved: None,
            first_moved_known: false,
        });
        told.push(Event::PutBackSeen {
            shot: k,
            item: items[3 - mover * 2],
            pose: Pose::coin(310.0 + k as f64, 400.0),
            duty: None,
            legal: k % 4 != 0,
        });
        if k % 4 == 0 {
            told.push(violation(
                "2.3",
                "put back before the move was over",
                -1,
                true,
            ));
        }
        if k % 5 == 0 {
            told.push(violation("5", "31.0 s since the move was ready", -1, true));
        }
        if k % 6 == 0 {
            told.push(Event::ItemLost {
                shot: k,
                item: items[1 + 2 * mover],
                exit: Pose::coin(1000.0, 10.0 * k as f64),
            });
        }
        let rest = items
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    *id,
                    Pose::fish(100.0 + 7.0 * k as f64, 100.0 * i as f64, 0.1),
                )
            })
            .collect();
        let path: Vec<[f64; 2]> = (0..30)
            .map(|i| [20.0 * i as f64, 5.0 * k as f64 + i as f64])
            .collect();
        told.push(Event::ShotOver {
            shot: k,
            mover,
            counted: true,
            flick_frame: f + 10,
            first_moved: Some(items[2 * mover]),
            score: if k % 3 == 0 { vec![1, -1] } else { vec![0, 0] },
            points: vec![],
            scores: vec![k as i32 / 3, -(k as i32) / 3],
            next_mover: (k + 1) % 2,
            moves_made: vec![(k as u32).div_ceil(2), k as u32 / 2],
            rest,
            off_table: if k % 6 == 0 {
                vec![items[1 + 2 * mover]]
            } else {
                vec![]
            },
            duties: vec![],
            notes: vec![format!("shot {k}'s note")],
            paths: [(items[2 * mover], path)].into(),
        });
        if k % 9 == 0 {
            told.push(Event::Camera {
                state: CameraState::FramesDropped,
                dropped: Some(k as u64),
                detail: "behind".into(),
                shift_mm: None,
                table: None,
                refused: None,
            });
        }
        told.push(Event::MoveReady {
            number: k as u32 + 2,
            shot: k + 1,
            mover: (k + 1) % 2,
            duties: vec![],
        });
        out.extend(told.into_iter().map(|e| line(f, e)));
        if k == shots / 2 {
            out.push(amended(1, false, "shot 0: coin:1 not lost"));
        }
    }
    out.push(line(
        100 * shots as u64,
        Event::Camera {
            state: CameraState::Reconnected,
            dropped: None,
            detail: "frames come again".into(),
            shift_mm: None,
            table: None,
            refused: None,
        },
    ));
    out
}

#[test]
fn a_page_joining_late_shows_what_a_page_watching_from_the_start_shows() {
    let Some(chromium) = chromium("a late page's state") else {
        return;
    };
    let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
    let url = format!("http://{}/", board.addr());
    let mut early = Browser::open(&chromium, &url);
    let events = a_long_match(60);
    // The early page's stream is open once it shows the match's opening: it takes
    // every event after it as it is published.
    board.publish(&events[0]);
    early.wait_for_text("Anna", Duration::from_secs(30));
    for e in &events[1..] {
        board.publish(e);
    }
    early.wait_for_text("camera reconnected", Duration::from_secs(30));
    let mut late = Browser::open(&chromium, &url);
    late.wait_for_text("camera reconnected", Duration::from_secs(30));
    // The page's whole state: scores, mover, move number and timer start, duties,
    // the last shot's paths and rest poses, exits, every shot and its violation
    // codes for the amendment form, the calls, the amendments, the camera.
    let state = "JSON.stringify(st)";
    let (seen, seen_late) = (early.eval(state), late.eval(state));
    let parsed: Value = serde_json::from_str(seen.as_str().expect("text")).expect("state");
    assert_eq!(parsed["shots"].as_array().map(Vec::len), Some(60));
    assert_eq!(parsed["lastShot"], json!(59));
    assert!(parsed["paths"].as_object().is_some_and(|p| !p.is_empty()));
    assert_eq!(seen_late, seen);
    // And the board kept far fewer events than it published.
    let (kept, _) = board.kept();
    assert!(kept < events.len() / 2, "{kept} of {}", events.len());
}
