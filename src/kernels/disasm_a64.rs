//! Test helper (aarch64): disassembles a function in this process from its
//! address, following every direct branch inside it, so tests can check
//! which instructions a kernel really contains (no objdump needed).
//!
//! Names are lower case, with what tells kernels apart folded in:
//! `prfm pldl1keep` (the PRFM operation), `dc zva` and `dc civac` (which
//! decoders print as their `sys` encoding).

use super::code_bytes::readable_from;
use disarm64::InsnOpcode;
use std::collections::{BTreeMap, BTreeSet};

/// How an instruction word leaves straight-line code.
enum Flow {
    Next,
    /// A direct branch that may fall through.
    Conditional(u64),
    /// A direct branch that never falls through.
    Jump(u64),
    /// A return or an indirect branch: the walk ends here.
    Stop,
}

/// Sign-extends the `bits`-bit field of `w` at `shift`, in instructions.
fn offset(w: u32, shift: u32, bits: u32) -> i64 {
    let v = ((w >> shift) & ((1 << bits) - 1)) as i64;
    (v << (64 - bits)) >> (64 - bits)
}

fn flow(w: u32, at: u64) -> Flow {
    let to = |o: i64| at.wrapping_add((o * 4) as u64);
    if w & 0xfc00_0000 == 0x1400_0000 {
        Flow::Jump(to(offset(w, 0, 26)))
    } else if w & 0xff00_0010 == 0x5400_0000 || w & 0x7e00_0000 == 0x3400_0000 {
        Flow::Conditional(to(offset(w, 5, 19)))
    } else if w & 0x7e00_0000 == 0x3600_0000 {
        Flow::Conditional(to(offset(w, 5, 14)))
    } else if w & 0xffff_fc1f == 0xd65f_0000 || w & 0xffff_fc1f == 0xd61f_0000 || w & 0xffff_fbff == 0xd65f_0bff {
        // RET, BR, and RETAA/RETAB (pointer authentication).
        Flow::Stop
    } else {
        Flow::Next
    }
}

/// Every instruction word reachable from `entry` without leaving through
/// a call or a return, by address. Branch targets more than 64 KiB away
/// are taken as other functions and not followed.
pub fn instructions(entry: *const u8) -> Vec<(u64, u32)> {
    const SPAN: u64 = 64 * 1024;
    let base = entry as u64;
    let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
    let (mut todo, mut visited) = (vec![base], BTreeSet::new());
    while let Some(start) = todo.pop() {
        if !visited.insert(start) || start < base || start >= base + SPAN {
            continue;
        }
        let len = readable_from(start as usize).min(4096) / 4;
        let mut at = start;
        for _ in 0..len {
            // SAFETY: `at` lies inside the readable mapping measured just
            // above, and code is 4-byte aligned.
            let w = unsafe { (at as *const u32).read() };
            if seen.insert(at, w).is_some() {
                break;
            }
            match flow(w, at) {
                Flow::Next => {}
                Flow::Conditional(t) => todo.push(t),
                Flow::Jump(t) => {
                    todo.push(t);
                    break;
                }
                Flow::Stop => break,
            }
            at += 4;
        }
    }
    seen.into_iter().collect()
}

/// The name of one instruction word (see the module's doc).
pub fn name(w: u32) -> String {
    match w & !0x1f {
        0xd50b_7420 => return "dc zva".into(),
        0xd50b_7e20 => return "dc civac".into(),
        _ => {}
    }
    let Some(op) = disarm64::decoder::decode(w) else { return format!(".word {w:#010x}") };
    let mnemonic = op.definition().mnemonic.to_lowercase();
    if mnemonic == "prfm" {
        let text = op.to_string();
        let operation = text.split_whitespace().nth(1).unwrap_or("").trim_end_matches(',');
        return format!("prfm {operation}");
    }
    mnemonic
}

/// Names of the reachable instructions.
pub fn mnemonics(entry: *const u8) -> Vec<String> {
    instructions(entry).into_iter().map(|(_, w)| name(w)).collect()
}

/// Text of the reachable instructions, one per line.
pub fn text(entry: *const u8) -> String {
    instructions(entry)
        .into_iter()
        .filter_map(|(_, w)| disarm64::decoder::decode(w).map(|op| format!("{op}\n")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_in_what_tells_kernels_apart() {
        assert_eq!(name(0xf980_0000), "prfm pldl1keep");
        assert_eq!(name(0xf980_0004), "prfm pldl3keep");
        assert_eq!(name(0xf980_0001), "prfm pldl1strm");
        assert_eq!(name(0xf980_0010), "prfm pstl1keep");
        assert_eq!(name(0xd50b_7420), "dc zva");
        assert_eq!(name(0xd50b_7e20), "dc civac");
        assert_eq!(name(0xa5e1_a404), "ld1d");
        assert_eq!(name(0xe590_e404), "stnt1d");
        assert_eq!(name(0xac00_0400), "stnp");
    }

    #[test]
    fn branches_are_followed_and_returns_end_the_walk() {
        assert!(matches!(flow(0x1400_0002, 0x1000), Flow::Jump(0x1008)));
        assert!(matches!(flow(0x17ff_ffff, 0x1000), Flow::Jump(0xffc)));
        assert!(matches!(flow(0x5400_0041, 0x1000), Flow::Conditional(0x1008)));
        assert!(matches!(flow(0xd65f_03c0, 0x1000), Flow::Stop));
        assert!(matches!(flow(0xd65f_0bff, 0x1000), Flow::Stop), "retaa");
        assert!(matches!(flow(0xd65f_0fff, 0x1000), Flow::Stop), "retab");
        assert!(matches!(flow(0xd503_201f, 0x1000), Flow::Next));
    }
}
