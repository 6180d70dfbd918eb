//! A bumped camera (issue 15 item 5, issue 18 item 6): the table's outline in a
//! later frame, looked for only in a band around where a calibration puts it, then
//! (1) how far the table has moved in the picture, in millimetres at the table's
//! edges ([`check_bump`]: still, moved or unknown, with how much of the edges was
//! seen), and (2) the rigid camera re-fitted to that outline with the calibration's
//! intrinsics and table ([`refit_table`], judged as `calibrate table` judges its
//! fit). [`recalibrate`] is the two in the order `live` needs them.
//!
//! Pure: the frame comes as packed 8-bit BGR rows ([`BgrFrame`]); no OpenCV. The
//! edge readings follow `vision::calibrate`'s (the outer boundary as the steepest
//! rise of a colour signal that is zero on the table's colour; where a side face is
//! in view also the top's own edge, where its colour last leaves the top's), so an
//! unmoved camera reads the outline the calibration was made from.
//! Uses: calibration, geometry.

use super::{
    corner_offsets_mm, edge_uncertainty_mm, fit_rigid_pose, judge_table_fit, sides_showing_face,
    CameraIntrinsics, Homography, Line2, PoseFit, PoseObservations, RigidPose, TableCalibration,
    TableDoubt, TableFile,
};
use nalgebra::{Point2, Vector2};

/// A frame as packed 8-bit BGR rows (OpenCV's `CV_8UC3` layout), borrowed.
#[derive(Debug, Clone, Copy)]
pub struct BgrFrame<'a> {
    width: usize,
    height: usize,
    stride: usize,
    data: &'a [u8],
}

impl<'a> BgrFrame<'a> {
    /// `stride`: bytes from one row's start to the next (at least `3 * width`).
    pub fn new(
        width: usize,
        height: usize,
        stride: usize,
        data: &'a [u8],
    ) -> Result<BgrFrame<'a>, RefitError> {
        let enough = stride >= 3 * width
            && width >= 2
            && height >= 2
            && data.len() >= stride * (height - 1) + 3 * width;
        if !enough {
            return Err(RefitError::BadFrame(format!(
                "{} bytes with a row stride of {stride} cannot hold a {width}x{height} BGR frame",
                data.len()
            )));
        }
        Ok(BgrFrame {
            width,
            height,
            stride,
            data,
        })
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    /// The bilinear colour at a (distorted) pixel; `None` outside the frame.
    fn sample(&self, p: Point2<f64>) -> Option<[f64; 3]> {
        let (w, h) = (self.width as f64, self.height as f64);
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x <= w - 1.0 && p.y <= h - 1.0) {
            return None;
        }
        let (x0, y0) = (p.x.floor() as usize, p.y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(self.width - 1), (y0 + 1).min(self.height - 1));
        let (fx, fy) = (p.x - x0 as f64, p.y - y0 as f64);
        let at = |x: usize, y: usize, c: usize| f64::from(self.data[y * self.stride + 3 * x + c]);
        Some([0, 1, 2].map(|c| {
            let top = at(x0, y0, c) * (1.0 - fx) + at(x1, y0, c) * fx;
            let bottom = at(x0, y1, c) * (1.0 - fx) + at(x1, y1, c) * fx;
            top * (1.0 - fy) + bottom * fy
        }))
    }
}

/// Why the outline could not be measured or re-fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefitError {
    #[error("the frame: {0}")]
    BadFrame(String),
    #[error("the frame is {got_w}x{got_h}, the calibration's camera {cam_w}x{cam_h}: the re-fit needs a frame of the calibrated camera at its resolution")]
    FrameSize {
        got_w: usize,
        got_h: usize,
        cam_w: u32,
        cam_h: u32,
    },
    #[error("the calibration's table: {0}")]
    BadCalibration(String),
    #[error("the camera has moved, but the table's edges cannot be found again: {0}; calibrate the table again (calibrate table) from a frame of the empty table")]
    NotFound(String),
    /// The re-fit disagrees with itself as `calibrate table` refuses (`TableDoubt`).
    #[error("the camera has moved, and its re-fit is refused: {0}")]
    Disagrees(Box<TableDoubt>),
}

/// Where and how densely to look for the outline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlineSearch {
    /// How far either side of the calibrated outline its edges are looked for
    /// (undistorted px). A camera turned by 1° moves the outline about `f / 57` px
    /// (16 px at a 70° lens on 1280 px); further moves are not followed.
    pub band_px: f64,
    /// Spacing of the measuring stations along each side (px).
    pub station_px: f64,
}

impl OutlineSearch {
    /// For the bump check every few seconds: a station every 3 px.
    pub const CHECK: OutlineSearch = OutlineSearch {
        band_px: 40.0,
        station_px: 3.0,
    };
    /// For the re-fit: every pixel, as `calibrate table` measures.
    pub const REFIT: OutlineSearch = OutlineSearch {
        band_px: 40.0,
        station_px: 1.0,
    };
}

