//! chat on tokio: the coordinator, and one task per group, user and client, each
//! with an unbounded mpsc inbox.
//!
//! Setup: the coordinator creates every inbox and spawns the tasks into one
//! `JoinSet`; each task counts itself once it runs (the last one wakes the
//! coordinator), then users and groups wait on their inboxes and clients on a
//! `watch`. The coordinator plans the start (t_start) a little ahead, a lead as long
//! as the setup took, computes T and the drain deadline from it and publishes them on
//! the `watch`: every client wakes once, arms its timer for its first send (or for
//! t_start, in stress) and waits. So the 100,000 wake-ups happen before t_start,
//! not while the first messages are in flight.
//! When a client has sent its last message it reports its counts
//! (`Report::Stopped`) and from then on reports each batch of deliveries
//! (`Report::Late`), so the coordinator knows when received == sent. A stress client
//! stops when it sees the clock past T; a realistic client stops right after its
//! last send before T (its next one would fall at or after T), so that 100,000
//! clients do not all wake at T only to stop. Once T has passed, every client has
//! stopped and received == sent (or the drain deadline passed), the coordinator
//! sends every client `Finish`; the client tells its user to `Leave` and returns its
//! counts and latency log; the user returns; when all of a group's users have left,
//! the group's inbox closes and the group returns.
//!
//! tokio has no supervisors. What stands in is the coordinator owning every task's
//! `JoinHandle` in the `JoinSet`: while it waits for T and the drain it also polls
//! the set, so a group, user or client that panics (or returns early) ends the run
//! at once with an `internal` error naming the panic, instead of leaving the drain
//! to time out. It does not restart the task: a restarted user would have lost its
//! history and messages in flight, and the counts would no longer mean anything.

use super::{ChatParams, ChatRun, MessageKind, SENTENCE};
use crate::sampler;
use crate::variant::{Scheduler, tokio_runtime};
use msgbench_kit::histogram::{LatencyHistogram, LatencyLog};
use msgbench_kit::measure::{peak_rss_bytes, rss_bytes};
use msgbench_kit::protocol::WorkerError;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::{Notify, watch};
use tokio::task::{JoinError, JoinSet, yield_now};
use tokio::time::{Sleep, sleep_until};

/// What a message carries besides its envelope (stored, never read).
#[derive(Debug, Clone)]
#[allow(dead_code)]
enum Body {
    /// The seed's sentence: every text message points at the same bytes (the
    /// program's read-only data), nothing is copied or counted.
    Text(&'static str),
    /// The sentence and the send time, encoded into a buffer allocated for this
    /// message alone. The peer user's history and its client share the buffer
    /// (a reference count), as Erlang's history and mailbox share a large binary.
    Binary(Arc<[u8]>),
}

#[derive(Debug, Clone)]
struct Message {
    from_user: u32,
    from_group: u32,
    /// Send time: nanoseconds since the clients were released (monotonic clock).
    sent_ns: u64,
    /// Carried and stored in histories; the receiving client checks the envelope.
    #[allow(dead_code)]
    body: Body,
}

/// A user's inbox: requests from its client, deliveries from its group.
enum UserMsg {
    /// From the client: send `message` to the member at `to` in the group.
    Post { to: u32, message: Message },
    /// From the group: a message for this user.
    Deliver(Message),
    /// From the client at the end of the run.
    Leave,
}

/// A group's inbox: a message from a member for the member at `to`.
struct Route {
    to: u32,
    message: Message,
}

/// A client's inbox: deliveries from its user, `Finish` from the coordinator.
enum ClientMsg {
    Deliver(Message),
    Finish,
}

/// The coordinator's inbox, from the clients.
enum Report {
    /// At T: this client's counts so far.
    Stopped { sent: u64, received: u64 },
    /// After T: deliveries received since the last report.
    Late(u64),
}

/// What each task returns to the coordinator through the JoinSet.
enum Output {
    Client(Box<ClientStats>),
    User { stored: u64, history: usize },
    Group,
}

impl Output {
    fn kind(&self) -> &'static str {
        match self {
            Output::Client(_) => "client",
            Output::User { .. } => "user",
            Output::Group => "group",
        }
    }
}

