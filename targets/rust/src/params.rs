//! Validation of request params. The harness fills in defaults, but the worker
//! checks every value anyway and names the param, the value and the accepted range.

use crate::protocol::WorkerError;
use serde_json::{Map, Value};

/// Values longer than this are cut in error messages (a payload may be 64 KiB).
const MAX_SHOWN_VALUE_CHARS: usize = 60;

/// Reads the params of one workload; refuses unknown and missing names.
pub struct ParamReader<'a> {
    params: &'a Map<String, Value>,
}

impl<'a> ParamReader<'a> {
    /// Checks that `params` holds exactly the names in `known`.
    pub fn new(
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
            return Err(WorkerError::bad_params(format!(
                "unknown param {name:?}: {workload} takes {}",
                known.join(", ")
            )));
        }
        Ok(Self { params })
    }

    pub fn value(&self, name: &str) -> Result<&'a Value, WorkerError> {
        self.params
            .get(name)
            .ok_or_else(|| WorkerError::bad_params(format!("param {name} is missing")))
    }

    pub fn integer(&self, name: &str, min: u64, max: u64) -> Result<u64, WorkerError> {
        integer_in_range(name, self.value(name)?, min, max)
    }

    /// A string whose length in characters (JSON Schema counts code points) is in range.
    pub fn string(
        &self,
        name: &str,
        min_chars: usize,
        max_chars: usize,
    ) -> Result<String, WorkerError> {
        let value = self.value(name)?;
        let range = format!("{name} must be a string of {min_chars} to {max_chars} characters");
        let text = value.as_str().ok_or_else(|| {
            WorkerError::bad_params(format!("{name} = {} is not valid: {range}", shown(value)))
        })?;
        let chars = text.chars().count();
        if chars < min_chars || chars > max_chars {
            return Err(WorkerError::bad_params(format!(
                "{name} has {chars} characters, out of range: {range}"
            )));
        }
        Ok(text.to_string())
    }

    /// A number (JSON Schema "number": integers too) from `min` to `max`; with
    /// `min_exclusive`, `min` itself is refused (the schema's exclusiveMinimum).
    pub fn number(
        &self,
        name: &str,
        min: f64,
        min_exclusive: bool,
        max: f64,
    ) -> Result<f64, WorkerError> {
        let value = self.value(name)?;
        let range = if min_exclusive {
            format!("{name} must be a number > {min} and <= {max}")
        } else {
            format!("{name} must be a number from {min} to {max}")
        };
        let number = value.as_f64().ok_or_else(|| {
            WorkerError::bad_params(format!("{name} = {} is not valid: {range}", shown(value)))
        })?;
        let above_min = if min_exclusive {
            number > min
        } else {
            number >= min
        };
        if !above_min || number > max {
            return Err(WorkerError::bad_params(format!(
                "{name} = {} is out of range: {range}",
                shown(value)
            )));
        }
        Ok(number)
    }

    /// One of a fixed set of strings.
    pub fn choice(
        &self,
        name: &str,
        options: &[&'static str],
    ) -> Result<&'static str, WorkerError> {
        let value = self.value(name)?;
        value
            .as_str()
            .and_then(|text| options.iter().copied().find(|option| *option == text))
            .ok_or_else(|| {
                WorkerError::bad_params(format!(
                    "{name} = {} is not valid: {name} must be one of {}",
                    shown(value),
                    options.join(", ")
                ))
            })
    }
}

