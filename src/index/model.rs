//! What the index knows about a file: symbols and references, with byte spans and points.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The kinds of symbol the index distinguishes. Each maps onto one LSP `SymbolKind`
/// (see [`SymbolKind::lsp_number`]); the extra kinds (impl, macro, type alias) keep
/// information the CLI and ranking can use.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Module,
    Namespace,
    Class,
    Struct,
    Interface,
    Enum,
    EnumMember,
    Impl,
    Function,
    Method,
    Constructor,
    Field,
    Property,
    Variable,
    Constant,
    TypeAlias,
    Macro,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 17] = [
        Self::Module,
        Self::Namespace,
        Self::Class,
        Self::Struct,
        Self::Interface,
        Self::Enum,
        Self::EnumMember,
        Self::Impl,
        Self::Function,
        Self::Method,
        Self::Constructor,
        Self::Field,
        Self::Property,
        Self::Variable,
        Self::Constant,
        Self::TypeAlias,
        Self::Macro,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Module => "module",
            Self::Namespace => "namespace",
            Self::Class => "class",
            Self::Struct => "struct",
            Self::Interface => "interface",
            Self::Enum => "enum",
            Self::EnumMember => "enum_member",
            Self::Impl => "impl",
            Self::Function => "function",
            Self::Method => "method",
            Self::Constructor => "constructor",
            Self::Field => "field",
            Self::Property => "property",
            Self::Variable => "variable",
            Self::Constant => "constant",
            Self::TypeAlias => "type_alias",
            Self::Macro => "macro",
        }
    }

    /// The LSP `SymbolKind` number (LSP 3.17 §SymbolKind).
    pub fn lsp_number(self) -> u32 {
        match self {
            Self::Module => 2,
            Self::Namespace => 3,
            Self::Class => 5,
            Self::Method => 6,
            Self::Property => 7,
            Self::Field => 8,
            Self::Constructor => 9,
            Self::Enum => 10,
            Self::Interface => 11,
            Self::Function | Self::Macro => 12,
            Self::Variable => 13,
            Self::Constant => 14,
            Self::Impl => 19, // Object: what rust-analyzer shows for impl blocks
            Self::EnumMember => 22,
            Self::Struct => 23,
            Self::TypeAlias => 26, // TypeParameter, as rust-analyzer does for aliases
        }
    }

    /// Kinds that hold other symbols and whose children are members (methods, fields).
    pub fn is_type_like(self) -> bool {
        matches!(
            self,
            Self::Class | Self::Struct | Self::Interface | Self::Enum | Self::Impl
        )
    }

    /// Kinds whose body is code: references inside them have them as caller, and local
    /// variables inside them are not symbols.
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            Self::Function | Self::Method | Self::Constructor | Self::Macro
        )
    }
}

impl fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown symbol kind `{0}` (expected one of: {list})", list = SymbolKind::ALL.map(|k| k.as_str()).join(", "))]
pub struct UnknownKind(pub String);

/// Through [`FromStr`], so the model's tools accept what `mira symbols --kind` does (any case,
/// `-` for `_`) and get the same error.
impl<'de> serde::Deserialize<'de> for SymbolKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for SymbolKind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == norm)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// A position as tree-sitter reports it: zero-based row and byte column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Point {
    pub row: u32,
    pub col: u32,
}

impl From<tree_sitter::Point> for Point {
    fn from(p: tree_sitter::Point) -> Self {
        Point {
            row: p.row as u32,
            col: p.column as u32,
        }
    }
}

/// A half-open byte range with its start and end points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    pub start_byte: u32,
    pub end_byte: u32,
    pub start: Point,
    pub end: Point,
}

impl Span {
    pub fn of(node: &tree_sitter::Node) -> Span {
        Span {
            start_byte: node.start_byte() as u32,
            end_byte: node.end_byte() as u32,
            start: node.start_position().into(),
            end: node.end_position().into(),
        }
    }

    /// From the start of `a` to the end of `b`.
    pub fn join(a: &tree_sitter::Node, b: &tree_sitter::Node) -> Span {
        Span {
            start_byte: a.start_byte() as u32,
            end_byte: b.end_byte() as u32,
            start: a.start_position().into(),
            end: b.end_position().into(),
        }
    }

    pub fn contains_byte(&self, byte: u32) -> bool {
        self.start_byte <= byte && byte <= self.end_byte
    }

