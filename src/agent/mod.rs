//! The agent: one turn of the global conversation — context assembly, the tool loop, tools,
//! limits, the reasoning router, summaries, redaction, artifacts. Called by the LSP surface
//! and the CLI alike; neither knows about providers or SQL.

pub mod actions;
pub mod config;
pub mod context;
pub mod conversation;
pub mod focus;
pub mod host;
pub mod instructions;
pub mod knowledge;
pub mod proposals;
pub mod router;
pub mod summarize;
pub mod tokens;
pub mod tools;
mod turn;

pub use context::{EditorContext, ProjectInfo};
pub use conversation::TurnStatus;
pub use focus::{AnchoredNote, SymbolFocus};
pub use host::{EditOutcome, FileEdit, OpenDocument, TurnEvent, TurnHost, TurnOutcome};
pub use turn::{Agent, AgentSettings, Ask, Limits, new_turn_id};
