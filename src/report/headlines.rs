//! The figures a reader wants first, derived from the document alone: the
//! headline metrics (with their raw samples, for `compare`) and the advice
//! they imply (for the top of the report).

use crate::analysis::plateau::Plateau;
use crate::memory::PagePolicy;
use crate::model::document::Document;
use crate::model::outcome::bandwidth::Effect;
use crate::model::outcome::{
    bandwidth, c2c, calls, context, hugepages, latency, loaded_latency, page_init, prefetch_fault, regions, stat, tlb,
    working_set,
};
use serde::{Deserialize, Serialize};

/// One headline metric and the raw samples behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub samples: Vec<f64>,
    pub higher_is_better: bool,
}

fn metric(name: String, unit: &str, samples: Vec<f64>, value: f64, higher: bool) -> Metric {
    Metric { name, unit: unit.into(), value, samples, higher_is_better: higher }
}

/// Every headline metric of the document.
pub fn metrics(doc: &Document) -> Vec<Metric> {
    let mut out = Vec::new();
    if let Some(bw) = doc.outcome::<bandwidth::Outcome>() {
        for h in &bw.headlines {
            let simd = bw
                .results
                .iter()
                .find(|r| r.variant.pages == h.pages && r.variant.threads == h.threads && r.variant.label() == "simd");
            let samples = simd
                .map(|r| r.samples_s.iter().map(|s| r.bytes_per_sample as f64 / s / 1e9).collect())
                .unwrap_or_default();
            out.push(metric(
                format!("bandwidth {} pages, {} thread(s), simd", h.pages, h.threads),
                "GB/s",
                samples,
                h.simd_bytes_per_s / 1e9,
                true,
            ));
        }
        for r in bw.results.iter().filter(|r| r.variant.kernel.writes()) {
            out.push(metric(
                format!("bandwidth {} pages, {} thread(s), {}", r.variant.pages, r.variant.threads, r.variant.kernel),
                "GB/s",
                r.samples_s.iter().map(|s| r.bytes_per_sample as f64 / s / 1e9).collect(),
                r.bytes_per_s.median / 1e9,
                true,
            ));
        }
    }
    if let Some(lat) = doc.outcome::<latency::Outcome>() {
        let mut pols: Vec<PagePolicy> = lat.points.iter().map(|p| p.pages).collect();
        pols.sort();
        pols.dedup();
        for pol in pols {
            if let Some(p) =
                lat.points.iter().filter(|p| p.pages == pol && p.order == "random").max_by_key(|p| p.size_bytes)
            {
                out.push(metric(
                    format!("latency {} pages at {}", pol, p.size_bytes),
                    "ns",
                    p.sample_latency_ns.clone(),
                    p.latency_ns.median,
                    false,
                ));
            }
        }
    }
    if let Some(t) = doc.outcome::<tlb::Outcome>() {
        if let Some(w) = &t.walk_ns {
            let samples: Vec<f64> = t.walk_costs.iter().map(|c| c.ns_median).collect();
            out.push(metric("page walk beyond the 4 KiB reach".into(), "ns", samples, w.median, false));
        }
    }
    if let Some(pi) = doc.outcome::<page_init::Outcome>() {
        if let Some(b) = pi.results.iter().min_by(|a, b| a.ns_per_page.median.total_cmp(&b.ns_per_page.median)) {
            let samples = b.samples_s.iter().map(|s| s * 1e9 / pi.pages as f64).collect();
            out.push(metric(
                format!("page-init best ({})", b.variant),
                "ns/page",
                samples,
                b.ns_per_page.median,
                false,
            ));
        }
    }
    out.extend(calls_metrics(doc));
    out.extend(context_metrics(doc));
    out.extend(stat_metrics(doc));
    out.extend(working_set_metrics(doc));
    out.extend(hugepages_metrics(doc));
    out.extend(c2c_metrics(doc));
    out.extend(loaded_latency_metrics(doc));
    out.extend(region_metrics(doc));
    out
}

