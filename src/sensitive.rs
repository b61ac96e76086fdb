//! Files the model is not shown: a built-in list of where credentials live (`.env`, private
//! keys, registry and cloud credentials, kubeconfigs, …) plus the user's own `.miraignore`
//! files in gitignore syntax:
//!
//! - the project's: `<project root>/.miraignore`;
//! - the global one: `$XDG_CONFIG_HOME/mira/miraignore`, else `~/.config/mira/miraignore`
//!   (beside `config.toml`; see [`global_path`]).
//!
//! The project file overrides the global one, which overrides the built-in list, and a `!rule`
//! in either lets a file through again (`!.env.ci` shows a template the built-in list hides).
//! Env-file templates (`.env.example`, `.env.sample`, `.env.template`, `.env.dist`,
//! `.env.defaults`) are not sensitive: they are committed to show which variables exist, which
//! the model needs to know; whatever secret one holds anyway is still redacted. Public keys
//! (`id_rsa.pub`) are not sensitive either.
//!
//! A leaf module: it imports nothing from Mira.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The project's own rules, at the root of the project.
pub const PROJECT_FILE: &str = ".miraignore";

/// The built-in rules, in gitignore syntax, each with why it is there.
const BUILT_IN: &[(&str, &str)] = &[
    (".env", "environment file"),
    (".env.*", "environment file"),
    ("*.env", "environment file"),
    (".envrc", "direnv environment file"),
    ("!.env.example", "env template"),
    ("!.env.sample", "env template"),
    ("!.env.template", "env template"),
    ("!.env.dist", "env template"),
    ("!.env.defaults", "env template"),
    ("!*.env.example", "env template"),
    ("*.pem", "certificate or private key"),
    ("*.key", "private key"),
    ("*.p12", "PKCS#12 key store"),
    ("*.pfx", "PKCS#12 key store"),
    ("*.jks", "Java key store"),
    ("*.keystore", "key store"),
    ("*.ppk", "PuTTY private key"),
    ("id_rsa*", "SSH private key"),
    ("id_dsa*", "SSH private key"),
    ("id_ecdsa*", "SSH private key"),
    ("id_ed25519*", "SSH private key"),
    ("!id_*.pub", "SSH public key"),
    (".npmrc", "npm credentials"),
    (".pypirc", "PyPI credentials"),
    (".netrc", "netrc credentials"),
    ("_netrc", "netrc credentials"),
    (".git-credentials", "git credentials"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL credentials"),
    (".htpasswd", "HTTP password file"),
    ("credentials.json", "credentials file"),
    ("client_secret*.json", "OAuth client secret"),
    ("**/.aws/credentials", "AWS credentials"),
    ("**/.docker/config.json", "Docker registry credentials"),
    ("**/.kube/config", "kubeconfig"),
    ("kubeconfig", "kubeconfig"),
    ("*.kubeconfig", "kubeconfig"),
    ("kubeconfig.y*ml", "kubeconfig"),
    ("*.tfstate", "Terraform state (holds secrets)"),
    ("*.tfstate.backup", "Terraform state (holds secrets)"),
    (".vault-token", "Vault token"),
    ("secrets.y*ml", "secrets file"),
    ("master.key", "Rails master key"),
];

/// The global `miraignore`: `$XDG_CONFIG_HOME/mira/miraignore`, else
/// `~/.config/mira/miraignore` (the same folder as Mira's `config.toml`).
pub fn global_path(xdg_config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    xdg_config_home
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join("mira/miraignore"))
        .or_else(|| home.map(|h| h.join(".config/mira/miraignore")))
}

/// The rules in force for the project at `root`: the built-in list, its `.miraignore` and
/// the global file found through this process's `XDG_CONFIG_HOME` / `HOME`.
pub fn load_for(root: &Path) -> Result<SensitiveFiles, SensitiveError> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let global = global_path(xdg.as_deref(), home.as_deref());
    SensitiveFiles::load(root, global.as_deref())
}

/// Which list a rule comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    BuiltIn,
    /// The global `miraignore` at this path.
    Global(PathBuf),
    /// The project's `.miraignore` at this path.
    Project(PathBuf),
}

/// Why a file is withheld: the rule that matched and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    pub pattern: String,
    pub source: Source,
}

/// Names no absolute path, so it can be shown to the model.
impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::BuiltIn => write!(f, "built-in rule `{}`", self.pattern),
            Source::Global(_) => write!(f, "rule `{}` in the global miraignore", self.pattern),
            Source::Project(_) => write!(f, "rule `{}` in {PROJECT_FILE}", self.pattern),
        }
    }
}

/// A `.miraignore` that exists but cannot be used.
#[derive(Debug)]
pub struct SensitiveError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for SensitiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot use {}: {} (fix or remove the rule; gitignore syntax)",
            self.path.display(),
            self.message
        )
    }
}

