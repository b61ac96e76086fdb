//! The C libraries' allocator: tree-sitter and SQLite allocate through mimalloc, as the Rust
//! side of the binary does. glibc's `malloc`/`free` were 6 % of a cold index's CPU (parse
//! trees and parse stacks are many small blocks freed soon), and preloading mimalloc under the
//! whole process cut the index's CPU by that much.
//!
//! tree-sitter allocates from a mimalloc heap of its own ([`TS_HEAP`]), so parse trees never
//! share pages with the symbols extracted from them. That needs mimalloc 3, whose heaps any
//! thread may allocate from: `install_unless_system` checks `mi_version()` and installs nothing
//! on an older one.
//!
//! Invariant: installed once, before the process's first tree-sitter or SQLite call, and
//! never changed: every tree-sitter block is freed through `ts_current_free` and every SQLite
//! block through its `xFree`, so each library frees only what its own functions allocated. A
//! grammar's external scanner allocates and frees its own state with its own functions.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

// mimalloc's C API, linked in by `libmimalloc-sys` (the `mimalloc` crate's own).
unsafe extern "C" {
    fn mi_malloc(size: usize) -> *mut c_void;
    fn mi_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn mi_heap_new() -> *mut c_void;
    fn mi_version() -> c_int;
    fn mi_heap_malloc(heap: *mut c_void, size: usize) -> *mut c_void;
    fn mi_heap_calloc(heap: *mut c_void, count: usize, size: usize) -> *mut c_void;
    fn mi_heap_realloc(heap: *mut c_void, p: *mut c_void, size: usize) -> *mut c_void;
    fn mi_free(p: *mut c_void);
    fn mi_usable_size(p: *const c_void) -> usize;
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> std::ffi::c_long;
    fn mi_option_set(option: c_int, value: std::ffi::c_long);
    #[cfg(test)]
    fn mi_heap_contains(heap: *const c_void, p: *const c_void) -> bool;
}

/// `mi_option_purge_delay` in `mimalloc.h` (15 in mimalloc 2 and 3; the crate exports no
/// constant for it; a test reads mimalloc 3's default, 1,000 ms, through this index).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// Index threads above which an emptied page goes back to the OS at once.
const PURGE_AT_ONCE_ABOVE: usize = 4;

/// On many cores, mimalloc gives each emptied page back to the OS at once instead of after a
/// second (mimalloc 3's default). Every thread that allocates holds pages of its own, so the
/// cold index's peak memory grew with its threads: 16 threads on 1.13M lines peaked at
/// 227 MB where 2 threads peaked at 157; purging at once brought 16 threads to 186 MB (10 ms:
/// 197, 100 ms: 220). The `madvise` calls cost CPU that many cores can spare and two cannot,
/// so 2–4 threads keep the default. `threads` is the parse pool's
/// ([`crate::index::crawl::start_parse_pool`]).
pub fn purge_at_once_on_many_threads(threads: usize) {
    // A user's own setting wins.
    if threads > PURGE_AT_ONCE_ABOVE && std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: options are plain integers mimalloc reads at each purge.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
}

/// Routes tree-sitter's and SQLite's allocations to mimalloc, unless `MIRA_ALLOCATOR=system`
/// keeps glibc everywhere (valgrind cannot see inside mimalloc's heaps). Returns whether it did.
///
/// # Safety
/// Call once, first thing in `main`, before any thread starts and before any tree-sitter
/// object exists or any SQLite call is made (tree-sitter's own rule for `ts_set_allocator`;
/// SQLite refuses `SQLITE_CONFIG_MALLOC` after `sqlite3_initialize`, which debug builds assert).
pub unsafe fn install_unless_system() -> bool {
    if std::env::var_os("MIRA_ALLOCATOR").is_some_and(|v| v == "system") {
        return false;
    }
    // Only mimalloc 3's heaps may be shared by threads (a 2.x heap belongs to the thread
    // that made it): linked against 2.x, e.g. through a `v2` feature elsewhere in the
    // dependency graph, tree-sitter would corrupt it, so it is not installed at all.
    // SAFETY: `mi_version` and `mi_heap_new` have no preconditions; the heap is never deleted.
    if unsafe { mi_version() } < MI_SHARED_HEAPS {
        return false;
    }
    let heap = unsafe { mi_heap_new() };
    if heap.is_null() {
        return false;
    }
    TS_HEAP.store(heap, Ordering::Relaxed);
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: ts_malloc,
            calloc: ts_calloc,
            realloc: ts_realloc,
            free: mi_free,
        }))
    };
    // SQLite copies the methods; the struct need not outlive the call.
    let methods = sqlite_methods();
    let rc = unsafe {
        rusqlite::ffi::sqlite3_config(
            rusqlite::ffi::SQLITE_CONFIG_MALLOC,
            &methods as *const rusqlite::ffi::sqlite3_mem_methods,
        )
    };
    debug_assert_eq!(
        rc,
        rusqlite::ffi::SQLITE_OK,
        "SQLite was initialized before main"
    );
    true
}