/// The table outline moved by more than this at its edges (mm) means a bumped
/// camera (issue 18, item 6).
pub const MOVED_MM: f64 = 3.0;
/// The least share of the stations (over all sides) whose edge agrees with its
/// side's line for any verdict: below it, "unknown".
pub const MIN_SEEN_SHARE: f64 = 0.25;
/// A side counts as seen when this share of its stations agree; the bump check
/// needs three seen sides, the re-fit all four.
pub const MIN_SIDE_SHARE: f64 = 0.2;
/// The most the fitted outline may be uncertain (3 sigma, mm at the edges) for a
/// verdict: a few short stretches of edge leave the pose loose, and a loose pose
/// must not be read as a move.
pub const MAX_SHIFT_DOUBT_MM: f64 = 1.0;
/// The most a rigid table may leave over in the edges it is fitted to (RMS, px):
/// more means the edge points are not the table's (a wrong boundary, a warped view).
pub const MAX_EDGE_RMS_PX: f64 = 1.5;

/// Corners are rounded by blur: each side is measured clear of them, from this
/// fraction of its length (and at least `CORNER_SKIP_PX`) in; as `calibrate table`.
const CORNER_SKIP_FRACTION: f64 = 0.05;
const CORNER_SKIP_PX: f64 = 12.0;
/// The thickest table top looked for (mm), as `vision::calibrate::MAX_TOP_THICKNESS_MM`:
/// how far beyond the top's edge a side face may reach.
const MAX_TOP_THICKNESS_MM: f64 = 60.0;
/// The coarse profile's step (px): finds the step to within a pixel.
const COARSE_STEP_PX: f64 = 0.5;
/// The fine profile's step and reach either side of the coarse step (px).
const FINE_STEP_PX: f64 = 0.25;
const FINE_REACH_PX: f64 = 4.0;
/// The colours of the table and of what lies beyond it are read this far inside and
/// outside the band (px).
const REFERENCE_PX: f64 = 10.0;
/// The second signal's edge is taken for a side when this many times as many of its
/// points agree with one line as the first's.
const CLEARLY_MORE: f64 = 1.25;
/// An edge point agrees with its side's line within this (px).
const AGREE_PX: f64 = 1.0;
/// A step counts when it is at least this share of the table-to-floor contrast:
/// texture, a seam or an item's shading is weaker.
const MIN_STEP_SHARE: f64 = 0.4;
/// The least colour distance (BGR units) that counts as off the top's colour, as
/// `calibrate table`: sensor noise alone reaches a few units.
const MIN_OFF_TOP: f64 = 10.0;
/// Edge samples share blur over about this many stations a pixel apart: the fit's
/// covariance is widened by it (divided by the station spacing), as `calibrate table`.
const EDGE_SAMPLE_CORRELATION: f64 = 3.0;

/// One side's evidence: how many stations were measured and which edge points agree.
#[derive(Debug, Clone, PartialEq)]
pub struct SideSeen {
    /// Stations along the side (clear of its corners) whose profile lies inside the frame.
    pub stations: usize,
    /// Edge points on the side's line (undistorted px).
    pub points: Vec<Point2<f64>>,
    /// Whether the camera sees this side's face, and the top's own edge was taken.
    pub face_in_view: bool,
}

impl SideSeen {
    /// The share of the side's stations whose edge agrees with its line.
    pub fn share(&self) -> f64 {
        if self.stations == 0 {
            0.0
        } else {
            self.points.len() as f64 / self.stations as f64
        }
    }
}

/// What the frame says about the camera.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BumpVerdict {
    /// The outline is within [`MOVED_MM`] of the calibration's.
    Still,
    /// The outline has moved by more than [`MOVED_MM`]: re-fit or recalibrate.
    Moved,
    /// Too little of the edges was seen, or they do not pin the outline down.
    Unknown,
}

/// The bump check's answer.
#[derive(Debug, Clone)]
pub struct BumpCheck {
    pub verdict: BumpVerdict,
    /// How far the outline seen lies from the calibration's: the worst over the
    /// table's edges (mm, on the table as the calibration maps it); `None` when no
    /// pose could be fitted.
    pub shift_mm: Option<f64>,
    /// The same at each table corner (mm).
    pub corner_shift_mm: Vec<f64>,
    /// How far that figure may be off (3 sigma, mm) from the edges' scatter.
    pub doubt_mm: Option<f64>,
    /// Per side (corner `k` to `k + 1`), what was seen.
    pub sides: Vec<SideSeen>,
    /// RMS (px) of the edge points from the fitted outline.
    pub edge_rms_px: Option<f64>,
    /// The rigid pose fitted to the outline seen.
    pub pose: Option<RigidPose>,
    /// Why the verdict is unknown (one clause), when it is.
    pub unknown_because: Option<String>,
}

impl BumpCheck {
    /// The share of all stations whose edge agrees with its side.
    pub fn seen_share(&self) -> f64 {
        let stations: usize = self.sides.iter().map(|s| s.stations).sum();
        let seen: usize = self.sides.iter().map(|s| s.points.len()).sum();
        if stations == 0 {
            0.0
        } else {
            seen as f64 / stations as f64
        }
    }

    /// One line for a person: the verdict, the figure, how much was seen.
    pub fn summary(&self) -> String {
        let seen: Vec<String> = self
            .sides
            .iter()
            .map(|s| format!("{:.0}", 100.0 * s.share()))
            .collect();
        let seen = format!(
            "{:.0} % of the table's edges seen (per side {} %)",
            100.0 * self.seen_share(),
            seen.join(", ")
        );
        let figure = match (self.shift_mm, self.doubt_mm) {
            (Some(s), Some(d)) => format!("{s:.1} mm ± {d:.1} at the edges"),
            (Some(s), None) => format!("{s:.1} mm at the edges"),
            _ => "no outline fitted".to_string(),
        };
        match self.verdict {
            BumpVerdict::Still => format!(
                "the table is where the calibration puts it ({figure}, {MOVED_MM} mm allowed; {seen})"
            ),
            BumpVerdict::Moved => format!(
                "the camera has moved: the table's outline is {figure} from the calibration's (over {MOVED_MM} mm; {seen})"
            ),
            BumpVerdict::Unknown => format!(
                "cannot tell whether the camera has moved: {} ({figure}; {seen})",
                self.unknown_because.as_deref().unwrap_or("too little seen")
            ),
        }
    }
}

