//! JavaScript and JSX (`.js`, `.jsx`, `.mjs`, `.cjs`) on tree-sitter-javascript; the rules
//! are `ecmascript`'s.

use super::ecmascript;
use crate::index::language::{Cx, Language, Visit};
use tree_sitter::Node;

/// JavaScript and JSX: tree-sitter-javascript parses JSX, so `.jsx` needs no other grammar.
pub struct JavaScript;

impl Language for JavaScript {
    fn name(&self) -> &'static str {
        "javascript"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["js", "jsx", "mjs", "cjs"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_javascript::LANGUAGE.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        ecmascript::INTERESTING
    }
    fn opaque(&self) -> &'static [&'static str] {
        ecmascript::OPAQUE
    }
    fn guarded(&self) -> &'static [&'static str] {
        ecmascript::JS_GUARDED
    }
    fn triggers(&self) -> &'static [u8] {
        ecmascript::TRIGGERS
    }
    fn trigger_word(&self) -> Option<&'static str> {
        Some(ecmascript::TRIGGER_WORD)
    }
    fn guard_may_hide(&self) -> &'static [&'static str] {
        ecmascript::GUARD_MAY_HIDE
    }
    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        ecmascript::classify(node, cx)
    }
}
