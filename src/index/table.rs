//! The in-memory view every query reads: each file's symbols (from disk, or from the live
//! buffer when open) plus a character mask per name for the fuzzy prefilter.

use super::fuzzy::{self, Tier};
use super::model::{FileSymbols, RefKind, Symbol, SymbolKind};
use super::registry::Lang;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

pub struct FileEntry {
    pub lang: Lang,
    /// Byte columns equal UTF-16/32 columns (no conversion needs the text).
    pub ascii: bool,
    pub symbols: Arc<FileSymbols>,
    masks: Vec<u64>,
    /// Every name back to back, so a query scans contiguous memory instead of chasing one
    /// heap pointer per symbol; `ends[i]` is where name `i` ends.
    arena: Box<[u8]>,
    ends: Vec<u32>,
}

/// One symbol found by a query, with enough to answer without another lookup.
#[derive(Clone, Debug)]
pub struct SymbolHit {
    /// The table key: a project-relative path, or an absolute path for files outside it.
    pub path: String,
    pub lang: Lang,
    pub ascii: bool,
    pub symbol: Symbol,
}

#[derive(Default)]
pub struct SymbolTable {
    files: HashMap<String, FileEntry>,
    symbol_count: usize,
}

fn kind_rank(k: SymbolKind) -> u8 {
    use SymbolKind::*;
    match k {
        Class | Struct | Interface | Enum | Function | Method | Constructor | Module
        | Namespace | TypeAlias | Macro => 0,
        Constant | EnumMember | Impl => 1,
        Field | Property | Variable => 2,
    }
}

impl SymbolTable {
    pub fn upsert(&mut self, path: String, lang: Lang, ascii: bool, symbols: Arc<FileSymbols>) {
        let masks = symbols
            .symbols
            .iter()
            .map(|s| fuzzy::char_mask(&s.name))
            .collect();
        let mut arena = Vec::new();
        let mut ends = Vec::with_capacity(symbols.symbols.len());
        for s in &symbols.symbols {
            arena.extend_from_slice(s.name.as_bytes());
            ends.push(arena.len() as u32);
        }
        self.symbol_count += symbols.symbols.len();
        if let Some(old) = self.files.insert(
            path,
            FileEntry {
                lang,
                ascii,
                symbols,
                masks,
                arena: arena.into_boxed_slice(),
                ends,
            },
        ) {
            self.symbol_count -= old.symbols.symbols.len();
        }
    }

    pub fn remove(&mut self, path: &str) {
        if let Some(old) = self.files.remove(path) {
            self.symbol_count -= old.symbols.symbols.len();
        }
    }

    /// Whether any file defines `name` (no allocation, no ranking).
    pub fn defines(&self, name: &str) -> bool {
        self.files.values().any(|e| {
            let mut start = 0usize;
            e.ends.iter().any(|&end| {
                let hit = &e.arena[start..end as usize] == name.as_bytes();
                start = end as usize;
                hit
            })
        })
    }

    /// Every file, keyed by its table path.
    pub fn files(&self) -> impl Iterator<Item = (&String, &FileEntry)> {
        self.files.iter()
    }

