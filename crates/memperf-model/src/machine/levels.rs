//! Where the cache levels end, as measured at the start of a run.

use crate::analysis::levels::CacheLevelsFound;
use crate::memory::PagePolicy;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// One working set of the probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LevelPoint {
    pub size_bytes: Bytes,
    /// Median ns per load.
    pub latency_ns: crate::units::Nanos,
    pub samples_ns: Vec<f64>,
}

/// The measured cache levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MeasuredLevels {
    /// The page policy of the chase, and the share of it on huge pages.
    pub pages: PagePolicy,
    pub huge_fraction: Option<f64>,
    pub points: Vec<LevelPoint>,
    pub found: CacheLevelsFound,
    /// Seconds the probe took, its doublings included.
    pub duration_s: f64,
    /// Every sample ended where the cycle says.
    pub valid: bool,
    /// One thread reading the largest working set sequentially, B/s: what
    /// the plan costs streaming passes with (not a bandwidth result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_s: Option<f64>,
    /// B/s a region is mapped and touched at, on 4 KiB pages and on THP
    /// (direct compaction included), measured on 32 MiB each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_bytes_per_s: Option<(f64, f64)>,
    /// The probe's later looks: the points around the last knee measured
    /// again, until a look leaves the finding on each point's median over
    /// the looks as it was (both confirm a far level and both verify memory,
    /// or neither; `found` is then the later far level and the later start
    /// of memory of the two), or four looks did not settle (`found` then
    /// says "unstable").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<Vec<LevelPoint>>,
    /// One thread reading sequentially (bandwidth's `simd` kernel) over the
    /// far level's working sets, doubling: the best of three passes, B/s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_rates: Vec<ReadRate>,
    /// Working sets against their doubling, each pair measured in the
    /// same repetitions: what says where memory begins below memory by
    /// size ([`MeasuredLevels::memory_by_doublings`]). `None` in a document
    /// recorded before them; empty where no size below memory by size was
    /// left to pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doublings: Option<Vec<Doubling>>,
}

crate::named_enum! {
    /// What a doubling measures.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, schemars::JsonSchema)]
    pub enum DoublingKind ("doubling kind") {
        /// One dependent random chase (time per load).
        Chase = "chase",
        /// One thread reading sequentially (time per byte).
        Read = "read",
    }
}

impl DoublingKind {
    /// How far the doubled size may differ and the pair still agree: the
    /// flatness limit memory has.
    pub fn flat(self) -> f64 {
        match self {
            DoublingKind::Chase => super::CHASE_FLAT,
            DoublingKind::Read => super::READ_FLAT,
        }
    }
}

/// A working set against its doubling and against memory by size, the
/// three measured once a repetition in shuffled order: each one's time
/// per load (or per byte) over this set's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Doubling {
    pub kind: DoublingKind,
    pub size_bytes: Bytes,
    /// Twice the set over the set.
    pub ratio: crate::timing::Ratio,
    /// Memory by size over the set, where that is past the doubling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_memory: Option<(Bytes, crate::timing::Ratio)>,
}

impl Doubling {
    /// The set is memory's: its doubling agrees within the flatness limit,
    /// and memory by size within that limit per doubling on average (a
    /// cache's plateau is flat too, but far from memory), each at the
    /// verdict engine's confidence.
    pub fn agrees(&self) -> bool {
        let flat = self.kind.flat();
        let to_memory = self.to_memory.as_ref().is_none_or(|(at, r)| {
            let doublings = (at.0 as f64 / self.size_bytes.0 as f64).log2();
            r.inside((1.0 + flat).powf(doublings) - 1.0)
        });
        self.ratio.inside(flat) && to_memory
    }
}

/// One size of the probe's sequential reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadRate {
    pub size_bytes: Bytes,
    pub bytes_per_s: f64,
}

impl MeasuredLevels {
    /// Where memory begins for `kind` by the doublings: the first size
    /// whose pair agrees within the flatness limit; `None` where none
    /// did (or none was measured).
    pub fn memory_by_doublings(&self, kind: DoublingKind) -> Option<Bytes> {
        self.doublings.iter().flatten().find(|d| d.kind == kind && d.agrees()).map(|d| d.size_bytes)
    }

