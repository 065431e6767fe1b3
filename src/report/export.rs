//! Writing a document out: the table to stdout, warnings to stderr, the
//! JSON document, and a results folder (results.json, the SVG plots and
//! report.html).
//! Every file is written atomically.

use super::headlines::Metric;
use super::sink;
use super::{html, plots, text};
use crate::error::{Error, Result};
use crate::experiments::plan::Output;
use crate::model::document::Document;
use std::path::Path;

/// Checks every output path before anything is measured, so a bad path
/// costs the user no measuring time.
pub fn check_outputs(out: &Output) -> Result<()> {
    if let Some(path) = &out.json {
        sink::check(path)?;
    }
    if let Some(dir) = &out.dir {
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.is_dir() => sink::check(&dir.join("results.json")).map(|_| ())?,
            Ok(_) => {
                return Err(Error::usage(format!("-o {}: exists and is not a folder", dir.display())));
            }
            Err(_) => {
                let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                if !parent.exists() {
                    // create_dir_all makes it; its first existing ancestor must be writable.
                    let mut a = parent;
                    while !a.exists() {
                        a = a.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                    }
                    sink::check(&a.join(".memperf-probe")).map(|_| ())?;
                } else {
                    sink::check(&parent.join(".memperf-probe")).map(|_| ())?;
                }
            }
        }
    }
    Ok(())
}

pub fn export(doc: &Document, out: &Output) -> Result<()> {
    eprint!("{}", sink::terminal_safe(&text::warnings(doc)));
    if out.table {
        sink::stdout(text::render(doc).as_bytes())?;
    }
    if let Some(path) = &out.json {
        sink::write(path, doc.to_json().as_bytes())?;
    }
    if let Some(dir) = &out.dir {
        write_folder(doc, dir)?;
        if out.table {
            sink::stdout(format!("results written to {}\n", dir.display()).as_bytes())?;
        }
    }
    Ok(())
}

/// results.json, every plot and report.html, in `dir` (created if needed).
pub fn write_folder(doc: &Document, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    sink::write(&dir.join("results.json"), doc.to_json().as_bytes())?;
    let (plots, failed) = plots::all(doc);
    for f in failed {
        eprintln!("memperf: warning: {}", sink::terminal_safe(&f));
    }
    for p in &plots {
        sink::write(&dir.join(&p.file_name), p.svg.as_bytes())?;
    }
    sink::write(&dir.join("report.html"), html::render(doc, &plots).as_bytes())
}

/// `memperf report PATH`: re-renders the plots and report.html (and a
/// results.json) from a document or a journal alone.
pub fn rebuild(path: &Path, out: Option<&Path>) -> Result<()> {
    let doc = super::journal::load(path)?;
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None if path.is_dir() => path.to_path_buf(),
        None => path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf(),
    };
    write_folder(&doc, &dir)?;
    sink::stdout(format!("report written to {}\n", dir.join("report.html").display()).as_bytes())
}

/// `memperf compare A B`: headline metrics side by side, B over A, and
/// whether each difference is beyond the noise of the raw samples.
pub fn compare(a: &Path, b: &Path) -> Result<()> {
    let (da, db) = (super::journal::load(a)?, super::journal::load(b)?);
    let (ma, mb) = (super::headlines::metrics(&da), super::headlines::metrics(&db));
    let common = ma.iter().any(|x| mb.iter().any(|y| y.name == x.name));
    if !common {
        return Err(Error::usage(format!(
            "{} and {} have no headline metric in common: nothing to compare",
            a.display(),
            b.display()
        )));
    }
    sink::stdout(compare_metrics(&da, &db, &ma, &mb).as_bytes())
}

pub fn compare_text(a: &Document, b: &Document) -> String {
    let (ma, mb) = (super::headlines::metrics(a), super::headlines::metrics(b));
    compare_metrics(a, b, &ma, &mb)
}

/// The comparison table of metrics already taken from both documents.
fn compare_metrics(a: &Document, b: &Document, ma: &[Metric], mb: &[Metric]) -> String {
    use crate::analysis::mann_whitney::{test, Verdict};
    let mut t = super::table::Table::new(["metric", "unit", "A", "B", "B/A", "verdict"]);
    let mut dropped = Vec::new();
    for x in ma {
        let Some(y) = mb.iter().find(|y| y.name == x.name) else {
            dropped.push(format!("{} (only in A)", x.name));
            continue;
        };
        if !(x.value > 0.0 && y.value > 0.0 && x.value.is_finite() && y.value.is_finite()) {
            dropped.push(format!("{} (a value is zero, negative or not a number: no ratio)", x.name));
            continue;
        }
        let ratio = y.value / x.value;
        let better = if x.higher_is_better { ratio > 1.0 } else { ratio < 1.0 };
        let verdict = match test(&x.samples, &y.samples, 0.05) {
            Verdict::Differ { p } => {
                format!("B {}, beyond the noise (p = {p:.3})", if better { "better" } else { "worse" })
            }
            Verdict::Same { p } => format!("within the noise (p = {p:.2})"),
            Verdict::TooFewSamples { smallest_possible_p } => {
                format!("too few samples to tell (best possible p = {smallest_possible_p:.2})")
            }
        };
        t.row([
            x.name.clone(),
            x.unit.clone(),
            format!("{:.2}", x.value),
            format!("{:.2}", y.value),
            format!("×{ratio:.3}"),
            verdict.to_string(),
        ]);
    }
    let mut out = format!(
        "A: {} ({}, run {})\nB: {} ({}, run {})\n\n",
        a.origin.hostname,
        a.origin.started_utc,
        a.origin.run_id,
        b.origin.hostname,
        b.origin.started_utc,
        b.origin.run_id
    );
    dropped
        .extend(mb.iter().filter(|y| !ma.iter().any(|x| x.name == y.name)).map(|y| format!("{} (only in B)", y.name)));
    if t.is_empty() {
        out.push_str("no headline metric is in both documents\n");
    } else {
        out.push_str(&t.render());
        out.push_str(
            "\n\"beyond the noise\": a two-sided Mann-Whitney test (5%, exact up to 40 samples) on the raw samples, i.e. beyond the spread\n\
             within each run. Drift of a shared host between two runs is not in that spread: compare\n\
             runs made close in time, or several runs of each.\n",
        );
    }
    for d in &dropped {
        out.push_str(&format!("left out: {d}\n"));
    }
    out
}
