//! Sample lines (spec/message.schema.json, docs/chat-server.md): the worker's own view
//! of itself about once a second while a measurement runs, from a thread of its own,
//! never from the measured tasks: RSS and its peak, CPU, glibc malloc's own
//! accounting, and whatever the worker adds (its runtime's workers and tasks).

use crate::measure::{malloc_view, process_cpu_time, rss_and_peak_bytes};
use crate::worker::Lines;
use serde_json::{Map, Value, json};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// How often a sampled measurement writes a sample line.
pub const PERIOD: Duration = Duration::from_secs(1);

/// Runs `work` while a thread writes a sample line to `lines` every `period`: the
/// first at once, the last after `work` returned. `extra` adds the worker's own
/// values to each (names ending in their unit).
pub fn sampled<T>(
    lines: &Lines,
    period: Duration,
    extra: impl Fn(&mut Map<String, Value>) + Sync,
    work: impl FnOnce() -> T,
) -> T {
    let start = Instant::now();
    let (stop, stopped) = mpsc::channel::<()>();
    let extra = &extra;
    let result = thread::scope(|scope| {
        scope.spawn(move || {
            loop {
                emit(lines, start, extra);
                match stopped.recv_timeout(period) {
                    Err(RecvTimeoutError::Timeout) => continue,
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        let result = work();
        drop(stop);
        result
    });
    emit(lines, start, extra);
    result
}

fn emit(lines: &Lines, start: Instant, extra: &impl Fn(&mut Map<String, Value>)) {
    let mut values = values();
    extra(&mut values);
    let line = json!({
        "type": "sample",
        "t_ms": start.elapsed().as_secs_f64() * 1000.0,
        "values": values,
    });
    // A worker whose stdout is gone fails on its result line; a sample need not.
    let _ = lines.write(&line.to_string());
}

/// One sample's values, each name ending in its unit.
pub fn values() -> Map<String, Value> {
    let (rss, peak) = rss_and_peak_bytes();
    let mut values = Map::new();
    values.insert("rss_bytes".into(), json!(rss));
    values.insert("peak_rss_bytes".into(), json!(peak));
    values.insert(
        "cpu_ns".into(),
        json!(u64::try_from(process_cpu_time().as_nanos()).unwrap_or(u64::MAX)),
    );
    values.extend(malloc_view());
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_come_first_during_and_last_with_units() {
        let mut out = Vec::<u8>::new();
        let answer = sampled(
            &Lines::new(&mut out),
            Duration::from_millis(20),
            |values| {
                values.insert("workers_count".into(), json!(2));
            },
            || {
                thread::sleep(Duration::from_millis(110));
                42
            },
        );
        assert_eq!(answer, 42);
        let text = String::from_utf8(out).unwrap();
        let samples: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        // At start, about every 20 ms during 110 ms, and one after.
        assert!(samples.len() >= 3, "{text}");
        let times: Vec<f64> = samples
            .iter()
            .map(|s| s["t_ms"].as_f64().unwrap())
            .collect();
        assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");
        assert!(
            times[0] < 20.0 && *times.last().unwrap() >= 110.0,
            "{times:?}"
        );
        for sample in &samples {
            assert_eq!(sample["type"], "sample");
            let values = sample["values"].as_object().unwrap();
            assert!(values["rss_bytes"].as_u64().unwrap() > 0, "{sample}");
            assert_eq!(values["workers_count"], 2, "{sample}");
            for name in values.keys() {
                let unit = ["_bytes", "_count", "_ns", "_ms", "_percent", "_per_s"];
                assert!(unit.iter().any(|u| name.ends_with(u)), "{name}");
            }
        }
    }
}