/// A re-fitted table calibration.
#[derive(Debug, Clone)]
pub struct Refit {
    /// The new table.json's content: the old camera and table, the new pose's
    /// homography and image corners.
    pub file: TableFile,
    /// How far the new outline lies from the old calibration's (as [`check_bump`]).
    pub moved: BumpCheck,
    /// Per corner: how far the seen corner (where the fitted side lines cross) lies
    /// from the rigid camera's (mm).
    pub corner_offsets_mm: Vec<f64>,
    /// The table's W/H as the seen corners give it.
    pub measured_aspect: f64,
    /// Why the re-fit disagrees with itself, as `calibrate table` would refuse it.
    pub doubt: Option<TableDoubt>,
}

/// What [`recalibrate`] did.
#[derive(Debug, Clone)]
pub enum Recalibration {
    /// The table is where the calibration puts it: keep it.
    Unchanged(BumpCheck),
    /// Too little of the table's edges was seen to tell: keep the calibration, look
    /// again later (a hand or items over the edges).
    Unknown(BumpCheck),
    /// The camera moved and the table was re-fitted: use `file`.
    Refitted(Box<Refit>),
}

/// A side of the calibrated outline, in undistorted px.
struct Side {
    a: Point2<f64>,
    dir: Vector2<f64>,
    len: f64,
    /// Outward.
    normal: Vector2<f64>,
    /// How far (px, outward) a side face up to `MAX_TOP_THICKNESS_MM` tall reaches
    /// beyond the top's edge; 0 where no face is in view.
    face_px: f64,
}

impl Side {
    fn stations(&self, step: f64) -> Vec<Point2<f64>> {
        let skip = (CORNER_SKIP_FRACTION * self.len).max(CORNER_SKIP_PX);
        let span = self.len - 2.0 * skip;
        if span <= 0.0 {
            return vec![];
        }
        let n = (span / step).floor() as usize + 1;
        (0..n)
            .map(|i| self.a + self.dir * (skip + i as f64 * step))
            .collect()
    }
}

/// The colour signal whose steepest rise is the table's outer boundary, as
/// `calibrate table` chooses it: the part of the colour across the table's own
/// colour direction (zero on the table at any brightness, so a darker rim or a
/// shadow does not move the edge) when the table and the floor differ in hue,
/// else the colour's distance from the table's.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Hue { axis: [f64; 3] },
    Distance { table: [f64; 3] },
}

impl Signal {
    fn of(&self, c: [f64; 3]) -> f64 {
        match self {
            Signal::Hue { axis } => c[0] * axis[0] + c[1] * axis[1] + c[2] * axis[2],
            Signal::Distance { table } => dist3(c, *table),
        }
    }
}

/// The blur (px, one sigma) the outer boundary's profiles are smoothed with along
/// the normal, as `calibrate table` smooths its frame (a 3x3 Gaussian of sigma 0.8):
/// a bevel's highlight or a rim's narrow dark line must not split the edge's rise
/// into two, each taken in turn.
const SMOOTH_PX: f64 = 0.8;

/// `profile` (samples `step` px apart) smoothed with a Gaussian of [`SMOOTH_PX`],
/// normalised where it runs off the ends.
fn smooth(profile: &[f64], step: f64) -> Vec<f64> {
    let sigma = SMOOTH_PX / step;
    let reach = (3.0 * sigma).ceil() as isize;
    let weights: Vec<f64> = (-reach..=reach)
        .map(|k| (-0.5 * (k as f64 / sigma).powi(2)).exp())
        .collect();
    let n = profile.len() as isize;
    (0..n)
        .map(|i| {
            let (mut sum, mut norm) = (0.0, 0.0);
            for (w, k) in weights.iter().zip(-reach..=reach) {
                let j = i + k;
                if (0..n).contains(&j) {
                    sum += w * profile[j as usize];
                    norm += w;
                }
            }
            sum / norm
        })
        .collect()
}

fn dist3(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn median3(v: &[[f64; 3]]) -> [f64; 3] {
    [0, 1, 2].map(|c| median(v.iter().map(|p| p[c]).collect()))
}

/// Everything needed to measure the outline in one frame.
struct Measurer<'f> {
    frame: BgrFrame<'f>,
    camera: CameraIntrinsics,
    band: f64,
}

