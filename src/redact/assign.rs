//! `NAME=value`, `name: value`, `"name": "value"`, `name => 'value'` … where the name says
//! secret. Only literal values are taken: quoted text, the value of an env-file line, or an
//! unquoted word random enough to be a credential. Code that merely names a secret
//! (`token_count`, `password_hash(…)`, `api_key: &Header`, `auth = request.headers[…]`) is not.

use std::sync::LazyLock;

use regex::Regex;

use super::literal::{
    env_value_is_literal, is_code_start, is_passphrase, is_placeholder, looks_random,
    quoted_is_literal,
};

/// Text one of which every secret-looking name contains (the prefilter's keywords).
#[rustfmt::skip]
pub(super) const KEYWORDS: &[&str] = &[
    "token", "secret", "passw", "passphrase", "_pass", "pass_", "pass=", "pass:", "pass\"",
    "pass'", "pass ", "-pass", ".pass", "pw", "credential", "auth\"", "auth'", "auth=",
    "auth:", "auth ", "_auth", "authkey", "auth_key", "auth-key", "apikey", "api_key", "api-key",
    "api.key", "privatekey", "private_key", "private-key", "private.key", "accesskey",
    "access_key", "access-key", "access.key", "signingkey", "signing_key", "signing-key",
    "encryptionkey", "encryption_key", "encryption-key", "masterkey", "master_key",
    "master-key", "appkey", "app_key", "app-key", "accountkey", "account_key", "account-key",
    "sessionkey", "session_key", "session-key", "sharedkey", "shared_key", "shared-key",
    "saskey", "sas_key", "storagekey", "storage_key", "storage-key", "licensekey",
    "license_key", "license-key", "webhookkey", "webhook_key", "webhook-key", "clientkey",
    "client_key", "client-key", "servicekey", "service_key", "service-key", "subscriptionkey",
    "subscription_key", "subscription-key", "consumerkey", "consumer_key", "consumer-key",
];

/// The last word of a name that makes it metadata about a secret rather than the secret.
/// Sorted, for `binary_search`.
#[rustfmt::skip]
const METADATA: &[&str] = &[
    "alg", "algorithm", "arg", "args", "at", "attr", "attribute", "builder", "by", "bytes",
    "cache", "callback", "chars", "check", "class", "client", "cmd", "col", "column", "command",
    "comment", "config", "count", "counts", "desc", "description", "dict", "dir", "disabled",
    "doc", "docs", "enable", "enabled", "encoding", "end", "endpoint", "env", "error", "errors",
    "exists", "exp", "expiration", "expired", "expires", "expiry", "factory", "field", "fields",
    "file", "filename", "files", "flag", "fmt", "fn", "format", "func", "function", "generator",
    "handler", "has", "hash", "hashed", "hasher", "header", "headers", "help", "hidden", "hint",
    "icon", "id", "ids", "idx", "in", "index", "input", "invalid", "is", "iter", "kind",
    "kinds", "label", "len", "length", "limit", "line", "list", "loader", "location", "lookup",
    "manager", "map", "mask", "masked", "max", "message", "method", "mgr", "min", "missing",
    "mode", "msg", "name", "names", "new", "note", "num", "number", "offset", "old", "option",
    "options", "param", "parameter", "parser", "path", "paths", "pattern", "placeholder",
    "policy", "pos", "position", "prefix", "present", "prompt", "provider", "re", "reader",
    "redacted", "ref", "refs", "regex", "req", "request", "required", "res", "response",
    "result", "schema", "scheme", "service", "set", "settings", "size", "slot", "source",
    "spec", "src", "start", "state", "status", "store", "str", "strategy", "stream", "string",
    "suffix", "template", "text", "timeout", "title", "to", "ttl", "type", "types", "uri",
    "url", "urls", "usage", "use", "uses", "valid", "validation", "validator", "value_type",
    "var", "variable", "ver", "version", "visible", "widget", "writer",
];

/// Qualifiers that make a plain `key` a credential (`api_key`, `signing_key`, …).
#[rustfmt::skip]
const KEY_QUALIFIERS: &[&str] = &[
    "api", "secret", "private", "access", "auth", "signing", "encryption", "master", "app",
    "account", "session", "shared", "sas", "storage", "license", "webhook", "client", "service",
    "subscription", "consumer",
];

/// A name, an optional closing quote or `]`, then the operator. No capture groups: a plain
/// search is several times faster, and the parts are easy to take apart by hand.
static NAME_OP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"[A-Za-z_$@][A-Za-z0-9_.\-]*["'`]?\]?[ \t]*(?::=|=>|\?=|=|:)"#)
        .expect("valid assignment pattern")
});

