//! Text handling shared by memory and code search: normalisation for dedup, identifier splitting
//! (FTS5's unicode61 tokenizer does not split camelCase), and safe FTS5 query building; and
//! whether a URL is loopback, which `llm` and `embed` both ask and neither may ask the other.

/// The normalised form used for dedup: case-folded, whitespace collapsed, trailing
/// sentence punctuation dropped. "Use tabs." and "  use   TABS " are the same memory.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    let trimmed = out.trim_end_matches(['.', '!', ';', ',']).len();
    out.truncate(trimmed);
    out
}

/// blake3 of [`normalise`]d text: the dedup key.
pub fn norm_hash(text: &str) -> [u8; 32] {
    *blake3::hash(normalise(text).as_bytes()).as_bytes()
}

/// Sub-tokens of every identifier-looking word in `text`, lower-cased and space separated:
/// `JoinHandle` → `join handle`, `getHTTPResponse` → `get http response`, `parse_v2Header` →
/// `parse v2 header`. Plain words produce nothing (the body column already holds them), so
/// this column only adds what unicode61 cannot see. The joined snake_case form is added too
/// (`spawn_blocking` → `spawnblocking`), so `spawnBlocking` and `spawn_blocking` meet.
pub fn identifier_tokens(text: &str) -> String {
    let mut out = String::new();
    for word in words(text) {
        // Most words of code are one part: skip them without splitting (chunk cutting).
        if is_one_ascii_part(word) {
            continue;
        }
        let parts = split_identifier(word);
        if parts.len() < 2 {
            continue;
        }
        for p in &parts {
            push_word(&mut out, p);
        }
        if word.contains('_') {
            push_word(&mut out, &parts.concat());
        }
    }
    out
}

/// `split_identifier(word)` would give one part, told without allocating: an ASCII word
/// with no `_` and none of its boundaries (lower→upper, letter↔digit, acronym→word).
fn is_one_ascii_part(word: &str) -> bool {
    let b = word.as_bytes();
    if !word.is_ascii() || b.contains(&b'_') {
        return false;
    }
    b.windows(2).enumerate().all(|(i, w)| {
        let (prev, c) = (w[0], w[1]);
        let boundary = (prev.is_ascii_lowercase() && c.is_ascii_uppercase())
            || (prev.is_ascii_alphabetic() && c.is_ascii_digit())
            || (prev.is_ascii_digit() && c.is_ascii_alphabetic())
            || (prev.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && b.get(i + 2).is_some_and(u8::is_ascii_lowercase));
        !boundary
    })
}

fn push_word(out: &mut String, w: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(w);
}

/// Maximal runs of alphanumerics and `_` (what a programmer would call a word or identifier).
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Splits one identifier at `_`, lower→upper, letter↔digit and acronym→word boundaries,
/// lower-casing each part. `HTTPServer2Go` → `["http", "server", "2", "go"]`.
pub fn split_identifier(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut parts = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            flush(&mut parts, &mut cur);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|j| chars.get(j)) {
            let next = chars.get(i + 1).copied();
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic())
                // "HTTPServer": the S starts a new word because a lower-case letter follows
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase));
            if boundary {
                flush(&mut parts, &mut cur);
            }
        }
        cur.extend(c.to_lowercase());
    }
    flush(&mut parts, &mut cur);
    parts
}

fn flush(parts: &mut Vec<String>, cur: &mut String) {
    if !cur.is_empty() {
        parts.push(std::mem::take(cur));
    }
}

/// Words that carry no signal in a recall query. Kept short on purpose: BM25's IDF already
/// discounts common words, this only removes question scaffolding that would match everything.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "for",
    "from",
    "had",
    "has",
    "have",
    "how",
    "i",
    "if",
    "in",
    "is",
    "it",
    "its",
    "me",
    "my",
    "of",
    "on",
    "or",
    "our",
    "remember",
    "should",
    "so",
    "tell",
    "that",
    "the",
    "their",
    "there",
    "these",
    "this",
    "to",
    "us",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    // Third-person pronouns: rare in first-person notes and chat, so a high IDF would let a
    // lone "her" outrank the memory a question is about (measured by eval/recall).
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "they",
    "them",
    "themselves",
    // What an apostrophe leaves behind: "Mila's" → "mila" "s", and "s" matches every "it's".
    "s",
    "t",
    "d",
    "ll",
    "re",
    "ve",
    "m",
    // Verbs that carry the question, not its subject ("what job did she get?").
    "get",
    "got",
    "gets",
    "getting",
    "go",
    "going",
    "went",
    "any",
    "some",
    "something",
    "thing",
    "things",
];

/// Turns free text into an FTS5 MATCH expression: every token quoted (FTS5 syntax errors on
/// `-`, `:`, `*`, `(` and bare AND/OR/NOT), stop words dropped, identifiers expanded into
/// their parts, all OR-ed (the implicit AND makes natural-language questions match nothing).
/// `None` when nothing searchable is left.
pub fn fts_query(text: &str) -> Option<String> {
    let terms = fts_terms(text);
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

/// The quoted FTS5 terms of [`fts_query`], for callers that combine them themselves.
pub fn fts_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    let mut add = |t: String| {
        if !terms.contains(&t) {
            terms.push(t);
        }
    };
    for word in words(text) {
        let lower = word.to_lowercase();
        let parts = split_identifier(word);
        if parts.len() >= 2 {
            // joined form matches the body column, parts match the idents column
            add(lower.replace('_', ""));
            for p in parts {
                add(p);
            }
        } else if !STOP_WORDS.contains(&lower.as_str()) {
            add(lower);
        }
    }
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect()
}

