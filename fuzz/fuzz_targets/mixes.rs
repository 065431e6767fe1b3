//! `curves --mixes` on arbitrary text: the list parser over the mix
//! parser. Neither may panic or hang; what they accept is a mix they can
//! print and read back, with terms within range and a byte moved.
#![no_main]
use libfuzzer_sys::fuzz_target;
use memperf::model::outcome::curves::{Mix, MIX_TERM_MAX};
use memperf::units;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mixes) = units::parse_list(text, Mix::parse) {
        for m in mixes {
            assert!(m.reads <= MIX_TERM_MAX && m.writes <= MIX_TERM_MAX && m.reads + m.writes > 0, "{m:?}");
            assert!(!m.non_temporal || m.writes > 0, "{m:?}");
            assert_eq!(Mix::parse(&m.to_string()).unwrap(), m);
        }
    }
});
