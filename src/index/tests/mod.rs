//! Unit tests of the index that read best as whole scenarios (moved from the integration
//! binary: they need no process, editor or server).

mod code_search;
mod crawl;
mod languages;
mod live;
mod search_scale;
mod stages;
