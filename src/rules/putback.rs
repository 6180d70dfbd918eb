//! Where a lost fish goes back (R6, with R9): a deterministic search over poses.
//! R6a — own coin still on the table: hole centres around the coin × orientations,
//! the coin wholly inside the hole, the fish touching nothing else and on the table.
//! R6b/R6c — otherwise: places along the table edge walking outward from the exit
//! point × orientations, the fish wholly on the table with its outline within 3 mm of
//! the edge, touching nothing; when the own coin is also off the table (R9) the coin
//! must then fit in the hole on the table. Also checks an observed put-back pose
//! against the same rules within a tolerance. The search and the check measure
//! "where the fish touches the edge" alike ([`touch_position`]: beneath its part
//! within 3 mm of an edge, nearest the exit, on whichever edge near a corner).
//! Uses: config, geometry, model, scene.
//!
//! Speed (a crowded 8-player table, well under 1 ms): capsule bounds
//! (`geometry::capsule`) settle nearly every "does this pose touch that item" test
//! without the polygon test, and an orientation that certainly overlaps an item
//! skips the next places along the same edge while it cannot slide clear of it.
//! Both only spare tests whose outcome is already known: the poses found are the
//! same as by trying every candidate in turn.

use super::scene::{Obstacles, Scene, Shape};
use crate::config::Game;
use crate::geometry::capsule::{fish_disc_bound, fish_fish_bound, Bound, CapsuleBounds};
use crate::geometry::shapes::{bounding_box, fish_fish_overlap_boxed};
use crate::geometry::table::distance_to_convex;
use crate::geometry::{
    disc_disc_overlap, fish_disc_overlap, fish_edge_gap, Disc, FishFootprint, PlacedFish, Point,
    Table, Vector,
};
use crate::model::{ItemId, PlayerIdx, Pose};
use std::f64::consts::TAU;

/// R6b: "touching the edge" means the outline is at most this far from it (mm).
pub const EDGE_TOUCH_MM: f64 = 3.0;
/// A computed pose keeps at least this gap to every other item, so that putting the
/// fish there does not touch anything even with a little hand error (mm).
pub const PLACE_CLEARANCE_MM: f64 = 0.5;
/// A computed R6b/c pose puts the outline this far from the edge: inside the 3 mm.
pub const EDGE_TARGET_GAP_MM: f64 = 1.0;
/// Tolerance when judging an observed pose (measurement noise, hand placement), mm.
pub const OBSERVED_TOLERANCE_MM: f64 = 2.0;
/// How much farther from the exit point than the computed pose an observed R6b/c
/// pose may touch the edge and still count as "the nearest point" (mm).
pub const OBSERVED_NEAR_MM: f64 = 15.0;

/// The resolution of the put-back search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchParams {
    /// Step between places along the edge (R6b/c), mm.
    pub edge_step_mm: f64,
    /// Orientations tried at each place (evenly spaced over a full turn).
    pub orientations: usize,
    /// Step between hole-centre offsets around the coin (R6a), mm.
    pub hole_step_mm: f64,
    /// Orientations tried around the coin (R6a).
    pub orientations_r6a: usize,
    /// Gap kept to every other item, mm.
    pub clearance_mm: f64,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            edge_step_mm: 2.0,
            orientations: 36,
            hole_step_mm: 0.5,
            orientations_r6a: 72,
            clearance_mm: PLACE_CLEARANCE_MM,
        }
    }
}

/// The outcome of the fish put-back search.
#[derive(Debug, Clone, PartialEq)]
pub struct FishPutBack {
    pub item: ItemId,
    /// The legal pose; `None` when none exists at the search resolution.
    pub pose: Option<Pose>,
    /// `R6a`, `R6b`, `R6c`, or `R6` when nothing was found.
    pub rule: &'static str,
    pub reason: String,
    /// Where along the edge (arc length, mm) the exit point lies, for R6b/c.
    pub exit_s: f64,
    /// Where along the edge the computed pose touches it nearest the exit (R6b/c,
    /// see [`touch_position`]); R6b when that is the exit point itself.
    pub contact_s: Option<f64>,
}

/// The legal put-back pose of `owner`'s lost fish, which left the table at
/// `exit` (table mm), among the items of `scene` (the fish itself is ignored if
/// present). Deterministic; default search resolution.
pub fn fish_put_back_pose(
    game: &Game,
    table: &Table,
    scene: &Scene,
    owner: PlayerIdx,
    exit: Point,
) -> FishPutBack {
    fish_put_back_pose_with(game, table, scene, owner, exit, &SearchParams::default())
}