/// The run's timeline, set when the clients are released.
#[derive(Debug, Clone, Copy)]
struct Clock {
    start: Instant,
    /// T: no client sends at or after it.
    deadline: Instant,
    /// T + drain_timeout_s: deliveries after it are not counted.
    drain_deadline: Instant,
}

impl Clock {
    fn nanos(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_nanos() as u64
    }
}

/// The shortest time between publishing the clock and t_start.
const MIN_START_LEAD: Duration = Duration::from_millis(10);

/// What every task shares during setup.
struct Shared {
    /// Tasks not yet running; the last one to start wakes the coordinator.
    unstarted: AtomicU64,
    all_started: Notify,
    users_started: AtomicU64,
    /// Clients that have the clock (and so have armed their first timer).
    clients_armed: AtomicU64,
}

impl Shared {
    fn started(&self) {
        if self.unstarted.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.all_started.notify_one();
        }
    }
}

pub(super) fn run(
    scheduler: Scheduler,
    params: &ChatParams,
    seed: u64,
) -> Result<ChatRun, WorkerError> {
    let runtime = tokio_runtime(scheduler, true)?;
    let params = params.clone();
    sampler::watch(runtime.metrics());
    // The coordinator is a task like the others, scheduled by the same workers.
    let outcome = runtime.block_on(async move { tokio::spawn(coordinate(params, seed)).await });
    sampler::unwatch();
    drop(runtime);
    outcome.map_err(|err| WorkerError::internal(format!("the chat coordinator failed: {err}")))?
}

enum CoordinatorEvent {
    Report(Option<Report>),
    Ended(Result<Output, JoinError>),
    EndOfT,
    DrainTimeout,
}

/// The run, phase by phase: setup (spawn every task, wait until all run), release
/// (publish the clock), T and the drain, shutdown (collect every task's counts).
async fn coordinate(params: ChatParams, seed: u64) -> Result<ChatRun, WorkerError> {
    let users = params.users();
    let task_count = params.groups + 2 * users;

    let setup_start = Instant::now();
    let shared = Arc::new(Shared {
        unstarted: AtomicU64::new(task_count),
        all_started: Notify::new(),
        users_started: AtomicU64::new(0),
        clients_armed: AtomicU64::new(0),
    });
    let (release, released) = watch::channel(None::<Clock>);
    let (reporter, reports) = unbounded_channel();
    let (mut tasks, finishers) = spawn_tasks(&params, seed, &shared, reporter, released);
    shared.all_started.notified().await;
    let setup = setup_start.elapsed();

    let clock = release_clients(&params, setup, &release, &shared).await;
    let (drained, rss_at_end_of_t) = t_and_drain(&clock, users, reports, &mut tasks).await?;
    let (totals, latency) = shut_down(finishers, tasks).await?;

    // T as it happened: T, or later if a client noticed T late (stress). Realistic
    // clients stop before T, after their last send.
    let deadline = clock.deadline;
    let sending_ended = totals.stopped_at.map_or(deadline, |at| at.max(deadline));
    Ok(ChatRun {
        setup,
        send_window: sending_ended - clock.start,
        drain: totals
            .last_delivery
            .map_or(Duration::ZERO, |at| at.saturating_duration_since(deadline)),
        drained,
        sent: totals.sent,
        received: totals.received,
        received_in_window: totals.received_in_window,
        cross_group: totals.cross_group,
        self_deliveries: totals.self_deliveries,
        users: shared.users_started.load(Ordering::Relaxed),
        stored: totals.stored,
        longest_history: totals.longest_history,
        latency,
        tasks: 1 + task_count,
        rss_at_end_of_t,
        peak_rss: peak_rss_bytes(),
    })
}

