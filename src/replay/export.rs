//! Export of a record as tables other tools read: `tracks.csv`, `shots.csv`,
//! `events.csv` and the tracks in the MOTChallenge text format (`tracks.mot.txt`,
//! with `mot-ids.csv` naming its integer ids). Uses: record, rules, Scene.
//!
//! What is written as it stands in the record and what is derived:
//! - positions and angles are the record's track rows (`[frame, x, y(, theta)]`),
//!   theta turned from radians to degrees; `time_s` is `frame / fps`;
//! - `speed_mm_s` is derived: the distance between the row's neighbours in the same
//!   shot's track over the time between them (central difference; the first and last
//!   rows use the one neighbour they have; a track of one row has none);
//! - each shot's points are the record's `score`; the rules behind them come from
//!   the rules engine re-run on the record's own game and table (what `fishtrack
//!   score` prints), and are left empty where the record carries no game or the
//!   engine's points differ from the record's;
//! - MOT boxes are the axis-aligned box of the item's footprint at its pose: the
//!   game's fish outline turned by theta, the coin's disc.

use super::Scene;
use crate::config::Game;
use crate::geometry::{FishFootprint, Table};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{Shot, TrackRow, UnknownItem};
use crate::rules::{MatchState, PointEntry, RulesError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files [`export_csv`] writes into its folder.
pub const TRACKS_CSV: &str = "tracks.csv";
pub const SHOTS_CSV: &str = "shots.csv";
pub const EVENTS_CSV: &str = "events.csv";
pub const MOT_TXT: &str = "tracks.mot.txt";
pub const MOT_IDS_CSV: &str = "mot-ids.csv";

/// MOT ids of items of unknown owner: this plus the tracker's number (clear of the
/// `fish:K`/`coin:K` ids, which stay below it for any table of people).
const UNKNOWN_MOT_ID_BASE: u64 = 1000;

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Csv { path: PathBuf, source: csv::Error },
}

/// How many rows each file got (headers not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportCounts {
    pub tracks: usize,
    pub shots: usize,
    pub events: usize,
    pub mot: usize,
}

/// The rules behind each shot's points (`None`: not known, see [`RulesBreakdown::note`]).
#[derive(Debug, Clone, Default)]
pub struct RulesBreakdown {
    /// One entry per shot of the record, in record order.
    pub shots: Vec<Option<Vec<PointEntry>>>,
    /// Why some or all shots have no rules, for the user.
    pub note: Option<String>,
}

/// Re-runs the rules on the record's own game and table to learn where each shot's
/// points came from. A shot whose re-run points differ from the record's keeps its
/// points but gets no rules: the record is what is reported, and rules that do not
/// add up to it would mislead.
pub fn rules_breakdown(scene: &Scene) -> RulesBreakdown {
    let shots = scene.record.shots.len();
    let Some(game) = &scene.record.game else {
        return RulesBreakdown {
            shots: vec![None; shots],
            note: Some(
                "the record carries no game set-up, so the rules behind the points are not given"
                    .into(),
            ),
        };
    };
    match points_per_shot(game, &scene.table, &scene.record) {
        Ok(PerShot {
            points, differ, ..
        }) => RulesBreakdown {
            shots: points,
            note: (!differ.is_empty()).then(|| {
                format!(
                    "the rules engine gives other points than the record for shot(s) {}: their rules are left empty",
                    differ.join(", ")
                )
            }),
        },
        Err(e) => RulesBreakdown {
            shots: vec![None; shots],
            note: Some(format!(
                "the rules could not be re-run on the record ({e}), so the rules behind the points are not given"
            )),
        },
    }
}

/// The rules engine's points for each shot of a record, as its judgements give them.
pub(crate) struct PerShot {
    /// One entry per shot in record order; `None` where the engine's points differ
    /// from the record's.
    pub points: Vec<Option<Vec<PointEntry>>>,
    /// The indices of the shots whose points differ.
    pub differ: Vec<String>,
    /// The match state after the last shot.
    pub state: MatchState,
}

/// Re-runs the rules on `record` under `game` and `table` and keeps each shot's
/// points where they add up to the record's (the record is what is reported).
pub(crate) fn points_per_shot(
    game: &Game,
    table: &Table,
    record: &crate::record::Record,
) -> Result<PerShot, RulesError> {
    let (_, judgements, state) = crate::rules::rescore_detailed(game, table, record)?;
    let mut differ = Vec::new();
    let points = record
        .shots
        .iter()
        .zip(judgements)
        .map(|(shot, j)| {
            if j.score == shot.score {
                Some(j.points)
            } else {
                differ.push(shot.index.to_string());
                None
            }
        })
        .collect();
    Ok(PerShot {
        points,
        differ,
        state,
    })
}

