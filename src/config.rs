//! The match set-up files of DESIGN.md — `items.json` (the physical items) and
//! `game.json` (players, moves, fine policy) — parsed and validated, plus the one
//! JSON loader every file format uses, so that a malformed file is always reported
//! with its path, line and column. Uses: model, serde.

use crate::model::PlayerIdx;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Why a file could not be read or does not describe a valid set-up.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: malformed JSON: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{game}: its items file {items} is neither beside it ({beside}) nor in {fallback}")]
    ItemsNotFound {
        game: PathBuf,
        items: PathBuf,
        beside: PathBuf,
        fallback: PathBuf,
    },
}

/// Where a game file's relative `items` path is looked for when it is not beside the
/// game file: the bundled calibration folder, as every command's defaults are.
pub const ITEMS_FALLBACK_DIR: &str = "calibration";

/// Reads and parses a JSON file; errors carry the path, and for bad JSON the line and column.
pub fn load_json<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_json(&text, path)
}

/// Parses JSON text that came from `path` (used only for messages).
pub fn parse_json<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, ConfigError> {
    serde_json::from_str(text).map_err(|e| {
        // serde_json's message ends with " at line L column C"; we report those separately.
        let full = e.to_string();
        let message = match full.rfind(" at line ") {
            Some(i) => full[..i].to_string(),
            None => full,
        };
        ConfigError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })
}

/// Writes a value as pretty JSON, creating parent folders.
pub fn save_json<T: Serialize>(value: &T, path: &Path) -> Result<(), ConfigError> {
    let io = |source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(value).expect("serialising plain data cannot fail");
    std::fs::write(path, text + "\n").map_err(io)
}

/// The fish (a tag with a round hole), in the fish frame: origin at the hole centre,
/// +x from the hole toward the far end of the tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FishShape {
    /// A simple polygon (mm, fish frame), either winding; the hole lies inside it.
    pub outline: Vec<[f64; 2]>,
    pub hole_radius: f64,
    pub thickness: f64,
}

/// The coin: a disc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoinShape {
    pub radius: f64,
    pub thickness: f64,
}

/// `items.json`: the physical items, the same for every player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Items {
    pub fish: FishShape,
    pub coin: CoinShape,
}

impl Items {
    /// The default tag of the bundled samples: a rounded 75 x 30 mm cloakroom tag with
    /// a 20 mm hole near one end, and a one-kopeck coin (15 mm across).
    pub fn default_set() -> Items {
        let mut outline = Vec::new();
        // A stadium: a half circle of radius 15 around the hole end, straight sides, a
        // half circle at the far end; the hole centre sits at the origin.
        let r = 15.0;
        let far = 45.0;
        let n = 16;
        for i in 0..=n {
            let a = std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * i as f64 / n as f64;
            outline.push([r * a.cos(), r * a.sin()]);
        }
        for i in 0..=n {
            let a = -std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * i as f64 / n as f64;
            outline.push([far + r * a.cos(), r * a.sin()]);
        }
        Items {
            fish: FishShape {
                outline,
                hole_radius: 10.0,
                thickness: 2.5,
            },
            coin: CoinShape {
                radius: 7.5,
                thickness: 1.2,
            },
        }
    }

    /// Checks what the geometry relies on: a simple outline around the hole, a coin
    /// that fits in the hole, positive sizes. Returns a one-line reason.
    pub fn validate(&self) -> Result<(), String> {
        let f = &self.fish;
        if f.outline.len() < 3 {
            return Err("fish outline needs at least 3 points".into());
        }
        if f.outline.iter().flatten().any(|v| !v.is_finite()) {
            return Err("fish outline has a non-finite coordinate".into());
        }
        for (name, v) in [
            ("fish.hole_radius", f.hole_radius),
            ("fish.thickness", f.thickness),
            ("coin.radius", self.coin.radius),
            ("coin.thickness", self.coin.thickness),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} must be a positive number, got {v}"));
            }
        }
        if self.coin.radius >= f.hole_radius {
            return Err(format!(
                "the coin (radius {} mm) is not smaller than the hole (radius {} mm)",
                self.coin.radius, f.hole_radius
            ));
        }
        let shape = crate::geometry::FishFootprint::new(self);
        shape.validate()
    }
}

/// When R11 fines are applied: the camera cannot judge "heavy", so the set-up chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FinePolicy {
    /// Flag violations with evidence, fine nobody (a referee decides).
    #[default]
    None,
    /// Fine repeat offences: a player's second and later violations.
    Repeat,
    /// Fine every undisputed (camera-visible) violation.
    Undisputed,
}

/// One player of `game.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Player {
    pub name: String,
    /// `#rrggbb`: the colour of this player's fish.
    pub color: String,
}

impl Player {
    /// The colour as RGB bytes, if it is a valid `#rrggbb`.
    pub fn rgb(&self) -> Option<[u8; 3]> {
        parse_hex_color(&self.color)
    }
}

/// Parses `#rrggbb`.
pub fn parse_hex_color(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

/// `items` in game.json: inline, or a path relative to the game file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ItemsRef {
    Inline(Items),
    Path(PathBuf),
}

/// `game.json` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameFile {
    pub players: Vec<Player>,
    pub moves_per_player: u32,
    pub items: ItemsRef,
    #[serde(default)]
    pub fine_policy: FinePolicy,
}

