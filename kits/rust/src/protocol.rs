//! The worker protocol (spec/README.md): one JSON request in, JSON lines out.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::fmt;

/// Shown in `hello` when the request is too broken to name its variant.
const UNKNOWN_VARIANT: &str = "unknown";

/// The one request the harness writes to stdin (spec/request.schema.json). The
/// harness has checked every param against the workload's spec (defaults filled
/// in); `options` are the variant's, from target.toml.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Request {
    pub workload: String,
    pub variant: String,
    #[serde(default)]
    pub options: Map<String, Value>,
    pub params: Map<String, Value>,
    /// 0 when absent: the line a worker hands its server half (spec/README.md,
    /// "Peers") need not carry it.
    #[serde(default)]
    pub repetition: u64,
    #[serde(default)]
    pub warmup: bool,
}

impl Request {
    /// The params decoded into a workload's own struct, which should refuse
    /// unknown fields (`#[serde(deny_unknown_fields)]`): the harness filled in every
    /// default and checked every range, so a param that is missing, mistyped or
    /// unknown means the spec and this worker disagree, an internal error naming it.
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, WorkerError> {
        T::deserialize(Value::Object(self.params.clone())).map_err(|err| {
            WorkerError::internal(format!(
                "cannot decode the {} params: {err}: the spec and this worker disagree",
                self.workload
            ))
        })
    }
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
    serde_json::from_str(text.trim()).map_err(|err| {
        #[derive(Deserialize)]
        struct Named {
            variant: String,
        }
        let variant = serde_json::from_str::<Named>(text.trim())
            .map(|named| named.variant)
            .ok()
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| UNKNOWN_VARIANT.to_string());
        (
            variant,
            WorkerError::internal(format!("cannot decode the request: {err}")),
        )
    })
}

/// The first line: who answers (`target`, its folder name) and on what runtime.
pub fn hello_line(target: &str, variant: &str, runtime_version: &str) -> String {
    json!({
        "type": "hello",
        "target": target,
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
        let (variant, error) =
            parse_request(r#"{"workload":"ring","variant":"x","repetition":1}"#).unwrap_err();
        assert_eq!(variant, "x");
        assert!(error.message.contains("params"), "{}", error.message);
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RingParams {
        n: u64,
        payload: String,
    }

    #[test]
    fn params_decode_into_a_struct_and_refuse_what_it_does_not_know() {
        let request = parse_request(
            r#"{"workload":"ring","variant":"d","params":{"n":3,"payload":"BOO!"},"repetition":1}"#,
        )
        .unwrap();
        let params: RingParams = request.params().unwrap();
        assert_eq!((params.n, params.payload.as_str()), (3, "BOO!"));
        for bad in [
            r#"{"n":3}"#,
            r#"{"n":"3","payload":""}"#,
            r#"{"n":3,"payload":"","m":1}"#,
        ] {
            let line =
                format!(r#"{{"workload":"ring","variant":"d","params":{bad},"repetition":1}}"#);
            let error = parse_request(&line)
                .unwrap()
                .params::<RingParams>()
                .unwrap_err();
            assert_eq!(error.kind, ErrorKind::Internal);
            assert!(error.message.contains("ring params"), "{}", error.message);
        }
    }

    #[test]
    fn lines_match_the_message_schema_shapes() {
        let hello: Value = serde_json::from_str(&hello_line("rust", "default", "v")).unwrap();
        assert_eq!(hello["type"], "hello");
        assert_eq!(hello["target"], "rust");

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