/// Writes the five files into `dir` (which must exist).
pub fn export_csv(
    scene: &Scene,
    rules: &RulesBreakdown,
    dir: &Path,
) -> Result<ExportCounts, ExportError> {
    let tracks = write_file(&dir.join(TRACKS_CSV), |w| write_tracks_csv(scene, w))?;
    let shots = write_file(&dir.join(SHOTS_CSV), |w| write_shots_csv(scene, rules, w))?;
    let events = write_file(&dir.join(EVENTS_CSV), |w| write_events_csv(scene, w))?;
    let mot = write_file(&dir.join(MOT_TXT), |w| write_mot(scene, w))?;
    write_file(&dir.join(MOT_IDS_CSV), |w| write_mot_ids_csv(scene, w))?;
    Ok(ExportCounts {
        tracks,
        shots,
        events,
        mot,
    })
}

/// Creates `path` and fills it with `fill`, naming the file in any error.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<usize, csv::Error>,
) -> Result<usize, ExportError> {
    let file = std::fs::File::create(path).map_err(|source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = std::io::BufWriter::new(file);
    let rows = fill(&mut out).map_err(|source| ExportError::Csv {
        path: path.to_path_buf(),
        source,
    })?;
    out.flush().map_err(|source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(rows)
}

fn mm(v: f64) -> String {
    format!("{v:.3}")
}

fn seconds(scene: &Scene, frame: f64) -> String {
    format!("{:.4}", frame / scene.fps)
}

/// The label of an item of unknown owner in the tables: `unknown-coin:7`, with the
/// tracker's number (it keeps it through the shots of one clip).
fn unknown_label(u: &UnknownItem) -> String {
    format!("unknown-{}:{}", u.kind, u.track)
}

/// One item's track in a shot, as the tables name it.
struct ItemTrack<'a> {
    /// `fish:K`, `coin:K`, or `unknown-coin:T` for an item of unknown owner.
    label: String,
    fish: bool,
    owner: Option<PlayerIdx>,
    mot_id: u64,
    rows: &'a [TrackRow],
}

/// Every track of a shot: identified items first (in id order), then those of
/// unknown owner.
fn shot_tracks(shot: &Shot) -> Vec<ItemTrack<'_>> {
    let known = shot.tracks.iter().map(|(id, rows)| ItemTrack {
        label: id.to_string(),
        fish: id.is_fish(),
        owner: Some(id.owner),
        mot_id: mot_id(*id),
        rows,
    });
    let unknown = shot
        .unknown
        .iter()
        .filter(|u| !u.track_rows.is_empty())
        .map(|u| ItemTrack {
            label: unknown_label(u),
            fish: u.kind == "fish",
            owner: None,
            mot_id: UNKNOWN_MOT_ID_BASE + u64::from(u.track),
            rows: &u.track_rows,
        });
    known.chain(unknown).collect()
}

/// Speed at each row (mm/s) from its neighbours in the track; `None` for a lone row
/// or neighbours in the same frame.
fn speeds(rows: &[TrackRow], fps: f64) -> Vec<Option<f64>> {
    let at = |i: usize| rows.get(i).filter(|r| r.len() >= 3);
    (0..rows.len())
        .map(|i| {
            let a = i.checked_sub(1).and_then(at).or(at(i))?;
            let b = at(i + 1).or(at(i))?;
            let frames = b[0] - a[0];
            (frames > 0.0).then(|| (b[1] - a[1]).hypot(b[2] - a[2]) * fps / frames)
        })
        .collect()
}

/// `tracks.csv`: one row per item per frame it was tracked in, shot by shot.
pub fn write_tracks_csv(scene: &Scene, out: &mut dyn Write) -> Result<usize, csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "frame",
        "time_s",
        "shot",
        "item",
        "x_mm",
        "y_mm",
        "theta_deg",
        "speed_mm_s",
    ])?;
    let mut rows_written = 0;
    for shot in &scene.record.shots {
        for track in shot_tracks(shot) {
            for (row, speed) in track.rows.iter().zip(speeds(track.rows, scene.fps)) {
                if row.len() < 3 {
                    continue;
                }
                let theta = match row.get(3) {
                    Some(t) if track.fish => format!("{:.3}", t.to_degrees()),
                    _ => String::new(),
                };
                w.write_record([
                    format!("{}", row[0] as FrameIdx),
                    seconds(scene, row[0]),
                    shot.index.to_string(),
                    track.label.clone(),
                    mm(row[1]),
                    mm(row[2]),
                    theta,
                    speed.map(|s| format!("{s:.2}")).unwrap_or_default(),
                ])?;
                rows_written += 1;
            }
        }
    }
    w.flush()?;
    Ok(rows_written)
}

