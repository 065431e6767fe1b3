//! The budgets every preset is sized under.
//!
//! Memory: all regions an experiment holds at once, summed, stay within
//! [`MEMORY_SHARE_OF_TOTAL`] of MemTotal and [`MEMORY_SHARE_OF_AVAILABLE`]
//! of MemAvailable, whatever the machine claims of its caches. Time: the
//! suite runs within its preset's box ([`suite_box_s`], shared out by
//! [`super::timebox`]).

use super::Preset;
use crate::machine::Fingerprint;
use crate::units::{Bytes, GIB, MIB};

/// Share of MemTotal a preset's regions may hold at once.
pub const MEMORY_SHARE_OF_TOTAL: f64 = 0.25;
/// Share of MemAvailable a preset's regions may hold at once.
pub const MEMORY_SHARE_OF_AVAILABLE: f64 = 0.5;
/// Share of MemAvailable sizes given on the command line may take.
pub const EXPLICIT_SHARE_OF_AVAILABLE: f64 = 0.8;

/// The suite's time box per preset, in seconds from the run's start (the
/// probe counts in it): within the minute and the quarter hour, less a
/// margin for writing the results and for a last look that starts just
/// before its share ends. The subcommands have none: they measure what
/// they are asked for.
pub fn suite_box_s(preset: Preset) -> Option<f64> {
    match preset {
        Preset::Quick => Some(58.0),
        Preset::Full => Some(870.0),
        Preset::Default => None,
    }
}

/// What a preset may use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Bytes all regions alive at once may hold.
    pub memory: Bytes,
}

impl Budget {
    pub fn of(m: &Fingerprint) -> Budget {
        let total = m.memory_total_bytes.map_or(4 * GIB, |b| b.0) as f64;
        let available = m.memory_available_bytes.map_or(total as u64, |b| b.0) as f64;
        let bytes = (total * MEMORY_SHARE_OF_TOTAL).min(available * MEMORY_SHARE_OF_AVAILABLE);
        Budget { memory: Bytes((bytes as u64).max(64 * MIB)) }
    }

    /// The largest size of `count` equal regions that fit the budget,
    /// rounded down to a whole MiB.
    pub fn per_region(&self, count: u64) -> Bytes {
        Bytes((self.memory.0 / count.max(1)) / MIB * MIB)
    }
}

/// A size for a working set meant to reach memory: `factor` × the sizing
/// LLC (measured far level, else a plausible claim), at least `floor`, at
/// most what `count` regions of it may take of the budget.
pub fn memory_size(m: &Fingerprint, factor: u64, floor: Bytes, count: u64) -> Bytes {
    let (llc, _) = m.sizing_llc();
    let want = (factor * llc.0).max(floor.0);
    Bytes(want.min(Budget::of(m).per_region(count).0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_a_share_of_total_and_available_memory() {
        let mut m = crate::machine::collect();
        m.memory_total_bytes = Some(Bytes(24 * GIB));
        m.memory_available_bytes = Some(Bytes(23 * GIB));
        assert_eq!(Budget::of(&m).memory, Bytes(6 * GIB));
        m.memory_available_bytes = Some(Bytes(4 * GIB));
        assert_eq!(Budget::of(&m).memory, Bytes(2 * GIB));
        assert_eq!(Budget::of(&m).per_region(5), Bytes(409 * MIB));
    }

    #[test]
    fn a_huge_claimed_cache_cannot_size_past_the_budget() {
        // The 480 MiB claim is implausible: the default 32 MiB sizes instead.
        let mut m = crate::test_support::claiming_l3(Bytes(24 * GIB), 480 * MIB, vec!["240MiB per CPU".into()]);
        m.memory_available_bytes = Some(Bytes(23 * GIB));
        assert_eq!(memory_size(&m, 4, Bytes(64 * MIB), 5), Bytes(128 * MIB));
        // However large a plausible claim, five arrays fit 6 GiB.
        m.caches[0].size_bytes = Bytes(GIB);
        m.caches[0].implausible.clear();
        assert!(memory_size(&m, 8, Bytes(64 * MIB), 5).0 * 5 <= 6 * GIB);
    }
}
