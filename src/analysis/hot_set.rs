//! What a process's sampled hot set means: its phases (stretches of
//! intervals whose hot sets stay within ±25% of their median), the 2 MiB
//! pages each would need, and the verdict on the largest lasting one set
//! beside the TLB's reach and what the caches hold. `wss` and `stat --wss`
//! conclude their samples here.

use crate::process::hot_set::{method, Params, SamplingRecord};
use crate::process::Exit;
use crate::units::{group_thousands, Bytes};
use memperf_model::outcome::wss::{Interval, Mapping, MappingSample, Outcome, Phase, Reach};

/// A phase holds intervals within this band of its median hot set.
pub const PHASE_BAND: f64 = 0.25;

/// The outcome of a sampled run: its phases, the method said from the
/// kernel's config, and the verdict.
pub fn conclude(
    s: SamplingRecord,
    p: &Params,
    reach: Option<Reach>,
    exit: Option<Exit>,
    wall_s: f64,
    usage_peak: u64,
) -> Outcome {
    let phases = phases(&s.intervals, &s.mappings);
    let (method, written_not_measured) = method(&s.kernel, &s.source);
    // Written bytes read from soft-dirty bits (`--pages`) need no excuse.
    let written = s.intervals.iter().flat_map(|i| &i.mappings).any(|m| m.written_bytes.is_some());
    let written_not_measured = written_not_measured.filter(|_| !written);
    let mut o = Outcome {
        command: p.command.clone(),
        pid: p.pid,
        interval_ms: p.interval_ms,
        adaptive: s.adaptive,
        method,
        written_not_measured,
        pages_method: s.pages_method,
        exit,
        wall_s,
        peak_rss_bytes: s.peak_rss_bytes.max(usage_peak),
        valid: !s.intervals.is_empty(),
        mappings: s.mappings,
        intervals: s.intervals,
        phases,
        reach,
        verdict: Vec::new(),
    };
    o.verdict = verdict(&o);
    o
}

/// Stretches of intervals within ±[`PHASE_BAND`] of their running median;
/// a lone interval between two stretches (the switch itself) joins none.
pub fn phase_bounds(hot: &[f64]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < hot.len() {
        let mut end = start + 1;
        while end < hot.len() {
            let median = crate::timing::stats::median(&hot[start..end]).unwrap_or(0.0);
            let within =
                |v: f64| (median > 0.0 && (v / median - 1.0).abs() <= PHASE_BAND) || (median == 0.0 && v == 0.0);
            if !within(hot[end]) {
                break;
            }
            end += 1;
        }
        out.push((start, end));
        start = end;
    }
    // A single interval between two longer stretches is a transition.
    let n = out.len();
    out.into_iter().enumerate().filter(|(i, (a, b))| !(b - a == 1 && *i > 0 && *i + 1 < n)).map(|(_, r)| r).collect()
}

