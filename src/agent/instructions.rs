//! The project's own instructions for coding agents, read where the other tools read them:
//! `AGENTS.md` (Codex, Copilot, Cursor, Zed, …) and `CLAUDE.md` (Claude Code) in every folder
//! from the project root down to the file in focus, `.github/copilot-instructions.md`, and
//! Cursor's `.cursor/rules/*.mdc` (those that always apply or whose globs match the focus).
//!
//! They are read again for every turn — a handful of small files, no cache to invalidate — so
//! an edit applies to the next question in every face without a restart. They are redacted
//! like everything else sent, and sit in the stable head of the system prompt.

use std::path::{Component, Path, PathBuf};

use crate::redact::redact;

/// One file's instructions.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InstructionFile {
    /// Root-relative, with `/` separators.
    pub path: String,
    /// Redacted, front matter removed, at most [`MAX_FILE_BYTES`].
    pub text: String,
    /// Cut to [`MAX_FILE_BYTES`].
    pub truncated: bool,
}

/// Per file, as Codex does (`project_doc_max_bytes`): a runaway file must not crowd out the
/// conversation of a large model or make every question fail on a small one.
pub const MAX_FILE_BYTES: usize = 32 * 1024;

/// The files in force for `focus` (a root-relative path; `None`: the project root), most
/// general first: the root's, then each folder's down to the focus.
pub fn gather(root: &Path, focus: Option<&str>) -> Vec<InstructionFile> {
    let mut out = Vec::new();
    let folders = folders_to(focus);
    for (i, folder) in folders.iter().enumerate() {
        for name in ["AGENTS.md", "CLAUDE.md"] {
            push(&mut out, root, &folder.join(name), None);
        }
        if i == 0 {
            push(
                &mut out,
                root,
                Path::new(".github/copilot-instructions.md"),
                None,
            );
            for rule in cursor_rules(root) {
                push(&mut out, root, &rule, Some(focus.unwrap_or("")));
            }
        }
    }
    out
}

/// The rendered section: each file under its path.
pub fn render(files: &[InstructionFile]) -> String {
    files
        .iter()
        .map(|f| {
            let cut = if f.truncated { "\n[cut at 32 KB]" } else { "" };
            format!("## {}\n{}{cut}\n\n", f.path, f.text.trim_end())
        })
        .collect()
}

/// "" (the root), then each folder on the way to the focus file's folder.
fn folders_to(focus: Option<&str>) -> Vec<PathBuf> {
    let mut folders = vec![PathBuf::new()];
    let Some(focus) = focus else {
        return folders;
    };
    let parent = Path::new(focus).parent().unwrap_or(Path::new(""));
    let mut at = PathBuf::new();
    for c in parent.components() {
        // Only plain names: a focus outside the project (`..`, absolute) reads nothing more.
        let Component::Normal(name) = c else {
            return folders;
        };
        at.push(name);
        folders.push(at.clone());
    }
    folders
}

fn cursor_rules(root: &Path) -> Vec<PathBuf> {
    let dir = Path::new(".cursor/rules");
    let mut rules: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "mdc"))
        .map(|e| dir.join(e.file_name()))
        .collect();
    rules.sort();
    rules
}

/// Reads `rel` under `root` if it is a file; `mdc_focus`: a Cursor rule, kept only when it
/// applies to that focus.
fn push(out: &mut Vec<InstructionFile>, root: &Path, rel: &Path, mdc_focus: Option<&str>) {
    let Ok(bytes) = std::fs::read(root.join(rel)) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    let body = match mdc_focus {
        Some(focus) => match cursor_rule_body(&text, focus) {
            Some(body) => body,
            None => return,
        },
        None => &text,
    };
    if body.trim().is_empty() {
        return;
    }
    let mut end = body.len().min(MAX_FILE_BYTES);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    out.push(InstructionFile {
        path: rel.to_string_lossy().replace('\\', "/"),
        text: redact(&body[..end]).into_owned(),
        truncated: end < body.len(),
    });
}

/// A Cursor rule's body when it applies: `alwaysApply: true`, no front matter, or a glob
/// matching the focus. Rules Cursor attaches only on the agent's request (a description and
/// nothing else) are left out: Mira's model cannot ask for them.
fn cursor_rule_body<'a>(text: &'a str, focus: &str) -> Option<&'a str> {
    let Some(rest) = text.strip_prefix("---") else {
        return Some(text);
    };
    let (front, body) = rest.split_once("\n---")?;
    let body = body.split_once('\n').map_or("", |(_, b)| b);
    let mut always = false;
    let mut globs = Vec::new();
    for line in front.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "alwaysApply" => always = value == "true",
            "globs" => globs.extend(
                value
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|g| g.trim().trim_matches(['"', '\'']).to_string())
                    .filter(|g| !g.is_empty()),
            ),
            _ => {}
        }
    }
    let matches = !focus.is_empty()
        && globs.iter().any(|g| {
            globset::Glob::new(g)
                .map(|g| g.compile_matcher().is_match(focus))
                .unwrap_or(false)
        });
    (always || matches).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_folder_from_the_root_to_the_focus_and_the_other_tools_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("AGENTS.md", "root rules");
        write("src/AGENTS.md", "src rules");
        write("src/net/AGENTS.md", "net rules");
        write("docs/AGENTS.md", "docs rules (not on the way)");
        write("CLAUDE.md", "claude rules");
        write(".github/copilot-instructions.md", "copilot rules");
        write(
            ".cursor/rules/always.mdc",
            "---\nalwaysApply: true\n---\nalways rule",
        );
        write(
            ".cursor/rules/rust.mdc",
            "---\nglobs: src/**/*.rs\nalwaysApply: false\n---\nrust rule",
        );
        write(
            ".cursor/rules/asked.mdc",
            "---\ndescription: only on request\n---\nasked rule",
        );
        write(
            ".cursor/rules/secret.mdc",
            "api_key = \"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\"",
        );
        let paths = |files: &[InstructionFile]| -> Vec<String> {
            files.iter().map(|f| f.path.clone()).collect()
        };
        let files = gather(root, Some("src/net/tcp.rs"));
        assert_eq!(
            paths(&files),
            [
                "AGENTS.md",
                "CLAUDE.md",
                ".github/copilot-instructions.md",
                ".cursor/rules/always.mdc",
                ".cursor/rules/rust.mdc",
                ".cursor/rules/secret.mdc",
                "src/AGENTS.md",
                "src/net/AGENTS.md",
            ]
        );
        assert_eq!(files[3].text.trim(), "always rule", "front matter removed");
        assert!(
            !files[5].text.contains("sk-proj"),
            "redacted: {}",
            files[5].text
        );
        let at_root = gather(root, None);
        assert_eq!(
            paths(&at_root),
            [
                "AGENTS.md",
                "CLAUDE.md",
                ".github/copilot-instructions.md",
                ".cursor/rules/always.mdc",
                ".cursor/rules/secret.mdc",
            ]
        );
        assert_eq!(
            paths(&gather(root, Some("../x/AGENTS.md"))),
            paths(&at_root)
        );
        assert!(render(&files).contains("## src/net/AGENTS.md\nnet rules"));
    }
}
