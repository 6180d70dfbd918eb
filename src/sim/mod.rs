//! The simulator: plays scenarios (single shots, whole matches, calibration scenes)
//! on rapier2d physics, and records the ground truth (`truth.json`) that the rest of
//! fishtrack is tested against. Everything here is pure; the pixels are drawn by
//! `vision::render` (OpenCV, default feature) from a [`truth::Truth`].
//! Uses: model, config, geometry, calibration, record.
//!
//! | file | owns |
//! |---|---|
//! | `look` | the renderer's randomisable look: light, shadows, materials, camera, codec |
//! | `scenario` | the scenario JSON format, built-in scenarios, start validation |
//! | `physics` | rapier2d world: fish compounds, coins, table friction, the edge |
//! | `camera` | the true camera: pose, projection, distortion, table.json |
//! | `play` | running a scenario frame by frame, put-backs, collecting truth |
//! | `board` | chessboard poses for the calibration scenario |
//! | `truth` | truth.json and its conversion to a record |

pub mod board;
pub mod camera;
pub mod look;
pub mod physics;
pub mod play;
pub mod scenario;
pub mod truth;

pub use play::{simulate, SimError, SimOptions};
pub use scenario::Scenario;
pub use truth::Truth;
