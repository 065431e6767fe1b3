//! Fragmented memory as text: the read array (4 KiB pages first touched in
//! order) against arrays whose pages were first touched in a shuffled
//! order, their frames, and the verdict on reads of fragmented memory.

use crate::model::outcome::bandwidth::{FrameSet, FrameSets, Outcome};
use crate::report::table::{gbps, Table};
use crate::report::verdict::{line, said, SPEED};

/// A table of the arrays per thread count and the verdict of each.
pub(super) fn frame_sets_text(o: &Outcome) -> String {
    let Some(first) = o.frame_sets.first() else { return String::new() };
    let mut out = format!(
        "\nfragmented memory: simd over {} of {} pages first touched in order (the read array above) and in a \
         shuffled order (a fresh array every round), each round beside the first\n",
        o.size_bytes, first.pages
    );
    let mut t = Table::new([
        "threads",
        "pages first touched",
        "median",
        "min",
        "max",
        "ratio to in order",
        "pages per 2MiB block",
        "in physical order",
    ]);
    for f in &o.frame_sets {
        for (i, a) in f.arrays.iter().enumerate() {
            let label = match (i, f.arrays.len()) {
                (0, _) => "in order".to_string(),
                (_, 2) => "shuffled".to_string(),
                _ => format!("shuffled {i}"),
            };
            row(&mut t, f.threads, label, a);
        }
        if let Some(b) = &f.blocks_in_order {
            row(&mut t, f.threads, "whole blocks".into(), b);
        }
    }
    out.push_str(&t.render());
    for f in &o.frame_sets {
        out.push_str(&format!("  {}\n", verdict(f)));
    }
    out
}

fn row(t: &mut Table, threads: usize, array: String, a: &FrameSet) {
    t.row([
        threads.to_string(),
        array,
        gbps(a.bytes_per_s.median),
        gbps(a.bytes_per_s.min),
        gbps(a.bytes_per_s.max),
        a.ratio_to_first.as_ref().map_or_else(|| "-".into(), crate::report::text::ratio_text),
        a.pages_per_2mib_block.map_or_else(|| "unknown".into(), |b| format!("{b:.1}")),
        a.in_order_fraction.map_or_else(|| "unknown".into(), |f| format!("{:.0}%", f * 100.0)),
    ]);
}

/// ", pages scattered over 2 MiB blocks at 14.8 a block" where pagemap
/// showed the frames.
fn frames(a: &FrameSet) -> String {
    a.pages_per_2mib_block.map_or_else(String::new, |b| format!(", {b:.1} pages a 2 MiB block"))
}

/// One thread count's verdict on fragmented memory: the most fragmented
/// array (the one of fewest pages a block) against the read array, in the
/// verdicts' words.
pub(crate) fn verdict(f: &FrameSets) -> String {
    let Some((first, shuffled)) = f.arrays.split_first() else { return String::new() };
    let compared = shuffled.iter().filter(|a| a.ratio_to_first.is_some());
    let Some(a) = compared.min_by(|x, y| {
        x.pages_per_2mib_block.unwrap_or(f64::MAX).total_cmp(&y.pages_per_2mib_block.unwrap_or(f64::MAX))
    }) else {
        return format!("{} thread(s): one array, so no comparison of frames", f.threads);
    };
    let r = a.ratio_to_first.as_ref().expect("filtered");
    format!(
        "{} thread(s): fragmented memory{} against pages first touched in order{}: {}",
        f.threads,
        frames(a),
        frames(first),
        said(&r.verdict(), SPEED)
    )
}

/// The advice on fragmented memory, one thread's: reads of it against
/// pages first touched in order, and what recovers it.
pub(super) fn advice(o: &Outcome) -> Option<String> {
    let f = o.frame_sets.iter().find(|f| f.threads == 1)?;
    let (first, shuffled) = f.arrays.split_first()?;
    let a = shuffled.iter().filter(|a| a.ratio_to_first.is_some()).min_by(|x, y| {
        x.pages_per_2mib_block.unwrap_or(f64::MAX).total_cmp(&y.pages_per_2mib_block.unwrap_or(f64::MAX))
    })?;
    let subject = format!(
        "Reads of {} on fragmented 4 KiB memory{} against pages first touched in order{}, 1 thread",
        o.size_bytes,
        frames(a),
        frames(first)
    );
    let r = a.ratio_to_first.as_ref()?;
    Some(line(
        &subject,
        r,
        crate::report::verdict::SPEED_LOSS,
        Some("huge pages, or free memory compacted (echo 1 > /proc/sys/vm/compact_memory), recover it"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{Ratio, Summary};

    fn sets(ratios: &[(f64, f64, f64)]) -> FrameSets {
        let rate = Summary::of(&[20e9]).unwrap();
        let first =
            FrameSet { bytes_per_s: rate, ratio_to_first: None, pages_per_2mib_block: Some(480.0), in_order_fraction: Some(0.9) };
        let others = ratios.iter().map(|&(median, low, high)| FrameSet {
            bytes_per_s: rate,
            ratio_to_first: Some(Ratio::stated(10, median, low, high, 0.995)),
            pages_per_2mib_block: Some(14.8),
            in_order_fraction: Some(0.0),
        });
        FrameSets {
            pages: crate::memory::PagePolicy::Small,
            threads: 1,
            arrays: std::iter::once(first).chain(others).collect(),
            round_medians_bytes_per_s: vec![19e9, 21e9, 20e9],
            blocks_in_order: None,
        }
    }

    /// Fragmented memory read at ×0.75 of pages in order is slower, with
    /// both arrays' frames, and advised against; one array compares
    /// nothing.
    #[test]
    fn fragmented_memory_is_a_verdict_with_its_frames() {
        let f = sets(&[(0.75, 0.70, 0.80)]);
        let v = verdict(&f);
        assert!(v.starts_with("1 thread(s): fragmented memory, 14.8 pages a 2 MiB block against pages first touched in order, 480.0 pages a 2 MiB block: slower ×0.750"), "{v}");
        let mut o: Outcome = serde_json::from_value(serde_json::json!({
            "isa": "avx2", "size_bytes": 1 << 30, "regions": [], "placement": [], "order_seed": 1,
            "results": [], "headlines": [], "plateaus": [], "prefetch_effects": [], "valid": true
        }))
        .unwrap();
        o.frame_sets = vec![f];
        let a = advice(&o).unwrap();
        assert!(a.starts_with("Reads of 1GiB on fragmented 4 KiB memory, 14.8 pages a 2 MiB block"), "{a}");
        assert!(a.contains(": slower ×0.750") && a.contains("recover it"), "{a}");
        assert!(verdict(&sets(&[])).contains("one array"));
        let same = sets(&[(1.0, 0.99, 1.01)]);
        o.frame_sets = vec![same];
        assert!(!advice(&o).unwrap().contains("recover it"), "no change is no advice to act on");
    }
}
