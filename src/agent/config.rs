//! `[agent]` and `[edits]`: the agent's limits, budgets, bash policy and edit confirmation.

use serde::{Deserialize, Serialize};

use crate::llm::Effort;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BashPolicy {
    /// The bash tool is refused.
    #[default]
    Off,
    /// Each command is confirmed through window/showMessageRequest (refused if the client can't ask).
    Ask,
    On,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    pub bash: BashPolicy,
    pub max_iterations: u32,
    pub max_tool_calls: u32,
    pub cost_cap_usd: f64,
    /// `mira chat` warns when one turn costs more than this (USD); the cap above still stops it.
    pub cost_warn_usd: f64,
    /// Reasoning effort: `auto` (`None`) lets a cheap classifier pick per question.
    #[serde(with = "effort_or_auto")]
    pub effort: Option<Effort>,
    /// Token budget for everything sent in one model call; a model with a smaller window
    /// (`provider.context_window`, or what its server says) gets less.
    pub context_tokens: usize,
    /// When the verbatim conversation passes this many tokens, its oldest half is summarised.
    pub summarize_after_tokens: usize,
    /// Tool outputs larger than this become artifacts with a preview.
    pub artifact_bytes: usize,
    /// Let the model's file tools read and write sensitive files (`.env`, keys, credentials,
    /// `.miraignore` matches). Their content is still redacted.
    pub allow_sensitive: bool,
}

/// `agent.effort`: `auto` or one of [`Effort`]'s names, refused in the words serde uses for
/// an unknown enum variant.
mod effort_or_auto {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::llm::Effort;

    const AUTO: &str = "auto";
    const NAMES: &[&str] = &[AUTO, "none", "low", "medium", "high", "xhigh"];

    pub fn serialize<S: Serializer>(e: &Option<Effort>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(e.map_or(AUTO, Effort::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Effort>, D::Error> {
        let name = String::deserialize(d)?;
        if name == AUTO {
            return Ok(None);
        }
        name.parse()
            .map(Some)
            .map_err(|_| D::Error::unknown_variant(&name, NAMES))
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            bash: BashPolicy::Off,
            max_iterations: 24,
            max_tool_calls: 64,
            cost_cap_usd: 1.0,
            cost_warn_usd: 0.5,
            effort: None,
            context_tokens: 64_000,
            summarize_after_tokens: 24_000,
            artifact_bytes: 16 * 1024,
            allow_sensitive: false,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct EditsConfig {
    /// Store model edits as proposals to apply explicitly, instead of applying them.
    pub confirm: bool,
}
