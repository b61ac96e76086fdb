//! What is built from several sections at once. Each module takes the sections it reads;
//! these pass them from the effective configuration, so nothing below `config` sees it whole.

use crate::agent::Agent;
use crate::complete::{Completer, Provider, Sources};
use crate::store::Store;

use super::{Env, Loaded};

impl Loaded {
    /// The agent for this configuration: `[provider]` and its keys, and `[agent]`.
    pub fn agent(&self, store: Store) -> Agent {
        Agent::configured(store, &self.config.provider, &self.keys, &self.config.agent)
    }

    /// The inline completer for `[completion]` (with `[provider]` for the `chat` provider and
    /// the prices); `Ok(None)` when no completion provider is configured.
    pub fn completer(&self, env: &Env, sources: Sources) -> Result<Option<Completer>, String> {
        let lookup = |var: &str| env.get(var).map(str::to_string);
        let completion = &self.config.completion;
        let Some(provider) =
            Provider::resolve(completion, &self.config.provider, &self.keys, &lookup)?
        else {
            return Ok(None);
        };
        Ok(Some(Completer::new(provider, completion.clone(), sources)))
    }
}
