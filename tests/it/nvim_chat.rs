//! A real client: headless Neovim (0.7.2 and 0.11.x) runs mira.ask through its built-in LSP
//! client against the mock provider and sees the answer land in the transcript buffer.

use crate::support as common;
use crate::support::mock_llm;

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

/// Issue 30: three answers through the plugin with Neovim's default didChange debounce land
/// once each, quietly, and a plain `:qa` quits afterwards.
#[test]
fn three_answers_land_once_and_a_plain_qa_quits() {
    let sandbox = common::Sandbox::new();
    let mock = MockLlm::start_in_background(Wire::Chat);
    for _ in 0..common::nvim::binaries().len() {
        for i in 1..=3 {
            mock.push(
                mock_llm::Reply::turn(
                    Wire::Chat,
                    &Turn::text(&[
                        &format!("Answer {i} begins."),
                        "\n\nA middle paragraph, long enough to be its own chunk.",
                        &format!("\n\nAnswer {i} ends."),
                    ]),
                )
                .gap(std::time::Duration::from_millis(120)),
            );
        }
    }
    let mut env = mock.env();
    env.push(("MIRA_REPO", env!("CARGO_MANIFEST_DIR").to_string()));
    common::nvim::run_everywhere("turns.lua", &sandbox, &env);
}
