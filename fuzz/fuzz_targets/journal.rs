//! Journals from arbitrary bytes: torn, reordered, doubled or foreign lines
//! are errors or warnings, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = memperf::model::journal::parse(text, std::path::Path::new("fuzz.jsonl"));
});
