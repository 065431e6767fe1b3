//! Where along the injection rate to measure: found per mix from short
//! probes, not a fixed grid. Idle and saturation come first; then pauses
//! the traffic model predicts for evenly spaced bandwidths; then, while two
//! neighbours along bandwidth lie further apart than the gap allowed, the
//! pause between theirs (a bisection, doubling past the longest pause
//! next to idle).

use crate::error::Result;

/// One probe: a pause (`None`: idle, no traffic) and the bandwidth it gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub pause_ns: Option<u64>,
    pub bytes_per_s: f64,
}

/// What the search aims for.
#[derive(Debug, Clone, Copy)]
pub struct Aim {
    /// Points per curve, idle and saturation included.
    pub points: usize,
    /// The widest gap allowed between neighbours, as a fraction of the
    /// saturated bandwidth.
    pub max_gap: f64,
    /// Probes at most, all told.
    pub max_probes: usize,
    /// Bus bytes one block of every traffic thread moves together: with the
    /// saturated traffic, the time a block takes at full speed.
    pub block_bus_bytes: f64,
}

/// The pauses to measure, idle first then by decreasing pause (increasing
/// bandwidth), found by `probe` (one short measurement of a pause). The
/// probes made are returned too.
pub fn pauses(aim: Aim, mut probe: impl FnMut(Option<u64>) -> Result<f64>) -> Result<Vec<Probe>> {
    let mut seen = vec![
        Probe { pause_ns: None, bytes_per_s: probe(None)? },
        Probe { pause_ns: Some(0), bytes_per_s: probe(Some(0))? },
    ];
    for pause in predicted(&seen, aim) {
        if !seen.iter().any(|p| p.pause_ns == Some(pause)) {
            seen.push(Probe { pause_ns: Some(pause), bytes_per_s: probe(Some(pause))? });
        }
    }
    while seen.len() < aim.max_probes {
        let Some(pause) = fill(&seen, aim.max_gap) else { break };
        seen.push(Probe { pause_ns: Some(pause), bytes_per_s: probe(Some(pause))? });
    }
    seen.sort_by(|a, b| order(a).total_cmp(&order(b)));
    Ok(seen)
}

/// Idle first, then by decreasing pause.
fn order(p: &Probe) -> f64 {
    p.pause_ns.map_or(f64::NEG_INFINITY, |d| -(d as f64))
}

/// The pauses the traffic model predicts for bandwidths evenly spaced
/// between idle and saturation: a thread that moves a block in `t0` at full
/// speed moves it in `t0 + pause` with a pause, so its traffic falls as
/// `t0 / (t0 + pause)`; `t0` comes from the saturated probe's traffic.
fn predicted(seen: &[Probe], aim: Aim) -> Vec<u64> {
    let traffic = seen[1].bytes_per_s - seen[0].bytes_per_s;
    if traffic.is_nan() || traffic <= 0.0 {
        return Vec::new();
    }
    let t0 = aim.block_bus_bytes / traffic * 1e9;
    let loaded = aim.points.saturating_sub(2).max(1);
    (1..=loaded)
        .map(|k| {
            let f = k as f64 / (loaded + 1) as f64;
            (t0 * (1.0 / f - 1.0)).round() as u64
        })
        .filter(|&p| p > 0)
        .collect()
}

/// The pause that splits the widest gap along bandwidth, if one is wider
/// than `max_gap` of saturation and can still be split.
fn fill(seen: &[Probe], max_gap: f64) -> Option<u64> {
    splits(seen, max_gap).into_iter().next()
}

