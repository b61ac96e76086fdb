//! Code's abbreviations: a question says "configuration", the code says `config` or `cfg`.
//! Code search adds the other spellings of a query word as alternatives to it (never as
//! words the match requires), in both directions: `cfg` in a query finds `configuration`.
//!
//! The table is curated, not learned: a learned word → identifier bridge measured worse than
//! none (docs/benchmarks.md). Only pairs a programmer reads as the same word are here; words
//! that stem alike under FTS5's porter tokenizer (`args`/`arg`) need no entry.

/// Each row: a word and the spellings code uses for it.
const TABLE: &[(&str, &[&str])] = &[
    ("address", &["addr"]),
    ("allocate", &["alloc"]),
    ("allocation", &["alloc"]),
    ("argument", &["arg"]),
    ("asynchronous", &["async"]),
    ("attribute", &["attr"]),
    ("authentication", &["auth"]),
    ("boolean", &["bool"]),
    ("buffer", &["buf"]),
    ("calculate", &["calc"]),
    ("capacity", &["cap"]),
    ("certificate", &["cert"]),
    ("character", &["char"]),
    ("column", &["col"]),
    ("command", &["cmd"]),
    ("configuration", &["config", "cfg", "conf"]),
    ("connection", &["conn"]),
    ("context", &["ctx"]),
    ("count", &["cnt"]),
    ("current", &["cur", "curr"]),
    ("database", &["db"]),
    ("description", &["desc"]),
    ("destination", &["dst", "dest"]),
    ("dictionary", &["dict"]),
    ("directory", &["dir"]),
    ("document", &["doc"]),
    ("element", &["elem"]),
    ("environment", &["env"]),
    ("error", &["err"]),
    ("execute", &["exec"]),
    ("expression", &["expr"]),
    ("extension", &["ext"]),
    ("format", &["fmt"]),
    ("function", &["func", "fn"]),
    ("generate", &["gen"]),
    ("identifier", &["ident"]),
    ("implementation", &["impl"]),
    ("index", &["idx"]),
    ("information", &["info"]),
    ("initialize", &["init"]),
    ("initialise", &["init"]),
    ("integer", &["int"]),
    ("iterator", &["iter"]),
    ("length", &["len"]),
    ("library", &["lib"]),
    ("manager", &["mgr"]),
    ("maximum", &["max"]),
    ("memory", &["mem"]),
    ("message", &["msg"]),
    ("milliseconds", &["millis", "ms"]),
    ("minimum", &["min"]),
    ("number", &["num"]),
    ("object", &["obj"]),
    ("operation", &["op"]),
    ("option", &["opt"]),
    ("package", &["pkg"]),
    ("parameter", &["param"]),
    ("password", &["pwd"]),
    ("pointer", &["ptr"]),
    ("position", &["pos"]),
    ("previous", &["prev"]),
    ("process", &["proc"]),
    ("receive", &["recv"]),
    ("reference", &["ref"]),
    ("repository", &["repo"]),
    ("request", &["req"]),
    ("response", &["resp"]),
    ("sequence", &["seq"]),
    ("signature", &["sig"]),
    ("source", &["src"]),
    ("specification", &["spec"]),
    ("statement", &["stmt"]),
    ("statistics", &["stats"]),
    ("string", &["str"]),
    ("synchronize", &["sync"]),
    ("synchronous", &["sync"]),
    ("system", &["sys"]),
    ("temporary", &["tmp", "temp"]),
    ("transaction", &["txn"]),
    ("utility", &["util"]),
    ("value", &["val"]),
    ("variable", &["var"]),
];

/// The other spellings of `word` (lower-case): its abbreviations, or for an abbreviation the
/// word and its other abbreviations. A plural (`buffers`) is looked up as its singular.
pub fn alternatives(word: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for key in [Some(word), word.strip_suffix('s')].into_iter().flatten() {
        for (full, short) in TABLE {
            if *full == key {
                out.extend(short.iter().copied());
            } else if short.contains(&key) {
                out.push(full);
                out.extend(short.iter().copied().filter(|s| *s != key));
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out.retain(|w| *w != word);
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_gets_its_abbreviations_and_an_abbreviation_its_word() {
        let table: &[(&str, &[&str])] = &[
            ("configuration", &["config", "cfg", "conf"]),
            ("configurations", &["config", "cfg", "conf"]),
            ("cfg", &["configuration", "config", "conf"]),
            ("buffers", &["buf"]),
            ("sync", &["synchronize", "synchronous"]),
            ("parse", &[]),
            ("s", &[]),
            ("", &[]),
        ];
        for (word, want) in table {
            assert_eq!(&alternatives(word), want, "{word}");
        }
    }

    #[test]
    fn every_row_is_lower_case_and_says_something_new() {
        for (full, short) in TABLE {
            assert!(!short.is_empty(), "{full}");
            for w in std::iter::once(full).chain(short.iter()) {
                assert_eq!(*w, w.to_lowercase(), "{w}");
                assert!(w.chars().all(|c| c.is_ascii_alphabetic()), "{w}");
            }
            assert!(!short.contains(full), "{full}");
        }
    }
}