fn phases(intervals: &[Interval], mappings: &[Mapping]) -> Vec<Phase> {
    let hot: Vec<f64> = intervals.iter().map(|i| i.hot_bytes() as f64).collect();
    phase_bounds(&hot)
        .into_iter()
        .map(|(a, b)| {
            let span = &intervals[a..b];
            let median = crate::timing::stats::median(&hot[a..b]).unwrap_or(0.0) as u64;
            // Per mapping: its hot bytes in each interval (0 where it was
            // not resident), in one pass, then their median.
            let mut by_mapping = vec![vec![0.0; span.len()]; mappings.len()];
            let mut spans: Vec<Spans> = vec![Spans::default(); mappings.len()];
            for (j, i) in span.iter().enumerate() {
                for m in &i.mappings {
                    by_mapping[m.mapping][j] = m.referenced_bytes as f64;
                    spans[m.mapping].add(m);
                }
            }
            let per: Vec<(usize, u64)> = by_mapping
                .iter()
                .enumerate()
                .map(|(idx, v)| (idx, crate::timing::stats::median(v).unwrap_or(0.0) as u64))
                .filter(|x| x.1 > 0)
                .collect();
            let total: u64 = per.iter().map(|x| x.1).sum();
            let top = per.iter().max_by_key(|x| x.1).copied();
            let coverable = per.iter().filter(|(i, _)| mappings[*i].kind.huge_pages_can_cover()).map(|x| x.1).sum();
            let bounds: Vec<(u64, u64, bool)> =
                per.iter().map(|&(i, b)| spans[i].huge_pages(b, mappings[i].end - mappings[i].start)).collect();
            let top_bounds = per.iter().zip(&bounds).find(|(x, _)| Some(**x) == top).map(|(&(_, b), &s)| (b, s));
            Phase {
                from_s: if a == 0 { 0.0 } else { intervals[a - 1].t_s },
                to_s: span.last().map_or(0.0, |i| i.t_s),
                intervals: b - a,
                hot_bytes: median,
                top_mapping: top.map(|x| x.0),
                top_share: top.map_or(0.0, |x| x.1 as f64 / total.max(1) as f64),
                coverable_bytes: coverable,
                huge_pages_min: bounds.iter().map(|b| b.0).sum(),
                huge_pages_max: bounds.iter().map(|b| b.1).sum(),
                huge_pages_counted: !bounds.is_empty() && bounds.iter().all(|b| b.2),
                top_spans: top_bounds.and_then(|(b, (low, _, counted))| counted.then_some((low, b))),
                top_spans_max: top_bounds.and_then(|(_, (low, high, counted))| (counted && high > low).then_some(high)),
            }
        })
        .collect()
}

/// A mapping's page-by-page counts over a phase (`--pages`).
#[derive(Clone, Default)]
struct Spans {
    resident: Vec<f64>,
    /// Each interval's fewest and most hot spans (equal where counted).
    hot_low: Vec<f64>,
    hot_high: Vec<f64>,
    /// Intervals whose pages were read but whose hot spans are not known.
    unknown: usize,
}

impl Spans {
    /// An interval whose pages could not be read (the process was ending)
    /// adds nothing.
    fn add(&mut self, m: &MappingSample) {
        let Some(resident) = m.resident_spans else { return };
        self.resident.push(resident as f64);
        let (low, high) = match (m.hot_spans, m.hot_spans_min) {
            (Some(h), _) => (h, h),
            (None, Some(low)) => (low, resident),
            (None, None) => {
                self.unknown += 1;
                return;
            }
        };
        self.hot_low.push(low as f64);
        self.hot_high.push(high as f64);
    }

    /// The fewest and most 2 MiB pages that map `hot` bytes of a mapping of
    /// `size` bytes: from the page-by-page counts where every interval's
    /// hot spans are known or bounded (the medians of the intervals' fewest
    /// and most); else from the bytes (rounded up to 2 MiB; one huge page
    /// per hot 4 KiB page at most, no more than the mapping's spans, or
    /// than the spans holding its resident pages).
    fn huge_pages(&self, hot: u64, size: u64) -> (u64, u64, bool) {
        let median = |v: &[f64]| crate::timing::stats::median(v).map(|m| m.round() as u64);
        if self.unknown == 0 {
            if let (Some(low), Some(high)) = (median(&self.hot_low), median(&self.hot_high)) {
                return (low, high.max(low), true);
            }
        }
        let huge = 2u64 << 20;
        let min = hot.div_ceil(huge);
        let most = (hot / 4096).min(size.div_ceil(huge) + 1);
        let most = median(&self.resident).map_or(most, |r| most.min(r));
        (min, most.max(min), false)
    }
}

pub use memperf_model::outcome::wss::{judged_phase, mapping_name};

