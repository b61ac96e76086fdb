//! The one API both adapters (LSP and CLI) call: async, with the SQLite work on blocking
//! threads and the embedder (when configured) reached without holding any lock. Embedding
//! of new memories happens in the background; recall falls back to BM25 whenever vectors are
//! unavailable (embedder off, down, or still catching up).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::embed::{EmbedError, Embedder};
use crate::project::Project;
use crate::store::{Store, projects};

use super::anchors::Anchor;
use super::goals::{self, Goal, GoalUpdate, Priority, Task, TaskUpdate};
use super::memories::{self, ListFilter, NewMemory, Remembered};
use super::recall::{self, Hit, QueryVector, RecallQuery, RecallWeights};
use super::supersede::{self, Target};
use super::vectors::{self, VectorSpace};
use super::{Memory, MemoryError, MemoryKind, Scope};

/// A query waits this long for its embedding before recall goes ahead on BM25 alone.
const QUERY_EMBED_TIMEOUT: Duration = Duration::from_secs(3);
/// `remember` waits this long for the new text's embedding (for similarity dedup) before
/// writing without it: a write must answer promptly; the background worker embeds it later.
const WRITE_EMBED_TIMEOUT: Duration = Duration::from_millis(250);
/// Memories embedded per round of the background worker.
const EMBED_BATCH: usize = 64;

/// Where a request comes from: the project it runs in, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRef {
    pub root: PathBuf,
    pub name: String,
}

impl From<&Project> for ProjectRef {
    fn from(p: &Project) -> Self {
        ProjectRef {
            root: p.root.clone(),
            name: p.name.clone(),
        }
    }
}

/// `remember` as the adapters express it.
#[derive(Debug, Clone)]
pub struct RememberRequest {
    pub text: String,
    pub kind: MemoryKind,
    /// Store it project-scoped (in `project`) rather than global.
    pub project_scoped: bool,
    /// The memory this one corrects (it becomes superseded).
    pub corrects: Option<i64>,
    pub anchors: Vec<Anchor>,
}

/// Builds an embedder on a blocking thread.
pub type LazyEmbedder = Box<dyn FnOnce() -> Result<Option<Embedder>, EmbedError> + Send>;

#[derive(Clone)]
pub struct MemoryService {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    /// Settable after construction: a local model loads in the background so startup
    /// (LSP initialize) never waits for it.
    embedder: RwLock<Option<Embedder>>,
    /// An embedder loaded on first use instead ([`MemoryService::load_on_first_use`]).
    lazy: Mutex<Option<LazyEmbedder>>,
    lazy_done: tokio::sync::OnceCell<()>,
    weights: RecallWeights,
    /// The embedder's vector table once it exists.
    space: Mutex<Option<VectorSpace>>,
    wake: tokio::sync::Notify,
}

impl std::fmt::Debug for MemoryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryService")
            .field("embedder", &self.embedder())
            .finish()
    }
}

