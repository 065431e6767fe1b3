//! Test helper for the disassembly tests of every architecture: how much
//! of this process's own code can be read from an address.

/// Bytes readable from `addr` to the end of its mapping (0 if unmapped or
/// not readable), from /proc/self/maps.
pub fn readable_from(addr: usize) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .find_map(|l| {
            let (range, rest) = l.split_once(' ')?;
            let (a, b) = range.split_once('-')?;
            let (a, b) = (usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?);
            (a <= addr && addr < b && rest.starts_with('r')).then_some(b - addr)
        })
        .unwrap_or(0)
}
