//! Whether the value of a secret-named assignment is a literal secret: quoted text that is
//! not a placeholder, a template, a label or a sentence; an env-file value; or an unquoted word
//! random enough to be a credential rather than an identifier, a path or a type.

use super::assign::name_kind;

#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "to", "of", "for", "is", "if", "in", "and", "or", "be", "this", "that",
    "use", "used", "with", "from", "by", "not", "will", "your", "you", "my", "are", "as", "it",
    "on", "enter", "please", "must", "should", "can", "new", "no",
];

/// A quoted value is a literal secret unless it is empty-ish, a placeholder or template, a
/// flag word, a variable's or header's name, a URL or path, or a sentence.
pub(super) fn quoted_is_literal(value: &str, kind: &str) -> bool {
    let trimmed = value.trim();
    if trimmed.chars().count() < 3 || is_placeholder(trimmed) || has_template_hole(value) {
        return false;
    }
    // `"…" + x + "…"` cut in the middle, a version or OID (`1.3.6.1.5.5.7.3.1`).
    if trimmed.starts_with([',', ';', '+', ')'])
        || (trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && trimmed.bytes().filter(|&b| b == b'.').count() >= 2)
    {
        return false;
    }
    let lower = trimmed.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true"
            | "false"
            | "none"
            | "null"
            | "nil"
            | "undefined"
            | "string"
            | "required"
            | "optional"
            | "hidden"
            | "text"
            | "bearer"
            | "basic"
            | "yes"
            | "no"
            | "enabled"
            | "disabled"
            | "missing"
            // fetch()'s `credentials:` modes
            | "include"
            | "omit"
            | "same-origin"
    ) {
        return false;
    }
    // An env var's name, a header name, or words that describe a secret.
    if is_env_name(trimmed) || describes_secret(trimmed, kind) {
        return false;
    }
    if trimmed.contains("://") && !trimmed.contains('@') || looks_like_path(trimmed) {
        return false;
    }
    if trimmed.contains(' ') && is_prose(trimmed) {
        return false;
    }
    true
}

/// A format or template hole (`{}`, `{0}`, `{name}`, `{user.id}`): an f-string or a format
/// string, not a literal. Random braces in a generated salt do not count.
fn has_template_hole(v: &str) -> bool {
    let b = v.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'{'
            && b[i + 1..]
                .iter()
                .position(|&d| !(d.is_ascii_alphanumeric() || matches!(d, b'_' | b'.' | b':')))
                .is_some_and(|n| b[i + 1 + n] == b'}')
    })
}

/// `OPENAI_API_KEY`, `GITHUB_TOKEN`: the name of a variable holding the secret.
fn is_env_name(v: &str) -> bool {
    v.len() >= 3
        && v.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && (v.contains('_') || name_kind(v).is_some())
}

/// Letters, spaces and dashes that mention a secret: `X-Auth-Token`, `Your password`.
fn describes_secret(v: &str, kind: &str) -> bool {
    if !v
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || matches!(b, b' ' | b'-' | b'_' | b'.' | b':'))
    {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    [
        "password",
        "passwd",
        "token",
        "secret",
        "key",
        "credential",
        "auth",
        "pass",
    ]
    .iter()
    .any(|w| lower.contains(w))
        || (kind == "api-key" && lower.contains("api"))
}

/// A sentence (a label, a message, a description) rather than a passphrase: long, ends like a
/// sentence, starts like one, or talks about the secret.
fn is_prose(v: &str) -> bool {
    let words: Vec<&str> = v.split_whitespace().collect();
    let lower = v.to_ascii_lowercase();
    words.len() > 6
        || v.ends_with(['.', '?', '!', ':'])
        || (v.starts_with(|c: char| c.is_ascii_uppercase())
            && words
                .iter()
                .any(|w| STOP_WORDS.contains(&w.to_ascii_lowercase().as_str())))
        || ["password", "token", "secret", "key", "credential"]
            .iter()
            .any(|w| lower.contains(w))
}

fn looks_like_path(v: &str) -> bool {
    (v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with("~/"))
        && v[1..].contains('/')
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-~/".contains(&b))
}

/// Template holes, masks and references that stand for a secret without being one.
pub(super) fn is_placeholder(v: &str) -> bool {
    if v.starts_with("[REDACTED")
        || v.contains("${")
        || v.contains("{{")
        || v.contains("#{")
        || v.contains("%(")
        || v.starts_with('$')
        || v.starts_with('%')
    {
        return true;
    }
    // `<password>`, and tokenizers' special tokens (`[PAD]`, `[UNK]`, `<s>`).
    if (v.starts_with('<') && v.ends_with('>'))
        || (v.starts_with('[') && v.ends_with(']') && !v.contains(' '))
    {
        return true;
    }
    // Masks, whole or as the last word (`****`, `xxxx`, `Bearer xxxx`), and documentation's
    // stand-ins (`YOUR_API_KEY`, `your-token-here`, `REPLACE_ME`).
    let lower = v.to_ascii_lowercase();
    if ["your", "replace", "insert", "enter"]
        .iter()
        .any(|p| lower.starts_with(p))
        || lower.ends_with("here")
    {
        return true;
    }
    let last = lower.rsplit(' ').next().unwrap_or(&lower);
    if last.len() >= 3
        && last
            .bytes()
            .all(|b| matches!(b, b'*' | b'x' | b'.' | b'#' | b'-' | b'_' | b'?' | b':'))
    {
        return true;
    }
    matches!(
        lower.as_str(),
        "password"
            | "passwd"
            | "pass"
            | "pwd"
            | "secret"
            | "token"
            | "pw"
            | "your_password"
            | "yourpassword"
            | "your-password"
            | "value"
            | "val"
    )
}

