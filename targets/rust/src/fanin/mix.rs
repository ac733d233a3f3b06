//! The signal mix: which kinds and sizes senders send, with what probability, and
//! the per-run plan senders use to pick one and build its payload.

use msgbench_kit::params::{as_integer, shown};
use msgbench_kit::protocol::WorkerError;
use serde_json::Value;

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
    /// The request's mix: the harness has checked its entries, their ranges and that
    /// the percents add to 100 (spec/workloads/fanin.json, msgbench/workloads/fanin.py).
    pub fn from_json(value: &Value) -> Result<Self, WorkerError> {
        let items = value.as_array().ok_or_else(|| {
            WorkerError::internal(format!("mix = {} is not a list", shown(value)))
        })?;
        let entries = items
            .iter()
            .enumerate()
            .map(|(index, item)| parse_entry(index, item))
            .collect::<Result<Vec<_>, _>>()?;
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
        WorkerError::internal(format!("mix[{index}] = {} is not an object", shown(item)))
    })?;
    if let Some(name) = object
        .keys()
        .find(|name| !ENTRY_FIELDS.contains(&name.as_str()))
    {
        return Err(WorkerError::internal(format!(
            "unknown field {name:?} in mix[{index}]: a mix entry here has {}",
            ENTRY_FIELDS.join(", ")
        )));
    }
    let get = |name: &str| {
        object
            .get(name)
            .ok_or_else(|| WorkerError::internal(format!("{} is missing", field(name))))
    };
    let percent_value = get("percent")?;
    let percent = percent_value.as_f64().ok_or_else(|| {
        WorkerError::internal(format!(
            "{} = {} is not a number",
            field("percent"),
            shown(percent_value)
        ))
    })?;
    let kind_value = get("kind")?;
    let kind = kind_value
        .as_str()
        .and_then(SignalKind::from_name)
        .ok_or_else(|| {
            WorkerError::internal(format!(
                "{} = {} is not a kind this worker knows ({})",
                field("kind"),
                shown(kind_value),
                SignalKind::NAMES.join(", ")
            ))
        })?;
    let size = as_integer(&field("size"), get("size")?)? as usize;
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
                sum += entry.percent / 100.0; // percents: the harness checked they add to 100
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
    use msgbench_kit::protocol::ErrorKind;
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
}
