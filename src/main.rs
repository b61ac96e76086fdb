//! The `mira` binary: installs the broken-pipe hook first, then hands over to `cli::run`.

mod cli;
mod logging;

// glibc's malloc led the profile of a large outline's reply (tower-lsp-server builds a
// `serde_json::Value` per field) and of the cold index's extraction; mimalloc halves that.
// Benches that run the library in process declare the same allocator, so they measure what
// the binary does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::pipe::quiet_on_broken_pipe();
    cli::run()
}
