//! The terminal's screen of a suite run (`memperf run`): one line per
//! experiment as it ends, then, in this order, the key figures (each
//! experiment's first headline, and its second where that is the same
//! quantity at other threads or pages), how far the host moved, the verdicts, the warnings
//! folded to the three that matter most, and where the report is. Every
//! line fits the width it is given. The full tables are in the report, in
//! each experiment's own command and in `run --verbose`.

use super::headlines::{self, Headline};
use crate::model::document::{Document, ExperimentRecord, Status, Warning};
use crate::terminal::{shorten, wrap_line};

/// Warnings shown on the screen; the others are counted and left to the
/// report.
pub const WARNINGS_SHOWN: usize = 3;

/// The key figures: each experiment's first headline, and its second where
/// that is the same quantity (another thread count or page size: one
/// thread's read and all threads', 4 KiB pages and huge pages), as the
/// report's summary shows them.
pub fn key_figures(metrics: &[Headline]) -> Vec<&Headline> {
    let experiment = |m: &Headline| m.id.split('.').next().unwrap_or_default().to_string();
    let mut out: Vec<&Headline> = Vec::new();
    for m in metrics {
        let before: Vec<&&Headline> = out.iter().filter(|x| experiment(x) == experiment(m)).collect();
        let keep = match before.as_slice() {
            [] => true,
            [first] => first.id == m.id,
            _ => false,
        };
        if keep {
            out.push(m);
        }
    }
    out
}

/// One experiment as it ends: "bandwidth       41 s  2 verdicts   14.4 GB/s
/// DRAM read, 1 thread, …", cut to `width`.
pub fn experiment_line(doc: &Document, rec: &ExperimentRecord, width: usize) -> String {
    let took = crate::units::seconds(rec.duration_s);
    let what = match (&rec.outcome, rec.status) {
        (Some(o), Status::Completed) => {
            let r = super::outcome::of(o);
            let first = r.metrics(doc).into_iter().next().map(|m| figure(&m)).or_else(|| r.nothing_measured());
            let verdicts = match r.advice(doc).len() {
                0 => String::new(),
                1 => "1 verdict".into(),
                n => format!("{n} verdicts"),
            };
            let invalid = if rec.valid { "" } else { "INVALID (see the warnings)  " };
            format!("{verdicts:<10}  {invalid}{}", first.unwrap_or_default())
        }
        (_, status) => {
            let status = format!("{status:?}").to_lowercase();
            format!("{status}: {}", rec.skip_reason.as_deref().unwrap_or("no outcome"))
        }
    };
    shorten(format!("{:<15} {took:>7}  {what}", rec.name).trim_end(), width) + "\n"
}

/// "14.4 GB/s  DRAM read, 1 thread, 4k pages": the value first, so the
/// figures line up, then what it is.
pub(crate) fn figure(m: &Headline) -> String {
    let steady = m
        .steady
        .map_or(String::new(), |s| format!(" (steady {}/{}, moved {:.0}%)", s.to - s.from, s.of, s.moved * 100.0));
    format!("{}{steady}  {}", crate::units::readable(m.value, &m.unit.to_string()), m.name)
}

/// Everything after the experiments' lines: key figures, the host's move,
/// verdicts, warnings folded, and the report's path (where one was
/// written), each line fitted to `width`.
pub fn end(doc: &Document, report: Option<&std::path::Path>, width: usize) -> String {
    let mut out = String::new();
    let metrics = headlines::metrics(doc);
    let key = key_figures(&metrics);
    if !key.is_empty() {
        out.push_str("\nkey figures\n");
        // One line a figure, cut where it would wrap.
        for m in key {
            out.push_str(&(shorten(&format!("  {}", figure(m)), width) + "\n"));
        }
    }
    if let Some(moved) = host_moved(doc) {
        out.push('\n');
        out.push_str(&fitted(&moved, width, 2));
    }
    out.push_str(&verdicts(doc, width));
    out.push_str(&folded_warnings(doc, width));
    if let Some(report) = report {
        out.push('\n');
        out.push_str(&fitted(&format!("report: {}", report.display()), width, 2));
    }
    out
}

