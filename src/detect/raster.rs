//! Pixel helpers on row-major grids: a convex table's span on a row, bilinear
//! reads, growing bits by a pixel or a mask by a square, 8-connected blob
//! labelling, and edge pixels bucketed for neighbourhood queries.

use crate::geometry::Table;

/// Edge pixels `(u, v, nx, ny)` bucketed in square cells, for neighbourhood queries.
pub(super) struct EdgeBuckets<'a> {
    edges: &'a [(usize, usize, f32, f32)],
    cell: usize,
    cols: usize,
    rows: usize,
    /// Edge indices sorted by cell; cell `k` holds `order[start[k]..start[k + 1]]`.
    order: Vec<u32>,
    start: Vec<u32>,
}

impl<'a> EdgeBuckets<'a> {
    pub(super) fn new(
        edges: &'a [(usize, usize, f32, f32)],
        w: usize,
        h: usize,
        cell: usize,
    ) -> Self {
        let cell = cell.max(1);
        let (cols, rows) = (w / cell + 1, h / cell + 1);
        let cell_of = |e: &(usize, usize, f32, f32)| (e.1 / cell) * cols + e.0 / cell;
        let mut start = vec![0u32; cols * rows + 1];
        for e in edges {
            start[cell_of(e) + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut fill = start.clone();
        let mut order = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            let k = cell_of(e);
            order[fill[k] as usize] = i as u32;
            fill[k] += 1;
        }
        EdgeBuckets {
            edges,
            cell,
            cols,
            rows,
            order,
            start,
        }
    }

    /// The edges within `radius` pixels (in each axis) of `(u, v)`, into `out`.
    pub(super) fn near(
        &self,
        u: usize,
        v: usize,
        radius: f64,
        out: &mut Vec<(usize, usize, f32, f32)>,
    ) {
        out.clear();
        let r = radius.ceil() as usize;
        let (c0, c1) = (u.saturating_sub(r) / self.cell, (u + r) / self.cell);
        let (r0, r1) = (v.saturating_sub(r) / self.cell, (v + r) / self.cell);
        for row in r0..=r1.min(self.rows - 1) {
            for col in c0..=c1.min(self.cols - 1) {
                let k = row * self.cols + col;
                for &i in &self.order[self.start[k] as usize..self.start[k + 1] as usize] {
                    let e = self.edges[i as usize];
                    if e.0.abs_diff(u) <= r && e.1.abs_diff(v) <= r {
                        out.push(e);
                    }
                }
            }
        }
    }
}

/// Where the line at height `y` crosses a convex table: `(x_min, x_max)`, or `None`.
pub(super) fn row_span(table: &Table, y: f64) -> Option<(f64, f64)> {
    let corners = table.corners();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, a) in corners.iter().enumerate() {
        let b = corners[(i + 1) % corners.len()];
        let (ya, yb) = (a.y.min(b.y), a.y.max(b.y));
        if y < ya || y > yb {
            continue;
        }
        if (b.y - a.y).abs() < 1e-12 {
            lo = lo.min(a.x.min(b.x));
            hi = hi.max(a.x.max(b.x));
        } else {
            let x = a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x);
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }
    (lo <= hi).then_some((lo, hi))
}

pub(super) fn bilinear(img: &[f32], w: usize, h: usize, u: f64, v: f64) -> f32 {
    // Written so that NaN fails the test too.
    if !(u >= 0.0 && v >= 0.0 && u < (w - 1) as f64 && v < (h - 1) as f64) {
        return 0.0;
    }
    // Non-negative here, so truncation is the floor; in range, so through i32 the
    // conversion is one instruction.
    let (u0, v0) = (u as i32 as usize, v as i32 as usize);
    let (fu, fv) = ((u - u0 as f64) as f32, (v - v0 as f64) as f32);
    let i = v0 * w + u0;
    let top = img[i] * (1.0 - fu) + img[i + 1] * fu;
    let bottom = img[i + w] * (1.0 - fu) + img[i + w + 1] * fu;
    top * (1.0 - fv) + bottom * fv
}

/// Each pixel's bits ORed with its 8 neighbours' (a 3x3 dilation of every bit).
pub(super) fn grow_bits(bits: &mut [u8], tmp: &mut Vec<u8>, w: usize, h: usize) {
    if w == 0 || h == 0 {
        return;
    }
    tmp.clear();
    tmp.resize(w * h, 0);
    for v in 0..h {
        let row = &bits[v * w..(v + 1) * w];
        let out = &mut tmp[v * w..(v + 1) * w];
        for u in 0..w {
            let mut b = row[u];
            if u > 0 {
                b |= row[u - 1];
            }
            if u + 1 < w {
                b |= row[u + 1];
            }
            out[u] = b;
        }
    }
    for v in 0..h {
        for u in 0..w {
            let mut b = tmp[v * w + u];
            if v > 0 {
                b |= tmp[(v - 1) * w + u];
            }
            if v + 1 < h {
                b |= tmp[(v + 1) * w + u];
            }
            bits[v * w + u] = b;
        }
    }
}