/// The idle and the saturated ends of the loaded-latency curve.
fn loaded_latency_metrics(doc: &Document) -> Vec<Metric> {
    let Some(o) = doc.outcome::<loaded_latency::Outcome>() else { return Vec::new() };
    let mut out = Vec::new();
    for q in &o.points {
        let name = match q.delay_ns {
            None => "loaded-latency idle latency".to_string(),
            Some(0) => "loaded-latency saturated latency".to_string(),
            Some(_) => continue,
        };
        out.push(metric(name, "ns", q.samples_latency_ns.clone(), q.latency_ns.median, false));
        if q.delay_ns == Some(0) {
            let bus = q.loader_bus_bytes_per_s / q.loader_bytes_per_s.median.max(f64::MIN_POSITIVE);
            let samples = q.samples_loader_bytes_per_s.iter().map(|b| (b * bus + q.chaser_bytes_per_s) / 1e9).collect();
            out.push(metric(
                "loaded-latency saturated bandwidth".into(),
                "GB/s",
                samples,
                q.total_bytes_per_s / 1e9,
                true,
            ));
        }
    }
    out
}

/// One run of a program: its times, memory and the metrics computed.
fn stat_metrics(doc: &Document) -> Vec<Metric> {
    let Some(s) = doc.outcome::<stat::Outcome>() else { return Vec::new() };
    let one = |name: &str, unit: &str, v: f64, higher: bool| metric(format!("stat {name}"), unit, vec![v], v, higher);
    let mut out = vec![
        one("wall time", "s", s.wall_s, false),
        one("CPU time", "s", s.usage.user_s + s.usage.system_s, false),
        one("peak RSS", "MiB", s.usage.max_rss_bytes as f64 / (1 << 20) as f64, false),
    ];
    if let Some((faults, _)) = s.event("page-faults").and_then(|e| e.status.value()) {
        out.push(one("page faults", "count", faults, false));
    }
    for (name, higher) in [("CPI", false), ("IPC", true), ("estimated time in page walks", false)] {
        if let Some(m) = s.metric(name) {
            if let Some(v) = m.value() {
                out.push(one(name, &m.unit, v, higher));
            }
        }
    }
    out
}

/// ns per row of the sample application on each page policy.
fn working_set_metrics(doc: &Document) -> Vec<Metric> {
    let Some(w) = doc.outcome::<working_set::Outcome>() else { return Vec::new() };
    w.results
        .iter()
        .map(|r| {
            let samples = r.samples_s.iter().map(|s| s * 1e9 / r.rows_per_sample as f64).collect();
            metric(format!("working-set {} pages", r.pages), "ns/row", samples, r.ns_per_row.median, false)
        })
        .collect()
}

/// Core-to-core one-way ns per topology relation and handoff (samples:
/// the pairs' medians).
fn c2c_metrics(doc: &Document) -> Vec<Metric> {
    let Some(c) = doc.outcome::<c2c::Outcome>() else { return Vec::new() };
    c.groups
        .iter()
        .map(|g| {
            let samples = c
                .pairs
                .iter()
                .filter(|p| p.relation == g.relation && p.handoff == g.handoff)
                .flat_map(|p| p.samples_ns.iter().copied())
                .collect();
            metric(format!("c2c {}, {}", g.relation.name(), g.handoff.name()), "ns", samples, g.median_ns, false)
        })
        .collect()
}

/// Wall time of each arm of the A/B.
fn hugepages_metrics(doc: &Document) -> Vec<Metric> {
    let Some(h) = doc.outcome::<hugepages::Outcome>() else { return Vec::new() };
    h.summaries
        .iter()
        .filter_map(|s| {
            let samples: Vec<f64> = h.runs.iter().filter(|r| r.arm == s.arm && r.ok()).map(|r| r.wall_s).collect();
            let m = s.wall_s.as_ref()?.median;
            Some(metric(format!("hugepages {} wall time", s.arm.name()), "s", samples, m, false))
        })
        .collect()
}

/// Wall time per entry of each region.
fn region_metrics(doc: &Document) -> Vec<Metric> {
    let Some(r) = doc.outcome::<regions::Outcome>() else { return Vec::new() };
    r.regions
        .iter()
        .filter(|g| g.entries > 0)
        .map(|g| {
            let v = g.wall_ns as f64 / g.entries as f64;
            metric(format!("region {} per entry", g.name), "ns", vec![v], v, false)
        })
        .collect()
}

