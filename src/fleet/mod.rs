//! `memperf merge`: many hosts' result documents into one fleet document
//! and report. Hosts are grouped by CPU (hosts with different CPUs are not
//! compared); inside a group every headline gets its spread, and a host is
//! an outlier by a robust rule ([`robust`]: median and MAD) or against a
//! model ([`model`]: Little's law with the fleet's concurrency), and
//! optionally checked against ReFrame-style references ([`reference`]).

pub mod model;
pub mod reference;
pub mod robust;
pub mod schema;
pub mod series;
pub mod text;

pub use memperf_model::fleet::*;

use crate::error::{Error, Result};
use crate::model::document::Document;
use crate::report::headlines;
use std::path::{Path, PathBuf};

/// The host as its document describes it.
pub fn host_of(doc: &Document, source: &Path) -> Host {
    let o = &doc.origin;
    let c = &doc.machine.cpu;
    // A document's strings were made safe as it was read (one line, no
    // control bytes, no markup in names); the path given is made so here.
    let safe = crate::report::sink::one_line;
    Host {
        id: match o.rank {
            Some(r) => format!("{}#{r}", safe(&o.hostname)),
            None => safe(&o.hostname),
        },
        hostname: safe(&o.hostname),
        rank: o.rank,
        run_id: safe(&o.run_id),
        started_utc: safe(&o.started_utc),
        cpu: format!(
            "{} {} (family {} model {}), {} logical CPUs",
            c.identity.vendor, c.identity.model_name, c.identity.family, c.identity.model, c.logical_cpus
        ),
        source: safe(&source.display().to_string()),
        figures: headlines::metrics(doc)
            .into_iter()
            .filter(|m| m.value.is_finite())
            .map(|m| Figure {
                key: m.key(),
                name: m.name,
                unit: m.unit.to_string(),
                value: m.value,
                higher_is_better: m.higher_is_better,
            })
            .collect(),
        model_inputs: model::inputs_of(doc),
    }
}

/// A host built in a test: `id` is also its name; figures are (name, unit,
/// value, higher is better).
#[cfg(test)]
pub fn test_host(id: &str, cpu: &str, figures: &[(&str, &str, f64, bool)]) -> Host {
    Host {
        id: id.into(),
        hostname: id.into(),
        rank: None,
        run_id: format!("{id}-1-1"),
        started_utc: "2026-11-24T00:00:00Z".into(),
        cpu: cpu.into(),
        source: format!("{id}/results.json"),
        figures: figures
            .iter()
            .map(|&(n, u, v, h)| Figure {
                key: n.into(),
                name: n.into(),
                unit: u.into(),
                value: v,
                higher_is_better: h,
            })
            .collect(),
        model_inputs: None,
    }
}

/// The fleet of `runs` (one per document): a host given more than once
/// is a series, and its newest run stands for it in the groups; grouped by
/// CPU, spreads, outliers, references.
pub fn analyse(runs: Vec<Host>, references: Option<&reference::References>) -> Fleet {
    let series = series::of(&runs);
    let mut hosts: Vec<Host> = Vec::new();
    for h in runs {
        match hosts.iter_mut().find(|o| o.id == h.id) {
            Some(o) if o.started_utc < h.started_utc => *o = h,
            Some(_) => {}
            None => hosts.push(h),
        }
    }
    let mut cpus: Vec<String> = hosts.iter().map(|h| h.cpu.clone()).collect();
    cpus.sort();
    cpus.dedup();
    let groups = cpus
        .into_iter()
        .map(|cpu| {
            let members: Vec<&Host> = hosts.iter().filter(|h| h.cpu == cpu).collect();
            let (spreads, mut outliers) = robust::judge(&members);
            let (verdict, model_outliers) = model::judge(&members);
            outliers.extend(model_outliers);
            Group { cpu, hosts: members.iter().map(|h| h.id.clone()).collect(), spreads, outliers, model: verdict }
        })
        .collect();
    Fleet {
        fleet_schema_version: FLEET_SCHEMA_VERSION,
        kind: schema::KIND.into(),
        build: crate::model::current_build(),
        reference: references.map(|r| reference::check(r, &hosts)),
        hosts,
        groups,
        series,
    }
}

/// Every result document under `paths`: a file is one document (or
/// journal); a folder holding results.json or a journal is one; any other
/// folder is searched for them. Everything is read before anything is
/// merged: one bad document stops the merge, naming its file.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Document)>> {
    let mut found = Vec::new();
    for p in paths {
        let before = found.len();
        collect(p, &mut found)?;
        if found.len() == before {
            return Err(Error::usage(format!(
                "{}: no memperf result document (results.json or journal.jsonl) in it: give result folders or files",
                p.display()
            )));
        }
    }
    found
        .into_iter()
        .map(|p| crate::model::journal::load(&p).map(|d| (p.clone(), d)).map_err(|e| named(&p, e)))
        .collect()
}

/// The error with the file's name in front, once.
fn named(p: &Path, e: Error) -> Error {
    let name = p.display().to_string();
    if e.message.contains(&name) {
        e
    } else {
        Error { message: format!("{name}: {}", e.message), ..e }
    }
}

/// How deep `merge` looks for results folders under the paths it is given.
const MAX_DEPTH: usize = 16;

fn collect(p: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    walk(p, out, &mut std::collections::HashSet::new(), 0)
}

/// Every results folder or document under `p`, each folder visited once
/// (a symlink loop ends where it closes) and at most [`MAX_DEPTH`] deep.
fn walk(
    p: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<(u64, u64)>,
    depth: usize,
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(p).map_err(|e| Error::usage(format!("{}: {e}", p.display())))?;
    if !meta.is_dir() {
        out.push(p.to_path_buf());
        return Ok(());
    }
    if !seen.insert((meta.dev(), meta.ino())) || depth > MAX_DEPTH {
        return Ok(());
    }
    if p.join("results.json").exists() || p.join(crate::model::journal::FILE).exists() {
        out.push(p.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
        .map_err(|e| Error::io(format!("cannot read {}", p.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|e| e.is_dir())
        .collect();
    entries.sort();
    for e in entries {
        walk(&e, out, seen, depth + 1)?;
    }
    Ok(())
}
