//! Scenarios: what the simulator plays — from a JSON file or a built-in name —
//! and their validation. Pure. Uses: model, config, geometry, sim::camera,
//! sim::physics.
//!
//! # Scenario JSON format
//!
//! Every key is optional; a file `{}` is a two-player match from the seed.
//!
//! ```json
//! {
//!   "name": "my-scene",
//!   "kind": "play",
//!   "table": { "width_mm": 1000, "height_mm": 700 },
//!   "players": [ { "name": "Anna", "color": "#d62728" }, { "name": "Boris", "color": "#1f77b4" } ],
//!   "items": { "fish": { "outline": [[0, 15], "..."], "hole_radius": 10, "thickness": 2.5 },
//!              "coin": { "radius": 7.5, "thickness": 1.2 } },
//!   "start": { "fish:0": { "x": 200, "y": 20, "theta": 0 }, "coin:0": { "x": 200, "y": 20 } },
//!   "stacking": [ { "top": "fish:1", "under": "coin:0" } ],
//!   "shots": [ { "player": 0, "speed_mm_s": 1500, "direction_deg": 80, "point": [40, 5] } ],
//!   "moves_per_player": 3,
//!   "camera": { "tilt_deg": 30, "hfov_deg": 62, "distance_mm": null, "k1": -0.08, "k2": 0.02,
//!               "roll_deg": 0, "yaw_deg": 0 },
//!   "render": { "hand": true, "noise_sigma": 2.0, "subframes": 4, "exposure_drift": 0.03,
//!               "shutter": 0.5, "look": { "light": { "shadow_strength": 0.4 } } },
//!   "physics": { "table_friction": 0.2, "item_friction": 0.15, "restitution": 0.55,
//!                "fish_mass_g": 4, "coin_mass_g": 1, "steps_per_s": 1200, "table_height_mm": 750 },
//!   "timing": { "before_flick_s": 0.8, "after_rest_s": 0.4, "put_back_s": 0.5, "max_shot_s": 12 }
//! }
//! ```
//!
//! - `kind`: `play` (shots with physics, the default), `chessboard` (calibration
//!   views of a 9x6-inner-corner board with 25 mm squares, written as PNG images) or
//!   `empty-table` (one PNG of the empty table).
//! - `table`: a `width_mm` x `height_mm` rectangle, or `"corners": [[x, y], ...]`
//!   for any convex polygon (mm, counter-clockwise).
//! - `start`: the pose of each item at the start (fish: hole centre and angle;
//!   coin: centre). Without it, R2: the fish evenly along the near and far edges,
//!   each coin in its owner's hole. Items must lie on the table and must not overlap
//!   (a coin inside a hole is fine) unless a `stacking` entry says one lies on the other.
//! - `stacking`: scripted scenes 2D physics cannot make: `top` lies on `under`
//!   (drawn above it, excluded from the physics, kept still).
//! - `shots`: explicit flicks in order: `player` flicks their fish so that its centre
//!   of mass starts at `speed_mm_s` toward `direction_deg` (table frame, CCW from +x),
//!   struck at `point` (fish frame, mm; default: on the tag, 40 mm from the hole).
//!   Without `shots`, `moves_per_player` moves per player (default 1) are generated
//!   from the seed: aimed at a random item, strength from gentle to table-clearing.
//! - Lost items are put back between shots (R6–R10) before the next flick.
//! - `render.look`: light, shadows, materials, camera response and compression
//!   (see `sim::look`); without it, the original look.

use super::camera::CameraSpec;
use super::look::Look;
use super::physics::PhysicsParams;
use crate::config::{ConfigError, Items, Player};
use crate::geometry::{
    disc_disc_overlap, fish_disc_overlap, fish_fish_overlap, Disc, FishFootprint, Point, Table,
};
use crate::model::{ItemId, Pose};
use crate::record::Stacking;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Why a scenario cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("unknown scenario `{0}` (built-in: {names}; or a path to a .json file)", names = BUILT_IN.join(", "))]
    Unknown(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("scenario {name}: {message}")]
    Invalid { name: String, message: String },
}

/// The names `--scenario` accepts besides a file.
pub const BUILT_IN: &[&str] = &[
    "single-shot",
    "match",
    "chessboard",
    "empty-table",
    "stacking",
    "coin-collision",
    "table-clearing",
];

/// What a scenario renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    #[default]
    Play,
    Chessboard,
    EmptyTable,
}

