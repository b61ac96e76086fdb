//! Background threads yield the CPU to the editor's requests: on a 2-core machine a
//! background parse or crawl otherwise takes the core a keystroke's answer needs.

/// Lowers the calling thread's scheduling priority (nice 10 on Linux, where a thread has its
/// own nice value; elsewhere nothing). Failure is harmless and ignored.
pub fn background() {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` has no preconditions; `setpriority` on our own thread id only changes
    // this thread's nice value, and its error return is ignored on purpose.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}
