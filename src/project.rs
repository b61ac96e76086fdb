//! Which project a path belongs to: `.mira/project.toml` > git root > package root > the
//! directory itself. Code context is scoped to the project; memory and conversation are not.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detection {
    /// A `.mira/project.toml` marks the root explicitly.
    MiraProjectFile,
    /// The closest directory holding `.git` (a directory, or a file in worktrees/submodules).
    GitRoot,
    /// The closest directory holding a package manifest (the file name is kept).
    PackageRoot(&'static str),
    /// Nothing marks a root: the start directory is used as is.
    StartDirectory,
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detection::MiraProjectFile => f.write_str(".mira/project.toml"),
            Detection::GitRoot => f.write_str("git root"),
            Detection::PackageRoot(m) => write!(f, "package root ({m})"),
            Detection::StartDirectory => f.write_str("current directory (no project marker found)"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    pub root: PathBuf,
    pub name: String,
    pub detection: Detection,
}

const PACKAGE_MARKERS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "CMakeLists.txt",
    "composer.json",
];

/// Detect the project containing `start` (a file or a directory).
pub fn detect(start: &Path) -> Project {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let dir = if start.is_file() {
        start.parent().map(Path::to_path_buf).unwrap_or(start)
    } else {
        start
    };
    let found = closest(&dir, |d| d.join(".mira").join("project.toml").is_file())
        .map(|r| (r, Detection::MiraProjectFile))
        .or_else(|| closest(&dir, |d| d.join(".git").exists()).map(|r| (r, Detection::GitRoot)))
        .or_else(|| {
            dir.ancestors().find_map(|d| {
                PACKAGE_MARKERS
                    .iter()
                    .find(|m| d.join(m).is_file())
                    .map(|m| (d.to_path_buf(), Detection::PackageRoot(m)))
            })
        });
    let (root, detection) = found.unwrap_or((dir, Detection::StartDirectory));
    let name = folder_name(&root);
    Project {
        root,
        name,
        detection,
    }
}

/// A folder's name as Mira shows it (`/` for the file-system root).
pub fn folder_name(root: &Path) -> String {
    root.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".into())
}

fn closest(dir: &Path, is_root: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    dir.ancestors().find(|d| is_root(d)).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_mira_file_then_git_then_package_then_start() {
        let tmp = tempfile::tempdir().unwrap();
        let t = std::fs::canonicalize(tmp.path()).unwrap();
        let deep = t.join("repo/pkg/src/deep");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(detect(&deep).detection, Detection::StartDirectory);
        assert_eq!(detect(&deep).root, deep);

        std::fs::write(t.join("repo/pkg/Cargo.toml"), "").unwrap();
        let p = detect(&deep);
        assert_eq!(
            (p.root.clone(), p.detection),
            (t.join("repo/pkg"), Detection::PackageRoot("Cargo.toml"))
        );
        assert_eq!(p.name, "pkg");

        std::fs::create_dir_all(t.join("repo/.git")).unwrap();
        let p = detect(&deep);
        assert_eq!((p.root, p.detection), (t.join("repo"), Detection::GitRoot));

        std::fs::create_dir_all(t.join("repo/pkg/src/.mira")).unwrap();
        std::fs::write(t.join("repo/pkg/src/.mira/project.toml"), "").unwrap();
        let p = detect(&deep.join("file.rs"));
        assert_eq!(
            (p.root, p.detection),
            (t.join("repo/pkg/src"), Detection::MiraProjectFile)
        );
    }
}
