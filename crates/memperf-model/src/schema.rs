//! The JSON Schema of the result document, generated from the serde types
//! of this crate (schemars), so the contract cannot drift from the code.
//! `memperf::experiments::schema` adds what only the registry knows (each
//! experiment's name and the outcome that goes with it) and checks the
//! file in `schema/` against the result.

use crate::document::Document;

/// The schema of [`Document`], as serde writes and reads it.
pub fn document() -> serde_json::Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<Document>();
    serde_json::to_value(schema).expect("a schema serialises")
}

/// The schema of the fleet document ([`crate::fleet::Fleet`]), as serde
/// writes and reads it.
pub fn fleet() -> serde_json::Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<crate::fleet::Fleet>();
    serde_json::to_value(schema).expect("a schema serialises")
}
