//! Fuzzy name matching for workspace/symbol: exact > prefix > word starts
//! (camelCase / snake_case humps) > subsequence, with a 64-bit character-set prefilter so
//! a query over 250k names touches most of them for a nanosecond or two.

/// Match tiers, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Subsequence = 1,
    WordStarts = 2,
    Prefix = 3,
    Exact = 4,
}

/// Which characters occur in a string (case-insensitive), as bits.
pub fn char_mask(s: &str) -> u64 {
    let mut m = 0u64;
    for b in s.bytes() {
        m |= bit(b);
    }
    m
}

fn bit(b: u8) -> u64 {
    match b.to_ascii_lowercase() {
        c @ b'a'..=b'z' => 1 << (c - b'a'),
        c @ b'0'..=b'9' => 1 << (26 + c - b'0'),
        b'_' => 1 << 36,
        b'$' => 1 << 37,
        c => 1 << (38 + (c % 26)),
    }
}

/// A prepared query.
pub struct Query {
    lower: Vec<u8>,
    raw: String,
    pub mask: u64,
}

impl Query {
    pub fn new(q: &str) -> Query {
        let raw: String = q.chars().filter(|c| !c.is_whitespace()).collect();
        Query {
            lower: raw.bytes().map(|b| b.to_ascii_lowercase()).collect(),
            mask: char_mask(&raw),
            raw,
        }
    }

    /// Tier and a within-tier score (higher is better), or `None` when `name` does not match.
    pub fn score(&self, name: &[u8], name_mask: u64) -> Option<(Tier, i32)> {
        if self.mask & !name_mask != 0 {
            return None;
        }
        let n = name;
        let q = &self.lower;
        if q.is_empty() {
            return Some((Tier::Subsequence, 0));
        }
        if n.len() < q.len() {
            return None;
        }
        let prefix = n[..q.len()]
            .iter()
            .zip(q)
            .all(|(a, b)| a.to_ascii_lowercase() == *b);
        let shorter = -(n.len() as i32);
        if prefix {
            let case_exact = name.starts_with(self.raw.as_bytes()) as i32;
            if n.len() == q.len() {
                return Some((Tier::Exact, case_exact));
            }
            return Some((Tier::Prefix, shorter * 2 + case_exact));
        }
        // The linear subsequence test rejects most candidates before the word-start search.
        let gaps = subsequence(n, q)?;
        if word_starts(n, q) {
            return Some((Tier::WordStarts, shorter));
        }
        Some((Tier::Subsequence, -gaps * 4 + shorter))
    }
}

fn is_word_start(n: &[u8], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let (prev, cur) = (n[i - 1], n[i]);
    (cur.is_ascii_uppercase() && !prev.is_ascii_uppercase())
        || (!prev.is_ascii_alphanumeric() && cur.is_ascii_alphanumeric())
        || (cur.is_ascii_digit() && !prev.is_ascii_digit())
}

/// Every query character continues the current word or starts a later one:
/// `hsmap` fails, `hamap`/`hm` match `HashMap`, `gfb` matches `get_foo_bar`.
fn word_starts(n: &[u8], q: &[u8]) -> bool {
    fn go(n: &[u8], q: &[u8], i: usize, qi: usize, in_word: bool, budget: &mut u32) -> bool {
        if qi == q.len() {
            return true;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        // Continue the current word.
        if in_word
            && i < n.len()
            && n[i].to_ascii_lowercase() == q[qi]
            && !is_word_start(n, i)
            && go(n, q, i + 1, qi + 1, true, budget)
        {
            return true;
        }
        // Jump to a later word start.
        let mut j = i;
        while j < n.len() {
            if is_word_start(n, j)
                && n[j].to_ascii_lowercase() == q[qi]
                && go(n, q, j + 1, qi + 1, true, budget)
            {
                return true;
            }
            j += 1;
        }
        false
    }
    let mut budget = 256;
    go(n, q, 0, 0, false, &mut budget)
}

/// Number of gaps in a greedy case-insensitive subsequence match.
fn subsequence(n: &[u8], q: &[u8]) -> Option<i32> {
    let mut qi = 0;
    let mut gaps = 0;
    let mut last_match = None;
    for (i, &c) in n.iter().enumerate() {
        if qi < q.len() && c.to_ascii_lowercase() == q[qi] {
            if let Some(l) = last_match
                && l + 1 != i
            {
                gaps += 1;
            }
            last_match = Some(i);
            qi += 1;
        }
    }
    (qi == q.len()).then_some(gaps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(q: &str, name: &str) -> Option<Tier> {
        Query::new(q)
            .score(name.as_bytes(), char_mask(name))
            .map(|(t, _)| t)
    }

    #[test]
    fn tiers() {
        assert_eq!(tier("hashmap", "HashMap"), Some(Tier::Exact));
        assert_eq!(tier("Hash", "HashMap"), Some(Tier::Prefix));
        assert_eq!(tier("hm", "HashMap"), Some(Tier::WordStarts));
        assert_eq!(tier("hamap", "HashMap"), Some(Tier::WordStarts));
        assert_eq!(tier("gfb", "get_foo_bar"), Some(Tier::WordStarts));
        assert_eq!(tier("hsmap", "HashMap"), Some(Tier::Subsequence));
        assert_eq!(tier("xyz", "HashMap"), None);
        assert_eq!(tier("mapx", "HashMap"), None);
        assert_eq!(tier("__in", "__init__"), Some(Tier::Prefix));
    }

    #[test]
    fn better_tiers_and_shorter_names_rank_first() {
        let q = Query::new("parse");
        let s = |n: &str| q.score(n.as_bytes(), char_mask(n)).unwrap();
        assert!(s("parse") > s("parse_file"));
        assert!(s("parse_file") > s("parse_file_twice"));
        assert!(s("parse_file") > s("reparse"));
        let q = Query::new("pf");
        let s = |n: &str| q.score(n.as_bytes(), char_mask(n)).unwrap();
        assert!(s("parse_file") > s("pdf"));
    }
}
