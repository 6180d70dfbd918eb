//! Plays a scenario through the physics, frame by frame: still frames while the
//! hand comes in, the flick, motion until everything rests, the put-backs of lost
//! items (R6–R10), and on to the next move; collects the ground truth. Pure.
//! Uses: model, config, geometry, record, rules (put-back poses and verdicts),
//! sim::{scenario, physics, camera, truth}.

use super::camera::SimCamera;
use super::physics::World;
use super::scenario::{Kind, Scenario, ScenarioError, ShotSpec};
use super::truth::{FlickTruth, FrameTruth, HandTruth, ItemTruth, ShotTruth, Truth, TRUTH_VERSION};
use crate::config::{Game, Items};
use crate::geometry::{
    fish_disc_overlap, fish_fish_overlap, Disc, FishFootprint, Point, Table, Vector,
};
use crate::model::{FrameIdx, ItemId, PlayerIdx, Pose};
use crate::record::{LostItem, PlacedItem, Stacking, VideoInfo};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// How a simulation is run (from the command line).
#[derive(Debug, Clone, PartialEq)]
pub struct SimOptions {
    pub seed: u64,
    pub fps: f64,
    pub size: [u32; 2],
    /// Overrides the scenario's camera tilt (degrees from vertical).
    pub camera_tilt_deg: Option<f64>,
    /// Overrides the scenario's camera distance (mm).
    pub camera_distance_mm: Option<f64>,
    /// The video file name written into truth (`video.path`).
    pub video_name: String,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            fps: 30.0,
            size: [1280, 720],
            camera_tilt_deg: None,
            camera_distance_mm: None,
            video_name: "video.avi".into(),
        }
    }
}

/// Why a simulation failed.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Camera(#[from] super::camera::CameraError),
    #[error("{0}")]
    Invalid(String),
}

/// The camera of a scenario under the options; the seed varies the pose slightly.
pub fn camera_for(
    scenario: &Scenario,
    table: &Table,
    opts: &SimOptions,
) -> Result<SimCamera, SimError> {
    let mut spec = scenario.camera.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ 0xC4A3_E7A1);
    spec.tilt_deg += rng.random_range(-1.5..1.5);
    spec.yaw_deg += rng.random_range(-2.0..2.0);
    spec.roll_deg += rng.random_range(-1.0..1.0);
    spec.hfov_deg *= rng.random_range(0.98..1.02);
    if let Some(t) = opts.camera_tilt_deg {
        spec.tilt_deg = t;
    }
    if let Some(d) = opts.camera_distance_mm {
        spec.distance_mm = Some(d);
    }
    Ok(SimCamera::looking_at_table(table, opts.size, &spec)?)
}

/// Heights (mm above the table) of the underside of every stacked item.
fn stack_heights(stacking: &[Stacking], items: &Items) -> BTreeMap<ItemId, f64> {
    let thickness = |id: ItemId| {
        if id.is_fish() {
            items.fish.thickness
        } else {
            items.coin.thickness
        }
    };
    let mut z: BTreeMap<ItemId, f64> = BTreeMap::new();
    // Relax: a top sits on the highest of its unders (the chains are short).
    for _ in 0..8 {
        for s in stacking {
            let base = z.get(&s.under).copied().unwrap_or(0.0) + thickness(s.under);
            let e = z.entry(s.top).or_insert(0.0);
            if *e < base {
                *e = base;
            }
        }
    }
    z
}