    pub fn get(&self, path: &str) -> Option<&FileEntry> {
        self.files.get(path)
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    pub fn symbol_count(&self) -> usize {
        self.symbol_count
    }

    fn hit(&self, path: &str, e: &FileEntry, i: usize) -> SymbolHit {
        SymbolHit {
            path: path.to_string(),
            lang: e.lang,
            ascii: e.ascii,
            symbol: e.symbols.symbols[i].clone(),
        }
    }

    /// Fuzzy search over every name, best first: exact > prefix > word starts >
    /// subsequence; then shorter names, types and functions before variables, then path.
    pub fn search(&self, query: &str, kind: Option<SymbolKind>, limit: usize) -> Vec<SymbolHit> {
        let q = fuzzy::Query::new(query);
        type Found<'a> = (Tier, i32, u8, &'a str, &'a FileEntry, usize);
        // Both cores: files are scored in parallel, each worker keeping its own list.
        let mut found: Vec<Found<'_>> = self
            .files
            .par_iter()
            .fold(Vec::new, |mut acc, (path, e)| {
                let mut start = 0usize;
                for (i, (&end, &mask)) in e.ends.iter().zip(&e.masks).enumerate() {
                    let name = &e.arena[start..end as usize];
                    start = end as usize;
                    let Some((tier, score)) = q.score(name, mask) else {
                        continue;
                    };
                    let sk = e.symbols.symbols[i].kind;
                    if kind.is_none_or(|k| k == sk) {
                        acc.push((tier, score, kind_rank(sk), path.as_str(), e, i));
                    }
                }
                acc
            })
            .reduce(Vec::new, |mut a, mut b| {
                if a.len() < b.len() {
                    std::mem::swap(&mut a, &mut b);
                }
                a.extend(b);
                a
            });
        let cmp = |a: &Found<'_>, b: &Found<'_>| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(b.3))
                .then(a.5.cmp(&b.5))
        };
        if found.len() > limit && limit > 0 {
            found.select_nth_unstable_by(limit - 1, cmp);
            found.truncate(limit);
        }
        found.sort_unstable_by(cmp);
        found
            .into_iter()
            .take(limit)
            .map(|(_, _, _, path, e, i)| self.hit(path, e, i))
            .collect()
    }

    /// Definitions named `name`, ranked: the file itself, then files it imports from, then
    /// the rest of the project; definitions before declarations; types and functions first.
    pub fn definitions(&self, name: &str, from: Option<&str>, limit: usize) -> Vec<SymbolHit> {
        let imports: Vec<(&str, &str)> = from
            .and_then(|f| self.files.get(f))
            .map(|e| {
                e.symbols
                    .refs
                    .iter()
                    .filter(|r| r.kind == RefKind::Import)
                    .map(|r| (r.name.as_str(), r.path.as_deref().unwrap_or("")))
                    .collect()
            })
            .unwrap_or_default();
        let imported = |path: &str| -> bool {
            if imports.iter().any(|(n, _)| *n == name) {
                return true;
            }
            let stem = module_stem(path);
            imports
                .iter()
                .any(|(n, p)| *n == stem || p.split(['/', '.', ':', '#']).any(|seg| seg == stem))
        };
        let mut found: Vec<(u8, bool, u8, usize, &str, &FileEntry, usize)> = Vec::new();
        for (path, e) in &self.files {
            for (i, s) in e.symbols.symbols.iter().enumerate() {
                if s.name != name {
                    continue;
                }
                let place = if Some(path.as_str()) == from {
                    0
                } else if imported(path) {
                    1
                } else {
                    2
                };
                let distance = from.map_or(0, |f| dir_distance(f, path));
                found.push((
                    place,
                    s.declaration,
                    kind_rank(s.kind),
                    distance,
                    path,
                    e,
                    i,
                ));
            }
        }
        found.sort_unstable_by(|a, b| {
            (a.0, a.1, a.2, a.3, a.4, a.6).cmp(&(b.0, b.1, b.2, b.3, b.4, b.6))
        });
        found
            .into_iter()
            .take(limit)
            .map(|(.., path, e, i)| self.hit(path, e, i))
            .collect()
    }
}

/// `src/util/strings.rs` → `strings`.
fn module_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    if matches!(stem, "mod" | "index" | "__init__") {
        // The module is named by its directory.
        path.rsplit('/').nth(1).unwrap_or(stem)
    } else {
        stem
    }
}

/// Directory steps between two files: nearer definitions rank first.
fn dir_distance(a: &str, b: &str) -> usize {
    let da: Vec<&str> = a.split('/').collect();
    let db: Vec<&str> = b.split('/').collect();
    let common = da.iter().zip(&db).take_while(|(x, y)| x == y).count();
    (da.len() - common) + (db.len() - common)
}
