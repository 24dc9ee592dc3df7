//! `gauntlet-engine run PLAN.json`: run a plan and print its RunResult as JSON.

use std::process::ExitCode;

use gauntlet_engine::plan::Plan;
use gauntlet_engine::run;

const USAGE: &str =
    "usage: gauntlet-engine run PLAN.json   (PLAN.json: a plan, '-' for standard input)";

fn read_input(path: &str) -> std::io::Result<String> {
    if path == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
}

fn run_plan(path: &str) -> Result<String, String> {
    let text = read_input(path)
        .map_err(|e| format!("cannot read the plan '{path}' ({e}): check the path"))?;
    let plan = Plan::from_json(&text).map_err(|e| e.to_string())?;
    let result = run::run(plan).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&result).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["run", path] => run_plan(path),
        _ => Err(USAGE.to_string()),
    };
    match outcome {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("gauntlet-engine: error: {message}");
            ExitCode::from(2)
        }
    }
}
