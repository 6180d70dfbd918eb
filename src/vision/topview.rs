//! Video frames → top-down views of the table for the detector, and the watcher that
//! decides per frame how much of that view to look at: decode (`capture`), a cheap
//! coarse view for the change gate (`watch`), and a full-scale `remap` of only the
//! part of the table that changed, handed to `detect`.
//! Uses: capture, rectify, detect, watch, calibration.

use super::capture::{CaptureError, FrameSource};
use super::rectify::{RectifyError, TableRectifier};
use crate::calibration::TableCalibration;
use crate::detect::{Detector, Hints, Sightings, TopGrid, TopView};
use crate::geometry::FishFootprint;
use crate::model::FrameIdx;
use crate::watch::{self, ChangeGate, GateConfig, MmBox};
use nalgebra::Point2;
use opencv::core::Mat;
use opencv::prelude::*;

/// Why top views could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TopViewError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Rectify(#[from] RectifyError),
    #[error("{video}: frames are {frame_w}x{frame_h} but the calibration was made at {cal_w}x{cal_h}; calibrate this camera at this resolution")]
    SizeMismatch {
        video: String,
        frame_w: i32,
        frame_h: i32,
        cal_w: u32,
        cal_h: u32,
    },
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

/// One decoded camera frame.
pub struct CameraFrame {
    pub index: FrameIdx,
    pub image: Mat,
}

/// Decodes a video's frames, checking once that they have the calibrated size.
pub struct FrameReader {
    source: FrameSource,
    camera_size: [u32; 2],
    checked: bool,
}

impl FrameReader {
    pub fn open(video: &str, camera_size: [u32; 2]) -> Result<FrameReader, TopViewError> {
        Ok(FrameReader {
            source: FrameSource::open(video)?,
            camera_size,
            checked: false,
        })
    }

    pub fn fps(&self) -> Option<f64> {
        self.source.fps()
    }

    /// Frames in the video, when the container says.
    pub fn len(&self) -> Option<u64> {
        self.source.len()
    }

    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// The next frame, `None` at the end.
    pub fn next_frame(&mut self) -> Result<Option<CameraFrame>, TopViewError> {
        let Some(frame) = self.source.next_frame()? else {
            return Ok(None);
        };
        if !self.checked {
            let size = frame.image.size()?;
            let [cw, ch] = self.camera_size;
            if size.width as u32 != cw || size.height as u32 != ch {
                return Err(TopViewError::SizeMismatch {
                    video: self.source.spec().to_string(),
                    frame_w: size.width,
                    frame_h: size.height,
                    cal_w: cw,
                    cal_h: ch,
                });
            }
            self.checked = true;
        }
        Ok(Some(CameraFrame {
            index: frame.index,
            image: frame.image,
        }))
    }
}

/// Top-down views of the table at one scale: the whole view or a part of it.
pub struct TopViews {
    rectifier: TableRectifier,
    grid: TopGrid,
}

impl TopViews {
    pub fn new(
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
    ) -> Result<TopViews, TopViewError> {
        let rectifier = TableRectifier::new(calibration, mm_per_px, margin_mm)?;
        let (w, h) = rectifier.size();
        let grid = TopGrid {
            width: w as usize,
            height: h as usize,
            mm_per_px,
            origin_mm: rectifier.table_from_rectified(Point2::new(0.0, 0.0)),
            y_down: true,
        };
        Ok(TopViews { rectifier, grid })
    }

    pub fn grid(&self) -> TopGrid {
        self.grid
    }

    /// The whole view, BGR bytes laid out as `grid()` says.
    pub fn whole(&self, frame: &Mat) -> Result<Vec<u8>, TopViewError> {
        let top = self.rectifier.rectify(frame)?;
        Ok(top.data_bytes()?.to_vec())
    }

    /// The part of the view covering `region` (clipped to the view) and its grid;
    /// `None` when the region lies wholly outside the view.
    pub fn part(
        &self,
        frame: &Mat,
        region: &MmBox,
    ) -> Result<Option<(TopGrid, Vec<u8>)>, TopViewError> {
        let g = &self.grid;
        let (ua, va) = g.px_from_table(region.min);
        let (ub, vb) = g.px_from_table(region.max);
        let u0 = ua.min(ub).floor().max(0.0) as i32;
        let v0 = va.min(vb).floor().max(0.0) as i32;
        let u1 = (ua.max(ub).ceil() as i32).min(g.width as i32 - 1);
        let v1 = (va.max(vb).ceil() as i32).min(g.height as i32 - 1);
        if u1 < u0 || v1 < v0 {
            return Ok(None);
        }
        let top = self
            .rectifier
            .rectify_region(frame, u0, v0, u1 - u0 + 1, v1 - v0 + 1)?;
        if top.empty() {
            return Ok(None);
        }
        let grid = TopGrid {
            width: top.cols() as usize,
            height: top.rows() as usize,
            origin_mm: g.table_from_px(u0 as f64, v0 as f64),
            ..*g
        };
        Ok(Some((grid, top.data_bytes()?.to_vec())))
    }
}

/// The scale of the change gate's coarse view, mm per pixel: fine enough that a coin
/// creeping a millimetre shows, coarse enough to cost a fraction of a decode.
pub const COARSE_MM_PER_PX: f64 = 2.0;

/// How a frame was looked at (for the statistics `analyse` reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookKind {
    /// Nothing near an item changed: what was seen before still holds.
    Reused,
    /// A part of the table was looked at.
    Part,
    /// The whole table was looked at.
    Whole,
}

/// Counts of each kind of look, and the share of the view's pixels detected on.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LookStats {
    pub reused: u64,
    pub parts: u64,
    pub wholes: u64,
    /// Pixels looked at, over pixels in all frames' whole views.
    pub pixel_share: f64,
}

