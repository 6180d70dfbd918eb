//! The scoreboard page `live` serves: a small HTTP server (std only, a thread per
//! connection) with the page at `/` (large type: scores, whose move it is, the move
//! timer, the duties, the last calls) and the events at `/events` as server-sent
//! events, each one JSON line as on stdout. A browser that joins late, or comes back
//! after the server restarted, is sent every event so far first, so it shows the same
//! state. Uses: driver's events.

use super::events::EventLine;
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Events waiting for a slow browser before it is dropped (it reconnects and is
/// sent everything again).
const CLIENT_BACKLOG: usize = 1024;
/// A comment line this often keeps idle connections (and proxies) open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How soon a browser tries again after the stream broke (the SSE `retry:`; a
/// browser's own default is about 3 s, long for players waiting for their score).
const RETRY_MS: u32 = 500;

#[derive(Default)]
struct Shared {
    /// Every event so far: when it was published (ms since 1970, the server's
    /// clock) and its JSON.
    history: Vec<(u64, String)>,
    clients: Vec<SyncSender<(u64, String)>>,
    /// Set when the board stops: no new stream is started.
    closed: bool,
}

/// A running scoreboard; events are handed to it with [`Board::publish`]. Dropped
/// (or [`stop`](Board::stop)ped), it stops listening and ends every event stream,
/// so that browsers reconnect to whatever serves the port next.
pub struct Board {
    shared: Arc<Mutex<Shared>>,
    addr: SocketAddr,
    accepting: Option<JoinHandle<()>>,
}

impl Board {
    /// Listens on `addr` (port 0: one the system picks) and serves on threads of
    /// its own until dropped.
    pub fn serve(addr: SocketAddr) -> std::io::Result<Board> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared::default()));
        let served = Arc::clone(&shared);
        let accepting = std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                if served.lock().map_or(true, |s| s.closed) {
                    // The wake-up connection of `stop`: the listener closes here.
                    break;
                }
                let shared = Arc::clone(&served);
                std::thread::spawn(move || {
                    let _ = answer(stream, &shared);
                });
            }
        });
        Ok(Board {
            shared,
            addr,
            accepting: Some(accepting),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends `line` to every browser watching, and keeps it for those to come.
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
        shared.history.push((now, text));
    }

    /// Stops listening and ends every event stream; returns once the port is free
    /// (the same as dropping the board).
    pub fn stop(self) {}
}

impl Drop for Board {
    fn drop(&mut self) {
        if let Ok(mut s) = self.shared.lock() {
            s.closed = true;
            // Each stream's thread sees its channel closed and ends its connection.
            s.clients.clear();
        }
        // The accepting thread waits in accept(): a connection wakes it to close.
        let wake = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => {
                SocketAddr::new(Ipv4Addr::LOCALHOST.into(), self.addr.port())
            }
            IpAddr::V6(ip) if ip.is_unspecified() => {
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), self.addr.port())
            }
            _ => self.addr,
        };
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            if let Some(t) = self.accepting.take() {
                let _ = t.join();
            }
        }
    }
}

/// The wall clock in ms since 1970.
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Answers one connection: the page, the event stream, or 404.
fn answer(stream: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    // Each event is one small write: sent at once, not held back for more.
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers, up to the blank line (not needed).
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let mut out = stream;
    match path.split('?').next().unwrap_or("") {
        "/" | "/index.html" => {
            let body = PAGE.as_bytes();
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            out.write_all(body)
        }
        "/events" => events(out, shared),
        _ => out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nConnection: close\r\n\r\nnot found\n",
        ),
    }
}

/// One event as a server-sent event: its publication time as the `id`, the JSON
/// line as the `data`.
fn sse(at_ms: u64, line: &str) -> String {
    format!("id: {at_ms}\ndata: {line}\n\n")
}

