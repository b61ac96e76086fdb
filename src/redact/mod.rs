//! Secrets are replaced before any text is sent to a provider or stored: user messages, editor
//! context, tool output and model output all pass through [`redact`].
//!
//! Detection is by the shapes real credentials have (`rules.rs`: provider token formats, private
//! keys, JWTs, `Authorization` headers, passwords in URLs, `password = …` assignments of literal
//! values), plus the exact API keys Mira itself was configured with. A secret becomes
//! `[REDACTED:<label>]`; the name it was assigned to stays, so the text still reads.
//!
//! Clean text must be cheap: one leftmost Aho-Corasick pass over the text finds the lines that
//! hold any rule's keyword; on those lines only, an overlapping pass lists the keywords there,
//! and only the rules those keywords belong to run, on that line alone.

mod assign;
mod json;
mod keys;
mod literal;
mod rules;

pub use json::redact_json;

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;

use rules::{Detect, RULES, Rule};

/// Replace every secret in `text` with `[REDACTED:<label>]`. Borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_with(text, &[])
}

/// [`redact`], plus exact occurrences of `known` secrets (the configured API keys).
pub fn redact_with<'a>(text: &'a str, known: &[&str]) -> Cow<'a, str> {
    let mut spans = Vec::new();
    for secret in known.iter().filter(|s| s.len() >= 8) {
        for (at, _) in text.match_indices(secret) {
            spans.push(Span {
                start: at,
                end: at + secret.len(),
                label: "api-key",
                priority: 4,
            });
        }
    }
    ENGINE.scan(text, &mut spans);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(replace(text, spans))
}

/// The rules plus the configured API keys: what every face passes text through before it
/// stores, sends or shows it. Built once per session from the keys it was given.
#[derive(Clone, Default)]
pub struct Redactor {
    known: Vec<secrecy::SecretString>,
}

impl Redactor {
    pub fn new(known: Vec<secrecy::SecretString>) -> Redactor {
        Redactor { known }
    }

    /// One more key to remove verbatim.
    pub fn add(&mut self, key: secrecy::SecretString) {
        self.known.push(key);
    }

    /// The keys, for the redaction a type does itself (a request's own `redacted`).
    pub fn known(&self) -> Vec<&str> {
        use secrecy::ExposeSecret;
        self.known.iter().map(|s| s.expose_secret()).collect()
    }

    /// [`redact_with`] the keys.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        redact_with(text, &self.known())
    }

    /// [`redact_json`] with the keys.
    pub fn redact_json<'a>(&self, text: &'a str) -> Cow<'a, str> {
        redact_json(text, &self.known())
    }
}

/// How many detection rules are in force (reported by `mira doctor`).
pub fn rule_count() -> usize {
    RULES.len()
}

/// The labels a redaction can carry, each once, in rule order.
pub fn labels() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in RULES {
        if !out.contains(&r.label) {
            out.push(r.label);
        }
    }
    out
}

struct Span {
    start: usize,
    end: usize,
    label: &'static str,
    priority: u8,
}

