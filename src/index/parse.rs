//! Parsing with one reusable parser per language per thread, and the cold index's parses
//! whose trees are never freed one by one ([`parse_once`]).

use super::extract;
use super::model::FileSymbols;
use super::registry::Lang;
use crate::c_alloc::ScratchHeap;
use std::cell::RefCell;
use std::mem::ManuallyDrop;
use tree_sitter::{Node, Parser, Tree};

thread_local! {
    static PARSERS: RefCell<Vec<Option<Parser>>> = const { RefCell::new(Vec::new()) };
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's parser for `lang`.
pub fn with_parser<T>(lang: Lang, f: impl FnOnce(&mut Parser) -> T) -> T {
    // These parsers outlive any scratch heap: entered, their buffers would move into one.
    debug_assert!(
        !crate::c_alloc::scratch_entered(),
        "a thread's cached parser used inside a scratch heap"
    );
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = parser_in(&mut parsers, lang);
        f(parser)
    })
}

/// The parser for `lang` in `parsers`, made on first use.
fn parser_in(parsers: &mut Vec<Option<Parser>>, lang: Lang) -> &mut Parser {
    let slot = lang_slot(lang);
    if parsers.len() <= slot {
        parsers.resize_with(slot + 1, || None);
    }
    parsers[slot].get_or_insert_with(|| {
        let mut p = Parser::new();
        // The grammar crates are checked against the tree-sitter ABI at build time
        // (tests parse every language), so this cannot fail at run time.
        p.set_language(lang.grammar())
            .expect("grammar ABI matches tree-sitter");
        p
    })
}

/// Bytes tree-sitter may request from one thread's scratch heap before it is destroyed and
/// a fresh one made. Frees are not counted, so the heap holds less than this, plus at
/// most one file's parse (a file is never split between heaps): it bounds what forgotten
/// trees keep, per parse thread, while the cold index runs. On the bench's corpus 1, 2, 4,
/// 16 and 64 MB were within noise of each other; the smaller keep the heap in cache.
const SCRATCH_LIMIT: usize = 4 << 20;

/// Parses `src` from scratch and hands `f` the root of its tree, which is then forgotten,
/// not freed: it is freed with its thread's scratch heap (see [`ScratchHeap`]), a page at a
/// time, instead of a node at a time. For a tree that is used once and dropped (the cold
/// index); where tree-sitter does not allocate through mimalloc, the tree is freed as usual.
///
/// `f` cannot keep the tree: a node's lifetime ends with the call. It runs outside the
/// scratch heap, so it may use this thread's cached parsers.
pub fn parse_once<T>(lang: Lang, src: &[u8], f: impl for<'t> FnOnce(Node<'t>) -> T) -> Option<T> {
    let scratched = SCRATCH.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_some_and(Scratch::full) {
            // Destroys the heap, and every tree forgotten in it, before the next parse.
            *slot = None;
        }
        if slot.is_none() {
            *slot = ScratchHeap::new().map(Scratch::new);
        }
        Some(slot.as_mut()?.parse(lang, src))
    });
    match scratched {
        Some(tree) => {
            // Never dropped: its blocks go with the heap, which outlives this call (it is
            // destroyed only at the start of a later one, or by `release_scratch`).
            let tree = ManuallyDrop::new(tree?);
            Some(f(tree.root_node()))
        }
        None => parse(lang, src).map(|tree| f(tree.root_node())),
    }
}

/// Destroys this thread's scratch heap and the trees forgotten in it: for when the cold
/// index is done, so that its threads keep no dead trees.
pub fn release_scratch() {
    // Borrowed only inside `parse_once`, which never runs other rayon work; should that
    // change, the heap is left for its next destroy instead of panicking here.
    SCRATCH.with(|cell| cell.try_borrow_mut().map(|mut s| s.take()).ok());
}

/// One thread's scratch heap and the parsers that parse into it.
struct Scratch {
    /// `Some` until dropped.
    heap: Option<ScratchHeap>,
    /// Made in the heap and used only inside it.
    parsers: Vec<Option<Parser>>,
}

impl Scratch {
    fn new(heap: ScratchHeap) -> Scratch {
        Scratch {
            heap: Some(heap),
            parsers: Vec::new(),
        }
    }

    fn heap(&self) -> &ScratchHeap {
        self.heap
            .as_ref()
            .expect("a scratch holds its heap until dropped")
    }

    fn parse(&mut self, lang: Lang, src: &[u8]) -> Option<Tree> {
        let heap = self
            .heap
            .as_ref()
            .expect("a scratch holds its heap until dropped");
        let parsers = &mut self.parsers;
        heap.enter(|| {
            let p = parser_in(parsers, lang);
            p.reset();
            p.parse(src, None)
        })
    }

    fn full(&self) -> bool {
        self.heap().requested() > SCRATCH_LIMIT
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // The parsers first: they free their own blocks, and their grammars' scanners free
        // state those allocated themselves (which the heap would not).
        self.parsers.clear();
        if let Some(heap) = self.heap.take() {
            // SAFETY: `ScratchHeap`'s invariant. Every tree parsed in it was forgotten
            // (`parse_once`, which lends only nodes that cannot outlive its call), and its
            // parsers, the only tree-sitter objects used while it was entered, are dropped.
            unsafe { heap.destroy() };
        }
    }
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
