//! The worker binary: one JSON request on stdin, JSON lines on stdout (spec/README.md).
//! With `--serve`, the server half of the socket workload (target.toml's `serve`);
//! with `--chat-server`, the chat server kind's server (target.toml's `chat_server`).

use std::io::{self, BufRead};
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == "--serve")
    {
        return msgbench_rust::socket::server::main();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|arg| arg == "--chat-server") {
        return msgbench_rust::chatserver::main(&args[1..]);
    }
    let mut request_line = String::new();
    if let Err(err) = io::stdin().lock().read_line(&mut request_line) {
        eprintln!("msgbench-rust: cannot read the request: {err}");
    }
    match msgbench_rust::worker::serve(&request_line, &mut io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("msgbench-rust: cannot write to stdout: {err}");
            ExitCode::FAILURE
        }
    }
}
