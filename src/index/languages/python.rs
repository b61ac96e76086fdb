//! Python (`.py`, `.pyi`, `.pyw`) on tree-sitter-python: functions, classes and
//! assignments; docstrings (else `#` comments above) as docs; imports as references.

use crate::index::language::{Cx, Def, Language, Nav, Ref, Visit, node_text, preceding_comments};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub struct Python;

impl Language for Python {
    fn name(&self) -> &'static str {
        "python"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["py", "pyi", "pyw"]
    }
    fn grammar(&self) -> tree_sitter::Language {
        tree_sitter_python::LANGUAGE.into()
    }
    fn interesting(&self) -> &'static [&'static str] {
        &[
            "function_definition",
            "class_definition",
            "assignment",
            "call",
            "import_statement",
            "import_from_statement",
        ]
    }
    fn opaque(&self) -> &'static [&'static str] {
        &["comment", "string", "concatenated_string"]
    }
    /// Expressions. Definitions, assignments and imports are statements, so inside these
    /// only a call, written with `(`, is recorded.
    fn guarded(&self) -> &'static [&'static str] {
        &[
            "argument_list",
            "assert_statement",
            "attribute",
            "await",
            "binary_operator",
            "boolean_operator",
            "comparison_operator",
            "conditional_expression",
            "default_parameter",
            "dictionary",
            "dictionary_comprehension",
            "dotted_name",
            "expression_list",
            "generator_expression",
            "keyword_argument",
            "lambda",
            "list",
            "list_comprehension",
            "not_operator",
            "pair",
            "parameters",
            "parenthesized_expression",
            "return_statement",
            "set",
            "set_comprehension",
            "slice",
            "subscript",
            "tuple",
            "type",
            "typed_default_parameter",
            "typed_parameter",
            "unary_operator",
        ]
    }
    fn triggers(&self) -> &'static [u8] {
        b"("
    }

    fn classify<'t>(&self, node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
        match node.kind() {
            "function_definition" | "class_definition" => {
                let Some(name) = node.child_by_field_name("name") else {
                    return Visit::Descend;
                };
                let kind = match (node.kind(), cx.parent) {
                    ("class_definition", _) => K::Class,
                    (_, Some(K::Class)) if cx.text(name) == "__init__" => K::Constructor,
                    (_, Some(K::Class)) => K::Method,
                    _ => K::Function,
                };
                // Decorators belong to the definition's full range; the signature starts at `def`.
                let full = cx
                    .nav
                    .parent(node)
                    .filter(|p| p.kind() == "decorated_definition")
                    .unwrap_or(node);
                Visit::Def(
                    Def::new(kind, full, name)
                        .sig_start(node)
                        .body(node.child_by_field_name("body")),
                )
            }
            "assignment" if !cx.in_code() => {
                let in_class = cx.parent == Some(K::Class);
                let Some(left) = node.child_by_field_name("left") else {
                    return Visit::Descend;
                };
                let kind_for = |name: Node<'_>| {
                    let text = node_text(name, cx.src);
                    if in_class {
                        K::Property
                    } else if text
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
                    {
                        K::Constant
                    } else {
                        K::Variable
                    }
                };
                match left.kind() {
                    "identifier" => Visit::Def(Def::new(kind_for(left), node, left)),
                    "pattern_list" | "tuple_pattern" => {
                        let mut cursor = left.walk();
                        let defs = left
                            .named_children(&mut cursor)
                            .filter(|n| n.kind() == "identifier")
                            .map(|n| Def::new(kind_for(n), node, n))
                            .collect();
                        Visit::Defs(defs)
                    }
                    _ => Visit::Descend,
                }
            }
            "call" => {
                let callee = node
                    .child_by_field_name("function")
                    .and_then(|f| match f.kind() {
                        "identifier" => Some(f),
                        "attribute" => f.child_by_field_name("attribute"),
                        _ => None,
                    });
                callee.map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n)))
            }
            "import_statement" => {
                let mut refs = Vec::new();
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    import_name(name, "", cx.src, &mut refs);
                }
                Visit::Imports(refs)
            }
            "import_from_statement" => {
                let module = node
                    .child_by_field_name("module_name")
                    .map(|m| format!("{}.", node_text(m, cx.src)))
                    .unwrap_or_default();
                let mut refs = Vec::new();
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    import_name(name, &module, cx.src, &mut refs);
                }
                Visit::Imports(refs)
            }
            _ => Visit::Descend,
        }
    }

    /// The docstring, else the `#` comments above the definition.
    fn doc<'t>(&self, def: &Def<'t>, src: &[u8], nav: Nav<'_, 't>) -> Option<String> {
        def.body
            .and_then(|body| body.named_child(0))
            .filter(|stmt| stmt.kind() == "expression_statement")
            .and_then(|stmt| stmt.named_child(0))
            .filter(|s| s.kind() == "string")
            .map(|s| docstring(node_text(s, src)))
            .filter(|d| !d.is_empty())
            .or_else(|| preceding_comments(def.node, src, nav, &["comment"], &[], &|_| true))
    }
}

fn import_name<'t>(name: Node<'t>, module: &str, src: &[u8], out: &mut Vec<Ref<'t>>) {
    match name.kind() {
        "dotted_name" => {
            let text = node_text(name, src);
            // `import a.b` binds `a`; `from m import a` binds `a`.
            let bound = if module.is_empty() {
                text.split('.').next().unwrap_or(text)
            } else {
                text.rsplit('.').next().unwrap_or(text)
            };
            out.push(Ref::import(name, bound, format!("{module}{text}")));
        }
        "aliased_import" => {
            if let (Some(n), Some(alias)) = (
                name.child_by_field_name("name"),
                name.child_by_field_name("alias"),
            ) {
                let path = format!("{module}{}", node_text(n, src));
                out.push(Ref::import(name, node_text(alias, src), path));
            }
        }
        _ => {}
    }
}

/// Strips quotes and prefixes from a docstring literal and dedents it.
fn docstring(lit: &str) -> String {
    let body = lit.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B', 'f', 'F']);
    let body = ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find_map(|q| body.strip_prefix(q).and_then(|b| b.strip_suffix(q)))
        .unwrap_or(body);
    let lines: Vec<&str> = body.lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        out.push(if i == 0 {
            l.trim()
        } else if l.len() >= indent {
            l.get(indent..).unwrap_or(l).trim_end()
        } else {
            l.trim()
        });
    }
    out.join("\n").trim().to_string()
}
