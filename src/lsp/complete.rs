//! Inline completion over LSP: `textDocument/inlineCompletion` (LSP 3.18, a custom method on
//! the service since tower-lsp-server's trait lacks it) and, with `completion.popup = true`,
//! `textDocument/completion` items for clients without ghost text (Helix). Advertised only
//! when `[completion]` names a provider that resolves.
//!
//! The document is read in the handler's synchronous prefix; then the handler awaits the
//! completion future, which is fine for a request (requests run concurrently, and
//! `$/cancelRequest` drops the future, closing the provider's stream).

use super::state::{CompleteSlot, ServerState};
use crate::complete::{Completer, NoSuggestion, Place, Sources, Trigger, Window};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

impl CompleteSlot {
    fn get(&self) -> Option<Arc<Completer>> {
        self.completer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Called from `initialize` once the session and index exist: builds the completer and
/// advertises what it can answer. A provider that cannot work is said once, not advertised.
pub fn start(state: &ServerState, caps: &mut ServerCapabilities) -> Option<String> {
    let session = state.session()?;
    let loaded = state.config();
    let sources = Sources {
        store: session.store.as_ref().ok().cloned(),
        index: state.index.handle().cloned(),
        project_root: session.project.root.clone(),
    };
    let completer = match loaded.completer(&state.options.env, sources) {
        Ok(Some(c)) => c,
        Ok(None) => return None,
        Err(e) => return Some(format!("Mira: inline completion is off: {e}")),
    };
    caps.inline_completion_provider = Some(OneOf::Left(true));
    if completer.config().popup {
        caps.completion_provider = Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "(".into(), " ".into()]),
            ..Default::default()
        });
    }
    *state
        .complete
        .completer
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(completer));
    None
}

/// Read the place to complete, synchronously (before any `.await`).
fn place(state: &ServerState, at: &TextDocumentPositionParams, trigger: Trigger) -> Option<Place> {
    let c = state.complete.get()?;
    let docs = state.documents();
    let doc = docs.get(&at.text_document.uri)?;
    let char_idx = super::from_proto::char_index(doc.rope(), at.position, state.encoding());
    let budgets = c.budgets();
    Some(Place {
        doc: super::from_proto::doc(&at.text_document.uri),
        language_id: doc.language_id().to_string(),
        window: Window::around(doc.rope(), char_idx, budgets.prefix, budgets.suffix),
        trigger,
    })
}

/// Run the completer; failures worth knowing are logged (never shown: ghost text is quiet).
async fn suggest(state: &ServerState, place: Place) -> Option<String> {
    let completer = state.complete.get()?;
    match completer.complete(place).await {
        Ok(s) => Some(s.text),
        Err(NoSuggestion::Failed(e)) => {
            state.log(
                MessageType::WARNING,
                format!("Mira: completion failed: {e}"),
            );
            None
        }
        Err(_) => None,
    }
}

/// `textDocument/inlineCompletion` → `InlineCompletionList` (empty when superseded).
pub async fn inline_completion(
    state: &ServerState,
    params: InlineCompletionParams,
) -> Result<Option<InlineCompletionResponse>> {
    let at = &params.text_document_position;
    let trigger = if params.context.trigger_kind == InlineCompletionTriggerKind::INVOKED {
        Trigger::Invoked
    } else {
        Trigger::Automatic
    };
    let Some(place) = place(state, at, trigger) else {
        return Ok(None);
    };
    let items = match suggest(state, place).await {
        Some(text) => vec![InlineCompletionItem {
            insert_text: text,
            filter_text: None,
            range: Some(Range::new(at.position, at.position)),
            command: None,
            // Not in LSP 3.18's InlineCompletionItem (the text is always plain).
            insert_text_format: None,
        }],
        None => Vec::new(),
    };
    Ok(Some(InlineCompletionResponse::List(InlineCompletionList {
        items,
    })))
}

/// `textDocument/completion` (only advertised with `completion.popup`): one item whose
/// text edit starts at the word before the cursor, so clients that filter by that word
/// (Helix) keep it.
pub async fn completion(
    state: &ServerState,
    params: CompletionParams,
) -> Result<Option<CompletionResponse>> {
    if !state.complete.get().is_some_and(|c| c.config().popup) {
        return Ok(None);
    }
    let at = &params.text_document_position;
    let invoked = params
        .context
        .as_ref()
        .is_some_and(|c| c.trigger_kind == CompletionTriggerKind::INVOKED);
    let trigger = if invoked {
        Trigger::Invoked
    } else {
        Trigger::Automatic
    };
    let Some(place) = place(state, at, trigger) else {
        return Ok(None);
    };
    let word: String = {
        let rev: Vec<char> = place
            .window
            .prefix
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        rev.into_iter().rev().collect()
    };
    let Some(text) = suggest(state, place).await else {
        return Ok(Some(CompletionResponse::Array(Vec::new())));
    };
    let start = Position::new(
        at.position.line,
        at.position
            .character
            .saturating_sub(units(state.encoding(), &word)),
    );
    let full = format!("{word}{text}");
    let first_line = full.lines().next().unwrap_or_default().to_string();
    let item = CompletionItem {
        label: first_line,
        kind: Some(CompletionItemKind::TEXT),
        detail: Some("Mira".into()),
        filter_text: Some(full.clone()),
        sort_text: Some("0".into()),
        preselect: Some(true),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: Range::new(start, at.position),
            new_text: full,
        })),
        ..Default::default()
    };
    Ok(Some(CompletionResponse::List(CompletionList {
        is_incomplete: true,
        items: vec![item],
    })))
}

/// The length of `s` in the negotiated position encoding's units.
fn units(enc: crate::documents::PositionEncoding, s: &str) -> u32 {
    use crate::documents::PositionEncoding::*;
    (match enc {
        Utf8 => s.len(),
        Utf16 => s.encode_utf16().count(),
        Utf32 => s.chars().count(),
    }) as u32
}
