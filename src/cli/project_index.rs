//! The project's index for the terminal (`mira chat`, `mira ask`): the same live index the
//! editors run — the stored index brought up to date, then the watcher — started in the
//! background, so the first prompt never waits. The first time a project is indexed, each
//! answer meanwhile is preceded by how far it got, and the end is said once; a project
//! indexed before answers from its stored index at once, quietly, while it is brought up to
//! date.

use std::sync::{Arc, Mutex};

use mira::documents::DocEvent;
use mira::index::crawl::CrawlStage;
use mira::index::service::{self, IndexHandle, IndexOptions, IndexProgress};
use tokio::sync::mpsc;

use mira::session::Workspace;

#[derive(Clone, Debug)]
enum State {
    Building {
        /// Code search's stage: every symbol is stored already.
        search: bool,
        done: usize,
        total: usize,
    },
    Ready {
        files: usize,
        symbols: u64,
        said: bool,
    },
    Failed(String),
}

pub(crate) struct ProjectIndex {
    pub handle: IndexHandle,
    /// Files the stored index already had (0: this is the project's first index).
    stored: usize,
    /// The index actor runs while its document channel is open (the terminal has no
    /// documents to send).
    _docs: mpsc::UnboundedSender<DocEvent>,
    state: Arc<Mutex<State>>,
}

impl ProjectIndex {
    pub fn start(cx: &Workspace, project_id: Option<i64>) -> ProjectIndex {
        let stored = project_id
            .and_then(|id| cx.store.read(|c| mira::index::offline::stats(c, id)).ok())
            .map_or(0, |s| s.files);
        let (docs, doc_rx) = mpsc::unbounded_channel();
        let (progress_tx, mut progress) = mpsc::unbounded_channel();
        let handle = service::start(
            cx.store.clone(),
            IndexOptions::for_project(&cx.project, &cx.loaded.config.index),
            doc_rx,
            progress_tx,
        );
        let state = Arc::new(Mutex::new(State::Building {
            search: false,
            done: 0,
            total: 0,
        }));
        let first_time = stored == 0;
        let shared = state.clone();
        let _ = std::thread::Builder::new()
            .name("mira-index-progress".into())
            .spawn(move || {
                while let Some(p) = progress.blocking_recv() {
                    let next = match p {
                        IndexProgress::Started => continue,
                        IndexProgress::Crawling(c) => State::Building {
                            search: c.stage == CrawlStage::Search,
                            done: c.done,
                            total: c.total,
                        },
                        IndexProgress::Finished(s) => State::Ready {
                            files: s.files,
                            symbols: s.symbols,
                            said: !first_time,
                        },
                        IndexProgress::Failed(e) => State::Failed(e),
                    };
                    *shared.lock().unwrap_or_else(|e| e.into_inner()) = next;
                }
            });
        ProjectIndex {
            handle,
            stored,
            _docs: docs,
            state,
        }
    }

    /// For the banner and `/status`.
    pub fn summary(&self) -> String {
        match &*self.state.lock().unwrap_or_else(|e| e.into_inner()) {
            State::Building { .. } if self.stored > 0 => {
                format!("{} files (checking for changes)", self.stored)
            }
            State::Building {
                search: true,
                done,
                total,
            } => format!("symbols indexed; code search ({done} of {total} files)"),
            State::Building { done, total: 0, .. } => format!("indexing ({done} files so far)"),
            State::Building { done, total, .. } => format!("indexing ({done} of {total} files)"),
            State::Ready { files, symbols, .. } => format!("{files} files, {symbols} symbols"),
            State::Failed(e) => format!("failed: {e} (`mira index` says more)"),
        }
    }

    /// Said before an answer: how far the index is while it builds, and once that it is done.
    pub fn note(&self) -> Option<String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *state {
            State::Building { .. } if self.stored > 0 => None,
            State::Building { .. } => {
                drop(state);
                Some(format!(
                    "(index: {}; code search and symbols see what is indexed so far)",
                    self.summary()
                ))
            }
            State::Ready {
                files,
                symbols,
                said,
            } if !*said => {
                *said = true;
                Some(format!("(index ready: {files} files, {symbols} symbols)"))
            }
            _ => None,
        }
    }
}
