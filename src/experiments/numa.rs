//! `memperf numa`: node × node latency and read bandwidth. For every node
//! with CPUs this process may use and every node with memory, a chase
//! (one CPU of the first, THP, a random cycle) and a read stream (all its
//! CPUs, `simd`) over memory bound to the second with mbind, the pages'
//! node read back. All pairs are measured interleaved through the
//! scheduler. With one node there is no matrix, and the outcome says so.

use super::options;
use super::stream_arrays::Array;
use super::{chases, Bench, Experiment, Preset};
use crate::error::{Error, Result};
use crate::kernels::chase::{chase_kernel, visit_order, Chase};
use crate::kernels::{pattern_sum, stream_kernel, StreamShape};
use crate::memory::numa::{self, Node};
use crate::memory::buffer::numa_node_of;
use crate::memory::{PagePolicy, Buffer};
pub use crate::model::outcome::numa::*;
use crate::timing::schedule::{self, StepReport, Step};
use crate::timing::team::PinGuard;
use crate::timing::{Summary, Team};
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Each chase and each read array.
    pub size_bytes: Bytes,
    pub repetitions: usize,
    pub min_sample_s: f64,
    pub seed: u64,
}

impl Params {
    pub fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        let repetitions = if preset == Preset::Quick { 5 } else { 10 };
        let size_bytes = super::budget::memory_size(machine, 4, Bytes(64 * MIB), 2);
        Params { size_bytes, repetitions, min_sample_s: 0.01, seed: 0x6e75_6d61 }
    }
}

pub struct Numa;

impl Experiment for Numa {
    const NAME: &'static str = "numa";
    const SHARE: f64 = 0.1;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: crate::experiments::Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }

    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        check(p)?;
        Ok(crate::experiments::Needs {
            levels: true,
            pages_matter: false,
            ..Default::default()
        })
    }

    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx, &numa::nodes(std::path::Path::new("/sys/devices/system/node")))
    }
}

/// The nodes a matrix can use: CPU nodes (with CPUs this process may run
/// on) and memory nodes.
fn usable(nodes: &[Node]) -> (Vec<NodeInfo>, Vec<usize>, Vec<usize>) {
    let allowed = crate::timing::team::allowed_cpus();
    let info: Vec<NodeInfo> = nodes
        .iter()
        .map(|n| NodeInfo {
            id: n.id,
            cpus: n.cpus.iter().copied().filter(|c| allowed.contains(c)).collect(),
            has_memory: n.has_memory,
        })
        .collect();
    let cpu_nodes = info.iter().filter(|n| !n.cpus.is_empty()).map(|n| n.id).collect();
    let mem_nodes = info.iter().filter(|n| n.has_memory).map(|n| n.id).collect();
    (info, cpu_nodes, mem_nodes)
}

/// Why there is no node × node matrix here, if there is none.
pub fn no_matrix_reason(cpu_nodes: usize, mem_nodes: usize) -> Option<String> {
    match (cpu_nodes, mem_nodes) {
        (0, _) | (_, 0) => Some("the kernel reports no NUMA nodes: no node × node matrix".into()),
        (1, 1) => Some("one NUMA node: no node × node matrix (every CPU is as near to all memory)".into()),
        _ => None,
    }
}

/// Every parameter checked before anything is measured.
pub(crate) fn check(p: &Params) -> Result<()> {
    if p.repetitions == 0 || p.size_bytes.0 < MIB {
        return Err(Error::usage("numa needs --repetitions ≥ 1 and --size ≥ 1MiB"));
    }
    Ok(())
}