/// ns per call of every linkage at the deepest depth, per thread count.
fn calls_metrics(doc: &Document) -> Vec<Metric> {
    let Some(c) = doc.outcome::<calls::Outcome>() else { return Vec::new() };
    let Some(&deepest) = c.depths.iter().max() else { return Vec::new() };
    c.points
        .iter()
        .filter(|p| p.depth == deepest)
        .map(|p| {
            let samples = p.samples_s.iter().map(|s| s * 1e9 / (p.chains_per_sample * p.depth) as f64).collect();
            metric(
                format!("call {} at depth {}, {} thread(s)", p.linkage, p.depth, p.threads),
                "ns/call",
                samples,
                p.ns_per_call.median,
                false,
            )
        })
        .collect()
}

/// ns per round trip of every context save, per thread count.
fn context_metrics(doc: &Document) -> Vec<Metric> {
    let Some(c) = doc.outcome::<context::Outcome>() else { return Vec::new() };
    c.saves
        .iter()
        .map(|s| {
            let samples = s.samples_s.iter().map(|t| t * 1e9 / s.ops_per_sample as f64).collect();
            metric(format!("context {}, {} thread(s)", s.op, s.threads), "ns/op", samples, s.ns_per_op.median, false)
        })
        .collect()
}

/// Advice from `calls`: where the return stack runs out, and what the
/// cheapest change saves at the deepest depth.
fn calls_advice(c: &calls::Outcome) -> Vec<String> {
    use crate::kernels::calls::Linkage;
    use calls::StepUp;
    let mut out = Vec::new();
    let direct = c.steps.iter().find(|s| s.linkage == Linkage::Direct && s.threads == 1);
    if let Some(StepUp::Clear {
        before_depth,
        after_depth,
        marginal_before_ns,
        marginal_after_ns,
        ratio,
        attributed_to_return_stack: true,
    }) = direct.map(|s| &s.step)
    {
        out.push(format!(
            "Call chains deeper than {before_depth}..{after_depth} frames outrun the return-stack predictor here: each further call costs {marginal_after_ns:.1} ns instead of {marginal_before_ns:.1} ns (×{:.2} [×{:.2}, ×{:.2}]); inline or flatten hot recursive paths deeper than that.",
            ratio.median, ratio.low, ratio.high
        ));
    }
    for s in c.savings.iter().filter(|s| s.speedup.direction() == crate::timing::schedule::Direction::Above) {
        if matches!((s.from, s.to), (Linkage::Plt, Linkage::Got) | (Linkage::Direct, Linkage::Inlined)) {
            out.push(format!(
                "{}: saves {:.2} ns per call at depth {} ({} → {}, ×{:.2} [×{:.2}, ×{:.2}]).",
                s.change,
                s.ns_per_call_from - s.ns_per_call_to,
                s.depth,
                s.from,
                s.to,
                s.speedup.median,
                s.speedup.low,
                s.speedup.high
            ));
        }
    }
    out
}

/// Advice from `context`: the Ruby lesson, when the heavy save measurably costs.
fn context_advice(c: &context::Outcome) -> Vec<String> {
    let Some(r) = &c.lesson.removing_heavy_save else { return Vec::new() };
    if r.direction() != crate::timing::schedule::Direction::Above {
        return Vec::new();
    }
    let kernel: Vec<&str> = c
        .saves
        .iter()
        .filter(|s| s.threads == 1 && matches!(s.kernel, context::KernelEntry::Yes { .. }))
        .map(|s| s.op.name())
        .collect();
    vec![format!(
        "A protected call that saves the signal mask (sigsetjmp(env, 1)) where __builtin_setjmp would do makes this interpreter ×{:.1} [×{:.1}, ×{:.1}] slower; saves that enter the kernel here: {}.",
        r.median,
        r.low,
        r.high,
        if kernel.is_empty() { "none resolved".to_string() } else { kernel.join(", ") }
    )]
}

