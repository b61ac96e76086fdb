//! A real client: headless Neovim (0.7.2 and 0.11.x) edits multi-byte text through normal-mode
//! commands and nvim_buf_set_text; Mira's view must equal the buffer after every step.

use crate::support as common;

#[test]
fn neovim_edits_match_miras_document() {
    let sandbox = common::Sandbox::new();
    common::nvim::run_everywhere("document_sync.lua", &sandbox, &[]);
}