/// A pause splitting each gap along bandwidth wider than `max_gap` of
/// saturation (where one can still be split), the widest gap first.
pub fn splits(seen: &[Probe], max_gap: f64) -> Vec<u64> {
    let saturated = seen.iter().map(|p| p.bytes_per_s).fold(0.0, f64::max);
    let mut by_bw: Vec<&Probe> = seen.iter().collect();
    by_bw.sort_by(|a, b| a.bytes_per_s.total_cmp(&b.bytes_per_s));
    let mut gaps: Vec<(f64, &Probe, &Probe)> =
        by_bw.windows(2).map(|w| ((w[1].bytes_per_s - w[0].bytes_per_s) / saturated, w[0], w[1])).collect();
    gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<u64> = Vec::new();
    for (_, lo, hi) in gaps.into_iter().filter(|g| g.0 > max_gap) {
        if let Some(p) = split(seen, lo.pause_ns, hi.pause_ns).filter(|p| !out.contains(p)) {
            out.push(p);
        }
    }
    out
}

/// A pause between `slow` (less bandwidth) and `fast`, not yet probed.
fn split(seen: &[Probe], slow: Option<u64>, fast: Option<u64>) -> Option<u64> {
    let candidate = match (slow, fast) {
        // Next to idle: twice the pause of the slowest loaded point.
        (None, Some(f)) => f.max(1).saturating_mul(2),
        (Some(s), None) => s.max(1).saturating_mul(2),
        (Some(s), Some(f)) => (s / 2).saturating_add(f / 2).saturating_add((s % 2 + f % 2) / 2),
        (None, None) => return None,
    };
    (!seen.iter().any(|p| p.pause_ns == Some(candidate)) && candidate < 1 << 40).then_some(candidate)
}

/// The widest gap between neighbours along bandwidth, as a fraction of
/// the highest bandwidth.
pub fn largest_gap(bandwidths: &[f64]) -> f64 {
    let top = bandwidths.iter().copied().fold(0.0, f64::max);
    let mut v = bandwidths.to_vec();
    v.sort_by(f64::total_cmp);
    v.windows(2).map(|w| (w[1] - w[0]) / top).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A traffic model: the chaser's 1 GB/s, and traffic falling as
    /// `t0 / (t0 + pause)` from 20 GB/s at saturation.
    fn curve(t0: f64) -> impl FnMut(Option<u64>) -> Result<f64> {
        move |p| Ok(1e9 + p.map_or(0.0, |d| 20e9 * t0 / (t0 + d as f64)))
    }

    /// `guess`: how far the block time the search assumes is from `t0`.
    fn check(t0: f64, guess: f64, points: usize) {
        let aim = Aim { points, max_gap: 0.15, max_probes: 3 * points, block_bus_bytes: 20.0 * t0 * guess };
        let got = pauses(aim, curve(t0)).unwrap();
        assert!(got.len() >= points, "t0 {t0}: {got:?}");
        assert_eq!(got[0].pause_ns, None, "idle first");
        assert_eq!(got.last().unwrap().pause_ns, Some(0), "saturation last");
        let bws: Vec<f64> = got.iter().map(|p| p.bytes_per_s).collect();
        assert!(bws.windows(2).all(|w| w[1] >= w[0]), "bandwidth rises along the list: {bws:?}");
        assert!(largest_gap(&bws) <= 0.15, "t0 {t0}: gap {} in {bws:?}", largest_gap(&bws));
    }

    /// Whether the model's prediction is right, far too short or far too
    /// long, the search ends with every gap under 15%.
    #[test]
    fn the_search_closes_every_gap_whatever_the_block_time() {
        for t0 in [300.0, 3_000.0, 50_000.0] {
            for guess in [1.0, 0.05, 20.0] {
                check(t0, guess, 8);
                check(t0, guess, 16);
            }
        }
    }

    /// A curve that cannot be split further stops at the probe limit.
    #[test]
    fn a_jump_the_pause_cannot_split_stops_at_the_limit() {
        let aim = Aim { points: 8, max_gap: 0.15, max_probes: 20, block_bus_bytes: 4096.0 };
        let step = |p: Option<u64>| Ok(if p == Some(0) { 20e9 } else { 1e9 });
        let got = pauses(aim, step).unwrap();
        assert!(got.len() <= 20, "{}", got.len());
        assert!(largest_gap(&got.iter().map(|p| p.bytes_per_s).collect::<Vec<_>>()) > 0.15);
    }
}
