//! One measurement from request to report: hello first, then a result or an error.

use crate::chat::{self, ChatParams};
use crate::fanin::{self, FaninParams};
use crate::protocol::{self, Measurement, Request, WorkerError};
use crate::ring::{self, RingParams};
use crate::sampler;
use crate::socket::{self, SocketParams};
use crate::variant::{Variant, Workload};
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

/// What `hello` reports as the runtime: the tokio release and the compiler.
pub fn runtime_version() -> String {
    format!(
        "tokio {} / {}",
        env!("MSGBENCH_TOKIO_VERSION"),
        env!("MSGBENCH_RUSTC_VERSION")
    )
}

/// Answers one request line on `out`. Only an I/O error on `out` is returned:
/// everything else is reported through the protocol.
/// A chat measurement also writes sample lines between hello and its report
/// (`sampler.rs`), from a thread of their own: hence `Send`.
pub fn serve<W: Write + Send>(request_line: &str, out: &mut W) -> io::Result<()> {
    let (variant, outcome) = match protocol::parse_request(request_line) {
        Ok(request) => (request.variant.clone(), Ok(request)),
        Err((variant, error)) => (variant, Err(error)),
    };
    writeln!(
        out,
        "{}",
        protocol::hello_line(&variant, &runtime_version())
    )?;
    out.flush()?;

    let out = Mutex::new(out);
    let report = match outcome.and_then(|request| {
        if request.workload == Workload::Chat.name() {
            sampler::sampled(&out, sampler::PERIOD, || execute_guarded(&request))
        } else {
            execute_guarded(&request)
        }
    }) {
        Ok(measurement) => protocol::result_line(&measurement),
        Err(error) => protocol::error_line(&error),
    };
    let out = out
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner());
    writeln!(out, "{report}")?;
    out.flush()
}

/// A panic anywhere in the measurement becomes an `internal` error line.
fn execute_guarded(request: &Request) -> Result<Measurement, WorkerError> {
    panic::catch_unwind(AssertUnwindSafe(|| execute(request))).unwrap_or_else(|panic| {
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

fn execute(request: &Request) -> Result<Measurement, WorkerError> {
    let workload = Workload::from_name(&request.workload).ok_or_else(|| {
        WorkerError::unsupported(format!(
            "workload {:?} is not implemented by {}: it implements ring, fanin, chat, socket",
            request.workload,
            protocol::TARGET_NAME
        ))
    })?;
    let variant = Variant::from_options(workload, &request.options)?;
    match workload {
        Workload::Ring => ring::run(variant, &RingParams::from_json(&request.params)?),
        Workload::Fanin => fanin::run(variant, &FaninParams::from_json(&request.params)?),
        Workload::Chat => chat::run(variant, &ChatParams::from_json(&request.params)?),
        Workload::Socket => {
            socket::run(variant, request, &SocketParams::from_json(&request.params)?)
        }
    }
}