/// The table top.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSpec {
    #[serde(default = "default_width")]
    pub width_mm: f64,
    #[serde(default = "default_height")]
    pub height_mm: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corners: Option<Vec<[f64; 2]>>,
}

fn default_width() -> f64 {
    1000.0
}
fn default_height() -> f64 {
    700.0
}

impl Default for TableSpec {
    fn default() -> Self {
        TableSpec {
            width_mm: default_width(),
            height_mm: default_height(),
            corners: None,
        }
    }
}

/// One explicit flick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotSpec {
    pub player: usize,
    pub speed_mm_s: f64,
    pub direction_deg: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<[f64; 2]>,
}

/// How frames look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RenderSpec {
    /// A hand comes over the mover's fish before the flick and leaves after it.
    pub hand: bool,
    /// Sensor noise, standard deviation in grey levels.
    pub noise_sigma: f64,
    /// Sub-frame renders averaged for motion blur (1: none).
    pub subframes: u32,
    /// Slow exposure drift, relative amplitude.
    pub exposure_drift: f64,
    /// Fraction of the frame interval the shutter is open.
    pub shutter: f64,
    /// Light, materials, camera response and compression (`sim::look`); absent:
    /// the original look.
    #[serde(skip_serializing_if = "Look::is_original")]
    pub look: Look,
}

impl Default for RenderSpec {
    fn default() -> Self {
        RenderSpec {
            hand: true,
            noise_sigma: 2.0,
            subframes: 4,
            exposure_drift: 0.03,
            shutter: 0.5,
            look: Look::default(),
        }
    }
}

impl RenderSpec {
    /// Domain randomisation: a [`Look::random`] from `seed`, with sensor noise
    /// (sigma 1–5 grey levels) and exposure drift (0–0.06) drawn from it too.
    /// The hand, sub-frames and shutter stay as they are.
    pub fn randomise(&mut self, seed: u64) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x0015_E5E5);
        self.noise_sigma = rng.random_range(1.0..=5.0);
        self.exposure_drift = rng.random_range(0.0..=0.06);
        self.look = Look::random(seed);
    }
}

/// Pauses around each shot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timing {
    pub before_flick_s: f64,
    pub after_rest_s: f64,
    pub put_back_s: f64,
    pub max_shot_s: f64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            before_flick_s: 0.8,
            after_rest_s: 0.4,
            put_back_s: 0.5,
            max_shot_s: 12.0,
        }
    }
}

/// A scenario as written (see the module docs for the format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Scenario {
    pub name: String,
    pub kind: Kind,
    pub table: TableSpec,
    pub players: Vec<Player>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Items>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<BTreeMap<ItemId, Pose>>,
    pub stacking: Vec<Stacking>,
    pub shots: Vec<ShotSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves_per_player: Option<u32>,
    pub camera: CameraSpec,
    pub render: RenderSpec,
    pub physics: PhysicsParams,
    pub timing: Timing,
}

/// The two default players of the bundled game.
pub fn default_players() -> Vec<Player> {
    vec![
        Player {
            name: "Anna".into(),
            color: "#d62728".into(),
        },
        Player {
            name: "Boris".into(),
            color: "#1f77b4".into(),
        },
    ]
}

/// Players for a game of `n`, 1 to 4: the bundled pair, then Vera (green) and Gleb
/// (purple), hues far from each other, from the wood and from the brass coins.
pub fn palette_players(n: usize) -> Option<Vec<Player>> {
    let mut players = default_players();
    players.push(Player {
        name: "Vera".into(),
        color: "#2ca02c".into(),
    });
    players.push(Player {
        name: "Gleb".into(),
        color: "#9467bd".into(),
    });
    (1..=players.len()).contains(&n).then(|| {
        players.truncate(n);
        players
    })
}

