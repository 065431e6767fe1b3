//! The one random generator memperf uses (chase orders, the scheduler's
//! shuffles, sample seeds): deterministic and seedable, so a run can be
//! repeated exactly. A leaf module: it imports nothing of memperf.

/// A deterministic 64-bit generator (SplitMix64): small, fast, seedable.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    /// The published SplitMix64 sequence for seed 0, and a shuffle that
    /// keeps every element.
    #[test]
    fn the_sequence_is_splitmix64s_and_shuffles_permute() {
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let mut v: Vec<u32> = (0..100).collect();
        SplitMix64(7).shuffle(&mut v);
        assert_ne!(v, (0..100).collect::<Vec<u32>>());
        v.sort();
        assert_eq!(v, (0..100).collect::<Vec<u32>>());
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