/// [`fish_put_back_pose`] at a chosen resolution.
pub fn fish_put_back_pose_with(
    game: &Game,
    table: &Table,
    scene: &Scene,
    owner: PlayerIdx,
    exit: Point,
    params: &SearchParams,
) -> FishPutBack {
    let fish_id = ItemId::fish(owner);
    let coin_id = ItemId::coin(owner);
    let footprint = FishFootprint::new(&game.items);
    let local = CapsuleBounds::of_polygon(footprint.outline());
    let exit_s = table.perimeter_position(exit);
    let mut a_blocked = None;
    if let Some(coin) = scene.poses.get(&coin_id) {
        let obstacles = Obstacles::build(game, scene, &[fish_id, coin_id]);
        match search_r6a(
            game,
            table,
            &footprint,
            &local,
            &obstacles,
            coin.point(),
            params,
        ) {
            Some(pose) => {
                return FishPutBack {
                    item: fish_id,
                    pose: Some(pose),
                    rule: "R6a",
                    reason: format!(
                        "own coin still on the table: placed with {coin_id} in its hole"
                    ),
                    exit_s,
                    contact_s: None,
                };
            }
            None => a_blocked = Some(coin_id),
        }
    }
    let coin_off = !scene.poses.contains_key(&coin_id);
    let obstacles = Obstacles::build(game, scene, &[fish_id]);
    let found = search_edge(
        game, table, &footprint, &local, &obstacles, exit_s, coin_off, params,
    );
    let mut why = match a_blocked {
        Some(c) => format!(
            "R6a impossible ({c} cannot be taken into the hole without touching other items); "
        ),
        None => String::new(),
    };
    if coin_off {
        why.push_str("own coin off the table, the hole must hold it on the table (R9); ");
    }
    // Where the pose touches the edge nearest the exit, measured as the checker
    // measures it: near a corner the fish may touch beside the exit although its
    // deepest point lies a step or two away.
    let found = found.map(|(pose, s, k)| {
        let fish = footprint.placed(&pose);
        let contact = touch_position(table, &fish, exit_s, EDGE_TOUCH_MM).unwrap_or(s);
        (
            pose,
            contact,
            k == 0 || table.perimeter_distance(contact, exit_s) < 1e-6,
        )
    });
    match found {
        Some((pose, contact_s, true)) => FishPutBack {
            item: fish_id,
            pose: Some(pose),
            rule: "R6b",
            reason: format!("{why}touching the edge where it flew off"),
            exit_s,
            contact_s: Some(contact_s),
        },
        Some((pose, contact_s, false)) => FishPutBack {
            item: fish_id,
            pose: Some(pose),
            rule: "R6c",
            reason: format!(
                "{why}the exit point is blocked; nearest free place along the edge, {:.0} mm away",
                table.perimeter_distance(contact_s, exit_s)
            ),
            exit_s,
            contact_s: Some(contact_s),
        },
        None => FishPutBack {
            item: fish_id,
            pose: None,
            rule: "R6",
            reason: format!("{why}no legal place along the whole edge"),
            exit_s,
            contact_s: None,
        },
    }
}

/// The outline and its capsule bounds turned to each of `n` orientations
/// (relative to the hole centre), each laid out when a search first needs it: a
/// search that succeeds early needs few.
struct Turns<'f> {
    shape: &'f [Point],
    local: CapsuleBounds,
    turned: Vec<Option<(Vec<Vector>, CapsuleBounds)>>,
}

impl<'f> Turns<'f> {
    fn new(footprint: &'f FishFootprint, local: &CapsuleBounds, n: usize) -> Turns<'f> {
        Turns {
            shape: footprint.outline(),
            local: *local,
            turned: vec![None; n],
        }
    }

    /// Orientation `k` (of `n`, a turn of k/n): the outline and its bounds.
    fn get(&mut self, k: usize) -> (&[Vector], &CapsuleBounds) {
        let (shape, local, n) = (self.shape, self.local, self.turned.len());
        let (outline, caps) = self.turned[k].get_or_insert_with(|| {
            let (s, c) = (TAU * k as f64 / n as f64).sin_cos();
            let outline = shape
                .iter()
                .map(|p| Vector::new(c * p.x - s * p.y, s * p.x + c * p.y))
                .collect();
            (outline, local.turned_moved(c, s, Vector::zeros()))
        });
        (outline, caps)
    }
}

/// Orientation indices ordered by how far they turn from `base` (radians): the
/// nearest first, then alternating either side. Deterministic.
fn orientation_order(base: f64, n: usize) -> Vec<usize> {
    let b = ((base.rem_euclid(TAU) / TAU) * n as f64).round() as isize;
    let mut order = Vec::with_capacity(n);
    order.push(b.rem_euclid(n as isize) as usize);
    for k in 1..=(n as isize / 2) {
        for i in [b + k, b - k] {
            let i = i.rem_euclid(n as isize) as usize;
            if !order.contains(&i) {
                order.push(i);
            }
        }
    }
    order
}

fn placed(outline: &[Vector], centre: Point, hole_r: f64, reach: f64) -> PlacedFish {
    PlacedFish {
        outline: outline.iter().map(|v| centre + v).collect(),
        hole: Disc::new(centre, hole_r),
        reach,
    }
}

/// One item a put-back pose must keep clear of, with its capsule bounds.
struct Body<'a> {
    centre: Point,
    reach: f64,
    shape: BodyShape<'a>,
}