    /// Moves the end of a span that encloses an edit by that edit's delta.
    pub(crate) fn shift_end(&mut self, edit: &tree_sitter::InputEdit) {
        shift_point(&mut self.end, &mut self.end_byte, edit);
    }

    /// Moves a span that lies wholly after an edit by that edit's delta.
    pub(crate) fn shift(&mut self, edit: &tree_sitter::InputEdit) {
        shift_point(&mut self.start, &mut self.start_byte, edit);
        shift_point(&mut self.end, &mut self.end_byte, edit);
    }
}

/// Moves a point at or after an edit's old end by the edit's delta.
fn shift_point(p: &mut Point, byte: &mut u32, edit: &tree_sitter::InputEdit) {
    let old_end = edit.old_end_position;
    let new_end = edit.new_end_position;
    *byte = (*byte as i64 + edit.new_end_byte as i64 - edit.old_end_byte as i64) as u32;
    if p.row as usize == old_end.row {
        p.col = (new_end.column + (p.col as usize).saturating_sub(old_end.column)) as u32;
    }
    p.row = (p.row as i64 + new_end.row as i64 - old_end.row as i64) as u32;
}

/// One definition found in a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// Qualified name of the enclosing symbol (`Outer::Inner`, `pkg.Class`), if any.
    pub container: Option<String>,
    /// Index of the enclosing symbol in the same file's list (document order, parents first).
    pub parent: Option<u32>,
    pub range: Span,
    pub selection: Span,
    pub signature: String,
    pub doc: Option<String>,
    /// A declaration without a body (C/C++ prototypes, TS overload signatures).
    pub declaration: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    Call,
    Import,
}

impl RefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Call => "call",
            Self::Import => "import",
        }
    }
    pub fn from_db(s: &str) -> Option<Self> {
        match s {
            "call" => Some(Self::Call),
            "import" => Some(Self::Import),
            _ => None,
        }
    }
}

/// A use of a name: a call (with the enclosing symbol as caller) or an import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reference {
    pub kind: RefKind,
    /// The called or imported name (last path segment).
    pub name: String,
    /// For imports: the whole imported path as written (`std::collections::HashMap`, `./util`).
    pub path: Option<String>,
    pub span: Span,
    /// Index of the innermost enclosing symbol in the file's symbol list.
    pub caller: Option<u32>,
}

/// Everything extracted from one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FileSymbols {
    pub symbols: Vec<Symbol>,
    pub refs: Vec<Reference>,
}

impl FileSymbols {
    /// Compacts a file's symbols for the long-lived index: one call reference per caller
    /// and callee name (the first site, which is all callers and callees are shown by; the
    /// database keeps the same), and no spare vector capacity. A crawled project's table
    /// lives as long as the server, so this is most of `mira lsp`'s memory.
    pub fn compact(&mut self) {
        // Which to keep, decided over borrowed names (no copy of each one).
        let keep: Vec<bool> = {
            let mut seen = std::collections::HashSet::new();
            self.refs
                .iter()
                .map(|r| r.kind != RefKind::Call || seen.insert((r.caller, r.name.as_str())))
                .collect()
        };
        let mut keep = keep.into_iter();
        self.refs.retain(|_| keep.next().unwrap_or(true));
        self.refs.shrink_to_fit();
        self.symbols.shrink_to_fit();
    }

    /// The qualified name of symbol `i` (`container` + separator + name).
    pub fn qualified_name(&self, i: usize, sep: &str) -> String {
        let s = &self.symbols[i];
        match &s.container {
            Some(c) => format!("{c}{sep}{}", s.name),
            None => s.name.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SymbolKind;

    /// The model's `find_symbol` takes the spellings `mira symbols --kind` does.
    #[test]
    fn a_kind_deserialises_as_it_parses() {
        for (text, kind) in [
            ("function", SymbolKind::Function),
            ("Function", SymbolKind::Function),
            ("type-alias", SymbolKind::TypeAlias),
            ("enum_member", SymbolKind::EnumMember),
        ] {
            assert_eq!(
                serde_json::from_value::<SymbolKind>(text.into()).unwrap(),
                kind
            );
        }
        let err = serde_json::from_value::<SymbolKind>("gadget".into()).unwrap_err();
        assert!(
            err.to_string().starts_with("unknown symbol kind `gadget`"),
            "{err}"
        );
    }
}
