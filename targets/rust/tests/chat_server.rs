//! The chat server (`--chat-server`, docs/chat-server.md) driven by a real WebSocket
//! client (tokio-tungstenite's): join, delivery verbatim with its opcode to the other
//! member, stats, bad arguments, SIGTERM. tests/test_chat_server_protocol.py checks
//! every server of the registry with Python's `websockets` as well.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

const WORKER: &str = env!("CARGO_BIN_EXE_msgbench-rust");
const ANSWER: Duration = Duration::from_secs(10);

/// The server process; killed if a test fails before stopping it.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(runtime: &str) -> Self {
        let mut child = Command::new(WORKER)
            .args(["--chat-server", "--listen", "127.0.0.1:0"])
            .env("MSGBENCH_TOKIO_RUNTIME", runtime)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let listening: Value = serde_json::from_str(&line).expect("a JSON line");
        let port = listening["listening"]
            .as_u64()
            .expect("{\"listening\": PORT}") as u16;
        Self { child, port }
    }

    /// Sends SIGTERM and returns the exit status, waiting at most 10 s.
    fn terminate(mut self) -> std::process::ExitStatus {
        // SAFETY: kill only sends a signal to the child we started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + ANSWER;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn connect(port: u16) -> Client {
    let url = format!("ws://127.0.0.1:{port}/chat");
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

async fn next(client: &mut Client) -> Message {
    tokio::time::timeout(ANSWER, client.next())
        .await
        .expect("an answer within 10 s")
        .expect("the connection is open")
        .unwrap()
}

async fn join(port: u16, group: u64, user: u64) -> Client {
    let mut client = connect(port).await;
    let join = json!({"join": {"group": group, "user": user, "history": 2}});
    client.send(Message::text(join.to_string())).await.unwrap();
    assert_eq!(
        next(&mut client).await,
        Message::text(json!({"joined": user}).to_string())
    );
    client
}

async fn stats(client: &mut Client) -> Value {
    client
        .send(Message::text(r#"{"stats": true}"#))
        .await
        .unwrap();
    match next(client).await {
        Message::Text(text) => serde_json::from_str(text.as_str()).unwrap(),
        other => panic!("stats answered {other:?}"),
    }
}

#[test]
fn messages_reach_the_other_member_verbatim_and_stats_count_the_users() {
    for variant in ["multi_thread", "current_thread"] {
        let server = Server::start(variant);
        runtime().block_on(async {
            let mut control = connect(server.port).await;
            let before = stats(&mut control).await;
            assert_eq!(before["connections"], 0, "{before}");

            let mut alice = join(server.port, 0, 1).await;
            let mut bob = join(server.port, 0, 2).await;
            let mut carol = join(server.port, 1, 3).await;
            let text = Message::text(r#"{"g":0,"u":1,"t":5,"m":"hi — there"}"#);
            let binary = Message::binary(vec![0u8, 0, 0, 0, 0, 0, 0, 2, 255, 0, 7]);
            alice.send(text.clone()).await.unwrap();
            bob.send(binary.clone()).await.unwrap();
            // Two members: each message can only go to the other one.
            assert_eq!(next(&mut bob).await, text);
            assert_eq!(next(&mut alice).await, binary);

            let during = stats(&mut control).await;
            assert_eq!(during["connections"], 3, "{during}");
            let runtime = &during["runtime"];
            assert!(
                runtime["alive_tasks_count"].as_u64().unwrap() >= 5,
                "{during}"
            );
            assert!(during["peak_rss_bytes"].as_u64() >= during["rss_bytes"].as_u64());
            assert!(during["cpu_ns"].as_u64().unwrap() > 0, "{during}");

            // Carol is alone in group 1: her message is dropped, nobody gets it.
            carol.send(Message::text("alone")).await.unwrap();
            let quiet = tokio::time::timeout(Duration::from_millis(300), alice.next()).await;
            assert!(quiet.is_err(), "alice got {quiet:?}");

            carol.close(None).await.unwrap();
            let deadline = Instant::now() + ANSWER;
            while stats(&mut control).await["connections"] != 2 {
                assert!(Instant::now() < deadline, "carol's close was not counted");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        assert!(
            server.terminate().success(),
            "{variant}: SIGTERM ends with status 0"
        );
    }
}

#[test]
fn a_bad_first_frame_is_refused_with_a_reason() {
    let server = Server::start("multi_thread");
    runtime().block_on(async {
        let mut client = connect(server.port).await;
        client.send(Message::text("hello")).await.unwrap();
        match next(&mut client).await {
            Message::Close(Some(frame)) => {
                assert!(frame.reason.as_str().contains("not JSON"), "{frame:?}")
            }
            other => panic!("expected a close frame, got {other:?}"),
        }
    });
}

#[test]
fn bad_arguments_are_one_line_and_status_2() {
    for (args, runtime, mentions) in [
        (vec!["--listen", "nowhere"], "", "\"nowhere\""),
        (vec!["--listen", "127.0.0.1:0"], "fast", "current_thread"),
        (vec![], "", "--listen HOST:PORT is required"),
    ] {
        let output = Command::new(WORKER)
            .arg("--chat-server")
            .args(&args)
            .env("MSGBENCH_TOKIO_RUNTIME", runtime)
            .stdin(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(mentions),
            "{stderr:?} should mention {mentions:?}"
        );
        assert!(output.stdout.is_empty());
    }
}