/// The value cannot be a literal: a call, reference, index, type or expression starts here.
pub(super) fn is_code_start(token: &str) -> bool {
    token.starts_with(['(', '[', '{', '&', '|', '\\', '=', '>', '<', ':'])
        || token.contains(['(', '[', '{'])
        || token.starts_with("self.")
        || token.starts_with("this.")
}

/// An env-file value is literal text unless it is a flag, a number or empty-ish.
pub(super) fn env_value_is_literal(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    v.len() >= 3
        && !matches!(
            lower.as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "none" | "nil"
        )
        && !v.bytes().all(|b| b.is_ascii_digit())
        && !is_env_name(v)
        && !looks_like_path(v)
}

/// An unquoted YAML value of two to six plain words: a passphrase, not a sentence.
pub(super) fn is_passphrase(v: &str) -> bool {
    let words: Vec<&str> = v.split_whitespace().collect();
    (2..=6).contains(&words.len())
        && !is_prose(v)
        && !v.ends_with([',', ';', '{', '(', '|', '>'])
        && words.iter().all(|w| {
            w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#%^&*+-_.@~".contains(&b))
        })
        && !words
            .iter()
            .any(|w| w.bytes().next().is_some_and(|b| b.is_ascii_uppercase()))
}

/// Random enough to be a credential rather than an identifier, a word or a type.
pub(super) fn looks_random(v: &str) -> bool {
    if v.len() < 8
        || !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=_-.~!@#%^*?:".contains(&b))
    {
        return false;
    }
    let digits = v.bytes().filter(|b| b.is_ascii_digit()).count();
    let upper = v.bytes().filter(|b| b.is_ascii_uppercase()).count();
    let lower = v.bytes().filter(|b| b.is_ascii_lowercase()).count();
    let letters = upper + lower;
    if letters == 0 || (digits == 0 && (v.len() < 20 || upper == 0 || lower == 0)) {
        return false;
    }
    // URLs and paths are not credentials (one with a password is the URL rule's).
    if v.contains("://") || (v.contains('/') && v.contains('.') && !v.contains(['+', '='])) {
        return false;
    }
    if is_code_path(v) {
        return false;
    }
    shannon_entropy(v) >= (3.0f64).min((v.len() as f64).log2() * 0.85)
}

/// An identifier or a path of them (`proc_macro2::TokenStream`, `crate::__u32`,
/// `x25519_generate_private_key`, `TLS13_CHACHA20_POLY1305_SHA256`, `self.token2`): every
/// part reads as a word, where random text mixes case and scatters digits.
fn is_code_path(v: &str) -> bool {
    v.split(['.', ':'])
        .filter(|seg| !seg.is_empty())
        .all(|seg| {
            seg.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && seg.split('_').all(is_word)
        })
}

/// `token`, `TOKEN`, `AccessToken`, `Win32`, `OSLGetMarkTokenProcPtr`: one case, or camel
/// humps whose lowercase runs are word-like (random text alternates case every letter or
/// two), and at most one run of digits.
fn is_word(part: &str) -> bool {
    let b = part.as_bytes();
    let starts = |pred: fn(&u8) -> bool| {
        b.iter()
            .enumerate()
            .filter(|&(i, c)| pred(c) && (i == 0 || !pred(&b[i - 1])))
            .count()
    };
    let digit_runs = starts(u8::is_ascii_digit);
    let lower_runs = starts(u8::is_ascii_lowercase);
    let upper = b.iter().filter(|c| c.is_ascii_uppercase()).count();
    let lower = b.iter().filter(|c| c.is_ascii_lowercase()).count();
    digit_runs <= 1 && (upper == 0 || lower == 0 || lower >= 2 * lower_runs)
}

fn shannon_entropy(v: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in v.bytes() {
        counts[b as usize] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_and_code() {
        for v in [
            "hunter2hunter2x9",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "a8f5f167f44f4964e6c998dee827110c",
        ] {
            assert!(looks_random(v), "{v}");
        }
        for v in [
            "String",
            "self.token",
            "request.headers",
            "utf8_decode",
            "Option",
            "access_token_value",
            "os.environ",
        ] {
            assert!(!looks_random(v), "{v}");
        }
    }
}
