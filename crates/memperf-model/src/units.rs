//! Units as types: `Bytes` and `Nanos` in code wherever a field holds one
//! size or one duration, SI base units (with a unit suffix on the key) in
//! JSON. Rates and summaries of many samples are f64 named for their unit
//! (`bytes_per_s`, `samples_ns`). Also the shared parsers for the command-line
//! conventions: IEC sizes (`4KiB`, `512MiB`, plain numbers are bytes) and
//! ranges `START:END:STEP`.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A count of bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A duration in nanoseconds, as a float: per-operation figures are fractional.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Nanos(pub f64);

/// The figure alone, as f64 shows it (`{:.1}` and the like apply): the
/// text around it says "ns".
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;
pub const GIB: u64 = 1024 * MIB;
pub const TIB: u64 = 1024 * GIB;

impl Bytes {
    pub fn get(self) -> u64 {
        self.0
    }
    /// Rounds up to a multiple of `to` (a power of two or any non-zero value).
    pub fn round_up(self, to: u64) -> Bytes {
        Bytes(self.0.div_ceil(to) * to)
    }
    /// The largest power of two not above this (1 byte for 0).
    pub fn pow2_floor(self) -> Bytes {
        Bytes(1u64 << (63 - self.0.max(1).leading_zeros()))
    }
}

impl fmt::Display for Bytes {
    /// Exact, in the largest IEC unit that states it with at most three
    /// decimals (1280 KiB is "1.25MiB", 1100 KiB "1100KiB"), else in bytes:
    /// a size memperf states reads back as the same number of bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
        for (scale, name) in units {
            if self.0 < scale {
                continue;
            }
            let (whole, rest) = (self.0 / scale, self.0 % scale);
            // The fewest decimals (up to three) that state `rest` exactly.
            let exact = (0..=3u32).find(|&d| (u128::from(rest) * 10u128.pow(d)) % u128::from(scale) == 0);
            if let Some(d) = exact {
                let fraction = u128::from(rest) * 10u128.pow(d) / u128::from(scale);
                return if d == 0 {
                    write!(f, "{whole}{name}")
                } else {
                    write!(f, "{whole}.{fraction:0width$}{name}", width = d as usize)
                };
            }
        }
        write!(f, "{}B", self.0)
    }
}

/// "0.4 s", "41 s", "3 min 20 s": a duration for people.
pub fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else {
        let r = s.round() as u64;
        format!("{} min {} s", r / 60, r % 60)
    }
}

/// Parses `4KiB`, `512MiB`, `2GiB`, `1TiB`, `4k`, `2m`, `1g`, `64K` or a
/// plain number of bytes. Units are always powers of 1024.
pub fn parse_size(text: &str) -> Result<Bytes> {
    if text.trim() != text {
        return Err(Error::usage(format!("size '{text}' has spaces around it: give it as {}", text.trim())));
    }
    let t = text;
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || fraction.contains('.') || (number.contains('.') && fraction.is_empty()) {
        return Err(Error::usage(format!(
            "malformed size '{text}': expected a number with an optional IEC unit, e.g. 512MiB or 1.5GiB"
        )));
    }
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => KIB,
        "m" | "mib" => MIB,
        "g" | "gib" => GIB,
        "t" | "tib" => TIB,
        other => {
            return Err(Error::usage(format!("unknown size unit '{other}' in '{text}': use B, KiB, MiB, GiB or TiB")))
        }
    };
    let too_large = || Error::usage(format!("size '{text}' is too large"));
    // Exact arithmetic: 1.5GiB is 1610612736 bytes; 1.3B is no whole number.
    let digits: u128 = format!("{whole}{fraction}").parse().map_err(|_| too_large())?;
    let denominator = 10u128.checked_pow(fraction.len() as u32).ok_or_else(too_large)?;
    let scaled = digits.checked_mul(scale as u128).ok_or_else(too_large)?;
    if scaled % denominator != 0 {
        return Err(Error::usage(format!("size '{text}' is not a whole number of bytes")));
    }
    u64::try_from(scaled / denominator).map(Bytes).map_err(|_| too_large())
}

/// Parses a size that must be at least one byte.
pub fn parse_nonzero_size(text: &str) -> Result<Bytes> {
    let b = parse_size(text)?;
    if b.0 == 0 {
        return Err(Error::usage(format!("size '{text}' must be greater than zero")));
    }
    Ok(b)
}

/// An inclusive arithmetic range `START:END:STEP` of non-negative integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sweep {
    pub start: u64,
    pub end: u64,
    pub step: u64,
}

impl Sweep {
    pub fn single(value: u64) -> Self {
        Sweep { start: value, end: value, step: 1 }
    }
    /// Points in the range, without building it.
    pub fn count(&self) -> u64 {
        ((self.end - self.start) / self.step).saturating_add(1)
    }

    pub fn values(&self) -> Vec<u64> {
        (0..self.count()).map(|i| self.start + i * self.step).collect()
    }
}

