//! Drives the worker binary through the real protocol: one request on stdin,
//! JSON lines on stdout, exit status 0.

mod common;

use common::{WORKER, assert_error_line, run_worker};
use serde_json::{Value, json};
use std::process::Command;

/// Runs the worker on `request` and returns its stdout lines, parsed.
fn exchange(request: &str) -> Vec<Value> {
    run_worker(Command::new(WORKER), request)
}

/// A request as the harness sends it: the variant's options from target.toml.
fn request(workload: &str, variant: &str, params: Value) -> String {
    let options = match variant {
        "current_thread" => json!({"runtime": "current_thread"}),
        "tuned" => json!({"receive": "many"}),
        "threads" => json!({"runtime": "os_threads"}),
        _ => json!({}),
    };
    json!({"workload": workload, "variant": variant, "options": options, "params": params,
           "repetition": 1})
    .to_string()
}

/// The spec's raw facts of a workload that are never optional. A fact optional by a
/// rule on the parameters (chat's server-only facts: `"server != 'ws'"`) is left to
/// the harness, which evaluates the rule (msgbench/spec.py).
fn required_facts(spec: &Value) -> Vec<String> {
    spec["measured"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, fact)| fact["optional"].is_null() || fact["optional"] == false)
        .map(|(name, _)| name.clone())
        .collect()
}

fn ring_params(n: u64, m: u64) -> Value {
    json!({"n": n, "m": m, "payload": "BOO!"})
}

fn fanin_params(senders: u64, size: u64) -> Value {
    json!({
        "senders": senders,
        "duration_ms": 20,
        "mix": [{"percent": 100, "kind": "message", "size": size}],
        "method": "msgbench",
        "memory_limit_mb": 8192
    })
}

fn chat_params(groups: u64, clients_per_group: u64) -> Value {
    json!({
        "groups": groups,
        "clients_per_group": clients_per_group,
        "duration_s": 0.2,
        "think_ms": 0,
        "listener_delay_ms": 0,
        "message": "text",
        "history": 10,
        "drain_timeout_s": 5
    })
}

/// Checks hello, then sample lines only (chat's), then exactly one final line, and
/// returns the final line.
fn final_line(lines: &[Value], variant: &str) -> Value {
    assert!(lines.len() >= 2, "{lines:?}");
    assert!(
        lines[1..lines.len() - 1]
            .iter()
            .all(|line| line["type"] == "sample"),
        "{lines:?}"
    );
    let hello = &lines[0];
    assert_eq!(hello["type"], "hello");
    assert_eq!(hello["target"], "rust");
    assert_eq!(hello["variant"], variant);
    assert!(hello["runtime_version"].as_str().unwrap().contains("tokio"));
    lines[lines.len() - 1].clone()
}

fn assert_error(lines: &[Value], variant: &str, kind: &str, mentions: &str) {
    assert_error_line(&final_line(lines, variant), kind, mentions);
}

#[test]
fn ring_result_has_every_metric_and_count() {
    for variant in ["default", "current_thread"] {
        let lines = exchange(&request("ring", variant, ring_params(100, 3)));
        let result = final_line(&lines, variant);
        assert_eq!(result["type"], "result");
        let spec: Value =
            serde_json::from_str(include_str!("../../../spec/workloads/ring.json")).unwrap();
        for fact in required_facts(&spec) {
            assert!(
                !result["measured"][&fact].is_null(),
                "{variant}: {fact} missing"
            );
        }
        assert!(
            result.get("metrics").is_none(),
            "the harness derives the metrics"
        );
        assert_eq!(
            result["verify"],
            json!({"hops": 300, "laps": 3, "links": 100})
        );
    }
}

#[test]
fn fanin_result_has_every_metric_and_count() {
    let spec: Value =
        serde_json::from_str(include_str!("../../../spec/workloads/fanin.json")).unwrap();
    for variant in ["default", "current_thread", "tuned", "threads"] {
        for size in [1, 100] {
            let lines = exchange(&request("fanin", variant, fanin_params(2, size)));
            let result = final_line(&lines, variant);
            assert_eq!(result["type"], "result", "{result}");
            for fact in required_facts(&spec) {
                assert!(
                    !result["measured"][&fact].is_null(),
                    "{variant}: {fact} missing"
                );
            }
            let verify = &result["verify"];
            assert!(verify["sent_message"].as_u64().unwrap() > 0);
            assert_eq!(verify["received_message"], verify["sent_message"]);
            assert_eq!(verify["sent_exit_signal"], 0);
            assert_eq!(verify["received_exit_signal"], 0);
            assert_eq!(verify["receiver_alive"], 1);
        }
    }
}

