//! No module imports upward. memperf's layers, bottom first:
//!
//! 0. the `memperf-model` crate (its own build: it cannot import memperf),
//!    and the leaves `rng`, `interrupt`, `input`, `sink`, `terminal`;
//! 1. measuring: `memory`, `kernels`, `timing`, `counters`, `process`,
//!    `gpu`;
//! 2. `analysis`;
//! 3. `model` (the model crate re-exported, and documents read back
//!    through today's analysis);
//! 4. `machine` (the fingerprint, whose level probe uses analysis, and
//!    what results saved on this host say of it);
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
    ("terminal", 0),
    ("memory", 1),
    ("kernels", 1),
    ("timing", 1),
    ("counters", 1),
    ("process", 1),
    ("gpu", 1),
    ("analysis", 2),
    ("model", 3),
    ("machine", 4),
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
    // A file's tests (private, or shared with other tests in the crate)
    // are not its code.
    let tests =
        ["#[cfg(test)]\nmod tests", "#[cfg(test)]\npub(crate) mod tests"].iter().filter_map(|t| text.find(t)).min();
    let body = tests.map_or(text, |i| &text[..i]);
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

/// The module path of a file of `src/` (`src/report/outcome/mod.rs` →
/// `["report", "outcome"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The file of `path` (a module path) or of the deepest module it names,
/// and how many of its segments are modules.
fn file_of(src: &Path, path: &[String]) -> (Option<PathBuf>, usize) {
    let mut best = (None, 0);
    for n in 1..=path.len() {
        let dir = path[..n].iter().fold(src.to_path_buf(), |d, p| d.join(p));
        let as_file = dir.with_extension("rs");
        let as_dir = dir.join("mod.rs");
        if as_file.is_file() {
            best = (Some(as_file), n);
        } else if as_dir.is_file() {
            best = (Some(as_dir), n);
        } else {
            break;
        }
    }
    best
}

/// Paths a file's code names, as module paths from the crate's root:
/// `crate::a::b`, `super::x`, `self::x` and its own child modules
/// (`child::x`), with `use` groups (`a::{b, c::d}`) spread out.
fn named_paths(code: &str, own: &[String], children: &[String]) -> Vec<Vec<String>> {
    let flat = spread_groups(code);
    let mut out = Vec::new();
    let words: Vec<&str> = flat.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).collect();
    for w in words {
        let segs: Vec<&str> = w.split("::").collect();
        if segs.len() < 2 || segs.iter().any(|s| s.is_empty()) {
            continue;
        }
        let mut base: Vec<String> = match segs[0] {
            "crate" => Vec::new(),
            "self" => own.to_vec(),
            "super" => {
                let mut b = own.to_vec();
                let mut rest = &segs[..];
                while rest.first() == Some(&"super") {
                    b.pop();
                    rest = &rest[1..];
                }
                b.extend(rest.iter().map(|s| s.to_string()));
                out.push(b);
                continue;
            }
            c if children.iter().any(|x| x == c) => {
                let mut b = own.to_vec();
                b.extend(segs.iter().map(|s| s.to_string()));
                out.push(b);
                continue;
            }
            _ => continue,
        };
        base.extend(segs[1..].iter().map(|s| s.to_string()));
        out.push(base);
    }
    out
}

/// `a::{b, c::{d, e}}` → `a::b, a::c::d, a::c::e` (one level of text at a
/// time, innermost first).
fn spread_groups(code: &str) -> String {
    let mut text = code.to_string();
    while let Some(open) = text.find("::{") {
        let start =
            text[..open].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).map_or(0, |i| i + 1);
        let mut depth = 0;
        let mut close = None;
        for (i, c) in text[open + 2..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + 2 + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        let prefix = &text[start..open];
        let inner = spread_groups(&text[open + 3..close]);
        let items: Vec<String> =
            inner.split(',').map(str::trim).filter(|i| !i.is_empty()).map(|i| format!("{prefix}::{i}")).collect();
        text = format!("{}{}{}", &text[..start], items.join(", "), &text[close + 1..]);
    }
    text
}

