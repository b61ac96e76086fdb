//! Symbol requests (documentSymbol, workspace/symbol, definition, hover) and index
//! progress. Conversions only: the index answers, this file speaks LSP.

use super::state::{IndexSlot, ServerState};
use super::{from_proto, to_proto};
use crate::documents::{LineIndex, PositionEncoding};
use crate::index::crawl::{CrawlProgress, CrawlStage};
use crate::index::{IndexHandle, IndexOptions, IndexProgress, OutlineNode, SymbolInfo};
use crate::session::code::CodeEmbedding;
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::notification::Progress;
use tower_lsp_server::ls_types::request::WorkDoneProgressCreate;
use tower_lsp_server::ls_types::*;

impl IndexSlot {
    pub fn handle(&self) -> Option<&IndexHandle> {
        self.handle.get()
    }
}

/// Called from `initialize`, after the session is set: subscribes to document events
/// synchronously (so no didOpen is missed) and starts the index threads. Returns at once;
/// the cold index runs in the background.
pub fn start_index(state: &ServerState) {
    let Some(session) = state.session() else {
        return;
    };
    let Ok(store) = &session.store else {
        return;
    };
    let cfg = state.config().config.index.clone();
    let (doc_tx, doc_rx) = mpsc::unbounded_channel();
    state.subscribe_documents(doc_tx);
    let (progress_tx, progress_rx) = mpsc::unbounded_channel();
    let handle = crate::index::service::start(
        store.clone(),
        IndexOptions::for_project(&session.project, &cfg),
        doc_rx,
        progress_tx,
    );
    let _ = state.index.handle.set(handle);
    let folders: Vec<WorkspaceFolder> = state.folders().clone();
    folders_changed(state, &folders, &[]);
    *state
        .index
        .progress
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = Some(progress_rx);
}

/// Every workspace folder is indexed: the project's own, and each other folder beside it
/// (a folder inside the project is already covered).
pub fn folders_changed(
    state: &ServerState,
    added: &[WorkspaceFolder],
    removed: &[WorkspaceFolder],
) {
    let Some(handle) = state.index.handle() else {
        return;
    };
    for path in removed.iter().filter_map(|f| from_proto::path(&f.uri)) {
        if handle.remove_folder(&path) {
            state.log(
                MessageType::INFO,
                format!("Mira: stopped indexing {}", path.display()),
            );
        }
    }
    for path in added.iter().filter_map(|f| from_proto::path(&f.uri)) {
        use crate::index::service::FolderError;
        match handle.add_folder(&path) {
            Ok(()) => state.log(
                MessageType::INFO,
                format!("Mira: indexing the workspace folder {}", path.display()),
            ),
            Err(FolderError::AlreadyIndexed(_) | FolderError::Inside(..)) => {}
            Err(e) => state.log(MessageType::WARNING, format!("Mira: {e}")),
        }
    }
}

/// The percentage to show for `c`, never below the one shown before: the walk finds files
/// while they are parsed, so `total` grows and done/total can fall, and LSP asks for a
/// steadily rising percentage (clients may drop one that is not).
/// Parsing fills 0–60 %, storing the references that remain 60–80 %, code search the rest:
/// symbols are what the editor waits for, and they are most of the work.
fn rising_percentage(shown: u32, c: CrawlProgress) -> u32 {
    let part = (c.done * 100).checked_div(c.total).unwrap_or(100).min(100) as u32;
    let pct = match c.stage {
        CrawlStage::Symbols => part * 60 / 100,
        CrawlStage::References => 60 + part / 5,
        CrawlStage::Search => 80 + part / 5,
    };
    shown.max(pct)
}

/// Says which stage runs, and that symbols are complete once code search does.
fn progress_message(c: CrawlProgress) -> String {
    match c.stage {
        CrawlStage::Symbols => format!("symbols: {}/{} files", c.done, c.total),
        CrawlStage::References => {
            format!("symbols done; references: {}/{} files", c.done, c.total)
        }
        CrawlStage::Search => format!("symbols done; code search: {}/{} files", c.done, c.total),
    }
}

