//! The turn's host over LSP: open buffers, versioned model edits, approvals, proposals.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::*;

use super::super::state::ServerState;
use super::Out;
use crate::agent::proposals;
use crate::agent::{EditOutcome, FileEdit, OpenDocument, TurnEvent, TurnHost};
use crate::documents::{PositionEncoding, char_to_position, path_to_uri};
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
        super::super::editor::refresh_proposals(&self.state);
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
        let uri = path_to_uri(path)?;
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

/// The smallest single edit turning `base` into `new`: common prefix and suffix kept.
fn minimal_edit(base: &str, new: &str, enc: PositionEncoding) -> TextEdit {
    let b: Vec<char> = base.chars().collect();
    let n: Vec<char> = new.chars().collect();
    let prefix = b.iter().zip(&n).take_while(|(x, y)| x == y).count();
    let max_suffix = b.len().min(n.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let rope = ropey::Rope::from_str(base);
    let start = char_to_position(&rope, prefix, enc);
    let end = char_to_position(&rope, b.len() - suffix, enc);
    TextEdit {
        range: Range { start, end },
        new_text: n[prefix..n.len() - suffix].iter().collect(),
    }
}

/// A model edit as a versioned `workspace/applyEdit`. Refused — never clobbering — when the
/// user changed the file since the tool read it; the editor also rejects a stale version.
pub(super) async fn apply_file_edit(state: Arc<ServerState>, edit: FileEdit) -> EditOutcome {
    let Some(uri) = path_to_uri(&edit.path) else {
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
    let document_changes = features.document_changes;
    let can_create = features.create_files;
    // Clients with change annotations (VS Code) show model edits in their refactor preview.
    let annotate = features.change_annotations;
    let annotation = annotate.then(|| "mira".to_string());
    let text_edit = minimal_edit(&edit.base_text, &edit.new_text, state.encoding());
    if edit.create && !(document_changes && can_create) {
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
    let workspace_edit = if document_changes {
        let mut ops = Vec::new();
        if edit.create && can_create {
            ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
                CreateFile {
                    uri: uri.clone(),
                    options: Some(CreateFileOptions {
                        overwrite: Some(false),
                        ignore_if_exists: Some(true),
                    }),
                    annotation_id: annotation.clone(),
                },
            )));
        }
        ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: uri.clone(),
                version,
            },
            edits: vec![match &annotation {
                Some(id) => OneOf::Right(AnnotatedTextEdit {
                    text_edit,
                    annotation_id: id.clone(),
                }),
                None => OneOf::Left(text_edit),
            }],
        }));
        let change_annotations = annotation.map(|id| {
            HashMap::from([(
                id,
                ChangeAnnotation {
                    label: "Mira".into(),
                    needs_confirmation: Some(true),
                    description: Some("an edit proposed by the model".into()),
                },
            )])
        });
        WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(ops)),
            change_annotations,
            ..Default::default()
        }
    } else {
        WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), vec![text_edit])])),
            ..Default::default()
        }
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_edits_touch_only_what_changed() {
        let e = minimal_edit(
            "fn a() {\n    41\n}\n",
            "fn a() {\n    42\n}\n",
            PositionEncoding::Utf16,
        );
        assert_eq!(
            e.range,
            Range {
                start: Position::new(1, 5),
                end: Position::new(1, 6)
            }
        );
        assert_eq!(e.new_text, "2");
        let e = minimal_edit("é😀x", "é😀yx", PositionEncoding::Utf16);
        assert_eq!(
            (e.range.start, e.new_text.as_str()),
            (Position::new(0, 3), "y")
        );
        let e = minimal_edit("aaa", "aa", PositionEncoding::Utf8);
        assert_eq!(
            (
                e.range.start.character,
                e.range.end.character,
                e.new_text.as_str()
            ),
            (2, 3, "")
        );
    }
}
