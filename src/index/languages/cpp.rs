//! C++ (`.cc`, `.cpp`, `.hpp` …) on tree-sitter-cpp, names joined with `::`; the
//! declarator rules are `clike`'s.

use super::clike;
use crate::index::language::{Cx, Language, Visit};
use tree_sitter::Node;

pub struct Cpp;

impl Language for Cpp {
    fn name(&self) -> &'static str {
        "cpp"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[
            "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp",
        ]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_cpp::LANGUAGE.into()
    }
    fn separator(&self) -> &'static str {
        "::"
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
