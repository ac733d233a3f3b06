//! socket through the real protocol: the worker binary as client, the same binary
//! with `--serve` as the server half (or a fake server), over loopback.

mod common;

use common::{WORKER, assert_error_line, run_worker};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const TARGET_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn params(mode: &str, size: u64, total_bytes: u64, sockets: u64) -> Value {
    json!({
        "mode": mode,
        "size": size,
        "total_bytes": total_bytes,
        "sockets": sockets,
        "data": "binary",
        "placement": "local",
        "check_content": 1,
        "port": 0
    })
}

/// A request as the harness sends it: the variant's options from target.toml.
fn request(variant: &str, params: &Value) -> String {
    let options = match variant {
        "current_thread" => json!({"runtime": "current_thread"}),
        "threads" => json!({"runtime": "os_threads"}),
        _ => json!({}),
    };
    json!({"workload": "socket", "variant": variant, "options": options, "params": params,
           "repetition": 1})
    .to_string()
}

/// Runs the worker with the harness's peer environment (`peer`: the server's argv;
/// None: leave it unset) and returns its stdout lines, parsed.
fn exchange(request: &str, peer: Option<Value>) -> Vec<Value> {
    let mut command = Command::new(WORKER);
    command
        .env_remove("MSGBENCH_PEER_COMMAND")
        .env_remove("MSGBENCH_PEER_CWD")
        .env_remove("MSGBENCH_PEER_HOST");
    if let Some(argv) = peer {
        command
            .env("MSGBENCH_PEER_COMMAND", argv.to_string())
            .env("MSGBENCH_PEER_CWD", TARGET_DIR)
            .env("MSGBENCH_PEER_HOST", "127.0.0.1");
    }
    run_worker(command, request)
}

/// The target.toml `serve` argv: this binary with --serve.
fn real_server() -> Option<Value> {
    Some(json!([WORKER, "--serve"]))
}

fn final_line(lines: &[Value]) -> Value {
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["type"], "hello");
    lines[1].clone()
}

fn assert_error(lines: &[Value], kind: &str, mentions: &str) {
    assert_error_line(&final_line(lines), kind, mentions);
}

#[test]
fn echo_and_flow_count_exactly() {
    let spec: Value =
        serde_json::from_str(include_str!("../../../spec/workloads/socket.json")).unwrap();
    for variant in ["default", "current_thread"] {
        for mode in ["echo", "flow"] {
            for sockets in [1, 4] {
                for (size, total) in [(1, 300), (100, 1050), (3000, 9000)] {
                    let params = params(mode, size, total, sockets);
                    let result = final_line(&exchange(&request(variant, &params), real_server()));
                    assert_eq!(result["type"], "result", "{variant} {params}: {result}");
                    let messages = sockets * (total / size);
                    let bytes = messages * size;
                    assert_eq!(
                        result["verify"],
                        json!({
                            "messages_sent": messages,
                            "messages_received": messages,
                            "bytes_sent": bytes,
                            "bytes_received": bytes,
                            "content_mismatches": 0
                        }),
                        "{variant} {params}"
                    );
                    for (fact, declared) in spec["measured"].as_object().unwrap() {
                        // The open loop's facts are optional at rate == 0.
                        let wanted = declared.get("optional").is_none();
                        assert_eq!(!result["measured"][fact].is_null(), wanted, "{fact}");
                    }
                    let elapsed = result["measured"]["elapsed_ns"].as_array().unwrap();
                    assert_eq!(elapsed.len() as u64, params["sockets"].as_u64().unwrap());
                    assert!(result["measured"]["wall_ns"].as_u64().unwrap() > 0);
                }
            }
        }
    }
}

#[test]
fn the_open_loop_times_every_echo_on_both_runtimes() {
    for variant in ["default", "current_thread"] {
        let mut params = params("echo", 64, 64 * 100, 2);
        params["rate"] = json!(20000);
        let result = final_line(&exchange(&request(variant, &params), real_server()));
        assert_eq!(result["type"], "result", "{variant}: {result}");
        assert_eq!(result["verify"]["messages_received"], 200, "{variant}");
        assert_eq!(result["verify"]["content_mismatches"], 0, "{variant}");
        let counted: u64 = result["histograms"]["latency_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| pair[1].as_u64().unwrap())
            .sum();
        assert_eq!(counted, 200, "{variant}: one latency per echo");
        assert!(result["measured"]["latency_max_ns"].as_u64().unwrap() > 0);
    }
}

#[test]
fn without_the_peer_environment_the_worker_starts_its_own_server() {
    let mut params = params("echo", 64, 64 * 10, 2);
    params["check_content"] = json!(0);
    let result = final_line(&exchange(&request("default", &params), None));
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["verify"]["messages_received"], 20);
    assert_eq!(result["verify"]["content_mismatches"], 0);
}

#[test]
fn unsupported_params_and_runtimes_are_refused() {
    let mut list = params("flow", 16, 1024, 1);
    list["data"] = json!("list");
    let lines = exchange(&request("current_thread", &list), real_server());
    assert_error(&lines, "unsupported", "list");
    let lines = exchange(
        &request("threads", &params("echo", 16, 1024, 1)),
        real_server(),
    );
    assert_error(&lines, "unsupported", "socket");
}

#[test]
fn a_port_in_use_is_the_servers_resource_error() {
    let taken = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let mut params = params("echo", 16, 1024, 1);
    params["port"] = json!(port);
    let lines = exchange(&request("default", &params), real_server());
    assert_error(&lines, "resource", &format!("port {port} is in use"));
    drop(taken);
}

#[test]
fn a_server_that_exits_at_once_is_an_internal_error() {
    let lines = exchange(
        &request("default", &params("echo", 16, 1024, 1)),
        Some(json!(["false"])),
    );
    assert_error(
        &lines,
        "internal",
        "before it printed {\"type\":\"listening\"}",
    );
}

/// A fake server: this test process listens, a shell announces the port, and the
/// listener echoes `echoes` messages on the one connection and then closes it.
fn dying_server(echoes: usize, size: usize) -> (Value, thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script =
        format!("read request; echo '{{\"type\":\"listening\",\"port\":{port}}}'; cat >/dev/null");
    let server = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut frame = vec![0u8; 4 + size];
        for _ in 0..echoes {
            stream.read_exact(&mut frame).unwrap();
            stream.write_all(&frame).unwrap();
        }
        // Dropped: the client sees the end of the stream.
    });
    (json!(["sh", "-c", script]), server)
}

#[test]
fn a_server_that_closes_mid_sequence_is_named_with_the_count() {
    let (fake, server) = dying_server(3, 16);
    let started = Instant::now();
    let lines = exchange(
        &request("default", &params("echo", 16, 16 * 10, 1)),
        Some(fake),
    );
    assert_error(
        &lines,
        "internal",
        "the server closed socket 0 after 3 of 10 messages",
    );
    server.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn the_server_exits_when_its_stdin_closes() {
    let mut server = Command::new(WORKER)
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        request("default", &params("echo", 16, 1024, 2))
    )
    .unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let listening: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(listening["type"], "listening");
    assert!(listening["port"].as_u64().unwrap() > 0);
    let started = Instant::now();
    drop(stdin);
    let status = server.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(1));
}
