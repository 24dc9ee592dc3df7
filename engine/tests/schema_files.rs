//! The committed schema files are the binary's output: a change to the plan or result types
//! without `make schema` fails here.

use std::path::Path;
use std::process::Command;

fn printed(name: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_gauntlet-engine")).args(["schema", name]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn committed_schemas_equal_the_binarys_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../python/gauntlet/schema");
    for (name, file) in [("plan", "plan.json"), ("result", "run-result-v2.json")] {
        let committed = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        assert!(
            committed == printed(name),
            "python/gauntlet/schema/{file} differs from `gauntlet-engine schema {name}`: run `make schema` and commit it"
        );
    }
}

#[test]
fn an_unknown_schema_name_prints_the_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_gauntlet-engine")).args(["schema", "bogus"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("schema plan|result"));
}