/// Called from `initialized`: from now on the client accepts server requests, so index
/// progress can be shown with `$/progress`.
pub fn report_progress(state: &ServerState) {
    let rx = state
        .index
        .progress
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let Some(mut rx) = rx else {
        return;
    };
    let supported = state
        .session()
        .is_some_and(|s| s.features.work_done_progress);
    // Holds the client, not the state: the task must not keep the server (and, through its
    // document channel, the index threads) alive after the session ends.
    let client = state.client.clone();
    let embed_code = CodeEmbedding::new(
        state.memory().cloned(),
        state
            .session()
            .map(|s| s.project.root.clone())
            .unwrap_or_default(),
    );
    tokio::spawn(async move {
        let mut round = 0u32;
        let mut token: Option<NumberOrString> = None;
        let mut shown = 0u32;
        while let Some(p) = rx.recv().await {
            let value = match p {
                IndexProgress::Started => {
                    round += 1;
                    let t = NumberOrString::String(format!("mira/index/{round}"));
                    if !supported
                        || client
                            .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                                token: t.clone(),
                            })
                            .await
                            .is_err()
                    {
                        token = None;
                        continue;
                    }
                    token = Some(t);
                    shown = 0;
                    WorkDoneProgress::Begin(WorkDoneProgressBegin {
                        title: "Mira: indexing".into(),
                        cancellable: Some(false),
                        message: None,
                        percentage: Some(0),
                    })
                }
                IndexProgress::Crawling(c) => {
                    shown = rising_percentage(shown, c);
                    WorkDoneProgress::Report(WorkDoneProgressReport {
                        cancellable: Some(false),
                        message: Some(progress_message(c)),
                        percentage: Some(shown),
                    })
                }
                IndexProgress::Finished(stats) => WorkDoneProgress::End({
                    embed_code.start();
                    WorkDoneProgressEnd {
                        message: Some(format!(
                            "{} files ({} parsed), {} symbols, {} skipped in {:.1}s",
                            stats.files,
                            stats.parsed,
                            stats.symbols,
                            stats.skipped.len(),
                            stats.elapsed.as_secs_f64()
                        )),
                    }
                }),
                IndexProgress::Failed(msg) => {
                    client
                        .show_message(MessageType::ERROR, format!("Mira: {msg}"))
                        .await;
                    WorkDoneProgress::End(WorkDoneProgressEnd { message: Some(msg) })
                }
            };
            if let Some(t) = &token {
                client
                    .send_notification::<Progress>(ProgressParams {
                        token: t.clone(),
                        value: ProgressParamsValue::WorkDone(value),
                    })
                    .await;
            }
        }
    });
}

/// `mira.reindex`: re-crawl in the background (progress as for the cold index).
pub fn reindex(state: &ServerState) -> Result<Option<LSPAny>> {
    index(state)?.reindex();
    Ok(Some(serde_json::json!({"started": true})))
}

fn index(state: &ServerState) -> Result<&IndexHandle> {
    state.index.handle().ok_or_else(|| {
        Error::invalid_request().with_message(
            "the symbol index is unavailable: the database could not be opened (run `mira doctor`)"
                .into(),
        )
    })
}

fn gone(e: crate::index::service::IndexGone) -> Error {
    Error::internal_error().with_message(e.to_string())
}

trait WithMessage {
    fn with_message(self, m: String) -> Error;
}

impl WithMessage for Error {
    fn with_message(mut self, m: String) -> Error {
        self.message = m.into();
        self
    }
}

fn to_lsp_kind(k: crate::index::SymbolKind) -> SymbolKind {
    // The numbers are LSP's own (see SymbolKind::lsp_number); unknown ones cannot occur.
    serde_json::from_value(serde_json::Value::from(k.lsp_number())).unwrap_or(SymbolKind::FUNCTION)
}

/// An outline as flat `SymbolInformation`s; every span is an offset into `lines`' text.
#[allow(deprecated)]
fn flat(
    nodes: &[OutlineNode],
    lines: &LineIndex,
    enc: PositionEncoding,
    out: &mut Vec<SymbolInformation>,
) {
    for n in nodes {
        if let Some(uri) = to_proto::uri(&n.symbol.path) {
            out.push(SymbolInformation {
                name: n.symbol.name.clone(),
                kind: to_lsp_kind(n.symbol.kind),
                tags: None,
                deprecated: None,
                location: Location::new(uri, to_proto::range(lines, &n.symbol.range, enc)),
                container_name: n.symbol.container.clone(),
            });
        }
        flat(&n.children, lines, enc, out);
    }
}

#[allow(deprecated)]
fn nested(n: &OutlineNode, lines: &LineIndex, enc: PositionEncoding) -> DocumentSymbol {
    DocumentSymbol {
        name: n.symbol.name.clone(),
        detail: (!n.symbol.signature.is_empty()).then(|| n.symbol.signature.clone()),
        kind: to_lsp_kind(n.symbol.kind),
        tags: None,
        deprecated: None,
        range: to_proto::range(lines, &n.symbol.range, enc),
        selection_range: to_proto::range(lines, &n.symbol.selection, enc),
        children: (!n.children.is_empty())
            .then(|| n.children.iter().map(|c| nested(c, lines, enc)).collect()),
    }
}