impl fmt::Display for Sweep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.start, self.end, self.step)
    }
}

/// Parses `START:END:STEP`, `START:END` (step 1) or a single value.
pub fn parse_sweep(text: &str) -> Result<Sweep> {
    let bad =
        |why: &str| Error::usage(format!("malformed range '{text}': {why} (expected START:END:STEP, e.g. 0:1024:32)"));
    let parts: Vec<&str> = text.trim().split(':').collect();
    let num = |s: &str| s.trim().parse::<u64>().map_err(|_| bad(&format!("'{s}' is not a non-negative integer")));
    let sweep = match parts.as_slice() {
        [v] => Sweep::single(num(v)?),
        [a, b] => Sweep { start: num(a)?, end: num(b)?, step: 1 },
        [a, b, c] => Sweep { start: num(a)?, end: num(b)?, step: num(c)? },
        _ => return Err(bad("too many ':'")),
    };
    if sweep.step == 0 {
        return Err(bad("STEP must be greater than zero"));
    }
    if sweep.end < sweep.start {
        return Err(bad("END is below START"));
    }
    if sweep.count() > 100_000 {
        return Err(bad("more than 100000 points"));
    }
    Ok(sweep)
}

/// Splits a comma-separated list, dropping empty items, and parses each;
/// an entry given twice is refused (it would measure the same thing twice
/// and print duplicate rows).
pub fn parse_list<T: PartialEq>(text: &str, item: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    let mut items: Vec<T> = Vec::new();
    for t in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let v = item(t)?;
        if items.contains(&v) {
            return Err(Error::usage(format!("'{t}' appears twice in the list '{text}': give each value once")));
        }
        items.push(v);
    }
    if items.is_empty() {
        return Err(Error::usage(format!("empty list '{text}'")));
    }
    Ok(items)
}

/// Prefixes a usage error with the option it came from (`--ahead: …`).
pub fn named<T>(option: &str, r: Result<T>) -> Result<T> {
    r.map_err(|e| Error { message: format!("{option}: {}", e.message), ..e })
}

/// Parses a non-negative integer, decimal or hex (`0x…`, as memperf prints seeds).
pub fn parse_u64(name: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => t.replace('_', "").parse(),
    };
    parsed.map_err(|_| Error::usage(format!("{name} '{text}' is not a non-negative integer (decimal or 0x-hex)")))
}

/// A percentage such as `2%` or `2` (meaning 2%), as a fraction in
/// (0, 1): `--precision 2%` is 0.02.
pub fn parse_percent(name: &str, text: &str) -> Result<f64> {
    let t = text.trim();
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => Err(Error::usage(format!("{name} '{text}': give a percentage above 0 and below 100, e.g. {name} 2%"))),
    }
}

/// `1234567` as `1,234,567`.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A figure for a reader: times in the unit that keeps 1–999 of them
/// (20650184 ns reads "20.7 ms"), other units as given, three significant
/// digits at most (never fewer decimals than two for a figure below 10).
pub fn readable(value: f64, unit: &str) -> String {
    const TIME: [(&str, f64); 4] = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];
    let (value, unit) = match TIME.iter().position(|(u, _)| *u == unit) {
        Some(i) if value.is_finite() && value != 0.0 => {
            let seconds = value * TIME[i].1;
            let (u, scale) = TIME.iter().rev().find(|(_, s)| seconds.abs() >= *s).copied().unwrap_or(TIME[0]);
            (seconds / scale, u.to_string())
        }
        _ => (value, unit.to_string()),
    };
    let digits = if value.abs() >= 100.0 {
        0
    } else if value.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}").trim_end().to_string()
}

/// The CPUs (or nodes) of a sysfs list such as `0-3,8,10-11`; malformed
/// parts are left out.
pub fn cpu_list(text: &str) -> Vec<usize> {
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .flat_map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if a <= b => (a..=b).collect(),
                _ => Vec::new(),
            },
            None => p.parse().into_iter().collect(),
        })
        .collect()
}

/// CPUs written as a list such as `0-3,8,10-11` (sorted, runs joined).
pub fn cpu_list_text(cpus: &[usize]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", v[i], v[j]) } else { v[i].to_string() });
        i = j + 1;
    }
    parts.join(",")
}

