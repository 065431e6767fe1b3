//! The clock the core really runs at, measured two independent ways and
//! believed only when they agree: chains of dependent instructions of known
//! latency, none with an immediate operand (a renamer executes `add reg,
//! imm` at rename and reads 15–20 GHz): `add reg, reg` and `imul reg, reg`
//! on x86-64, `add` and `eor` on aarch64. [`judge`] accepts a figure only
//! when both chains agree within [`AGREE`], within physical bounds
//! ([`MIN_GHZ`]..[`MAX_GHZ`]), and within [`NOMINAL_RATIO`] of any nominal
//! clock the machine states; otherwise the clock is "not measured", with
//! the reason, and nothing is given in cycles.

use super::Clock;
pub use memperf_model::timing::core_clock::*;

/// Instructions per loop iteration (the loop's own counter runs beside them).
const OPS_PER_ITER: u64 = 16;

/// A dependent chain: runs `iters` × 16 instructions, returns the result.
type ChainFn = fn(u64) -> u64;

/// One chain: its name, latency, kernel and the result it must give.
struct Chain {
    method: &'static str,
    cycles_per_op: f64,
    run: ChainFn,
    expect: fn(u64) -> u64,
}

/// The constant the imul chain multiplies by (odd, so no product is 0).
pub const IMUL_FACTOR: u64 = 0x9E37_79B9_7F4A_7C15;

