//! `mira.status`: one summary of what this Mira process is attached to.

use crate::project::Project;
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub version: &'static str,
    /// This server's process id (what to look for in `ps`; editors' restart tests kill it).
    pub pid: u32,
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
#[serde(rename_all = "camelCase")]
pub struct IndexSummary {
    pub files: usize,
    pub symbols: usize,
    /// The cold index of every folder has finished (until then results are partial).
    pub ready: bool,
    /// Every folder's symbols are in the index's view: workspace/symbol, definitions and
    /// outlines are complete even while `ready` waits for references and code search to be
    /// stored.
    pub symbols_ready: bool,
    /// Every folder indexed: the project's first, then the other workspace folders.
    pub folders: Vec<String>,
    pub skipped: usize,
    /// The files left out and why (the first [`SKIPPED_LISTED`]).
    pub skipped_files: Vec<SkippedFile>,
    /// Folders that could not be indexed, and why (their symbols are missing); left out
    /// while there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_folders: Vec<FailedFolder>,
}

#[derive(Debug, Serialize)]
pub struct FailedFolder {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

/// Enough to find the big generated file; a status is not a report.
pub const SKIPPED_LISTED: usize = 100;

impl IndexSummary {
    pub fn new(s: &crate::index::IndexStatus, extra: &[std::path::PathBuf]) -> IndexSummary {
        let mut folders: Vec<String> = s
            .roots
            .iter()
            .map(|(r, _)| r.display().to_string())
            .collect();
        for f in extra.iter().chain(s.failed.iter().map(|(r, _)| r)) {
            let f = f.display().to_string();
            if !folders.contains(&f) {
                folders.push(f);
            }
        }
        IndexSummary {
            files: s.files,
            symbols: s.symbols,
            ready: s.cold_index_done,
            symbols_ready: s.symbols_done,
            folders,
            skipped: s.skipped().count(),
            skipped_files: s
                .skipped()
                .take(SKIPPED_LISTED)
                .map(|(root, k)| SkippedFile {
                    path: root.join(&k.path).display().to_string(),
                    reason: k.reason.to_string(),
                })
                .collect(),
            failed_folders: s
                .failed
                .iter()
                .map(|(root, reason)| FailedFolder {
                    path: root.display().to_string(),
                    reason: reason.clone(),
                })
                .collect(),
        }
    }

    fn line(&self) -> String {
        let mut line = if self.ready {
            format!("index {} files, {} symbols", self.files, self.symbols)
        } else if self.symbols_ready {
            format!(
                "index {} files, {} symbols; references and code search indexing…",
                self.files, self.symbols
            )
        } else {
            format!("indexing… {} files so far", self.files)
        };
        if self.folders.len() > 1 {
            line.push_str(&format!(" in {} folders", self.folders.len()));
        }
        if self.skipped > 0 {
            line.push_str(&format!(
                " ({} skipped: {}",
                self.skipped, self.skipped_files[0].path
            ));
            if self.skipped > 1 {
                line.push_str(", …");
            }
            line.push(')');
        }
        for f in &self.failed_folders {
            line.push_str(&format!(
                "; {} not indexed: {} (fix that, then run mira.reindex)",
                f.path, f.reason
            ));
        }
        line
    }
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
            Some(i) => i.line(),
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
