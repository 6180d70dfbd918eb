//! Tracking (pure): identities through blur, collisions and hands.
