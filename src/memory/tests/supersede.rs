//! Corrections without an id (ARCHITECTURE.md, Invariants): the table of cases the rule must get right, and
//! the labelled pairs in `eval/corrections/pairs.tsv` on which the threshold was chosen
//! (printed: precision and recall of the lexical similarity at `supersede::THRESHOLD`).

use crate::memory::supersede::{self, THRESHOLD, Target};
use crate::memory::{MemoryKind, NewMemory, Scope, memories};
use crate::store::{Store, projects};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    (dir, store)
}

fn remember(store: &Store, body: &str, scope: Scope) -> i64 {
    store
        .write(|tx| memories::remember(tx, &NewMemory::new(body, MemoryKind::Fact, scope)))
        .unwrap()
        .memory
        .id
}

fn target(store: &Store, body: &str, scope: Scope) -> Target {
    store
        .read(|c| Ok(supersede::find_target(c, scope, body, None)))
        .unwrap()
        .unwrap()
}

fn id(t: &Target) -> Vec<i64> {
    match t {
        Target::Nothing => vec![],
        Target::One(m) => vec![m.id],
        Target::Ambiguous(ms) => ms.iter().map(|m| m.id).collect(),
    }
}

#[test]
fn a_clear_single_target_is_found() {
    let (_d, s) = store();
    let port = remember(&s, "staging listens on port 5433", Scope::Global);
    remember(
        &s,
        "The deploy script lives in ops/deploy.sh",
        Scope::Global,
    );
    remember(
        &s,
        "production listens behind the load balancer",
        Scope::Global,
    );
    let t = target(
        &s,
        "Correction: staging listens on port 5434, not 5433",
        Scope::Global,
    );
    assert!(matches!(t, Target::One(_)), "{t:?}");
    assert_eq!(id(&t), [port]);
}

#[test]
fn two_plausible_targets_supersede_nothing_and_are_both_named() {
    let (_d, s) = store();
    let a = remember(&s, "staging database listens on port 5433", Scope::Global);
    let b = remember(&s, "staging cache listens on port 5433", Scope::Global);
    let t = target(&s, "staging listens on port 5434, not 5433", Scope::Global);
    assert!(matches!(t, Target::Ambiguous(_)), "{t:?}");
    let mut ids = id(&t);
    ids.sort();
    assert_eq!(ids, [a, b]);
}

#[test]
fn unrelated_text_corrects_nothing() {
    let (_d, s) = store();
    remember(&s, "staging listens on port 5433", Scope::Global);
    remember(&s, "The user prefers tabs", Scope::Global);
    let t = target(
        &s,
        "Correction: the release branch is release/next",
        Scope::Global,
    );
    assert_eq!(t, Target::Nothing);
}

#[test]
fn a_memory_of_another_scope_is_never_corrected() {
    let (_d, s) = store();
    let p = s
        .write(|tx| projects::ensure(tx, std::path::Path::new("/p"), "p"))
        .unwrap();
    remember(&s, "staging listens on port 5433", Scope::Project(p));
    let t = target(
        &s,
        "Correction: staging listens on port 5434, not 5433",
        Scope::Global,
    );
    assert_eq!(t, Target::Nothing);
    let t = target(
        &s,
        "Correction: staging listens on port 5434, not 5433",
        Scope::Project(p),
    );
    assert!(matches!(t, Target::One(_)), "{t:?}");
}

#[test]
fn the_threshold_separates_the_labelled_pairs() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("eval/corrections/pairs.tsv"),
    )
    .unwrap();
    let (mut tp, mut fp, mut fneg, mut n) = (0, 0, 0, 0);
    let mut scores = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 3, "{line}");
        let score = supersede::lexical(cols[0], cols[1]);
        let positive = cols[2] == "1";
        scores.push((score, positive));
        n += 1;
        match (score >= THRESHOLD, positive) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fneg += 1,
            _ => {}
        }
    }
    let precision = tp as f32 / (tp + fp).max(1) as f32;
    let recall = tp as f32 / (tp + fneg).max(1) as f32;
    println!(
        "{n} labelled pairs, lexical threshold {THRESHOLD}: precision {precision:.2}, recall {recall:.2}"
    );
    for t in [0.3f32, 0.4, 0.5, 0.6, 0.7, 0.8] {
        let tp = scores.iter().filter(|(s, p)| *s >= t && *p).count();
        let fp = scores.iter().filter(|(s, p)| *s >= t && !*p).count();
        let pos = scores.iter().filter(|(_, p)| *p).count();
        println!(
            "  at {t}: precision {:.2}, recall {:.2}",
            tp as f32 / (tp + fp).max(1) as f32,
            tp as f32 / pos as f32
        );
    }
    // A wrong supersede hides a true memory: precision first.
    assert_eq!(fp, 0, "no unrelated memory may be superseded");
    assert!(recall >= 0.8, "recall {recall}");
}
