//! The shared walker: one `TreeCursor` pass over the tree (or over some top-level items),
//! asking the language only about kinds it declared interesting.

use super::language::Cx;
use super::language::{Def, Ref, Visit, node_text};
use super::model::{FileSymbols, Reference, Span, Symbol, SymbolKind};
use super::registry::{KindAction, Lang};
use tree_sitter::{Node, Tree};

/// Longest signature kept, in bytes; longer ones are cut at a char boundary with `…`.
const MAX_SIGNATURE: usize = 240;
/// Longest doc kept, in bytes.
const MAX_DOC: usize = 2000;
/// How far above the node it classified a definition's doc anchor may sit (`export` →
/// `declare` → `const` → declarator is three). A definition anchored at an item is thus
/// found by walking only that deep into it ([`shallow_symbols`]); the walker checks the
/// bound in debug builds.
pub const DOC_ANCHOR_HOPS: usize = 4;

/// All symbols and references of a parsed file.
pub fn extract(lang: Lang, tree: &Tree, src: &[u8]) -> FileSymbols {
    let root = tree.root_node();
    let mut cursor = root.walk();
    let items: Vec<Node> = root.children(&mut cursor).collect();
    extract_items(lang, src, items)
}

/// Symbols and references inside the given top-level items (children of the root), in order.
/// Parent and caller indices are relative to the returned lists.
pub fn extract_items<'t>(
    lang: Lang,
    src: &[u8],
    items: impl IntoIterator<Item = Node<'t>>,
) -> FileSymbols {
    extract_items_in(lang, src, items, Vec::new(), 0)
}

/// A definition enclosing the items being walked (for re-walking part of a body).
pub struct Enclosing {
    /// Its index in the final list.
    pub index: u32,
    pub kind: SymbolKind,
    /// The container its children get.
    pub child_container: String,
}

/// Like [`extract_items`], for items inside `enclosing` (outermost first); the returned
/// symbols are numbered from `base`, so parent and caller indices are final.
pub fn extract_items_in<'t>(
    lang: Lang,
    src: &[u8],
    items: impl IntoIterator<Item = Node<'t>>,
    enclosing: Vec<Enclosing>,
    base: u32,
) -> FileSymbols {
    let mut w = Walker {
        lang,
        actions: &lang.tables().actions,
        src,
        out: FileSymbols::default(),
        stack: enclosing
            .into_iter()
            .map(|e| Open {
                depth: 0,
                index: e.index,
                kind: e.kind,
                child_container: e.child_container,
            })
            .collect(),
        base,
        max_depth: usize::MAX,
    };
    for item in items {
        w.walk(item);
    }
    w.out
}

/// The symbols defined within [`DOC_ANCHOR_HOPS`] levels of `item` (a child of the root):
/// every definition whose doc can be read from the comments above `item`, without walking
/// the rest of it. Indices in them are meaningless; docs, names, kinds and spans are exact.
pub fn shallow_symbols(lang: Lang, src: &[u8], item: Node<'_>) -> Vec<Symbol> {
    let mut w = Walker {
        lang,
        actions: &lang.tables().actions,
        src,
        out: FileSymbols::default(),
        stack: Vec::new(),
        base: 0,
        max_depth: 1 + DOC_ANCHOR_HOPS,
    };
    w.walk(item);
    w.out.symbols
}

struct Open {
    depth: usize,
    index: u32,
    kind: SymbolKind,
    /// The container its children get.
    child_container: String,
}

struct Walker<'a> {
    lang: Lang,
    actions: &'a [KindAction],
    src: &'a [u8],
    out: FileSymbols,
    /// Enclosing definitions sit at depth 0; walked items start at depth 1.
    stack: Vec<Open>,
    base: u32,
    /// Nodes this deep are visited but not descended into.
    max_depth: usize,
}

