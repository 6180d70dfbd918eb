//! The match set-up files of DESIGN.md — `items.json` (the physical items) and
//! `game.json` (players, moves, fine policy) — parsed and validated, plus the one
//! JSON loader every file format uses, so that a malformed file is always reported
//! with its path, line and column. Uses: model, serde.

use crate::limits;
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
    #[error("{path}: unknown key `{key}` (did you mean {suggestion}?)")]
    UnknownKey {
        path: PathBuf,
        key: String,
        suggestion: String,
    },
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

/// [`load_json`] for a file format of this crate: besides the JSON, refuses a key
/// that is not the format's but lies within two edits of one that is (`fine_polcy`
/// for `fine_policy`): a misspelt key would otherwise be ignored, its default used
/// in silence. Other unknown keys are ignored, as DESIGN.md has it, so that a file
/// may carry notes or a later version's extensions.
pub fn load_checked<T: DeserializeOwned + Serialize>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_checked(&text, path)
}

/// [`load_checked`] on text that came from `path` (used only for messages).
pub fn parse_checked<T: DeserializeOwned + Serialize>(
    text: &str,
    path: &Path,
) -> Result<T, ConfigError> {
    let value: T = parse_json(text, path)?;
    let written: serde_json::Value = parse_json(text, path)?;
    // The keys the format knows at each level are those its value writes back.
    let known = serde_json::to_value(&value).unwrap_or(serde_json::Value::Null);
    if let Some((key, near)) = misspelt_key(&written, &known, "") {
        return Err(ConfigError::UnknownKey {
            path: path.to_path_buf(),
            key,
            suggestion: near,
        });
    }
    Ok(value)
}

/// The first key of `written` absent from `known` at the same place and close to a
/// key that is there, with that key. A key whose value is empty (`null`, `[]`, `{}`,
/// `""`) is passed over: a known optional key is not written back when empty.
fn misspelt_key(
    written: &serde_json::Value,
    known: &serde_json::Value,
    at: &str,
) -> Option<(String, String)> {
    use serde_json::Value;
    match (written, known) {
        (Value::Object(w), Value::Object(k)) => w.iter().find_map(|(key, v)| {
            let here = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            match k.get(key) {
                Some(kv) => misspelt_key(v, kv, &here),
                None if is_empty(v) => None,
                None => crate::limits::nearest_key(key, k.keys().map(String::as_str))
                    .map(|near| (here, format!("`{near}`"))),
            }
        }),
        (Value::Array(w), Value::Array(k)) => w
            .iter()
            .zip(k)
            .enumerate()
            .find_map(|(i, (v, kv))| misspelt_key(v, kv, &format!("{at}[{i}]"))),
        _ => None,
    }
}

fn is_empty(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
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
        limits::check_count("fish.outline", f.outline.len(), limits::MAX_OUTLINE_POINTS)?;
        for (i, [x, y]) in f.outline.iter().enumerate() {
            for (axis, v) in [("x", x), ("y", y)] {
                limits::check_range(
                    &format!("fish.outline[{i}].{axis}"),
                    *v,
                    -limits::MAX_ITEM_MM,
                    limits::MAX_ITEM_MM,
                    "mm",
                )?;
            }
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
            limits::check_range(name, v, 0.0, limits::MAX_ITEM_MM, "mm")?;
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
    /// Calls less sure than this (0 to 1) are flagged for review; absent: 0.8
    /// ([`DEFAULT_REVIEW_BELOW`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_below: Option<f64>,
}

/// The review threshold when the game file names none: a call less sure than this is
/// flagged for the referee to look at first (`review_below`; docs/formats.md).
pub const DEFAULT_REVIEW_BELOW: f64 = 0.8;

/// A validated match set-up with its items resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Game {
    pub players: Vec<Player>,
    pub moves_per_player: u32,
    pub items: Items,
    pub fine_policy: FinePolicy,
    /// Calls less sure than this (0 to 1) are flagged for review (`review_below` in
    /// game.json; absent: [`DEFAULT_REVIEW_BELOW`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_below: Option<f64>,
}

impl Game {
    /// A set-up in code: for tests and the simulator.
    pub fn new(players: Vec<Player>, moves_per_player: u32, items: Items) -> Self {
        Game {
            players,
            moves_per_player,
            items,
            fine_policy: FinePolicy::None,
            review_below: None,
        }
    }

