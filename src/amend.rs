//! Amendments to a record: a referee's correction of one call (a lost item, an exit
//! point, a coin in a hole, the mover, a violation), checked against the rules and the
//! record, kept with why and when, re-scored, and undoable. Pure.
