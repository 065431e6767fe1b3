//! References in ReFrame's shape: per system, `metric: [target,
//! lower_fraction, upper_fraction, unit]`, a fraction `null` for no bound
//! (ReFrame's `None`). Systems here are host selectors: `*` (every host),
//! `prefix*`, or a host name; the most specific one that names a metric
//! wins. Metrics are headline keys (`latency.random{pages=4k,size_bytes=…}`,
//! the `key` of `memperf compare --json` and of fleet.json's figures) or,
//! as before keys existed, headline names as `memperf compare` prints them.

use super::{Check, Host, HostCheck};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[target, lower, upper, unit]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound(pub f64, pub Option<f64>, pub Option<f64>, pub String);

pub type References = BTreeMap<String, BTreeMap<String, Bound>>;

/// Reads and checks a reference file.
pub fn load(path: &std::path::Path) -> Result<References> {
    let text = crate::input::read_text(path, crate::input::SMALL_LIMIT, "references file")?;
    parse(&text).map_err(|m| {
        Error::usage(format!(
            "--reference {}: {m}: give {{\"SYSTEM\": {{\"METRIC\": [target, lower, upper, \"unit\"]}}}}",
            path.display()
        ))
    })
}

pub fn parse(text: &str) -> std::result::Result<References, String> {
    let r: References = serde_json::from_str(text).map_err(|e| format!("not a reference file ({e})"))?;
    for (system, metrics) in &r {
        for (metric, Bound(target, lo, hi, _)) in metrics {
            if !target.is_finite() || lo.is_some_and(|l| !(-1.0..=0.0).contains(&l)) || hi.is_some_and(|h| h < 0.0) {
                return Err(format!(
                    "{system}/{metric}: the target must be a number, lower a fraction from -1 to 0, upper ≥ 0"
                ));
            }
        }
    }
    Ok(r)
}

/// How specific a selector is for `host` (None: it does not apply).
fn specificity(selector: &str, host: &str) -> Option<usize> {
    match selector.strip_suffix('*') {
        _ if selector == host => Some(usize::MAX),
        Some(prefix) if host.starts_with(prefix) => Some(prefix.len()),
        _ => None,
    }
}

/// Every host against the references that apply to it.
pub fn check(refs: &References, hosts: &[Host]) -> Vec<HostCheck> {
    hosts
        .iter()
        .map(|h| {
            let mut chosen: BTreeMap<&str, (usize, &Bound)> = BTreeMap::new();
            for (selector, metrics) in refs {
                let Some(s) = specificity(selector, &h.hostname) else { continue };
                for (m, b) in metrics {
                    if chosen.get(m.as_str()).is_none_or(|(t, _)| s >= *t) {
                        chosen.insert(m, (s, b));
                    }
                }
            }
            let checks: Vec<Check> = chosen.into_iter().map(|(m, (_, b))| one(h, m, b)).collect();
            HostCheck { host: h.id.clone(), passed: checks.iter().all(|c| c.passed), checks }
        })
        .collect()
}

fn one(h: &Host, metric: &str, Bound(target, lo, hi, unit): &Bound) -> Check {
    let f = h.figure(metric);
    let (lo_v, hi_v) = (lo.map(|l| target * (1.0 + l)), hi.map(|u| target * (1.0 + u)));
    let (passed, reason) = match f {
        None => (false, "not measured on this host".to_string()),
        Some(f) if &f.unit != unit => (false, format!("measured in {}, the reference is in {unit}", f.unit)),
        Some(f) => {
            let ok = lo_v.is_none_or(|l| f.value >= l) && hi_v.is_none_or(|u| f.value <= u);
            let range = format!(
                "[{}, {}]",
                lo_v.map_or("-inf".into(), |v| format!("{v:.4}")),
                hi_v.map_or("+inf".into(), |v| format!("{v:.4}"))
            );
            (ok, format!("{:.4} {unit} {} {range}", f.value, if ok { "within" } else { "outside" }))
        }
    };
    Check {
        metric: metric.into(),
        target: *target,
        lower: *lo,
        upper: *hi,
        unit: unit.clone(),
        value: f.map(|f| f.value),
        passed,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, bw: f64) -> Host {
        crate::fleet::test_host(name, "c", &[("bw", "GB/s", bw, true)])
    }

    #[test]
    fn hosts_pass_or_fail_their_most_specific_reference() {
        let refs = parse(
            r#"{"*": {"bw": [40.0, -0.1, null, "GB/s"], "lat": [100, null, 0.2, "ns"]},
                "gpu*": {"bw": [80.0, -0.05, 0.05, "GB/s"]},
                "n3": {"bw": [30.0, -0.1, null, "GB/s"]}}"#,
        )
        .unwrap();
        let hosts = [host("n1", 37.0), host("n2", 35.0), host("gpu1", 70.0), host("n3", 28.0)];
        let r = check(&refs, &hosts);
        let verdict = |i: usize, m: &str| r[i].checks.iter().find(|c| c.metric == m).map(|c| c.passed);
        assert_eq!(verdict(0, "bw"), Some(true), "37 ≥ 40 × 0.9 = 36");
        assert_eq!(verdict(1, "bw"), Some(false), "35 < 36");
        assert_eq!(verdict(2, "bw"), Some(false), "gpu1 takes gpu*'s 80 ± 5%: 70 < 76");
        assert_eq!(verdict(3, "bw"), Some(true), "n3's own reference: 28 ≥ 27");
        assert_eq!(verdict(0, "lat"), Some(false), "no latency measured is a failure");
        assert!(r[0].checks.iter().find(|c| c.metric == "lat").unwrap().reason.contains("not measured"));
        assert!(r.iter().all(|h| !h.passed), "every host lacks the latency");
        assert!(parse(r#"{"*": {"bw": [40.0, 0.1, null, "GB/s"]}}"#).unwrap_err().contains("lower a fraction"));
        assert!(parse("[1, 2]").is_err());
    }
}
