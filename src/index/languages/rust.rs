//! Rust (`.rs`) on tree-sitter-rust: items, `impl` members under their type, `///` docs,
//! calls and `use` trees as references, names joined with `::`.

use crate::index::language::{Cx, Def, Language, Ref, Visit, node_text};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub struct Rust;

impl Language for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["rs"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_rust::LANGUAGE.into()
    }
    fn separator(&self) -> &'static str {
        "::"
    }
    fn interesting(&self) -> &'static [&'static str] {
        &[
            "function_item",
            "function_signature_item",
            "struct_item",
            "union_item",
            "enum_item",
            "enum_variant",
            "trait_item",
            "impl_item",
            "type_item",
            "mod_item",
            "macro_definition",
            "const_item",
            "static_item",
            "field_declaration",
            "call_expression",
            "macro_invocation",
            "use_declaration",
        ]
    }
    fn opaque(&self) -> &'static [&'static str] {
        &[
            "line_comment",
            "block_comment",
            "string_literal",
            "raw_string_literal",
            "attribute_item",
            "inner_attribute_item",
            // A macro's arguments are tokens, never parsed into items or calls.
            "token_tree",
        ]
    }
    /// Expressions, types and patterns, and the statements made of them alone (`let`, an
    /// expression followed by `;`, a match arm). Inside them an item or a `use` sits in a
    /// block (`{`), a call has `(` and a macro `!`; a unit `struct S;` alone has none, but it
    /// is an item, never inside these without a block around it.
    fn guarded(&self) -> &'static [&'static str] {
        &[
            "arguments",
            "array_expression",
            "assignment_expression",
            "compound_assignment_expr",
            "array_type",
            "binary_expression",
            "expression_statement",
            "field_expression",
            "field_initializer",
            "generic_type",
            "index_expression",
            "let_declaration",
            "match_arm",
            "or_pattern",
            "parameter",
            "parameters",
            "parenthesized_expression",
            "pointer_type",
            "range_expression",
            "reference_expression",
            "reference_type",
            "return_expression",
            "scoped_identifier",
            "scoped_type_identifier",
            "tuple_expression",
            "tuple_pattern",
            "tuple_struct_pattern",
            "tuple_type",
            "type_arguments",
            "type_cast_expression",
            "unary_expression",
        ]
    }
    fn triggers(&self) -> &'static [u8] {
        b"({!"
    }
    fn comment_kinds(&self) -> &'static [&'static str] {
        &["line_comment", "block_comment"]
    }
    fn doc_transparent(&self) -> &'static [&'static str] {
        &["attribute_item"]
    }
    fn is_doc_comment(&self, text: &str) -> bool {
        (text.starts_with("///") && !text.starts_with("////"))
            || (text.starts_with("/**") && !text.starts_with("/***"))
    }

    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        let named = |kind| match node.child_by_field_name("name") {
            Some(name) => Visit::Def(Def::new(kind, node, name).with_body_field()),
            None => Visit::Descend,
        };
        match node.kind() {
            "function_item" => named(match cx.parent {
                Some(K::Impl | K::Interface) => K::Method,
                _ => K::Function,
            }),
            "function_signature_item" => match node.child_by_field_name("name") {
                Some(name) => Visit::Def(Def::new(K::Method, node, name).declaration(true)),
                None => Visit::Descend,
            },
            "struct_item" | "union_item" => named(K::Struct),
            "enum_item" => named(K::Enum),
            "enum_variant" => named(K::EnumMember),
            "trait_item" => named(K::Interface),
            "type_item" => named(K::TypeAlias),
            "mod_item" => named(K::Module),
            "macro_definition" => named(K::Macro),
            "const_item" | "static_item" if !cx.in_code() => named(K::Constant),
            "field_declaration" if matches!(cx.parent, Some(K::Struct | K::EnumMember)) => {
                named(K::Field)
            }
            "impl_item" => impl_item(node, cx),
            "call_expression" => node
                .child_by_field_name("function")
                .and_then(callee)
                .map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n))),
            "macro_invocation" => node
                .child_by_field_name("macro")
                .and_then(callee)
                .map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n))),
            "use_declaration" => {
                let mut refs = Vec::new();
                if let Some(arg) = node.child_by_field_name("argument") {
                    use_tree(arg, "", cx.src, &mut refs);
                }
                Visit::Imports(refs)
            }
            _ => Visit::Descend,
        }
    }
}

/// `impl Trait for Type` is named that way in outlines; its members' container is `Type`.
fn impl_item<'t>(node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
    let Some(ty) = node.child_by_field_name("type") else {
        return Visit::Descend;
    };
    let type_text = cx.text(ty);
    let name = match node.child_by_field_name("trait") {
        Some(tr) => format!("impl {} for {type_text}", cx.text(tr)),
        None => format!("impl {type_text}"),
    };
    let qual = cx.text(base_type(ty)).to_string();
    Visit::Def(
        Def::new(K::Impl, node, ty)
            .name_text(name)
            .qual(qual)
            .with_body_field(),
    )
}

/// `Vec<T>` → `Vec`, `a::B` → `B`, `&mut T` → `T`.
fn base_type(ty: Node<'_>) -> Node<'_> {
    match ty.kind() {
        "generic_type" => ty.child_by_field_name("type").map_or(ty, base_type),
        "scoped_type_identifier" => ty.child_by_field_name("name").unwrap_or(ty),
        "reference_type" | "pointer_type" => ty.child_by_field_name("type").map_or(ty, base_type),
        _ => ty,
    }
}

/// The name node of a call's callee: `f`, `x.f`, `a::f`, `f::<T>`.
fn callee(f: Node<'_>) -> Option<Node<'_>> {
    match f.kind() {
        "identifier" | "field_identifier" => Some(f),
        "field_expression" => f.child_by_field_name("field"),
        "scoped_identifier" => f.child_by_field_name("name"),
        "generic_function" => f.child_by_field_name("function").and_then(callee),
        _ => None,
    }
}

fn use_tree<'t>(node: Node<'t>, prefix: &str, src: &[u8], out: &mut Vec<Ref<'t>>) {
    let text = node_text(node, src);
    match node.kind() {
        "identifier" | "self" | "crate" | "super" | "scoped_identifier" | "use_wildcard" => {
            let path = format!("{prefix}{text}");
            let name = path.rsplit("::").next().unwrap_or(&path).to_string();
            let name = if name == "self" {
                prefix
                    .trim_end_matches("::")
                    .rsplit("::")
                    .next()
                    .unwrap_or("")
                    .to_string()
            } else {
                name
            };
            out.push(Ref::import(node, name, path));
        }
        "use_as_clause" => {
            if let (Some(path), Some(alias)) = (
                node.child_by_field_name("path"),
                node.child_by_field_name("alias"),
            ) {
                let full = format!("{prefix}{}", node_text(path, src));
                out.push(Ref::import(node, node_text(alias, src), full));
            }
        }
        "scoped_use_list" => {
            let inner = match node.child_by_field_name("path") {
                Some(p) => format!("{prefix}{}::", node_text(p, src)),
                None => prefix.to_string(),
            };
            if let Some(list) = node.child_by_field_name("list") {
                use_tree(list, &inner, src, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                use_tree(child, prefix, src, out);
            }
        }
        _ => {}
    }
}
