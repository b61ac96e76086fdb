//! `mira.status`: one summary of what this Mira process is attached to.

use crate::project::Project;
use crate::store::{Store, sessions};
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub version: &'static str,
    /// The symbol index, when it answered within the command's time budget.
    pub index: Option<IndexSummary>,
    pub project: ProjectStatus,
    pub database: Option<String>,
    pub schema_version: Option<u32>,
    /// Why the store is unavailable, when it is.
    pub store_error: Option<String>,
    /// Mira processes attached to the same database (this one included).
    pub attached_processes: usize,
    pub position_encoding: &'static str,
    pub open_documents: usize,
    pub provider: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct IndexSummary {
    pub files: usize,
    pub symbols: usize,
    /// The cold index has finished (until then results are partial).
    pub ready: bool,
    pub skipped: usize,
}

#[derive(Debug, Serialize)]
pub struct ProjectStatus {
    pub root: String,
    pub name: String,
    pub detection: String,
}

impl From<&Project> for ProjectStatus {
    fn from(p: &Project) -> Self {
        ProjectStatus {
            root: p.root.display().to_string(),
            name: p.name.clone(),
            detection: p.detection.to_string(),
        }
    }
}

/// Reads the store: call from a blocking context.
pub fn store_facts(store: &Store) -> (Option<u32>, usize) {
    let schema = store.schema_version().ok();
    let live = store.read(sessions::live).map(|l| l.len()).unwrap_or(0);
    (schema, live)
}

impl Status {
    /// One line for clients that only show a status line (Helix).
    pub fn summary(&self) -> String {
        let store = match (&self.database, &self.store_error) {
            (_, Some(e)) => format!("store unavailable: {e}"),
            (Some(db), None) => format!(
                "store {db} (schema {}, {} Mira process(es) attached)",
                self.schema_version.unwrap_or(0),
                self.attached_processes
            ),
            (None, None) => "no store".into(),
        };
        let index = match &self.index {
            Some(i) if i.ready => format!("index {} files, {} symbols", i.files, i.symbols),
            Some(i) => format!("indexing… {} files so far", i.files),
            None => "index unavailable".into(),
        };
        format!(
            "Mira {} · project {} ({}) · {} · {} · provider {}",
            self.version,
            self.project.name,
            self.project.detection,
            index,
            store,
            self.provider.as_deref().unwrap_or("not configured")
        )
    }
}
