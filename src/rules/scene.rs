//! The table as the put-back rules see it: the items lying on it (footprints in
//! table mm, indexed with `geometry::ItemIndex`), what lies on what, and what the
//! tracker is unsure of. Owns the "does this shape touch anything" queries that
//! R6 and R8 share. Uses: model, config, geometry, record.

use crate::config::Game;
use crate::geometry::shapes::{bounding_box, fish_fish_overlap_boxed};
use crate::geometry::{
    disc_disc_overlap, fish_disc_overlap, fish_fish_overlap, Disc, FishFootprint, ItemIndex,
    PlacedFish, Point, Vector,
};
use crate::model::{ItemId, Pose};
use crate::record::{Shot, Stacking};
use std::collections::{BTreeMap, BTreeSet};

/// One item's footprint on the table.
#[derive(Debug, Clone)]
pub enum Shape {
    Fish(PlacedFish),
    Coin(Disc),
}

impl Shape {
    /// The radius around the item's centre (hole centre for fish) that encloses it.
    pub fn reach(&self) -> f64 {
        match self {
            Shape::Fish(f) => f.reach,
            Shape::Coin(d) => d.radius,
        }
    }
}

/// The items on the table and what is known about how they lie.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    /// Pose of every item on the table.
    pub poses: BTreeMap<ItemId, Pose>,
    /// Who lies on whom (from the shot's observation).
    pub stacking: Vec<Stacking>,
    /// For stacked fish: whether they still touch the table.
    pub touches_table: BTreeMap<ItemId, bool>,
    /// Items whose pose or surroundings are in doubt (R8e).
    pub doubt: BTreeSet<ItemId>,
}

impl Scene {
    /// Items at the given poses, nothing stacked, nothing in doubt.
    pub fn from_poses(poses: BTreeMap<ItemId, Pose>) -> Scene {
        Scene {
            poses,
            ..Scene::default()
        }
    }

    /// The scene at the rest of a shot: its `end` poses and observations.
    pub fn at_rest(shot: &Shot) -> Scene {
        Scene {
            poses: shot.end.clone(),
            stacking: shot.stacking.clone(),
            touches_table: shot.touches_table.clone(),
            doubt: shot.doubt.iter().copied().collect(),
        }
    }

    /// Puts an item on the table (a put-back): it lies flat, on nothing.
    pub fn place(&mut self, item: ItemId, pose: Pose) {
        self.stacking.retain(|s| s.top != item && s.under != item);
        self.touches_table.remove(&item);
        self.doubt.remove(&item);
        self.poses.insert(item, pose);
    }

    /// Takes an item off the table.
    pub fn remove(&mut self, item: ItemId) {
        self.stacking.retain(|s| s.top != item && s.under != item);
        self.touches_table.remove(&item);
        self.poses.remove(&item);
    }
}

/// The footprints of a scene's items with a k-d index of their centres, for
/// "what could this pose touch" queries.
pub struct Obstacles {
    shapes: Vec<(ItemId, Shape)>,
    /// Axis-aligned bounds of each shape: (min, max).
    boxes: Vec<(Point, Point)>,
    slot: BTreeMap<ItemId, usize>,
    index: ItemIndex,
    /// The largest reach of any shape: the query radius is own reach + this.
    max_reach: f64,
}

impl Obstacles {
    /// Every item of `scene` except those in `skip`.
    pub fn build(game: &Game, scene: &Scene, skip: &[ItemId]) -> Obstacles {
        let footprint = FishFootprint::new(&game.items);
        let coin_r = game.items.coin.radius;
        let shapes: Vec<(ItemId, Shape)> = scene
            .poses
            .iter()
            .filter(|(id, _)| !skip.contains(id))
            .map(|(id, pose)| (*id, shape_of(&footprint, coin_r, *id, pose)))
            .collect();
        Obstacles::from_shapes(shapes)
    }

    /// From shapes already placed.
    pub fn from_shapes(shapes: Vec<(ItemId, Shape)>) -> Obstacles {
        let centres: Vec<(ItemId, Point)> =
            shapes.iter().map(|(id, s)| (*id, centre_of(s))).collect();
        let max_reach = shapes.iter().map(|(_, s)| s.reach()).fold(0.0, f64::max);
        let boxes = shapes
            .iter()
            .map(|(_, s)| match s {
                Shape::Fish(f) => bounding_box(&f.outline),
                Shape::Coin(d) => (
                    d.center - Vector::new(d.radius, d.radius),
                    d.center + Vector::new(d.radius, d.radius),
                ),
            })
            .collect();
        Obstacles {
            index: ItemIndex::build(&centres),
            boxes,
            slot: shapes
                .iter()
                .enumerate()
                .map(|(k, (id, _))| (*id, k))
                .collect(),
            shapes,
            max_reach,
        }
    }

    pub fn shapes(&self) -> &[(ItemId, Shape)] {
        &self.shapes
    }

    fn shape(&self, id: ItemId) -> Option<&Shape> {
        self.slot.get(&id).map(|&k| &self.shapes[k].1)
    }

    /// The items whose footprints could come within `clearance` of a shape centred
    /// at `centre` with the given reach.
    pub fn near(&self, centre: Point, reach: f64, clearance: f64) -> Vec<(ItemId, &Shape)> {
        if self.shapes.is_empty() {
            return Vec::new();
        }
        self.index
            .within(centre, reach + self.max_reach + clearance)
            .into_iter()
            .filter_map(|id| self.shape(id).map(|s| (id, s)))
            .collect()
    }

