//! Which files the model's file tools may show: the sensitive-file rules (built-in list plus
//! `.miraignore`, see [`crate::sensitive`]) unless the user set `agent.allow_sensitive`.
//! Allowed or not, whatever a tool returns is still redacted by the turn loop.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::sensitive::SensitiveFiles;

use super::{ToolError, confine};

/// The refusal the model sees; names no rule file path, only the project-relative file.
pub const WITHHELD: &str = "withheld: sensitive file (see .miraignore)";

/// The rules as loaded: `Err` when a `.miraignore` exists but cannot be used. Reads are then
/// refused until it is fixed (the user meant it to protect something); listings fall back to
/// the built-in list.
type Rules = Result<SensitiveFiles, (SensitiveFiles, String)>;

#[derive(Clone, Debug)]
pub struct FileGuard {
    /// Read at the first check, not when the turn starts: compiling the rules took 1.6 ms of
    /// every turn's time to first token, and most turns call no file tool. Clones share them.
    rules: Arc<OnceLock<Rules>>,
    root: Arc<Path>,
    allow: bool,
}

impl FileGuard {
    /// The rules in force for `root` (project and global `.miraignore`), or everything allowed.
    pub fn load(root: &Path, allow: bool) -> FileGuard {
        FileGuard {
            rules: Arc::new(OnceLock::new()),
            root: root.into(),
            allow,
        }
    }

    /// Only the built-in list (tests and callers without a project).
    pub fn built_in(root: &Path) -> FileGuard {
        FileGuard {
            rules: Arc::new(OnceLock::from(Ok(SensitiveFiles::built_in_only(root)))),
            root: root.into(),
            allow: false,
        }
    }

    fn rules(&self) -> &Rules {
        self.rules.get_or_init(|| {
            crate::sensitive::load_for(&self.root).map_err(|e| {
                tracing::warn!("{e}");
                (SensitiveFiles::built_in_only(&self.root), e.to_string())
            })
        })
    }

    /// Refuses a file the model may not read or write.
    pub fn check(&self, root: &Path, path: &Path) -> Result<(), ToolError> {
        if self.allow {
            return Ok(());
        }
        let shown = confine::display(root, path);
        match self.rules() {
            Err(_) => Err(ToolError::Refused(format!(
                "{WITHHELD}: the .miraignore rules cannot be read, so no file is shown until they \
                 are fixed (`mira doctor` says what is wrong)"
            ))),
            Ok(rules) => match rules.is_sensitive(path) {
                Some(reason) => Err(ToolError::Refused(format!(
                    "{WITHHELD}: `{shown}` matches the {reason}; the user can allow it with \
                     agent.allow_sensitive = true"
                ))),
                None => Ok(()),
            },
        }
    }

    /// Whether listings and searches leave this file (or directory) out.
    pub fn hides(&self, path: &Path, is_dir: bool) -> bool {
        if self.allow {
            return false;
        }
        let rules = match self.rules() {
            Ok(r) | Err((r, _)) => r,
        };
        if is_dir {
            rules.is_sensitive_dir(path).is_some()
        } else {
            rules.is_sensitive(path).is_some()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_files_are_refused_without_absolute_paths_unless_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".miraignore"), "config/prod.toml\n").unwrap();
        let guard = FileGuard::load(&root, false);
        for rel in [
            ".env",
            "certs/server.pem",
            "config/prod.toml",
            ".aws/credentials",
        ] {
            let err = guard.check(&root, &root.join(rel)).unwrap_err().to_string();
            assert!(err.contains(WITHHELD) && err.contains(rel), "{err}");
            assert!(!err.contains(root.to_str().unwrap()), "{err}");
            assert!(guard.hides(&root.join(rel), false), "{rel}");
        }
        assert!(guard.check(&root, &root.join("src/main.rs")).is_ok());
        assert!(guard.check(&root, &root.join(".env.example")).is_ok());
        let allowed = FileGuard::load(&root, true);
        assert!(allowed.check(&root, &root.join(".env")).is_ok());
        assert!(!allowed.hides(&root.join(".env"), false));
    }

    #[test]
    fn a_broken_miraignore_refuses_reads_and_keeps_the_built_in_list() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".miraignore"), "bad{.txt\n").unwrap();
        let guard = FileGuard::load(&root, false);
        let err = guard
            .check(&root, &root.join("src/main.rs"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("mira doctor"), "{err}");
        assert!(guard.hides(&root.join(".env"), false));
        assert!(!guard.hides(&root.join("src/main.rs"), false));
    }
}
