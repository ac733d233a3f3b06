//! What the integration tests share: running the worker binary on one request and
//! checking the message of an error line.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

pub const WORKER: &str = env!("CARGO_BIN_EXE_msgbench-rust");

/// Runs `command` (the worker, its arguments and environment set by the caller) on
/// `request`: one line on stdin, then stdin closed. Asserts exit status 0 and returns
/// its stdout lines, parsed.
pub fn run_worker(mut command: Command, request: &str) -> Vec<Value> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the worker starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(request.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "exit status {:?}", output.status);
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect()
}

/// Checks that `last` is an error line of `kind` whose message mentions `mentions`.
pub fn assert_error_line(last: &Value, kind: &str, mentions: &str) {
    assert_eq!(last["type"], "error", "{last}");
    assert_eq!(last["kind"], kind, "{last}");
    let message = last["message"].as_str().unwrap();
    assert!(
        message.contains(mentions),
        "{message:?} should mention {mentions:?}"
    );
}