pub fn run(p: &Params, ctx: &Bench, nodes: &[Node]) -> Result<Outcome> {
    check(p)?;
    let (info, cpu_nodes, mem_nodes) = usable(nodes);
    if let Some(reason) = no_matrix_reason(cpu_nodes.len(), mem_nodes.len()) {
        return Ok(Outcome {
            nodes: info,
            cells: vec![],
            no_matrix: Some(reason),
            size_bytes: p.size_bytes.0,
            valid: true,
        });
    }
    let teams: Vec<Team> = cpu_nodes
        .iter()
        .map(|&n| Team::on(info.iter().find(|i| i.id == n).expect("listed").cpus.clone()))
        .collect::<Result<_>>()?;
    let memory: Vec<Bound> =
        mem_nodes.iter().map(|&n| Bound::new(n, p, &teams[0], ctx.clock)).collect::<Result<_>>()?;
    let pairs: Vec<(usize, usize)> =
        (0..cpu_nodes.len()).flat_map(|c| (0..mem_nodes.len()).map(move |m| (c, m))).collect();
    let series = measure(p, ctx, &pairs, &memory, &teams)?;
    let cells: Vec<Cell> = pairs
        .iter()
        .enumerate()
        .map(|(k, &(c, m))| {
            let (lat, bw) = (&series[2 * k], &series[2 * k + 1]);
            let ns: Vec<f64> = chases::ns_per_load(lat);
            let bytes = memory[m].array.len as f64 * 8.0;
            let per_s: Vec<f64> = bw.per_iter_s().iter().map(|s| bytes / s).collect();
            Cell {
                cpu_node: cpu_nodes[c],
                memory_node: mem_nodes[m],
                latency_ns: Summary::steady_of(&ns).expect("samples"),
                bytes_per_s: Summary::steady_of(&per_s).expect("samples"),
                placement_ok: memory[m].placed,
                valid: lat.ok && bw.ok,
            }
        })
        .collect();
    let valid = cells.iter().all(|c| c.valid && c.placement_ok);
    Ok(Outcome { nodes: info, cells, no_matrix: None, size_bytes: p.size_bytes.0, valid })
}

/// A chase and a read array bound to one node.
struct Bound {
    chase: RefCell<Chase>,
    array: Array,
    placed: bool,
    _chase_region: Buffer,
}

impl Bound {
    fn new(node: usize, p: &Params, team: &Team, clock: &dyn crate::timing::Clock) -> Result<Bound> {
        let bind = |mut r: Buffer| -> Result<Buffer> {
            let len = r.len();
            numa::bind(r.as_mut_slice::<u8>().as_mut_ptr() as usize, len, node).map_err(|e| {
                Error::unsatisfiable(format!("cannot bind memory to NUMA node {node}: {e}"), "memperf run --skip numa")
            })?;
            Ok(r)
        };
        let mut chase_region = bind(Buffer::untouched(PagePolicy::Thp, p.size_bytes)?)?;
        // Filled by the team of the first CPU node: the pages come from
        // `node` whichever CPUs touch them.
        let array = Array::fill(bind(Array::region(PagePolicy::Thp, p.size_bytes, 1)?)?, 1, team, 0, clock)?;
        let len = array.len;
        let lines = chase_region.len() / 64;
        let base = chase_region.as_mut_slice::<u8>().as_mut_ptr();
        // SAFETY: slot s is the line at s × 64 inside the region, which the Bound keeps alive.
        let chase = unsafe { Chase::new(base, visit_order(lines, None, p.seed), |s| s * 64, 1) };
        let placed = [base as usize, array.region.as_ptr() as usize]
            .iter()
            .flat_map(|&b| (0..len * 8).step_by(len * 8 / 16).map(move |o| b + o))
            .all(|a| numa_node_of(a) == Some(node as i32));
        Ok(Bound { chase: RefCell::new(chase), array, placed, _chase_region: chase_region })
    }
}

