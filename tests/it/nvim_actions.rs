//! Code actions in real headless Neovim 0.7.2 and 0.11.x with the plugin: "Ask Mira about
//! `parse_port`" at a call site (the request must carry the definition from another file and
//! its caller), remember selection → hover → edit → stale, and :checkhealth mira.

use crate::support as common;
use crate::support::mock_llm;

use mock_llm::{MockLlm, Turn, Wire};

#[test]
fn neovim_code_actions_ask_about_a_symbol_and_anchor_memories() {
    let sandbox = common::Sandbox::new();
    let mock = MockLlm::start_in_background(Wire::Chat);
    for _ in 0..common::nvim::binaries().len() {
        mock.push_turn(&Turn::text(&[
            "parse_port turns text into a port; ",
            "main calls it with \"8080\".",
        ]));
    }
    let mut env = mock.env();
    env.push(("MIRA_REPO", env!("CARGO_MANIFEST_DIR").to_string()));
    let ran = common::nvim::run_everywhere("actions.lua", &sandbox, &env);
    let requests = mock.requests();
    assert_eq!(requests.len(), ran);
    for r in &requests {
        // The definition comes from util.py (another file), the caller from main.py.
        assert!(r.raw.contains("## Symbol in focus"), "{}", r.raw);
        assert!(r.raw.contains("def parse_port(text):"), "{}", r.raw);
        assert!(r.raw.contains("Parse a TCP port number."), "{}", r.raw);
        assert!(r.raw.contains("`main` at main.py:5"), "{}", r.raw);
        assert!(r.raw.contains("defined at util.py:1"), "{}", r.raw);
    }
    assert_eq!(mock.violations(), Vec::<String>::new());
}
