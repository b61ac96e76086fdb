//! The one trait every language implements, and the small vocabulary it answers in.
//!
//! A language does not walk trees itself: the shared walker in [`super::extract`] visits
//! every node once with a `TreeCursor` and asks the language about the node kinds it
//! declared interesting (a kind-id table, no string compares on the hot path). That keeps
//! extraction at a hand-written-walk cost (≈20–30 % over parsing) instead of the 55–80 %
//! a tags query costs, and keeps each language file declarative.

use super::model::{RefKind, SymbolKind};
use tree_sitter::Node;

pub trait Language: Send + Sync + 'static {
    /// Stable identifier stored in the database and shown to users (`rust`, `tsx`).
    fn name(&self) -> &'static str;
    /// File extensions (without the dot) this language claims.
    fn extensions(&self) -> &'static [&'static str];
    fn grammar(&self) -> tree_sitter::Language;
    /// Joins container and name in qualified names.
    fn separator(&self) -> &'static str {
        "."
    }
    /// Node kinds [`Language::classify`] is called for.
    fn interesting(&self) -> &'static [&'static str];
    /// Node kinds whose subtrees never hold symbols or references (comments, strings).
    fn opaque(&self) -> &'static [&'static str] {
        &[]
    }
    /// Node kinds that hold only expressions or types (arguments, operators, literals,
    /// parameter lists, and statements made of expressions alone, like `return`), walked only
    /// when their text holds one of [`Language::triggers`].
    ///
    /// Invariant: inside these kinds, every node of an [`Language::interesting`] kind is
    /// itself written with a trigger byte, or sits inside one that is (a call's `(`, a
    /// closure's or struct type's `{`, a macro's `!`). So a guarded node whose text has none
    /// holds nothing the walker records, and skipping its children loses nothing. Debug
    /// builds check every skip (`extract::debug_assert_nothing_interesting`). Statements
    /// that can declare something are never guarded, since `var x int` or `struct S;` carry
    /// no trigger.
    ///
    /// A `(` only ever counts for the node it opens (a call's arguments, a parameter list),
    /// never for a node that starts with it, so a guarded node that opens with `(` is
    /// searched past it: an argument list with no call inside is skipped.
    fn guarded(&self) -> &'static [&'static str] {
        &[]
    }
    /// The bytes of [`Language::guarded`]'s invariant.
    fn triggers(&self) -> &'static [u8] {
        &[]
    }
    /// A word that counts as a trigger too (JavaScript's `new`: `new Foo` needs no
    /// parentheses).
    fn trigger_word(&self) -> Option<&'static str> {
        None
    }
    /// Interesting kinds that may sit inside a guarded node with no trigger, which a skip
    /// hides: the exceptions to [`Language::guarded`]'s invariant, each one a documented
    /// loss.
    fn guard_may_hide(&self) -> &'static [&'static str] {
        &[]
    }
    /// Node kinds that are comments, for doc extraction.
    fn comment_kinds(&self) -> &'static [&'static str] {
        &["comment"]
    }
    /// Node kinds allowed between a doc comment and its definition (attributes, decorators).
    fn doc_transparent(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether a comment counts as documentation (Rust: only `///` and `/** */`).
    fn is_doc_comment(&self, _text: &str) -> bool {
        true
    }
    /// What a node of an interesting kind means.
    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t>;
    /// The doc comment of a definition. The default reads the comments right above it.
    fn doc<'t>(&self, def: &Def<'t>, src: &[u8], nav: Nav<'_, 't>) -> Option<String> {
        preceding_comments(
            def.doc_anchor.unwrap_or(def.node),
            src,
            nav,
            self.comment_kinds(),
            self.doc_transparent(),
            &|t| self.is_doc_comment(t),
        )
    }
}

/// What the walker knows when it asks about a node.
pub struct Cx<'a, 't> {
    pub src: &'a [u8],
    /// Kind of the innermost enclosing definition, if any.
    pub parent: Option<SymbolKind>,
    /// The node's parent and siblings, from the walk.
    pub nav: Nav<'a, 't>,
}

