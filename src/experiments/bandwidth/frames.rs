//! The kernels' read array (4 KiB pages first touched in order, what a
//! program that allocates and fills an array gets on a machine with free
//! memory) against fragmented memory: an array of the same size whose
//! pages were first touched in a shuffled order, so its frames scatter
//! over many 2 MiB blocks. Both are read by plain `simd`, round by round,
//! the read array beside the fragmented one as its reference; the
//! fragmented array is mapped anew every round (where its frames land is
//! a level of its own), and the comparison resolved sequentially. The
//! headline stays the read array's: fragmented memory is a second, named
//! figure and a verdict.

use super::*;

/// Fragmented memory is compared on 4 KiB pages (where frames scatter),
/// with `simd` asked for, when more than one frame set is asked for.
pub(super) fn measures_frames(p: &Params) -> bool {
    p.frame_sets > 1 && p.pages.contains(&PagePolicy::Small) && p.kernels.contains(&StreamShape::Simd)
}

/// Fragmented arrays mapped at once (one at a time, anew every round).
pub(super) fn extra_small_arrays(p: &Params) -> u64 {
    u64::from(measures_frames(p))
}

/// Per thread count, the read array (0) and the fragmented one (1):
/// `(threads, array)` in order.
fn variants(p: &Params) -> Vec<(usize, usize)> {
    p.threads.iter().flat_map(|&t| (0..2).map(move |a| (t, a))).collect()
}

fn references(vs: &[(usize, usize)]) -> Vec<Option<usize>> {
    vs.iter().map(|&(t, a)| if a == 0 { None } else { vs.iter().position(|&v| v == (t, 0)) }).collect()
}

/// The read array against a fragmented array mapped anew every round, at
/// every thread count, through [`schedule::in_mappings`]: a look after
/// `repetitions` rounds, doubling until each thread count's comparison is
/// resolved (twice the repetitions at most).
pub(super) fn measure(p: &Params, ctx: &Bench, first: &Array, teams: &[(usize, Team)]) -> Result<Vec<FrameSets>> {
    if !measures_frames(p) {
        return Ok(Vec::new());
    }
    let (kernel, _) = stream_kernel(StreamShape::Simd, None)?;
    let moved = std::cell::Cell::new(0);
    let vs = variants(p);
    let refs = references(&vs);
    let questions: Vec<schedule::Question> = (0..vs.len())
        .filter(|&i| refs[i].is_some())
        .map(|variant| schedule::Question::OverReference { variant })
        .collect();
    let mut plan = schedule::Plan::new(p.repetitions, p.min_sample_s).resolving(questions.clone(), 2 * p.repetitions);
    plan.reference_of = refs.clone();
    plan.seed = p.seed ^ 0x6672_616d_6573;
    plan.stop_looking_at_ns = ctx.deadline_ns();
    let widest = teams.iter().max_by_key(|t| t.0).map(|t| &t.1).expect("checked non-empty");
    let mut backings: Vec<Backing> = Vec::new();
    let mut iters: Vec<u64> = Vec::new();
    let mut one = |k: usize, reps: usize| -> Result<Vec<schedule::Series>> {
        ctx.check_interrupt()?;
        let mut fragmented = Array::fragmented(p.size_bytes, widest, ctx.clock)?;
        fragmented.region.read_back();
        backings.push(fragmented.region.backing().clone());
        let arrays = [first, &fragmented];
        let mut closures: Vec<schedule::Variant> = vs
            .iter()
            .map(|&(t, a)| {
                let team = &teams.iter().find(|(n, _)| *n == t).expect("built").1;
                read_sample(kernel, arrays[a].slices(t, 0), team, ctx, &moved, pattern_sum(0, arrays[a].len))
            })
            .collect();
        let mut share = schedule::Plan::new(reps, p.min_sample_s);
        share.reference_of = refs.clone();
        share.seed = plan.seed ^ k as u64;
        share.iters = iters.clone();
        let series = ctx.measure("bandwidth fragmented memory", &share, &mut closures)?;
        if iters.is_empty() {
            iters = series.iter().map(|s| s.iters).collect();
        }
        Ok(series)
    };
    let mapped = schedule::in_mappings(&plan, 1, ctx.clock, &mut one)?;
    if moved.get() > 0 {
        ctx.warn(Caution::Migrated { samples: moved.get() });
    }
    let len = first.len;
    Ok(p.threads.iter().map(|&t| frame_sets(t, &vs, &mapped, len, first.region.backing(), &backings)).collect())
}

/// One thread count's read array and fragmented memory: each one's rate
/// (the read array's per round are the headline's samples), the
/// fragmented one's ratio to the read array over its mappings, and its
/// frames (the median over its mappings).
fn frame_sets(
    threads: usize,
    vs: &[(usize, usize)],
    mapped: &schedule::SeriesByMapping,
    len: usize,
    read: &Backing,
    fragmented: &[Backing],
) -> FrameSets {
    let at = |a: usize| vs.iter().position(|&v| v == (threads, a)).expect("every thread count has both");
    let rate = |i: usize| -> Vec<f64> {
        let s = &mapped.series[i];
        s.samples_s.iter().map(|x| len as f64 * 8.0 * s.iters as f64 / x).collect()
    };
    let median = |f: fn(&Backing) -> Option<f64>| crate::timing::stats::median(&fragmented.iter().filter_map(f).collect::<Vec<_>>());
    let in_order = FrameSet {
        bytes_per_s: Summary::of(&rate(at(0))).expect("at least one finite sample"),
        ratio_to_first: None,
        pages_per_2mib_block: read.pages_per_2mib_block,
        in_order_fraction: read.in_order_fraction,
    };
    let scattered = FrameSet {
        bytes_per_s: Summary::of(&rate(at(1))).expect("at least one finite sample"),
        ratio_to_first: mapped.ratio(schedule::Question::OverReference { variant: at(1) }),
        pages_per_2mib_block: median(|b| b.pages_per_2mib_block),
        in_order_fraction: median(|b| b.in_order_fraction),
    };
    FrameSets {
        pages: PagePolicy::Small,
        threads,
        arrays: vec![in_order, scattered],
        round_medians_bytes_per_s: rate(at(0)),
        blocks_in_order: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fragmented_array_of_a_thread_count_is_compared_with_the_read_array() {
        let p = Params { threads: vec![1, 2], frame_sets: 2, ..super::super::tests::frames_params() };
        let vs = variants(&p);
        assert_eq!(vs, vec![(1, 0), (1, 1), (2, 0), (2, 1)]);
        assert_eq!(references(&vs), vec![None, Some(0), None, Some(2)]);
    }

    #[test]
    fn fragmented_memory_is_read_on_small_pages_with_simd_and_more_than_one_set() {
        let p = super::super::tests::frames_params();
        assert!(measures_frames(&p));
        assert!(!measures_frames(&Params { frame_sets: 1, ..p.clone() }));
        assert!(!measures_frames(&Params { pages: vec![PagePolicy::Thp], ..p.clone() }));
        assert!(!measures_frames(&Params { kernels: vec![StreamShape::Sum1], ..p }));
    }
}