impl Measurer<'_> {
    /// The colour at undistorted pixel `q`.
    fn colour(&self, q: Point2<f64>) -> Option<[f64; 3]> {
        self.frame.sample(self.camera.distort_pixel(q))
    }

    /// The signals from colours read inside and outside the band, each with the
    /// contrast (signal units) between the table and what lies beyond it, the one
    /// that separates them better (in units of their spread) first.
    fn signals(&self, sides: &[Side], step: f64) -> Vec<(Signal, f64)> {
        let (mut inside, mut outside) = (vec![], vec![]);
        for side in sides {
            for q in side.stations(step.max(4.0)) {
                let inner = q - side.normal * (self.band + REFERENCE_PX);
                let outer = q + side.normal * (self.band + side.face_px + REFERENCE_PX);
                if let (Some(i), Some(o)) = (self.colour(inner), self.colour(outer)) {
                    inside.push(i);
                    outside.push(o);
                }
            }
        }
        if inside.len() < 8 {
            return vec![];
        }
        let (table, floor) = (median3(&inside), median3(&outside));
        let spread = |v: &[f64], m: f64| median(v.iter().map(|x| (x - m).abs()).collect());
        let score = |s: &Signal| {
            let ti: Vec<f64> = inside.iter().map(|&p| s.of(p)).collect();
            let fo: Vec<f64> = outside.iter().map(|&p| s.of(p)).collect();
            let (mt, mf) = (median(ti.clone()), median(fo.clone()));
            (
                mf - mt,
                (mf - mt) / (spread(&ti, mt) + spread(&fo, mf) + 1e-9),
            )
        };
        let mut out = vec![];
        let distance = Signal::Distance { table };
        let (contrast, d_score) = score(&distance);
        out.push((distance, contrast, d_score));
        let t_norm = dist3(table, [0.0; 3]).max(1e-9);
        let t_hat = table.map(|v| v / t_norm);
        let along = floor[0] * t_hat[0] + floor[1] * t_hat[1] + floor[2] * t_hat[2];
        let perp = [0, 1, 2].map(|c| floor[c] - along * t_hat[c]);
        let perp_norm = dist3(perp, [0.0; 3]);
        if perp_norm > 1e-6 {
            let hue = Signal::Hue {
                axis: perp.map(|v| v / perp_norm),
            };
            let (contrast, h_score) = score(&hue);
            // On a tie the hue: a darker rim or a shadow does not move its edge.
            out.push((hue, contrast, h_score + 1e-9));
        }
        out.retain(|s| s.1 > 0.0 && s.2.is_finite());
        out.sort_by(|a, b| b.2.total_cmp(&a.2));
        out.into_iter().map(|(s, c, _)| (s, c)).collect()
    }

    /// The outer boundary at station `q`: the steepest rise of `signal` across
    /// `[from, to]` (px along the normal), found coarsely, then to a fraction of a
    /// pixel (the gradient's centroid on a finer profile). With the step's height.
    fn outer_edge(
        &self,
        side: &Side,
        q: Point2<f64>,
        signal: Signal,
        from: f64,
        to: f64,
    ) -> Option<(f64, f64)> {
        let n = ((to - from) / COARSE_STEP_PX) as usize + 1;
        let coarse: Vec<f64> = (0..n)
            .map(|i| {
                self.colour(q + side.normal * (from + i as f64 * COARSE_STEP_PX))
                    .map(|c| signal.of(c))
            })
            .collect::<Option<Vec<f64>>>()?;
        let coarse = smooth(&coarse, COARSE_STEP_PX);
        // The rise over two pixels, so one noisy sample does not win.
        let span = (2.0 / COARSE_STEP_PX) as usize;
        let (i, _) = (0..n.checked_sub(span)?)
            .map(|i| (i, coarse[i + span] - coarse[i]))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let centre = from + (i as f64 + span as f64 / 2.0) * COARSE_STEP_PX;
        let start = centre - FINE_REACH_PX;
        let m = (2.0 * FINE_REACH_PX / FINE_STEP_PX) as usize + 1;
        let fine: Vec<f64> = (0..m)
            .map(|j| {
                self.colour(q + side.normal * (start + j as f64 * FINE_STEP_PX))
                    .map(|c| signal.of(c))
            })
            .collect::<Option<Vec<f64>>>()?;
        let fine = smooth(&fine, FINE_STEP_PX);
        let grad: Vec<f64> = (1..m - 1).map(|j| fine[j + 1] - fine[j - 1]).collect();
        let (jmax, &gmax) = grad.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
        if gmax <= 0.0 || jmax == 0 || jmax + 1 >= grad.len() {
            return None;
        }
        // The centroid of the rise around its peak, out to where it falls to a
        // tenth (a second edge close by must not pull it), at most 2.5 px each way.
        let half = (2.5 / FINE_STEP_PX) as usize;
        let floor = 0.1 * gmax;
        let (mut lo, mut hi) = (jmax, jmax);
        while lo > 0 && jmax - lo < half && grad[lo - 1] > floor {
            lo -= 1;
        }
        while hi + 1 < grad.len() && hi - jmax < half && grad[hi + 1] > floor {
            hi += 1;
        }
        let (mut sg, mut sgs) = (0.0, 0.0);
        for (j, &g) in grad.iter().enumerate().take(hi + 1).skip(lo) {
            sg += g;
            sgs += g * (start + (j + 1) as f64 * FINE_STEP_PX);
        }
        // The step's height: the profile's levels either side of it.
        let height = fine[(hi + 2).min(m - 1)] - fine[lo];
        Some((sgs / sg, height))
    }

    /// The top's own edge at station `q` where a side face is in view, inside the
    /// outer boundary `outer` (px along the normal): the colour's distance from the
    /// top's (`top`) followed outward from `reach` inside it, and the top ends where
    /// it last rises above `off_top` (grain, seams, items and the rim's shading come
    /// back to the top's colour, the face does not), at the midpoint of that step.
    fn top_edge(
        &self,
        side: &Side,
        q: Point2<f64>,
        top: [f64; 3],
        off_top: f64,
        outer: f64,
    ) -> Option<f64> {
        let from = outer - side.face_px - 2.0;
        let to = outer + 1.0;
        let n = ((to - from) / FINE_STEP_PX) as usize + 1;
        let d: Vec<f64> = (0..n)
            .map(|i| {
                self.colour(q + side.normal * (from + i as f64 * FINE_STEP_PX))
                    .map(|c| dist3(c, top))
            })
            .collect::<Option<_>>()?;
        let below = d.iter().rposition(|&v| v <= off_top)?;
        let last = below + 1;
        if last + 1 >= n {
            return None;
        }
        // The steepest rise from a pixel before the crossing to 3 px after it (a
        // darker rim may cross first; its step to the face follows).
        let px = |v: f64| (v / FINE_STEP_PX).round() as usize;
        let lo = last.saturating_sub(px(1.0)).max(1);
        let hi = (last + px(3.0)).min(n - 2);
        let (imax, _) = (lo..=hi)
            .map(|i| (i, d[i + 1] - d[i - 1]))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        // Halfway between the levels 1 px either side.
        let (a, b) = (imax.checked_sub(px(1.0))?, (imax + px(1.0)).min(n - 1));
        let level = 0.5 * (d[a] + d[b]);
        let i = (a..b).find(|&i| d[i] <= level && d[i + 1] > level)?;
        let x = i as f64 + (level - d[i]) / (d[i + 1] - d[i]);
        Some(from + x * FINE_STEP_PX)
    }
}