/// Marks in `out` every pixel within `r` pixels (in a square) of one marked in
/// `marked`: a row pass and a column pass of running counts, linear in the grid
/// whatever `r`.
pub(super) fn grow_square(
    marked: &[bool],
    w: usize,
    h: usize,
    r: usize,
    tmp: &mut Vec<bool>,
    out: &mut Vec<bool>,
) {
    let n = w * h;
    tmp.clear();
    tmp.resize(n, false);
    out.clear();
    out.resize(n, false);
    if n == 0 || marked.len() < n {
        return;
    }
    // One line of `len` cells `step` apart from `first`: each cell marked when a
    // marked cell of `from` lies within `r` along the line.
    let pass = |from: &[bool], to: &mut [bool], first: usize, step: usize, len: usize| {
        let mut count = 0usize;
        // Cells first..first+r, counted before the first output.
        for k in 0..r.min(len) {
            count += usize::from(from[first + k * step]);
        }
        for k in 0..len {
            if k + r < len {
                count += usize::from(from[first + (k + r) * step]);
            }
            if k > r {
                count -= usize::from(from[first + (k - r - 1) * step]);
            }
            to[first + k * step] = count > 0;
        }
    };
    for v in 0..h {
        pass(marked, tmp, v * w, 1, w);
    }
    for u in 0..w {
        pass(tmp, out, u, w, h);
    }
}

/// A connected blob of pixels above a threshold.
#[derive(Debug, Clone)]
pub(super) struct Blob {
    pub(super) label: u32,
    pub(super) count: usize,
    pub(super) cx: f64,
    pub(super) cy: f64,
    pub(super) u0: usize,
    pub(super) u1: usize,
    pub(super) v0: usize,
    pub(super) v1: usize,
}

/// 8-connected labelling of `img > threshold`; labels are 1-based (0 = background).
pub(super) fn label_blobs(
    img: &[f32],
    w: usize,
    h: usize,
    threshold: f32,
    labels: &mut Vec<u32>,
) -> Vec<Blob> {
    labels.clear();
    labels.resize(w * h, 0);
    let mut blobs = Vec::new();
    let mut stack = Vec::new();
    // Most pixels are background: whole runs of them are passed over at once (a
    // branch-free test per run), and only a run holding a candidate is walked.
    const RUN: usize = 32;
    // Not at most the threshold (NaN included, as the test used to read).
    let candidate = |x: f32| x > threshold || x.is_nan();
    let candidates = (0..w * h).step_by(RUN).flat_map(|run| {
        let end = (run + RUN).min(w * h);
        let any = img[run..end]
            .iter()
            .fold(false, |any, &x| any | candidate(x));
        (if any { run..end } else { run..run }).filter(|&i| candidate(img[i]))
    });
    for start in candidates {
        if labels[start] != 0 {
            continue;
        }
        let label = blobs.len() as u32 + 1;
        let mut b = Blob {
            label,
            count: 0,
            cx: 0.0,
            cy: 0.0,
            u0: usize::MAX,
            u1: 0,
            v0: usize::MAX,
            v1: 0,
        };
        labels[start] = label;
        // Pixels as (u, v): no division per pixel.
        stack.push((start % w, start / w));
        while let Some((u, v)) = stack.pop() {
            b.count += 1;
            b.cx += u as f64;
            b.cy += v as f64;
            b.u0 = b.u0.min(u);
            b.u1 = b.u1.max(u);
            b.v0 = b.v0.min(v);
            b.v1 = b.v1.max(v);
            for vv in v.saturating_sub(1)..(v + 2).min(h) {
                for uu in u.saturating_sub(1)..(u + 2).min(w) {
                    let j = vv * w + uu;
                    if labels[j] == 0 && img[j] > threshold {
                        labels[j] = label;
                        stack.push((uu, vv));
                    }
                }
            }
        }
        b.cx /= b.count as f64;
        b.cy /= b.count as f64;
        blobs.push(b);
    }
    blobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The running counts mark exactly the pixels a brute-force square search does.
        #[test]
        fn grow_square_marks_what_lies_within_the_square(
            w in 1usize..14,
            h in 1usize..14,
            r in 0usize..6,
            seeds in proptest::collection::vec(0usize..196, 0..6),
        ) {
            let mut marked = vec![false; w * h];
            for s in seeds {
                marked[s % (w * h)] = true;
            }
            let (mut tmp, mut out) = (Vec::new(), Vec::new());
            grow_square(&marked, w, h, r, &mut tmp, &mut out);
            for v in 0..h {
                for u in 0..w {
                    let near = (0..h).any(|vv| {
                        (0..w).any(|uu| {
                            marked[vv * w + uu] && u.abs_diff(uu) <= r && v.abs_diff(vv) <= r
                        })
                    });
                    prop_assert_eq!(out[v * w + u], near, "pixel ({}, {})", u, v);
                }
            }
        }
    }
}
