//! The one vocabulary of A/B verdicts: every section, the terminal, the
//! report and `compare` say a comparison's verdict through [`said`], so
//! "faster", "no change" and "not resolved" mean the same everywhere.

use super::ratio::Ratio;
use super::verdict::{Call, Scale, Verdict, CONFIDENCE};

/// Which way of a comparison is better, and its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sense {
    /// Said of a value above no change (a ratio over 1, a positive difference).
    pub above: &'static str,
    /// Said of a value below no change.
    pub below: &'static str,
    /// The call the advice's action follows (a gain to take, or a loss to
    /// undo).
    pub acts_on: Call,
    /// The unit of a difference's figures (" ns"), empty for ratios.
    pub unit: &'static str,
}

/// A ratio of speeds (B's over A's): above 1 is faster.
pub const SPEED: Sense = Sense { above: "faster", below: "slower", acts_on: Call::Above, unit: "" };
/// A ratio of times (B's over A's): above 1 is slower.
pub const TIME: Sense = Sense { above: "slower", below: "faster", acts_on: Call::Below, unit: "" };
/// A ratio of speeds where the advice undoes a loss (what recovers it).
pub const SPEED_LOSS: Sense = Sense { above: "faster", below: "slower", acts_on: Call::Below, unit: "" };
/// A difference of costs in ns (B's minus A's): above 0 costs more.
pub const COST_NS: Sense = Sense { above: "costs more", below: "costs less", acts_on: Call::Below, unit: " ns" };

/// "faster ×1.31 [×1.22, ×1.40], by at least 5% (99% confidence, n = 12
/// over 3 mappings)"; "no change: …, within ±5%"; "not resolved: …, about
/// 14 more repetitions would likely resolve it"; "invalid: …".
pub fn said(v: &Verdict, sense: Sense) -> String {
    let figures = format!("{}{}", figures(v), sense.unit);
    let t = format!("{}{}", threshold(v), if v.scale == Scale::Difference { sense.unit } else { "" });
    let basis = basis(v);
    match v.call {
        Call::Above | Call::Below => {
            let word = if v.call == Call::Above { sense.above } else { sense.below };
            let least = if v.beyond_threshold { format!(", by at least {t}") } else { String::new() };
            format!("{word} {figures}{least} ({basis})")
        }
        Call::NoChange => format!("no change: {figures}, within ±{t} ({basis})"),
        Call::NotResolved if !(v.low.is_finite() && v.high.is_finite()) => format!(
            "not resolved: {} repetition{} give no {:.0}% interval; about {} more would likely resolve it",
            v.n,
            if v.n == 1 { "" } else { "s" },
            CONFIDENCE * 100.0,
            v.more_repetitions.unwrap_or(1)
        ),
        Call::NotResolved => format!(
            "not resolved: {figures} holds no change and changes beyond ±{t} ({basis}); {}",
            more(v.more_repetitions.unwrap_or(1), v.n)
        ),
        Call::Invalid => "invalid: a check of the measurement failed".into(),
    }
}

/// "about 14 more repetitions would likely resolve it", or, past ten
/// times as many as it has, that the change is too near the threshold.
fn more(more: usize, n: usize) -> String {
    if more > 10 * n.max(10) {
        format!("more than {} more repetitions: the change lies too near the threshold to resolve", 10 * n.max(10))
    } else {
        format!("about {more} more repetition{} would likely resolve it", if more == 1 { "" } else { "s" })
    }
}

/// The verdict of `r` at the default threshold, said.
pub fn ratio_said(r: &Ratio, sense: Sense) -> String {
    said(&r.verdict(), sense)
}

/// "×1.310 [×1.220, ×1.400]", or "+5.20 [+4.80, +5.60]" for differences.
pub fn figures(v: &Verdict) -> String {
    match v.scale {
        Scale::Ratio => format!("×{:.3} [×{:.3}, ×{:.3}]", v.estimate, v.low, v.high),
        Scale::Difference => format!("{:+.2} [{:+.2}, {:+.2}]", v.estimate, v.low, v.high),
    }
}

/// "5%", or "0.50" in the values' unit on the difference scale.
fn threshold(v: &Verdict) -> String {
    match v.scale {
        Scale::Ratio => format!("{:.0}%", v.threshold * 100.0),
        Scale::Difference => format!("{:.2}", v.threshold),
    }
}

/// "99% confidence, n = 12 over 3 mappings".
fn basis(v: &Verdict) -> String {
    let mappings = if v.mappings > 1 { format!(" over {} mappings", v.mappings) } else { String::new() };
    format!("{:.0}% confidence, n = {}{mappings}", CONFIDENCE * 100.0, v.n)
}

/// One line of A/B advice: "{subject}: {verdict}", then what to do
/// (`then`) where the verdict is the call the sense acts on, by at least
/// the threshold: a change that may be smaller is said, not acted on. The
/// line ends with one full stop, whether or not `then` brings its own.
pub fn line(subject: &str, r: &Ratio, sense: Sense, then: Option<&str>) -> String {
    let v = r.verdict();
    let acted = v.call == sense.acts_on && v.beyond_threshold;
    let then = then.filter(|_| acted).map_or(String::new(), |t| format!(": {}", t.trim_end_matches('.')));
    format!("{subject}: {}{then}.", said(&v, sense))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_is_said_in_its_words() {
        let fast = Ratio::of(&[1.30; 12]).unwrap();
        let s = ratio_said(&fast, SPEED);
        assert!(s.starts_with("faster ×1.300 [×1.300, ×1.300], by at least 5% (99% confidence, n = 12)"), "{s}");
        assert!(ratio_said(&fast, TIME).starts_with("slower"));
        let same: Vec<f64> = (0..12).map(|i| 1.0 + (i as f64 - 5.5) * 0.002).collect();
        assert!(ratio_said(&Ratio::of(&same).unwrap(), SPEED).starts_with("no change: ×1.000"));
        let few = ratio_said(&Ratio::of(&[1.3, 1.2, 1.4]).unwrap(), SPEED);
        assert_eq!(few, "not resolved: 3 repetitions give no 99% interval; about 7 more would likely resolve it");
        let wide: Vec<f64> = (0..12).map(|i| 1.0 + (i as f64 - 5.0) * 0.05).collect();
        let w = ratio_said(&Ratio::of(&wide).unwrap(), SPEED);
        assert!(w.starts_with("not resolved: ×") && w.contains("more repetitions"), "{w}");
        let small: Vec<f64> = (0..12).map(|i| 1.02 + (i as f64 - 5.5) * 0.001).collect();
        let s = line("Huge pages", &Ratio::of(&small).unwrap(), SPEED, Some("use them"));
        assert!(s.starts_with("Huge pages: faster ×1.020") && !s.contains("use them"), "{s}");
        let l = line("Huge pages", &fast, SPEED, Some("use them"));
        assert!(l.starts_with("Huge pages: faster") && l.ends_with(": use them."), "{l}");
        let two = line("Huge pages", &fast, SPEED, Some("use them. Time the program."));
        assert!(two.ends_with(": use them. Time the program."), "one full stop: {two}");
        let quiet = line("Huge pages", &Ratio::of(&same).unwrap(), SPEED, Some("use them"));
        assert!(!quiet.contains("use them"), "{quiet}");
        let worse = line("Huge pages", &fast, TIME, Some("use them"));
        assert!(worse.starts_with("Huge pages: slower") && !worse.contains("use them"), "{worse}");
    }
}
