//! The memory library against a real SQLite file: dedup, supersession, retraction, scope,
//! anchors, goals/tasks, recall (BM25 and vectors) and bad input.

use crate::memory::anchors::{self, Anchor};
use crate::memory::goals::{self, GoalStatus, GoalUpdate, Priority, TaskStatus, TaskUpdate};
use crate::memory::memories::{self, MAX_BODY_BYTES};
use crate::memory::recall::{self, RecallQuery, RecallWeights};
use crate::memory::vectors;
use crate::memory::{ListFilter, MemoryError, MemoryKind, NewMemory, Outcome, Scope, Status};
use crate::store::{Store, projects};
use std::path::Path;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    (dir, store)
}

fn project(store: &Store, root: &str) -> i64 {
    store
        .read(|c| projects::ensure(c, Path::new(root), root))
        .unwrap()
}

fn remember(store: &Store, text: &str, kind: MemoryKind, scope: Scope) -> (Outcome, i64) {
    let r = store
        .write(|tx| memories::remember(tx, &NewMemory::new(text, kind, scope)))
        .unwrap();
    (r.outcome, r.memory.id)
}

fn recall_ids(store: &Store, query: &str, project: Option<i64>) -> Vec<i64> {
    store
        .read(|c| {
            Ok(recall::recall(
                c,
                &RecallQuery {
                    text: query,
                    project,
                    limit: 10,
                },
                None,
                &RecallWeights::default(),
            ))
        })
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|h| h.memory.id)
        .collect()
}

fn count(store: &Store, table: &str) -> i64 {
    store
        .read(|c| c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)))
        .unwrap()
}

#[test]
fn repeat_bumps_the_counter_instead_of_duplicating() {
    let (_d, store) = store();
    let (o1, id1) = remember(
        &store,
        "We use tabs for indentation.",
        MemoryKind::Preference,
        Scope::Global,
    );
    let (o2, id2) = remember(
        &store,
        "  we use TABS for   indentation",
        MemoryKind::Fact,
        Scope::Global,
    );
    assert_eq!((o1, o2), (Outcome::Created, Outcome::Repeated));
    assert_eq!(id1, id2);
    let m = store.read(|c| Ok(memories::get(c, id1))).unwrap().unwrap();
    assert_eq!(m.seen_count, 2);
    assert_eq!(m.kind, MemoryKind::Preference, "the first kind is kept");
    assert_eq!(count(&store, "memories"), 1);

    // the same text in a project is a different memory (different scope)
    let p = project(&store, "/p1");
    let (o3, id3) = remember(
        &store,
        "we use tabs for indentation",
        MemoryKind::Fact,
        Scope::Project(p),
    );
    assert_eq!(o3, Outcome::Created);
    assert_ne!(id3, id1);
}

#[test]
fn a_correction_supersedes_and_the_old_fact_never_surfaces() {
    let (_d, store) = store();
    let (_, old) = remember(
        &store,
        "The staging database runs on port 5432",
        MemoryKind::Fact,
        Scope::Global,
    );
    let new = store
        .write(|tx| memories::correct(tx, old, "The staging database runs on port 6543"))
        .unwrap();
    assert_eq!(new.kind, MemoryKind::Correction);
    assert_eq!(new.supersedes, Some(old));

    let old_m = store.read(|c| Ok(memories::get(c, old))).unwrap().unwrap();
    assert_eq!(old_m.status, Status::Superseded);
    assert_eq!(old_m.superseded_by, Some(new.id));
    assert!(old_m.valid_to.is_some(), "validity closed");
    assert_eq!(
        old_m.body, "The staging database runs on port 5432",
        "kept verbatim"
    );

    for q in [
        "staging database port",
        "5432",
        "which port does staging use",
    ] {
        let ids = recall_ids(&store, q, None);
        assert!(
            !ids.contains(&old),
            "{q}: superseded memory surfaced: {ids:?}"
        );
    }
    assert_eq!(recall_ids(&store, "staging database port", None), [new.id]);

    let listed = store
        .read(|c| {
            Ok(memories::list(
                c,
                &ListFilter {
                    limit: 10,
                    ..Default::default()
                },
            ))
        })
        .unwrap()
        .unwrap();
    assert_eq!(listed.iter().map(|m| m.id).collect::<Vec<_>>(), [new.id]);
    let audit = store
        .read(|c| {
            Ok(memories::list(
                c,
                &ListFilter {
                    limit: 10,
                    include_inactive: true,
                    ..Default::default()
                },
            ))
        })
        .unwrap()
        .unwrap();
    assert_eq!(audit.len(), 2);

    // correcting the superseded one again points at its correction; nothing is written
    let err = store
        .write(|tx| memories::correct(tx, old, "port 7000"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("corrected by memory {}", new.id)),
        "{err}"
    );
    assert_eq!(count(&store, "memories"), 2);
}

