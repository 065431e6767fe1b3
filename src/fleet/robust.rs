//! The robust rule: per headline, the group's median and median absolute
//! deviation (MAD); a host is an outlier when its modified z-score
//! 0.6745·(x − median)/MAD lies beyond ±3.5 (Iglewicz and Hoaglin). When
//! more than half the hosts share one value (MAD = 0) the mean absolute
//! deviation stands in: z = (x − median)/(1.253314·MeanAD). Fewer than
//! three hosts make no judgement.

use super::{Host, Outlier, Spread};
use crate::timing::stats::Summary;

/// Beyond this modified z-score a host is an outlier.
pub const LIMIT: f64 = 3.5;

/// Modified z-scores of `values`, whose summary is `s` (None when all are
/// equal or too few).
pub fn z_scores(values: &[f64], s: &Summary) -> Option<Vec<f64>> {
    if values.len() < 3 {
        return None;
    }
    let m = s.median;
    if s.mad > 0.0 {
        return Some(values.iter().map(|v| 0.6745 * (v - m) / s.mad).collect());
    }
    let mean_ad = values.iter().map(|v| (v - m).abs()).sum::<f64>() / values.len() as f64;
    (mean_ad > 0.0).then(|| values.iter().map(|v| (v - m) / (1.253314 * mean_ad)).collect())
}

/// Spreads and robust outliers of a group's hosts, headline by headline.
pub fn judge(hosts: &[&Host]) -> (Vec<Spread>, Vec<Outlier>) {
    let mut names: Vec<(String, String, String)> =
        hosts.iter().flat_map(|h| h.figures.iter().map(|f| (f.key.clone(), f.unit.clone(), f.name.clone()))).collect();
    names.sort();
    names.dedup_by(|a, b| (&a.0, &a.1) == (&b.0, &b.1));
    let mut spreads = Vec::new();
    let mut outliers = Vec::new();
    for (key, unit, name) in names {
        let have: Vec<(&Host, &super::Figure)> =
            hosts.iter().filter_map(|h| h.figure(&key).filter(|f| f.unit == unit).map(|f| (*h, f))).collect();
        let values: Vec<f64> = have.iter().map(|(_, f)| f.value).collect();
        let Some(s) = Summary::of(&values) else { continue };
        let m = s.median;
        spreads.push(Spread {
            key: key.clone(),
            name: name.clone(),
            unit: unit.clone(),
            hosts: s.count,
            median: m,
            mad: s.mad,
            min: s.min,
            max: s.max,
        });
        let Some(z) = z_scores(&values, &s) else { continue };
        for ((h, f), z) in have.iter().zip(z).filter(|(_, z)| z.abs() > LIMIT) {
            let worse = (z < 0.0) == f.higher_is_better;
            outliers.push(Outlier {
                host: h.id.clone(),
                name: name.clone(),
                value: f.value,
                rule: "robust".into(),
                direction: if worse { "worse" } else { "better" }.into(),
                detail: format!("{:.4} {unit} against the group's median {m:.4} (modified z = {z:.2})", f.value),
            });
        }
    }
    (spreads, outliers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::test_host as host;

    /// Seven hosts, one with half the bandwidth: median 40, MAD 1, its
    /// z = 0.6745 × (20 − 40) / 1 = −13.49, worse; the others stay inside.
    #[test]
    fn one_bad_host_of_seven_is_the_only_outlier() {
        let bw = [40.0, 41.0, 39.0, 40.0, 42.0, 40.0, 20.0];
        let hosts: Vec<Host> = bw
            .iter()
            .enumerate()
            .map(|(i, &v)| host(&format!("n{i}"), "cpu", &[("bw", "GB/s", v, true), ("lat", "ns", 100.0, false)]))
            .collect();
        let refs: Vec<&Host> = hosts.iter().collect();
        let (spreads, outliers) = judge(&refs);
        assert_eq!(outliers.len(), 1, "{outliers:?}");
        let o = &outliers[0];
        assert_eq!((o.host.as_str(), o.name.as_str(), o.direction.as_str()), ("n6", "bw", "worse"));
        assert!(o.detail.contains("z = -13.49"), "{}", o.detail);
        let s = spreads.iter().find(|s| s.name == "bw").unwrap();
        assert_eq!((s.hosts, s.median, s.mad, s.min, s.max), (7, 40.0, 1.0, 20.0, 42.0));
        let lat = spreads.iter().find(|s| s.name == "lat").unwrap();
        assert_eq!(lat.mad, 0.0, "identical latencies: no outlier, no division by zero");
    }

    #[test]
    fn equal_majorities_fall_back_to_the_mean_deviation_and_two_hosts_make_no_verdict() {
        // MAD = 0; MeanAD = 10/5 = 2; z = 10 / (1.253314 × 2) = 3.99 > 3.5.
        let z_of = |v: &[f64]| z_scores(v, &Summary::of(v).unwrap());
        let z = z_of(&[5.0, 5.0, 5.0, 5.0, 15.0]).unwrap();
        assert!((z[4] - 10.0 / (1.253314 * 2.0)).abs() < 1e-12 && z[0] == 0.0);
        assert!(z_of(&[5.0, 5.0, 5.0]).is_none());
        assert!(z_of(&[1.0, 100.0]).is_none());
        // A latency that is higher is worse.
        let hosts: Vec<Host> = [100.0, 101.0, 99.0, 100.0, 300.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| host(&format!("n{i}"), "cpu", &[("lat", "ns", v, false)]))
            .collect();
        let (_, o) = judge(&hosts.iter().collect::<Vec<_>>());
        assert_eq!((o.len(), o[0].host.as_str(), o[0].direction.as_str()), (1, "n4", "worse"));
    }
}
