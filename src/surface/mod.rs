//! What users see, independent of the protocol that carries it: the typed commands of the
//! LSP contract (docs/lsp-contract.md), status, and later code actions, transcript and proposals.
//! Both the LSP adapter and the CLI call into here.

pub mod chat;
pub mod commands;
pub mod doctor;
pub mod edits;
pub mod proposals;
pub mod status;
pub mod transcript;
