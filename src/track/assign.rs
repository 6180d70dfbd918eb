//! Optimal assignment of tracks to detections (pure): the Hungarian algorithm
//! (shortest augmenting paths with potentials, O(n³)) on a matrix extended so that
//! leaving a track or a detection unmatched costs `max_cost / 2`. A pair is then
//! matched exactly when that lowers the total, the same contract as `lap.lapjv`
//! with `cost_limit` that ByteTrack uses. Uses: nalgebra.

use nalgebra::DMatrix;

/// The result of [`assign`]: index pairs `(track, detection)` and what is left over,
/// each list in increasing order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    pub matches: Vec<(usize, usize)>,
    pub unmatched_tracks: Vec<usize>,
    pub unmatched_dets: Vec<usize>,
}

/// Matches rows (tracks) to columns (detections) minimising
/// `Σ matched cost + (max_cost / 2) · (unmatched rows + unmatched columns)`.
///
/// A pair whose cost is not finite or exceeds `max_cost` is never matched
/// (gated out). A non-finite or negative `max_cost` is treated as "match every pair
/// whose cost is finite".
pub fn assign(cost: &DMatrix<f64>, max_cost: f64) -> Assignment {
    let (n, m) = cost.shape();
    let feasible = |c: f64| c.is_finite() && (!max_cost.is_finite() || c <= max_cost);
    let limit = if max_cost.is_finite() && max_cost >= 0.0 {
        max_cost
    } else {
        // Unbounded: any finite pair beats leaving both ends unmatched.
        let worst = cost
            .iter()
            .filter(|c| c.is_finite())
            .fold(0.0f64, |a, &c| a.max(c.abs()));
        2.0 * worst + 1.0
    };
    if n == 0 || m == 0 {
        return Assignment {
            matches: vec![],
            unmatched_tracks: (0..n).collect(),
            unmatched_dets: (0..m).collect(),
        };
    }
    // Gated-out pairs cost more than leaving both ends unmatched (`limit`).
    let forbidden = 2.0 * limit + 1.0;
    let size = n + m;
    let mut ext = vec![0.0; size * size];
    for i in 0..size {
        for j in 0..size {
            ext[i * size + j] = match (i < n, j < m) {
                (true, true) => {
                    let c = cost[(i, j)];
                    if feasible(c) {
                        c
                    } else {
                        forbidden
                    }
                }
                (true, false) | (false, true) => limit / 2.0,
                (false, false) => 0.0,
            };
        }
    }
    let row_of_col = hungarian(&ext, size);
    let mut matches = Vec::new();
    let mut track_done = vec![false; n];
    let mut det_done = vec![false; m];
    for (j, &i) in row_of_col.iter().enumerate().take(m) {
        if i < n && feasible(cost[(i, j)]) {
            matches.push((i, j));
            track_done[i] = true;
            det_done[j] = true;
        }
    }
    matches.sort_unstable();
    Assignment {
        matches,
        unmatched_tracks: (0..n).filter(|&i| !track_done[i]).collect(),
        unmatched_dets: (0..m).filter(|&j| !det_done[j]).collect(),
    }
}

/// Square Hungarian algorithm (e-maxx formulation). Returns, for each column, its row.
fn hungarian(a: &[f64], size: usize) -> Vec<usize> {
    let inf = f64::INFINITY;
    // 1-based arrays; p[j] = row matched to column j, 0 = none.
    let mut u = vec![0.0; size + 1];
    let mut v = vec![0.0; size + 1];
    let mut p = vec![0usize; size + 1];
    let mut way = vec![0usize; size + 1];
    for i in 1..=size {
        p[0] = i;
        let mut j0 = 0usize;
        let mut minv = vec![inf; size + 1];
        let mut used = vec![false; size + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = inf;
            let mut j1 = 0usize;
            for j in 1..=size {
                if !used[j] {
                    let cur = a[(i0 - 1) * size + (j - 1)] - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=size {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    (1..=size).map(|j| p[j] - 1).collect()
}

/// The objective [`assign`] minimises, for a given assignment (used by tests and
/// by callers that compare hypotheses).
pub fn assignment_cost(cost: &DMatrix<f64>, max_cost: f64, a: &Assignment) -> f64 {
    let matched: f64 = a.matches.iter().map(|&(i, j)| cost[(i, j)]).sum();
    matched + max_cost / 2.0 * (a.unmatched_tracks.len() + a.unmatched_dets.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn picks_the_cheaper_total_not_the_greedy_pair() {
        // Greedy would take (0,0)=1 and then (1,1)=10; optimal is 2+2.
        let c = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 10.0]);
        let a = assign(&c, 100.0);
        assert_eq!(a.matches, vec![(0, 1), (1, 0)]);
        assert!(a.unmatched_tracks.is_empty() && a.unmatched_dets.is_empty());
    }

    #[test]
    fn gated_and_too_costly_pairs_stay_unmatched() {
        let c = DMatrix::from_row_slice(2, 3, &[f64::INFINITY, 50.0, 3.0, 7.0, f64::NAN, 9.0]);
        let a = assign(&c, 20.0);
        assert_eq!(a.matches, vec![(0, 2), (1, 0)]);
        assert_eq!(a.unmatched_dets, vec![1]);
        let empty = assign(&DMatrix::zeros(0, 3), 1.0);
        assert_eq!(empty.unmatched_dets, vec![0, 1, 2]);
    }

    /// Brute force: the best objective over every partial matching.
    fn brute(c: &DMatrix<f64>, max_cost: f64) -> f64 {
        fn go(c: &DMatrix<f64>, max_cost: f64, i: usize, used: &mut Vec<bool>) -> f64 {
            if i == c.nrows() {
                let free_cols = used.iter().filter(|u| !**u).count();
                return max_cost / 2.0 * free_cols as f64;
            }
            let mut best = max_cost / 2.0 + go(c, max_cost, i + 1, used);
            for j in 0..c.ncols() {
                if !used[j] && c[(i, j)] <= max_cost {
                    used[j] = true;
                    best = best.min(c[(i, j)] + go(c, max_cost, i + 1, used));
                    used[j] = false;
                }
            }
            best
        }
        go(c, max_cost, 0, &mut vec![false; c.ncols()])
    }

    proptest! {
        #[test]
        fn assignment_is_optimal_against_brute_force(
            n in 0usize..5, m in 0usize..5,
            vals in proptest::collection::vec(0.0f64..100.0, 25),
            max_cost in 1.0f64..120.0,
        ) {
            let c = DMatrix::from_fn(n, m, |i, j| vals[i * 5 + j]);
            let a = assign(&c, max_cost);
            // A valid partial matching…
            let mut rows: Vec<usize> = a.matches.iter().map(|m| m.0).chain(a.unmatched_tracks.iter().copied()).collect();
            rows.sort_unstable();
            prop_assert_eq!(rows, (0..n).collect::<Vec<_>>());
            let mut cols: Vec<usize> = a.matches.iter().map(|m| m.1).chain(a.unmatched_dets.iter().copied()).collect();
            cols.sort_unstable();
            prop_assert_eq!(cols, (0..m).collect::<Vec<_>>());
            for &(i, j) in &a.matches {
                prop_assert!(c[(i, j)] <= max_cost);
            }
            // …with the optimal objective.
            let got = assignment_cost(&c, max_cost, &a);
            let want = brute(&c, max_cost);
            prop_assert!((got - want).abs() < 1e-6, "got {got}, brute force {want}");
        }
    }
}