    /// The review threshold: `review_below`, else [`DEFAULT_REVIEW_BELOW`].
    pub fn review_below(&self) -> f64 {
        self.review_below.unwrap_or(DEFAULT_REVIEW_BELOW)
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
        let file: GameFile = load_checked(path)?;
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
            review_below: file.review_below,
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
        limits::check_count("players", self.players.len(), limits::MAX_PLAYERS)?;
        let mut seen: Vec<([u8; 3], usize)> = Vec::new();
        for (i, p) in self.players.iter().enumerate() {
            let Some(rgb) = p.rgb() else {
                return Err(format!(
                    "player {i} ({}) has colour `{}`, expected #rrggbb",
                    p.name, p.color
                ));
            };
            // The colour is how the camera tells whose fish it is.
            if let Some((_, j)) = seen.iter().find(|(c, _)| *c == rgb) {
                return Err(format!(
                    "players[{i}] ({}) has the colour {} of players[{j}] ({}): each player's fish needs its own colour",
                    p.name, p.color, self.players[*j].name
                ));
            }
            seen.push((rgb, i));
        }
        if let Some(r) = self.review_below.filter(|r| !(0.0..=1.0).contains(r)) {
            return Err(format!(
                "review_below is {r}, outside the allowed 0 to 1 (a call's confidence)"
            ));
        }
        if self.moves_per_player == 0 {
            return Err("moves_per_player must be at least 1".into());
        }
        if self.moves_per_player > limits::MAX_MOVES_PER_PLAYER {
            return Err(format!(
                "moves_per_player is {}, outside the allowed 1 to {}",
                self.moves_per_player,
                limits::MAX_MOVES_PER_PLAYER
            ));
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
            review_below: self.review_below,
        }
    }
}

/// Loads and validates `items.json`.
pub fn load_items(path: &Path) -> Result<Items, ConfigError> {
    let items: Items = load_checked(path)?;
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

    /// A misspelt key is refused with the key it is near; a key near none is ignored.
    #[test]
    fn a_misspelt_key_is_refused_with_the_nearest_known_one() {
        let game = |extra: &str| {
            format!(
                r##"{{"players": [{{"name": "Anna", "color": "#d62728"}}],
                    "moves_per_player": 1, "items": "items.json"{extra}}}"##
            )
        };
        let err =
            parse_checked::<GameFile>(&game(r#", "fine_polcy": "repeat""#), Path::new("g.json"))
                .unwrap_err()
                .to_string();
        assert_eq!(
            err,
            "g.json: unknown key `fine_polcy` (did you mean `fine_policy`?)"
        );
        let err = parse_checked::<GameFile>(
            &game("").replace(r#""color""#, r#""colour""#),
            Path::new("g.json"),
        );
        // `colour` misses the required `color`: serde says so itself.
        assert!(err.is_err());
        let ok = parse_checked::<GameFile>(&game(r#", "comment": "Friday""#), Path::new("g.json"));
        assert!(ok.is_ok(), "{ok:?}");
        let nested = parse_checked::<Items>(
            &serde_json::to_string(&Items::default_set())
                .unwrap()
                .replace(r#""thickness":1.2"#, r#""thickness":1.2,"radius_":3"#),
            Path::new("i.json"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            nested.contains("`coin.radius_`") && nested.contains("`radius`"),
            "{nested}"
        );
    }

    /// The set-up limits: players, colours, moves and item sizes.
    #[test]
    fn a_game_out_of_bounds_names_the_field_and_the_range() {
        let player = |c: &str| Player {
            name: "P".into(),
            color: c.into(),
        };
        let mut g = Game::new(
            vec![player("#d62728"), player("#1f77b4")],
            3,
            Items::default_set(),
        );
        assert!(g.validate().is_ok());
        g.players[1].color = "#D62728".into();
        let e = g.validate().unwrap_err();
        assert!(e.contains("players[1]") && e.contains("players[0]"), "{e}");
        g.players = (0..17).map(|i| player(&format!("#0000{i:02x}"))).collect();
        assert!(g.validate().unwrap_err().contains("at most 16"));
        g.players.truncate(2);
        g.moves_per_player = 1_000_000;
        assert!(g.validate().unwrap_err().contains("1 to 1000"));
        g.moves_per_player = 3;
        g.items.fish.outline[3] = [53_000.0, 0.0];
        let e = g.validate().unwrap_err();
        assert!(
            e.contains("fish.outline[3].x") && e.contains("500 mm"),
            "{e}"
        );
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
