//! The watcher's view of ignore files: the rules the crawl's walker (`ignore::WalkBuilder`)
//! applies, for one path at a time. The walker reads every directory's `.gitignore` and
//! `.ignore` on its way down; the watcher sees single paths, so it reads the same files for
//! the directories above each path (cached until an ignore file changes).
//!
//! Precedence follows git and the walker: a deeper directory's file wins over a shallower
//! one, `.ignore` over `.gitignore` in the same directory, `!negations` re-include, and
//! nothing inside an ignored directory can be re-included.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The names the walker reads in every directory.
const PER_DIRECTORY: [&str; 2] = [".gitignore", ".ignore"];

/// A changed file with this name changes which files are ignored.
pub(crate) fn is_ignore_file(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| PER_DIRECTORY.contains(&n) || n == "exclude")
}

pub(crate) struct IgnoreRules {
    root: PathBuf,
    /// The root's own rules: `.git/info/exclude` and the global excludes file under its
    /// `.gitignore`/`.ignore` (the walker's order, lowest precedence first).
    root_rules: Gitignore,
    dirs: HashMap<PathBuf, Gitignore>,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> IgnoreRules {
        IgnoreRules {
            root: root.to_path_buf(),
            root_rules: root_rules(root),
            dirs: HashMap::new(),
        }
    }

    /// An ignore file changed: read them again when next asked.
    pub(crate) fn forget_cached(&mut self) {
        self.root_rules = root_rules(&self.root);
        self.dirs.clear();
    }

    /// Whether the walker would leave `path` out: it, or a directory above it inside the
    /// root, is ignored by the rules in force there. Paths outside the root are ignored.
    pub(crate) fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return true;
        };
        let parts: Vec<_> = rel.components().collect();
        let mut at = self.root.clone();
        for (i, part) in parts.iter().enumerate() {
            let parent = at.clone();
            at.push(part);
            let last = i + 1 == parts.len();
            if self.decides_ignored(&parent, &at, if last { is_dir } else { true }) {
                return true;
            }
        }
        false
    }

    /// The verdict on `path` (whose directory is `dir`): the deepest rule that matches it,
    /// from `dir` up to the root.
    fn decides_ignored(&mut self, dir: &Path, path: &Path, is_dir: bool) -> bool {
        let mut level = Some(dir);
        while let Some(d) = level {
            let m = if d == self.root {
                let own = self.rules_of(d).matched(path, is_dir);
                if own.is_none() {
                    self.root_rules.matched(path, is_dir)
                } else {
                    own
                }
            } else {
                self.rules_of(d).matched(path, is_dir)
            };
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
            if d == self.root {
                break;
            }
            level = d.parent();
        }
        false
    }

    fn rules_of(&mut self, dir: &Path) -> &Gitignore {
        self.dirs.entry(dir.to_path_buf()).or_insert_with(|| {
            let mut b = GitignoreBuilder::new(dir);
            for name in PER_DIRECTORY {
                let f = dir.join(name);
                if f.is_file() {
                    let _ = b.add(f);
                }
            }
            b.build().unwrap_or_else(|_| Gitignore::empty())
        })
    }
}

fn root_rules(root: &Path) -> Gitignore {
    let mut b = GitignoreBuilder::new(root);
    if let Some(global) = global_excludes() {
        let _ = b.add(global);
    }
    let exclude = root.join(".git/info/exclude");
    if exclude.is_file() {
        let _ = b.add(exclude);
    }
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The global excludes file the walker also reads (`core.excludesFile`, else
/// `$XDG_CONFIG_HOME/git/ignore`).
fn global_excludes() -> Option<PathBuf> {
    let (g, err) = Gitignore::global();
    if err.is_some() || g.is_empty() {
        return None;
    }
    Some(g.path().to_path_buf()).filter(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, body) in files {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        dir
    }

    /// The walker's verdict for every file, to compare the watcher's with.
    fn walked(root: &Path) -> Vec<String> {
        let mut out: Vec<String> = ignore::WalkBuilder::new(root)
            .require_git(false)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().strip_prefix(root).unwrap().display().to_string())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn nested_ignore_files_rule_like_the_walker() {
        let files = [
            (".gitignore", "*.gen.rs\n/target\n"),
            ("a/.gitignore", "secret.rs\n!keep.gen.rs\n"),
            ("a/b/.ignore", "local.rs\n"),
            ("a/b/.gitignore", "!local.rs\n"),
            ("a/b/c/deep.rs", ""),
            ("a/b/local.rs", ""),
            ("a/b/other.rs", ""),
            ("a/secret.rs", ""),
            ("a/keep.gen.rs", ""),
            ("a/drop.gen.rs", ""),
            ("b/secret.rs", ""),
            ("b/x.gen.rs", ""),
            ("target/out.rs", ""),
            ("sub/target/kept.rs", ""),
            ("lib.rs", ""),
            ("logs/.gitignore", "*\n!.gitignore\n"),
            ("logs/today.rs", ""),
        ];
        let dir = tree(&files);
        let root = dir.path();
        let mut rules = IgnoreRules::new(root);
        let mut watcher: Vec<String> = files
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !p.rsplit('/').next().unwrap().starts_with('.'))
            .filter(|p| !rules.is_ignored(&root.join(p), false))
            .map(String::from)
            .collect();
        watcher.sort();
        let walker: Vec<String> = walked(root)
            .into_iter()
            .filter(|p| !p.rsplit('/').next().unwrap().starts_with('.'))
            .collect();
        assert_eq!(watcher, walker);
        assert_eq!(
            walker,
            [
                "a/b/c/deep.rs",
                "a/b/other.rs",
                "a/keep.gen.rs",
                "b/secret.rs",
                "lib.rs",
                "sub/target/kept.rs"
            ]
        );
    }

    #[test]
    fn a_changed_ignore_file_is_read_again_after_forget_cached() {
        let dir = tree(&[
            ("sub/.gitignore", "old.rs\n"),
            ("sub/old.rs", ""),
            ("sub/new.rs", ""),
        ]);
        let root = dir.path();
        let mut rules = IgnoreRules::new(root);
        assert!(rules.is_ignored(&root.join("sub/old.rs"), false));
        assert!(!rules.is_ignored(&root.join("sub/new.rs"), false));
        std::fs::write(root.join("sub/.gitignore"), "new.rs\n").unwrap();
        assert!(is_ignore_file(&root.join("sub/.gitignore")));
        rules.forget_cached();
        assert!(!rules.is_ignored(&root.join("sub/old.rs"), false));
        assert!(rules.is_ignored(&root.join("sub/new.rs"), false));
        assert!(rules.is_ignored(Path::new("/elsewhere/x.rs"), false));
    }
}
