//! The faults of a (pinned) scenario as atoms `shrink` can drop one by one: each swarm
//! family that is on, and each `[faults]` knob that differs from its default and is not
//! the strength of a family that is on. Also the narrowing dials of the knobs.

use crate::scenario::{FaultConfig, Scenario};

/// One fault that can be switched off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultAtom {
    /// A swarm family of `faults.swarm-families` that is on.
    Family(String),
    /// A `[faults]` knob (its TOML key) away from its default.
    Knob(&'static str),
}

impl FaultAtom {
    pub fn name(&self) -> String {
        match self {
            FaultAtom::Family(f) => f.clone(),
            FaultAtom::Knob(k) => format!("faults.{}", k),
        }
    }
}

type Active = fn(&FaultConfig, &FaultConfig) -> bool;
type Reset = fn(&mut FaultConfig, &FaultConfig);

/// Every droppable knob: its key, whether it is on (compared with a default), and how to
/// put it back to that default (its companion range too).
const KNOBS: &[(&str, Active, Reset)] = &[
    ("loss", |f, _| f.loss > 0.0, |f, _| f.loss = 0.0),
    ("duplicate", |f, _| f.duplicate > 0.0, |f, _| f.duplicate = 0.0),
    (
        "delay-spike",
        |f, _| f.delay_spike > 0.0,
        |f, d| {
            f.delay_spike = 0.0;
            f.delay_spike_ms = d.delay_spike_ms;
        },
    ),
    ("delay-spike-local", |f, _| f.delay_spike_local, |f, _| f.delay_spike_local = false),
    ("storage-error", |f, _| f.storage_error > 0.0, |f, _| f.storage_error = 0.0),
    (
        "collector-lag",
        |f, _| f.collector_lag > 0.0,
        |f, d| {
            f.collector_lag = 0.0;
            f.collector_lag_ms = d.collector_lag_ms;
        },
    ),
    (
        "stream-lag",
        |f, _| f.stream_lag > 0.0,
        |f, d| {
            f.stream_lag = 0.0;
            f.stream_lag_ms = d.stream_lag_ms;
        },
    ),
    (
        "stream-reconnect",
        |f, _| f.stream_reconnect > 0.0,
        |f, d| {
            f.stream_reconnect = 0.0;
            f.stream_reconnect_ms = d.stream_reconnect_ms;
        },
    ),
    (
        "storage-latency-ms",
        |f, d| f.storage_latency_ms != d.storage_latency_ms,
        |f, d| f.storage_latency_ms = d.storage_latency_ms,
    ),
    (
        "schema-store-init-ms",
        |f, d| f.schema_store_init_ms != d.schema_store_init_ms,
        |f, d| f.schema_store_init_ms = d.schema_store_init_ms,
    ),
    (
        "trigger-create-ms",
        |f, d| f.trigger_create_ms != d.trigger_create_ms,
        |f, d| f.trigger_create_ms = d.trigger_create_ms,
    ),
    ("first-event-ms", |f, d| f.first_event_ms != d.first_event_ms, |f, d| f.first_event_ms = d.first_event_ms),
];

/// The knob whose value a swarm family draws (`None`: the family only gates workload ops,
/// or, for `sync_point`, the changefeed's syncpoint settings).
fn family_knob(family: &str) -> Option<&'static str> {
    Some(match family {
        "net.loss" => "loss",
        "net.duplicate" => "duplicate",
        "net.delay_spike" => "delay-spike",
        "storage.slow" => "storage-latency-ms",
        "collector.lag" => "collector-lag",
        "stream.lag" => "stream-lag",
        "first_event.slow" => "first-event-ms",
        "stream.reconnect" => "stream-reconnect",
        _ => return None,
    })
}

fn families_on(scn: &Scenario) -> Vec<String> {
    scn.faults.swarm_families.iter().flatten().filter(|(_, on)| **on).map(|(f, _)| f.clone()).collect()
}

/// The faults of `scn` that are on, families first.
pub fn active(scn: &Scenario) -> Vec<FaultAtom> {
    let d = FaultConfig::default();
    let fams = families_on(scn);
    let covered: Vec<&str> = fams.iter().filter_map(|f| family_knob(f)).collect();
    let mut out: Vec<FaultAtom> = fams.iter().cloned().map(FaultAtom::Family).collect();
    for (key, on, _) in KNOBS {
        if on(&scn.faults, &d) && !covered.contains(key) {
            out.push(FaultAtom::Knob(key));
        }
    }
    out
}

