//! TypeScript (`.ts`, `.mts`, `.cts`) and TSX (`.tsx`), each on its own grammar; the
//! rules are `ecmascript`'s.

use super::ecmascript;
use crate::index::language::{Cx, Language, Visit};
use tree_sitter::Node;

/// TypeScript (`.ts`): the plain grammar, where `<T>x` is a type assertion, not JSX.
pub struct TypeScript;

/// TSX (`.tsx`): its own grammar, where `<Foo />` is JSX.
pub struct Tsx;

impl Language for TypeScript {
    fn name(&self) -> &'static str {
        "typescript"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["ts", "mts", "cts"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        ecmascript::INTERESTING
    }
    fn opaque(&self) -> &'static [&'static str] {
        ecmascript::OPAQUE
    }
    fn guarded(&self) -> &'static [&'static str] {
        ecmascript::TS_GUARDED
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

impl Language for Tsx {
    fn name(&self) -> &'static str {
        "tsx"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["tsx"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_typescript::LANGUAGE_TSX.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        ecmascript::INTERESTING
    }
    fn opaque(&self) -> &'static [&'static str] {
        ecmascript::OPAQUE
    }
    fn guarded(&self) -> &'static [&'static str] {
        ecmascript::TSX_GUARDED
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
