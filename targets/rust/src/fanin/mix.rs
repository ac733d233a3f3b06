//! The signal mix: which kinds and sizes senders send, with what probability, and
//! the per-run plan senders use to pick one and build its payload.

use crate::params::{integer_in_range, shown};
use crate::protocol::WorkerError;
use serde_json::Value;

/// Accepted ranges, as in spec/workloads/fanin.json (a unit test checks they agree).
pub const MIN_ENTRIES: usize = 1;
pub const MAX_ENTRIES: usize = 8;
pub const MIN_SIZE: u64 = 1;
pub const MAX_SIZE: u64 = 1_000_000;
const MAX_PERCENT: f64 = 100.0;
/// Percents are decimals typed by people (33.3 + 33.3 + 33.4); allow rounding error.
const PERCENT_SUM_TOLERANCE: f64 = 1e-6;

const ENTRY_FIELDS: [&str; 3] = ["percent", "kind", "size"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    Message,
    ExitSignal,
}

impl SignalKind {
    const NAMES: [&'static str; 2] = ["message", "exit_signal"];

    fn from_name(name: &str) -> Option<Self> {
        match name {
            "message" => Some(Self::Message),
            "exit_signal" => Some(Self::ExitSignal),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MixEntry {
    pub percent: f64,
    pub kind: SignalKind,
    /// Machine words in the payload.
    pub size: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    pub entries: Vec<MixEntry>,
}

impl Mix {
    pub fn from_json(value: &Value) -> Result<Self, WorkerError> {
        let items = value.as_array().ok_or_else(|| {
            WorkerError::bad_params(format!(
                "mix = {} is not valid: mix must be a list of {{percent, kind, size}} objects",
                shown(value)
            ))
        })?;
        if items.len() < MIN_ENTRIES || items.len() > MAX_ENTRIES {
            return Err(WorkerError::bad_params(format!(
                "mix has {} entries, out of range: mix must have {MIN_ENTRIES} to {MAX_ENTRIES} entries",
                items.len()
            )));
        }
        let entries = items
            .iter()
            .enumerate()
            .map(|(index, item)| parse_entry(index, item))
            .collect::<Result<Vec<_>, _>>()?;
        let total: f64 = entries.iter().map(|entry| entry.percent).sum();
        if (total - MAX_PERCENT).abs() > PERCENT_SUM_TOLERANCE {
            return Err(WorkerError::bad_params(format!(
                "mix percents add to {total}: they must add to {MAX_PERCENT}"
            )));
        }
        Ok(Self { entries })
    }

    /// Exit signals are an Erlang notion (a signal that kills unless trapped); Rust
    /// tasks and channels have nothing that matches.
    pub fn require_messages_only(&self) -> Result<(), WorkerError> {
        if self
            .entries
            .iter()
            .any(|entry| entry.kind == SignalKind::ExitSignal)
        {
            return Err(WorkerError::unsupported(
                "exit signals are an Erlang notion; rust (tokio tasks, std threads) has no equivalent",
            ));
        }
        Ok(())
    }

    /// The largest payload in words.
    pub fn max_size(&self) -> usize {
        self.entries
            .iter()
            .map(|entry| entry.size)
            .max()
            .unwrap_or(0)
    }
}

fn parse_entry(index: usize, item: &Value) -> Result<MixEntry, WorkerError> {
    let field = |name: &str| format!("mix[{index}].{name}");
    let object = item.as_object().ok_or_else(|| {
        WorkerError::bad_params(format!(
            "mix[{index}] = {} is not valid: each mix entry must be an object {{percent, kind, size}}",
            shown(item)
        ))
    })?;
    if let Some(name) = object
        .keys()
        .find(|name| !ENTRY_FIELDS.contains(&name.as_str()))
    {
        return Err(WorkerError::bad_params(format!(
            "unknown field {name:?} in mix[{index}]: a mix entry has {}",
            ENTRY_FIELDS.join(", ")
        )));
    }
    let get = |name: &str| {
        object
            .get(name)
            .ok_or_else(|| WorkerError::bad_params(format!("{} is missing", field(name))))
    };

    let percent_value = get("percent")?;
    let percent = percent_value
        .as_f64()
        .filter(|p| *p > 0.0 && *p <= MAX_PERCENT)
        .ok_or_else(|| {
            WorkerError::bad_params(format!(
                "{} = {} is out of range: a percent must be a number > 0 and <= {MAX_PERCENT}",
                field("percent"),
                shown(percent_value)
            ))
        })?;

    let kind_value = get("kind")?;
    let kind = kind_value
        .as_str()
        .and_then(SignalKind::from_name)
        .ok_or_else(|| {
            WorkerError::bad_params(format!(
                "{} = {} is not valid: kind must be one of {}",
                field("kind"),
                shown(kind_value),
                SignalKind::NAMES.join(", ")
            ))
        })?;

    let size = integer_in_range(&field("size"), get("size")?, MIN_SIZE, MAX_SIZE)? as usize;
    Ok(MixEntry {
        percent,
        kind,
        size,
    })
}

/// What senders share for one run: the cumulative probabilities and one prepared
/// payload per mix entry, which senders copy for every send (copy semantics, as an
/// Erlang send copies the list into the receiver's heap).
#[derive(Debug)]
pub struct SignalPlan {
    /// `thresholds[i]` = sum of the probabilities of entries 0..=i.
    thresholds: Vec<f64>,
    payloads: Vec<Vec<u64>>,
}

impl SignalPlan {
    pub fn new(mix: &Mix) -> Self {
        let mut sum = 0.0;
        let thresholds = mix
            .entries
            .iter()
            .map(|entry| {
                sum += entry.percent / MAX_PERCENT;
                sum
            })
            .collect();
        // The OTP suite's payload: lists:seq(1, Size).
        let payloads = mix
            .entries
            .iter()
            .map(|entry| (1..=entry.size as u64).collect())
            .collect();
        Self {
            thresholds,
            payloads,
        }
    }

    /// The entry for a uniform draw in [0, 1): the first whose cumulative
    /// probability exceeds it, the last one catching rounding (as the suite's get_op).
    pub fn pick(&self, draw: f64) -> usize {
        let last = self.thresholds.len() - 1;
        self.thresholds[..last]
            .iter()
            .position(|threshold| draw < *threshold)
            .unwrap_or(last)
    }

    /// A fresh copy of entry `index`'s payload: the per-send copy.
    pub fn payload_copy(&self, index: usize) -> Vec<u64> {
        self.payloads[index].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorKind;
    use serde_json::json;

    #[test]
    fn parses_the_default_mix() {
        let mix = Mix::from_json(&json!([{"percent": 100, "kind": "message", "size": 1}])).unwrap();
        assert_eq!(mix.entries.len(), 1);
        assert_eq!(mix.max_size(), 1);
        assert!(mix.require_messages_only().is_ok());
    }

    #[test]
    fn exit_signals_parse_but_are_unsupported() {
        let mix = Mix::from_json(&json!([
            {"percent": 50, "kind": "exit_signal", "size": 10},
            {"percent": 50, "kind": "message", "size": 10}
        ]))
        .unwrap();
        let error = mix.require_messages_only().unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
        assert!(error.message.contains("exit signals"));
    }

    #[test]
    fn refuses_bad_mixes() {
        let bad = [
            json!([]),
            json!("message"),
            json!([{"percent": 90, "kind": "message", "size": 1}]),
            json!([{"percent": 0, "kind": "message", "size": 1}, {"percent": 100, "kind": "message", "size": 1}]),
            json!([{"percent": 100, "kind": "letter", "size": 1}]),
            json!([{"percent": 100, "kind": "message", "size": 0}]),
            json!([{"percent": 100, "kind": "message", "size": 1_000_001}]),
            json!([{"percent": 100, "kind": "message"}]),
            json!([{"percent": 100, "kind": "message", "size": 1, "colour": "red"}]),
            json!(vec![
                json!({"percent": 11.111, "kind": "message", "size": 1});
                9
            ]),
        ];
        for mix in bad {
            let error = Mix::from_json(&mix).unwrap_err();
            assert_eq!(error.kind, ErrorKind::BadParams, "{mix}");
            assert!(error.message.contains("mix"), "{}", error.message);
        }
    }

    #[test]
    fn decimal_percents_may_round() {
        let mix = json!([
            {"percent": 33.3, "kind": "message", "size": 1},
            {"percent": 33.3, "kind": "message", "size": 2},
            {"percent": 33.4, "kind": "message", "size": 3}
        ]);
        assert!(Mix::from_json(&mix).is_ok());
    }

    #[test]
    fn pick_follows_cumulative_probabilities() {
        let mix = Mix::from_json(&json!([
            {"percent": 25, "kind": "message", "size": 1},
            {"percent": 75, "kind": "message", "size": 3}
        ]))
        .unwrap();
        let plan = SignalPlan::new(&mix);
        assert_eq!(plan.pick(0.0), 0);
        assert_eq!(plan.pick(0.2499), 0);
        assert_eq!(plan.pick(0.25), 1);
        assert_eq!(plan.pick(0.9999999), 1);
        assert_eq!(plan.payload_copy(1), vec![1, 2, 3]);
    }

    #[test]
    fn ranges_agree_with_the_spec() {
        let spec: Value =
            serde_json::from_str(include_str!("../../../../spec/workloads/fanin.json")).unwrap();
        let mix = &spec["params"]["mix"];
        assert_eq!(mix["minItems"], MIN_ENTRIES);
        assert_eq!(mix["maxItems"], MAX_ENTRIES);
        let item = &mix["items"]["properties"];
        assert_eq!(item["size"]["minimum"], MIN_SIZE);
        assert_eq!(item["size"]["maximum"], MAX_SIZE);
        assert_eq!(item["percent"]["maximum"], MAX_PERCENT);
        assert_eq!(item["kind"]["enum"], json!(SignalKind::NAMES));
    }
}
