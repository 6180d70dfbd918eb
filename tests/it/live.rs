//! `fishtrack live` (issue #18) on the bundled match: it ends by itself at the match's
//! end and writes its record; killed with SIGKILL at random moments of a paced match
//! and resumed each time, it ends with an uninterrupted run's shots and scores;
//! SIGTERM stops it with the record written; a stream that ends is lost and
//! reconnected; `--save` keeps the frames read; the scoreboard serves the events;
//! bad sources are one clear line.
//! The kill test runs 4 kills (`LIVE_KILLS=N` for more); `live::sigkill_20` (ignored)
//! runs the issue's 20.

use crate::common::{assert_fails_with, run};
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How many times faster than filmed the paced runs read the demo (415 frames at 30
/// frames/s: about 7 s a run).
const SPEED: &str = "2";

fn demo() -> String {
    format!("{}/samples/demo/match.avi", env!("CARGO_MANIFEST_DIR"))
}

fn fishtrack() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fishtrack"))
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["event"].as_str()).collect()
}

/// Frames dropped behind the pacing in a journal (the comparison needs none).
fn dropped(journal: &Path) -> u64 {
    let text = std::fs::read_to_string(journal).unwrap_or_default();
    lines(&text)
        .iter()
        .filter(|e| e["state"] == "frames_dropped")
        .map(|e| e["dropped"].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn a_file_ends_by_itself_at_the_match_end_and_writes_the_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, journal) = (dir.path().join("rec.json"), dir.path().join("j.jsonl"));
    let (code, stdout, stderr) = run(&[
        "live",
        &demo(),
        "-o",
        &s(&out),
        "--journal",
        &s(&journal),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let told = lines(&stdout);
    assert!(
        told.iter()
            .all(|e| e["version"] == fishtrack::driver::EVENT_VERSION),
        "{stdout}"
    );
    let k = kinds(&told);
    assert_eq!(k.first(), Some(&"match_ready"), "{k:?}");
    assert_eq!(k.last(), Some(&"match_over"), "{k:?}");
    assert!(k.contains(&"camera"), "{k:?}");
    assert!(
        !k.contains(&"shot_record"),
        "shot records are the journal's only"
    );
    let over = told.last().expect("events");
    let record = json(&out);
    assert_eq!(record["scores"], over["scores"]);
    let shots = record["shots"].as_array().expect("shots");
    assert_eq!(Some(shots.len() as u64), over["shots"].as_u64());
    assert!(!shots.is_empty());
    // It stopped at the match's end, before the file's (415 frames).
    let frames = record["video"]["frames"].as_u64().expect("frames");
    assert!(frames < 415, "read {frames} frames");
    // The journal holds what was told, and each shot's record.
    let kept = lines(&std::fs::read_to_string(&journal).expect("journal"));
    let (records, events): (Vec<Value>, Vec<Value>) =
        kept.into_iter().partition(|e| e["event"] == "shot_record");
    assert_eq!(events, told);
    assert_eq!(records.len(), shots.len());
    for (r, shot) in records.iter().zip(shots) {
        assert_eq!(&r["record"], shot);
    }
}

/// Runs `live` on the demo paced, kills it with SIGKILL at `kills` random moments
/// (resuming after each), lets the last resume finish, and compares the record with
/// an uninterrupted paced run's. Paced with `--no-drop`: tests run side by side on
/// few cores, and a frame dropped in one run and not the other would make two
/// different matches (dropping is tested on its own below).
fn killed_and_resumed(kills: usize, seed: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = dir.path().join("full.json");
    let full_journal = dir.path().join("full.jsonl");
    let began = Instant::now();
    let (code, _, stderr) = run(&[
        "live",
        &demo(),
        "--realtime-speed",
        SPEED,
        "--no-drop",
        "-o",
        &s(&full),
        "--journal",
        &s(&full_journal),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let took = began.elapsed().as_secs_f64();
    let out = dir.path().join("rec.json");
    let journal = dir.path().join("j.jsonl");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut moments = Vec::new();
    for _ in 0..kills {
        let at = rng.random_range(0.05..took);
        let mut child = live_run(&journal, &out).spawn().expect("spawn");
        std::thread::sleep(Duration::from_secs_f64(at));
        // SIGKILL (a no-op if it ended already).
        let _ = child.kill();
        let status = child.wait().expect("wait");
        moments.push(format!("{at:.2} s ({status})"));
    }
    let (code, stderr) = {
        let o = live_run(&journal, &out).output().expect("run");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    assert_eq!(code, 0, "after kills at {moments:?}: {stderr}");
    assert_eq!(dropped(&full_journal) + dropped(&journal), 0, "--no-drop");
    let (whole, resumed) = (json(&full), json(&out));
    assert_eq!(resumed["scores"], whole["scores"], "kills at {moments:?}");
    assert_eq!(resumed["shots"], whole["shots"], "kills at {moments:?}");
    assert!(!whole["shots"].as_array().expect("shots").is_empty());
}

/// `live` on the demo, paced: a new journal when none was written yet, else resumed.
fn live_run(journal: &Path, out: &Path) -> Command {
    let mut cmd = fishtrack();
    cmd.args(["live", &demo(), "--realtime-speed", SPEED, "--no-drop"]);
    cmd.args(["-o", &s(out), "--quiet"]);
    if journal.exists() {
        cmd.args(["--resume", &s(journal)]);
    } else {
        cmd.args(["--journal", &s(journal)]);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

#[test]
fn a_file_read_faster_than_the_analysis_drops_frames_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rec.json");
    // 10 times as filmed, 300 frames/s: faster than the analysis (about 190 frames/s
    // on 2 cores, alone), slower than the decoding.
    let (code, stdout, stderr) = run(&[
        "live",
        &demo(),
        "--realtime-speed",
        "10",
        "-o",
        &s(&out),
        "--journal",
        &s(&dir.path().join("j.jsonl")),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let told = lines(&stdout);
    let drops: Vec<&Value> = told
        .iter()
        .filter(|e| e["state"] == "frames_dropped")
        .collect();
    assert!(!drops.is_empty(), "{stdout}");
    let n: u64 = drops.iter().filter_map(|e| e["dropped"].as_u64()).sum();
    let record = json(&out);
    // How many depends on the machine's load; the first frame is always read, and
    // each run is within the file.
    assert!(n > 0 && n < 415, "{n} dropped");
    for d in &drops {
        let (first, count) = (d["frame"].as_u64(), d["dropped"].as_u64());
        assert!(
            first
                .zip(count)
                .is_some_and(|(f, c)| f >= 1 && c >= 1 && f + c <= 415),
            "{d}"
        );
    }
    // Dropped frames are gaps, not damage.
    assert_eq!(record["video"]["damaged_frames"], Value::Null);
    let known: Vec<u64> = told.iter().filter_map(|e| e["known_at"].as_u64()).collect();
    assert!(known.windows(2).all(|w| w[0] <= w[1]), "{known:?}");
}

#[test]
fn sigkill_at_random_moments_and_resumed_ends_as_an_uninterrupted_run() {
    let kills = std::env::var("LIVE_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4);
    killed_and_resumed(kills, 18);
}

#[test]
#[ignore = "the issue's 20 kills: about 2 minutes"]
fn sigkill_20() {
    killed_and_resumed(20, 1818);
}

/// Reads `child`'s stdout lines on a thread, handing each over.
fn watch_stdout(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line containing `needle`, keeping every line seen; panics after `limit`.
fn wait_for(rx: &std::sync::mpsc::Receiver<String>, needle: &str, seen: &mut Vec<String>) {
    let limit = Instant::now() + Duration::from_secs(60);
    while Instant::now() < limit {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            let hit = line.contains(needle);
            seen.push(line);
            if hit {
                return;
            }
        }
    }
    panic!("no {needle} within 60 s: {seen:?}");
}

fn sigterm(child: &Child) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: kill only sends a signal to the child we started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
}

#[test]
fn sigterm_stops_with_the_record_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rec.json");
    let mut child = fishtrack()
        .args(["live", &demo(), "--realtime", "-o", &s(&out), "--quiet"])
        .arg("--journal")
        .arg(dir.path().join("j.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let rx = watch_stdout(&mut child);
    let mut seen = Vec::new();
    wait_for(&rx, "\"shot_over\"", &mut seen);
    sigterm(&child);
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    assert_eq!(status.code(), Some(0), "{stderr}");
    let record = json(&out);
    let frames = record["video"]["frames"].as_u64().expect("frames");
    // Stopped at once, read at 30 frames/s: far from the 400 frames of the whole match.
    assert!(frames < 300, "{frames} frames read");
    assert!(!record["shots"].as_array().expect("shots").is_empty());
}

/// Serves `file` over HTTP on a port of its own to each request, whole, until the
/// test ends: a stream that ends after each pass.
fn serve(file: PathBuf) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let bytes = std::fs::read(&file).expect("read the video");
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let _ = write!(
                    stream,
                    "HTTP/1.0 200 OK\r\nContent-Type: video/x-msvideo\r\nContent-Length: {}\r\n\r\n",
                    bytes.len()
                );
                let _ = stream.write_all(&bytes);
            });
        }
    });
    port
}

/// The demo's game with 10 moves a player, written into `dir` (its items beside it).
fn game_of_ten_moves(dir: &Path) -> PathBuf {
    let calibration = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration");
    let mut game = json(&calibration.join("game.json"));
    game["moves_per_player"] = Value::from(10);
    let game_path = dir.join("game.json");
    std::fs::write(&game_path, game.to_string()).expect("write");
    std::fs::copy(calibration.join("items.json"), dir.join("items.json")).expect("copy");
    game_path
}

#[test]
fn a_stream_that_ends_is_lost_and_reconnected() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The demo's game with more moves: the match is not over when the stream ends.
    let game_path = game_of_ten_moves(dir.path());
    let port = serve(PathBuf::from(demo()));
    let out = dir.path().join("rec.json");
    let mut child = fishtrack()
        .args(["live", &format!("http://127.0.0.1:{port}/match.avi")])
        .args(["--game", &s(&game_path), "-o", &s(&out), "--quiet"])
        .arg("--journal")
        .arg(dir.path().join("j.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let rx = watch_stdout(&mut child);
    let mut seen = Vec::new();
    wait_for(&rx, "\"reconnected\"", &mut seen);
    sigterm(&child);
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let told = lines(&seen.join("\n"));
    let states: Vec<&str> = told
        .iter()
        .filter(|e| e["event"] == "camera")
        .filter_map(|e| e["state"].as_str())
        .collect();
    assert_eq!(states, ["connected", "lost", "reconnected"], "{seen:?}");
    let lost = told.iter().find(|e| e["state"] == "lost").expect("lost");
    // Lost after the stream's 415 frames, told at once (at the last frame read);
    // frames filmed meanwhile were never seen.
    assert_eq!(lost["frame"], 414, "{lost}");
    let back = told
        .iter()
        .find(|e| e["state"] == "reconnected")
        .expect("back");
    assert!(back["dropped"].as_u64().is_some_and(|n| n > 0), "{back}");
    let record = json(&out);
    assert!(record["video"]["frames"].as_u64().expect("frames") > 415);
    // The frames missed while lost are a gap, not damage.
    assert_eq!(
        record["video"]["damaged_frames"],
        Value::Null,
        "{}",
        record["video"]
    );
}

/// Serves `file` over HTTP as a network camera does: one unending reply (no length,
/// so it is not seekable), sent at `rate` bytes a second when given, paused `stall`
/// once halfway (a stream that stalls); every connection after the first is refused
/// for `down` from the first one refused (a camera unplugged that long).
fn serve_flaky(file: PathBuf, rate: Option<usize>, stall: Duration, down: Duration) -> u16 {
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let bytes = Arc::new(std::fs::read(&file).expect("read the video"));
        let mut served = 0;
        let refusing_since: Mutex<Option<Instant>> = Mutex::default();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            if served > 0 {
                let mut since = refusing_since.lock().expect("lock");
                if since.get_or_insert_with(Instant::now).elapsed() < down {
                    continue;
                }
            }
            let stall = if served == 0 { stall } else { Duration::ZERO };
            served += 1;
            let bytes = Arc::clone(&bytes);
            std::thread::spawn(move || {
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let _ = write!(
                    stream,
                    "HTTP/1.0 200 OK\r\nContent-Type: video/x-msvideo\r\n\r\n"
                );
                const CHUNK: usize = 16 * 1024;
                let began = Instant::now();
                let half = bytes.len() / 2;
                for (k, chunk) in bytes.chunks(CHUNK).enumerate() {
                    if k * CHUNK <= half && (k + 1) * CHUNK > half {
                        std::thread::sleep(stall);
                    }
                    if let Some(rate) = rate {
                        let due = Duration::from_secs_f64((k * CHUNK) as f64 / rate as f64);
                        std::thread::sleep(due.saturating_sub(began.elapsed()));
                    }
                    if stream.write_all(chunk).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// Runs `live` on `url` with a game of 10 moves (the match is not over when the
/// stream ends) until the first `reconnected`; every line with when it came.
fn live_until_reconnected(url: &str) -> Vec<(Instant, Value)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let game_path = game_of_ten_moves(dir.path());
    let mut child = fishtrack()
        .args([
            "live",
            url,
            "--game",
            &s(&game_path),
            "--quiet",
            "--port",
            "0",
        ])
        .args(["-o", &s(&dir.path().join("rec.json"))])
        .arg("--journal")
        .arg(dir.path().join("j.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let rx = watch_stdout(&mut child);
    let limit = Instant::now() + Duration::from_secs(90);
    let mut told = Vec::new();
    while Instant::now() < limit {
        let Ok(line) = rx.recv_timeout(Duration::from_millis(50)) else {
            continue;
        };
        let v: Value = serde_json::from_str(&line).expect("a JSON line");
        let back = v["state"] == "reconnected";
        told.push((Instant::now(), v));
        if back {
            break;
        }
    }
    sigterm(&child);
    assert_eq!(child.wait().expect("wait").code(), Some(0));
    told
}

/// The camera's `lost` and `reconnected` lines and when each came.
fn lost_and_back(told: &[(Instant, Value)]) -> ((Instant, &Value), (Instant, &Value)) {
    let find = |state: &str| {
        told.iter()
            .find(|(_, v)| v["event"] == "camera" && v["state"] == state)
            .map(|(t, v)| (*t, v))
            .unwrap_or_else(|| panic!("no {state}: {told:?}"))
    };
    (find("lost"), find("reconnected"))
}

#[test]
fn a_stream_gone_is_told_lost_at_once_not_when_it_comes_back() {
    let down = Duration::from_secs(3);
    let port = serve_flaky(PathBuf::from(demo()), None, Duration::ZERO, down);
    let told = live_until_reconnected(&format!("http://127.0.0.1:{port}/match.avi"));
    let ((lost_at, lost), (back_at, back)) = lost_and_back(&told);
    // Told while the stream was refused: well before it was opened again.
    let between = back_at - lost_at;
    eprintln!("live: lost told {between:?} before reconnected ({lost}, {back})");
    assert!(
        between >= Duration::from_secs(2),
        "{between:?}: {lost} {back}"
    );
    // At the stream's end (the last frame or two of the unseekable AVI unread),
    // about the last frame read.
    assert!(lost["frame"].as_u64().is_some_and(|f| f >= 400), "{lost}");
    assert_eq!(lost["frame"], lost["known_at"], "{lost}");
    assert!(back["dropped"].as_u64().is_some_and(|n| n > 0), "{back}");
}

#[test]
fn a_stream_that_stalls_is_told_lost_after_2_s_and_back_when_frames_come() {
    let stall = Duration::from_secs(5);
    // At the rate it was filmed (415 frames in 13.8 s), as a camera sends it.
    let video = PathBuf::from(demo());
    let rate = (std::fs::metadata(&video).expect("size").len() as f64 / 13.8) as usize;
    let port = serve_flaky(video, Some(rate), stall, Duration::ZERO);
    let told = live_until_reconnected(&format!("http://127.0.0.1:{port}/match.avi"));
    let ((lost_at, lost), (back_at, back)) = lost_and_back(&told);
    let between = back_at - lost_at;
    eprintln!("live: a stall told lost {between:?} before frames came again ({lost}, {back})");
    assert!(
        lost["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no frame for")),
        "{lost}"
    );
    // Halfway through the stream, the connection kept: nothing was missed.
    assert!(lost["frame"].as_u64().is_some_and(|f| f < 400), "{lost}");
    assert!(back["dropped"].is_null(), "{back}");
    assert!(
        between >= Duration::from_secs(1),
        "{between:?}: {lost} {back}"
    );
}

#[test]
fn save_keeps_every_frame_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, saved) = (dir.path().join("rec.json"), dir.path().join("match.mkv"));
    let (code, _, stderr) = run(&[
        "live",
        &demo(),
        "--save",
        &s(&saved),
        "-o",
        &s(&out),
        "--journal",
        &s(&dir.path().join("j.jsonl")),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let frames = json(&out)["video"]["frames"].clone();
    let (code, probe, stderr) = run(&["probe", &s(&saved), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let probe: Value = serde_json::from_str(&probe).expect("probe's JSON");
    // Every frame analysed, and those read ahead of the analysis when it stopped.
    let (saved_n, read_n) = (
        probe["frames"].as_u64().expect("frames"),
        frames.as_u64().expect("frames"),
    );
    assert!(
        (read_n..=415).contains(&saved_n),
        "saved {saved_n}, analysed {read_n}: {probe}"
    );
    assert_eq!(probe["width"], 1280);
    // Never overwritten.
    assert_fails_with(
        &["live", &demo(), "--save", &s(&saved), "-o", &s(&out)],
        &["already exists"],
    );
}

#[test]
fn bad_sources_are_one_clear_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = s(&dir.path().join("rec.json"));
    assert_fails_with(
        &["live", "/no/such/clip.avi", "-o", &out],
        &["/no/such/clip.avi"],
    );
    assert_fails_with(
        &["live", "webcam:97", "-o", &out],
        &["webcam:97", "cannot open the camera"],
    );
    assert_fails_with(
        &["live", &demo(), "--realtime-speed", "0", "-o", &out],
        &["--realtime-speed"],
    );
    assert_fails_with(
        &[
            "live",
            &demo(),
            "--resume",
            "/no/such/journal.jsonl",
            "-o",
            &out,
        ],
        &["/no/such/journal.jsonl"],
    );
    assert_fails_with(
        &["live", "webcam:0", "--realtime", "-o", &out],
        &["--realtime", "webcam:0"],
    );
    // Nothing left behind.
    assert!(!Path::new(&out).exists());
}

#[test]
fn the_scoreboard_serves_the_page_and_the_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, port) = live_on_a_free_port(|| {
        let mut c = fishtrack();
        c.args(["live", &demo(), "--realtime"])
            .args(["-o", &s(&dir.path().join("rec.json"))])
            .arg("--journal")
            .arg(dir.path().join("j.jsonl"))
            .stdout(Stdio::null());
        c
    });
    let mut page = connect(port);
    page.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut text = String::new();
    page.read_to_string(&mut text).expect("read");
    assert!(
        text.contains("fishtrack live") && text.contains("/events"),
        "{text}"
    );
    let mut events = connect(port);
    events
        .write_all(b"GET /events HTTP/1.1\r\n\r\n")
        .expect("send");
    let mut got = String::new();
    for line in BufReader::new(events).lines() {
        let line = line.expect("read");
        got.push_str(&line);
        got.push('\n');
        if line.contains("\"shot_over\"") {
            break;
        }
    }
    assert!(got.contains("text/event-stream"), "{got}");
    assert!(
        got.contains(&format!(
            "data: {{\"version\":{}",
            fishtrack::driver::EVENT_VERSION
        )),
        "{got}"
    );
    assert!(got.contains("\"match_ready\""), "{got}");
    sigterm(&child);
    assert_eq!(child.wait().expect("wait").code(), Some(0));
}

#[test]
fn resumed_from_rest_the_record_holds_the_journaled_shots_and_the_new_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (full, journal) = (dir.path().join("full.json"), dir.path().join("j.jsonl"));
    let (code, _, stderr) = run(&[
        "live",
        &demo(),
        "-o",
        &s(&full),
        "--journal",
        &s(&journal),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // The journal as a crash after the first shot would leave it (its move_ready the last line).
    let text = std::fs::read_to_string(&journal).expect("journal");
    let kept: Vec<&str> = text.lines().collect();
    let after_first = kept
        .iter()
        .position(|l| l.contains("\"shot_over\""))
        .expect("a shot")
        + 1;
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, kept[..=after_first].join("\n") + "\n").expect("write");
    let out = dir.path().join("rec.json");
    let (code, stdout, stderr) = run(&[
        "live",
        &demo(),
        "--resume",
        &s(&cut),
        "--resume-from-rest",
        "-o",
        &s(&out),
        "--quiet",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let told = lines(&stdout);
    // It goes on from the frame after the last journaled, with the journal's state.
    let last: Value = serde_json::from_str(kept[after_first]).expect("json");
    let ready = &told[0];
    assert_eq!(ready["event"], "match_ready");
    assert_eq!(
        ready["frame"].as_u64(),
        last["known_at"].as_u64().map(|f| f + 1)
    );
    let (whole, resumed) = (json(&full), json(&out));
    let shots = resumed["shots"].as_array().expect("shots");
    let indices: Vec<u64> = shots.iter().filter_map(|s| s["index"].as_u64()).collect();
    assert_eq!(indices, (0..indices.len() as u64).collect::<Vec<_>>());
    assert!(indices.len() >= 2, "{indices:?}");
    // The first shot is the journal's record of it, whole.
    assert_eq!(shots[0], whole["shots"][0]);
    // Not told again, and the journal's shot count goes on.
    assert!(
        told.iter().all(|e| e["shot"].as_u64() != Some(0)),
        "{stdout}"
    );
}

/// `live` on the demo match paced in real time, its scoreboard on a free port, writing
/// `out` and journaling to `journal`: the process, its stdout lines, the port.
fn live_with_page(out: &Path, journal: &Path) -> (Child, std::sync::mpsc::Receiver<String>, u16) {
    let (mut child, port) = live_on_a_free_port(|| {
        let mut c = fishtrack();
        c.args(["live", &demo(), "--realtime-speed", SPEED, "--no-drop"])
            .args(["-o", &s(out)])
            .args(["--journal", &s(journal)])
            .stdout(Stdio::piped());
        c
    });
    let rx = watch_stdout(&mut child);
    (child, rx, port)
}

/// Spawns `live` (`command()`, without `--port`) with its scoreboard on a free port, and
/// the port it says it serves on (its stderr line, so not `--quiet`). A port found
/// free by binding 0 may be taken before `live` binds it (another test's connection
/// gets it as its own end): then `live` warns, and it is tried again on another.
/// Its stderr is read to the end on a thread (a full pipe would stall it).
fn live_on_a_free_port(command: impl Fn() -> Command) -> (Child, u16) {
    for _ in 0..5 {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            probe.local_addr().expect("addr").port()
        };
        let mut child = command()
            .args(["--port", &port.to_string()])
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // After the first line that tells, the rest is only drained.
                if line.contains("scoreboard") {
                    let _ = tx.send(line);
                }
            }
        });
        let told = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("live says where its scoreboard is");
        let served = told
            .split("http://")
            .nth(1)
            .and_then(|a| a.split('/').next())
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| p.parse::<u16>().ok());
        if let Some(port) = served {
            return (child, port);
        }
        assert!(told.contains("cannot listen"), "{told}");
        let _ = child.kill();
        child.wait().expect("wait");
    }
    panic!("no free port for the scoreboard in 5 tries");
}

/// A connection to `live`'s scoreboard, tried again while refused (for up to 30 s:
/// a loaded machine may take a while to start serving).
fn connect(port: u16) -> std::net::TcpStream {
    let limit = Instant::now() + Duration::from_secs(30);
    loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Ok(c) => return c,
            Err(e) if Instant::now() > limit => panic!("no scoreboard on port {port}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The page's token, from the page this machine is served.
fn page_token(port: u16) -> String {
    let mut page = connect(port);
    page.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut text = String::new();
    page.read_to_string(&mut text).expect("read");
    let at = text
        .find("name=\"fishtrack-token\" content=\"")
        .expect("a token")
        + 32;
    text[at..at + 32].to_string()
}

/// The shots with what depends on when an amendment was made (its time, the totals
/// at that moment) taken out.
fn shots_as_amended(record: &Value) -> Value {
    let mut shots = record["shots"].clone();
    for shot in shots.as_array_mut().expect("shots") {
        for a in shot["amendments"].as_array_mut().into_iter().flatten() {
            for k in ["when", "scores_before", "scores_after"] {
                a.as_object_mut().expect("an amendment").remove(k);
            }
        }
    }
    shots
}

/// Once `live` (on `port`, its stdout lines `rx`) has told its first shot over, the
/// referee amends it from the page (coin:1 lost): the page's token and the answer,
/// which must be 200.
fn amend_after_the_first_shot(
    rx: &std::sync::mpsc::Receiver<String>,
    port: u16,
    seen: &mut Vec<String>,
) -> (String, String) {
    wait_for(rx, "\"shot_over\"", seen);
    let token = page_token(port);
    let body = r#"{"shot":0,"what":"lost","item":"coin:1","why":"fell behind the hand"}"#;
    let answer = post_to_page(port, &token, body);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    (token, answer)
}

#[test]
fn an_amendment_from_the_page_survives_a_kill_and_the_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, journal) = (dir.path().join("rec.json"), dir.path().join("j.jsonl"));
    let (mut child, rx, port) = live_with_page(&out, &journal);
    let mut seen = Vec::new();
    let (_, answer) = amend_after_the_first_shot(&rx, port, &mut seen);
    assert!(answer.contains("coin:1 lost"), "{answer}");
    wait_for(&rx, "\"amended\"", &mut seen);
    // A crash right after it.
    let _ = child.kill();
    child.wait().expect("wait");
    let (code, stdout, stderr) = run(&["live", &demo(), "--resume", &s(&journal), "-o", &s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("did not give the journal's"), "{stderr}");
    // Made again from the journal, not told twice.
    assert!(!stdout.contains("\"amended\""), "{stdout}");
    let journaled = std::fs::read_to_string(&journal).expect("journal");
    assert_eq!(journaled.matches("\"event\":\"amended\"").count(), 1);
    // The record is the one `fishtrack amend` makes of an uninterrupted run's.
    let full = dir.path().join("full.json");
    let (code, _, stderr) = run(&["live", &demo(), "-o", &s(&full), "--port", "0", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&[
        "amend",
        &s(&full),
        "--shot",
        "0",
        "--lost",
        "coin:1",
        "--why",
        "fell behind the hand",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (whole, resumed) = (json(&full), json(&out));
    assert_eq!(resumed["scores"], whole["scores"]);
    assert_eq!(shots_as_amended(&resumed), shots_as_amended(&whole));
    assert_eq!(resumed["shots"][0]["amendments"][0]["what"], "lost");
}

/// POSTs `body` to `live`'s scoreboard as its page does; the whole answer.
fn post_to_page(port: u16, token: &str, body: &str) -> String {
    let mut post = connect(port);
    write!(
        post,
        "POST /amend HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Fishtrack-Token: {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("post");
    let mut answer = String::new();
    post.read_to_string(&mut answer).expect("answer");
    answer
}

#[test]
fn an_undo_from_the_page_survives_a_kill_and_the_resume() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, journal) = (dir.path().join("rec.json"), dir.path().join("j.jsonl"));
    let (mut child, rx, port) = live_with_page(&out, &journal);
    let mut seen = Vec::new();
    let (token, _) = amend_after_the_first_shot(&rx, port, &mut seen);
    let answer = post_to_page(port, &token, r#"{"undo":1}"#);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("undid amendment 1: shot 0"), "{answer}");
    wait_for(&rx, "\"undone\":true", &mut seen);
    // A crash right after it.
    let _ = child.kill();
    child.wait().expect("wait");
    let (code, stdout, stderr) = run(&["live", &demo(), "--resume", &s(&journal), "-o", &s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("did not give the journal's"), "{stderr}");
    // Made again from the journal, in order (the amendment, then its undo), not told
    // twice.
    assert!(!stdout.contains("\"amended\""), "{stdout}");
    let journaled = std::fs::read_to_string(&journal).expect("journal");
    assert_eq!(journaled.matches("\"event\":\"amended\"").count(), 2);
    assert_eq!(journaled.matches("\"undone\":true").count(), 1);
    // The record is an uninterrupted run's, never amended.
    let full = dir.path().join("full.json");
    let (code, _, stderr) = run(&["live", &demo(), "-o", &s(&full), "--port", "0", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let (whole, resumed) = (json(&full), json(&out));
    assert_eq!(resumed["scores"], whole["scores"]);
    assert_eq!(resumed["shots"], whole["shots"]);
    assert!(resumed["shots"][0]["amendments"]
        .as_array()
        .is_none_or(Vec::is_empty));
}
