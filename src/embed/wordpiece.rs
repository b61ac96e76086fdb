//! BERT's uncased WordPiece tokenizer (what all-MiniLM-L6-v2 was trained with), written out
//! instead of pulling in the `tokenizers` crate and its regex engines: basic tokenization
//! (clean, split CJK, lower-case, strip accents, split punctuation) then greedy
//! longest-match-first sub-words with `##` continuations. Reads the model's `vocab.txt`.

use std::collections::HashMap;
use std::path::Path;

use unicode_normalization::UnicodeNormalization;

/// Words longer than this become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

// The special ids serve the BERT encoders (`local.rs`); the static table needs only pieces.
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    pub cls: u32,
    pub sep: u32,
    pub pad: u32,
}

impl WordPiece {
    pub fn from_vocab_file(path: &Path) -> Result<WordPiece, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        WordPiece::from_vocab(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// From the text of a `vocab.txt` (one piece per line; the line number is its id).
    pub fn from_vocab(text: &str) -> Result<WordPiece, String> {
        let vocab: HashMap<String, u32> = text
            .lines()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as u32))
            .collect();
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {t} token"))
        };
        Ok(WordPiece {
            unk: id("[UNK]")?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            pad: id("[PAD]")?,
            vocab,
        })
    }

    /// Pieces in the vocabulary.
    pub fn len(&self) -> usize {
        self.vocab.len()
    }

    /// The pieces of `text` without `[CLS]`/`[SEP]`, and without `[UNK]`: a static model has
    /// nothing to say about a word it cannot spell.
    pub fn pieces(&self, text: &str) -> impl Iterator<Item = u32> + '_ {
        basic_tokens(text)
            .into_iter()
            .flat_map(|w| self.word_pieces(&w))
            .filter(|&id| id != self.unk)
    }

    /// `[CLS] pieces… [SEP]`, at most `max_len` ids.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        'words: for word in basic_tokens(text) {
            for id in self.word_pieces(&word) {
                if ids.len() + 1 >= max_len {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    fn word_pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let mut piece: String = chars[start..end].iter().collect();
                if start > 0 {
                    piece.insert_str(0, "##");
                }
                if let Some(&id) = self.vocab.get(&piece) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => out.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        out
    }
}

/// BERT's BasicTokenizer with `do_lower_case = true`.
fn basic_tokens(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
            continue;
        }
        if is_cjk(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else if c.is_whitespace() {
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    let mut out = Vec::new();
    for word in spaced.split_whitespace() {
        // lower-case, then strip accents: NFD and drop combining marks
        let folded: String = word
            .to_lowercase()
            .nfd()
            .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
            .collect();
        let mut cur = String::new();
        for c in folded.chars() {
            if is_punctuation(c) {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_string());
            } else {
                cur.push(c);
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

fn is_punctuation(c: char) -> bool {
    // BERT treats all non-alphanumeric ASCII as punctuation, plus Unicode punctuation
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0x00A1..=0x00BF | 0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003 | 0x3008..=0x3011
            | 0x3014..=0x301F | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_tokenization_matches_bert() {
        assert_eq!(
            basic_tokens("Héllo, WORLD! don't\tstop 北京"),
            [
                "hello", ",", "world", "!", "don", "'", "t", "stop", "北", "京"
            ]
        );
    }
}
