//! Turns an editor session runs in the background: the agent, cached per configuration; the
//! registry of running turns, each with its cancel token; and a turn's start-up — the
//! anchored memories of the symbol in focus, the agent and the project row prepared off the
//! runtime, the run, and its removal from the registry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use super::anchors::Anchors;
use crate::agent::{Agent, AnchoredNote, Ask, EditorContext, ProjectInfo, TurnHost, new_turn_id};
use crate::config::Loaded;
use crate::llm::Effort;

/// What a turn is asked, with the symbol whose anchored memories to read, if any.
pub struct TurnRequest {
    pub question: String,
    pub editor: Option<EditorContext>,
    /// The focus symbol's project-relative path and qualified name.
    pub anchor: Option<(String, String)>,
    pub effort: Option<Effort>,
    /// Which face asked (`lsp`, `cli`), stored with the turn.
    pub source: &'static str,
}

#[derive(Default)]
pub struct Turns {
    agent: Mutex<Option<(Arc<Loaded>, Arc<Agent>)>>,
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl Turns {
    /// The agent for `config`, built by `build` the first time and again when the
    /// configuration changes (a new `Arc`).
    pub fn agent(&self, config: Arc<Loaded>, build: impl FnOnce(&Loaded) -> Agent) -> Arc<Agent> {
        let mut slot = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((c, a)) = slot.as_ref()
            && Arc::ptr_eq(c, &config)
        {
            return a.clone();
        }
        let agent = Arc::new(build(&config));
        *slot = Some((config, agent.clone()));
        agent
    }

    fn running(&self) -> MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new turn's id and cancel token, registered as running.
    pub fn begin(&self) -> (String, CancellationToken) {
        let turn = new_turn_id();
        let cancel = CancellationToken::new();
        self.running().insert(turn.clone(), cancel.clone());
        (turn, cancel)
    }

    /// Cancels the named turn, or every running one; returns the ids cancelled.
    pub fn cancel(&self, turn: Option<&str>) -> Vec<String> {
        let running = self.running();
        let mut cancelled = Vec::new();
        for (id, token) in running.iter() {
            if turn.is_none_or(|t| t == id) {
                token.cancel();
                cancelled.push(id.clone());
            }
        }
        cancelled
    }

    /// Runs the turn `begin` registered in a task: reads the focus symbol's anchored memories,
    /// prepares the agent and the project row with `prepare` on a blocking thread (an HTTP
    /// client and SQLite, never on the runtime), runs it, and removes it from the registry.
    pub fn spawn<H, P>(
        self: &Arc<Self>,
        (turn, cancel): (String, CancellationToken),
        mut request: TurnRequest,
        anchors: Anchors,
        prepare: P,
        host: H,
    ) where
        H: TurnHost + 'static,
        P: FnOnce() -> (Arc<Agent>, ProjectInfo) + Send + 'static,
    {
        let turns = self.clone();
        tokio::spawn(async move {
            let focus = request.editor.as_mut().and_then(|e| e.symbol.as_mut());
            if let (Some((key, qualified)), Some(focus)) = (request.anchor.take(), focus) {
                focus.memories = anchors
                    .memories(key, qualified)
                    .await
                    .into_iter()
                    .map(|m| AnchoredNote {
                        id: m.id,
                        body: m.body,
                        stale: m.stale,
                    })
                    .collect();
            }
            match tokio::task::spawn_blocking(prepare).await {
                Ok((agent, project)) => {
                    let ask = Ask {
                        turn: turn.clone(),
                        question: request.question,
                        project,
                        editor: request.editor,
                        effort: request.effort,
                        source: request.source,
                    };
                    agent.run(ask, &host, &cancel).await;
                }
                Err(e) => tracing::error!("turn {turn} could not start: {e}"),
            }
            turns.running().remove(&turn);
        });
    }
}
