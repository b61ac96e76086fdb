//! The shared walker: one `TreeCursor` pass over the tree (or over some top-level items),
//! asking the language only about kinds it declared interesting.

use super::language::{Cx, Nav};
use super::language::{Def, Ref, Visit, node_text};
use super::model::{FileSymbols, Reference, Span, Symbol, SymbolKind};
use super::registry::{KindAction, Lang};
use tree_sitter::{Node, Tree, TreeCursor};

/// Longest signature kept, in bytes; longer ones are cut at a char boundary with `…`.
const MAX_SIGNATURE: usize = 240;
/// Longest doc kept, in bytes.
const MAX_DOC: usize = 2000;
/// How far above the node it classified a definition's doc anchor may sit (`export` →
/// `declare` → `const` → declarator is three). A definition anchored at an item is thus
/// found by walking only that deep into it ([`shallow_symbols`]); the walker checks the
/// bound in debug builds.
pub const DOC_ANCHOR_HOPS: usize = 4;

/// `Language::guarded`'s invariant, checked at every skip in debug builds: the subtree
/// of a guarded node without a trigger byte has no node of an interesting kind.
#[cfg(debug_assertions)]
pub(crate) fn debug_assert_nothing_interesting(lang: Lang, node: Node<'_>) {
    let actions = &lang.tables().actions;
    let may_hide = lang.spec().guard_may_hide();
    let mut cursor = node.walk();
    let mut depth = 0usize;
    loop {
        let n = cursor.node();
        // A token may share an interesting kind's name (JavaScript's `class` keyword, left
        // alone in half-typed code) but holds nothing to record.
        assert!(
            actions.get(n.kind_id() as usize) != Some(&KindAction::Classify)
                || !n.is_named()
                || may_hide.contains(&n.kind()),
            "a {} at byte {} inside a skipped {} at {}: its language's guarded kinds or trigger bytes are wrong",
            n.kind(),
            n.start_byte(),
            node.kind(),
            node.start_byte()
        );
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if depth == 0 {
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

/// All symbols and references of a parsed file.
pub fn extract(lang: Lang, tree: &Tree, src: &[u8]) -> FileSymbols {
    extract_root(lang, tree.root_node(), src)
}

/// All symbols and references under a tree's root.
pub fn extract_root(lang: Lang, root: Node<'_>, src: &[u8]) -> FileSymbols {
    let mut cursor = root.walk();
    let items: Vec<Node> = root.children(&mut cursor).collect();
    extract_items_in(lang, src, root, items, Vec::new(), 0)
}

/// A definition enclosing the items being walked (for re-walking part of a body).
pub struct Enclosing {
    /// Its index in the final list.
    pub index: u32,
    pub kind: SymbolKind,
    /// The container its children get.
    pub child_container: String,
}

/// Symbols and references inside `items`, consecutive children of `parent` in order, within
/// `enclosing` (outermost first); the returned symbols are numbered from `base`, so parent
/// and caller indices are final.
pub fn extract_items_in<'t>(
    lang: Lang,
    src: &[u8],
    parent: Node<'t>,
    items: impl IntoIterator<Item = Node<'t>>,
    enclosing: Vec<Enclosing>,
    base: u32,
) -> FileSymbols {
    let mut w = Walker {
        lang,
        actions: &lang.tables().actions,
        src,
        outer: Some(parent),
        path: Vec::new(),
        siblings: Vec::new(),
        out: FileSymbols::default(),
        cursor: None,
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
        trigger: NextTrigger::default(),
        trigger_word: NextTrigger::default(),
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
        outer: None,
        path: Vec::new(),
        siblings: Vec::new(),
        out: FileSymbols::default(),
        cursor: None,
        stack: Vec::new(),
        base: 0,
        max_depth: 1 + DOC_ANCHOR_HOPS,
        trigger: NextTrigger::default(),
        trigger_word: NextTrigger::default(),
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

struct Walker<'a, 't> {
    lang: Lang,
    actions: &'a [KindAction],
    src: &'a [u8],
    /// The walked items' parent, when known; see [`Nav`] for `path` and `siblings`.
    outer: Option<Node<'t>>,
    path: Vec<Node<'t>>,
    siblings: Vec<Vec<Node<'t>>>,
    out: FileSymbols,
    /// The cursor of the last item walked, reset for the next.
    cursor: Option<TreeCursor<'t>>,
    /// Enclosing definitions sit at depth 0; walked items start at depth 1.
    stack: Vec<Open>,
    base: u32,
    /// Nodes this deep are visited but not descended into.
    max_depth: usize,
    /// The first trigger byte at or after `from` is at `at` (`src.len()` for none): guarded
    /// nodes come in document order, so each byte is scanned about once per walk.
    trigger: NextTrigger,
    /// The same for the language's trigger word, if it has one.
    trigger_word: NextTrigger,
}

#[derive(Clone, Copy, Default)]
struct NextTrigger {
    from: usize,
    at: usize,
}

impl NextTrigger {
    /// Where the first trigger at or after `start` is, `find` answering for a slice.
    fn next_at(
        &mut self,
        start: usize,
        src: &[u8],
        find: impl Fn(&[u8]) -> Option<usize>,
    ) -> usize {
        // The cached answer holds for any start in [from, at]: no trigger lies between.
        if start < self.from || start > self.at {
            self.from = start;
            self.at = find(&src[start.min(src.len())..]).map_or(src.len(), |i| start + i);
        }
        self.at
    }
}

impl<'t> Walker<'_, 't> {
    /// Iterative pre-order walk: deep expression trees (long `a + b + …` chains) must not
    /// overflow a rayon worker's stack.
    fn walk(&mut self, start: Node<'t>) {
        // One cursor for every item: a fresh one allocates its stack and grows it again.
        let mut cursor = match self.cursor.take() {
            Some(mut c) => {
                c.reset(start);
                c
            }
            None => start.walk(),
        };
        let mut depth = 1usize;
        // Whether the cursor just moved down, so `node` opens a new list of siblings.
        let mut first_child = false;
        'nodes: loop {
            let node = cursor.node();
            self.enter(node, depth, first_child);
            let descend = match self.actions.get(node.kind_id() as usize) {
                Some(KindAction::Classify) => self.visit(node, depth),
                Some(KindAction::Skip) => false,
                Some(KindAction::Guarded) => self.triggered(node),
                _ => true,
            };
            first_child = descend && depth < self.max_depth && cursor.goto_first_child();
            if first_child {
                depth += 1;
                continue;
            }
            loop {
                while self.stack.last().is_some_and(|o| o.depth >= depth) {
                    self.stack.pop();
                }
                if depth == 1 {
                    break 'nodes;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                cursor.goto_parent();
                depth -= 1;
            }
        }
        self.cursor = Some(cursor);
    }

    /// Whether a guarded node's text holds one of its language's trigger bytes, so that it
    /// may hold something to record (see `Language::guarded`).
    fn triggered(&mut self, node: Node<'t>) -> bool {
        let Some([a, b, c]) = self.lang.tables().triggers else {
            return true;
        };
        let (start, end) = (node.start_byte(), node.end_byte().min(self.src.len()));
        // A node that opens with `(` (an argument list, a tuple) is searched past it: a
        // `(` only ever counts for the node it opens, never for one starting with it.
        let start = start + usize::from(self.src.get(start) == Some(&b'('));
        let src = self.src;
        let hit = self
            .trigger
            .next_at(start, src, |rest| memchr::memchr3(a, b, c, rest))
            < end
            || self
                .lang
                .tables()
                .trigger_word
                .as_ref()
                .is_some_and(|word| {
                    self.trigger_word
                        .next_at(start, src, |rest| word.find(rest))
                        < end
                });
        #[cfg(debug_assertions)]
        if !hit {
            debug_assert_nothing_interesting(self.lang, node);
        }
        hit
    }

    /// Keeps [`Nav`]'s invariant: `node` is at `depth`, first among its siblings or not.
    fn enter(&mut self, node: Node<'t>, depth: usize, first_child: bool) {
        self.path.truncate(depth - 1);
        self.path.push(node);
        if self.siblings.len() < depth {
            self.siblings.resize_with(depth, Vec::new);
        }
        let level = &mut self.siblings[depth - 1];
        if first_child {
            level.clear();
        }
        level.push(node);
        #[cfg(test)]
        if tests::CHECK_NAV.get() {
            tests::nav_agrees_with_tree_sitter(self.nav(depth), node);
        }
    }

    fn nav(&self, depth: usize) -> Nav<'_, 't> {
        Nav {
            outer: self.outer,
            path: &self.path,
            siblings: &self.siblings[..depth],
        }
    }

    /// Records what `node` means; returns whether to walk its children.
    fn visit(&mut self, node: Node<'t>, depth: usize) -> bool {
        let kinds = self.stack.last().map(|o| o.kind);
        let visit = {
            let cx = Cx {
                src: self.src,
                parent: kinds,
                nav: self.nav(depth),
            };
            self.lang.spec().classify(node, &cx)
        };
        match visit {
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

    fn push_def(&mut self, def: Def<'t>, depth: usize, opens_scope: bool) {
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
        let doc = doc(self.lang, &def, self.src, self.nav(depth));
        let index = self.base + self.out.symbols.len() as u32;
        // Only a definition that opens a scope names its children's container.
        let child_container = opens_scope.then(|| {
            let own = def.qual.as_deref().unwrap_or(&name);
            match &container {
                Some(c) => format!("{c}{sep}{own}"),
                None => own.to_string(),
            }
        });
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
        if let Some(child_container) = child_container {
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
pub(crate) fn doc<'t>(lang: Lang, def: &Def<'t>, src: &[u8], nav: Nav<'_, 't>) -> Option<String> {
    lang.spec()
        .doc(def, src, nav)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Set by the tests below: every node the walker enters is checked.
        pub(super) static CHECK_NAV: Cell<bool> = const { Cell::new(false) };
    }

    /// [`Nav`]'s answers for `node`, its ancestors and its earlier siblings are tree-sitter's.
    pub(super) fn nav_agrees_with_tree_sitter(nav: Nav<'_, '_>, node: Node<'_>) {
        for &n in nav.path {
            assert_eq!(
                nav.parent(n),
                n.parent(),
                "parent of {} at {}",
                n.kind(),
                n.start_byte()
            );
        }
        let mut n = Some(node);
        for _ in 0..3 {
            let Some(at) = n else { break };
            let prev = nav.prev_sibling(at);
            assert_eq!(
                prev,
                at.prev_sibling(),
                "sibling before {} at {}",
                at.kind(),
                at.start_byte()
            );
            n = prev;
        }
    }

    fn check(file: &str, src: &str) -> usize {
        let lang = Lang::for_path(std::path::Path::new(file)).expect("a language");
        let tree = crate::index::parse::parse(lang, src.as_bytes()).expect("parses");
        CHECK_NAV.set(true);
        let whole = extract(lang, &tree, src.as_bytes());
        // A run of items in the middle, as an edit re-walks them.
        let root = tree.root_node();
        let mut cursor = root.walk();
        let items: Vec<Node> = root.children(&mut cursor).collect();
        let mid = &items[items.len() / 3..items.len() * 2 / 3];
        extract_items_in(
            lang,
            src.as_bytes(),
            root,
            mid.iter().copied(),
            Vec::new(),
            0,
        );
        CHECK_NAV.set(false);
        whole.symbols.len()
    }

    #[test]
    fn the_walks_parents_and_siblings_are_tree_sitters() {
        let cases: &[(&str, &str)] = &[
            (
                "a.ts",
                "/** one */\nexport const a = () => 1;\n// two\n/** three */\nexport function b() {}\n\
                 @dec\nclass C {\n  /** m */\n  m() { return f(1) }\n}\nexport let x = 1, y = () => 2;\n\
                 function broken( {\n/** after */\nexport type T = { a: number };\n",
            ),
            (
                "a.js",
                "/** doc */\nconst f = function () {};\nobj.prop = () => {};\n/** z */\nexports.z = function () {};\n",
            ),
            (
                "a.py",
                "# lead\n@decorator\ndef f():\n    \"doc\"\n    return g()\n\n# c\nclass K:\n    # m\n    @property\n    def m(self): pass\n",
            ),
            (
                "a.go",
                "package p\n\n// T is a type.\ntype T struct{ a int }\n\n// C is a constant.\nconst C = 1\n\nconst (\n\t// D too.\n\tD = 2\n)\n",
            ),
            (
                "a.cpp",
                "/// a template\ntemplate <typename T> T id(T x) { return x; }\n// plain\nint main() { return id(1); }\n",
            ),
            (
                "a.rb",
                "# Greeter\nclass Greeter\n  # hello\n  def hello; end\nend\n",
            ),
            (
                "a.rs",
                "/// A\n/// two lines\n#[derive(Debug)]\npub struct A;\n//! inner\nimpl A {\n    /// f\n    fn f(&self) { g(1) }\n}\nenum E {\n    /// v\n    V,\n}\n",
            ),
        ];
        for (file, src) in cases {
            assert!(check(file, src) > 0, "{file}: no symbols");
        }
        // Real files: this crate's biggest sources.
        for file in [
            "src/index/live.rs",
            "src/index/crawl.rs",
            "src/index/service.rs",
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let src = std::fs::read_to_string(&path).unwrap();
            assert!(check(file, &src) > 10, "{file}");
        }
    }
}