#[test]
fn correction_to_an_already_known_text_reuses_that_memory() {
    let (_d, store) = store();
    let (_, wrong) = remember(
        &store,
        "deploys happen on Fridays",
        MemoryKind::Fact,
        Scope::Global,
    );
    let (_, right) = remember(
        &store,
        "deploys happen on Tuesdays",
        MemoryKind::Fact,
        Scope::Global,
    );
    let c = store
        .write(|tx| memories::correct(tx, wrong, "Deploys happen on Tuesdays."))
        .unwrap();
    assert_eq!(c.id, right);
    assert_eq!(count(&store, "memories"), 2);
    assert_eq!(recall_ids(&store, "deploys", None), [right]);
}

#[test]
fn forget_retracts_and_restore_brings_it_back() {
    let (_d, store) = store();
    let (_, id) = remember(
        &store,
        "Alice owns the billing service",
        MemoryKind::Fact,
        Scope::Global,
    );
    assert_eq!(recall_ids(&store, "billing", None), [id]);

    let m = store.write(|tx| memories::forget(tx, id)).unwrap();
    assert_eq!(m.status, Status::Retracted);
    assert!(recall_ids(&store, "billing", None).is_empty());
    assert_eq!(count(&store, "memories"), 1, "kept, not deleted");

    let again = store.write(|tx| memories::forget(tx, id)).unwrap_err();
    assert!(again.to_string().contains("already forgotten"), "{again}");

    store.write(|tx| memories::restore(tx, id)).unwrap();
    assert_eq!(recall_ids(&store, "billing", None), [id]);

    // remembering the text again while retracted creates a new memory; restoring the old one
    // would then duplicate it and is refused
    store.write(|tx| memories::forget(tx, id)).unwrap();
    let (_, id2) = remember(
        &store,
        "Alice owns the billing service",
        MemoryKind::Fact,
        Scope::Global,
    );
    assert_ne!(id, id2);
    let err = store.write(|tx| memories::restore(tx, id)).unwrap_err();
    assert!(
        matches!(err, MemoryError::DuplicateActive { existing, .. } if existing == id2),
        "{err}"
    );
}

#[test]
fn project_memories_stay_in_their_project() {
    let (_d, store) = store();
    let a = project(&store, "/work/a");
    let b = project(&store, "/work/b");
    let (_, in_a) = remember(
        &store,
        "the cache layer uses redis",
        MemoryKind::Fact,
        Scope::Project(a),
    );
    let (_, in_b) = remember(
        &store,
        "the cache layer uses memcached",
        MemoryKind::Fact,
        Scope::Project(b),
    );
    let (_, global) = remember(
        &store,
        "prefer small cache layer modules",
        MemoryKind::Preference,
        Scope::Global,
    );

    let from_a = recall_ids(&store, "cache layer", Some(a));
    assert!(
        from_a.contains(&in_a) && from_a.contains(&global) && !from_a.contains(&in_b),
        "{from_a:?}"
    );
    let from_b = recall_ids(&store, "cache layer", Some(b));
    assert!(
        from_b.contains(&in_b) && from_b.contains(&global) && !from_b.contains(&in_a),
        "{from_b:?}"
    );
    assert_eq!(recall_ids(&store, "cache layer", None), [global]);

    let listed_a = store
        .read(|c| {
            Ok(memories::list(
                c,
                &ListFilter {
                    project: Some(a),
                    limit: 50,
                    ..Default::default()
                },
            ))
        })
        .unwrap()
        .unwrap();
    assert_eq!(listed_a.len(), 2);
}

