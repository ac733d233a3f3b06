//! The worker protocol (spec/README.md): one JSON request in, JSON lines out.

use serde_json::{Map, Value, json};
use std::fmt;

/// The target name reported in `hello`; equal to the folder name.
pub const TARGET_NAME: &str = "rust";

/// Shown in `hello` when the request is too broken to name its variant.
const UNKNOWN_VARIANT: &str = "unknown";

/// The one request the harness writes to stdin. The harness has checked every
/// param against the workload's spec (defaults filled in); `options` are the
/// variant's, from target.toml.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub workload: String,
    pub variant: String,
    pub options: Map<String, Value>,
    pub params: Map<String, Value>,
}

/// Why a measurement did not produce a result; becomes an `error` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerError {
    pub kind: ErrorKind,
    pub message: String,
}

/// Parameters are the harness's to check, so a worker has no bad_params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Unsupported,
    Resource,
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Resource => "resource",
            ErrorKind::Internal => "internal",
        }
    }
}

impl WorkerError {
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }

    pub fn resource(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Resource, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for WorkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for WorkerError {}

/// What a finished measurement reports: raw facts (durations and CPU times in ns,
/// byte totals, counts, per-socket lists), the counts the worker's own tasks
/// counted while doing the work, and histograms as sparse `[bucket, count]`
/// pairs. The harness derives every metric (spec/workloads/*.json).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measurement {
    pub measured: Vec<(&'static str, Value)>,
    pub verify: Vec<(&'static str, u64)>,
    pub histograms: Vec<(&'static str, Vec<(u64, u64)>)>,
}

impl Measurement {
    /// A raw fact by name.
    pub fn fact(&self, name: &str) -> Option<&Value> {
        self.measured
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    pub fn count(&self, name: &str) -> Option<u64> {
        self.verify
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

/// Parses the request line. On failure, also returns the variant name to put in
/// `hello` (as much of the request as could be read), since `hello` always comes first.
pub fn parse_request(text: &str) -> Result<Request, (String, WorkerError)> {
    let value: Value = serde_json::from_str(text.trim()).map_err(|err| {
        (
            UNKNOWN_VARIANT.to_string(),
            WorkerError::internal(format!("the request is not valid JSON: {err}")),
        )
    })?;
    let object = value.as_object().ok_or_else(|| {
        (
            UNKNOWN_VARIANT.to_string(),
            WorkerError::internal("the request must be a JSON object"),
        )
    })?;
    let variant = match object.get("variant").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => {
            return Err((
                UNKNOWN_VARIANT.to_string(),
                WorkerError::internal("the request has no \"variant\" string"),
            ));
        }
    };
    let workload = object
        .get("workload")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            (
                variant.clone(),
                WorkerError::internal("the request has no \"workload\" string"),
            )
        })?
        .to_string();
    let params = object
        .get("params")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            (
                variant.clone(),
                WorkerError::internal("the request has no \"params\" object"),
            )
        })?
        .clone();
    let options = match object.get("options") {
        None => Map::new(),
        Some(Value::Object(options)) => options.clone(),
        Some(_) => {
            return Err((
                variant.clone(),
                WorkerError::internal("the request's \"options\" is not an object"),
            ));
        }
    };
    Ok(Request {
        workload,
        variant,
        options,
        params,
    })
}

pub fn hello_line(variant: &str, runtime_version: &str) -> String {
    json!({
        "type": "hello",
        "target": TARGET_NAME,
        "runtime_version": runtime_version,
        "variant": variant,
    })
    .to_string()
}

pub fn result_line(measurement: &Measurement) -> String {
    let measured: Map<String, Value> = measurement
        .measured
        .iter()
        .map(|(name, value)| (name.to_string(), value.clone()))
        .collect();
    let verify: Map<String, Value> = measurement
        .verify
        .iter()
        .map(|(name, count)| (name.to_string(), Value::from(*count)))
        .collect();
    let mut line = json!({"type": "result", "measured": measured, "verify": verify});
    if !measurement.histograms.is_empty() {
        let histograms: Map<String, Value> = measurement
            .histograms
            .iter()
            .map(|(name, pairs)| (name.to_string(), json!(pairs)))
            .collect();
        line["histograms"] = Value::Object(histograms);
    }
    line.to_string()
}

pub fn error_line(error: &WorkerError) -> String {
    json!({
        "type": "error",
        "kind": error.kind.as_str(),
        "message": error.message,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_request() {
        let request = parse_request(
            r#"{"workload":"ring","variant":"default","params":{"n":3},"repetition":1}"#,
        )
        .unwrap();
        assert_eq!(request.workload, "ring");
        assert_eq!(request.variant, "default");
        assert_eq!(request.params["n"], 3);
    }

    #[test]
    fn invalid_json_is_internal_with_a_placeholder_variant() {
        let (variant, error) = parse_request("{not json").unwrap_err();
        assert_eq!(variant, UNKNOWN_VARIANT);
        assert_eq!(error.kind, ErrorKind::Internal);
    }

    #[test]
    fn options_come_with_the_request() {
        let request = parse_request(
            r#"{"workload":"fanin","variant":"tuned","options":{"receive":"many"},"params":{},"repetition":1}"#,
        )
        .unwrap();
        assert_eq!(request.options["receive"], "many");
    }

    #[test]
    fn missing_params_keeps_the_variant_for_hello() {
        let (variant, error) = parse_request(r#"{"workload":"ring","variant":"x"}"#).unwrap_err();
        assert_eq!(variant, "x");
        assert!(error.message.contains("params"));
    }

    #[test]
    fn lines_match_the_message_schema_shapes() {
        let hello: Value = serde_json::from_str(&hello_line("default", "v")).unwrap();
        assert_eq!(hello["type"], "hello");
        assert_eq!(hello["target"], TARGET_NAME);

        let measurement = Measurement {
            measured: vec![("pass_wall_ns", json!(1500)), ("elapsed_ns", json!([1, 2]))],
            verify: vec![("hops", 7)],
            histograms: vec![("latency_ns", vec![(130, 2)])],
        };
        let result: Value = serde_json::from_str(&result_line(&measurement)).unwrap();
        assert_eq!(result["measured"]["pass_wall_ns"], 1500);
        assert_eq!(result["measured"]["elapsed_ns"], json!([1, 2]));
        assert_eq!(result["verify"]["hops"], 7);
        assert_eq!(result["histograms"]["latency_ns"], json!([[130, 2]]));
        assert!(result.get("metrics").is_none());

        let error: Value =
            serde_json::from_str(&error_line(&WorkerError::unsupported("nope"))).unwrap();
        assert_eq!(error["kind"], "unsupported");
        assert_eq!(error["message"], "nope");
    }
}
