//! Completion prompts fit the completion model's window: the text before and after the
//! cursor, the context header and the answer's cap shrink together when the window is small
//! (a 2,048-token llama.cpp server answers 400 to a prompt it cannot hold).

use super::config::CompletionConfig;

/// Token budgets of one completion request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    pub prefix: usize,
    pub suffix: usize,
    pub context: usize,
    pub max_tokens: u32,
}

/// Room for the FIM template's own tokens (special tokens, file name, comment markers).
const TEMPLATE_TOKENS: usize = 64;

/// The configured budgets within `window` tokens (`None`: unknown, the configuration as is).
/// The answer keeps at most an eighth of the window; the prompt is planned at three quarters
/// of the rest, since budgets are estimated at 4 bytes a token and the model's tokenizer is
/// not ours.
pub fn fit(cfg: &CompletionConfig, window: Option<usize>) -> Budgets {
    let asked = Budgets {
        prefix: cfg.prefix_tokens,
        suffix: cfg.suffix_tokens,
        context: cfg.context_tokens,
        max_tokens: cfg.max_tokens,
    };
    let Some(window) = cfg.context_window.or(window) else {
        return asked;
    };
    let max_tokens = asked.max_tokens.min((window / 8).max(16) as u32);
    let room = (window.saturating_sub(max_tokens as usize) * 3 / 4).saturating_sub(TEMPLATE_TOKENS);
    let wanted = asked.prefix + asked.suffix + asked.context;
    if wanted <= room {
        return Budgets {
            max_tokens,
            ..asked
        };
    }
    let scale = |n: usize| n * room / wanted.max(1);
    Budgets {
        prefix: scale(asked.prefix),
        suffix: scale(asked.suffix),
        context: scale(asked.context),
        max_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_window_shrinks_every_part_and_a_large_one_changes_nothing() {
        let cfg = CompletionConfig::default();
        let asked = fit(&cfg, None);
        assert_eq!(fit(&cfg, Some(32_768)), asked);
        let small = fit(&cfg, Some(2048));
        let total = small.prefix + small.suffix + small.context + small.max_tokens as usize;
        assert!(total + TEMPLATE_TOKENS <= 2048 * 3 / 4 + 128, "{small:?}");
        assert!(small.prefix > small.suffix && small.suffix > 0 && small.context > 0);
        assert_eq!(small.max_tokens, 128);
        let configured = CompletionConfig {
            context_window: Some(1024),
            ..CompletionConfig::default()
        };
        assert!(
            fit(&configured, Some(32_768)).prefix < small.prefix,
            "the setting wins"
        );
    }
}
