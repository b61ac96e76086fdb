//! The symbol a turn is about ("Ask Mira about this symbol", explain, fix, edit): its
//! definition, neighbours in the call graph and the memories anchored to it. The editor
//! surface fills it from the live index and the memory store; context assembly renders it as
//! its own section with its own budget.

use crate::index::Related;

/// A memory anchored to the symbol in focus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchoredNote {
    pub id: i64,
    pub body: String,
    /// The symbol's code changed since the memory was written.
    pub stale: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SymbolFocus {
    /// Qualified name.
    pub name: String,
    pub kind: String,
    /// Root-relative path of the definition.
    pub path: String,
    /// 1-based line of the definition.
    pub line: u32,
    pub language: Option<String>,
    pub signature: String,
    pub doc: Option<String>,
    pub code: String,
    pub callers: Vec<Related>,
    pub callees: Vec<Related>,
    pub memories: Vec<AnchoredNote>,
}

impl SymbolFocus {
    pub fn render(&self) -> String {
        let mut s = format!(
            "`{}` ({}) defined at {}:{}\n",
            self.name, self.kind, self.path, self.line
        );
        if !self.signature.is_empty() {
            s.push_str(&format!("Signature: `{}`\n", self.signature));
        }
        if let Some(doc) = self.doc.as_deref().filter(|d| !d.trim().is_empty()) {
            s.push_str(&format!("Doc: {}\n", doc.trim()));
        }
        let lang = self.language.as_deref().unwrap_or("");
        s.push_str(&format!(
            "Definition:\n```{lang}\n{}\n```\n",
            self.code.trim_end()
        ));
        list(&mut s, "Callers", &self.callers);
        list(&mut s, "Calls", &self.callees);
        if !self.memories.is_empty() {
            s.push_str("Mira remembers about it:\n");
            for m in &self.memories {
                let stale = if m.stale {
                    " [stale: the code changed since]"
                } else {
                    ""
                };
                s.push_str(&format!("- #{} {}{stale}\n", m.id, m.body.trim()));
            }
        }
        s
    }
}

fn list(s: &mut String, title: &str, items: &[Related]) {
    if items.is_empty() {
        s.push_str(&format!("{title}: none found in the index\n"));
        return;
    }
    s.push_str(&format!("{title}:\n"));
    for r in items {
        let sig = if r.signature.is_empty() {
            String::new()
        } else {
            format!(" — `{}`", r.signature)
        };
        s.push_str(&format!("- `{}` at {}:{}{sig}\n", r.name, r.path, r.line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_definition_neighbours_and_stale_memories() {
        let f = SymbolFocus {
            name: "util::parse_port".into(),
            kind: "function".into(),
            path: "src/util.rs".into(),
            line: 3,
            language: Some("rust".into()),
            signature: "fn parse_port(s: &str) -> u16".into(),
            doc: Some("Parses a port.".into()),
            code: "fn parse_port(s: &str) -> u16 { s.parse().unwrap() }".into(),
            callers: vec![Related {
                name: "main".into(),
                path: "src/main.rs".into(),
                line: 9,
                signature: "fn main()".into(),
            }],
            callees: vec![],
            memories: vec![AnchoredNote {
                id: 4,
                body: "ports below 1024 need root".into(),
                stale: true,
            }],
        };
        let r = f.render();
        assert!(r.contains("`util::parse_port` (function) defined at src/util.rs:3"));
        assert!(r.contains("```rust\nfn parse_port"));
        assert!(r.contains("- `main` at src/main.rs:9 — `fn main()`"));
        assert!(r.contains("Calls: none found"));
        assert!(r.contains("#4 ports below 1024 need root [stale"));
    }
}
