//! Clocks: monotonic wall time, the process's own CPU accounting, and peak RSS.

use std::fs;
use std::time::{Duration, Instant};

/// Wall and CPU time elapsed over one timed section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Elapsed {
    pub wall: Duration,
    pub cpu: Duration,
}

/// Takes both clocks at the start of a timed section. Reading them costs one
/// `getrusage` call, so start and stop belong outside the measured work.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    wall_start: Instant,
    cpu_start: Duration,
}

impl Stopwatch {
    pub fn start() -> Self {
        Self {
            cpu_start: process_cpu_time(),
            wall_start: Instant::now(),
        }
    }

    pub fn started_at(&self) -> Instant {
        self.wall_start
    }

    pub fn stop(&self) -> Elapsed {
        let wall = self.wall_start.elapsed();
        let cpu = process_cpu_time().saturating_sub(self.cpu_start);
        Elapsed { wall, cpu }
    }
}

/// User + system CPU time of the whole process (all threads), from getrusage.
pub fn process_cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we hand it.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    timeval_to_duration(usage.ru_utime) + timeval_to_duration(usage.ru_stime)
}

fn timeval_to_duration(time: libc::timeval) -> Duration {
    Duration::from_secs(time.tv_sec.max(0) as u64)
        + Duration::from_micros(time.tv_usec.max(0) as u64)
}

/// Peak resident set size of this process (VmHWM), in bytes; 0 if unreadable.
pub fn peak_rss_bytes() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| status_field_bytes(&status, "VmHWM:"))
        .unwrap_or(0)
}

/// Resident set size of this process now (VmRSS), in bytes; 0 if unreadable.
pub fn rss_bytes() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| status_field_bytes(&status, "VmRSS:"))
        .unwrap_or(0)
}

/// Resident set size now and its peak (VmRSS, VmHWM), in bytes, from one read of
/// /proc/self/status so that the peak is never below the current; 0s if unreadable.
pub fn rss_and_peak_bytes() -> (u64, u64) {
    let Ok(status) = fs::read_to_string("/proc/self/status") else {
        return (0, 0);
    };
    let field = |name| status_field_bytes(&status, name).unwrap_or(0);
    (field("VmRSS:"), field("VmHWM:"))
}

/// glibc malloc's own accounting (mallinfo2): bytes the program holds (small blocks
/// in use plus mmapped large ones) and bytes malloc holds from the kernel (arenas plus
/// mmapped). Empty where the allocator is not glibc's.
pub fn malloc_view() -> serde_json::Map<String, serde_json::Value> {
    let mut view = serde_json::Map::new();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes no arguments and returns a plain struct.
        let info = unsafe { libc::mallinfo2() };
        view.insert(
            "malloc_in_use_bytes".into(),
            (info.uordblks + info.hblkhd).into(),
        );
        view.insert(
            "malloc_system_bytes".into(),
            (info.arena + info.hblkhd).into(),
        );
    }
    view
}

/// Memory the kernel says is available for new allocations (MemAvailable in
/// /proc/meminfo), in bytes; None if unreadable.
pub fn mem_available_bytes() -> Option<u64> {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|meminfo| status_field_bytes(&meminfo, "MemAvailable:"))
}

/// A `Name:   1234 kB` field of /proc/<pid>/status (or /proc/meminfo), in bytes.
fn status_field_bytes(status: &str, field: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with(field))?;
    let mut words = line[field.len()..].split_whitespace();
    let number: u64 = words.next()?.parse().ok()?;
    let multiplier = match words.next() {
        Some("kB") => 1024,
        Some("mB") => 1024 * 1024,
        _ => 1,
    };
    Some(number * multiplier)
}

/// A duration as the protocol reports it: whole ns, a JSON integer.
pub fn nanos(duration: Duration) -> serde_json::Value {
    serde_json::Value::from(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vmhwm_in_kilobytes() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n";
        assert_eq!(status_field_bytes(status, "VmHWM:"), Some(1234 * 1024));
        assert_eq!(status_field_bytes(status, "Missing:"), None);
    }

    #[test]
    fn reads_this_process_peak_rss() {
        assert!(peak_rss_bytes() > 0);
        assert!(rss_bytes() > 0);
        assert!(rss_bytes() <= peak_rss_bytes());
        let (rss, peak) = rss_and_peak_bytes();
        assert!(0 < rss && rss <= peak);
        assert!(mem_available_bytes().unwrap() > 0);
    }

    #[test]
    fn cpu_time_advances_with_work() {
        let watch = Stopwatch::start();
        let mut x: u64 = 1;
        let until = Instant::now() + Duration::from_millis(30);
        while Instant::now() < until {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let elapsed = watch.stop();
        assert!(elapsed.wall >= Duration::from_millis(30));
        assert!(elapsed.cpu > Duration::ZERO);
    }
}
