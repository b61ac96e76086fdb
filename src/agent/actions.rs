//! The turns an editor starts about a place in the code — ask about a symbol, explain, fix,
//! edit — as the agent sees them: the symbol in focus, built from the index's context, and the
//! question each action asks. The adapter resolves the place and starts the turn.

use super::SymbolFocus;
use crate::index::SymbolContext;

/// The symbol in focus as the agent's context shows it: definition, callers, callees (the
/// anchored memories are filled in when the turn starts).
pub fn focus_of(cx: &SymbolContext) -> SymbolFocus {
    let i = &cx.info;
    SymbolFocus {
        name: cx.qualified.clone(),
        kind: i.kind.to_string(),
        path: cx.key.clone(),
        line: i.range.start.row + 1,
        language: crate::index::Lang::for_path(&i.path).map(|l| l.name().to_string()),
        signature: i.signature.clone(),
        doc: i.doc.clone(),
        code: cx.code.clone(),
        callers: cx.callers.clone(),
        callees: cx.callees.clone(),
        memories: Vec::new(),
    }
}

/// `line 3` or `lines 3–7`, from zero-based first and last lines.
pub fn lines(first: u32, last: u32) -> String {
    if first == last {
        format!("line {}", first + 1)
    } else {
        format!("lines {}–{}", first + 1, last + 1)
    }
}

/// "Ask Mira about this symbol".
pub fn ask_symbol(focus: &SymbolFocus) -> String {
    format!(
        "Tell me about `{}` ({} in {}:{}): what it does, how its callers use it, what it \
         calls, and what to watch out for when changing it.",
        focus.name, focus.kind, focus.path, focus.line
    )
}

/// Explain the selected code; `lines` as [`lines`] writes them.
pub fn explain(lines: &str, path: Option<&str>) -> String {
    format!(
        "Explain the selected code ({lines} of {}).",
        path.unwrap_or("this file")
    )
}

/// Fix the diagnostics (one line each) through edit_file, so the editor's edit flows apply.
pub fn fix(path: Option<&str>, lines: &str, diagnostics: &[String]) -> String {
    format!(
        "Fix this in {} ({lines}):\n{}\nChange the code with edit_file; keep the fix minimal and \
         say what you changed.",
        path.unwrap_or("this file"),
        diagnostics
            .iter()
            .map(|d| format!("- {d}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// Edit the selection (`lines`), or the whole file, as the instruction says.
pub fn edit(path: &str, lines: Option<&str>, instruction: &str) -> String {
    match lines {
        Some(lines) => format!(
            "Edit {path}, {lines} (the selection): {}\nMake the change with edit_file and touch \
             only that range unless the instruction needs more.",
            instruction.trim()
        ),
        None => format!(
            "Edit {path}: {}\nMake the change with edit_file.",
            instruction.trim()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_or_a_span() {
        assert_eq!(lines(2, 2), "line 3");
        assert_eq!(lines(2, 6), "lines 3–7");
    }
}
