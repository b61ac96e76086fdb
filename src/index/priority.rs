//! Background threads yield the CPU to the editor's requests: on a 2-core machine a
//! background parse or crawl otherwise takes the core a keystroke's answer needs.

/// Lowers the calling thread's scheduling priority (nice 10 on Linux, where a thread has its
/// own nice value; elsewhere nothing). Failure is harmless and ignored.
pub fn background() {
    set_nice(10);
}

/// Lowers the calling thread's priority below [`background`]'s (nice 19): for the cold
/// crawl's writer, whose storing can wait while the parse threads hold every core, since
/// the symbols they extract are served from memory meanwhile. At nice 10 the writer took a
/// tenth of a core from two parse threads; at 19, symbols were ready in 1.37× the parse
/// floor instead of 1.49× (four alternating pairs, 2 threads), all done unchanged
/// (docs/benchmarks.md).
pub fn behind_parsers() {
    set_nice(19);
}

fn set_nice(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` has no preconditions; `setpriority` on our own thread id only changes
    // this thread's nice value, and its error return is ignored on purpose.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}
