//! One connection: the WebSocket handshake, then either a user (join, send,
//! deliver) or a stats control connection.

use super::group::{self, GroupMsg};
use super::stats::{self, ServerCounts};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use tokio::net::TcpStream;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::frame::{CloseFrame, Utf8Bytes};

/// The read buffer tungstenite allocates per connection: its default (128 KiB) is
/// for bulk transfer; chat frames are ~100 bytes and there are many connections.
const READ_BUFFER_BYTES: usize = 4 * 1024;
/// Deliveries written per flush when several wait: bounds how long a busy user
/// goes without reading its own frames.
const DELIVERY_BATCH: usize = 64;

type Ws = WebSocketStream<TcpStream>;

/// The server's shared state: its groups' inboxes and its counts.
pub struct Server {
    groups: Mutex<HashMap<u64, UnboundedSender<GroupMsg>>>,
    connections: AtomicU64,
    seeds: RandomState,
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

impl Server {
    pub fn new() -> Self {
        Self {
            groups: Mutex::new(HashMap::new()),
            connections: AtomicU64::new(0),
            seeds: RandomState::new(),
        }
    }

    /// Serves one accepted TCP connection until it closes.
    pub async fn handle(&self, stream: TcpStream) {
        // Deliveries are small frames whose latency is the measurement: no Nagle.
        let _ = stream.set_nodelay(true);
        let config = WebSocketConfig::default().read_buffer_size(READ_BUFFER_BYTES);
        let mut ws = match tokio_tungstenite::accept_async_with_config(stream, Some(config)).await {
            Ok(ws) => ws,
            Err(err) => {
                eprintln!("msgbench-rust --chat-server: handshake: {err}");
                return;
            }
        };
        let first = match ws.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(_)) | None => {
                return refuse(ws, "the first frame must be a join or stats text frame").await;
            }
            Some(Err(_)) => return,
        };
        match parse_first(text_of(&first)) {
            Ok(First::Stats) => self.serve_stats(ws).await,
            Ok(First::Join(join)) => self.serve_user(ws, join).await,
            Err(reason) => refuse(ws, &reason).await,
        }
    }

    fn group(&self, group: u64) -> UnboundedSender<GroupMsg> {
        let mut groups = self
            .groups
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        groups
            .entry(group)
            .or_insert_with(|| {
                let (sender, inbox) = unbounded_channel();
                tokio::spawn(group::run(inbox, self.seeds.hash_one(group)));
                sender
            })
            .clone()
    }

    fn counts(&self) -> ServerCounts {
        let groups = self
            .groups
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .len();
        ServerCounts {
            connections: self.connections.load(Ordering::Relaxed),
            groups: groups as u64,
        }
    }

    async fn serve_stats(&self, mut ws: Ws) {
        let mut answer = true; // the first frame was a stats request
        loop {
            if answer {
                let line = stats::snapshot(&self.counts()).to_string();
                if ws.send(Message::text(line)).await.is_err() {
                    return;
                }
            }
            answer = match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    matches!(parse_first(text_of(&text)), Ok(First::Stats))
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => false,
            };
        }
    }

    async fn serve_user(&self, mut ws: Ws, join: Join) {
        let group = self.group(join.group);
        let (inbox_sender, mut inbox) = unbounded_channel();
        let (ack, joined) = oneshot::channel();
        let request = GroupMsg::Join {
            user: join.user,
            inbox: inbox_sender,
            ack,
        };
        if group.send(request).is_err() {
            return;
        }
        match joined.await {
            Ok(Ok(())) => {}
            Ok(Err(reason)) => return refuse(ws, &reason).await,
            Err(_) => return,
        }
        let _connected = Connected::new(&self.connections);
        if ws
            .send(Message::text(json!({ "joined": join.user }).to_string()))
            .await
            .is_ok()
        {
            let mut user = User {
                id: join.user,
                group: &group,
                history: VecDeque::new(),
                history_len: join.history,
            };
            if let Err(err) = user.run(&mut ws, &mut inbox).await {
                eprintln!("msgbench-rust --chat-server: user {}: {err}", join.user);
            }
        }
        let _ = group.send(GroupMsg::Leave { user: join.user });
    }
}

/// Counts a joined user while it is connected, whichever way its task ends.
struct Connected<'a>(&'a AtomicU64);

impl<'a> Connected<'a> {
    fn new(counter: &'a AtomicU64) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Self(counter)
    }
}

impl Drop for Connected<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A joined user: its frames go to its group; what its group routes to it is kept
/// in its history (the last `history_len`) and written to its connection.
struct User<'a> {
    id: u64,
    group: &'a UnboundedSender<GroupMsg>,
    history: VecDeque<Message>,
    history_len: usize,
}

enum Event {
    Deliver(Option<Message>),
    Frame(Option<Result<Message, tokio_tungstenite::tungstenite::Error>>),
}

