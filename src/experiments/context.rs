//! `memperf context`: what saving and restoring execution context costs —
//! the setjmp family, `getcontext`, `swapcontext` — on one thread and on
//! all, which of them enter the kernel (the measuring threads' system
//! time), and the Ruby lesson: Ruby 1.8 flushed every SPARC register window
//! on each protected call, needlessly. The analogue here is `sigsetjmp(env,
//! 1)` where `__builtin_setjmp` would do, shown by a small interpreter whose
//! every operation goes through a protected call. Every cell runs
//! interleaved; a cell's samples add up to at least `min_cell_s`, so that
//! clock ticks resolve its system time.

use super::options;
use super::{Bench, Experiment, Preset};
use crate::error::{Error, Result};
use crate::kernels::context::{self as k, Protection, SaveOp};
pub use crate::model::outcome::context::*;
use crate::model::Caution;
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::usage::Usage;
use crate::timing::{Summary, Team};
use serde::{Deserialize, Serialize};
use std::cell::Cell;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub ops: Vec<SaveOp>,
    pub threads: Vec<usize>,
    pub repetitions: usize,
    /// Each cell's samples add up to at least this (≥ 1 s resolves system
    /// time to about 1% at a 250 Hz tick).
    pub min_cell_s: f64,
    /// Operations in the interpreter's program.
    pub program_len: usize,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset) -> Params {
        let threads = crate::timing::team::thread_ladder();
        let (reps, min_cell_s) = match preset {
            // 0.1 s is 25 ticks at 250 Hz: enough to tell a system call
            // (microseconds of system time per op) from none.
            Preset::Quick => (10, 0.1),
            Preset::Default => (10, 1.0),
            Preset::Full => (14, 2.0),
        };
        Params {
            ops: SaveOp::ALL.to_vec(),
            threads,
            repetitions: reps,
            min_cell_s,
            program_len: 256,
            seed: 0x6374_7874,
        }
    }

    pub fn check(&self) -> Result<()> {
        if self.ops.is_empty() {
            return Err(Error::usage("--ops is empty: name at least one context save"));
        }
        if self.repetitions < 2 {
            return Err(Error::usage("--repetitions must be at least 2 (10 or more for an interval)"));
        }
        if !(self.min_cell_s > 0.0 && self.min_cell_s <= 600.0) {
            return Err(Error::usage("a cell's time lies in (0, 600] s: the preset or --quick sets it"));
        }
        Ok(())
    }
}

pub struct Context;

impl Experiment for Context {
    const NAME: &'static str = "context";
    const SHARE: f64 = 2.2;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        p.check()?;
        Ok(crate::experiments::Needs {
            pages_matter: false,
            ..Default::default()
        })
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

/// A cell: a save on a thread count, or the interpreter with a protection.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Key {
    Save(SaveOp, usize),
    Interp(Protection),
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    p.check()?;
    let teams: Vec<(usize, Team)> =
        p.threads.iter().map(|&t| Team::new(t).map(|team| (t, team))).collect::<Result<_>>()?;
    let program = k::program(p.program_len);
    // Each thread count on its own, one thread and all first; the
    // interpreter's lesson is judged beside one thread (whose looks weigh
    // twice another count's).
    let counts = super::timebox::ends_first(&p.threads);
    let weighted: Vec<(usize, f64)> = counts.iter().map(|&t| (t, if t == counts[0] { 2.0 } else { 1.0 })).collect();
    let (mut keys, mut usage, mut series) = (Vec::new(), Vec::new(), Vec::new());
    ctx.sweep("context's thread counts", weighted, |threads| {
        let mut these: Vec<Key> = p.ops.iter().map(|&op| Key::Save(op, threads)).collect();
        if threads == counts[0] {
            these.extend(Protection::ALL.map(Key::Interp));
        }
        let used: Vec<Cell<Usage>> = these.iter().map(|_| Cell::new(Usage::default())).collect();
        series.extend(measure(p, ctx, &these, &teams, &program, &used)?);
        keys.extend(these);
        usage.extend(used);
        Ok(())
    })?;
    let mut saves = Vec::new();
    let mut interpreter = Vec::new();
    for ((key, s), u) in keys.iter().zip(&series).zip(&usage) {
        match *key {
            Key::Save(op, threads) => saves.push(save_cell(op, threads, s, u.get())),
            Key::Interp(protection) => interpreter.push(interp_cell(protection, p.program_len, s, u.get())),
        }
    }
    // Op by op, each op's thread counts in order, as the report lists them.
    saves.sort_by_key(|c| (p.ops.iter().position(|o| *o == c.op), p.threads.iter().position(|t| *t == c.threads)));
    let looks = series.iter().map(|s| s.looks.clone()).max_by_key(Vec::len).unwrap_or_default();
    let lesson = lesson_of(&interpreter, &looks);
    let valid = saves.iter().all(|c| c.valid) && interpreter.iter().all(|c| c.valid);
    if !valid {
        ctx.warn(Caution::Checksum { what: "context" });
    }
    Ok(Outcome {
        threads: p.threads.iter().copied().filter(|t| keys.contains(&Key::Save(p.ops[0], *t))).collect(),
        order_seed: p.seed,
        saves,
        interpreter,
        program_len: p.program_len,
        lesson,
        valid,
    })
}

