//! Naming a knee: a knee is attributed to a cache or TLB level only when
//! it lies within a factor of two of that level's size (or reach); one
//! level names at most one knee, the nearest. Anything else is
//! "unattributed", with its position, rather than a name taken by order.

pub use memperf_model::analysis::attribution::{Attribution, KnownLevel};

/// How far apart a knee and a size may be, as a factor.
pub const WITHIN: f64 = 2.0;

/// Attributes each knee position (sorted ascending) to the nearest known
/// level within [`WITHIN`] (in log distance), each level at most once.
pub fn attribute(knees: &[f64], known: &[KnownLevel]) -> Vec<Attribution> {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (k, &x) in knees.iter().enumerate() {
        for (l, level) in known.iter().enumerate() {
            if x > 0.0 && level.size > 0.0 {
                let d = (x / level.size).ln().abs();
                if d <= WITHIN.ln() + 1e-9 {
                    pairs.push((d, k, l));
                }
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = vec![Attribution::Unattributed; knees.len()];
    let mut used = vec![false; known.len()];
    for (_, k, l) in pairs {
        if matches!(out[k], Attribution::Unattributed) && !used[l] {
            out[k] = Attribution::Level { name: known[l].name.clone(), size: known[l].size };
            used[l] = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Vec<KnownLevel> {
        [("L1", 48.0 * 1024.0), ("L2", 1024.0 * 1024.0), ("L3", 32.0 * 1024.0 * 1024.0)]
            .iter()
            .map(|(n, s)| KnownLevel { name: n.to_string(), size: *s })
            .collect()
    }

    #[test]
    fn a_knee_far_from_every_level_is_unattributed() {
        // The expert's case: a knee at 32 KiB on a 48 KiB / 1 MiB / 32 MiB CPU
        // is L1 (within ×2), never "L2" by order; one at 8 MiB is nothing.
        let a = attribute(&[32.0 * 1024.0, 8.0 * 1024.0 * 1024.0], &known());
        assert_eq!(a[0], Attribution::Level { name: "L1".into(), size: 48.0 * 1024.0 });
        assert_eq!(a[1], Attribution::Unattributed);
    }

    #[test]
    fn each_level_names_one_knee_the_nearest() {
        let a = attribute(&[40.0 * 1024.0, 64.0 * 1024.0], &known());
        assert_eq!(a[0], Attribution::Level { name: "L1".into(), size: 48.0 * 1024.0 });
        assert_eq!(a[1], Attribution::Unattributed);
        assert!(attribute(&[], &known()).is_empty());
    }
}
