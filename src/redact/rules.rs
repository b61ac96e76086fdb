//! The table of secret shapes. Each rule names the literal text every match contains (found for
//! all rules at once by the prefilter) and either a regex, whose group `s` (else the whole match)
//! is the secret, or a detector written out in code for shapes a regex cannot judge alone.
//!
//! The shapes follow what maintained scanners look for by default (gitleaks, trufflehog,
//! detect-secrets), written from their public rule descriptions and the providers' token formats.

/// How a rule finds its secrets once a keyword was seen on a line.
#[derive(Clone, Copy)]
pub(super) enum Detect {
    /// A regex run over the line; group `s` (or the whole match) is replaced.
    Regex(&'static str),
    /// A regex whose secret must also look random (see `assign::looks_random`).
    RandomRegex(&'static str),
    /// `name = value` assignments whose name says secret (`assign.rs`).
    Assignment,
    /// PEM / OpenSSH / PGP private key blocks, possibly spanning lines (`keys.rs`).
    PemBlock,
    /// The private lines of a PuTTY `.ppk` file (`keys.rs`).
    PuttyPrivateLines,
}

pub(super) struct Rule {
    pub label: &'static str,
    /// Literal text every match contains (matched ignoring ASCII case).
    pub keywords: &'static [&'static str],
    pub detect: Detect,
    /// Which label wins where two matches overlap (the more specific rule is higher).
    pub priority: u8,
}

const fn provider(
    label: &'static str,
    keywords: &'static [&'static str],
    re: &'static str,
) -> Rule {
    Rule {
        label,
        keywords,
        detect: Detect::Regex(re),
        priority: 3,
    }
}

