mod cli;
mod logging;

fn main() -> std::process::ExitCode {
    cli::pipe::quiet_on_broken_pipe();
    cli::run()
}
