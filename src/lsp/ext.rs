//! The `workspace/executeCommand` contract: command names and their arguments, typed.
//!
//! Every command accepts an object, or — so Helix users can type
//! `:lsp-workspace-command mira.ask why is this slow` — bare strings, which are joined with
//! spaces into the command's main text argument.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use tower_lsp_server::ls_types::{Diagnostic, Position, Range, Uri};

use crate::llm::Effort;
use crate::memory::MemoryKind;

/// Every command name Mira answers, in the order `mira.status` and errors list them.
pub const COMMANDS: &[&str] = &[
    "mira.ask",
    "mira.askSymbol",
    "mira.explain",
    "mira.fix",
    "mira.edit",
    "mira.applyProposal",
    "mira.rejectProposal",
    "mira.remember",
    "mira.recall",
    "mira.forget",
    "mira.openConversation",
    "mira.cancel",
    "mira.status",
    "mira.reindex",
    "mira.models",
];

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskArgs {
    pub question: String,
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub range: Option<Range>,
    #[serde(default)]
    pub position: Option<Position>,
    /// Reasoning effort for this question, over the router's choice and `agent.effort`.
    #[serde(default)]
    pub effort: Option<Effort>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SymbolArgs {
    pub uri: Uri,
    pub position: Position,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RangeArgs {
    pub uri: Uri,
    pub range: Range,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct FixArgs {
    pub uri: Uri,
    pub range: Range,
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct EditArgs {
    /// Empty when a code action asks the client to prompt for it (see `mira.edit`).
    #[serde(default)]
    pub instruction: String,
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub range: Option<Range>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ProposalArgs {
    pub proposal: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeArg {
    Global,
    Project,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct RememberArgs {
    /// Empty when "remember selection…" asks the client to prompt for it.
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub kind: Option<MemoryKind>,
    #[serde(default)]
    pub scope: Option<ScopeArg>,
    /// The id of the memory this text corrects (it is superseded, never recalled again).
    #[serde(default)]
    pub corrects: Option<i64>,
    /// With `range`: anchor the memory to the symbol enclosing it.
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub range: Option<Range>,
}

/// The model's `recall` takes the same arguments.
pub use crate::agent::tools::RecallArgs;

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ForgetArgs {
    pub id: i64,
    /// Undo an earlier forget.
    #[serde(default)]
    pub restore: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Default)]
pub struct CancelArgs {
    #[serde(default)]
    pub turn: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Ask(AskArgs),
    AskSymbol(SymbolArgs),
    Explain(RangeArgs),
    Fix(FixArgs),
    Edit(EditArgs),
    ApplyProposal(ProposalArgs),
    RejectProposal(ProposalArgs),
    Remember(RememberArgs),
    Recall(RecallArgs),
    Forget(ForgetArgs),
    OpenConversation,
    Cancel(CancelArgs),
    Status,
    Reindex,
    Models,
}

impl Command {
    pub fn name(&self) -> &'static str {
        match self {
            Command::Ask(_) => "mira.ask",
            Command::AskSymbol(_) => "mira.askSymbol",
            Command::Explain(_) => "mira.explain",
            Command::Fix(_) => "mira.fix",
            Command::Edit(_) => "mira.edit",
            Command::ApplyProposal(_) => "mira.applyProposal",
            Command::RejectProposal(_) => "mira.rejectProposal",
            Command::Remember(_) => "mira.remember",
            Command::Recall(_) => "mira.recall",
            Command::Forget(_) => "mira.forget",
            Command::OpenConversation => "mira.openConversation",
            Command::Cancel(_) => "mira.cancel",
            Command::Status => "mira.status",
            Command::Reindex => "mira.reindex",
            Command::Models => "mira.models",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    Unknown(String),
    BadArguments {
        command: &'static str,
        message: String,
    },
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Unknown(name) => write!(
                f,
                "unknown command `{name}`; Mira's commands are: {}",
                COMMANDS.join(", ")
            ),
            CommandError::BadArguments { command, message } => {
                write!(
                    f,
                    "bad arguments for {command}: {message}. {}",
                    usage(command)
                )
            }
        }
    }
}

impl std::error::Error for CommandError {}

fn usage(command: &str) -> &'static str {
    match command {
        "mira.ask" => {
            "Expected a question string or {question, uri?, range?, position?, effort?: none|low|medium|high|xhigh}"
        }
        "mira.askSymbol" => "Expected {uri, position}",
        "mira.explain" => "Expected {uri, range}",
        "mira.fix" => "Expected {uri, range, diagnostics}",
        "mira.edit" => "Expected an instruction string or {instruction, uri?, range?}",
        "mira.applyProposal" | "mira.rejectProposal" => "Expected {proposal: <number>}",
        "mira.remember" => {
            "Expected a text string or {text, kind?: fact|preference|decision|correction, scope?: global|project, corrects?: <id>, uri?, range?}"
        }
        "mira.recall" => "Expected a query string or {query, limit?}",
        "mira.forget" => "Expected {id: <number>, restore?: bool} or the id as a string",
        "mira.cancel" => "Expected nothing or {turn}",
        _ => "Expected no arguments",
    }
}

/// Parse `workspace/executeCommand` params into a typed command.
pub fn parse(command: &str, arguments: Vec<Value>) -> Result<Command, CommandError> {
    let name = COMMANDS
        .iter()
        .find(|c| **c == command)
        .copied()
        .ok_or_else(|| CommandError::Unknown(command.to_string()))?;
    let args = Args { name, arguments };
    Ok(match name {
        "mira.ask" => Command::Ask(args.object_or_text("question")?),
        "mira.askSymbol" => Command::AskSymbol(args.object()?),
        "mira.explain" => Command::Explain(args.object()?),
        "mira.fix" => Command::Fix(args.object()?),
        "mira.edit" => Command::Edit(args.object_or_text("instruction")?),
        "mira.applyProposal" => Command::ApplyProposal(args.object_or_number("proposal")?),
        "mira.rejectProposal" => Command::RejectProposal(args.object_or_number("proposal")?),
        "mira.remember" => Command::Remember(args.object_or_text("text")?),
        "mira.recall" => Command::Recall(args.object_or_text("query")?),
        "mira.forget" => Command::Forget(args.object_or_number("id")?),
        "mira.openConversation" => Command::OpenConversation,
        "mira.cancel" => Command::Cancel(if args.arguments.is_empty() {
            CancelArgs::default()
        } else {
            args.object_or_text("turn")?
        }),
        "mira.status" => Command::Status,
        "mira.reindex" => Command::Reindex,
        "mira.models" => Command::Models,
        _ => unreachable!("every name in COMMANDS has an arm"),
    })
}

struct Args {
    name: &'static str,
    arguments: Vec<Value>,
}

impl Args {
    fn bad(&self, message: impl Into<String>) -> CommandError {
        CommandError::BadArguments {
            command: self.name,
            message: message.into(),
        }
    }

    fn object<T: DeserializeOwned>(&self) -> Result<T, CommandError> {
        match self.arguments.as_slice() {
            [v @ Value::Object(_)] => {
                serde_json::from_value(v.clone()).map_err(|e| self.bad(e.to_string()))
            }
            [] => Err(self.bad("no arguments given")),
            _ => Err(self.bad("expected one object argument")),
        }
    }

    /// One object, or strings joined into `field`.
    fn object_or_text<T: DeserializeOwned>(&self, field: &str) -> Result<T, CommandError> {
        if !self.arguments.is_empty() && self.arguments.iter().all(Value::is_string) {
            let text: Vec<&str> = self.arguments.iter().filter_map(Value::as_str).collect();
            let text = text.join(" ");
            if text.trim().is_empty() {
                return Err(self.bad(format!("`{field}` is empty")));
            }
            let mut obj = serde_json::Map::new();
            obj.insert(field.to_string(), Value::String(text));
            return serde_json::from_value(Value::Object(obj)).map_err(|e| self.bad(e.to_string()));
        }
        let parsed: T = self.object()?;
        // An object with an empty main field is as useless as an empty string.
        if let Some(Value::String(s)) = self.arguments[0].get(field)
            && s.trim().is_empty()
        {
            return Err(self.bad(format!("`{field}` is empty")));
        }
        Ok(parsed)
    }

    /// One object, or a number (or numeric string) for `field`.
    fn object_or_number<T: DeserializeOwned>(&self, field: &str) -> Result<T, CommandError> {
        let n = match self.arguments.as_slice() {
            [Value::Number(n)] => n.as_i64(),
            [Value::String(s)] => Some(
                s.trim()
                    .trim_start_matches('#')
                    .parse::<i64>()
                    .map_err(|_| self.bad(format!("`{s}` is not a number")))?,
            ),
            _ => None,
        };
        match n {
            Some(n) => {
                let mut obj = serde_json::Map::new();
                obj.insert(field.to_string(), Value::from(n));
                serde_json::from_value(Value::Object(obj)).map_err(|e| self.bad(e.to_string()))
            }
            None => self.object(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_and_objects_both_parse() {
        assert_eq!(
            parse("mira.ask", vec![json!("why"), json!("is this slow?")]).unwrap(),
            Command::Ask(AskArgs {
                question: "why is this slow?".into(),
                uri: None,
                range: None,
                position: None,
                effort: None
            })
        );
        let c = parse(
            "mira.ask",
            vec![json!({"question": "q", "uri": "file:///a.rs", "position": {"line": 1, "character": 2}})],
        )
        .unwrap();
        assert!(matches!(c, Command::Ask(AskArgs { position: Some(p), .. }) if p.line == 1));
        assert_eq!(
            parse("mira.forget", vec![json!("#12")]).unwrap(),
            Command::Forget(ForgetArgs {
                id: 12,
                restore: false
            })
        );
        assert_eq!(
            parse("mira.applyProposal", vec![json!({"proposal": 3})]).unwrap(),
            Command::ApplyProposal(ProposalArgs { proposal: 3 })
        );
        assert_eq!(parse("mira.status", vec![]).unwrap(), Command::Status);
        assert_eq!(parse("mira.models", vec![]).unwrap(), Command::Models);
        assert_eq!(
            parse("mira.cancel", vec![]).unwrap(),
            Command::Cancel(CancelArgs { turn: None })
        );
        assert!(matches!(
            parse(
                "mira.remember",
                vec![json!({"text": "x", "kind": "preference"})]
            )
            .unwrap(),
            Command::Remember(RememberArgs {
                kind: Some(MemoryKind::Preference),
                ..
            })
        ));
    }

    #[test]
    fn errors_name_the_command_and_the_expected_shape() {
        let e = parse("mira.askSymbol", vec![json!("x")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mira.askSymbol") && e.contains("{uri, position}"),
            "{e}"
        );
        let e = parse(
            "mira.remember",
            vec![json!({"text": "x", "kind": "rumour"})],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rumour") && e.contains("fact|preference"), "{e}");
        let e = parse("mira.ask", vec![json!("  ")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty"), "{e}");
        let e = parse("mira.forget", vec![json!("abc")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a number"), "{e}");
        let e = parse("mira.frobnicate", vec![]).unwrap_err().to_string();
        assert!(
            e.contains("unknown command `mira.frobnicate`") && e.contains("mira.ask"),
            "{e}"
        );
    }
}
