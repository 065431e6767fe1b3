//! What a plan will cost, before it runs: each experiment's seconds from
//! the rates the machine probe measured ([`Rates`]), counted through the
//! same scheduler arithmetic the measurement follows
//! ([`crate::timing::schedule::estimate_s`]). The suite prints the plan,
//! scales it to its time budget ([`super::budget`]), drives the progress
//! bar's ETA with it, and records each estimate beside the time taken.

use crate::machine::Fingerprint;
use crate::memory::PagePolicy;
use crate::units::{Bytes, KIB, MIB};

/// The rates a plan is costed with.
#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    /// (working set bytes, ns per dependent load), ascending: the probe's
    /// curve, or a generic one where nothing was measured.
    curve: Vec<(f64, f64)>,
    /// One thread's sequential read, B/s.
    read_bps: f64,
    /// B/s regions are mapped and touched at: (4 KiB pages, huge pages).
    fault_bps: (f64, f64),
}

/// Seconds of one core-clock reading (two chains, three 5 ms samples
/// each, and their calibration): the plan takes two per experiment.
pub const CLOCK_SAMPLE_S: f64 = 0.04;

/// Page faults and zeroing where the probe did not time them: B/s a
/// region is touched at, per page policy.
const FAULT_BPS_4K: f64 = 2.5e9;
const FAULT_BPS_HUGE: f64 = 8e9;
/// Building a random cycle (shuffle and link), s per line.
pub const LINK_S_PER_LINE: f64 = 12e-9;

impl Rates {
    pub fn of(m: &Fingerprint) -> Rates {
        let measured = m.measured_levels.as_ref();
        let curve: Vec<(f64, f64)> = match measured {
            Some(l) if l.points.len() >= 2 => {
                l.points.iter().map(|p| (p.size_bytes.0 as f64, p.latency_ns.0)).collect()
            }
            _ => {
                vec![(16.0 * KIB as f64, 1.2), (MIB as f64, 5.0), (8.0 * MIB as f64, 20.0), (64.0 * MIB as f64, 120.0)]
            }
        };
        let read_bps = measured.and_then(|l| l.read_bytes_per_s).filter(|r| *r > 1e8).unwrap_or(10e9);
        let fault_bps = measured.and_then(|l| l.fault_bytes_per_s).unwrap_or((FAULT_BPS_4K, FAULT_BPS_HUGE));
        Rates { curve, read_bps, fault_bps }
    }

    /// A constant machine, for tests: every load `ns`, reads at `read_bps`.
    pub fn flat(ns: f64, read_bps: f64) -> Rates {
        Rates { curve: vec![(1.0, ns), (1e18, ns)], read_bps, fault_bps: (FAULT_BPS_4K, FAULT_BPS_HUGE) }
    }

    /// ns of one dependent load over a working set of `size` (log-log
    /// interpolation of the curve; 4 KiB pages pay ×1.15 for walks past
    /// 16 MiB, which the huge-page probe does not).
    pub fn ns_per_load(&self, size: Bytes, pages: PagePolicy) -> f64 {
        let x = size.0.max(1) as f64;
        let c = &self.curve;
        let ns = match c.iter().position(|p| p.0 >= x) {
            Some(0) => c[0].1,
            None => c[c.len() - 1].1,
            Some(i) => {
                let (a, b) = (c[i - 1], c[i]);
                let t = (x.ln() - a.0.ln()) / (b.0.ln() - a.0.ln());
                (a.1.ln() + t * (b.1.ln() - a.1.ln())).exp()
            }
        };
        let walks = if pages == PagePolicy::Small && x > 16.0 * MIB as f64 { 1.15 } else { 1.0 };
        ns * walks
    }

    /// B/s `threads` threads stream at (one thread's rate; more share the
    /// memory: ×1.5 at most, a conservative guess for a cost).
    pub fn read_bps(&self, threads: usize) -> f64 {
        self.read_bps * (threads as f64).clamp(1.0, 1.5)
    }

    /// Seconds to map and touch `bytes` under `pages`.
    pub fn fault_s(&self, bytes: Bytes, pages: PagePolicy) -> f64 {
        bytes.0 as f64 / if pages == PagePolicy::Small { self.fault_bps.0 } else { self.fault_bps.1 }
    }

    /// Seconds to build a random cycle over `lines` lines.
    pub fn link_s(&self, lines: u64) -> f64 {
        lines as f64 * LINK_S_PER_LINE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_interpolate_on_the_measured_curve() {
        let r = Rates { curve: vec![(1024.0, 1.0), (4096.0, 4.0)], read_bps: 1e10, fault_bps: (2.5e9, 8e9) };
        assert_eq!(r.ns_per_load(Bytes(512), PagePolicy::Thp), 1.0);
        assert!((r.ns_per_load(Bytes(2048), PagePolicy::Thp) - 2.0).abs() < 1e-12, "log-log midpoint");
        assert_eq!(r.ns_per_load(Bytes(1 << 30), PagePolicy::Thp), 4.0);
        assert!((r.ns_per_load(Bytes(1 << 30), PagePolicy::Small) - 4.6).abs() < 1e-12);
        assert_eq!(r.read_bps(8), 1.5e10);
        assert_eq!(r.fault_s(Bytes(5_000_000_000), PagePolicy::Small), 2.0);
    }
}
