//! The rules engine (R2–R11), pure.
