//! `mira doctor`: prints the report `report.rs` gathers (project, configuration with sources,
//! database, provider, embedder, project instructions, secrets, logs) and its problems.

use mira::config::ConfigInputs;
mod report;

use report::{self as doctor, Problem};

pub fn run(rt: &tokio::runtime::Runtime, path: Option<std::path::PathBuf>) -> super::CliResult {
    let start = path.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| "/".into()));
    let d = doctor::run(rt, ConfigInputs::from_process(None), &start);

    println!("Mira {}\n", env!("CARGO_PKG_VERSION"));
    println!("Project");
    println!("  root       {}", d.project.root.display());
    println!("  found by   {}", d.project.detection);

    println!("\nConfiguration (default < user file < project file < environment < editor)");
    for (file, exists) in &d.files {
        let state = if *exists { "read" } else { "not present" };
        println!("  file       {} ({state})", file.display());
    }
    let width = d.lines.iter().map(|l| l.key.len()).max().unwrap_or(0);
    for l in &d.lines {
        println!("  {:width$} = {:<24} {}", l.key, l.value, l.source);
    }
    if let Some(cfg) = &d.config {
        for key in mira::config::unset_keys(&cfg.config) {
            println!("  {key:width$}   (unset)");
        }
    }

    println!("\nDatabase");
    match &d.store {
        Some(s) => {
            println!("  path       {}", s.path.display());
            println!(
                "  schema     {} (this Mira: {})",
                s.schema_version,
                doctor::known_schema()
            );
            println!("  integrity  {}", s.integrity);
            println!("  attached   {} other Mira process(es)", s.attached);
        }
        None => println!("  unavailable (see problems below)"),
    }

    println!("\nProvider\n  {}", d.provider);
    if let Some(server) = &d.server {
        println!("  window     {}", server.window.describe());
        match &server.models {
            Ok(models) => {
                for m in models {
                    let mark = if m.id == server.model {
                        "  (in use)"
                    } else {
                        ""
                    };
                    println!("  model      {}{mark}", m.id);
                }
            }
            Err(_) => println!("  models     the server did not answer (see problems below)"),
        }
    }

    println!("\nProject instructions (read for every question; nested AGENTS.md too)");
    if d.instructions.is_empty() {
        println!(
            "  none (AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, .cursor/rules/*.mdc)"
        );
    }
    for f in &d.instructions {
        let cut = if f.truncated { ", cut at 32 KB" } else { "" };
        println!("  {} ({} bytes{cut})", f.path, f.text.len());
    }

    if let Some(cfg) = &d.config {
        print_embedder(&mira::embed::probe(&cfg.config.memory.embedder));
    }

    let sec = &d.secrets;
    println!("\nSecrets");
    println!("  redaction  {} rules", sec.redaction_rules);
    println!(
        "  sensitive  {} file rules (built-in list + .miraignore)",
        sec.file_rules
    );
    if sec.miraignore.is_empty() {
        println!("  miraignore none (project: .miraignore; global: ~/.config/mira/miraignore)");
    }
    for f in &sec.miraignore {
        println!("  miraignore {}", f.display());
    }
    let state = if sec.allow_sensitive {
        "allowed (content still redacted)"
    } else {
        "withheld"
    };
    println!("  model      sensitive files {state} (agent.allow_sensitive)");

    if let Some(logs) = &d.logs {
        println!("\nLogs (mira lsp, mira mcp)");
        match &logs.latest {
            Some(f) => println!("  latest     {}", f.display()),
            None => println!("  latest     none yet in {}", logs.dir.display()),
        }
        match &logs.last_crash {
            Some(c) => println!(
                "  last crash {} — {} {} (all: {})",
                c.time(),
                c.kind,
                c.what,
                logs.crashes.display()
            ),
            None => println!("  last crash none recorded"),
        }
    }

    if d.problems.is_empty() {
        println!("\nNo problems found.");
    } else {
        eprintln!("\nProblems:");
        for p in &d.problems {
            match p {
                Problem::Config(m) => eprintln!("  config: {m}"),
                Problem::Runtime(m) => eprintln!("  error: {m}"),
            }
        }
    }
    Ok(std::process::ExitCode::from(d.exit_code()))
}

fn print_embedder(p: &mira::embed::Probe) {
    use mira::embed::Provider;
    println!("\nEmbedder (recall by meaning; memory.embedder.provider)");
    let what = match p.provider {
        Provider::Builtin => "built-in, compiled in: offline, nothing to download",
        Provider::None => "none: recall by full-text search only",
        Provider::Openai => "OpenAI-compatible server",
        Provider::Ollama => "Ollama server",
        Provider::Local => "all-MiniLM-L6-v2 on this CPU",
    };
    println!("  provider   {what}");
    if let Some(m) = &p.model_id {
        println!("  model      {m}");
    }
    match &p.state {
        Ok(()) if p.provider == Provider::None => {}
        Ok(()) => println!("  state      ready"),
        Err(e) => println!("  state      unusable, recall falls back to full-text search: {e}"),
    }
    match p.texts_per_second {
        Some(r) => println!("  speed      {r:.0} texts/s (measured now on memory-sized texts)"),
        None if p.provider == Provider::Openai || p.provider == Provider::Ollama => {
            println!("  speed      depends on the server (not called by doctor)")
        }
        None => {}
    }
    let code = mira::embed::CodeModel::get();
    let sample: Vec<String> = (0..500)
        .map(|i| format!("method Invoice.total_{i}\nfn total_{i}(&self) -> Money\nself.lines.iter().map(|l| l.amount).sum()"))
        .collect();
    let started = std::time::Instant::now();
    let n = code.embed_chunks(&sample).len();
    let rate = n as f64 / started.elapsed().as_secs_f64().max(1e-9);
    println!(
        "  code       {} (built-in, always on): code search by meaning beside full-text search, \
         {rate:.0} chunks/s (measured now)",
        mira::embed::CodeModel::MODEL_ID
    );
    if matches!(
        p.provider,
        Provider::Openai | Provider::Ollama | Provider::Local
    ) {
        println!(
            "             code chunks are embedded with the model above too, and searched with it"
        );
    }
}