impl User<'_> {
    async fn run(
        &mut self,
        ws: &mut Ws,
        inbox: &mut UnboundedReceiver<Message>,
    ) -> Result<(), tokio_tungstenite::tungstenite::Error> {
        loop {
            // Deliveries first, then the user's own frames; both without a proc macro.
            let event = poll_fn(|cx| {
                if let Poll::Ready(message) = inbox.poll_recv(cx) {
                    return Poll::Ready(Event::Deliver(message));
                }
                ws.poll_next_unpin(cx).map(Event::Frame)
            })
            .await;
            match event {
                Event::Deliver(Some(message)) => {
                    self.keep(&message);
                    ws.feed(message).await?;
                    for _ in 1..DELIVERY_BATCH {
                        let Ok(message) = inbox.try_recv() else { break };
                        self.keep(&message);
                        ws.feed(message).await?;
                    }
                    ws.flush().await?;
                }
                Event::Frame(Some(Ok(message))) => match message {
                    Message::Text(_) | Message::Binary(_) => {
                        let route = GroupMsg::Route {
                            from: self.id,
                            message: detach(message),
                        };
                        if self.group.send(route).is_err() {
                            return Ok(());
                        }
                    }
                    // tungstenite queued the close frame's answer: send it.
                    Message::Close(_) => return ws.flush().await.or_else(closed_or),
                    // tungstenite answers pings itself.
                    Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
                },
                Event::Deliver(None) | Event::Frame(None) => return Ok(()),
                Event::Frame(Some(Err(err))) => return closed_or(err),
            }
        }
    }

    fn keep(&mut self, message: &Message) {
        if self.history_len == 0 {
            return;
        }
        if self.history.len() == self.history_len {
            self.history.pop_front();
        }
        // A clone shares the payload (a reference count), as Erlang's history and
        // mailbox share one refc binary.
        self.history.push_back(message.clone());
    }
}

/// A payload in a buffer of its own: tungstenite hands out slices of the
/// connection's read buffer, which a history would otherwise keep alive whole.
fn detach(message: Message) -> Message {
    match message {
        Message::Text(text) => Message::Text(Utf8Bytes::from(text.as_str().to_owned())),
        Message::Binary(bytes) => Message::Binary(bytes.to_vec().into()),
        other => other,
    }
}

/// A peer that vanished without a close frame is the end of a connection, not an error.
fn closed_or(
    err: tokio_tungstenite::tungstenite::Error,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    use tokio_tungstenite::tungstenite::Error;
    match err {
        Error::ConnectionClosed | Error::AlreadyClosed | Error::Protocol(_) => Ok(()),
        Error::Io(ref io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            ) =>
        {
            Ok(())
        }
        other => Err(other),
    }
}

fn text_of(text: &Utf8Bytes) -> &str {
    text.as_str()
}

/// Closes a connection that broke the protocol, saying why (close code 1008).
async fn refuse(mut ws: Ws, reason: &str) {
    eprintln!("msgbench-rust --chat-server: refused a connection: {reason}");
    // A close reason is limited to 123 bytes.
    let reason: String = reason.chars().take(120).collect();
    let _ = ws
        .close(Some(CloseFrame {
            code: CloseCode::Policy,
            reason: reason.into(),
        }))
        .await;
}

#[derive(Debug, PartialEq)]
pub struct Join {
    pub group: u64,
    pub user: u64,
    pub history: usize,
}

#[derive(Debug, PartialEq)]
pub enum First {
    Stats,
    Join(Join),
}

/// A connection's first frame: `{"stats": true}` or `{"join": {"group": G, "user": U, "history": H}}`.
pub fn parse_first(text: &str) -> Result<First, String> {
    let value: Value = serde_json::from_str(text).map_err(|_| {
        format!(
            "first frame {:.60?} is not JSON: expected {{\"join\": ...}} or {{\"stats\": true}}",
            text
        )
    })?;
    if value.get("stats") == Some(&Value::Bool(true)) {
        return Ok(First::Stats);
    }
    let Some(join) = value.get("join") else {
        return Err(format!(
            "first frame {:.60?}: expected {{\"join\": {{\"group\": G, \"user\": U, \"history\": H}}}} or {{\"stats\": true}}",
            text
        ));
    };
    let field = |name: &str| {
        join.get(name)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("join {join}: {name} must be a non-negative integer"))
    };
    Ok(First::Join(Join {
        group: field("group")?,
        user: field("user")?,
        history: usize::try_from(field("history")?)
            .map_err(|_| format!("join {join}: history is too large"))?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_join_and_stats() {
        assert_eq!(parse_first(r#"{"stats": true}"#), Ok(First::Stats));
        assert_eq!(
            parse_first(r#"{"join": {"group": 3, "user": 31, "history": 10}}"#),
            Ok(First::Join(Join {
                group: 3,
                user: 31,
                history: 10
            }))
        );
    }

    #[test]
    fn a_bad_first_frame_names_what_is_accepted() {
        let err = parse_first("hello").unwrap_err();
        assert!(err.contains("not JSON") && err.contains("join"), "{err}");
        let err = parse_first(r#"{"join": {"group": -1, "user": 1, "history": 1}}"#).unwrap_err();
        assert!(
            err.contains("group must be a non-negative integer"),
            "{err}"
        );
        let err = parse_first(r#"{"stats": false}"#).unwrap_err();
        assert!(err.contains("stats"), "{err}");
    }

    #[test]
    fn detached_payloads_keep_opcode_and_bytes() {
        let text = detach(Message::text("héllo"));
        assert_eq!(text, Message::text("héllo"));
        let binary = detach(Message::binary(vec![0u8, 1, 255]));
        assert_eq!(binary, Message::binary(vec![0u8, 1, 255]));
    }
}
