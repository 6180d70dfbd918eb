//! `fishtrack amend`: correcting a record's calls.
