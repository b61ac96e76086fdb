//! A closed stdout (`mira symbols x | head -3`) ends the program quietly, as ripgrep does,
//! instead of `println!` panicking with "failed printing to stdout: Broken pipe".

/// Installed first thing in `main`: a panic caused by writing to a closed stdout exits with
/// status 0 and no message; every other panic is reported as before.
pub fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_broken_pipe(text) {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn is_broken_pipe(panic_message: &str) -> bool {
    panic_message.starts_with("failed printing to std")
        && (panic_message.contains("Broken pipe") || panic_message.contains("os error 32"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_stdout_pipe_failures_are_quiet() {
        assert!(super::is_broken_pipe(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!super::is_broken_pipe("index out of bounds"));
        assert!(!super::is_broken_pipe(
            "failed printing to stdout: No space left on device (os error 28)"
        ));
    }
}
