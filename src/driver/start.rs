//! Where an analysis starts: the opening poses and match state of a clip that begins
//! mid-match (`analyse --start`, the next clip of a `--chain`, a `live --resume`),
//! read from a previous record or a `state.json` and checked against the set-up.
//! Uses: config, geometry, model, record, rules.

use crate::config::{load_json, ConfigError, Game};
use crate::geometry::Table;
use crate::model::{ItemId, Pose};
use crate::record::{Record, StartState};
use crate::rules::{MatchState, RulesError};
use std::path::{Path, PathBuf};

/// Why a start cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Load(#[from] ConfigError),
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// The start in `path` is wrong in the way `source` says.
    #[error("{}", path.display())]
    In {
        path: PathBuf,
        #[source]
        source: Box<StartError>,
    },
    #[error("{item} names player {owner} but the game has {players} players")]
    UnknownOwner {
        item: ItemId,
        owner: usize,
        players: usize,
    },
    #[error("{0}: its pose is not a finite number")]
    NotFinite(ItemId),
    #[error("{item} at ({x:.1}, {y:.1}) mm lies off the table")]
    OffTable { item: ItemId, x: f64, y: f64 },
    #[error("next_player is {next} but the game has {players} players")]
    NextPlayer { next: usize, players: usize },
    #[error("scores has {scores} entries but the game has {players} players")]
    Scores { scores: usize, players: usize },
    #[error("the record is from another game set-up (players {record:?}, this game has {game:?})")]
    OtherPlayers {
        record: Vec<String>,
        game: Vec<String>,
    },
    #[error("the record is from another game set-up (colours {record:?}, this game has {game:?})")]
    OtherColours {
        record: Vec<String>,
        game: Vec<String>,
    },
    #[error("the record has no shots to continue from")]
    NoShots,
}

/// The opening poses and match state of a clip.
#[derive(Debug, Clone)]
pub struct Start {
    /// Where every item lies (identities), whose move it is, the scores.
    pub poses: StartState,
    /// The whole match state when known (a record continued); else it is made
    /// from `poses`.
    pub state: Option<MatchState>,
    /// The match's shots judged before it, when known (a record continued, a live
    /// match resumed): an amendment made while the clip runs is made on them too.
    pub earlier: Vec<crate::record::Shot>,
}

impl Start {
    /// Reads `--start`: a previous record (its last rest poses and match state) or a
    /// state.json, checked against `game` and `table`.
    pub fn load(path: &Path, game: &Game, table: &Table) -> Result<Start, StartError> {
        let within = |e: StartError| StartError::In {
            path: path.to_path_buf(),
            source: Box::new(e),
        };
        let value: serde_json::Value = load_json(path)?;
        if value.get("shots").is_some() {
            let record = Record::load(path)?;
            return Start::from_record(&record, game, table).map_err(within);
        }
        let poses = StartState::load(path)?;
        validate_start(&poses, game, table).map_err(within)?;
        let state = MatchState::from_start(game, &poses);
        Ok(Start {
            poses,
            state: Some(state),
            earlier: Vec::new(),
        })
    }

    /// Continues the match `record` holds: its last shot's rest poses and the match
    /// state after it.
    pub fn from_record(record: &Record, game: &Game, table: &Table) -> Result<Start, StartError> {
        let names: Vec<&str> = game.players.iter().map(|p| p.name.as_str()).collect();
        if record
            .players
            .iter()
            .map(String::as_str)
            .ne(names.iter().copied())
        {
            return Err(StartError::OtherPlayers {
                record: record.players.clone(),
                game: names.iter().map(|n| n.to_string()).collect(),
            });
        }
        // Same names but other colours (or another count) is another set-up as well.
        if let Some(g) = &record.game {
            let colours = |ps: &[crate::config::Player]| -> Vec<String> {
                ps.iter().map(|p| p.color.to_ascii_lowercase()).collect()
            };
            if colours(&g.players) != colours(&game.players) {
                return Err(StartError::OtherColours {
                    record: colours(&g.players),
                    game: colours(&game.players),
                });
            }
        }
        let Some(last) = record.shots.last() else {
            return Err(StartError::NoShots);
        };
        let state = record_end_state(record, game, table)?;
        let poses = StartState {
            poses: last.end.clone(),
            next_player: Some(state.next_player),
            scores: Some(state.scores.clone()),
        };
        validate_start(&poses, game, table)?;
        Ok(Start {
            poses,
            state: Some(continued(state)),
            earlier: record.shots.clone(),
        })
    }

