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

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

// Links mimalloc into every binary that uses the library: the crawl's scratch heaps call it
// even where mimalloc is not the global allocator (the test binaries).
use mimalloc as _;

// mimalloc's C API, linked in by `libmimalloc-sys` (the `mimalloc` crate's own).
unsafe extern "C" {
    fn mi_malloc(size: usize) -> *mut c_void;
    fn mi_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn mi_heap_new() -> *mut c_void;
    fn mi_heap_destroy(heap: *mut c_void);
    fn mi_heap_delete(heap: *mut c_void);
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

thread_local! {
    /// The [`ScratchHeap`] this thread's tree-sitter allocations go to while one is entered;
    /// null otherwise.
    static ENTERED: Cell<*const ScratchHeap> = const { Cell::new(std::ptr::null()) };
}

/// The heap a tree-sitter request on this thread goes to: the entered scratch heap, if any.
fn ts_heap(size: usize) -> *mut c_void {
    let entered = ENTERED.get();
    if entered.is_null() {
        return TS_HEAP.load(Ordering::Relaxed);
    }
    // SAFETY: set only by `ScratchHeap::enter`, on this thread, for as long as it borrows
    // the heap.
    let scratch = unsafe { &*entered };
    scratch
        .requested
        .set(scratch.requested.get().wrapping_add(size));
    scratch.heap.as_ptr()
}

/// tree-sitter requires a non-null block for every non-zero request; its default allocator
/// aborts on exhaustion, and so do these.
unsafe extern "C" fn ts_malloc(size: usize) -> *mut c_void {
    non_null(unsafe { mi_heap_malloc(ts_heap(size), size) }, size)
}

unsafe extern "C" fn ts_calloc(n: usize, size: usize) -> *mut c_void {
    let total = n.saturating_mul(size);
    non_null(unsafe { mi_heap_calloc(ts_heap(total), n, size) }, total)
}

unsafe extern "C" fn ts_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    non_null(unsafe { mi_heap_realloc(ts_heap(size), p, size) }, size)
}

/// A mimalloc heap of one thread's own that tree-sitter allocates from while it is
/// [entered](ScratchHeap::enter), and that is destroyed whole: every block in it is freed
/// at once, page by page, without visiting a block.
///
/// Why: the cold index parses each file once and drops its tree, and freeing a tree
/// (`ts_tree_delete`) visits every node of it. On the bench's mixed corpus (12.7k files,
/// 2 threads) trees parsed in scratch heaps and never freed one by one took the crawl's
/// parse CPU from 10.6-11.0 s to 10.1-10.3 s. The heap is destroyed once it has taken
/// [`crate::index::parse`]'s limit of requests.
///
/// Invariant (what makes [`ScratchHeap::destroy`] sound): when the heap is destroyed, no
/// tree-sitter object that ever allocated while it was entered is still in use: the trees
/// parsed in it were forgotten, and the parsers, cursors and queries made or used in it were
/// dropped. Entered, the heap takes every tree-sitter allocation on this thread, so nothing
/// made outside it (a thread's cached parser, say) may be used while it is entered.
pub struct ScratchHeap {
    heap: NonNull<c_void>,
    /// Bytes requested from it so far (frees not counted).
    requested: Cell<usize>,
    /// A heap is entered on the thread that made it and is never shared.
    _one_thread: std::marker::PhantomData<*mut ()>,
}

impl ScratchHeap {
    /// A new heap; `None` where tree-sitter does not allocate through mimalloc
    /// (`MIRA_ALLOCATOR=system`, or before [`install_unless_system`]): then nothing can be
    /// freed whole, and trees are freed as usual.
    pub fn new() -> Option<ScratchHeap> {
        if TS_HEAP.load(Ordering::Relaxed).is_null() {
            return None;
        }
        // SAFETY: no preconditions; mimalloc 3 (checked at install) is what made TS_HEAP.
        let heap = NonNull::new(unsafe { mi_heap_new() })?;
        Some(ScratchHeap {
            heap,
            requested: Cell::new(0),
            _one_thread: std::marker::PhantomData,
        })
    }

    /// Runs `f` with this thread's tree-sitter allocations going to this heap.
    pub fn enter<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Leave(*const ScratchHeap);
        impl Drop for Leave {
            fn drop(&mut self) {
                ENTERED.set(self.0);
            }
        }
        let _leave = Leave(ENTERED.replace(self));
        f()
    }

    /// Bytes requested from this heap so far (what it would hold had nothing been freed).
    pub fn requested(&self) -> usize {
        self.requested.get()
    }

    /// Frees every block in the heap.
    ///
    /// # Safety
    /// The type's invariant: no tree-sitter object that allocated in this heap is still in
    /// use, and none will be (trees parsed in it were forgotten, not dropped).
    pub unsafe fn destroy(self) {
        let heap = std::mem::ManuallyDrop::new(self).heap;
        // SAFETY: the caller's promise; the heap was made by `mi_heap_new` and is destroyed
        // once (`ManuallyDrop`: its `Drop` does not run).
        unsafe { mi_heap_destroy(heap.as_ptr()) };
    }
}

/// Dropped without [`ScratchHeap::destroy`] (a panic on the way), the heap's live blocks
/// move to mimalloc's main heap: whatever still points into them stays valid, and what was
/// forgotten leaks.
impl Drop for ScratchHeap {
    fn drop(&mut self) {
        // SAFETY: made by `mi_heap_new`, deleted once; deleting frees no live block.
        unsafe { mi_heap_delete(self.heap.as_ptr()) };
    }
}

/// Whether a [`ScratchHeap`] is entered on this thread (what a thread's cached parsers must
/// not be used inside).
pub fn scratch_entered() -> bool {
    !ENTERED.get().is_null()
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

    /// While a scratch heap is entered, tree-sitter's requests on this thread go to it and
    /// are counted; leaving (also by a panic) restores what was entered before; destroying it
    /// frees its blocks without visiting them.
    #[test]
    fn an_entered_scratch_heap_takes_tree_sitters_blocks_until_left() {
        use super::{ScratchHeap, scratch_entered, ts_calloc, ts_malloc, ts_realloc};
        let make = || ScratchHeap {
            heap: std::ptr::NonNull::new(unsafe { super::mi_heap_new() }).unwrap(),
            requested: std::cell::Cell::new(0),
            _one_thread: std::marker::PhantomData,
        };
        let (outer, inner) = (make(), make());
        assert!(!scratch_entered());
        let blocks = outer.enter(|| {
            assert!(scratch_entered());
            let a = unsafe { ts_malloc(100) };
            let b = unsafe { ts_calloc(4, 8) };
            let c = inner.enter(|| unsafe { ts_malloc(10) });
            assert!(unsafe { super::mi_heap_contains(inner.heap.as_ptr(), c) });
            // Back in the outer heap after the inner one is left.
            let a = unsafe { ts_realloc(a, 5000) };
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inner.enter(|| panic!("inside"))
            }));
            assert!(panicked.is_err());
            let d = unsafe { ts_malloc(20) };
            [a, b, d]
        });
        assert!(!scratch_entered());
        for p in blocks {
            assert!(unsafe { super::mi_heap_contains(outer.heap.as_ptr(), p) });
        }
        assert_eq!(outer.requested(), 100 + 32 + 5000 + 20);
        assert_eq!(inner.requested(), 10);
        // SAFETY: nothing that allocated in them is used again.
        unsafe {
            outer.destroy();
            inner.destroy();
        }
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