/// Streams every event so far, then each new one, as server-sent events. The stream
/// opens with the server's clock (a `clock` event), so that the page can tell how
/// long ago each event was published whatever its own clock says.
fn events(mut out: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    type Published = (u64, String);
    let (tx, rx): (SyncSender<Published>, Receiver<Published>) = sync_channel(CLIENT_BACKLOG);
    let history = {
        let Ok(mut s) = shared.lock() else {
            return Ok(());
        };
        if s.closed {
            return Ok(());
        }
        s.clients.push(tx);
        s.history.clone()
    };
    // No Access-Control-Allow-Origin: the page comes from here, and a page of any other
    // site open in the same browser must not read the match.
    let mut text = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\n\r\nretry: {RETRY_MS}\nevent: clock\ndata: {}\n\n",
        unix_ms()
    );
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

/// The page: reads `/events` and shows the match in type large enough to read from
/// a few metres (sizes in `vmin`: a landscape screen and a portrait tablet alike).
const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fishtrack live</title>
<style>
html,body{margin:0;height:100%}
body{font-family:system-ui,"DejaVu Sans",sans-serif;background:#0d0d0d;color:#f2f2f2;display:flex;flex-direction:column;gap:1.6vmin;padding:2vmin;box-sizing:border-box}
#alert{font-size:5vmin;font-weight:700;background:#b00;color:#fff;padding:1vmin 2vmin;border-radius:1vmin}
#alert:empty{display:none}
#players{display:flex;flex-wrap:wrap;gap:2vmin}
.p{flex:1;min-width:28vmin;padding:1.5vmin 2.5vmin;border-radius:1.5vmin;background:#1e1e1e;border:1vmin solid #1e1e1e}
.p.mover{border-color:#ffd21f;background:#2a2610}
.name{font-size:6.5vmin;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.score{font-size:20vmin;font-weight:800;line-height:1;font-variant-numeric:tabular-nums}
.moves{font-size:4vmin;color:#c8c8c8}
.turn{font-size:4vmin;font-weight:700;color:#ffd21f}
#bar{display:flex;flex-wrap:wrap;gap:1vmin 5vmin;font-size:7vmin;font-weight:700;align-items:baseline}
#timer{font-variant-numeric:tabular-nums}
#timer.late{color:#ff4a3d}#timer.done{color:#9be39b}
#duties{font-size:5vmin;background:#3a2a00;border-radius:1vmin;padding:1vmin 2vmin}
#duties:empty{display:none}
#duties small{font-size:3.6vmin;color:#e0c870}
#calls{font-size:4.4vmin;line-height:1.3}
#cam{font-size:3.6vmin;color:#c8c8c8}
#cam.bad{color:#ff6b5e;font-weight:700}
h2{font-size:3.6vmin;color:#c8c8c8;margin:0;font-weight:600;text-transform:uppercase;letter-spacing:.1em}
.v{color:#ff8a7f}
</style></head><body>
<div id="alert"></div>
<div id="players"></div>
<div id="bar"><span id="move">waiting for the match</span><span id="timer"></span></div>
<div id="duties"></div>
<div id="calls"></div>
<div id="cam"></div>
<script>
// The state, rebuilt from the events: a browser joining late or coming back is sent
// every event again. Times are the server's (each event's id is when it was
// published); `offset` is the browser's clock minus the server's.
const fresh=()=>({players:[],scores:[],mover:0,moves:[],perPlayer:0,number:0,readyAt:null,flickAt:null,
  duties:[],calls:[],late:{},over:false,cam:"",camBad:false});
let st=fresh(),offset=0,linked=false;
const LIMIT_S=30;
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]))}
function who(p){return st.players[p]??`player ${p+1}`}
function item(id){const [k,o]=String(id).split(":");const n=st.players[+o];return n?`${n}'s ${k}`:String(id)}
function draw(){
  document.getElementById("players").innerHTML=st.players.map((n,i)=>{
    const m=i==st.mover&&!st.over;
    return `<div class="p${m?" mover":""}"><div class="name">${esc(n)}</div><div class="score">${st.scores[i]??0}</div>`+
      `<div class="moves">${st.moves[i]??0} of ${st.perPlayer} moves</div>${m?'<div class="turn">to move</div>':""}</div>`}).join("");
  document.getElementById("move").textContent=st.over?"Match over":
    (st.players.length?`Move ${st.number}: ${who(st.mover)}`:"waiting for the match");
  document.getElementById("duties").innerHTML=st.duties.length&&!st.over?"<h2>put back first</h2>"+
    st.duties.map(d=>esc(item(d.item))+` <small>${esc(d.rule)}</small>`+(d.verdict=="impossible"?" (cannot go back)":d.verdict=="optional"?" (may go back)":"")).join(" &middot; "):"";
  document.getElementById("calls").innerHTML=st.calls.length?"<h2>last calls</h2>"+st.calls.slice(-3).join("<br>"):"";
  const cam=document.getElementById("cam");cam.textContent=st.cam;cam.className=st.camBad?"bad":"";
  document.getElementById("alert").textContent=!linked?"scoreboard disconnected: reconnecting":
    st.camBad?"camera lost: reconnecting":"";
  tick();
}
function tick(){
  const t=document.getElementById("timer");
  if(st.readyAt===null||st.over){t.textContent="";return}
  const end=st.flickAt??(Date.now()-offset);
  const s=Math.max(0,(end-st.readyAt)/1000);
  t.textContent=(st.flickAt!==null?"flicked at ":"")+Math.floor(s)+" s";
  t.className=s>LIMIT_S?"late":(st.flickAt!==null?"done":"");
}
function take(e,at){
  switch(e.event){
  case "match_ready":st.players=e.players;st.scores=e.scores;st.mover=e.mover;st.perPlayer=e.moves_per_player;
    st.moves=e.players.map(()=>0);break;
  case "move_ready":st.number=e.number;st.mover=e.mover;st.duties=e.duties||[];st.readyAt=at;st.flickAt=null;break;
  case "flick":if(st.flickAt===null)st.flickAt=at;break;
  case "flick_withdrawn":st.flickAt=null;break;
  case "item_lost":st.calls.push(`${esc(item(e.item))} fell off`);break;
  case "violation":
    // R11 5 is told as it happens, then judged with the shot: shown once.
    if(e.code=="5"&&e.judged!==false&&st.late[e.shot])break;
    if(e.code=="5")st.late[e.shot]=true;
    st.calls.push(`<span class="v">${esc(who(e.player))}: R11 ${esc(e.code)}${e.code=="5"?" (over "+LIMIT_S+" s)":""}</span>`);break;
  case "shot_over":st.scores=e.scores;st.moves=e.moves_made;st.mover=e.next_mover;st.duties=e.duties||[];
    {const pts=st.players.map((n,i)=>e.score[i]?`${esc(n)} ${(e.score[i]>0?"+":"")+e.score[i]}`:"").filter(x=>x);
     st.calls.push(`shot ${e.shot+1} (${esc(who(e.mover))}): ${pts.length?pts.join(", "):"no points"}`)}break;
  case "match_over":st.over=true;st.scores=e.scores;break;
  case "camera":st.camBad=e.state=="lost";
    st.cam=`camera ${e.state.replace("_"," ")}${e.dropped?` (${e.dropped} frames)`:""}`;break;
  }
}
let src=null;
function connect(){
  src=new EventSource("/events");
  src.onopen=()=>{linked=true;st=fresh();draw()};
  src.addEventListener("clock",m=>{offset=Date.now()-Number(m.data)});
  src.onmessage=m=>{try{take(JSON.parse(m.data),Number(m.lastEventId)||Date.now()-offset);draw()}catch(_){}};
  // A stream that breaks is retried by the browser itself; one it gave up on is
  // opened anew.
  src.onerror=()=>{linked=false;draw();if(src.readyState===EventSource.CLOSED){src.close();setTimeout(connect,1000)}};
}
connect();setInterval(tick,250);draw();
</script></body></html>
"##;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::events::Event;
    use std::io::Read;

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
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
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
        s.write_all(b"GET /nothing HTTP/1.1\r\n\r\n").expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        assert!(text.starts_with("HTTP/1.1 404"), "{text}");
    }
}