/// The modules a file declares (`mod x;`, `pub mod x;`).
fn child_modules(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("pub(crate) ").or_else(|| l.strip_prefix("pub ")).unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// What a file holds for path resolution: the items it defines and the
/// names it re-exports (`pub use a::b::{C, D}`, `pub use a::*`), each with
/// the module path it comes from.
struct Items {
    defined: Vec<String>,
    reexported: Vec<(String, Vec<String>)>,
    globs: Vec<Vec<String>>,
}

fn items(code: &str, own: &[String], children: &[String]) -> Items {
    let mut defined = Vec::new();
    for line in code.lines() {
        let l = line.trim_start();
        let l = l
            .strip_prefix("pub(crate) ")
            .or_else(|| l.strip_prefix("pub(super) "))
            .or_else(|| l.strip_prefix("pub "))
            .unwrap_or(l);
        let l = l.strip_prefix("unsafe ").unwrap_or(l);
        for kw in ["fn ", "struct ", "enum ", "trait ", "const ", "static ", "type ", "mod ", "union ", "macro_rules! "]
        {
            if let Some(rest) = l.strip_prefix(kw) {
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                defined.push(name);
            }
        }
    }
    let (mut reexported, mut globs) = (Vec::new(), Vec::new());
    for stmt in spread_groups(code).split(';') {
        let Some(list) =
            stmt.trim_start().strip_prefix("pub use ").or_else(|| stmt.trim_start().strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        for item in list.split(',') {
            let item = item.trim();
            let (path, alias) = match item.split_once(" as ") {
                Some((p, a)) => (p.trim(), Some(a.trim())),
                None => (item, None),
            };
            let Some(full) = named_paths(&format!(" {path} "), own, children).into_iter().next() else {
                // From another crate: no file of this one (a glob: any
                // name the file does not define may be one of those).
                let name = path.rsplit("::").next().unwrap_or(path);
                reexported.push((alias.unwrap_or(name).to_string(), Vec::new()));
                continue;
            };
            match full.last().map(String::as_str) {
                Some("*") => globs.push(full[..full.len() - 1].to_vec()),
                Some(name) => reexported.push((alias.unwrap_or(name).to_string(), full)),
                None => {}
            }
        }
    }
    Items { defined, reexported, globs }
}

/// The file that defines what `path` names: the deepest module file it
/// reaches, followed through that file's re-exports.
fn resolve(src: &Path, path: &[String], table: &BTreeMap<PathBuf, Items>, depth: usize) -> Option<PathBuf> {
    let (file, n) = file_of(src, path);
    let file = file?;
    let Some(name) = path.get(n) else { return Some(file) };
    let Some(items) = table.get(&file) else { return Some(file) };
    if depth > 8 || items.defined.iter().any(|d| d == name) {
        return Some(file);
    }
    if let Some((_, from)) = items.reexported.iter().find(|(alias, _)| alias == name) {
        if from.is_empty() {
            return None;
        }
        let mut p = from.clone();
        p.extend(path[n + 1..].iter().cloned());
        return resolve(src, &p, table, depth + 1).or(Some(file));
    }
    for g in &items.globs {
        let mut p = g.clone();
        p.extend(path[n..].iter().cloned());
        if let Some(f) = resolve(src, &p, table, depth + 1).filter(|f| *f != file) {
            return Some(f);
        }
    }
    if items.reexported.iter().any(|(alias, from)| alias == "*" && from.is_empty()) {
        return None;
    }
    Some(file)
}

/// Which files of `src/` each file names (tests and comments left out),
/// each name followed to the file that defines it.
fn file_graph(src: &Path) -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|f| f.file_name().is_some_and(|n| n != "main.rs"));
    let texts: Vec<(PathBuf, String, Vec<String>, Vec<String>)> = files
        .iter()
        .map(|f| {
            let text = code(&std::fs::read_to_string(f).unwrap());
            let children = child_modules(&text);
            (f.clone(), text, module_path(src, f), children)
        })
        .collect();
    let table: BTreeMap<PathBuf, Items> =
        texts.iter().map(|(f, text, own, children)| (f.clone(), items(text, own, children))).collect();
    let mut graph = BTreeMap::new();
    for (f, text, own, children) in &texts {
        // Re-exports are followed to their source, not counted as a use.
        let used: String =
            text.split(';').filter(|s| !s.trim_start().starts_with("pub use ")).collect::<Vec<_>>().join(";");
        let mut to: Vec<PathBuf> = named_paths(&used, own, children)
            .iter()
            .filter_map(|p| resolve(src, p, &table, 0))
            .filter(|t| t != f)
            .collect();
        to.sort();
        to.dedup();
        graph.insert(f.clone(), to);
    }
    graph
}

/// The strongly connected parts of more than one file (Tarjan's).
fn cycles(graph: &BTreeMap<PathBuf, Vec<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct T<'g> {
        g: &'g BTreeMap<PathBuf, Vec<PathBuf>>,
        index: BTreeMap<&'g PathBuf, (usize, usize)>,
        stack: Vec<&'g PathBuf>,
        next: usize,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g PathBuf) {
        t.index.insert(v, (t.next, t.next));
        t.next += 1;
        t.stack.push(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some(w) = t.g.get_key_value(w).map(|(k, _)| k) else { continue };
            match t.index.get(w).copied() {
                None => {
                    visit(t, w);
                    let low = t.index[w].1.min(t.index[v].1);
                    t.index.get_mut(v).unwrap().1 = low;
                }
                Some((wi, _)) if t.stack.contains(&w) => {
                    let low = wi.min(t.index[v].1);
                    t.index.get_mut(v).unwrap().1 = low;
                }
                _ => {}
            }
        }
        let (vi, vl) = t.index[v];
        if vi == vl {
            let mut part = Vec::new();
            while let Some(w) = t.stack.pop() {
                part.push(w.clone());
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                t.out.push(part);
            }
        }
    }
    let mut t = T { g: graph, index: BTreeMap::new(), stack: Vec::new(), next: 0, out: Vec::new() };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// No two files name each other, however far round: each file can be read
