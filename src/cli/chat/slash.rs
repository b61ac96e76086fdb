//! The REPL's slash commands: parsed into one typed value, so the loop only dispatches.

use std::path::PathBuf;

use mira::llm::Effort;

/// Every command with a one-line description (`/help`, and what Tab completes).
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "/status",
        "project, provider, index and what this session cost",
    ),
    ("/remember", "<text> — remember a fact (global)"),
    (
        "/correct",
        "[#id] <text> — a correction: it supersedes the memory it contradicts (or #id)",
    ),
    ("/recall", "<query> — search memories"),
    ("/forget", "<id> — forget a memory (kept, restorable)"),
    ("/goals", "active goals"),
    ("/tasks", "open tasks"),
    (
        "/history",
        "[n] — the latest turns of the conversation (default 5)",
    ),
    (
        "/usage",
        "tokens and cost: this session, and per model over the last day",
    ),
    (
        "/effort",
        "<none|low|medium|high|xhigh|auto> — reasoning effort for the next questions",
    ),
    (
        "/switch",
        "[path] — work in the project at path (default: the current directory)",
    ),
    ("/help", "this list"),
    ("/quit", "leave (Ctrl+D too)"),
];

#[derive(Debug, PartialEq)]
pub enum Slash {
    Status,
    Remember(String),
    /// A correction, of the memory `#id` when given, else of the one it contradicts.
    Correct {
        text: String,
        corrects: Option<i64>,
    },
    Recall(String),
    Forget(i64),
    Goals,
    Tasks,
    History(usize),
    Usage,
    /// `None`: automatic (the router picks per question).
    Effort(Option<Effort>),
    Switch(Option<PathBuf>),
    Help,
    Quit,
}

/// Parses a line that starts with `/`. Errors say what to type instead.
pub fn parse(line: &str) -> Result<Slash, String> {
    let line = line.trim();
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let need = |what: &str| {
        if rest.is_empty() {
            Err(format!(
                "{name} needs {what}; e.g. {name} {}",
                example(name)
            ))
        } else {
            Ok(rest.to_string())
        }
    };
    Ok(match name {
        "/status" => Slash::Status,
        "/remember" => Slash::Remember(need("the text to remember")?),
        "/recall" => Slash::Recall(need("a query")?),
        "/correct" => {
            let text = need("what is true instead")?;
            match text
                .strip_prefix('#')
                .and_then(|t| t.split_once(char::is_whitespace))
            {
                Some((id, body)) if !body.trim().is_empty() => Slash::Correct {
                    text: body.trim().to_string(),
                    corrects: Some(id.parse().map_err(|_| {
                        format!("/correct #id takes a memory id such as #12, not `#{id}`")
                    })?),
                },
                _ => Slash::Correct {
                    text,
                    corrects: None,
                },
            }
        }
        "/forget" => {
            let id = need("a memory id")?;
            let id = id.trim_start_matches('#');
            Slash::Forget(id.parse().map_err(|_| {
                format!("/forget takes a memory id such as 12 (see /recall), not `{id}`")
            })?)
        }
        "/goals" => Slash::Goals,
        "/tasks" => Slash::Tasks,
        "/history" if rest.is_empty() => Slash::History(5),
        "/history" => Slash::History(
            rest.parse()
                .map_err(|_| format!("/history takes a number of turns, not `{rest}`"))?,
        ),
        "/usage" => Slash::Usage,
        "/effort" if rest == "auto" => Slash::Effort(None),
        "/effort" => Slash::Effort(Some(
            need("a level")?
                .parse::<Effort>()
                .map_err(|e| format!("{e}, or auto"))?,
        )),
        "/switch" if rest.is_empty() => Slash::Switch(None),
        "/switch" => Slash::Switch(Some(PathBuf::from(rest))),
        "/help" | "/?" => Slash::Help,
        "/quit" | "/exit" | "/q" => Slash::Quit,
        other => return Err(format!("unknown command {other}; /help lists them")),
    })
}

fn example(name: &str) -> &'static str {
    match name {
        "/remember" => "we deploy with ArgoCD",
        "/correct" => "we deploy with Flux, not ArgoCD",
        "/recall" => "deploy",
        "/forget" => "12",
        _ => "high",
    }
}

/// The commands that start with what was typed (Tab completion).
pub fn complete(prefix: &str) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| c.starts_with(prefix))
        .collect()
}

pub fn help() -> String {
    let mut s =
        String::from("Type a question to ask Mira (the one global conversation), or a command:\n");
    for (c, what) in COMMANDS {
        s.push_str(&format!("  {c:<10} {what}\n"));
    }
    s.push_str("Ctrl+C cancels a running answer; Ctrl+D leaves.");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_explains_mistakes() {
        assert_eq!(
            parse("/remember  we use tabs "),
            Ok(Slash::Remember("we use tabs".into()))
        );
        assert_eq!(parse("/forget #12"), Ok(Slash::Forget(12)));
        assert_eq!(
            parse("/correct we use spaces"),
            Ok(Slash::Correct {
                text: "we use spaces".into(),
                corrects: None
            })
        );
        assert_eq!(
            parse("/correct #4 we use spaces"),
            Ok(Slash::Correct {
                text: "we use spaces".into(),
                corrects: Some(4)
            })
        );
        assert!(
            parse("/correct #x spaces")
                .unwrap_err()
                .contains("memory id")
        );
        assert_eq!(parse("/history"), Ok(Slash::History(5)));
        assert_eq!(parse("/effort high"), Ok(Slash::Effort(Some(Effort::High))));
        assert_eq!(parse("/effort auto"), Ok(Slash::Effort(None)));
        assert_eq!(
            parse("/switch ../other"),
            Ok(Slash::Switch(Some("../other".into())))
        );
        assert!(parse("/remember").unwrap_err().contains("e.g. /remember"));
        assert!(parse("/forget twelve").unwrap_err().contains("memory id"));
        assert!(parse("/effort max").unwrap_err().contains("or auto"));
        assert!(parse("/frobnicate").unwrap_err().contains("/help"));
        assert_eq!(complete("/re"), ["/remember", "/recall"]);
        assert_eq!(complete("/co"), ["/correct"]);
    }
}
