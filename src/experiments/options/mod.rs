//! What every experiment's options share: the [`Options`] trait a
//! subcommand's own options implement (next to the experiment they drive),
//! `--quick`/`--full`, and clap's value parsers, so an option is typed and
//! checked as the command line is read, its error naming the option and the
//! fix, and its values offered to completions from the definitions the
//! parsers use.

pub mod offers;

use super::{Experiment, Preset};
use crate::error::{Error, Result};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::Args;
use std::ffi::OsStr;

/// An experiment's own options, as its subcommand takes them: clap's
/// definition and their translation into the experiment's parameters.
pub trait Options: Args {
    type Experiment: Experiment;
    /// Invocations of its subcommand (the arguments after its name) that
    /// give every option a good value: the man page's examples, and what
    /// the tests read into a plan.
    const EXAMPLES: &'static [&'static [&'static str]];
    /// The parameters: the preset's, with what was given put in.
    fn params(&self, asked: &Request) -> Result<<Self::Experiment as Experiment>::Params>;
    /// What an option asks the subcommand to do instead of measuring
    /// (`info --record DIR`), done: the text to print, or `None` to measure.
    fn instead(&self) -> Option<Result<String>> {
        None
    }
    /// The option that asks for [`Options::instead`] (`--record`), where
    /// one was given: it prints text and writes no document, so the
    /// subcommand refuses document outputs beside it.
    fn instead_option(&self) -> Option<&'static str> {
        None
    }
}

pub use super::experiment::Request;

/// `--quick` / `--full`.
#[derive(Debug, Clone, Args, Default)]
pub struct PresetArgs {
    /// The quick parameter set (the suite's default).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The full parameter set.
    #[arg(long)]
    pub full: bool,
}

impl PresetArgs {
    pub fn preset(&self, default: Preset) -> Preset {
        if self.quick {
            Preset::Quick
        } else if self.full {
            Preset::Full
        } else {
            default
        }
    }
}

/// A comma-separated list of distinct values, parsed whole by [`list`].
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T: Clone> List<T> {
    /// The values given, or `default` when the option was not.
    pub fn or(given: &Option<List<T>>, default: Vec<T>) -> Vec<T> {
        given.as_ref().map_or(default, |l| l.0.clone())
    }
}

/// clap's parser of a comma-separated list of distinct items (each through
/// `item`), offering `offers`' names to `--help` and completions.
#[derive(Clone, Copy)]
pub struct ListOf<T> {
    item: fn(&str) -> Result<T>,
    offers: Option<fn() -> Vec<String>>,
    /// What `all` stands for, where the option takes it.
    all: Option<fn() -> Vec<T>>,
}

/// The parser of a list whose items `item` reads and `offers` names.
pub fn list<T>(item: fn(&str) -> Result<T>, offers: fn() -> Vec<String>) -> ListOf<T> {
    ListOf { item, offers: Some(offers), all: None }
}

/// The parser of a list that also takes `all` for every value `all` gives.
pub fn list_or_all<T>(item: fn(&str) -> Result<T>, offers: fn() -> Vec<String>, all: fn() -> Vec<T>) -> ListOf<T> {
    ListOf { item, offers: Some(offers), all: Some(all) }
}

/// The parser of a list of free-form items (numbers, durations).
pub fn list_free<T>(item: fn(&str) -> Result<T>) -> ListOf<T> {
    ListOf { item, offers: None, all: None }
}

impl<T: PartialEq + Clone + Send + Sync + 'static> TypedValueParser for ListOf<T> {
    type Value = List<T>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<List<T>, clap::Error> {
        let (item, all) = (self.item, self.all);
        // A closure is a parser too: clap then says "invalid value 'TEXT'
        // for '--opt <LIST>': WHY" as for every typed option.
        let whole = move |t: &str| match all {
            Some(every) if t.trim() == "all" => Ok(List(every())),
            _ => crate::units::parse_list(t, item).map(List).map_err(|e| e.message),
        };
        whole.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let offers = self.offers?;
        Some(Box::new(offers().into_iter().map(PossibleValue::new)))
    }
}

/// clap's parser of one value that `item` reads and `offers` names.
#[derive(Clone, Copy)]
pub struct OneOf<T> {
    item: fn(&str) -> Result<T>,
    offers: fn() -> Vec<String>,
}

/// The parser of one value of a named set (a page policy, a kernel).
pub fn one<T>(item: fn(&str) -> Result<T>, offers: fn() -> Vec<String>) -> OneOf<T> {
    OneOf { item, offers }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for OneOf<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<T, clap::Error> {
        let item = self.item;
        let parse = move |t: &str| item(t).map_err(|e| e.message);
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.offers)().into_iter().map(PossibleValue::new)))
    }
}

/// clap's parser of one `--threads` item: a positive count, or `all` for
/// every CPU this process may use.
pub fn thread_arg(text: &str) -> std::result::Result<usize, String> {
    match text.trim() {
        "all" => Ok(crate::timing::team::allowed_cpus().len().max(1)),
        t => positive("--threads", t).map_err(|_| "must be a positive integer or all".to_string()),
    }
}

