//! A server half started by a worker (the socket peer, the chat server) ends when its
//! stdin reaches its end: the process that started it is done or gone, and nothing of
//! the run may outlive it.

use std::io::{self, Read};
use std::process;
use std::thread;

/// Watches stdin from a thread of its own and exits the process with `code` once it
/// closes; `who` names the server in the line it leaves on stderr.
pub fn exit_when_stdin_closes(who: &'static str, code: i32) {
    let watcher = thread::Builder::new()
        .name("stdin-watch".to_string())
        .spawn(move || {
            let mut sink = [0u8; 256];
            while matches!(io::stdin().read(&mut sink), Ok(n) if n > 0) {}
            eprintln!("{who}: stdin closed, stopping");
            process::exit(code);
        });
    if let Err(err) = watcher {
        eprintln!("{who}: cannot watch stdin: {err}");
    }
}