/// Whether huge pages cut random-access latency, and from which working
/// set on: the smallest size from which every larger one has its whole
/// interval below 1 (never a single lucky point).
fn huge_page_latency_advice(lat: &latency::Outcome) -> Vec<String> {
    use crate::timing::schedule::Direction;
    let mut pairs: Vec<(PagePolicy, PagePolicy)> = lat.ratios.iter().map(|r| (r.a, r.b)).collect();
    pairs.sort();
    pairs.dedup();
    let mut out = Vec::new();
    for (a, b) in pairs {
        let mut rs: Vec<&latency::PolicyRatio> = lat.ratios.iter().filter(|r| r.a == a && r.b == b).collect();
        rs.sort_by_key(|r| r.size_bytes);
        let Some(last) = rs.last() else { continue };
        let r = super::text::ratio_text(&last.ratio);
        let below_from = rs
            .iter()
            .rposition(|x| x.ratio.direction() != Direction::Below)
            .map_or(Some(0), |i| (i + 1 < rs.len()).then_some(i + 1))
            .map(|i| rs[i].size_bytes);
        out.push(match (last.ratio.direction(), below_from) {
            (Direction::Below, Some(from)) => format!(
                "Huge pages ({b}) cut random-access latency against {a} by {:.0}% at {}, {r}; the gain holds beyond the noise from a working set of {from} on.",
                (1.0 - last.ratio.median) * 100.0,
                last.size_bytes
            ),
            (Direction::TooFewPairs, _) => continue,
            (Direction::Above, _) => format!(
                "Huge pages ({b}) are slower than {a} for random access at {}, {r}: check their coverage.",
                last.size_bytes
            ),
            _ => format!(
                "Huge pages ({b}) change random-access latency against {a} by no more than the noise at {}, {r}.",
                last.size_bytes
            ),
        });
    }
    out
}

/// Advice sentences for the top of the report.
pub fn advice(doc: &Document) -> Vec<String> {
    advice_items(doc).into_iter().map(|a| a.text).collect()
}

/// One line of advice and the experiment whose figures it rests on (the
/// report links it to that evidence).
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub experiment: &'static str,
    pub text: String,
    /// Text that the line of the experiment's table this advice rests on
    /// contains (the report links to that line), where there is one.
    pub row: Option<String>,
}

/// The table line behind a line of advice: a piece of text that line holds.
fn row_key(experiment: &str, text: &str) -> Option<String> {
    let between = |open: &str, close: char| -> Option<String> {
        let at = text.find(open)? + open.len();
        Some(text[at..].split(close).next()?.to_string())
    };
    match experiment {
        "bandwidth" => between("Software prefetch (", ')').map(|hint| format!("prefetch {hint} at D = ")),
        "calls" if text.starts_with("Call chains deeper") => Some("direct   1 thread(s): steps up".into()),
        "calls" => text.split(": saves").next().map(|change| format!("  {change}: ")),
        "context" => Some("removing the needless heavy save".into()),
        "page-init" => Some("best:".into()),
        "prefetch-fault" if text.starts_with("Prefetches that miss the TLB") => {
            Some("prefetches that miss the TLB".into())
        }
        "tlb" => Some(text.trim_end_matches('.').to_lowercase().chars().take(40).collect()),
        _ => None,
    }
}

/// Every line of advice, tagged with the experiment it rests on.
pub fn advice_items(doc: &Document) -> Vec<Advice> {
    let parts: [(&'static str, Vec<String>); 10] = [
        ("bandwidth", bandwidth_advice(doc)),
        ("latency", latency_advice(doc)),
        ("tlb", tlb_advice(doc)),
        ("prefetch-fault", prefetch_fault_advice(doc)),
        ("page-init", page_init_advice(doc)),
        ("calls", doc.outcome::<calls::Outcome>().map(calls_advice).unwrap_or_default()),
        ("context", doc.outcome::<context::Outcome>().map(context_advice).unwrap_or_default()),
        ("stat", doc.outcome::<stat::Outcome>().map(|s| s.advice.clone()).unwrap_or_default()),
        ("working-set", doc.outcome::<working_set::Outcome>().map(|w| w.advice.clone()).unwrap_or_default()),
        ("hugepages", doc.outcome::<hugepages::Outcome>().map(|h| h.advice.clone()).unwrap_or_default()),
    ];
    parts
        .into_iter()
        .flat_map(|(experiment, lines)| {
            lines.into_iter().map(move |text| Advice { experiment, row: row_key(experiment, &text), text })
        })
        .collect()
}

fn bandwidth_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(bw) = doc.outcome::<bandwidth::Outcome>() {
        for e in bw.prefetch_effects.iter().filter(|e| e.threads == 1) {
            let plateau = bw
                .plateaus
                .iter()
                .find(|p| p.pages == e.pages && p.threads == e.threads && p.hint == e.hint)
                .map(|p| &p.plateau);
            let r = super::text::ratio_text(&e.confirmed);
            out.push(match (e.verdict, plateau) {
                // Advise no distance from a gain less than a line ahead.
                (Effect::Helps, _) if e.within_a_line() => format!(
                    "A prefetch ({}) of the line being read (D = {}) read faster than plain simd on {} pages, {r}: \
                     the instruction, not prefetching ahead, made this difference; it is no reason to prefetch.",
                    e.hint, e.distance_elements, e.pages
                ),
                (Effect::Helps, Some(Plateau::Found { start, end, .. })) => format!(
                    "Software prefetch ({}) helps streaming reads on {} pages, {r}: prefetch {start}..{end} elements ({}..{} bytes) ahead.",
                    e.hint, e.pages, start * 8, end * 8
                ),
                (Effect::Helps, _) => format!(
                    "Software prefetch ({}) helps streaming reads on {} pages, {r} at D = {}, but the distance curve has no plateau: the best distance is not well defined.",
                    e.hint, e.pages, e.distance_elements
                ),
                (Effect::Hurts, _) => format!(
                    "Software prefetch ({}) slows streaming reads on {} pages, {r}: leave streaming to the hardware prefetchers.",
                    e.hint, e.pages
                ),
                (Effect::WithinNoise, _) => format!(
                    "Software prefetch ({}) makes no difference beyond the noise to streaming reads on {} pages, {r}: the hardware prefetchers already keep up.",
                    e.hint, e.pages
                ),
                (Effect::TooFewPairs, _) => continue,
            });
        }
    }
    out
}

