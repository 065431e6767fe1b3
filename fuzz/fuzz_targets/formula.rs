//! Metric formulas from arbitrary text, as a metrics file or
//! MEMPERF_METRICS gives them: parsed into a definition or refused with a
//! reason, never a panic or an overflowed stack (a formula that nests a
//! hundred thousand parentheses once aborted every `stat`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use memperf::counters::metrics::{check, Definition};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let def = Definition {
        name: "fuzzed".into(),
        formula: vec![text.to_string()],
        unit: "count".into(),
        description: String::new(),
    };
    if let Err(reason) = check(&[def], "fuzz") {
        assert!(!reason.is_empty(), "a refusal says why");
    }
});
