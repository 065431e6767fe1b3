//! Test helper: disassembles a function in this process from its address,
//! following every branch inside it, so tests can check which instructions
//! a kernel really contains (no objdump needed).

use super::code_bytes::readable_from;
use iced_x86::{Decoder, DecoderOptions, FlowControl, Formatter, Instruction, IntelFormatter};
use std::collections::{BTreeMap, BTreeSet};

/// Every instruction reachable from `entry` without leaving through a call
/// or a return, in address order. Branch targets more than 64 KiB away are
/// taken as other functions and not followed.
pub fn instructions(entry: *const u8) -> Vec<Instruction> {
    const SPAN: usize = 64 * 1024;
    let base = entry as u64;
    let mut seen: BTreeMap<u64, Instruction> = BTreeMap::new();
    let mut todo: Vec<u64> = vec![base];
    let mut visited: BTreeSet<u64> = BTreeSet::new();
    while let Some(start) = todo.pop() {
        if !visited.insert(start) || start < base || start >= base + SPAN as u64 {
            continue;
        }
        let len = readable_from(start as usize).min(4096);
        // SAFETY: `len` bytes from `start` lie inside one readable mapping
        // of this process (read from /proc/self/maps just above).
        let bytes = unsafe { std::slice::from_raw_parts(start as *const u8, len) };
        let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
        while decoder.can_decode() {
            let ins = decoder.decode();
            if seen.insert(ins.ip(), ins).is_some() {
                break;
            }
            match ins.flow_control() {
                FlowControl::Return | FlowControl::Interrupt | FlowControl::Exception => break,
                FlowControl::UnconditionalBranch => {
                    todo.push(ins.near_branch_target());
                    break;
                }
                FlowControl::ConditionalBranch => todo.push(ins.near_branch_target()),
                FlowControl::IndirectBranch => break,
                _ => {}
            }
        }
    }
    seen.into_values().collect()
}

/// Mnemonics (lower case) of the reachable instructions.
pub fn mnemonics(entry: *const u8) -> Vec<String> {
    instructions(entry).iter().map(|i| format!("{:?}", i.mnemonic()).to_lowercase()).collect()
}

/// Intel-syntax text of the reachable instructions, one per line.
pub fn text(entry: *const u8) -> String {
    let mut f = IntelFormatter::new();
    let mut out = String::new();
    for i in instructions(entry) {
        f.format(&i, &mut out);
        out.push('\n');
    }
    out
}