impl MemoryService {
    pub fn new(store: Store, embedder: Option<Embedder>, weights: RecallWeights) -> MemoryService {
        MemoryService {
            inner: Arc::new(Inner {
                store,
                embedder: RwLock::new(embedder),
                lazy: Mutex::new(None),
                lazy_done: tokio::sync::OnceCell::new(),
                weights,
                space: Mutex::new(None),
                wake: tokio::sync::Notify::new(),
            }),
        }
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn weights(&self) -> RecallWeights {
        self.inner.weights
    }

    /// The embedding of a query with the configured embedder, whether or not any vector table
    /// exists yet (context assembly searches memories and code with it). `Ok(None)`: no
    /// embedder. `Err`: configured but failed or slower than the recall timeout.
    pub async fn embed_query(&self, text: &str) -> Result<Option<(String, Vec<f32>)>, String> {
        let Some(embedder) = self.ready_embedder().await else {
            return Ok(None);
        };
        let texts = [text.to_string()];
        match tokio::time::timeout(QUERY_EMBED_TIMEOUT, embedder.embed(&texts)).await {
            Ok(Ok(mut v)) if v.len() == 1 => Ok(Some((embedder.model_id(), v.remove(0)))),
            Ok(Ok(_)) => Err("the embedder returned no vector".into()),
            Ok(Err(e)) => Err(format!("the embedder failed: {e}")),
            Err(_) => Err(format!(
                "the embedder did not answer within {}s",
                QUERY_EMBED_TIMEOUT.as_secs()
            )),
        }
    }

    /// Loads the embedder with `load` the first time a memory is written or recalled or a
    /// query embedded, not now: the bundled encoder holds about 16 MB once loaded, which an
    /// editor session that never touches memory should not pay. The first use waits for the
    /// load (about 20 ms; every concurrent caller waits for the same one) and then starts the
    /// background embedding worker. Set before the service's first use; set later, it loads
    /// at once in the background.
    pub fn load_on_first_use(&self, load: LazyEmbedder) {
        *self.inner.lazy.lock().unwrap_or_else(|e| e.into_inner()) = Some(load);
        if self.inner.lazy_done.initialized() {
            let this = self.clone();
            tokio::spawn(async move { this.load_lazy().await });
        }
    }

    /// The embedder, after loading a lazy one on first use.
    async fn ready_embedder(&self) -> Option<Embedder> {
        let this = self.clone();
        self.inner
            .lazy_done
            .get_or_init(|| async move { this.load_lazy().await })
            .await;
        self.embedder()
    }

    async fn load_lazy(&self) {
        let load = self
            .inner
            .lazy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(load) = load else {
            return;
        };
        match tokio::task::spawn_blocking(load).await {
            Ok(Ok(Some(e))) => {
                tracing::info!(model = %e.model_id(), "embedder ready");
                self.set_embedder(e);
                self.spawn_embedding_worker();
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!("embeddings are off, recall uses full-text search: {e}"),
            Err(e) => tracing::warn!("loading the embedder failed: {e}"),
        }
    }

    pub fn embedder(&self) -> Option<Embedder> {
        self.inner
            .embedder
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Switches embedding on (e.g. once a local model has loaded). Recall uses the new
    /// embedder's vectors as soon as its table exists; BM25 serves meanwhile.
    pub fn set_embedder(&self, embedder: Embedder) {
        *self
            .inner
            .embedder
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(embedder);
        *self.inner.space.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.inner.wake.notify_one();
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        let store = self.inner.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| MemoryError::Internal(format!("memory worker failed: {e}")))?
    }

    pub async fn remember(
        &self,
        req: RememberRequest,
        project: Option<ProjectRef>,
    ) -> Result<Remembered, MemoryError> {
        // reject bad input before touching the database
        memories::validate_body(&req.text)?;
        // secrets never reach the embedder or the database
        let mut req = req;
        req.text = crate::redact::redact(&req.text).into_owned();
        if req.project_scoped && project.is_none() {
            return Err(MemoryError::Invalid {
                field: "scope",
                message: "a project memory needs a project; run inside one or drop --project"
                    .into(),
            });
        }
        // with an embedder, embed first (no lock held) so the write can spot rewordings
        let vector = match (self.ready_embedder().await, req.corrects) {
            (Some(_), None) => self.embed_one(&req.text, WRITE_EMBED_TIMEOUT).await,
            _ => None,
        };
        let out = self
            .blocking(move |store| {
                store.write(|tx| {
                    let scope = match (&project, req.project_scoped || !req.anchors.is_empty()) {
                        (Some(p), true) => Scope::Project(projects::ensure(tx, &p.root, &p.name)?),
                        _ => Scope::Global,
                    };
                    let vector = vector.as_ref().map(|(space, v)| (space, v.as_slice()));
                    // A correction without an id finds what it corrects (ARCHITECTURE.md, Invariants).
                    let target = match (req.corrects, req.kind) {
                        (Some(old), _) => Target::One(memories::get(tx, old)?),
                        (None, MemoryKind::Correction) => {
                            supersede::find_target(tx, scope, &req.text, vector)?
                        }
                        (None, _) => Target::Nothing,
                    };
                    match target {
                        Target::One(old) => {
                            let memory = memories::correct(tx, old.id, &req.text)?;
                            let mut r = Remembered::new(memories::Outcome::Created, memory);
                            r.superseded = Some(old);
                            Ok(r)
                        }
                        other => {
                            let mut r = memories::remember_with_vector(
                                tx,
                                &NewMemory {
                                    body: req.text,
                                    kind: req.kind,
                                    scope,
                                    anchors: req.anchors,
                                },
                                vector,
                            )?;
                            if let Target::Ambiguous(list) = other {
                                r.ambiguous = list;
                            }
                            Ok(r)
                        }
                    }
                })
            })
            .await?;
        self.inner.wake.notify_one();
        Ok(out)
    }

    pub async fn forget(&self, id: i64) -> Result<Memory, MemoryError> {
        self.blocking(move |s| s.write(|tx| memories::forget(tx, id)))
            .await
    }

    pub async fn restore(&self, id: i64) -> Result<Memory, MemoryError> {
        let m = self
            .blocking(move |s| s.write(|tx| memories::restore(tx, id)))
            .await?;
        self.inner.wake.notify_one();
        Ok(m)
    }

    pub async fn get(&self, id: i64) -> Result<Memory, MemoryError> {
        self.blocking(move |s| s.read(|c| Ok(memories::get(c, id)))?)
            .await
    }

    pub async fn list(
        &self,
        project: Option<ProjectRef>,
        mut filter: ListFilter,
    ) -> Result<Vec<Memory>, MemoryError> {
        self.blocking(move |s| {
            s.read(|c| {
                filter.project = project_id(c, project.as_ref())?;
                Ok(memories::list(c, &filter))
            })?
        })
        .await
    }

    /// How many active memories a turn in `project` can draw on.
    pub async fn count_active(&self, project: Option<ProjectRef>) -> Result<usize, MemoryError> {
        self.blocking(move |s| {
            s.read(|c| {
                let project = project_id(c, project.as_ref())?;
                Ok(memories::count_active(c, project))
            })?
        })
        .await
    }

    /// Memories relevant to `query`, best first.
    pub async fn recall(
        &self,
        query: &str,
        project: Option<ProjectRef>,
        limit: usize,
    ) -> Result<Vec<Hit>, MemoryError> {
        let limit = limit.clamp(1, 200);
        let query_vector = self.embed_one(query, QUERY_EMBED_TIMEOUT).await;
        let weights = self.inner.weights;
        let query = query.to_string();
        self.blocking(move |s| {
            s.read(|c| {
                let project = project_id(c, project.as_ref())?;
                let q = RecallQuery {
                    text: &query,
                    project,
                    limit,
                };
                let qv = query_vector
                    .as_ref()
                    .map(|(space, v)| QueryVector { space, vector: v });
                Ok(recall::recall(c, &q, qv, &weights))
            })?
        })
        .await
    }

    /// The embedding of `text` in the current vector space, or `None` (no embedder, no vectors
    /// yet, the embedder failed or was slower than `wait`): callers then go on without it.
    async fn embed_one(&self, text: &str, wait: Duration) -> Option<(VectorSpace, Vec<f32>)> {
        let embedder = self.ready_embedder().await?;
        let space = self.space().await.ok().flatten()?;
        let texts = [text.to_string()];
        match tokio::time::timeout(wait, embedder.embed(&texts)).await {
            Ok(Ok(mut v)) if v.len() == 1 && v[0].len() == space.dim => Some((space, v.remove(0))),
            Ok(Ok(_)) => {
                tracing::warn!(model = %space.model_id, "embedding has the wrong shape; going on without it");
                None
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "embedding failed; going on without it (recall: full-text search only)");
                None
            }
            Err(_) => {
                tracing::warn!(
                    ?wait,
                    "embedding timed out; going on without it (recall: full-text search only)"
                );
                None
            }
        }
    }

    async fn space(&self) -> Result<Option<VectorSpace>, MemoryError> {
        if let Some(s) = self
            .inner
            .space
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(Some(s));
        }
        let Some(embedder) = self.embedder() else {
            return Ok(None);
        };
        let model = embedder.model_id();
        let found = self
            .blocking(move |s| s.read(|c| Ok(vectors::lookup(c, &model)))?)
            .await?;
        if let Some(space) = &found {
            *self.inner.space.lock().unwrap_or_else(|e| e.into_inner()) = Some(space.clone());
        }
        Ok(found)
    }

