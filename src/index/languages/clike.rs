//! What C and C++ share: declarators. A name hides under pointer, array, reference and
//! function declarators, and "declaration or definition" depends on whether a body follows.

use crate::index::language::{Cx, Def, Nav, Ref, Visit, node_text};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub const INTERESTING: &[&str] = &[
    "function_definition",
    "declaration",
    "field_declaration",
    "struct_specifier",
    "union_specifier",
    "class_specifier",
    "enum_specifier",
    "enumerator",
    "type_definition",
    "alias_declaration",
    "namespace_definition",
    "preproc_def",
    "preproc_function_def",
    "call_expression",
    "preproc_include",
];

pub const OPAQUE: &[&str] = &[
    "comment",
    "string_literal",
    "raw_string_literal",
    "char_literal",
];

/// The innermost declarator: follows `declarator` fields to the node that is not itself
/// a declarator wrapper.
fn innermost(mut d: Node<'_>) -> Node<'_> {
    for _ in 0..16 {
        match d.kind() {
            "pointer_declarator"
            | "array_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "init_declarator"
            | "attributed_declarator"
            | "function_declarator" => match d.child_by_field_name("declarator") {
                Some(inner) => d = inner,
                None => match d.named_child(0) {
                    // C++ reference_declarator has no field name
                    Some(inner) if d.kind() == "reference_declarator" => d = inner,
                    _ => return d,
                },
            },
            _ => return d,
        }
    }
    d
}

/// The `function_declarator` under a declarator, if this declares a function.
fn function_declarator(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..16 {
        match d.kind() {
            "function_declarator" => return Some(d),
            "pointer_declarator" | "reference_declarator" | "attributed_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))?
            }
            _ => return None,
        }
    }
    None
}

/// Name node and, for `Foo::bar`, the qualifier.
fn split_name<'t>(name: Node<'t>, src: &[u8]) -> (Node<'t>, Option<String>) {
    if name.kind() == "qualified_identifier" {
        let scope = name
            .child_by_field_name("scope")
            .map(|s| node_text(s, src).to_string());
        let mut inner = name.child_by_field_name("name").unwrap_or(name);
        while inner.kind() == "qualified_identifier" {
            inner = inner.child_by_field_name("name").unwrap_or(inner);
            if inner.kind() != "qualified_identifier" {
                break;
            }
        }
        // Everything before the last `::` is the container: `a::B::c` → `a::B`.
        let full = node_text(name, src);
        let container = full.rsplit_once("::").map(|(c, _)| c.to_string()).or(scope);
        return (inner, container);
    }
    (name, None)
}

fn doc_anchor<'t>(node: Node<'t>, nav: Nav<'_, 't>) -> Node<'t> {
    match nav.parent(node) {
        Some(p) if p.kind() == "template_declaration" => p,
        _ => node,
    }
}