enum BodyShape<'a> {
    Coin(Disc),
    Fish {
        fish: &'a PlacedFish,
        bounds: (Point, Point),
        caps: CapsuleBounds,
    },
}

/// The obstacles of one search. Answers exactly what [`Obstacles`] answers (the
/// capsule bounds only spare polygon tests whose outcome they already know), with
/// no allocation per query.
struct Crowd<'a> {
    bodies: Vec<Body<'a>>,
    max_reach: f64,
}

impl<'a> Crowd<'a> {
    fn new(
        obstacles: &'a Obstacles,
        footprint: &FishFootprint,
        local: &CapsuleBounds,
    ) -> Crowd<'a> {
        let bodies: Vec<Body> = obstacles
            .shapes()
            .iter()
            .map(|(_, shape)| match shape {
                Shape::Fish(f) => Body {
                    centre: f.hole.center,
                    reach: f.reach,
                    shape: BodyShape::Fish {
                        fish: f,
                        bounds: bounding_box(&f.outline),
                        caps: turned_bounds(footprint, local, f)
                            .unwrap_or_else(|| CapsuleBounds::of_polygon(&f.outline)),
                    },
                },
                Shape::Coin(d) => Body {
                    centre: d.center,
                    reach: d.radius,
                    shape: BodyShape::Coin(*d),
                },
            })
            .collect();
        let max_reach = bodies.iter().map(|b| b.reach).fold(0.0, f64::max);
        Crowd { bodies, max_reach }
    }

    /// The bodies whose centres lie within `radius` of `p`, into `out`.
    fn near_into(&self, p: Point, radius: f64, out: &mut Vec<usize>) {
        out.clear();
        let r2 = radius * radius;
        out.extend(
            (0..self.bodies.len()).filter(|&k| (self.bodies[k].centre - p).norm_squared() <= r2),
        );
    }

    /// As [`Obstacles::disc_blocked`].
    fn disc_blocked(&self, disc: &Disc, clearance: f64) -> bool {
        self.bodies.iter().any(|b| {
            if (b.centre - disc.center).norm() > b.reach + disc.radius + clearance {
                return false;
            }
            match &b.shape {
                BodyShape::Coin(c) => disc_disc_overlap(c, disc, clearance),
                BodyShape::Fish { fish, caps, .. } => {
                    match fish_disc_bound(caps, &fish.hole, disc, clearance) {
                        Bound::Clear => false,
                        Bound::Overlap { .. } => true,
                        Bound::Unsure => fish_disc_overlap(fish, disc, clearance),
                    }
                }
            }
        })
    }

    /// Whether the candidate comes within `clearance` of body `k` (as
    /// `fish_fish_overlap` / `fish_disc_overlap`): `Some(slack)` when it does, and
    /// still would if moved by less than `slack` mm (0 when only the polygon test knows).
    fn hits(&self, k: usize, cand: &mut Candidate, clearance: f64) -> Option<f64> {
        let b = &self.bodies[k];
        if (b.centre - cand.hole.center).norm() > b.reach + cand.reach + clearance {
            return None;
        }
        let bound = match &b.shape {
            BodyShape::Coin(d) => fish_disc_bound(&cand.caps, &cand.hole, d, clearance),
            BodyShape::Fish { caps, .. } => fish_fish_bound(&cand.caps, caps, clearance),
        };
        match bound {
            Bound::Clear => None,
            Bound::Overlap { slack } => Some(slack),
            Bound::Unsure => {
                let hit = match &b.shape {
                    BodyShape::Coin(d) => fish_disc_overlap(&cand.placed().0, d, clearance),
                    BodyShape::Fish { fish, bounds, .. } => {
                        let (me, my_bounds) = cand.placed();
                        fish_fish_overlap_boxed(me, *my_bounds, fish, *bounds, clearance)
                    }
                };
                hit.then_some(0.0)
            }
        }
    }
}

