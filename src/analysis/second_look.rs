//! A second look at a verdict: the same verdict computed again on two
//! disjoint halves of the repetitions (even and odd, so that both halves
//! span the whole run and a drift of the host falls on both). Where the
//! halves disagree the verdict is "unstable" and yields no advice; the
//! report says which verdicts were stable.

pub use memperf_model::analysis::second_look::SecondLook;

/// The items at even (`parity` 0) or at odd (1) positions.
pub fn half<T: Clone>(items: &[T], parity: usize) -> Vec<T> {
    items.iter().skip(parity).step_by(2).cloned().collect()
}

/// Items at even and at odd positions.
pub fn halves<T: Clone>(items: &[T]) -> (Vec<T>, Vec<T>) {
    (half(items, 0), half(items, 1))
}

/// The verdict of `judge` on each half of `items`, compared; not checked
/// when a half would hold fewer than `min_per_half` items.
pub fn look<T: Clone, V: PartialEq + std::fmt::Display>(
    items: &[T],
    min_per_half: usize,
    judge: impl Fn(&[T]) -> V,
) -> SecondLook {
    let (a, b) = halves(items);
    if b.len() < min_per_half.max(1) {
        return SecondLook::NotChecked {
            why: format!("{} repetitions, {} needed to judge each half apart", items.len(), 2 * min_per_half.max(1)),
        };
    }
    SecondLook::of(judge(&a), judge(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_interleave_and_cover_every_item_once() {
        let (a, b) = halves(&[1, 2, 3, 4, 5]);
        assert_eq!((a, b), (vec![1, 3, 5], vec![2, 4]));
    }

    #[test]
    fn agreeing_halves_are_stable_and_disagreeing_ones_are_not() {
        let sign = |v: &[f64]| if v.iter().sum::<f64>() > 0.0 { "up" } else { "down" };
        assert!(matches!(look(&[1.0, 2.0, 1.5, 3.0], 2, sign), SecondLook::Stable { .. }));
        let s = look(&[1.0, -2.0, 1.5, -3.0], 2, sign);
        assert!(s.is_unstable());
        assert_eq!(s.describe(), "unstable: up on one half, down on the other");
        assert!(matches!(look(&[1.0, 2.0, 3.0], 2, sign), SecondLook::NotChecked { .. }));
    }
}
