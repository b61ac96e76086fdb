//! `mira models`: the models the configured provider's server lists, and the window Mira
//! uses for the configured one.

use mira::config::{self, ConfigInputs};
use mira::llm::{ProviderSettings, server_report};

pub fn models(json: bool) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let project = mira::project::detect(&cwd);
    let loaded = match config::load(&ConfigInputs::from_process(Some(project.root))) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mira: {e}\nRun `mira doctor` to see the effective configuration.");
            return 2;
        }
    };
    let settings = match ProviderSettings::resolve(&loaded.config.provider, &loaded.keys) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mira: {e}");
            return 2;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mira: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let report = match rt.block_on(server_report(settings)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mira: {e}");
            return 1;
        }
    };
    let list = match &report.models {
        Ok(list) => list,
        Err(e) => {
            eprintln!("mira: {e}");
            return 1;
        }
    };
    if json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            base_url: &'a str,
            model: &'a str,
            window: usize,
            models: Vec<&'a str>,
        }
        let out = Out {
            base_url: &report.base_url,
            model: &report.model,
            window: report.window.tokens,
            models: list.iter().map(|m| m.id.as_str()).collect(),
        };
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return 0;
    }
    for m in list {
        let mark = if m.id == report.model {
            "  ← in use"
        } else {
            ""
        };
        let window = m
            .window
            .map(|w| format!("  ({w} tokens)"))
            .unwrap_or_default();
        println!("{}{window}{mark}", m.id);
    }
    eprintln!(
        "mira: {} at {}; window {}",
        report.model,
        report.base_url,
        report.window.describe()
    );
    if !report.has_model() {
        eprintln!(
            "mira: the server has no model `{}`: set `provider.model` (or MIRA_MODEL) to one above",
            report.model
        );
        return 1;
    }
    0
}