/// The Ruby lesson from the interpreter's cells, paired per repetition:
/// the heavy save over the cheapest, the cheapest over none (`looks`: the
/// schedule's, recorded with each).
fn lesson_of(interpreter: &[InterpCell], looks: &[usize]) -> Lesson {
    let per_op = |pr: Protection| {
        let c = interpreter.iter().find(|c| c.protection == pr)?;
        Some(c.samples_s.iter().map(|s| s / c.ops_per_sample as f64).collect::<Vec<f64>>())
    };
    let ratio = |a: Protection, b: Protection| -> Option<Ratio> {
        Some(Ratio::paired(&per_op(a)?, &per_op(b)?)?.looked(looks.to_vec()))
    };
    Lesson {
        removing_heavy_save: ratio(Protection::Heavy, Protection::Cheap),
        cheap_save_cost: ratio(Protection::Cheap, Protection::None),
    }
}

/// A save's cell: ns per operation and whether it entered the kernel.
fn save_cell(op: SaveOp, threads: usize, s: &schedule::Series, u: Usage) -> SaveCell {
    let per_op: Vec<f64> = s.per_iter_s().iter().map(|x| x * 1e9).collect();
    let ns_per_op = Summary::steady_of(&per_op).expect("measured");
    SaveCell {
        op,
        threads,
        ops_per_sample: s.iters,
        samples_s: s.samples_s.clone(),
        ops_per_s_per_thread: 1e9 / ns_per_op.median,
        ns_per_op,
        user_s: u.user_s,
        system_s: u.system_s,
        kernel: KernelEntry::judge(u.user_s, u.system_s),
        valid: s.ok,
    }
}

/// The interpreter's cell: ns per interpreted operation of the program.
fn interp_cell(protection: Protection, program_len: usize, s: &schedule::Series, u: Usage) -> InterpCell {
    let per_op: Vec<f64> = s.per_iter_s().iter().map(|x| x * 1e9 / program_len as f64).collect();
    InterpCell {
        protection,
        ops_per_sample: s.iters * program_len as u64,
        samples_s: s.samples_s.clone(),
        ns_per_op: Summary::steady_of(&per_op).expect("measured"),
        user_s: u.user_s,
        system_s: u.system_s,
        valid: s.ok,
    }
}

/// A save's variant: `op` run `n` times on each thread of its team.
fn save_variant<'a>(
    ctx: &'a Bench,
    op: SaveOp,
    team: &'a Team,
    total: &'a Cell<Usage>,
    migrated: &'a Cell<usize>,
) -> schedule::Variant<'a> {
    Box::new(move |step: Step| {
        let n = step.iterations(1000);
        let run = team.run(ctx.clock, |_| {
            let before = Usage::now();
            let landed = k::run(op, n);
            (landed, Usage::now().since(before))
        });
        if run.placement.iter().any(|pl| !pl.stayed()) {
            migrated.set(migrated.get() + 1);
        }
        if matches!(step, Step::Run(_)) {
            total.set(run.results.iter().fold(total.get(), |a, r| a + r.1));
        }
        StepReport::timed(run.results.iter().all(|r| r.0 == n as i64), run.elapsed_ns)
    })
}

/// The interpreter's variant: one pinned thread, timed from its start
/// barrier; the check against the reference runs after the timing.
fn interp_variant<'a>(
    ctx: &'a Bench,
    protection: Protection,
    program: &'a [u8],
    team: &'a Team,
    total: &'a Cell<Usage>,
) -> schedule::Variant<'a> {
    let expected = std::cell::RefCell::new(Vec::new());
    Box::new(move |step: Step| {
        let n = step.iterations(10);
        let run = team.run(ctx.clock, |_| {
            let before = Usage::now();
            (k::interpret(protection, program, n), Usage::now().since(before))
        });
        let (acc, used) = run.results[0];
        if matches!(step, Step::Run(_)) {
            total.set(total.get() + used);
        }
        StepReport::timed(acc == reference(&expected, program, n), run.elapsed_ns)
    })
}

