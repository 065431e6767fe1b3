//! The TLB reach a program's hot set is set beside (`wss`, `stat --wss`):
//! the knees `memperf tlb` measured on this host (from a saved result, or a
//! quick probe run before the program starts), with CPUID's claim shown
//! beside them; CPUID's claim alone only where nothing was measured, and
//! said so.

use super::saved as figures;
use crate::error::{Error, Result};
use crate::machine::Fingerprint;
use crate::memory::PagePolicy;
use crate::model::outcome::tlb;
use crate::model::outcome::wss::Reach;
use crate::units::Bytes;
use std::path::Path;

/// The 4 KiB-page reach a `tlb` outcome measured: its first-level knee and
/// the next (each stable on both halves of the samples and not a possible
/// cache step), and whether huge pages stepped at the same count (a guest
/// whose host backs it with small pages, where huge pages do not enlarge
/// the reach).
pub fn from_tlb(o: &tlb::Outcome, m: &Fingerprint, source: String) -> Option<Reach> {
    let mut knees: Vec<u64> = o
        .reaches
        .iter()
        .filter(|r| r.pages == PagePolicy::Small && !r.confounded_with_cache)
        .filter(|r| !matches!(r.second_look, Some(crate::analysis::second_look::SecondLook::Unstable { .. })))
        .map(|r| r.measured_entries)
        .collect();
    knees.sort_unstable();
    let entries = *knees.first()?;
    let huge_same_reach = match o.control {
        tlb::Control::SameReach { pages, .. } => Some(pages),
        _ => None,
    };
    Some(Reach {
        entries,
        l2_entries: knees.get(1).copied(),
        source,
        measured: true,
        measured_on: None,
        cpuid_entries: m.dtlb_entries(1, Bytes(4096)).map(u64::from),
        cpuid_l2_entries: m.dtlb_entries(2, Bytes(4096)).map(u64::from),
        huge_same_reach,
        caches_bytes: None,
        caches_source: None,
    })
}

/// The reach with where memory begins on `m` (the machine its figures
/// came from) beside it: the measured start of the far level, else a
/// plausible claim of the last-level cache; never a default.
pub fn with_caches(mut r: Reach, m: &Fingerprint) -> Reach {
    use crate::machine::LlcSource;
    let measured = m.measured_levels.as_ref().and_then(|l| l.found.far_from);
    let (bytes, said) = match (measured, m.sizing_llc()) {
        // The claim beside the measurement, plausible or not: a reader
        // sees where they disagree.
        (Some(far), _) => (
            Some(far.0),
            match m.llc_total_bytes() {
                Some(c) => format!("measured: where memory latency began; CPUID/sysfs claim a last-level cache of {c}"),
                None => "measured: where memory latency began".to_string(),
            },
        ),
        (None, (claim, LlcSource::Claimed)) => {
            (Some(claim.0), "the last-level cache claimed by CPUID/sysfs".to_string())
        }
        _ => (None, String::new()),
    };
    r.caches_bytes = bytes;
    r.caches_source = bytes.map(|_| said);
    r
}

/// CPUID's claim, when nothing was measured.
pub fn from_cpuid(m: &Fingerprint) -> Option<Reach> {
    let l1 = m.dtlb_entries(1, Bytes(4096))?;
    let r = from_cpuid_entries(l1 as u64, m.dtlb_entries(2, Bytes(4096)).map(u64::from), &m.tlb_source);
    Some(with_caches(r, m))
}

/// A reach of CPUID's claimed entries (from `tlb_source`).
pub fn from_cpuid_entries(l1: u64, l2: Option<u64>, tlb_source: &str) -> Reach {
    Reach {
        entries: l1,
        l2_entries: l2,
        source: format!("CPUID ({tlb_source}), not measured"),
        measured: false,
        measured_on: None,
        cpuid_entries: Some(l1),
        cpuid_l2_entries: l2,
        huge_same_reach: None,
        caches_bytes: None,
        caches_source: None,
    }
}

/// A quick measurement of the TLB's knees on this machine (the `tlb`
/// experiment at small parameters, which the command running it provides):
/// its outcome and the machine as measured for it (the cache levels the
/// probe told knees from cache steps with).
pub type Probe<'a> = &'a dyn Fn(&Fingerprint) -> Result<(tlb::Outcome, Fingerprint)>;