/// Whether `word` (lower-case) is one of the words a recall query drops.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Content words of `text`: lower-cased, stop words dropped, a plural `s` stripped.
pub fn content_words(text: &str) -> std::collections::HashSet<String> {
    content_sequence(text).into_iter().collect()
}

/// True when `new` says nothing `old` does not already say: every content word (including
/// every number and identifier) of `new` appears in `old`, in the same order. The gate for similarity dedup, so
/// that "port 8080" is never merged into "port 9090" however close their embeddings are.
pub fn adds_nothing(new: &str, old: &str) -> bool {
    // In order and with repeats: "writer 1 remembers fact 0" says something that "writer 0
    // remembers fact 1" does not, though every word of it is there. A reworded memory keeps
    // its order; one that does not is kept twice rather than lost.
    let old = content_sequence(old);
    let mut rest = old.iter();
    content_sequence(new)
        .iter()
        .all(|w| rest.by_ref().any(|o| o == w))
}

fn content_sequence(text: &str) -> Vec<String> {
    words(text)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_string(),
            _ => w,
        })
        .collect()
}

/// True when a query looks like an identifier search (camelCase, snake_case, `::`, `.` paths)
/// rather than a natural-language question. Recall leans on BM25 for these.
pub fn is_identifier_query(text: &str) -> bool {
    let t = text.trim();
    t.contains("::")
        || words(t).any(|w| split_identifier(w).len() >= 2)
        || (t.contains('.') && !t.contains(' '))
}

/// Whether `url` names this machine (`localhost`, 127.0.0.0/8, `::1`): a server there is the
/// user's own, so it needs no key and is sent none.
pub fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_folds_case_space_and_final_punctuation() {
        assert_eq!(normalise("  Use   TABS.\n"), "use tabs");
        assert_eq!(normalise("Use tabs"), normalise("use  tabs!"));
        assert_ne!(norm_hash("use tabs"), norm_hash("use spaces"));
    }

    #[test]
    fn a_text_adds_nothing_only_when_its_words_are_there_in_order() {
        assert!(!adds_nothing(
            "writer 1 remembers fact number 1",
            "writer 0 remembers fact number 1"
        ));
        assert!(!adds_nothing(
            "writer 1 remembers fact number 0",
            "writer 0 remembers fact number 1"
        ));
        assert!(adds_nothing("Use tabs in Go", "We use tabs in Go and Rust"));
        assert!(adds_nothing("port 8080", "the API listens on port 8080"));
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(split_identifier("JoinHandle"), ["join", "handle"]);
        assert_eq!(
            split_identifier("getHTTPResponse"),
            ["get", "http", "response"]
        );
        assert_eq!(split_identifier("spawn_blocking"), ["spawn", "blocking"]);
        assert_eq!(
            split_identifier("HTTPServer2Go"),
            ["http", "server", "2", "go"]
        );
        assert_eq!(split_identifier("plain"), ["plain"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
    }

    #[test]
    fn the_one_part_shortcut_agrees_with_the_split() {
        // Every word of up to five characters over lower, upper, digit and `_`.
        let alphabet = ['a', 'B', '7', '_'];
        let mut words = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = words
                .iter()
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .collect();
            words.extend(longer);
        }
        for w in words.iter().filter(|w| !w.is_empty()) {
            let one = !w.contains('_') && split_identifier(w).len() == 1;
            assert_eq!(is_one_ascii_part(w), one, "{w}");
        }
        for w in [
            "a",
            "ab",
            "Ab",
            "AB",
            "ABc",
            "aB",
            "a1",
            "1a",
            "11",
            "HTTPServer2Go",
            "x_y",
            "_x",
            "foo",
            "Foo",
            "FOO",
            "FooBar",
            "fooBAR",
            "FOOBar",
            "v2",
            "Ünïcode",
            "naïveX",
            "ß",
        ] {
            if is_one_ascii_part(w) {
                assert_eq!(split_identifier(w).len(), 1, "{w}");
            } else {
                assert!(
                    !w.is_ascii() || w.contains('_') || split_identifier(w).len() > 1,
                    "{w}"
                );
            }
        }
    }

    #[test]
    fn identifier_tokens_only_adds_what_unicode61_misses() {
        assert_eq!(
            identifier_tokens("We wrap JoinHandle in spawn_blocking calls"),
            "join handle spawn blocking spawnblocking"
        );
        assert_eq!(identifier_tokens("plain prose only"), "");
    }

    #[test]
    fn fts_query_quotes_everything_and_drops_scaffolding() {
        assert_eq!(
            fts_query("what do you remember about the parser?").as_deref(),
            Some("\"parser\"")
        );
        assert_eq!(
            fts_query("NOT (a-b) \"x\" OR *").as_deref(),
            Some("\"not\" OR \"b\" OR \"x\"")
        );
        assert_eq!(
            fts_query("getUserName").as_deref(),
            Some("\"getusername\" OR \"get\" OR \"user\" OR \"name\"")
        );
        assert_eq!(fts_query("the of ?!"), None);
    }

    #[test]
    fn adds_nothing_guards_values() {
        assert!(adds_nothing(
            "Always use tabs for indentation",
            "We always use tabs for indentation."
        ));
        assert!(adds_nothing(
            "use tab for indentation",
            "use tabs for indentation"
        ));
        assert!(!adds_nothing(
            "The staging API runs on port 9090",
            "The staging API runs on port 8080"
        ));
        assert!(!adds_nothing(
            "use tabs for indentation in Go files",
            "use tabs for indentation"
        ));
    }

    #[test]
    fn detects_identifier_queries() {
        assert!(is_identifier_query("JoinHandle"));
        assert!(is_identifier_query("tokio::spawn"));
        assert!(is_identifier_query("parse_config"));
        assert!(!is_identifier_query("how do we parse config files"));
    }
}