/// A placed fish's capsule bounds from the footprint's own (`local`), when the fish
/// is that footprint turned and moved: the turn is read off its farthest vertex and
/// checked on every vertex. `None` for any other outline.
fn turned_bounds(
    footprint: &FishFootprint,
    local: &CapsuleBounds,
    fish: &PlacedFish,
) -> Option<CapsuleBounds> {
    const MATCH_MM: f64 = 1e-7;
    let shape = footprint.outline();
    if shape.len() != fish.outline.len() {
        return None;
    }
    let far = (0..shape.len())
        .max_by(|&i, &j| shape[i].coords.norm().total_cmp(&shape[j].coords.norm()))?;
    let (p, q) = (shape[far].coords, fish.outline[far] - fish.hole.center);
    if p.norm() < 1e-6 {
        return None;
    }
    let (s, c) = (q.y.atan2(q.x) - p.y.atan2(p.x)).sin_cos();
    let at = fish.hole.center.coords;
    let fits = shape.iter().zip(&fish.outline).all(|(v, w)| {
        (Vector::new(c * v.x - s * v.y, s * v.x + c * v.y) + at - w.coords).norm() <= MATCH_MM
    });
    fits.then(|| local.turned_moved(c, s, at).loosened(MATCH_MM))
}

/// A trial pose of the lost fish. Its outline is only laid out when the capsule
/// bounds cannot decide a test.
struct Candidate<'o> {
    outline: &'o [Vector],
    hole: Disc,
    reach: f64,
    caps: CapsuleBounds,
    laid: Option<(PlacedFish, (Point, Point))>,
}

impl<'o> Candidate<'o> {
    fn new(
        outline: &'o [Vector],
        caps: &CapsuleBounds,
        centre: Point,
        hole_r: f64,
        reach: f64,
    ) -> Self {
        Candidate {
            outline,
            hole: Disc::new(centre, hole_r),
            reach,
            caps: caps.moved(centre.coords),
            laid: None,
        }
    }

    fn placed(&mut self) -> &(PlacedFish, (Point, Point)) {
        let (outline, hole, reach) = (self.outline, self.hole, self.reach);
        self.laid.get_or_insert_with(|| {
            let fish = placed(outline, hole.center, hole.radius, reach);
            let bounds = bounding_box(&fish.outline);
            (fish, bounds)
        })
    }
}

/// The most rings of hole offsets R6a tries.
const MAX_RINGS: usize = 1000;

/// The most steps either way along the table's edge R6b/c take at `step` mm: half
/// the perimeter of the largest table the loaders accept.
fn max_edge_steps(step: f64) -> usize {
    (2.0 * crate::limits::MAX_TABLE_SIDE_MM / step).ceil() as usize
}

fn search_r6a(
    game: &Game,
    table: &Table,
    footprint: &FishFootprint,
    local: &CapsuleBounds,
    obstacles: &Obstacles,
    coin: Point,
    params: &SearchParams,
) -> Option<Pose> {
    let hole_r = footprint.hole_radius();
    let room = hole_r - game.items.coin.radius - params.clearance_mm.min(0.25);
    if room < 0.0 {
        return None;
    }
    let n = params.orientations_r6a.max(1);
    let crowd = Crowd::new(obstacles, footprint, local);
    let reach = footprint.reach();
    // Point the tail away from the nearest edge first: such poses stay on the table.
    let inward = table.nearest_edge_point(coin);
    let base = if (coin - inward).norm() > 1e-9 {
        (coin - inward).y.atan2((coin - inward).x)
    } else {
        0.0
    };
    let order = orientation_order(base, n);
    let mut offsets = vec![Vector::zeros()];
    // Bounded whatever the items: a hole of the largest item (limits::MAX_ITEM_MM) at
    // the default step has a thousand rings; past MAX_RINGS the rings widen instead.
    let rings = ((room / params.hole_step_mm.max(0.05)).ceil() as usize).min(MAX_RINGS);
    for r in 1..=rings {
        let radius = room * r as f64 / rings as f64;
        let count = 8 * r;
        for j in 0..count {
            let a = TAU * j as f64 / count as f64;
            offsets.push(Vector::new(radius * a.cos(), radius * a.sin()));
        }
    }
    let centroid = footprint.centroid();
    // Every orientation covers the disc of the tag around its hole: if something
    // touches that disc, no pose at this offset can be legal.
    let rim = crate::geometry::shapes::boundary_distance(Point::origin(), footprint.outline());
    let mut free = offsets
        .iter()
        .map(|off| coin + off)
        .filter(|centre| !crowd.disc_blocked(&Disc::new(*centre, rim), params.clearance_mm))
        .peekable();
    // Nothing to lay out when no hole position is free.
    free.peek()?;
    let mut turns = Turns::new(footprint, local, n);
    let mut frames = EdgeFrames::new(table, n);
    // Every pose tried has its centre within `room` of the coin.
    let mut near = Vec::new();
    crowd.near_into(
        coin,
        room + reach + crowd.max_reach + params.clearance_mm,
        &mut near,
    );
    // The first pose wholly on the table wins; failing that, the first one that
    // cannot fall (centre of mass and hole over the table).
    let mut fallback = None;
    for centre in free {
        for &k in &order {
            let theta = TAU * k as f64 / n as f64;
            let (outline, caps) = turns.get(k);
            let mut cand = Candidate::new(outline, caps, centre, hole_r, reach);
            let wholly = match frames.margin(outline, k, centre, reach, WHOLLY_UPTO_MM) {
                // Too close to call with the per-orientation supports: as fish_edge_gap.
                m if m.abs() < EDGE_ROUNDING_MM => fish_edge_gap(table, &cand.placed().0) >= 0.0,
                m => m >= 0.0,
            };
            if !wholly && fallback.is_some() {
                continue;
            }
            let (s, c) = theta.sin_cos();
            let g = centre
                + Vector::new(
                    c * centroid.x - s * centroid.y,
                    s * centroid.x + c * centroid.y,
                );
            let stable = wholly || (table.contains(g) && table.contains(centre));
            if !stable
                || near
                    .iter()
                    .any(|&j| crowd.hits(j, &mut cand, params.clearance_mm).is_some())
            {
                continue;
            }
            let pose = Pose::fish(centre.x, centre.y, normalise_angle(theta));
            if wholly {
                return Some(pose);
            }
            fallback = Some(pose);
        }
    }
    fallback
}