/// The kind of secret a name announces, or `None` for names that only describe one.
pub(super) fn name_kind(name: &str) -> Option<&'static str> {
    // `config.password` names a password, `tokenData.permissions` does not: the last segment
    // decides, with the one before it only to qualify a bare `key` (`api.key`).
    let mut segments = name.rsplit('.');
    let mut words = split_words(segments.next().unwrap_or(name));
    if words.len() == 1
        && words[0] == "key"
        && let Some(q) = segments.next().and_then(|s| split_words(s).pop())
    {
        words.insert(0, q);
    }
    let last = words.last()?;
    if METADATA.binary_search(&last.as_str()).is_ok() {
        return None;
    }
    let mut kind = None;
    for (i, w) in words.iter().enumerate() {
        let found = if w.ends_with("password")
            || w.ends_with("passwd")
            || w == "pass"
            || w.ends_with("passphrase")
            || w.ends_with("pwd")
            || w == "pw"
        {
            Some("password")
        } else if w.ends_with("token") {
            Some("token")
        } else if w.ends_with("secret") || w.ends_with("secretkey") {
            Some("secret")
        } else if w.ends_with("credential") || w.ends_with("credentials") {
            Some("credential")
        } else if w.ends_with("apikey") || w.ends_with("accesskey") || w.ends_with("authkey") {
            Some("api-key")
        } else if w.ends_with("privatekey") || w.ends_with("signingkey") {
            Some("private-key")
        } else if w == "key" && i > 0 && KEY_QUALIFIERS.contains(&words[i - 1].as_str()) {
            Some(if words[i - 1] == "private" || words[i - 1] == "signing" {
                "private-key"
            } else {
                "api-key"
            })
        } else if w == "auth" && i + 1 == words.len() {
            Some("credential")
        } else {
            None
        };
        // The most specific word wins: `secret_token` is a token, `db_password` a password.
        if found.is_some() {
            kind = found;
        }
    }
    kind
}

/// Lowercase words of an identifier: split at non-alphanumerics and camelCase humps.
fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Every literal secret assigned on `line`: (start, end, label) relative to the line.
pub(super) fn find(line: &str, out: &mut Vec<(usize, usize, &'static str)>) {
    find_operator_assignments(line, out);
    // Rarer shapes, each behind a cheap check: `<password>…</password>` (Maven settings, .NET
    // configs) and a name/value pair of strings (`define('DB_PASSWORD', '…')`,
    // `environ.setdefault("SECRET_KEY", "…")`, `headers.set("X-Api-Key", "…")`).
    if line.contains("</") {
        out.extend(matches(&XML_ELEMENT, line));
    }
    if line.contains("\",") || line.contains("',") {
        for (s, e, kind) in matches(&STRING_PAIR, line) {
            let (name, value) = (&line[..s], &line[s..e]);
            if pair_is_setting(name, value) {
                out.push((s, e, kind));
            }
        }
    }
}

/// A pair of strings is a setting when the name is a constant or header name
/// (`DB_PASSWORD`, `X-Api-Key`) and the value is not a plain word (`('AUTH', 'SELECTED')`,
/// `log.info('token', 'creating')` are code).
fn pair_is_setting(before_value: &str, value: &str) -> bool {
    let name = before_value
        .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | '"' | '\''))
        .rsplit(['"', '\''])
        .next()
        .unwrap_or("");
    let constant = name.contains('-')
        || name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    let plain_word = value.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ')
        && !(value.len() >= 16
            && value.bytes().any(|b| b.is_ascii_uppercase())
            && value.bytes().any(|b| b.is_ascii_lowercase()));
    constant && !plain_word
}

/// `<name>value</`: the element's name and text.
static XML_ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<(?P<name>[A-Za-z_][\w:.\-]*)>(?P<v>[^<\n]{3,})</").expect("valid pattern")
});

/// `"name", "value"`: two string literals, the first a name.
static STRING_PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"["'](?P<name>[A-Za-z_][\w.\-]*)["']\s*,\s*["'](?P<v>(?:[^"'\\\n]|\\.)+)["']"#)
        .expect("valid pattern")
});

/// Values whose name (group `name`) says secret and which are literals (group `v`).
fn matches<'a>(
    re: &'a Regex,
    line: &'a str,
) -> impl Iterator<Item = (usize, usize, &'static str)> + 'a {
    re.captures_iter(line).filter_map(|caps| {
        let v = caps.name("v").expect("group");
        let kind = name_kind(&caps["name"])?;
        quoted_is_literal(v.as_str(), kind).then_some((v.start(), v.end(), kind))
    })
}

fn find_operator_assignments(line: &str, out: &mut Vec<(usize, usize, &'static str)>) {
    for m in NAME_OP.find_iter(line) {
        let text = m.as_str();
        let name_len = text
            .find(|c: char| {
                !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '$' | '@'))
            })
            .unwrap_or(text.len());
        let op_len = if text.ends_with(":=") || text.ends_with("=>") || text.ends_with("?=") {
            2
        } else {
            1
        };
        let (name_start, op_start, op_end) = (m.start(), m.end() - op_len, m.end());
        // A redaction's own label (`[REDACTED:api-key]=…`) names nothing.
        if line[..name_start].ends_with("[REDACTED:") {
            continue;
        }
        let Some(kind) = name_kind(&line[name_start..name_start + name_len]) else {
            continue;
        };
        let op = &line[op_start..op_end];
        // `'password' => …` (PHP) and `:password => …` (Ruby) assign; `Enum::Secret => …`
        // is a match arm.
        if op == "=>" && !line[..name_start].ends_with(['\'', '"', ':']) {
            continue;
        }
        // `a == b`, `a::b`, `a := b` vs `a :: B`: comparisons and paths are not assignments.
        let after = &line[op_end..];
        if after.starts_with('=') || (op == ":" && after.starts_with(':')) {
            continue;
        }
        let before = &line[..name_start];
        let env = Env {
            line: op == "=" && is_env_line(line, name_start, op_start),
            flag: op == "="
                && ["-e ", "--env ", "--env=", "--build-arg ", "--build-arg="]
                    .iter()
                    .any(|f| before.ends_with(f)),
        };
        let yaml_style = op == ":"
            && line[..name_start]
                .trim_start_matches([' ', '\t', '-'])
                .is_empty();
        if let Some((s, e)) = literal_value(line, op_end, kind, env, yaml_style) {
            out.push((s, e, kind));
        }
    }
}

