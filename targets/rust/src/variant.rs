//! The workloads, and how a variant (its options in target.toml) runs them: the
//! scheduler its tasks run on.

use msgbench_kit::params::ParamReader;
use msgbench_kit::protocol::WorkerError;
use serde_json::{Map, Value};
use std::thread;
use tokio::runtime::{Builder, Runtime};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    Ring,
    Fanin,
    Chat,
    Socket,
}

impl Workload {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ring" => Some(Self::Ring),
            "fanin" => Some(Self::Fanin),
            "chat" => Some(Self::Chat),
            "socket" => Some(Self::Socket),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Fanin => "fanin",
            Self::Chat => "chat",
            Self::Socket => "socket",
        }
    }
}

/// How a variant runs a workload, from its options in target.toml (the request's
/// "options"): the worker holds no table of variants.
///
/// - `runtime`: "multi_thread" (default: a tokio worker thread per core),
///   "current_thread" (one thread runs every task, the analogue of erl +S 1) or, for
///   fanin only, "os_threads" (one OS thread per sender);
/// - `receive` (fanin only): "one" (default: one recv() per signal) or "many" (the
///   receiver takes every signal waiting per wake-up, recv_many).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    scheduler: Scheduler,
    batched_receive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    TokioMultiThread { worker_threads: usize },
    TokioCurrentThread,
    OsThreads,
}

impl Variant {
    /// target.toml's variants, for tests.
    pub const DEFAULT: Variant = Variant {
        scheduler: Scheduler::TokioMultiThread { worker_threads: 0 },
        batched_receive: false,
    };
    pub const CURRENT_THREAD: Variant = Variant {
        scheduler: Scheduler::TokioCurrentThread,
        batched_receive: false,
    };
    pub const TUNED: Variant = Variant {
        scheduler: Scheduler::TokioMultiThread { worker_threads: 0 },
        batched_receive: true,
    };
    pub const THREADS: Variant = Variant {
        scheduler: Scheduler::OsThreads,
        batched_receive: false,
    };
    pub const ALL: [Variant; 4] = [
        Variant::DEFAULT,
        Variant::CURRENT_THREAD,
        Variant::TUNED,
        Variant::THREADS,
    ];

    /// The variant `options` describe, as `workload` reads them. An option the
    /// workload does not know, or a value it does not implement, is an error.
    pub fn from_options(
        workload: Workload,
        options: &Map<String, Value>,
    ) -> Result<Self, WorkerError> {
        let known: &[&str] = if workload == Workload::Fanin {
            &["runtime", "receive"]
        } else {
            &["runtime"]
        };
        let reader = ParamReader::options(workload.name(), options, known)?;
        let runtime = match reader.optional("runtime") {
            None => "multi_thread",
            Some(_) => {
                reader.choice("runtime", &["multi_thread", "current_thread", "os_threads"])?
            }
        };
        let scheduler = match runtime {
            "current_thread" => Scheduler::TokioCurrentThread,
            "os_threads" if workload == Workload::Fanin => Scheduler::OsThreads,
            "os_threads" => {
                return Err(WorkerError::unsupported(format!(
                    "runtime = os_threads: only fanin runs on OS threads here, not {}",
                    workload.name()
                )));
            }
            _ => Scheduler::TokioMultiThread { worker_threads: 0 },
        };
        let batched_receive = match reader.optional("receive") {
            None => false,
            Some(_) => reader.choice("receive", &["one", "many"])? == "many",
        };
        Ok(Self {
            scheduler,
            batched_receive,
        })
    }

    pub fn batched_receive(self) -> bool {
        self.batched_receive
    }

    /// The scheduler to run on; a multi-thread runtime gets one worker thread per core.
    pub fn scheduler(self) -> Scheduler {
        match self.scheduler {
            Scheduler::TokioMultiThread { .. } => Scheduler::TokioMultiThread {
                worker_threads: cores(),
            },
            other => other,
        }
    }
}

pub fn cores() -> usize {
    thread::available_parallelism().map_or(1, usize::from)
}

/// A tokio runtime for `scheduler`; `timer` enables tokio::time (fanin and chat sleep).
pub fn tokio_runtime(scheduler: Scheduler, timer: bool) -> Result<Runtime, WorkerError> {
    build_runtime(scheduler, timer, false)
}

/// A tokio runtime for `scheduler` with its I/O driver (TcpStream, TcpListener) and
/// timers (every socket wait has a time limit): socket's client and server.
pub fn tokio_net_runtime(scheduler: Scheduler) -> Result<Runtime, WorkerError> {
    build_runtime(scheduler, true, true)
}

fn build_runtime(scheduler: Scheduler, timer: bool, io: bool) -> Result<Runtime, WorkerError> {
    let mut builder = match scheduler {
        Scheduler::TokioMultiThread { worker_threads } => {
            let mut builder = Builder::new_multi_thread();
            builder.worker_threads(worker_threads);
            builder
        }
        Scheduler::TokioCurrentThread => Builder::new_current_thread(),
        Scheduler::OsThreads => {
            return Err(WorkerError::internal(
                "the threads variant does not run on a tokio runtime",
            ));
        }
    };
    if timer {
        builder.enable_time();
    }
    if io {
        builder.enable_io();
    }
    builder
        .build()
        .map_err(|err| WorkerError::resource(format!("cannot start the tokio runtime: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgbench_kit::protocol::ErrorKind;
    use serde_json::json;

    fn options(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn target_toml_options_make_the_variants() {
        let cases = [
            (Workload::Ring, json!({}), Variant::DEFAULT),
            (
                Workload::Chat,
                json!({"runtime": "current_thread"}),
                Variant::CURRENT_THREAD,
            ),
            (Workload::Fanin, json!({"receive": "many"}), Variant::TUNED),
            (
                Workload::Fanin,
                json!({"runtime": "os_threads"}),
                Variant::THREADS,
            ),
        ];
        for (workload, given, want) in cases {
            assert_eq!(
                Variant::from_options(workload, &options(given)).unwrap(),
                want
            );
        }
        for name in ["ring", "fanin", "chat", "socket"] {
            assert_eq!(Workload::from_name(name).map(Workload::name), Some(name));
        }
    }

    #[test]
    fn options_a_workload_does_not_know_are_refused() {
        let error = Variant::from_options(Workload::Ring, &options(json!({"receive": "many"})))
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(error.message.contains("receive"), "{}", error.message);
        let error =
            Variant::from_options(Workload::Socket, &options(json!({"runtime": "os_threads"})))
                .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
        let error = Variant::from_options(Workload::Fanin, &options(json!({"runtime": "green"})))
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Internal);
    }

    #[test]
    fn default_uses_every_core() {
        assert_eq!(
            Variant::DEFAULT.scheduler(),
            Scheduler::TokioMultiThread {
                worker_threads: cores()
            }
        );
    }
}