/// Margins closer than this to a threshold are recomputed vertex by vertex (mm).
const EDGE_ROUNDING_MM: f64 = 1e-9;
/// "Wholly on the table" needs the margin's sign only: edges farther than this
/// from every vertex cannot change it.
const WHOLLY_UPTO_MM: f64 = 1.0;

/// Walks the edge outward from `exit_s`; returns the pose, where it touches the
/// edge, and how many steps out it was found (0 = at the exit point).
#[allow(clippy::too_many_arguments)]
fn search_edge(
    game: &Game,
    table: &Table,
    footprint: &FishFootprint,
    local: &CapsuleBounds,
    obstacles: &Obstacles,
    exit_s: f64,
    coin_off: bool,
    params: &SearchParams,
) -> Option<(Pose, f64, usize)> {
    let n = params.orientations.max(1);
    let mut turns = Turns::new(footprint, local, n);
    let hole_r = footprint.hole_radius();
    let reach = footprint.reach();
    let coin_r = game.items.coin.radius;
    let clearance = params.clearance_mm;
    let step = params.edge_step_mm.max(0.1);
    let half = table.perimeter() / 2.0;
    let coin_inset = table.inset(coin_r);
    let crowd = Crowd::new(obstacles, footprint, local);
    let mut last_hit: [Vec<Option<usize>>; 2] = [vec![None; n], vec![None; n]];
    // Per direction and orientation: (edge, last step) up to which that
    // orientation is known to overlap something.
    let mut skip: [Vec<Option<(usize, usize)>>; 2] = [vec![None; n], vec![None; n]];
    let mut edges = EdgeFrames::new(table, n);
    let mut near = Vec::new();
    // Per edge: the orientation order and, per orientation, the outline point
    // deepest toward that edge (its depth and where along the edge it lies).
    let mut per_edge: Vec<Option<EdgeCache>> = vec![None; table.corners().len()];
    // A table within limits::MAX_TABLE_SIDE_MM has a perimeter of at most four such
    // sides; a table past that (a number the loaders would refuse) is searched no
    // further than that, not for ever.
    let steps = ((half / step).ceil() as usize).min(max_edge_steps(step));
    for k in 0..=steps {
        let sides: &[(usize, f64)] = if k == 0 {
            &[(0, 0.0)]
        } else {
            &[(0, 1.0), (1, -1.0)]
        };
        for &(dir, side) in sides {
            let s = exit_s + side * step * k as f64;
            let place = table.place_at(s);
            // Every pose tried here puts its outline at this point: if something
            // lies there, no orientation can be legal.
            let contact = place.point + place.inward * EDGE_TARGET_GAP_MM;
            if crowd.disc_blocked(&Disc::new(contact, 0.0), clearance) {
                continue;
            }
            // Every pose tried here has its centre within reach + the target gap of
            // the place (its deepest point lies there): only items near it matter.
            crowd.near_into(
                place.point,
                2.0 * reach + EDGE_TARGET_GAP_MM + crowd.max_reach + clearance,
                &mut near,
            );
            let (order, support) = per_edge[place.edge].get_or_insert_with(|| {
                let base = place.inward.y.atan2(place.inward.x);
                (orientation_order(base, n), vec![None; n])
            });
            for &i in order.iter() {
                if skip[dir][i].is_some_and(|(edge, until)| edge == place.edge && k <= until) {
                    continue;
                }
                let (outline, caps) = turns.get(i);
                let (depth, along) = *support[i].get_or_insert_with(|| {
                    outline
                        .iter()
                        .map(|v| (place.inward.dot(v), place.tangent.dot(v)))
                        .fold(
                            (f64::INFINITY, 0.0),
                            |acc, x| if x.0 < acc.0 { x } else { acc },
                        )
                });
                // The deepest outline point goes to the edge place, EDGE_TARGET_GAP_MM in.
                let centre = place.point + place.inward * (EDGE_TARGET_GAP_MM - depth)
                    - place.tangent * along;
                let gap = edges.margin(outline, i, centre, reach, EDGE_TOUCH_MM);
                if !(0.0..=EDGE_TOUCH_MM).contains(&gap) {
                    continue;
                }
                let mut cand = Candidate::new(outline, caps, centre, hole_r, reach);
                // Walking on, an orientation usually keeps hitting what it hit at the
                // last place: try that item first.
                let hit = last_hit[dir][i]
                    .and_then(|j| crowd.hits(j, &mut cand, clearance).map(|slack| (j, slack)))
                    .or_else(|| {
                        near.iter().find_map(|&j| {
                            crowd.hits(j, &mut cand, clearance).map(|slack| (j, slack))
                        })
                    });
                if let Some((j, slack)) = hit {
                    last_hit[dir][i] = Some(j);
                    // Along one edge the next places slide this pose by whole steps
                    // along it: while they slide it by less than the slack, it still
                    // overlaps the same item.
                    let more = (slack / step).ceil() as usize;
                    if more > 1 {
                        skip[dir][i] = Some((place.edge, k + more - 1));
                    }
                    continue;
                }
                if coin_off && !coin_can_follow(&coin_inset, obstacles, &cand.hole, coin_r) {
                    continue;
                }
                let theta = TAU * i as f64 / n as f64;
                let pose = Pose::fish(centre.x, centre.y, normalise_angle(theta));
                return Some((pose, s.rem_euclid(table.perimeter()), k));
            }
        }
    }
    None
}

