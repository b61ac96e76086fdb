//! Code search's words, stemmed where the chunks are cut rather than inside SQLite.
//!
//! `code_fts` used FTS5's `porter` tokenizer, which stems every token on the one thread that
//! writes the table: about a fifth of the cold index's code-search writer (docs/benchmarks.md).
//! Chunks are cut on the parse threads, so they now arrive stemmed, and the table's tokenizer
//! is plain `unicode61` (migration 11). A query is stemmed by the same function, so both
//! sides of a match always agree.
//!
//! [`porter`] is FTS5's own stemmer (`fts5PorterCb` in SQLite 3.53), step for step, and
//! [`stem_words`] splits text where unicode61 splits ASCII: for ASCII text the tokens are
//! exactly FTS5's `porter unicode61`. A word with a non-ASCII letter (`naïve`, `größe`) goes
//! through unstemmed, for unicode61 to fold as before: porter never stemmed it the same way on
//! both sides unless both were spelled alike, and code rarely spells them at all.
//! `tests::ascii_words_stem_as_fts5_porter_does` holds the port to SQLite's own tokenizer.

/// Longer tokens are not stemmed (FTS5_PORTER_MAX_TOKEN).
const MAX_TOKEN: usize = 64;

/// Appends the words of `text` to `out` as FTS5 would index them: ASCII words lower-cased and
/// stemmed, a word holding other letters as it is, each after a space (unless `out` is empty).
///
/// Byte by byte: the chunks of a cold index are hundreds of megabytes, nearly all ASCII.
pub fn stem_words(text: &str, out: &mut String) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (start, mut ascii) = (i, true);
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphanumeric() {
                i += 1;
            } else if c < 0x80 {
                break;
            } else {
                let ch = text[i..].chars().next().expect("a char starts here");
                if !ch.is_alphanumeric() {
                    break;
                }
                ascii = false;
                i += ch.len_utf8();
            }
        }
        if i > start {
            push_word(&text[start..i], ascii, out);
        }
        // Past the separator (one char; the loop above stopped at its first byte).
        if i < b.len() {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
}

fn push_word(word: &str, ascii: bool, out: &mut String) {
    if !out.is_empty() {
        out.push(' ');
    }
    let n = word.len();
    if !ascii || n > MAX_TOKEN {
        // unicode61 folds the case of what it keeps whole.
        out.push_str(word);
        return;
    }
    let mut buf = [0u8; MAX_TOKEN + 8];
    buf[..n].copy_from_slice(word.as_bytes());
    buf[..n].make_ascii_lowercase();
    let n = if n < 3 { n } else { porter(&mut buf, n) };
    // Only ASCII letters and digits were written, so the bytes are UTF-8.
    out.push_str(std::str::from_utf8(&buf[..n]).expect("ASCII"));
}

/// [`stem_words`] into a new string.
pub fn stemmed(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    stem_words(text, &mut out);
    out
}

/// Stems the lower-case ASCII word in `w[..n]` (3 ≤ n ≤ 64) in place; returns its new length.
/// `w` has room for the one byte step 1b may add.
fn porter(w: &mut [u8; MAX_TOKEN + 8], n: usize) -> usize {
    let mut n = step_1a(w, n);
    let (m, grew) = step_1b(w, n);
    n = m;
    if grew {
        n = match step_1b2(w, n) {
            Some(m) => m,
            None => {
                let c = w[n - 1];
                if n >= 2 && !is_vowel(c, false) && !b"lsz".contains(&c) && c == w[n - 2] {
                    n - 1
                } else if m_eq1(&w[..n]) && ostar(&w[..n]) {
                    w[n] = b'e';
                    n + 1
                } else {
                    n
                }
            }
        };
    }
    // Step 1c.
    if w[n - 1] == b'y' && has_vowel(&w[..n - 1]) {
        w[n - 1] = b'i';
    }
    n = apply(w, n, step2, m_gt0);
    n = apply(w, n, step3, m_gt0);
    n = apply(w, n, step4, m_gt1);
    // Step 5a.
    if w[n - 1] == b'e' && (m_gt1(&w[..n - 1]) || (m_eq1(&w[..n - 1]) && !ostar(&w[..n - 1]))) {
        n -= 1;
    }
    // Step 5b.
    if n > 1 && w[n - 1] == b'l' && w[n - 2] == b'l' && m_gt1(&w[..n - 1]) {
        n -= 1;
    }
    n
}

fn step_1a(w: &[u8], n: usize) -> usize {
    if w[n - 1] != b's' {
        return n;
    }
    if w[n - 2] == b'e' {
        if (n > 4 && w[n - 4] == b's' && w[n - 3] == b's') || (n > 3 && w[n - 3] == b'i') {
            n - 2
        } else {
            n - 1
        }
    } else if w[n - 2] != b's' {
        n - 1
    } else {
        n
    }
}

