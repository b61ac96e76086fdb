//! The editor's open files' folders are crawled first: the open files themselves are parsed
//! live as they open, and the files beside them (what the user is most likely to jump to)
//! should not wait behind the rest of the project. The actor notes each opened file's folder
//! in [`OpenFolders`]; a crawl walks those folders one after another before its parallel walk
//! of everything else, which then skips them.
//!
//! A folder the walk would not enter (hidden, ignored, excluded, sensitive, or reached
//! through a symlink) is not walked first either: it is left to the ordinary walk's verdict.

use crate::sensitive::SensitiveFiles;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Folders remembered at most: the recent ones matter, and each one is walked on its own.
const KEPT: usize = 16;

/// Folders of the files the editor opened, most recent last; shared by every clone (the
/// options of each workspace folder's crawl, and the actor that notes them).
#[derive(Clone, Debug, Default)]
pub struct OpenFolders(Arc<Mutex<Vec<PathBuf>>>);

impl OpenFolders {
    /// Notes the folder of a file the editor opened.
    pub fn note(&self, file: &Path) {
        let Some(dir) = file.parent() else {
            return;
        };
        let mut dirs = self.0.lock().unwrap_or_else(|e| e.into_inner());
        dirs.retain(|d| d != dir);
        dirs.push(dir.to_path_buf());
        if dirs.len() > KEPT {
            dirs.remove(0);
        }
    }

    fn snapshot(&self) -> Vec<PathBuf> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The noted folders under `root` that the walk would enter, outermost kept when one holds
/// another (its walk covers the inner one), most recent first.
pub(super) fn folders(
    root: &Path,
    opened: &OpenFolders,
    sensitive: &SensitiveFiles,
    exclude: Option<&ignore::overrides::Override>,
) -> Vec<PathBuf> {
    let mut rules = crate::index::ignores::IgnoreRules::new(root);
    let mut out: Vec<PathBuf> = Vec::new();
    for noted in opened.snapshot().into_iter().rev() {
        // The real folder: a path through a symlink is left to the walk's link rules.
        let Ok(dir) = std::fs::canonicalize(&noted) else {
            continue;
        };
        let Ok(rel) = dir.strip_prefix(root) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let mut at = root.to_path_buf();
        let entered = rel.components().all(|c| {
            at.push(c);
            !c.as_os_str().to_string_lossy().starts_with('.')
                && sensitive.is_sensitive_dir(&at).is_none()
                && !exclude.is_some_and(|o| o.matched(&at, true).is_ignore())
        });
        if !entered || rules.is_ignored(&dir, true) {
            continue;
        }
        if out.iter().any(|o| dir.starts_with(o)) {
            continue;
        }
        out.retain(|o| !o.starts_with(&dir));
        out.push(dir);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::stages::StageClock;
    use super::super::{CrawlOptions, Found, Walk};
    use super::*;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    /// The paths a walk of `root` finds, in the order it sends them.
    fn walk(root: &Path, opts: &CrawlOptions) -> Vec<String> {
        let known = HashMap::new();
        let (clock, abort, to_examine) = (
            StageClock::default(),
            AtomicBool::new(false),
            AtomicUsize::new(0),
        );
        let (tx, rx) = std::sync::mpsc::sync_channel(10_000);
        Walk {
            root,
            opts,
            known: &known,
            clock: &clock,
            abort: &abort,
            to_examine: &to_examine,
        }
        .run(tx);
        rx.into_iter()
            .filter_map(|f| match f {
                Found::File(c) => Some(c.rel),
                Found::Error(_) => None,
            })
            .collect()
    }

    #[test]
    fn the_open_files_folders_are_walked_first_and_nothing_twice() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(root.join(".gitignore"), "gen/\n").unwrap();
        for d in ["a", "b", "c", "c/inner", "gen", "z"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
            for i in 0..20 {
                std::fs::write(root.join(d).join(format!("f{i}.rs")), "fn f() {}\n").unwrap();
            }
        }
        let opts = CrawlOptions::default();
        opts.opened.note(&root.join("c/f1.rs"));
        opts.opened.note(&root.join("gen/f1.rs"));
        opts.opened.note(&root.join("c/inner/f1.rs"));
        opts.opened.note(Path::new("/elsewhere/f.rs"));
        let found = walk(&root, &opts);
        let first: Vec<&String> = found.iter().take(40).collect();
        assert!(
            first.iter().all(|p| p.starts_with("c/")),
            "the open folder (with its subfolder) comes first: {first:?}"
        );
        let mut unique = found.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), found.len(), "each file once");
        assert_eq!(
            found.len(),
            100,
            "a, b, c, c/inner and z; never the ignored gen/"
        );
        assert!(!found.iter().any(|p| p.starts_with("gen/")));
    }
}