/// How an environment variable is being set, if it is: such values are literal text.
#[derive(Clone, Copy)]
struct Env {
    /// `NAME=value` is the whole line.
    line: bool,
    /// `docker run -e NAME=value`, `--build-arg NAME=value`.
    flag: bool,
}

/// `NAME=value` alone on its line: an env file, a shell line (`export`, `set`), a Dockerfile
/// (`ENV`, `ARG`) or a compose `environment:` list item (`- NAME=value`).
fn is_env_line(line: &str, name_start: usize, op_start: usize) -> bool {
    let before = line[..name_start].trim();
    let before = before.strip_prefix('-').unwrap_or(before).trim_start();
    let before = ["export", "set", "ENV", "ARG"]
        .iter()
        .find_map(|k| before.strip_prefix(k))
        .unwrap_or(before);
    // Java properties (`spring.datasource.password=…`) have the same shape.
    before.trim().is_empty()
        && line[name_start..op_start]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Where the literal value after an operator lies, if it is a literal.
fn literal_value(
    line: &str,
    from: usize,
    kind: &str,
    env: Env,
    yaml_style: bool,
) -> Option<(usize, usize)> {
    let rest = &line[from..];
    let skipped = rest.len() - rest.trim_start().len();
    let start = from + skipped;
    let rest = &line[start..];
    // String prefixes: b"…", r"…", u'…', r#"…"#; f-strings are code.
    let prefix = rest
        .bytes()
        .take_while(|b| matches!(b, b'b' | b'r' | b'u' | b'B' | b'R' | b'U' | b'#'))
        .count();
    let quote = rest.as_bytes().get(prefix).copied();
    if prefix <= 2 && matches!(quote, Some(b'"' | b'\'' | b'`')) {
        let q = quote.expect("checked");
        let inner_start = start + prefix + 1;
        let inner_len = closing_quote(&line[inner_start..], q)?;
        let value = &line[inner_start..inner_start + inner_len];
        return quoted_is_literal(value, kind).then_some((inner_start, inner_start + inner_len));
    }
    let end = rest
        .find(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | ')' | '}' | '"' | '\'' | '`' | '<' | '&')
        })
        .unwrap_or(rest.len());
    let token = &rest[..end];
    if token.is_empty() || is_placeholder(token) || is_code_start(token) {
        return None;
    }
    // In an env file the value runs to the end of the line; `auth=auth,` is a keyword argument.
    // `docker run -e NAME=value …` passes one the same way.
    let after = rest[end..].trim_start();
    if (env.line && (after.is_empty() || after.starts_with('#'))) || env.flag {
        return env_value_is_literal(token).then_some((start, start + end));
    }
    if yaml_style && kind == "password" {
        let value = rest.split(" #").next().unwrap_or(rest).trim_end();
        if value.len() > end && is_passphrase(value) {
            return Some((start, start + value.len()));
        }
    }
    looks_random(token).then_some((start, start + end))
}

/// Length of a quoted string's content up to its closing quote on this line.
fn closing_quote(s: &str, q: u8) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == q => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_words_are_sorted_for_binary_search() {
        assert!(METADATA.is_sorted());
    }

    #[test]
    fn names_that_say_secret() {
        for n in [
            "GITLAB_TOKEN",
            "db_password",
            "apiKey",
            "x-api-key",
            "client_secret",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "secret_key_base",
            "auth",
            "signing_key",
            "passphrase",
        ] {
            assert!(name_kind(n).is_some(), "{n}");
        }
        for n in [
            "token_count",
            "password_hash",
            "tokenizer",
            "keyboard",
            "monkey",
            "TOKEN_TYPE",
            "secret_name",
            "api_key_env",
            "author",
            "passes",
            "key",
        ] {
            assert_eq!(name_kind(n), None, "{n}");
        }
    }
}