/// Step 1b: the new length, and whether "ed" or "ing" went (then step 1b2 follows).
fn step_1b(w: &mut [u8], n: usize) -> (usize, bool) {
    let w0 = &w[..n];
    if n > 3 && w0.ends_with(b"eed") {
        if m_gt0(&w0[..n - 3]) {
            return (n - 1, false);
        }
    } else if n > 2 && w0.ends_with(b"ed") {
        if has_vowel(&w0[..n - 2]) {
            return (n - 2, true);
        }
    } else if n > 3 && w0.ends_with(b"ing") && has_vowel(&w0[..n - 3]) {
        return (n - 3, true);
    }
    (n, false)
}

fn step_1b2(w: &mut [u8], n: usize) -> Option<usize> {
    for (suffix, to) in [(&b"at"[..], &b"ate"[..]), (b"bl", b"ble"), (b"iz", b"ize")] {
        if n > 2 && w[..n].ends_with(suffix) {
            w[n - 2..n + 1].copy_from_slice(to);
            return Some(n + 1);
        }
    }
    None
}

/// A step's rules: suffix and replacement. As in SQLite's generated steps, only the rules
/// whose suffix has the word's next-to-last letter compete; they are tried in order, and the
/// first whose suffix matches decides, whether or not its condition holds.
type Rules = &'static [(&'static [u8], &'static [u8])];

fn step2(key: u8) -> Rules {
    match key {
        b'a' => &[(b"ational", b"ate"), (b"tional", b"tion")],
        b'c' => &[(b"enci", b"ence"), (b"anci", b"ance")],
        b'e' => &[(b"izer", b"ize")],
        b'g' => &[(b"logi", b"log")],
        b'l' => &[
            (b"bli", b"ble"),
            (b"alli", b"al"),
            (b"entli", b"ent"),
            (b"eli", b"e"),
            (b"ousli", b"ous"),
        ],
        b'o' => &[(b"ization", b"ize"), (b"ation", b"ate"), (b"ator", b"ate")],
        b's' => &[
            (b"alism", b"al"),
            (b"iveness", b"ive"),
            (b"fulness", b"ful"),
            (b"ousness", b"ous"),
        ],
        b't' => &[(b"aliti", b"al"), (b"iviti", b"ive"), (b"biliti", b"ble")],
        _ => &[],
    }
}

fn step3(key: u8) -> Rules {
    match key {
        b'a' => &[(b"ical", b"ic")],
        b's' => &[(b"ness", b"")],
        b't' => &[(b"icate", b"ic"), (b"iciti", b"ic")],
        b'u' => &[(b"ful", b"")],
        b'v' => &[(b"ative", b"")],
        b'z' => &[(b"alize", b"al")],
        _ => &[],
    }
}

fn step4(key: u8) -> Rules {
    match key {
        b'a' => &[(b"al", b"")],
        b'c' => &[(b"ance", b""), (b"ence", b"")],
        b'e' => &[(b"er", b"")],
        b'i' => &[(b"ic", b"")],
        b'l' => &[(b"able", b""), (b"ible", b"")],
        b'n' => &[
            (b"ant", b""),
            (b"ement", b""),
            (b"ment", b""),
            (b"ent", b""),
        ],
        b'o' => &[(b"ion", b""), (b"ou", b"")],
        b's' => &[(b"ism", b"")],
        b't' => &[(b"ate", b""), (b"iti", b"")],
        b'u' => &[(b"ous", b"")],
        b'v' => &[(b"ive", b"")],
        b'z' => &[(b"ize", b"")],
        _ => &[],
    }
}

/// The first rule of `rules(next-to-last letter)` whose suffix ends `w[..n]` (leaving at least
/// one letter) is applied if `cond` holds for what precedes it; step 4's "ion" also needs an
/// `s` or `t` before it.
fn apply(w: &mut [u8], n: usize, rules: fn(u8) -> Rules, cond: fn(&[u8]) -> bool) -> usize {
    if n < 2 {
        return n;
    }
    for (suffix, to) in rules(w[n - 2]) {
        let s = suffix.len();
        if n <= s || !w[..n].ends_with(suffix) {
            continue;
        }
        let stem = n - s;
        let ok = cond(&w[..stem]) && (*suffix != b"ion" || b"st".contains(&w[stem - 1]));
        if !ok {
            return n;
        }
        w[stem..stem + to.len()].copy_from_slice(to);
        return stem + to.len();
    }
    n
}

fn is_vowel(c: u8, y_is_vowel: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (y_is_vowel && c == b'y')
}