/// Per pair, a latency variant then a bandwidth variant, interleaved.
fn measure(
    p: &Params,
    ctx: &Bench,
    pairs: &[(usize, usize)],
    memory: &[Bound],
    teams: &[Team],
) -> Result<Vec<schedule::Series>> {
    let (read, _) = stream_kernel(StreamShape::Simd, None)?;
    let k1 = chase_kernel(1).expect("one chain");
    let mut variants: Vec<schedule::Variant> = Vec::new();
    for &(c, m) in pairs {
        let (mem, team) = (&memory[m], &teams[c]);
        let cpu = team.cpus()[0];
        let warm = chases::warm_loads(mem.chase.borrow().len(), ctx.machine, chases::Warm::Cycle);
        variants.push(Box::new(move |step: Step| {
            let _pin = PinGuard::pin(cpu);
            let n = step.iterations(warm);
            // SAFETY: the chase's memory lives as long as `memory`.
            StepReport::valid(unsafe { mem.chase.borrow_mut().run(k1, n) })
        }));
        let args = mem.array.slices(team.threads(), 0);
        let expected = pattern_sum(0, mem.array.len);
        variants.push(Box::new(move |step: Step| {
            let n = step.iterations(1);
            // SAFETY: every slice lies inside the array, alive for the call.
            let run = team.run(ctx.clock, |t| unsafe { read(n, &args[t]) });
            StepReport::timed(run.results.iter().sum::<f64>() == expected * n as f64, run.elapsed_ns)
        }));
    }
    let plan = chases::plan(p.repetitions, p.min_sample_s, p.seed);
    ctx.measure("numa", &plan, &mut variants)
}

/// Options of `memperf numa`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// Size of each chase and each read array [default: max(64MiB, 4 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = options::size_arg)]
    pub size: Option<Bytes>,
    /// Samples per cell [default: 10]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = options::positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

impl options::Options for Options {
    type Experiment = Numa;
    /// A good value of every option, as the man page shows them.
    const EXAMPLES: &'static [&'static [&'static str]] = &[
        &["--size", "1MiB", "--repetitions", "2"],
    ];

    fn params(&self, asked: &options::Request) -> Result<Params> {
        let mut p = Params::preset(asked.preset, asked.machine);
        if let Some(s) = self.size {
            p.size_bytes = s;
        }
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
    fn one_node_is_said_in_one_line_and_two_make_a_matrix() {
        let one = no_matrix_reason(1, 1).unwrap();
        assert!(one.starts_with("one NUMA node") && !one.contains('\n'));
        assert!(no_matrix_reason(0, 0).unwrap().contains("no NUMA nodes"));
        assert_eq!(no_matrix_reason(2, 2), None);
        assert_eq!(no_matrix_reason(2, 1), None, "two CPU nodes reading one memory node still differ");
    }

    /// The whole experiment on a faked topology: two CPU nodes (both this
    /// machine's first CPU) and node 0's memory make a real 2 × 1 matrix,
    /// every cell measured and its pages found on node 0; a memory node
    /// that does not exist is refused by name; one node makes no matrix.
    #[test]
    fn the_matrix_has_every_cell_on_a_faked_topology() {
        let m = crate::machine::collect();
        let clock = crate::timing::MonotonicClock::new();
        let ctx = Bench::new(&m, &clock, &super::super::NoProgress);
        let cpu = crate::timing::team::allowed_cpus()[0];
        let node = |id, has_memory| Node { id, cpus: vec![cpu], has_memory };
        let p = Params { size_bytes: Bytes(2 * MIB), repetitions: 2, min_sample_s: 0.0005, seed: 1 };
        let o = run(&p, &ctx, &[node(0, true), node(1, false)]).unwrap();
        let cells: Vec<(usize, usize)> = o.cells.iter().map(|c| (c.cpu_node, c.memory_node)).collect();
        assert_eq!(cells, [(0, 0), (1, 0)]);
        assert!(o.cells.iter().all(|c| c.placement_ok && c.valid && c.latency_ns.median > 0.0), "{:?}", o.cells);
        assert!(o.valid && o.no_matrix.is_none());
        // Memory bound to a node past the highest this machine has:
        // binding refuses, and the error names the node.
        let online = std::fs::read_to_string("/sys/devices/system/node/online").unwrap_or_default();
        let highest: usize = online.trim().rsplit([',', '-']).next().and_then(|n| n.parse().ok()).unwrap_or(0);
        let absent = highest + 1;
        let e = run(&p, &ctx, &[node(0, true), node(absent, true)]).unwrap_err();
        assert!(e.message.contains(&format!("NUMA node {absent}")), "{}", e.message);
        let o = run(&p, &ctx, &[node(0, true)]).unwrap();
        assert!(o.cells.is_empty() && o.no_matrix.unwrap().starts_with("one NUMA node"));
    }
}
