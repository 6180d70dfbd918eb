//! The simulator's table physics on `rapier2d`: fish as compounds of convex pieces
//! around the hole (so a coin in the hole is pushed by its rim), coins as discs,
//! Coulomb table friction that brings items to a true stop, restitution between
//! items, and the table edge: an item whose centre of mass passes beyond it leaves
//! the physics world and falls (ballistic) to the floor, with the frame and the
//! point where it crossed recorded. Pure: no OpenCV.
//! Uses: model, config, geometry, rapier2d.
//!
//! Rapier works in centimetres (1 unit = [`MM_PER_UNIT`] mm), grams and seconds:
//! items are then 1–6 units across, the scale rapier's default tolerances suit.

use crate::config::Items;
use crate::geometry::{FishFootprint, Point, Table, Vector};
use crate::model::{ItemId, Pose};
use rapier2d::parry;
use rapier2d::prelude::{
    ColliderBuilder, ColliderHandle, PhysicsWorld, RigidBodyBuilder, RigidBodyHandle, SharedShape,
};
use std::collections::BTreeMap;

/// Millimetres per rapier length unit.
pub const MM_PER_UNIT: f64 = 10.0;
/// Standard gravity, mm/s².
pub const GRAVITY_MM_S2: f64 = 9810.0;

type RVec = rapier2d::math::Vector;
type RPose = rapier2d::math::Pose;

/// Physical constants of a table and its items.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PhysicsParams {
    /// Sliding friction coefficient of an item on the table cloth/wood.
    pub table_friction: f64,
    /// Friction between items.
    pub item_friction: f64,
    /// Coefficient of restitution between items.
    pub restitution: f64,
    /// Mass of a fish, g.
    pub fish_mass_g: f64,
    /// Mass of a coin, g.
    pub coin_mass_g: f64,
    /// Physics steps per second (several per video frame).
    pub steps_per_s: f64,
    /// Height of the table top above the floor, mm (how long a fall takes).
    pub table_height_mm: f64,
}

impl Default for PhysicsParams {
    fn default() -> Self {
        PhysicsParams {
            table_friction: 0.2,
            item_friction: 0.15,
            restitution: 0.55,
            fish_mass_g: 4.0,
            coin_mass_g: 1.0,
            steps_per_s: 600.0,
            table_height_mm: 750.0,
        }
    }
}

/// An item that crossed the table edge.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeExit {
    pub item: ItemId,
    /// Time since the world was made, s.
    pub time_s: f64,
    /// Where its centre of mass crossed the table boundary (table mm).
    pub exit: Point,
    /// Its pose (hole centre / coin centre) at the crossing.
    pub pose: Pose,
}

/// A falling item: ballistic from the edge to the floor.
#[derive(Debug, Clone, PartialEq)]
struct Fall {
    start_time_s: f64,
    pose: Pose,
    vel_mm_s: Vector,
    angvel: f64,
}

/// Where an item is now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ItemState {
    pub pose: Pose,
    /// Height of the item's underside above the table top, mm (negative while falling).
    pub z_mm: f64,
    pub on_table: bool,
    /// True once a falling item has reached the floor (and is out of play).
    pub landed: bool,
}

struct Body {
    handle: RigidBodyHandle,
    collider: ColliderHandle,
}

/// The table with its items under rapier.
pub struct World {
    world: PhysicsWorld,
    table: Table,
    params: PhysicsParams,
    footprint: FishFootprint,
    /// Fish centre of mass in the fish frame (mm).
    fish_com: Point,
    coin_radius: f64,
    bodies: BTreeMap<ItemId, Body>,
    falls: BTreeMap<ItemId, Fall>,
    landed: BTreeMap<ItemId, Pose>,
    time_s: f64,
    dt: f64,
}

fn to_units(p: Point) -> RVec {
    RVec::new((p.x / MM_PER_UNIT) as f32, (p.y / MM_PER_UNIT) as f32)
}

fn from_units(v: RVec) -> Point {
    Point::new(v.x as f64 * MM_PER_UNIT, v.y as f64 * MM_PER_UNIT)
}