/// Setup: a group task per group, a user and a client task per member. Returns the
/// tasks and each client's inbox, through which shutdown tells it to finish. Only
/// the clients report; only the users write to the groups.
fn spawn_tasks(
    params: &ChatParams,
    seed: u64,
    shared: &Arc<Shared>,
    reporter: UnboundedSender<Report>,
    released: watch::Receiver<Option<Clock>>,
) -> (JoinSet<Output>, Vec<UnboundedSender<ClientMsg>>) {
    let groups = params.groups as u32;
    let members = params.clients_per_group as u32;
    let mut tasks = JoinSet::new();
    let mut finishers = Vec::with_capacity(params.users() as usize);
    for group in 0..groups {
        let (group_inbox_tx, group_inbox) = unbounded_channel();
        let mut member_inboxes = Vec::with_capacity(members as usize);
        for index in 0..members {
            let id = group * members + index;
            let (user_tx, user_inbox) = unbounded_channel();
            let (client_tx, client_inbox) = unbounded_channel();
            let user = User {
                capacity: params.history,
                history: VecDeque::new(),
                stored: 0,
                group: group_inbox_tx.clone(),
                client: client_tx.clone(),
                inbox: user_inbox,
            };
            tasks.spawn(run_user(user, Arc::clone(shared)));
            let client = Client {
                user: id,
                group,
                index,
                members,
                message: params.message,
                think: params.think,
                listener_delay: params.listener_delay,
                to_user: user_tx.clone(),
                inbox: client_inbox,
                reports: reporter.clone(),
                rng: SmallRng::seed_from_u64(
                    seed ^ u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                stats: ClientStats::default(),
                stopped: false,
                unreported: 0,
            };
            tasks.spawn(run_client(client, Arc::clone(shared), released.clone()));
            member_inboxes.push(user_tx);
            finishers.push(client_tx);
        }
        tasks.spawn(run_group(
            member_inboxes.into_boxed_slice(),
            group_inbox,
            Arc::clone(shared),
        ));
    }
    (tasks, finishers)
}

/// Release: publishes the clock, t_start at least as far ahead as setup took, and
/// waits until t_start.
async fn release_clients(
    params: &ChatParams,
    setup: Duration,
    release: &watch::Sender<Option<Clock>>,
    shared: &Shared,
) -> Clock {
    let users = params.users();
    let start = Instant::now() + setup.max(MIN_START_LEAD);
    let deadline = start + params.duration;
    let clock = Clock {
        start,
        deadline,
        drain_deadline: deadline + params.drain_timeout,
    };
    release.send_replace(Some(clock));
    sleep_until(start.into()).await;
    let armed = shared.clients_armed.load(Ordering::Relaxed);
    if armed < users {
        eprintln!(
            "msgbench-rust chat: {} of {users} clients took the clock after t_start",
            users - armed
        );
    }
    clock
}

/// T and the drain: count the clients' reports until T has passed, every client
/// has stopped and received == sent, or until the drain deadline. A task that
/// ends now (a panic) ends the run. Returns whether the run drained, and the RSS
/// once every client had stopped after T.
async fn t_and_drain(
    clock: &Clock,
    users: u64,
    mut reports: UnboundedReceiver<Report>,
    tasks: &mut JoinSet<Output>,
) -> Result<(bool, u64), WorkerError> {
    let mut end_of_t = pin!(sleep_until(clock.deadline.into()));
    let mut drain_timer = pin!(sleep_until(clock.drain_deadline.into()));
    let mut past_t = false;
    let (mut stopped, mut sent, mut received) = (0u64, 0u64, 0u64);
    let mut rss_at_end_of_t = None;
    let drained = loop {
        if past_t && stopped == users {
            rss_at_end_of_t.get_or_insert_with(rss_bytes);
            if received == sent {
                break true;
            }
        }
        let event = poll_fn(|cx| {
            if let Poll::Ready(report) = reports.poll_recv(cx) {
                return Poll::Ready(CoordinatorEvent::Report(report));
            }
            if let Poll::Ready(Some(ended)) = tasks.poll_join_next(cx) {
                return Poll::Ready(CoordinatorEvent::Ended(ended));
            }
            if !past_t && end_of_t.as_mut().poll(cx).is_ready() {
                return Poll::Ready(CoordinatorEvent::EndOfT);
            }
            if drain_timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(CoordinatorEvent::DrainTimeout);
            }
            Poll::Pending
        })
        .await;
        match event {
            CoordinatorEvent::Report(Some(Report::Stopped {
                sent: client_sent,
                received: client_received,
            })) => {
                stopped += 1;
                sent += client_sent;
                received += client_received;
            }
            CoordinatorEvent::Report(Some(Report::Late(late))) => received += late,
            CoordinatorEvent::EndOfT => past_t = true,
            CoordinatorEvent::Report(None) => {
                return Err(WorkerError::internal(
                    "every chat client ended before the drain",
                ));
            }
            CoordinatorEvent::Ended(ended) => return Err(ended_early(ended)),
            CoordinatorEvent::DrainTimeout => break false,
        }
    };
    Ok((drained, rss_at_end_of_t.unwrap_or_else(rss_bytes)))
}

