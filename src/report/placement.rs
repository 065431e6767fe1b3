//! How far where the host placed the vCPUs moved during a run, which a
//! figure of more than one CPU carries and one of one thread does not:
//! the suite's reference, every CPU reading at once at the run's start,
//! middle and end, and between those points `bandwidth`'s read array read
//! by plain `simd` on the same threads in two phases of one experiment
//! (the same bytes on the same frames; `bandwidth::Phases`), counted where
//! they lie apart beyond the 10% a run's verdicts allow and further than
//! the points. A host that moves the vCPUs for a few seconds only shows in
//! the second.

use crate::model::document::Document;
use crate::model::outcome::bandwidth::{self, Phases};
use memperf_model::timing::drift::HOST_MOVED_LIMIT;

/// How far every CPU reading at once moved, the larger of the two where
/// either was measured, and the phases that showed it where they did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostMove {
    pub fraction: f64,
    pub inside: Option<Phases>,
}

/// The move of `doc`'s run, or `None` where neither was measured.
pub fn every_cpu_moved(doc: &Document) -> Option<HostMove> {
    let points = doc.host_drift.as_ref().and_then(|d| d.all_read_moved());
    // The phases count only beyond the limit of a run's verdicts: two
    // medians of one experiment a few percent apart are its own noise.
    let inside = doc
        .outcome::<bandwidth::Outcome>()
        .and_then(|b| b.phases().into_iter().max_by(|x, y| x.moved().total_cmp(&y.moved())))
        .filter(|i| i.moved() > HOST_MOVED_LIMIT);
    match (points, inside) {
        (p, Some(i)) if p.is_none_or(|p| i.moved() > p) => Some(HostMove { fraction: i.moved(), inside: Some(i) }),
        (Some(p), _) => Some(HostMove { fraction: p, inside: None }),
        (None, _) => None,
    }
}

/// "bandwidth's read array on 2 threads read 32.2 GB/s in its kernels'
/// rounds and 44.4 in its rounds beside fragmented memory right after (38%
/// apart)".
pub fn phases_text(p: &Phases) -> String {
    format!(
        "bandwidth's read array on {} threads read {:.1} GB/s in its kernels' rounds and {:.1} in its rounds \
         beside fragmented memory right after ({:.0}% apart)",
        p.threads,
        p.kernels_bytes_per_s / 1e9,
        p.frame_sets_bytes_per_s / 1e9,
        p.moved() * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::outcome::bandwidth::tests::bandwidth_mut as bandwidth_of;

    fn zen4() -> Document {
        let suites = crate::test_support::recorded_suites();
        suites.into_iter().find(|(name, _)| name.starts_with("amd-epyc-zen4")).expect("the Zen 4 recording").1
    }

    /// The phases count where they moved further than the reference's
    /// points, and are named; otherwise the points' move stands alone.
    #[test]
    fn the_larger_of_the_points_and_the_phases_is_the_move() {
        use crate::model::outcome::bandwidth::{FrameSet, FrameSets};
        use crate::timing::Summary;
        let mut doc = zen4();
        let points = doc.host_drift.as_ref().and_then(|d| d.all_read_moved());
        let bw = bandwidth_of(&mut doc);
        let simd2 = bw
            .results
            .iter()
            .find(|r| r.variant.threads == 2 && r.variant.kernel == crate::kernels::StreamShape::Simd)
            .map(|r| r.bytes_per_s.median)
            .expect("simd on 2 threads");
        let set = |rate: f64| FrameSet {
            bytes_per_s: Summary::of(&[rate]).unwrap(),
            ratio_to_first: None,
            pages_per_2mib_block: None,
            in_order_fraction: None,
        };
        let sets = |rate: f64| FrameSets {
            pages: crate::memory::PagePolicy::Small,
            threads: 2,
            arrays: vec![set(rate)],
            round_medians_bytes_per_s: vec![rate],
            blocks_in_order: None,
        };
        bw.frame_sets = vec![sets(simd2 * 1.5)];
        let m = every_cpu_moved(&doc).unwrap();
        assert!((m.fraction - 0.5).abs() < 1e-9, "{m:?}");
        let text = phases_text(&m.inside.unwrap());
        assert!(
            text.starts_with("bandwidth's read array on 2 threads read") && text.ends_with("(50% apart)"),
            "{text}"
        );
        // Within the limit the phases are the experiment's own noise: no
        // move without the reference's points, and theirs where they moved.
        bandwidth_of(&mut doc).frame_sets = vec![sets(simd2 * 1.09)];
        assert_eq!(points, None, "the recording has no every-CPU points");
        assert_eq!(every_cpu_moved(&doc), None);
        use memperf_model::timing::drift::{DriftPoint, HostDrift};
        let point = |all: f64| DriftPoint {
            after_experiments: 0,
            read_bytes_per_s: vec![20e9],
            chase_ns: vec![150.0],
            all_read_bytes_per_s: vec![all],
            call_ns: Vec::new(),
            syscall_ns: Vec::new(),
            chase_4k_ns: Vec::new(),
            chase_4k_pages_per_block: None,
        };
        doc.host_drift = Some(HostDrift {
            size_bytes: crate::units::Bytes(256 << 20),
            all_threads: Some(2),
            points: vec![point(30e9), point(36e9), point(31e9)],
        });
        let m = every_cpu_moved(&doc).unwrap();
        assert!((m.fraction - 0.2).abs() < 1e-9 && m.inside.is_none(), "{m:?}");
    }
}
