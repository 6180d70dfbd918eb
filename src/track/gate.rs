//! Gating (pure): which detections lie close enough to a track's prediction to be
//! worth a cost. The only place the tracker touches kiddo. Uses: geometry, kiddo.

use crate::geometry::Point;
use kiddo::{KdTree, SquaredEuclidean};

/// For each query `(centre, radius)`, the indices of the points within `radius` of
/// `centre`, each point widened by its own `extent` (half a streak's length), in
/// increasing index order.
pub(crate) fn gate_candidates(
    points: &[(Point, f64)],
    queries: &[(Point, f64)],
) -> Vec<Vec<usize>> {
    if points.is_empty() {
        return vec![Vec::new(); queries.len()];
    }
    let mut tree: KdTree<f64, 2> = KdTree::new();
    for (i, (p, _)) in points.iter().enumerate() {
        tree.add(&[p.x, p.y], i as u64);
    }
    let widest = points.iter().map(|(_, e)| *e).fold(0.0, f64::max);
    queries
        .iter()
        .map(|(c, r)| {
            let reach = r + widest;
            let mut hits: Vec<usize> = tree
                .within_unsorted::<SquaredEuclidean>(&[c.x, c.y], reach * reach)
                .into_iter()
                .map(|n| n.item as usize)
                .filter(|&i| (points[i].0 - c).norm() <= r + points[i].1)
                .collect();
            hits.sort_unstable();
            hits
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widened_points_are_found_only_within_reach() {
        let pts = [
            (Point::new(0.0, 0.0), 0.0),
            (Point::new(50.0, 0.0), 30.0),
            (Point::new(200.0, 0.0), 0.0),
        ];
        let got = gate_candidates(
            &pts,
            &[
                (Point::new(10.0, 0.0), 15.0),
                (Point::new(150.0, 0.0), 10.0),
            ],
        );
        assert_eq!(got, vec![vec![0, 1], vec![]]);
        assert_eq!(
            gate_candidates(&[], &[(Point::origin(), 1.0)]),
            vec![Vec::<usize>::new()]
        );
    }
}
