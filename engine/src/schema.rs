//! The JSON Schemas of the plan and the result, derived from their Rust types: the contract that
//! Python's plan model and result readers are typed against (python/gauntlet/schema/).

use schemars::generate::SchemaSettings;
use serde_json::{json, Value};

use crate::plan::Plan;
use crate::result::{RunResult, RESULT_SCHEMA};

/// The identifier of the plan's schema.
pub const PLAN_SCHEMA: &str = "gauntlet.plan/1";

/// What a plan may hold: the fields a reader must give and the defaults of the others.
pub fn plan_schema() -> Value {
    let schema = SchemaSettings::draft2020_12().for_deserialize().into_generator().into_root_schema_for::<Plan>();
    with_id(schema.to_value(), PLAN_SCHEMA)
}

/// What a result holds, as the engine writes it; its `schema` field is the version.
pub fn result_schema() -> Value {
    let schema = SchemaSettings::draft2020_12().for_serialize().into_generator().into_root_schema_for::<RunResult>();
    let mut value = with_id(schema.to_value(), RESULT_SCHEMA);
    value["properties"]["schema"]["const"] = json!(RESULT_SCHEMA);
    value
}

fn with_id(mut schema: Value, id: &str) -> Value {
    schema["$id"] = json!(id);
    schema
}

/// The schema named on the command line (`plan` or `result`), as pretty JSON.
pub fn named(name: &str) -> Option<String> {
    let schema = match name {
        "plan" => plan_schema(),
        "result" => result_schema(),
        _ => return None,
    };
    Some(serde_json::to_string_pretty(&schema).expect("a schema is plain JSON"))
}
