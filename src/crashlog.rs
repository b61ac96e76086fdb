//! Crashes and panics, recorded where `mira doctor` finds them.
//!
//! A language server that dies leaves the user with nothing on screen but a dead client, so
//! every panic and every fatal signal appends one line to `$MIRA_HOME/logs/crashes.log`:
//! `<unix seconds> <panic|signal> <what>`. Panics go through the panic hook (the previous
//! hook still runs). Fatal signals go through a handler that may only use async-signal-safe
//! calls: the file is opened before, and the handler formats into a stack buffer, calls
//! `time` and `write`, puts the previous handler back and returns, so the fault happens
//! again and ends the process exactly as it would have (Rust's stack-overflow report
//! included).

use std::io::Write;
use std::os::fd::IntoRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

/// The file under a Mira home.
pub fn path(home: &Path) -> PathBuf {
    home.join("logs").join("crashes.log")
}

/// The last crash or panic recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crash {
    pub unix_secs: u64,
    /// `panic` or `signal`.
    pub kind: String,
    pub what: String,
}

impl Crash {
    /// `2026-11-25 19:40:02 UTC`.
    pub fn time(&self) -> String {
        utc(self.unix_secs)
    }
}

/// The newest well-formed line of `home`'s crash file.
pub fn last(home: &Path) -> Option<Crash> {
    let text = std::fs::read_to_string(path(home)).ok()?;
    text.lines().rev().find_map(parse_line)
}

fn parse_line(line: &str) -> Option<Crash> {
    let mut parts = line.splitn(3, ' ');
    let unix_secs = parts.next()?.parse().ok()?;
    let kind = parts.next()?.to_string();
    let what = parts.next().unwrap_or("").to_string();
    Some(Crash {
        unix_secs,
        kind,
        what,
    })
}

/// Days-from-civil in reverse (Howard Hinnant's algorithm): no date crate for one line.
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3_600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The crash file's descriptor, for the signal handler (-1 before `install`).
static FD: AtomicI32 = AtomicI32::new(-1);

/// Records this process's panics and fatal signals under `home` from now on. `what`
/// names the process in each line (`mira lsp`).
pub fn install(home: &Path, what: &'static str) {
    let file = path(home);
    let opened = file
        .parent()
        .map(std::fs::create_dir_all)
        .and_then(Result::ok)
        .and_then(|_| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
                .ok()
        });
    let Some(f) = opened else {
        tracing::warn!(path = %file.display(), "cannot open the crash log; crashes go unrecorded");
        return;
    };
    FD.store(f.into_raw_fd(), Ordering::SeqCst);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("(no message)");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        // A closed stdout is how a pipe ends, not a bug (`cli::pipe` exits quietly on it).
        if !message.starts_with("failed printing to std") {
            let line = format!("{what}, thread '{thread}'{at}: {message}").replace('\n', " ");
            record("panic", &line);
            tracing::error!(thread, "panic{at}: {message}");
        }
        previous(info);
    }));
    signals::install(what);
}

fn record(kind: &str, what: &str) {
    let fd = FD.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Borrow the descriptor without closing it when done.
    let mut f = std::mem::ManuallyDrop::new(unsafe {
        <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
    });
    let _ = f.write_all(format!("{secs} {kind} {what}\n").as_bytes());
}

mod signals {
    use super::FD;
    use std::sync::OnceLock;
    use std::sync::atomic::Ordering;