    /// The start of the clip after one that ended at rest in `poses` with `state`
    /// (`--chain`).
    pub fn after_clip(poses: std::collections::BTreeMap<ItemId, Pose>, state: MatchState) -> Start {
        Start {
            poses: StartState {
                poses,
                next_player: Some(state.next_player),
                scores: Some(state.scores.clone()),
            },
            state: Some(continued(state)),
            earlier: Vec::new(),
        }
    }
}

/// The match state after a record's last shot. A record of a whole match is
/// rescored from the start of the match; a record of a clip that itself continued
/// a match (its first shot's index is not 0) is rescored from the state it opened
/// with, read back from the record: whose move it was (its first shot's mover by
/// turn), the scores before it (its totals less its shots' points), the items on the
/// table (its first shot's start, less what was put back before that flick), the
/// moves made (its first shot's index, in turn from player 0).
pub fn record_end_state(
    record: &Record,
    game: &Game,
    table: &Table,
) -> Result<MatchState, StartError> {
    let Some(first) = record.shots.first().filter(|s| s.index > 0) else {
        let (_, _, state) = crate::rules::rescore_detailed(game, table, record)?;
        return Ok(state);
    };
    let players = game.player_count();
    let scores: Vec<i32> = (0..players)
        .map(|p| {
            let total = record.scores.get(p).copied().unwrap_or(0);
            total
                - record
                    .shots
                    .iter()
                    .map(|s| s.score.get(p).copied().unwrap_or(0))
                    .sum::<i32>()
        })
        .collect();
    let mut poses = first.start.clone();
    if let Some(b) = &first.before {
        for p in &b.placed {
            poses.remove(&p.item);
        }
    }
    let opening = StartState {
        poses,
        next_player: Some(first.player),
        scores: Some(scores),
    };
    let mut state = MatchState::from_start(game, &opening).with_fps(record.video.fps);
    state.shots_judged = first.index;
    // The shots before it, taken as made in turn from player 0.
    for (p, m) in state.moves_made.iter_mut().enumerate() {
        *m = (0..first.index).filter(|k| k % players == p).count() as u32;
    }
    for shot in &record.shots {
        let (next, _) = crate::rules::judge_shot(game, table, &state, shot)?;
        state = next;
    }
    Ok(state)
}

/// A match state carried into the next clip: its frame numbers belong to the
/// previous video, so they are forgotten (the next clip's first interlude starts
/// at its first frame).
pub fn continued(mut state: MatchState) -> MatchState {
    state.last_rest_frame = None;
    state
}

/// Checks a start against the set-up: every item's owner a player, every pose finite
/// and on the table, the next player and the scores within the player count.
pub fn validate_start(start: &StartState, game: &Game, table: &Table) -> Result<(), StartError> {
    let players = game.player_count();
    for (id, pose) in &start.poses {
        if id.owner >= players {
            return Err(StartError::UnknownOwner {
                item: *id,
                owner: id.owner,
                players,
            });
        }
        check_pose(id, pose, table)?;
    }
    if let Some(p) = start.next_player {
        if p >= players {
            return Err(StartError::NextPlayer { next: p, players });
        }
    }
    if let Some(s) = &start.scores {
        if s.len() != players {
            return Err(StartError::Scores {
                scores: s.len(),
                players,
            });
        }
    }
    Ok(())
}

fn check_pose(id: &ItemId, pose: &Pose, table: &Table) -> Result<(), StartError> {
    if !(pose.x.is_finite() && pose.y.is_finite() && pose.theta.is_none_or(f64::is_finite)) {
        return Err(StartError::NotFinite(*id));
    }
    if !table.contains(pose.point()) {
        return Err(StartError::OffTable {
            item: *id,
            x: pose.x,
            y: pose.y,
        });
    }
    Ok(())
}
