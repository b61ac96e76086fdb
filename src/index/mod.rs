//! The live symbol index: tree-sitter extraction for ten languages, a persisted SQLite
//! index built by a parallel crawl, and a live layer that keeps open documents current.

mod abbrev;
mod bitscan;
pub mod config;
pub mod crawl;
pub mod db;
pub mod extract;
mod fuzzy;
mod ignores;
mod language;
mod languages;
pub mod live;
pub mod model;
pub mod offline;
pub mod parse;
pub mod priority;
mod refs_text;
mod registry;
mod rerank;
pub mod search;
pub mod service;
mod stem;
pub mod table;
pub mod vectors;
mod watch;

pub use model::{FileSymbols, Point, RefKind, Reference, Span, Symbol, SymbolKind};
pub use registry::Lang;
pub use service::{
    FocusError, Found, InReach, IndexHandle, IndexOptions, IndexProgress, IndexStatus, Outline,
    OutlineNode, Related, SymbolChange, SymbolContext, SymbolInfo, SymbolWatch,
};

#[cfg(test)]
mod tests;
