//! The answer to `{"stats": true}` (docs/chat-server.md): the process's own RSS and
//! CPU from the kernel, and the runtime's view: tokio's stable RuntimeMetrics and
//! glibc malloc's own accounting (the server uses the system allocator).

use msgbench_kit::measure::{malloc_view, process_cpu_time, rss_and_peak_bytes};
use serde_json::{Value, json};

/// Counts the server keeps itself.
pub struct ServerCounts {
    pub connections: u64,
    pub groups: u64,
}

pub fn snapshot(counts: &ServerCounts) -> Value {
    let metrics = tokio::runtime::Handle::current().metrics();
    let alive_tasks = metrics.num_alive_tasks() as u64;
    let mut runtime = json!({
        "workers_count": metrics.num_workers(),
        "alive_tasks_count": alive_tasks,
        "global_queue_depth_count": metrics.global_queue_depth(),
        "groups_count": counts.groups,
    });
    if let Value::Object(map) = &mut runtime {
        let malloc = malloc_view();
        // The runtime's total (the load generator's runtime_memory_bytes): what the
        // allocator holds from the kernel, as Erlang's total and Go's Sys are.
        if let Some(total) = malloc.get("malloc_system_bytes") {
            map.insert("total_bytes".into(), total.clone());
        }
        map.extend(malloc);
    }
    let (rss, peak_rss) = rss_and_peak_bytes();
    json!({
        "peak_rss_bytes": peak_rss,
        "rss_bytes": rss,
        "cpu_ns": u64::try_from(process_cpu_time().as_nanos()).unwrap_or(u64::MAX),
        "connections": counts.connections,
        "processes": alive_tasks,
        "runtime": runtime,
    })
}