/// Plays a `play` scenario; calibration scenarios get a truth with no shots.
pub fn simulate(scenario: &Scenario, opts: &SimOptions) -> Result<Truth, SimError> {
    if !(opts.fps.is_finite() && opts.fps >= 5.0 && opts.fps <= 240.0) {
        return Err(SimError::Invalid(format!(
            "fps {} must be in [5, 240]",
            opts.fps
        )));
    }
    let table = scenario.table()?;
    let items = scenario.items();
    let players = scenario.players();
    let poses = scenario.start_poses(&table, &items)?;
    scenario.validate_start(&table, &items, &poses)?;
    let camera = camera_for(scenario, &table, opts)?;
    let table_file = camera
        .table_file(&table)
        .ok_or_else(|| SimError::Invalid("the camera sees the table edge-on".into()))?;
    let moves = scenario.moves_per_player.unwrap_or(1).max(1);
    let game = Game::new(players.clone(), moves, items.clone());
    let mut truth = Truth {
        version: TRUTH_VERSION,
        scenario: scenario.name.clone(),
        seed: opts.seed,
        video: VideoInfo {
            path: opts.video_name.clone(),
            fps: opts.fps,
            frames: 0,
            width: opts.size[0],
            height: opts.size[1],
            ..Default::default()
        },
        players: players.iter().map(|p| p.name.clone()).collect(),
        game,
        table_mm: table.corners().iter().map(|c| [c.x, c.y]).collect(),
        camera: camera.intrinsics.clone(),
        extrinsics: camera.extrinsics(),
        table: table_file,
        shots: vec![],
        frames: vec![],
        board_views: vec![],
        board: None,
    };
    match scenario.kind {
        Kind::Play => {}
        Kind::EmptyTable | Kind::Chessboard => {
            truth.frames.push(FrameTruth {
                frame: 0,
                items: BTreeMap::new(),
                hand: None,
            });
            truth.video.frames = 1;
            return Ok(truth);
        }
    }
    let mut player = Player::new(scenario, opts, table, items, poses);
    player.run(&mut truth)?;
    truth.video.frames = truth.frames.len() as u64;
    Ok(truth)
}

/// The state of a match in progress.
struct Player<'a> {
    scenario: &'a Scenario,
    game: Game,
    fps: f64,
    table: Table,
    items: Items,
    footprint: FishFootprint,
    world: World,
    /// Stacked items: fixed poses and heights, out of the physics.
    stacked: BTreeMap<ItemId, (Pose, f64)>,
    rng: ChaCha8Rng,
    frame: FrameIdx,
    /// Lost items waiting to be put back, with their exit points.
    waiting: BTreeMap<ItemId, Point>,
    hand: Option<HandTruth>,
}

impl<'a> Player<'a> {
    fn new(
        scenario: &'a Scenario,
        opts: &SimOptions,
        table: Table,
        items: Items,
        poses: BTreeMap<ItemId, Pose>,
    ) -> Self {
        let heights = stack_heights(&scenario.stacking, &items);
        let in_stack: Vec<ItemId> = scenario
            .stacking
            .iter()
            .flat_map(|s| [s.top, s.under])
            .collect();
        let mut stacked = BTreeMap::new();
        let mut free = BTreeMap::new();
        for (id, p) in poses {
            if in_stack.contains(&id) {
                stacked.insert(id, (p, heights.get(&id).copied().unwrap_or(0.0)));
            } else {
                free.insert(id, p);
            }
        }
        let world = World::new(table.clone(), &items, &free, scenario.physics.clone());
        let moves = scenario.moves_per_player.unwrap_or(1).max(1);
        Player {
            scenario,
            game: Game::new(scenario.players(), moves, items.clone()),
            fps: opts.fps,
            footprint: FishFootprint::new(&items),
            table,
            items,
            world,
            stacked,
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
            frame: 0,
            waiting: BTreeMap::new(),
            hand: None,
        }
    }

    fn poses(&self) -> BTreeMap<ItemId, Pose> {
        let mut p = self.world.poses();
        for (id, (pose, _)) in &self.stacked {
            p.insert(*id, *pose);
        }
        p
    }

    /// Advances the world to the next frame's time and records that frame.
    fn next_frame(&mut self, truth: &mut Truth) -> Vec<super::physics::EdgeExit> {
        let t = self.frame as f64 / self.fps;
        let exits = self.world.advance_to(t);
        let mut items = BTreeMap::new();
        for (id, s) in self.world.states() {
            if s.landed {
                continue;
            }
            items.insert(
                id,
                ItemTruth {
                    x: s.pose.x,
                    y: s.pose.y,
                    theta: s.pose.theta,
                    z: s.z_mm,
                    on_table: s.on_table,
                },
            );
        }
        for (id, (p, z)) in &self.stacked {
            items.insert(
                *id,
                ItemTruth {
                    x: p.x,
                    y: p.y,
                    theta: p.theta,
                    z: *z,
                    on_table: true,
                },
            );
        }
        truth.frames.push(FrameTruth {
            frame: self.frame,
            items,
            hand: self.hand,
        });
        self.frame += 1;
        exits
    }

