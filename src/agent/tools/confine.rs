//! Every path a tool touches is resolved inside the project root, symlinks included.

use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// Resolve `requested` (relative to `root`, or absolute inside it) to a path that is inside
/// `root` after following symlinks. `root` must already be canonical. The file itself need
/// not exist (write_file creates files); its nearest existing ancestor is what gets checked.
pub fn resolve(root: &Path, requested: &str) -> Result<PathBuf, ToolError> {
    let requested = requested.trim();
    if requested.is_empty() {
        return Err(ToolError::InvalidArgs("`path` is empty".into()));
    }
    let joined = if Path::new(requested).is_absolute() {
        PathBuf::from(requested)
    } else {
        root.join(requested)
    };
    // Lexical first: `..` that climbs out is refused before touching the filesystem.
    let mut lexical = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                if !lexical.pop() {
                    return Err(outside(requested));
                }
            }
            Component::CurDir => {}
            other => lexical.push(other.as_os_str()),
        }
    }
    if !lexical.starts_with(root) {
        return Err(outside(requested));
    }
    // Then physical: canonicalise the longest existing prefix, which resolves symlinks.
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return Err(outside(requested)),
        }
    }
    let mut real = existing
        .canonicalize()
        .map_err(|e| ToolError::Failed(format!("cannot resolve `{}`: {e}", shown(requested))))?;
    if !real.starts_with(root) {
        // Where the link points is not the model's business: no absolute path in the message.
        return Err(ToolError::Refused(format!(
            "`{}` resolves through a symlink to a place outside the project root; file tools \
             only work inside the project",
            shown(requested)
        )));
    }
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    Ok(real)
}

fn outside(requested: &str) -> ToolError {
    ToolError::Refused(format!(
        "`{}` is outside the project root; file tools only accept paths inside the project",
        shown(requested)
    ))
}

/// The requested path as refusals show it: an absolute path is cut to its file name, so no
/// message names a place outside the project.
fn shown(requested: &str) -> String {
    let p = Path::new(requested);
    if !p.is_absolute() {
        return requested.to_string();
    }
    match p.file_name() {
        Some(name) => format!("…/{}", name.to_string_lossy()),
        None => "/".to_string(),
    }
}

/// `path` relative to `root`, for display and tool output.
pub fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_and_absolute_paths_outside_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        assert!(matches!(
            resolve(&root, "../../etc/passwd"),
            Err(ToolError::Refused(_))
        ));
        assert!(matches!(
            resolve(&root, "src/../../x"),
            Err(ToolError::Refused(_))
        ));
        assert!(matches!(
            resolve(&root, "/etc/passwd"),
            Err(ToolError::Refused(_))
        ));
        assert_eq!(
            resolve(&root, "src/../src/new.rs").unwrap(),
            root.join("src/new.rs")
        );
        assert_eq!(
            resolve(&root, root.join("src").to_str().unwrap()).unwrap(),
            root.join("src")
        );
    }

    #[test]
    fn symlinks_escaping_the_root_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside_dir = tempfile::tempdir().unwrap();
        std::fs::write(outside_dir.path().join("secret.txt"), "x").unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(outside_dir.path(), root.join("link")).unwrap();
        assert!(matches!(
            resolve(&root, "link/secret.txt"),
            Err(ToolError::Refused(_))
        ));
        assert!(matches!(
            resolve(&root, "link/new.txt"),
            Err(ToolError::Refused(_))
        ));
    }
}
