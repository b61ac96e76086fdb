//! Unit tests of `memory` that read best as whole scenarios (moved from the
//! integration binary: they need no process, editor or server).

mod library;
mod service;
mod supersede;