/// The verdict on the largest lasting phase: the hot set beside the TLB's
/// reach, and whether huge pages could cover it.
pub fn verdict(o: &Outcome) -> Vec<String> {
    let Some(p) = judged_phase(o) else {
        return vec![format!(
            "No hot set: the program ended before the first interval of {} ms (peak RSS {}); run it longer or with a shorter -I.",
            o.interval_ms,
            Bytes(o.peak_rss_bytes)
        )];
    };
    let pages = p.hot_bytes / 4096;
    let head = phase_head(p, o);
    if (p.coverable_bytes as f64) < 0.5 * p.hot_bytes as f64 {
        return vec![format!(
            "{head}: most of it is file-backed or shared, which malloc's huge pages cannot cover; huge pages will not help its translation."
        )];
    }
    let Some(r) = &o.reach else {
        // Where the pages lie was counted whatever the TLB: say it too.
        let mut out = vec![format!(
            "{head}; {} would map it. The TLB's reach is not known here (none measured, and CPUID reports no TLB): run `memperf tlb -o DIR` and pass --machine-results DIR.",
            huge_pages_phrase(p)
        )];
        out.extend(scattered(p, o));
        return out;
    };
    let l1 = reach_phrase("L1 DTLB", r.entries, r, r.cpuid_entries);
    let caches = caches_phrase(p.hot_bytes, r);
    if pages <= r.entries {
        return vec![format!("{head}: it fits {l1}{caches}, so huge pages cannot help its translation.")];
    }
    let l2 = second_level_phrase(pages, r);
    let command = if o.command.is_empty() { "CMD".to_string() } else { o.command.join(" ") };
    let mut out = vec![format!(
        "{head}: {:.0}× {l1}{l2}{caches}; {} would map it. Try `memperf hugepages -- {command}`.",
        pages as f64 / r.entries as f64,
        huge_pages_phrase(p),
    )];
    out.extend(scattered(p, o));
    out.extend(unseen_in_the_tlb(p, o, r));
    out.extend(r.huge_same_reach.map(|n| format!(
        "Caution: `memperf tlb` found huge pages stepping at {n} pages {}, as 4 KiB pages do (the host backs the guest with small pages), so huge pages may not enlarge the reach; only `hugepages` can say whether they help this program.",
        r.measured_on.as_ref().map_or("here".to_string(), |h| format!("on {h}"))
    )));
    out
}

/// The phase judged: its size, its time, its place among the phases and
/// the mapping most of it is in.
fn phase_head(p: &Phase, o: &Outcome) -> String {
    let place = p
        .top_mapping
        .and_then(|i| o.mappings.get(i))
        .map(|m| format!("; {:.0}% of it is in the {}", p.top_share * 100.0, mapping_name(m)))
        .unwrap_or_default();
    format!(
        "Hot set {} ({} pages of 4 KiB) from {:.1} s to {:.1} s{}{place}",
        Bytes(p.hot_bytes),
        group_thousands(p.hot_bytes / 4096),
        p.from_s,
        p.to_s,
        if o.phases.len() > 1 { format!(", the largest of {} phases", o.phases.len()) } else { String::new() }
    )
}

/// How many times the second-level TLB's reach the hot set is, or what is
/// known of that level when it was not measured.
fn second_level_phrase(pages: u64, r: &Reach) -> String {
    match (r.l2_entries, r.measured) {
        (Some(e), _) => format!(
            " and {:.0}× {}",
            pages as f64 / e as f64,
            reach_phrase("second-level TLB", e, r, r.cpuid_l2_entries)
        ),
        (None, true) => r
            .cpuid_l2_entries
            .map(|c| format!(" (the second level's reach was not measured; CPUID claims {c} entries)"))
            .unwrap_or_default(),
        (None, false) => String::new(),
    }
}

/// Hot pages of the top mapping scattered over many more 2 MiB spans than
/// their bytes fill (counted with `--pages`): huge pages would map far
/// more memory than the hot set, one hot 4 KiB page or so in each.
fn scattered(p: &Phase, o: &Outcome) -> Option<String> {
    let (spans, hot) = p.top_spans?;
    let m = o.mappings.get(p.top_mapping?)?;
    let mapped = spans * (2 << 20);
    let count = match p.top_spans_max {
        Some(most) => format!("{}–{}", group_thousands(spans), group_thousands(most)),
        None => group_thousands(spans),
    };
    let (at_least, how) = if p.top_spans_max.is_some() { ("at least ", "bounded") } else { ("", "counted") };
    (m.kind.huge_pages_can_cover() && mapped > 4 * hot).then(|| {
        format!(
            "Its hot pages in the {} are scattered: {} of hot data lie in {count} spans of 2 MiB ({how} page by page), so huge pages would map {at_least}{} to cover them ({at_least}{:.0}×); gathering the hot data into fewer pages would cut its TLB misses without that memory.",
            mapping_name(m),
            Bytes(hot),
            Bytes(mapped),
            mapped as f64 / hot.max(1) as f64
        )
    })
}

