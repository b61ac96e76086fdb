//! Java (`.java`) on tree-sitter-java: classes, interfaces, enums and their constants,
//! records, annotation types, methods, constructors and fields; calls, `new` and imports
//! as references.

use crate::index::language::{Cx, Def, Language, Ref, Visit, node_text};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub struct Java;

impl Language for Java {
    fn name(&self) -> &'static str {
        "java"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["java"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_java::LANGUAGE.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        &[
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "enum_constant",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
            "field_declaration",
            "constant_declaration",
            "method_invocation",
            "object_creation_expression",
            "import_declaration",
        ]
    }
    fn opaque(&self) -> &'static [&'static str] {
        &["line_comment", "block_comment", "string_literal"]
    }
    fn comment_kinds(&self) -> &'static [&'static str] {
        &["line_comment", "block_comment"]
    }

    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        let name = node.child_by_field_name("name");
        let def = |kind, n| Def::new(kind, node, n).with_body_field();
        match (node.kind(), name) {
            ("class_declaration", Some(n)) => Visit::Def(def(K::Class, n)),
            ("interface_declaration" | "annotation_type_declaration", Some(n)) => {
                Visit::Def(def(K::Interface, n))
            }
            ("enum_declaration", Some(n)) => Visit::Def(def(K::Enum, n)),
            ("record_declaration", Some(n)) => Visit::Def(def(K::Struct, n)),
            ("enum_constant", Some(n)) => Visit::Def(def(K::EnumMember, n)),
            ("method_declaration", Some(n)) => {
                let d = def(K::Method, n);
                let abstract_ = d.body.is_none();
                Visit::Def(d.declaration(abstract_))
            }
            ("constructor_declaration", Some(n)) => Visit::Def(def(K::Constructor, n)),
            ("field_declaration" | "constant_declaration", _) if !cx.in_code() => {
                let kind = if node.kind() == "constant_declaration" {
                    K::Constant
                } else {
                    K::Field
                };
                let mut cursor = node.walk();
                let defs = node
                    .children_by_field_name("declarator", &mut cursor)
                    .filter_map(|d| d.child_by_field_name("name"))
                    .map(|n| Def::new(kind, node, n))
                    .collect();
                Visit::Defs(defs)
            }
            ("method_invocation", Some(n)) => Visit::Ref(Ref::call(n)),
            ("object_creation_expression", _) => {
                let mut ty = node.child_by_field_name("type");
                while let Some(t) = ty {
                    match t.kind() {
                        "generic_type" => ty = t.named_child(0),
                        "scoped_type_identifier" => {
                            ty = t.named_child(t.named_child_count() as u32 - 1)
                        }
                        _ => break,
                    }
                }
                ty.filter(|t| t.kind() == "type_identifier")
                    .map_or(Visit::Descend, |t| Visit::Ref(Ref::call(t)))
            }
            ("import_declaration", _) => {
                let mut cursor = node.walk();
                let path_node = node
                    .named_children(&mut cursor)
                    .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"));
                let Some(p) = path_node else {
                    return Visit::Skip;
                };
                let wildcard = node
                    .named_children(&mut node.walk())
                    .any(|c| c.kind() == "asterisk");
                let path = node_text(p, cx.src);
                let name = if wildcard {
                    "*"
                } else {
                    path.rsplit('.').next().unwrap_or(path)
                };
                let full = if wildcard {
                    format!("{path}.*")
                } else {
                    path.to_string()
                };
                Visit::Imports(vec![Ref::import(node, name, full)])
            }
            _ => Visit::Descend,
        }
    }
}
