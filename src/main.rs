//! The `mira` binary: installs the broken-pipe hook first, then hands over to `cli::run`.

mod cli;
mod logging;

fn main() -> std::process::ExitCode {
    cli::pipe::quiet_on_broken_pipe();
    cli::run()
}
