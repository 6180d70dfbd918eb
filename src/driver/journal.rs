//! The journal: every event of a match appended to a file as it happens, one JSON
//! line each ([`EventLine`]), written, flushed and fsynced before the next, so that a
//! crash or a power loss loses at most the event being written. Read back
//! ([`read`], [`parse`]) it gives what a resume needs ([`ResumePoint`]): the last
//! frame journaled, scores, mover, duties, the rest poses that name the items.
//! A torn last line (the write a crash cut short) is ignored, with a note.
//! Uses: model, record, rules, driver's events and start.

use super::events::{Duty, Event, EventLine, EVENT_VERSION};
use super::start::Start;
use crate::config::Game;
use crate::geometry::Point;
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{PutBack, StartState};
use crate::rules::MatchState;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a journal cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: already exists (resume it, or name another journal)", .0.display())]
    Exists(PathBuf),
    #[error("line {line}: not an event ({source})")]
    Corrupt {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("line {line}: event version {version} is newer than this build's ({EVENT_VERSION})")]
    Version { line: usize, version: u32 },
    #[error("an event could not be written as JSON: {0}")]
    Encode(#[source] serde_json::Error),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An open journal, appended to event by event.
pub struct Journal {
    file: File,
    path: PathBuf,
    written: usize,
}

impl Journal {
    /// Starts a new journal at `path`; an existing file is never overwritten.
    pub fn create(path: &Path) -> Result<Journal, JournalError> {
        let file = match OpenOptions::new().append(true).create_new(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(JournalError::Exists(path.to_path_buf()))
            }
            Err(e) => return Err(io(path)(e)),
        };
        sync_folder(path);
        Ok(Journal {
            file,
            path: path.to_path_buf(),
            written: 0,
        })
    }

    /// Opens the journal at `path` to go on with it: reads what it holds, cuts a torn
    /// last line off (so the next event starts a line of its own), and appends after.
    pub fn resume(path: &Path) -> Result<(Journal, JournalRead), JournalError> {
        let read = read(path)?;
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(io(path))?;
        file.set_len(read.complete_bytes).map_err(io(path))?;
        let mut journal = Journal {
            file,
            path: path.to_path_buf(),
            written: 0,
        };
        if read.unterminated {
            // The last event was whole but its newline was not written.
            journal.write_durably(b"\n")?;
        }
        journal.file.sync_all().map_err(io(path))?;
        Ok((journal, read))
    }

    /// [`resume`](Self::resume) a match's journal: also cuts off the events of a shot
    /// whose `shot_over` was never written (a crash while its lines were written; a
    /// resume on a file reads that shot again and tells it whole), so that the journal
    /// ends with a line that closes a step of the match (`match_ready`, `move_ready`,
    /// `shot_over`, `match_over`, `camera`). A note says what was cut.
    pub fn resume_match(path: &Path) -> Result<(Journal, JournalRead), JournalError> {
        let (journal, mut read) = Journal::resume(path)?;
        let Some(last) = read.events.iter().rposition(|e| closes_a_step(&e.event)) else {
            return Ok((journal, read));
        };
        let cut = read.events.len() - (last + 1);
        if cut == 0 {
            return Ok((journal, read));
        }
        // Every line before the last ends with its newline.
        let keep = read.ends[last];
        journal.file.set_len(keep).map_err(io(path))?;
        journal.file.sync_all().map_err(io(path))?;
        read.events.truncate(last + 1);
        read.ends.truncate(last + 1);
        read.complete_bytes = keep;
        read.unterminated = false;
        read.notes.push(format!(
            "the last {cut} event(s) are a shot cut short before its shot_over; cut off, to be told again"
        ));
        Ok((journal, read))
    }

    /// Appends `line` and waits until it is on the disk.
    pub fn append(&mut self, line: &EventLine) -> Result<(), JournalError> {
        let mut bytes = serde_json::to_vec(line).map_err(JournalError::Encode)?;
        bytes.push(b'\n');
        self.write_durably(&bytes)?;
        self.written += 1;
        Ok(())
    }

    fn write_durably(&mut self, bytes: &[u8]) -> Result<(), JournalError> {
        let path = &self.path;
        self.file.write_all(bytes).map_err(io(path))?;
        self.file.flush().map_err(io(path))?;
        self.file.sync_data().map_err(io(path))
    }

    /// Events appended through this handle.
    pub fn written(&self) -> usize {
        self.written
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Makes a new file's name durable: its folder's entry is synced too. Best effort
/// (some systems cannot open a folder for that).
fn sync_folder(path: &Path) {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Whether an event closes a step of the match: the events of a shot before its
/// `shot_over` do not (they are told together, when the shot is judged).
fn closes_a_step(event: &Event) -> bool {
    matches!(
        event,
        Event::MatchReady { .. }
            | Event::MoveReady { .. }
            | Event::ShotOver { .. }
            | Event::MatchOver { .. }
            | Event::Camera { .. }
            | Event::Amended { .. }
    )
}

/// A journal read back.
#[derive(Debug, Clone, Default)]
pub struct JournalRead {
    /// Every whole event, in the order written.
    pub events: Vec<EventLine>,
    /// What was ignored, and why (a torn last line).
    pub notes: Vec<String>,
    /// Bytes up to the end of the last whole event (its newline included, when written).
    pub complete_bytes: u64,
    /// Where each event's line ends in the file (its newline included, when written).
    pub ends: Vec<u64>,
    /// The last whole event's newline is missing (the crash came between the two).
    pub unterminated: bool,
}

/// Reads the journal at `path` ([`parse`]).
pub fn read(path: &Path) -> Result<JournalRead, JournalError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    parse(&bytes)
}

/// Reads a journal's bytes: every newline-terminated line must be an event (else an
/// error naming the line: that is damage, not a crash); what follows the last
/// newline is the write a crash cut short, kept if it is a whole event, ignored
/// with a note if not. Blank lines are skipped.
pub fn parse(bytes: &[u8]) -> Result<JournalRead, JournalError> {
    let mut out = JournalRead::default();
    let mut start = 0usize;
    let mut line = 0usize;
    while start < bytes.len() {
        line += 1;
        let (end, terminated) = match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(k) => (start + k, true),
            None => (bytes.len(), false),
        };
        let text = &bytes[start..end];
        let next = if terminated { end + 1 } else { end };
        if text.iter().all(u8::is_ascii_whitespace) {
            if terminated {
                out.complete_bytes = next as u64;
            }
            start = next;
            continue;
        }
        match parse_line(text, line) {
            Ok(event) => {
                out.events.push(event);
                out.ends.push(next as u64);
                out.complete_bytes = next as u64;
                out.unterminated = !terminated;
            }
            Err(e) if terminated => return Err(e),
            Err(_) => out.notes.push(format!(
                "line {line}: the last {} bytes are an event cut short (the write a crash interrupted); ignored",
                text.len()
            )),
        }
        start = next;
    }
    Ok(out)
}

fn parse_line(text: &[u8], line: usize) -> Result<EventLine, JournalError> {
    // The version first, so that a newer writer's event is named as such.
    #[derive(serde::Deserialize)]
    struct Versioned {
        version: u32,
    }
    if let Ok(v) = serde_json::from_slice::<Versioned>(text) {
        if v.version > EVENT_VERSION {
            return Err(JournalError::Version {
                line,
                version: v.version,
            });
        }
    }
    serde_json::from_slice(text).map_err(|source| JournalError::Corrupt { line, source })
}

/// Where a match stood at the end of a journal: what a resume starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumePoint {
    /// The last frame read when an event was journaled: a resume on a file goes on
    /// from the frame after it.
    pub last_frame: Option<FrameIdx>,
    /// Shots judged.
    pub shots: usize,
    pub scores: Vec<i32>,
    /// Whose move is next.
    pub mover: PlayerIdx,
    pub moves_made: Vec<u32>,
    /// What must be put back before the next move.
    pub duties: Vec<Duty>,
    /// Where the items lay at the last rest (their identities); the start's poses
    /// before the first shot.
    pub rest: BTreeMap<ItemId, Pose>,
    pub off_table: Vec<ItemId>,
    /// Where each lost item left the table.
    pub exits: BTreeMap<ItemId, Pose>,
    /// Violations charged so far, per player.
    pub violations: Vec<u32>,
    /// The frame of the last rest, if a shot was over.
    pub rest_frame: Option<FrameIdx>,
    /// Whether the match was over.
    pub over: bool,
    /// The table calibration a re-fit put in use after a bumped camera (the last
    /// `camera` `bumped` line's `table`): a resume from rest goes on with it.
    /// `None`: the one the run was given.
    pub calibration: Option<crate::calibration::TableFile>,
}