fn latency_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(lat) = doc.outcome::<latency::Outcome>() {
        out.extend(huge_page_latency_advice(lat));
    }
    for c in super::concurrency::concurrency(doc).iter().filter(|c| c.threads == 1) {
        out.push(format!("Effective concurrency of one core on {} pages: {} (Little's law).", c.pages, c.formula));
    }
    out
}

fn tlb_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = doc.outcome::<tlb::Outcome>() {
        for a in &t.advice {
            let mut s = a.clone();
            if let Some(c) = s.get_mut(0..1) {
                c.make_ascii_uppercase();
            }
            out.push(format!("{s}."));
        }
    }
    out
}

fn prefetch_fault_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(pf) = doc.outcome::<prefetch_fault::Outcome>() {
        use prefetch_fault::Finding;
        let mut traps: Vec<&str> = pf
            .verdicts
            .iter()
            .filter(|v| matches!(v.finding, Finding::Traps { .. }))
            .map(|v| v.instruction.as_str())
            .collect();
        traps.dedup();
        let free: Vec<&str> = pf
            .verdicts
            .iter()
            .filter(|v| matches!(v.finding, Finding::NoCostBeyondNoise { .. }))
            .map(|v| v.instruction.as_str())
            .collect();
        if !traps.is_empty() {
            out.push(format!(
                "Prefetches of bad addresses trap here ({}): guard them with a NULL test.",
                traps.join(", ")
            ));
        } else if pf.verdicts.iter().all(|v| matches!(v.finding, Finding::NoCostBeyondNoise { .. })) && !free.is_empty()
        {
            out.push("No prefetch instruction traps or costs more than the noise on a bad address here: prefetching NULL at the end of a list is harmless.".into());
        }
        let mut v = pf.tlb_miss_verdict.describe();
        if let Some(c) = v.get_mut(0..1) {
            c.make_ascii_uppercase();
        }
        out.push(format!("{v}."));
    }
    out
}

fn page_init_advice(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(pi) = doc.outcome::<page_init::Outcome>() {
        if let Some(b) = pi.results.iter().min_by(|a, b| a.ns_per_page.median.total_cmp(&b.ns_per_page.median)) {
            let over = b
                .speedup_vs_locked
                .map(|r| format!("×{:.2} [×{:.2}, ×{:.2}] over locked", r.median, r.low, r.high))
                .unwrap_or_else(|| "the locked reference".into());
            out.push(if pi.limit_broken {
                format!(
                    "Page-descriptor initialisation: {} reaches {:.2} ns/page, {over}; the store limit was beaten, so no fraction of it is given.",
                    pi.best, b.ns_per_page.median
                )
            } else {
                format!(
                    "Page-descriptor initialisation: {} reaches {:.2} ns/page, {over}, {:.0}% of the store-bandwidth limit.",
                    pi.best,
                    b.ns_per_page.median,
                    b.fraction_of_store_limit * 100.0
                )
            });
        }
    }
    out
}
