//! Writing a document out: the table to stdout, warnings to stderr, the
//! JSON document, and a results folder (results.json, the SVG plots and
//! report.html).
//! Every file is written atomically.

use crate::error::{Error, Result};
use crate::model::document::Document;
use crate::report::{html, plots, sink, table, text};
use std::path::{Path, PathBuf};

/// Where a command's document goes.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub json: Option<PathBuf>,
    pub dir: Option<PathBuf>,
    /// Print tables to stdout (off when the JSON goes to stdout).
    pub table: bool,
    /// The headlines in OpenMetrics text.
    pub openmetrics: Option<PathBuf>,
    /// Every table as one tidy CSV.
    pub csv: Option<PathBuf>,
}

impl Output {
    /// The outputs of a command around a program (`hugepages`, `wss`): the
    /// table on stdout unless the JSON or OpenMetrics text goes there.
    pub fn around_program(json: Option<&Path>, dir: Option<&Path>, openmetrics: Option<&Path>) -> Output {
        let stdout = Some(Path::new("-"));
        Output {
            json: json.map(Path::to_path_buf),
            dir: dir.map(Path::to_path_buf),
            table: json != stdout && openmetrics != stdout,
            openmetrics: openmetrics.map(Path::to_path_buf),
            csv: None,
        }
    }
}

/// Checks every output path before anything is measured, so a bad path
/// costs the user no measuring time: all of them together (see
/// [`sink::check_all`]), `inputs` being what the command reads, and a
/// results folder that is new or empty of results (a second run into one
/// would replace the first's results.json without a word).
pub fn check_outputs(out: &Output, inputs: &[&Path]) -> Result<()> {
    let (results, report) = match &out.dir {
        Some(dir) => (Some(dir.join("results.json")), Some(dir.join("report.html"))),
        None => (None, None),
    };
    let mut all: Vec<(&str, &Path)> = Vec::new();
    all.extend(out.json.as_deref().map(|p| ("--json", p)));
    all.extend(out.openmetrics.as_deref().map(|p| ("--openmetrics", p)));
    all.extend(out.csv.as_deref().map(|p| ("--csv", p)));
    if let Some(dir) = &out.dir {
        // A file output that is the folder itself, or inside a folder still
        // to be made, would collide with it after the run.
        for (flag, p) in &all {
            if p == dir || (!dir.is_dir() && p.starts_with(dir)) {
                return Err(Error::usage(format!(
                    "{flag} {} and -o {} name the same place: give the file another name",
                    sink::one_line(&p.display().to_string()),
                    sink::one_line(&dir.display().to_string())
                )));
            }
        }
        check_results_folder(dir)?;
        // A folder still to be made holds nothing another output could name.
        if dir.is_dir() {
            all.extend(results.as_deref().map(|p| ("-o", p)));
            all.extend(report.as_deref().map(|p| ("-o", p)));
        }
    }
    sink::check_all(&all, inputs)
}

/// `-o DIR`: a folder (or a path where one can be made) that holds no
/// results of another run yet.
fn check_results_folder(dir: &Path) -> Result<()> {
    let shown = sink::one_line(&dir.display().to_string());
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {
            if let Some(held) = ["results.json", crate::model::journal::FILE].iter().find(|f| dir.join(f).exists()) {
                return Err(Error {
                    kind: crate::error::ErrorKind::Usage,
                    message: format!("-o {shown} already holds a run ({held} exists): its results would be replaced"),
                    fix: Some("give each run its own -o folder (or leave -o out for a new one)".into()),
                });
            }
            Ok(())
        }
        Ok(_) => Err(Error::usage(format!("-o {shown}: exists and is not a folder"))),
        Err(_) => {
            // create_dir_all makes it; its first existing ancestor must be writable.
            let mut a = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            while !a.exists() {
                a = a.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            }
            sink::check(&a.join(".memperf-probe")).map(|_| ())
        }
    }
}

pub fn export(doc: &Document, out: &Output) -> Result<()> {
    eprint!("{}", sink::terminal_safe(&table::for_terminal(2, || text::warnings(doc))));
    write_outputs(doc, out)
}

/// Every output of `out` written, the warnings left to the caller (a
/// suite's screen folds them).
pub fn write_outputs(doc: &Document, out: &Output) -> Result<()> {
    if out.table {
        sink::stdout(table::for_terminal(1, || text::render(doc)).as_bytes())?;
    }
    if let Some(path) = &out.json {
        sink::write(path, doc.to_json().as_bytes())?;
    }
    if let Some(path) = &out.openmetrics {
        sink::write(path, crate::report::openmetrics::render(doc).as_bytes())?;
    }
    if let Some(path) = &out.csv {
        sink::write(path, csv(doc).as_bytes())?;
    }
    if let Some(dir) = &out.dir {
        write_folder(doc, dir)?;
        if out.table {
            sink::stdout(format!("results written to {}\n", dir.display()).as_bytes())?;
        }
    }
    Ok(())
}

