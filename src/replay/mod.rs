//! Replay: everything a player or referee looks at after a match — shot diagrams
//! (PNG, drawn to scale in table mm), the HTML match report, the frame-by-frame
//! state the annotated video draws (`vision::annotate` does the OpenCV part), tables
//! for other tools (CSV, MOTChallenge) and a summary over many matches. Pure: no
//! OpenCV here, drawing uses the `image` crate (`evidence` reads video frames through
//! `vision::capture` with the `opencv` feature). Uses: model, config, geometry,
//! record, rules (the points breakdown of an export).
//!
//! | file | owns |
//! |---|---|
//! | `mod` (here) | [`Scene`]: a record with its game, table and colours, validated |
//! | `timeline` | what is on the table at any video frame; the output frame plan |
//! | `draw` | raster primitives (alpha-blended fills, strokes, arrows) |
//! | `font` | a tiny built-in 5x7 bitmap font for labels in PNGs |
//! | `labels` | label placement: no two labels overlap, none leaves the image |
//! | `diagram` | shot diagrams and the table mm <-> diagram pixel map |
//! | `evidence` | image crops of the table top at each call's deciding frames, and their index (`analyse --evidence`, `replay`) |
//! | `html` | the self-contained HTML report |
//! | `export` | a record as CSV tables and MOTChallenge tracks |
//! | `summary` | standings and per-player figures over many records (CSV, HTML) |
//! | `avi` | the Motion-JPEG `.avi` container the annotated video is stored in |

pub mod avi;
pub mod diagram;
pub mod draw;
pub mod evidence;
pub mod export;
pub mod font;
pub mod html;
pub mod labels;
pub mod summary;
pub mod timeline;

pub use diagram::{draw_shot_diagram, DiagramMap, DiagramStyle};
pub use html::{base64_encode, report_html};
pub use timeline::{FrameState, Phase};

use crate::config::{Game, Items, Player};
use crate::geometry::{FishFootprint, Table};
use crate::model::{ItemId, PlayerIdx};
use crate::record::Record;

/// Why a record cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("record: {0}")]
    Invalid(String),
    #[error("record table_mm: {0}")]
    Table(#[from] crate::geometry::TableError),
    #[error("the record has no shot {0} (it has shots {1})")]
    NoSuchShot(usize, String),
    #[error("cannot encode PNG: {0}")]
    Png(String),
}

/// Colours used when neither the record nor the game gives one (matplotlib's tab10).
const FALLBACK_PALETTE: [[u8; 3]; 6] = [
    [214, 39, 40],
    [31, 119, 180],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
];

/// A record ready to be drawn: its set-up (game, items, table) resolved and its
/// tracks checked and sorted by frame.
#[derive(Debug, Clone)]
pub struct Scene {
    pub record: Record,
    /// The set-up: the record's own, else the fallback given to [`Scene::new`], else
    /// the record's player names with default colours and items.
    pub game: Game,
    pub table: Table,
    pub footprint: FishFootprint,
    /// Frames per second (the record's, or 30 when it has none).
    pub fps: f64,
}

