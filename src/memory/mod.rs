//! Long-term memory: facts, preferences, decisions and corrections that follow the user across
//! projects and editors, plus goals, milestones and tasks.
//!
//! Invariants:
//! - Nothing is hard-deleted. A correction supersedes (the old row keeps its text, gets
//!   `valid_to` and `superseded_by`); `forget` retracts (restorable). Recall returns only
//!   active memories.
//! - One active memory per (scope, normalised text): repeats bump `seen_count`.
//! - Project-scoped memories surface only in their project; global ones everywhere.
//! - Functions take a `Connection` (reads) or `Transaction` (writes) and validate before the
//!   first write, so a rejected call leaves the database untouched.

pub mod anchors;
pub mod config;
mod error;
/// Weighted RRF is shared with code search.
pub use crate::fusion;
pub mod goals;
pub mod memories;
mod model;
pub mod recall;
mod service;
mod supersede;
/// Identifier splitting and FTS5 query building live below memory and index (both use them).
pub use crate::text;
pub mod vectors;

pub use error::MemoryError;
pub use memories::{ListFilter, NewMemory, Outcome, Remembered};
pub use model::{Memory, MemoryKind, Scope, Status};
pub use recall::{Hit, QueryVector, RecallQuery, RecallWeights};
pub use service::{MemoryService, ProjectRef, RememberRequest};

#[cfg(test)]
mod tests;
