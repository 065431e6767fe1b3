//! Properties over what memperf reads: whatever a result document holds,
//! reading it ends in a document or a one-line error, and a document that
//! reads renders (text, headlines, OpenMetrics, HTML, compare) without a
//! panic. Documents are the recorded quick suites and the version-2
//! fixture with one value anywhere replaced by something hostile.

use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;

/// The documents the mutations start from.
fn seeds() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut paths = vec![root.join("minimal-bandwidth.json")];
    for m in std::fs::read_dir(root.join("machines")).unwrap() {
        paths.push(m.unwrap().path().join("run-quick.json"));
    }
    paths
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| serde_json::from_str(&t).unwrap())
        .collect()
}

/// Every JSON pointer in `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            m.iter().for_each(|(k, x)| pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out))
        }
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| pointers(x, format!("{at}/{i}"), out)),
        _ => {}
    }
    out.push(at);
}

/// Values a crafted or broken document may hold where a real one holds
/// something else.
fn hostile() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::num::f64::ANY.prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(-1e308)),
        "\\PC{0,40}".prop_map(Value::String),
        Just(Value::String("\u{1b}]0;PWN\u{7}\n# EOF".into())),
        Just(Value::Array(vec![])),
        Just(Value::Array(vec![Value::from(0.0); 3])),
        Just(serde_json::json!({})),
    ]
}

/// Reads `text` as a document; renders everything a reader can ask for.
fn read_and_render(text: &str) {
    if let Ok(doc) = memperf::model::document_from_json(text) {
        let _ = memperf::report::text::render(&doc);
        let _ = memperf::report::headlines::metrics(&doc);
        let _ = memperf::report::headlines::advice(&doc);
        let _ = memperf::report::openmetrics::render(&doc);
        let (plots, _) = memperf::report::plots::all(&doc);
        let _ = memperf::report::html::render(&doc, &plots);
        let _ = memperf::report::compare::compare(std::slice::from_ref(&doc), std::slice::from_ref(&doc), Some(5.0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// One value anywhere in a real document replaced by a hostile one.
    #[test]
    fn a_document_with_any_value_replaced_reads_or_is_refused(seed in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), with in hostile()) {
        let all = seeds();
        let mut doc = all[seed.index(all.len())].clone();
        let mut ps = Vec::new();
        pointers(&doc, String::new(), &mut ps);
        let p = &ps[at.index(ps.len())];
        match doc.pointer_mut(p) {
            Some(slot) => *slot = with,
            None => doc = with,
        }
        read_and_render(&doc.to_string());
    }

    /// Arbitrary text, and a document cut short anywhere.
    #[test]
    fn any_text_or_a_truncated_document_reads_or_is_refused(text in "\\PC{0,200}", cut in any::<prop::sample::Index>()) {
        read_and_render(&text);
        let whole = seeds()[0].to_string();
        // Cut at a character boundary (a document holds "×", "µ", "–").
        let mut at = cut.index(whole.len());
        while !whole.is_char_boundary(at) {
            at -= 1;
        }
        read_and_render(&whole[..at]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Any text as `curves --mixes`: mixes within range that print and read
    /// back, or one line that names the mix and the form it takes.
    #[test]
    fn any_text_as_mixes_is_mixes_or_one_line(text in "[0-9:nt, x.-]{0,24}|\\PC{0,40}") {
        use memperf::model::outcome::curves::{Mix, MIX_TERM_MAX};
        match memperf::units::parse_list(&text, Mix::parse) {
            Ok(mixes) => {
                for m in mixes {
                    prop_assert!(m.reads <= MIX_TERM_MAX && m.writes <= MIX_TERM_MAX && m.reads + m.writes > 0);
                    prop_assert!(!m.non_temporal || m.writes > 0);
                    prop_assert_eq!(Mix::parse(&m.to_string()).unwrap(), m);
                }
            }
            Err(e) => prop_assert!(!e.message.contains('\n') && !e.message.is_empty(), "{}", e.message),
        }
    }

    /// Every ratio the parser promises reads back as itself, and its
    /// shares lie in 0..=1.
    #[test]
    fn every_ratio_reads_back(reads in 0u32..=1000, writes in 0u32..=1000, nt in any::<bool>()) {
        use memperf::model::outcome::curves::Mix;
        let text = format!("{reads}:{writes}{}", if nt { "nt" } else { "" });
        match Mix::parse(&text) {
            Ok(m) => {
                prop_assert_eq!(m, Mix::new(reads, writes, nt));
                prop_assert!((0.0..=1.0).contains(&m.write_share()) && (0.0..=1.0).contains(&m.bus_read_share()));
            }
            Err(_) => prop_assert!(reads + writes == 0 || (nt && writes == 0)),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any bytes as a saved machine's tarball (raw, or behind a gzip,
    /// bzip2 or xz magic), and as its /proc/cpuinfo and a sysfs cache file:
    /// a description or an error, never a panic, and nothing left behind.
    #[test]
    fn any_bytes_as_a_saved_machine_read_or_are_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..4096),
        magic in prop::sample::select(vec![&b""[..], &[0x1f, 0x8b][..], &b"BZh9"[..], &[0xfd, b'7', b'z', b'X', b'Z', 0][..]]),
    ) {
        use memperf::machine::elsewhere::SavedMachine;
        use memperf::machine::tree::Tree;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.tar");
        std::fs::write(&file, [magic, &bytes[..]].concat()).unwrap();
        if let Ok(tree) = Tree::open(&file) {
            let _ = SavedMachine::read(&tree);
        }
        let root = dir.path().join("tree");
        let idx = root.join("sys/devices/system/cpu/cpu0/cache/index0");
        std::fs::create_dir_all(&idx).unwrap();
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(root.join("proc/cpuinfo"), &bytes).unwrap();
        std::fs::write(idx.join("size"), &bytes).unwrap();
        std::fs::write(idx.join("level"), &bytes).unwrap();
        if let Ok(m) = SavedMachine::read(&Tree::open(&root).unwrap()) {
            for k in &m.kinds {
                prop_assert!(!k.name.chars().any(char::is_control), "{}", k.name);
            }
        }
    }
}
