//! When a frame's picture was taken, and so where a moving item is at the frame's
//! instant (pure). A camera's shutter stays open for part of each frame interval;
//! a moving item's image is smeared over that stretch of its travel, and the
//! detector's sighting is the smear's centre: where the item was mid-exposure. A
//! frame's poses are reported for the frame's instant, the moment its exposure
//! ended (when the picture was complete, as a live scorer receives it), so a moving
//! item is reported ahead of its sighting by its velocity times half the exposure.
//! The exposure is the camera's, unknown up front: it is read from motion blur
//! (the detector measures, per moving tag, the share of the frame interval its blur
//! spans: [`super::FishDetection::exposure_share`]), as the median of the recent
//! readings, or given when known. The tracker follows the sightings and reports the
//! exposure it knows in each frame ([`Timing`]); a shot's rows are placed at the
//! frame instants when the shot is written, with what was learned by its end.
//! Uses: geometry.

use crate::geometry::Vector;
use std::collections::VecDeque;

/// Readings needed before the exposure is taken as known.
const MIN_READINGS: usize = 5;
/// Readings kept: enough for a steady median, few enough to follow a camera whose
/// automatic exposure changes over an evening.
const KEPT_READINGS: usize = 101;

/// The camera's exposure as learned so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Exposure {
    /// A share given up front (the camera's own setting): readings are ignored.
    given: Option<f64>,
    readings: VecDeque<f64>,
    /// Where in the exposure a frame's instant lies: 0 its start, 0.5 its middle,
    /// 1 its end.
    instant: f64,
}

impl Exposure {
    /// Learns the exposure from readings; a frame's instant lies at `instant` of
    /// its exposure (1: the end).
    pub fn learned(instant: f64) -> Exposure {
        Exposure {
            given: None,
            readings: VecDeque::new(),
            instant: instant.clamp(0.0, 1.0),
        }
    }

    /// An exposure known up front, as a share of the frame interval.
    pub fn given(share: f64, instant: f64) -> Exposure {
        Exposure {
            given: Some(share.clamp(0.0, 1.0)),
            ..Exposure::learned(instant)
        }
    }

    /// One reading of the share of the frame interval the shutter was open.
    /// Readings outside 0..=1.2 are not exposures (a misread tag) and are dropped.
    pub fn observe(&mut self, share: f64) {
        if self.given.is_some() || !(0.0..=1.2).contains(&share) {
            return;
        }
        if self.readings.len() == KEPT_READINGS {
            self.readings.pop_front();
        }
        self.readings.push_back(share);
    }

    /// The share of the frame interval the shutter is open, once known.
    pub fn share(&self) -> Option<f64> {
        if let Some(s) = self.given {
            return Some(s);
        }
        if self.readings.len() < MIN_READINGS {
            return None;
        }
        let mut v: Vec<f64> = self.readings.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        Some(
            if v.len() % 2 == 1 {
                v[mid]
            } else {
                (v[mid - 1] + v[mid]) / 2.0
            }
            .min(1.0),
        )
    }

    /// What is known of the exposure now, to place moving items at a frame's instant.
    pub fn timing(&self) -> Timing {
        Timing {
            share: self.share(),
            instant: self.instant,
        }
    }
}

/// The exposure as known at some moment: its share of the frame interval (once
/// known) and where in it a frame's instant lies.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timing {
    pub share: Option<f64>,
    pub instant: f64,
}

impl Timing {
    /// How far a sighting of an item moving at `velocity` (mm/s) lies from where the
    /// item is at the frame's instant, at `fps`: add it to the sighting. Zero while
    /// the exposure is unknown.
    pub fn lead(&self, velocity: Vector, fps: f64) -> Vector {
        match self.share {
            Some(share) if fps > 0.0 => velocity * (share * (self.instant - 0.5) / fps),
            _ => Vector::zeros(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_reading_sets_the_lead_once_there_are_enough() {
        let mut e = Exposure::learned(1.0);
        let v = Vector::new(900.0, 0.0);
        for s in [0.5, 0.48, 0.9, 0.52] {
            e.observe(s);
        }
        assert_eq!(
            e.timing().lead(v, 30.0),
            Vector::zeros(),
            "four readings are not enough"
        );
        e.observe(0.51);
        assert_eq!(e.share(), Some(0.51));
        // Half of 0.51 of 1/30 s at 900 mm/s: 7.65 mm ahead.
        assert!((e.timing().lead(v, 30.0).x - 7.65).abs() < 1e-9);
        // A misread far outside any exposure is no reading.
        e.observe(7.0);
        assert_eq!(e.share(), Some(0.51));
    }

    #[test]
    fn the_lead_follows_where_the_frame_instant_lies_in_the_exposure() {
        let v = Vector::new(0.0, -600.0);
        let end = Exposure::given(1.0, 1.0).timing().lead(v, 60.0);
        let middle = Exposure::given(1.0, 0.5).timing().lead(v, 60.0);
        let start = Exposure::given(1.0, 0.0).timing().lead(v, 60.0);
        assert!((end.y + 5.0).abs() < 1e-9, "{end:?}");
        assert_eq!(middle, Vector::zeros());
        assert!((start.y - 5.0).abs() < 1e-9, "{start:?}");
    }

    #[test]
    fn old_readings_give_way_to_new_ones() {
        let mut e = Exposure::learned(1.0);
        for _ in 0..KEPT_READINGS {
            e.observe(0.25);
        }
        for _ in 0..KEPT_READINGS / 2 + 1 {
            e.observe(0.75);
        }
        assert_eq!(e.share(), Some(0.75));
    }
}
