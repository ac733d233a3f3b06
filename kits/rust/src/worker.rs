//! One measurement from request to report: hello first, then a result or an error.
//! A worker's `main` hands `main` its name, its runtime and its dispatch, and
//! nothing else.

use crate::protocol::{self, Measurement, Request, WorkerError};
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::Mutex;

/// Who answers: the target's folder name and what `hello` reports as its runtime.
#[derive(Debug, Clone)]
pub struct Worker {
    pub target: &'static str,
    pub runtime_version: String,
}

/// The worker's stdout, shared by the measurement's threads (a sample writer beside
/// the measured work): one line at a time, flushed at once.
pub struct Lines<'a> {
    out: Mutex<&'a mut (dyn Write + Send)>,
}

impl<'a> Lines<'a> {
    pub fn new(out: &'a mut (dyn Write + Send)) -> Self {
        Self {
            out: Mutex::new(out),
        }
    }

    /// Writes `line` and its newline, then flushes.
    pub fn write(&self, line: &str) -> io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|poison| poison.into_inner());
        writeln!(out, "{line}")?;
        out.flush()
    }
}

/// The whole worker: reads the request line from stdin and answers on stdout.
pub fn main(
    worker: &Worker,
    execute: impl FnOnce(&Request, &Lines) -> Result<Measurement, WorkerError>,
) -> ExitCode {
    let mut request_line = String::new();
    if let Err(err) = io::stdin().lock().read_line(&mut request_line) {
        eprintln!("{}: cannot read the request: {err}", worker.target);
    }
    match serve(worker, &request_line, &mut io::stdout(), execute) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}: cannot write to stdout: {err}", worker.target);
            ExitCode::FAILURE
        }
    }
}

/// Answers one request line on `out`. Only an I/O error on `out` is returned:
/// everything else, a panic included, is reported through the protocol.
pub fn serve(
    worker: &Worker,
    request_line: &str,
    out: &mut (dyn Write + Send),
    execute: impl FnOnce(&Request, &Lines) -> Result<Measurement, WorkerError>,
) -> io::Result<()> {
    let (variant, request) = match protocol::parse_request(request_line) {
        Ok(request) => (request.variant.clone(), Ok(request)),
        Err((variant, error)) => (variant, Err(error)),
    };
    let lines = Lines::new(out);
    lines.write(&protocol::hello_line(
        worker.target,
        &variant,
        &worker.runtime_version,
    ))?;
    let report = match request.and_then(|request| guarded(|| execute(&request, &lines))) {
        Ok(measurement) => protocol::result_line(&measurement),
        Err(error) => protocol::error_line(&error),
    };
    lines.write(&report)
}

/// A panic anywhere in the measurement becomes an `internal` error.
fn guarded(
    execute: impl FnOnce() -> Result<Measurement, WorkerError>,
) -> Result<Measurement, WorkerError> {
    panic::catch_unwind(AssertUnwindSafe(execute)).unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Err(WorkerError::internal(format!(
            "the worker panicked: {reason}"
        )))
    })
}

/// The error for a workload this worker does not implement.
pub fn unsupported_workload(worker: &Worker, workload: &str, implemented: &[&str]) -> WorkerError {
    WorkerError::unsupported(format!(
        "workload {workload:?} is not implemented by {}: it implements {}",
        worker.target,
        implemented.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn answer(line: &str) -> Vec<Value> {
        let worker = Worker {
            target: "kit",
            runtime_version: "v1".into(),
        };
        let mut out = Vec::new();
        serve(&worker, line, &mut out, |request, _| {
            match request.workload.as_str() {
                "count" => Ok(Measurement {
                    verify: vec![("hops", 3)],
                    ..Measurement::default()
                }),
                "boom" => panic!("kaboom"),
                other => Err(unsupported_workload(&worker, other, &["count", "boom"])),
            }
        })
        .unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn hello_then_the_result() {
        let lines = answer(r#"{"workload":"count","variant":"v","params":{},"repetition":1}"#);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "hello");
        assert_eq!(lines[0]["target"], "kit");
        assert_eq!(lines[0]["variant"], "v");
        assert_eq!(lines[1]["verify"]["hops"], 3);
    }

    #[test]
    fn a_panic_an_unknown_workload_and_a_bad_request_are_error_lines() {
        let cases = [
            (
                r#"{"workload":"boom","variant":"v","params":{},"repetition":1}"#,
                "internal",
                "kaboom",
            ),
            (
                r#"{"workload":"ping","variant":"v","params":{},"repetition":1}"#,
                "unsupported",
                "count, boom",
            ),
            ("{not json", "internal", "cannot decode the request"),
        ];
        for (line, kind, text) in cases {
            let lines = answer(line);
            assert_eq!(lines[0]["type"], "hello");
            assert_eq!(lines[1]["type"], "error");
            assert_eq!(lines[1]["kind"], kind);
            assert!(
                lines[1]["message"].as_str().unwrap().contains(text),
                "{}",
                lines[1]
            );
        }
    }
}
