//! `gauntlet-engine run PLAN.json`: run a plan and print its RunResult as JSON.
//! `gauntlet-engine serve [--host H] [--port P] [--threads T] [--processes N] [--stall-ms T
//! --stall-every-ms S] [--tls [--tls-version V] [--cipher C]]`: the built-in server until SIGINT or
//! SIGTERM, with the flags and the output lines of `gauntlet serve` (N - 1 more processes of this
//! binary serve the same port, SO_REUSEPORT; their counts are added to this one's).
//! `gauntlet-engine schema plan|result`: the JSON Schema of a plan or of a result.

use std::process::ExitCode;

use gauntlet_engine::server::siblings;

use gauntlet_engine::plan::Plan;
use gauntlet_engine::server::{serve, ServeConfig, ServeError};
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

const VALUE_FLAGS: [&str; 8] =
    ["--host", "--port", "--threads", "--processes", "--stall-ms", "--stall-every-ms", "--tls-version", "--cipher"];

/// How many processes serve the port: `--processes N` taken out of the options, 1 without it.
fn take_processes<'a>(options: &[&'a str]) -> Result<(usize, Vec<&'a str>), String> {
    let mut rest = Vec::with_capacity(options.len());
    let mut processes = 1;
    let mut given = options.iter();
    while let Some(&name) = given.next() {
        if name != "--processes" {
            rest.push(name);
            continue;
        }
        let value = given.next().ok_or_else(|| format!("--processes needs a value: {USAGE}"))?;
        processes = match value.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(format!("--processes {value} is not a count: give 1 or more processes")),
        };
    }
    Ok((processes, rest))
}

/// The flags of `gauntlet serve` (python/gauntlet/cli/serve.py), with the same names and meanings.
fn serve_config(options: &[&str]) -> Result<ServeConfig, String> {
    let mut config = ServeConfig::default();
    let mut rest = options.iter();
    while let Some(&name) = rest.next() {
        if name == "--tls" {
            config.tls = true;
            continue;
        }
        if !VALUE_FLAGS.contains(&name) {
            return Err(format!("unknown option {name}: {USAGE}"));
        }
        let Some(&value) = rest.next() else { return Err(format!("{name} needs a value: {USAGE}")) };
        let number = || value.parse::<u64>().map_err(|_| format!("{name} takes a number, not '{value}'"));
        match name {
            "--host" => config.host = value.to_string(),
            "--port" => {
                config.port =
                    u16::try_from(number()?).map_err(|_| format!("--port {value} is not a port: give 0 to 65535"))?
            }
            "--threads" => match number()? {
                0 => return Err("--threads 0 serves nothing: give at least 1 thread".into()),
                threads => config.threads = threads as usize,
            },
            "--stall-ms" => config.stall_ms = number()?,
            "--stall-every-ms" => config.stall_every_ms = number()?,
            "--tls-version" => config.tls_version = Some(value.to_string()),
            "--cipher" => config.cipher = Some(value.to_string()),
            _ => unreachable!("every flag of VALUE_FLAGS is matched"),
        }
    }
    Ok(config)
}

/// Serve until SIGINT or SIGTERM: both are blocked and waited for.
fn run_server(options: &[&str]) -> Result<(), String> {
    let (processes, options) = take_processes(options)?;
    let config = serve_config(&options)?;
    // SAFETY: plain libc signal-mask calls on a local, zero-initialised set.
    let signals = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let server = serve(&config).map_err(|err| match err {
        ServeError::Tls(message) => message,
        ServeError::Io(e) => {
            format!("cannot serve on {}:{} ({e}): pick another port or host", config.host, config.port)
        }
    })?;
    let siblings = match siblings::start(processes - 1, server.local_addr().port(), &options) {
        Ok(siblings) => siblings,
        Err(message) => {
            server.stop();
            return Err(message);
        }
    };
    let scheme = if config.tls { "https" } else { "http" };
    println!("gauntlet serve: listening on {scheme}://{}/", server.local_addr());
    let mut signal = 0;
    // SAFETY: waits on the set built above.
    unsafe { libc::sigwait(&signals, &mut signal) };
    let stats = server.stats();
    server.stop();
    let (requests, connections) = siblings::stop(siblings);
    eprintln!(
        "gauntlet serve: stopped after {} requests on {} connections",
        stats.requests + requests,
        stats.connections_accepted + connections
    );
    Ok(())
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