impl Scene {
    /// Resolves the set-up — the record's `game` and `table_mm` first, then
    /// `fallback_game` / `fallback_table`, then defaults (1000 x 700 mm) — and checks
    /// what drawing relies on: players of every shot exist, track rows are finite
    /// `[frame, x, y(, theta)]`, rest comes after flick.
    pub fn new(
        mut record: Record,
        fallback_game: Option<Game>,
        fallback_table: Option<Table>,
    ) -> Result<Scene, ReplayError> {
        let mut game = match record.game.clone().or(fallback_game) {
            Some(g) => g,
            None => Game::new(Vec::new(), 1, Items::default_set()),
        };
        // The record's names win (it is the match that was played); the game gives colours.
        let n = record.players.len().max(game.players.len());
        let players: Vec<Player> = (0..n)
            .map(|i| {
                let name = record
                    .players
                    .get(i)
                    .cloned()
                    .or_else(|| game.players.get(i).map(|p| p.name.clone()))
                    .unwrap_or_else(|| format!("Player {i}"));
                let color = game
                    .players
                    .get(i)
                    .filter(|p| p.rgb().is_some())
                    .map(|p| p.color.clone())
                    .unwrap_or_else(|| {
                        let [r, g, b] = FALLBACK_PALETTE[i % FALLBACK_PALETTE.len()];
                        format!("#{r:02x}{g:02x}{b:02x}")
                    });
                Player { name, color }
            })
            .collect();
        game.players = players;
        if game.players.is_empty() {
            return Err(ReplayError::Invalid("the record names no players".into()));
        }
        let table = match &record.table_mm {
            Some(corners) => Table::from_corners(corners)?,
            None => fallback_table.unwrap_or_else(|| Table::rectangle(1000.0, 700.0)),
        };
        let fps = if record.video.fps.is_finite() && record.video.fps > 0.0 {
            record.video.fps
        } else {
            30.0
        };
        let players = game.players.len();
        for shot in &mut record.shots {
            let at = format!("shot {}", shot.index);
            if shot.player >= players {
                return Err(ReplayError::Invalid(format!(
                    "{at}: player {} is not in the game ({players} players)",
                    shot.player
                )));
            }
            if shot.rest_frame < shot.flick_frame {
                return Err(ReplayError::Invalid(format!(
                    "{at}: rest_frame {} comes before flick_frame {}",
                    shot.rest_frame, shot.flick_frame
                )));
            }
            for (item, rows) in &mut shot.tracks {
                let want = if item.is_fish() { 4 } else { 3 };
                for (k, row) in rows.iter().enumerate() {
                    if row.len() < want || row.iter().any(|v| !v.is_finite()) || row[0] < 0.0 {
                        return Err(ReplayError::Invalid(format!(
                            "{at}: track of {item}, row {k}: expected {want} finite numbers \
                             [frame, x, y{}], got {row:?}",
                            if item.is_fish() { ", theta" } else { "" }
                        )));
                    }
                }
                rows.sort_by(|a, b| a[0].total_cmp(&b[0]));
            }
            let ids = shot
                .start
                .keys()
                .chain(shot.end.keys())
                .chain(shot.tracks.keys())
                .chain(shot.lost.iter().map(|l| &l.item));
            for id in ids {
                if id.owner >= players {
                    return Err(ReplayError::Invalid(format!(
                        "{at}: item {id} belongs to no player ({players} players)"
                    )));
                }
            }
        }
        let footprint = FishFootprint::new(&game.items);
        Ok(Scene {
            record,
            game,
            table,
            footprint,
            fps,
        })
    }

    pub fn player_count(&self) -> usize {
        self.game.players.len()
    }

    /// The player's colour as RGB.
    pub fn player_rgb(&self, p: PlayerIdx) -> [u8; 3] {
        self.game
            .players
            .get(p)
            .and_then(|pl| pl.rgb())
            .unwrap_or(FALLBACK_PALETTE[p % FALLBACK_PALETTE.len()])
    }

    pub fn player_name(&self, p: PlayerIdx) -> &str {
        self.game
            .players
            .get(p)
            .map(|pl| pl.name.as_str())
            .unwrap_or("?")
    }

    /// The colour an item is drawn in: its owner's; coins a shade darker so that a
    /// coin in its own fish's hole stays visible.
    pub fn item_rgb(&self, item: ItemId) -> [u8; 3] {
        let c = self.player_rgb(item.owner);
        if item.is_coin() {
            draw::mix(c, [0, 0, 0], 0.35)
        } else {
            c
        }
    }

    /// The position (0-based, in record order) of the shot whose `index` is `index`.
    pub fn shot_position(&self, index: usize) -> Result<usize, ReplayError> {
        self.record
            .shots
            .iter()
            .position(|s| s.index == index)
            .ok_or_else(|| {
                let list: Vec<String> = self
                    .record
                    .shots
                    .iter()
                    .map(|s| s.index.to_string())
                    .collect();
                let list = if list.is_empty() {
                    "none".to_string()
                } else {
                    list.join(", ")
                };
                ReplayError::NoSuchShot(index, list)
            })
    }
}

/// A short label for an item: `F0`, `C1` (fits the bitmap font and small spaces).
pub fn short_label(item: ItemId) -> String {
    format!("{}{}", if item.is_fish() { 'F' } else { 'C' }, item.owner)
}
