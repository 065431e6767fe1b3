//! `memperf c2c`: core-to-core latency. For every pair of the CPUs asked
//! for (each pair once, timed from the lower-numbered CPU), two threads
//! pinned to them bounce one cache line ([`crate::kernels::c2c`]); every
//! pair and handoff is a variant of the scheduler, so the pairs are
//! measured interleaved. The pairs are grouped by their topology from
//! sysfs: SMT siblings, sharing an L3 (a CCX), one package, two packages.

use crate::units::Nanos;
use super::options;
use super::{Bench, Experiment};
use crate::error::{Error, Result};
use crate::kernels::c2c::{side, Handoff, Line};
pub use crate::machine::sysfs::cpu_list;
pub use crate::model::outcome::c2c::*;
use crate::timing::schedule::{self, StepReport, Step};
use crate::timing::team::pin_current_thread;
use crate::timing::Summary;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub cpus: Vec<usize>,
    pub handoffs: Vec<Handoff>,
    pub repetitions: usize,
    pub min_sample_s: f64,
}

/// Most CPUs a preset takes (their pairs grow as N²/2).
pub const PRESET_MAX_CPUS: usize = 16;

impl Params {
    pub fn preset(preset: super::Preset) -> Params {
        use super::Preset;
        let (repetitions, min_sample_s) = match preset {
            Preset::Quick => (5, 0.005),
            Preset::Default => (7, 0.01),
            Preset::Full => (11, 0.02),
        };
        let cpus = crate::timing::team::allowed_cpus().into_iter().take(PRESET_MAX_CPUS).collect();
        Params { cpus, handoffs: Handoff::ALL.to_vec(), repetitions, min_sample_s }
    }
}

/// How CPUs `a` and `b` relate, from sysfs under `root`
/// (`/sys/devices/system/cpu`).
pub fn relation(root: &std::path::Path, a: usize, b: usize) -> Relation {
    let read = |cpu: usize, file: &str| std::fs::read_to_string(root.join(format!("cpu{cpu}")).join(file)).ok();
    let Some(siblings) = read(a, "topology/thread_siblings_list") else { return Relation::Unknown };
    if cpu_list(&siblings).contains(&b) {
        return Relation::SmtSiblings;
    }
    if read(a, "cache/index3/shared_cpu_list").is_some_and(|l| cpu_list(&l).contains(&b)) {
        return Relation::SameL3;
    }
    match (read(a, "topology/physical_package_id"), read(b, "topology/physical_package_id")) {
        (Some(x), Some(y)) if x.trim() == y.trim() => Relation::SamePackage,
        (Some(_), Some(_)) => Relation::OtherPackage,
        _ => Relation::Unknown,
    }
}

/// One timed ping-pong of `n` round trips between CPUs `a` and `b`: the
/// ns side A measured, and whether it validated (both pinned, 2n handoffs).
fn ping_pong(a: usize, b: usize, handoff: Handoff, n: u64) -> (bool, u64) {
    let line = Line::default();
    let abort = AtomicBool::new(false);
    let start = Barrier::new(2);
    let (ok_a, ok_b, ns) = std::thread::scope(|s| {
        let other = s.spawn(|| {
            let pinned = pin_current_thread(b).is_ok();
            start.wait();
            pinned && side(&line, &abort, handoff, 1, n)
        });
        let pinned = pin_current_thread(a).is_ok();
        start.wait();
        let t0 = std::time::Instant::now();
        let ok = pinned && side(&line, &abort, handoff, 0, n);
        let ns = t0.elapsed().as_nanos() as u64;
        (ok, other.join().unwrap_or(false), ns)
    });
    let handed = line.value.load(std::sync::atomic::Ordering::Relaxed) == 2 * n;
    (ok_a && ok_b && handed, ns)
}

pub struct C2c;