    /// Embeds every active memory that has no vector for the configured embedder yet.
    /// Returns how many were embedded. Safe to run from several processes at once (writes are
    /// idempotent).
    pub async fn embed_pending(&self) -> Result<usize, EmbedOrMemoryError> {
        let Some(embedder) = self.embedder() else {
            return Ok(0);
        };
        let mut done = 0;
        loop {
            let space = self.space().await?;
            let batch: Vec<vectors::Pending> = match &space {
                Some(space) => {
                    let space = space.clone();
                    self.blocking(move |s| {
                        s.read(|c| Ok(vectors::pending(c, &space, EMBED_BATCH)))?
                    })
                    .await?
                }
                // no table yet: the first batch tells us the dimension
                None => {
                    self.blocking(move |s| {
                        s.read(|c| Ok(vectors::first_unembedded(c, EMBED_BATCH)))?
                    })
                    .await?
                }
            };
            if batch.is_empty() {
                return Ok(done);
            }
            let misses: Vec<String> = batch
                .iter()
                .filter(|p| p.cached.is_none())
                .map(|p| p.body.clone())
                .collect();
            let mut fresh = embedder.embed(&misses).await?.into_iter();
            let mut rows = Vec::with_capacity(batch.len());
            for p in batch {
                let v = match p.cached {
                    Some(v) => v,
                    None => fresh.next().ok_or_else(|| {
                        MemoryError::Internal("embedder returned too few vectors".into())
                    })?,
                };
                rows.push((p.memory_id, p.body, v));
            }
            let model = embedder.model_id();
            let n = rows.len();
            let space = self
                .blocking(move |s| {
                    s.write(|tx| {
                        let dim = rows.first().map_or(1, |r| r.2.len());
                        let space = vectors::register(tx, &model, dim)?;
                        for (id, body, v) in &rows {
                            vectors::store(tx, &space, *id, body, v)?;
                        }
                        Ok(space)
                    })
                })
                .await?;
            *self.inner.space.lock().unwrap_or_else(|e| e.into_inner()) = Some(space);
            done += n;
        }
    }