/// `--threads 1,all` (items through [`thread_arg`]): thread counts, sorted,
/// or `default`; a count given twice is refused (it would measure the same
/// thing twice), and so is more than this process may use
/// (oversubscription would measure the scheduler).
pub fn thread_counts(list: &Option<Vec<usize>>, default: Vec<usize>) -> Result<Vec<usize>> {
    let all = crate::timing::team::allowed_cpus().len().max(1);
    let mut v = list.clone().unwrap_or(default);
    if let Some(t) = v.iter().enumerate().find_map(|(i, t)| v[..i].contains(t).then_some(t)) {
        return Err(Error::usage(format!(
            "--threads: {t} appears twice in the list (all is {all} here): give each value once"
        )));
    }
    v.sort();
    if let Some(&t) = v.iter().find(|&&t| t > all) {
        return Err(Error::usage(format!("--threads {t}: this process may run on {all} CPUs; use {all} or fewer")));
    }
    Ok(v)
}

/// clap's parser of `opt`'s value as a positive integer: the option is
/// typed (`Option<usize>`), checked as the command line is read, and its
/// error names the option as memperf's own do.
pub fn positive_arg(opt: &'static str) -> impl Fn(&str) -> std::result::Result<usize, String> + Clone + Send + Sync {
    // clap names the option and the value ("invalid value '0' for
    // '--repetitions <N>'"); the reason follows.
    move |t| positive(opt, t).map_err(|_| "must be a positive integer".to_string())
}

/// clap's parser of a size above zero (`64MiB`, `4096`): the option is
/// typed (`Option<Bytes>`) and checked as the command line is read.
pub fn size_arg(text: &str) -> std::result::Result<crate::units::Bytes, String> {
    crate::units::parse_nonzero_size(text).map_err(|e| e.message)
}

/// clap's parser of `opt`'s value as a u64, decimal or 0x-hex.
pub fn u64_arg(opt: &'static str) -> impl Fn(&str) -> std::result::Result<u64, String> + Clone + Send + Sync {
    move |t| {
        crate::units::parse_u64(opt, t).map_err(|_| "is not a non-negative integer (decimal or 0x-hex)".to_string())
    }
}

/// clap's parser of a sampling interval (`wss -I`, `stat -I`): whole
/// milliseconds, at least `process::hot_set::MIN_INTERVAL_MS`.
pub fn interval_arg(text: &str) -> std::result::Result<u64, String> {
    use crate::process::hot_set::MIN_INTERVAL_MS;
    match text.trim().parse::<u64>() {
        Ok(ms) if ms >= MIN_INTERVAL_MS => Ok(ms),
        _ => Err(format!("give the interval in whole milliseconds, at least {MIN_INTERVAL_MS}")),
    }
}

/// clap's parser of a START:END:STEP range (clap names the option).
pub fn sweep_arg(text: &str) -> std::result::Result<crate::units::Sweep, String> {
    crate::units::parse_sweep(text).map_err(|e| e.message)
}

/// clap's parser of a whole number of milliseconds in `lo..=hi`.
pub fn millis_arg(lo: u64, hi: u64) -> impl Fn(&str) -> std::result::Result<u64, String> + Clone + Send + Sync {
    move |t| match t.trim().parse::<u64>() {
        Ok(ms) if (lo..=hi).contains(&ms) => Ok(ms),
        _ => Err(format!("give whole milliseconds from {lo} to {hi}")),
    }
}

/// `250`, `250ns`, `1.5us`, `20µs`, `100ms`, `1s` in nanoseconds; `name`
/// is the option's, for the error.
pub fn duration_ns(name: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => f64::NAN,
    };
    match num.parse::<f64>() {
        Ok(v) if scale.is_finite() && v >= 0.0 && v * scale < 1e12 => Ok((v * scale).round() as u64),
        _ => Err(Error::usage(format!("{name} '{text}': give a duration such as 500ns, 20us or 100ms"))),
    }
}

/// Parses a positive integer option value.
pub fn positive(name: &str, text: &str) -> Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::usage(format!("{name} '{text}' must be a positive integer"))),
    }
}

/// Thread counts and samples per cell, options `calls` and `context` share.
#[derive(Debug, clap::Args)]
pub struct CellArgs {
    /// Thread counts, pinned one per CPU; `all` for every CPU [default: 1, 2, 4 … all]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_delimiter = ',', value_parser = thread_arg)]
    pub threads: Option<Vec<usize>>,
    /// Samples per cell.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
}

impl CellArgs {
    /// (threads, repetitions) with the preset's as defaults.
    pub fn apply(&self, threads: Vec<usize>, repetitions: usize) -> Result<(Vec<usize>, usize)> {
        let reps = self.repetitions.unwrap_or(repetitions);
        Ok((thread_counts(&self.threads, threads)?, reps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_their_units() {
        assert_eq!(duration_ns("--delays", "250").unwrap(), 250);
        assert_eq!(duration_ns("--delays", "1.5us").unwrap(), 1500);
        assert_eq!(duration_ns("--delays", "20µs").unwrap(), 20_000);
        assert_eq!(duration_ns("--window", "100ms").unwrap(), 100_000_000);
        assert_eq!(duration_ns("--window", "2s").unwrap(), 2_000_000_000);
        for bad in ["", "-1", "5 parsecs", "1e3", "ms"] {
            let e = duration_ns("--delays", bad).unwrap_err();
            assert!(e.message.contains("500ns, 20us or 100ms"), "{bad}: {}", e.message);
        }
    }
}
