//! Ruby (`.rb`, `.rake`, `.gemspec`) on tree-sitter-ruby: classes, modules and methods,
//! names joined with `::`.

use crate::index::language::{Cx, Def, Language, Nav, Ref, Visit, node_text, preceding_comments};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub struct Ruby;

impl Language for Ruby {
    fn name(&self) -> &'static str {
        "ruby"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["rb", "rake", "gemspec"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_ruby::LANGUAGE.into()
    }
    fn separator(&self) -> &'static str {
        "::"
    }
    fn interesting(&self) -> &'static [&'static str] {
        &[
            "class",
            "module",
            "method",
            "singleton_method",
            "assignment",
            "call",
        ]
    }
    fn opaque(&self) -> &'static [&'static str] {
        &["comment"]
    }

    /// A comment above the first statement of a body sits before the `body_statement`.
    fn doc<'t>(&self, def: &Def<'t>, src: &[u8], nav: Nav<'_, 't>) -> Option<String> {
        let anchor = match nav.parent(def.node) {
            Some(p) if p.kind() == "body_statement" && nav.prev_sibling(def.node).is_none() => p,
            _ => def.node,
        };
        preceding_comments(anchor, src, nav, &["comment"], &[], &|_| true)
    }

    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        let name = node.child_by_field_name("name");
        match (node.kind(), name) {
            ("class" | "module", Some(n)) => {
                let kind = if node.kind() == "class" {
                    K::Class
                } else {
                    K::Module
                };
                // `class Outer::Inner` is named `Inner`, inside `Outer`.
                let (sel, container) = match n.kind() {
                    "scope_resolution" => (
                        n.child_by_field_name("name").unwrap_or(n),
                        n.child_by_field_name("scope")
                            .map(|s| node_text(s, cx.src).to_string()),
                    ),
                    _ => (n, None),
                };
                let mut def = Def::new(kind, node, sel).with_body_field();
                if let Some(c) = container {
                    def = def.container(c);
                }
                Visit::Def(def)
            }
            ("method" | "singleton_method", Some(n)) => {
                let kind = match cx.parent {
                    Some(K::Class | K::Module) => K::Method,
                    _ if node.kind() == "singleton_method" => K::Method,
                    _ => K::Function,
                };
                let kind = if cx.text(n) == "initialize" {
                    K::Constructor
                } else {
                    kind
                };
                Visit::Def(Def::new(kind, node, n).with_body_field())
            }
            ("assignment", _) if !cx.in_code() => match node.child_by_field_name("left") {
                Some(l) if l.kind() == "constant" => Visit::Def(Def::new(K::Constant, node, l)),
                _ => Visit::Descend,
            },
            ("call", _) => {
                let Some(m) = node.child_by_field_name("method") else {
                    return Visit::Descend;
                };
                let method = cx.text(m);
                if matches!(method, "require" | "require_relative") {
                    let arg = node
                        .child_by_field_name("arguments")
                        .and_then(|a| a.named_child(0))
                        .filter(|a| a.kind() == "string");
                    if let Some(a) = arg {
                        let path = cx
                            .text(a)
                            .trim_matches(|c| c == '"' || c == '\'')
                            .to_string();
                        let stem = path.rsplit('/').next().unwrap_or(&path).to_string();
                        return Visit::Imports(vec![Ref::import(node, stem, path)]);
                    }
                }
                Visit::Ref(Ref::call(m))
            }
            _ => Visit::Descend,
        }
    }
}