    /// Runs [`Self::embed_pending`] now and whenever a memory is written, until the runtime
    /// stops. Transient failures back off and retry; others wait for the next write.
    pub fn spawn_embedding_worker(&self) -> Option<tokio::task::JoinHandle<()>> {
        self.embedder()?;
        let this = self.clone();
        Some(tokio::spawn(async move {
            let mut backoff = Duration::from_secs(5);
            loop {
                match this.embed_pending().await {
                    Ok(n) => {
                        if n > 0 {
                            tracing::info!(embedded = n, "memories embedded");
                        }
                        backoff = Duration::from_secs(5);
                        this.inner.wake.notified().await;
                    }
                    Err(EmbedOrMemoryError::Embed(e)) if e.is_transient() => {
                        tracing::warn!(error = %e, retry_in = ?backoff, "embedding memories failed");
                        tokio::select! {
                            _ = tokio::time::sleep(backoff) => {}
                            _ = this.inner.wake.notified() => {}
                        }
                        backoff = (backoff * 2).min(Duration::from_secs(300));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "embedding memories failed; recall uses full-text search until the next write");
                        this.inner.wake.notified().await;
                    }
                }
            }
        }))
    }

    // ----- goals and tasks -----

    pub async fn add_goal(
        &self,
        project: Option<ProjectRef>,
        title: String,
        description: String,
        priority: Priority,
    ) -> Result<Goal, MemoryError> {
        self.blocking(move |s| {
            s.write(|tx| {
                let scope = scope_of(tx, project.as_ref())?;
                goals::add_goal(tx, scope, &title, &description, priority)
            })
        })
        .await
    }

    pub async fn update_goal(&self, id: i64, update: GoalUpdate) -> Result<Goal, MemoryError> {
        self.blocking(move |s| s.write(|tx| goals::update_goal(tx, id, &update)))
            .await
    }

    pub async fn add_milestone(&self, goal: i64, title: String) -> Result<Goal, MemoryError> {
        self.blocking(move |s| s.write(|tx| goals::add_milestone(tx, goal, &title)))
            .await
    }

    pub async fn set_milestone_done(
        &self,
        milestone: i64,
        done: bool,
    ) -> Result<Goal, MemoryError> {
        self.blocking(move |s| s.write(|tx| goals::set_milestone_done(tx, milestone, done)))
            .await
    }

    pub async fn goals(
        &self,
        project: Option<ProjectRef>,
        all: bool,
    ) -> Result<Vec<Goal>, MemoryError> {
        self.blocking(move |s| {
            s.read(|c| {
                let p = project_id(c, project.as_ref())?;
                Ok(goals::list_goals(c, p, all))
            })?
        })
        .await
    }

    pub async fn add_task(
        &self,
        project: Option<ProjectRef>,
        title: String,
        priority: Priority,
        goal: Option<i64>,
    ) -> Result<Task, MemoryError> {
        self.blocking(move |s| {
            s.write(|tx| {
                let scope = scope_of(tx, project.as_ref())?;
                goals::add_task(tx, scope, &title, priority, goal)
            })
        })
        .await
    }

    pub async fn update_task(&self, id: i64, update: TaskUpdate) -> Result<Task, MemoryError> {
        self.blocking(move |s| s.write(|tx| goals::update_task(tx, id, &update)))
            .await
    }

    pub async fn tasks(
        &self,
        project: Option<ProjectRef>,
        goal: Option<i64>,
        all: bool,
    ) -> Result<Vec<Task>, MemoryError> {
        self.blocking(move |s| {
            s.read(|c| {
                let p = project_id(c, project.as_ref())?;
                Ok(goals::list_tasks(c, p, goal, all))
            })?
        })
        .await
    }
}

/// The project's id if the store knows it (a project never seen has no memories).
fn project_id(c: &rusqlite::Connection, p: Option<&ProjectRef>) -> rusqlite::Result<Option<i64>> {
    match p {
        Some(p) => projects::find(c, &p.root),
        None => Ok(None),
    }
}

fn scope_of(tx: &rusqlite::Transaction<'_>, p: Option<&ProjectRef>) -> rusqlite::Result<Scope> {
    Ok(match p {
        Some(p) => Scope::Project(projects::ensure(tx, &p.root, &p.name)?),
        None => Scope::Global,
    })
}

/// Background embedding can fail in the embedder or in the store.
#[derive(Debug, thiserror::Error)]
pub enum EmbedOrMemoryError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
}
