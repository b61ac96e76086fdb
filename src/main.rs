mod cli;
mod logging;

fn main() -> std::process::ExitCode {
    cli::run()
}
