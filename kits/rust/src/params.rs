//! Typed access to request params and options. The harness has checked every param
//! against the workload's spec (ranges, cross-param rules) and filled in defaults,
//! so nothing here validates ranges: a param that is missing, mistyped or unknown
//! means the spec and this worker disagree, an `internal` error naming it.

use crate::protocol::WorkerError;
use serde_json::{Map, Value};

/// Values longer than this are cut in error messages (a payload may be 64 KiB).
const MAX_SHOWN_VALUE_CHARS: usize = 60;

/// Reads the params (or the options) of one workload.
pub struct ParamReader<'a> {
    what: &'static str,
    params: &'a Map<String, Value>,
}

impl<'a> ParamReader<'a> {
    /// The params of `workload`; a name not in `known` is a param this worker does
    /// not implement (the spec has one more than the worker knows).
    pub fn new(
        workload: &str,
        params: &'a Map<String, Value>,
        known: &[&str],
    ) -> Result<Self, WorkerError> {
        Self::with_names("param", workload, params, known)
    }

    /// The variant's options (target.toml) as `workload` reads them: an option it
    /// does not know would be silently ignored, so it is an error naming it.
    pub fn options(
        workload: &str,
        options: &'a Map<String, Value>,
        known: &[&str],
    ) -> Result<Self, WorkerError> {
        Self::with_names("option", workload, options, known)
    }

    fn with_names(
        what: &'static str,
        workload: &str,
        params: &'a Map<String, Value>,
        known: &[&str],
    ) -> Result<Self, WorkerError> {
        let mut unknown: Vec<&str> = params
            .keys()
            .map(String::as_str)
            .filter(|name| !known.contains(name))
            .collect();
        unknown.sort_unstable();
        if let Some(name) = unknown.first() {
            // "(known here: ...)" is the form every kit uses, read back by the
            // conformance suite's check that what a worker reads is what target.toml declares.
            return Err(WorkerError::internal(format!(
                "unknown {what} {name:?} for {workload} (known here: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        Ok(Self { what, params })
    }

    pub fn value(&self, name: &str) -> Result<&'a Value, WorkerError> {
        self.params
            .get(name)
            .ok_or_else(|| WorkerError::internal(format!("{} {name} is missing", self.what)))
    }

    /// `name` if present, else None (an option the variant does not set).
    pub fn optional(&self, name: &str) -> Option<&'a Value> {
        self.params.get(name)
    }

    pub fn integer(&self, name: &str) -> Result<u64, WorkerError> {
        as_integer(name, self.value(name)?)
    }

    pub fn string(&self, name: &str) -> Result<String, WorkerError> {
        let value = self.value(name)?;
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| mistyped(name, value, "a string"))
    }

    pub fn number(&self, name: &str) -> Result<f64, WorkerError> {
        let value = self.value(name)?;
        value
            .as_f64()
            .ok_or_else(|| mistyped(name, value, "a number"))
    }

    /// One of the strings this worker implements.
    pub fn choice(
        &self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<&'static str, WorkerError> {
        let value = self.value(name)?;
        value
            .as_str()
            .and_then(|text| choices.iter().copied().find(|choice| *choice == text))
            .ok_or_else(|| mistyped(name, value, &format!("one of {}", choices.join(", "))))
    }
}

/// A whole number. JSON Schema's "integer" also admits numbers such as `2.0`
/// whose fraction is zero (the harness sends integers, but the spec allows them).
pub fn as_integer(name: &str, value: &Value) -> Result<u64, WorkerError> {
    value
        .as_u64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        })
        .ok_or_else(|| mistyped(name, value, "a whole number >= 0"))
}

fn mistyped(name: &str, value: &Value, wanted: &str) -> WorkerError {
    WorkerError::internal(format!(
        "{name} = {} is not {wanted}: the spec and this worker disagree",
        shown(value)
    ))
}

/// A value as JSON, cut short when long.
pub fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= MAX_SHOWN_VALUE_CHARS {
        text
    } else {
        let cut: String = text.chars().take(MAX_SHOWN_VALUE_CHARS).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_param_the_worker_does_not_know_is_internal_and_named() {
        let params = map(json!({"n": 2, "bogus": 1}));
        let error = ParamReader::new("ring", &params, &["n"]).err().unwrap();
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(
            error.message.contains("unknown param \"bogus\""),
            "{}",
            error.message
        );
    }

    #[test]
    fn an_option_the_worker_does_not_know_is_named() {
        let options = map(json!({"turbo": true}));
        let error = ParamReader::options("ring", &options, &[]).err().unwrap();
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(
            error
                .message
                .contains("unknown option \"turbo\" for ring (known here: none)"),
            "{}",
            error.message
        );
    }

    #[test]
    fn typed_access_without_ranges() {
        let params = map(json!({"n": 1, "w": 4.0, "p": "héé", "t": 0.5, "m": "otp"}));
        let reader = ParamReader::new("x", &params, &["n", "w", "p", "t", "m"]).unwrap();
        assert_eq!(reader.integer("n").unwrap(), 1); // a range is the harness's to check
        assert_eq!(reader.integer("w").unwrap(), 4);
        assert_eq!(reader.string("p").unwrap(), "héé");
        assert_eq!(reader.number("t").unwrap(), 0.5);
        assert_eq!(reader.choice("m", &["msgbench", "otp"]).unwrap(), "otp");
    }

    #[test]
    fn missing_and_mistyped_params_are_internal_and_named() {
        let params = map(json!({"n": "4", "f": 4.5}));
        let reader = ParamReader::new("ring", &params, &["n", "f", "m"]).unwrap();
        for error in [
            reader.integer("m").unwrap_err(),
            reader.integer("n").unwrap_err(),
            reader.integer("f").unwrap_err(),
            reader.choice("n", &["a"]).unwrap_err(),
        ] {
            assert_eq!(error.kind, ErrorKind::Internal, "{}", error.message);
        }
        assert!(
            reader
                .integer("m")
                .unwrap_err()
                .message
                .contains("param m is missing")
        );
    }

    #[test]
    fn long_values_are_cut_in_messages() {
        let long = Value::String("x".repeat(1000));
        assert!(shown(&long).len() < 100);
    }
}
