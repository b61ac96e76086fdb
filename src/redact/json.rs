//! Tool-call arguments are JSON written by the model: a secret inside a string value sits
//! behind escaped quotes (`"text": "pw: \"hunter two\""`) that the line rules do not read as
//! quotes. So each string value is redacted as the text it decodes to.

use std::borrow::Cow;

use serde_json::Value;

use super::redact_with;

/// `text` with every JSON string value (and the text as a whole) redacted. Valid JSON stays
/// valid; text that is not JSON is redacted as plain text.
pub fn redact_json<'a>(text: &'a str, known: &[&str]) -> Cow<'a, str> {
    let Ok(mut value) = serde_json::from_str::<Value>(text) else {
        return redact_with(text, known);
    };
    if !redact_strings(&mut value, known) {
        // Nothing inside changed; the raw text may still hold a key across values.
        return redact_with(text, known);
    }
    Cow::Owned(value.to_string())
}

/// Redacts every string in place; whether any changed.
fn redact_strings(v: &mut Value, known: &[&str]) -> bool {
    match v {
        Value::String(s) => match redact_with(s, known) {
            Cow::Owned(o) => {
                *s = o;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(a) => a
            .iter_mut()
            .fold(false, |changed, x| redact_strings(x, known) | changed),
        Value::Object(m) => m
            .values_mut()
            .fold(false, |changed, x| redact_strings(x, known) | changed),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_behind_escaped_quotes_are_redacted_and_json_stays_valid() {
        let args = r#"{"text":"the staging db passphrase: \"correct horse battery staple 42\"","kind":"fact"}"#;
        let out = redact_json(args, &[]);
        assert!(!out.contains("horse battery"), "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["kind"], "fact");
        assert_eq!(
            redact_json(r#"{"path":"src/main.rs"}"#, &[]),
            r#"{"path":"src/main.rs"}"#
        );
        assert!(!redact_json("not json sk_live_51Hx9QaZk2Lp8Mn4Bv6Cx0Rt", &[]).contains("51Hx9"));
    }
}
