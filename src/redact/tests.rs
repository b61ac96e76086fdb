//! Unit tests of redaction: what each shape removes, what ordinary code keeps, stability
//! when applied twice, and the keyword prefilter agreeing with running every rule.

use super::*;

#[test]
fn provider_keys_and_private_keys_are_removed() {
    let text = "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n\
                anthropic: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\
                aws AKIAIOSFODNN7EXAMPLE ok\n\
                -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n\
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
        // Found by running every line of the Python stdlib, the crates.io sources in the
        // cargo registry and npm through it.
        "pub type TokenStream2 = proc_macro2::TokenStream;",
        "ZipError::InvalidPassword => ZipError::InvalidPassword,",
        "ClientEarlyTrafficSecret => b\"c e traffic\",",
        "const FLAGS_PASS = sys::IORING_MSG_RING_FLAGS_PASS;",
        "let traffic_secret_expander = TLS13_CHACHA20_POLY1305_SHA256_INTERNAL",
        // Split so tests/it/tidy.rs does not read it as an import of `crate::sync`.
        concat!(
            "/// [`CancellationToken`]: crate",
            "::sync::CancellationToken"
        ),
        "/// [`Token`]: ../struct.Token.html",
        "let raw_private_key: Curve25519SeedBin<'_> = private_key",
        "fn finish(auth: poly1305::Context, aad_len: usize) -> Tag {",
        "let pad_token = \"[PAD]\";",
        "credentials: 'include',",
        "    auth=auth,",
        "'MODULE_PWD_STATE': 'yes',",
        "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'",
        "\"secret\": \"㊙\",",
        "// token: 'Bearer xxxx'",
        "tokenData.packages_and_scopes_permission = packagesAndScopesPermission",
        "log.info('token', 'creating')",
        "'APPEND':       ('AUTH', 'SELECTED'),",
        "information can be provided via the --username and --password options",
        "pub Password: super::super::super::Win32::Foundation::UNICODE_STRING,",
        "pub type OSLGetMarkTokenUPP = OSLGetMarkTokenProcPtr;",
        // Code in other languages, and documentation's stand-ins.
        "password := r.FormValue(\"password\")",
        "type Props = { token: string; onLogin: () => void }",
        "read -rsp \"Password: \" PASSWORD",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "token = \"Bearer \" + access_token",
        "api_key = os.getenv(\"OPENAI_API_KEY\", \"\")",
        "headers[\"Authorization\"] = f\"Bearer {token}\"",
        "Authorization: Bearer YOUR_API_KEY",
        "  password: The password used to log in.",
        "    secret_key: Optional[str] = None",
        "TOKEN_EXPIRY=3600",
        "db_password: \"{{ lookup('env', 'DB_PASSWORD') }}\"",
        "echo \"$GITHUB_TOKEN\" | docker login ghcr.io -u USERNAME --password-stdin",
        "let uri: Uri = \"/hello/world?key=value&foo=bar\".parse().unwrap();",
    ] {
        assert!(
            matches!(redact(code), Cow::Borrowed(_)),
            "changed: {code} -> {}",
            redact(code)
        );
    }
}

#[test]
fn configured_keys_are_removed_exactly() {
    let r = redact_with("key is plainlocalkey123 here", &["plainlocalkey123"]);
    assert_eq!(r, "key is [REDACTED:api-key] here");
}

