//! Reading, checking and merging the layers.

use super::{Config, ConfigError, Loaded, Source, UnknownKey};
use crate::llm::ApiKeys;
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// A snapshot of the environment variables Mira reads (tests pass their own).
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl Env {
    pub fn from_process() -> Env {
        Env {
            vars: std::env::vars().collect(),
        }
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Env {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// Set and non-empty (an exported empty variable means "unset" to users).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Environment variables that set configuration keys.
const ENV_KEYS: &[(&str, &str)] = &[
    ("MIRA_HOME", "store.home"),
    ("MIRA_PROVIDER", "provider.name"),
    ("MIRA_MODEL", "provider.model"),
    ("MIRA_BASE_URL", "provider.base_url"),
    ("MIRA_LOG", "log.level"),
];

#[derive(Clone, Debug, Default)]
pub struct ConfigInputs {
    pub env: Env,
    /// The user config file; `None` means `$MIRA_CONFIG`, else `~/.config/mira/config.toml`.
    pub user_file: Option<PathBuf>,
    /// Where `.mira/project.toml` is looked for.
    pub project_root: Option<PathBuf>,
    /// `initializationOptions.mira` / `workspace/didChangeConfiguration` settings.
    pub editor: Option<serde_json::Value>,
}

impl ConfigInputs {
    pub fn from_process(project_root: Option<PathBuf>) -> Self {
        ConfigInputs {
            env: Env::from_process(),
            user_file: None,
            project_root,
            editor: None,
        }
    }
}

/// `$XDG_DATA_HOME/mira`, else `~/.local/share/mira` — from the given environment, so tests
/// and the LSP (which may get its environment from an editor) never read the wrong home.
pub fn data_home(env: &Env) -> Option<PathBuf> {
    env.get("XDG_DATA_HOME")
        .map(|d| PathBuf::from(d).join("mira"))
        .or_else(|| {
            env.get("HOME")
                .map(|h| PathBuf::from(h).join(".local/share/mira"))
        })
}

/// `$XDG_CONFIG_HOME/mira/config.toml`, else `~/.config/mira/config.toml`.
fn default_user_file(env: &Env) -> Option<PathBuf> {
    env.get("XDG_CONFIG_HOME")
        .map(|d| PathBuf::from(d).join("mira/config.toml"))
        .or_else(|| {
            env.get("HOME")
                .map(|h| PathBuf::from(h).join(".config/mira/config.toml"))
        })
}

pub(super) fn default_home() -> Option<PathBuf> {
    data_home(&Env::from_process())
}

/// The user config file these inputs read, and whether it must exist.
pub fn user_file(inputs: &ConfigInputs) -> (Option<PathBuf>, bool) {
    match (&inputs.user_file, inputs.env.get("MIRA_CONFIG")) {
        (Some(p), _) => (Some(p.clone()), true),
        (None, Some(p)) => (Some(PathBuf::from(p)), true),
        (None, None) => (default_user_file(&inputs.env), false),
    }
}

pub(super) fn load(inputs: &ConfigInputs) -> Result<Loaded, ConfigError> {
    let mut merged = Table::try_from(Config::default()).map_err(|e| ConfigError::Invalid {
        source_name: "built-in defaults".into(),
        message: e.to_string(),
    })?;
    // The default home follows the given environment, not the process's.
    let home = data_home(&inputs.env)
        .or_else(|| inputs.env.get("MIRA_HOME").map(PathBuf::from))
        .ok_or(ConfigError::NoHome)?;
    if let Some(Value::Table(store)) = merged.get_mut("store") {
        store.insert(
            "home".into(),
            Value::String(home.to_string_lossy().into_owned()),
        );
    }
    let mut sources = BTreeMap::new();
    let mut unknown = Vec::new();
    let mut files = Vec::new();

    // 1. user file (an explicit MIRA_CONFIG must exist; the default may not)
    let (user_file, required) = user_file(inputs);
    if let Some(path) = user_file
        && let Some(table) = read_file_layer(&path, required, &mut unknown, |p| {
            Source::UserFile(p.to_path_buf())
        })?
    {
        merge(
            &mut merged,
            table,
            "",
            &Source::UserFile(path.clone()),
            &mut sources,
        );
        files.push(path);
    }

    // 2. project file
    if let Some(root) = &inputs.project_root {
        let path = root.join(".mira").join("project.toml");
        if let Some(table) = read_file_layer(&path, false, &mut unknown, |p| {
            Source::ProjectFile(p.to_path_buf())
        })? {
            merge(
                &mut merged,
                table,
                "",
                &Source::ProjectFile(path.clone()),
                &mut sources,
            );
            files.push(path);
        }
    }

    // 3. environment, one variable at a time so an error names the variable
    for (var, key) in ENV_KEYS {
        if let Some(value) = inputs.env.get(var) {
            let table = table_at(key, Value::String(value.to_string()));
            check_value(Value::Table(table.clone()), &Source::Env(var), &mut unknown)?;
            merge(&mut merged, table, "", &Source::Env(var), &mut sources);
        }
    }

    // 4. editor settings
    if let Some(json) = &inputs.editor {
        if let Some(Value::Table(table)) = json_to_toml(json) {
            check_value(Value::Table(table.clone()), &Source::Editor, &mut unknown)?;
            merge(&mut merged, table, "", &Source::Editor, &mut sources);
        } else if !json.is_null() {
            return Err(ConfigError::Invalid {
                source_name: Source::Editor.to_string(),
                message: "expected an object of settings".into(),
            });
        }
    }

    let config: Config = Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Invalid {
            source_name: "the merged configuration".into(),
            message: e.to_string(),
        })?;
    let secret = |var: &str| {
        inputs
            .env
            .get(var)
            .map(|v| SecretString::from(v.to_string()))
    };
    let keys = ApiKeys {
        openai: secret("OPENAI_API_KEY"),
        anthropic: secret("ANTHROPIC_API_KEY"),
        deepseek: secret("DEEPSEEK_API_KEY"),
    };
    Ok(Loaded {
        config,
        keys,
        sources,
        unknown,
        files,
    })
}

fn read_file_layer(
    path: &Path,
    required: bool,
    unknown: &mut Vec<UnknownKey>,
    source: impl Fn(&Path) -> Source,
) -> Result<Option<Table>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let src = source(path);
    let invalid = |e: toml::de::Error| ConfigError::Invalid {
        source_name: src.to_string(),
        message: e.to_string().trim_end().to_string(),
    };
    // Deserialising from the text (not a Value) keeps spans, so errors carry line and column.
    let de = toml::Deserializer::parse(&text).map_err(invalid)?;
    let mut found = Vec::new();
    let _: Config =
        serde_ignored::deserialize(de, |p| found.push(p.to_string())).map_err(invalid)?;
    unknown.extend(found.into_iter().map(|key| UnknownKey {
        key,
        source: src.clone(),
    }));
    let table: Table = text.parse().map_err(invalid)?;
    Ok(Some(table))
}

fn check_value(
    value: Value,
    source: &Source,
    unknown: &mut Vec<UnknownKey>,
) -> Result<(), ConfigError> {
    let mut found = Vec::new();
    let _: Config = serde_ignored::deserialize(value, |p| found.push(p.to_string())).map_err(
        |e: toml::de::Error| ConfigError::Invalid {
            source_name: source.to_string(),
            message: e.to_string().trim_end().to_string(),
        },
    )?;
    unknown.extend(found.into_iter().map(|key| UnknownKey {
        key,
        source: source.clone(),
    }));
    Ok(())
}

/// `"a.b"`, v → `{a = {b = v}}`
fn table_at(dotted: &str, value: Value) -> Table {
    let mut parts = dotted.rsplit('.');
    let last = parts.next().unwrap_or(dotted);
    let mut table = Table::new();
    table.insert(last.to_string(), value);
    for part in parts {
        let mut outer = Table::new();
        outer.insert(part.to_string(), Value::Table(table));
        table = outer;
    }
    table
}

fn merge(
    into: &mut Table,
    layer: Table,
    prefix: &str,
    source: &Source,
    sources: &mut BTreeMap<String, Source>,
) {
    for (key, value) in layer {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match (into.get_mut(&key), value) {
            (Some(Value::Table(existing)), Value::Table(t)) => {
                merge(existing, t, &path, source, sources)
            }
            (_, value) => {
                record(&value, &path, source, sources);
                into.insert(key, value);
            }
        }
    }
}

fn record(value: &Value, path: &str, source: &Source, sources: &mut BTreeMap<String, Source>) {
    match value {
        Value::Table(t) => {
            for (k, v) in t {
                record(v, &format!("{path}.{k}"), source, sources);
            }
        }
        _ => {
            sources.insert(path.to_string(), source.clone());
        }
    }
}

fn json_to_toml(json: &serde_json::Value) -> Option<Value> {
    use serde_json::Value as J;
    Some(match json {
        J::Null => return None,
        J::Bool(b) => Value::Boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64()?),
        },
        J::String(s) => Value::String(s.clone()),
        J::Array(a) => Value::Array(a.iter().filter_map(json_to_toml).collect()),
        J::Object(o) => Value::Table(
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}