/// Finds the line most edge points agree with (within [`AGREE_PX`]): pairs of points
/// tried in a fixed order, the best refitted by least squares on its agreeing
/// points, twice. Returns the agreeing points.
fn consensus(points: &[Point2<f64>]) -> Vec<Point2<f64>> {
    let n = points.len();
    if n < 2 {
        return vec![];
    }
    let agreeing = |line: &Line2| -> Vec<Point2<f64>> {
        points
            .iter()
            .copied()
            .filter(|&p| line.distance(p).abs() <= AGREE_PX)
            .collect()
    };
    let mut best: Vec<Point2<f64>> = vec![];
    // A fixed pseudo-random sequence: the same frame gives the same answer.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ n as u64;
    let mut next = |m: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % m as u64) as usize
    };
    for _ in 0..200 {
        let (i, j) = (next(n), next(n));
        // Points far apart pin a line down; neighbours do not.
        if (points[i] - points[j]).norm() < 20.0 {
            continue;
        }
        let Some(line) = Line2::through(points[i], points[j]) else {
            continue;
        };
        let agree = agreeing(&line);
        if agree.len() > best.len() {
            best = agree;
        }
    }
    for _ in 0..2 {
        let Some(line) = Line2::fit(&best) else {
            break;
        };
        best = agreeing(&line);
    }
    best
}

/// The table's outline measured around a calibrated pose: per side, the agreeing
/// edge points of each reading (the outer boundary, and where a face is in view the
/// top's own edge as well).
struct Measured {
    sides: Vec<MeasuredSide>,
}

/// Per side: stations measured, the outer boundary's agreeing points, and the
/// top's edge's where a face is in view.
type MeasuredSide = (usize, Vec<Point2<f64>>, Option<Vec<Point2<f64>>>);

/// One signal's reading of a side: stations measured, every edge point (station,
/// offset along the normal), and the points that agree with one line.
type SideReading = (usize, Vec<(Point2<f64>, f64)>, Vec<Point2<f64>>);

