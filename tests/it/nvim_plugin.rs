//! The Neovim plugin (editors/nvim) in real headless Neovim 0.7.2 and 0.11.x.

use crate::support as common;

#[test]
fn neovim_plugin_attaches_and_runs_commands() {
    let sandbox = common::Sandbox::new();
    common::nvim::run_everywhere(
        "plugin.lua",
        &sandbox,
        &[("MIRA_REPO", env!("CARGO_MANIFEST_DIR").to_string())],
    );
}

/// Issue 20: kill -9 the server; the plugin says so once, starts it again, and the buffer's
/// requests are answered by the new process.
#[test]
fn neovim_plugin_restarts_a_server_that_died() {
    let sandbox = common::Sandbox::new();
    common::nvim::run_everywhere(
        "restart.lua",
        &sandbox,
        &[("MIRA_REPO", env!("CARGO_MANIFEST_DIR").to_string())],
    );
}
