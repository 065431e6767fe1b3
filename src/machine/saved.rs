//! What results saved on this host say of it: the page-walk cost and TLB
//! knees `memperf tlb` measured here, found under the results folders (or
//! in a file named), each result judged this machine's only when its host
//! name and CPU match; with the cache line and the TLB reach CPUID claims,
//! the figures `stat` and `working-set` set counts beside.

use crate::machine::Fingerprint;
use crate::model::document::Document;
use crate::model::outcome::stat::MachineFigures;
use crate::model::outcome::tlb;
use crate::units::Bytes;
use std::path::{Path, PathBuf};

/// Where the suite writes results (see `cli::default_results_dir`).
pub const RESULTS_DIR: &str = "memperf-results";

/// Where saved results are looked for: `$MEMPERF_RESULTS` alone where it
/// is set, else `./memperf-results` (where `memperf run` writes) and
/// `$HOME/memperf-results` (a run made from the home folder), so a
/// program's folder need not be the one memperf ran in.
pub fn results_roots() -> Vec<PathBuf> {
    roots_from(std::env::var_os("MEMPERF_RESULTS").as_deref(), std::env::var_os("HOME").as_deref())
}

fn roots_from(env: Option<&std::ffi::OsStr>, home: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    if let Some(e) = env.filter(|e| !e.is_empty()) {
        return vec![PathBuf::from(e)];
    }
    let mut roots = vec![PathBuf::from(RESULTS_DIR)];
    if let Some(h) = home.filter(|h| !h.is_empty()) {
        let in_home = Path::new(h).join(RESULTS_DIR);
        let same = |a: &Path, b: &Path| a.canonicalize().ok().is_some_and(|x| b.canonicalize().ok() == Some(x));
        if !same(&roots[0], &in_home) {
            roots.push(in_home);
        }
    }
    roots
}

/// The roots as a person reads them: `./memperf-results or ~/…`.
pub fn roots_text(roots: &[PathBuf]) -> String {
    roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(" or ")
}

/// Whether `doc` was measured on `machine`: the same host name and the
/// same CPU (guests are often all called "vm"; a result of another CPU
/// under this name is another machine's).
pub fn same_machine(doc: &Document, machine: &Fingerprint) -> bool {
    doc.origin.hostname == machine.hostname && doc.machine.cpu.identity == machine.cpu.identity
}

/// "host vm" when only the name differs, else "host vm (CPU, family F model M)".
pub fn other_machine(doc: &Document, machine: &Fingerprint) -> String {
    let id = &doc.machine.cpu.identity;
    if id == &machine.cpu.identity {
        format!("host {}", doc.origin.hostname)
    } else {
        format!(
            "host {} ({} {}, family {} model {})",
            doc.origin.hostname, id.vendor, id.model_name, id.family, id.model
        )
    }
}

/// Figures from `from` (a result file or folder), or else from the newest
/// result of this host under the [`results_roots`] that has a walk cost.
pub fn gather(machine: &Fingerprint, from: Option<&Path>) -> crate::error::Result<MachineFigures> {
    let mut f = MachineFigures {
        line_bytes: machine.line_bytes(),
        tlb_reach_4k_bytes: machine.dtlb_entries(2, Bytes(4096)).map(|e| e as u64 * 4096),
        tlb_reach_2m_bytes: machine.dtlb_entries(2, Bytes(2 << 20)).map(|e| e as u64 * (2 << 20)),
        ..Default::default()
    };
    match from {
        Some(path) => {
            let doc = crate::model::journal::load(path)?;
            match walk_ns(&doc) {
                Some(w) => {
                    f.walk_ns = Some(crate::units::Nanos(w));
                    f.measured_reach_4k_bytes = measured_reach_4k(&doc);
                    f.source = Some(path.display().to_string());
                }
                None => {
                    f.walk_not_measurable = walk_not_measurable(&doc);
                    f.notes.push(format!(
                        "{} has no page-walk cost (no tlb experiment, or its control was not valid there)",
                        path.display()
                    ))
                }
            }
            if !same_machine(&doc, machine) {
                f.notes.push(format!(
                    "{} is a result of {}, not of this machine ({})",
                    path.display(),
                    other_machine(&doc, machine),
                    machine.hostname
                ));
            }
        }
        None => {
            let roots = results_roots();
            let saved = scan(&roots, machine);
            match saved.walk {
                Some((path, w, reach)) => {
                    f.walk_ns = Some(crate::units::Nanos(w));
                    f.measured_reach_4k_bytes = reach;
                    f.source = Some(path.display().to_string());
                }
                None => {
                    f.walk_not_measurable = saved.not_measurable;
                    f.notes.push(match &f.walk_not_measurable {
                        Some(why) => format!("no page-walk cost can be measured on this host: {why}"),
                        None => format!(
                            "no page-walk cost of this host under {}: run `memperf tlb -o DIR` (or `memperf run`) once, or pass --machine-results (or set MEMPERF_RESULTS)",
                            roots_text(&roots)
                        ),
                    })
                }
            }
        }
    }
    Ok(f)
}

