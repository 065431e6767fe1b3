//! The journal of a suite run: `journal.jsonl` in the results folder. The
//! first line is the document's header (no experiments yet); each finished
//! experiment is appended as one line and synced at once, so a crash or a
//! `kill -9` leaves every experiment that finished, and `memperf report`
//! rebuilds the document and the report from it.

use crate::document::{Document, ExperimentRecord};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FILE: &str = "journal.jsonl";

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Line {
    Header(Box<Document>),
    Record(Box<ExperimentRecord>),
}

pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    /// Starts `dir/journal.jsonl` with the document's header. The folder is
    /// claimed: a journal already there means another run owns (or owned)
    /// it, and two runs must never interleave their lines in one folder.
    pub fn create(dir: &Path, doc: &Document) -> Result<Journal> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let path = dir.join(FILE);
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error {
                    kind: crate::error::ErrorKind::Usage,
                    message: format!("{} already holds a run ({FILE} exists)", dir.display()),
                    fix: Some("give each run its own -o folder (or leave -o out for a new one)".into()),
                }
            } else {
                Error::io(format!("cannot create {}", path.display()), e)
            }
        })?;
        let mut header = doc.clone();
        header.experiments.clear();
        let mut j = Journal { path, file };
        j.write(&Line::Header(Box::new(header)))?;
        Ok(j)
    }

    pub fn append(&mut self, rec: &ExperimentRecord) -> Result<()> {
        self.write(&Line::Record(Box::new(rec.clone())))
    }

    fn write(&mut self, line: &Line) -> Result<()> {
        let mut text = serde_json::to_string(line).expect("journal lines serialise");
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Error::io(format!("cannot append to {}", self.path.display()), e))
    }
}

/// A journal's text as a document (`path` names it in errors), its claims
/// as written (`memperf::model::journal::read` judges them again).
pub fn parse(text: &str, path: &Path) -> Result<Document> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut doc: Option<Document> = None;
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            check_header_version(path, l)?;
        }
        // Each line's strings made safe before it is read (`text::defang`).
        let line = serde_json::from_str::<serde_json::Value>(l).and_then(|mut v| {
            crate::text::defang(&mut v);
            serde_json::from_value::<Line>(v)
        });
        match line {
            Ok(Line::Header(_)) if doc.is_some() => {
                return Err(Error::usage(format!(
                    "{}: line {} is a second header: two runs wrote into one journal",
                    path.display(),
                    i + 1
                )))
            }
            Ok(Line::Header(d)) => doc = Some(*d),
            Ok(Line::Record(r)) => match doc.as_mut() {
                Some(d) => d.experiments.push(*r),
                None => return Err(Error::usage(format!("{}: a record comes before the header", path.display()))),
            },
            Err(_) if i + 1 == lines.len() && i > 0 => {
                eprintln!(
                    "memperf: warning: {}: the last line is cut short (a run that was killed mid-write); it is left out",
                    path.display()
                );
            }
            Err(e) => return Err(Error::usage(format!("{}: line {} is malformed: {e}", path.display(), i + 1))),
        }
    }
    let mut doc =
        doc.ok_or_else(|| Error::usage(format!("{} has no header: not a memperf journal", path.display())))?;
    doc.mark_never_ran();
    Ok(doc)
}

/// The header line must carry this memperf's schema version.
fn check_header_version(path: &Path, line: &str) -> Result<()> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|_| Error::usage(format!("{} is not a memperf journal", path.display())))?;
    let version = v.get("header").and_then(|h| h.get("schema_version")).and_then(|x| x.as_u64());
    if version != Some(crate::document::SCHEMA_VERSION as u64) {
        return Err(Error::usage(format!(
            "{}: schema_version {} — this memperf reads version {}",
            path.display(),
            version.map(|v| v.to_string()).unwrap_or_else(|| "(missing)".into()),
            crate::document::SCHEMA_VERSION
        )));
    }
    Ok(())
}
