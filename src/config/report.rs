//! The effective configuration as `mira doctor` prints it: every key, its value, its source.

use super::{Config, Loaded, Source};
use toml::{Table, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct ReportLine {
    pub key: String,
    pub value: String,
    pub source: Source,
}

/// A key naming a credential: one of its words is `key`, `token`, `secret` or `password`
/// (`api_key`, `auth_token`), while budgets such as `context_tokens` are plain numbers.
fn is_secret(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    last.split(['_', '-'])
        .any(|w| matches!(w, "key" | "apikey" | "token" | "secret" | "password"))
}

pub fn report(loaded: &Loaded) -> Vec<ReportLine> {
    let mut out = Vec::new();
    if let Ok(table) = Table::try_from(&loaded.config) {
        flatten(&table, "", loaded, &mut out);
    }
    // Serialisation skips secrets; say whether they are set and where from, never what.
    for (key, set) in [
        ("provider.api_key", loaded.config.provider.api_key.is_some()),
        (
            "memory.embedder.api_key",
            loaded.config.memory.embedder.api_key.is_some(),
        ),
    ] {
        if set {
            out.push(ReportLine {
                key: key.into(),
                value: "<redacted>".into(),
                source: loaded.source_of(key),
            });
        }
    }
    for (var, set) in [
        ("OPENAI_API_KEY", loaded.keys.openai.is_some()),
        ("ANTHROPIC_API_KEY", loaded.keys.anthropic.is_some()),
        ("DEEPSEEK_API_KEY", loaded.keys.deepseek.is_some()),
    ] {
        if set {
            out.push(ReportLine {
                key: format!("keys.{}", var.trim_end_matches("_API_KEY").to_lowercase()),
                value: "<redacted>".into(),
                source: Source::Env(var),
            });
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

fn flatten(table: &Table, prefix: &str, loaded: &Loaded, out: &mut Vec<ReportLine>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(t) => flatten(t, &key, loaded, out),
            v => out.push(ReportLine {
                value: if is_secret(&key) {
                    "<redacted>".into()
                } else {
                    v.to_string()
                },
                source: loaded.source_of(&key),
                key,
            }),
        }
    }
}

/// Unset optional keys do not serialise; list them so users see what they could set.
pub fn unset_keys(config: &Config) -> Vec<&'static str> {
    let mut out = Vec::new();
    if config.provider.name.is_none() {
        out.push("provider.name");
    }
    if config.provider.model.is_none() {
        out.push("provider.model");
    }
    if config.provider.base_url.is_none() {
        out.push("provider.base_url");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn budgets_are_not_secrets() {
        for k in [
            "provider.api_key",
            "memory.embedder.api_key",
            "x.auth_token",
            "db.password",
        ] {
            assert!(super::is_secret(k), "{k}");
        }
        for k in [
            "agent.context_tokens",
            "agent.summarize_after_tokens",
            "keyboard.layout",
        ] {
            assert!(!super::is_secret(k), "{k}");
        }
    }
}