#[test]
fn anchored_memories_go_stale_when_their_symbol_changes() {
    let (_d, store) = store();
    let p = project(&store, "/repo");
    let mut new = NewMemory::new(
        "parse_config must stay allocation-free",
        MemoryKind::Decision,
        Scope::Project(p),
    );
    new.anchors.push(Anchor {
        path: "src/config.rs".into(),
        symbol: "parse_config".into(),
        content_hash: "h1".into(),
    });
    let id = store
        .write(|tx| memories::remember(tx, &new))
        .unwrap()
        .memory
        .id;
    let stale = |store: &Store| {
        store
            .read(|c| Ok(memories::get(c, id)))
            .unwrap()
            .unwrap()
            .stale
    };
    assert!(!stale(&store));

    // same hash: fresh; other symbols in the file are none of its business
    let n = store
        .write(|tx| {
            anchors::observe_file(
                tx,
                p,
                "src/config.rs",
                &[("parse_config", "h1"), ("other", "x")],
            )
        })
        .unwrap();
    assert_eq!(n, 0);
    assert!(!stale(&store));

    // body changed
    assert_eq!(
        store
            .write(|tx| anchors::observe_symbol(tx, p, "src/config.rs", "parse_config", Some("h2")))
            .unwrap(),
        1
    );
    assert!(stale(&store));
    let hits = store
        .read(|c| {
            Ok(recall::recall(
                c,
                &RecallQuery {
                    text: "parse_config",
                    project: Some(p),
                    limit: 5,
                },
                None,
                &RecallWeights::default(),
            ))
        })
        .unwrap()
        .unwrap();
    assert!(hits[0].memory.stale, "recall shows the flag");

    // changed back: fresh again
    store
        .write(|tx| anchors::observe_symbol(tx, p, "src/config.rs", "parse_config", Some("h1")))
        .unwrap();
    assert!(!stale(&store));

    // symbol removed from the file
    store
        .write(|tx| anchors::observe_file(tx, p, "src/config.rs", &[("other", "x")]))
        .unwrap();
    assert!(stale(&store));
    let states = store
        .read(|c| Ok(anchors::of_memory(c, id)))
        .unwrap()
        .unwrap();
    assert!(states[0].gone);

    // another project's identical path is unaffected
    let q = project(&store, "/other");
    assert_eq!(
        store
            .write(|tx| anchors::observe_symbol(tx, q, "src/config.rs", "parse_config", None))
            .unwrap(),
        0
    );

    // anchoring needs a project
    let mut global = NewMemory::new("x", MemoryKind::Fact, Scope::Global);
    global.anchors = new.anchors.clone();
    assert!(store.write(|tx| memories::remember(tx, &global)).is_err());
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let (_d, store) = store();
    let (_, id) = remember(&store, "something real", MemoryKind::Fact, Scope::Global);
    let before = count(&store, "memories");

    for text in ["", "   \n\t "] {
        let err = store
            .write(|tx| {
                memories::remember(tx, &NewMemory::new(text, MemoryKind::Fact, Scope::Global))
            })
            .unwrap_err();
        assert!(matches!(err, MemoryError::Empty), "{err}");
    }
    let huge = "x".repeat(1024 * 1024);
    let err = store
        .write(|tx| memories::remember(tx, &NewMemory::new(huge, MemoryKind::Fact, Scope::Global)))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("at most {MAX_BODY_BYTES} bytes")),
        "{err}"
    );

    let err = "opinion".parse::<MemoryKind>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown memory kind `opinion`; use one of: fact, preference, decision, correction"
    );
    assert_eq!(
        "Decision".parse::<MemoryKind>().unwrap(),
        MemoryKind::Decision
    );

    let missing = id + 1000;
    for r in [
        store.write(|tx| memories::forget(tx, missing)),
        store.write(|tx| memories::restore(tx, missing)),
        store.write(|tx| memories::correct(tx, missing, "new text")),
    ] {
        let err = r.unwrap_err();
        assert!(
            matches!(err, MemoryError::NotFound(n) if n == missing),
            "{err}"
        );
        assert!(err.to_string().contains("`mira memories` lists them"));
    }
    let err = store.write(|tx| memories::correct(tx, id, "")).unwrap_err();
    assert!(matches!(err, MemoryError::Empty));
    assert_eq!(count(&store, "memories"), before);
    let m = store.read(|c| Ok(memories::get(c, id))).unwrap().unwrap();
    assert_eq!((m.status, m.seen_count), (Status::Active, 1));
}

