//! The stream kernel of each shape for this CPU: the read shapes of
//! McCalpin's 2010 Opteron article (scalar, vector, vector with software
//! prefetch) and the write side (store, copy, triad, update, read:write
//! mixes, with and without non-temporal stores), each over the one ABI of
//! [`super::abi`].

use super::abi::{Hint, StreamKernel, StreamKernelInfo, StreamShape};
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use crate::error::Error;
use crate::error::Result;

/// The kernel for `shape` (and `hint`, for prefetch kernels) on this CPU.
pub fn stream_kernel(shape: StreamShape, hint: Option<Hint>) -> Result<(StreamKernel, StreamKernelInfo)> {
    let info = |isa: &str| {
        let (traffic, flops_per_element) = shape.traffic();
        StreamKernelInfo {
            shape,
            hint: if shape == StreamShape::SimdPrefetch { hint } else { None },
            isa: isa.to_string(),
            traffic,
            flops_per_element,
        }
    };
    if let Some(op) = super::write::Op::of(shape) {
        return super::write::kernel(op, shape.non_temporal()).map(|(k, isa)| (k, info(isa)));
    }
    match shape {
        StreamShape::Sum1 => Ok((super::portable::sum1 as StreamKernel, info("scalar"))),
        StreamShape::Sum4 => Ok((super::portable::sum4 as StreamKernel, info("scalar"))),
        _ => simd_kernel(shape, hint).map(|(k, isa)| (k, info(isa))),
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn simd_kernel(shape: StreamShape, hint: Option<Hint>) -> Result<(StreamKernel, &'static str)> {
    use super::arch as x;
    let prefetch = match shape {
        StreamShape::SimdPrefetch => Some(hint.unwrap_or(Hint::T0)),
        _ => None,
    };
    Ok(x::simd_for(x::best_isa(), prefetch))
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn simd_kernel(shape: StreamShape, _hint: Option<Hint>) -> Result<(StreamKernel, &'static str)> {
    match shape {
        StreamShape::Simd => Ok((super::portable::simd8 as StreamKernel, "portable")),
        _ => Err(Error::unsatisfiable(
            "simd-prefetch is implemented for x86_64 and aarch64 only in this build",
            "use --kernel simd, sum4 or sum1",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::abi::{pattern_sum, pattern_value, StreamArg};

    fn pattern(n: usize) -> Vec<f64> {
        (0..n).map(pattern_value).collect()
    }

    #[test]
    fn closed_form_matches_the_pattern() {
        let v = pattern(5000);
        for (s, l) in [(0, 0), (0, 1), (0, 1024), (3, 2000), (1023, 2), (100, 4900)] {
            assert_eq!(pattern_sum(s, l), v[s..s + l].iter().sum::<f64>(), "{s} {l}");
        }
    }

    /// Every kernel reads every element exactly once per pass (its metadata
    /// says 8 bytes read per element): the checksum equals iters × the sum,
    /// for lengths that exercise the vector loop and the scalar tail.
    #[test]
    fn every_kernel_sums_every_element_once_per_pass() {
        for len in [0usize, 1, 7, 63, 64, 65, 511, 4096 + 13] {
            // Past `len` the array holds NaN: a kernel that read beyond its
            // slice would return NaN, one that skipped or repeated an element
            // a different sum — so each element is read exactly once, the
            // 8 bytes per element its metadata claims.
            let mut v = pattern(len + 4096);
            v[len..].fill(f64::NAN);
            let arg = StreamArg::read(v.as_ptr(), len, 256);
            // The shapes whose facts say their checksum is the pattern's sum.
            let summing = memperf_model::kernels::KERNEL_FACTS
                .iter()
                .filter(|f| f.checksum == memperf_model::kernels::Checksum::PatternSum)
                .map(|f| f.shape);
            for shape in summing {
                let hints: Vec<Option<Hint>> =
                    if shape == StreamShape::SimdPrefetch { Hint::ALL.map(Some).to_vec() } else { vec![None] };
                for hint in hints {
                    let Ok((k, info)) = stream_kernel(shape, hint) else { continue };
                    assert_eq!(info.traffic.bytes_read_per_element, std::mem::size_of::<f64>() as u64);
                    assert_eq!(info.traffic.bytes_written_per_element, 0);
                    let before = v.clone();
                    // SAFETY: v holds len + 4096 elements.
                    let got = unsafe { k(3, &arg) };
                    assert_eq!(got, 3.0 * pattern_sum(0, len), "{shape} {hint:?} len {len}");
                    assert!(v.iter().zip(&before).all(|(a, b)| a.to_bits() == b.to_bits()), "a read kernel wrote");
                }
            }
        }
    }

    #[test]
    fn names_parse() {
        assert_eq!(StreamShape::parse("simd-prefetch").unwrap(), StreamShape::SimdPrefetch);
        assert_eq!(Hint::parse("NTA").unwrap(), Hint::Nta);
        assert!(StreamShape::parse("sum8").is_err());
        assert_eq!(StreamShape::parse("mix-3:1").unwrap(), StreamShape::Mix31);
        assert_eq!(StreamShape::parse("mix-2:1").unwrap(), StreamShape::Triad);
        assert_eq!(StreamShape::parse("mix-1:0").unwrap(), StreamShape::Simd);
        for s in StreamShape::all() {
            assert_eq!(StreamShape::parse(s.name()).unwrap(), s);
        }
        assert!(Hint::parse("t3").unwrap_err().message.contains("use one of t0, t1, t2, nta, w"));
    }
}
