//! The reasoning router: a cheap, local classifier that picks how hard the model should think
//! about a question. No model call: it reads the question's length and wording and whether
//! code or diagnostics come with it. Config (`agent.effort`) and a per-request `effort` win.

use crate::llm::Effort;

use super::context::EditorContext;

const DEEP: &[&str] = &[
    "why",
    "design",
    "architect",
    "refactor",
    "debug",
    "race",
    "deadlock",
    "leak",
    "concurren",
    "optimi",
    "performance",
    "security",
    "vulnerab",
    "prove",
    "invariant",
    "trade-off",
    "tradeoff",
    "root cause",
    "migrate",
    "algorithm",
    "complexity",
];
const HARDEST: &[&str] = &[
    "think hard",
    "think carefully",
    "very carefully",
    "step by step",
    "ultrathink",
];
const LIGHT: &[&str] = &[
    "hi",
    "hello",
    "thanks",
    "thank you",
    "rename",
    "typo",
    "what is",
    "what's",
    "list",
    "show me",
    "where is",
    "format",
];

pub fn route(question: &str, editor: Option<&EditorContext>) -> Effort {
    let q = question.to_lowercase();
    if HARDEST.iter().any(|k| q.contains(k)) {
        return Effort::XHigh;
    }
    let words = q.split_whitespace().count();
    let deep = DEEP.iter().filter(|k| q.contains(*k)).count();
    let has_diagnostics = editor.is_some_and(|e| !e.diagnostics.is_empty());
    let big_selection = editor
        .and_then(|e| e.selection.as_ref())
        .is_some_and(|s| s.lines().count() > 40);
    let score = deep as i32 * 2
        + i32::from(words > 40)
        + i32::from(words > 120)
        + i32::from(has_diagnostics)
        + i32::from(big_selection)
        + i32::from(q.contains("```"));
    if score == 0 && (words <= 6 || LIGHT.iter().any(|k| q.starts_with(k))) {
        return Effort::None;
    }
    match score {
        0 | 1 => Effort::Low,
        2 | 3 => Effort::Medium,
        _ => Effort::High,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_difficulty() {
        assert_eq!(route("thanks!", None), Effort::None);
        assert_eq!(
            route(
                "what does the parse function in this module return exactly",
                None
            ),
            Effort::Low
        );
        assert_eq!(route("why is this endpoint slow?", None), Effort::Medium);
        assert_eq!(
            route(
                "why does this deadlock, and how would you refactor the design to avoid the race?",
                None
            ),
            Effort::High
        );
        assert_eq!(route("think hard about this", None), Effort::XHigh);
    }
}