#[test]
fn identifier_queries_find_camel_and_snake_case() {
    let (_d, store) = store();
    let (_, a) = remember(
        &store,
        "Retries go through RetryPolicy::backoffDelay with jitter",
        MemoryKind::Fact,
        Scope::Global,
    );
    let (_, b) = remember(
        &store,
        "Use spawn_blocking for SQLite calls from async code",
        MemoryKind::Decision,
        Scope::Global,
    );
    let (_, _c) = remember(
        &store,
        "The release checklist lives in docs/RELEASE.md",
        MemoryKind::Fact,
        Scope::Global,
    );
    assert_eq!(recall_ids(&store, "backoff delay", None)[0], a);
    assert_eq!(recall_ids(&store, "backoffDelay", None)[0], a);
    assert_eq!(recall_ids(&store, "retry_policy", None)[0], a);
    assert_eq!(recall_ids(&store, "spawnBlocking", None)[0], b);
    assert_eq!(recall_ids(&store, "spawn_blocking", None)[0], b);
    // punctuation-heavy input never becomes an FTS5 syntax error
    for q in ["NOT", "a-b:c*", "(\"", "OR AND", "what?"] {
        store
            .read(|c| Ok(recall::bm25_ids(c, q, None, 10)))
            .unwrap()
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
}

#[test]
fn vector_recall_respects_status_and_scope_and_fuses_with_bm25() {
    let (_d, store) = store();
    let p = project(&store, "/v");
    let q = project(&store, "/w");
    let (_, cats) = remember(
        &store,
        "felines purr when content",
        MemoryKind::Fact,
        Scope::Global,
    );
    let (_, dogs) = remember(
        &store,
        "canines wag their tails",
        MemoryKind::Fact,
        Scope::Global,
    );
    let (_, other_proj) = remember(
        &store,
        "kittens are young felines",
        MemoryKind::Fact,
        Scope::Project(q),
    );
    let (_, retracted) = remember(
        &store,
        "lions are big felines",
        MemoryKind::Fact,
        Scope::Global,
    );
    store.write(|tx| memories::forget(tx, retracted)).unwrap();

    let space = store
        .write(|tx| vectors::register(tx, "test:toy", 3))
        .unwrap();
    assert_eq!(
        store
            .read(|c| Ok(vectors::pending_count(c, &space)))
            .unwrap()
            .unwrap(),
        3
    );
    let vecs = [
        (cats, [1.0, 0.0, 0.0]),
        (dogs, [0.0, 1.0, 0.0]),
        (other_proj, [0.9, 0.1, 0.0]),
    ];
    store
        .write(|tx| {
            for (id, v) in &vecs {
                let body = memories::get(tx, *id)?.body;
                vectors::store(tx, &space, *id, &body, v)?;
            }
            Ok::<_, MemoryError>(())
        })
        .unwrap();
    assert_eq!(
        store
            .read(|c| Ok(vectors::pending_count(c, &space)))
            .unwrap()
            .unwrap(),
        0
    );
    // same model, same dim: same space; a different dimension is refused
    assert_eq!(
        store
            .write(|tx| vectors::register(tx, "test:toy", 3))
            .unwrap(),
        space
    );
    assert!(
        store
            .write(|tx| vectors::register(tx, "test:toy", 4))
            .is_err()
    );

    let query = [1.0f32, 0.05, 0.0];
    let near = store
        .read(|c| Ok(vectors::nearest_ids(c, &space, &query, Some(p), 10)))
        .unwrap()
        .unwrap();
    assert_eq!(near, [cats, dogs], "other project and retracted excluded");

    // "cat" shares no word with any memory: BM25 finds nothing, vectors carry the recall
    let hits = store
        .read(|c| {
            Ok(recall::recall(
                c,
                &RecallQuery {
                    text: "cat",
                    project: Some(p),
                    limit: 5,
                },
                Some(recall::QueryVector {
                    space: &space,
                    vector: &query,
                }),
                &RecallWeights::default(),
            ))
        })
        .unwrap()
        .unwrap();
    assert_eq!(hits[0].memory.id, cats);
    assert_eq!((hits[0].bm25_rank, hits[0].vector_rank), (None, Some(1)));

    // re-storing is idempotent (vec0 has no upsert: delete + insert)
    store
        .write(|tx| {
            vectors::store(
                tx,
                &space,
                cats,
                "felines purr when content",
                &[1.0, 0.0, 0.0],
            )
        })
        .unwrap();
    let cached = store
        .read(|c| Ok(vectors::pending(c, &space, 10)))
        .unwrap()
        .unwrap();
    assert!(cached.is_empty());
}

#[test]
fn goals_milestones_and_tasks() {
    let (_d, store) = store();
    let p = project(&store, "/g");
    let g = store
        .write(|tx| {
            goals::add_goal(
                tx,
                Scope::Project(p),
                "Ship memory",
                "recall + eval",
                Priority::High,
            )
        })
        .unwrap();
    assert_eq!((g.status, g.progress), (GoalStatus::Active, 0));
    let g = store
        .write(|tx| goals::add_milestone(tx, g.id, "schema"))
        .unwrap();
    let g = store
        .write(|tx| goals::add_milestone(tx, g.id, "recall"))
        .unwrap();
    let g = store
        .write(|tx| goals::set_milestone_done(tx, g.milestones[0].id, true))
        .unwrap();
    assert_eq!(g.progress, 50);
    let t = store
        .write(|tx| {
            goals::add_task(
                tx,
                Scope::Project(p),
                "write eval set",
                Priority::Urgent,
                Some(g.id),
            )
        })
        .unwrap();
    let t2 = store
        .write(|tx| goals::add_task(tx, Scope::Global, "read the paper", Priority::Low, None))
        .unwrap();
    let open = store
        .read(|c| Ok(goals::list_tasks(c, Some(p), None, false)))
        .unwrap()
        .unwrap();
    assert_eq!(
        open.iter().map(|t| t.id).collect::<Vec<_>>(),
        [t.id, t2.id],
        "urgent first"
    );
    let done = store
        .write(|tx| {
            goals::update_task(
                tx,
                t.id,
                &TaskUpdate {
                    status: Some(TaskStatus::Done),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    assert_eq!(done.status, TaskStatus::Done);
    let open = store
        .read(|c| Ok(goals::list_tasks(c, None, None, false)))
        .unwrap()
        .unwrap();
    assert_eq!(
        open.iter().map(|t| t.id).collect::<Vec<_>>(),
        [t2.id],
        "project task hidden outside"
    );

    let g = store
        .write(|tx| {
            goals::update_goal(
                tx,
                g.id,
                &GoalUpdate {
                    status: Some(GoalStatus::Done),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    assert_eq!(g.progress, 100);
    assert!(
        store
            .read(|c| Ok(goals::list_goals(c, Some(p), false)))
            .unwrap()
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .read(|c| Ok(goals::list_goals(c, Some(p), true)))
            .unwrap()
            .unwrap()
            .len(),
        1
    );

    // bad input
    assert!(
        store
            .write(|tx| goals::add_goal(tx, Scope::Global, " ", "", Priority::Normal))
            .is_err()
    );
    assert!(
        store
            .write(|tx| goals::add_task(tx, Scope::Global, "x", Priority::Normal, Some(999)))
            .is_err()
    );
    assert!(
        store
            .write(|tx| goals::update_goal(
                tx,
                g.id,
                &GoalUpdate {
                    progress: Some(101),
                    ..Default::default()
                }
            ))
            .is_err()
    );
    assert!(
        "someday"
            .parse::<TaskStatus>()
            .unwrap_err()
            .to_string()
            .contains("todo, doing, done, cancelled")
    );
    assert_eq!(count(&store, "tasks"), 2);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(100))]
    /// Whatever the user types, recall answers (never an FTS5 syntax error) and remember
    /// either stores it or refuses it cleanly.
    #[test]
    fn any_text_is_safe_to_remember_and_recall(text in "\\PC{0,60}", query in "\\PC{0,40}") {
        let (_d, store) = store();
        let r = store.write(|tx| memories::remember(tx, &NewMemory::new(text.clone(), MemoryKind::Fact, Scope::Global)));
        match r {
            Ok(m) => proptest::prop_assert_eq!(m.memory.body, text.trim()),
            Err(e) => proptest::prop_assert!(matches!(e, MemoryError::Empty), "{}", e),
        }
        store
            .read(|c| Ok(recall::recall(c, &RecallQuery { text: &query, project: None, limit: 5 }, None, &RecallWeights::default())))
            .unwrap()
            .unwrap();
    }
}

#[test]
fn secrets_are_redacted_before_they_are_stored() {
    let (dir, store) = store();
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let (_, id) = remember(
        &store,
        &format!("the staging key is {secret}, keep it handy"),
        MemoryKind::Fact,
        Scope::Global,
    );
    let corrected = store
        .write(|tx| memories::correct(tx, id, &format!("the staging key is now {secret}X")))
        .unwrap();
    assert!(
        corrected.body.contains("[REDACTED:api-key]"),
        "{}",
        corrected.body
    );
    let body: String = store
        .read(|c| {
            c.query_row("SELECT body FROM memories WHERE id = ?1", [id], |r| {
                r.get(0)
            })
        })
        .unwrap();
    assert_eq!(body, "the staging key is [REDACTED:api-key], keep it handy");
    drop(store);
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(f.unwrap().path()).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the key reached a database file"
        );
    }
}

#[test]
fn standing_memories_are_the_active_ones_of_the_kinds_asked_in_scope_newest_first() {
    let (_d, store) = store();
    let here = project(&store, "/tmp/standing-here");
    let there = project(&store, "/tmp/standing-there");
    let (_, global_pref) = remember(
        &store,
        "Always answer in French",
        MemoryKind::Preference,
        Scope::Global,
    );
    let (_, fact) = remember(
        &store,
        "Alice owns billing",
        MemoryKind::Fact,
        Scope::Global,
    );
    let (_, forgotten) = remember(
        &store,
        "Use tabs everywhere",
        MemoryKind::Preference,
        Scope::Project(here),
    );
    store.write(|tx| memories::forget(tx, forgotten)).unwrap();
    let (_, elsewhere) = remember(
        &store,
        "Staging listens on 5434",
        MemoryKind::Correction,
        Scope::Project(there),
    );
    let (_, correction) = remember(
        &store,
        "The deploy script is deploy.sh, not ship.sh",
        MemoryKind::Correction,
        Scope::Project(here),
    );
    let kinds = [MemoryKind::Correction, MemoryKind::Preference];
    let ids = |project, limit| -> Vec<i64> {
        store
            .read(|c| Ok(memories::active_of_kinds(c, project, &kinds, limit)))
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect()
    };
    assert_eq!(ids(Some(here), 10), [correction, global_pref]);
    assert_eq!(ids(Some(there), 10), [elsewhere, global_pref]);
    assert_eq!(ids(None, 10), [global_pref]);
    assert_eq!(ids(Some(here), 1), [correction]);
    assert!(!ids(Some(here), 10).contains(&fact));
}

fn recall_with(store: &Store, query: &str, weights: RecallWeights) -> Vec<i64> {
    store
        .read(|c| {
            Ok(recall::recall(
                c,
                &RecallQuery {
                    text: query,
                    project: None,
                    limit: 10,
                },
                None,
                &weights,
            ))
        })
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|h| h.memory.id)
        .collect()
}

/// A conversation stored turn by turn, as `mira remember "Name: text"` does.
fn conversation(store: &Store, turns: &[&str]) -> Vec<i64> {
    turns
        .iter()
        .map(|t| remember(store, t, MemoryKind::Fact, Scope::Global).1)
        .collect()
}

#[test]
fn a_question_that_names_a_speaker_ranks_that_speakers_turn_first() {
    let (_d, store) = store();
    let ids = conversation(
        &store,
        &[
            "Caroline: We adopted a pet last month; adopting a pet from the shelter was our best pet decision",
            "Melanie: Haha yes",
            "Melanie: That sounds lovely",
            "Caroline: Thanks, see you Sunday",
            "Melanie: Luna is the kitten I adopted",
            "Melanie: See you soon",
            "Melanie: Talk later",
            "Caroline: Bye for now",
        ],
    );
    let (caroline_pet, melanie_kitten) = (ids[0], ids[4]);
    let q = "What pet did Melanie adopt?";
    // on words alone, Caroline's turn says "pet" and "adopt" more often
    let words_only = RecallWeights {
        speaker: 0.0,
        ..RecallWeights::default()
    };
    assert_eq!(recall_with(&store, q, words_only)[0], caroline_pet);
    // the question names Melanie: her turn comes first, Caroline's is still recalled
    let hits = recall_with(&store, q, RecallWeights::default());
    assert_eq!(hits[0], melanie_kitten, "{hits:?}");
    assert!(hits.contains(&caroline_pet));
    // a name nobody speaks under is an ordinary word
    let named: Vec<String> = store
        .read(|c| {
            Ok(recall::named_speakers(
                c,
                "Did Melanie meet Luna or Sunday?",
                None,
            ))
        })
        .unwrap()
        .unwrap();
    assert_eq!(named, ["melanie"]);
}

#[test]
fn a_memory_that_says_something_outranks_a_bare_mention() {
    let (_d, store) = store();
    let ids = conversation(
        &store,
        &[
            "Caroline: Dogs!",
            "Melanie: I took both dogs to the beach this morning and they ran for an hour",
        ],
    );
    let bare = RecallWeights {
        length: 0.0,
        ..RecallWeights::default()
    };
    // BM25 alone prefers the short text (length normalisation)
    assert_eq!(recall_with(&store, "dogs", bare)[0], ids[0]);
    assert_eq!(
        recall_with(&store, "dogs", RecallWeights::default())[0],
        ids[1]
    );
}

#[test]
fn with_neighbour_weight_an_answer_inherits_the_question_asked_before_it() {
    let (_d, store) = store();
    // the question's subject comes after the 400 characters a neighbour lends to `context`,
    // so only the neighbour term can find the answer
    let preamble = "so much happened this week at work and at home, ".repeat(10);
    let question = format!("Melanie: {preamble}did you ever find that apartment near the river?");
    let ids = conversation(
        &store,
        &[
            "Caroline: The weather was nice",
            &question,
            "Caroline: Yes! We signed the lease on Friday",
            "Melanie: Congratulations",
        ],
    );
    let (asked, answer) = (ids[1], ids[2]);
    let q = "apartment near the river";
    let off = recall_with(&store, q, RecallWeights::default());
    assert_eq!(off, [asked], "words alone find only the question");
    let on = recall_with(
        &store,
        q,
        RecallWeights {
            neighbour: 0.5,
            ..RecallWeights::default()
        },
    );
    assert_eq!(on[0], asked, "{on:?}");
    assert!(on[1..].contains(&answer), "{on:?}");
}

#[test]
fn a_when_question_prefers_the_memory_that_says_when() {
    let (_d, store) = store();
    let ids = conversation(
        &store,
        &[
            "Caroline: I moved to Lisbon, and the food in Lisbon is the best thing about Lisbon",
            "Caroline: I moved to Lisbon two weeks ago",
        ],
    );
    let q = "When did Caroline move to Lisbon?";
    let timeless = RecallWeights {
        temporal: 0.0,
        ..RecallWeights::default()
    };
    assert_eq!(recall_with(&store, q, timeless)[0], ids[0]);
    assert_eq!(recall_with(&store, q, RecallWeights::default())[0], ids[1]);
    // a question that does not ask when is left alone
    assert_eq!(
        recall_with(
            &store,
            "Why did Caroline move to Lisbon?",
            RecallWeights::default()
        )[0],
        ids[0]
    );
}
