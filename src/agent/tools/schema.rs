//! The JSON Schema a model is shown for a tool, derived from the tool's one argument type.
//!
//! MCP's `tools/list` derives its schema from the same type through rmcp (draft 2020-12, with
//! `null` allowed for optional fields). Providers are stricter, so the model's copy is reduced
//! to what every wire format takes: one object with inlined properties (no `$ref`, which some
//! reject), no `null` types (an optional field is simply not `required`), no `$schema`, titles
//! or integer formats (tokens the model pays for on every turn), and no properties beyond the
//! listed ones, as the schemas always said.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The model-facing schema of `T`, an arguments object.
pub fn parameters<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft07().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(root) = &mut schema {
        // The tool's own description says what the arguments are for.
        root.remove("description");
        root.insert("additionalProperties".into(), Value::Bool(false));
    }
    reduce(&mut schema);
    schema
}

fn reduce(schema: &mut Value) {
    let Value::Object(obj) = schema else { return };
    // `default` too: serde's defaults are the tool's business, and `null` is not a value the
    // model may send.
    for key in ["$schema", "title", "format", "default"] {
        obj.remove(key);
    }
    drop_null(obj);
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        props.values_mut().for_each(reduce);
    }
    if let Some(items) = obj.get_mut("items") {
        reduce(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            subs.iter_mut().for_each(reduce);
        }
    }
}

/// `Option<T>` as plain `T`: absence, not `null`, is how a model leaves an argument out.
fn drop_null(obj: &mut Map<String, Value>) {
    let null = Value::from("null");
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| *t != null);
        if let [only] = types.as_slice() {
            let only = only.clone();
            obj.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(subs)) = obj.get_mut("anyOf") {
        subs.retain(|s| s.get("type") != Some(&null));
        if subs.len() == 1 {
            let Some(Value::Object(only)) = subs.pop() else {
                return;
            };
            obj.remove("anyOf");
            for (k, v) in only {
                obj.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::agent::tools::Registry;

    fn each_schema(mut check: impl FnMut(&str, &Value)) {
        for spec in Registry::standard().specs() {
            check(&spec.name, &spec.parameters);
        }
    }

    /// Every keyword of a schema and its subschemas (property names are not keywords).
    fn walk<'a>(v: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
        let Value::Object(o) = v else { return };
        for (k, x) in o {
            out.push((k.as_str(), x));
            match (k.as_str(), x) {
                ("properties", Value::Object(props)) => props.values().for_each(|p| walk(p, out)),
                ("items", _) => walk(x, out),
                ("anyOf" | "oneOf" | "allOf", Value::Array(subs)) => {
                    subs.iter().for_each(|p| walk(p, out))
                }
                _ => {}
            }
        }
    }

    #[test]
    fn every_model_schema_is_one_closed_object_every_provider_takes() {
        each_schema(|name, s| {
            assert_eq!(s["type"], "object", "{name}: {s}");
            assert_eq!(s["additionalProperties"], false, "{name}: {s}");
            let mut keys = Vec::new();
            walk(s, &mut keys);
            for (k, v) in keys {
                assert!(
                    !matches!(
                        k,
                        "$ref"
                            | "$defs"
                            | "definitions"
                            | "$schema"
                            | "title"
                            | "format"
                            | "default"
                    ),
                    "{name} has `{k}`: {s}"
                );
                if k == "type" {
                    assert!(v.is_string(), "{name}: one type per property: {s}");
                }
                if k == "enum" {
                    assert!(
                        v.as_array().unwrap().iter().all(Value::is_string),
                        "{name}: {s}"
                    );
                }
            }
        });
    }

    #[test]
    fn optional_arguments_are_left_out_of_required_and_keep_their_bounds() {
        let specs = Registry::standard().specs();
        let get = |n: &str| {
            specs
                .iter()
                .find(|s| s.name == n)
                .unwrap()
                .parameters
                .clone()
        };
        let remember = get("remember");
        assert_eq!(remember["required"], json!(["text"]));
        assert_eq!(
            remember["properties"]["kind"]["enum"],
            json!(["fact", "preference", "decision", "correction"])
        );
        assert_eq!(remember["properties"]["corrects"]["type"], "integer");
        let recall = get("recall");
        assert_eq!(recall["properties"]["limit"]["minimum"], 1);
        assert_eq!(recall["properties"]["limit"]["maximum"], 50);
        let goals = get("goals");
        assert_eq!(goals["required"], json!(["action"]));
        assert_eq!(
            goals["properties"]["status"]["enum"],
            json!(["active", "paused", "done", "abandoned"])
        );
        assert_eq!(goals["properties"]["progress"]["maximum"], 100);
        let artifact = get("read_artifact");
        assert_eq!(artifact["required"], json!(["id"]));
        assert!(
            get("list_files")
                .get("required")
                .is_none_or(|r| r == &json!([]))
        );
    }
}
