//! Part 2: walking many short NULL-terminated lists while prefetching the
//! node `list_ahead` further on — NULL near each list's end: no prefetch,
//! unguarded (prefetch NULL too) and guarded (test first), interleaved per
//! length, each against `none` paired per repetition.

use super::params::Params;
use super::ListCell;
use crate::error::Result;
use crate::experiments::Bench;
use crate::kernels::prefetch::{self as k, Guard, Node};
use crate::kernels::hint::*;
use crate::memory::{PagePolicy, Buffer};
use crate::timing::schedule::{self, StepReport, Ratio, Step};
use crate::timing::{stats, Summary};

pub type ListKernel = unsafe fn(&[*const Node]) -> u64;

pub fn list_kernel(g: Guard) -> ListKernel {
    match g {
        Guard::None => k::walk_lists::<NoPrefetch, 0>,
        Guard::Unguarded => k::walk_lists::<PrefetchT0, 1>,
        Guard::Guarded => k::walk_lists::<PrefetchT0, 2>,
    }
}

/// `count` lists of `length` nodes each, placed on random lines of
/// `region`; node values 1..=count×length. Returns the heads.
pub fn build_lists(region: &mut Buffer, length: usize, count: usize, ahead: usize, seed: u64) -> Vec<*const Node> {
    let nodes = region.len() / 64;
    assert!(length * count <= nodes, "{count} lists of {length} exceed the region's {nodes} lines");
    let mut order: Vec<usize> = (0..nodes).collect();
    crate::kernels::chase::SplitMix64(seed).shuffle(&mut order);
    let base = region.as_mut_slice::<u8>().as_mut_ptr() as *mut Node;
    let mut heads = Vec::with_capacity(count);
    let mut value = 0u64;
    for l in 0..count {
        let idx = &order[l * length..(l + 1) * length];
        // SAFETY: every index < nodes, so each node lies in the region.
        let at = |i: usize| unsafe { base.add(idx[i]) };
        for i in 0..length {
            value += 1;
            let node = Node {
                next: if i + 1 < length { at(i + 1) } else { std::ptr::null() },
                ahead: if i + ahead < length { at(i + ahead) } else { std::ptr::null() },
                value,
            };
            // SAFETY: at(i) is a line of the region, aligned for Node.
            unsafe { at(i).write(node) };
        }
        heads.push(at(0) as *const Node);
    }
    heads
}

/// The NULL-ending lists at each length, walked without prefetch, with an
/// unguarded and with a guarded one, interleaved; each against `none`.
pub fn measure(p: &Params, ctx: &Bench) -> Result<Vec<ListCell>> {
    let mut region = Buffer::new(PagePolicy::Small, p.list_region_bytes)?;
    let nodes = p.list_nodes.min(region.len() / 64);
    let mut out = Vec::new();
    for &len in &p.list_lengths {
        ctx.check_interrupt()?;
        let count = nodes / len;
        let heads = build_lists(&mut region, len, count, p.list_ahead, p.seed);
        let total = (count * len) as u64;
        let expect = total * (total + 1) / 2;
        let mut variants: Vec<schedule::Variant> = Guard::ALL
            .iter()
            .map(|&g| {
                let (kernel, heads) = (list_kernel(g), &heads);
                Box::new(move |step: Step| {
                    let mut ok = true;
                    for _ in 0..step.iterations(1) {
                        // SAFETY: the heads start null-terminated lists built above.
                        ok &= unsafe { kernel(heads) } == expect;
                    }
                    StepReport::valid(ok)
                }) as schedule::Variant
            })
            .collect();
        let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
        plan.seed = p.seed ^ len as u64;
        let (series, _) = schedule::measure(&plan, ctx.clock, &mut variants, &mut || ctx.check_interrupt())?;
        let ns: Vec<Vec<f64>> =
            series.iter().map(|s| s.per_iter_s().iter().map(|x| x * 1e9 / total as f64).collect()).collect();
        let walks = series[1].iters * series[1].samples_s.len() as u64;
        for (i, g) in Guard::ALL.iter().enumerate() {
            let d: Vec<f64> = ns[i].iter().zip(&ns[0]).map(|(a, b)| a - b).collect();
            out.push(ListCell {
                length: len,
                variant: *g,
                ns_per_node: Summary::of(&ns[i]).expect("measured"),
                over_none_ns: (i > 0)
                    .then(|| Ratio::differences(&d).map(|r| r.relative_to(stats::median(&ns[0]).unwrap_or(0.0))))
                    .flatten(),
                samples_ns_per_node: ns[i].clone(),
                null_prefetches: if *g == Guard::Unguarded {
                    (count * len.min(p.list_ahead)) as u64 * walks
                } else {
                    0
                },
                checksum_ok: series[i].ok,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    #[test]
    fn lists_have_the_lengths_asked_for_and_end_in_null() {
        let mut r = Buffer::new(PagePolicy::Small, Bytes(1 << 20)).unwrap();
        for len in [1, 3, 64] {
            let heads = build_lists(&mut r, len, 100, 2, 5);
            assert_eq!(heads.len(), 100);
            let mut values = Vec::new();
            for &h in &heads {
                let (mut p, mut n) = (h, 0);
                while !p.is_null() {
                    // SAFETY: nodes built above in the live region.
                    let node = unsafe { &*p };
                    // `ahead` is the node two further, or null near the end.
                    // SAFETY: as above.
                    let two = if node.next.is_null() { std::ptr::null() } else { unsafe { (*node.next).next } };
                    assert_eq!(node.ahead, two);
                    values.push(node.value);
                    p = node.next;
                    n += 1;
                }
                assert_eq!(n, len);
            }
            values.sort();
            assert_eq!(values, (1..=100 * len as u64).collect::<Vec<_>>());
        }
    }
}
