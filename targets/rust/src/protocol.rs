//! The worker protocol (spec/README.md): one JSON request in, JSON lines out.

use serde_json::{Map, Value, json};
use std::fmt;

/// The target name reported in `hello`; equal to the folder name.
pub const TARGET_NAME: &str = "rust";

/// Shown in `hello` when the request is too broken to name its variant.
const UNKNOWN_VARIANT: &str = "unknown";

/// The one request the harness writes to stdin.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub workload: String,
    pub variant: String,
    pub params: Map<String, Value>,
}

/// Why a measurement did not produce a result; becomes an `error` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    BadParams,
    Unsupported,
    Resource,
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::BadParams => "bad_params",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Resource => "resource",
            ErrorKind::Internal => "internal",
        }
    }
}

impl WorkerError {
    pub fn bad_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadParams, message)
    }

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

/// What a finished measurement reports: metrics (unit in the name) and the counts
/// the worker's own tasks counted while doing the work.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measurement {
    pub metrics: Vec<(&'static str, f64)>,
    pub verify: Vec<(&'static str, u64)>,
}

impl Measurement {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
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
            WorkerError::bad_params(format!("the request is not valid JSON: {err}")),
        )
    })?;
    let object = value.as_object().ok_or_else(|| {
        (
            UNKNOWN_VARIANT.to_string(),
            WorkerError::bad_params("the request must be a JSON object"),
        )
    })?;
    let variant = match object.get("variant").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => {
            return Err((
                UNKNOWN_VARIANT.to_string(),
                WorkerError::bad_params("the request has no \"variant\" string"),
            ));
        }
    };
    let workload = object
        .get("workload")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            (
                variant.clone(),
                WorkerError::bad_params("the request has no \"workload\" string"),
            )
        })?
        .to_string();
    let params = object
        .get("params")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            (
                variant.clone(),
                WorkerError::bad_params("the request has no \"params\" object"),
            )
        })?
        .clone();
    Ok(Request {
        workload,
        variant,
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
    // A metric that is not a finite number (a zero-length interval on a coarse
    // clock) cannot be written as JSON; report it as 0 rather than break the line.
    let metrics: Map<String, Value> = measurement
        .metrics
        .iter()
        .map(|(name, value)| {
            let number = serde_json::Number::from_f64(*value).unwrap_or_else(|| 0.into());
            (name.to_string(), Value::Number(number))
        })
        .collect();
    let verify: Map<String, Value> = measurement
        .verify
        .iter()
        .map(|(name, count)| (name.to_string(), Value::from(*count)))
        .collect();
    json!({"type": "result", "metrics": metrics, "verify": verify}).to_string()
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
    fn invalid_json_is_bad_params_with_a_placeholder_variant() {
        let (variant, error) = parse_request("{not json").unwrap_err();
        assert_eq!(variant, UNKNOWN_VARIANT);
        assert_eq!(error.kind, ErrorKind::BadParams);
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
            metrics: vec![("a_ms", 1.5), ("bad_per_s", f64::INFINITY)],
            verify: vec![("hops", 7)],
        };
        let result: Value = serde_json::from_str(&result_line(&measurement)).unwrap();
        assert_eq!(result["metrics"]["a_ms"], 1.5);
        assert_eq!(result["metrics"]["bad_per_s"], 0);
        assert_eq!(result["verify"]["hops"], 7);

        let error: Value =
            serde_json::from_str(&error_line(&WorkerError::unsupported("nope"))).unwrap();
        assert_eq!(error["kind"], "unsupported");
        assert_eq!(error["message"], "nope");
    }
}