impl Scenario {
    /// A built-in scenario by name, or a JSON file by path.
    pub fn resolve(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        if let Some(s) = Scenario::built_in(name_or_path) {
            return Ok(s);
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "json") || path.exists() {
            let mut s: Scenario = crate::config::load_checked(path)?;
            if s.name.is_empty() {
                s.name = path
                    .file_stem()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "file".into());
            }
            s.check_limits().map_err(|message| {
                ScenarioError::Config(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message,
                })
            })?;
            return Ok(s);
        }
        Err(ScenarioError::Unknown(name_or_path.to_string()))
    }

    /// The built-in scenarios.
    pub fn built_in(name: &str) -> Option<Scenario> {
        let base = Scenario {
            name: name.to_string(),
            ..Scenario::default()
        };
        let s = match name {
            "single-shot" => Scenario {
                moves_per_player: Some(1),
                players: default_players()[..1].to_vec(),
                ..base
            },
            "match" => Scenario {
                moves_per_player: Some(3),
                ..base
            },
            "chessboard" => Scenario {
                kind: Kind::Chessboard,
                ..base
            },
            "empty-table" => Scenario {
                kind: Kind::EmptyTable,
                ..base
            },
            "coin-collision" => {
                // Anna's fish drives straight at Boris's coin: a fish-coin then
                // coin-coin collision in the middle of the table.
                let mut start = BTreeMap::new();
                start.insert(
                    ItemId::fish(0),
                    Pose::fish(300.0, 350.0, std::f64::consts::PI),
                );
                start.insert(ItemId::coin(0), Pose::coin(300.0, 350.0));
                start.insert(ItemId::fish(1), Pose::fish(800.0, 600.0, 0.0));
                start.insert(ItemId::coin(1), Pose::coin(520.0, 352.0));
                start.insert(ItemId::coin(2), Pose::coin(560.0, 345.0));
                let mut players = default_players();
                players.push(Player {
                    name: "Vera".into(),
                    color: "#2ca02c".into(),
                });
                start.insert(ItemId::fish(2), Pose::fish(150.0, 600.0, 0.5));
                Scenario {
                    players,
                    start: Some(start),
                    shots: vec![ShotSpec {
                        player: 0,
                        speed_mm_s: 1400.0,
                        direction_deg: 0.0,
                        point: Some([30.0, 0.0]),
                    }],
                    ..base
                }
            }
            "table-clearing" => Scenario {
                players: default_players(),
                shots: vec![ShotSpec {
                    player: 0,
                    speed_mm_s: 4000.0,
                    direction_deg: 90.0,
                    point: Some([35.0, 3.0]),
                }],
                ..base
            },
            "stacking" => {
                // Boris's fish lies on Vera's coin and Vera's fish lies on Boris's
                // fish; Anna flicks gently away from the pile.
                let mut players = default_players();
                players.push(Player {
                    name: "Vera".into(),
                    color: "#2ca02c".into(),
                });
                let mut start = BTreeMap::new();
                start.insert(ItemId::fish(0), Pose::fish(200.0, 150.0, 0.3));
                start.insert(ItemId::coin(0), Pose::coin(200.0, 150.0));
                start.insert(ItemId::coin(1), Pose::coin(300.0, 450.0));
                start.insert(ItemId::fish(1), Pose::fish(600.0, 400.0, 0.2));
                start.insert(ItemId::coin(2), Pose::coin(618.0, 402.0));
                // Across Boris's tail, 22 mm from its own hole.
                start.insert(
                    ItemId::fish(2),
                    Pose::fish(648.4, 387.4, 0.2 + std::f64::consts::FRAC_PI_2),
                );
                Scenario {
                    players,
                    start: Some(start),
                    stacking: vec![
                        Stacking {
                            top: ItemId::fish(1),
                            under: ItemId::coin(2),
                        },
                        Stacking {
                            top: ItemId::fish(2),
                            under: ItemId::fish(1),
                        },
                    ],
                    shots: vec![ShotSpec {
                        player: 0,
                        speed_mm_s: 500.0,
                        direction_deg: 180.0 + 17.0,
                        point: None,
                    }],
                    ..base
                }
            }
            _ => return None,
        };
        Some(s)
    }

    /// The same scenario for `n` players from [`palette_players`]; only for
    /// scenarios that place their items by R2 and generate their shots, since a
    /// scripted start or shot list names the players it was written for.
    pub fn with_players(mut self, n: usize) -> Result<Scenario, ScenarioError> {
        if self.start.is_some() || !self.shots.is_empty() {
            return Err(self.invalid(format!(
                "its start or shots are scripted for {} players; it cannot be played by {n}",
                self.players().len()
            )));
        }
        self.players = palette_players(n)
            .ok_or_else(|| self.invalid(format!("{n} players: 1 to 4 are supported")))?;
        Ok(self)
    }

    /// The bounds of [`crate::limits`] on every number that sizes the work: the
    /// table, players and colours, items, poses, shots, moves, physics steps, shot
    /// time, rendering. A one-line reason naming the field.
    pub fn check_limits(&self) -> Result<(), String> {
        use crate::limits::{self as l, check_count, check_range};
        if let Some(c) = &self.table.corners {
            l::check_table_corners("table.corners", c)?;
        } else {
            let side =
                |name, v| check_range(name, v, l::MIN_TABLE_SIDE_MM, l::MAX_TABLE_SIDE_MM, "mm");
            side("table.width_mm", self.table.width_mm)?;
            side("table.height_mm", self.table.height_mm)?;
        }
        if !self.players.is_empty() {
            let mut game = crate::config::Game::new(self.players.clone(), 1, self.items());
            game.moves_per_player = self.moves_per_player.unwrap_or(1).max(1);
            game.validate()?;
        }
        if let Some(items) = &self.items {
            items.validate().map_err(|e| format!("items: {e}"))?;
        }
        if let Some(m) = self.moves_per_player {
            check_range(
                "moves_per_player",
                f64::from(m),
                0.0,
                f64::from(l::MAX_MOVES_PER_PLAYER),
                "",
            )?;
        }
        let players = self.players().len();
        for (item, p) in self.start.iter().flatten() {
            if item.owner >= players {
                return Err(format!(
                    "start: {item} names player {}, but there are {players}",
                    item.owner
                ));
            }
            l::check_pose(&format!("start.{item}"), p.x, p.y, p.theta)?;
        }
        check_count("shots", self.shots.len(), l::MAX_SHOTS)?;
        for (i, shot) in self.shots.iter().enumerate() {
            if shot.player >= players {
                return Err(format!(
                    "shots[{i}].player is {}, but there are {players} players",
                    shot.player
                ));
            }
            check_range(
                &format!("shots[{i}].speed_mm_s"),
                shot.speed_mm_s,
                0.0,
                l::MAX_FLICK_MM_S,
                "mm/s",
            )?;
            check_range(
                &format!("shots[{i}].direction_deg"),
                shot.direction_deg,
                -3600.0,
                3600.0,
                "deg",
            )?;
            if let Some([x, y]) = shot.point {
                for (axis, v) in [("0", x), ("1", y)] {
                    check_range(
                        &format!("shots[{i}].point[{axis}]"),
                        v,
                        -l::MAX_ITEM_MM,
                        l::MAX_ITEM_MM,
                        "mm",
                    )?;
                }
            }
        }
        let ph = &self.physics;
        check_range(
            "physics.steps_per_s",
            ph.steps_per_s,
            1.0,
            l::MAX_PHYSICS_STEPS_PER_S,
            "steps/s",
        )?;
        for (name, v, hi) in [
            ("physics.table_friction", ph.table_friction, 100.0),
            ("physics.item_friction", ph.item_friction, 100.0),
            ("physics.restitution", ph.restitution, 1.0),
            ("physics.fish_mass_g", ph.fish_mass_g, 1e4),
            ("physics.coin_mass_g", ph.coin_mass_g, 1e4),
            (
                "physics.table_height_mm",
                ph.table_height_mm,
                l::MAX_TABLE_SIDE_MM,
            ),
        ] {
            check_range(name, v, 0.0, hi, "")?;
        }
        let t = &self.timing;
        for (name, v) in [
            ("timing.before_flick_s", t.before_flick_s),
            ("timing.after_rest_s", t.after_rest_s),
            ("timing.put_back_s", t.put_back_s),
            ("timing.max_shot_s", t.max_shot_s),
        ] {
            check_range(name, v, 0.0, l::MAX_SHOT_S, "s")?;
        }
        let r = &self.render;
        check_range("render.subframes", f64::from(r.subframes), 1.0, 64.0, "")?;
        check_range(
            "render.noise_sigma",
            r.noise_sigma,
            0.0,
            255.0,
            "grey levels",
        )?;
        check_range("render.exposure_drift", r.exposure_drift, 0.0, 1.0, "")?;
        check_range("render.shutter", r.shutter, 0.0, 1.0, "")?;
        r.look
            .check_ranges()
            .map_err(|e| format!("render.look: {e}"))?;
        let c = &self.camera;
        check_range("camera.tilt_deg", c.tilt_deg, -89.0, 89.0, "deg")?;
        check_range("camera.hfov_deg", c.hfov_deg, 1.0, 179.0, "deg")?;
        if let Some(d) = c.distance_mm {
            check_range(
                "camera.distance_mm",
                d,
                1.0,
                10.0 * l::MAX_TABLE_SIDE_MM,
                "mm",
            )?;
        }
        for (name, v) in [
            ("camera.k1", c.k1),
            ("camera.k2", c.k2),
            ("camera.roll_deg", c.roll_deg),
            ("camera.yaw_deg", c.yaw_deg),
        ] {
            check_range(name, v, -3600.0, 3600.0, "")?;
        }
        Ok(())
    }

    /// The same scenario with `m` generated moves per player; not for one that
    /// scripts its shots.
    pub fn with_moves(mut self, m: u32) -> Result<Scenario, ScenarioError> {
        if m > crate::limits::MAX_MOVES_PER_PLAYER {
            return Err(self.invalid(format!(
                "{m} moves per player: at most {} allowed",
                crate::limits::MAX_MOVES_PER_PLAYER
            )));
        }
        if !self.shots.is_empty() {
            return Err(self.invalid(format!(
                "it scripts its own shots; it cannot be played with {m} moves per player"
            )));
        }
        self.moves_per_player = Some(m);
        Ok(self)
    }

    fn invalid(&self, message: impl Into<String>) -> ScenarioError {
        ScenarioError::Invalid {
            name: self.name.clone(),
            message: message.into(),
        }
    }

    pub fn players(&self) -> Vec<Player> {
        if self.players.is_empty() {
            default_players()
        } else {
            self.players.clone()
        }
    }

    pub fn items(&self) -> Items {
        self.items.clone().unwrap_or_else(Items::default_set)
    }

    /// The table polygon.
    pub fn table(&self) -> Result<Table, ScenarioError> {
        match &self.table.corners {
            Some(c) => Table::new(c.iter().map(|&[x, y]| Point::new(x, y)).collect())
                .map_err(|e| self.invalid(format!("table: {e}"))),
            None => {
                let (w, h) = (self.table.width_mm, self.table.height_mm);
                if !(w.is_finite() && h.is_finite() && w > 50.0 && h > 50.0) {
                    return Err(self.invalid(format!("table {w} x {h} mm is too small")));
                }
                Ok(Table::rectangle(w, h))
            }
        }
    }

    /// The start poses: given, or R2 (fish evenly along the near and far edges,
    /// tails pointing inward, coins in their holes).
    pub fn start_poses(
        &self,
        table: &Table,
        items: &Items,
    ) -> Result<BTreeMap<ItemId, Pose>, ScenarioError> {
        if let Some(s) = &self.start {
            return Ok(s.clone());
        }
        let n = self.players().len();
        let (lo, hi) = table.bounds();
        let fp = FishFootprint::new(items);
        let half_width = fp.outline().iter().map(|p| p.y.abs()).fold(0.0, f64::max);
        let hole_end = fp.outline().iter().map(|p| -p.x).fold(0.0, f64::max);
        let _ = half_width;
        let near = n.div_ceil(2);
        let far = n - near;
        let mut poses = BTreeMap::new();
        for k in 0..n {
            // Alternate near and far edge; spread along x.
            let (slot, count, on_near) = if k % 2 == 0 {
                (k / 2, near, true)
            } else {
                (k / 2, far, false)
            };
            let x = lo.x
                + (hi.x - lo.x) * (slot as f64 + 0.5) / count as f64
                + if on_near { 0.0 } else { 37.0 };
            // The hole end touches the edge gap of 5 mm; the tag points into the table.
            let (y, theta) = if on_near {
                (lo.y + hole_end + 5.0, std::f64::consts::FRAC_PI_2)
            } else {
                (hi.y - hole_end - 5.0, -std::f64::consts::FRAC_PI_2)
            };
            poses.insert(ItemId::fish(k), Pose::fish(x, y, theta));
            poses.insert(ItemId::coin(k), Pose::coin(x, y));
        }
        Ok(poses)
    }

    /// Checks the start: known ids, every item on the table, no overlaps except
    /// coins in holes and declared stacking, shots by existing players.
    pub fn validate_start(
        &self,
        table: &Table,
        items: &Items,
        poses: &BTreeMap<ItemId, Pose>,
    ) -> Result<(), ScenarioError> {
        let players = self.players();
        for p in &players {
            if p.rgb().is_none() {
                return Err(self.invalid(format!(
                    "player {} has colour `{}`, expected #rrggbb",
                    p.name, p.color
                )));
            }
        }
        items
            .validate()
            .map_err(|e| self.invalid(format!("items: {e}")))?;
        let fp = FishFootprint::new(items);
        for (id, pose) in poses {
            if id.owner >= players.len() {
                return Err(self.invalid(format!(
                    "{id} belongs to no player ({} players)",
                    players.len()
                )));
            }
            if !(pose.x.is_finite() && pose.y.is_finite() && pose.angle().is_finite()) {
                return Err(self.invalid(format!("{id} has a non-finite pose")));
            }
            let centre = if id.is_fish() {
                let o = fp.centroid();
                let (s, c) = pose.angle().sin_cos();
                Point::new(pose.x + c * o.x - s * o.y, pose.y + s * o.x + c * o.y)
            } else {
                pose.point()
            };
            if !table.contains(centre) {
                return Err(self.invalid(format!(
                    "{id} at ({:.1}, {:.1}) is not on the table",
                    pose.x, pose.y
                )));
            }
        }
        let stacked = |a: ItemId, b: ItemId| {
            self.stacking
                .iter()
                .any(|s| (s.top == a && s.under == b) || (s.top == b && s.under == a))
        };
        let ids: Vec<(&ItemId, &Pose)> = poses.iter().collect();
        for i in 0..ids.len() {
            for j in i + 1..ids.len() {
                let ((&a, pa), (&b, pb)) = (ids[i], ids[j]);
                if stacked(a, b) {
                    continue;
                }
                let overlap = match (a.is_fish(), b.is_fish()) {
                    (true, true) => fish_fish_overlap(&fp.placed(pa), &fp.placed(pb), -0.0),
                    (true, false) => fish_disc_overlap(
                        &fp.placed(pa),
                        &Disc::new(pb.point(), items.coin.radius),
                        0.0,
                    ),
                    (false, true) => fish_disc_overlap(
                        &fp.placed(pb),
                        &Disc::new(pa.point(), items.coin.radius),
                        0.0,
                    ),
                    (false, false) => disc_disc_overlap(
                        &Disc::new(pa.point(), items.coin.radius),
                        &Disc::new(pb.point(), items.coin.radius),
                        0.0,
                    ),
                };
                if overlap {
                    return Err(self.invalid(format!("{a} and {b} overlap at the start")));
                }
            }
        }
        for s in &self.stacking {
            if !poses.contains_key(&s.top) || !poses.contains_key(&s.under) {
                return Err(self.invalid(format!(
                    "stacking {} on {} names an item not in `start`",
                    s.top, s.under
                )));
            }
        }
        for (i, s) in self.shots.iter().enumerate() {
            if s.player >= players.len() {
                return Err(self.invalid(format!("shot {i}: player {} does not exist", s.player)));
            }
            if !(s.speed_mm_s.is_finite() && s.speed_mm_s >= 0.0 && s.direction_deg.is_finite()) {
                return Err(self.invalid(format!(
                    "shot {i}: speed and direction must be finite, speed >= 0"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_resolves_and_plays_from_a_valid_start() {
        for name in BUILT_IN {
            let s = Scenario::resolve(name).unwrap();
            let table = s.table().unwrap();
            let items = s.items();
            let poses = s.start_poses(&table, &items).unwrap();
            s.validate_start(&table, &items, &poses)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(matches!(
            Scenario::resolve("nope"),
            Err(ScenarioError::Unknown(_))
        ));
    }

    #[test]
    fn a_generated_match_takes_two_to_four_players_and_a_scripted_one_refuses() {
        for n in 2..=4 {
            let s = Scenario::built_in("match")
                .unwrap()
                .with_players(n)
                .unwrap();
            assert_eq!(s.players().len(), n);
            let table = s.table().unwrap();
            let items = s.items();
            let poses = s.start_poses(&table, &items).unwrap();
            s.validate_start(&table, &items, &poses)
                .unwrap_or_else(|e| panic!("{n} players: {e}"));
        }
        let colours: Vec<String> = palette_players(4)
            .unwrap()
            .into_iter()
            .map(|p| p.color)
            .collect();
        let mut unique = colours.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 4, "{colours:?}");
        assert!(Scenario::built_in("match")
            .unwrap()
            .with_players(5)
            .is_err());
        assert!(Scenario::built_in("coin-collision")
            .unwrap()
            .with_players(2)
            .is_err());
    }

    #[test]
    fn overlapping_start_is_refused() {
        let mut s = Scenario::built_in("coin-collision").unwrap();
        let start = s.start.as_mut().unwrap();
        start.insert(ItemId::coin(1), Pose::coin(561.0, 346.0));
        let table = s.table().unwrap();
        let items = s.items();
        let poses = s.start_poses(&table, &items).unwrap();
        let err = s
            .validate_start(&table, &items, &poses)
            .unwrap_err()
            .to_string();
        assert!(err.contains("overlap"), "{err}");
    }
}