/// For one table edge: orientations in the order to try them, and per orientation
/// the depth toward the edge and the position along it of the deepest outline point
/// (once an orientation is tried there).
type EdgeCache = (Vec<usize>, Vec<Option<(f64, f64)>>);

/// The table's edges as (start corner, inward unit normal): the margin of a point
/// inside a convex table is its smallest distance along these normals. With, per
/// edge and orientation, how deep the turned outline reaches toward that edge
/// (worked out for an edge when a pose first comes near it).
struct EdgeFrames {
    edges: Vec<(Point, Vector)>,
    /// `support[e][i]`: the least offset of outline `i` along edge `e`'s normal
    /// (NaN until needed).
    support: Vec<Vec<f64>>,
}

impl EdgeFrames {
    fn new(table: &Table, n: usize) -> EdgeFrames {
        let edges: Vec<(Point, Vector)> = table
            .edges()
            .filter_map(|(a, b)| {
                let e = b - a;
                let len = e.norm();
                (len > 0.0).then(|| (a, Vector::new(-e.y, e.x) / len))
            })
            .collect();
        let support = vec![vec![f64::NAN; n]; edges.len()];
        EdgeFrames { edges, support }
    }

    /// The smallest distance of outline `i` (offsets from `centre`) to the edge:
    /// negative when it overhangs. Same as `fish_edge_gap` for a convex table.
    /// Only edges that the outline could come within `upto` of are visited (an
    /// outline within `reach` of the centre); the answer is exact whenever it is
    /// below `upto`, and at least `upto` otherwise.
    fn margin(
        &mut self,
        outline: &[Vector],
        i: usize,
        centre: Point,
        reach: f64,
        upto: f64,
    ) -> f64 {
        let mut m = f64::INFINITY;
        for (e, (a, nrm)) in self.edges.iter().enumerate() {
            let base = nrm.dot(&(centre - a));
            if base - reach >= upto {
                continue;
            }
            let support = &mut self.support[e][i];
            if support.is_nan() {
                *support = outline
                    .iter()
                    .map(|v| nrm.dot(v))
                    .fold(f64::INFINITY, f64::min);
            }
            m = m.min(base + *support);
        }
        // The supports sum in another order than vertex by vertex: at a threshold,
        // decide as the vertices do.
        if m.abs() < EDGE_ROUNDING_MM || (m - upto).abs() < EDGE_ROUNDING_MM {
            return self.vertex_margin(outline, centre, reach, upto);
        }
        m
    }

