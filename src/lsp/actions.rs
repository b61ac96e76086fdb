//! `textDocument/codeAction` and `codeAction/resolve` (docs/lsp-contract.md): editor actions,
//! answered from memory and the live index — never the network, never SQLite on the way.
//!
//! Every action carries its `command` when first sent: Helix 25.07.1 runs only the command of
//! the action as first sent, never one added by `codeAction/resolve`, so resolve may add only
//! an `edit` (Mira's actions have none). Each also carries typed `data`, which resolve checks.
//! Clients without `codeActionLiteralSupport` get bare `Command`s, all LSP allows them.
//! Kinds are chosen so the default menus show them: VS Code's Ctrl+. (`quickfix`, Mira's own
//! `quickfix.mira`, `refactor.rewrite`), Neovim's `vim.lsp.buf.code_action()` and Helix's
//! space a (all kinds).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use super::from_proto;
use super::state::{Focus, ServerState};

/// What an action does, with exactly the arguments its command needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mira", rename_all = "camelCase")]
pub enum ActionData {
    AskSymbol {
        uri: Uri,
        position: Position,
    },
    Explain {
        uri: Uri,
        range: Range,
    },
    Edit {
        uri: Uri,
        range: Range,
    },
    Fix {
        uri: Uri,
        range: Range,
        diagnostics: Vec<Diagnostic>,
    },
    Remember {
        uri: Uri,
        range: Range,
    },
    ApplyProposal {
        proposal: i64,
    },
    RejectProposal {
        proposal: i64,
    },
}

/// Ask, explain, remember and the proposal actions: under VS Code's "Quick Fix" header, at
/// the top of Ctrl+. where users look (an empty kind lands under "More Actions…" at the
/// bottom); a sub-kind of its own so a key can be bound to Mira's actions alone.
pub const MIRA_KIND: &str = "quickfix.mira";

impl ActionData {
    fn kind(&self) -> CodeActionKind {
        match self {
            ActionData::Fix { .. } => CodeActionKind::QUICKFIX,
            ActionData::Edit { .. } => CodeActionKind::REFACTOR_REWRITE,
            _ => CodeActionKind::from(MIRA_KIND),
        }
    }

    /// The `workspace/executeCommand` this action runs.
    pub fn command(&self, title: &str) -> Command {
        let (name, args) = match self {
            ActionData::AskSymbol { uri, position } => (
                "mira.askSymbol",
                serde_json::json!({"uri": uri, "position": position}),
            ),
            ActionData::Explain { uri, range } => (
                "mira.explain",
                serde_json::json!({"uri": uri, "range": range}),
            ),
            // No instruction or text: the client prompts (VS Code input box, Neovim
            // vim.ui.input); Helix users are told to type it.
            ActionData::Edit { uri, range } => {
                ("mira.edit", serde_json::json!({"uri": uri, "range": range}))
            }
            ActionData::Fix {
                uri,
                range,
                diagnostics,
            } => (
                "mira.fix",
                serde_json::json!({"uri": uri, "range": range, "diagnostics": diagnostics}),
            ),
            ActionData::Remember { uri, range } => (
                "mira.remember",
                serde_json::json!({"uri": uri, "range": range}),
            ),
            ActionData::ApplyProposal { proposal } => (
                "mira.applyProposal",
                serde_json::json!({"proposal": proposal}),
            ),
            ActionData::RejectProposal { proposal } => (
                "mira.rejectProposal",
                serde_json::json!({"proposal": proposal}),
            ),
        };
        Command {
            title: title.to_string(),
            command: name.to_string(),
            arguments: Some(vec![args]),
        }
    }
}

/// How many diagnostics get their own "Mira: fix: …" action.
const MAX_FIX_ACTIONS: usize = 3;

/// A range counts as a selection when it covers more than one character (Helix always has a
/// one-character selection under the cursor).
pub fn is_selection(r: &Range) -> bool {
    r.start.line != r.end.line || r.end.character.abs_diff(r.start.character) > 1
}

fn short(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max - 1).collect::<String>())
    }
}

