//! The open loop's clock (echo at `rate` > 0): when each message is due, and the
//! thread that says so.
//!
//! tokio's timer cannot pace: its wheel counts whole milliseconds, so at 20,000
//! messages/s a `sleep_until` would release them in bursts of 20, a millisecond
//! late on average. One OS thread per client therefore sleeps with `nanosleep`
//! (`std::thread::sleep`) at a timer slack of 1 ns until each message is due, and
//! then gives every socket's writer task a permit (a tokio `Semaphore`) to send it.
//! The thread never spins: on two cores a spinning pacer would take the CPU the
//! tasks and the server need, and a late wake-up is charged anyway, since each
//! latency runs from its message's intended time, not from the permit.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// One socket's plan: message `index` (from 0) is due at `start + index * interval`,
/// whether or not earlier echoes have returned.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    start: Instant,
    interval_ns: f64,
}

impl Schedule {
    /// A socket's share of `rate` round trips per second offered by `sockets`
    /// sockets together, all starting at `start`.
    pub fn new(start: Instant, rate: f64, sockets: usize) -> Self {
        Self {
            start,
            interval_ns: sockets as f64 * 1e9 / rate,
        }
    }

    /// Message `index`'s intended send time.
    pub fn at(&self, index: u64) -> Instant {
        self.start + Duration::from_nanos((index as f64 * self.interval_ns).round() as u64)
    }

    /// The time between two messages of one socket.
    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ns.ceil() as u64)
    }
}

/// A stopped pacer notices within this much, however slow the rate.
const MAX_SLEEP: Duration = Duration::from_millis(50);

/// The pacer thread and the permits it hands out. It waits for `release`; dropping
/// it stops the thread, closes the permits (a writer waiting for one returns) and
/// joins the thread.
pub struct Pacer {
    permits: Vec<Arc<Semaphore>>,
    stop: Arc<AtomicBool>,
    start: Option<mpsc::Sender<Instant>>,
    thread: Option<JoinHandle<()>>,
}

impl Pacer {
    /// A pacer for `sockets` sockets of `messages` messages each at `rate` in all.
    pub fn new(rate: f64, sockets: usize, messages: u64) -> io::Result<Self> {
        let permits: Vec<Arc<Semaphore>> =
            (0..sockets).map(|_| Arc::new(Semaphore::new(0))).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let (start, started) = mpsc::channel::<Instant>();
        let thread = {
            let permits = permits.clone();
            let stop = Arc::clone(&stop);
            thread::Builder::new().name("pacer".into()).spawn(move || {
                precise_sleeps();
                // No start: the run failed before its release.
                let Ok(start) = started.recv() else { return };
                let schedule = Schedule::new(start, rate, sockets);
                for index in 0..messages {
                    if !sleep_until(schedule.at(index), &stop) {
                        return;
                    }
                    for socket in &permits {
                        socket.add_permits(1);
                    }
                }
            })?
        };
        Ok(Self {
            permits,
            stop,
            start: Some(start),
            thread: Some(thread),
        })
    }

    /// Socket `socket`'s permits: one per message due.
    pub fn permits(&self, socket: usize) -> Arc<Semaphore> {
        Arc::clone(&self.permits[socket])
    }

    /// Starts the schedule at `start` (message 0 of every socket is due then).
    pub fn release(&mut self, start: Instant) {
        if let Some(sender) = self.start.take() {
            // The thread waits for it; it cannot have gone.
            let _ = sender.send(start);
        }
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.start = None;
        for socket in &self.permits {
            socket.close();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Sets the calling thread's timer slack to 1 ns: a `nanosleep` then wakes within
/// the kernel's wake-up latency, not up to 50 µs (the default slack) after it. A
/// failure leaves the default: the pacer is later, which the latencies show.
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Sleeps until `due` (true) or until `stop` is set (false).
fn sleep_until(due: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        thread::sleep((due - now).min(MAX_SLEEP));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_split_over_the_sockets() {
        let start = Instant::now();
        let schedule = Schedule::new(start, 3000.0, 4); // 750/s each: 1.333 ms apart
        assert_eq!(schedule.at(0), start);
        assert_eq!(schedule.at(1) - start, Duration::from_nanos(1_333_333));
        assert_eq!(schedule.at(3) - start, Duration::from_millis(4));
        assert_eq!(schedule.at(750) - start, Duration::from_secs(1));
    }

    #[test]
    fn permits_come_when_due_and_stop_with_the_pacer() {
        let rate = 1000.0; // 2 sockets: 500/s each, 2 ms apart
        let mut pacer = Pacer::new(rate, 2, 10).unwrap();
        let permits = pacer.permits(1);
        thread::sleep(Duration::from_millis(5));
        assert_eq!(permits.available_permits(), 0, "before the release");
        pacer.release(Instant::now());
        let waited = Instant::now();
        while permits.available_permits() < 10 && waited.elapsed() < Duration::from_secs(5) {
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(5));
        assert_eq!(permits.available_permits(), 10, "one per message, no more");
        assert_eq!(pacer.permits(0).available_permits(), 10);

        // Never a permit before its message is due (every 2 ms from the start).
        let mut slow = Pacer::new(rate, 2, 1000).unwrap();
        let held = slow.permits(0);
        let start = Instant::now();
        slow.release(start);
        thread::sleep(Duration::from_millis(9));
        let given = held.available_permits() as u128;
        let due = start.elapsed().as_millis() / 2 + 1;
        assert!(given >= 1 && given <= due, "{given} permits, {due} due");
        let stopped = Instant::now();
        drop(slow);
        assert!(stopped.elapsed() < MAX_SLEEP * 2);
        assert!(held.is_closed());
    }
}
