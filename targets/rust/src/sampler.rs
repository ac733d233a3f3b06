//! What this worker adds to the kit's sample lines (msgbench_kit::sample): while a
//! tokio runtime is watched, its workers and alive tasks.

use serde_json::{Map, Value, json};
use std::sync::Mutex;
use tokio::runtime::RuntimeMetrics;

/// The runtime whose tasks the samples count (set by the workload that built it).
static WATCHED: Mutex<Option<RuntimeMetrics>> = Mutex::new(None);

/// Counts `metrics`' tasks in the samples until `unwatch`.
pub fn watch(metrics: RuntimeMetrics) {
    *WATCHED.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(metrics);
}

pub fn unwatch() {
    *WATCHED.lock().unwrap_or_else(|poison| poison.into_inner()) = None;
}

/// The watched runtime's workers and alive tasks, if one is watched.
pub fn runtime_values(values: &mut Map<String, Value>) {
    if let Some(metrics) = WATCHED
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .as_ref()
    {
        values.insert("workers_count".into(), json!(metrics.num_workers()));
        values.insert("alive_tasks_count".into(), json!(metrics.num_alive_tasks()));
    }
}