fn measure(
    p: &Params,
    ctx: &Bench,
    keys: &[Key],
    teams: &[(usize, Team)],
    program: &[u8],
    usage: &[Cell<Usage>],
) -> Result<Vec<schedule::Series>> {
    let migrated = Cell::new(0usize);
    let interp_team = Team::new(1)?;
    let mut variants: Vec<schedule::Variant> = keys
        .iter()
        .zip(usage)
        .map(|(key, total)| match *key {
            Key::Save(op, threads) => {
                let team = &teams.iter().find(|t| t.0 == threads).expect("built").1;
                save_variant(ctx, op, team, total, &migrated)
            }
            Key::Interp(protection) => interp_variant(ctx, protection, program, &interp_team, total),
        })
        .collect();
    // Each cell's repetitions add up to min_cell_s; the lesson's two
    // comparisons go on, doubling, until each is resolved.
    let at = |pr: Protection| keys.iter().position(|k| *k == Key::Interp(pr));
    let questions: Vec<schedule::Question> = [(Protection::Heavy, Protection::Cheap), (Protection::Cheap, Protection::None)]
        .into_iter()
        .filter_map(|(a, b)| Some(schedule::Question::Pair { a: at(a)?, b: at(b)? }))
        .collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_cell_s / p.repetitions as f64)
        .resolving(questions, 4 * p.repetitions);
    plan.seed = p.seed;
    let series = ctx.measure("context", &plan, &mut variants)?;
    drop(variants);
    if migrated.get() > 0 {
        ctx.warn(Caution::Migrated { samples: migrated.get() });
    }
    Ok(series)
}

/// The reference interpreter's result for `n` runs, cached per n.
fn reference(cache: &std::cell::RefCell<Vec<(u64, i64)>>, program: &[u8], n: u64) -> i64 {
    if let Some(&(_, v)) = cache.borrow().iter().find(|(m, _)| *m == n) {
        return v;
    }
    let v = k::interpret_reference(program, n);
    cache.borrow_mut().push((n, v));
    v
}

/// Options of `memperf context`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// Saves, comma-separated [default: all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = options::list(SaveOp::parse, options::offers::saves))]
    pub ops: Option<options::List<SaveOp>>,
    #[command(flatten)]
    pub cells: super::options::CellArgs,
}

impl options::Options for Options {
    type Experiment = Context;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--ops", "setjmp,getcontext", "--threads", "1", "--repetitions", "2"],
    ];

    fn params(&self, asked: &options::Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.ops = options::List::or(&self.ops, p.ops);
        (p.threads, p.repetitions) = self.cells.apply(p.threads, p.repetitions)?;
        p.check()?;
        Ok(p)
    }
}

/// `report --reanalyze` draws none of its stored claims again.
impl crate::model::Redraw for Outcome {
    /// The lesson from the interpreter's paired samples, by today's engine.
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        let looks = self.lesson.removing_heavy_save.as_ref().map(|r| r.looks.clone()).unwrap_or_default();
        self.lesson = lesson_of(&self.interpreter, &looks);
        vec!["lesson"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_entry_needs_evidence_either_way() {
        assert!(matches!(KernelEntry::judge(0.5, 0.5), KernelEntry::Yes { .. }));
        assert!(matches!(KernelEntry::judge(1.0, 0.0), KernelEntry::No { .. }));
        // Too little CPU time to call it "no".
        assert!(matches!(KernelEntry::judge(0.1, 0.0), KernelEntry::BelowResolution { .. }));
        // 5% of 0.1 s is 5 ms: under the 12 ms a "yes" needs.
        assert!(matches!(KernelEntry::judge(0.095, 0.005), KernelEntry::BelowResolution { .. }));
        // 3% over 1 s: neither clearly in nor clearly out.
        assert!(matches!(KernelEntry::judge(0.97, 0.03), KernelEntry::BelowResolution { .. }));
    }

    #[test]
    fn bad_parameters_are_refused() {
        let mut p = Params::preset(Preset::Quick);
        p.repetitions = 1;
        assert_eq!(p.check().unwrap_err().kind.exit_code(), 2);
        p.repetitions = 10;
        p.ops.clear();
        assert!(p.check().is_err());
    }

    /// On a fake clock every step lasts 1 ms: ns per op is exact.
    #[test]
    fn end_to_end_on_a_fake_clock_gives_exact_figures() {
        let m = crate::machine::collect();
        let clock = crate::timing::FakeClock::stepping(vec![1_000_000]);
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress);
        let p = Params {
            ops: vec![SaveOp::BuiltinSetjmp, SaveOp::SigsetjmpMask],
            threads: vec![1],
            repetitions: 3,
            min_cell_s: 0.0015,
            program_len: 16,
            seed: 1,
        };
        let o = run(&p, &ctx).unwrap();
        assert!(o.valid);
        assert_eq!(o.saves.len(), 2);
        assert_eq!(o.interpreter.len(), 3);
        for c in &o.saves {
            assert_eq!(c.ns_per_op.median, 1e6 / c.ops_per_sample as f64, "{c:?}");
        }
        assert!(o.lesson.removing_heavy_save.is_some());
    }
}