/// The material of a fish (outline minus hole) as convex pieces, in the fish frame
/// (mm): the plane around the hole centre is cut into angular wedges; each piece is
/// the outline clipped to a wedge and to the far side of the hole's chord, made
/// convex (a concavity of the outline inside one wedge is filled in).
pub fn fish_convex_pieces(footprint: &FishFootprint, wedges: usize) -> Vec<Vec<Point>> {
    let r = footprint.hole_radius();
    let outline = footprint.outline();
    let mut pieces = Vec::new();
    for k in 0..wedges {
        let a0 = std::f64::consts::TAU * k as f64 / wedges as f64;
        let a1 = std::f64::consts::TAU * (k + 1) as f64 / wedges as f64;
        let d0 = Vector::new(a0.cos(), a0.sin());
        let d1 = Vector::new(a1.cos(), a1.sin());
        // Left of the ray at a0, right of the ray at a1 (a wedge narrower than pi).
        let mut poly = clip(outline, |p| d0.perp(&p.coords));
        poly = clip(&poly, |p| -d1.perp(&p.coords));
        // Beyond the chord between the two hole points.
        let (c0, c1) = (Point::from(d0 * r), Point::from(d1 * r));
        let chord = c1 - c0;
        poly = clip(&poly, |p| -chord.perp(&(p - c0)));
        let hull = convex_hull(&poly);
        if hull.len() >= 3 && crate::geometry::table::polygon_area(&hull) > 1e-3 {
            pieces.push(hull);
        }
    }
    pieces
}

/// Sutherland–Hodgman: keeps the part of `poly` where `side >= 0`.
fn clip(poly: &[Point], side: impl Fn(Point) -> f64) -> Vec<Point> {
    let n = poly.len();
    let mut out = Vec::with_capacity(n + 4);
    for i in 0..n {
        let (p, q) = (poly[i], poly[(i + 1) % n]);
        let (sp, sq) = (side(p), side(q));
        if sp >= 0.0 {
            out.push(p);
        }
        if (sp >= 0.0) != (sq >= 0.0) {
            out.push(p + (q - p) * (sp / (sp - sq)));
        }
    }
    out
}

/// Andrew's monotone chain, counter-clockwise.
fn convex_hull(pts: &[Point]) -> Vec<Point> {
    let mut p: Vec<Point> = pts.to_vec();
    p.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    p.dedup_by(|a, b| (*a - *b).norm() < 1e-9);
    if p.len() < 3 {
        return p;
    }
    let cross = |o: Point, a: Point, b: Point| (a - o).perp(&(b - o));
    let mut lower: Vec<Point> = Vec::new();
    for &q in &p {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], q) <= 0.0 {
            lower.pop();
        }
        lower.push(q);
    }
    let mut upper: Vec<Point> = Vec::new();
    for &q in p.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], q) <= 0.0 {
            upper.pop();
        }
        upper.push(q);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// Where segment `a`→`b` (a inside, b outside) first leaves the convex table.
fn boundary_crossing(table: &Table, a: Point, b: Point) -> Point {
    let mut best_t = 1.0;
    for (p, q) in table.edges() {
        let e = q - p;
        let d = b - a;
        let denom = d.perp(&e);
        if denom.abs() < 1e-12 {
            continue;
        }
        let t = (p - a).perp(&e) / denom;
        let s = (p - a).perp(&d) / denom;
        if (-1e-9..=1.0 + 1e-9).contains(&t) && (-1e-9..=1.0 + 1e-9).contains(&s) && t < best_t {
            best_t = t.max(0.0);
        }
    }
    a + (b - a) * best_t
}

impl World {
    /// A world with the given items at their poses (ids missing from `poses` are off
    /// the table). Stacked items should be left out: 2D physics cannot hold them.
    pub fn new(
        table: Table,
        items: &Items,
        poses: &BTreeMap<ItemId, Pose>,
        params: PhysicsParams,
    ) -> World {
        let footprint = FishFootprint::new(items);
        let fish_com = footprint.centroid();
        let mut world = PhysicsWorld::new();
        world.gravity = RVec::new(0.0, 0.0);
        let dt = 1.0 / params.steps_per_s.max(60.0);
        world.integration_parameters.dt = dt as f32;
        let mut w = World {
            world,
            table,
            footprint,
            fish_com,
            coin_radius: items.coin.radius,
            params,
            bodies: BTreeMap::new(),
            falls: BTreeMap::new(),
            landed: BTreeMap::new(),
            time_s: 0.0,
            dt,
        };
        for (&id, pose) in poses {
            w.place(id, pose);
        }
        w
    }

