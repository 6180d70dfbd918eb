//! The scoreboard page `live` serves, on `tiny_http` (a small, synchronous, well-kept
//! HTTP server): the page at `/` (board.html: large type, scores, whose move it is,
//! the move timer, the table diagram with what must be put back and the last shot,
//! the last calls), the events at `/events` as server-sent events, each one JSON line
//! as on stdout, and the referee's amendments (a patch file's entry) and undos
//! (`{"undo": K}`) POSTed to `/amend`. A browser that joins
//! late, or comes back after the server restarted, is sent the events so far that
//! the page's state still rests on first, so it shows the same state: a match of
//! hours would otherwise have the board hold every event it published
//! ([`Shared::history`] says which are let go).
//!
//! Bounds, so that a `--listen` on a network cannot be flooded: [`WORKERS`] threads
//! answer requests, at most [`MAX_STREAMS`] event streams are open at once (each on a
//! thread of its own; more are answered 503), a request body is at most
//! [`BODY_LIMIT`] bytes, and every connection's reads time out after [`IDLE`] and
//! its writes after [`STALLED`] (set on the listening socket, which Linux hands on
//! to each connection it accepts: a connection that sends nothing is closed, and so
//! is a browser that stops reading its stream).
//!
//! Amendments are taken from this machine only (the peer a loopback address, the
//! `Host` a loopback name), with the run's token: a random 128-bit number put in the
//! page served to this machine and sent back in the `X-Fishtrack-Token` header. A page
//! of another site cannot read it (no CORS header is ever sent), nor send that header
//! without a preflight that is never allowed; a name rebound to 127.0.0.1 fails the
//! `Host` check. The driver makes each amendment between two frames and answers
//! one line ([`Board::amendment`], [`AmendAsk`]).
//! Uses: driver's events and amending, amend's request.

use super::amending::{AmendAsk, Correction};
use super::events::{Event, EventLine};
use crate::amend::Request as AmendRequest;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tiny_http::{Header, Method, Request, Response, Server};

/// Events waiting for a slow browser before it is dropped (it reconnects and is
/// sent everything again).
const CLIENT_BACKLOG: usize = 1024;
/// A comment line this often keeps idle connections (and proxies) open, and finds a
/// browser gone (a write or two after it left fails): its stream's place is free then.
const KEEP_ALIVE: Duration = Duration::from_secs(5);
/// How soon a browser tries again after the stream broke (the SSE `retry:`; a
/// browser's own default is about 3 s, long for players waiting for their score).
const RETRY_MS: u32 = 500;
/// Threads answering the page and the amendments.
pub const WORKERS: usize = 4;
/// Event streams open at once (a screen or two beside the table, phones).
pub const MAX_STREAMS: usize = 32;
/// Longest amendment request (bytes).
pub const BODY_LIMIT: usize = 16 * 1024;
/// A connection that sends nothing for this long is closed. It bounds how long an
/// idle or half-sent request holds its thread, and it is also how soon a stream the
/// board ended is closed: the server then waits for the browser's next request on
/// that connection, and gives up after this. (While a stream runs nothing is read,
/// so it does not end a stream.)
pub const IDLE: Duration = Duration::from_secs(2);
/// A browser that does not take what it is sent for this long (its connection's
/// buffers full) is dropped; it reconnects by itself.
pub const STALLED: Duration = Duration::from_secs(10);
/// How long a POSTed amendment waits for the driver (which takes it between two
/// frames, or while a camera is being reconnected).
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// The page, with `__TOKEN__` for the run's token (empty for other machines).
const PAGE: &str = include_str!("board.html");

#[derive(Default)]
struct Shared {
    /// The events so far that a page joining now needs to show what the pages
    /// watching show: when each was published (ms since 1970, the server's clock),
    /// and its JSON. Let go, as what the page takes from them is replaced: a
    /// `move_ready`, and the `flick`s and `flick_withdrawn`s before it, by the next
    /// `move_ready`; a `put_back_seen` by the next `shot_over` (its rest poses);
    /// a `camera` by the next. A `shot_over` followed by another is kept without
    /// what the next replaces (poses, paths, duties, points, notes): the page still
    /// lists the shot, its points and calls for the referee. Violations, items lost,
    /// amendments and the match's opening and end are kept.
    history: Vec<Kept>,
    clients: Vec<SyncSender<(u64, String)>>,
    /// Set when the board stops: no new stream is started.
    closed: bool,
}