/// Lines a verdict takes on the screen at most: its subject, its call and
/// what to do; a longer one ends in "…" and the report has it whole.
pub const VERDICT_LINES: usize = 5;

/// The verdicts, each but for its basis and in at most [`VERDICT_LINES`];
/// those not resolved counted per experiment in one line (the report says
/// how many more repetitions each needs).
fn verdicts(doc: &Document, width: usize) -> String {
    let advice = headlines::advice_items(doc);
    if advice.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nverdicts (99% confidence, arms paired within every repetition; n in the report)\n");
    let mut open: Vec<(&str, usize)> = Vec::new();
    for a in &advice {
        if a.text.contains(": not resolved:") {
            match open.iter_mut().find(|(e, _)| *e == a.experiment) {
                Some((_, n)) => *n += 1,
                None => open.push((a.experiment, 1)),
            }
            continue;
        }
        let whole = fitted(&format!("  [{}] {}", a.experiment, without_basis(&a.text)), width, 4);
        out.push_str(&at_most_lines(&whole, VERDICT_LINES, width));
    }
    if !open.is_empty() {
        let counts: Vec<String> = open.iter().map(|(e, n)| format!("{n} in {e}")).collect();
        out.push_str(&fitted(
            &format!(
                "  not resolved: {} (the data hold both no change and a change; the report says how many more \
                 repetitions each needs)",
                counts.join(", ")
            ),
            width,
            4,
        ));
    }
    out
}

/// "host during the run: one thread's read moved 1.5%, every CPU's 4.5%,
/// …": how far the suite's reference points moved, in one sentence (the
/// report gives every point).
fn host_moved(doc: &Document) -> Option<String> {
    let d = doc.host_drift.as_ref()?;
    let moved = d.moved_most()?;
    let all = super::placement::every_cpu_moved(doc).map(|m| ("every CPU's read", Some(m.fraction)));
    let others: String = std::iter::once(all.unwrap_or(("every CPU's read", None)))
        .chain(d.side_moves())
        .filter_map(|(what, m)| m.map(|m| format!(", {what} {:.1}%", m * 100.0)))
        .collect();
    Some(format!(
        "host during the run: one thread's read moved {:.1}%{others}. Absolute figures carry the move; the verdicts, \
         paired within each repetition, do not.",
        moved * 100.0
    ))
}

/// A verdict's line without its basis ("(99% confidence, n = 12 over 3
/// mappings)"), which the screen's heading says once.
fn without_basis(text: &str) -> String {
    let Some(start) = text.find(" (99% confidence, n = ") else { return text.to_string() };
    match text[start..].find(')') {
        Some(end) => format!("{}{}", &text[..start], &text[start + end + 1..]),
        None => text.to_string(),
    }
}

/// `line` wrapped at words to `width`, continuation lines indented by
/// `indent`, with its newline.
fn fitted(line: &str, width: usize, indent: usize) -> String {
    wrap_line(line, width, indent) + "\n"
}

/// "warnings: 12, the 3 that matter most (9 more in the report):" and
/// those three, one code each (a code given several times is counted once
/// and says how often).
fn folded_warnings(doc: &Document, width: usize) -> String {
    let all: Vec<&Warning> =
        doc.warnings.iter().chain(doc.experiments.iter().flat_map(|e| e.warnings.iter())).collect();
    if all.is_empty() {
        return String::new();
    }
    let mut codes: Vec<(&Warning, usize)> = Vec::new();
    for w in &all {
        match codes.iter_mut().find(|(first, _)| first.code == w.code) {
            Some((_, n)) => *n += 1,
            None => codes.push((w, 1)),
        }
    }
    // Stable: among equal weights, the order the run met them in.
    codes.sort_by_key(|(w, _)| weight(&w.code));
    let shown: Vec<&(&Warning, usize)> = codes.iter().take(WARNINGS_SHOWN).collect();
    let said: usize = shown.iter().map(|(_, n)| n).sum();
    let rest = all.len() - said;
    let mut out = match rest {
        0 => format!("\nwarnings: {}\n", all.len()),
        _ => format!("\nwarnings: {}, the {} that matter most ({rest} more in the report)\n", all.len(), shown.len()),
    };
    for (w, n) in shown {
        let times = if *n > 1 { format!(" ({n} times)") } else { String::new() };
        let fix = w.fix.as_ref().map_or(String::new(), |f| format!(" (fix: {f})"));
        out.push_str(&at_most_lines(&fitted(&format!("  {}{times}{fix}", w.message), width, 4), 3, width));
    }
    out
}

