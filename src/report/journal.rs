//! The journal of a suite run: `journal.jsonl` in the results folder. The
//! first line is the document's header (no experiments yet); each finished
//! experiment is appended as one line and synced at once, so a crash or a
//! `kill -9` leaves every experiment that finished, and `memperf report`
//! rebuilds the document and the report from it.

use crate::error::{Error, Result};
use crate::model::document::{Document, ExperimentRecord};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FILE: &str = "journal.jsonl";

#[derive(Serialize, Deserialize)]
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
    /// Starts `dir/journal.jsonl` with the document's header.
    pub fn create(dir: &Path, doc: &Document) -> Result<Journal> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        let path = dir.join(FILE);
        let file =
            std::fs::File::create(&path).map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?;
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

/// Rebuilds a document from a journal. A last line cut short by a crash is
/// ignored; any other malformed line is an error.
pub fn read(path: &Path) -> Result<Document> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut doc: Option<Document> = None;
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Line>(l) {
            Ok(Line::Header(d)) => doc = Some(*d),
            Ok(Line::Record(r)) => match doc.as_mut() {
                Some(d) => d.experiments.push(*r),
                None => return Err(Error::usage(format!("{}: a record comes before the header", path.display()))),
            },
            Err(_) if i + 1 == lines.len() => {} // torn last line
            Err(e) => return Err(Error::usage(format!("{}: line {} is malformed: {e}", path.display(), i + 1))),
        }
    }
    doc.ok_or_else(|| Error::usage(format!("{} has no header: not a memperf journal", path.display())))
}

/// Reads a document from `results.json`, a journal, or a folder holding
/// either (results.json preferred).
pub fn load(path: &Path) -> Result<Document> {
    if path.is_dir() {
        let json = path.join("results.json");
        if json.exists() {
            return load(&json);
        }
        let journal = path.join(FILE);
        if journal.exists() {
            return read(&journal);
        }
        return Err(Error::usage(format!("{} holds neither results.json nor {FILE}", path.display())));
    }
    if path.extension().is_some_and(|e| e == "jsonl") {
        return read(path);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    Document::from_json(&text).map_err(|e| Error { message: format!("{}: {}", path.display(), e.message), ..e })
}
