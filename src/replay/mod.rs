//! Replay: diagrams, annotated video, HTML report.
