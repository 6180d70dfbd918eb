//! Pure plane geometry in table millimetres: the table polygon, fish footprints
//! (outline with a round hole) and coin discs at a pose, overlap tests with a
//! clearance, distances to the table edge, and a nearest-neighbour index of the
//! items on the table. No OpenCV, no I/O. Uses: model, config, nalgebra, kiddo.
//!
//! API CONTRACT (other modules code against these signatures; bodies are filled in
//! by the geometry work):
//! - `Table::new(corners) -> Result<Table, TableError>` (convex, CCW after
//!   normalisation), `Table::rectangle(w, h)`, `contains(p)`, `signed_distance(p)`
//!   (> 0 inside, distance to the nearest edge), `nearest_edge_point(p)`,
//!   `contains_polygon(&[Point])`, `disc_area_on_table(c, r)`.
//! - `FishFootprint::new(&Items)`, `.placed(&Pose) -> PlacedFish`,
//!   `.validate()` (simple outline, hole inside it).
//! - `PlacedFish { outline: Vec<Point>, hole: Disc }`; `Disc { center, radius }`.
//! - overlap tests `fish_fish_overlap`, `fish_disc_overlap` (a disc wholly inside
//!   the hole does not overlap), `disc_disc_overlap`, each with a clearance (mm):
//!   true when the shapes are closer than `clearance`.
//! - `fish_edge_gap(&Table, &PlacedFish) -> f64`: the smallest distance from the
//!   outline to the table edge (negative when it overhangs).
//! - `ItemIndex` (kiddo): `build(&[(ItemId, Point)])`, `within(p, radius)`.

pub mod capsule;
mod index;
pub mod shapes;
pub mod table;

pub use index::ItemIndex;
pub use shapes::{
    disc_disc_overlap, fish_disc_overlap, fish_edge_gap, fish_fish_overlap, Disc, FishFootprint,
    PlacedFish,
};
pub use table::{nearest_in_convex, EdgePlace, Table, TableError};

/// A point in the table frame (mm).
pub type Point = nalgebra::Point2<f64>;
/// A displacement in the table frame (mm).
pub type Vector = nalgebra::Vector2<f64>;
