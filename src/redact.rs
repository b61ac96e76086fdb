//! Secrets are replaced before any text is sent to a provider or stored: user messages, editor
//! context, tool output and model output all pass through [`redact`].
//!
//! Detection is by the shapes real credentials have (provider key prefixes, PEM private keys,
//! JWTs, `password = …` assignments), plus the exact API keys Mira itself was configured with.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

struct Pattern {
    re: Regex,
    label: &'static str,
    /// First capture group that may hold the secret (0 = the whole match).
    group: usize,
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |re: &str, label, group| Pattern {
        re: Regex::new(re).expect("valid redaction pattern"),
        label,
        group,
    };
    vec![
        p(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
            "private-key",
            0,
        ),
        // OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), DeepSeek and compatibles.
        p(r"\bsk-[A-Za-z0-9_\-]{16,}", "api-key", 0),
        p(r"\bAKIA[0-9A-Z]{16}\b", "aws-access-key", 0),
        p(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", "github-token", 0),
        p(r"\bgithub_pat_[A-Za-z0-9_]{22,}", "github-token", 0),
        p(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", "slack-token", 0),
        p(r"\bAIza[0-9A-Za-z_\-]{35}\b", "google-api-key", 0),
        p(
            r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
            "jwt",
            0,
        ),
        p(
            r#"(?i)(?:api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)["']?\s*[:=]\s*(?:["']([^"'\s]{8,})["']|([A-Za-z0-9_\-+/=.]{12,}))"#,
            "secret",
            1,
        ),
    ]
});

/// Replace every secret in `text` with `[REDACTED:<kind>]`. Borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_with(text, &[])
}

/// [`redact`], plus exact occurrences of `known` secrets (the configured API keys).
pub fn redact_with<'a>(text: &'a str, known: &[&str]) -> Cow<'a, str> {
    let mut out: Cow<'a, str> = Cow::Borrowed(text);
    for secret in known.iter().filter(|s| s.len() >= 8) {
        if out.contains(secret) {
            out = Cow::Owned(out.replace(secret, "[REDACTED:api-key]"));
        }
    }
    for p in PATTERNS.iter() {
        if !p.re.is_match(&out) {
            continue;
        }
        let replaced =
            p.re.replace_all(&out, |caps: &regex::Captures| {
                let whole = caps.get(0).expect("match");
                // Patterns with alternatives capture the secret in whichever group matched.
                let secret = (p.group..caps.len())
                    .find_map(|g| caps.get(g).filter(|_| g > 0))
                    .unwrap_or(whole);
                let mut s = String::with_capacity(whole.len());
                s.push_str(&out[whole.start()..secret.start()]);
                s.push_str("[REDACTED:");
                s.push_str(p.label);
                s.push(']');
                s.push_str(&out[secret.end()..whole.end()]);
                s
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_keys_and_private_keys_are_removed() {
        let text = "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n\
                    anthropic: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\
                    aws AKIAIOSFODNN7EXAMPLE ok\n\
                    -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n\
                    db_password = \"hunter2hunter2\"\n";
        let r = redact(text);
        for secret in [
            "sk-proj-abc",
            "sk-ant-api03",
            "AKIAIOSFODNN7EXAMPLE",
            "b3BlbnNzaC1rZXktdjEAAAA",
            "hunter2hunter2",
        ] {
            assert!(!r.contains(secret), "{secret} leaked: {r}");
        }
        assert!(
            r.contains("[REDACTED:api-key]") && r.contains("[REDACTED:private-key]"),
            "{r}"
        );
        assert!(r.contains("db_password = \"[REDACTED:secret]\""), "{r}");
    }

    #[test]
    fn ordinary_code_is_untouched_and_borrowed() {
        let code = "fn main() { let task = \"sk-\"; let password = prompt(); }";
        assert!(matches!(redact(code), Cow::Borrowed(_)));
    }

    #[test]
    fn configured_keys_are_removed_exactly() {
        let r = redact_with("key is plainlocalkey123 here", &["plainlocalkey123"]);
        assert_eq!(r, "key is [REDACTED:api-key] here");
    }
}
