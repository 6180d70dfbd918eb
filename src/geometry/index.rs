//! A nearest-neighbour index (kiddo k-d tree) of the items on the table, for
//! neighbourhood queries such as "which items could a pose touch".

use super::Point;
use crate::model::ItemId;
use kiddo::{KdTree, SquaredEuclidean};

/// Item centres (hole centres for fish) in a k-d tree.
pub struct ItemIndex {
    tree: KdTree<f64, 2>,
    ids: Vec<ItemId>,
}

impl ItemIndex {
    pub fn build(items: &[(ItemId, Point)]) -> ItemIndex {
        let mut tree: KdTree<f64, 2> = KdTree::new();
        let mut ids = Vec::with_capacity(items.len());
        for (i, (id, p)) in items.iter().enumerate() {
            tree.add(&[p.x, p.y], i as u64);
            ids.push(*id);
        }
        ItemIndex { tree, ids }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The items whose centres lie within `radius` of `p`, nearest first.
    pub fn within(&self, p: Point, radius: f64) -> Vec<ItemId> {
        self.tree
            .within::<SquaredEuclidean>(&[p.x, p.y], radius * radius)
            .into_iter()
            .map(|n| self.ids[n.item as usize])
            .collect()
    }

    /// The item nearest to `p` and its distance.
    pub fn nearest(&self, p: Point) -> Option<(ItemId, f64)> {
        if self.ids.is_empty() {
            return None;
        }
        let n = self.tree.nearest_one::<SquaredEuclidean>(&[p.x, p.y]);
        Some((self.ids[n.item as usize], n.distance.sqrt()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_neighbours_within_radius() {
        let idx = ItemIndex::build(&[
            (ItemId::fish(0), Point::new(0.0, 0.0)),
            (ItemId::coin(0), Point::new(10.0, 0.0)),
            (ItemId::fish(1), Point::new(100.0, 0.0)),
        ]);
        let near = idx.within(Point::new(1.0, 0.0), 20.0);
        assert_eq!(near.len(), 2);
        assert!(near.contains(&ItemId::coin(0)));
        assert_eq!(
            idx.nearest(Point::new(90.0, 0.0)).unwrap().0,
            ItemId::fish(1)
        );
    }
}