    const FATAL: [(libc::c_int, &str); 5] = [
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGABRT, "SIGABRT"),
    ];

    /// The handlers found at install time, put back by ours before it returns.
    static PREVIOUS: OnceLock<Vec<libc::sigaction>> = OnceLock::new();
    static WHAT: OnceLock<&'static str> = OnceLock::new();

    pub(super) fn install(what: &'static str) {
        let _ = WHAT.set(what);
        let mut previous = Vec::with_capacity(FATAL.len());
        for (sig, _) in FATAL {
            // SAFETY: sigaction with a zeroed struct filled as POSIX requires; the handler
            // below only makes async-signal-safe calls.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_fatal as *const () as libc::sighandler_t;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, &new, &mut old);
                previous.push(old);
            }
        }
        let _ = PREVIOUS.set(previous);
    }

    extern "C" fn on_fatal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        let name = FATAL
            .iter()
            .find(|(s, _)| *s == sig)
            .map_or("fatal signal", |(_, n)| n);
        let fd = FD.load(Ordering::SeqCst);
        if fd >= 0 {
            let mut buf = [0u8; 160];
            // SAFETY: time(NULL) is async-signal-safe.
            let secs = unsafe { libc::time(std::ptr::null_mut()) }.max(0) as u64;
            let what = WHAT.get().copied().unwrap_or("mira");
            let pid = unsafe { libc::getpid() }.max(0) as u64;
            let n = line(&mut buf, secs, name, what, pid);
            // SAFETY: write(2) on an open descriptor from a stack buffer.
            unsafe { libc::write(fd, buf.as_ptr().cast(), n) };
        }
        // A signal sent by kill(2) or raise(3) does not come back on return: end the
        // process with it as the default action would.
        let sent = info.is_null() || unsafe { (*info).si_code } <= 0;
        if sent {
            // SAFETY: signal(2) and raise(3) are async-signal-safe.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            return;
        }
        // A fault: put the previous handler back and return; the instruction faults again
        // and ends the process as it would have (Rust's stack-overflow report included).
        if let (Some(prev), Some(i)) = (PREVIOUS.get(), FATAL.iter().position(|(s, _)| *s == sig)) {
            // SAFETY: restoring a sigaction read at install time.
            unsafe { libc::sigaction(sig, &prev[i], std::ptr::null_mut()) };
        }
    }

    /// `<secs> signal <NAME> in <what> (pid <pid>)\n` into `buf`, without allocating.
    pub(super) fn line(buf: &mut [u8], secs: u64, name: &str, what: &str, pid: u64) -> usize {
        let mut n = 0;
        let mut put = |bytes: &[u8]| {
            for &b in bytes {
                if n < buf.len() {
                    buf[n] = b;
                    n += 1;
                }
            }
        };
        let mut digits = [0u8; 20];
        put(decimal(&mut digits, secs));
        put(b" signal ");
        put(name.as_bytes());
        put(b" in ");
        put(what.as_bytes());
        put(b" (pid ");
        put(decimal(&mut digits, pid));
        put(b")\n");
        n
    }

    fn decimal(buf: &mut [u8; 20], mut v: u64) -> &[u8] {
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        &buf[i..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_are_civil() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_635_602), "2026-11-25 19:40:02 UTC");
    }

    #[test]
    fn the_signal_line_parses_back() {
        let mut buf = [0u8; 160];
        let n = signals::line(&mut buf, 1_795_635_602, "SIGSEGV", "mira lsp", 4242);
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert_eq!(text, "1795635602 signal SIGSEGV in mira lsp (pid 4242)\n");
        let crash = parse_line(text.trim_end()).unwrap();
        assert_eq!(crash.kind, "signal");
        assert_eq!(crash.what, "SIGSEGV in mira lsp (pid 4242)");
        assert_eq!(crash.time(), "2026-11-25 19:40:02 UTC");
    }

    #[test]
    fn the_last_well_formed_line_wins() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("logs")).unwrap();
        std::fs::write(
            path(home.path()),
            "10 panic mira lsp, thread 'x': first\n20 signal SIGSEGV in mira lsp (pid 1)\ngarbage\n",
        )
        .unwrap();
        let c = last(home.path()).unwrap();
        assert_eq!((c.unix_secs, c.kind.as_str()), (20, "signal"));
        assert_eq!(last(&home.path().join("none")), None);
    }
}
