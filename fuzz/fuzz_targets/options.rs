//! Every option parser on arbitrary text: sizes, ranges, lists, the
//! latency size sweep and chains, call depths, durations, page-init
//! layouts and seeds. None may panic or hang;
//! what they accept must be within the ranges they promise.
#![no_main]
use libfuzzer_sys::fuzz_target;
use memperf::units;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = units::parse_size(text);
    if let Ok(s) = units::parse_sweep(text) {
        assert!(s.step > 0 && s.end >= s.start && s.count() <= 100_000);
        assert_eq!(s.values().len() as u64, s.count());
    }
    let _ = units::parse_list(text, units::parse_size);
    let _ = units::parse_u64("--seed", text);
    if let Ok(sizes) = memperf::experiments::latency::options::parse_sizes(text) {
        assert!(sizes.len() <= 64 * 16 + 1, "{} sizes", sizes.len());
    }
    if let Ok(chains) = memperf::experiments::latency::options::parse_chains(text) {
        assert!(chains.iter().all(|c| (1..=16).contains(c)), "{chains:?}");
    }
    if let Ok(depths) = memperf::experiments::calls::depths(text) {
        assert!(depths.windows(2).all(|w| w[0] < w[1]), "{depths:?}");
    }
    if let Ok(ns) = memperf::experiments::options::duration_ns("--delays", text) {
        assert!(ns < 1_000_000_000_000, "{ns}");
    }
    let _ = memperf::experiments::page_init::parse_layout(text);
});