/// A dependent chain: `iters` × 16 copies of one register instruction on
/// `x` (its other operand `k` in a register, never an immediate), from
/// `start`, behind the loop's own counter.
macro_rules! chain {
    ($(#[$doc:meta])* $arch:literal, $name:ident, $start:expr, $k:expr, $ins:literal, $count:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = $arch)]
        #[inline(never)]
        pub fn $name(iters: u64) -> u64 {
            let mut x: u64 = $start;
            let n = iters.max(1);
            let k = std::hint::black_box($k);
            // SAFETY: register arithmetic only; no memory is touched.
            unsafe {
                std::arch::asm!(
                    "2:",
                    $ins, $ins, $ins, $ins, $ins, $ins, $ins, $ins,
                    $ins, $ins, $ins, $ins, $ins, $ins, $ins, $ins,
                    $count,
                    x = inout(reg) x,
                    k = in(reg) k,
                    n = inout(reg) n => _,
                    options(nomem, nostack),
                );
            }
            x
        }
    };
}

chain!(
    /// `iters` × 16 dependent `add x, k` (k = 1).
    "x86_64", add_chain, 0, 1u64, "add {x}, {k}", "dec {n}\njnz 2b"
);
chain!(
    /// `iters` × 16 dependent `imul x, k` (k = [`IMUL_FACTOR`]).
    "x86_64", second_chain, 1, IMUL_FACTOR, "imul {x}, {k}", "dec {n}\njnz 2b"
);
chain!(
    /// `iters` × 16 dependent `add x, x, k` (k = 1).
    "aarch64", add_chain, 0, 1u64, "add {x}, {x}, {k}", "subs {n}, {n}, #1\nb.ne 2b"
);
chain!(
    /// `iters` × 16 dependent `eor x, x, k` (an even count: x ends as it began).
    "aarch64", second_chain, 1, IMUL_FACTOR, "eor {x}, {x}, {k}", "subs {n}, {n}, #1\nb.ne 2b"
);

/// `base` to the power `exp`, wrapping (what the imul chain computes).
#[cfg(any(test, target_arch = "x86_64"))]
fn wrapping_pow(mut base: u64, mut exp: u64) -> u64 {
    let mut acc = 1u64;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

#[cfg(target_arch = "x86_64")]
fn chains() -> [Chain; 2] {
    [
        Chain { method: "add-reg-reg", cycles_per_op: 1.0, run: add_chain, expect: |n| n.max(1) * OPS_PER_ITER },
        Chain {
            method: "imul-reg-reg",
            cycles_per_op: 3.0,
            run: second_chain,
            expect: |n| wrapping_pow(IMUL_FACTOR, n.max(1) * OPS_PER_ITER),
        },
    ]
}

#[cfg(target_arch = "aarch64")]
fn chains() -> [Chain; 2] {
    [
        Chain { method: "add-reg-reg", cycles_per_op: 1.0, run: add_chain, expect: |n| n.max(1) * OPS_PER_ITER },
        Chain { method: "eor-reg-reg", cycles_per_op: 1.0, run: second_chain, expect: |_| 1 },
    ]
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn chains() -> [Chain; 0] {
    []
}

/// Times one chain: `samples` runs of at least `min_sample_s`, each checked
/// to have computed what it should. `None` when a result is wrong.
fn time_chain(clock: &dyn Clock, chain: &Chain, samples: usize, min_sample_s: f64) -> Option<ChainFigure> {
    let mut iters = 1000u64;
    let mut ghz = Vec::with_capacity(samples);
    while ghz.len() < samples.max(1) {
        let t0 = clock.now_ns();
        let result = (chain.run)(iters);
        let ns = clock.now_ns().saturating_sub(t0);
        if result != (chain.expect)(iters) {
            return None;
        }
        if (ns as f64) < min_sample_s * 1e9 {
            let grow =
                if ns == 0 { 10 } else { ((min_sample_s * 1.2e9) / ns as f64).ceil().clamp(1.1, 10.0) as u64 + 1 };
            iters = iters.saturating_mul(grow);
            continue;
        }
        ghz.push((iters * OPS_PER_ITER) as f64 * chain.cycles_per_op / ns as f64);
    }
    let s = super::Summary::of(&ghz)?;
    Some(ChainFigure {
        method: chain.method.into(),
        cycles_per_op: chain.cycles_per_op,
        ghz: s.median,
        min_ghz: s.min,
        max_ghz: s.max,
        samples: s.count,
    })
}

/// Decides whether the chains' figures make a clock (pure: the same rule
/// re-judges a recorded document).
pub fn judge(methods: &[ChainFigure], nominal: &[Nominal]) -> Result<CoreClock, String> {
    if methods.len() < 2 {
        return Err(if methods.is_empty() {
            "no dependent chain is written for this architecture".into()
        } else {
            format!("only one chain ({}) ran; two must agree", methods[0].method)
        });
    }
    let (lo, hi) = methods.iter().fold((f64::INFINITY, 0f64), |(lo, hi), m| (lo.min(m.ghz), hi.max(m.ghz)));
    let figures = || methods.iter().map(|m| format!("{} {:.2} GHz", m.method, m.ghz)).collect::<Vec<_>>().join(", ");
    if hi / lo - 1.0 > AGREE {
        return Err(format!("the chains disagree by more than {:.0}% ({})", AGREE * 100.0, figures()));
    }
    let ghz = methods.iter().map(|m| m.ghz).sum::<f64>() / methods.len() as f64;
    if !(MIN_GHZ..=MAX_GHZ).contains(&ghz) {
        return Err(format!("{ghz:.2} GHz is outside what any core runs at ({MIN_GHZ}–{MAX_GHZ} GHz): {}", figures()));
    }
    if let Some(n) =
        nominal.iter().find(|n| n.ghz > 0.0 && (ghz / n.ghz > NOMINAL_RATIO || n.ghz / ghz > NOMINAL_RATIO))
    {
        return Err(format!(
            "{ghz:.2} GHz is more than ×{NOMINAL_RATIO} away from the nominal {:.2} GHz ({})",
            n.ghz, n.source
        ));
    }
    Ok(CoreClock {
        ghz,
        min_ghz: methods.iter().map(|m| m.min_ghz).fold(f64::INFINITY, f64::min),
        max_ghz: methods.iter().map(|m| m.max_ghz).fold(0.0, f64::max),
        samples: methods.iter().map(|m| m.samples).sum(),
        methods: methods.to_vec(),
    })
}

/// Measures the core clock on the calling thread with every chain this
/// architecture has, and judges the figures against `nominal`.
pub fn measure(clock: &dyn Clock, nominal: &[Nominal], samples: usize, min_sample_s: f64) -> ClockReading {
    let mut methods = Vec::new();
    for chain in chains().iter() {
        match time_chain(clock, chain, samples, min_sample_s) {
            Some(f) => methods.push(f),
            None => {
                return ClockReading {
                    methods,
                    nominal: nominal.to_vec(),
                    clock: None,
                    not_measured: Some(format!("the {} chain computed a wrong result", chain.method)),
                }
            }
        }
    }
    let verdict = judge(&methods, nominal);
    ClockReading {
        methods,
        nominal: nominal.to_vec(),
        not_measured: verdict.as_ref().err().cloned(),
        clock: verdict.ok(),
    }
}

/// The clock as experiments take it, before and after their sweep: three
/// runs of at least 5 ms per chain.
pub fn sample(clock: &dyn Clock, nominal: &[Nominal]) -> ClockReading {
    measure(clock, nominal, 3, 0.005)
}

/// The rate of the x86 time-stamp counter against CLOCK_MONOTONIC, in GHz,
/// over `window_s`: the nominal clock where the TSC is invariant.
#[cfg(target_arch = "x86_64")]
pub fn tsc_ghz(window_s: f64) -> Option<f64> {
    let start = std::time::Instant::now();
    // SAFETY: RDTSC reads a counter; it has no preconditions on x86-64.
    let c0 = unsafe { std::arch::x86_64::_rdtsc() };
    while start.elapsed().as_secs_f64() < window_s {
        std::hint::spin_loop();
    }
    // SAFETY: as above.
    let c1 = unsafe { std::arch::x86_64::_rdtsc() };
    let ns = start.elapsed().as_nanos() as f64;
    (c1 > c0 && ns > 0.0).then(|| (c1 - c0) as f64 / ns)
}

#[cfg(not(target_arch = "x86_64"))]
pub fn tsc_ghz(_window_s: f64) -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(method: &str, ghz: f64) -> ChainFigure {
        ChainFigure { method: method.into(), cycles_per_op: 1.0, ghz, min_ghz: ghz, max_ghz: ghz, samples: 3 }
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn the_chains_compute_what_they_say() {
        assert_eq!(add_chain(10), 160);
        assert_eq!(add_chain(1), 16);
        for c in chains() {
            for n in [1, 7, 1000] {
                assert_eq!((c.run)(n), (c.expect)(n), "{} over {n} iterations", c.method);
            }
        }
        assert_eq!(wrapping_pow(3, 4), 81);
        assert_eq!(wrapping_pow(IMUL_FACTOR, 1), IMUL_FACTOR);
    }

    #[test]
    fn a_fake_clock_gives_exact_figures_per_chain() {
        // Every read advances 10 ms: each timed run lasts 10 ms, whatever
        // its length; 1000 iterations × 16 ops × latency / 1e7 ns.
        let clock = crate::timing::FakeClock::stepping(vec![10_000_000]);
        let r = measure(&clock, &[], 3, 0.01);
        if chains().is_empty() {
            assert!(r.clock.is_none());
            return;
        }
        let lat: Vec<f64> = chains().iter().map(|c| c.cycles_per_op).collect();
        for (m, l) in r.methods.iter().zip(&lat) {
            assert_eq!(m.samples, 3);
            assert_eq!(m.ghz, 16_000.0 * l / 1e7);
        }
        // 0.0016 GHz is no clock: judged "not measured", with the reason.
        assert!(r.clock.is_none());
        let why = r.not_measured.unwrap();
        assert!(why.contains("outside what any core runs at") || why.contains("disagree"), "{why}");
    }

    /// The Intel recording's case: an immediate-add chain folded at
    /// rename read 19.4 GHz while a register chain read 3.6 GHz.
    #[test]
    fn disagreeing_chains_are_not_a_clock() {
        let why = judge(&[figure("add-reg-imm", 19.39), figure("imul-reg-reg", 3.6)], &[]).unwrap_err();
        assert!(why.contains("disagree by more than 10%"), "{why}");
        assert!(why.contains("19.39 GHz"), "{why}");
    }

    #[test]
    fn agreeing_chains_within_bounds_are_a_clock() {
        let nominal = [Nominal { source: "tsc".into(), ghz: 2.6 }];
        let c = judge(&[figure("add-reg-reg", 3.6), figure("imul-reg-reg", 3.5)], &nominal).unwrap();
        assert!((c.ghz - 3.55).abs() < 1e-12);
        assert_eq!((c.min_ghz, c.max_ghz, c.samples), (3.5, 3.6, 6));
        assert!(c.two_chains());
    }

    #[test]
    fn physics_and_the_nominal_clock_bound_an_agreed_figure() {
        let both = |g| [figure("a", g), figure("b", g)];
        assert!(judge(&both(19.0), &[]).unwrap_err().contains("outside what any core runs at"));
        assert!(judge(&both(0.1), &[]).unwrap_err().contains("outside"));
        let nominal = [Nominal { source: "brand-string".into(), ghz: 1.0 }];
        let why = judge(&both(6.0), &nominal).unwrap_err();
        assert!(why.contains("nominal 1.00 GHz (brand-string)"), "{why}");
        assert!(judge(&[figure("a", 3.0)], &[]).unwrap_err().contains("only one chain"));
    }

    #[test]
    fn one_chain_clocks_of_old_documents_give_no_cycles() {
        let old = CoreClock { ghz: 20.98, min_ghz: 20.0, max_ghz: 21.0, samples: 5, methods: vec![] };
        assert_eq!(mean_ghz(std::slice::from_ref(&old)), None);
        let new = judge(&[figure("a", 3.0), figure("b", 3.2)], &[]).unwrap();
        assert_eq!(mean_ghz(&[old, new]), Some(3.1));
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn the_real_clock_is_measured_and_plausible() {
        let r = measure(&crate::timing::MonotonicClock::new(), &[], 3, 0.005);
        assert_eq!(r.methods.len(), 2);
        // On a loaded machine the chains may disagree, or agree on a figure
        // no core runs at (both slowed by the same steal); then the reading
        // says so. When they agree the figure is a plausible clock.
        match (&r.clock, &r.not_measured) {
            (Some(c), None) => assert!(c.ghz > MIN_GHZ && c.ghz < MAX_GHZ, "{c:?}"),
            (None, Some(why)) => assert!(why.contains("disagree") || why.contains("outside what any core"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_tsc_runs_at_a_plausible_rate() {
        let g = tsc_ghz(0.01).unwrap();
        assert!(g > 0.1 && g < 10.0, "{g}");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_chains_are_register_to_register_loops() {
        use iced_x86::OpKind;
        for (f, name) in [(add_chain as fn(u64) -> u64, "add"), (second_chain, "imul")] {
            let ins = crate::kernels::disasm::instructions(f as *const u8);
            let ops: Vec<_> = ins.iter().filter(|i| format!("{:?}", i.mnemonic()).eq_ignore_ascii_case(name)).collect();
            assert!(ops.len() >= 16, "{name}: {}", ops.len());
            // No immediate operand: a renamer may execute immediate adds at rename.
            for i in ops {
                assert!((0..i.op_count()).all(|k| i.op_kind(k) == OpKind::Register), "{name}: {i:?}");
            }
            let m = crate::kernels::disasm::mnemonics(f as *const u8);
            assert!(m.iter().any(|m| m == "jne"), "{m:?}");
        }
    }
}