    fn shot_specs(&mut self) -> Vec<ShotSpec> {
        if !self.scenario.shots.is_empty() {
            return self.scenario.shots.clone();
        }
        let n = self.scenario.players().len();
        let moves = self.scenario.moves_per_player.unwrap_or(1).max(1) as usize;
        // Directions are chosen at flick time (they depend on where things are).
        (0..n * moves)
            .map(|k| ShotSpec {
                player: k % n,
                speed_mm_s: f64::NAN,
                direction_deg: f64::NAN,
                point: None,
            })
            .collect()
    }

    /// A generated flick: aimed at a random other item (other players' coins
    /// preferred), strength log-uniform from gentle to table-clearing.
    fn generated_flick(&mut self, mover: PlayerIdx, fish: &Pose) -> (f64, f64, [f64; 2]) {
        let com = self.world.center_of_mass(ItemId::fish(mover), fish);
        let poses = self.poses();
        let mut targets: Vec<(ItemId, Point)> = poses
            .iter()
            .filter(|(id, _)| id.owner != mover && id.is_coin())
            .map(|(id, p)| (*id, p.point()))
            .collect();
        if targets.is_empty() || self.rng.random_bool(0.25) {
            targets = poses
                .iter()
                .filter(|(id, _)| **id != ItemId::fish(mover) && **id != ItemId::coin(mover))
                .map(|(id, p)| (*id, p.point()))
                .collect();
        }
        let dir = if targets.is_empty() {
            self.rng.random_range(0.0..std::f64::consts::TAU)
        } else {
            let t = targets[self.rng.random_range(0..targets.len())].1;
            let d = t - com;
            d.y.atan2(d.x) + self.rng.random_range(-0.12..0.12)
        };
        let speed = (self.rng.random_range(450f64.ln()..4200f64.ln())).exp();
        let reach = self
            .footprint
            .outline()
            .iter()
            .map(|p| p.x)
            .fold(0.0, f64::max);
        let point = [
            self.rng.random_range(0.45..0.8) * reach,
            self.rng.random_range(-6.0..6.0),
        ];
        (speed, dir.to_degrees(), point)
    }