/// tree-sitter's own mimalloc heap (mimalloc 3's heaps are first-class: any thread allocates
/// from one through a thread-local view, and `mi_free` frees its blocks from any thread). Set
/// once by [`install_unless_system`], before any tree exists, and never deleted.
///
/// Why a heap of its own: parse trees and parse stacks are short-lived blocks freed on the
/// thread that parsed, while the symbols extracted between parse and free live on. Sharing
/// pages with them, a tree's blocks landed on fragmented pages and fresh ones: in the cold
/// index (12.7k files, 2 threads) tree-sitter's parse cost 10.8–11.4 s of CPU against 9.3 s
/// on a heap of its own (the parse-only floor: 9.0 s), its frees 0.9 s against 0.6 s, and
/// the extract walk 3.5–3.7 s against 3.0–3.2 s.
/// The first mimalloc whose heaps every thread may allocate from (`mi_version()`: 3.0.0).
const MI_SHARED_HEAPS: c_int = 300;

static TS_HEAP: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

fn ts_heap() -> *mut c_void {
    TS_HEAP.load(Ordering::Relaxed)
}

/// tree-sitter requires a non-null block for every non-zero request; its default allocator
/// aborts on exhaustion, and so do these.
unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    non_null(unsafe { mi_heap_malloc(ts_heap(), size) }, size)
}

unsafe extern "C" fn ts_calloc(n: usize, size: usize) -> *mut c_void {
    non_null(
        unsafe { mi_heap_calloc(ts_heap(), n, size) },
        n.saturating_mul(size),
    )
}

unsafe extern "C" fn ts_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    non_null(unsafe { mi_heap_realloc(ts_heap(), p, size) }, size)
}

fn non_null(p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() && size != 0 {
        // What tree-sitter's own `ts_malloc_default` does: no partial tree can be used.
        std::process::abort();
    }
    p
}

/// SQLite handles a null block itself (SQLITE_NOMEM), so these pass mimalloc's answer on.
fn sqlite_methods() -> rusqlite::ffi::sqlite3_mem_methods {
    rusqlite::ffi::sqlite3_mem_methods {
        xMalloc: Some(sqlite_malloc),
        xFree: Some(sqlite_free),
        xRealloc: Some(sqlite_realloc),
        xSize: Some(sqlite_size),
        xRoundup: Some(sqlite_roundup),
        xInit: Some(sqlite_init),
        xShutdown: Some(sqlite_shutdown),
        pAppData: std::ptr::null_mut(),
    }
}

unsafe extern "C" fn sqlite_malloc(n: c_int) -> *mut c_void {
    unsafe { mi_malloc(n.max(0) as usize) }
}

unsafe extern "C" fn sqlite_free(p: *mut c_void) {
    unsafe { mi_free(p) }
}

unsafe extern "C" fn sqlite_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    unsafe { mi_realloc(p, n.max(0) as usize) }
}

unsafe extern "C" fn sqlite_size(p: *mut c_void) -> c_int {
    c_int::try_from(unsafe { mi_usable_size(p) }).unwrap_or(c_int::MAX)
}

/// SQLite asks how much a request of `n` really gets; 8-byte multiples are what mimalloc's
/// smallest size classes are made of.
unsafe extern "C" fn sqlite_roundup(n: c_int) -> c_int {
    n.saturating_add(7) & !7
}

unsafe extern "C" fn sqlite_init(_: *mut c_void) -> c_int {
    rusqlite::ffi::SQLITE_OK
}

unsafe extern "C" fn sqlite_shutdown(_: *mut c_void) {}

#[cfg(test)]
mod tests {
    // Links mimalloc into the test binary (the library itself names none of its items).
    use mimalloc as _;

    /// The option index is mimalloc's: its default (1,000 ms in mimalloc 3's `options.c`)
    /// reads back through it.
    #[test]
    fn the_purge_delay_option_is_mimallocs() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            eprintln!("*** SKIPPED: MIMALLOC_PURGE_DELAY is set, so the default cannot be read");
            return;
        }
        assert_eq!(
            unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) },
            1000
        );
    }

    /// What tree-sitter's heap relies on (mimalloc 3's first-class heaps): every thread
    /// allocates from the one heap, and a block is freed by `mi_free` on another thread.
    #[test]
    fn a_heap_serves_every_thread_and_frees_anywhere() {
        assert!(unsafe { super::mi_version() } >= super::MI_SHARED_HEAPS);
        let heap = unsafe { super::mi_heap_new() };
        assert!(!heap.is_null());
        let heap_addr = heap as usize;
        let blocks: Vec<usize> = (0..4)
            .map(|i| {
                std::thread::spawn(move || {
                    let heap = heap_addr as *mut std::ffi::c_void;
                    let p = unsafe { super::mi_heap_malloc(heap, 48 + i) };
                    let p = unsafe { super::mi_heap_realloc(heap, p, 4096 + i) };
                    assert!(unsafe { super::mi_heap_contains(heap, p) });
                    p as usize
                })
                .join()
                .unwrap()
            })
            .collect();
        let z = unsafe { super::mi_heap_calloc(heap, 8, 8) } as *const u64;
        assert_eq!(unsafe { std::slice::from_raw_parts(z, 8) }, &[0; 8]);
        for p in blocks.into_iter().chain([z as usize]) {
            std::thread::spawn(move || unsafe { super::mi_free(p as *mut std::ffi::c_void) })
                .join()
                .unwrap();
        }
    }
}