/// Shutdown: each client returns its counts and tells its user to leave; every
/// task's counts are added up, the clients' latencies merged.
async fn shut_down(
    finishers: Vec<UnboundedSender<ClientMsg>>,
    mut tasks: JoinSet<Output>,
) -> Result<(Totals, LatencyHistogram), WorkerError> {
    for finisher in finishers {
        let _ = finisher.send(ClientMsg::Finish);
    }
    let mut totals = Totals::default();
    let mut latency = LatencyHistogram::new();
    while let Some(ended) = tasks.join_next().await {
        match ended {
            Ok(Output::Client(stats)) => {
                totals.add(&stats);
                latency.merge(&stats.latency);
            }
            Ok(Output::User { stored, history }) => {
                totals.stored += stored;
                totals.longest_history = totals.longest_history.max(history);
            }
            Ok(Output::Group) => {}
            Err(error) => return Err(task_failed(&error)),
        }
    }
    Ok((totals, latency))
}

fn task_failed(error: &JoinError) -> WorkerError {
    WorkerError::internal(format!(
        "a chat task (group, user or client) failed: {error}"
    ))
}

fn ended_early(ended: Result<Output, JoinError>) -> WorkerError {
    match ended {
        Err(error) => task_failed(&error),
        Ok(output) => WorkerError::internal(format!(
            "a chat {} task ended before the drain was over",
            output.kind()
        )),
    }
}

/// The clients' and users' counts, added up after the run.
#[derive(Default)]
struct Totals {
    sent: u64,
    received: u64,
    received_in_window: u64,
    cross_group: u64,
    self_deliveries: u64,
    stored: u64,
    longest_history: usize,
    stopped_at: Option<Instant>,
    last_delivery: Option<Instant>,
}

impl Totals {
    fn add(&mut self, stats: &ClientStats) {
        self.sent += stats.sent;
        self.received += stats.received;
        self.received_in_window += stats.received_in_window;
        self.cross_group += stats.cross_group;
        self.self_deliveries += stats.self_deliveries;
        self.stopped_at = self.stopped_at.max(stats.stopped_at);
        self.last_delivery = self.last_delivery.max(stats.last_delivery);
    }
}

/// A group: routes each member's message to the member it names.
async fn run_group(
    members: Box<[UnboundedSender<UserMsg>]>,
    mut inbox: UnboundedReceiver<Route>,
    shared: Arc<Shared>,
) -> Output {
    shared.started();
    drop(shared);
    // Ends when every member has left (each held a Sender to this inbox).
    while let Some(Route { to, message }) = inbox.recv().await {
        if let Some(member) = members.get(to as usize) {
            let _ = member.send(UserMsg::Deliver(message));
        }
    }
    Output::Group
}