fn measure(
    frame: BgrFrame<'_>,
    camera: &CameraIntrinsics,
    pose: &RigidPose,
    corners_mm: &[Point2<f64>],
    search: &OutlineSearch,
) -> Result<Measured, RefitError> {
    let k = corners_mm.len();
    let px: Vec<Point2<f64>> = corners_mm
        .iter()
        .map(|c| pose.undistorted_pixel(camera, c.x, c.y, 0.0))
        .collect::<Option<_>>()
        .ok_or_else(|| RefitError::BadCalibration("a corner lies behind the camera".into()))?;
    let centre = Point2::from(px.iter().map(|p| p.coords).sum::<Vector2<f64>>() / k as f64);
    let showing = sides_showing_face(pose, corners_mm);
    let mut sides = vec![];
    for i in 0..k {
        let (a, b) = (px[i], px[(i + 1) % k]);
        let along = b - a;
        let len = along.norm();
        if len.is_nan() || len <= 1.0 {
            return Err(RefitError::BadCalibration(format!(
                "side {i} is {len:.1} px long in the picture"
            )));
        }
        let dir = along / len;
        let mut normal = Vector2::new(-dir.y, dir.x);
        if normal.dot(&(a - centre)) < 0.0 {
            normal = -normal;
        }
        // How far a face up to the thickest top reaches, at the side's middle.
        let m = Point2::from((corners_mm[i].coords + corners_mm[(i + 1) % k].coords) / 2.0);
        let face_px = if showing[i] {
            let top = pose.undistorted_pixel(camera, m.x, m.y, 0.0);
            let bottom = pose.undistorted_pixel(camera, m.x, m.y, -MAX_TOP_THICKNESS_MM);
            match (top, bottom) {
                (Some(t), Some(b)) => (b - t).dot(&normal).max(0.0),
                _ => 0.0,
            }
        } else {
            0.0
        };
        sides.push(Side {
            a,
            dir,
            len,
            normal,
            face_px,
        });
    }
    let measurer = Measurer {
        frame,
        camera: camera.clone(),
        band: search.band_px,
    };
    let signals = measurer.signals(&sides, search.station_px);
    if signals.is_empty() {
        return Err(RefitError::NotFound(
            "the table and what lies around it do not differ in colour".into(),
        ));
    }
    let mut out = vec![];
    for side in &sides {
        let stations = side.stations(search.station_px);
        // Each signal's edge points, and how many agree with one line: the
        // better-separating signal's unless the other's agree clearly more (a slow
        // rise of a dark floor's hue reads two edges a few pixels apart, each taken
        // in turn; a darker rim pulls the colour distance's edge inward, all alike).
        let mut best: Option<SideReading> = None;
        for &(signal, contrast) in &signals {
            let mut measurable = 0;
            let mut outer = vec![];
            for &q in &stations {
                let (from, to) = (-search.band_px, search.band_px + side.face_px);
                let Some((s, height)) = measurer.outer_edge(side, q, signal, from, to) else {
                    continue;
                };
                measurable += 1;
                if height >= MIN_STEP_SHARE * contrast {
                    outer.push((q, s));
                }
            }
            let points: Vec<Point2<f64>> =
                outer.iter().map(|&(q, s)| q + side.normal * s).collect();
            let agree = consensus(&points);
            let better = match &best {
                None => true,
                Some((_, _, b)) => agree.len() as f64 > CLEARLY_MORE * b.len() as f64,
            };
            if better {
                best = Some((measurable, outer, agree));
            }
        }
        let (measurable, outer, outer_agree) = best.unwrap_or_default();
        // A face a pixel tall cannot be told from the edge's own blur.
        let top = if side.face_px >= 1.0 {
            let reference: Vec<(Point2<f64>, f64, [f64; 3])> = outer
                .iter()
                .filter_map(|&(q, s)| {
                    let from = s - side.face_px - 2.0 - REFERENCE_PX;
                    let samples: Vec<[f64; 3]> = (0..(REFERENCE_PX / FINE_STEP_PX) as usize)
                        .map(|j| {
                            measurer.colour(q + side.normal * (from + j as f64 * FINE_STEP_PX))
                        })
                        .collect::<Option<_>>()?;
                    Some((q, s, median3(&samples)))
                })
                .collect();
            let top = median3(&reference.iter().map(|r| r.2).collect::<Vec<_>>());
            // How far the top's colour varies along the side: a station whose own
            // stretch is further off is covered (an item, a hand).
            let variation = median(reference.iter().map(|r| dist3(r.2, top)).collect());
            let off_top = (3.0 * variation).max(MIN_OFF_TOP);
            let points: Vec<Point2<f64>> = reference
                .iter()
                .filter(|r| dist3(r.2, top) <= off_top)
                .filter_map(|&(q, s, _)| {
                    measurer
                        .top_edge(side, q, top, off_top, s)
                        .map(|t| q + side.normal * t)
                })
                .collect();
            Some(consensus(&points))
        } else {
            None
        };
        out.push((measurable, outer_agree, top));
    }
    Ok(Measured { sides: out })
}

/// One reading of every side (the outer boundary, or the top's edge where a face is
/// in view): per side the points and whether the face was taken.
fn readings(measured: &Measured) -> Vec<Vec<(Vec<Point2<f64>>, bool)>> {
    let open: Vec<usize> = (0..measured.sides.len())
        .filter(|&k| measured.sides[k].2.is_some())
        .collect();
    let mut out = vec![];
    for mask in 0..(1usize << open.len()) {
        let mut reading = vec![];
        for (k, (_, outer, top)) in measured.sides.iter().enumerate() {
            let bit = open.iter().position(|&o| o == k);
            match (bit, top) {
                // The top's edge unless this variant takes the outer boundary.
                (Some(b), Some(top)) if mask & (1 << b) == 0 => reading.push((top.clone(), true)),
                _ => reading.push((outer.clone(), false)),
            }
        }
        out.push(reading);
    }
    out
}

/// Points along the table's edges where the shift is measured: each side at
/// eight places, its corners included.
fn perimeter_mm(corners_mm: &[Point2<f64>]) -> Vec<Point2<f64>> {
    let k = corners_mm.len();
    let mut out = vec![];
    for i in 0..k {
        let (a, b) = (corners_mm[i], corners_mm[(i + 1) % k]);
        for j in 0..8 {
            out.push(a + (b - a) * (j as f64 / 8.0));
        }
    }
    out
}

/// Where the calibration maps the pixels at which `pose` sees each point: their
/// distances from the points (mm).
fn shifts_mm(
    camera: &CameraIntrinsics,
    old: &Homography,
    pose: &RigidPose,
    points_mm: &[Point2<f64>],
) -> Option<Vec<f64>> {
    points_mm
        .iter()
        .map(|p| {
            let px = pose.undistorted_pixel(camera, p.x, p.y, 0.0)?;
            let d = (old.apply(px) - p).norm();
            d.is_finite().then_some(d)
        })
        .collect()
}

/// A measured outline fitted with a rigid camera.
struct Fitted {
    fit: PoseFit,
    sides: Vec<SideSeen>,
}