/// Switch `atom` off in `scn`. A family goes back to what the unpinned scenario `base`
/// had without it (the swarm draws nothing for a family that is off); a knob goes to its
/// default.
pub fn drop(scn: &mut Scenario, atom: &FaultAtom, base: &Scenario) {
    match atom {
        FaultAtom::Family(f) => {
            if let Some(m) = scn.faults.swarm_families.as_mut() {
                m.insert(f.clone(), false);
            }
            if let Some(key) = family_knob(f) {
                reset(&mut scn.faults, key, &base.faults);
            }
            if f == "sync_point" {
                scn.changefeed.enable_sync_point = base.changefeed.enable_sync_point;
                scn.changefeed.sync_point_interval = base.changefeed.sync_point_interval.clone();
            }
            if f == "redo" {
                scn.changefeed.consistent_level = base.changefeed.consistent_level.clone();
            }
        }
        FaultAtom::Knob(key) => reset(&mut scn.faults, key, &FaultConfig::default()),
    }
}

fn reset(f: &mut FaultConfig, key: &str, to: &FaultConfig) {
    if let Some((_, _, r)) = KNOBS.iter().find(|(k, _, _)| *k == key) {
        r(f, to);
    }
}

/// A knob `shrink` can narrow: a probability to halve, or a `[min, max]` range to halve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dial {
    Prob(&'static str),
    Range(&'static str),
}

/// Probabilities below this are not halved further (dropping the knob is the next step).
const MIN_PROB: f64 = 0.001;

pub(crate) fn prob_mut<'a>(f: &'a mut FaultConfig, key: &str) -> Option<&'a mut f64> {
    Some(match key {
        "loss" => &mut f.loss,
        "duplicate" => &mut f.duplicate,
        "delay-spike" => &mut f.delay_spike,
        "storage-error" => &mut f.storage_error,
        "collector-lag" => &mut f.collector_lag,
        "stream-lag" => &mut f.stream_lag,
        "stream-reconnect" => &mut f.stream_reconnect,
        _ => return None,
    })
}

/// Ranges with the probability that makes them matter (`None`: they always do).
const RANGES: &[(&str, Option<&str>)] = &[
    ("delay-spike-ms", Some("delay-spike")),
    ("collector-lag-ms", Some("collector-lag")),
    ("stream-lag-ms", Some("stream-lag")),
    ("stream-reconnect-ms", Some("stream-reconnect")),
    ("storage-latency-ms", None),
    ("schema-store-init-ms", None),
    ("trigger-create-ms", None),
    ("first-event-ms", None),
];

pub(crate) fn range_mut<'a>(f: &'a mut FaultConfig, key: &str) -> Option<&'a mut [u64; 2]> {
    Some(match key {
        "delay-spike-ms" => &mut f.delay_spike_ms,
        "collector-lag-ms" => &mut f.collector_lag_ms,
        "stream-lag-ms" => &mut f.stream_lag_ms,
        "stream-reconnect-ms" => &mut f.stream_reconnect_ms,
        "storage-latency-ms" => &mut f.storage_latency_ms,
        "schema-store-init-ms" => &mut f.schema_store_init_ms,
        "trigger-create-ms" => &mut f.trigger_create_ms,
        "first-event-ms" => &mut f.first_event_ms,
        _ => return None,
    })
}

/// The dials of `scn` that can still narrow.
pub fn dials(scn: &Scenario) -> Vec<Dial> {
    let mut f = scn.faults.clone();
    let mut out = Vec::new();
    for (key, _, _) in KNOBS {
        if prob_mut(&mut f, key).is_some_and(|p| *p >= MIN_PROB) {
            out.push(Dial::Prob(key));
        }
    }
    let d = FaultConfig::default();
    for (key, gate) in RANGES {
        // A range matters when its probability is on, or (an ungated latency) when it is
        // off its default: a default latency is the baseline, not a fault to narrow.
        let gated_on = match gate {
            Some(g) => prob_mut(&mut f, g).is_some_and(|p| *p > 0.0),
            None => range_mut(&mut f, key).copied() != range_mut(&mut d.clone(), key).copied(),
        };
        if gated_on && range_mut(&mut f, key).is_some_and(|r| r[1] > r[0]) {
            out.push(Dial::Range(key));
        }
    }
    out
}

/// The narrower settings of a dial to try, in order: half the probability; the lower and
/// the upper half of the range.
pub fn narrow(scn: &Scenario, dial: Dial) -> Vec<Scenario> {
    let mut out = Vec::new();
    match dial {
        Dial::Prob(key) => {
            let mut c = scn.clone();
            if let Some(p) = prob_mut(&mut c.faults, key) {
                *p /= 2.0;
                out.push(c);
            }
        }
        Dial::Range(key) => {
            for upper in [false, true] {
                let mut c = scn.clone();
                if let Some(r) = range_mut(&mut c.faults, key) {
                    let mid = r[0] + (r[1] - r[0]) / 2;
                    if upper {
                        r[0] = mid.max(r[0] + 1).min(r[1]);
                    } else {
                        r[1] = mid;
                    }
                    out.push(c);
                }
            }
        }
    }
    out
}

impl Dial {
    pub fn name(&self) -> String {
        match self {
            Dial::Prob(k) | Dial::Range(k) => format!("faults.{}", k),
        }
    }
}
