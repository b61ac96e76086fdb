//! The turn's host over LSP: open buffers, versioned model edits, approvals, proposals.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::*;

use super::super::state::ServerState;
use super::super::to_proto;
use super::Out;
use crate::agent::proposals;
use crate::agent::{EditOutcome, FileEdit, OpenDocument, TurnEvent, TurnHost};
use crate::index::crawl;

pub(super) struct LspHost {
    pub(super) state: Arc<ServerState>,
    pub(super) out: mpsc::UnboundedSender<Out>,
    pub(super) turn: String,
}

impl LspHost {
    async fn propose(&self, edit: FileEdit) -> EditOutcome {
        let Ok(store) = self.state.store().cloned() else {
            return EditOutcome::Rejected("the store is unavailable".into());
        };
        let (turn, e) = (self.turn.clone(), edit.clone());
        let id =
            tokio::task::spawn_blocking(move || store.write(|tx| proposals::create(tx, &turn, &e)))
                .await;
        let id = match id {
            Ok(Ok(id)) => id,
            _ => return EditOutcome::Rejected("could not store the proposal".into()),
        };
        let root = self
            .state
            .session()
            .map(|s| s.project.root.clone())
            .unwrap_or_default();
        let shown =
            crawl::relative(&root, &edit.path).unwrap_or_else(|| edit.path.display().to_string());
        super::super::editor::reload_proposals(&self.state).await;
        let _ = self.out.send(Out::Note {
            text: proposals::transcript_block(id, &shown, &edit.diff),
        });
        self.state.show(
            MessageType::INFO,
            format!("Mira proposes edit #{id} to {shown}: `mira.applyProposal {id}` applies it, `mira.rejectProposal {id}` drops it"),
        );
        EditOutcome::Proposed { id }
    }
}

impl TurnHost for LspHost {
    fn event(&self, event: TurnEvent) {
        let _ = self.out.send(Out::Event {
            turn: self.turn.clone(),
            event,
        });
    }

    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        let uri = to_proto::uri(path)?;
        let docs = self.state.documents();
        docs.get(&uri).map(|d| OpenDocument {
            version: d.version(),
            text: d.text(),
        })
    }

    fn apply_edit(&self, edit: FileEdit) -> BoxFuture<'_, EditOutcome> {
        Box::pin(async move {
            let annotations = self
                .state
                .session()
                .is_some_and(|s| s.features.change_annotations);
            // Clients with change annotations confirm in their own preview; others get a
            // proposal to apply explicitly when the user asked for confirmation.
            if self.state.config().config.edits.confirm && !annotations {
                return self.propose(edit).await;
            }
            apply_file_edit(self.state.clone(), edit).await
        })
    }

    fn approve(&self, question: String) -> BoxFuture<'_, bool> {
        let client = self.state.client.clone();
        let can_ask = self
            .state
            .session()
            .is_some_and(|s| s.features.message_requests);
        Box::pin(async move {
            if !can_ask {
                return false;
            }
            let actions = vec![
                MessageActionItem {
                    title: "Allow".into(),
                    properties: Default::default(),
                },
                MessageActionItem {
                    title: "Deny".into(),
                    properties: Default::default(),
                },
            ];
            matches!(client.show_message_request(MessageType::WARNING, question, Some(actions)).await, Ok(Some(a)) if a.title == "Allow")
        })
    }
}

/// A model edit as a versioned `workspace/applyEdit`. Refused — never clobbering — when the
/// user changed the file since the tool read it; the editor also rejects a stale version.
pub(super) async fn apply_file_edit(state: Arc<ServerState>, edit: FileEdit) -> EditOutcome {
    let Some(uri) = to_proto::uri(&edit.path) else {
        return EditOutcome::Rejected(format!("{} is not a file path", edit.path.display()));
    };
    let current = state.documents().get(&uri).map(|d| OpenDocument {
        version: d.version(),
        text: d.text(),
    });
    let version = match current {
        Some(doc) => {
            if let Some(why) = edit.stale_in_editor(&doc) {
                return EditOutcome::Stale(why);
            }
            Some(doc.version)
        }
        None => {
            let path = edit.path.clone();
            let on_disk = tokio::task::spawn_blocking(move || std::fs::read_to_string(path).ok())
                .await
                .ok()
                .flatten();
            if let Some(why) = edit.stale_on_disk(on_disk.as_deref()) {
                return EditOutcome::Stale(why);
            }
            None
        }
    };
    let features = state.session().map(|s| s.features).unwrap_or_default();
    if !features.apply_edit {
        return EditOutcome::Rejected(
            "this editor does not take edits from a server (no workspace.applyEdit): \
             the change was not made; say it in the answer instead"
                .into(),
        );
    }
    if edit.create && !(features.document_changes && features.create_files) {
        // The client cannot create files: create it empty, then fill it through the editor.
        let path = edit.path.clone();
        let made = tokio::task::spawn_blocking(move || {
            path.parent().map(std::fs::create_dir_all).transpose()?;
            std::fs::write(&path, "")
        })
        .await;
        if !matches!(made, Ok(Ok(()))) {
            return EditOutcome::Rejected(format!("cannot create {}", edit.path.display()));
        }
    }
    let text_edit = to_proto::minimal_edit(&edit.base_text, &edit.new_text, state.encoding());
    let workspace_edit = to_proto::file_edit(&uri, version, text_edit, edit.create, &features);
    let label = format!(
        "Mira: edit {}",
        edit.path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    );
    match state
        .client
        .send_request::<ApplyWorkspaceEdit>(ApplyWorkspaceEditParams {
            label: Some(label),
            edit: workspace_edit,
        })
        .await
    {
        Ok(r) if r.applied => EditOutcome::Applied,
        Ok(r) => EditOutcome::Rejected(
            r.failure_reason
                .unwrap_or_else(|| "the editor did not apply it".into()),
        ),
        Err(e) => {
            EditOutcome::Rejected(format!("the editor answered with an error: {}", e.message))
        }
    }
}