    pub fn time_s(&self) -> f64 {
        self.time_s
    }

    pub fn step_dt(&self) -> f64 {
        self.dt
    }

    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Puts an item on the table at `pose` (at rest); replaces it if present.
    pub fn place(&mut self, id: ItemId, pose: &Pose) {
        self.remove(id);
        self.falls.remove(&id);
        self.landed.remove(&id);
        let p = &self.params;
        let body = RigidBodyBuilder::dynamic()
            .translation(to_units(pose.point()))
            .rotation(pose.angle() as f32)
            .ccd_enabled(true)
            .can_sleep(true)
            .build();
        let collider = if id.is_fish() {
            let pieces = fish_convex_pieces(&self.footprint, 24);
            let area: f64 = pieces
                .iter()
                .map(|c| crate::geometry::table::polygon_area(c))
                .sum();
            let shapes: Vec<(RPose, SharedShape)> = pieces
                .iter()
                .filter_map(|c| {
                    let pts: Vec<RVec> = c.iter().map(|&q| to_units(q)).collect();
                    SharedShape::convex_polyline(pts).map(|s| (RPose::identity(), s))
                })
                .collect();
            let density = p.fish_mass_g / (area / (MM_PER_UNIT * MM_PER_UNIT));
            ColliderBuilder::compound(shapes).density(density as f32)
        } else {
            let r = self.coin_radius / MM_PER_UNIT;
            let density = p.coin_mass_g / (std::f64::consts::PI * r * r);
            ColliderBuilder::ball(r as f32).density(density as f32)
        };
        let collider = collider
            .friction(p.item_friction as f32)
            .restitution(p.restitution as f32)
            .build();
        let (handle, collider) = self.world.insert(body, collider);
        self.bodies.insert(id, Body { handle, collider });
    }

    /// Takes an item out of the world entirely (no fall): e.g. before a put-back.
    pub fn remove(&mut self, id: ItemId) {
        if let Some(b) = self.bodies.remove(&id) {
            self.world.remove_body_with_colliders(b.handle, true);
        }
    }

    /// A flick: gives the fish the velocity `vel_mm_s` of its centre of mass by an
    /// impulse applied at `point_in_fish` (fish frame, mm), which also sets it spinning.
    pub fn flick(&mut self, id: ItemId, point_in_fish: Point, vel_mm_s: Vector) -> bool {
        let Some(b) = self.bodies.get(&id) else {
            return false;
        };
        let Some(body) = self.world.bodies.get_mut(b.handle) else {
            return false;
        };
        let mass = body.mass() as f64;
        let pose = Self::pose_of(body, id);
        let (s, c) = pose.angle().sin_cos();
        let at = Point::new(
            pose.x + c * point_in_fish.x - s * point_in_fish.y,
            pose.y + s * point_in_fish.x + c * point_in_fish.y,
        );
        let impulse = vel_mm_s / MM_PER_UNIT * mass;
        body.apply_impulse_at_point(
            RVec::new(impulse.x as f32, impulse.y as f32),
            to_units(at),
            true,
        );
        true
    }

    fn pose_of(body: &rapier2d::prelude::RigidBody, id: ItemId) -> Pose {
        let t = from_units(body.translation());
        if id.is_fish() {
            Pose::fish(t.x, t.y, body.rotation().angle() as f64)
        } else {
            Pose::coin(t.x, t.y)
        }
    }

    /// The centre of mass of an item at a pose (table mm).
    pub fn center_of_mass(&self, id: ItemId, pose: &Pose) -> Point {
        if id.is_coin() {
            return pose.point();
        }
        let (s, c) = pose.angle().sin_cos();
        let m = self.fish_com;
        Point::new(pose.x + c * m.x - s * m.y, pose.y + s * m.x + c * m.y)
    }