/// The walk cost a document measured, if its control was valid and its
/// interval lies above zero (a cost not told apart from none is no cost
/// to predict with).
pub fn walk_ns(doc: &Document) -> Option<f64> {
    doc.outcome::<tlb::Outcome>()?.walk_ns.as_ref().filter(|r| r.low > 0.0).map(|r| r.estimate)
}

/// Why no walk cost can be measured on the host of `doc`: its `tlb` found
/// huge pages stepping where 4 KiB pages do (a guest backed by small host
/// pages), so there is no walk-free control to subtract.
pub fn walk_not_measurable(doc: &Document) -> Option<String> {
    match doc.outcome::<tlb::Outcome>()?.control {
        tlb::Control::SameReach { policy, pages } => Some(format!(
            "`memperf tlb` found {policy} pages using small TLB entries here (they step at {pages} pages, as 4 KiB pages do), so it has no walk-free control"
        )),
        _ => None,
    }
}

/// The newest document of `machine` under `roots` that has a tlb outcome,
/// and its folder.
pub fn newest_tlb(roots: &[PathBuf], machine: &Fingerprint) -> Option<(PathBuf, Document)> {
    newest_of(roots, machine).find(|(_, doc)| doc.outcome::<tlb::Outcome>().is_some())
}

/// The documents of `machine`'s results folders under `roots`, newest
/// first across them (the 20 newest folders whose name starts with its
/// host name, and whose document is of its CPU too: [`same_machine`]).
fn newest_of<'a>(roots: &[PathBuf], machine: &'a Fingerprint) -> impl Iterator<Item = (PathBuf, Document)> + 'a {
    let host = machine.hostname.as_str();
    let mut dirs: Vec<(std::time::SystemTime, PathBuf)> = roots
        .iter()
        .flat_map(std::fs::read_dir)
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(host))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
    dirs.into_iter().take(20).filter_map(move |(_, dir)| {
        let doc = crate::model::journal::load(&dir).ok()?;
        same_machine(&doc, machine).then_some((dir, doc))
    })
}

/// The largest attributed 4 KiB-page reach a document measured.
pub fn measured_reach_4k(doc: &Document) -> Option<u64> {
    doc.outcome::<tlb::Outcome>()?
        .reaches
        .iter()
        .filter(|r| r.pages == crate::memory::PagePolicy::Small && !r.confounded_with_cache)
        .filter_map(|r| r.measured_reach_bytes.map(|b| b.0))
        .max()
}

/// What the saved results of a host hold for `stat`, read in one pass.
struct Saved {
    /// The newest folder whose document has a walk cost, that cost and
    /// the 4 KiB reach it measured.
    walk: Option<(PathBuf, f64, Option<u64>)>,
    /// Why no walk cost can be measured, from the newest tlb outcome.
    not_measurable: Option<String>,
}

/// The host's results under `roots`, newest first, each document loaded
/// once: up to the newest with a walk cost, noting on the way why the
/// newest tlb outcome could not measure one.
fn scan(roots: &[PathBuf], machine: &Fingerprint) -> Saved {
    let mut saved = Saved { walk: None, not_measurable: None };
    let mut seen_tlb = false;
    for (dir, doc) in newest_of(roots, machine) {
        if let Some(w) = walk_ns(&doc) {
            saved.walk = Some((dir, w, measured_reach_4k(&doc)));
            break;
        }
        if !seen_tlb && doc.outcome::<tlb::Outcome>().is_some() {
            seen_tlb = true;
            saved.not_measurable = walk_not_measurable(&doc);
        }
    }
    saved
}

