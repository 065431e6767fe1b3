//! The frame sets as text: each array's rate and ratio to the first, and
//! whether the frames an array gets move the read beyond the intervals.

use crate::model::outcome::bandwidth::{FrameSet, FrameSets, Outcome};
use crate::report::table::{gbps, Table};
use crate::report::text::ratio_text;

/// Differences between arrays beyond their intervals by more than this are
/// said to come from the frames (the suite's verdict limit).
pub(super) const FRAMES_MATTER: f64 = 0.10;

/// A table of the arrays per thread count and one line on what they show.
pub(super) fn frame_sets_text(o: &Outcome) -> String {
    let Some(first) = o.frame_sets.first() else { return String::new() };
    let mut out = format!(
        "\nsimd read over {} arrays of {}, {} pages, each first touched on frames of its own (the first is the \
         read array above; ratio: to the first's sample beside it, per round)\n",
        first.arrays.len(),
        o.size_bytes,
        first.pages
    );
    let mut t = Table::new(["threads", "array", "median", "min", "max", "ratio to the first", "pages per 2MiB block"]);
    let row = |t: &mut Table, threads: usize, array: String, a: &FrameSet| {
        t.row([
            threads.to_string(),
            array,
            gbps(a.bytes_per_s.median),
            gbps(a.bytes_per_s.min),
            gbps(a.bytes_per_s.max),
            a.ratio_to_first.as_ref().map_or_else(|| "-".into(), |r| format!("×{:.3} [×{:.3}, ×{:.3}]", r.estimate, r.low, r.high)),
            a.pages_per_2mib_block.map_or_else(|| "unknown".into(), |b| format!("{b:.1}")),
        ])
    };
    for f in &o.frame_sets {
        f.arrays.iter().enumerate().for_each(|(i, a)| row(&mut t, f.threads, (i + 1).to_string(), a));
        if let Some(b) = &f.blocks_in_order {
            row(&mut t, f.threads, "in order".into(), b);
        }
    }
    out.push_str(&t.render());
    o.frame_sets.iter().for_each(|f| out.push_str(&format!("  {}\n", verdict(f))));
    o.frame_sets.iter().for_each(|f| out.push_str(&format!("  {}\n", in_order_text(f))));
    out
}

/// What the array of whole 2 MiB blocks in physical order read, beside the
/// scattered arrays the headline comes from; or why it was not read.
pub(crate) fn in_order_text(f: &FrameSets) -> String {
    let Some(b) = &f.blocks_in_order else {
        return format!(
            "{} thread(s): 4 KiB pages over whole 2 MiB blocks in physical order: not measured (no huge page for \
             every block to build them from: THP off, free memory fragmented or short, or a document from before \
             they were read)",
            f.threads
        );
    };
    let order = b
        .in_order_fraction
        .map_or_else(|| " in physical order".into(), |o| format!(", {:.0}% of them in physical order,", o * 100.0));
    let ratio = b.ratio_to_first.as_ref().map_or_else(String::new, |r| format!(", {} of the first array", ratio_text(r)));
    format!(
        "{} thread(s): 4 KiB pages over whole 2 MiB blocks{order} read {} GB/s{ratio}: the rate where free memory \
         is whole; the headline is the scattered arrays' (their pages first touched in a shuffled order, the same \
         every run)",
        f.threads,
        gbps(b.bytes_per_s.median)
    )
}

/// What one thread count's arrays show.
pub(crate) fn verdict(f: &FrameSets) -> String {
    let median = crate::timing::stats::median(&f.round_medians_bytes_per_s).map_or_else(|| "-".into(), gbps);
    let Some((slow, fast)) = f.extremes() else {
        return format!("{} thread(s): one array, so no comparison of frames", f.threads);
    };
    let spread = (fast.estimate / slow.estimate - 1.0) * 100.0;
    let blocks = density_text(f);
    let (slowest, fastest) = (format!("×{:.3}", slow.estimate), format!("×{:.3}", fast.estimate));
    if f.frames_matter(FRAMES_MATTER) {
        format!(
            "{} thread(s): the arrays read {slowest} to {fastest} of the first{blocks}, {spread:.0}% apart beyond \
             their intervals: which frames an array gets moves this read here, so one array's figure is one draw; \
             the headline is the median over the arrays per round ({median} GB/s)",
            f.threads
        )
    } else {
        format!(
            "{} thread(s): the arrays read {slowest} to {fastest} of the first{blocks}, not beyond their intervals \
             by more than {:.0}%: no effect of frames resolved among these; the headline is the median over the \
             arrays per round ({median} GB/s)",
            f.threads,
            FRAMES_MATTER * 100.0
        )
    }
}

