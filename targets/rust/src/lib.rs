//! msgbench worker for Rust: tokio tasks and channels (and, for fanin, std threads);
//! for socket, tokio's TcpStream, with the server half in the same binary (`--serve`).
//! See README.md for the variants and how each workload maps to its seed.

pub mod chat;
pub mod chatserver;
pub mod fanin;
pub mod measure;
pub mod params;
pub mod protocol;
pub mod ring;
pub mod sampler;
pub mod socket;
pub mod stdin_watch;
pub mod variant;
pub mod worker;
