//! All integration tests, as one test binary (`cargo test --test it`): each former
//! `tests/*.rs` file is a module here, so the library, OpenCV and rapier2d are
//! linked once instead of once per file. Run one module with
//! `cargo test --test it rules_table`, one test with `cargo test --test it -- --exact
//! rules_table::every_rule_case_holds`.
//!
//! To add tests: write `tests/it/<topic>.rs` (a `//!` line saying what it checks,
//! `use crate::common::run;` to drive the built binary) and add `mod <topic>;` below,
//! in alphabetical order (`layout` fails if a file is left out). A file that needs
//! OpenCV opens with `#![cfg(feature = "opencv")]`; one that runs the binary but
//! needs no OpenCV itself gets `#[cfg(feature = "opencv")]` on its `mod` line here,
//! as the binary is built only with that feature. Modules share one process and run
//! in parallel threads: write files only into a `tempfile::tempdir()`, never change
//! the current directory or set environment variables of this process.
//! Fixtures stay in `tests/data/` (paths from `env!("CARGO_MANIFEST_DIR")`).

mod amend;
mod analyse_cli;
mod analyse_start;
mod calibrate_board;
mod calibration_cli;
mod calibration_no_chessboard;
mod calibration_random_looks;
mod calibration_reference;
mod calibration_refit;
mod calibration_refusal;
mod calibration_side_face;
mod calibration_sim;
mod calibration_uncertainty;
#[cfg(feature = "opencv")]
mod cli_flags;
#[cfg(feature = "opencv")]
mod cli_score;
mod coin_streaks;
#[cfg(feature = "opencv")]
mod common;
mod damaged_video;
mod driver;
#[cfg(feature = "opencv")]
mod eval_calibration;
#[cfg(feature = "opencv")]
mod eval_suite;
mod evidence;
mod evidence_crops;
#[cfg(feature = "opencv")]
mod export_summary;
#[cfg(feature = "opencv")]
mod hostile_cli;
mod hostile_fuzz;
#[cfg(feature = "opencv")]
mod hostile_videos;
mod layout;
#[cfg(feature = "opencv")]
mod live;
mod live_board;
#[cfg(feature = "opencv")]
mod live_network;
#[cfg(feature = "opencv")]
mod progress_eta;
mod recalibrate_live;
#[cfg(feature = "opencv")]
mod replay_cli;
mod replay_diagram;
#[cfg(feature = "opencv")]
mod replay_html;
mod replay_labels;
mod replay_video;
mod rules_props;
mod rules_table;
#[cfg(feature = "opencv")]
mod scoreboard_width;
#[cfg(feature = "opencv")]
mod sim_cli;
mod sim_physics;
mod sim_render;
mod track_scenarios;