/// A hot set that pages cached in the TLB could make read low: neither
/// clear_refs nor DAMON flushes the TLB when it clears an accessed bit, so
/// a page whose translation stays cached between samples is not seen
/// again. The bound is the largest TLB level known (measured, else
/// claimed) times the page size that mostly maps the top mapping; said
/// where it is a tenth of the hot set or more.
fn unseen_in_the_tlb(p: &Phase, o: &Outcome, r: &Reach) -> Option<String> {
    let (entries, which) = match (r.l2_entries, r.cpuid_l2_entries) {
        (Some(e), _) => (e, "measured"),
        (None, Some(e)) => (e, "claimed"),
        (None, None) => (r.entries, if r.measured { "measured" } else { "claimed" }),
    };
    let huge = top_mapping_mostly_huge(p, o);
    let page = if huge { 2u64 << 20 } else { 4096 };
    let bound = entries * page;
    (bound as f64 >= 0.1 * p.hot_bytes as f64).then(|| {
        format!(
            "Up to {} more may be hot than read: accessed bits are cleared without a TLB flush, so pages whose translations stay in the TLB between samples ({entries} entries {which}, of {} pages) are not seen again; a program whose CPU rarely switches to anything else (a quiet host with many CPUs) reads such a hot set low.",
            Bytes(bound),
            if huge { "2 MiB" } else { "4 KiB" }
        )
    })
}

/// Whether transparent huge pages held most of the top mapping's resident
/// bytes over the phase.
fn top_mapping_mostly_huge(p: &Phase, o: &Outcome) -> bool {
    let Some(top) = p.top_mapping else { return false };
    let (huge, rss) = o
        .intervals
        .iter()
        .filter(|i| i.t_s >= p.from_s && i.t_s <= p.to_s)
        .flat_map(|i| i.mappings.iter().filter(|m| m.mapping == top))
        .fold((0u64, 0u64), |(h, r), m| (h + m.anon_huge_bytes, r + m.rss_bytes));
    rss > 0 && 2 * huge > rss
}

/// "; 48× what the caches hold (32MiB, measured: …)" or "; within what
/// the caches hold (…)"; nothing where the caches' size is not known.
fn caches_phrase(hot: u64, r: &Reach) -> String {
    let (Some(bytes), Some(source)) = (r.caches_bytes, &r.caches_source) else { return String::new() };
    if hot <= bytes {
        format!("; within what the caches hold ({}, {source})", Bytes(bytes))
    } else if (hot as f64) < 1.5 * bytes as f64 {
        format!("; about what the caches hold ({}, {source})", Bytes(bytes))
    } else {
        format!("; {:.0}× what the caches hold ({}, {source})", hot as f64 / bytes.max(1) as f64, Bytes(bytes))
    }
}

/// "128–541 pages of 2 MiB" (bounds from the bytes), "769 pages of 2 MiB
/// (counted page by page)", or "8,190–8,192 pages of 2 MiB (bounded page
/// by page)".
pub fn huge_pages_phrase(p: &Phase) -> String {
    let (min, max) = (group_thousands(p.huge_pages_min), group_thousands(p.huge_pages_max));
    if p.huge_pages_counted && p.huge_pages_min < p.huge_pages_max {
        format!("{min}–{max} pages of 2 MiB (bounded page by page)")
    } else if p.huge_pages_counted {
        format!("{min} pages of 2 MiB (counted page by page)")
    } else if p.huge_pages_min == p.huge_pages_max {
        format!("{} pages of 2 MiB", group_thousands(p.huge_pages_min))
    } else {
        format!("{}–{} pages of 2 MiB", group_thousands(p.huge_pages_min), group_thousands(p.huge_pages_max))
    }
}