impl std::error::Error for SensitiveError {}

/// The sensitive-file rules in force for one project.
#[derive(Clone, Debug)]
pub struct SensitiveFiles {
    root: PathBuf,
    /// Highest precedence first: project, global, built-in.
    layers: Vec<(Gitignore, Source)>,
    rule_count: usize,
}

impl SensitiveFiles {
    /// The built-in list plus `<root>/.miraignore` and the global file at `global`, where
    /// they exist. A file that exists but cannot be read or holds a bad rule is an error: the
    /// user meant it to protect something.
    pub fn load(root: &Path, global: Option<&Path>) -> Result<Self, SensitiveError> {
        let mut layers = Vec::new();
        let project = root.join(PROJECT_FILE);
        if let Some(g) = user_file(root, &project)? {
            layers.push((g, Source::Project(project)));
        }
        if let Some(path) = global
            && let Some(g) = user_file(root, path)?
        {
            layers.push((g, Source::Global(path.to_path_buf())));
        }
        layers.push((built_in(root), Source::BuiltIn));
        let rule_count = layers.iter().map(|(g, _)| g.len()).sum();
        Ok(SensitiveFiles {
            root: root.to_path_buf(),
            layers,
            rule_count,
        })
    }

    /// Only the built-in list (no project, no global file).
    pub fn built_in_only(root: &Path) -> Self {
        SensitiveFiles {
            root: root.to_path_buf(),
            layers: vec![(built_in(root), Source::BuiltIn)],
            rule_count: BUILT_IN.len(),
        }
    }

    /// Why the file at `path` (relative to the root, or absolute) is withheld, if it is.
    pub fn is_sensitive(&self, path: &Path) -> Option<Reason> {
        self.matched(path, false)
    }

    /// Why everything under the directory at `path` is withheld, if it is (a `secrets/` rule).
    pub fn is_sensitive_dir(&self, path: &Path) -> Option<Reason> {
        self.matched(path, true)
    }

    /// How many rules are in force, built-in ones included (reported by `mira doctor`).
    pub fn rule_count(&self) -> usize {
        self.rule_count
    }

    /// The `.miraignore` files in force, project first (reported by `mira doctor`).
    pub fn sources(&self) -> Vec<&Path> {
        self.layers
            .iter()
            .filter_map(|(_, s)| match s {
                Source::Project(p) | Source::Global(p) => Some(p.as_path()),
                Source::BuiltIn => None,
            })
            .collect()
    }

    fn matched(&self, path: &Path, is_dir: bool) -> Option<Reason> {
        let rel = self.relative(path);
        if rel.as_os_str().is_empty() {
            return None;
        }
        for (g, source) in &self.layers {
            match g.matched_path_or_any_parents(&rel, is_dir) {
                Match::None => continue,
                Match::Whitelist(_) => return None,
                Match::Ignore(glob) => {
                    return Some(Reason {
                        pattern: glob.original().to_string(),
                        source: source.clone(),
                    });
                }
            }
        }
        None
    }

    /// The path below the root; a path outside it keeps its components without the root, so
    /// name rules (`*.pem`, `.env`) still apply to it.
    fn relative(&self, path: &Path) -> PathBuf {
        let path = path.strip_prefix(&self.root).unwrap_or(path);
        path.components()
            .filter(|c| matches!(c, Component::Normal(_) | Component::ParentDir))
            .collect()
    }
}

fn built_in(root: &Path) -> Gitignore {
    let mut b = GitignoreBuilder::new(root);
    // Case-insensitive file systems (macOS, Windows) serve `.ENV` and `KEY.PEM` as well.
    b.case_insensitive(true).expect("case folding is supported");
    for (rule, _why) in BUILT_IN {
        b.add_line(None, rule)
            .expect("valid built-in sensitive-file rule");
    }
    b.build().expect("valid built-in sensitive-file rules")
}

