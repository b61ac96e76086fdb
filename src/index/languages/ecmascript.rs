//! What JavaScript, JSX, TypeScript and TSX share: the TypeScript grammars extend the
//! JavaScript one, so one classifier serves all four; TypeScript adds a few kinds.

use crate::index::language::{Cx, Def, Nav, Ref, Visit, node_text};
use crate::index::model::SymbolKind as K;
use tree_sitter::Node;

pub const INTERESTING: &[&str] = &[
    "function_declaration",
    "generator_function_declaration",
    "function_signature",
    "class_declaration",
    "abstract_class_declaration",
    "class",
    "method_definition",
    "method_signature",
    "abstract_method_signature",
    "property_signature",
    "public_field_definition",
    "field_definition",
    "variable_declarator",
    "assignment_expression",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "enum_body",
    "internal_module",
    "module",
    "call_expression",
    "new_expression",
    "import_statement",
];

pub const OPAQUE: &[&str] = &["comment", "string", "regex"];

/// Expressions, and the statements made of them alone (`return`, `throw`), in all four
/// grammars. Inside them a call has `(` (a tagged template its backtick: ``css`…` ``, a
/// constructor call `new`), a class or an object's method has `{`, and so does every
/// declaration, which sits in a block. The exception is [`GUARD_MAY_HIDE`]'s.
pub const GUARDED: &[&str] = &[
    "arguments",
    "array",
    "augmented_assignment_expression",
    "await_expression",
    "binary_expression",
    "formal_parameters",
    "member_expression",
    "pair",
    "parenthesized_expression",
    "return_statement",
    "sequence_expression",
    "spread_element",
    "subscript_expression",
    "ternary_expression",
    "throw_statement",
    "unary_expression",
    "update_expression",
];

/// TypeScript's types and typed expressions: a type holds a signature only in an object
/// type's `{`.
pub const GUARDED_TYPES: &[&str] = &[
    "array_type",
    "as_expression",
    "conditional_type",
    "generic_type",
    "index_type_query",
    "intersection_type",
    "literal_type",
    "lookup_type",
    "non_null_expression",
    "optional_parameter",
    "parenthesized_type",
    "readonly_type",
    "required_parameter",
    "satisfies_expression",
    "tuple_type",
    "type_annotation",
    "type_arguments",
    "type_parameters",
    "type_predicate_annotation",
    "type_query",
    "union_type",
];

/// An element holds code only in `{…}`.
const JSX: &[&str] = &["jsx_element", "jsx_self_closing_element"];

pub const JS_GUARDED: &[&str] = &concat::<{ GUARDED.len() + JSX.len() }>(GUARDED, JSX);
pub const TS_GUARDED: &[&str] =
    &concat::<{ GUARDED.len() + GUARDED_TYPES.len() }>(GUARDED, GUARDED_TYPES);
pub const TSX_GUARDED: &[&str] =
    &concat::<{ JS_GUARDED.len() + GUARDED_TYPES.len() }>(JS_GUARDED, GUARDED_TYPES);

