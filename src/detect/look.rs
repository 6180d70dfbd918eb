//! Colour, free of brightness and with it: each pixel's chromaticity and grey, a
//! surface's [`Look`] (chroma and mean grey) and how far two looks are apart, and
//! the looks of the table, the floor and a disc of a view.

use super::{Detector, TopGrid};

/// The colour of a surface: chroma and mean grey.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Look {
    pub(super) chroma: [f64; 2],
    pub(super) grey: f64,
}

impl Look {
    /// How different two looks are: chroma distance, and brightness as a ratio, in
    /// units of "clearly different".
    pub(super) fn distance(&self, other: &Look, chroma_unit: f64) -> f64 {
        let dc = dist2(self.chroma, other.chroma).sqrt() / chroma_unit;
        let ratio = (self.grey.max(1.0) / other.grey.max(1.0)).ln().abs() / 0.15;
        dc.max(ratio)
    }
}

/// The median of a sample (reordered in place), `None` when it is empty.
pub(crate) fn median_of(v: &mut [f32]) -> Option<f32> {
    if v.is_empty() {
        return None;
    }
    let mid = v.len() / 2;
    Some(*v.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1)
}

/// Mean grey below which a pixel shows no colour: one level in a channel moves its
/// chroma by 1/(3 * 8), most of a player's `chroma_off_line`. The black the top view
/// shows where the camera does not see (beyond the image's border) lies here too.
pub(super) const DARKEST_COLOURED: f32 = 8.0;

/// Squared distance between two chroma points (`hypot` is needlessly slow per pixel).
pub(super) fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])
}

/// Chromaticity (r, g) / (r + g + b), free of brightness.
pub(super) fn chroma_of(rgb: [f64; 3]) -> [f64; 2] {
    let s = (rgb[0] + rgb[1] + rgb[2]).max(1.0);
    [rgb[0] / s, rgb[1] / s]
}

/// Each pixel's chromaticity (r, g) / (r + g + b) and mean grey; red is byte `R`
/// and blue byte `B` of each three.
pub(super) fn chroma_and_grey<const R: usize, const B: usize>(
    pixels: &[u8],
    chroma: &mut [[f32; 2]],
    grey: &mut [f32],
) {
    for (p, (c, y)) in pixels
        .chunks_exact(3)
        .zip(chroma.iter_mut().zip(grey.iter_mut()))
    {
        let (r, gg, b) = (p[R] as f32, p[1] as f32, p[B] as f32);
        let s = (r + gg + b).max(1.0);
        *c = [r / s, gg / s];
        *y = s / 3.0;
    }
}

impl Detector {
    /// The median look of the table (or of the floor seen around it; black pixels
    /// outside the camera's view left out), from a sparse sample.
    pub(super) fn surface_look(&self, g: &TopGrid, table: bool) -> Look {
        let (mut r, mut gg, mut grey) = (Vec::new(), Vec::new(), Vec::new());
        for v in (0..g.height).step_by(4) {
            for u in (0..g.width).step_by(4) {
                let i = v * g.width + u;
                if self.on_table[i] == table && self.grey[i] > DARKEST_COLOURED {
                    r.push(self.chroma[i][0]);
                    gg.push(self.chroma[i][1]);
                    grey.push(self.grey[i]);
                }
            }
        }
        let median = |v: &mut Vec<f32>, default: f64| median_of(v).map_or(default, f64::from);
        Look {
            chroma: [median(&mut r, 1.0 / 3.0), median(&mut gg, 1.0 / 3.0)],
            grey: median(&mut grey, 128.0),
        }
    }

    /// The mean look of the pixels within `r_px` of (cu, cv).
    pub(super) fn disc_look(&self, g: &TopGrid, cu: f64, cv: f64, r_px: f64) -> Option<Look> {
        self.disc_look_where(g, cu, cv, r_px, |_| true)
    }

    /// The mean look of the pixels within `r_px` of (cu, cv) that `keep` (given the
    /// pixel's index) keeps.
    pub(super) fn disc_look_where(
        &self,
        g: &TopGrid,
        cu: f64,
        cv: f64,
        r_px: f64,
        keep: impl Fn(usize) -> bool,
    ) -> Option<Look> {
        let (mut sr, mut sg, mut sy, mut n) = (0.0, 0.0, 0.0, 0.0);
        let k = r_px.ceil() as i64;
        for dv in -k..=k {
            for du in -k..=k {
                if ((du * du + dv * dv) as f64) > r_px * r_px {
                    continue;
                }
                let (u, v) = (cu.round() as i64 + du, cv.round() as i64 + dv);
                if u < 0 || v < 0 || u as usize >= g.width || v as usize >= g.height {
                    continue;
                }
                let i = v as usize * g.width + u as usize;
                if !keep(i) {
                    continue;
                }
                sr += self.chroma[i][0] as f64;
                sg += self.chroma[i][1] as f64;
                sy += self.grey[i] as f64;
                n += 1.0;
            }
        }
        (n > 0.0).then(|| Look {
            chroma: [sr / n, sg / n],
            grey: sy / n,
        })
    }
}