impl Walker<'_> {
    /// Iterative pre-order walk: deep expression trees (long `a + b + …` chains) must not
    /// overflow a rayon worker's stack.
    fn walk(&mut self, start: Node<'_>) {
        let mut cursor = start.walk();
        let mut depth = 1usize;
        loop {
            let node = cursor.node();
            let descend = match self.actions.get(node.kind_id() as usize) {
                Some(KindAction::Classify) => self.visit(node, depth),
                Some(KindAction::Skip) => false,
                _ => true,
            };
            if descend && depth < self.max_depth && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                while self.stack.last().is_some_and(|o| o.depth >= depth) {
                    self.stack.pop();
                }
                if depth == 1 {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                cursor.goto_parent();
                depth -= 1;
            }
        }
    }

    /// Records what `node` means; returns whether to walk its children.
    fn visit(&mut self, node: Node<'_>, depth: usize) -> bool {
        let cx = Cx {
            src: self.src,
            parent: self.stack.last().map(|o| o.kind),
        };
        match self.lang.spec().classify(node, &cx) {
            Visit::Descend => true,
            Visit::Skip => false,
            Visit::Def(def) => {
                debug_assert_anchor_near(&def, node);
                self.push_def(def, depth, true);
                true
            }
            Visit::Defs(defs) => {
                for def in defs {
                    debug_assert_anchor_near(&def, node);
                    self.push_def(def, depth, false);
                }
                true
            }
            Visit::Ref(r) => {
                self.push_ref(r);
                true
            }
            Visit::Imports(refs) => {
                for r in refs {
                    self.push_ref(r);
                }
                false
            }
        }
    }

    fn push_def(&mut self, def: Def<'_>, depth: usize, opens_scope: bool) {
        // A definition of no text is the parser's placeholder for a missing node (error
        // recovery): nothing a user can look up, and at a region's edge it would be counted
        // both as kept and as re-walked.
        if def.node.start_byte() == def.node.end_byte() {
            return;
        }
        let spec = self.lang.spec();
        let sep = spec.separator();
        let name = def
            .name_text
            .clone()
            .unwrap_or_else(|| node_text(def.name, self.src).to_string());
        let parent = self.stack.last();
        let container = def
            .container
            .clone()
            .or_else(|| parent.map(|p| p.child_container.clone()))
            .filter(|c| !c.is_empty());
        let sig_from = def.sig_start.unwrap_or(def.node).start_byte();
        let sig_to = def.body.map_or(def.node.end_byte(), |b| b.start_byte());
        let signature = signature(&self.src[sig_from..sig_to.max(sig_from)]);
        let doc = doc(self.lang, &def, self.src);
        let index = self.base + self.out.symbols.len() as u32;
        let child_container = {
            let own = def.qual.clone().unwrap_or_else(|| name.clone());
            match &container {
                Some(c) => format!("{c}{sep}{own}"),
                None => own,
            }
        };
        self.out.symbols.push(Symbol {
            name,
            kind: def.kind,
            container,
            parent: parent.map(|p| p.index),
            range: Span::of(&def.node),
            selection: Span::of(&def.name),
            signature,
            doc,
            declaration: def.declaration,
        });
        if opens_scope {
            self.stack.push(Open {
                depth,
                index,
                kind: def.kind,
                child_container,
            });
        }
    }

    fn push_ref(&mut self, r: Ref<'_>) {
        let name = r
            .name
            .unwrap_or_else(|| node_text(r.node, self.src).to_string());
        if name.is_empty() {
            return;
        }
        self.out.refs.push(Reference {
            kind: r.kind,
            name,
            path: r.path,
            span: Span::of(&r.node),
            caller: self.stack.last().map(|o| o.index),
        });
    }
}

/// A definition's doc anchor is inside the classified node (an enum's members) or an
/// ancestor at most [`DOC_ANCHOR_HOPS`] above it (what [`shallow_symbols`] relies on: an
/// anchor inside a node below an item is never the item).
fn debug_assert_anchor_near(def: &Def<'_>, classified: Node<'_>) {
    if cfg!(debug_assertions) {
        let anchor = def.doc_anchor.unwrap_or(def.node);
        let inside = anchor.start_byte() >= classified.start_byte()
            && anchor.end_byte() <= classified.end_byte();
        let mut n = Some(classified);
        let near = (0..=DOC_ANCHOR_HOPS).any(|_| {
            let here = n.is_some_and(|x| x == anchor);
            n = n.and_then(|x| x.parent());
            here
        });
        debug_assert!(
            inside || near,
            "doc anchor {} too far above {}",
            anchor.kind(),
            classified.kind()
        );
    }
}

/// A definition's doc as stored: redacted (index rows reach the database, code search and
/// the model) and capped.
pub(crate) fn doc(lang: Lang, def: &Def<'_>, src: &[u8]) -> Option<String> {
    lang.spec()
        .doc(def, src)
        .map(|d| truncate(crate::redact::redact(&d).into_owned(), MAX_DOC))
}

/// Collapses whitespace, drops a trailing `{`, and caps the length.
pub(crate) fn signature(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len().min(MAX_SIGNATURE + 4));
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > MAX_SIGNATURE {
            break;
        }
    }
    let trimmed = out.trim_end_matches(['{', ' ']);
    // `API_KEY = "sk-…"` is a constant's signature: redact before it is stored or shown.
    truncate(crate::redact::redact(trimmed).into_owned(), MAX_SIGNATURE)
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}
