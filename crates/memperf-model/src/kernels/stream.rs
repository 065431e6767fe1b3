//! The bandwidth kernels as the document names them: loop shapes, prefetch
//! hints, and the bytes each element index moves.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Loop shapes of the bandwidth experiment: four that read one array, and
/// the write side. Read:write mixes are ratios of the bytes the program
/// reads to those it writes: 1:0 is `simd`, 1:1 `copy`, 2:1 `triad`, and
/// 3:1 (`a = b + c·d`, likwid-bench's `triad`) has a kernel of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StreamShape {
    /// One scalar accumulator: bound by the add latency.
    Sum1,
    /// Four partial sums, unrolled to one cache line per iteration.
    Sum4,
    /// The widest vectors the CPU has, eight accumulators.
    Simd,
    /// `Simd` plus one software prefetch per cache line, D elements ahead.
    SimdPrefetch,
    /// `a = s`.
    Store,
    /// `a = s` with non-temporal (streaming) stores.
    StoreNt,
    /// `a = b`.
    Copy,
    /// `a = b` with non-temporal stores.
    CopyNt,
    /// STREAM's triad, `a = b + s·c`.
    Triad,
    /// Read-modify-write, `a = s·a`.
    Update,
    /// `a = b + c·d`: three streams read per one written.
    #[serde(rename = "mix-3:1")]
    Mix31,
}

impl StreamShape {
    pub const READ: [StreamShape; 4] =
        [StreamShape::Sum1, StreamShape::Sum4, StreamShape::Simd, StreamShape::SimdPrefetch];
    pub const WRITE: [StreamShape; 7] = [
        StreamShape::Store,
        StreamShape::StoreNt,
        StreamShape::Copy,
        StreamShape::CopyNt,
        StreamShape::Triad,
        StreamShape::Update,
        StreamShape::Mix31,
    ];

    pub fn all() -> Vec<StreamShape> {
        StreamShape::READ.into_iter().chain(StreamShape::WRITE).collect()
    }

    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// Its row of [`KERNEL_FACTS`].
    pub fn facts(self) -> &'static KernelFacts {
        KERNEL_FACTS.iter().find(|f| f.shape == self).expect("every shape has its row")
    }

    /// A name, or a read:write mix (`mix-1:0`, `mix-1:1`, `mix-2:1`,
    /// `mix-3:1`).
    pub fn parse(text: &str) -> Result<StreamShape> {
        let t = text.trim();
        let alias = match t {
            "mix-1:0" => Some(StreamShape::Simd),
            "mix-1:1" => Some(StreamShape::Copy),
            "mix-2:1" => Some(StreamShape::Triad),
            _ => None,
        };
        alias.or_else(|| StreamShape::all().into_iter().find(|s| s.name() == t)).ok_or_else(|| {
            Error::usage(format!(
                "unknown kernel '{text}': use sum1, sum4, simd, simd-prefetch, store, store-nt, copy, copy-nt, \
                 triad, update, or a mix mix-1:0, mix-1:1, mix-2:1, mix-3:1"
            ))
        })
    }

    /// Whether the kernel stores.
    pub fn writes(self) -> bool {
        self.facts().writes > 0
    }

    /// Whether its stores are non-temporal.
    pub fn non_temporal(self) -> bool {
        self.facts().non_temporal
    }

    /// Arrays the kernel touches (A plus its sources).
    pub fn streams(self) -> usize {
        self.facts().streams
    }
}

impl fmt::Display for StreamShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::named_enum! {
    /// Software prefetch hints.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, schemars::JsonSchema)]
    pub enum Hint ("prefetch hint") {
        T0 = "t0",
        T1 = "t1",
        T2 = "t2",
        Nta = "nta",
        /// Prefetch with intent to write (PREFETCHW).
        W = "w",
    }
}

