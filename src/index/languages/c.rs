//! C (`.c`, `.h`) on tree-sitter-c; the declarator rules are `clike`'s.

use super::clike;
use crate::index::language::{Cx, Language, Visit};
use tree_sitter::Node;

pub struct C;

impl Language for C {
    fn name(&self) -> &'static str {
        "c"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["c", "h"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_c::LANGUAGE.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        clike::INTERESTING
    }
    fn opaque(&self) -> &'static [&'static str] {
        clike::OPAQUE
    }
    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        clike::classify(node, cx)
    }
}