/// with what lies below it.
#[test]
fn no_files_name_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = file_graph(&src);
    let found = cycles(&graph);
    let name = |f: &Path| f.strip_prefix(&src).unwrap().display().to_string();
    // Each circle with the arrows inside it, so the one to cut is seen.
    let shown: Vec<Vec<String>> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|f| {
                    let to: Vec<String> = graph[f].iter().filter(|t| c.contains(t)).map(|t| name(t)).collect();
                    format!("{} -> {}", name(f), to.join(", "))
                })
                .collect()
        })
        .collect();
    assert!(shown.is_empty(), "files in a circle: {shown:#?}");
}

#[test]
fn the_path_reader_spreads_groups_and_follows_super_and_children() {
    assert_eq!(spread_groups("use crate::a::{b, c::{d, e}};"), "use crate::a::b, crate::a::c::d, crate::a::c::e;");
    let own = vec!["report".to_string(), "outcome".to_string()];
    let paths = named_paths("use super::plot::Plot; x86::f(); crate::model::X", &own, &["x86".into()]);
    assert_eq!(
        paths,
        vec![
            vec!["report".to_string(), "plot".into(), "Plot".into()],
            vec!["report".into(), "outcome".into(), "x86".into(), "f".into()],
            vec!["model".into(), "X".into()],
        ]
    );
}

/// The model's list of experiments: (module, variant, name) of each.
fn experiments() -> Vec<(String, String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/memperf-model/src/outcome/mod.rs"))
            .unwrap();
    let list = &text[text.find("macro_rules! experiments").unwrap()..];
    let list = &list[..list.find("};").unwrap()];
    list.lines()
        .filter_map(|l| {
            let (m, rest) = l.trim().split_once(": ")?;
            let (v, name) = rest.split_once(" = ")?;
            let name = name.trim_end_matches(',').trim_matches('"');
            Some((m.to_string(), v.to_string(), name.to_string()))
        })
        .collect()
}

/// Whether `file` (relative to the crate) is one of an experiment's own
/// files: its outcome, its experiment module, its renderer (the region
/// API, `src/region/`, is the `regions` experiment's), or the list itself.
fn own_file_of_an_experiment(rel: &str, modules: &[String]) -> bool {
    if rel == "crates/memperf-model/src/outcome/mod.rs" || rel.starts_with("src/region/") {
        return true;
    }
    modules.iter().any(|m| {
        rel == format!("crates/memperf-model/src/outcome/{m}.rs")
            || rel == format!("src/experiments/{m}.rs")
            || rel.starts_with(&format!("src/experiments/{m}/"))
            || rel == format!("src/report/outcome/{m}.rs")
    })
}

/// No shared code matches on an experiment: no `Outcome::Variant`, and no
/// experiment's name as a string, outside that experiment's own files (the
/// list's macros are the one place that names them all).
#[test]
fn no_experiment_is_matched_outside_its_own_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exps = experiments();
    assert!(exps.len() >= 16, "the list: {exps:?}");
    let modules: Vec<String> = exps.iter().map(|e| e.0.clone()).collect();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates/memperf-model/src"), &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        if own_file_of_an_experiment(&rel, &modules) {
            continue;
        }
        let text = code(&std::fs::read_to_string(&f).unwrap());
        for (_, variant, name) in &exps {
            if text.contains(&format!("Outcome::{variant}(")) || text.contains(&format!("Outcome::{variant} ")) {
                found.push(format!("{rel}: Outcome::{variant}"));
            }
            // A name matched on or looked up: compared, a match arm, an
            // alternative, or the argument of a lookup.
            let quoted = format!("\"{name}\"");
            let matching = [
                format!("== {quoted}"),
                format!("!= {quoted}"),
                format!("{quoted} =>"),
                format!("{quoted} |"),
                format!("| {quoted}"),
                format!("({quoted})"),
            ];
            if matching.iter().any(|m| text.contains(m.as_str())) {
                found.push(format!("{rel}: {quoted}"));
            }
        }
    }
    assert!(found.is_empty(), "shared code matching on an experiment: {found:#?}");
}
