//! `gauntlet-engine serve` takes the flags of `gauntlet serve` (python/gauntlet/cli/serve.py), with
//! the same meanings, and prints the same lines: either entry point serves the built-in server.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Every flag `gauntlet serve` declares, read from its source: each `"--name"` literal of it
/// (declared with `typer.Option("--name"` or `bounded(LIMIT, "--name"`).
fn python_flags() -> Vec<String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../python/gauntlet/cli/serve.py");
    let text = std::fs::read_to_string(source).unwrap();
    let mut flags: Vec<String> =
        text.split("\"--").skip(1).map(|rest| format!("--{}", &rest[..rest.find('"').unwrap()])).collect();
    flags.sort();
    flags.dedup();
    flags
}

/// Stops the server it holds (by its pid) even when an assertion fails.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn every_flag_of_gauntlet_serve_works_and_the_lines_match() {
    let args = [
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--threads",
        "1",
        "--processes",
        "2",
        "--stall-ms",
        "0",
        "--stall-every-ms",
        "0",
        "--tls",
        "--tls-version",
        "1.3",
        "--cipher",
        "TLS_AES_128_GCM_SHA256",
    ];
    let flags = python_flags();
    assert!(flags.len() >= 8, "{flags:?}");
    for flag in &flags {
        assert!(args.contains(&flag.as_str()), "gauntlet serve has {flag}: give gauntlet-engine serve the same flag");
    }
    let child = Command::new(env!("CARGO_BIN_EXE_gauntlet-engine"))
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut served = Served(child);
    let mut line = String::new();
    BufReader::new(served.0.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    let port = line.strip_prefix("gauntlet serve: listening on https://127.0.0.1:").and_then(|r| r.strip_suffix("/\n"));
    assert!(port.is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p > 0)), "{line:?}");
    // SAFETY: a signal to the child this test started, by its pid.
    unsafe { libc::kill(served.0.id() as libc::pid_t, libc::SIGTERM) };
    let status = served.0.wait().unwrap();
    let mut stderr = String::new();
    served.0.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    assert_eq!(stderr, "gauntlet serve: stopped after 0 requests on 0 connections\n");
}

#[test]
fn bad_flags_are_one_line_naming_the_fix() {
    let cases: [(&[&str], &str); 4] = [
        (&["--threads", "0"], "give at least 1 thread"),
        (&["--port", "70000"], "give 0 to 65535"),
        (&["--tls", "true"], "unknown option true"),
        (&["--tls-version", "1.3"], "serve with TLS"),
    ];
    for (args, expected) in cases {
        let output = Command::new(env!("CARGO_BIN_EXE_gauntlet-engine")).arg("serve").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("gauntlet-engine: error: ") && stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}
