//! The inner loop of the 2002 sample application: for each index, one
//! random row of three float arrays,
//! `tmp -= f1[j]*f1[j] + f2[j]*f2[j] - f3[j]*f3[j]`.
//!
//! Each row is summed in f32 over eight independent lanes (so the loop
//! vectorises and memory, not one addition chain, sets its pace), and the
//! row sums are accumulated in f64. [`reference`] recomputes the same in
//! f64 throughout, for validation.

/// Floating-point operations per element: three multiplies, an add, a
/// subtract, and the subtract into `tmp`.
pub const FLOPS_PER_ELEMENT: u64 = 6;
/// Bytes read per element: one f32 of each array.
pub const BYTES_PER_ELEMENT: u64 = 12;
/// Relative tolerance of the f32 row sums against the f64 recomputation,
/// over the sum of the terms' magnitudes: eight lanes of at most
/// row/8 additions, each off by at most 2^-24 of its running magnitude,
/// bound the error well below 1e-5 for rows of up to 4096 elements.
pub const TOLERANCE: f64 = 1e-5;

const LANES: usize = 8;

/// The sum over `rows` (each `row_len` long, a multiple of 8).
#[inline(never)]
pub fn doit(f1: &[f32], f2: &[f32], f3: &[f32], rows: &[u32], row_len: usize) -> f64 {
    let mut tmp = 0.0f64;
    for &r in rows {
        let b = r as usize * row_len;
        let (a1, a2, a3) = (&f1[b..b + row_len], &f2[b..b + row_len], &f3[b..b + row_len]);
        let mut acc = [0.0f32; LANES];
        for ((c1, c2), c3) in a1.chunks_exact(LANES).zip(a2.chunks_exact(LANES)).zip(a3.chunks_exact(LANES)) {
            for k in 0..LANES {
                acc[k] += c1[k] * c1[k] + c2[k] * c2[k] - c3[k] * c3[k];
            }
        }
        tmp -= acc.iter().map(|&x| x as f64).sum::<f64>();
    }
    tmp
}

/// The same sum in f64, and the sum of the terms' magnitudes.
pub fn reference(f1: &[f32], f2: &[f32], f3: &[f32], rows: &[u32], row_len: usize) -> (f64, f64) {
    let (mut tmp, mut magnitude) = (0.0f64, 0.0f64);
    for &r in rows {
        let b = r as usize * row_len;
        for j in b..b + row_len {
            let (x, y, z) = (f1[j] as f64, f2[j] as f64, f3[j] as f64);
            tmp -= x * x + y * y - z * z;
            magnitude += x * x + y * y + z * z;
        }
    }
    (tmp, magnitude)
}

/// Whether `tmp` agrees with the f64 recomputation within [`TOLERANCE`].
pub fn validate(tmp: f64, reference: (f64, f64)) -> bool {
    tmp.is_finite() && (tmp - reference.0).abs() <= TOLERANCE * reference.1.max(f64::MIN_POSITIVE)
}

/// The value of element `j` of array `which` (0, 1, 2): in [0.5, 1.5), not
/// periodic with any row length, the same on every page policy.
pub fn element(which: u32, j: usize) -> f32 {
    let mut x = (j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ((which as u64 + 1) << 56);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    0.5 + (x >> 40) as f32 / (1u64 << 24) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let a = |w| (0..n).map(|j| element(w, j)).collect::<Vec<f32>>();
        (a(0), a(1), a(2))
    }

    #[test]
    fn the_sum_matches_the_f64_recomputation_and_a_corrupted_one_does_not() {
        let row = 512;
        let (f1, f2, f3) = arrays(row * 64);
        let rows: Vec<u32> = (0..1000u32).map(|i| (i * 37) % 64).collect();
        let tmp = doit(&f1, &f2, &f3, &rows, row);
        let r = reference(&f1, &f2, &f3, &rows, row);
        assert!(validate(tmp, r), "{tmp} vs {}", r.0);
        // One row of f3 lost (zeroed) in memory: the sum is wrong.
        let mut bad = f3.clone();
        let at = rows[0] as usize * row;
        bad[at..at + row].iter_mut().for_each(|x| *x = 0.0);
        let corrupted = doit(&f1, &f2, &bad, &rows, row);
        assert!(!validate(corrupted, r), "a corrupted array must not validate");
        assert!(!validate(tmp + r.1 * 1e-4, r));
        assert!(!validate(f64::NAN, r));
    }

    #[test]
    fn elements_lie_in_their_range() {
        for j in 0..10_000 {
            let v = element(1, j);
            assert!((0.5..1.5).contains(&v));
        }
        assert_ne!(element(0, 7), element(1, 7));
    }
}