fn signed(v: i32) -> String {
    super::html::signed(v)
}

fn pose_text(pose: &Pose) -> String {
    match pose.theta {
        Some(t) => format!("({:.1}, {:.1}) mm, {:.1}°", pose.x, pose.y, t.to_degrees()),
        None => format!("({:.1}, {:.1}) mm", pose.x, pose.y),
    }
}

fn joined(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(" ")
}

/// `shots.csv`: one row a shot with its points, and for each player the points,
/// the rules they came from and the running total.
pub fn write_shots_csv(
    scene: &Scene,
    rules: &RulesBreakdown,
    out: &mut dyn Write,
) -> Result<usize, csv::Error> {
    let players = scene.player_count();
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<String> = [
        "shot",
        "mover",
        "flick_frame",
        "flick_time_s",
        "rest_frame",
        "rest_time_s",
        "first_moved",
        "lost",
        "put_back",
        "violations",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for p in 0..players {
        let name = scene.player_name(p);
        header.push(format!("points {name}"));
        header.push(format!("rules {name}"));
        header.push(format!("total {name}"));
    }
    w.write_record(&header)?;
    let mut totals = vec![0i32; players];
    for (pos, shot) in scene.record.shots.iter().enumerate() {
        let mut row = vec![
            shot.index.to_string(),
            scene.player_name(shot.player).to_string(),
            shot.flick_frame.to_string(),
            seconds(scene, shot.flick_frame as f64),
            shot.rest_frame.to_string(),
            seconds(scene, shot.rest_frame as f64),
            shot.first_moved.map(|i| i.to_string()).unwrap_or_default(),
            joined(shot.lost.iter().map(|l| l.item.to_string())),
            shot.put_back
                .iter()
                .map(|p| {
                    let verdict = p
                        .verdict
                        .as_deref()
                        .map(|v| format!(" {v}"))
                        .unwrap_or_default();
                    format!("{} {}{verdict}", p.item, p.rule)
                })
                .collect::<Vec<_>>()
                .join("; "),
            joined(shot.violations.iter().map(|v| v.code.clone())),
        ];
        let entries = rules.shots.get(pos).and_then(Option::as_ref);
        for (p, total) in totals.iter_mut().enumerate() {
            let points = shot.score.get(p).copied().unwrap_or(0);
            *total += points;
            row.push(signed(points));
            row.push(entries.map(|e| rules_text(e, p)).unwrap_or_default());
            row.push(total.to_string());
        }
        w.write_record(&row)?;
    }
    w.flush()?;
    Ok(scene.record.shots.len())
}

/// A player's point entries as `+1 R5 (why); -1 R7 (why)`.
fn rules_text(entries: &[PointEntry], player: PlayerIdx) -> String {
    entries
        .iter()
        .filter(|e| e.player == player)
        .map(|e| {
            if e.reason.is_empty() {
                format!("{} {}", signed(e.points), e.rule)
            } else {
                format!("{} {} ({})", signed(e.points), e.rule, e.reason)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One line of `events.csv`.
struct Event {
    frame: Option<FrameIdx>,
    kind: &'static str,
    item: String,
    player: Option<PlayerIdx>,
    rule: String,
    detail: String,
}

impl Event {
    fn new(kind: &'static str, frame: Option<FrameIdx>, item: String) -> Event {
        Event {
            frame,
            kind,
            item,
            player: None,
            rule: String::new(),
            detail: String::new(),
        }
    }
    fn detail(mut self, detail: String) -> Event {
        self.detail = detail;
        self
    }
}

/// Everything the record says happened in a shot besides its tracks, in the
/// order of the match: the interlude before the flick, then the shot.
fn shot_events(shot: &Shot) -> Vec<Event> {
    let rest = Some(shot.rest_frame);
    let mut ev = Vec::new();
    if let Some(before) = &shot.before {
        for p in &before.placed {
            ev.push(
                Event::new("placed", Some(p.frame), p.item.to_string()).detail(pose_text(&p.pose)),
            );
        }
        for d in &before.disturbed {
            ev.push(
                Event::new("disturbed", Some(d.frame), d.item.to_string()).detail(format!(
                    "moved {:.1} mm while no move was in progress",
                    d.distance_mm
                )),
            );
        }
        if let Some(f) = before.ready_frame {
            ev.push(
                Event::new("ready", Some(f), String::new())
                    .detail("every duty done, the table ready for the flick".into()),
            );
        }
    }
    if let Some(first) = shot.first_moved {
        ev.push(Event::new(
            "first_moved",
            Some(shot.flick_frame),
            first.to_string(),
        ));
    }
    for l in &shot.lost {
        ev.push(
            Event::new("lost", Some(l.frame), l.item.to_string()).detail(format!(
                "left the table at ({:.1}, {:.1}) mm",
                l.exit.x, l.exit.y
            )),
        );
    }
    for (coin, fish) in &shot.coins_in_holes {
        ev.push(
            Event::new("coin_in_hole", rest, coin.to_string())
                .detail(format!("in the hole of {fish}")),
        );
    }
    for s in &shot.stacking {
        ev.push(
            Event::new("stacking", rest, s.top.to_string()).detail(format!("lies on {}", s.under)),
        );
    }
    for (fish, touches) in &shot.touches_table {
        let how = if *touches {
            "touches the table"
        } else {
            "does not touch the table"
        };
        ev.push(Event::new("touches_table", rest, fish.to_string()).detail(how.into()));
    }
    for item in &shot.doubt {
        ev.push(
            Event::new("doubt", rest, item.to_string())
                .detail("rest pose, stacking or hole contents in doubt".into()),
        );
    }
    for p in &shot.put_back {
        let mut detail: Vec<String> = Vec::new();
        if let Some(v) = &p.verdict {
            detail.push(v.clone());
        }
        if let Some(pose) = &p.pose {
            detail.push(format!("at {}", pose_text(pose)));
        }
        if !p.reason.is_empty() {
            detail.push(p.reason.clone());
        }
        let mut e = Event::new("put_back", rest, p.item.to_string()).detail(detail.join("; "));
        e.player = Some(p.item.owner);
        e.rule = p.rule.clone();
        ev.push(e);
    }
    for v in &shot.violations {
        let fine = if v.fine != 0 {
            format!(" (fine {})", signed(v.fine))
        } else {
            String::new()
        };
        let mut e = Event::new("violation", Some(v.frame), String::new())
            .detail(format!("{}{fine}", v.evidence));
        e.player = Some(v.player);
        e.rule = format!("R11 {}", v.code);
        ev.push(e);
    }
    for u in &shot.unknown {
        let owners = joined(u.owners.iter().map(|o| format!("P{o}")));
        let mut e = Event::new("unknown_item", shot.flick_frame.into(), unknown_label(u))
            .detail(format!("a {} of unknown owner (one of {owners})", u.kind));
        if let Some(l) = &u.lost {
            e.frame = Some(l.frame);
            e.detail.push_str(&format!(
                ", left the table at ({:.1}, {:.1}) mm",
                l.exit.x, l.exit.y
            ));
        }
        ev.push(e);
    }
    for n in &shot.notes {
        ev.push(Event::new("note", rest, String::new()).detail(n.clone()));
    }
    ev
}

/// `events.csv`: what each shot's record holds besides tracks and points — put-backs,
/// violations, lost items, stacking, interlude moves, notes — and the damaged frames.
pub fn write_events_csv(scene: &Scene, out: &mut dyn Write) -> Result<usize, csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "shot", "frame", "time_s", "kind", "item", "player", "rule", "detail",
    ])?;
    let mut rows = 0;
    let mut write = |w: &mut csv::Writer<&mut dyn Write>, shot: Option<usize>, e: Event| {
        rows += 1;
        w.write_record([
            shot.map(|s| s.to_string()).unwrap_or_default(),
            e.frame.map(|f| f.to_string()).unwrap_or_default(),
            e.frame
                .map(|f| seconds(scene, f as f64))
                .unwrap_or_default(),
            e.kind.to_string(),
            e.item,
            e.player
                .map(|p| scene.player_name(p).to_string())
                .unwrap_or_default(),
            e.rule,
            e.detail,
        ])
    };
    for shot in &scene.record.shots {
        for e in shot_events(shot) {
            write(&mut w, Some(shot.index), e)?;
        }
    }
    let damaged_shot = |f: FrameIdx| {
        scene
            .record
            .shots
            .iter()
            .find(|s| s.rest_frame >= f)
            .map(|s| s.index)
    };
    for &f in &scene.record.video.damaged_frames {
        let e = Event::new("damaged_frame", Some(f), String::new())
            .detail("could not be decoded: nothing was seen in it".into());
        write(&mut w, damaged_shot(f), e)?;
    }
    w.flush()?;
    Ok(rows)
}

/// The MOT id of an item: `fish:K` → 2K+1, `coin:K` → 2K+2 (the same in every record of
/// the same players; MOT ids start at 1).
pub fn mot_id(item: ItemId) -> u64 {
    2 * item.owner as u64 + if item.is_fish() { 1 } else { 2 }
}

/// The axis-aligned box (min x, min y, width, height) of an item's footprint, mm.
fn footprint_box(footprint: &FishFootprint, coin_radius: f64, fish: bool, row: &[f64]) -> [f64; 4] {
    let (x, y) = (row[1], row[2]);
    if !fish {
        return [
            x - coin_radius,
            y - coin_radius,
            2.0 * coin_radius,
            2.0 * coin_radius,
        ];
    }
    let theta = row.get(3).copied().unwrap_or(0.0);
    let (sin, cos) = theta.sin_cos();
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in footprint.outline() {
        let px = x + cos * p.x - sin * p.y;
        let py = y + sin * p.x + cos * p.y;
        lo = [lo[0].min(px), lo[1].min(py)];
        hi = [hi[0].max(px), hi[1].max(py)];
    }
    [lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]]
}

/// Every tracked item of the record: its MOT id, label and owner.
fn mot_items(scene: &Scene) -> Vec<(u64, String, Option<PlayerIdx>)> {
    let mut ids: Vec<_> = scene
        .record
        .shots
        .iter()
        .flat_map(shot_tracks)
        .map(|t| (t.mot_id, t.label, t.owner))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// `tracks.mot.txt`: `frame,id,bb_left,bb_top,bb_width,bb_height,conf,x,y,z`, no
/// header, sorted by frame then id. Frames count from 1 as MOTChallenge's do (the
/// record's frame + 1); boxes, x and y are table mm (`bb_left`/`bb_top` are the box's
/// smallest x and y); `conf` is 1 (the record keeps no confidence); z is 0, the table top.
pub fn write_mot(scene: &Scene, out: &mut dyn Write) -> Result<usize, csv::Error> {
    let coin_radius = scene.game.items.coin.radius;
    let mut lines: Vec<(u64, u64, [f64; 4], f64, f64)> = Vec::new();
    for shot in &scene.record.shots {
        for track in shot_tracks(shot) {
            for row in track.rows.iter().filter(|r| r.len() >= 3) {
                let bbox = footprint_box(&scene.footprint, coin_radius, track.fish, row);
                lines.push((row[0] as u64 + 1, track.mot_id, bbox, row[1], row[2]));
            }
        }
    }
    lines.sort_by_key(|a| (a.0, a.1));
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    for (frame, id, [left, top, width, height], x, y) in &lines {
        w.write_record([
            frame.to_string(),
            id.to_string(),
            mm(*left),
            mm(*top),
            mm(*width),
            mm(*height),
            "1".into(),
            mm(*x),
            mm(*y),
            "0".into(),
        ])?;
    }
    w.flush()?;
    Ok(lines.len())
}

/// `mot-ids.csv`: which item each MOT id is, and whose.
pub fn write_mot_ids_csv(scene: &Scene, out: &mut dyn Write) -> Result<usize, csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["mot_id", "item", "player"])?;
    let items = mot_items(scene);
    for (id, label, owner) in &items {
        let player = owner.map(|p| scene.player_name(p)).unwrap_or("");
        w.write_record([id.to_string(), label.clone(), player.to_string()])?;
    }
    w.flush()?;
    Ok(items.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_is_the_central_difference_and_none_for_a_lone_row() {
        let rows = vec![
            vec![10.0, 0.0, 0.0],
            vec![11.0, 3.0, 4.0],
            vec![13.0, 9.0, 12.0],
        ];
        let s = speeds(&rows, 30.0);
        // First row: to its one neighbour, 5 mm in 1 frame.
        assert!((s[0].unwrap() - 150.0).abs() < 1e-9);
        // Middle: 15 mm over 3 frames.
        assert!((s[1].unwrap() - 150.0).abs() < 1e-9);
        // Last: 10 mm over 2 frames.
        assert!((s[2].unwrap() - 150.0).abs() < 1e-9);
        assert_eq!(speeds(&rows[..1], 30.0), vec![None]);
    }

    #[test]
    fn mot_ids_are_distinct_and_start_at_one() {
        let ids: Vec<u64> = (0..4)
            .flat_map(|k| [mot_id(ItemId::fish(k)), mot_id(ItemId::coin(k))])
            .collect();
        assert_eq!(ids, (1..=8).collect::<Vec<u64>>());
    }
}
