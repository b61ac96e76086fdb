use super::*;

#[test]
fn provider_keys_and_private_keys_are_removed() {
    let text = "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n\
                anthropic: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\
                aws AKIAIOSFODNN7EXAMPLE ok\n\
                -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n\
                db_password = \"hunter2hunter2\"\n";
    let r = redact(text);
    for secret in ["sk-proj-abc", "sk-ant-api03", "AKIAIOSFODNN7EXAMPLE", "b3BlbnNzaC1rZXktdjEAAAA", "hunter2hunter2"] {
        assert!(!r.contains(secret), "{secret} leaked: {r}");
    }
    assert!(r.contains("OPENAI_API_KEY=[REDACTED:api-key]"), "{r}");
    assert!(
        r.contains("-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED:private-key]\n-----END OPENSSH PRIVATE KEY-----"),
        "{r}"
    );
    assert!(r.contains("db_password = \"[REDACTED:password]\""), "{r}");
}

#[test]
fn ordinary_code_is_untouched_and_borrowed() {
    for code in [
        "fn main() { let task = \"sk-\"; let password = prompt(); }",
        "let token_count = tokens.len();",
        "password_hash(&password, &salt)",
        "fn new(api_key: &Header) -> Self",
        "auth_token = request.headers[\"X-Auth\"]",
        "const HEADER: &str = \"-----BEGIN PRIVATE KEY-----\";",
        "if token == expected_token {",
    ] {
        assert!(matches!(redact(code), Cow::Borrowed(_)), "changed: {code} -> {}", redact(code));
    }
}

#[test]
fn configured_keys_are_removed_exactly() {
    let r = redact_with("key is plainlocalkey123 here", &["plainlocalkey123"]);
    assert_eq!(r, "key is [REDACTED:api-key] here");
}

#[test]
fn redaction_is_stable_when_applied_twice() {
    let text = "GITLAB_TOKEN=glpat-Zx8Qw3Er5Ty7Ui9Op1As\npassword: \"correct horse battery staple\"\n";
    let once = redact(text).into_owned();
    assert_eq!(redact(&once), once);
}

#[test]
fn rules_are_counted_and_labelled() {
    assert_eq!(rule_count(), RULES.len());
    assert!(rule_count() >= 50);
    let labels = labels();
    assert!(labels.contains(&"private-key") && labels.contains(&"gitlab-token"));
}

#[test]
fn multibyte_text_around_secrets_is_kept() {
    let text = "日本語 token=\"Zx8Qw3Er5Ty7Ui9Op1As\" ✓\n";
    assert_eq!(redact(text), "日本語 token=\"[REDACTED:token]\" ✓\n");
}