pub fn classify<'t>(node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
    let in_type = cx.parent.is_some_and(|p| p.is_type_like());
    match node.kind() {
        "function_definition" => {
            let Some(decl) = node.child_by_field_name("declarator") else {
                return Visit::Descend;
            };
            let Some(fd) = function_declarator(decl) else {
                return Visit::Descend;
            };
            let (name, qualifier) = split_name(innermost(fd), cx.src);
            let kind = if qualifier.is_some() || in_type {
                K::Method
            } else {
                K::Function
            };
            let mut def = Def::new(kind, node, name)
                .with_body_field()
                .doc_anchor(doc_anchor(node, cx.nav));
            if let Some(q) = qualifier {
                def = def.container(q);
            }
            Visit::Def(def)
        }
        "declaration" | "field_declaration" => {
            let field = node.kind() == "field_declaration";
            let mut defs = Vec::new();
            let mut cursor = node.walk();
            for d in node.children_by_field_name("declarator", &mut cursor) {
                if let Some(fd) = function_declarator(d) {
                    let (name, qualifier) = split_name(innermost(fd), cx.src);
                    let kind = if field || in_type || qualifier.is_some() {
                        K::Method
                    } else {
                        K::Function
                    };
                    let mut def = Def::new(kind, node, name)
                        .declaration(true)
                        .doc_anchor(doc_anchor(node, cx.nav));
                    if let Some(q) = qualifier {
                        def = def.container(q);
                    }
                    defs.push(def);
                } else if !cx.in_code() {
                    let name = innermost(d);
                    if matches!(name.kind(), "identifier" | "field_identifier") {
                        let kind = if field || in_type {
                            K::Field
                        } else {
                            K::Variable
                        };
                        defs.push(Def::new(kind, node, name));
                    }
                }
            }
            if defs.is_empty() {
                Visit::Descend
            } else {
                Visit::Defs(defs)
            }
        }
        "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
            let (Some(name), Some(_)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("body"),
            ) else {
                return Visit::Descend;
            };
            let kind = match node.kind() {
                "class_specifier" => K::Class,
                "enum_specifier" => K::Enum,
                _ => K::Struct,
            };
            let (name, _) = split_name(name, cx.src);
            Visit::Def(
                Def::new(kind, node, name)
                    .with_body_field()
                    .doc_anchor(doc_anchor(node, cx.nav)),
            )
        }
        "enumerator" => node
            .child_by_field_name("name")
            .map_or(Visit::Descend, |n| {
                Visit::Def(Def::new(K::EnumMember, node, n))
            }),
        "type_definition" => {
            let mut cursor = node.walk();
            let Some(name) = node
                .children_by_field_name("declarator", &mut cursor)
                .map(innermost)
                .find(|n| n.kind() == "type_identifier")
            else {
                return Visit::Descend;
            };
            // `typedef struct { … } Point;` — the anonymous struct is `Point`.
            let ty = node.child_by_field_name("type");
            let anon_body = ty
                .filter(|t| t.child_by_field_name("name").is_none())
                .and_then(|t| t.child_by_field_name("body").map(|b| (t.kind(), b)));
            match anon_body {
                Some((tk, body)) => {
                    let kind = if tk == "enum_specifier" {
                        K::Enum
                    } else {
                        K::Struct
                    };
                    Visit::Def(Def::new(kind, node, name).body(Some(body)))
                }
                None => Visit::Def(Def::new(K::TypeAlias, node, name)),
            }
        }
        "alias_declaration" => node
            .child_by_field_name("name")
            .map_or(Visit::Descend, |n| {
                Visit::Def(Def::new(K::TypeAlias, node, n))
            }),
        "namespace_definition" => match node.child_by_field_name("name") {
            Some(n) => Visit::Def(Def::new(K::Namespace, node, n).with_body_field()),
            None => Visit::Descend,
        },
        "preproc_def" => node
            .child_by_field_name("name")
            .map_or(Visit::Descend, |n| {
                Visit::Def(Def::new(K::Constant, node, n))
            }),
        "preproc_function_def" => node
            .child_by_field_name("name")
            .map_or(Visit::Descend, |n| Visit::Def(Def::new(K::Macro, node, n))),
        "call_expression" => {
            let mut f = node.child_by_field_name("function");
            let callee = loop {
                match f {
                    Some(n) if matches!(n.kind(), "identifier" | "field_identifier") => {
                        break Some(n);
                    }
                    Some(n) if n.kind() == "field_expression" => f = n.child_by_field_name("field"),
                    Some(n) if n.kind() == "qualified_identifier" => {
                        f = n.child_by_field_name("name")
                    }
                    Some(n) if n.kind() == "template_function" => f = n.child_by_field_name("name"),
                    _ => break None,
                }
            };
            callee.map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n)))
        }
        "preproc_include" => {
            let Some(path) = node.child_by_field_name("path") else {
                return Visit::Skip;
            };
            let p = node_text(path, cx.src).trim_matches(|c| matches!(c, '"' | '<' | '>'));
            let stem = p.rsplit('/').next().unwrap_or(p);
            let stem = stem.split('.').next().unwrap_or(stem);
            Visit::Imports(vec![Ref::import(node, stem, p)])
        }
        _ => Visit::Descend,
    }
}
