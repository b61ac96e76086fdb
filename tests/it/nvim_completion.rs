//! Inline completion through the Neovim plugin in real headless Neovim (0.7.2 and 0.11.x):
//! the plugin enables `vim.lsp.inline_completion` for Mira's buffers (a stand-in below 0.12)
//! and the request answers from the loopback mock FIM server.

use crate::support as common;
use crate::support::mock_fim;

use mock_fim::{FimWire, MockFim, Reply};

#[test]
fn neovim_plugin_enables_inline_completion() {
    let sandbox = common::Sandbox::new();
    let mock = MockFim::start_in_background(FimWire::Completions);
    for _ in 0..common::nvim::binaries().len() {
        mock.push(Reply::text(&["1, ", "2);"]));
    }
    let ran = common::nvim::run_everywhere(
        "inline_completion.lua",
        &sandbox,
        &[
            ("MIRA_REPO", env!("CARGO_MANIFEST_DIR").to_string()),
            ("MIRA_FIM_URL", mock.base_url()),
        ],
    );
    assert_eq!(mock.requests().len(), ran, "one provider call per Neovim");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}
