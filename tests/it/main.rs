//! The integration tests: one binary (linking the crate and its grammars once), a module
//! per area, and `support/` for what they share.

mod support;

mod agent_cli;
mod agent_lsp;
mod agent_providers;
mod agent_security;
mod agent_tools_index_memory;
mod agent_turn;
mod chat_repl;
mod cli;
mod code_search_eval;
mod complete_lsp;
mod context_knowledge;
mod context_lsp;
mod editor_actions;
mod editor_transcript;
mod helix_replay;
mod index_cli;
mod index_crash;
mod index_failure;
mod index_lsp;
mod index_parse_budget;
mod index_scope;
mod index_secrets;
mod local_model;
mod lsp_bare_client;
mod lsp_edits_property;
mod lsp_fuzz;
mod lsp_hardening;
mod lsp_models;
mod lsp_protocol;
mod mcp_server;
mod memory_cli;
mod memory_embed_local;
mod memory_lsp;
mod nvim_actions;
mod nvim_chat;
mod nvim_completion;
mod nvim_document_sync;
mod nvim_plugin;
mod nvim_tui;
mod secrets_e2e;
mod store_processes;
mod tidy;
