//! Plain `simd` read over several arrays of 4 KiB pages, each with frames
//! of its own: the first is the kernels' read array, the others are mapped
//! and first-touched alike after it. The same loop over the same bytes can
//! read at different rates on different frames (on a guest, the host's
//! backing of each frame differs; elsewhere, uneven interleaving), and a
//! program gets whichever frames the free lists hold, so one array is one
//! draw. The arrays are measured round by round, shuffled, with the first
//! beside the others as their reference, so the host's drift hits them
//! alike; the headline of each thread count is then the median over the
//! arrays, per round. One more array is read beside them and kept out of
//! the headline: 4 KiB pages over whole 2 MiB blocks in physical order
//! (huge pages mapped again with 4 KiB entries), the layout a program
//! gets on unfragmented memory, so the run shows both ends.

use super::*;

/// The arrays beyond the first one: fresh regions of the read array's
/// policy and size, filled (and so first-touched) like it.
pub(super) fn extra_arrays(p: &Params, widest: &Team, clock: &dyn Clock) -> Result<Vec<Array>> {
    if !measures_frames(p) {
        return Ok(Vec::new());
    }
    (1..p.frame_sets).map(|_| Array::new(PagePolicy::Small, p.size_bytes, 1, widest, 0, clock)).collect()
}

/// The array of whole 2 MiB blocks with its 4 KiB pages in physical order:
/// a THP array filled like the others (as many elements as the first,
/// though its region rounds to 2 MiB), then mapped with 4 KiB entries.
/// `None` where the kernel did not give
/// every block a huge page (THP off, free memory fragmented) or the array
/// could not be had (memory short): a side figure, which the kernels'
/// figures do not wait on.
pub(super) fn blocks_in_order(p: &Params, widest: &Team, clock: &dyn Clock) -> Option<Array> {
    if !measures_frames(p) {
        return None;
    }
    let mut a = Array::new(PagePolicy::Thp, p.size_bytes, 1, widest, 0, clock).ok()?;
    let whole = a.region.backing().huge_bytes.is_some_and(|h| h.0 == a.region.len() as u64);
    if !whole || a.region.split_huge_mappings().is_err() {
        return None;
    }
    Some(a)
}

/// Arrays of 4 KiB pages the frame sets map beyond the kernels' read array.
pub(super) fn extra_small_arrays(p: &Params) -> u64 {
    if measures_frames(p) {
        p.frame_sets as u64 - 1
    } else {
        0
    }
}

/// Frame sets are read on 4 KiB pages (where frames scatter), with `simd`
/// asked for, when more than one set is asked for.
pub(super) fn measures_frames(p: &Params) -> bool {
    p.frame_sets > 1 && p.pages.contains(&PagePolicy::Small) && p.kernels.contains(&StreamShape::Simd)
}

/// Per thread count, one variant per array (the first is the reference of
/// the others): `(threads, array)` in order, over `arrays` arrays (the
/// frame sets, then the blocks in order where they were built).
fn variants(p: &Params, arrays: usize) -> Vec<(usize, usize)> {
    p.threads.iter().flat_map(|&t| (0..arrays).map(move |a| (t, a))).collect()
}

fn references(vs: &[(usize, usize)]) -> Vec<Option<usize>> {
    vs.iter().map(|&(t, a)| if a == 0 { None } else { vs.iter().position(|&v| v == (t, 0)) }).collect()
}

