//! Writing a model's file edit to disk (the CLI path; the LSP path goes through the editor),
//! refusing when the file changed since the edit was computed (`FileEdit::stale_on_disk`).

use mira::agent::{EditOutcome, FileEdit};

pub fn write_if_unchanged(edit: &FileEdit) -> EditOutcome {
    let current = match std::fs::read_to_string(&edit.path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return EditOutcome::Rejected(format!("cannot read {}: {e}", edit.path.display()));
        }
    };
    if let Some(why) = edit.stale_on_disk(current.as_deref()) {
        return EditOutcome::Stale(why);
    }
    if let Some(dir) = edit.path.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return EditOutcome::Rejected(format!("cannot create {}: {e}", dir.display()));
    }
    // Write beside and rename, so a crash never leaves half a file.
    let tmp = edit.path.with_extension("mira-tmp");
    match std::fs::write(&tmp, &edit.new_text).and_then(|_| std::fs::rename(&tmp, &edit.path)) {
        Ok(()) => EditOutcome::Applied,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            EditOutcome::Rejected(format!("cannot write {}: {e}", edit.path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(path: std::path::PathBuf, base: &str, new: &str, create: bool) -> FileEdit {
        FileEdit {
            path,
            base_version: None,
            base_text: base.into(),
            new_text: new.into(),
            create,
            diff: String::new(),
        }
    }

    #[test]
    fn writes_only_over_the_text_the_edit_was_computed_against() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "user typed this\n").unwrap();
        assert!(matches!(
            write_if_unchanged(&edit(p.clone(), "old\n", "new\n", false)),
            EditOutcome::Stale(_)
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "user typed this\n");
        assert_eq!(
            write_if_unchanged(&edit(p.clone(), "user typed this\n", "new\n", false)),
            EditOutcome::Applied
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert!(
            matches!(
                write_if_unchanged(&edit(p.clone(), "", "x", true)),
                EditOutcome::Stale(_)
            ),
            "create never overwrites"
        );
        let q = dir.path().join("sub/b.txt");
        assert_eq!(
            write_if_unchanged(&edit(q.clone(), "", "made\n", true)),
            EditOutcome::Applied
        );
        assert_eq!(std::fs::read_to_string(&q).unwrap(), "made\n");
    }
}