    /// [`EdgeFrames::margin`] vertex by vertex.
    fn vertex_margin(&self, outline: &[Vector], centre: Point, reach: f64, upto: f64) -> f64 {
        let mut m = f64::INFINITY;
        for (a, nrm) in &self.edges {
            if nrm.dot(&(centre - a)) - reach >= upto {
                continue;
            }
            for v in outline {
                let d = nrm.dot(&(centre + v - a));
                if d < m {
                    m = d;
                }
            }
        }
        m
    }
}

/// R9: with the fish here, its coin could then be put back (R8a "possible"): the
/// coin fits on the table inside the hole, and nothing else reaches into the hole.
fn coin_can_follow(coin_inset: &[Point], obstacles: &Obstacles, hole: &Disc, coin_r: f64) -> bool {
    // As `Table::disc_fits_near`, with the inset table computed once per search.
    !coin_inset.is_empty()
        && distance_to_convex(coin_inset, hole.center) <= hole.radius - coin_r + 1e-9
        && obstacles.in_disc(hole).is_empty()
}

/// Where along the edge (arc length) a fish touches it: the outline vertex nearest
/// the edge, projected onto the edge. Near a corner a fish may touch two edges and
/// this names only the closer touch; R6 asks about the touch nearest the exit, see
/// [`touch_position`].
pub fn contact_position(table: &Table, fish: &PlacedFish) -> f64 {
    let nearest = fish
        .outline
        .iter()
        .copied()
        .min_by(|a, b| {
            table
                .signed_distance(*a)
                .total_cmp(&table.signed_distance(*b))
        })
        .unwrap_or(fish.hole.center);
    table.perimeter_position(nearest)
}

/// Where along the edge (arc length) a fish touches it nearest to `exit_s`. It
/// touches each edge beneath every part of its outline that lies within `within`
/// mm of that edge (R6b: "no more than 3 mm from it"); a fish in a corner touches
/// two edges, and R6 is about the touch nearest the exit. `exit_s` itself when the
/// fish touches the edge there; `None` when it touches no edge.
pub fn touch_position(table: &Table, fish: &PlacedFish, exit_s: f64, within: f64) -> Option<f64> {
    let total = table.perimeter();
    let exit_s = exit_s.rem_euclid(total);
    let outline = &fish.outline;
    let m = outline.len();
    let mut best: Option<(f64, f64)> = None;
    let mut start = 0.0;
    for (a, b) in table.edges() {
        let len = (b - a).norm();
        if len <= 0.0 {
            continue;
        }
        let tangent = (b - a) / len;
        let inward = Vector::new(-tangent.y, tangent.x);
        for i in 0..m {
            let (p, q) = (outline[i], outline[(i + 1) % m]);
            let (dp, dq) = (inward.dot(&(p - a)), inward.dot(&(q - a)));
            if dp > within && dq > within {
                continue;
            }
            // The part of this side within `within` of the edge's line.
            let cut = |from: Point, df: f64, to: Point, dt: f64| {
                if df > within {
                    from + (to - from) * ((df - within) / (df - dt))
                } else {
                    from
                }
            };
            let (p, q) = (cut(p, dp, q, dq), cut(q, dq, p, dp));
            let along = |x: Point| start + tangent.dot(&(x - a)).clamp(0.0, len);
            let (u, v) = (along(p), along(q));
            let (lo, hi) = (u.min(v), u.max(v));
            let (d, at) = if (lo..=hi).contains(&exit_s) {
                (0.0, exit_s)
            } else {
                let (dl, dh) = (
                    table.perimeter_distance(lo, exit_s),
                    table.perimeter_distance(hi, exit_s),
                );
                if dl <= dh {
                    (dl, lo)
                } else {
                    (dh, hi)
                }
            };
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, at));
            }
        }
        start += len;
    }
    best.map(|(_, at)| at)
}

