//! The scoreboard page `live` serves: a small HTTP server (std only, a thread per
//! connection) with the page at `/` (large type: scores, whose move it is, the move
//! timer, the duties, the last calls) and the events at `/events` as server-sent
//! events, each one JSON line as on stdout. A browser that joins late is sent every
//! event so far first, so it shows the same state. Uses: driver's events.

use super::events::EventLine;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Events waiting for a slow browser before it is dropped (it reconnects and is
/// sent everything again).
const CLIENT_BACKLOG: usize = 1024;
/// A comment line this often keeps idle connections (and proxies) open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Default)]
struct Shared {
    /// Every event so far, as JSON.
    history: Vec<String>,
    clients: Vec<SyncSender<String>>,
}

/// A running scoreboard; events are handed to it with [`Board::publish`].
pub struct Board {
    shared: Arc<Mutex<Shared>>,
    addr: SocketAddr,
}

impl Board {
    /// Listens on `addr` (port 0: one the system picks) and serves on threads of
    /// its own for as long as the process runs.
    pub fn serve(addr: SocketAddr) -> std::io::Result<Board> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared::default()));
        let served = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&served);
                std::thread::spawn(move || {
                    let _ = answer(stream, &shared);
                });
            }
        });
        Ok(Board { shared, addr })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends `line` to every browser watching, and keeps it for those to come.
    pub fn publish(&self, line: &EventLine) {
        let Ok(text) = line.to_json() else { return };
        let Ok(mut shared) = self.shared.lock() else {
            return;
        };
        shared.clients.retain(|c| match c.try_send(text.clone()) {
            Ok(()) => true,
            // Too slow or gone: dropped (a browser reconnects by itself).
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        });
        shared.history.push(text);
    }
}

/// Answers one connection: the page, the event stream, or 404.
fn answer(stream: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
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

/// Streams every event so far, then each new one, as server-sent events.
fn events(mut out: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    let (tx, rx): (SyncSender<String>, Receiver<String>) = sync_channel(CLIENT_BACKLOG);
    let history = {
        let Ok(mut s) = shared.lock() else {
            return Ok(());
        };
        s.clients.push(tx);
        s.history.clone()
    };
    // No Access-Control-Allow-Origin: the page comes from here, and a page of any other
    // site open in the same browser must not read the match.
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\n\r\n",
    )?;
    for line in history {
        write!(out, "data: {line}\n\n")?;
    }
    out.flush()?;
    loop {
        match rx.recv_timeout(KEEP_ALIVE) {
            Ok(line) => write!(out, "data: {line}\n\n")?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => out.write_all(b": alive\n\n")?,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        out.flush()?;
    }
}

/// The page: reads `/events` and shows the match in large type.
const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fishtrack live</title>
<style>
body{margin:0;font-family:system-ui,sans-serif;background:#111;color:#eee}
#players{display:flex;flex-wrap:wrap;gap:2vw;padding:2vw}
.p{flex:1;min-width:14em;padding:2vw;border-radius:1vw;background:#222;border:0.5vw solid #222}
.p.mover{border-color:#fc3}
.name{font-size:4vw}.score{font-size:12vw;font-weight:700;line-height:1}
.moves{font-size:2vw;color:#aaa}
#bar{display:flex;gap:4vw;padding:0 2vw;font-size:4vw;align-items:baseline}
#timer.late{color:#f44}
#duties,#calls{padding:0 2vw;font-size:2.6vw}
#cam{padding:0 2vw;font-size:1.8vw;color:#aaa}
h2{font-size:2vw;color:#aaa;margin:1vw 0 0}
</style></head><body>
<div id="players"></div>
<div id="bar"><span id="move"></span><span id="timer"></span><span id="over"></span></div>
<div id="duties"></div>
<div id="calls"></div>
<div id="cam"></div>
<script>
const st={players:[],scores:[],mover:0,moves:[],number:0,readyAt:null,duties:[],calls:[],over:false,cam:""};
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]))}
function draw(){
  const ps=document.getElementById("players");
  ps.innerHTML=st.players.map((n,i)=>`<div class="p${i==st.mover&&!st.over?" mover":""}"><div class="name">${esc(n)}</div><div class="score">${st.scores[i]??0}</div><div class="moves">moves ${st.moves[i]??0}</div></div>`).join("");
  document.getElementById("move").textContent=st.over?"":(st.players.length?`move ${st.number}: ${st.players[st.mover]??""}`:"waiting for the match");
  document.getElementById("over").textContent=st.over?"match over":"";
  document.getElementById("duties").innerHTML=st.duties.length&&!st.over?"<h2>put back first</h2>"+st.duties.map(d=>`${esc(d.item)} (${esc(d.rule)}${d.verdict?", "+esc(d.verdict):""})`).join(" &middot; "):"";
  document.getElementById("calls").innerHTML=st.calls.length?"<h2>last calls</h2>"+st.calls.slice(-4).map(esc).join("<br>"):"";
  document.getElementById("cam").textContent=st.cam;
}
function tick(){
  const t=document.getElementById("timer");
  if(st.readyAt===null||st.over){t.textContent="";return}
  const s=(Date.now()-st.readyAt)/1000;t.textContent=s.toFixed(0)+" s";t.className=s>30?"late":"";
}
function take(e){
  switch(e.event){
  case "match_ready":st.players=e.players;st.scores=e.scores;st.mover=e.mover;st.moves=e.players.map(()=>0);break;
  case "move_ready":st.number=e.number;st.mover=e.mover;st.duties=e.duties||[];st.readyAt=Date.now();break;
  case "item_lost":st.calls.push(`shot ${e.shot+1}: ${e.item} fell off`);break;
  case "violation":st.calls.push(`shot ${e.shot+1}: violation ${e.code} by ${st.players[e.player]??e.player}`);break;
  case "shot_over":st.scores=e.scores;st.moves=e.moves_made;st.mover=e.next_mover;st.duties=e.duties||[];
    st.calls.push(`shot ${e.shot+1}: `+st.players.map((n,i)=>`${n} ${(e.score[i]>0?"+":"")+e.score[i]}`).join(", "));break;
  case "match_over":st.over=true;st.scores=e.scores;break;
  case "camera":st.cam=`camera ${e.state.replace("_"," ")}${e.dropped?` (${e.dropped} frames)`:""}`;break;
  }
}
const src=new EventSource("/events");
src.onopen=()=>{Object.assign(st,{players:[],scores:[],moves:[],calls:[],duties:[],over:false,readyAt:null})};
src.onmessage=m=>{try{take(JSON.parse(m.data));draw()}catch(_){}};
setInterval(tick,250);draw();
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