pub async fn document_symbol(
    state: &ServerState,
    params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let hierarchical = state
        .session()
        .is_some_and(|s| s.features.hierarchical_symbols);
    let enc = state.encoding();
    let outline = index(state)?
        .outline(&from_proto::doc(&params.text_document.uri))
        .await
        .map_err(gone)?;
    let Some(outline) = outline else {
        return Ok(None);
    };
    let lines = LineIndex::new(&outline.text);
    Ok(Some(if hierarchical {
        DocumentSymbolResponse::Nested(
            outline
                .nodes
                .iter()
                .map(|n| nested(n, &lines, enc))
                .collect(),
        )
    } else {
        let mut out = Vec::new();
        flat(&outline.nodes, &lines, enc, &mut out);
        DocumentSymbolResponse::Flat(out)
    }))
}

#[allow(deprecated)]
pub async fn workspace_symbol(
    state: &ServerState,
    params: WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let limit = state.config().config.index.workspace_symbol_limit;
    let found = index(state)?
        .workspace_symbols(&params.query, None, limit)
        .await
        .map_err(gone)?;
    let lines = to_proto::Lines::of(&found, state.encoding()).await;
    let out = found
        .symbols
        .iter()
        .filter_map(|h| {
            Some(SymbolInformation {
                name: h.name.clone(),
                kind: to_lsp_kind(h.kind),
                tags: None,
                deprecated: None,
                location: lines.location(h)?,
                // Clients show this next to the name: where it lives, and in which file.
                container_name: Some(match &h.container {
                    Some(c) => format!("{c} · {}", file_label(h)),
                    None => file_label(h),
                }),
            })
        })
        .collect();
    Ok(Some(WorkspaceSymbolResponse::Flat(out)))
}

fn file_label(h: &SymbolInfo) -> String {
    h.path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub async fn goto_definition(
    state: &ServerState,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let p = params.text_document_position_params;
    let uri = &p.text_document.uri;
    let index = index(state)?;
    let Some(offset) = from_proto::offset(&state.documents(), state.encoding(), uri, p.position)
    else {
        return Ok(None);
    };
    let found = index
        .definition(&from_proto::doc(uri), offset)
        .await
        .map_err(gone)?;
    let lines = to_proto::Lines::of(&found, state.encoding()).await;
    let locations: Vec<Location> = found
        .symbols
        .iter()
        .filter_map(|s| lines.location(s))
        .collect();
    Ok(match locations.len() {
        0 => None,
        1 => locations
            .into_iter()
            .next()
            .map(GotoDefinitionResponse::Scalar),
        _ => Some(GotoDefinitionResponse::Array(locations)),
    })
}

pub async fn hover(state: &ServerState, params: HoverParams) -> Result<Option<Hover>> {
    let p = params.text_document_position_params;
    state.set_focus(super::Focus {
        uri: p.text_document.uri.clone(),
        range: Range::new(p.position, p.position),
    });
    let index = index(state)?;
    let Some(offset) = from_proto::offset(
        &state.documents(),
        state.encoding(),
        &p.text_document.uri,
        p.position,
    ) else {
        return Ok(None);
    };
    let hit = index
        .hover(&from_proto::doc(&p.text_document.uri), offset)
        .await
        .map_err(gone)?;
    let Some(h) = hit else {
        return Ok(None);
    };
    let root = state.session().map(|s| s.project.root.clone());
    let text = crate::session::hover::markdown(&h, root.as_deref(), &state.editor.anchors).await;
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_percentage_only_rises_while_the_walk_finds_more_files() {
        let steps = [(10, 20), (10, 40), (30, 40), (30, 100), (100, 100), (0, 0)];
        let mut shown = 0;
        let seen: Vec<u32> = steps
            .iter()
            .map(|&(done, total)| {
                let stage = CrawlStage::Symbols;
                shown = rising_percentage(shown, CrawlProgress { stage, done, total });
                shown
            })
            .collect();
        assert_eq!(seen, [30, 30, 45, 45, 60, 60]);
    }

    #[test]
    fn code_search_fills_the_last_fifth_after_the_symbols() {
        let at = |stage, done, total| rising_percentage(0, CrawlProgress { stage, done, total });
        assert_eq!(at(CrawlStage::References, 0, 10), 60);
        assert_eq!(at(CrawlStage::References, 10, 10), 80);
        assert_eq!(at(CrawlStage::Search, 0, 10), 80);
        assert_eq!(at(CrawlStage::Search, 5, 10), 90);
        assert_eq!(at(CrawlStage::Search, 0, 0), 100);
        assert_eq!(
            rising_percentage(
                90,
                CrawlProgress {
                    stage: CrawlStage::Symbols,
                    done: 1,
                    total: 10,
                }
            ),
            90
        );
    }
}
