//! `mira.applyProposal` / `mira.rejectProposal`.

use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp_server::ls_types::*;

use super::super::state::ServerState;
use super::super::to_proto;
use super::host::apply_file_edit;
use crate::agent::proposals::{self, ProposalStatus};
use crate::agent::{EditOutcome, FileEdit};
use crate::store::Store;

fn proposal_store(state: &ServerState) -> std::result::Result<Store, String> {
    state
        .store()
        .cloned()
        .map_err(|e| format!("memory and conversation are unavailable: {e}"))
}

/// `mira.applyProposal {proposal}`: answers at once; the edit goes to the editor from a task,
/// and only if the file still holds the text the proposal was computed against.
pub async fn apply_proposal(
    state: &Arc<ServerState>,
    id: i64,
) -> std::result::Result<Value, String> {
    let store = proposal_store(state)?;
    let s = store.clone();
    let p = tokio::task::spawn_blocking(move || s.read(|c| proposals::get(c, id)))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no proposal #{id}"))?;
    if p.status != ProposalStatus::Pending {
        return Err(format!("proposal #{id} is already {}", p.status.as_str()));
    }
    let st = state.clone();
    tokio::spawn(async move {
        let uri = to_proto::uri(&p.path);
        let open = uri.and_then(|u| st.documents().get(&u).map(|d| (d.version(), d.text())));
        let (version, current) = match open {
            Some((v, t)) => (Some(v), Some(t)),
            None => {
                let path = p.path.clone();
                (
                    None,
                    tokio::task::spawn_blocking(move || std::fs::read_to_string(path).ok())
                        .await
                        .ok()
                        .flatten(),
                )
            }
        };
        let base = current.clone().unwrap_or_default();
        let settle = |status: ProposalStatus| {
            let s = store.clone();
            tokio::task::spawn_blocking(move || s.write(|tx| proposals::settle(tx, id, status)))
        };
        if proposals::hash(&base) != p.base_hash {
            let _ = settle(ProposalStatus::Stale).await;
            super::super::editor::reload_proposals(&st).await;
            st.show(
                MessageType::WARNING,
                format!(
                    "Mira: proposal #{id} is stale: the file changed since it was made; ask again"
                ),
            );
            return;
        }
        let edit = FileEdit {
            path: p.path,
            base_version: version,
            base_text: base,
            new_text: p.new_text,
            create: current.is_none(),
            diff: p.diff,
        };
        let outcome = apply_file_edit(st.clone(), edit).await;
        let settled = match outcome {
            EditOutcome::Applied => Some(ProposalStatus::Applied),
            EditOutcome::Stale(_) => Some(ProposalStatus::Stale),
            EditOutcome::Rejected(_) | EditOutcome::Proposed { .. } => None,
        };
        if let Some(status) = settled {
            let _ = settle(status).await;
        }
        super::super::editor::reload_proposals(&st).await;
        match outcome {
            EditOutcome::Applied => {
                st.show(MessageType::INFO, format!("Mira: applied proposal #{id}"));
            }
            EditOutcome::Stale(why) => {
                st.show(
                    MessageType::WARNING,
                    format!("Mira: proposal #{id} is stale: {why}"),
                );
            }
            EditOutcome::Rejected(why) => {
                st.show(
                    MessageType::WARNING,
                    format!("Mira: proposal #{id} was not applied: {why}"),
                );
            }
            // apply_file_edit applies or refuses; it never proposes.
            EditOutcome::Proposed { .. } => {}
        }
    });
    Ok(json!({ "proposal": id, "status": "applying" }))
}

/// `mira.rejectProposal {proposal}`.
pub async fn reject_proposal(
    state: &Arc<ServerState>,
    id: i64,
) -> std::result::Result<Value, String> {
    let store = proposal_store(state)?;
    let settled = tokio::task::spawn_blocking(move || {
        store.write(|tx| proposals::settle(tx, id, ProposalStatus::Rejected))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    super::super::editor::reload_proposals(state).await;
    if !settled {
        return Err(format!("proposal #{id} does not exist or is not pending"));
    }
    state.show(MessageType::INFO, format!("Mira: rejected proposal #{id}"));
    Ok(json!({ "proposal": id, "status": "rejected" }))
}
