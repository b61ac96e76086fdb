//! What a turn needs from whoever started it (the LSP server or the CLI): somewhere to show
//! progress, the editor's view of open files, a way to apply edits and to ask for approval.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use crate::llm::Usage;

use super::conversation::TurnStatus;

/// Progress of one turn, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnEvent {
    Started {
        turn: String,
        question: String,
    },
    Text(String),
    Reasoning(String),
    ToolCall {
        name: String,
        summary: String,
    },
    ToolResult {
        name: String,
        ok: bool,
        summary: String,
    },
    Finished(TurnOutcome),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TurnOutcome {
    pub turn: String,
    pub status: TurnStatus,
    /// Everything the model said in this turn (partial text included).
    pub text: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    /// Why the turn did not complete, phrased with what to do.
    pub error: Option<String>,
}

/// An open editor buffer: what the user sees, which may differ from the disk.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenDocument {
    pub version: i32,
    pub text: String,
}

/// A whole-file change computed by an edit tool against `base_text`.
#[derive(Clone, Debug, PartialEq)]
pub struct FileEdit {
    pub path: PathBuf,
    /// The editor version the edit was computed against, when the file was open.
    pub base_version: Option<i32>,
    pub base_text: String,
    pub new_text: String,
    pub create: bool,
    /// Unified diff, for showing and confirming.
    pub diff: String,
}

impl FileEdit {
    /// The staleness rule, one wording for every face: why the edit may not be written over
    /// the file as it is now (`None`: the file does not exist), or `None` when it may — the
    /// text it was computed against is still there, or a file to create is still absent.
    pub fn stale_on_disk(&self, current: Option<&str>) -> Option<String> {
        match (current, self.create) {
            (Some(t), false) if t == self.base_text => None,
            (None, true) => None,
            (Some(_), true) => Some("the file was created meanwhile".into()),
            (None, false) => Some("the file was deleted meanwhile".into()),
            (Some(_), false) => Some("the file on disk changed since Mira read it".into()),
        }
    }

    /// The same rule for an open editor buffer: its version and text must be the ones the
    /// edit was computed against.
    pub fn stale_in_editor(&self, doc: &OpenDocument) -> Option<String> {
        (self.base_version.is_some_and(|b| b != doc.version) || doc.text != self.base_text)
            .then(|| "you changed the file in the editor since Mira read it".into())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum EditOutcome {
    Applied,
    /// Stored for the user to apply later (`mira.applyProposal`).
    Proposed {
        id: i64,
    },
    /// The user said no, or the client refused it.
    Rejected(String),
    /// The file changed since the tool read it; nothing was written.
    Stale(String),
}

pub trait TurnHost: Send + Sync {
    fn event(&self, event: TurnEvent);

    fn open_document(&self, _path: &Path) -> Option<OpenDocument> {
        None
    }

    fn apply_edit(&self, edit: FileEdit) -> BoxFuture<'_, EditOutcome>;

    /// Ask the user to allow something (a bash command). Hosts that cannot ask refuse.
    fn approve(&self, _question: String) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
}
