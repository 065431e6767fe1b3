//! The model as memperf reads it: the `memperf-model` crate (the
//! document's types, at the bottom of everything) re-exported under
//! `memperf::model`, and the one path by which a document or journal comes
//! back from disk — parsed by the model crate, then judged again by
//! today's rules ([`recheck`]): an old document's implausible cache claim,
//! its clock from one foldable chain, its return-stack steps and loaded
//! latency's bend are drawn as this build draws them.

pub use memperf_model::{about, cpu, document, kernels, launcher, outcome, warnings};
pub use memperf_model::{Caution, Document, ExperimentRecord, Outcome, Status, Warning};

use crate::error::{Error, Result};
use document::Build;
use std::path::Path;

/// The build running now.
pub fn current_build() -> Build {
    Build {
        memperf_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: env!("MEMPERF_GIT_REVISION").into(),
        profile: if cfg!(debug_assertions) { "debug" } else { "release" }.into(),
        target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
    }
}

/// A document from its JSON text, upgraded and judged by today's rules.
pub fn document_from_json(text: &str) -> Result<Document> {
    let mut doc = Document::from_json(text)?;
    recheck(&mut doc);
    Ok(doc)
}

/// The claims an outcome stores, drawn again by today's analysis: each
/// outcome's own methods (beside its experiment's `run`, or its renderer's
/// for what memperf never runs), so one place redraws each claim. Nothing
/// else matches on outcomes to redraw them: [`redraw_of`] is generated from
/// the model's list, so an outcome without its impl does not compile.
pub trait Redraw {
    /// On every read of a document: the claims today's rules draw
    /// differently from an older build's, where the verdict changed
    /// (`ghz`: the clock the document trusts).
    fn recheck(&mut self, _ghz: Option<f64>) {}
    /// The figures it gives in cycles dropped: its clock came from one
    /// chain of adds, which a renamer can fold.
    fn without_cycles(&mut self) {}
    /// `report --reanalyze`: every stored claim drawn again from the raw
    /// samples (`ghz`: the clock of its record, unless the document's clock
    /// folded); the names of the fields redrawn.
    fn reanalyse(&mut self, _machine: &memperf_model::machine::Fingerprint, _ghz: Option<f64>) -> Vec<&'static str> {
        Vec::new()
    }
}

/// [`redraw_of`], from the model's list.
macro_rules! redraws {
    ($($group:ident { $($m:ident : $V:ident = $n:literal,)* })*) => {
        /// The outcome's own [`Redraw`].
        pub fn redraw_of(o: &mut Outcome) -> &mut dyn Redraw {
            match o {
                $($(Outcome::$V(x) => x,)*)*
            }
        }
    };
}
memperf_model::experiments!(redraws);

/// A document from disk judged by today's rules, whatever build wrote
/// it: its cache claims checked again (nothing is drawn or sized from
/// an implausible one), each outcome's claims rechecked ([`Redraw::recheck`]),
/// and a core clock measured by the old one-chain method (an `add` chain a
/// renamer may fold into 19 GHz) is no clock — its
/// figures in cycles are dropped, its "clock moved" warnings replaced by
/// "clock: not measured". The raw clock readings stay in the record.
pub fn recheck(doc: &mut Document) {
    use memperf_model::warnings::{Caution, Command};
    doc.machine.recheck_claims();
    let ghz = doc.trusted_core_ghz();
    for rec in &mut doc.experiments {
        if let Some(o) = rec.outcome.as_mut() {
            redraw_of(o).recheck(ghz);
        }
    }
    for rec in &mut doc.experiments {
        let Some(old) = rec.core_clock.iter().find(|c| !c.two_chains()) else { continue };
        let reason =
            format!("this document's clock ({:.2} GHz) came from one chain of adds, which a renamer can fold", old.ghz);
        if let Some(o) = rec.outcome.as_mut() {
            redraw_of(o).without_cycles();
        }
        rec.warnings.retain(|w| w.code != "clock-moved");
        if !rec.warnings.iter().any(|w| w.code == "clock-not-measured") {
            rec.warnings.push(Caution::ClockNotMeasured { reason }.render(Command::Run));
        }
    }
}

/// The journal of a suite run (its format is the model crate's), read back
/// through [`recheck`].
pub mod journal {
    pub use memperf_model::journal::*;

    use super::{document_from_json, recheck, Document, Error, Path, Result};

    /// Rebuilds a document from a journal. A last line cut short by a crash is
    /// left out and reported on stderr; any other malformed line, a header of
    /// another schema version, or a second header is an error.
    pub fn read(path: &Path) -> Result<Document> {
        let text = crate::input::read_text(path, crate::input::DOCUMENT_LIMIT, "journal")?;
        let mut doc = parse(&text, path)?;
        recheck(&mut doc);
        Ok(doc)
    }

    /// Reads a document from `results.json`, a journal, or a folder holding
    /// either (results.json preferred).
    pub fn load(path: &Path) -> Result<Document> {
        if path.is_dir() {
            let json = path.join("results.json");
            let journal = path.join(FILE);
            let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            // The newer of the two: a journal written after results.json holds
            // experiments the stale document lacks.
            match (json.exists(), journal.exists()) {
                (true, true) if modified(&journal) > modified(&json) => return read(&journal),
                (true, _) => return load(&json),
                (false, true) => return read(&journal),
                (false, false) => {}
            }
            return Err(Error::usage(format!("{} holds neither results.json nor {FILE}", path.display())));
        }
        if path.extension().is_some_and(|e| e == "jsonl") {
            return read(path);
        }
        let text = crate::input::read_text(path, crate::input::DOCUMENT_LIMIT, "document")?;
        document_from_json(&text).map_err(|e| Error { message: format!("{}: {}", path.display(), e.message), ..e })
    }
}
