//! Records, at build time, the versions the worker reports in its `hello` line:
//! the compiler that built it and the tokio release locked in Cargo.lock.

use std::env;
use std::fs;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed=RUSTC");

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc_version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "rustc (unknown version)".to_string());

    let lock = fs::read_to_string("Cargo.lock").unwrap_or_default();
    let tokio_version = locked_version(&lock, "tokio").unwrap_or_else(|| "unknown".to_string());

    println!("cargo:rustc-env=MSGBENCH_RUSTC_VERSION={rustc_version}");
    println!("cargo:rustc-env=MSGBENCH_TOKIO_VERSION={tokio_version}");
}

/// The version of `package` in a Cargo.lock: the `version` line right after its `name` line.
fn locked_version(lock: &str, package: &str) -> Option<String> {
    let name_line = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == name_line {
            let version_line = lines.next()?;
            let version = version_line.trim().strip_prefix("version = ")?;
            return Some(version.trim_matches('"').to_string());
        }
    }
    None
}