/// The document as CSV: a lone outcome's own CSV where it has one (stat,
/// wss), else the tidy CSV of every table.
pub fn csv(doc: &Document) -> String {
    let outcomes = crate::report::outcome::outcomes(doc);
    match outcomes.as_slice() {
        [one] => crate::report::outcome::of(one).csv(doc),
        _ => None,
    }
    .unwrap_or_else(|| crate::report::tidy::document(doc))
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

/// Where `memperf report PATH` writes without `-o`: a results folder's own
/// report in that folder; any other document into a folder of its own
/// beside it (`regions.json` → `regions-report/`), so that no
/// `results.json` lands next to an unrelated file. A re-analysis never
/// overwrites the document it read: it goes into `reanalysed/` (or
/// `<name>-reanalysed/`).
pub fn default_report_dir(path: &Path, reanalyze: bool) -> PathBuf {
    let results_folder = |d: &Path| if reanalyze { d.join("reanalysed") } else { d.to_path_buf() };
    if path.is_dir() {
        return results_folder(path);
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name == "results.json" || name == "journal.jsonl" {
        return results_folder(parent);
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "document".into());
    parent.join(format!("{stem}-{}", if reanalyze { "reanalysed" } else { "report" }))
}

/// `memperf report PATH`: re-renders the plots and report.html (and a
/// results.json) from a document or a journal alone; with `reanalyze`,
/// after drawing every claim again from the raw samples.
pub fn rebuild(path: &Path, out: Option<&Path>, reanalyze: bool) -> Result<()> {
    let mut doc = crate::model::journal::load(path)?;
    let changed = if reanalyze { crate::experiments::reanalyze::document(&mut doc) } else { Vec::new() };
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => default_report_dir(path, reanalyze),
    };
    write_folder(&doc, &dir)?;
    let mut said = String::new();
    if reanalyze {
        said.push_str(&match changed.len() {
            0 => "reanalysed: every claim came out as the document has it\n".to_string(),
            _ => changed.iter().map(|c| format!("reanalysed: {}\n", sink::one_line(c))).collect(),
        });
    }
    // The verdicts the document's data resolve, by today's engine.
    said.push_str(&crate::report::text::advice_at_end(&doc));
    said.push_str(&format!("report written to {}\n", dir.join("report.html").display()));
    sink::stdout(said.as_bytes())
}

/// The documents of one side: each path a document, a results folder,
/// or a folder of results folders (each of its subfolders holding a
/// document, in name order).
fn runs_of(paths: &[PathBuf]) -> Result<Vec<Document>> {
    let mut docs = Vec::new();
    for p in paths {
        let runs = runs_in(p);
        if runs.is_empty() {
            docs.push(crate::model::journal::load(p)?);
        }
        for r in runs {
            docs.push(crate::model::journal::load(&r)?);
        }
    }
    if docs.is_empty() {
        return Err(Error::usage("compare needs a document on each side (fix: memperf compare A B)"));
    }
    Ok(docs)
}

/// The results folders inside `dir`, where it holds no document itself.
fn runs_in(dir: &Path) -> Vec<PathBuf> {
    let holds = |d: &Path| d.join("results.json").is_file() || d.join(crate::model::journal::FILE).is_file();
    if !dir.is_dir() || holds(dir) {
        return Vec::new();
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|it| it.flatten().map(|e| e.path()).filter(|p| p.is_dir() && holds(p)).collect())
        .unwrap_or_default();
    runs.sort();
    runs
}

/// `memperf compare A B` or `compare A1 A2 … --against B1 B2 …`: every
/// headline figure of the two sides judged (see `report::compare`); with
/// `json`, the comparison as JSON too; with `html_out`, a page with the
/// table and the first runs' curves on the same axes. `fail` is
/// `--fail-on-regression`'s threshold and `--fail-on-unjudged`. Returns
/// the exit status: 3 when a figure got worse by at least the threshold;
/// else, with `--fail-on-unjudged`, 4 when one not resolved is worse by
/// more than it in its estimate.
pub fn compare(
    a: &[PathBuf],
    b: &[PathBuf],
    json: Option<&Path>,
    html_out: Option<&Path>,
    (threshold_pct, fail_on_unjudged): (Option<f64>, bool),
) -> Result<u8> {
    if json == Some(Path::new("-")) && html_out == Some(Path::new("-")) {
        return Err(Error::usage("--json - and --html - both ask for stdout: send one of them to a file"));
    }
    let outputs: Vec<(&str, &Path)> =
        json.map(|p| ("--json", p)).into_iter().chain(html_out.map(|p| ("--html", p))).collect();
    let inputs: Vec<&Path> = a.iter().chain(b).map(PathBuf::as_path).collect();
    sink::check_all(&outputs, &inputs)?;
    let (da, db) = (runs_of(a)?, runs_of(b)?);
    let c = crate::report::compare::compare(&da, &db, threshold_pct);
    let names =
        |p: &[PathBuf]| sink::one_line(&p.iter().map(|x| x.display().to_string()).collect::<Vec<_>>().join(" "));
    if c.rows.is_empty() && !c.left_out.is_empty() && c.left_out.iter().all(|l| !l.contains("only in")) {
        return Err(Error::usage(format!(
            "{} and {}: no headline could be compared ({})",
            names(a),
            names(b),
            sink::one_line(&c.left_out.join("; "))
        )));
    }
    if c.rows.is_empty() {
        return Err(Error::usage(format!(
            "{} and {} have no headline metric in common: nothing to compare",
            names(a),
            names(b)
        )));
    }
    if let Some(j) = json {
        let body = serde_json::to_string_pretty(&c).expect("a comparison serialises");
        sink::write(j, format!("{body}\n").as_bytes())?;
    }
    if let Some(h) = html_out {
        let overlays = plots::overlaid(&plots::all(&da[0]).0, &plots::all(&db[0]).0);
        sink::write(h, html::compare_page(&c, &overlays).as_bytes())?;
    }
    if json != Some(Path::new("-")) && html_out != Some(Path::new("-")) {
        sink::stdout(crate::report::compare::text(&c).as_bytes())?;
    }
    Ok(if c.regressions().next().is_some() {
        3
    } else if fail_on_unjudged && c.unresolved_worse().next().is_some() {
        4
    } else {
        0
    })
}
