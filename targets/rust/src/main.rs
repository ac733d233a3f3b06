//! The worker binary: one JSON request on stdin, JSON lines on stdout (spec/README.md).
//! With `--serve`, the server half of the socket workload (target.toml's `serve`).

use std::io::{self, BufRead};
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == "--serve")
    {
        return msgbench_rust::socket::server::main();
    }
    let mut request_line = String::new();
    if let Err(err) = io::stdin().lock().read_line(&mut request_line) {
        eprintln!("msgbench-rust: cannot read the request: {err}");
    }
    match msgbench_rust::worker::serve(&request_line, &mut io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("msgbench-rust: cannot write to stdout: {err}");
            ExitCode::FAILURE
        }
    }
}
