//! `mira models`: the models the configured provider's server lists, and the window Mira
//! uses for the configured one.

use mira::config::{self, ConfigInputs};
use mira::llm::{ProviderSettings, server_report};
use std::process::ExitCode;
use tokio::runtime::Runtime;

use super::{CliError, CliResult};

pub fn models(rt: &Runtime, json: bool) -> CliResult {
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let project = mira::project::detect(&cwd);
    let loaded = config::load(&ConfigInputs::from_process(Some(project.root))).map_err(|e| {
        CliError::usage(format!(
            "{e}\nRun `mira doctor` to see the effective configuration."
        ))
    })?;
    let settings = ProviderSettings::resolve(&loaded.config.provider, &loaded.keys)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let report = rt
        .block_on(server_report(settings))
        .map_err(|e| CliError::failure(e.to_string()))?;
    let list = report
        .models
        .as_ref()
        .map_err(|e| CliError::failure(e.to_string()))?;
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
        return Ok(ExitCode::SUCCESS);
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
        return Err(CliError::failure(format!(
            "the server has no model `{}`: set `provider.model` (or MIRA_MODEL) to one above",
            report.model
        )));
    }
    Ok(ExitCode::SUCCESS)
}
