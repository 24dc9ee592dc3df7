//! `serve` as a command, the one implementation behind `gauntlet-engine serve` and `gauntlet
//! serve` (python/gauntlet/cli/serve.py hands its options over through the Python module): the
//! flags read, the server run until SIGINT or SIGTERM with N - 1 sibling processes on its port
//! (`siblings`), all counting in one table (`counters`), and the two lines the first process prints,
//! "gauntlet serve: listening on URL" on stdout and "gauntlet serve: stopped after R requests on C
//! connections" on stderr, its counts the whole server's.

use super::counters::Share;
use super::{serve_counted, siblings, ServeConfig, ServeError};

/// The flags, as a usage line shows them.
pub const USAGE: &str = "serve [--host H] [--port P] [--threads T] [--processes N] [--stall-ms T --stall-every-ms S] [--tls [--tls-version 1.2|1.3] [--cipher SUITE]]";

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

/// The server the flags describe.
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

/// Serve until SIGINT or SIGTERM (both blocked in the calling thread, and so in the server's
/// threads it starts, and waited for). `program` is the command line that runs one more process
/// with these flags (this binary and `serve`, or `python -m gauntlet serve`).
pub fn run(options: &[&str], program: &[String]) -> Result<(), String> {
    let (processes, options) = take_processes(options)?;
    let config = serve_config(&options)?;
    let inherited = Share::inherited()?;
    // SAFETY: plain libc signal-mask calls on local, zero-initialised sets.
    let (signals, before) = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut before);
        (set, before)
    };
    let served = serve_blocked(&config, processes, inherited, &options, program, &signals);
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut()) };
    served
}

fn serve_blocked(
    config: &ServeConfig,
    processes: usize,
    inherited: Option<Share>,
    options: &[&str],
    program: &[String],
    signals: &libc::sigset_t,
) -> Result<(), String> {
    let is_sibling = inherited.is_some();
    let share = match inherited {
        Some(share) => share,
        None => Share::new(processes, config.threads)
            .map_err(|e| format!("cannot make the server's counters ({e}): use fewer --processes or --threads"))?,
    };
    let server = serve_counted(config, share.clone()).map_err(|err| match err {
        ServeError::Tls(message) => message,
        ServeError::Io(e) => {
            format!("cannot serve on {}:{} ({e}): pick another port or host", config.host, config.port)
        }
    })?;
    let siblings =
        match siblings::start(program, processes - 1, server.local_addr().port(), options, &share, config.threads) {
            Ok(siblings) => siblings,
            Err(message) => {
                server.stop();
                return Err(message);
            }
        };
    let scheme = if config.tls { "https" } else { "http" };
    println!("gauntlet serve: listening on {scheme}://{}/", server.local_addr());
    let mut signal = 0;
    // SAFETY: waits on a set the caller blocked.
    unsafe { libc::sigwait(signals, &mut signal) };
    server.stop();
    siblings::stop(siblings);
    if !is_sibling {
        let stats = share.table.sum();
        eprintln!(
            "gauntlet serve: stopped after {} requests on {} connections",
            stats.requests, stats.connections_accepted
        );
    }
    Ok(())
}