impl Experiment for C2c {
    const NAME: &'static str = "c2c";
    const SHARE: f64 = 0.1;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, _: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset)
    }

    fn needs(_: &Params) -> Result<crate::experiments::Needs> {
        Ok(crate::experiments::Needs {
            pages_matter: false,
            ..Default::default()
        })
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        if p.cpus.len() < 2 {
            return Err(Error::unsatisfiable(
                format!("c2c needs two CPUs; this process may use {:?}", p.cpus),
                "run it where at least two CPUs are allowed (taskset, cgroup cpuset)",
            ));
        }
        let pairs: Vec<(usize, usize, Handoff)> = p
            .handoffs
            .iter()
            .flat_map(|&h| {
                p.cpus.iter().enumerate().flat_map(move |(i, &a)| p.cpus[i + 1..].iter().map(move |&b| (a, b, h)))
            })
            .collect();
        let mut variants: Vec<schedule::Variant> = pairs
            .iter()
            .map(|&(a, b, h)| {
                Box::new(move |step: Step| {
                    let (ok, ns) = ping_pong(a, b, h, step.iterations(1000));
                    StepReport::timed(ok, ns)
                }) as schedule::Variant
            })
            .collect();
        let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
        plan.seed = 0xc2c;
        plan.max_iters = 1 << 28;
        let series = ctx.measure("c2c", &plan, &mut variants)?;
        drop(variants);
        let results: Vec<PairResult> =
            pairs.iter().zip(&series).map(|(&(a, b, handoff), s)| pair_result(a, b, handoff, s)).collect();
        let note = (p.cpus.len() == 2).then(|| {
            format!(
                "two CPUs: one pair ({}), so no comparison across topology can be made here",
                results.first().map(|r| r.relation.name()).unwrap_or("unknown")
            )
        });
        Ok(Outcome {
            cpus: p.cpus.clone(),
            handoffs: p.handoffs.clone(),
            groups: groups(&results),
            valid: results.iter().all(|r| r.valid),
            pairs: results,
            note,
        })
    }
}

/// One pair's one-way latency (half a round trip) and how the two CPUs
/// relate in the topology.
fn pair_result(a: usize, b: usize, handoff: Handoff, s: &schedule::Series) -> PairResult {
    let root = std::path::Path::new("/sys/devices/system/cpu");
    let samples_ns: Vec<f64> = s.samples_s.iter().map(|t| t * 1e9 / (2 * s.iters) as f64).collect();
    PairResult {
        a,
        b,
        handoff,
        relation: relation(root, a, b),
        round_trips_per_sample: s.iters,
        one_way_ns: Summary::steady_of(&samples_ns).expect("one finite sample per repetition"),
        samples_ns,
        valid: s.ok,
    }
}

/// The pairs' medians per relation and handoff.
pub fn groups(pairs: &[PairResult]) -> Vec<Group> {
    let mut keys: Vec<(Relation, Handoff)> = pairs.iter().map(|p| (p.relation, p.handoff)).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|(relation, handoff)| {
            let m: Vec<f64> = pairs
                .iter()
                .filter(|p| p.relation == relation && p.handoff == handoff)
                .map(|p| p.one_way_ns.median)
                .collect();
            Group {
                relation,
                handoff,
                pairs: m.len(),
                median_ns: Nanos(crate::timing::stats::median(&m).unwrap_or(f64::NAN)),
                min_ns: Nanos(m.iter().copied().fold(f64::INFINITY, f64::min)),
                max_ns: Nanos(m.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            }
        })
        .collect()
}

/// Options of `memperf c2c`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// CPUs whose pairs to measure [default: the CPUs this process may use, the first 16]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = cpus_arg)]
    pub cpus: Option<options::List<usize>>,
    /// How the line changes hands, comma-separated [default: both]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = options::list(Handoff::parse, options::offers::handoffs))]
    pub handoff: Option<options::List<Handoff>>,
    /// Samples per pair [default: 7]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = options::positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