struct User {
    /// `history`: how many messages to keep.
    capacity: usize,
    /// The last `capacity` messages delivered, oldest first: a ring buffer that
    /// grows as messages arrive, up to `capacity`, then replaces the oldest.
    history: VecDeque<Message>,
    stored: u64,
    group: UnboundedSender<Route>,
    client: UnboundedSender<ClientMsg>,
    inbox: UnboundedReceiver<UserMsg>,
}

impl User {
    fn keep(&mut self, message: &Message) {
        if self.capacity == 0 {
            return;
        }
        if self.history.len() == self.capacity {
            self.history.pop_front();
        }
        self.history.push_back(message.clone());
        self.stored += 1;
    }
}

/// A user: passes its client's messages to its group, keeps the group's deliveries
/// in its history and passes them to its client.
async fn run_user(mut user: User, shared: Arc<Shared>) -> Output {
    shared.users_started.fetch_add(1, Ordering::Relaxed);
    shared.started();
    drop(shared);
    while let Some(request) = user.inbox.recv().await {
        match request {
            UserMsg::Post { to, message } => {
                let _ = user.group.send(Route { to, message });
            }
            UserMsg::Deliver(message) => {
                user.keep(&message);
                let _ = user.client.send(ClientMsg::Deliver(message));
            }
            UserMsg::Leave => break,
        }
    }
    Output::User {
        stored: user.stored,
        history: user.history.len(),
    }
}

/// A client's own counts: it counts what it sends and what reaches it.
#[derive(Debug, Default)]
struct ClientStats {
    sent: u64,
    received: u64,
    received_in_window: u64,
    cross_group: u64,
    self_deliveries: u64,
    latency: LatencyLog,
    stopped_at: Option<Instant>,
    last_delivery: Option<Instant>,
}

struct Client {
    user: u32,
    group: u32,
    /// This client's user's place among the group's members, and their number.
    index: u32,
    members: u32,
    message: MessageKind,
    think: Duration,
    listener_delay: Duration,
    to_user: UnboundedSender<UserMsg>,
    inbox: UnboundedReceiver<ClientMsg>,
    reports: UnboundedSender<Report>,
    rng: SmallRng,
    stats: ClientStats,
    /// Set once this client has sent its `Stopped` report (it sends no more).
    stopped: bool,
    /// Deliveries since `Stopped` not yet reported.
    unreported: u64,
}

/// Whether the client goes on or was told to finish (or lost its inbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Finish,
}

enum ClientEvent {
    Inbox(Option<ClientMsg>),
    Timer,
}

/// Waits for whichever comes first: something in the inbox, or the timer. Neither
/// blocks the other: a delivery is taken as soon as it arrives.
async fn next_event(
    inbox: &mut UnboundedReceiver<ClientMsg>,
    mut timer: Pin<&mut Sleep>,
) -> ClientEvent {
    poll_fn(|cx| {
        if let Poll::Ready(message) = inbox.poll_recv(cx) {
            return Poll::Ready(ClientEvent::Inbox(message));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(ClientEvent::Timer);
        }
        Poll::Pending
    })
    .await
}

async fn run_client(
    mut client: Client,
    shared: Arc<Shared>,
    mut released: watch::Receiver<Option<Clock>>,
) -> Output {
    shared.started();
    let clock = match released.wait_for(Option::is_some).await {
        Ok(clock) => *clock,
        Err(_) => None,
    };
    drop(released);
    if let Some(clock) = clock {
        shared.clients_armed.fetch_add(1, Ordering::Relaxed);
        drop(shared);
        client.run(&clock).await;
    }
    let _ = client.to_user.send(UserMsg::Leave);
    Output::Client(Box::new(client.stats))
}