/// Counts the CPUs in a list such as `0-3,8,10-11`.
pub fn count_cpu_list(list: &str) -> usize {
    cpu_list(list).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow2_floor_rounds_down_to_a_power_of_two() {
        for (b, want) in [(0, 1), (1, 1), (3 * MIB, 2 * MIB), (GIB, GIB), (GIB + 1, GIB), (5_999_000_000, 4 * GIB)] {
            assert_eq!(Bytes(b).pow2_floor(), Bytes(want), "{b}");
        }
    }

    #[test]
    fn cpu_lists_are_written_as_runs() {
        assert_eq!(cpu_list_text(&[8, 0, 1, 2, 3, 10, 11]), "0-3,8,10-11");
        assert_eq!(cpu_list_text(&[]), "");
        assert_eq!(cpu_list(&cpu_list_text(&[5, 6, 9])), [5, 6, 9]);
    }

    #[test]
    fn sizes_take_iec_units() {
        assert_eq!(parse_size("4KiB").unwrap(), Bytes(4096));
        assert_eq!(parse_size("512MiB").unwrap(), Bytes(512 * MIB));
        assert_eq!(parse_size("2GiB").unwrap(), Bytes(2 * GIB));
        assert_eq!(parse_size("2g").unwrap(), Bytes(2 * GIB));
        assert_eq!(parse_size("1000").unwrap(), Bytes(1000));
        assert_eq!(parse_size("64 K").unwrap(), Bytes(64 * KIB));
        assert_eq!(parse_size("1.5GiB").unwrap(), Bytes(3 * GIB / 2));
        assert_eq!(parse_size("0.25KiB").unwrap(), Bytes(256));
    }

    #[test]
    fn malformed_sizes_are_usage_errors() {
        for bad in [
            "",
            "GiB",
            "12XB",
            "-4KiB",
            "1.3B",
            "1.",
            ".5K",
            "1.2.3K",
            " 5",
            "5 ",
            "99999999999999999999",
            "18446744073709551615GiB",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::Usage, "{bad}");
        }
        assert!(parse_size(" 5").unwrap_err().message.contains("spaces around it"));
        assert!(parse_size("1.3B").unwrap_err().message.contains("whole number of bytes"));
        assert!(parse_nonzero_size("0").is_err());
    }

    #[test]
    fn display_is_exact_when_whole() {
        assert_eq!(Bytes(2 * MIB).to_string(), "2MiB");
        assert_eq!(Bytes(1536 * KIB).to_string(), "1.5MiB");
        // Exact: the i7-1370P's 1,280 KiB L2, and sizes no decimal of a
        // larger unit states, read back as the same bytes.
        assert_eq!(Bytes(1280 * KIB).to_string(), "1.25MiB");
        assert_eq!(Bytes(1100 * KIB).to_string(), "1100KiB");
        assert_eq!(Bytes(MIB + 1).to_string(), "1048577B");
        assert_eq!(Bytes(9 * MIB / 8).to_string(), "1.125MiB");
        for b in [1280 * KIB, 1100 * KIB, MIB + 1, 9 * MIB / 8, 3 * GIB / 2, 4095, 480 * MIB] {
            assert_eq!(parse_size(&Bytes(b).to_string()).unwrap(), Bytes(b));
        }
        assert_eq!(Bytes(100).to_string(), "100B");
    }

    #[test]
    fn sweeps_parse_and_expand() {
        assert_eq!(parse_sweep("0:1024:256").unwrap().values(), vec![0, 256, 512, 768, 1024]);
        assert_eq!(parse_sweep("5").unwrap().values(), vec![5]);
        assert_eq!(parse_sweep("1:3").unwrap().values(), vec![1, 2, 3]);
        for bad in ["", "a:b:c", "0:10:0", "10:0:1", "1:2:3:4", "0:100000000:1"] {
            assert!(parse_sweep(bad).is_err(), "{bad}");
        }
        // Counted, not built: a huge step over the whole range is two points.
        let huge = parse_sweep("0:18446744073709551615:18446744073709551615").unwrap();
        assert_eq!(huge.count(), 2);
        assert!(parse_sweep("0:18446744073709551615:1").is_err());
    }

    #[test]
    fn lists_split_on_commas() {
        assert_eq!(parse_list("4k, 2m,", |s| Ok(s.to_string())).unwrap(), vec!["4k", "2m"]);
        assert!(parse_list(" , ", |s| Ok(s.to_string())).is_err());
        let dup = parse_list("1,1,2", |s| Ok(s.to_string())).unwrap_err();
        assert!(dup.message.contains("'1' appears twice"), "{}", dup.message);
        assert_eq!(parse_u64("--seed", "0x6d65").unwrap(), 0x6d65);
        assert_eq!(parse_u64("--seed", "42").unwrap(), 42);
        assert!(parse_u64("--seed", "-5").unwrap_err().message.contains("--seed '-5'"));
    }

    #[test]
    fn readable_figures_keep_times_in_a_fitting_unit() {
        assert_eq!(readable(20_650_184.0, "ns"), "20.7 ms");
        assert_eq!(readable(1.4, "ns"), "1.40 ns");
        assert_eq!(readable(0.0025, "s"), "2.50 ms");
        assert_eq!(readable(3.0, "s"), "3.00 s");
        assert_eq!(readable(25.17, "GB/s"), "25.2 GB/s");
        assert_eq!(readable(360.8, "ns"), "361 ns");
        assert_eq!(readable(0.0, "ns"), "0.00 ns");
    }
}