/// An event kept for the pages to come.
struct Kept {
    at: u64,
    kind: &'static str,
    text: String,
    /// A `shot_over`'s JSON without what the next `shot_over` replaces.
    lean: Option<String>,
}

impl Shared {
    /// Keeps `text` (the JSON of `line`) for the pages to come, letting go of what
    /// it replaces (see [`Shared::history`]).
    fn keep(&mut self, at: u64, line: &EventLine, mut text: String) {
        let kind = line.event.kind();
        match kind {
            "move_ready" => self
                .history
                .retain(|k| !matches!(k.kind, "move_ready" | "flick" | "flick_withdrawn")),
            "shot_over" => {
                self.history.retain(|k| k.kind != "put_back_seen");
                for k in self.history.iter_mut().filter(|k| k.kind == "shot_over") {
                    if let Some(lean) = k.lean.take() {
                        k.text = lean;
                    }
                }
            }
            "camera" => self.history.retain(|k| k.kind != "camera"),
            _ => {}
        }
        // Kept for hours: without the room the serialiser left (up to as much again).
        text.shrink_to_fit();
        let lean = lean_shot_over(line);
        self.history.push(Kept {
            at,
            kind,
            text,
            lean,
        });
    }
}

/// A `shot_over`'s JSON without what the next `shot_over` replaces on the page.
fn lean_shot_over(line: &EventLine) -> Option<String> {
    let Event::ShotOver { .. } = line.event else {
        return None;
    };
    let mut lean = line.clone();
    if let Event::ShotOver {
        points,
        rest,
        off_table,
        duties,
        notes,
        paths,
        ..
    } = &mut lean.event
    {
        points.clear();
        rest.clear();
        off_table.clear();
        duties.clear();
        notes.clear();
        paths.clear();
    }
    lean.to_json().ok().map(|mut text| {
        text.shrink_to_fit();
        text
    })
}

/// What the request threads share.
struct Context {
    shared: Arc<Mutex<Shared>>,
    token: String,
    port: u16,
    streams: AtomicUsize,
    asks: Mutex<Sender<AmendAsk>>,
}

/// A running scoreboard; events are handed to it with [`Board::publish`], the
/// amendments POSTed to it taken with [`Board::amendment`]. Dropped (or
/// [`stop`](Board::stop)ped), it stops listening and ends every event stream, so that
/// browsers reconnect to whatever serves the port next.
pub struct Board {
    shared: Arc<Mutex<Shared>>,
    server: Arc<Accepting>,
    addr: SocketAddr,
    workers: Vec<JoinHandle<()>>,
    asks: Receiver<AmendAsk>,
    token: String,
}

