//! The result document's schema, `schema/results.schema.json`: generated
//! from the model's serde types (`memperf_model::schema`), with what only
//! the registry knows added — the experiments' names, and for each the
//! outcome its record must hold (an `if name = X then outcome is X`
//! branch). A test checks that the file in the tree is what this makes;
//! `MEMPERF_WRITE_SCHEMA=1 cargo test --lib schema` writes it anew.

use super::registry::EXPERIMENTS;
use crate::model::document::SCHEMA_VERSION;
use serde_json::{json, Value};

/// Where the schema lives in the tree.
pub const PATH: &str = "schema/results.schema.json";

/// The schema of the result document this build writes and reads.
pub fn results() -> Value {
    let mut s = memperf_model::schema::document();
    let v = SCHEMA_VERSION;
    let head = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://memperf.invalid/schema/results-{v}.json"),
        "title": format!("memperf result document, schema_version {v}"),
        "description": "Every table, plot and report of memperf is rendered from this document alone. \
                        Units are SI, and keys carry them (bytes_per_s, latency_ns). Generated from \
                        memperf's model (crates/memperf-model) by memperf::experiments::schema.",
    });
    let obj = s.as_object_mut().expect("a schema is an object");
    for (k, val) in head.as_object().unwrap() {
        obj.insert(k.clone(), val.clone());
    }
    s["properties"]["schema_version"] = json!({ "const": v });
    name_the_experiments(&mut s);
    s
}

/// The record's `name` is one of the registry's, and a record of
/// experiment X that holds an outcome holds X's.
fn name_the_experiments(s: &mut Value) {
    let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name()).collect();
    let record = &mut s["$defs"]["ExperimentRecord"];
    record["properties"]["name"]["enum"] = json!(names);
    let branches: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({
                "if": { "properties": { "name": { "const": n } }, "required": ["name"] },
                "then": { "properties": { "outcome": { "properties": { "experiment": { "const": n } } } } }
            })
        })
        .collect();
    record["allOf"] = json!(branches);
}

/// The schema as the file holds it.
pub fn text() -> String {
    serde_json::to_string_pretty(&results()).expect("a schema serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in schema is the one the code makes (or is written anew
    /// with MEMPERF_WRITE_SCHEMA=1).
    #[test]
    fn the_schema_file_is_generated_from_the_model() {
        crate::test_support::assert_generated_file_is_current(PATH, &text());
    }

    /// Every outcome the model has is tagged with a registry name, so each
    /// branch can match: an experiment whose outcome tag differs from its
    /// name would have a branch no document could satisfy.
    #[test]
    fn every_outcome_tag_is_an_experiment_name() {
        let s = results();
        let tags: Vec<String> = s["$defs"]["Outcome"]["oneOf"]
            .as_array()
            .expect("the outcome is one of several")
            .iter()
            .map(|b| b["properties"]["experiment"]["const"].as_str().expect("each tagged").to_string())
            .collect();
        let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name()).collect();
        assert_eq!(tags.len(), names.len(), "outcomes {tags:?} against experiments {names:?}");
        for t in &tags {
            assert!(names.contains(&t.as_str()), "the outcome {t} has no experiment of that name");
        }
    }
}