/// An integer in `min..=max`. JSON Schema's "integer" also admits numbers such as
/// `2.0` whose fraction is zero, so those are accepted too.
pub fn integer_in_range(name: &str, value: &Value, min: u64, max: u64) -> Result<u64, WorkerError> {
    let range = if max == u64::MAX {
        format!("{name} must be an integer >= {min}")
    } else {
        format!("{name} must be an integer from {min} to {max}")
    };
    let integer = value.as_i64().map(i128::from).or_else(|| {
        value.as_u64().map(i128::from).or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e30)
                .map(|f| f as i128)
        })
    });
    match integer {
        Some(n) if n >= i128::from(min) && n <= i128::from(max) => Ok(n as u64),
        Some(_) => Err(WorkerError::bad_params(format!(
            "{name} = {} is out of range: {range}",
            shown(value)
        ))),
        None => Err(WorkerError::bad_params(format!(
            "{name} = {} is not valid: {range}",
            shown(value)
        ))),
    }
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
    fn rejects_unknown_names() {
        let params = map(json!({"n": 2, "bogus": 1}));
        let error = ParamReader::new("ring", &params, &["n"]).err().unwrap();
        assert_eq!(error.kind, ErrorKind::BadParams);
        assert!(error.message.contains("bogus"), "{}", error.message);
    }

    #[test]
    fn integer_out_of_range_names_param_value_and_range() {
        let params = map(json!({"n": 1}));
        let reader = ParamReader::new("ring", &params, &["n"]).unwrap();
        let error = reader.integer("n", 2, 10).unwrap_err();
        assert_eq!(
            error.message,
            "n = 1 is out of range: n must be an integer from 2 to 10"
        );
    }

    #[test]
    fn integer_accepts_whole_floats_and_refuses_others() {
        assert_eq!(integer_in_range("n", &json!(4.0), 2, 10).unwrap(), 4);
        assert!(integer_in_range("n", &json!(4.5), 2, 10).is_err());
        assert!(integer_in_range("n", &json!("4"), 2, 10).is_err());
        assert!(integer_in_range("n", &json!(-3), 2, 10).is_err());
        let error = integer_in_range("n", &json!(1), 2, u64::MAX).unwrap_err();
        assert_eq!(
            error.message,
            "n = 1 is out of range: n must be an integer >= 2"
        );
    }

    #[test]
    fn missing_param_is_named() {
        let params = map(json!({}));
        let reader = ParamReader::new("ring", &params, &["n"]).unwrap();
        assert!(
            reader
                .integer("n", 2, 10)
                .unwrap_err()
                .message
                .contains("n is missing")
        );
    }

    #[test]
    fn string_length_counts_characters() {
        let params = map(json!({"p": "héé", "q": 3}));
        let reader = ParamReader::new("ring", &params, &["p", "q"]).unwrap();
        assert_eq!(reader.string("p", 0, 3).unwrap(), "héé");
        assert!(reader.string("p", 0, 2).is_err());
        assert!(reader.string("q", 0, 2).is_err());
    }

    #[test]
    fn number_honours_exclusive_and_inclusive_minimums() {
        let params = map(json!({"t": 0, "d": 0, "x": 2.5, "s": "1"}));
        let reader = ParamReader::new("chat", &params, &["t", "d", "x", "s"]).unwrap();
        assert_eq!(
            reader.number("t", 0.0, true, 86400.0).unwrap_err().message,
            "t = 0 is out of range: t must be a number > 0 and <= 86400"
        );
        assert_eq!(reader.number("d", 0.0, false, 3600.0).unwrap(), 0.0);
        assert_eq!(reader.number("x", 0.0, true, 3.0).unwrap(), 2.5);
        assert!(reader.number("x", 0.0, true, 2.0).is_err());
        assert!(reader.number("s", 0.0, true, 2.0).is_err());
    }

    #[test]
    fn choice_lists_the_options() {
        let params = map(json!({"method": "fast"}));
        let reader = ParamReader::new("fanin", &params, &["method"]).unwrap();
        let error = reader.choice("method", &["msgbench", "otp"]).unwrap_err();
        assert!(error.message.contains("msgbench, otp"), "{}", error.message);
    }

    #[test]
    fn long_values_are_cut_in_messages() {
        let long = Value::String("x".repeat(1000));
        assert!(shown(&long).len() < 100);
    }
}