/// A node's parent and previous sibling, answered from the walker's path where it can.
/// tree-sitter answers `Node::parent` and `Node::prev_sibling` by descending from the root
/// and scanning each level's children up to the node, so asking them once per definition made
/// extracting a file of many top-level items quadratic: it was most of the background
/// extract's time on effect's `stream.ts` (900 JSDoc'd exports).
///
/// Invariant: `path[d]` is the node visited at depth `d + 1`, and `siblings[d]` holds, in
/// order, the children of `path[d - 1]` (of `outer` for `d = 0`) visited so far, the last being
/// `path[d]`; `siblings[0]` are consecutive children of their parent. Anything else is asked of
/// tree-sitter. `extract::tests` checks the answers against tree-sitter's on every node.
#[derive(Clone, Copy)]
pub struct Nav<'w, 't> {
    pub(crate) outer: Option<Node<'t>>,
    pub(crate) path: &'w [Node<'t>],
    pub(crate) siblings: &'w [Vec<Node<'t>>],
}

impl<'w, 't> Nav<'w, 't> {
    /// No walk to answer from: every question goes to tree-sitter.
    pub fn none() -> Nav<'static, 't> {
        Nav {
            outer: None,
            path: &[],
            siblings: &[],
        }
    }

    pub fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        match self.path.iter().rposition(|p| *p == node) {
            Some(0) => self.outer.or_else(|| node.parent()),
            Some(d) => Some(self.path[d - 1]),
            None => node.parent(),
        }
    }

    pub fn prev_sibling(&self, node: Node<'t>) -> Option<Node<'t>> {
        let start = node.start_byte();
        for (d, level) in self.siblings.iter().enumerate().rev() {
            // Children are in byte order; zero-width ones may share a start.
            let from = level.partition_point(|s| s.start_byte() < start);
            let Some(i) = level[from..]
                .iter()
                .take_while(|s| s.start_byte() == start)
                .position(|s| *s == node)
                .map(|i| from + i)
            else {
                continue;
            };
            return match i {
                // The first item walked: what precedes it was not walked.
                0 if d == 0 => node.prev_sibling(),
                0 => None,
                i => Some(level[i - 1]),
            };
        }
        node.prev_sibling()
    }
}

impl Cx<'_, '_> {
    pub fn text(&self, node: Node<'_>) -> &str {
        node_text(node, self.src)
    }
    /// Inside a function body, where plain variables are locals, not symbols.
    pub fn in_code(&self) -> bool {
        self.parent.is_some_and(SymbolKind::is_callable)
    }
}

pub fn node_text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    // Invalid UTF-8 only ever costs that node its name, never the file.
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("\u{FFFD}")
}

pub enum Visit<'t> {
    /// Not a symbol; look inside.
    Descend,
    /// Nothing inside matters.
    Skip,
    /// A definition; its subtree is walked with it as the enclosing symbol.
    Def(Def<'t>),
    /// Several definitions from one node (`const a = 1, b = 2`); the subtree is walked as well.
    Defs(Vec<Def<'t>>),
    /// A call; the subtree is walked as well (arguments hold calls).
    Ref(Ref<'t>),
    /// Imports; the subtree is not walked.
    Imports(Vec<Ref<'t>>),
}

pub struct Def<'t> {
    pub kind: SymbolKind,
    /// The full range.
    pub node: Node<'t>,
    /// The selection range, and the name unless `name_text` is set.
    pub name: Node<'t>,
    pub name_text: Option<String>,
    /// The name children see in their container (`impl Display for Foo` → `Foo`).
    pub qual: Option<String>,
    /// Overrides the computed container (Go receivers, C++ `Foo::bar` definitions).
    pub container: Option<String>,
    /// The signature runs from the start of `node` to the start of `body`.
    pub body: Option<Node<'t>>,
    /// Where the signature starts, when not at `node` (decorated definitions).
    pub sig_start: Option<Node<'t>>,
    /// The node whose preceding comments are the doc (an enclosing `export`, a template).
    pub doc_anchor: Option<Node<'t>>,
    pub declaration: bool,
}

impl<'t> Def<'t> {
    pub fn new(kind: SymbolKind, node: Node<'t>, name: Node<'t>) -> Self {
        Def {
            kind,
            node,
            name,
            name_text: None,
            qual: None,
            container: None,
            body: None,
            sig_start: None,
            doc_anchor: None,
            declaration: false,
        }
    }
    /// Uses the `body` field of `node` as the body.
    pub fn with_body_field(mut self) -> Self {
        self.body = self.node.child_by_field_name("body");
        self
    }
    pub fn body(mut self, body: Option<Node<'t>>) -> Self {
        self.body = body;
        self
    }
    pub fn name_text(mut self, text: impl Into<String>) -> Self {
        self.name_text = Some(text.into());
        self
    }
    pub fn qual(mut self, qual: impl Into<String>) -> Self {
        self.qual = Some(qual.into());
        self
    }
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }
    pub fn sig_start(mut self, node: Node<'t>) -> Self {
        self.sig_start = Some(node);
        self
    }
    pub fn doc_anchor(mut self, node: Node<'t>) -> Self {
        self.doc_anchor = Some(node);
        self
    }
    pub fn declaration(mut self, yes: bool) -> Self {
        self.declaration = yes;
        self
    }
}

pub struct Ref<'t> {
    pub kind: RefKind,
    /// The span; also the name unless `name` is set.
    pub node: Node<'t>,
    pub name: Option<String>,
    pub path: Option<String>,
}