    fn run(&mut self, truth: &mut Truth) -> Result<(), SimError> {
        let specs = self.shot_specs();
        let timing = self.scenario.timing.clone();
        let render = self.scenario.render.clone();
        let mut placed_before: Vec<PlacedItem> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            let mover = spec.player;
            let fish_id = ItemId::fish(mover);
            let Some(fish) = self.world.poses().get(&fish_id).copied() else {
                notes.push(format!(
                    "shot {index}: {fish_id} is not on the table (stacked or lost); skipped"
                ));
                continue;
            };
            let (speed, dir_deg, point) = if spec.speed_mm_s.is_nan() {
                self.generated_flick(mover, &fish)
            } else {
                let reach = self
                    .footprint
                    .outline()
                    .iter()
                    .map(|p| p.x)
                    .fold(0.0, f64::max);
                (
                    spec.speed_mm_s,
                    spec.direction_deg,
                    spec.point.unwrap_or([reach * 0.65, 0.0]),
                )
            };
            let dir = dir_deg.to_radians();
            let vel = Vector::new(dir.cos(), dir.sin()) * speed;
            // Before the flick: still frames while the hand comes in over the fish.
            let n_before = (timing.before_flick_s * self.fps).round().max(2.0) as u64;
            let (s, c) = fish.angle().sin_cos();
            let strike = Point::new(
                fish.x + c * point[0] - s * point[1],
                fish.y + s * point[0] + c * point[1],
            );
            // The finger comes from behind the strike point, against the flick.
            let arm_theta = (dir + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU);
            let behind = strike - Vector::new(dir.cos(), dir.sin()) * 12.0;
            for i in 0..n_before {
                if render.hand {
                    let u = (i as f64 + 1.0) / n_before as f64;
                    // From 400 mm away along the arm, lowering to 8 mm above the table.
                    let ease = 1.0 - (1.0 - u).powi(2);
                    let far = 400.0 * (1.0 - ease);
                    self.hand = Some(HandTruth {
                        x: behind.x + arm_theta.cos() * far,
                        y: behind.y + arm_theta.sin() * far,
                        arm_theta,
                        z: 8.0 + 60.0 * (1.0 - ease),
                    });
                }
                self.next_frame(truth);
            }
            let start = self.poses();
            let flick_frame = self.frame - 1;
            self.world
                .flick(fish_id, Point::new(point[0], point[1]), vel);
            let mut lost: Vec<LostItem> = Vec::new();
            let max_frames = (timing.max_shot_s * self.fps) as u64;
            let n_leave = (0.4 * self.fps).round().max(1.0) as u64;
            let mut rest_frame = None;
            for i in 0..max_frames {
                if render.hand {
                    self.hand = if i < n_leave {
                        let u = (i as f64 + 1.0) / n_leave as f64;
                        Some(HandTruth {
                            x: behind.x + arm_theta.cos() * 400.0 * u * u,
                            y: behind.y + arm_theta.sin() * 400.0 * u * u,
                            arm_theta,
                            z: 8.0 + 60.0 * u,
                        })
                    } else {
                        None
                    };
                }
                let frame = self.frame;
                for e in self.next_frame(truth) {
                    lost.push(LostItem {
                        item: e.item,
                        frame,
                        exit: match e.pose.theta {
                            Some(th) => Pose::fish(e.exit.x, e.exit.y, th),
                            None => Pose::coin(e.exit.x, e.exit.y),
                        },
                    });
                    self.waiting.insert(e.item, e.exit);
                }
                if self.world.at_rest() && self.hand.is_none() {
                    rest_frame = Some(frame);
                    break;
                }
            }
            let rest_frame = rest_frame.unwrap_or(self.frame - 1);
            let end = self.poses();
            let coins_in_holes = coins_in_holes(&self.items, &end);
            let stacking = self.scenario.stacking.clone();
            let n_after = (timing.after_rest_s * self.fps).round() as u64;
            for _ in 0..n_after {
                self.next_frame(truth);
            }
            truth.shots.push(ShotTruth {
                index,
                player: mover,
                flick_frame,
                rest_frame,
                flick: FlickTruth {
                    item: fish_id,
                    point_in_fish: point,
                    velocity_mm_s: [vel.x, vel.y],
                },
                start,
                end,
                lost,
                coins_in_holes,
                stacking,
                placed_before: std::mem::take(&mut placed_before),
                put_back_notes: std::mem::take(&mut notes),
            });
            // Put-backs (R10: by owner; R9: fish before coin), each followed by a pause.
            let waiting: Vec<(ItemId, Point)> =
                self.waiting.iter().map(|(a, b)| (*a, *b)).collect();
            for (id, exit) in waiting {
                let pose = if id.is_fish() {
                    self.fish_put_back(id.owner, exit)
                } else {
                    self.coin_put_back(id.owner)
                };
                match pose {
                    Some((pose, how)) => {
                        self.world.place(id, &pose);
                        self.waiting.remove(&id);
                        notes.push(format!("{id} put back by {how}"));
                        placed_before.push(PlacedItem {
                            item: id,
                            frame: self.frame,
                            pose,
                        });
                        let n = (timing.put_back_s * self.fps).round().max(1.0) as u64;
                        for _ in 0..n {
                            self.next_frame(truth);
                        }
                    }
                    None => notes.push(format!("{id} cannot be put back yet")),
                }
            }
        }
        // A last still second so the end is visible.
        for _ in 0..(self.fps as u64 / 2).max(1) {
            self.next_frame(truth);
        }
        Ok(())
    }

    /// Whether a fish at `pose` would lie wholly on the table touching nothing.
    fn fish_fits(&self, pose: &Pose, skip: &[ItemId]) -> bool {
        let f = self.footprint.placed(pose);
        if self.table.polygon_margin(&f.outline) < 0.0 {
            return false;
        }
        self.poses()
            .iter()
            .filter(|(id, _)| !skip.contains(id))
            .all(|(id, p)| {
                if id.is_fish() {
                    !fish_fish_overlap(&f, &self.footprint.placed(p), 0.5)
                } else {
                    !fish_disc_overlap(&f, &Disc::new(p.point(), self.items.coin.radius), 0.5)
                }
            })
    }

    fn scene(&self) -> crate::rules::Scene {
        let mut scene = crate::rules::Scene::from_poses(self.poses());
        scene.stacking = self.scenario.stacking.clone();
        scene
    }

    /// R6: the rules engine's put-back pose; the simulator's own search (R6a around
    /// the own coin, R6b/c along the edge) only if the engine finds none.
    fn fish_put_back(&mut self, owner: PlayerIdx, exit: Point) -> Option<(Pose, String)> {
        let ruled =
            crate::rules::fish_put_back_pose(&self.game, &self.table, &self.scene(), owner, exit);
        if let Some(pose) = ruled.pose {
            return Some((pose, format!("{} (rules engine)", ruled.rule)));
        }
        let coin = ItemId::coin(owner);
        if let Some(c) = self.world.poses().get(&coin).copied() {
            for k in 0..72 {
                let pose = Pose::fish(c.x, c.y, k as f64 * std::f64::consts::TAU / 72.0);
                if self.fish_fits(&pose, &[coin]) {
                    return Some((pose, "R6a (simulator search)".into()));
                }
            }
        }
        // Along the edge: the fish parallel to the edge nearest the exit point, its
        // outline 1 mm from the edge, sliding outward from the exit point.
        let e = self.table.nearest_edge_point(exit);
        let (a, b) = self
            .table
            .edges()
            .min_by(|x, y| {
                let dx = (crate::geometry::table::closest_on_segment(e, x.0, x.1) - e).norm();
                let dy = (crate::geometry::table::closest_on_segment(e, y.0, y.1) - e).norm();
                dx.total_cmp(&dy)
            })
            .unwrap_or((e, e));
        let t = (b - a).try_normalize(1e-9).unwrap_or(Vector::x());
        let n = Vector::new(-t.y, t.x);
        for flip in [false, true] {
            let theta = t.y.atan2(t.x) + if flip { std::f64::consts::PI } else { 0.0 };
            let local = self.footprint.placed(&Pose::fish(0.0, 0.0, theta));
            let inward_min = local
                .outline
                .iter()
                .map(|p| n.dot(&p.coords))
                .fold(f64::INFINITY, f64::min);
            let depth = 1.0 - inward_min;
            for k in 0..400 {
                let off = (k as f64 / 2.0).ceil() * 3.0 * if k % 2 == 0 { 1.0 } else { -1.0 };
                let c = e + t * off + n * depth;
                let pose = Pose::fish(c.x, c.y, theta);
                let f = self.footprint.placed(&pose);
                let gap = crate::geometry::fish_edge_gap(&self.table, &f);
                if (0.0..=3.0).contains(&gap) && self.fish_fits(&pose, &[]) {
                    let rule = if k == 0 { "R6b" } else { "R6c" };
                    return Some((pose, format!("{rule} (simulator search)")));
                }
            }
        }
        None
    }

    /// R7/R8 by the rules engine: back into the owner's hole when possible or
    /// optional (the simulated player always does the optional put-back).
    fn coin_put_back(&self, owner: PlayerIdx) -> Option<(Pose, String)> {
        let fish = ItemId::fish(owner);
        if self.world.poses().contains_key(&fish) {
            let v =
                crate::rules::coin_put_back_verdict(&self.game, &self.table, &self.scene(), owner);
            return match (v.verdict.allowed(), v.pose) {
                (true, Some(pose)) => {
                    Some((pose, format!("{} {} (rules engine)", v.rule, v.verdict)))
                }
                _ => None,
            };
        }
        if self.stacked.contains_key(&fish) {
            return None;
        }
        let f = self.world.poses().get(&fish).copied()?;
        let hole = Disc::new(f.point(), self.items.fish.hole_radius);
        let occupied = self.poses().iter().any(|(id, p)| {
            id.is_coin() && (p.point() - hole.center).norm() < hole.radius + self.items.coin.radius
        });
        if occupied || self.table.signed_distance(hole.center) < self.items.coin.radius {
            return None;
        }
        Some((Pose::coin(f.x, f.y), "R8a (simulator check)".into()))
    }
}

/// Coins lying wholly inside a hole of a fish (0.3 mm tolerance).
pub fn coins_in_holes(items: &Items, poses: &BTreeMap<ItemId, Pose>) -> BTreeMap<ItemId, ItemId> {
    let mut out = BTreeMap::new();
    for (c, cp) in poses.iter().filter(|(id, _)| id.is_coin()) {
        for (f, fp) in poses.iter().filter(|(id, _)| id.is_fish()) {
            let d = (cp.point() - fp.point()).norm();
            if d + items.coin.radius <= items.fish.hole_radius + 0.3 {
                out.insert(*c, *f);
            }
        }
    }
    out
}