/// The newest results folder of `host` whose document has a walk cost
/// (and the 4 KiB reach it measured).
#[cfg(test)]
fn newest_with_walk_cost(roots: &[PathBuf], machine: &Fingerprint) -> Option<(PathBuf, f64, Option<u64>)> {
    scan(roots, machine).walk
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results folders of a host, newest first: the walk cost comes from
    /// the newest that has one, the tlb verdict from the newest with a tlb
    /// outcome, and another host's folders (even under a name that starts
    /// like this one's) are never read.
    #[test]
    fn the_newest_folder_of_this_host_is_read() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let roots = [root.path().to_path_buf(), home.path().to_path_buf()];
        let rec = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines/intel-xeon-m167-kvm-2vcpu/run-quick.json");
        let machine = crate::model::journal::load(&rec).unwrap().machine;
        let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
        let host = doc["origin"]["hostname"].as_str().unwrap().to_string();
        let put_in = |base: &Path, name: &str, doc: &serde_json::Value| {
            let dir = base.join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("results.json"), doc.to_string()).unwrap();
            // Distinct modification times, in the order written.
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let put = |name: &str, doc: &serde_json::Value| put_in(root.path(), name, doc);
        put(&format!("{host}-1"), &doc);
        assert_eq!(newest_with_walk_cost(&roots, &machine), None, "the recording has no walk cost");
        let (_, tlb) = newest_tlb(&roots, &machine).expect("its tlb outcome");
        assert!(walk_not_measurable(&tlb).is_some());
        let t = doc["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "tlb").unwrap();
        t["outcome"]["walk_ns"] =
            serde_json::json!({"n": 5, "median": 30.0, "low": 28.0, "high": 32.0, "confidence": 0.94});
        put(&format!("{host}-2"), &doc);
        let mut other = doc.clone();
        other["origin"]["hostname"] = serde_json::json!(format!("{host}x"));
        let t = other["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "tlb").unwrap();
        t["outcome"]["walk_ns"]["median"] = serde_json::json!(99.0);
        put(&format!("{host}x-3"), &other);
        // Same name, another CPU: another machine, never read.
        let mut other_cpu = doc.clone();
        other_cpu["machine"]["cpu"]["family"] = serde_json::json!(25);
        let t = other_cpu["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "tlb").unwrap();
        t["outcome"]["walk_ns"]["median"] = serde_json::json!(77.0);
        put(&format!("{host}-4"), &other_cpu);
        let (dir, w, _) = newest_with_walk_cost(&roots, &machine).unwrap();
        assert_eq!((dir.file_name().unwrap().to_string_lossy().into_owned(), w), (format!("{host}-2"), 30.0));
        // A newer run made from the home folder is found from anywhere.
        let t = doc["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "tlb").unwrap();
        t["outcome"]["walk_ns"]["median"] = serde_json::json!(31.0);
        put_in(home.path(), &format!("{host}-5"), &doc);
        let (dir, w, _) = newest_with_walk_cost(&roots, &machine).unwrap();
        assert_eq!((dir.parent(), w), (Some(home.path()), 31.0));
    }

    /// `$MEMPERF_RESULTS` alone where set; else here and the home folder's.
    #[test]
    fn results_are_looked_for_here_and_at_home() {
        use std::ffi::OsStr;
        let here = PathBuf::from(RESULTS_DIR);
        assert_eq!(roots_from(Some(OsStr::new("/srv/r")), Some(OsStr::new("/home/u"))), [PathBuf::from("/srv/r")]);
        assert_eq!(
            roots_from(None, Some(OsStr::new("/home/u"))),
            [here.clone(), PathBuf::from("/home/u/memperf-results")]
        );
        assert_eq!(roots_from(Some(OsStr::new("")), None), [here]);
    }
}