impl Board {
    /// Listens on `addr` (port 0: one the system picks) and serves on threads of
    /// its own until dropped.
    pub fn serve(addr: SocketAddr) -> std::io::Result<Board> {
        let listener = TcpListener::bind(addr)?;
        time_out_connections(&listener, IDLE, STALLED)?;
        let addr = listener.local_addr()?;
        let server = Arc::new(Accepting::new(listener)?);
        let shared = Arc::new(Mutex::new(Shared::default()));
        let token = format!("{:032x}", rand::random::<u128>());
        let (tx, asks) = channel();
        let context = Arc::new(Context {
            shared: Arc::clone(&shared),
            token: token.clone(),
            port: addr.port(),
            streams: AtomicUsize::new(0),
            asks: Mutex::new(tx),
        });
        let workers = (0..WORKERS)
            .map(|_| {
                let server = Arc::clone(&server);
                let context = Arc::clone(&context);
                // Ends when the board stops.
                std::thread::spawn(move || {
                    while let Some(request) = server.recv() {
                        answer(request, &context);
                    }
                })
            })
            .collect();
        Ok(Board {
            shared,
            server,
            addr,
            workers,
            asks,
            token,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The run's token the page sends with an amendment (tests).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Sends `line` to every browser watching, and keeps it for those to come (as
    /// long as the page's state rests on it).
    pub fn publish(&self, line: &EventLine) {
        let Ok(text) = line.to_json() else { return };
        let now = unix_ms();
        let Ok(mut shared) = self.shared.lock() else {
            return;
        };
        shared
            .clients
            .retain(|c| match c.try_send((now, text.clone())) {
                Ok(()) => true,
                // Too slow or gone: dropped (a browser reconnects by itself).
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            });
        shared.keep(now, line, text);
    }

    /// The events kept for a page joining now, and their bytes (tests: what the
    /// board holds does not grow with the shots).
    pub fn kept(&self) -> (usize, usize) {
        self.shared.lock().map_or((0, 0), |s| {
            (
                s.history.len(),
                s.history.iter().map(|k| k.text.len()).sum(),
            )
        })
    }

    /// An amendment POSTed and not taken yet (its `when` is left to the taker, who
    /// stamps it).
    pub fn amendment(&self) -> Option<AmendAsk> {
        self.asks.try_recv().ok()
    }

    /// Stops listening and ends every event stream (the same as dropping the board).
    pub fn stop(self) {}
}

impl Drop for Board {
    fn drop(&mut self) {
        if let Ok(mut s) = self.shared.lock() {
            s.closed = true;
            // Each stream's thread sees its channel closed and ends its connection.
            s.clients.clear();
        }
        self.server.stop();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        // The last reference: tiny_http closes its listener (its accepting thread
        // wakes on a connection of its own and lets the port go).
    }
}

/// A tiny_http server on the board's socket, started anew whenever its accepting
/// thread ends. The socket's read timeout (`time_out_connections`) also bounds how
/// long an accept waits, and tiny_http stops accepting on the first accept that
/// fails: a quiet spell of `IDLE` without a new connection ended it, and the port was
/// closed ("refused to connect" for a page opened later). A copy of the socket is
/// kept, so the port stays open meanwhile and connections wait in its backlog.
struct Accepting {
    listener: TcpListener,
    server: Mutex<Arc<Server>>,
    stopping: std::sync::atomic::AtomicBool,
}

impl Accepting {
    fn new(listener: TcpListener) -> std::io::Result<Accepting> {
        let server = Self::start(&listener)?;
        Ok(Accepting {
            listener,
            server: Mutex::new(server),
            stopping: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn start(listener: &TcpListener) -> std::io::Result<Arc<Server>> {
        Server::from_listener(listener.try_clone()?, None)
            .map(Arc::new)
            .map_err(std::io::Error::other)
    }

    fn current(&self) -> Option<Arc<Server>> {
        self.server.lock().ok().map(|s| Arc::clone(&s))
    }

    /// The next request; `None` once the board stops.
    fn recv(&self) -> Option<Request> {
        use std::sync::atomic::Ordering::SeqCst;
        loop {
            if self.stopping.load(SeqCst) {
                return None;
            }
            let server = self.current()?;
            match server.recv() {
                Ok(request) => return Some(request),
                Err(_) if self.stopping.load(SeqCst) => return None,
                // Its accepting thread ended (or another worker's restart woke this
                // one): the first to see it starts another, and wakes the workers
                // still waiting on the old one.
                Err(_) => {
                    let mut slot = self.server.lock().ok()?;
                    if self.stopping.load(SeqCst) {
                        return None;
                    }
                    if Arc::ptr_eq(&slot, &server) {
                        match Self::start(&self.listener) {
                            Ok(fresh) => *slot = fresh,
                            Err(_) => return None,
                        }
                        drop(slot);
                        for _ in 0..WORKERS {
                            server.unblock();
                        }
                    }
                }
            }
        }
    }

    /// Wakes the [`WORKERS`] waiting threads for good. Under the lock a restart
    /// takes, so that no server is started after it that no one would wake.
    fn stop(&self) {
        let Ok(slot) = self.server.lock() else {
            return;
        };
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for _ in 0..WORKERS {
            slot.unblock();
        }
    }
}

/// Sets read and write timeouts on the listening socket: Linux copies them to every
/// connection accepted from it, which `tiny_http` gives no other way to bound.
fn time_out_connections(
    listener: &TcpListener,
    read: Duration,
    write: Duration,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    for (option, after) in [(libc::SO_RCVTIMEO, read), (libc::SO_SNDTIMEO, write)] {
        let tv = libc::timeval {
            tv_sec: after.as_secs() as libc::time_t,
            tv_usec: after.subsec_micros() as libc::suseconds_t,
        };
        // SAFETY: a valid socket, a timeval that lives across the call, its size.
        let r = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The wall clock in ms since 1970.
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn header(name: &str, value: &str) -> Header {
    // Names and values here are ASCII constants or hex.
    Header::from_bytes(name.as_bytes(), value.as_bytes())
        .unwrap_or_else(|()| Header::from_bytes(&b"X-Bad"[..], &b"1"[..]).expect("ascii"))
}

fn text(status: u16, body: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "text/plain; charset=utf-8"))
}

/// Answers one request: the page, the event stream, an amendment, or 404.
fn answer(request: Request, context: &Arc<Context>) {
    let path = request.url().split('?').next().unwrap_or("").to_string();
    let local = request.remote_addr().is_some_and(|a| a.ip().is_loopback());
    let result = match (request.method(), path.as_str()) {
        (Method::Get | Method::Head, "/" | "/index.html") => {
            // The token only for this machine's browsers: others may watch, not amend.
            let token = if local { context.token.as_str() } else { "" };
            let page = PAGE.replace("__TOKEN__", token);
            request.respond(
                Response::from_string(page)
                    .with_header(header("Content-Type", "text/html; charset=utf-8"))
                    .with_header(header("Cache-Control", "no-cache")),
            )
        }
        (Method::Get, "/events") => {
            if context.streams.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
                context.streams.fetch_sub(1, Ordering::SeqCst);
                request.respond(
                    text(503, "too many event streams open\n")
                        .with_header(header("Retry-After", "5")),
                )
            } else {
                let context = Arc::clone(context);
                std::thread::spawn(move || {
                    let _ = events(request, &context.shared);
                    context.streams.fetch_sub(1, Ordering::SeqCst);
                });
                Ok(())
            }
        }
        (Method::Post, "/amend") => amend(request, context, local),
        _ => request.respond(text(404, "not found\n")),
    };
    // A browser gone mid-answer is no error of the board's.
    let _ = result;
}

/// One event as a server-sent event: its publication time as the `id`, the JSON
/// line as the `data`.
fn sse(at_ms: u64, line: &str) -> String {
    format!("id: {at_ms}\ndata: {line}\n\n")
}

/// Streams every event so far, then each new one, as server-sent events. The stream
/// opens with the server's clock (a `clock` event), so that the page can tell how
/// long ago each event was published whatever its own clock says.
fn events(request: Request, shared: &Mutex<Shared>) -> std::io::Result<()> {
    type Published = (u64, String);
    let (tx, rx): (SyncSender<Published>, Receiver<Published>) = sync_channel(CLIENT_BACKLOG);
    let history = {
        let Ok(mut s) = shared.lock() else {
            return Ok(());
        };
        if s.closed {
            return request.respond(text(503, "the board is stopping\n"));
        }
        s.clients.push(tx);
        s.history
            .iter()
            .map(|k| (k.at, k.text.clone()))
            .collect::<Vec<_>>()
    };
    // No Access-Control-Allow-Origin: the page comes from here, and a page of any other
    // site open in the same browser must not read the match. The socket is taken over
    // (tiny_http's "upgrade", with a 200): a stream has no length and each event must
    // leave at once, which its buffered, chunked responses do not.
    let head = Response::empty(200)
        .with_header(header("Content-Type", "text/event-stream"))
        .with_header(header("Cache-Control", "no-cache"));
    let mut out = request.upgrade("server-sent-events", head);
    let mut text = format!("retry: {RETRY_MS}\nevent: clock\ndata: {}\n\n", unix_ms());
    for (at, line) in history {
        text.push_str(&sse(at, &line));
    }
    out.write_all(text.as_bytes())?;
    out.flush()?;
    loop {
        match rx.recv_timeout(KEEP_ALIVE) {
            Ok((at, line)) => out.write_all(sse(at, &line).as_bytes())?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => out.write_all(b": alive\n\n")?,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        out.flush()?;
    }
}

/// The answer to an amendment: `{"ok": bool, "line": "..."}`.
fn verdict(status: u16, ok: bool, line: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    let body = serde_json::json!({ "ok": ok, "line": line }).to_string();
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", "application/json"))
        .with_header(header("Cache-Control", "no-store"))
}

/// Whether a `Host` (or an `Origin`'s host) names this machine on the board's port.
fn loopback_host(host: &str, port: u16) -> bool {
    let (name, p) = match host.rsplit_once(':') {
        Some((n, p)) if !n.ends_with(']') || host.starts_with('[') => (n, p.parse().ok()),
        _ => (host, None),
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let named = name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    named && p.is_none_or(|p: u16| p == port)
}

/// An undo as POSTed: `{"undo": K}` and nothing else.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct UndoAsked {
    undo: u32,
}

/// What a POSTed body asks: `{"undo": K}` undoes amendment K; anything else must be
/// an amendment (a patch file's entry). Why not, in one line.
fn correction_of(body: &[u8]) -> Result<Correction, String> {
    let is_undo =
        serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v.get("undo").is_some());
    if is_undo {
        return serde_json::from_slice::<UndoAsked>(body)
            .map(|u| Correction::Undo(u.undo))
            .map_err(|e| {
                format!("not an undo (send {{\"undo\": K}}, K an amendment's number): {e}")
            });
    }
    serde_json::from_slice::<AmendRequest>(body)
        .map(Correction::Amend)
        .map_err(|e| format!("not an amendment: {e}"))
}

/// A POSTed amendment or undo: checked (this machine, the token, JSON), handed to the
/// driver, and its one-line answer sent back.
fn amend(mut request: Request, context: &Context, local: bool) -> std::io::Result<()> {
    let find = |name: &str| {
        request
            .headers()
            .iter()
            .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str().to_string())
    };
    let host_ok = find("Host").is_some_and(|h| loopback_host(&h, context.port));
    let origin_ok = find("Origin").is_none_or(|o| {
        o.strip_prefix("http://")
            .is_some_and(|h| loopback_host(h, context.port))
    });
    if !(local && host_ok && origin_ok) {
        return request.respond(verdict(
            403,
            false,
            "amendments are taken from this machine only (open the page at http://127.0.0.1:PORT/)",
        ));
    }
    if find("X-Fishtrack-Token").as_deref() != Some(context.token.as_str()) {
        return request.respond(verdict(
            403,
            false,
            "this page is from another run of live: reload it",
        ));
    }
    if !find("Content-Type").is_some_and(|c| c.starts_with("application/json")) {
        return request.respond(verdict(415, false, "send the amendment as JSON"));
    }
    let mut body = Vec::new();
    let read = request
        .as_reader()
        .take(BODY_LIMIT as u64 + 1)
        .read_to_end(&mut body);
    if read.is_err() || body.len() > BODY_LIMIT {
        return request.respond(verdict(413, false, "the amendment is too long"));
    }
    let asked = match correction_of(&body) {
        Ok(c) => c,
        Err(line) => return request.respond(verdict(400, false, &line)),
    };
    let (tx, rx) = sync_channel(1);
    let ask = AmendAsk {
        correction: asked,
        when: String::new(),
        answer: Some(tx),
    };
    let sent = context.asks.lock().map(|s| s.send(ask).is_ok());
    if !matches!(sent, Ok(true)) {
        return request.respond(verdict(503, false, "the match is not running"));
    }
    match rx.recv_timeout(ANSWER_WITHIN) {
        Ok(Ok(line)) => request.respond(verdict(200, true, &line)),
        Ok(Err(line)) => request.respond(verdict(409, false, &line)),
        Err(_) => {
            let line = format!(
                "the match did not take the amendment in {} s (it is not reading frames); try again",
                ANSWER_WITHIN.as_secs()
            );
            request.respond(verdict(503, false, &line))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::events::Event;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    #[test]
    fn serves_the_page_and_every_event_to_a_late_browser() {
        let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
        let line = EventLine::new(
            0,
            0,
            30.0,
            Event::MatchOver {
                scores: vec![1, -3],
                shots: 6,
            },
        );
        board.publish(&line);
        let mut page = String::new();
        let mut s = TcpStream::connect(board.addr()).expect("connect");
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .expect("send");
        s.read_to_string(&mut page).expect("read");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains("EventSource(\"/events\")"));
        let mut s = TcpStream::connect(board.addr()).expect("connect");
        s.write_all(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("send");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let want = format!("data: {}\n\n", line.to_json().expect("json"));
        while !String::from_utf8_lossy(&got).contains(&want) {
            let n = s.read(&mut buf).expect("read");
            assert!(n > 0, "{}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        assert!(String::from_utf8_lossy(&got).contains("text/event-stream"));
        let mut s = TcpStream::connect(board.addr()).expect("connect");
        s.write_all(b"GET /nothing HTTP/1.1\r\nConnection: close\r\n\r\n")
            .expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        assert!(text.starts_with("HTTP/1.1 404"), "{text}");
    }

    /// One request on a connection of its own, the whole answer back.
    fn ask(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(15)))
            .expect("timeout");
        s.write_all(request.as_bytes()).expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        text
    }

    fn post(addr: SocketAddr, host: &str, token: &str, body: &str) -> String {
        ask(
            addr,
            &format!(
                "POST /amend HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Fishtrack-Token: {token}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    }

    #[test]
    fn amendments_are_taken_from_this_machine_with_the_run_s_token_only() {
        let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
        let addr = board.addr();
        let host = addr.to_string();
        let token = board.token().to_string();
        assert_eq!(token.len(), 32);
        // The page served to this machine carries it.
        let page = ask(addr, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(page.contains(&format!("content=\"{token}\"")));
        let body = r#"{"shot":0,"what":"lost","item":"coin:1","why":"seen"}"#;
        // No token, another run's, a name that is not this machine: refused, and
        // nothing reaches the driver.
        for (h, t) in [
            (host.as_str(), ""),
            (host.as_str(), "0123456789abcdef0123456789abcdef"),
            ("evil.example:80", token.as_str()),
            (&format!("evil.example:{}", addr.port()), token.as_str()),
        ] {
            let answer = post(addr, h, t, body);
            assert!(answer.starts_with("HTTP/1.1 403"), "{h} {t}: {answer}");
        }
        assert!(board.amendment().is_none());
        let answer = post(addr, &host, &token, "{\"shot\":");
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        let long = format!("{{\"why\":\"{}\"}}", "x".repeat(BODY_LIMIT));
        assert!(post(addr, &host, &token, &long).starts_with("HTTP/1.1 413"));
        // A good one reaches the driver, whose one line comes back; so does a refusal.
        for (result, status) in [(Ok("made"), "200"), (Err("refused: why"), "409")] {
            let poster = {
                let (host, token) = (host.clone(), token.clone());
                std::thread::spawn(move || post(addr, &host, &token, body))
            };
            let asked = loop {
                if let Some(a) = board.amendment() {
                    break a;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            let Correction::Amend(request) = &asked.correction else {
                panic!("an amendment, not {:?}", asked.correction);
            };
            assert_eq!(request.shot, 0);
            assert_eq!(
                request.change,
                crate::record::Change::Lost {
                    item: crate::model::ItemId::coin(1)
                }
            );
            asked.answer(result.map(String::from).map_err(String::from));
            let answer = poster.join().expect("post");
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {status}")),
                "{answer}"
            );
            let line = result.unwrap_or_else(|e| e);
            assert!(answer.contains(&format!("\"line\":\"{line}\"")), "{answer}");
        }
    }

    #[test]
    fn an_undo_is_posted_as_its_number_alone() {
        assert_eq!(correction_of(br#"{"undo": 2}"#), Ok(Correction::Undo(2)));
        for bad in [
            r#"{"undo": -1}"#,
            r#"{"undo": "2"}"#,
            r#"{"undo": 2, "shot": 0}"#,
        ] {
            let e = correction_of(bad.as_bytes()).expect_err(bad);
            assert!(e.starts_with("not an undo"), "{bad}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = correction_of(br#"{"shot": 0}"#).expect_err("no what");
        assert!(e.starts_with("not an amendment"), "{e}");
        let amendment = correction_of(br#"{"shot":1,"what":"mover","player":0,"why":"seen"}"#);
        assert!(
            matches!(&amendment, Ok(Correction::Amend(r)) if r.shot == 1 && r.why == "seen"),
            "{amendment:?}"
        );
        // Through the endpoint: a bad undo is 400 and reaches no driver; a good one
        // reaches it as an undo.
        let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
        let (addr, host, token) = (
            board.addr(),
            board.addr().to_string(),
            board.token().to_string(),
        );
        // The same protections as an amendment's: no token, or another host, 403.
        for (h, t) in [(host.as_str(), ""), ("evil.example:80", token.as_str())] {
            let answer = post(addr, h, t, r#"{"undo":1}"#);
            assert!(answer.starts_with("HTTP/1.1 403"), "{h} {t}: {answer}");
        }
        let answer = post(addr, &host, &token, r#"{"undo":"x"}"#);
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(board.amendment().is_none());
        let poster = std::thread::spawn(move || post(addr, &host, &token, r#"{"undo":1}"#));
        let asked = loop {
            if let Some(a) = board.amendment() {
                break a;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(asked.correction, Correction::Undo(1));
        asked.answer(Ok("undid amendment 1".into()));
        let answer = poster.join().expect("post");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    #[test]
    fn event_streams_are_bounded() {
        let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
        let mut open = Vec::new();
        for _ in 0..MAX_STREAMS {
            let mut s = TcpStream::connect(board.addr()).expect("connect");
            s.write_all(b"GET /events HTTP/1.1\r\n\r\n").expect("send");
            s.set_read_timeout(Some(Duration::from_secs(10)))
                .expect("timeout");
            let mut buf = [0u8; 256];
            let n = s.read(&mut buf).expect("read");
            assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
            open.push(s);
        }
        let more = ask(
            board.addr(),
            "GET /events HTTP/1.1\r\nConnection: close\r\n\r\n",
        );
        assert!(more.starts_with("HTTP/1.1 503"), "{more}");
        // One closes: room for another, once a keep-alive or two found it gone.
        drop(open.pop());
        let limit = std::time::Instant::now() + 3 * KEEP_ALIVE;
        loop {
            let mut s = TcpStream::connect(board.addr()).expect("connect");
            s.write_all(b"GET /events HTTP/1.1\r\n\r\n").expect("send");
            let mut buf = [0u8; 64];
            let n = s.read(&mut buf).expect("read");
            if buf[..n].starts_with(b"HTTP/1.1 200") {
                break;
            }
            assert!(
                std::time::Instant::now() < limit,
                "no room after a stream closed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A shot's events as the driver tells them: its move ready, the flick, an item
    /// put back, a violation every tenth, the shot over (four paths of 40 points and
    /// the rest poses), and now and then a camera's dropped frames.
    fn a_shot(k: usize) -> Vec<EventLine> {
        use crate::model::{ItemId, Pose};
        let f = 100 * k as u64;
        let items = [
            ItemId::fish(0),
            ItemId::coin(0),
            ItemId::fish(1),
            ItemId::coin(1),
        ];
        let path: Vec<[f64; 2]> = (0..40).map(|i| [10.0 * i as f64 + 0.3, 17.7]).collect();
        let mut out = vec![
            Event::MoveReady {
                number: k as u32 + 1,
                shot: k,
                mover: k % 2,
                duties: vec![],
            },
            Event::Flick {
                shot: k,
                mover: k % 2,
                first_moved: None,
                first_moved_known: false,
            },
            Event::PutBackSeen {
                shot: k,
                item: items[1],
                pose: Pose::coin(300.0, 400.0),
                duty: None,
                legal: true,
            },
        ];
        if k % 10 == 0 {
            out.push(Event::Violation {
                shot: k,
                code: "2.3".into(),
                player: k % 2,
                evidence: "put back before the move was over".into(),
                fine: -1,
                judged: true,
            });
        }
        out.push(Event::ShotOver {
            shot: k,
            mover: k % 2,
            counted: true,
            flick_frame: f + 10,
            first_moved: Some(items[0]),
            score: vec![1, 0],
            points: vec![],
            scores: vec![k as i32, 0],
            next_mover: (k + 1) % 2,
            moves_made: vec![k as u32 / 2, k as u32 / 2],
            rest: items
                .iter()
                .map(|i| (*i, Pose::coin(123.4, 567.8)))
                .collect(),
            off_table: vec![],
            duties: vec![],
            notes: vec![],
            paths: items.iter().map(|i| (*i, path.clone())).collect(),
        });
        if k % 3 == 0 {
            out.push(Event::Camera {
                state: super::super::CameraState::FramesDropped,
                dropped: Some(3),
                detail: "behind".into(),
                shift_mm: None,
                table: None,
                refused: None,
            });
        }
        out.into_iter()
            .map(|e| EventLine::new(f, f, 30.0, e))
            .collect()
    }

    #[test]
    fn what_the_board_keeps_for_late_pages_does_not_grow_with_the_shots() {
        let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
        let at = |from: usize, to: usize| {
            for k in from..to {
                for line in a_shot(k) {
                    board.publish(&line);
                }
            }
            board.kept()
        };
        let (_, after_100) = at(0, 100);
        let (events, after_300) = at(100, 300);
        // Each shot over the 200 leaves its lean `shot_over` (about 200 bytes) and
        // every tenth a violation; a whole one, with its paths, is over 2 KB.
        let whole = a_shot(0)
            .iter()
            .find(|l| l.event.kind() == "shot_over")
            .and_then(|l| l.to_json().ok())
            .map_or(0, |t| t.len());
        assert!(whole > 2000, "{whole}");
        let per_shot = (after_300 - after_100) / 200;
        assert!(per_shot < 300, "{per_shot} bytes a shot kept");
        assert!(events <= 300 + 30 + 4, "{events} events kept");
        // What the page shows rests on the last ones, kept whole: the last shot's
        // paths, the move ready after it, the last camera event.
        let shared = board.shared.lock().expect("lock");
        let last = |kind: &str| {
            shared
                .history
                .iter()
                .rev()
                .find(|k| k.kind == kind)
                .map(|k| k.text.clone())
                .unwrap_or_default()
        };
        let whole_last = a_shot(299)
            .iter()
            .find(|l| l.event.kind() == "shot_over")
            .and_then(|l| l.to_json().ok());
        assert_eq!(Some(last("shot_over")), whole_last);
        assert!(last("move_ready").contains("\"shot\":299"));
        assert!(last("camera").contains("frames_dropped"));
        let count = |kind: &str| shared.history.iter().filter(|k| k.kind == kind).count();
        assert_eq!(count("move_ready"), 1);
        assert_eq!(count("camera"), 1);
        assert_eq!(count("put_back_seen"), 0);
        // The last shot's flick came after the last move ready: the page's timer
        // stopped at it.
        assert_eq!(count("flick"), 1);
        assert_eq!(count("violation"), 30);
        assert_eq!(count("shot_over"), 300);
    }

    /// The listener's read timeout (which its connections inherit) makes an accept
    /// that waits longer than `IDLE` fail, and tiny_http stops accepting on any
    /// failure: a page opened after the board had seen no new connection for two
    /// seconds was refused ("127.0.0.1 refused to connect"; the board's browser test
    /// failed so under load, its browser slower than that to start).
    #[test]
    fn a_page_opened_after_a_quiet_spell_is_answered() {
        let board = Board::serve("127.0.0.1:0".parse().expect("addr")).expect("serve");
        for _ in 0..2 {
            std::thread::sleep(IDLE + Duration::from_millis(500));
            let mut s = TcpStream::connect(board.addr()).expect("the board listens");
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .expect("ask");
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.80}");
        }
    }

    #[test]
    fn a_connection_that_sends_nothing_is_closed() {
        // The timeouts set on a listener reach the connections it accepts.
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        time_out_connections(&listener, Duration::from_millis(200), STALLED).expect("timeouts");
        let _client = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (mut accepted, _) = listener.accept().expect("accept");
        let began = std::time::Instant::now();
        let mut buf = [0u8; 8];
        assert!(accepted.read(&mut buf).is_err(), "a read that timed out");
        assert!(
            began.elapsed() < Duration::from_secs(2),
            "{:?}",
            began.elapsed()
        );
    }
}
