//! `mira.askSymbol`, `mira.explain`, `mira.fix`, `mira.edit`: turns about a place in the code
//! (the questions and the focus are `agent::actions`'). The handler resolves the place through the live index (in memory, fast) so bad arguments
//! get an error at once; the turn itself runs in the background like `mira.ask`, with the
//! symbol in focus (definition, callers, callees, anchored memories) in its context.

use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp_server::ls_types::*;

use super::super::from_proto;
use super::super::state::{Focus, ServerState};
use super::{FocusAnchor, editor_context, start_turn};
use crate::agent::{EditorContext, SymbolFocus, actions};
use crate::index::SymbolContext;
use crate::lsp::ext::{AskArgs, EditArgs, FixArgs, RangeArgs, SymbolArgs};

type Outcome = std::result::Result<Value, String>;

fn index(state: &ServerState) -> std::result::Result<&crate::index::IndexHandle, String> {
    state.index.handle().ok_or_else(|| {
        "the symbol index is unavailable: the database could not be opened (run `mira doctor`)"
            .into()
    })
}

fn focus_of(cx: &SymbolContext) -> (SymbolFocus, FocusAnchor) {
    let anchor = FocusAnchor {
        key: cx.key.clone(),
        qualified: cx.qualified.clone(),
    };
    (actions::focus_of(cx), anchor)
}

/// The editor context for `range` (selection text, or the lines around it).
fn place(state: &ServerState, uri: &Uri, range: Option<Range>) -> Option<EditorContext> {
    let session = state.session()?;
    let args = AskArgs {
        question: String::new(),
        uri: Some(uri.clone()),
        range,
        position: range.map(|r| r.start),
        effort: None,
    };
    editor_context(state, &session.project.root, &args)
}

fn lines(r: &Range) -> String {
    actions::lines(r.start.line, r.end.line)
}

/// The symbol enclosing `range`, when there is one; other errors (not open, past the end)
/// are the caller's bad arguments.
async fn enclosing(
    state: &ServerState,
    uri: &Uri,
    range: Range,
) -> std::result::Result<Option<SymbolContext>, String> {
    let index = index(state)?;
    let (start, end) = from_proto::focus_range(&state.documents(), state.encoding(), uri, range)
        .map_err(|e| e.to_string())?;
    match index
        .enclosing(&from_proto::doc(uri), start, end)
        .await
        .map_err(|e| e.to_string())?
    {
        Ok(cx) => Ok(Some(cx)),
        Err(crate::index::FocusError::NoEnclosing) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// `mira.askSymbol {uri, position}`: "Ask Mira about this symbol", resolved to its
/// definition in any file.
pub async fn ask_symbol(state: &Arc<ServerState>, args: SymbolArgs) -> Outcome {
    let index = index(state)?;
    let offset = from_proto::focus_offset(
        &state.documents(),
        state.encoding(),
        &args.uri,
        args.position,
    )
    .map_err(|e| e.to_string())?;
    let cx = index
        .symbol_at(&from_proto::doc(&args.uri), offset)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| from_proto::at_position(e, args.position).to_string())?;
    let (focus, anchor) = focus_of(&cx);
    let question = actions::ask_symbol(&focus);
    let mut editor = place(
        state,
        &args.uri,
        Some(Range::new(args.position, args.position)),
    )
    .unwrap_or_default();
    editor.symbol = Some(focus);
    start_turn(state, question, Some(editor), Some(anchor), None)
}

/// `mira.explain {uri, range}`.
pub async fn explain(state: &Arc<ServerState>, args: RangeArgs) -> Outcome {
    let cx = enclosing(state, &args.uri, args.range).await?;
    let mut editor = place(state, &args.uri, Some(args.range)).unwrap_or_default();
    let question = actions::explain(&lines(&args.range), editor.path.as_deref());
    let anchor = cx.map(|cx| {
        let (focus, anchor) = focus_of(&cx);
        editor.symbol = Some(focus);
        anchor
    });
    start_turn(state, question, Some(editor), anchor, None)
}

fn diagnostic_line(d: &Diagnostic) -> String {
    let source = d
        .source
        .as_deref()
        .map(|s| format!("[{s}] "))
        .unwrap_or_default();
    let code = match &d.code {
        Some(NumberOrString::Number(n)) => format!(" ({n})"),
        Some(NumberOrString::String(s)) => format!(" ({s})"),
        None => String::new(),
    };
    format!(
        "line {}: {source}{}{code}",
        d.range.start.line + 1,
        d.message.trim()
    )
}

/// `mira.fix {uri, range, diagnostics}`: a turn that proposes a fix through edit_file (so
/// the versioned applyEdit / confirmation / proposal flows apply).
pub async fn fix(state: &Arc<ServerState>, args: FixArgs) -> Outcome {
    if args.diagnostics.is_empty() {
        return Err(
            "mira.fix needs the diagnostics to fix ({uri, range, diagnostics: [...]})".into(),
        );
    }
    let cx = enclosing(state, &args.uri, args.range).await?;
    let mut editor = place(state, &args.uri, Some(args.range)).unwrap_or_default();
    editor.diagnostics = args.diagnostics.iter().map(diagnostic_line).collect();
    let question = actions::fix(
        editor.path.as_deref(),
        &lines(&args.range),
        &editor.diagnostics,
    );
    let anchor = cx.map(|cx| {
        let (focus, anchor) = focus_of(&cx);
        editor.symbol = Some(focus);
        anchor
    });
    start_turn(state, question, Some(editor), anchor, None)
}

/// `mira.edit "instruction"` or `{instruction, uri?, range?}`: an LLM edit of the range (or
/// of the last focus) through edit_file and `workspace/applyEdit`. Without an instruction
/// (a code action in a client that cannot prompt: Helix) the place is kept and the user is
/// told what to type.
pub async fn edit(state: &Arc<ServerState>, args: EditArgs) -> Outcome {
    let (uri, range) = match (args.uri, args.range) {
        (Some(u), r) => (u, r),
        (None, _) => match state.last_focus() {
            Some(f) => (f.uri, Some(f.range).filter(|r| r.start != r.end)),
            None => {
                return Err(
                    "mira.edit needs a place: select code and use the code action, or \
                     pass {instruction, uri, range}"
                        .into(),
                );
            }
        },
    };
    if args.instruction.trim().is_empty() {
        state.set_focus(Focus {
            uri: uri.clone(),
            range: range.unwrap_or_default(),
        });
        state.show(
            MessageType::INFO,
            "Mira: say what to change: `:lsp-workspace-command mira.edit \"<instruction>\"` edits this selection",
        );
        return Ok(json!({ "needsInstruction": true }));
    }
    if state.documents().get(&uri).is_none() {
        return Err(crate::index::FocusError::NotOpen(uri.as_str().to_string()).to_string());
    }
    let cx = match range {
        Some(r) => enclosing(state, &uri, r).await?,
        None => None,
    };
    let mut editor = place(state, &uri, range).unwrap_or_default();
    let path = editor.path.clone().unwrap_or_else(|| "this file".into());
    let question = actions::edit(
        &path,
        range.map(|r| lines(&r)).as_deref(),
        &args.instruction,
    );
    let anchor = cx.map(|cx| {
        let (focus, anchor) = focus_of(&cx);
        editor.symbol = Some(focus);
        anchor
    });
    start_turn(state, question, Some(editor), anchor, None)
}