/// The first `n` lines of `text`, the last of them ending in "…" where
/// lines were left out.
fn at_most_lines(text: &str, n: usize, width: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= n {
        return text.to_string();
    }
    let mut out: String = lines[..n - 1].iter().map(|l| format!("{l}\n")).collect();
    // Cut at a word where " …" would not fit after the whole line.
    let mut last = lines[n - 1].trim_end().to_string();
    let indent = last.len() - last.trim_start().len();
    while last.chars().count() + 2 > width {
        match last.rfind(' ').filter(|&i| i > indent) {
            Some(i) => last.truncate(i),
            None => break,
        }
    }
    out.push_str(&shorten(&format!("{last} …"), width));
    out.push('\n');
    out
}

/// How much a warning matters to the figures on the screen, most first:
/// a result that failed a check, then what changes a figure's meaning,
/// then what the run could not measure, then what the machine merely says
/// of itself.
pub fn weight(code: &str) -> u8 {
    match code {
        "checksum" | "page-init-limit-broken" | "debug-build" | "emulated" => 0,
        "working-set-in-cache"
        | "latency-max-below-4x-llc"
        | "host-moved"
        | "steal-time"
        | "clock-moved"
        | "noisy"
        | "cpu-migration"
        | "second-look-disagrees"
        | "thp-partial"
        | "timer-coarse"
        | "ranks-share-host" => 1,
        "no-hugepages"
        | "suite-no-hugetlb"
        | "thp-off"
        | "reserve-hugepages"
        | "skipped"
        | "sweep-cut"
        | "box-overrun"
        | "variant-unavailable"
        | "levels-not-measured"
        | "clock-not-measured" => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On every recorded machine the end of the screen fits 80 columns,
    /// names each key figure's quantity, says every verdict the report
    /// gives, shows at most three warnings with the rest counted, and ends
    /// with the report's path.
    #[test]
    fn the_end_of_a_run_fits_one_screen_on_every_recording() {
        for (name, doc) in crate::test_support::recorded_suites() {
            let text = end(&doc, Some(std::path::Path::new("/results/report.html")), 80);
            for l in text.lines() {
                assert!(l.chars().count() <= 80, "{name}: {l:?}");
            }
            assert!(text.ends_with("report: /results/report.html\n"), "{name}: {text}");
            let advice = headlines::advice_items(&doc);
            assert!(!text.contains("99% confidence, n ="), "{name}: the basis is said once");
            for a in advice.iter().filter(|a| !a.text.contains(": not resolved:")) {
                let first: String = a.text.split(' ').take(3).collect::<Vec<_>>().join(" ");
                assert!(text.contains(&first), "{name}: {first:?} ({}) missing from\n{text}", a.text);
            }
            let shown = text.lines().skip_while(|l| !l.starts_with("warnings:")).skip(1);
            let shown = shown.take_while(|l| l.starts_with("  ")).filter(|l| !l.starts_with("    ")).count();
            assert!(shown <= WARNINGS_SHOWN, "{name}: {text}");
            let metrics = headlines::metrics(&doc);
            assert!(key_figures(&metrics).len() <= 2 * doc.experiments.len());
            for m in key_figures(&metrics) {
                let start: String = m.name.chars().take(30).collect();
                assert!(text.contains(&start), "{name}: {} missing", m.name);
            }
            let open = advice.iter().filter(|a| a.text.contains(": not resolved:")).count();
            assert_eq!(open > 0, text.contains("  not resolved: "), "{name}: {text}");
            let open = advice.iter().filter(|a| a.text.contains(": not resolved:")).count();
            assert_eq!(open > 0, text.contains("  not resolved: "), "{name}: {text}");
            assert!(text.lines().count() <= 70, "{name}: {} lines\n{text}", text.lines().count());
            let verdict_lines = text.lines().skip_while(|l| !l.starts_with("verdicts (")).skip(1);
            let mut longest = 0;
            for l in verdict_lines.take_while(|l| l.starts_with("  ")) {
                longest = if l.starts_with("    ") { longest + 1 } else { 1 };
                assert!(longest <= VERDICT_LINES, "{name}: a verdict over {VERDICT_LINES} lines\n{text}");
            }
        }
    }

    /// A record that measured nothing (numa on one node in the recordings)
    /// says why on its line, where a figure would be.
    #[test]
    fn a_line_without_a_figure_says_why() {
        let mut seen = 0;
        for (name, doc) in crate::test_support::recorded_suites() {
            let Some(rec) = doc.experiments.iter().find(|r| r.name == "numa") else { continue };
            let line = experiment_line(&doc, rec, 200);
            let numa = rec.outcome.as_ref().and_then(|o| <&crate::model::outcome::numa::Outcome>::try_from(o).ok());
            if let Some(why) = numa.and_then(|o| o.no_matrix.as_deref()) {
                assert!(line.contains(why), "{name}: {line}");
                seen += 1;
            }
        }
        assert!(seen > 0, "no recording of one node");
    }

    /// A verdict whose advice runs long (working-set's, with what a whole
    /// program pays) keeps its subject, call and first advice on the screen
    /// and ends in "…"; a short one is whole.
    #[test]
    fn a_long_verdict_takes_at_most_five_lines() {
        let long = "  [working-set] Huge pages (thp) for the sample application (252MiB of arrays, 100% huge, against \
            4 KiB arrays on 12 pages per 2 MiB block): faster ×1.179 [×1.125, ×1.289], by at least 5%: give large, \
            randomly accessed arrays huge pages. That gain is the loop's: a whole program also pays for its pages at \
            its start, and one started right after a run on 4 KiB pages can be slower on huge pages in every such \
            round. Time the whole program with `memperf hugepages -- PROGRAM`.";
        let cut = at_most_lines(&fitted(long, 80, 4), VERDICT_LINES, 80);
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(lines.len(), VERDICT_LINES, "{cut}");
        assert!(lines[0].starts_with("  [working-set] Huge pages (thp)") && lines[4].ends_with(" …"), "{cut}");
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{cut}");
        let short = fitted("  [calls] inline: faster ×7.158 [×6.882, ×8.000]", 80, 4);
        assert_eq!(at_most_lines(&short, VERDICT_LINES, 80), short);
    }

    #[test]
    fn a_verdicts_basis_is_left_to_the_heading() {
        let t = "Huge pages: faster ×1.300 [×1.2, ×1.4], by at least 5% (99% confidence, n = 12 over 3 mappings): use them.";
        assert_eq!(without_basis(t), "Huge pages: faster ×1.300 [×1.2, ×1.4], by at least 5%: use them.");
        assert_eq!(without_basis("no basis here"), "no basis here");
    }

    /// A code given several times is one line that says how often; the
    /// heaviest codes come first, the rest are counted.
    #[test]
    fn warnings_fold_by_code_and_weight() {
        let (_, mut doc) = crate::test_support::recorded_suites().into_iter().next().expect("a recording");
        doc.warnings.clear();
        doc.experiments.iter_mut().for_each(|e| e.warnings.clear());
        let w = |code: &str| Warning { code: code.into(), message: format!("{code} said"), fix: None };
        doc.warnings = vec![w("no-pmu"), w("noisy"), w("noisy"), w("skipped"), w("checksum"), w("thp-off")];
        let text = folded_warnings(&doc, 80);
        assert_eq!(
            text,
            "\nwarnings: 6, the 3 that matter most (2 more in the report)\n  checksum said\n  noisy said (2 \
             times)\n  skipped said\n"
        );
        doc.warnings.truncate(1);
        assert_eq!(folded_warnings(&doc, 80), "\nwarnings: 1\n  no-pmu said\n");
    }
}