/// A user's rules file, or `None` when it does not exist.
fn user_file(root: &Path, path: &Path) -> Result<Option<Gitignore>, SensitiveError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SensitiveError {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    let mut b = GitignoreBuilder::new(root);
    for (i, line) in text.lines().enumerate() {
        if let Err(e) = b.add_line(Some(path.to_path_buf()), line) {
            return Err(SensitiveError {
                path: path.to_path_buf(),
                message: format!("line {}: {e}", i + 1),
            });
        }
    }
    b.build().map(Some).map_err(|e| SensitiveError {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sensitive(s: &SensitiveFiles, p: &str) -> bool {
        s.is_sensitive(Path::new(p)).is_some()
    }

    #[test]
    fn built_in_list_withholds_credentials_and_keeps_templates() {
        let s = SensitiveFiles::built_in_only(Path::new("/p"));
        for p in [
            ".env",
            ".env.local",
            ".env.production",
            "app/.env",
            "prod.env",
            ".envrc",
            "certs/server.pem",
            "tls/server.key",
            "id_rsa",
            "id_ed25519",
            "deploy/id_ecdsa_ci",
            ".npmrc",
            ".pypirc",
            ".netrc",
            ".git-credentials",
            "credentials.json",
            "home/.aws/credentials",
            ".aws/credentials",
            ".kube/config",
            "kubeconfig",
            "cluster.kubeconfig",
            "store.p12",
            "cert.pfx",
            ".htpasswd",
            "terraform.tfstate",
            "config/master.key",
            "client_secret_1234.json",
            "KEY.PEM",
            ".ENV",
        ] {
            assert!(sensitive(&s, p), "{p} should be sensitive");
        }
        for p in [
            ".env.example",
            ".env.sample",
            ".env.template",
            "web/.env.example",
            "id_rsa.pub",
            "id_ed25519.pub",
            "src/env.rs",
            "environment.ts",
            "keys.py",
            "README.md",
            "src/credentials.rs",
            "docs/kube/config.md",
        ] {
            assert!(!sensitive(&s, p), "{p} should not be sensitive");
        }
        let why = s.is_sensitive(Path::new("a/b.pem")).unwrap();
        assert_eq!(why.to_string(), "built-in rule `*.pem`");
        assert_eq!(why.source, Source::BuiltIn);
    }

    #[test]
    fn absolute_paths_are_matched_below_the_root_and_by_name_outside_it() {
        let s = SensitiveFiles::built_in_only(Path::new("/work/p"));
        assert!(sensitive(&s, "/work/p/.env"));
        assert!(sensitive(&s, "/elsewhere/secret.pem"));
        assert!(!sensitive(&s, "/work/p/src/main.rs"));
        assert!(s.is_sensitive(Path::new("/work/p")).is_none());
    }

    #[test]
    fn project_and_global_miraignore_add_rules_and_override_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join(PROJECT_FILE),
            "# ours\nsecrets/\n*.sqlite\n!.env.ci\n",
        )
        .unwrap();
        let global = dir.path().join("miraignore");
        std::fs::write(&global, "notes/private.md\n.env.ci\n!*.pem\n").unwrap();

        let s = SensitiveFiles::load(&root, Some(&global)).unwrap();
        assert!(
            sensitive(&s, "secrets/prod/db.txt"),
            "a directory rule covers what is inside"
        );
        assert!(s.is_sensitive_dir(Path::new("secrets")).is_some());
        assert!(sensitive(&s, "data/app.sqlite"));
        assert!(sensitive(&s, "notes/private.md"), "the global file applies");
        assert!(
            !sensitive(&s, ".env.ci"),
            "the project overrides the global file"
        );
        assert!(
            !sensitive(&s, "certs/ca.pem"),
            "the global file overrides the built-in list"
        );
        assert!(sensitive(&s, ".env"), "the built-in list still applies");
        assert_eq!(
            s.is_sensitive(Path::new("secrets/a")).unwrap().to_string(),
            "rule `secrets/` in .miraignore"
        );
        assert_eq!(
            s.is_sensitive(Path::new("notes/private.md"))
                .unwrap()
                .to_string(),
            "rule `notes/private.md` in the global miraignore"
        );
        assert_eq!(
            s.sources(),
            vec![root.join(PROJECT_FILE).as_path(), global.as_path()]
        );
        assert_eq!(s.rule_count(), BUILT_IN.len() + 3 + 3);
    }

    #[test]
    fn missing_files_are_fine_and_bad_rules_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let s = SensitiveFiles::load(dir.path(), Some(&dir.path().join("nope"))).unwrap();
        assert!(s.sources().is_empty());
        assert_eq!(s.rule_count(), BUILT_IN.len());

        std::fs::write(dir.path().join(PROJECT_FILE), "ok.txt\nbad{.txt\n").unwrap();
        let err = SensitiveFiles::load(dir.path(), None).expect_err("a bad glob is an error");
        let msg = err.to_string();
        assert!(
            msg.contains(".miraignore") && msg.contains("line 2"),
            "{msg}"
        );
    }

    #[test]
    fn global_path_follows_xdg_then_home() {
        assert_eq!(
            global_path(Some(Path::new("/x")), Some(Path::new("/h"))),
            Some(PathBuf::from("/x/mira/miraignore"))
        );
        assert_eq!(
            global_path(Some(Path::new("")), Some(Path::new("/h"))),
            Some(PathBuf::from("/h/.config/mira/miraignore"))
        );
        assert_eq!(global_path(None, None), None);
    }
}