impl Hint {
    /// The x86 instruction this hint compiles to.
    pub fn x86_instruction(self) -> &'static str {
        match self {
            Hint::T0 => "prefetcht0",
            Hint::T1 => "prefetcht1",
            Hint::T2 => "prefetcht2",
            Hint::Nta => "prefetchnta",
            Hint::W => "prefetchw",
        }
    }

    /// The aarch64 instruction this hint compiles to: PRFM with the
    /// operation nearest the x86 hint (t0 → L1, t1 → L2, t2 → L3, nta →
    /// L1 streaming, w → prefetch for store).
    pub fn arm_instruction(self) -> &'static str {
        match self {
            Hint::T0 => "prfm pldl1keep",
            Hint::T1 => "prfm pldl2keep",
            Hint::T2 => "prfm pldl3keep",
            Hint::Nta => "prfm pldl1strm",
            Hint::W => "prfm pstl1keep",
        }
    }
}

/// Metadata beside a kernel: what it moves and computes per element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamKernelInfo {
    pub shape: StreamShape,
    pub hint: Option<Hint>,
    /// Instruction set the kernel was built for (`avx512f`, `avx2`, `sse2`, `scalar`).
    pub isa: String,
    #[serde(flatten)]
    pub traffic: Traffic,
    pub flops_per_element: u64,
}

/// Bytes one element index moves: what the program asks for (reads and
/// writes), and the read of each written line that an ordinary store
/// causes before it (write-allocate, "read for ownership"). Non-temporal
/// stores and read-modify-write (whose line was just read) have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Traffic {
    pub bytes_read_per_element: u64,
    pub bytes_written_per_element: u64,
    pub write_allocate_bytes_per_element: u64,
}

impl Traffic {
    /// What the program reads and writes.
    pub fn program_bytes(&self) -> u64 {
        self.bytes_read_per_element + self.bytes_written_per_element
    }

    /// What crosses the memory bus: the program's bytes plus write-allocate.
    pub fn bus_bytes(&self) -> u64 {
        self.program_bytes() + self.write_allocate_bytes_per_element
    }
}

impl StreamShape {
    /// The bytes and flops of one element index.
    pub fn traffic(self) -> (Traffic, u64) {
        let f = self.facts();
        let t = Traffic {
            bytes_read_per_element: 8 * f.reads,
            bytes_written_per_element: 8 * f.writes,
            write_allocate_bytes_per_element: 8 * f.write_allocate,
        };
        (t, f.flops)
    }
}

/// What a checksum of a kernel's pass comes to, in closed form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// The sum of the checksum pattern over the array read (`pattern_sum`).
    PatternSum,
    /// The elements stored, passes × length; A then holds what the
    /// element's formula gives for the last pass (update: the product of
    /// every pass's scalar times A).
    ElementsStored,
}

/// One loop shape's facts, kept as data beside the loops (as likwid keeps
/// its kernels' in their .ptt files): the traffic the model counts, the
/// docs' kernel table (docs/methods/bandwidth.md) and the disassembly
/// tests all read this table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelFacts {
    pub shape: StreamShape,
    pub name: &'static str,
    /// What one element index does.
    pub formula: &'static str,
    /// f64 read and written per element index, and read for ownership
    /// before an ordinary store (write-allocate).
    pub reads: u64,
    pub writes: u64,
    pub write_allocate: u64,
    pub flops: u64,
    /// Arrays it touches: A plus its sources.
    pub streams: usize,
    pub non_temporal: bool,
    /// x86-64 mnemonics its loop must hold: each entry one of its
    /// `|`-separated prefixes.
    pub x86_must: &'static [&'static str],
    /// x86-64 mnemonic prefixes its loop must not hold.
    pub x86_must_not: &'static [&'static str],
    pub checksum: Checksum,
}

const ADD: &str = "vaddpd|addpd|vaddsd|addsd";
const PREFETCH: &str = "prefetcht0|prefetcht1|prefetcht2|prefetchnta|prefetchw";
const NT: &str = "vmovnt|movnt";

