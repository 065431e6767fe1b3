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
        match self {
            StreamShape::Sum1 => "sum1",
            StreamShape::Sum4 => "sum4",
            StreamShape::Simd => "simd",
            StreamShape::SimdPrefetch => "simd-prefetch",
            StreamShape::Store => "store",
            StreamShape::StoreNt => "store-nt",
            StreamShape::Copy => "copy",
            StreamShape::CopyNt => "copy-nt",
            StreamShape::Triad => "triad",
            StreamShape::Update => "update",
            StreamShape::Mix31 => "mix-3:1",
        }
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
        !StreamShape::READ.contains(&self)
    }

    /// Whether its stores are non-temporal.
    pub fn non_temporal(self) -> bool {
        matches!(self, StreamShape::StoreNt | StreamShape::CopyNt)
    }

    /// Arrays the kernel touches (A plus its sources).
    pub fn streams(self) -> usize {
        match self {
            StreamShape::Copy | StreamShape::CopyNt => 2,
            StreamShape::Triad => 3,
            StreamShape::Mix31 => 4,
            _ => 1,
        }
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
        let f = 8u64;
        let (reads, writes, allocate, flops) = match self {
            StreamShape::Sum1 | StreamShape::Sum4 | StreamShape::Simd | StreamShape::SimdPrefetch => (1, 0, 0, 1),
            StreamShape::Store => (0, 1, 1, 0),
            StreamShape::StoreNt => (0, 1, 0, 0),
            StreamShape::Copy => (1, 1, 1, 0),
            StreamShape::CopyNt => (1, 1, 0, 0),
            StreamShape::Triad => (2, 1, 1, 2),
            StreamShape::Update => (1, 1, 0, 1),
            StreamShape::Mix31 => (3, 1, 1, 2),
        };
        let t = Traffic {
            bytes_read_per_element: reads * f,
            bytes_written_per_element: writes * f,
            write_allocate_bytes_per_element: allocate * f,
        };
        (t, flops)
    }
}
