//! More processes of the built-in server on one port (`gauntlet-engine serve --processes N`): each
//! process may open only so many files, and every connection is one. Every listener has
//! SO_REUSEPORT, so the kernel spreads the connections over all of them.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

/// `count` more servers on `port`, each `program` (a command line that serves with the flags of
/// `serve`), returned once each has announced it listens. `options` are the first process's,
/// without `--processes`.
pub fn start(program: &[String], count: usize, port: u16, options: &[&str]) -> Result<Vec<Child>, String> {
    let Some((exe, program_args)) = program.split_first() else { return Err("no program to start: name one".into()) };
    let kept = without_port(options);
    let mut siblings = Vec::with_capacity(count);
    for _ in 0..count {
        let spawned = Command::new(exe)
            .args(program_args)
            .args(["--port", &port.to_string()])
            .args(&kept)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
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

/// Stop them (SIGTERM, by pid); the requests and connections they served, added.
pub fn stop(siblings: Vec<Child>) -> (u64, u64) {
    for child in &siblings {
        // SAFETY: a signal to a child this process started, by its pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    }
    let (mut requests, mut connections) = (0, 0);
    for mut child in siblings {
        let mut stderr = String::new();
        let _ = child.stderr.take().map(|mut err| err.read_to_string(&mut stderr));
        let _ = child.wait();
        if let Some((served, accepted)) = counts(&stderr) {
            requests += served;
            connections += accepted;
        }
    }
    (requests, connections)
}

/// The counts of a server's last line, "gauntlet serve: stopped after R requests on C connections".
fn counts(stderr: &str) -> Option<(u64, u64)> {
    let rest = stderr.lines().last()?.strip_prefix("gauntlet serve: stopped after ")?;
    let (requests, rest) = rest.split_once(" requests on ")?;
    let connections = rest.strip_suffix(" connections")?;
    Some((requests.parse().ok()?, connections.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_gives_the_counts() {
        assert_eq!(counts("x\ngauntlet serve: stopped after 12 requests on 3 connections\n"), Some((12, 3)));
        assert_eq!(counts("gauntlet serve: stopped after many requests on 3 connections"), None);
        assert_eq!(without_port(&["--port", "0", "--threads", "2"]), ["--threads", "2"]);
    }
}
