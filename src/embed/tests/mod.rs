//! Unit tests of `embed` that read best as whole scenarios (moved from the
//! integration binary: they need no process, editor or server).

mod bundled;
mod http;