/// A row with no instructions to check: what [`KERNEL_FACTS`] builds on.
const fn row(
    shape: StreamShape,
    name: &'static str,
    formula: &'static str,
    [reads, writes, write_allocate, flops]: [u64; 4],
    streams: usize,
    non_temporal: bool,
) -> KernelFacts {
    KernelFacts {
        shape,
        name,
        formula,
        reads,
        writes,
        write_allocate,
        flops,
        streams,
        non_temporal,
        x86_must: &[],
        x86_must_not: &[],
        checksum: if writes > 0 { Checksum::ElementsStored } else { Checksum::PatternSum },
    }
}

/// Every loop shape, in the order of [`StreamShape::all`].
#[rustfmt::skip]
pub const KERNEL_FACTS: [KernelFacts; 11] = {
    use StreamShape as S;
    [
        KernelFacts { x86_must: &[ADD], x86_must_not: &[PREFETCH], ..row(S::Sum1, "sum1", "s += a[i], one accumulator", [1, 0, 0, 1], 1, false) },
        KernelFacts { x86_must: &[ADD], x86_must_not: &[PREFETCH], ..row(S::Sum4, "sum4", "s_j += a[i], four accumulators", [1, 0, 0, 1], 1, false) },
        KernelFacts { x86_must: &[ADD], x86_must_not: &[PREFETCH, "call"], ..row(S::Simd, "simd", "s_j += a[i], eight vector accumulators", [1, 0, 0, 1], 1, false) },
        KernelFacts { x86_must: &[ADD, PREFETCH], ..row(S::SimdPrefetch, "simd-prefetch", "simd, one prefetch a line D ahead", [1, 0, 0, 1], 1, false) },
        KernelFacts { x86_must_not: &[NT, "call"], ..row(S::Store, "store", "a[i] = s", [0, 1, 1, 0], 1, false) },
        KernelFacts { x86_must: &[NT, "sfence"], x86_must_not: &["call"], ..row(S::StoreNt, "store-nt", "a[i] = s, streaming", [0, 1, 0, 0], 1, true) },
        KernelFacts { x86_must_not: &[NT, "call"], ..row(S::Copy, "copy", "a[i] = b[i]", [1, 1, 1, 0], 2, false) },
        KernelFacts { x86_must: &[NT, "sfence"], x86_must_not: &["call"], ..row(S::CopyNt, "copy-nt", "a[i] = b[i], streaming", [1, 1, 0, 0], 2, true) },
        KernelFacts { x86_must_not: &[NT, "call"], ..row(S::Triad, "triad", "a[i] = b[i] + s·c[i]", [2, 1, 1, 2], 3, false) },
        KernelFacts { x86_must_not: &[NT, "call"], ..row(S::Update, "update", "a[i] = s·a[i]", [1, 1, 0, 1], 1, false) },
        KernelFacts { x86_must_not: &[NT, "call"], ..row(S::Mix31, "mix-3:1", "a[i] = b[i] + c[i]·d[i]", [3, 1, 1, 2], 4, false) },
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    /// One row a shape, in order; what it counts follows from its kind:
    /// a read kernel writes nothing, a streaming store reads no line for
    /// ownership, update reads the line it writes.
    #[test]
    fn every_shape_has_its_row_and_its_traffic_follows_from_it() {
        assert_eq!(KERNEL_FACTS.iter().map(|f| f.shape).collect::<Vec<_>>(), StreamShape::all());
        for f in &KERNEL_FACTS {
            assert_eq!(StreamShape::parse(f.name).unwrap(), f.shape);
            let reads_a = f.shape == StreamShape::Update;
            let allocate = f.writes > 0 && !f.non_temporal && !reads_a;
            assert_eq!(f.write_allocate, u64::from(allocate), "{}", f.name);
            assert_eq!(f.writes > 0, StreamShape::WRITE.contains(&f.shape), "{}", f.name);
            assert_eq!(f.streams as u64, 1 + f.reads - u64::from(reads_a) - u64::from(f.writes == 0), "{}", f.name);
        }
    }
}
