//! A frame source of detections recorded before: an `analyse --detections` file
//! (JSON lines, one frame's detections each) or frames made in memory (tests). The
//! pipeline after the pixels runs on them exactly as on a video's.
//! Uses: track's detection types.

use super::{DriverError, Flow, FrameSource, Settings, SourceEnd, SourceInfo, Step};
use crate::model::FrameIdx;
use crate::track::FrameDetections;
use std::io::BufRead;
use std::path::Path;

/// Frames' detections in frame order (indices may skip: frames that were damaged).
#[derive(Debug, Clone)]
pub struct Recorded {
    spec: String,
    fps: Option<f64>,
    frames: Vec<FrameDetections>,
    /// How many frames the recording claims (for a recording cut short).
    claimed: Option<u64>,
    first: FrameIdx,
}

impl Recorded {
    /// Frames made in memory, named `spec`, at `fps` when given.
    pub fn new(spec: &str, fps: Option<f64>, frames: Vec<FrameDetections>) -> Recorded {
        Recorded {
            spec: spec.to_string(),
            fps,
            frames,
            claimed: None,
            first: 0,
        }
    }

    /// Reads an `analyse --detections` file (blank lines skipped).
    pub fn load(path: &Path, fps: Option<f64>) -> Result<Recorded, DriverError> {
        let spec = path.display().to_string();
        let read = |source| DriverError::Read {
            path: spec.clone(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read)?;
        let mut frames = Vec::new();
        for (k, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.map_err(read)?;
            if line.trim().is_empty() {
                continue;
            }
            let dets: FrameDetections =
                serde_json::from_str(&line).map_err(|source| DriverError::Detections {
                    path: spec.clone(),
                    line: k + 1,
                    source,
                })?;
            frames.push(dets);
        }
        Ok(Recorded::new(&spec, fps, frames))
    }

    /// Claims `n` frames, as a video's container does (fewer read: cut short).
    pub fn claiming(mut self, n: u64) -> Recorded {
        self.claimed = Some(n);
        self
    }

    /// Starts at frame `first` (a resume): the frames before it are not damaged,
    /// only not part of this run.
    pub fn starting_at(mut self, first: FrameIdx) -> Recorded {
        self.first = first;
        self
    }

    pub fn frames(&self) -> &[FrameDetections] {
        &self.frames
    }
}

impl FrameSource for Recorded {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            spec: self.spec.clone(),
            fps: self.fps,
            frames: self.claimed,
            first: self.first,
        }
    }

    fn run(
        self,
        _settings: &Settings,
        frame: &mut dyn FnMut(Step<'_>) -> Result<Flow, DriverError>,
    ) -> Result<SourceEnd, DriverError> {
        let mut last: Option<u64> = None;
        for dets in &self.frames {
            // Out of order, the tracker would be fed time backwards: it is damage.
            if last.is_some_and(|l| dets.frame <= l) {
                return Ok(SourceEnd {
                    stopped: Some(format!(
                        "frame {} comes after frame {}: the recording is out of order",
                        dets.frame,
                        last.unwrap_or_default()
                    )),
                    looked: None,
                });
            }
            last = Some(dets.frame);
            if frame(Step::Frame(dets))? == Flow::Stop {
                break;
            }
        }
        Ok(SourceEnd::default())
    }
}