pub async fn code_action(
    state: &Arc<ServerState>,
    params: CodeActionParams,
) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    let range = params.range;
    if state.documents().get(&uri).is_none() {
        return Ok(None);
    }
    state.set_focus(Focus {
        uri: uri.clone(),
        range,
    });
    let mut actions: Vec<(String, ActionData)> = Vec::new();
    // Converted (and the documents' lock let go) before the index is asked.
    let start =
        from_proto::offset_on_a_line(&state.documents(), state.encoding(), &uri, range.start);
    if let Some(index) = state.index.handle()
        && let Some(offset) = start
        && let Ok(Some(name)) = index.name_at(&from_proto::doc(&uri), offset).await
    {
        actions.push((
            format!("Ask Mira about `{name}`"),
            ActionData::AskSymbol {
                uri: uri.clone(),
                position: range.start,
            },
        ));
    }
    if is_selection(&range) {
        actions.push((
            "Mira: explain selection".into(),
            ActionData::Explain {
                uri: uri.clone(),
                range,
            },
        ));
        actions.push((
            "Mira: edit selection…".into(),
            ActionData::Edit {
                uri: uri.clone(),
                range,
            },
        ));
        actions.push((
            "Mira: remember selection…".into(),
            ActionData::Remember {
                uri: uri.clone(),
                range,
            },
        ));
    }
    for d in params.context.diagnostics.iter().take(MAX_FIX_ACTIONS) {
        actions.push((
            format!("Mira: fix: {}", short(&d.message, 60)),
            ActionData::Fix {
                uri: uri.clone(),
                range: d.range,
                diagnostics: vec![d.clone()],
            },
        ));
    }
    if let Some(path) = from_proto::path(&uri) {
        for id in state.editor.pending_proposals_for(&path) {
            actions.push((
                format!("Apply Mira proposal #{id}"),
                ActionData::ApplyProposal { proposal: id },
            ));
            actions.push((
                format!("Reject Mira proposal #{id}"),
                ActionData::RejectProposal { proposal: id },
            ));
        }
    }
    let only = params.context.only.unwrap_or_default();
    let literals = state
        .session()
        .is_some_and(|s| s.features.code_action_literals);
    let out: Vec<CodeActionOrCommand> = actions
        .into_iter()
        .filter(|(_, a)| wanted(&only, &a.kind()))
        .map(|(title, a)| offer(title, &a, literals))
        .collect();
    Ok((!out.is_empty()).then_some(out))
}

/// One action as the client can take it, its command always in place.
fn offer(title: String, a: &ActionData, literals: bool) -> CodeActionOrCommand {
    let command = a.command(&title);
    if !literals {
        return CodeActionOrCommand::Command(command);
    }
    CodeActionOrCommand::CodeAction(CodeAction {
        kind: Some(a.kind()),
        command: Some(command),
        data: serde_json::to_value(a).ok(),
        title,
        ..Default::default()
    })
}

/// `only` filters by kind prefix (`refactor` admits `refactor.rewrite`); the empty kind is
/// only asked for by clients that ask for everything.
fn wanted(only: &[CodeActionKind], kind: &CodeActionKind) -> bool {
    only.is_empty()
        || only.iter().any(|o| {
            let o = o.as_str();
            let k = kind.as_str();
            o.is_empty() || k == o || k.starts_with(&format!("{o}."))
        })
}

/// The action as it was sent: it already carries its command, and Mira's actions have no
/// edit to add. A client that dropped the command gets it back.
pub async fn resolve(action: CodeAction) -> Result<CodeAction> {
    let data = action
        .data
        .clone()
        .ok_or_else(|| Error::invalid_params("this code action has no data to resolve"))?;
    let parsed: ActionData = serde_json::from_value(data)
        .map_err(|e| Error::invalid_params(format!("not a Mira code action: {e}")))?;
    let command = action
        .command
        .clone()
        .unwrap_or_else(|| parsed.command(&action.title));
    Ok(CodeAction {
        command: Some(command),
        ..action
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_filter_by_prefix_and_selections_need_two_characters() {
        assert!(wanted(&[], &CodeActionKind::EMPTY));
        assert!(wanted(
            &[CodeActionKind::REFACTOR],
            &CodeActionKind::REFACTOR_REWRITE
        ));
        assert!(!wanted(
            &[CodeActionKind::QUICKFIX],
            &CodeActionKind::REFACTOR_REWRITE
        ));
        let r = |a, b| Range::new(Position::new(1, a), Position::new(1, b));
        assert!(!is_selection(&r(3, 3)) && !is_selection(&r(3, 4)));
        assert!(is_selection(&r(3, 5)));
        assert!(is_selection(&Range::new(
            Position::new(1, 0),
            Position::new(2, 0)
        )));
    }
}