    /// The first read size, at or past where latency's memory begins,
    /// whose doubling changes the rate by under `within` (a fraction), and
    /// whose doublings to the largest size do too, on average (one flat
    /// pair between two falls is noise, not memory): where a sequential
    /// read is in memory, verified in the same run.
    pub fn read_memory_from(&self, within: f64) -> Option<Bytes> {
        let from = self.found.memory_from?;
        let last = self.read_rates.last()?;
        let per_doubling = |r: &ReadRate| {
            let doublings = (last.size_bytes.0 as f64 / r.size_bytes.0 as f64).log2();
            (doublings > 0.0).then(|| (last.bytes_per_s / r.bytes_per_s).powf(1.0 / doublings) - 1.0)
        };
        self.read_rates
            .windows(2)
            .filter(|w| w[0].size_bytes >= from && w[1].size_bytes.0 == 2 * w[0].size_bytes.0)
            .find(|w| {
                (w[1].bytes_per_s / w[0].bytes_per_s - 1.0).abs() < within
                    && per_doubling(&w[0]).is_some_and(|d| d.abs() < within)
            })
            .map(|w| w[0].size_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MIB;

    fn levels(rates: &[(u64, f64)]) -> MeasuredLevels {
        MeasuredLevels {
            pages: PagePolicy::Thp,
            huge_fraction: Some(1.0),
            points: vec![],
            found: CacheLevelsFound {
                levels: vec![],
                last_cache_end: None,
                far_from: Some(Bytes(32 * MIB)),
                far_ns: None,
                far_not_reached: None,
                memory_from: Some(Bytes(64 * MIB)),
                memory_not_verified: None,
            },
            duration_s: 1.0,
            valid: true,
            read_bytes_per_s: None,
            fault_bytes_per_s: None,
            looks: vec![],
            read_rates: rates
                .iter()
                .map(|&(m, g)| ReadRate { size_bytes: Bytes(m * MIB), bytes_per_s: g * 1e9 })
                .collect(),
            doublings: None,
        }
    }

    /// The first pair that agrees within its kind's limit says where memory
    /// begins: a chase ×1.06 [×1.04, ×1.08] does not agree within 7%, one
    /// ×1.02 [×0.99, ×1.05] does; a read whose interval reaches ×1.06 does
    /// not agree within 5%; and memory by size must agree too.
    #[test]
    fn memory_begins_at_the_first_doubling_that_agrees() {
        let d = |kind, mib: u64, (e, lo, hi): (f64, f64, f64)| Doubling {
            kind,
            size_bytes: Bytes(mib * MIB),
            ratio: crate::timing::Ratio::stated(10, e, lo, hi, 0.99),
            to_memory: None,
        };
        let mut m = levels(&[]);
        assert_eq!(m.memory_by_doublings(DoublingKind::Chase), None);
        m.doublings = Some(vec![
            d(DoublingKind::Chase, 32, (1.06, 1.04, 1.08)),
            d(DoublingKind::Read, 32, (1.02, 0.99, 1.06)),
            d(DoublingKind::Chase, 64, (1.02, 0.99, 1.05)),
        ]);
        assert_eq!(m.memory_by_doublings(DoublingKind::Chase), Some(Bytes(64 * MIB)));
        assert_eq!(m.memory_by_doublings(DoublingKind::Read), None);
        // A cache's plateau: flat at its doubling, ×3 from memory by size
        // two doublings on; memory ×1.12 away, within 7% a doubling, agrees.
        let plateau = |e: f64| Doubling {
            to_memory: Some((Bytes(16 * MIB), crate::timing::Ratio::stated(10, e, e - 0.02, e + 0.02, 0.99))),
            ..d(DoublingKind::Chase, 4, (1.0, 0.98, 1.02))
        };
        assert!(!plateau(3.0).agrees());
        assert!(plateau(1.12).agrees());
        assert!(!plateau(1.14).agrees(), "1.16 is past 1.07² = 1.145");
    }

    /// Two probes' reads: a flat pair (64 → 128 MiB) before the
    /// rate falls another 30% is no memory; two flat doublings at the end
    /// are.
    #[test]
    fn a_read_is_in_memory_where_its_rate_stops_falling() {
        let run2 = levels(&[(32, 53.4), (64, 48.8), (128, 48.2), (256, 38.5), (512, 32.9), (1024, 34.0)]);
        assert_eq!(run2.read_memory_from(0.05), Some(Bytes(512 * MIB)));
        let run3 = levels(&[(32, 79.3), (64, 58.7), (128, 48.4), (256, 43.5), (512, 42.8), (1024, 42.5)]);
        assert_eq!(run3.read_memory_from(0.05), Some(Bytes(256 * MIB)));
        let falling = levels(&[(64, 60.0), (128, 54.0), (256, 48.6), (512, 43.7), (1024, 39.4)]);
        assert_eq!(falling.read_memory_from(0.05), None);
    }
}