/// Every array read by `simd` at every thread count, interleaved: the
/// first, the `others`, then the blocks in order where they were built.
pub(super) fn measure(
    p: &Params,
    ctx: &Bench,
    first: &Array,
    others: &[Array],
    in_order: Option<&Array>,
    teams: &[(usize, Team)],
) -> Result<Vec<FrameSets>> {
    if others.is_empty() {
        return Ok(Vec::new());
    }
    let (kernel, _) = stream_kernel(StreamShape::Simd, None)?;
    let moved = std::cell::Cell::new(0);
    let arrays: Vec<&Array> = std::iter::once(first).chain(others).chain(in_order).collect();
    let vs = variants(p, arrays.len());
    let mut closures: Vec<schedule::Variant> = vs
        .iter()
        .map(|&(t, a)| {
            let team = &teams.iter().find(|(n, _)| *n == t).expect("built").1;
            let expected_pass = pattern_sum(0, arrays[a].len);
            read_sample(kernel, arrays[a].slices(t, 0), team, ctx, &moved, expected_pass)
        })
        .collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    plan.reference_of = references(&vs);
    plan.seed = p.seed ^ 0x6672_616d_6573;
    let series = ctx.measure("bandwidth frame sets", &plan, &mut closures)?;
    drop(closures);
    if moved.get() > 0 {
        ctx.warn(Caution::Migrated { samples: moved.get() });
    }
    let read: Vec<(usize, &Backing)> = arrays.iter().map(|a| (a.len, a.region.backing())).collect();
    Ok(p.threads.iter().map(|&t| frame_sets(t, &vs, &series, &read, p.frame_sets)).collect())
}

/// The arrays of one thread count: each one's rate and ratio to the first,
/// and the per-round median over the first `sets` (the blocks in order,
/// the array after them, stand apart). `arrays`: each one's elements and
/// backing.
fn frame_sets(
    threads: usize,
    vs: &[(usize, usize)],
    series: &[schedule::Series],
    arrays: &[(usize, &Backing)],
    sets: usize,
) -> FrameSets {
    let of: Vec<usize> = (0..vs.len()).filter(|&i| vs[i].0 == threads).collect();
    let rate = |i: usize| -> Vec<f64> {
        let bytes = arrays[vs[i].1].0 as f64 * 8.0;
        series[i].samples_s.iter().map(|s| bytes * series[i].iters as f64 / s).collect()
    };
    let set = |i: usize| {
        let backing = arrays[vs[i].1].1;
        FrameSet {
            bytes_per_s: Summary::of(&rate(i)).expect("at least one finite sample"),
            ratio_to_first: Ratio::of(&series[i].speed_over_reference()),
            pages_per_2mib_block: backing.pages_per_2mib_block,
            in_order_fraction: backing.in_order_fraction,
        }
    };
    let (kept, apart): (Vec<usize>, Vec<usize>) = of.iter().partition(|&&i| vs[i].1 < sets);
    FrameSets {
        pages: PagePolicy::Small,
        threads,
        arrays: kept.iter().map(|&i| set(i)).collect(),
        round_medians_bytes_per_s: round_medians(&kept.iter().map(|&i| rate(i)).collect::<Vec<_>>()),
        blocks_in_order: apart.first().map(|&i| set(i)),
    }
}

/// Per round, the median of the arrays' rates in that round.
pub(super) fn round_medians(rates: &[Vec<f64>]) -> Vec<f64> {
    let rounds = rates.iter().map(Vec::len).min().unwrap_or(0);
    (0..rounds)
        .filter_map(|r| crate::timing::stats::median(&rates.iter().map(|a| a[r]).collect::<Vec<_>>()))
        .collect()
}

