//! Camera intrinsics (`camera.json`) and the table plane (`table.json`): formats and pure pixel <-> mm maths.
