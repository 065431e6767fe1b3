//! SVE stream kernels, vector-length agnostic: the same code runs at every
//! vector length from 128 to 2048 bits (`cntd`, `addvl`, `incd`, `whilelo`
//! predicates for the tail), checked under emulation at the smallest and
//! the largest, 128 and 2048 bits. The read loop sums four vectors an
//! iteration into four accumulators (`ld1d` + `fadd`); the prefetch
//! variants issue one PRFM per line, `distance` elements ahead; the write
//! loops store two vectors an iteration (`st1d`, or `stnt1d`). Registers:
//! z0–z7 (clobbered through v0–v7, which they contain; all caller-saved)
//! and p0–p2.

use crate::kernels::abi::{Hint, StreamArg, StreamKernel};
use crate::kernels::write::{scalar, Op, COPY, MIX31, STORE, TRIAD, UPDATE};
use std::arch::asm;

/// The vector length in bytes.
///
/// # Safety
/// The CPU must have SVE.
#[target_feature(enable = "sve")]
pub unsafe fn vector_bytes() -> usize {
    let n: usize;
    // SAFETY: CNTB only reads the vector length into a register.
    unsafe { asm!("cntb {0}", out(reg) n, options(nomem, nostack, preserves_flags)) };
    n
}

/// One SVE read kernel: `$prefetch` is the PRFM operation's encoding, or
/// none.
macro_rules! sve_read {
    ($name:ident $(, $prfop:literal)?) => {
        /// SVE read: the sum of every element, once per pass.
        ///
        /// # Safety
        /// `arg.ptr` valid for `arg.len` f64; the CPU must have SVE.
        #[target_feature(enable = "sve")]
        #[inline(never)]
        pub unsafe fn $name(iters: u64, arg: &StreamArg) -> f64 {
            let mut total = 0.0;
            for _ in 0..iters {
                let p = std::hint::black_box(arg.ptr);
                let sum: f64;
                // SAFETY: the loads stay inside `len` elements from `p` (the
                // main loop while 4 vectors fit, the tail under whilelo);
                // prefetches never fault; every register written is declared.
                unsafe {
                    asm!(
                        "// scratch {o}",
                        "ptrue p1.d",
                        "mov z0.d, #0", "mov z1.d, #0", "mov z2.d, #0", "mov z3.d, #0",
                        "mov {i}, #0",
                        "cntd {vl4}, all, mul #4",
                        "add {pf}, {p}, {d}, lsl #3",
                        "mov {q}, {p}",
                        "2:",
                        "add {t}, {i}, {vl4}",
                        "cmp {t}, {n}",
                        "b.hi 4f",
                        $(
                            "mov {o}, #0",
                            "3:",
                            concat!("prfm #", $prfop, ", [{pf}, {o}]"),
                            "add {o}, {o}, #64",
                            "cmp {o}, {vl4}, lsl #3",
                            "b.lo 3b",
                            "addvl {pf}, {pf}, #4",
                        )?
                        "ld1d z4.d, p1/z, [{q}]",
                        "ld1d z5.d, p1/z, [{q}, #1, mul vl]",
                        "ld1d z6.d, p1/z, [{q}, #2, mul vl]",
                        "ld1d z7.d, p1/z, [{q}, #3, mul vl]",
                        "fadd z0.d, z0.d, z4.d",
                        "fadd z1.d, z1.d, z5.d",
                        "fadd z2.d, z2.d, z6.d",
                        "fadd z3.d, z3.d, z7.d",
                        "addvl {q}, {q}, #4",
                        "mov {i}, {t}",
                        "b 2b",
                        "4:",
                        "whilelo p0.d, {i}, {n}",
                        "b.none 6f",
                        "5:",
                        "ld1d z4.d, p0/z, [{p}, {i}, lsl #3]",
                        "fadd z0.d, p0/m, z0.d, z4.d",
                        "incd {i}",
                        "whilelo p0.d, {i}, {n}",
                        "b.first 5b",
                        "6:",
                        "fadd z0.d, z0.d, z1.d",
                        "fadd z2.d, z2.d, z3.d",
                        "fadd z0.d, z0.d, z2.d",
                        "faddv d0, p1, z0.d",
                        p = in(reg) p,
                        n = in(reg) arg.len,
                        d = in(reg) arg.distance,
                        i = out(reg) _,
                        t = out(reg) _,
                        q = out(reg) _,
                        pf = out(reg) _,
                        o = out(reg) _,
                        vl4 = out(reg) _,
                        out("v0") sum,
                        out("v1") _, out("v2") _, out("v3") _, out("v4") _,
                        out("v5") _, out("v6") _, out("v7") _,
                        out("p0") _, out("p1") _,
                        options(nostack, readonly),
                    )
                };
                total += sum;
            }
            total
        }
    };
}

sve_read!(read_plain);
sve_read!(read_pldl1keep, "0");
sve_read!(read_pldl2keep, "2");
sve_read!(read_pldl3keep, "4");
sve_read!(read_pldl1strm, "1");
sve_read!(read_pstl1keep, "16");

