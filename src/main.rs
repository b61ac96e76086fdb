//! The `mira` binary: installs the broken-pipe hook first, then hands over to `cli::run`.

mod cli;
mod logging;

// glibc's malloc led the profile of a large outline's reply (tower-lsp-server builds a
// `serde_json::Value` per field); mimalloc halves that. `MIRA_ALLOCATOR=system` keeps the
// system allocator for tools that watch it (the valgrind fuzz test): memcheck sees nothing
// inside mimalloc's own heaps. Benches that run the library in process use mimalloc too.
#[global_allocator]
static GLOBAL: Allocator = Allocator;

struct Allocator;

/// 0 until the first allocation decides, then 1 (mimalloc) or 2 (system) for the process's
/// life: every block is freed by the allocator that made it.
static CHOSEN: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

impl Allocator {
    #[inline]
    fn system(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        match CHOSEN.load(Relaxed) {
            0 => {
                // getenv neither allocates nor takes a Rust lock, so it is safe here; racing
                // first allocations read the same environment and agree.
                let v = unsafe { libc::getenv(c"MIRA_ALLOCATOR".as_ptr()) };
                let system = !v.is_null() && unsafe { std::ffi::CStr::from_ptr(v) } == c"system";
                if !system {
                    // Committing whole arenas up front cost `mira lsp` 60 MB of peak RSS on a
                    // million indexed lines (214 MB against glibc's 137); lazily it is 154.
                    // Set before mimalloc's first allocation, and allocation-free.
                    unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
                }
                CHOSEN.store(if system { 2 } else { 1 }, Relaxed);
                system
            }
            chosen => chosen == 2,
        }
    }
}

/// `mi_option_arena_eager_commit` in `mimalloc.h` (4 in mimalloc 2 and 3; the crate exports no constant).
const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;

unsafe extern "C" {
    /// mimalloc's own, linked in by `libmimalloc-sys`.
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if self.system() {
            unsafe { std::alloc::System.alloc(layout) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if self.system() {
            unsafe { std::alloc::System.dealloc(ptr, layout) }
        } else {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if self.system() {
            unsafe { std::alloc::System.alloc_zeroed(layout) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        if self.system() {
            unsafe { std::alloc::System.realloc(ptr, layout, new) }
        } else {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new) }
        }
    }
}

fn main() -> std::process::ExitCode {
    cli::pipe::quiet_on_broken_pipe();
    // SAFETY: no thread, tree-sitter object or SQLite call exists yet (the hook above only
    // sets a panic hook). It reads the same `MIRA_ALLOCATOR` as `GLOBAL`.
    unsafe { mira::c_alloc::install_unless_system() };
    let threads = mira::index::crawl::start_parse_pool();
    mira::c_alloc::purge_at_once_on_many_threads(threads);
    cli::run().unwrap_or_else(cli::CliError::report)
}
