//! The variants this target offers (mirrored in target.toml) and the scheduler
//! each one runs its tasks on.

use crate::protocol::WorkerError;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// tokio multi-thread runtime, one worker thread per core.
    Default,
    /// tokio current_thread runtime: one scheduler thread, the analogue of `erl +S 1`.
    CurrentThread,
    /// fanin only: as Default, but the receiver takes every signal waiting in the
    /// channel per wake-up (`recv_many`) instead of one per `recv`.
    Tuned,
    /// fanin only: one OS thread per sender and a bounded std::sync::mpsc channel.
    Threads,
}

/// Where a variant's concurrent activities run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    TokioMultiThread { worker_threads: usize },
    TokioCurrentThread,
    OsThreads,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::Default,
        Variant::CurrentThread,
        Variant::Tuned,
        Variant::Threads,
    ];

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|variant| variant.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::CurrentThread => "current_thread",
            Self::Tuned => "tuned",
            Self::Threads => "threads",
        }
    }

    pub fn supports(self, workload: Workload) -> bool {
        match self {
            Self::Default | Self::CurrentThread => true,
            // Batched receive only matters with one busy receiver.
            Self::Tuned => workload == Workload::Fanin,
            // One OS thread per ring link (or chat user) cannot reach 100k+ processes;
            // socket is written for tokio's TcpStream only.
            Self::Threads => workload == Workload::Fanin,
        }
    }

    /// Whether a receiver takes all waiting messages per wake-up.
    pub fn batched_receive(self) -> bool {
        self == Self::Tuned
    }

    pub fn scheduler(self) -> Scheduler {
        match self {
            Self::Default | Self::Tuned => Scheduler::TokioMultiThread {
                worker_threads: cores(),
            },
            Self::CurrentThread => Scheduler::TokioCurrentThread,
            Self::Threads => Scheduler::OsThreads,
        }
    }
}

/// The number of cores this process may run on.
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

    #[test]
    fn names_round_trip() {
        for variant in Variant::ALL {
            assert_eq!(Variant::from_name(variant.name()), Some(variant));
        }
        assert_eq!(Variant::from_name("nope"), None);
        for name in ["ring", "fanin", "chat", "socket"] {
            assert_eq!(Workload::from_name(name).map(Workload::name), Some(name));
        }
    }

    #[test]
    fn threads_variant_is_fanin_only() {
        assert!(Variant::Threads.supports(Workload::Fanin));
        assert!(!Variant::Tuned.supports(Workload::Ring));
        assert!(Variant::Tuned.batched_receive());
        assert!(!Variant::Default.batched_receive());
        assert!(!Variant::Threads.supports(Workload::Ring));
        assert!(Variant::Default.supports(Workload::Ring));
        assert!(Variant::CurrentThread.supports(Workload::Chat));
        assert!(!Variant::Tuned.supports(Workload::Chat));
        assert!(!Variant::Threads.supports(Workload::Chat));
        assert!(Variant::Default.supports(Workload::Socket));
        assert!(Variant::CurrentThread.supports(Workload::Socket));
        assert!(!Variant::Tuned.supports(Workload::Socket));
        assert!(!Variant::Threads.supports(Workload::Socket));
    }

    #[test]
    fn default_uses_every_core() {
        assert_eq!(
            Variant::Default.scheduler(),
            Scheduler::TokioMultiThread {
                worker_threads: cores()
            }
        );
    }
}