impl JournalRead {
    /// The state of the match after the journal's events; `None` when it holds no
    /// `match_ready` (nothing to resume).
    pub fn resume_point(&self) -> Option<ResumePoint> {
        let mut point: Option<ResumePoint> = None;
        for line in &self.events {
            if let Some(p) = point.as_mut() {
                p.last_frame = Some(p.last_frame.map_or(line.known_at, |f| f.max(line.known_at)));
            }
            match &line.event {
                Event::MatchReady {
                    scores,
                    mover,
                    poses,
                    ..
                } => {
                    point = Some(ResumePoint {
                        last_frame: Some(line.known_at),
                        shots: 0,
                        scores: scores.clone(),
                        mover: *mover,
                        moves_made: vec![0; scores.len()],
                        duties: Vec::new(),
                        rest: poses.clone(),
                        off_table: Vec::new(),
                        exits: BTreeMap::new(),
                        violations: vec![0; scores.len()],
                        rest_frame: None,
                        over: false,
                        calibration: None,
                    });
                }
                Event::ItemLost { item, exit, .. } => {
                    if let Some(p) = point.as_mut() {
                        p.exits.insert(*item, *exit);
                    }
                }
                // One told as it happened is judged again with its shot.
                Event::Violation {
                    player,
                    judged: true,
                    ..
                } => {
                    if let Some(v) = point.as_mut().and_then(|p| p.violations.get_mut(*player)) {
                        *v += 1;
                    }
                }
                Event::ShotOver {
                    shot,
                    scores,
                    next_mover,
                    moves_made,
                    rest,
                    off_table,
                    duties,
                    ..
                } => {
                    if let Some(p) = point.as_mut() {
                        p.shots = shot + 1;
                        p.scores.clone_from(scores);
                        p.mover = *next_mover;
                        p.moves_made.clone_from(moves_made);
                        p.rest.clone_from(rest);
                        p.off_table.clone_from(off_table);
                        p.duties.clone_from(duties);
                        p.exits.retain(|item, _| off_table.contains(item));
                        p.rest_frame = Some(line.frame);
                    }
                }
                Event::MatchOver { .. } => {
                    if let Some(p) = point.as_mut() {
                        p.over = true;
                    }
                }
                // A referee's amendment, or an undo of one (`undone`): the match as
                // re-scored replaces the state the last shot_over told (the shots
                // judged are as many as before).
                Event::Amended {
                    scores,
                    next_mover,
                    moves_made,
                    rest,
                    off_table,
                    exits,
                    duties,
                    violations,
                    over,
                    ..
                } => {
                    if let Some(p) = point.as_mut() {
                        p.scores.clone_from(scores);
                        p.mover = *next_mover;
                        p.moves_made.clone_from(moves_made);
                        if p.shots > 0 {
                            p.rest.clone_from(rest);
                        }
                        p.off_table.clone_from(off_table);
                        p.exits.clone_from(exits);
                        p.duties.clone_from(duties);
                        if violations.len() == p.violations.len() {
                            p.violations.clone_from(violations);
                        }
                        p.over |= *over;
                    }
                }
                Event::Camera {
                    table: Some(table), ..
                } => {
                    if let Some(p) = point.as_mut() {
                        p.calibration = Some((**table).clone());
                    }
                }
                Event::MoveReady { .. }
                | Event::Flick { .. }
                | Event::FlickWithdrawn { .. }
                | Event::Violation { judged: false, .. }
                | Event::PutBackSeen { .. }
                | Event::Camera { .. }
                | Event::ShotRecord { .. } => {}
            }
        }
        point
    }
}