/// "the L1 DTLB's 64-entry reach (256KiB) measured here (CPUID claims
/// 72)", "… measured on host h", or "… CPUID claims (not measured)".
fn reach_phrase(level: &str, entries: u64, r: &Reach, cpuid: Option<u64>) -> String {
    let size = Bytes(entries * 4096);
    let place = r.measured_on.as_ref().map_or("here".to_string(), |h| format!("on {h}"));
    match (r.measured, cpuid) {
        (true, Some(c)) if c != entries => {
            format!("the {level}'s {entries}-entry reach ({size}) measured {place} (CPUID claims {c})")
        }
        (true, _) => format!("the {level}'s {entries}-entry reach ({size}) measured {place}"),
        (false, _) => format!("the {level}'s {entries}-entry reach ({size}) CPUID claims (not measured)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::pages::MappingKind;

    /// Initialisation at 2 GiB, then 256 MiB, a switch, then 512 MiB.
    #[test]
    fn phases_follow_the_hot_set_and_skip_the_switch() {
        let mib = |v: f64| v * 1048576.0;
        let hot = [2048.0, 1900.0, 256.0, 250.0, 262.0, 255.0, 400.0, 512.0, 500.0, 520.0].map(mib);
        assert_eq!(phase_bounds(&hot), vec![(0, 2), (2, 6), (7, 10)]);
        assert_eq!(phase_bounds(&[]), vec![]);
        assert_eq!(phase_bounds(&[mib(1.0)]), vec![(0, 1)]);
    }

    fn outcome(hot_mib: u64, kind: MappingKind) -> Outcome {
        let mapping = Mapping {
            start: 0x7f00_0000_0000,
            end: 0x7f00_0000_0000 + (2u64 << 30),
            kind,
            path: String::new(),
            process: None,
        };
        let intervals: Vec<Interval> = (1..=4)
            .map(|i| Interval {
                t_s: i as f64,
                mappings: vec![MappingSample {
                    mapping: 0,
                    rss_bytes: 2 << 30,
                    referenced_bytes: hot_mib << 20,
                    anon_huge_bytes: 0,
                    resident_spans: None,
                    hot_spans: None,
                    hot_spans_min: None,
                    written_bytes: None,
                }],
            })
            .collect();
        let mappings = vec![mapping];
        let mut o = Outcome {
            command: vec!["./app".into()],
            pid: None,
            interval_ms: 1000,
            adaptive: false,
            method: String::new(),
            written_not_measured: None,
            pages_method: None,
            exit: Some(Exit::Exited { code: 0 }),
            wall_s: 4.0,
            peak_rss_bytes: 2 << 30,
            phases: phases(&intervals, &mappings),
            mappings,
            intervals,
            reach: Some(Reach {
                entries: 64,
                l2_entries: None,
                source: "saved".into(),
                measured: true,
                measured_on: None,
                cpuid_entries: Some(72),
                cpuid_l2_entries: Some(3072),
                huge_same_reach: None,
                caches_bytes: Some(32 << 20),
                caches_source: Some("measured: where memory latency began".into()),
            }),
            verdict: vec![],
            valid: true,
        };
        o.verdict = verdict(&o);
        o
    }

    /// Page by page: a mapping whose every interval counted its hot spans
    /// gives that count; one with only resident spans is bounded by them;
    /// an interval whose pages were not read changes nothing.
    #[test]
    fn spans_bound_or_count_the_huge_pages() {
        let sample = |rss: u64, referenced: u64, resident: Option<u64>, hot: Option<u64>| MappingSample {
            mapping: 0,
            rss_bytes: rss,
            referenced_bytes: referenced,
            anon_huge_bytes: 0,
            resident_spans: resident,
            hot_spans: hot,
            hot_spans_min: None,
            written_bytes: None,
        };
        let mib = 1u64 << 20;
        let mut s = Spans::default();
        assert_eq!(s.huge_pages(8 * mib, 1 << 30), (4, 513, false), "bytes alone: 4 to one per span of the mapping");
        // Every resident page referenced: the sampler recorded the resident
        // spans as the hot ones.
        s.add(&sample(8 * mib, 8 * mib, Some(300), Some(300)));
        s.add(&sample(8 * mib, 8 * mib, None, None));
        assert_eq!(s.huge_pages(8 * mib, 1 << 30), (300, 300, true));
        // Idle tracking's count wins; a partly referenced interval without
        // it leaves only the resident bound.
        let mut s = Spans::default();
        s.add(&sample(64 * mib, 8 * mib, Some(40), Some(10)));
        assert_eq!(s.huge_pages(8 * mib, 1 << 30), (10, 10, true));
        s.add(&sample(64 * mib, 8 * mib, Some(40), None));
        assert_eq!(s.huge_pages(8 * mib, 1 << 30), (4, 40, false));
        // Accessed bits that missed a few pages bound an interval's hot
        // spans: the phase takes the medians of the fewest and the most.
        let mut s = Spans::default();
        s.add(&sample(32 * mib, 32 * mib, Some(8192), Some(8192)));
        s.add(&MappingSample { hot_spans_min: Some(8166), ..sample(32 * mib, 32 * mib - 26 * 4096, Some(8192), None) });
        s.add(&MappingSample { hot_spans_min: Some(8190), ..sample(32 * mib, 32 * mib - 2 * 4096, Some(8192), None) });
        assert_eq!(s.huge_pages(32 * mib, 16 << 30), (8190, 8192, true));
    }

    use crate::machine::reach;

    /// The verdict through the code a live run takes, with the reach each
    /// recorded machine gives (its saved `tlb` result, as `--machine-results`
    /// reads it, and its CPUID claim alone, as `--no-probe` does): the hot
    /// set is named at the size the document holds, beside that machine's
    /// measured entries or claim (or said unknown where CPUID hides the
    /// TLB), and scattered pages are said on every machine.
    #[test]
    fn the_verdict_holds_on_every_recorded_machine() {
        for (name, doc) in crate::test_support::recorded_suites() {
            let tlb = doc.outcome::<memperf_model::outcome::tlb::Outcome>().expect("a tlb result");
            let saved = reach::from_tlb(tlb, &doc.machine, "saved".into()).map(|r| reach::with_caches(r, &doc.machine));
            for r in [saved, reach::from_cpuid(&doc.machine)] {
                let mut o = outcome(511, MappingKind::Anonymous);
                o.intervals.iter_mut().for_each(|i| i.mappings[0].referenced_bytes = (511 << 20) + (4 << 10) * 100);
                o.phases = phases(&o.intervals, &o.mappings);
                o.phases[0].top_spans = Some((4096, 2 << 20));
                o.reach = r.clone();
                let v = verdict(&o);
                let hot = Bytes(o.phases[0].hot_bytes);
                assert!(v[0].starts_with(&format!("Hot set {hot} (")), "{name}: {}", v[0]);
                match &r {
                    Some(r) => {
                        let said = format!("× the L1 DTLB's {}-entry reach", r.entries);
                        assert!(v[0].contains(&said), "{name}: {}", v[0]);
                        assert_eq!(v[0].contains("measured here"), r.measured, "{name}: {}", v[0]);
                    }
                    None => assert!(v[0].contains("The TLB's reach is not known here"), "{name}: {}", v[0]),
                }
                assert!(v.iter().any(|l| l.contains("2MiB of hot data lie in 4,096 spans")), "{name}: {v:#?}");
            }
        }
    }

    /// A hot set the TLB could hold part of is said to read low by up to
    /// that reach: the claimed second level × 4 KiB, or × 2 MiB where
    /// transparent huge pages map the mapping; a hot set far larger than
    /// the reach gets no such line.
    #[test]
    fn a_hot_set_within_the_tlb_s_reach_is_said_to_read_low() {
        let line = |o: &Outcome| verdict(o).into_iter().find(|l| l.starts_with("Up to "));
        let small = outcome(8, MappingKind::Anonymous);
        let l = line(&small).expect("8 MiB against 3072 claimed entries");
        assert!(
            l.starts_with("Up to 12MiB more may be hot than read")
                && l.contains("3072 entries claimed, of 4 KiB pages"),
            "{l}"
        );
        let mut huge = outcome(4096, MappingKind::Anonymous);
        huge.intervals.iter_mut().for_each(|i| i.mappings[0].anon_huge_bytes = 2 << 30);
        let l = line(&huge).expect("4 GiB on huge pages against 3072 entries of 2 MiB");
        assert!(l.starts_with("Up to 6GiB more") && l.contains("of 2 MiB pages"), "{l}");
        assert!(line(&outcome(256, MappingKind::Anonymous)).is_none(), "12 MiB is under a tenth of 256 MiB");
    }

    /// Hot pages counted in far more 2 MiB spans than their bytes fill are
    /// said to be scattered whether or not the TLB's reach is known (a CPU
    /// whose CPUID hides its TLB, with no saved result, still gets it).
    #[test]
    fn scattered_hot_pages_are_said_with_or_without_a_reach() {
        for known in [true, false] {
            let mut o = outcome(2, MappingKind::Anonymous);
            o.phases[0].top_spans = Some((512, 2 << 20));
            if !known {
                o.reach = None;
            }
            let v = verdict(&o);
            let line = v.iter().find(|l| l.contains("are scattered")).unwrap_or_else(|| panic!("{known}: {v:#?}"));
            assert!(line.contains("2MiB of hot data lie in 512 spans of 2 MiB"), "{line}");
            assert!(line.contains("huge pages would map 1GiB to cover them (512×)"), "{line}");
            assert_eq!(v[0].contains("The TLB's reach is not known here"), !known, "{}", v[0]);
        }
    }

    #[test]
    fn the_verdict_sets_the_hot_set_beside_the_reach() {
        let o = outcome(256, MappingKind::Anonymous);
        let p = &o.phases[0];
        assert_eq!((p.hot_bytes, p.huge_pages_min, p.top_share), (256 << 20, 128, 1.0));
        assert!(
            o.verdict[0].starts_with("Hot set 256MiB (65,536 pages of 4 KiB) from 0.0 s to 4.0 s; 100% of it is in the anonymous mapping at 0x7f0000000000: 1024× the L1 DTLB's 64-entry reach (256KiB) measured here (CPUID claims 72) (the second level's reach was not measured; CPUID claims 3072 entries); 8× what the caches hold (32MiB, measured: where memory latency began); 128–"),
            "{}",
            o.verdict[0]
        );
        assert!(o.verdict[0].ends_with("Try `memperf hugepages -- ./app`."), "{}", o.verdict[0]);
        assert_eq!(o.verdict.len(), 1, "no caution without a same-reach control");
        assert!(outcome(256, MappingKind::File).verdict[0].contains("file-backed or shared"));
        // Another host's saved knee is said to be that host's.
        let mut elsewhere = outcome(256, MappingKind::Anonymous);
        elsewhere.reach.as_mut().unwrap().measured_on = Some("host lab7".into());
        assert!(verdict(&elsewhere)[0].contains("64-entry reach (256KiB) measured on host lab7 (CPUID claims 72)"));
        let mut small = outcome(0, MappingKind::Anonymous);
        small.intervals.iter_mut().for_each(|i| i.mappings[0].referenced_bytes = 64 * 4096);
        small.phases = phases(&small.intervals, &small.mappings);
        assert!(
            verdict(&small)[0].contains("it fits the L1 DTLB's 64-entry reach (256KiB) measured here (CPUID claims 72); within what the caches hold (32MiB"),
            "{}",
            verdict(&small)[0]
        );
        // CPUID's claim alone is said to be one, and a guest whose huge
        // pages step where small ones do is cautioned.
        let mut claimed = outcome(256, MappingKind::Anonymous);
        claimed.reach = Some(reach::from_cpuid_entries(72, Some(3072), "CPUID"));
        claimed.reach.as_mut().unwrap().huge_same_reach = Some(64);
        let v = verdict(&claimed);
        assert!(v[0].contains("910× the L1 DTLB's 72-entry reach (288KiB) CPUID claims (not measured) and 21× the second-level TLB's 3072-entry reach (12MiB) CPUID claims (not measured)"), "{}", v[0]);
        assert!(v[1].starts_with("Caution: `memperf tlb` found huge pages stepping at 64 pages here"), "{}", v[1]);
        let mut none = outcome(256, MappingKind::Anonymous);
        none.phases.clear();
        assert!(verdict(&none)[0]
            .starts_with("No hot set: the program ended before the first interval of 1000 ms (peak RSS 2GiB)"));
    }
}