impl Client {
    async fn run(&mut self, clock: &Clock) {
        let flow = if !self.think.is_zero() {
            self.send_every_think(clock).await
        } else if self.listener_delay.is_zero() {
            self.send_and_take(clock).await
        } else {
            self.send_and_listen(clock).await
        };
        self.stats.stopped_at = Some(Instant::now());
        let _ = self.reports.send(Report::Stopped {
            sent: self.stats.sent,
            received: self.stats.received,
        });
        self.stopped = true;
        if flow == Flow::Continue {
            self.drain(clock).await;
        }
    }

    /// Stress, listener_delay_ms = 0: send, take whatever deliveries are already
    /// waiting, let the other tasks run (`yield_now`: an unbounded send never
    /// waits, so without it a client would never give up its thread), again.
    async fn send_and_take(&mut self, clock: &Clock) -> Flow {
        sleep_until(clock.start.into()).await;
        loop {
            let now = Instant::now();
            if now >= clock.deadline {
                return Flow::Continue;
            }
            self.send(clock, now);
            if self.take_waiting(clock) == Flow::Finish {
                return Flow::Finish;
            }
            yield_now().await;
        }
    }

    /// Stress, listener_delay_ms > 0: send, then take deliveries as they come for
    /// listener_delay_ms (cut short at T), again.
    async fn send_and_listen(&mut self, clock: &Clock) -> Flow {
        let mut timer = pin!(sleep_until(clock.start.into()));
        timer.as_mut().await;
        loop {
            let now = Instant::now();
            if now >= clock.deadline {
                return Flow::Continue;
            }
            self.send(clock, now);
            let listen_until = (now + self.listener_delay).min(clock.deadline);
            timer.as_mut().reset(listen_until.into());
            loop {
                match next_event(&mut self.inbox, timer.as_mut()).await {
                    ClientEvent::Inbox(Some(message)) => {
                        if self.take(message, clock) == Flow::Finish {
                            return Flow::Finish;
                        }
                    }
                    ClientEvent::Inbox(None) => return Flow::Finish,
                    ClientEvent::Timer => break,
                }
            }
        }
    }

    /// Realistic: send every think_ms, the first time at a random phase within the
    /// first think_ms, on an absolute schedule (a late timer does not delay the
    /// following sends); take deliveries as they come in between. One tokio `Sleep`
    /// per client, reset after each send. Stops after the last send before T.
    async fn send_every_think(&mut self, clock: &Clock) -> Flow {
        let think_ns = self.think.as_nanos() as u64;
        let mut next_send = clock.start + Duration::from_nanos(self.rng.random_range(0..think_ns));
        if next_send >= clock.deadline {
            return Flow::Continue;
        }
        let mut timer = pin!(sleep_until(next_send.into()));
        loop {
            match next_event(&mut self.inbox, timer.as_mut()).await {
                ClientEvent::Inbox(Some(message)) => {
                    if self.take(message, clock) == Flow::Finish {
                        return Flow::Finish;
                    }
                }
                ClientEvent::Inbox(None) => return Flow::Finish,
                ClientEvent::Timer => {
                    let now = Instant::now();
                    if now >= clock.deadline {
                        return Flow::Continue;
                    }
                    self.send(clock, now);
                    next_send += self.think;
                    if next_send >= clock.deadline {
                        return Flow::Continue;
                    }
                    timer.as_mut().reset(next_send.into());
                }
            }
        }
    }

    /// After T: take deliveries until `Finish`, reporting each batch.
    async fn drain(&mut self, clock: &Clock) {
        while let Some(message) = self.inbox.recv().await {
            let mut flow = self.take(message, clock);
            if flow == Flow::Continue {
                flow = self.take_waiting(clock);
            }
            if self.unreported > 0 {
                let _ = self.reports.send(Report::Late(self.unreported));
                self.unreported = 0;
            }
            if flow == Flow::Finish {
                return;
            }
        }
    }