/// Decides for each frame where to look, looks there, and keeps what it saw.
pub struct Watcher {
    views: TopViews,
    gate: ChangeGate,
    detector: Detector,
    footprint: FishFootprint,
    players: usize,
    /// What was seen at the gate's reference view.
    reference: Option<Sightings>,
    /// What was seen at the previous frame.
    previous: Option<Sightings>,
    stats: LookStats,
    pixels_seen: f64,
    pixels_all: f64,
    /// Look at the whole view in every frame (for checking the gate; slow).
    always_whole: bool,
}

/// Grown around a change so that what moved there is seen whole, mm.
const REGION_MARGIN_MM: f64 = 12.0;
/// Above this share of the whole view a part costs as much as the whole.
const WHOLE_VIEW_SHARE: f64 = 0.6;

impl Watcher {
    pub fn new(views: TopViews, coarse_grid: TopGrid, detector: Detector, players: usize) -> Self {
        Watcher {
            views,
            gate: ChangeGate::new(coarse_grid, GateConfig::default()),
            footprint: detector.footprint().clone(),
            detector,
            players,
            reference: None,
            previous: None,
            stats: LookStats::default(),
            pixels_seen: 0.0,
            pixels_all: 0.0,
            always_whole: false,
        }
    }

    /// Looks at the whole view in every frame: slow, but free of the change gate's
    /// judgement (to check it).
    pub fn always_whole(mut self, yes: bool) -> Self {
        self.always_whole = yes;
        self
    }

    pub fn footprint(&self) -> &FishFootprint {
        &self.footprint
    }

    pub fn stats(&self) -> LookStats {
        LookStats {
            pixel_share: if self.pixels_all > 0.0 {
                self.pixels_seen / self.pixels_all
            } else {
                0.0
            },
            ..self.stats
        }
    }

    /// Everything seen in `frame`, whose coarse view (on the gate's grid) is `coarse`.
    pub fn look(&mut self, frame: &Mat, coarse: &[u8]) -> Result<Sightings, TopViewError> {
        let change = self.gate.observe(coarse);
        let whole_px = (self.views.grid.width * self.views.grid.height) as f64;
        self.pixels_all += whole_px;
        let (seen, kind) = match (&self.reference, change.since_reference) {
            _ if self.always_whole => (self.look_whole(frame)?, LookKind::Whole),
            (None, _) => (self.look_whole(frame)?, LookKind::Whole),
            (Some(reference), None) => (reference.clone(), LookKind::Reused),
            (Some(reference), Some(changed)) => {
                let before: Vec<&Sightings> = std::iter::once(reference)
                    .chain(self.previous.as_ref())
                    .collect();
                if !change.settled
                    && !watch::touches_items(&changed, &before, &self.footprint, REGION_MARGIN_MM)
                {
                    // Only something over bare table (a hand): the items stand as seen.
                    let mut seen = reference.clone();
                    seen.occluders.push((changed.center(), changed.radius()));
                    (seen, LookKind::Reused)
                } else {
                    let region =
                        watch::region_to_look(&changed, &before, &self.footprint, REGION_MARGIN_MM);
                    let whole = self.gate.whole();
                    let share = area(&region) / area(&whole);
                    if share > WHOLE_VIEW_SHARE {
                        (self.look_whole(frame)?, LookKind::Whole)
                    } else {
                        (
                            self.look_part(frame, &region, !change.settled)?,
                            LookKind::Part,
                        )
                    }
                }
            }
        };
        match kind {
            LookKind::Reused => self.stats.reused += 1,
            LookKind::Part => self.stats.parts += 1,
            LookKind::Whole => {
                self.stats.wholes += 1;
                self.pixels_seen += whole_px;
            }
        }
        if kind != LookKind::Reused && (change.settled || self.reference.is_none()) {
            // A settled scene, looked at afresh, is the new reference.
            self.reference = Some(seen.clone());
            self.gate.rebase();
        }
        self.previous = Some(seen.clone());
        Ok(seen)
    }

    fn hints(&self, partial_view: bool, quick: bool) -> Hints {
        let mut fish = vec![None; self.players];
        for s in self.reference.iter().chain(self.previous.iter()) {
            for f in &s.fish {
                if let Some(slot) = fish.get_mut(f.player) {
                    *slot = Some(f.pose);
                }
            }
        }
        Hints {
            fish,
            partial_view,
            quick,
        }
    }

    fn look_whole(&mut self, frame: &Mat) -> Result<Sightings, TopViewError> {
        let bytes = self.views.whole(frame)?;
        let hints = self.hints(false, false);
        Ok(self.detector.detect_with(
            &TopView {
                grid: self.views.grid,
                rgb: &bytes,
                bgr: true,
            },
            &hints,
        ))
    }

    fn look_part(
        &mut self,
        frame: &Mat,
        region: &MmBox,
        quick: bool,
    ) -> Result<Sightings, TopViewError> {
        let hints = self.hints(true, quick);
        let fresh = match self.views.part(frame, region)? {
            Some((grid, bytes)) => {
                self.pixels_seen += (grid.width * grid.height) as f64;
                self.detector.detect_with(
                    &TopView {
                        grid,
                        rgb: &bytes,
                        bgr: true,
                    },
                    &hints,
                )
            }
            None => Sightings::default(),
        };
        let reference = self.reference.as_ref().cloned().unwrap_or_default();
        Ok(watch::merge(&reference, fresh, region, &self.footprint))
    }
}

fn area(b: &MmBox) -> f64 {
    let d = b.max - b.min;
    d.x.max(0.0) * d.y.max(0.0)
}
