//! Secrets are replaced before any text is sent to a provider or stored: user messages, editor
//! context, tool output and model output all pass through [`redact`].
//!
//! Detection is by the shapes real credentials have (`rules.rs`: provider token formats, private
//! keys, JWTs, `Authorization` headers, passwords in URLs, `password = …` assignments of literal
//! values), plus the exact API keys Mira itself was configured with. A secret becomes
//! `[REDACTED:<label>]`; the name it was assigned to stays, so the text still reads.
//!
//! Clean text must be cheap: one Aho-Corasick pass finds every rule's keywords at once, and only
//! the lines holding a keyword are handed to the rules that keyword belongs to.

mod assign;
mod keys;
mod literal;
mod rules;

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
    /// Case-sensitive keywords (provider prefixes) and case-folded ones (names), with the
    /// rules each keyword may start.
    keywords: (AhoCorasick, Vec<RuleSet>),
}

static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::new);

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
                    Detect::Regex(p) | Detect::RandomRegex(p) => {
                        Some(Regex::new(p).expect("valid redaction pattern"))
                    }
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
            keywords: automaton(),
        }
    }

    fn scan(&self, text: &str, spans: &mut Vec<Span>) {
        let mut lines = Vec::new();
        let (ac, sets) = &self.keywords;
        self.candidate_lines(text, ac, sets, &mut lines, spans);
        lines.sort_unstable_by_key(|l: &(usize, usize, RuleSet)| l.0);
        let mut i = 0;
        while i < lines.len() {
            let (start, end, mut set) = lines[i];
            i += 1;
            while i < lines.len() && lines[i].0 == start {
                set |= lines[i].2;
                i += 1;
            }
            self.scan_line(&text[start..end], start, set, spans);
        }
    }

    /// Lines holding a keyword, with the rules to try on each. Rules that read across lines
    /// (private key blocks) run here, at the keyword itself.
    fn candidate_lines(
        &self,
        text: &str,
        ac: &AhoCorasick,
        sets: &[RuleSet],
        lines: &mut Vec<(usize, usize, RuleSet)>,
        spans: &mut Vec<Span>,
    ) {
        let mut current: Option<(usize, usize, RuleSet)> = None;
        for m in ac.find_iter(text) {
            let mut set = sets[m.pattern().as_usize()];
            for bit in bits(set) {
                let c = &self.rules[bit];
                let found = match c.rule.detect {
                    Detect::PemBlock => keys::pem_block(text, m.start()),
                    Detect::PuttyPrivateLines => keys::putty_private_lines(text, m.start()),
                    _ => continue,
                };
                set &= !(1 << bit);
                if let Some((start, end)) = found {
                    spans.push(Span {
                        start,
                        end,
                        label: c.rule.label,
                        priority: c.rule.priority,
                    });
                }
            }
            if set == 0 {
                continue;
            }
            match &mut current {
                Some((s, e, cur)) if (*s..*e).contains(&m.start()) => *cur |= set,
                _ => {
                    let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
                    let end = text[m.start()..]
                        .find('\n')
                        .map_or(text.len(), |i| m.start() + i);
                    if let Some(done) = current.replace((start, end, set)) {
                        lines.push(done);
                    }
                }
            }
        }
        lines.extend(current);
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
                    for caps in re.captures_iter(line) {
                        let Some(m) = c.group.and_then(|g| caps.get(g)).or_else(|| caps.get(0))
                        else {
                            continue;
                        };
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

/// One case-folded automaton over the keywords of every rule.
fn automaton() -> (AhoCorasick, Vec<RuleSet>) {
    let mut keywords: Vec<String> = Vec::new();
    let mut sets: Vec<RuleSet> = Vec::new();
    for (bit, rule) in RULES.iter().enumerate() {
        for k in rule.keywords {
            let k = k.to_ascii_lowercase();
            match keywords.iter().position(|x| *x == k) {
                Some(i) => sets[i] |= 1 << bit,
                None => {
                    keywords.push(k);
                    sets.push(1 << bit);
                }
            }
        }
    }
    // The search is leftmost, non-overlapping (far faster than overlapping): a keyword can then
    // hide another that starts inside it, so each keyword also starts the rules of every
    // keyword it contains or runs into. Rules anchored at a word boundary (`\b` + prefix)
    // cannot match where the hidden keyword starts right after a word character.
    let anchored: RuleSet = RULES
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.detect, Detect::Regex(p) | Detect::RandomRegex(p) if p.starts_with(r"\b")))
        .fold(0, |set, (bit, _)| set | 1 << bit);
    let widened = (0..keywords.len())
        .map(|i| {
            (0..keywords.len()).fold(sets[i], |set, j| match hidden(&keywords[i], &keywords[j]) {
                Hidden::No => set,
                Hidden::AfterWordChar => set | (sets[j] & !anchored),
                Hidden::Yes => set | sets[j],
            })
        })
        .collect();
    let ac = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .kind(Some(AhoCorasickKind::DFA))
        // Many short keywords: a prefilter would fire constantly and only slow the DFA down.
        .prefilter(false)
        .build(&keywords)
        .expect("valid redaction keywords");
    (ac, widened)
}

enum Hidden {
    No,
    AfterWordChar,
    Yes,
}

/// Whether a match of `a` can hide `b`: `b` lies inside `a`, or starts inside it (at its
/// first byte too: `sk` is reported where `sk.eyJ` also starts) and runs on.
fn hidden(a: &str, b: &str) -> Hidden {
    if a.contains(b) || b.starts_with(a) {
        return Hidden::Yes;
    }
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut found = Hidden::No;
    for i in (1..a.len()).filter(|&i| b.starts_with(&a[i..])) {
        if !(word(a.as_bytes()[i - 1]) && word(a.as_bytes()[i])) {
            return Hidden::Yes;
        }
        found = Hidden::AfterWordChar;
    }
    found
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
