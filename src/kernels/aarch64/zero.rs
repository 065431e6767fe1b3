//! DC ZVA: zeroes one whole block per instruction without reading it, the
//! way Linux clears pages on aarch64. The block size comes from DCZID_EL0
//! (4 << BS bytes), and the instruction is prohibited where its DZP bit is
//! set (then [`zva_block_bytes`] is `None`).

/// The DC ZVA block in bytes, or `None` where DC ZVA is prohibited.
pub fn zva_block_bytes() -> Option<usize> {
    let dczid: u64;
    // SAFETY: DCZID_EL0 is readable at EL0 on every aarch64 CPU.
    unsafe { std::arch::asm!("mrs {0}, dczid_el0", out(reg) dczid, options(nomem, nostack, preserves_flags)) };
    (dczid & 0x10 == 0).then_some(4usize << (dczid & 0xf))
}

/// Zeroes `len` u64 words at `ptr`: ordinary stores to the first block
/// boundary, DC ZVA for every whole block, ordinary stores for the rest.
/// Stores zero whatever `_value` is (the page-init store limit's ABI).
/// Returns `len`, or 0 where DC ZVA is prohibited (nothing written).
///
/// # Safety
/// `ptr` must be valid for writing `len` u64.
#[inline(never)]
pub unsafe fn store_dc_zva(ptr: *mut u64, len: usize, _value: u64) -> u64 {
    let Some(block) = zva_block_bytes() else { return 0 };
    let words = block / 8;
    let head = ptr.align_offset(block).min(len);
    let body_end = head + (len - head) / words * words;
    // SAFETY: every index written is below len.
    unsafe {
        for i in (0..head).chain(body_end..len) {
            ptr.add(i).write(0);
        }
        let mut i = head;
        while i < body_end {
            // DC ZVA zeroes the whole aligned block holding the address,
            // which lies inside the buffer (block-aligned, before body_end).
            std::arch::asm!("dc zva, {0}", in(reg) ptr.add(i), options(nostack, preserves_flags));
            i += words;
        }
    }
    len as u64
}
