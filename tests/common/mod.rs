//! What the integration tests share: reading a JSON file, and validating a
//! result document against the JSON Schema kept in the repository.

use std::path::Path;

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Every way `doc` breaks schema/results.schema.json, one line each (not
/// every test file validates result documents).
#[allow(dead_code)]
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let schema = read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/results.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path)).collect()
}
