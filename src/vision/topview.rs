//! Video frames → top-down views of the table for the detector: decode
//! (`capture`), one `remap` (`rectify`), and the bytes handed over as a
//! `detect::TopView`. Uses: capture, rectify, detect, calibration.

use super::capture::{CaptureError, FrameSource};
use super::rectify::{RectifyError, TableRectifier};
use crate::calibration::TableCalibration;
use crate::detect::TopGrid;
use crate::model::FrameIdx;
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
    #[error("{0}: {1}")]
    OpenCv(String, opencv::Error),
}

/// One rectified frame: BGR bytes laid out as `grid` says.
pub struct TopFrame {
    pub index: FrameIdx,
    pub bgr: Vec<u8>,
}

/// Streams a video as top-down views of its table.
pub struct TopViewReader {
    source: FrameSource,
    rectifier: TableRectifier,
    grid: TopGrid,
    camera_size: [u32; 2],
    checked: bool,
}

impl TopViewReader {
    pub fn open(
        video: &str,
        calibration: &TableCalibration,
        mm_per_px: f64,
        margin_mm: f64,
    ) -> Result<TopViewReader, TopViewError> {
        let source = FrameSource::open(video)?;
        let rectifier = TableRectifier::new(calibration, mm_per_px, margin_mm)?;
        let (w, h) = rectifier.size();
        let origin_mm = rectifier.table_from_rectified(Point2::new(0.0, 0.0));
        let grid = TopGrid {
            width: w as usize,
            height: h as usize,
            mm_per_px,
            origin_mm,
            y_down: true,
        };
        Ok(TopViewReader {
            source,
            rectifier,
            grid,
            camera_size: calibration.camera.image_size,
            checked: false,
        })
    }

    pub fn grid(&self) -> TopGrid {
        self.grid
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

    /// The size of the video's frames (read from the first frame).
    pub fn camera_size(&self) -> [u32; 2] {
        self.camera_size
    }

    /// The next frame's top view, `None` at the end.
    pub fn next_view(&mut self) -> Result<Option<TopFrame>, TopViewError> {
        let Some(frame) = self.source.next_frame()? else {
            return Ok(None);
        };
        if !self.checked {
            let size = frame
                .image
                .size()
                .map_err(|e| TopViewError::OpenCv(self.source.spec().to_string(), e))?;
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
        let top: Mat = self.rectifier.rectify(&frame.image)?;
        let bytes = top
            .data_bytes()
            .map_err(|e| TopViewError::OpenCv(self.source.spec().to_string(), e))?;
        Ok(Some(TopFrame {
            index: frame.index,
            bgr: bytes.to_vec(),
        }))
    }
}