/// Seconds the frame sets add on a machine of rates `r`: every array read
/// at every thread count through the scheduler, and the extra arrays
/// mapped and touched.
pub(super) fn estimate_s(p: &Params, r: &Rates) -> f64 {
    if !measures_frames(p) {
        return 0.0;
    }
    let vs = variants(p, p.frame_sets + 1);
    let unit: Vec<f64> = vs.iter().map(|&(t, _)| p.size_bytes.0 as f64 / r.read_bps(t)).collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s);
    plan.reference_of = references(&vs);
    let extra = Bytes(p.size_bytes.0 * extra_small_arrays(p));
    schedule::estimate_s(&plan, &unit, &unit) + r.fault_s(extra, PagePolicy::Small) + r.fault_s(p.size_bytes, PagePolicy::Thp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_array_of_a_thread_count_is_compared_with_its_first() {
        let p = Params { threads: vec![1, 2], frame_sets: 3, ..super::super::tests::frames_params() };
        let vs = variants(&p, 3);
        assert_eq!(vs, vec![(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]);
        assert_eq!(references(&vs), vec![None, Some(0), Some(0), None, Some(3), Some(3)]);
    }

    /// The blocks in order, the array after the frame sets, stand apart:
    /// kept out of the arrays and their round medians, with their own
    /// rate from their own length and their ratio to the first.
    #[test]
    fn the_blocks_in_order_stay_out_of_the_headline() {
        let p = Params { threads: vec![1], frame_sets: 2, ..super::super::tests::frames_params() };
        let vs = variants(&p, 3);
        assert_eq!(references(&vs), vec![None, Some(0), Some(0)]);
        let series = |s: [f64; 2], beside: Vec<f64>| schedule::Series {
            iters: 1,
            samples_s: s.to_vec(),
            adjacent_reference_s_per_iter: beside,
            ok: true,
            looks: Vec::new(),
        };
        let first = [1.0, 2.0];
        let all = [series(first, Vec::new()), series([0.5, 1.0], first.to_vec()), series([0.25, 0.5], first.to_vec())];
        let scattered = crate::memory::Backing { pages_per_2mib_block: Some(20.0), ..frames_backing() };
        let whole = crate::memory::Backing { pages_per_2mib_block: Some(512.0), in_order_fraction: Some(1.0), ..scattered };
        let f = frame_sets(1, &vs, &all, &[(1000, &scattered), (1000, &scattered), (1000, &whole)], 2);
        assert_eq!(f.arrays.len(), 2, "the frame sets only");
        // Round medians of 8000 B over 1 and 0.5 s, then over 2 and 1 s.
        assert_eq!(f.round_medians_bytes_per_s, vec![12000.0, 6000.0]);
        let b = f.blocks_in_order.expect("the array after the frame sets");
        assert_eq!((b.bytes_per_s.min, b.bytes_per_s.max), (16000.0, 32000.0));
        assert_eq!(b.ratio_to_first.map(|r| r.estimate), Some(4.0));
        assert_eq!((b.pages_per_2mib_block, b.in_order_fraction), (Some(512.0), Some(1.0)));
        // Without it, nothing stands apart.
        let f = frame_sets(1, &variants(&p, 2), &all[..2], &[(1000, &scattered), (1000, &scattered)], 2);
        assert!(f.blocks_in_order.is_none() && f.arrays.len() == 2);
    }

    fn frames_backing() -> crate::memory::Backing {
        crate::memory::Backing {
            requested: PagePolicy::Small,
            size_bytes: Bytes(8000),
            page_size_bytes: Some(Bytes(4096)),
            huge_bytes: Some(Bytes(0)),
            huge_fraction: Some(0.0),
            in_order_fraction: Some(0.0),
            pages_per_2mib_block: None,
            first_touch_shuffled: true,
        }
    }

    #[test]
    fn a_round_median_is_the_middle_array_of_that_round() {
        let rates = vec![vec![10.0, 20.0, 30.0], vec![12.0, 5.0, 31.0], vec![11.0, 25.0]];
        assert_eq!(round_medians(&rates), vec![11.0, 20.0], "rounds that every array measured");
    }

    #[test]
    fn frames_are_read_on_small_pages_with_simd_and_more_than_one_set() {
        let p = super::super::tests::frames_params();
        assert!(measures_frames(&p));
        assert!(!measures_frames(&Params { frame_sets: 1, ..p.clone() }));
        assert!(!measures_frames(&Params { pages: vec![PagePolicy::Thp], ..p.clone() }));
        assert!(!measures_frames(&Params { kernels: vec![StreamShape::Sum1], ..p }));
    }
}
