//! The language registry: adding a language is one file in `languages/` and one line here.

use super::language::Language;
use super::languages;
use std::path::Path;
use std::sync::OnceLock;

static LANGUAGES: &[&dyn Language] = &[
    &languages::rust::Rust,
    &languages::python::Python,
    &languages::typescript::TypeScript,
    &languages::typescript::Tsx,
    &languages::javascript::JavaScript,
    &languages::go::Go,
    &languages::java::Java,
    &languages::c::C,
    &languages::cpp::Cpp,
    &languages::ruby::Ruby,
];

/// A registered language: cheap to copy, compares by identity.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lang(u8);

impl std::fmt::Debug for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the walker does with a node kind, by kind id.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum KindAction {
    Descend,
    Classify,
    Skip,
    /// Walked only when its text holds a trigger byte ([`crate::index::language::Language::guarded`]).
    Guarded,
}

pub(crate) struct LangTables {
    pub grammar: tree_sitter::Language,
    pub actions: Vec<KindAction>,
    /// [`crate::index::language::Language::triggers`], three bytes for `memchr3`.
    pub triggers: Option<[u8; 3]>,
    /// [`crate::index::language::Language::trigger_word`].
    pub trigger_word: Option<memchr::memmem::Finder<'static>>,
}

fn tables() -> &'static [LangTables] {
    static TABLES: OnceLock<Vec<LangTables>> = OnceLock::new();
    TABLES.get_or_init(|| {
        LANGUAGES
            .iter()
            .map(|spec| {
                let grammar = spec.grammar();
                let interesting = spec.interesting();
                let opaque = spec.opaque();
                let guarded = spec.guarded();
                let actions = (0..grammar.node_kind_count() as u16)
                    .map(|id| match grammar.node_kind_for_id(id) {
                        Some(k) if interesting.contains(&k) => KindAction::Classify,
                        Some(k) if opaque.contains(&k) => KindAction::Skip,
                        Some(k) if guarded.contains(&k) => KindAction::Guarded,
                        _ => KindAction::Descend,
                    })
                    .collect();
                let triggers = match spec.triggers() {
                    [] => None,
                    [a] => Some([*a; 3]),
                    [a, b] => Some([*a, *b, *b]),
                    [a, b, c] => Some([*a, *b, *c]),
                    more => panic!(
                        "{}: at most three trigger bytes, not {}",
                        spec.name(),
                        more.len()
                    ),
                };
                assert!(
                    triggers.is_some() || guarded.is_empty(),
                    "{}: guarded kinds need trigger bytes",
                    spec.name()
                );
                LangTables {
                    grammar,
                    actions,
                    triggers,
                    trigger_word: spec.trigger_word().map(memchr::memmem::Finder::new),
                }
            })
            .collect()
    })
}

impl Lang {
    pub fn all() -> impl Iterator<Item = Lang> {
        (0..LANGUAGES.len()).map(|i| Lang(i as u8))
    }
    pub fn spec(self) -> &'static dyn Language {
        LANGUAGES[self.0 as usize]
    }
    pub fn name(self) -> &'static str {
        self.spec().name()
    }
    pub fn by_name(name: &str) -> Option<Lang> {
        Lang::all().find(|l| l.name() == name)
    }
    /// The language for a path, by extension (`.tsx` gets the TSX grammar, `.jsx` the
    /// JavaScript grammar, which parses JSX).
    pub fn for_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        Lang::all().find(|l| {
            l.spec()
                .extensions()
                .iter()
                .any(|e| e.eq_ignore_ascii_case(ext))
        })
    }
    /// The language for an LSP `languageId`, falling back to the path's extension.
    pub fn for_document(language_id: &str, path: &Path) -> Option<Lang> {
        let by_id = match language_id {
            "rust" => Some("rust"),
            "python" => Some("python"),
            "typescript" => Some("typescript"),
            "typescriptreact" => Some("tsx"),
            "javascript" | "javascriptreact" => Some("javascript"),
            "go" => Some("go"),
            "java" => Some("java"),
            "c" => Some("c"),
            "cpp" => Some("cpp"),
            "ruby" => Some("ruby"),
            _ => None,
        };
        by_id
            .and_then(Lang::by_name)
            .or_else(|| Lang::for_path(path))
    }
    pub(crate) fn tables(self) -> &'static LangTables {
        &tables()[self.0 as usize]
    }
    pub fn grammar(self) -> &'static tree_sitter::Language {
        &self.tables().grammar
    }
}
