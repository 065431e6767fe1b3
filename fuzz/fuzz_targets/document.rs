//! Result documents from arbitrary bytes: refused with an error or read,
//! never a panic; what is read renders as text and compares with itself.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(doc) = memperf::model::document_from_json(text) {
        let _ = memperf::report::text::render(&doc);
        let c = memperf::report::compare::compare(std::slice::from_ref(&doc), std::slice::from_ref(&doc), Some(0.0));
        assert_eq!(c.regressions().count(), 0, "a document never regresses against itself");
        let _ = memperf::report::compare::text(&c);
        let _ = memperf::report::plots::all(&doc);
    }
});
