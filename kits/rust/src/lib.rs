//! msgbench's Rust kit: what every Rust worker needs besides its benchmark, as
//! kits/go is for Go. `worker::main` reads the request (`protocol`), writes hello
//! and then the result or the error; a workload decodes its params with serde
//! (`protocol::Request::params`), reads its options (`params::ParamReader::options`),
//! takes its clocks and RSS (`measure`), may write samples while it runs (`sample`)
//! and reports latencies in the harness's histogram layout (`histogram`).

pub mod histogram;
pub mod measure;
pub mod params;
pub mod protocol;
pub mod sample;
pub mod worker;
