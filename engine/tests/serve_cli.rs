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

impl Served {
    /// `gauntlet-engine serve` with these flags, and the line it printed once it listens.
    fn start(args: &[&str]) -> (Served, String) {
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
        (served, line)
    }

    /// SIGTERM, then what it wrote on stderr; it must have exited with success.
    fn stop(mut self) -> String {
        // SAFETY: a signal to the child this test started, by its pid.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let status = self.0.wait().unwrap();
        let mut stderr = String::new();
        self.0.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert!(status.success(), "{stderr}");
        stderr
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
    let (served, line) = Served::start(&args);
    let port = line.strip_prefix("gauntlet serve: listening on https://127.0.0.1:").and_then(|r| r.strip_suffix("/\n"));
    assert!(port.is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p > 0)), "{line:?}");
    assert_eq!(served.stop(), "gauntlet serve: stopped after 0 requests on 0 connections\n");
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

/// One request on a new connection, read to its end: the reply's text.
fn fetch(port: u16, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(
        &mut stream,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn the_stats_and_the_last_line_count_every_process() {
    let (served, line) = Served::start(&["--port", "0", "--threads", "1", "--processes", "3"]);
    let port: u16 = line.trim_end().rsplit(':').next().unwrap().trim_end_matches('/').parse().unwrap();
    // 30 connections: the kernel spreads them over the three processes by a hash of their ports.
    for _ in 0..30 {
        assert!(fetch(port, "/hello").starts_with("HTTP/1.1 200"));
    }
    let stats = fetch(port, "/__gauntlet/stats");
    let body = stats.split("\r\n\r\n").nth(1).unwrap();
    assert_eq!(body, r#"{"requests":30,"connections_accepted":31}"#, "{stats}");
    assert_eq!(served.stop(), "gauntlet serve: stopped after 30 requests on 31 connections\n");
}