impl<'t> Ref<'t> {
    pub fn call(node: Node<'t>) -> Self {
        Ref {
            kind: RefKind::Call,
            node,
            name: None,
            path: None,
        }
    }
    pub fn import(node: Node<'t>, name: impl Into<String>, path: impl Into<String>) -> Self {
        Ref {
            kind: RefKind::Import,
            node,
            name: Some(name.into()),
            path: Some(path.into()),
        }
    }
}

/// The contiguous comments right above `node` (allowing `transparent` nodes such as
/// attributes in between), cleaned of comment markers.
pub fn preceding_comments<'t>(
    node: Node<'t>,
    src: &[u8],
    nav: Nav<'_, 't>,
    comment_kinds: &[&str],
    transparent: &[&str],
    accept: &dyn Fn(&str) -> bool,
) -> Option<String> {
    // Only blank space before the node on its row and on the row above, and no kind that may
    // stand between: no comment can be adjacent. Most definitions look like this, and
    // `prev_sibling` is not cheap (tree-sitter walks down from the root to find the parent).
    if transparent.is_empty() && blank_above(src, node.start_byte()) {
        return None;
    }
    let mut lines: Vec<String> = Vec::new();
    let mut next_start_row = node.start_position().row;
    let mut cur = nav.prev_sibling(node);
    while let Some(n) = cur {
        let kind = n.kind();
        if transparent.contains(&kind) {
            next_start_row = n.start_position().row;
            cur = nav.prev_sibling(n);
            continue;
        }
        // Line comments may include their newline, ending at column 0 of the next row.
        let end = n.end_position();
        let end_row = if end.column == 0 && end.row > n.start_position().row {
            end.row - 1
        } else {
            end.row
        };
        if !comment_kinds.contains(&kind) || end_row + 1 < next_start_row {
            break;
        }
        let text = node_text(n, src);
        // Rust's `//!` documents the enclosing item, not the next one.
        if text.starts_with("//!") || text.starts_with("/*!") || !accept(text) {
            break;
        }
        lines.push(clean_comment(text));
        next_start_row = n.start_position().row;
        cur = nav.prev_sibling(n);
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    let doc = lines.join("\n").trim().to_string();
    (!doc.is_empty()).then_some(doc)
}

/// Whether `start` has only spaces and tabs before it on its line, and the line above is
/// blank or absent (rows end at `\n`, as tree-sitter counts them).
fn blank_above(src: &[u8], start: usize) -> bool {
    let mut i = start.min(src.len());
    while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    if i == 0 {
        return true;
    }
    if src[i - 1] != b'\n' {
        return false;
    }
    i -= 1;
    while i > 0 && src[i - 1] != b'\n' {
        if !src[i - 1].is_ascii_whitespace() {
            return false;
        }
        i -= 1;
    }
    true
}

/// Strips comment markers (`///`, `//`, `#`, `/** */`, leading `*`) from each line.
pub fn clean_comment(text: &str) -> String {
    let text = text.trim();
    let text = text
        .strip_prefix("/**")
        .or_else(|| text.strip_prefix("/*"))
        .map(|t| t.strip_suffix("*/").unwrap_or(t))
        .unwrap_or(text);
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let l = l
            .strip_prefix("///")
            .or_else(|| l.strip_prefix("//"))
            .or_else(|| l.strip_prefix('#'))
            .or_else(|| l.strip_prefix('*'))
            .unwrap_or(l);
        out.push(l.strip_prefix(' ').unwrap_or(l).trim_end());
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}
