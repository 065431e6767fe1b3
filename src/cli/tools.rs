//! The commands that measure nothing: `merge` (runs into a fleet or a
//! series), `man`, `info --record` and `cleanup`.

use crate::error::{Error, Result};

/// `memperf merge`: every document read (and the references) before
/// anything is written; then fleet.json and fleet.txt into the folder, the
/// report on stdout, and exit 3 when a host fails a reference.
pub fn merge(a: &crate::cli::MergeArgs) -> Result<u8> {
    use crate::fleet;
    use crate::report::sink;
    let references = a.reference.as_deref().map(fleet::reference::load).transpose()?;
    if a.output.exists() && !a.output.is_dir() {
        return Err(Error::usage(format!("-o {}: exists and is not a folder", a.output.display())));
    }
    let (fleet_json, fleet_txt) = (a.output.join("fleet.json"), a.output.join("fleet.txt"));
    let mut outputs: Vec<(&str, &std::path::Path)> = vec![("-o", &fleet_json), ("-o", &fleet_txt)];
    outputs.extend(a.openmetrics.as_deref().map(|p| ("--openmetrics", p)));
    outputs.extend(a.csv.as_deref().map(|p| ("--csv", p)));
    let mut inputs: Vec<&std::path::Path> = a.paths.iter().map(|p| p.as_path()).collect();
    inputs.extend(a.reference.as_deref());
    if a.output.is_dir() {
        sink::check_all(&outputs, &inputs)?;
    } else {
        sink::check_all(&outputs[2..], &inputs)?;
    }
    let docs = fleet::load_all(&a.paths)?;
    let hosts: Vec<fleet::Host> = docs.iter().map(|(p, d)| fleet::host_of(d, p)).collect();
    // Runs of one host are a series; one run given twice is a mistake.
    for (i, h) in hosts.iter().enumerate() {
        if let Some(other) = hosts[..i].iter().find(|o| o.id == h.id && o.run_id == h.run_id) {
            return Err(Error::usage(format!(
                "{} and {} are the same run ({} of {}): give each run once",
                other.source, h.source, h.run_id, h.id
            )));
        }
    }
    let f = fleet::analyse(hosts, references.as_ref());
    let text = fleet::text::render(&f);
    std::fs::create_dir_all(&a.output).map_err(|e| Error::io(format!("cannot create {}", a.output.display()), e))?;
    let json = serde_json::to_string_pretty(&f).expect("a fleet serialises");
    sink::write(&a.output.join("fleet.json"), json.as_bytes())?;
    sink::write(&a.output.join("fleet.txt"), text.as_bytes())?;
    if let Some(p) = &a.openmetrics {
        let all: Vec<&crate::model::document::Document> = docs.iter().map(|(_, d)| d).collect();
        sink::write(p, crate::report::openmetrics::render_all(&all).as_bytes())?;
    }
    if let Some(p) = &a.csv {
        sink::write(p, fleet::text::csv(&f).as_bytes())?;
    }
    sink::stdout(crate::report::table::for_terminal(1, || fleet::text::render(&f)).as_bytes())?;
    Ok(if f.failed() { 3 } else { 0 })
}

/// `memperf man`: memperf.1 on stdout, or every page written atomically
/// into DIR.
pub fn man(dir: Option<&std::path::Path>) -> Result<u8> {
    let pages = crate::cli::man_pages();
    match dir {
        None => crate::report::sink::stdout(&pages[0].1)?,
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| Error::io(format!("creating {}", d.display()), e))?;
            for (name, roff) in &pages {
                crate::report::sink::write(&d.join(name), roff)?;
            }
        }
    }
    Ok(0)
}

/// `memperf cleanup`: what killed runs left reserved goes back to the pools.
pub fn cleanup() -> Result<u8> {
    use crate::memory::reserve::CleanupAction;
    let given = crate::memory::reserve::cleanup()?;
    let mut text = String::new();
    for r in &given {
        text.push_str(&match r {
            CleanupAction::GaveBack { pid, page, pages } => {
                format!("gave back {pages} {page} page(s) reserved by pid {pid}, which is gone\n")
            }
            CleanupAction::Unreadable { path, removed: true } => format!(
                "removed the unreadable record {} of a run that is gone: what it added cannot be known (check nr_hugepages)\n",
                path.display()
            ),
            CleanupAction::Unreadable { path, removed: false } => {
                format!("kept the unreadable record {}: its run may still be alive\n", path.display())
            }
        });
    }
    if given.is_empty() {
        text.push_str("nothing to give back: no reservation of a dead memperf run\n");
    }
    crate::report::sink::stdout(text.as_bytes()).map(|_| 0)
}
