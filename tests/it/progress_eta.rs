//! The progress bar's ETA (issue 14 item 6): none until enough work is done to
//! estimate it, then the time left at the average rate so far; and no bar at all when
//! stderr is not a terminal.

use fishtrack::cli::{honest_eta, ETA_AFTER, ETA_AFTER_FRACTION};
use std::time::Duration;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[test]
fn no_eta_before_enough_time_or_enough_work() {
    // Half done after one second: a rate of two ticks' worth, not yet shown.
    assert_eq!(honest_eta(secs(1.0), 50, 100), None);
    // Long running but under the share of work: start-up still dominates the rate.
    let below = (ETA_AFTER_FRACTION * 1000.0) as u64 - 1;
    assert_eq!(honest_eta(secs(600.0), below, 1000), None);
    // Nothing done, or no known length.
    assert_eq!(honest_eta(secs(60.0), 0, 100), None);
    assert_eq!(honest_eta(secs(60.0), 10, 0), None);
    assert!(
        ETA_AFTER >= secs(1.0),
        "an ETA after under a second is no estimate"
    );
}

#[test]
fn eta_is_the_time_left_at_the_average_rate() {
    let at_threshold = (ETA_AFTER_FRACTION * 1000.0).ceil() as u64;
    let elapsed = ETA_AFTER + secs(1.0);
    let eta = honest_eta(elapsed, at_threshold, 1000).expect("an ETA once both thresholds are met");
    let expected = elapsed.as_secs_f64() * (1000 - at_threshold) as f64 / at_threshold as f64;
    assert!(
        (eta.as_secs_f64() - expected).abs() < 1e-6,
        "{eta:?} vs {expected}"
    );

    // An 18-second job (the one that showed "eta 41m"), 40 % done after 7.2 s.
    let eta = honest_eta(secs(7.2), 400, 1000).expect("eta");
    assert!((eta.as_secs_f64() - 10.8).abs() < 1e-6, "{eta:?}");

    // More steps than announced (a container that undercounts its frames): nothing left.
    assert_eq!(honest_eta(secs(10.0), 120, 100), Some(Duration::ZERO));
}

#[cfg(feature = "opencv")]
#[test]
fn no_bar_when_stderr_is_not_a_terminal() {
    let video = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/demo/match.avi");
    let (code, _, stderr) = crate::common::run(&["probe", video]);
    assert_eq!(code, 0, "probe: {stderr}");
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}') && !stderr.contains("eta"),
        "a progress bar was drawn into a pipe: {stderr:?}"
    );
}