const fn named(label: &'static str, keywords: &'static [&'static str], re: &'static str) -> Rule {
    Rule {
        label,
        keywords,
        detect: Detect::Regex(re),
        priority: 2,
    }
}

/// `SK` and `key-` followed by a hex digit: Twilio and Mailgun key prefixes.
const HEX_AFTER_SK: &[&str] = &[
    "sk0", "sk1", "sk2", "sk3", "sk4", "sk5", "sk6", "sk7", "sk8", "sk9", "ska", "skb", "skc",
    "skd", "ske", "skf",
];
const HEX_AFTER_KEY: &[&str] = &[
    "key-0", "key-1", "key-2", "key-3", "key-4", "key-5", "key-6", "key-7", "key-8", "key-9",
    "key-a", "key-b", "key-c", "key-d", "key-e", "key-f",
];

/// Command-line flags that take a secret.
const CLI_FLAGS: &[&str] = &[
    "--pass",
    "--token",
    "--api-key",
    "--apikey",
    "--secret",
    "--client-secret",
    "--auth-token",
];

pub(super) static RULES: &[Rule] = &[
    // --- Cloud providers -------------------------------------------------------------------
    provider(
        "aws-access-key-id",
        &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
    ),
    named(
        "aws-secret-access-key",
        &["aws"],
        r#"(?i)aws[A-Za-z0-9_.\-]{0,30}?(?:secret|sk)[A-Za-z0-9_.\-]{0,20}["']?\s*(?:=>|:=|[:=])\s*["']?(?P<s>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#,
    ),
    provider("gcp-api-key", &["AIza"], r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    provider(
        "gcp-oauth-secret",
        &["GOCSPX-"],
        r"\bGOCSPX-[0-9A-Za-z_\-]{28}\b",
    ),
    provider(
        "gcp-access-token",
        &["ya29."],
        r"\bya29\.[0-9A-Za-z_\-]{30,}",
    ),
    named(
        "gcp-service-account",
        &["private_key_id"],
        r#""private_key_id"\s*:\s*"(?P<s>[a-f0-9]{40})""#,
    ),
    provider(
        "azure-client-secret",
        &["Q~"],
        r"(?:^|[\s'\x22=:,(>])(?P<s>[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})(?:$|[\s'\x22,;)<&])",
    ),
    named(
        "azure-storage-key",
        &["accountkey=", "sharedaccesskey="],
        r"\b(?i:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{20,}={0,2})",
    ),
    named(
        "azure-sas-signature",
        &["sig="],
        r"\bsig=(?P<s>[A-Za-z0-9%+/=]{30,})",
    ),
    provider(
        "digitalocean-token",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
    ),
    provider("alibaba-access-key", &["LTAI"], r"\bLTAI[A-Za-z0-9]{20}\b"),
    named(
        "datadog-key",
        &["datadog", "dd_api", "dd_app", "dd-api", "dd-app"],
        r#"(?i)(?:datadog|\bdd)[_\-.]?(?:api|app|application)[_\-.]?key["']?\s*(?:=>|:=|[:=])\s*["']?(?P<s>[a-f0-9]{32,40})\b"#,
    ),
    provider(
        "newrelic-key",
        &["NRAK-", "NRJS-", "NRII-"],
        r"\bNR(?:AK|JS|II)-[A-Za-z0-9]{19,32}\b",
    ),
    provider(
        "dynatrace-token",
        &["dt0c01."],
        r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b",
    ),
    provider("heroku-key", &["HRKU-"], r"\bHRKU-[A-Za-z0-9_\-]{40,}"),
    provider(
        "flyio-token",
        &["fo1_", "FlyV1 "],
        r"\b(?:fo1_[\w\-]{40,}|FlyV1 fm[12][ae]_[\w+/=,\-]{40,})",
    ),
    provider(
        "terraform-token",
        &[".atlasv1."],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}",
    ),
    provider(
        "vault-token",
        &["hvs.", "hvb."],
        r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}",
    ),
    provider(
        "doppler-token",
        &[
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
        ],
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
    ),
    provider("pulumi-token", &["pul-"], r"\bpul-[a-f0-9]{40}\b"),
    provider(
        "databricks-token",
        &["dapi"],
        r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
    ),
    provider(
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
    ),
    // --- Code hosts and package registries ------------------------------------------------
    provider(
        "github-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    ),
    provider(
        "gitlab-token",
        &[
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "gloas-",
            "glcbt-",
            "glft-",
            "glimt-",
            "glagent-",
            "glsoat-",
            "glffct-",
            "GR1348941",
        ],
        r"\b(?:gl(?:pat|dt|rt|ptt|oas|cbt|ft|imt|agent|soat|ffct)-[0-9A-Za-z_\-.]{20,}|GR1348941[0-9A-Za-z_\-]{20,})",
    ),
    provider("npm-token", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b"),
    provider(
        "pypi-token",
        &["pypi-AgE"],
        r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
    ),
    provider(
        "docker-hub-token",
        &["dckr_pat_"],
        r"\bdckr_pat_[A-Za-z0-9_\-]{27,}",
    ),
    provider(
        "atlassian-token",
        &["ATATT3"],
        r"\bATATT3[A-Za-z0-9_\-=]{60,}",
    ),
    provider(
        "postman-key",
        &["PMAK-"],
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
    ),
    provider("linear-key", &["lin_api_"], r"\blin_api_[A-Za-z0-9]{40}\b"),
    provider(
        "grafana-token",
        &["glc_", "glsa_"],
        r"\b(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b)",
    ),
    provider(
        "sentry-token",
        &["sntrys_", "sntryu_"],
        r"\bsntry[su]_[A-Za-z0-9+/=_\-]{40,}",
    ),
    // --- AI providers ----------------------------------------------------------------------
    // OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-), DeepSeek,
    // OpenRouter (sk-or-v1-) and the many compatibles: the label Mira always used.
    provider("api-key", &["sk-"], r"\bsk-[A-Za-z0-9_\-]{20,}"),
    provider(
        "huggingface-token",
        &["hf_", "api_org_"],
        r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b",
    ),
    provider("groq-key", &["gsk_"], r"\bgsk_[A-Za-z0-9]{48,}\b"),
    provider("xai-key", &["xai-"], r"\bxai-[A-Za-z0-9]{70,}"),
    provider("replicate-token", &["r8_"], r"\br8_[A-Za-z0-9]{37}\b"),
    provider("perplexity-key", &["pplx-"], r"\bpplx-[A-Za-z0-9]{40,}"),
    // --- Payments, messaging, commerce ------------------------------------------------------
    provider(
        "stripe-key",
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        r"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b",
    ),
    provider(
        "stripe-webhook-secret",
        &["whsec_"],
        r"\bwhsec_[A-Za-z0-9+/=]{24,}",
    ),
    provider(
        "square-token",
        &["sq0atp-", "sq0csp-"],
        r"\bsq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}\b",
    ),
    provider(
        "shopify-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
    ),
    provider(
        "sendgrid-key",
        &["SG."],
        r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",
    ),
    // Keywords carry the first hex digit: a bare `sk` is in every `task` and `disk`.
    provider("twilio-api-key", HEX_AFTER_SK, r"\bSK[0-9a-fA-F]{32}\b"),
    provider("mailgun-key", HEX_AFTER_KEY, r"\bkey-[0-9a-f]{32}\b"),
    provider(
        "mailchimp-key",
        &[
            "-us0", "-us1", "-us2", "-us3", "-us4", "-us5", "-us6", "-us7", "-us8", "-us9",
        ],
        r"\b[0-9a-f]{32}-us[0-9]{1,2}\b",
    ),
    provider(
        "telegram-bot-token",
        &[":AA"],
        r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b",
    ),
    provider(
        "slack-token",
        &[
            "xoxb-", "xoxa-", "xoxp-", "xoxo-", "xoxs-", "xoxe-", "xoxr-", "xapp-",
        ],
        r"\b(?:xox[abposer](?:\.[a-z0-9]+)?-[0-9A-Za-z\-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)",
    ),
    named(
        "slack-webhook",
        &["hooks.slack.com"],
        r"\b(?i:hooks\.slack\.com)/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_\-]{20,})",
    ),
    provider(
        "notion-token",
        &["ntn_", "secret_"],
        r"\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b",
    ),
    // Not inside base64 (`…/EAAAA…` is common in encoded binaries).
    provider(
        "facebook-token",
        &["EAA"],
        r"(?:^|[^A-Za-z0-9+/=])(?P<s>EAA[A-Za-z0-9]{90,})",
    ),
    provider(
        "mapbox-token",
        &["sk.eyJ"],
        r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
    ),
    // --- Generic shapes ---------------------------------------------------------------------
    provider(
        "jwt",
        &["eyJ"],
        r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
    ),
    named(
        "authorization",
        &["authorization"],
        r#"\b(?i)(?:proxy-)?authorization["']?\s*(?:=>|[:=])\s*["']?(?:bearer|basic|token|digest|apikey|sso-key|dpop|negotiate)\s+(?P<s>[A-Za-z0-9._~+/=\-]{8,})"#,
    ),
    Rule {
        label: "bearer-token",
        keywords: &["bearer"],
        detect: Detect::RandomRegex(r"\b(?i)bearer\s+(?P<s>[A-Za-z0-9._~+/\-]{20,}=*)"),
        priority: 1,
    },
    named(
        "password",
        &["-u ", "--user"],
        r#"(?:^|\s)(?:-u|--user)[\s=]+["']?[^\s:"'$]+:(?P<s>[^\s"'$]{3,})"#,
    ),
    named(
        "password",
        &["login"],
        r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>\S+)",
    ),
    named(
        "password",
        &["://"],
        r#"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@"'<>\[\]]+:(?P<s>[^\s/@"'<>]+)@"#,
    ),
    named(
        "url-secret",
        &[
            "password=",
            "passwd=",
            "pwd=",
            "pass=",
            "secret=",
            "token=",
            "apikey=",
            "api_key=",
        ],
        r"(?i)[?&;](?:password|passwd|pwd|pass|client_secret|secret|access_token|token|api_?key)=(?P<s>[^&;\s\x22'#<>]{3,})",
    ),
    // `--password=…` is a value; `--password …` may be prose ("the --password option").
    named(
        "cli-secret",
        CLI_FLAGS,
        r#"(?:^|\s)--(?:password|passwd|token|api-key|apikey|secret|client-secret|auth-token)=["']?(?P<s>[^\s"'$-][^\s"']{2,})"#,
    ),
    Rule {
        label: "cli-secret",
        keywords: CLI_FLAGS,
        detect: Detect::RandomRegex(
            r#"(?:^|\s)--(?:password|passwd|token|api-key|apikey|secret|client-secret|auth-token)\s+["']?(?P<s>[^\s"'$-][^\s"']{2,})"#,
        ),
        priority: 2,
    },
    // `auth=("user", "…")` (requests), `HTTPBasicAuth("user", "…")`,
    // `NetworkCredential("user", "…")`, `client.login("user", "…")`.
    named(
        "password",
        &[
            "auth=",
            "auth ",
            "auth(",
            "authentication(",
            "credential",
            "login(",
        ],
        r#"(?:\bauth\s*=\s*\(|(?i:BasicAuth|DigestAuth|Credentials?|PasswordAuthentication|basic_auth|\blogin)\()\s*["'][^"'\n]*["']\s*,\s*["'](?P<s>[^"'\n]{3,})["']"#,
    ),
    Rule {
        label: "private-key",
        keywords: &["-----BEGIN"],
        detect: Detect::PemBlock,
        priority: 3,
    },
    Rule {
        label: "private-key",
        keywords: &["Private-Lines:"],
        detect: Detect::PuttyPrivateLines,
        priority: 3,
    },
    Rule {
        label: "secret",
        keywords: super::assign::KEYWORDS,
        detect: Detect::Assignment,
        priority: 0,
    },
];