/// Where the reach comes from, in order: `from` (a result the user named:
/// it must hold a tlb outcome), the newest tlb result of this host under
/// the results roots (`figures::results_roots`), a quick probe (where one
/// is given: not with `--no-probe`), CPUID's claim. The note says which,
/// for the terminal.
pub fn decide(machine: &Fingerprint, from: Option<&Path>, probe: Option<Probe>) -> Result<(Option<Reach>, String)> {
    let saved = match from {
        Some(path) => {
            let doc = crate::model::journal::load(path)?;
            if doc.outcome::<tlb::Outcome>().is_none() {
                return Err(Error::usage(format!(
                    "--machine-results {}: holds no tlb result; give a result of `memperf tlb -o DIR` or `memperf run`",
                    path.display()
                )));
            }
            Some((path.to_path_buf(), doc))
        }
        None => figures::newest_tlb(&figures::results_roots(), machine),
    };
    if let Some((path, doc)) = saved {
        let o = doc.outcome::<tlb::Outcome>().expect("checked above");
        let source = format!("`memperf tlb` in {} (host {})", path.display(), doc.origin.hostname);
        // Another machine's knees are that machine's (a guest of another
        // CPU under the same name too): said, as `stat` says of its walk
        // cost; CPUID's claims beside them are that machine's.
        let other = (!figures::same_machine(&doc, machine)).then(|| figures::other_machine(&doc, machine));
        let elsewhere = other
            .as_ref()
            .map(|h| format!("; measured on {h}, not this machine ({})", machine.hostname))
            .unwrap_or_default();
        if let Some(mut r) = from_tlb(o, &doc.machine, source.clone()) {
            r.measured_on = other;
            r = with_caches(r, &doc.machine);
            return Ok((Some(r), format!("TLB reach from {source}{elsewhere}")));
        }
        let r = from_cpuid(machine);
        return Ok((r, format!("{source} has no clean 4 KiB knee; the hot set is set beside CPUID's claim")));
    }
    let Some(probe) = probe else {
        return Ok((from_cpuid(machine), "TLB reach: CPUID's claim (--no-probe)".into()));
    };
    let (o, measured) = probe(machine)?;
    let source = "a quick `memperf tlb` probe run before the program (4 KiB pages to 32 MiB)";
    match from_tlb(&o, machine, source.into()).map(|r| with_caches(r, &measured)) {
        Some(r) => Ok((Some(r), "TLB reach: measured by a quick probe (4 KiB pages to 32 MiB)".into())),
        None => Ok((
            from_cpuid(machine),
            "the quick TLB probe found no clean 4 KiB knee; the hot set is set beside CPUID's claim".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(name: &str) -> (tlb::Outcome, Fingerprint) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/machines")
            .join(name)
            .join("run-quick.json");
        let doc = crate::model::journal::load(&path).unwrap();
        (doc.outcome::<tlb::Outcome>().unwrap().clone(), doc.machine.clone())
    }

    /// Zen 4 recording: the 64-page knee is stable and clean; the knees at
    /// 4,096 and 10,240 pages may be cache steps and are unstable, so no
    /// second level is measured; THP stepped at 64 pages too. CPUID's 72
    /// and 3,072 are kept beside.
    #[test]
    fn the_measured_knee_is_used_and_cpuid_kept_beside() {
        let (o, m) = recorded("amd-epyc-zen4-kvm-2vcpu");
        let r = from_tlb(&o, &m, "saved".into()).unwrap();
        assert_eq!((r.entries, r.l2_entries, r.measured), (64, None, true));
        assert_eq!((r.cpuid_entries, r.cpuid_l2_entries, r.huge_same_reach), (Some(72), Some(3072), Some(64)));
        let c = from_cpuid(&m).unwrap();
        assert_eq!((c.entries, c.l2_entries, c.measured), (72, Some(3072), false));
        // Where memory began in the recording's own level probe.
        let r = with_caches(r, &m);
        assert_eq!(
            r.caches_source.as_deref(),
            Some("measured: where memory latency began; CPUID/sysfs claim a last-level cache of 32MiB")
        );
        assert_eq!(r.caches_bytes, m.measured_levels.as_ref().and_then(|l| l.found.far_from).map(|b| b.0));
    }

    /// Intel recording: CPUID hides its TLBs, so only the measurement says 96.
    #[test]
    fn a_host_whose_cpuid_hides_its_tlbs_has_only_the_measurement() {
        let (o, m) = recorded("intel-xeon-m167-kvm-2vcpu");
        assert!(from_cpuid(&m).is_none());
        let r = from_tlb(&o, &m, "saved".into()).unwrap();
        assert_eq!((r.entries, r.cpuid_entries, r.huge_same_reach), (96, None, Some(96)));
    }
}
