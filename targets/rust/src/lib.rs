//! msgbench worker for Rust: tokio tasks and channels (and, for fanin, std threads);
//! for socket, tokio's TcpStream, with the server half in the same binary (`--serve`).
//! The protocol, clocks, samples and histograms are the kit's (kits/rust). See
//! README.md for the variants and how each workload maps to its seed.

pub mod chat;
pub mod chatserver;
pub mod fanin;
pub mod ring;
pub mod sampler;
pub mod socket;
pub mod stdin_watch;
pub mod variant;