/// `fts5PorterGobbleVC`: past the first vowel-then-consonant of `w`, given whether the letter
/// before `w` was a consonant; `None` when there is none.
fn gobble_vc(w: &[u8], prev_consonant: bool) -> Option<usize> {
    let mut consonant = prev_consonant;
    let mut i = 0;
    while i < w.len() {
        consonant = !is_vowel(w[i], consonant);
        if !consonant {
            break;
        }
        i += 1;
    }
    i += 1;
    while i < w.len() {
        consonant = !is_vowel(w[i], consonant);
        if consonant {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Porter's measure m > 0.
fn m_gt0(w: &[u8]) -> bool {
    gobble_vc(w, false).is_some()
}

/// m > 1.
fn m_gt1(w: &[u8]) -> bool {
    gobble_vc(w, false).is_some_and(|n| gobble_vc(&w[n..], true).is_some())
}

/// m = 1.
fn m_eq1(w: &[u8]) -> bool {
    gobble_vc(w, false).is_some_and(|n| gobble_vc(&w[n..], true).is_none())
}

/// *o: ends consonant-vowel-consonant, the last not w, x or y.
fn ostar(w: &[u8]) -> bool {
    let Some(&last) = w.last() else {
        return false;
    };
    if b"wxy".contains(&last) {
        return false;
    }
    let mut mask = 0u32;
    let mut consonant = false;
    for &c in w {
        consonant = !is_vowel(c, consonant);
        mask = (mask << 1) | consonant as u32;
    }
    mask & 0b111 == 0b101
}

/// *v*: a vowel anywhere (`y` only after the first letter).
fn has_vowel(w: &[u8]) -> bool {
    w.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// The tokens FTS5 makes of `text` with `tokenize`, read back in order with fts5vocab.
    fn tokens(conn: &Connection, tokenize: &str, text: &str) -> Vec<String> {
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS v; DROP TABLE IF EXISTS t;
             CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');"
        ))
        .unwrap();
        conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?1)", [text])
            .unwrap();
        let mut q = conn.prepare("SELECT term FROM v ORDER BY offset").unwrap();
        q.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Every word of Mira's own sources and docs, and the textbook's hard cases: what
    /// code_fts held before (SQLite's porter) and what it holds now must be the same tokens.
    #[test]
    fn ascii_words_stem_as_fts5_porter_does() {
        let conn = Connection::open_in_memory().unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut text = String::from(
            "caresses ponies ties caress cats feed agreed plastered bled motoring sing \
             conflated troubled sized hopping tanned falling hissing fizzed failing filing \
             happy sky relational conditional rational valenci hesitanci digitizer \
             conformabli radicalli differentli vileli analogousli vietnamization predication \
             operator feudalism decisiveness hopefulness callousness formaliti sensitiviti \
             sensibiliti triplicate formative formalize electriciti electrical hopeful \
             goodness revival allowance inference airliner gyroscopic adjustable defensible \
             irritant replacement adjustment dependent adoption homologou communism activate \
             angulariti homologous effective bowdlerize probate rate cease controll roll \
             aed yed xing aing ies sss xes eed bleed zzzzzing yyyy ABCDEF HTTPServer x2y3z \
             a ab abc",
        );
        for dir in ["src", "docs"] {
            for e in walkdir(&root.join(dir)) {
                text.push('\n');
                text.push_str(&std::fs::read_to_string(e).unwrap_or_default());
            }
        }
        // Words, not whole files: a 64-letter word and every length around it included.
        let long = "abcdefghij".repeat(7);
        for n in 60..=70 {
            text.push(' ');
            text.push_str(&long[..n]);
            text.push_str("ing");
        }
        let ascii: String = text.chars().filter(char::is_ascii).collect();
        // Before: SQLite's porter. Now: our stems, which code_fts's tokenizer only splits.
        let want = tokens(&conn, "porter unicode61 remove_diacritics 2", &ascii);
        let got = tokens(&conn, "unicode61 remove_diacritics 2", &stemmed(&ascii));
        assert!(
            want.len() > 10_000,
            "the sources hold words: {}",
            want.len()
        );
        assert_eq!(got.len(), want.len());
        let differ: Vec<_> = want
            .iter()
            .zip(&got)
            .filter(|(a, b)| a != b)
            .take(20)
            .collect();
        assert!(differ.is_empty(), "FTS5's porter vs ours: {differ:?}");
    }

    /// A word with a non-ASCII letter is left for unicode61 to fold, unstemmed; the ASCII
    /// words around it are still stemmed, and other characters still separate words.
    #[test]
    fn non_ascii_words_pass_through_and_separators_still_separate() {
        assert_eq!(stemmed("Größe parsing"), "Größe pars");
        assert_eq!(stemmed("naïve→readers—writers"), "naïve reader writer");
        assert_eq!(stemmed("日本語 tokens"), "日本語 token");
        assert_eq!(stemmed("parse_config(x, ys)"), "pars config x ys");
        assert_eq!(stemmed(""), "");
        let mut out = String::from("kept");
        stem_words("  Files ", &mut out);
        assert_eq!(out, "kept file");
    }

    fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walkdir(&p));
            } else if p.extension().is_some_and(|x| x == "rs" || x == "md") {
                out.push(p);
            }
        }
        out
    }
}
