//! The symbol table as every query must see it: what is on disk, with each open buffer's
//! unsaved symbols over it.
//!
//! Keystrokes are far more frequent than queries, so an edited buffer's symbols reach the
//! table lazily. The table is therefore private here: a reader gets it only through
//! [`LiveTable::view`], which brings every edited buffer in first. Forgetting to sync is
//! not a convention to remember but a borrow that does not compile (issue 20: inline
//! completion read the table unsynced and missed the open file's definitions).

use super::OpenEntry;
use crate::documents::DocId;
use crate::index::model::FileSymbols;
use crate::index::registry::Lang;
use crate::index::table::SymbolTable;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Default)]
pub(super) struct LiveTable {
    table: SymbolTable,
    /// Open documents whose symbols changed since the table last saw them.
    dirty: HashSet<DocId>,
}

/// A consistent read of the index: the synced table and the open documents.
pub(super) struct View<'a> {
    pub table: &'a SymbolTable,
    pub open: &'a HashMap<DocId, OpenEntry>,
    pub root: &'a Path,
}

impl LiveTable {
    /// `doc`'s symbols changed (opened, edited, re-parsed).
    pub fn touch(&mut self, doc: DocId) {
        self.dirty.insert(doc);
    }

    /// `doc` closed: what the disk says replaces it.
    pub fn untouch(&mut self, doc: &DocId) {
        self.dirty.remove(doc);
    }

    /// A file's symbols as read from disk (callers skip open documents: unsaved text wins).
    pub fn upsert(&mut self, key: String, lang: Lang, ascii: bool, symbols: Arc<FileSymbols>) {
        self.table.upsert(key, lang, ascii, symbols);
    }

    pub fn remove(&mut self, key: &str) {
        self.table.remove(key);
    }

    /// The keys of the files under `root` (to drop a workspace folder).
    pub fn keys_under(&self, root: &Path) -> Vec<String> {
        self.table
            .files()
            .map(|(k, _)| k)
            .filter(|k| Path::new(k.as_str()).starts_with(root))
            .cloned()
            .collect()
    }

    /// Brings every edited buffer into the table, then lends it out with the open documents.
    pub fn view<'a>(&'a mut self, open: &'a HashMap<DocId, OpenEntry>, root: &'a Path) -> View<'a> {
        for doc in std::mem::take(&mut self.dirty) {
            if let Some(e) = open.get(&doc) {
                self.table.upsert(
                    e.key.clone(),
                    e.doc.lang,
                    e.doc.text().is_ascii(),
                    Arc::new(e.doc.symbols.clone()),
                );
            }
        }
        View {
            table: &self.table,
            open,
            root,
        }
    }
}

impl View<'_> {
    pub fn path_for(&self, key: &str) -> PathBuf {
        path_for(self.root, key)
    }
}

/// A table key's file: project keys are relative to the root, other folders' absolute.
pub(super) fn path_for(root: &Path, key: &str) -> PathBuf {
    let p = Path::new(key);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(key)
    }
}
