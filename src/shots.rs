//! Shot segmentation and judgement (pure).
