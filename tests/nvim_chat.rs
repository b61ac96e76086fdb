//! A real client: headless Neovim (0.7.2 and 0.11.x) runs mira.ask through its built-in LSP
//! client against the mock provider and sees the answer land in the transcript buffer.

mod common;
mod mock_llm;

use mock_llm::{MockLlm, Turn, Wire};

#[test]
fn neovim_asks_and_reads_the_answer_in_the_transcript() {
    let sandbox = common::Sandbox::new();
    let mock = MockLlm::start_in_background(Wire::Chat);
    // One answer per Neovim under test; they share the store, as editors do.
    for _ in 0..common::nvim::binaries().len() {
        mock.push_turn(&Turn::text(&[
            "The codeword is ",
            "**pelican**, ünïcode ✓.",
            "\n\nIt was chosen in 2019.",
        ]));
    }
    let ran = common::nvim::run_everywhere("chat.lua", &sandbox, &mock.env());
    assert_eq!(mock.requests().len(), ran);
    assert_eq!(mock.violations(), Vec::<String>::new());
}