    /// The first item a placed fish comes within `clearance` of (or overlaps).
    pub fn fish_hits(&self, fish: &PlacedFish, clearance: f64) -> Option<ItemId> {
        self.near(fish.hole.center, fish.reach, clearance)
            .into_iter()
            .find(|(_, s)| match s {
                Shape::Fish(other) => fish_fish_overlap(fish, other, clearance),
                Shape::Coin(d) => fish_disc_overlap(fish, d, clearance),
            })
            .map(|(id, _)| id)
    }

    /// [`Obstacles::fish_hits`] for a fish whose bounds (min, max) are known: items
    /// whose bounds stay `clearance` clear of them are skipped without the exact test.
    pub fn fish_hits_boxed(
        &self,
        fish: &PlacedFish,
        bounds: (Point, Point),
        clearance: f64,
    ) -> Option<ItemId> {
        let (lo, hi) = bounds;
        self.index
            .within(fish.hole.center, fish.reach + self.max_reach + clearance)
            .into_iter()
            .find(|id| {
                let Some(&k) = self.slot.get(id) else {
                    return false;
                };
                let (blo, bhi) = self.boxes[k];
                if blo.x - hi.x >= clearance
                    || lo.x - bhi.x >= clearance
                    || blo.y - hi.y >= clearance
                    || lo.y - bhi.y >= clearance
                {
                    return false;
                }
                match &self.shapes[k].1 {
                    Shape::Fish(other) => {
                        fish_fish_overlap_boxed(fish, bounds, other, self.boxes[k], clearance)
                    }
                    Shape::Coin(d) => fish_disc_overlap(fish, d, clearance),
                }
            })
    }

    /// Whether a placed fish comes within `clearance` of one given item.
    /// `bounds` are the fish's (min, max).
    pub fn fish_hits_item(
        &self,
        fish: &PlacedFish,
        bounds: (Point, Point),
        id: ItemId,
        clearance: f64,
    ) -> bool {
        let Some(&k) = self.slot.get(&id) else {
            return false;
        };
        match &self.shapes[k].1 {
            Shape::Fish(other) => {
                fish_fish_overlap_boxed(fish, bounds, other, self.boxes[k], clearance)
            }
            Shape::Coin(d) => fish_disc_overlap(fish, d, clearance),
        }
    }

    /// Whether any item comes within `clearance` of a disc (a point when the radius
    /// is 0): a cheap necessary test before trying whole fish poses.
    pub fn disc_blocked(&self, disc: &Disc, clearance: f64) -> bool {
        self.near(disc.center, disc.radius, clearance)
            .into_iter()
            .any(|(_, s)| match s {
                Shape::Fish(f) => fish_disc_overlap(f, disc, clearance),
                Shape::Coin(c) => disc_disc_overlap(c, disc, clearance),
            })
    }

    /// The first item a fish overlaps by more than `tolerance` (mm of penetration):
    /// the lenient test for observed poses, which carry measurement noise.
    pub fn fish_penetrates(&self, fish: &PlacedFish, tolerance: f64) -> Option<ItemId> {
        self.near(fish.hole.center, fish.reach, 0.0)
            .into_iter()
            .find(|(_, s)| match s {
                Shape::Fish(other) => fish_fish_penetration(fish, other, tolerance),
                Shape::Coin(d) => {
                    let shrunk = Disc::new(d.center, (d.radius - tolerance).max(0.0));
                    fish_disc_overlap(fish, &shrunk, 0.0)
                }
            })
            .map(|(id, _)| id)
    }

    /// The items that reach into a disc (a hole), even partly: coins whose disc meets
    /// it, fish whose material meets it.
    pub fn in_disc(&self, disc: &Disc) -> Vec<ItemId> {
        self.near(disc.center, disc.radius, 0.0)
            .into_iter()
            .filter(|(_, s)| match s {
                Shape::Fish(f) => fish_disc_overlap(f, disc, 0.0),
                Shape::Coin(c) => disc_disc_overlap(c, disc, 0.0),
            })
            .map(|(id, _)| id)
            .collect()
    }
}

/// An item's footprint at a pose.
pub fn shape_of(footprint: &FishFootprint, coin_r: f64, id: ItemId, pose: &Pose) -> Shape {
    if id.is_fish() {
        Shape::Fish(footprint.placed(pose))
    } else {
        Shape::Coin(Disc::new(pose.point(), coin_r))
    }
}

fn centre_of(s: &Shape) -> Point {
    match s {
        Shape::Fish(f) => f.hole.center,
        Shape::Coin(d) => d.center,
    }
}

/// Whether the material of two fish overlaps by more than `tolerance`: some outline
/// vertex of one lies that deep inside the other's material.
pub fn fish_fish_penetration(a: &PlacedFish, b: &PlacedFish, tolerance: f64) -> bool {
    if (a.hole.center - b.hole.center).norm() > a.reach + b.reach {
        return false;
    }
    let deep = |p: Point, f: &PlacedFish| {
        f.covers(p)
            && crate::geometry::shapes::boundary_distance(p, &f.outline) > tolerance
            && (p - f.hole.center).norm() > f.hole.radius + tolerance
    };
    a.outline.iter().any(|p| deep(*p, b)) || b.outline.iter().any(|p| deep(*p, a))
}
