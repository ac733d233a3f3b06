//! The worker binary: one JSON request on stdin, JSON lines on stdout (the kit's
//! `worker::main`). With `--serve`, the server half of the socket workload
//! (target.toml's `serve`); with `--chat-server`, the chat server kind's server.

use msgbench_kit::sample::{PERIOD, sampled};
use msgbench_kit::worker::{self, Worker, unsupported_workload};
use msgbench_rust::{chat, chatserver, fanin, ring, sampler, socket};
use std::process::ExitCode;

const WORKLOADS: [&str; 4] = ["ring", "fanin", "chat", "socket"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // hello's runtime: the tokio release locked in Cargo.lock and the compiler (build.rs)
    let tokio = env!("MSGBENCH_TOKIO_VERSION");
    let me = Worker {
        target: "rust",
        runtime_version: format!("tokio {tokio} / {}", env!("MSGBENCH_RUSTC_VERSION")),
    };
    match args.first().map(String::as_str) {
        Some("--serve") => socket::server::main(),
        Some("--chat-server") => chatserver::main(&args[1..]),
        _ => worker::main(&me, |request, lines| match request.workload.as_str() {
            "ring" => ring::run(request),
            "fanin" => fanin::run(request),
            "socket" => socket::run(request),
            "chat" => sampled(lines, PERIOD, sampler::runtime_values, || {
                chat::run(request)
            }),
            other => Err(unsupported_workload(&me, other, &WORKLOADS)),
        }),
    }
}
