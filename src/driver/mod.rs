//! The analysis driver: frames from any source → detections → tracks → shots → rules,
//! emitting each shot and event as soon as it is known. Used by `analyse` and `live`.
