//! The Neovim plugin (editors/nvim) in real headless Neovim 0.7.2 and 0.11.x.

mod common;

#[test]
fn neovim_plugin_attaches_and_runs_commands() {
    let sandbox = common::Sandbox::new();
    common::nvim::run_everywhere(
        "plugin.lua",
        &sandbox,
        &[("MIRA_REPO", env!("CARGO_MANIFEST_DIR").to_string())],
    );
}