    /// Advances by one physics step; returns the items that crossed the edge.
    pub fn step(&mut self) -> Vec<EdgeExit> {
        let before: BTreeMap<ItemId, Point> = self
            .bodies
            .iter()
            .filter_map(|(&id, b)| {
                self.world
                    .bodies
                    .get(b.handle)
                    .map(|body| (id, from_units(body.center_of_mass())))
            })
            .collect();
        self.world.step();
        self.time_s += self.dt;
        self.apply_table_friction();
        let mut exits = Vec::new();
        let ids: Vec<ItemId> = self.bodies.keys().copied().collect();
        for id in ids {
            let Some(body) = self
                .bodies
                .get(&id)
                .and_then(|b| self.world.bodies.get(b.handle))
            else {
                continue;
            };
            let com = from_units(body.center_of_mass());
            if self.table.contains(com) {
                continue;
            }
            let prev = before.get(&id).copied().unwrap_or(com);
            let exit = if self.table.contains(prev) {
                boundary_crossing(&self.table, prev, com)
            } else {
                self.table.nearest_edge_point(com)
            };
            let pose = Self::pose_of(body, id);
            let lin = body.linvel();
            let vel = Vector::new(lin.x as f64, lin.y as f64) * MM_PER_UNIT;
            let angvel = body.angvel() as f64;
            exits.push(EdgeExit {
                item: id,
                time_s: self.time_s,
                exit,
                pose,
            });
            self.falls.insert(
                id,
                Fall {
                    start_time_s: self.time_s,
                    pose,
                    vel_mm_s: vel,
                    angvel,
                },
            );
            self.remove(id);
        }
        exits
    }

    /// Coulomb friction with the table: a constant deceleration `mu g` against the
    /// sliding velocity and a matching angular one; a velocity smaller than one step's
    /// worth of deceleration becomes exactly zero, so items really stop.
    fn apply_table_friction(&mut self) {
        let decel = self.params.table_friction * GRAVITY_MM_S2 / MM_PER_UNIT; // units/s²
        let dv = (decel * self.dt) as f32;
        // Angular: the friction torque over the moment of inertia of a plate whose
        // radius of gyration is about a third of its size.
        for (&id, b) in &self.bodies {
            let Some(body) = self.world.bodies.get_mut(b.handle) else {
                continue;
            };
            let gyr_units = if id.is_fish() {
                self.footprint.reach() * 0.45 / MM_PER_UNIT
            } else {
                self.coin_radius * 0.7 / MM_PER_UNIT
            };
            let v = body.linvel();
            let speed = v.length();
            let new_v = if speed <= dv {
                RVec::ZERO
            } else {
                v * ((speed - dv) / speed)
            };
            let w = body.angvel();
            let dw = (decel * self.dt / gyr_units) as f32;
            let new_w = if w.abs() <= dw {
                0.0
            } else {
                w - dw * w.signum()
            };
            body.set_linvel(new_v, false);
            body.set_angvel(new_w, false);
            // A stopped item sleeps: contact correction between touching items
            // would otherwise let them creep apart at rest. A hit wakes it.
            if new_w == 0.0 && new_v == RVec::ZERO && !body.is_sleeping() {
                body.sleep();
            }
        }
    }

    /// Runs until time `t_s` (several steps); returns the edge crossings on the way.
    pub fn advance_to(&mut self, t_s: f64) -> Vec<EdgeExit> {
        let mut exits = Vec::new();
        while self.time_s + 0.5 * self.dt < t_s {
            exits.extend(self.step());
        }
        // Falls that reached the floor are out of play.
        let floor = self.params.table_height_mm;
        let landed: Vec<(ItemId, Pose)> = self
            .falls
            .iter()
            .filter(|(_, f)| 0.5 * GRAVITY_MM_S2 * (self.time_s - f.start_time_s).powi(2) >= floor)
            .map(|(&id, f)| (id, f.pose))
            .collect();
        for (id, pose) in landed {
            self.falls.remove(&id);
            self.landed.insert(id, pose);
        }
        exits
    }

