//! fishtrack — an automatic scorer and replay tool for the table game Fish (Рыбы).
//!
//! A camera watches a real table; fishtrack calibrates it, detects and tracks every
//! fish and coin in table millimetres, cuts the video into shots, decides what fell
//! off, and scores the match by the rules in `RULES.md` (R1–R11).
//!
//! # Conventions
//! - **Table frame**: millimetres, origin at table corner 0, +x from corner 0 to
//!   corner 1, +y from corner 0 toward the last corner, +z up; corners are listed
//!   counter-clockwise seen from above.
//! - **Fish frame**: origin at the centre of the hole, +x from the hole toward the
//!   far end of the tag. A fish pose is `{x, y, theta}` (hole centre, radians CCW
//!   from table +x); a coin pose is `{x, y}`.
//! - **Image**: pixels, origin top-left (OpenCV). Distortion `[k1, k2, p1, p2, k3]`.
//! - **Time**: [`model::FrameIdx`] counts frames from 0; seconds are `frame / fps`.
//! - **Ids**: `fish:K`, `coin:K`, K = owner's index in move order.
//!
//! # Layers (data flows down only)
//! | module | owns | may use |
//! |---|---|---|
//! | `model` | ids, poses, frame indices | — |
//! | `limits` | the bounds every loaded file and flag is checked against | — |
//! | `config` | items.json, game.json, JSON loading | model, geometry |
//! | `geometry` | table polygon, footprints, overlaps, kiddo index | model, config |
//! | `rules` | the rules engine R2–R11 (pure) | model, config, geometry, record |
//! | `record` | record.json, state.json | model, config |
//! | `amend` | a referee's corrections to a record, checked and re-scored (pure) | model, config, geometry, record, rules |
//! | `detect` | fish and coin detection in a top-down view, table mm, with coins seen only as motion-blur streaks (`detect::streaks`) (pure) | model, config, geometry, calibration (the size of a camera pixel on the table), track's input types (`track::detections`) |
//! | `eval` | tracker accuracy against ground truth, and a calibration's against the true one (pure) | model, record, calibration, geometry, sim (a clip's look) |
//! | `track` | identities frame to frame from detections (pure) | model, config, geometry |
//! | `watch` | where to look each frame: change since the last full look, regions, merging (pure) | detect, geometry |
//! | `shots` | shot cutting and judgement: flick, rest, lost items (pure) | model, config, geometry, track, record |
//! | `pipeline` | detections → tracks → shots → rules → record (pure) | track, shots, rules, record |
//! | `calibration` | camera.json, table.json, pixel ↔ mm, the lens from the table (pure) | config, geometry, limits |
//! | `vision` | OpenCV: capture, calibration solvers, rectification, detection | the above |
//! | `driver` | the analysis driver: a frame source (video through `vision`, or recorded detections) → pipeline, each shot and event as soon as it is known; the journal | model, config, geometry, calibration, detect, record, rules, amend, track, pipeline, limits, vision |
//! | `sim` | the simulator: physics, scenarios, rendering, truth | the above |
//! | `replay` | diagrams, annotated video, HTML report, CSV/MOT export, summary over records | the above |
//! | `cli` | the command line (anyhow) | everything |

pub mod amend;
pub mod calibration;
pub mod config;
pub mod detect;
pub mod driver;
pub mod eval;
pub mod geometry;
pub mod limits;
pub mod model;
pub mod pipeline;
pub mod record;
pub mod replay;
pub mod rules;
pub mod shots;
pub mod sim;
pub mod track;
#[cfg(feature = "opencv")]
pub mod vision;
pub mod watch;

/// The command line needs the pixel stages, so it comes with the `opencv` feature.
#[cfg(feature = "opencv")]
pub mod cli;
