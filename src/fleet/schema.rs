//! The fleet document's schema, `schema/fleet.schema.json`: generated from
//! the model's fleet types (`memperf_model::schema::fleet`), its version
//! and kind pinned. A test checks that the file in the tree is what this
//! makes; `MEMPERF_WRITE_SCHEMA=1 cargo test --lib schema` writes it anew.

use super::FLEET_SCHEMA_VERSION;
use serde_json::{json, Value};

/// Where the schema lives in the tree.
pub const PATH: &str = "schema/fleet.schema.json";

/// What `kind` a fleet document says it is.
pub const KIND: &str = "memperf-fleet";

/// The schema of the fleet document this build writes.
pub fn fleet() -> Value {
    let mut s = memperf_model::schema::fleet();
    let v = FLEET_SCHEMA_VERSION;
    let obj = s.as_object_mut().expect("a schema is an object");
    obj.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
    obj.insert("$id".into(), json!(format!("https://memperf.invalid/schema/fleet-{v}.json")));
    obj.insert("title".into(), json!(format!("memperf fleet document, fleet_schema_version {v}")));
    obj.insert(
        "description".into(),
        json!(
            "What `memperf merge` writes: the hosts' headlines, grouped by CPU, with each headline's spread, \
               the outliers by the robust and the model rule, the reference checks and each repeated host's \
               series. Generated from memperf's model (crates/memperf-model) by memperf::fleet::schema."
        ),
    );
    s["properties"]["fleet_schema_version"] = json!({ "const": v });
    s["properties"]["kind"] = json!({ "const": KIND });
    s
}

/// The schema as the file holds it.
pub fn text() -> String {
    serde_json::to_string_pretty(&fleet()).expect("a schema serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in schema is the one the code makes (or is written anew
    /// with MEMPERF_WRITE_SCHEMA=1).
    #[test]
    fn the_fleet_schema_file_is_generated_from_the_model() {
        crate::test_support::assert_generated_file_is_current(PATH, &text());
    }
}