/// A validated match set-up with its items resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Game {
    pub players: Vec<Player>,
    pub moves_per_player: u32,
    pub items: Items,
    pub fine_policy: FinePolicy,
}

impl Game {
    /// A set-up in code: for tests and the simulator.
    pub fn new(players: Vec<Player>, moves_per_player: u32, items: Items) -> Self {
        Game {
            players,
            moves_per_player,
            items,
            fine_policy: FinePolicy::None,
        }
    }

    pub fn player_count(&self) -> usize {
        self.players.len()
    }

    pub fn has_player(&self, p: PlayerIdx) -> bool {
        p < self.players.len()
    }

    /// Loads and validates `game.json`, resolving a relative `items` path against the
    /// game file's folder, else [`ITEMS_FALLBACK_DIR`] (a game file written by hand
    /// elsewhere, with the bundled tags).
    pub fn load(path: &Path) -> Result<Game, ConfigError> {
        Self::load_with_fallback(path, Path::new(ITEMS_FALLBACK_DIR))
    }

    /// As [`Game::load`], with the folder looked in after the game file's own.
    pub fn load_with_fallback(path: &Path, fallback_dir: &Path) -> Result<Game, ConfigError> {
        let file: GameFile = load_json(path)?;
        let items = match file.items {
            ItemsRef::Inline(items) => items,
            ItemsRef::Path(p) if p.is_relative() => {
                let beside = path.parent().unwrap_or(Path::new(".")).join(&p);
                let fallback = fallback_dir.join(&p);
                let place = if beside.exists() {
                    beside
                } else if fallback.exists() {
                    fallback
                } else {
                    return Err(ConfigError::ItemsNotFound {
                        game: path.to_path_buf(),
                        items: p,
                        beside,
                        fallback,
                    });
                };
                load_items(&place)?
            }
            ItemsRef::Path(p) => load_items(&p)?,
        };
        let game = Game {
            players: file.players,
            moves_per_player: file.moves_per_player,
            items,
            fine_policy: file.fine_policy,
        };
        game.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(game)
    }

    /// Checks the set-up; returns a one-line reason.
    pub fn validate(&self) -> Result<(), String> {
        if self.players.is_empty() {
            return Err("a game needs at least one player".into());
        }
        for (i, p) in self.players.iter().enumerate() {
            if p.rgb().is_none() {
                return Err(format!(
                    "player {i} ({}) has colour `{}`, expected #rrggbb",
                    p.name, p.color
                ));
            }
        }
        if self.moves_per_player == 0 {
            return Err("moves_per_player must be at least 1".into());
        }
        self.items.validate()
    }

    /// The game file form with items inline.
    pub fn to_file(&self) -> GameFile {
        GameFile {
            players: self.players.clone(),
            moves_per_player: self.moves_per_player,
            items: ItemsRef::Inline(self.items.clone()),
            fine_policy: self.fine_policy,
        }
    }
}

/// Loads and validates `items.json`.
pub fn load_items(path: &Path) -> Result<Items, ConfigError> {
    let items: Items = load_json(path)?;
    items.validate().map_err(|message| ConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game file elsewhere finds its items beside it, else in the fallback folder;
    /// with neither, the error names both places.
    #[test]
    fn a_game_files_items_are_found_beside_it_or_in_the_fallback_folder() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (game_dir, fallback) = (dir.path().join("match"), dir.path().join("calibration"));
        std::fs::create_dir_all(&game_dir).unwrap();
        std::fs::create_dir_all(&fallback).unwrap();
        let game = game_dir.join("game.json");
        std::fs::write(
            &game,
            r##"{"players": [{"name": "Anna", "color": "#d62728"}],
                "moves_per_player": 1, "items": "items.json"}"##,
        )
        .unwrap();
        let items = |radius: f64| {
            let mut i = Items::default_set();
            i.coin.radius = radius;
            serde_json::to_string(&i).unwrap()
        };
        let err = Game::load_with_fallback(&game, &fallback).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&game_dir.join("items.json").display().to_string())
                && msg.contains(&fallback.join("items.json").display().to_string()),
            "{msg}"
        );
        std::fs::write(fallback.join("items.json"), items(7.0)).unwrap();
        let g = Game::load_with_fallback(&game, &fallback).unwrap();
        assert_eq!(g.items.coin.radius, 7.0, "from the fallback folder");
        std::fs::write(game_dir.join("items.json"), items(8.0)).unwrap();
        let g = Game::load_with_fallback(&game, &fallback).unwrap();
        assert_eq!(g.items.coin.radius, 8.0, "beside the game file first");
    }

    #[test]
    fn malformed_json_reports_line_and_column() {
        let err = parse_json::<Items>("{\n  \"fish\": {\n} }}", Path::new("x.json")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("x.json:3:"), "{msg}");
        assert!(msg.contains("malformed JSON"), "{msg}");
    }

    #[test]
    fn coin_larger_than_hole_is_rejected() {
        let mut items = Items::default_set();
        assert!(items.validate().is_ok());
        items.coin.radius = 11.0;
        let err = items.validate().unwrap_err();
        assert!(err.contains("not smaller than the hole"), "{err}");
    }

    #[test]
    fn hex_colours_parse() {
        assert_eq!(parse_hex_color("#ff8000"), Some([255, 128, 0]));
        assert_eq!(parse_hex_color("ff8000"), None);
        assert_eq!(parse_hex_color("#ff80"), None);
    }
}
