//! No module imports upward. memperf's layers, bottom first:
//!
//! 0. the `memperf-model` crate (its own build: it cannot import memperf),
//!    and the leaves `rng`, `interrupt`, `input`, `sink`;
//! 1. measuring: `memory`, `kernels`, `timing`, `counters`, `process`;
//! 2. `analysis`;
//! 3. `machine` (the fingerprint, whose level probe uses analysis);
//! 4. `model` (the model crate re-exported, and documents read back
//!    through today's analysis);
//! 5. `experiments`;
//! 6. `report` (renderers per outcome, format writers);
//! 7. `fleet` (merge, references);
//! 8. `cli` and `region` (commands; the region API writes a document);
//! 9. `test_support`, built for the unit tests alone.
//!
//! A module may use its own layer and those below. `error` and `units` are
//! the model crate's, re-exported. Test modules (from `#[cfg(test)]` on) are
//! left out: a test may reach up to check the whole, as the registry's does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("units", 0),
    ("rng", 0),
    ("interrupt", 0),
    ("input", 0),
    ("sink", 0),
    ("memory", 1),
    ("kernels", 1),
    ("timing", 1),
    ("counters", 1),
    ("process", 1),
    ("analysis", 2),
    ("machine", 3),
    ("model", 4),
    ("experiments", 5),
    ("report", 6),
    ("fleet", 7),
    ("cli", 8),
    ("region", 8),
    // Built for the unit tests alone: it may read any layer, as they do.
    ("test_support", 9),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its tests and comments.
fn code(text: &str) -> String {
    let body = text.find("#[cfg(test)]\nmod tests").map_or(text, |i| &text[..i]);
    body.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Every `crate::<module>` a text names.
fn imports(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + 7..];
        let name: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let word_start = i == 0 || !rest[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        if word_start && !name.is_empty() {
            out.push(name);
        }
        rest = after;
    }
    out
}

/// The module a file of `src/` belongs to (`src/report/text.rs` → `report`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

#[test]
fn no_module_imports_upward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        let Some(module) = module_of(&src, f) else { continue };
        if module == "main" || module == "lib" {
            continue;
        }
        let own = layer(&module).unwrap_or_else(|| panic!("src/{module} has no layer: add it to LAYERS"));
        for name in imports(&code(&std::fs::read_to_string(f).unwrap())) {
            let Some(theirs) = layer(&name) else { continue };
            if theirs > own {
                let shown = f.strip_prefix(&src).unwrap().display().to_string();
                upward.entry(shown).or_default().push(format!("{name} (layer {theirs} > {own})"));
            }
        }
    }
    assert!(upward.is_empty(), "modules importing upward: {upward:#?}");
}

#[test]
fn the_model_crate_depends_on_serde_alone() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/memperf-model/Cargo.toml");
    let text = std::fs::read_to_string(manifest).unwrap();
    let deps = text.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    let names: Vec<&str> = deps
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| l.split('=').next().unwrap().trim())
        .collect();
    for n in &names {
        assert!(["serde", "serde_json", "schemars"].contains(n), "the model crate depends on {n}");
    }
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/memperf-model/src"), &mut files);
    for f in files {
        let text = code(&std::fs::read_to_string(&f).unwrap());
        assert!(!text.contains("memperf::") && !text.contains("libc::"), "{} reaches outside the model", f.display());
    }
}

#[test]
fn the_scanner_finds_imports_and_skips_tests_and_comments() {
    let text = "use crate::report::x;\n// crate::cli in a comment\nfn f() { memperf_crate::y; crate::timing::z }\n\
                #[cfg(test)]\nmod tests { use crate::cli; }";
    assert_eq!(imports(&code(text)), vec!["report", "timing"]);
}
