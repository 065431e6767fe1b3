//! What each experiment is, as data: its name (as the CLI and the
//! document spell it), the one-line summary `--help` shows, the question it
//! answers, its title in the report and the classic result it modernises.
//!
//! The model's vocabulary of experiments: the report reads it by name, the
//! experiments' registry (`crate::experiments::registry`) pairs each with
//! how it runs, and a consistency test there checks that the two, the
//! outcomes, the schema and the README name the same experiments.

/// One experiment, described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct About {
    /// As the CLI, `--only` and the document spell it.
    pub name: &'static str,
    /// The subcommand's line in `--help`.
    pub summary: &'static str,
    /// The section title in the report.
    pub title: &'static str,
    /// The question the section answers.
    pub question: &'static str,
    /// The classic result it modernises ("" when none).
    pub classic: &'static str,
}

pub const INFO: About = About {
    name: "info",
    summary: "Machine fingerprint: CPU, caches and TLBs as claimed (each checked) beside the measured clock and cache levels, huge pages, THP, PMU, prefetch instructions",
    title: "Machine",
    question: "What is this machine: CPU, caches, TLBs per page size, huge-page pools, THP, counters?",
    classic: "",
};

pub const BANDWIDTH: About = About {
    name: "bandwidth",
    summary: "Read bandwidth per loop shape, single- and all-thread, with a software-prefetch distance sweep",
    title: "Read bandwidth and software prefetch",
    question: "How fast can one core (and all cores) stream-read memory, and how much does software prefetch at distance D help? Which loop shape gets there?",
    classic: "McCalpin 2010: single-thread Opteron read rose from ~4.5 to ~6.08 GB/s with prefetch 96+ elements ahead; large pages +3%.",
};

pub const LATENCY: About = About {
    name: "latency",
    summary: "Load-to-use latency from L1 to DRAM per page policy, its knees, and memory-level parallelism",
    title: "Load-to-use latency",
    question: "What is the latency from L1 to DRAM for each page size, and how much memory-level parallelism does one core reach?",
    classic: "McCalpin 2010: 6.08 GB/s × 74 ns ≈ 450 B ≈ 7 lines in flight (Little's law).",
};

pub const LOADED_LATENCY: About = About {
    name: "loaded-latency",
    summary: "Latency as the memory system fills: one CPU chases while the others load memory at a swept rate (MLC's loaded latency)",
    title: "Latency under load",
    question: "How does memory latency grow as the other CPUs fill the memory system, at what bandwidth does the curve bend, and how many lines are in flight at each point?",
    classic: "McCalpin: Bandwidth = Concurrency / Latency, and latency rises as the queues fill; Intel MLC --loaded_latency draws this curve.",
};

pub const NUMA: About = About {
    name: "numa",
    summary: "Node × node latency and read bandwidth, memory bound to each node (one line on a single-node machine)",
    title: "NUMA nodes",
    question: "How far is each node's memory from each node's CPUs, in latency and read bandwidth?",
    classic: "",
};

pub const TLB: About = About {
    name: "tlb",
    summary: "TLB reach per page size and the cost of a page walk",
    title: "TLB reach and page walks",
    question: "How much memory does each TLB level cover per page size, and what does a page walk cost?",
    classic: "UltraSPARC III: 512 entries × 8 KiB = 4 MiB reach; ~90 cycles per miss.",
};

pub const WORKING_SET: About = About {
    name: "working-set",
    summary: "The 2002 sample application (random rows of three large float arrays) on every page policy: time, FLOP/s, speed-up, coverage, TLB cost",
    title: "Large working sets on huge pages",
    question: "How much faster do random rows of three large float arrays run on each page policy, and did the arrays really get huge pages?",
    classic: "2002, UltraSPARC III: 85 s → 15 s on 4 MiB ISM pages (×5.7); DTLB miss rate 30% → 0.03%, CPI 6.89 → 2.59.",
};