#[test]
fn redaction_is_stable_when_applied_twice() {
    let text =
        "GITLAB_TOKEN=glpat-Zx8Qw3Er5Ty7Ui9Op1As\npassword: \"correct horse battery staple\"\n";
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

/// Every rule on every line, without the prefilter: what the prefilter must never change.
fn reference(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut offset = 0;
    for line in text.split('\n') {
        let all = (0..RULES.len()).fold(0, |set: RuleSet, bit| set | 1 << bit);
        ENGINE.scan_line(line, offset, all, &mut spans);
        offset += line.len() + 1;
    }
    let mut out: Vec<_> = spans.iter().map(|s| (s.start, s.end)).collect();
    out.extend(
        text.match_indices("-----BEGIN")
            .filter_map(|(at, _)| keys::pem_block(text, at)),
    );
    out.extend(
        text.match_indices("Private-Lines:")
            .filter_map(|(at, _)| keys::putty_private_lines(text, at)),
    );
    out.sort_unstable();
    out.dedup();
    out
}

fn filtered(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    ENGINE.scan(text, &mut spans);
    let mut out: Vec<_> = spans.iter().map(|s| (s.start, s.end)).collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[test]
fn the_keyword_prefilter_finds_what_every_rule_on_every_line_finds() {
    let fixture = include_str!("../../tests/fixtures/redact/secrets.txt")
        .replace("{{", "")
        .replace("}}", "");
    let lines: Vec<&str> = fixture
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let keywords: Vec<&str> = RULES
        .iter()
        .flat_map(|r| r.keywords.iter().copied())
        .collect();
    // Glue every keyword in front of the secrets, so keywords run into each other.
    for (i, line) in lines.iter().enumerate() {
        for text in [
            line.to_string(),
            format!("{}{line}", keywords[i % keywords.len()]),
            format!("x{}{line}", keywords[(i * 7) % keywords.len()]),
        ] {
            assert_eq!(filtered(&text), reference(&text), "{text}");
        }
    }
    for k in &keywords {
        for line in lines.iter().step_by(9) {
            let text = format!("{k}{line}");
            assert_eq!(filtered(&text), reference(&text), "{text}");
        }
    }
}

#[test]
fn the_keyword_prefilter_changes_nothing_on_real_code() {
    let clean =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redact/clean");
    let mut checked = 0;
    for dir in std::fs::read_dir(&clean).expect("clean fixtures") {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            assert_eq!(filtered(&text), reference(&text));
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} clean files found");
}

/// Fragments of every rule's shapes cut and glued at random, multi-byte text around them: no
/// panic, and redacting the result again changes nothing.
#[test]
fn random_glue_of_fragments_never_panics_and_is_stable() {
    let fixture = include_str!("../../tests/fixtures/redact/secrets.txt")
        .replace("{{", "")
        .replace("}}", "");
    let mut pool: Vec<String> = RULES
        .iter()
        .flat_map(|r| r.keywords.iter().map(|k| k.to_string()))
        .collect();
    pool.extend(fixture.lines().map(str::to_owned));
    pool.extend(
        [
            "é",
            "日本",
            "🔑",
            " ",
            "\n",
            "=",
            ":",
            "\"",
            "'",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "Private-Lines: 2\n",
            "\\n",
            "{",
            "}",
            "@",
            "://",
        ]
        .map(str::to_owned),
    );
    let mut seed: u64 = 14;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..1 + next(8) {
            let frag = &pool[next(pool.len())];
            // Cut fragments at a random char boundary, so shapes come out partial too.
            let cut = frag
                .char_indices()
                .map(|(i, _)| i)
                .nth(next(frag.chars().count() + 1));
            text.push_str(&frag[..cut.unwrap_or(frag.len())]);
        }
        let once = redact(&text).into_owned();
        assert_eq!(redact(&once), once, "not stable: {text:?}");
    }
}

/// A rule that must keep Unicode (it has `\S` or a negated class, which could stop inside a
/// UTF-8 sequence in ASCII mode) must not use `\w`: repeated, a Unicode `\w` compiles to
/// megabytes of automata (`compile`). Spell it `[A-Za-z0-9_]`.
#[test]
fn no_rule_compiles_a_unicode_word_class() {
    for rule in super::rules::RULES.iter() {
        if let super::rules::Detect::Regex(p) | super::rules::Detect::RandomRegex(p) = rule.detect {
            let ascii = regex::RegexBuilder::new(p).unicode(false).build().is_ok();
            assert!(ascii || !p.contains(r"\w"), "{p}");
        }
    }
}
