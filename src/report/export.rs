//! Writing a document out: the table to stdout, warnings to stderr, the
//! JSON document, and a results folder (results.json and the SVG plots).
//! Every file is written atomically.

use super::document::{write_atomic, Document};
use super::{plots, text};
use crate::error::{Error, Result};
use crate::experiments::plan::Output;
use std::path::Path;

pub fn export(doc: &Document, out: &Output) -> Result<()> {
    eprint!("{}", text::warnings(doc));
    if out.table {
        print!("{}", text::render(doc));
    }
    if let Some(path) = &out.json {
        write_atomic(path, doc.to_json().as_bytes())?;
    }
    if let Some(dir) = &out.dir {
        write_folder(doc, dir)?;
        if out.table {
            println!("results written to {}", dir.display());
        }
    }
    Ok(())
}

/// results.json and every plot, in `dir` (created if needed).
pub fn write_folder(doc: &Document, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    write_atomic(&dir.join("results.json"), doc.to_json().as_bytes())?;
    for p in plots::all(doc)? {
        write_atomic(&dir.join(&p.file_name), p.svg.as_bytes())?;
    }
    Ok(())
}