#[test]
fn chat_result_has_every_metric_and_verifies() {
    let spec: Value =
        serde_json::from_str(include_str!("../../../spec/workloads/chat.json")).unwrap();
    for variant in ["default", "current_thread"] {
        for (message, think_ms) in [("text", 0), ("binary", 0), ("text", 40)] {
            let mut params = chat_params(3, 4);
            params["message"] = json!(message);
            params["think_ms"] = json!(think_ms);
            let lines = exchange(&request("chat", variant, params));
            let result = final_line(&lines, variant);
            assert_eq!(result["type"], "result", "{result}");
            for fact in required_facts(&spec) {
                assert!(
                    !result["measured"][&fact].is_null(),
                    "{variant}: {fact} missing"
                );
            }
            let verify = &result["verify"];
            assert!(verify["sent"].as_u64().unwrap() > 0, "{verify}");
            assert_eq!(verify["received"], verify["sent"]);
            assert_eq!(verify["cross_group"], 0);
            assert_eq!(verify["self_deliveries"], 0);
            assert_eq!(verify["users"], 12);
        }
    }
}

#[test]
fn chat_writes_samples_of_itself_about_once_a_second_and_other_workloads_none() {
    let mut params = chat_params(5, 4);
    params["duration_s"] = json!(1.6);
    let lines = exchange(&request("chat", "default", params));
    assert_eq!(final_line(&lines, "default")["type"], "result");
    let samples = &lines[1..lines.len() - 1];
    // One at the start, at about 1 s, one after the drain (the machine may be slow).
    assert!(samples.len() >= 2, "{lines:?}");
    let times: Vec<f64> = samples
        .iter()
        .map(|s| s["t_ms"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");
    assert!(*times.last().unwrap() >= 1600.0, "{times:?}");
    // While the users run, the runtime's tasks are counted: 5 groups, 20 users, 20 clients.
    let during = samples
        .iter()
        .filter_map(|s| s["values"]["alive_tasks_count"].as_u64())
        .max();
    assert!(during.is_some_and(|tasks| tasks >= 45), "{samples:?}");
    for sample in samples {
        assert!(
            sample["values"]["rss_bytes"].as_u64().unwrap() > 0,
            "{sample}"
        );
        assert!(sample["values"]["cpu_ns"].as_u64().is_some(), "{sample}");
    }

    let lines = exchange(&request("ring", "default", ring_params(10, 3)));
    assert_eq!(lines.len(), 2, "{lines:?}");
}

#[test]
fn params_and_options_the_worker_does_not_know_are_internal_errors() {
    // Ranges are the harness's; a name the worker does not know means the spec and
    // the worker disagree.
    let mut params = ring_params(10, 3);
    params["extra"] = json!(true);
    let lines = exchange(&request("ring", "default", params));
    assert_error(&lines, "default", "internal", "extra");
    let line = json!({"workload": "ring", "variant": "turbo", "options": {"turbo": true},
                      "params": ring_params(10, 1), "repetition": 1});
    let lines = exchange(&line.to_string());
    assert_error(&lines, "turbo", "internal", "turbo");
}

#[test]
fn exit_signals_are_unsupported() {
    let mut params = fanin_params(2, 1);
    params["mix"] = json!([
        {"percent": 50, "kind": "exit_signal", "size": 1},
        {"percent": 50, "kind": "message", "size": 1}
    ]);
    let lines = exchange(&request("fanin", "default", params));
    assert_error(&lines, "default", "unsupported", "exit signals");
}

#[test]
fn unknown_workloads_and_runtimes_are_unsupported() {
    let lines = exchange(&request("pubsub", "default", json!({})));
    assert_error(&lines, "default", "unsupported", "pubsub");
    let lines = exchange(&request("ring", "threads", ring_params(10, 1)));
    assert_error(&lines, "threads", "unsupported", "ring");
}

#[test]
fn a_broken_request_still_gets_hello_then_an_error() {
    let lines = exchange("this is not json");
    assert_error(&lines, "unknown", "internal", "cannot decode the request");
}
