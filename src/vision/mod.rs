//! Everything that touches pixels through OpenCV — the only module tree with
//! `use opencv`, compiled with the default `opencv` feature. Uses: model, config,
//! geometry, calibration, record (never the other way round).
//!
//! | file | owns |
//! |---|---|
//! | `capture` | reading frames from videos, image folders, globs |
//! | `decoder_log` | FFmpeg's decoder messages counted (frames decoded with errors) instead of printed |
//! | `picture_damage` | frames whose picture shows macroblock damage the decoder did not report |
//! | `calibrate` | chessboard and table-corner calibration solvers |
//! | `board_size` | whether the chessboard found is the whole board, or which size is seen |
//! | `rectify` | undistortion and the top-down table view (one `remap`) |
//! | `render` | the simulator's camera renderer and video writer |
//! | `annotate` | the replay's annotated video |
//! | `topview` | video frames → top views of only the changed part of the table (`Watcher`, using the pure `watch` gate), detected by the pure `detect` |

pub mod annotate;
pub mod board_size;
pub mod calibrate;
pub mod capture;
pub mod decoder_log;
pub mod picture_damage;
pub mod rectify;
pub mod render;
pub mod topview;