impl ResumePoint {
    /// The start of an analysis that goes on from here: the rest poses name the
    /// items, and the match state (scores, mover, moves made, duties, what is off
    /// the table and where it left) is the journal's.
    pub fn start(&self, game: &Game) -> Start {
        let poses = StartState {
            poses: self.rest.clone(),
            next_player: Some(self.mover),
            scores: Some(self.scores.clone()),
        };
        let mut state = MatchState::from_start(game, &poses);
        state.shots_judged = self.shots;
        if self.moves_made.len() == state.players {
            state.moves_made.clone_from(&self.moves_made);
        }
        if self.violations.len() == state.players {
            state.violations.clone_from(&self.violations);
        }
        state.off_table = self.off_table.iter().copied().collect();
        state.exits = self
            .exits
            .iter()
            .map(|(k, p)| (*k, Point::new(p.x, p.y)))
            .collect();
        state.duties = self
            .duties
            .iter()
            .map(|d| PutBack {
                item: d.item,
                pose: d.pose,
                rule: d.rule.clone(),
                decision: None,
                verdict: d.verdict.clone(),
                reason: d.reason.clone(),
            })
            .collect();
        state.last_rest_frame = self.rest_frame;
        Start {
            poses,
            state: Some(state),
            earlier: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::events::CameraState;
    use proptest::prelude::*;

    fn event(k: usize) -> EventLine {
        let e = match k % 4 {
            0 => Event::Flick {
                shot: k,
                mover: k % 2,
                first_moved: None,
                first_moved_known: false,
            },
            1 => Event::ItemLost {
                shot: k,
                item: ItemId::coin(k % 3),
                exit: Pose::coin(k as f64 * 1.5, 0.25),
            },
            2 => Event::ShotOver {
                shot: k,
                mover: k % 2,
                counted: true,
                flick_frame: k as u64,
                first_moved: Some(ItemId::fish(k % 2)),
                score: vec![1, -1],
                points: vec![],
                scores: vec![k as i32, -(k as i32)],
                next_mover: (k + 1) % 2,
                moves_made: vec![k as u32, k as u32],
                rest: BTreeMap::from([(ItemId::fish(0), Pose::fish(k as f64, 2.0, 0.1))]),
                off_table: vec![],
                duties: vec![],
                notes: vec!["ünïcödé note".into()],
                paths: BTreeMap::new(),
            },
            _ => Event::Camera {
                state: CameraState::Connected,
                dropped: None,
                detail: "webcam:0".into(),
                shift_mm: None,
                table: None,
                refused: None,
            },
        };
        EventLine::new(k as u64 * 7, k as u64 * 7 + 2, 30.0, e)
    }

    /// `events` as they read back: serde_json's float parsing may land one ulp off
    /// the written value, the same way every time.
    fn as_read(events: &[EventLine]) -> Vec<EventLine> {
        events
            .iter()
            .map(|e| serde_json::from_str(&e.to_json().expect("json")).expect("parse"))
            .collect()
    }

    fn journal_bytes(events: &[EventLine]) -> (Vec<u8>, Vec<usize>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.jsonl");
        let mut j = Journal::create(&path).expect("create");
        for e in events {
            j.append(e).expect("append");
        }
        let bytes = std::fs::read(&path).expect("read");
        let ends = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(k, _)| k)
            .collect();
        (bytes, ends)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A journal cut at any byte reads back without an error, with exactly the
        /// events whose line was whole (the last one also when only its newline is
        /// missing), in order.
        #[test]
        fn a_journal_cut_anywhere_keeps_every_whole_event(n in 1usize..12, cut in any::<prop::sample::Index>()) {
            let written: Vec<EventLine> = (0..n).map(event).collect();
            let (bytes, ends) = journal_bytes(&written);
            let events = as_read(&written);
            let at = cut.index(bytes.len() + 1);
            let read = parse(&bytes[..at]).expect("a torn tail is no error");
            let whole = ends.iter().filter(|&&e| e < at).count();
            let expect = if ends.contains(&at) { whole + 1 } else { whole };
            prop_assert_eq!(&read.events[..], &events[..expect]);
            let torn = at > 0 && !ends.contains(&(at - 1)) && !ends.contains(&at);
            prop_assert_eq!(read.notes.len(), usize::from(torn), "{:?}", read.notes);
        }
    }

    #[test]
    fn resuming_a_torn_journal_cuts_the_tail_and_appends_whole_lines() {
        let written: Vec<EventLine> = (0..5).map(event).collect();
        let events = as_read(&written);
        let (bytes, ends) = journal_bytes(&written);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.jsonl");
        // Cut in the middle of the fourth line.
        std::fs::write(&path, &bytes[..ends[2] + 10]).expect("write");
        let (mut j, read) = Journal::resume(&path).expect("resume");
        assert_eq!(read.events, events[..3]);
        assert_eq!(read.notes.len(), 1, "{:?}", read.notes);
        j.append(&written[3]).expect("append");
        j.append(&written[4]).expect("append");
        let again = read_back(&path);
        assert!(again.notes.is_empty(), "{:?}", again.notes);
        assert_eq!(again.events, events);
        assert_eq!(std::fs::read(&path).expect("read"), bytes);
        // Cut just before a newline: the event is whole and kept, its newline added.
        std::fs::write(&path, &bytes[..ends[1]]).expect("write");
        let (mut j, read) = Journal::resume(&path).expect("resume");
        assert_eq!(read.events, events[..2]);
        j.append(&written[2]).expect("append");
        assert_eq!(read_back(&path).events, events[..3]);
    }

    #[test]
    fn resuming_a_match_cuts_a_shot_told_in_part() {
        // flick, item_lost, shot_over, camera, flick, item_lost: the last shot's
        // events came without their shot_over.
        let written: Vec<EventLine> = (0..6).map(event).collect();
        let events = as_read(&written);
        let (bytes, ends) = journal_bytes(&written);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.jsonl");
        // Torn in the middle of the sixth line too.
        std::fs::write(&path, &bytes[..ends[4] + 10]).expect("write");
        let (mut j, read) = Journal::resume_match(&path).expect("resume");
        assert_eq!(read.events, events[..4]);
        assert_eq!(read.notes.len(), 2, "{:?}", read.notes);
        assert_eq!(read.complete_bytes, ends[3] as u64 + 1);
        assert_eq!(
            std::fs::read(&path).expect("read"),
            bytes[..ends[3] + 1].to_vec()
        );
        // Told again, the journal is whole.
        for e in &written[4..] {
            j.append(e).expect("append");
        }
        assert_eq!(std::fs::read(&path).expect("read"), bytes);
        // It ends with that shot in part again: cut again.
        let (_, again) = Journal::resume_match(&path).expect("resume");
        assert_eq!(again.events.len(), 4);
        // A journal ending with a whole step is left as it is.
        let steps: Vec<EventLine> = (0..4).map(event).collect();
        let (bytes, _) = journal_bytes(&steps);
        std::fs::write(&path, &bytes).expect("write");
        let (_, read) = Journal::resume_match(&path).expect("resume");
        assert_eq!(read.events.len(), 4);
        assert!(read.notes.is_empty(), "{:?}", read.notes);
        assert_eq!(std::fs::read(&path).expect("read"), bytes);
    }

    fn read_back(path: &Path) -> JournalRead {
        read(path).expect("read")
    }

    #[test]
    fn damage_before_the_last_line_is_an_error_naming_the_line() {
        let events: Vec<EventLine> = (0..3).map(event).collect();
        let (mut bytes, ends) = journal_bytes(&events);
        bytes[ends[0] + 1] = b'#';
        match parse(&bytes) {
            Err(JournalError::Corrupt { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected a corrupt line 2, got {other:?}"),
        }
    }

    #[test]
    fn a_newer_version_is_refused() {
        let mut e = event(0);
        e.version = EVENT_VERSION + 1;
        let mut bytes = serde_json::to_vec(&e).expect("json");
        bytes.push(b'\n');
        assert!(matches!(
            parse(&bytes),
            Err(JournalError::Version { line: 1, .. })
        ));
    }

    #[test]
    fn an_existing_journal_is_not_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, b"x").expect("write");
        assert!(matches!(
            Journal::create(&path),
            Err(JournalError::Exists(_))
        ));
        assert_eq!(std::fs::read(&path).expect("read"), b"x");
    }

    #[test]
    fn the_resume_point_is_the_last_shot_over() {
        let players = vec!["A".to_string(), "B".to_string()];
        let mut events = vec![EventLine::new(
            0,
            0,
            30.0,
            Event::MatchReady {
                players,
                moves_per_player: 3,
                scores: vec![0, 0],
                mover: 0,
                poses: BTreeMap::new(),
                table: None,
                colors: vec![],
                amendments: vec![],
                amend_refused: None,
            },
        )];
        events.extend((0..8).map(event));
        let read = JournalRead {
            events: events.clone(),
            ..Default::default()
        };
        let p = read.resume_point().expect("a match");
        // Shot events are those with k % 4 == 2: the last is k = 6.
        assert_eq!(p.shots, 7);
        assert_eq!(p.scores, vec![6, -6]);
        assert_eq!(p.mover, 1);
        assert_eq!(p.moves_made, vec![6, 6]);
        assert_eq!(p.rest_frame, Some(42));
        assert_eq!(p.last_frame, Some(7 * 7 + 2));
        // The lost coin's exit is forgotten: it is not off the table at that rest.
        assert!(p.exits.is_empty());
        assert!(JournalRead::default().resume_point().is_none());
    }
}