/// Overlapping spans merge (nothing of either survives); the more specific label names them.
fn replace(text: &str, mut spans: Vec<Span>) -> String {
    spans.sort_unstable_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut i = 0;
    while i < spans.len() {
        let (start, mut end) = (spans[i].start, spans[i].end);
        let (mut label, mut priority) = (spans[i].label, spans[i].priority);
        i += 1;
        while i < spans.len() && spans[i].start < end {
            end = end.max(spans[i].end);
            if spans[i].priority > priority {
                (label, priority) = (spans[i].label, spans[i].priority);
            }
            i += 1;
        }
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str("[REDACTED:");
        out.push_str(label);
        out.push(']');
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Rules as bits: at most 128 rules, so a line's candidate rules fit one `u128`.
type RuleSet = u128;

struct Compiled {
    rule: &'static Rule,
    re: Option<Regex>,
    /// Index of the capture group `s`, when the secret is part of the match.
    group: Option<usize>,
}

struct Engine {
    rules: Vec<Compiled>,
    keywords: Keywords,
}

/// Every rule's keywords, case-folded, twice: a leftmost automaton that finds the lines
/// holding any keyword at full speed, and an overlapping one that lists exactly which
/// keywords (so which rules) are on such a line.
struct Keywords {
    lines: AhoCorasick,
    exact: AhoCorasick,
    /// The rules each keyword starts.
    rules: Vec<RuleSet>,
}

static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::new);

/// A rule's pattern with ASCII classes, boundaries and case folding: secrets are ASCII, and a
/// Unicode `\w` repeated (`[\w.\-]{0,30}`, `{40,}`) compiled to 10 MB of automata, the
/// largest part of a `mira remember`'s heap. A pattern that could then match inside a UTF-8
/// sequence (`\S`, a negated class) keeps Unicode, with ASCII word boundaries: with Unicode
/// ones the fast regex engines give up on any line holding a non-ASCII character.
fn compile(p: &str) -> Regex {
    regex::RegexBuilder::new(p)
        .unicode(false)
        .build()
        .or_else(|_| Regex::new(&p.replace(r"\b", r"(?-u:\b)")))
        .expect("valid redaction pattern")
}

impl Engine {
    fn new() -> Engine {
        assert!(
            RULES.len() <= RuleSet::BITS as usize,
            "too many redaction rules for a RuleSet"
        );
        let rules = RULES
            .iter()
            .map(|rule| {
                let re = match rule.detect {
                    Detect::Regex(p) | Detect::RandomRegex(p) => Some(compile(p)),
                    _ => None,
                };
                let group = re
                    .as_ref()
                    .and_then(|re| re.capture_names().position(|n| n == Some("s")));
                Compiled { rule, re, group }
            })
            .collect();
        Engine {
            rules,
            keywords: Keywords::new(),
        }
    }

    fn scan(&self, text: &str, spans: &mut Vec<Span>) {
        let mut at = 0;
        while let Some(m) = self.keywords.lines.find(&text[at..]) {
            let hit = at + m.start();
            let start = text[..hit].rfind('\n').map_or(0, |i| i + 1);
            let end = text[hit..].find('\n').map_or(text.len(), |i| hit + i);
            self.scan_candidate(text, start, end, spans);
            at = end;
        }
    }

    /// A line holding at least one keyword: the rules its keywords start. Rules that read
    /// across lines (private key blocks) run at the keyword itself.
    fn scan_candidate(&self, text: &str, start: usize, end: usize, spans: &mut Vec<Span>) {
        let line = &text[start..end];
        let mut set: RuleSet = 0;
        for m in self.keywords.exact.find_overlapping_iter(line) {
            for bit in bits(self.keywords.rules[m.pattern().as_usize()]) {
                let found = match self.rules[bit].rule.detect {
                    Detect::PemBlock => keys::pem_block(text, start + m.start()),
                    Detect::PuttyPrivateLines => keys::putty_private_lines(text, start + m.start()),
                    _ => {
                        set |= 1 << bit;
                        continue;
                    }
                };
                if let Some((s, e)) = found {
                    let rule = self.rules[bit].rule;
                    spans.push(Span {
                        start: s,
                        end: e,
                        label: rule.label,
                        priority: rule.priority,
                    });
                }
            }
        }
        self.scan_line(line, start, set, spans);
    }

    fn scan_line(&self, line: &str, offset: usize, set: RuleSet, spans: &mut Vec<Span>) {
        // Text redacted before (a stored memory, a summary) keeps its markers: a match reaching
        // into one would only mangle it.
        let markers = redaction_markers(line);
        for bit in bits(set) {
            let c = &self.rules[bit];
            let mut push = |start: usize, end: usize, label: &'static str| {
                if markers.iter().any(|&(s, e)| start < e && s < end) {
                    return;
                }
                spans.push(Span {
                    start: offset + start,
                    end: offset + end,
                    label,
                    priority: c.rule.priority,
                });
            };
            match (c.rule.detect, &c.re) {
                (Detect::Assignment, _) => {
                    let mut found = Vec::new();
                    assign::find(line, &mut found);
                    for (s, e, label) in found {
                        push(s, e, label);
                    }
                }
                (Detect::Regex(_) | Detect::RandomRegex(_), Some(re)) => {
                    let random = matches!(c.rule.detect, Detect::RandomRegex(_));
                    // Capture groups cost a slower engine: only rules with `s` ask for them.
                    let found: Vec<regex::Match> = match c.group {
                        Some(g) => re
                            .captures_iter(line)
                            .filter_map(|caps| caps.get(g))
                            .collect(),
                        None => re.find_iter(line).collect(),
                    };
                    for m in found {
                        let secret = m.as_str();
                        let ok = if random {
                            literal::looks_random(secret)
                        } else {
                            !literal::is_placeholder(secret)
                        };
                        if ok {
                            push(m.start(), m.end(), c.rule.label);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Where `[REDACTED:…]` markers lie on a line (almost always none).
fn redaction_markers(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = line[from..].find("[REDACTED:") {
        let start = from + i;
        let end = line[start..]
            .find(']')
            .map_or(line.len(), |j| start + j + 1);
        out.push((start, end));
        from = end;
    }
    out
}

impl Keywords {
    fn new() -> Keywords {
        let mut keywords: Vec<String> = Vec::new();
        let mut rules: Vec<RuleSet> = Vec::new();
        for (bit, rule) in RULES.iter().enumerate() {
            for k in rule.keywords {
                let k = k.to_ascii_lowercase();
                match keywords.iter().position(|x| *x == k) {
                    Some(i) => rules[i] |= 1 << bit,
                    None => {
                        keywords.push(k);
                        rules.push(1 << bit);
                    }
                }
            }
        }
        let build = |kind: MatchKind| {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(kind)
                .kind(Some(AhoCorasickKind::DFA))
                // Many short keywords: a prefilter would fire constantly and slow the DFA.
                .prefilter(false)
                .build(&keywords)
                .expect("valid redaction keywords")
        };
        Keywords {
            lines: build(MatchKind::LeftmostFirst),
            exact: build(MatchKind::Standard),
            rules,
        }
    }
}

fn bits(mut set: RuleSet) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let bit = set.trailing_zeros() as usize;
            set &= set - 1;
            bit
        })
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod labelled_tests;