/// ", their frames 6.6 to 7.6 pages per 2 MiB block" where pagemap
/// showed every array's frames; nothing otherwise.
fn density_text(f: &FrameSets) -> String {
    let Some(d) = f.arrays.iter().map(|a| a.pages_per_2mib_block).collect::<Option<Vec<f64>>>() else {
        return String::new();
    };
    let (low, high) = d.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    format!(", their frames {low:.1} to {high:.1} pages per 2 MiB block")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{Ratio, Summary};

    fn sets(ratios: &[(f64, f64, f64)]) -> FrameSets {
        let rate = Summary::of(&[20e9]).unwrap();
        let first =
            FrameSet { bytes_per_s: rate, ratio_to_first: None, pages_per_2mib_block: Some(6.5), in_order_fraction: None };
        let others = ratios.iter().map(|&(median, low, high)| FrameSet {
            bytes_per_s: rate,
            ratio_to_first: Some(Ratio::stated(10, median, low, high, 0.995)),
            pages_per_2mib_block: None,
            in_order_fraction: None,
        });
        FrameSets {
            pages: crate::memory::PagePolicy::Small,
            threads: 1,
            arrays: std::iter::once(first).chain(others).collect(),
            round_medians_bytes_per_s: vec![19e9, 21e9, 20e9],
            blocks_in_order: None,
        }
    }

    #[test]
    fn the_blocks_in_order_stand_beside_the_headline_or_say_not_measured() {
        let mut f = sets(&[(0.95, 0.93, 0.97)]);
        let none = in_order_text(&f);
        assert!(none.contains("physical order: not measured (no huge page for every block"), "{none}");
        f.blocks_in_order = Some(FrameSet {
            bytes_per_s: Summary::of(&[30e9]).unwrap(),
            ratio_to_first: Some(Ratio::stated(10, 1.36, 1.3, 1.4, 0.995)),
            pages_per_2mib_block: Some(512.0),
            in_order_fraction: Some(0.998),
        });
        let said = in_order_text(&f);
        assert!(said.contains("2 MiB blocks, 100% of them in physical order, read 30.00 GB/s, ×1.360 [×1.300, ×1.400]"), "{said}");
        assert!(said.contains("the headline is the scattered arrays'"), "{said}");
    }

    #[test]
    fn arrays_apart_beyond_their_intervals_say_the_frames_matter() {
        let f = sets(&[(0.88, 0.86, 0.90), (1.10, 1.08, 1.12), (1.02, 0.99, 1.04)]);
        let (slow, fast) = f.extremes().unwrap();
        assert_eq!((slow.estimate, fast.estimate), (0.88, 1.10));
        assert!(f.frames_matter(FRAMES_MATTER), "1.08 / 0.90 = 1.2 > 1.1");
        let v = verdict(&f);
        assert!(v.contains("×0.880 to ×1.100") && v.contains("25% apart"), "{v}");
        assert!(v.contains("which frames an array gets moves this read"), "{v}");
        assert!(v.contains("(20.00 GB/s)"), "the median of the round medians: {v}");
        assert!(!v.contains("pages per 2 MiB block"), "only where every array's frames were read: {v}");
        let mut read = f.clone();
        read.arrays.iter_mut().zip([6.6, 7.2, 37.5, 9.0]).for_each(|(a, b)| a.pages_per_2mib_block = Some(b));
        let v = verdict(&read);
        assert!(v.contains("of the first, their frames 6.6 to 37.5 pages per 2 MiB block, 25% apart"), "{v}");
    }

    #[test]
    fn overlapping_arrays_resolve_no_effect_of_frames() {
        // The medians are 15% apart, their intervals not: no claim.
        let f = sets(&[(0.95, 0.85, 1.02), (1.10, 0.98, 1.15)]);
        assert!(!f.frames_matter(FRAMES_MATTER));
        assert!(verdict(&f).contains("no effect of frames resolved among these"), "{}", verdict(&f));
        let first_is_the_slowest = sets(&[(1.2, 1.15, 1.25)]);
        assert_eq!(first_is_the_slowest.extremes().unwrap().0.estimate, 1.0, "the first counts as ×1");
        assert!(first_is_the_slowest.frames_matter(FRAMES_MATTER), "1.15 / 1.0 > 1.1");
    }

    #[test]
    fn one_array_compares_nothing() {
        let f = sets(&[]);
        assert!(f.extremes().is_none() && !f.frames_matter(0.0));
        assert!(verdict(&f).contains("one array"), "{}", verdict(&f));
    }
}
