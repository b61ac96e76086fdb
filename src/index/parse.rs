//! Parsing with one reusable parser per language per thread.

use super::extract;
use super::model::FileSymbols;
use super::registry::Lang;
use std::cell::RefCell;
use tree_sitter::{Parser, Tree};

thread_local! {
    static PARSERS: RefCell<Vec<Option<Parser>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's parser for `lang`.
pub fn with_parser<T>(lang: Lang, f: impl FnOnce(&mut Parser) -> T) -> T {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let slot = lang_slot(lang);
        if parsers.len() <= slot {
            parsers.resize_with(slot + 1, || None);
        }
        let parser = parsers[slot].get_or_insert_with(|| {
            let mut p = Parser::new();
            // The grammar crates are checked against the tree-sitter ABI at build time
            // (tests parse every language), so this cannot fail at run time.
            p.set_language(lang.grammar())
                .expect("grammar ABI matches tree-sitter");
            p
        });
        f(parser)
    })
}

fn lang_slot(lang: Lang) -> usize {
    Lang::all().position(|l| l == lang).unwrap_or(0)
}

/// Parses `src` from scratch.
pub fn parse(lang: Lang, src: &[u8]) -> Option<Tree> {
    with_parser(lang, |p| {
        p.reset();
        p.parse(src, None)
    })
}

/// Parses and extracts in one go (the cold-index path; the tree is dropped).
pub fn parse_and_extract(lang: Lang, src: &[u8]) -> Option<FileSymbols> {
    let tree = parse(lang, src)?;
    Some(extract::extract(lang, &tree, src))
}
