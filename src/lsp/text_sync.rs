//! Text sync: the editor's documents as Mira's mirror holds them.
//!
//! Every function here is synchronous, so each notification mutates the documents before the
//! handler's first `.await`: tower-lsp-server polls handlers concurrently and would otherwise
//! interleave them (tower-lsp#284). That is ARCHITECTURE.md's first invariant.

use super::state::ServerState;
use crate::documents::{DocEvent, VersionCheck};
use serde::{Deserialize, Serialize};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

pub fn did_open(state: &ServerState, params: DidOpenTextDocumentParams) {
    let d = params.text_document;
    state.editor.resynced(&d.uri);
    let event = state
        .documents()
        .open(d.uri, d.language_id, d.version, &d.text);
    state.publish(event);
}

pub fn did_change(state: &ServerState, params: DidChangeTextDocumentParams) {
    let uri = params.text_document.uri;
    let version = params.text_document.version;
    if state.editor.is_out_of_sync(&uri) {
        // Applying more edits to a drifted copy would only make it worse.
        return;
    }
    let result = state
        .documents()
        .change(&uri, version, &params.content_changes, state.encoding());
    match result {
        Ok((event, check)) => {
            state.publish(event);
            if let VersionCheck::NotIncreasing { previous } = check {
                state.log(
                    MessageType::WARNING,
                    format!(
                        "Mira: {} went from version {previous} to {version}; applied in arrival order",
                        uri.as_str()
                    ),
                );
            }
        }
        Err(e) => lost_track(state, &uri, &e.to_string()),
    }
}

pub fn did_save(state: &ServerState, params: DidSaveTextDocumentParams) {
    state.publish(DocEvent::saved(&params.text_document.uri));
}

pub fn did_close(state: &ServerState, params: DidCloseTextDocumentParams) {
    let uri = &params.text_document.uri;
    let event = state.documents().close(uri);
    if let Some(event) = event {
        state.publish(event);
    }
    state.chat.closed(uri);
}

#[derive(Debug, Deserialize)]
pub struct DocumentStateParams {
    pub uri: Uri,
}

#[derive(Debug, Serialize)]
pub struct DocumentState {
    pub version: i32,
    pub text: String,
}

/// `mira/documentState {uri}` → `{version, text}`: Mira's view of an open document.
pub fn document_state(state: &ServerState, params: DocumentStateParams) -> Result<DocumentState> {
    let docs = state.documents();
    let doc = docs
        .get(&params.uri)
        .ok_or_else(|| Error::invalid_params(format!("{} is not open", params.uri.as_str())))?;
    Ok(DocumentState {
        version: doc.version(),
        text: doc.text(),
    })
}

/// What the transport sends in place of a didChange it could not read.
#[derive(Debug, Deserialize)]
pub struct OutOfSyncParams {
    pub uri: String,
    pub reason: String,
}

/// `mira/documentOutOfSync {uri, reason}` (from `lsp::transport`): an edit was lost.
pub fn out_of_sync(state: &ServerState, params: OutOfSyncParams) {
    match params.uri.parse::<Uri>() {
        Ok(uri) => lost_track(state, &uri, &params.reason),
        Err(_) => state.show(
            MessageType::ERROR,
            format!(
                "Mira: an edit could not be read and names no document ({}); reopen your files",
                params.reason
            ),
        ),
    }
}

/// Mira's copy of `uri` no longer matches the editor's: stop applying edits to it and say so
/// once, with the way out (LSP has no request for the full text; reopening sends it).
fn lost_track(state: &ServerState, uri: &Uri, why: &str) {
    if !state.editor.mark_out_of_sync(uri) {
        return;
    }
    let name = uri
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or(uri.as_str())
        .to_string();
    state.log(
        MessageType::ERROR,
        format!("Mira: {} is out of sync: {why}", uri.as_str()),
    );
    state.show(
        MessageType::ERROR,
        format!(
            "Mira lost track of {name}: an edit could not be applied ({why}). Close and reopen it \
             (`:e!` in Neovim, `:reload` in Helix) so Mira reads it again"
        ),
    );
}
