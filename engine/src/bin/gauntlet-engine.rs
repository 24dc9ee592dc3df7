//! `gauntlet-engine run PLAN.json`: run a plan and print its RunResult as JSON.
//! `gauntlet-engine serve [--host H] [--port P] [--threads T] [--processes N] [--stall-ms T
//! --stall-every-ms S] [--tls [--tls-version V] [--cipher C]]`: the built-in server until SIGINT or
//! SIGTERM: `server::command`, the implementation `gauntlet serve` hands over to too (N - 1 more processes of this
//! binary serve the same port, SO_REUSEPORT; their counts are added to this one's).
//! `gauntlet-engine schema plan|result`: the JSON Schema of a plan or of a result.

use std::process::ExitCode;

use gauntlet_engine::plan::Plan;
use gauntlet_engine::server::command;
use gauntlet_engine::{run, schema};

const USAGE: &str = "usage: gauntlet-engine run PLAN.json ('-': standard input) | gauntlet-engine serve [--host H] [--port P] [--threads T] [--processes N] [--stall-ms T --stall-every-ms S] [--tls [--tls-version 1.2|1.3] [--cipher SUITE]] | gauntlet-engine schema plan|result";

fn read_input(path: &str) -> std::io::Result<String> {
    if path == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
}

fn run_plan(path: &str) -> Result<String, String> {
    let text = read_input(path).map_err(|e| format!("cannot read the plan '{path}' ({e}): check the path"))?;
    let plan = Plan::from_json(&text).map_err(|e| e.to_string())?;
    let result = run::run(plan).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&result).map_err(|e| e.to_string())
}

/// Serve as `gauntlet serve` does: the library's command, siblings being more of this binary.
fn run_server(options: &[&str]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program ({e}): run it by its path"))?;
    command::run(options, &[exe.to_string_lossy().into_owned(), "serve".into()])
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["run", path] => run_plan(path).map(Some),
        ["serve", options @ ..] => run_server(options).map(|()| None),
        ["schema", name] => schema::named(name).map(Some).ok_or_else(|| USAGE.to_string()),
        _ => Err(USAGE.to_string()),
    };
    match outcome {
        Ok(text) => {
            if let Some(text) = text {
                println!("{text}");
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("gauntlet-engine: error: {message}");
            ExitCode::from(2)
        }
    }
}
