//! What the client can do, looked up once at `initialize` (the capability tree is deep and
//! optional at every level; handlers read these flags instead of walking it each time).

use tower_lsp_server::ls_types::{ClientCapabilities, ResourceOperationKind};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientFeatures {
    /// `workspace/applyEdit` takes versioned `documentChanges`.
    pub document_changes: bool,
    /// … with change annotations (`needsConfirmation`: VS Code's refactor preview).
    pub change_annotations: bool,
    /// … with `CreateFile` operations.
    pub create_files: bool,
    /// `window/showDocument` works: advertised, or Helix (handles it without advertising).
    pub show_document: bool,
    pub work_done_progress: bool,
    /// `window/showMessageRequest` (approvals).
    pub message_requests: bool,
    pub hierarchical_symbols: bool,
    /// `CodeAction` literals (`codeActionLiteralSupport`); without it only `Command`s.
    pub code_action_literals: bool,
    /// `workspace/applyEdit` is answered (else it is refused with -32601).
    pub apply_edit: bool,
    /// Helix: every edit leaves its buffer unsaved (`:q` refuses) and a server cannot mark it
    /// saved, so answers come as files it loads from disk (`chat::writer`, `Delivery`).
    pub answers_as_files: bool,
}

impl ClientFeatures {
    pub fn of(caps: &ClientCapabilities, client_name: Option<&str>) -> ClientFeatures {
        let edit = caps
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref());
        let document_changes = edit.and_then(|e| e.document_changes).unwrap_or(false);
        let window = caps.window.as_ref();
        let helix = client_name.is_some_and(|n| n.to_ascii_lowercase().contains("helix"));
        let text = caps.text_document.as_ref();
        ClientFeatures {
            document_changes,
            change_annotations: document_changes
                && edit.is_some_and(|e| e.change_annotation_support.is_some()),
            create_files: edit
                .and_then(|e| e.resource_operations.as_ref())
                .is_some_and(|ops| ops.contains(&ResourceOperationKind::Create)),
            show_document: helix
                || window
                    .and_then(|w| w.show_document.as_ref())
                    .is_some_and(|s| s.support),
            work_done_progress: window.and_then(|w| w.work_done_progress).unwrap_or(false),
            message_requests: window.and_then(|w| w.show_message.as_ref()).is_some(),
            hierarchical_symbols: text
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|d| d.hierarchical_document_symbol_support)
                .unwrap_or(false),
            code_action_literals: text
                .and_then(|t| t.code_action.as_ref())
                .is_some_and(|c| c.code_action_literal_support.is_some()),
            apply_edit: caps
                .workspace
                .as_ref()
                .and_then(|w| w.apply_edit)
                .unwrap_or(false),
            answers_as_files: helix,
        }
    }
}
