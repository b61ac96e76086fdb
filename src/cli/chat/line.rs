//! The line editor: rustyline with a history file in `$MIRA_HOME` and Tab completion of the
//! slash commands. Lines go into the history redacted, like everything else Mira stores.

use std::path::{Path, PathBuf};

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor, Helper};

use super::slash;

pub struct Commands;

impl Completer for Commands {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((0, Vec::new()));
        }
        let found = slash::complete(typed)
            .into_iter()
            .map(|c| format!("{c} "))
            .collect();
        Ok((0, found))
    }
}

impl Hinter for Commands {
    type Hint = String;
}
impl Highlighter for Commands {}
impl Validator for Commands {}
impl Helper for Commands {}

/// What one read from the terminal gave.
pub enum Read {
    Line(String),
    /// Ctrl+C at the prompt: nothing to cancel, just a fresh prompt.
    Interrupted,
    /// Ctrl+D (or the terminal went away).
    Eof,
}

pub struct LineEditor {
    editor: Editor<Commands, DefaultHistory>,
    history: PathBuf,
}

impl LineEditor {
    pub fn open(history: PathBuf) -> Result<LineEditor, String> {
        let config = Config::builder()
            .completion_type(CompletionType::List)
            .max_history_size(5_000)
            .map_err(|e| e.to_string())?
            .auto_add_history(false)
            .build();
        let mut editor = Editor::with_config(config)
            .map_err(|e| format!("cannot use the terminal for line editing: {e}"))?;
        editor.set_helper(Some(Commands));
        if history.exists()
            && let Err(e) = editor.load_history(&history)
        {
            eprintln!("mira: cannot read the history {}: {e}", history.display());
        }
        Ok(LineEditor { editor, history })
    }

    pub fn read(&mut self, prompt: &str) -> Read {
        match self.editor.readline(prompt) {
            Ok(line) => Read::Line(line),
            Err(ReadlineError::Interrupted) => Read::Interrupted,
            Err(_) => Read::Eof,
        }
    }

    /// Adds a line to the history and appends it to the file at once, so a killed terminal
    /// loses nothing.
    pub fn remember(&mut self, line: &str) {
        let line = mira::redact::redact(line.trim()).into_owned();
        if line.is_empty() || self.editor.history().iter().last() == Some(&line) {
            return;
        }
        let _ = self.editor.add_history_entry(line);
        if let Err(e) = append(&mut self.editor, &self.history) {
            eprintln!(
                "mira: cannot write the history {}: {e}",
                self.history.display()
            );
        }
    }
}

fn append(editor: &mut Editor<Commands, DefaultHistory>, path: &Path) -> Result<(), String> {
    if !path.exists() {
        create_private(path).map_err(|e| e.to_string())?;
    }
    editor.append_history(path).map_err(|e| e.to_string())
}

/// Questions can be private: the history file is readable by its owner only.
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map(|_| ())
}