const fn concat<const N: usize>(a: &[&'static str], b: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

pub const TRIGGERS: &[u8] = b"({`";

/// `new Foo` is a call without parentheses.
pub const TRIGGER_WORD: &str = "new";

/// What a skip may hide, and loses: an assignment nested in an expression with no call,
/// block, template or `new` in it. It is a definition only when it assigns an arrow
/// function at the top level, as in `a = (exports.f = x => x)`.
pub const GUARD_MAY_HIDE: &[&str] = &["assignment_expression"];

fn is_function_value(n: &Node<'_>) -> bool {
    matches!(
        n.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// The node whose preceding comments document `node`: the `export` or declaration around it.
fn doc_anchor<'t>(node: Node<'t>, nav: Nav<'_, 't>) -> Node<'t> {
    let mut anchor = node;
    while let Some(p) = nav.parent(anchor) {
        match p.kind() {
            "export_statement"
            | "lexical_declaration"
            | "variable_declaration"
            | "ambient_declaration" => anchor = p,
            _ => break,
        }
    }
    anchor
}

pub fn classify<'t>(node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
    // Calls, the most common kind here, need no lookup of a name field.
    let name = match node.kind() {
        "call_expression" | "new_expression" => None,
        _ => node.child_by_field_name("name"),
    };
    let def = |kind, name: Node<'t>| {
        Def::new(kind, node, name)
            .with_body_field()
            .doc_anchor(doc_anchor(node, cx.nav))
    };
    match (node.kind(), name) {
        ("function_declaration" | "generator_function_declaration", Some(n)) => {
            Visit::Def(def(K::Function, n))
        }
        ("function_signature", Some(n)) => Visit::Def(def(K::Function, n).declaration(true)),
        ("class_declaration" | "abstract_class_declaration" | "class", Some(n)) => {
            Visit::Def(def(K::Class, n))
        }
        ("method_definition", Some(n)) => {
            let kind = if cx.text(n) == "constructor" {
                K::Constructor
            } else {
                K::Method
            };
            Visit::Def(def(kind, n))
        }
        ("method_signature" | "abstract_method_signature", Some(n)) => {
            Visit::Def(def(K::Method, n).declaration(true))
        }
        ("property_signature", Some(n)) => Visit::Def(def(K::Property, n)),
        ("public_field_definition" | "field_definition", _) => {
            let Some(n) = name.or_else(|| node.child_by_field_name("property")) else {
                return Visit::Descend;
            };
            // A class field holding a function is a method for every practical purpose.
            match node.child_by_field_name("value").filter(is_function_value) {
                Some(f) => Visit::Def(def(K::Method, n).body(f.child_by_field_name("body"))),
                None => Visit::Def(def(K::Property, n)),
            }
        }
        ("variable_declarator", Some(n)) if n.kind() == "identifier" => {
            let value = node.child_by_field_name("value");
            // The signature starts at `var`/`let`/`const` of a real declaration. Inside an
            // ERROR node (an edit half done) the parent may span the file up to here: a
            // signature read from it would change with edits far above the symbol, which a
            // splice keeps (index_live's bundle property test found it).
            let decl = cx
                .nav
                .parent(node)
                .filter(|p| matches!(p.kind(), "lexical_declaration" | "variable_declaration"));
            let sig_from = decl.unwrap_or(node);
            match value {
                Some(f) if is_function_value(&f) => Visit::Def(
                    def(K::Function, n)
                        .body(f.child_by_field_name("body"))
                        .sig_start(sig_from),
                ),
                Some(c) if c.kind() == "class" => Visit::Def(
                    def(K::Class, n)
                        .body(c.child_by_field_name("body"))
                        .sig_start(sig_from),
                ),
                _ if cx.in_code() || cx.parent.is_some_and(|p| p.is_type_like()) => Visit::Descend,
                _ => {
                    let is_const = decl
                        .and_then(|d| d.child(0))
                        .is_some_and(|k| k.kind() == "const");
                    let kind = if is_const { K::Constant } else { K::Variable };
                    Visit::Def(def(kind, n).sig_start(sig_from).body(value))
                }
            }
        }
        ("assignment_expression", _) => {
            // `exports.run = function () {}`, `Foo.prototype.bar = () => {}`
            let (Some(left), Some(right)) = (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ) else {
                return Visit::Descend;
            };
            if !is_function_value(&right) {
                return Visit::Descend;
            }
            let target = match left.kind() {
                "identifier" => Some(left),
                "member_expression" => left.child_by_field_name("property"),
                _ => None,
            };
            match target {
                Some(t) if !cx.in_code() => Visit::Def(
                    Def::new(K::Function, node, t)
                        .body(right.child_by_field_name("body"))
                        .doc_anchor(cx.nav.parent(node).unwrap_or(node)),
                ),
                _ => Visit::Descend,
            }
        }
        ("interface_declaration", Some(n)) => Visit::Def(def(K::Interface, n)),
        ("type_alias_declaration", Some(n)) => {
            Visit::Def(def(K::TypeAlias, n).body(node.child_by_field_name("value")))
        }
        ("enum_declaration", Some(n)) => Visit::Def(def(K::Enum, n)),
        ("enum_body", _) => {
            let mut cursor = node.walk();
            let members = node
                .named_children(&mut cursor)
                .filter_map(|m| match m.kind() {
                    "enum_assignment" => m
                        .child_by_field_name("name")
                        .map(|n| Def::new(K::EnumMember, m, n)),
                    "property_identifier" | "string" => Some(Def::new(K::EnumMember, m, m)),
                    _ => None,
                })
                .collect();
            Visit::Defs(members)
        }
        ("internal_module" | "module", Some(n)) => Visit::Def(def(K::Namespace, n)),
        ("call_expression", _) => {
            let Some(f) = node.child_by_field_name("function") else {
                return Visit::Descend;
            };
            if f.kind() == "identifier" && cx.text(f) == "require" {
                return require(node, cx);
            }
            let callee = match f.kind() {
                "identifier" => Some(f),
                "member_expression" => f.child_by_field_name("property"),
                _ => None,
            };
            callee.map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n)))
        }
        ("new_expression", _) => node
            .child_by_field_name("constructor")
            .filter(|c| c.kind() == "identifier")
            .map_or(Visit::Descend, |n| Visit::Ref(Ref::call(n))),
        ("import_statement", _) => import(node, cx),
        _ => Visit::Descend,
    }
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
}

/// The last path segment of a module specifier: `./util/strings` → `strings`.
fn module_stem(path: &str) -> &str {
    let last = path.rsplit('/').next().unwrap_or(path);
    last.split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(last)
}

fn require<'t>(node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
    let arg = node
        .child_by_field_name("arguments")
        .and_then(|a| a.named_child(0))
        .filter(|a| a.kind() == "string");
    match arg {
        Some(a) => {
            let path = unquote(cx.text(a)).to_string();
            let name = module_stem(&path).to_string();
            Visit::Imports(vec![Ref::import(node, name, path)])
        }
        None => Visit::Descend,
    }
}

fn import<'t>(node: Node<'t>, cx: &Cx<'_, 't>) -> Visit<'t> {
    let Some(source) = node.child_by_field_name("source") else {
        return Visit::Skip;
    };
    let path = unquote(cx.text(source)).to_string();
    let mut refs = Vec::new();
    let mut cursor = node.walk();
    let clause = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "import_clause");
    let Some(clause) = clause else {
        let stem = module_stem(&path).to_string();
        refs.push(Ref::import(source, stem, path));
        return Visit::Imports(refs);
    };
    let mut cursor = clause.walk();
    for part in clause.named_children(&mut cursor) {
        match part.kind() {
            "identifier" => refs.push(Ref::import(part, cx.text(part), path.clone())),
            "namespace_import" => {
                if let Some(id) = part.named_child(0) {
                    refs.push(Ref::import(part, cx.text(id), path.clone()));
                }
            }
            "named_imports" => {
                let mut c2 = part.walk();
                for spec in part.named_children(&mut c2) {
                    let Some(name) = spec.child_by_field_name("name") else {
                        continue;
                    };
                    let imported = unquote(node_text(name, cx.src));
                    refs.push(Ref::import(spec, imported, format!("{path}#{imported}")));
                }
            }
            _ => {}
        }
    }
    Visit::Imports(refs)
}