    /// Sends one message to a member of the group other than this client's user,
    /// picked uniformly at random.
    fn send(&mut self, clock: &Clock, now: Instant) {
        let pick = self.rng.random_range(0..self.members - 1);
        let to = if pick >= self.index { pick + 1 } else { pick };
        let sent_ns = clock.nanos(now);
        let body = match self.message {
            MessageKind::Text => Body::Text(SENTENCE),
            MessageKind::Binary => Body::Binary(encode(sent_ns)),
        };
        let message = Message {
            from_user: self.user,
            from_group: self.group,
            sent_ns,
            body,
        };
        if self.to_user.send(UserMsg::Post { to, message }).is_ok() {
            self.stats.sent += 1;
        }
    }

    fn take(&mut self, message: ClientMsg, clock: &Clock) -> Flow {
        match message {
            ClientMsg::Deliver(message) => {
                self.deliver(&message, clock);
                Flow::Continue
            }
            ClientMsg::Finish => Flow::Finish,
        }
    }

    /// Takes every message already in the inbox, without waiting.
    fn take_waiting(&mut self, clock: &Clock) -> Flow {
        loop {
            match self.inbox.try_recv() {
                Ok(message) => {
                    if self.take(message, clock) == Flow::Finish {
                        return Flow::Finish;
                    }
                }
                Err(TryRecvError::Empty) => return Flow::Continue,
                Err(TryRecvError::Disconnected) => return Flow::Finish,
            }
        }
    }

    /// Counts a delivery and records its latency. After the drain deadline
    /// nothing is counted: the run is over.
    fn deliver(&mut self, message: &Message, clock: &Clock) {
        let now = Instant::now();
        if now > clock.drain_deadline {
            return;
        }
        let stats = &mut self.stats;
        stats.received += 1;
        if now < clock.deadline {
            stats.received_in_window += 1;
        }
        if self.stopped {
            self.unreported += 1;
        }
        if message.from_group != self.group {
            stats.cross_group += 1;
        }
        if message.from_user == self.user {
            stats.self_deliveries += 1;
        }
        stats
            .latency
            .record(clock.nanos(now).saturating_sub(message.sent_ns));
        stats.last_delivery = Some(now);
    }
}

/// The binary message: the sentence and the send time (little-endian nanoseconds),
/// in one buffer allocated for this message (an exact-size iterator collects into
/// an `Arc<[u8]>` with a single allocation).
fn encode(sent_ns: u64) -> Arc<[u8]> {
    SENTENCE
        .as_bytes()
        .iter()
        .copied()
        .chain(sent_ns.to_le_bytes())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_messages_hold_the_sentence_and_the_time() {
        let encoded = encode(0x0102_0304_0506_0708);
        assert_eq!(&encoded[..SENTENCE.len()], SENTENCE.as_bytes());
        assert_eq!(
            u64::from_le_bytes(encoded[SENTENCE.len()..].try_into().unwrap()),
            0x0102_0304_0506_0708
        );
        assert!(!Arc::ptr_eq(&encode(1), &encode(1)));
    }

    #[test]
    fn history_is_a_bounded_ring() {
        let (group, _group_inbox) = unbounded_channel();
        let (client, _client_inbox) = unbounded_channel();
        let (_user_tx, inbox) = unbounded_channel();
        let mut user = User {
            capacity: 3,
            history: VecDeque::new(),
            stored: 0,
            group,
            client,
            inbox,
        };
        for sent_ns in 0..10 {
            user.keep(&Message {
                from_user: 1,
                from_group: 0,
                sent_ns,
                body: Body::Text(SENTENCE),
            });
        }
        assert_eq!(user.stored, 10);
        let kept: Vec<u64> = user.history.iter().map(|m| m.sent_ns).collect();
        assert_eq!(kept, [7, 8, 9]);
        assert!(user.history.capacity() < 8);
    }
}