/// clap's parser of `--cpus` (`0-3`, `0,8`): distinct CPUs this process
/// may use.
fn cpus_arg(list: &str) -> std::result::Result<options::List<usize>, String> {
    let allowed = crate::timing::team::allowed_cpus();
    let cpus = crate::machine::sysfs::cpu_list(list);
    if let Some(c) = cpus.iter().enumerate().find_map(|(i, c)| cpus[..i].contains(c).then_some(c)) {
        return Err(format!("CPU {c} appears twice: give each CPU once"));
    }
    if cpus.is_empty() {
        return Err("give CPU numbers, e.g. --cpus 0-3 or --cpus 0,8".into());
    }
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        let allowed: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
        return Err(format!("CPU {c} is not one this process may use ({}); pick from those", allowed.join(",")));
    }
    Ok(options::List(cpus))
}

impl options::Options for Options {
    type Experiment = C2c;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--cpus", "0", "--handoff", "cas,load-store", "--repetitions", "2"],
    ];

    fn params(&self, asked: &options::Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset);
        p.cpus = options::List::or(&self.cpus, p.cpus);
        p.handoffs = options::List::or(&self.handoff, p.handoffs);
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        Ok(p)
    }
}

/// `report --reanalyze` draws none of its stored claims again.
impl crate::model::Redraw for Outcome {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_sysfs_writes_them() {
        assert_eq!(cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(cpu_list(""), Vec::<usize>::new());
    }

    #[test]
    fn relations_from_a_constructed_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let put = |cpu: usize, file: &str, text: &str| {
            let p = dir.path().join(format!("cpu{cpu}")).join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        for cpu in 0..8 {
            put(cpu, "topology/thread_siblings_list", if cpu < 4 { "0,2" } else { "4,6" });
            put(cpu, "cache/index3/shared_cpu_list", if cpu < 4 { "0-3" } else { "4-7" });
            put(cpu, "topology/physical_package_id", if cpu < 6 { "0" } else { "1" });
        }
        assert_eq!(relation(dir.path(), 0, 2), Relation::SmtSiblings);
        assert_eq!(relation(dir.path(), 0, 3), Relation::SameL3);
        assert_eq!(relation(dir.path(), 0, 5), Relation::SamePackage);
        assert_eq!(relation(dir.path(), 0, 7), Relation::OtherPackage);
        assert_eq!(relation(dir.path(), 0, 99), Relation::Unknown, "no sysfs for the other CPU");
    }

    fn pair(a: usize, b: usize, ns: f64) -> PairResult {
        PairResult {
            a,
            b,
            handoff: Handoff::LoadStore,
            relation: if b == a + 1 { Relation::SameL3 } else { Relation::SamePackage },
            round_trips_per_sample: 1,
            samples_ns: vec![ns],
            one_way_ns: Summary::of(&[ns]).unwrap(),
            valid: true,
        }
    }

    #[test]
    fn the_matrix_has_every_pair_and_no_diagonal() {
        let pairs = vec![pair(0, 1, 20.0), pair(0, 2, 80.0), pair(1, 2, 25.0)];
        let o = Outcome {
            cpus: vec![0, 1, 2],
            handoffs: vec![Handoff::LoadStore],
            groups: groups(&pairs),
            pairs,
            note: None,
            valid: true,
        };
        let m = o.matrix(Handoff::LoadStore);
        for (i, row) in m.iter().enumerate() {
            for (j, cell) in row.iter().enumerate() {
                assert_eq!(cell.is_some(), i != j, "cell {i},{j}");
            }
        }
        assert_eq!(m[2][0], Some(80.0));
        let g = &o.groups;
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].relation, g[0].pairs, g[0].median_ns), (Relation::SameL3, 2, Nanos(22.5)));
    }

    #[test]
    fn two_pinned_threads_bounce_the_line() {
        let cpus = crate::timing::team::allowed_cpus();
        if cpus.len() < 2 {
            return crate::test_support::skip("needs two CPUs", "run on a machine with two CPUs this process may use");
        }
        for h in Handoff::ALL {
            let (ok, ns) = ping_pong(cpus[0], cpus[1], h, 20_000);
            assert!(ok && ns > 0, "{h:?}");
        }
    }
}