pub const PREFETCH_FAULT: About = About {
    name: "prefetch-fault",
    summary: "What a prefetch of NULL, an unmapped, PROT_NONE or kernel address costs; whether a prefetch survives a TLB miss",
    title: "Prefetching bad addresses",
    question: "What does a prefetch of NULL, an unmapped, a PROT_NONE or a kernel address cost? Does a prefetch that misses the TLB walk the page table?",
    classic: "UltraSPARC IV+ strong prefetch of address 0: 1.34 s of system time per 10^6 prefetches; the weak variant cost nothing.",
};

pub const PAGE_INIT: About = About {
    name: "page-init",
    summary: "Page-descriptor initialisation: locked, lock-free, prefetch, parallel, against the store-bandwidth limit",
    title: "Page-descriptor initialisation",
    question: "How fast can a kernel-style array of 128-byte page descriptors be initialised and freed, and how close is that to the store-bandwidth limit?",
    classic: "Solaris 10 page_t init: 1.785 µs → 0.388 µs per page (4.6×) with prefetch and no locks.",
};

pub const CALLS: About = About {
    name: "calls",
    summary: "What a call and its return cost as a call chain deepens: direct, PLT, GOT, all registers saved, inlined",
    title: "Deep call chains",
    question: "What does a call and its return cost as a chain deepens, through a PLT, with every register saved, or inlined; where does the return-stack predictor run out?",
    classic: "2009, UltraSPARC T1: 3 M register-window spill/fill traps per second on one thread (~300 ns each); inlining cured it.",
};

pub const CONTEXT: About = About {
    name: "context",
    summary: "What setjmp, sigsetjmp, getcontext and swapcontext cost, which enter the kernel, and the Ruby lesson",
    title: "Context saves",
    question: "What do setjmp, sigsetjmp, getcontext and swapcontext cost, which of them enter the kernel, and what does a needless heavy save cost an interpreter?",
    classic: "Ruby 1.8 flushed all register windows on every protected call: removing the flush gave 10% to nearly 2×.",
};

pub const C2C: About = About {
    name: "c2c",
    summary: "Core-to-core latency: one cache line bounced between every pair of CPUs, grouped by topology",
    title: "Core-to-core latency",
    question: "How long does one cache line take to travel between two CPUs, by their topology?",
    classic: "",
};

pub const STAT: About = About {
    name: "stat",
    summary: "Count a program's events (at intervals with -I), derive CPI, miss rates and the time in page walks, and advise; honest without a PMU",
    title: "A program's counters",
    question: "What did the program count, what follows from it, and what cannot be known on this machine?",
    classic: "2002: cputrack -T 5 and libcpc, then CPI 6.89 and 31 s of 85 s lost to TLB misses, by hand.",
};

pub const HUGEPAGES: About = About {
    name: "hugepages",
    summary: "Does this unmodified program get faster on huge pages? A/B runs through glibc's malloc tunable, with the coverage read back",
    title: "Huge pages for an unmodified program",
    question: "Does this program get faster on huge pages, and did it really get them?",
    classic: "",
};

pub const WSS: About = About {
    name: "wss",
    summary: "A program's hot working set over time, per mapping, from the page tables' accessed bits, set beside the TLB's reach",
    title: "A program's hot working set",
    question: "How much memory does the program touch, where, and does it outgrow what the TLB can map?",
    classic: "2002: DTLB-miss counters said the sample application's data outgrew the TLB; 4 MiB ISM pages cured it.",
};

pub const REGIONS: About = About {
    name: "regions",
    summary: "Counters around the regions a program marked through the region API (MEMPERF_REGIONS), read back by `memperf report`",
    title: "Counters around regions of a program",
    question: "What did each instrumented region cost?",
    classic: "",
};

/// Every experiment a document can hold, the suite's in the suite's order.
pub static ALL: &[About] = &[
    INFO,
    BANDWIDTH,
    LATENCY,
    LOADED_LATENCY,
    NUMA,
    TLB,
    WORKING_SET,
    PREFETCH_FAULT,
    PAGE_INIT,
    CALLS,
    CONTEXT,
    C2C,
    STAT,
    HUGEPAGES,
    WSS,
    REGIONS,
];

/// The experiment called `name`, if memperf knows it.
pub fn of(name: &str) -> Option<&'static About> {
    ALL.iter().find(|a| a.name == name)
}
