//! What a call cost, from a price table keyed by model-name prefix.
//!
//! Built-in prices are a convenience that goes stale; `[provider.prices."model"]` in config
//! overrides or extends them. An unknown model has no cost rather than a wrong one.

use super::Usage;

/// US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct Price {
    pub input: f64,
    /// Cache reads; defaults to the input price when a provider has no discount.
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// Cache writes (Anthropic charges a premium); defaults to the input price.
    #[serde(default)]
    pub cache_write: Option<f64>,
    pub output: f64,
}

impl Price {
    const fn new(input: f64, cached: f64, write: f64, output: f64) -> Price {
        Price {
            input,
            cached_input: Some(cached),
            cache_write: Some(write),
            output,
        }
    }

    pub fn cost(&self, u: &Usage) -> f64 {
        let cached = u.cached_input_tokens.min(u.input_tokens);
        let written = u.cache_write_tokens.min(u.input_tokens - cached);
        let plain = u.input_tokens - cached - written;
        let per = 1e-6;
        (plain as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + written as f64 * self.cache_write.unwrap_or(self.input)
            + u.output_tokens as f64 * self.output)
            * per
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PriceTable {
    /// (model prefix, price); the longest matching prefix wins.
    entries: Vec<(String, Price)>,
}

const BUILT_IN: &[(&str, Price)] = &[
    ("gpt-5", Price::new(1.25, 0.125, 1.25, 10.0)),
    ("gpt-5-mini", Price::new(0.25, 0.025, 0.25, 2.0)),
    ("gpt-5-nano", Price::new(0.05, 0.005, 0.05, 0.4)),
    ("gpt-4.1", Price::new(2.0, 0.5, 2.0, 8.0)),
    ("gpt-4.1-mini", Price::new(0.4, 0.1, 0.4, 1.6)),
    ("gpt-4o", Price::new(2.5, 1.25, 2.5, 10.0)),
    ("gpt-4o-mini", Price::new(0.15, 0.075, 0.15, 0.6)),
    ("claude-sonnet-4", Price::new(3.0, 0.3, 3.75, 15.0)),
    ("claude-opus-4", Price::new(15.0, 1.5, 18.75, 75.0)),
    ("claude-opus-4-5", Price::new(5.0, 0.5, 6.25, 25.0)),
    ("claude-haiku-4", Price::new(1.0, 0.1, 1.25, 5.0)),
    ("deepseek", Price::new(0.28, 0.028, 0.28, 0.42)),
];

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable {
            entries: BUILT_IN.iter().map(|(m, p)| (m.to_string(), *p)).collect(),
        }
    }
}

impl PriceTable {
    pub fn empty() -> Self {
        PriceTable {
            entries: Vec::new(),
        }
    }

    /// Add or replace the price for a model prefix.
    pub fn set(&mut self, model_prefix: impl Into<String>, price: Price) {
        let prefix = model_prefix.into();
        self.entries.retain(|(m, _)| *m != prefix);
        self.entries.push((prefix, price));
    }

    pub fn lookup(&self, model: &str) -> Option<Price> {
        // Hosted names often carry a vendor path ("openai/gpt-4.1" on OpenRouter).
        let bare = model.rsplit('/').next().unwrap_or(model);
        self.entries
            .iter()
            .filter(|(prefix, _)| {
                model.starts_with(prefix.as_str()) || bare.starts_with(prefix.as_str())
            })
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, p)| *p)
    }

    /// Cost in US dollars, or `None` when the model has no price.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.lookup(model).map(|p| p.cost(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_cached_tokens_are_discounted() {
        let t = PriceTable::default();
        assert_eq!(t.lookup("gpt-4.1-mini-2025").unwrap().input, 0.4);
        assert_eq!(t.lookup("openai/gpt-4.1").unwrap().input, 2.0);
        assert!(t.lookup("llama3").is_none());
        let u = Usage {
            input_tokens: 1_000_000,
            cached_input_tokens: 500_000,
            cache_write_tokens: 0,
            output_tokens: 100_000,
            reasoning_tokens: 0,
        };
        let c = t.cost("gpt-4.1", &u).unwrap();
        assert!(
            (c - (0.5 * 2.0 + 0.5 * 0.5 + 0.1 * 8.0)).abs() < 1e-9,
            "{c}"
        );
    }

    #[test]
    fn configured_price_overrides_built_in() {
        let mut t = PriceTable::default();
        t.set(
            "gpt-4.1",
            Price {
                input: 1.0,
                cached_input: None,
                cache_write: None,
                output: 1.0,
            },
        );
        let u = Usage {
            input_tokens: 2_000_000,
            output_tokens: 0,
            ..Usage::default()
        };
        assert_eq!(t.cost("gpt-4.1", &u), Some(2.0));
    }
}