/// Checks an observed put-back pose of a fish against R6/R9, given what the search
/// found in the same scene. `Err` says what was broken.
pub fn check_fish_pose(
    game: &Game,
    table: &Table,
    scene: &Scene,
    expected: &FishPutBack,
    observed: &Pose,
) -> Result<(), String> {
    let tol = OBSERVED_TOLERANCE_MM;
    let owner = expected.item.owner;
    let footprint = FishFootprint::new(&game.items);
    let fish = footprint.placed(observed);
    let coin_id = ItemId::coin(owner);
    let obstacles = Obstacles::build(game, scene, &[expected.item, coin_id]);
    if let Some(hit) = obstacles.fish_penetrates(&fish, tol) {
        return Err(format!("R6: put back lying on {hit}"));
    }
    if let Some(coin) = scene.poses.get(&coin_id) {
        let coin_disc = Disc::new(coin.point(), game.items.coin.radius);
        let in_hole = (coin_disc.center - fish.hole.center).norm() + coin_disc.radius
            <= fish.hole.radius + tol;
        if expected.rule == "R6a" && !in_hole {
            return Err(format!(
                "R6a: {coin_id} is on the table but not inside the hole"
            ));
        }
        if !in_hole {
            let shrunk = Disc::new(coin_disc.center, (coin_disc.radius - tol).max(0.0));
            if crate::geometry::fish_disc_overlap(&fish, &shrunk, 0.0) {
                return Err(format!("R6: put back lying on {coin_id}"));
            }
        }
        if in_hole {
            return if table.contains(fish.hole.center) {
                Ok(())
            } else {
                Err("R6a: the fish hangs off the table".into())
            };
        }
    }
    let gap = fish_edge_gap(table, &fish);
    if gap < -tol {
        return Err(format!(
            "R6b: the fish overhangs the edge by {:.1} mm",
            -gap
        ));
    }
    if gap > EDGE_TOUCH_MM + tol {
        return Err(format!(
            "R6b: the fish is {gap:.1} mm from the edge (at most 3 mm)"
        ));
    }
    if let Some(contact) = expected.contact_s {
        let allowed = table.perimeter_distance(contact, expected.exit_s) + OBSERVED_NEAR_MM;
        // Measured as the search measures its own pose (with the observation
        // tolerance on "touching"), so that the computed pose always passes.
        let touch = touch_position(table, &fish, expected.exit_s, EDGE_TOUCH_MM + tol)
            .unwrap_or_else(|| contact_position(table, &fish));
        let got = table.perimeter_distance(touch, expected.exit_s);
        if got > allowed {
            return Err(format!(
                "{}: touches the edge {got:.0} mm from where it flew off; a legal place is {:.0} mm away",
                expected.rule,
                allowed - OBSERVED_NEAR_MM
            ));
        }
    }
    if !scene.poses.contains_key(&coin_id) {
        let coin_r = game.items.coin.radius;
        let fits = table.disc_fits_near(fish.hole.center, fish.hole.radius - coin_r + tol, coin_r);
        let foreign = obstacles.in_disc(&Disc::new(fish.hole.center, fish.hole.radius - tol));
        if !fits || !foreign.is_empty() {
            return Err(format!(
                "R9: placed so that {coin_id} cannot be put back in its hole"
            ));
        }
    }
    Ok(())
}

/// An angle in (−π, π].
pub fn normalise_angle(a: f64) -> f64 {
    let a = a.rem_euclid(TAU);
    if a > std::f64::consts::PI {
        a - TAU
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Items;

    #[test]
    fn touch_is_measured_nearest_the_exit_on_any_edge() {
        let t = Table::rectangle(1000.0, 700.0);
        let f = FishFootprint::new(&Items::default_set());
        // Along the bottom edge, 1 mm in: touches it from about x = 492 to 553.
        let fish = f.placed(&Pose::fish(500.0, 16.0, 0.0));
        assert_eq!(touch_position(&t, &fish, 520.0, EDGE_TOUCH_MM), Some(520.0));
        let far = touch_position(&t, &fish, 600.0, EDGE_TOUCH_MM).unwrap();
        assert!(far > 545.0 && far < 556.0, "{far}");
        // 3 mm farther in, it touches nowhere.
        let off = f.placed(&Pose::fish(500.0, 19.5, 0.0));
        assert_eq!(touch_position(&t, &off, 520.0, EDGE_TOUCH_MM), None);
        // In the corner (0, 700) (`simulate --scenario match --seed 9`): 1 mm from the
        // left edge beside the exit, 0.3 mm from the top edge 29 mm away along it.
        let corner = f.placed(&Pose::fish(15.943, 684.751, -0.8727));
        let exit_s = t.perimeter_position(Point::new(0.0, 688.06));
        let touch = touch_position(&t, &corner, exit_s, EDGE_TOUCH_MM).unwrap();
        assert!(
            t.perimeter_distance(touch, exit_s) < 1e-9,
            "{touch} {exit_s}"
        );
        let nearest_vertex = contact_position(&t, &corner);
        assert!(t.perimeter_distance(nearest_vertex, exit_s) > 25.0);
    }
}