    /// Every item's state now: on the table, falling or landed.
    pub fn states(&self) -> BTreeMap<ItemId, ItemState> {
        let mut out = BTreeMap::new();
        for (&id, b) in &self.bodies {
            if let Some(body) = self.world.bodies.get(b.handle) {
                out.insert(
                    id,
                    ItemState {
                        pose: Self::pose_of(body, id),
                        z_mm: 0.0,
                        on_table: true,
                        landed: false,
                    },
                );
            }
        }
        for (&id, f) in &self.falls {
            let t = self.time_s - f.start_time_s;
            let p = f.pose.point() + f.vel_mm_s * t;
            let pose = match f.pose.theta {
                Some(th) => Pose::fish(p.x, p.y, th + f.angvel * t),
                None => Pose::coin(p.x, p.y),
            };
            out.insert(
                id,
                ItemState {
                    pose,
                    z_mm: -0.5 * GRAVITY_MM_S2 * t * t,
                    on_table: false,
                    landed: false,
                },
            );
        }
        for (&id, &pose) in &self.landed {
            out.insert(
                id,
                ItemState {
                    pose,
                    z_mm: -self.params.table_height_mm,
                    on_table: false,
                    landed: true,
                },
            );
        }
        out
    }

    /// Poses of the items on the table.
    pub fn poses(&self) -> BTreeMap<ItemId, Pose> {
        self.states()
            .into_iter()
            .filter(|(_, s)| s.on_table)
            .map(|(id, s)| (id, s.pose))
            .collect()
    }

    /// Speed of every item on the table: (centre of mass mm/s, rad/s).
    pub fn speeds(&self) -> BTreeMap<ItemId, (f64, f64)> {
        self.bodies
            .iter()
            .filter_map(|(&id, b)| {
                let body = self.world.bodies.get(b.handle)?;
                Some((
                    id,
                    (
                        body.linvel().length() as f64 * MM_PER_UNIT,
                        body.angvel().abs() as f64,
                    ),
                ))
            })
            .collect()
    }

    /// True when nothing on the table moves (< 1 mm/s, < 0.001 rad/s) and nothing is falling.
    pub fn at_rest(&self) -> bool {
        self.falls.is_empty() && self.speeds().values().all(|&(v, w)| v < 1.0 && w < 1e-3)
    }

    /// Total kinetic energy of the items on the table, g·mm²/s².
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies
            .values()
            .filter_map(|b| self.world.bodies.get(b.handle))
            .map(|body| {
                let m = body.mass() as f64;
                let v = body.linvel().length() as f64 * MM_PER_UNIT;
                let i = body.mass_properties().local_mprops.principal_inertia() as f64;
                let w = body.angvel() as f64;
                0.5 * m * v * v + 0.5 * i * w * w * MM_PER_UNIT * MM_PER_UNIT
            })
            .sum()
    }

    /// The deepest interpenetration between two items on the table, mm (0 if none).
    pub fn max_penetration_mm(&self) -> f64 {
        let cols: Vec<ColliderHandle> = self.bodies.values().map(|b| b.collider).collect();
        let mut worst = 0.0f64;
        for i in 0..cols.len() {
            for j in i + 1..cols.len() {
                let (Some(a), Some(b)) = (
                    self.world.colliders.get(cols[i]),
                    self.world.colliders.get(cols[j]),
                ) else {
                    continue;
                };
                if let Ok(Some(c)) =
                    parry::query::contact(a.position(), a.shape(), b.position(), b.shape(), 0.0)
                {
                    worst = worst.max(-(c.dist as f64) * MM_PER_UNIT);
                }
            }
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_ring_and_leave_the_hole_free() {
        let items = Items::default_set();
        let fp = FishFootprint::new(&items);
        let pieces = fish_convex_pieces(&fp, 24);
        assert!(pieces.len() >= 20);
        let area: f64 = pieces
            .iter()
            .map(|c| crate::geometry::table::polygon_area(c))
            .sum();
        // Within 2% of the true ring area (chords eat a sliver of the hole).
        assert!(
            (area - fp.area()).abs() / fp.area() < 0.02,
            "{area} vs {}",
            fp.area()
        );
        for c in &pieces {
            for p in c {
                assert!(p.coords.norm() >= 10.0 * (std::f64::consts::PI / 24.0).cos() - 1e-6);
            }
        }
    }
}