/// Fits the rigid camera to each reading of the sides and keeps the reading it
/// fits best (least RMS): the wrong reading of a side with a face puts it a face's
/// height off, which a table of the known size cannot follow.
fn fit_outline(
    camera: &CameraIntrinsics,
    start: RigidPose,
    corners_mm: &[Point2<f64>],
    measured: &Measured,
) -> Option<Fitted> {
    let mut best: Option<Fitted> = None;
    for reading in readings(measured) {
        let obs = PoseObservations {
            corners: vec![],
            side_points: reading
                .iter()
                .enumerate()
                .flat_map(|(k, (pts, _))| pts.iter().map(move |&p| (k, p)))
                .collect(),
        };
        let Some(fit) = fit_rigid_pose(camera, corners_mm, &obs, start) else {
            continue;
        };
        if best.as_ref().is_none_or(|b| fit.rms_px < b.fit.rms_px) {
            let sides = reading
                .into_iter()
                .zip(&measured.sides)
                .map(|((points, face), (stations, ..))| SideSeen {
                    stations: *stations,
                    points,
                    face_in_view: face,
                })
                .collect();
            best = Some(Fitted { fit, sides });
        }
    }
    best
}

fn check_frame(frame: &BgrFrame<'_>, camera: &CameraIntrinsics) -> Result<(), RefitError> {
    let [w, h] = camera.image_size;
    if frame.width != w as usize || frame.height != h as usize {
        return Err(RefitError::FrameSize {
            got_w: frame.width,
            got_h: frame.height,
            cam_w: w,
            cam_h: h,
        });
    }
    Ok(())
}

fn corners_of(calibration: &TableCalibration) -> Vec<Point2<f64>> {
    calibration
        .file
        .corners_mm
        .iter()
        .map(|&[x, y]| Point2::new(x, y))
        .collect()
}

/// The bump check: the table's outline looked for within `search.band_px` of where
/// `calibration` puts it, a rigid camera with its intrinsics fitted to the edge
/// points that agree, and how far that camera's outline lies from the
/// calibration's (mm at the table's edges). "Unknown" when under
/// [`MIN_SEEN_SHARE`] of the edges or fewer than three sides were seen, when the
/// fit is looser than [`MAX_SHIFT_DOUBT_MM`], or when the edges fit no rigid table.
pub fn check_bump(
    frame: BgrFrame<'_>,
    calibration: &TableCalibration,
    search: &OutlineSearch,
) -> Result<BumpCheck, RefitError> {
    let camera = &calibration.camera;
    check_frame(&frame, camera)?;
    let corners_mm = corners_of(calibration);
    let old = calibration.table_from_undistorted;
    let start = RigidPose::from_homography(camera, &old)
        .ok_or_else(|| RefitError::BadCalibration("its homography is degenerate".into()))?;
    let measured = measure(frame, camera, &start, &corners_mm, search)?;
    let unknown = |sides: Vec<SideSeen>, why: String| BumpCheck {
        verdict: BumpVerdict::Unknown,
        shift_mm: None,
        corner_shift_mm: vec![],
        doubt_mm: None,
        sides,
        edge_rms_px: None,
        pose: None,
        unknown_because: Some(why),
    };
    let Some(fitted) = fit_outline(camera, start, &corners_mm, &measured) else {
        let sides = measured
            .sides
            .iter()
            .map(|(stations, outer, _)| SideSeen {
                stations: *stations,
                points: outer.clone(),
                face_in_view: false,
            })
            .collect();
        return Ok(unknown(
            sides,
            "no rigid camera fits the edges seen".to_string(),
        ));
    };
    let pose = fitted.fit.pose;
    let shifts = shifts_mm(camera, &old, &pose, &perimeter_mm(&corners_mm));
    let corner_shift_mm = shifts_mm(camera, &old, &pose, &corners_mm).unwrap_or_default();
    let correlation = EDGE_SAMPLE_CORRELATION / search.station_px.max(1.0);
    let doubt_mm = edge_uncertainty_mm(camera, &fitted.fit, &corners_mm, correlation)
        .map(|d| d.into_iter().fold(0.0, f64::max));
    let shift_mm = shifts.map(|s| s.into_iter().fold(0.0, f64::max));
    let mut check = BumpCheck {
        verdict: BumpVerdict::Unknown,
        shift_mm,
        corner_shift_mm,
        doubt_mm,
        sides: fitted.sides,
        edge_rms_px: Some(fitted.fit.rms_px),
        pose: Some(pose),
        unknown_because: None,
    };
    let sides_seen = check
        .sides
        .iter()
        .filter(|s| s.share() >= MIN_SIDE_SHARE)
        .count();
    let share = check.seen_share();
    check.unknown_because = if share < MIN_SEEN_SHARE {
        Some(format!(
            "only {:.0} % of the table's edges were seen (at least {:.0} % needed; a hand or items over them?)",
            100.0 * share,
            100.0 * MIN_SEEN_SHARE
        ))
    } else if sides_seen < 3 {
        Some(format!(
            "only {sides_seen} of the table's sides were seen along {:.0} % of their length or more (3 needed)",
            100.0 * MIN_SIDE_SHARE
        ))
    } else if fitted.fit.rms_px > MAX_EDGE_RMS_PX {
        Some(format!(
            "the edges seen fit a rigid table to {:.2} px RMS only (at most {MAX_EDGE_RMS_PX} px)",
            fitted.fit.rms_px
        ))
    } else {
        match (shift_mm, doubt_mm) {
            (Some(_), Some(d)) if d <= MAX_SHIFT_DOUBT_MM => None,
            (Some(_), Some(d)) => Some(format!(
                "the edges seen pin the outline down to {d:.1} mm only (at most {MAX_SHIFT_DOUBT_MM} mm)"
            )),
            _ => Some("the fitted outline is degenerate".to_string()),
        }
    };
    if check.unknown_because.is_none() {
        check.verdict = match shift_mm {
            Some(s) if s > MOVED_MM => BumpVerdict::Moved,
            _ => BumpVerdict::Still,
        };
    }
    Ok(check)
}

