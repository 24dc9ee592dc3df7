//! More processes of the built-in server on one port (`gauntlet-engine serve --processes N`): each
//! process may open only so many files, and every connection is one. Every listener has
//! SO_REUSEPORT, so the kernel spreads the connections over all of them. They count in the first
//! one's table (`counters.rs`) and print no last line of their own; their stderr is the first's.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use super::counters::Share;

/// `count` more servers on `port`, each `program` (a command line that serves with the flags of
/// `serve`), returned once each has announced it listens. `options` are the first process's,
/// without `--processes`; each sibling counts in `share`'s table, `threads` slots after the one before.
pub fn start(
    program: &[String],
    count: usize,
    port: u16,
    options: &[&str],
    share: &Share,
    threads: usize,
) -> Result<Vec<Child>, String> {
    let Some((exe, program_args)) = program.split_first() else { return Err("no program to start: name one".into()) };
    let kept = without_port(options);
    let mut siblings = Vec::with_capacity(count);
    for sibling in 1..=count {
        let (variable, value) = share.handed_down(share.first + sibling * threads);
        let spawned = Command::new(exe)
            .args(program_args)
            .args(["--port", &port.to_string()])
            .args(&kept)
            .env(variable, value)
            .stdout(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                stop(siblings);
                return Err(format!("cannot start another server process ({e}): use fewer --processes"));
            }
        };
        let mut line = String::new();
        let _ = child.stdout.take().map(|out| BufReader::new(out).read_line(&mut line));
        siblings.push(child);
        if !line.starts_with("gauntlet serve: listening on") {
            stop(siblings);
            return Err(format!("another server process on port {port} did not start: use fewer --processes"));
        }
    }
    Ok(siblings)
}

fn without_port<'a>(options: &[&'a str]) -> Vec<&'a str> {
    let mut kept = Vec::with_capacity(options.len());
    let mut given = options.iter();
    while let Some(&name) = given.next() {
        if name == "--port" {
            given.next();
        } else {
            kept.push(name);
        }
    }
    kept
}

/// Stop them (SIGTERM, by pid) and wait for each.
pub fn stop(siblings: Vec<Child>) {
    for child in &siblings {
        // SAFETY: a signal to a child this process started, by its pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    }
    for mut child in siblings {
        let _ = child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_the_first_processs() {
        assert_eq!(without_port(&["--port", "0", "--threads", "2"]), ["--threads", "2"]);
    }
}