/// The SVE read kernel with the PRFM of `hint` (see [`crate::kernels::hint`]).
pub fn read_for(hint: Option<Hint>) -> StreamKernel {
    match hint {
        None => read_plain,
        Some(Hint::T0) => read_pldl1keep,
        Some(Hint::T1) => read_pldl2keep,
        Some(Hint::T2) => read_pldl3keep,
        Some(Hint::Nta) => read_pldl1strm,
        Some(Hint::W) => read_pstl1keep,
    }
}

/// `ld1d {z}.d` of the array operand `{src}` at index register `$i`
/// under predicate `$pg`.
macro_rules! load {
    ($z:literal, $src:literal, $pg:literal, $i:literal) => {
        concat!("ld1d ", $z, ".d, ", $pg, "/z, [{", $src, "}, ", $i, ", lsl #3]\n")
    };
}

/// The value of one vector of A, at index register `$i` under predicate
/// `$pg`, left in z4 (z7 holds the scalar).
macro_rules! value {
    (STORE, $pg:literal, $i:literal) => {
        "mov z4.d, z7.d\n"
    };
    (COPY, $pg:literal, $i:literal) => {
        load!("z4", "b", $pg, $i)
    };
    (TRIAD, $pg:literal, $i:literal) => {
        concat!(load!("z4", "b", $pg, $i), load!("z5", "c", $pg, $i), "fmla z4.d, ", $pg, "/m, z5.d, z7.d\n")
    };
    (UPDATE, $pg:literal, $i:literal) => {
        concat!(load!("z4", "a", $pg, $i), "fmul z4.d, z4.d, z7.d\n")
    };
    (MIX31, $pg:literal, $i:literal) => {
        concat!(
            load!("z4", "b", $pg, $i),
            load!("z5", "c", $pg, $i),
            load!("z6", "d", $pg, $i),
            "fmla z4.d, ",
            $pg,
            "/m, z5.d, z6.d\n"
        )
    };
}

/// One SVE write kernel: operation `$op`, store instruction `$st`.
macro_rules! sve_write {
    ($name:ident, $op:ident, $st:literal) => {
        /// SVE write: what [`crate::kernels::write::element`] says at every
        /// element, each pass.
        ///
        /// # Safety
        /// A valid for writing `arg.len` f64 (update: reading too), each
        /// source of the operation valid for reading it; the CPU has SVE.
        #[target_feature(enable = "sve")]
        #[inline(never)]
        pub unsafe fn $name(iters: u64, arg: &StreamArg) -> f64 {
            let [b, c, d] = arg.sources;
            for pass in 0..iters {
                let a = std::hint::black_box(arg.ptr as *mut f64);
                let s = scalar($op, arg.first_pass + pass);
                // SAFETY: every access is under a whilelo predicate of
                // indices below `len`, in A and the sources the operation
                // reads (the others are never named); registers declared.
                unsafe {
                    asm!(
                        "// sources {b} {c} {d}",
                        "mov z7.d, {s}",
                        "mov {i}, #0",
                        "whilelo p0.d, {i}, {n}",
                        "b.none 3f",
                        "2:",
                        "mov {j}, {i}",
                        "incd {j}",
                        "whilelo p2.d, {j}, {n}",
                        value!($op, "p0", "{i}"),
                        concat!($st, " z4.d, p0, [{a}, {i}, lsl #3]"),
                        value!($op, "p2", "{j}"),
                        concat!($st, " z4.d, p2, [{a}, {j}, lsl #3]"),
                        "incd {i}, all, mul #2",
                        "whilelo p0.d, {i}, {n}",
                        "b.first 2b",
                        "3:",
                        a = in(reg) a,
                        b = in(reg) b,
                        c = in(reg) c,
                        d = in(reg) d,
                        n = in(reg) arg.len,
                        s = in(reg) s.to_bits(),
                        i = out(reg) _,
                        j = out(reg) _,
                        out("v4") _, out("v5") _, out("v6") _, out("v7") _,
                        out("p0") _, out("p2") _,
                        options(nostack),
                    )
                };
            }
            if $st == "stnt1d" {
                // SAFETY: a store barrier orders memory accesses and touches nothing.
                unsafe { asm!("dmb ishst", options(nostack, preserves_flags)) };
            }
            (iters * arg.len as u64) as f64
        }
    };
}

sve_write!(store, STORE, "st1d");
sve_write!(store_nt, STORE, "stnt1d");
sve_write!(copy, COPY, "st1d");
sve_write!(copy_nt, COPY, "stnt1d");
sve_write!(triad, TRIAD, "st1d");
sve_write!(triad_nt, TRIAD, "stnt1d");
sve_write!(update, UPDATE, "st1d");
sve_write!(update_nt, UPDATE, "stnt1d");
sve_write!(mix31, MIX31, "st1d");
sve_write!(mix31_nt, MIX31, "stnt1d");

/// The SVE write kernel of `op`, non-temporal if `nt`.
pub fn write_for(op: Op, nt: bool) -> StreamKernel {
    match (op, nt) {
        (Op::Store, false) => store,
        (Op::Store, true) => store_nt,
        (Op::Copy, false) => copy,
        (Op::Copy, true) => copy_nt,
        (Op::Triad, false) => triad,
        (Op::Triad, true) => triad_nt,
        (Op::Update, false) => update,
        (Op::Update, true) => update_nt,
        (Op::Mix31, false) => mix31,
        (Op::Mix31, true) => mix31_nt,
    }
}