/// The re-fit: the table's edges found again within `search.band_px` of where
/// `calibration` puts them, and the rigid camera with its intrinsics and table
/// fitted to them (every agreeing edge point), whether or not the camera moved.
/// Every side must be seen along [`MIN_SIDE_SHARE`] of its length; the result's
/// `doubt` is set when the seen corners lie over 2 mm from the rigid camera's or
/// the seen W/H is over 1 % off, as `calibrate table` refuses.
pub fn refit_table(
    frame: BgrFrame<'_>,
    calibration: &TableCalibration,
    search: &OutlineSearch,
) -> Result<Refit, RefitError> {
    let moved = check_bump(frame, calibration, search)?;
    let camera = &calibration.camera;
    let corners_mm = corners_of(calibration);
    if corners_mm.len() != 4 {
        return Err(RefitError::BadCalibration(format!(
            "the re-fit is for a rectangular table; this one has {} corners",
            corners_mm.len()
        )));
    }
    let pose = moved
        .pose
        .ok_or_else(|| RefitError::NotFound("no rigid camera fits the edges seen".into()))?;
    for (k, side) in moved.sides.iter().enumerate() {
        if side.share() < MIN_SIDE_SHARE {
            return Err(RefitError::NotFound(format!(
                "side {k} (corner {k} to {}) was seen along {:.0} % of its length (at least {:.0} % needed: a hand or items over it?)",
                (k + 1) % 4,
                100.0 * side.share(),
                100.0 * MIN_SIDE_SHARE
            )));
        }
    }
    // The seen corners: where each side's own line crosses the next's.
    let lines: Vec<Line2> = moved
        .sides
        .iter()
        .enumerate()
        .map(|(k, s)| {
            Line2::fit(&s.points)
                .ok_or_else(|| RefitError::NotFound(format!("side {k} is not a line")))
        })
        .collect::<Result<_, _>>()?;
    let seen: Vec<Point2<f64>> = (0..4)
        .map(|k| {
            lines[(k + 3) % 4]
                .intersect(&lines[k])
                .ok_or_else(|| RefitError::NotFound("two adjacent sides are parallel".to_string()))
        })
        .collect::<Result<_, _>>()?;
    let degenerate = || RefitError::NotFound("the re-fitted outline is degenerate".to_string());
    let offsets = corner_offsets_mm(camera, &pose, &corners_mm, &seen).ok_or_else(degenerate)?;
    let (w, h) = (
        (corners_mm[1] - corners_mm[0]).norm(),
        (corners_mm[3] - corners_mm[0]).norm(),
    );
    let measured_aspect = Homography::from_correspondences(&corners_mm, &seen)
        .and_then(|hm| Some(camera.matrix().try_inverse()? * hm.matrix()))
        .map(|m| w / h * m.column(0).norm() / m.column(1).norm())
        .unwrap_or(f64::NAN);
    let doubt = judge_table_fit(&offsets, measured_aspect, w / h)
        .err()
        .map(|d| TableDoubt { refit: true, ..d });
    // Every side seen, but the edges fit no rigid table, or too loosely, while the
    // corners happen to agree: still no calibration to trust.
    if doubt.is_none() && moved.verdict == BumpVerdict::Unknown {
        return Err(RefitError::NotFound(
            moved
                .unknown_because
                .clone()
                .unwrap_or_else(|| "too little of the table's edges was seen".into()),
        ));
    }
    let table_from_undistorted = pose.table_from_undistorted(camera).ok_or_else(degenerate)?;
    let residual = (offsets.iter().map(|d| d * d).sum::<f64>() / offsets.len() as f64).sqrt();
    let file = TableFile::seen_through(&corners_mm, &table_from_undistorted, camera, residual);
    Ok(Refit {
        file,
        moved,
        corner_offsets_mm: offsets,
        measured_aspect,
        doubt,
    })
}

/// What `live` (and `analyse --recalibrate`) calls every few seconds: the bump
/// check with [`OutlineSearch::CHECK`]; when the table moved by more than
/// [`MOVED_MM`], the re-fit with [`OutlineSearch::REFIT`]. An error (the edges not
/// found again, or a re-fit that disagrees with itself) says in one line why, for
/// a paused scoring's message.
pub fn recalibrate(
    frame: BgrFrame<'_>,
    calibration: &TableCalibration,
) -> Result<Recalibration, RefitError> {
    let check = check_bump(frame, calibration, &OutlineSearch::CHECK)?;
    match check.verdict {
        BumpVerdict::Still => Ok(Recalibration::Unchanged(check)),
        BumpVerdict::Unknown => Ok(Recalibration::Unknown(check)),
        BumpVerdict::Moved => {
            let refit = refit_table(frame, calibration, &OutlineSearch::REFIT)?;
            if let Some(doubt) = refit.doubt {
                return Err(RefitError::Disagrees(Box::new(doubt)));
            }
            Ok(Recalibration::Refitted(Box::new(refit)))
        }
    }
}
