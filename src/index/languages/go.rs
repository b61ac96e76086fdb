//! Go (`.go`) on tree-sitter-go: functions, methods under their receiver's type, types,
//! consts, vars, fields and interface methods; calls and imports as references.

use crate::index::language::{Cx, Def, Language, Nav, Ref, Visit, node_text};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub struct Go;

impl Language for Go {
    fn name(&self) -> &'static str {
        "go"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["go"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_go::LANGUAGE.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        &[
            "function_declaration",
            "method_declaration",
            "type_spec",
            "type_alias",
            "const_spec",
            "var_spec",
            "field_declaration",
            "method_elem",
            "call_expression",
            "import_declaration",
        ]
    }
    fn opaque(&self) -> &'static [&'static str] {
        &[
            "comment",
            "interpreted_string_literal",
            "raw_string_literal",
        ]
    }
    /// Expressions and types. Inside them only a call (`(`), a function literal (`func(`), a
    /// struct type (`struct{`) or an interface type (`interface{`) holds something recorded;
    /// `var`, `const` and `type` declarations are statements, never guarded.
    fn guarded(&self) -> &'static [&'static str] {
        &[
            "argument_list",
            "array_type",
            "binary_expression",
            "channel_type",
            "composite_literal",
            "expression_list",
            "generic_type",
            "index_expression",
            "keyed_element",
            "literal_element",
            "literal_value",
            "map_type",
            "parameter_declaration",
            "parameter_list",
            "parenthesized_expression",
            "pointer_type",
            "qualified_type",
            "return_statement",
            "selector_expression",
            "slice_expression",
            "slice_type",
            "type_arguments",
            "type_assertion_expression",
            "type_conversion_expression",
            "unary_expression",
        ]
    }
    fn triggers(&self) -> &'static [u8] {
        b"({"
    }

    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        // Calls, the most common kind here, have no name field: no lookup by field name
        // (a scan of the grammar's field names) for them.
        let name = match node.kind() {
            "call_expression" | "import_declaration" | "field_declaration" => None,
            _ => node.child_by_field_name("name"),
        };
        match (node.kind(), name) {
            ("function_declaration", Some(n)) => {
                Visit::Def(Def::new(K::Function, node, n).with_body_field())
            }
            ("method_declaration", Some(n)) => {
                let def = Def::new(K::Method, node, n).with_body_field();
                match receiver_type(node, cx.src) {
                    Some(recv) => Visit::Def(def.container(recv)),
                    None => Visit::Def(def),
                }
            }
            ("type_spec" | "type_alias", Some(n)) => {
                let ty = node.child_by_field_name("type");
                let kind = match ty.map(|t| t.kind()) {
                    _ if node.kind() == "type_alias" => K::TypeAlias,
                    Some("struct_type") => K::Struct,
                    Some("interface_type") => K::Interface,
                    _ => K::TypeAlias,
                };
                // The body of `type T struct {…}` is the field list after `struct`.
                let body = ty
                    .and_then(|t| t.named_child(0))
                    .filter(|b| matches!(b.kind(), "field_declaration_list"))
                    .or_else(|| ty.filter(|t| t.kind() == "interface_type"));
                let mut def = Def::new(kind, node, n).body(body);
                if let Some(anchor) = sole_spec_parent(node, cx.nav) {
                    def = def.doc_anchor(anchor);
                }
                Visit::Def(def)
            }
            ("const_spec" | "var_spec", Some(_)) if !cx.in_code() => {
                let kind = if node.kind() == "const_spec" {
                    K::Constant
                } else {
                    K::Variable
                };
                let anchor = sole_spec_parent(node, cx.nav);
                let mut cursor = node.walk();
                let defs = node
                    .children_by_field_name("name", &mut cursor)
                    .filter(|n| n.kind() == "identifier")
                    .map(|n| {
                        let d = Def::new(kind, node, n);
                        match anchor {
                            Some(a) => d.doc_anchor(a),
                            None => d,
                        }
                    })
                    .collect();
                Visit::Defs(defs)
            }
            ("field_declaration", _) if cx.parent == Some(K::Struct) => {
                let mut cursor = node.walk();
                let defs = node
                    .children_by_field_name("name", &mut cursor)
                    .map(|n| Def::new(K::Field, node, n))
                    .collect();
                Visit::Defs(defs)
            }
            ("method_elem", Some(n)) => Visit::Def(Def::new(K::Method, node, n).declaration(true)),
            ("call_expression", _) => {
                let callee = node
                    .child_by_field_name("function")
                    .and_then(|f| match f.kind() {
                        "identifier" => Some(f),
                        "selector_expression" => f.child_by_field_name("field"),
                        _ => None,
                    });
                callee.map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n)))
            }
            ("import_declaration", _) => {
                let mut refs = Vec::new();
                collect_imports(node, cx.src, &mut refs);
                Visit::Imports(refs)
            }
            _ => Visit::Descend,
        }
    }
}

/// For `type T …` / `const C = …` outside a group, the comment sits above the keyword.
fn sole_spec_parent<'t>(spec: Node<'t>, nav: Nav<'_, 't>) -> Option<Node<'t>> {
    nav.parent(spec).filter(|p| {
        matches!(
            p.kind(),
            "type_declaration" | "const_declaration" | "var_declaration"
        ) && p.named_child_count() == 1
    })
}

/// `func (s *Server[T]) Start()` → `Server`.
fn receiver_type(method: Node<'_>, src: &[u8]) -> Option<String> {
    let recv = method.child_by_field_name("receiver")?;
    let param = recv.named_child(0)?;
    let mut ty = param.child_by_field_name("type")?;
    loop {
        match ty.kind() {
            "pointer_type" => ty = ty.named_child(0)?,
            "generic_type" => ty = ty.child_by_field_name("type")?,
            "type_identifier" => return Some(node_text(ty, src).to_string()),
            _ => return None,
        }
    }
}

fn collect_imports<'t>(node: Node<'t>, src: &[u8], out: &mut Vec<Ref<'t>>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "import_spec" => {
                let Some(path) = child.child_by_field_name("path") else {
                    continue;
                };
                let path = node_text(path, src).trim_matches(|c| c == '"' || c == '`');
                let name = match child.child_by_field_name("name") {
                    Some(n) if n.kind() == "package_identifier" => node_text(n, src),
                    _ => path.rsplit('/').next().unwrap_or(path),
                };
                out.push(Ref::import(child, name, path));
            }
            "import_spec_list" => collect_imports(child, src, out),
            _ => {}
        }
    }
}
