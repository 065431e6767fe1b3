//! The values an option offers: listed in `--help` and completed by the
//! shell scripts `memperf completions` writes, from the same definitions
//! the parsers use (the enums' names, the registry, the event tables).
//!
//! A list option is typed through [`super::list`], which takes one of
//! these as its offers. [`Offers`] is for the few options read later,
//! against the machine (`-e`, whose names depend on the CPU) or by another
//! library (`completions SHELL`): it accepts any text and only tells clap
//! what to offer.

use clap::builder::{PossibleValue, TypedValueParser};
use std::ffi::OsStr;

/// A text option that offers these names to completions and `--help`.
#[derive(Clone, Copy)]
pub struct Offers(pub fn() -> Vec<String>);

impl TypedValueParser for Offers {
    type Value = String;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter().map(PossibleValue::new)))
    }
}

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<String> {
    all.iter().map(|&x| name(x).to_string()).collect()
}

/// `--pages`: the page policies.
pub fn pages() -> Vec<String> {
    names(&crate::memory::PagePolicy::ALL, crate::memory::PagePolicy::name)
}

/// `--kernel` of `bandwidth`: every loop shape and the read:write mixes.
pub fn kernels() -> Vec<String> {
    let mut v = names(&crate::kernels::StreamShape::all(), crate::kernels::StreamShape::name);
    v.extend(["mix-1:0", "mix-1:1", "mix-2:1"].map(String::from));
    v
}

/// `--kernel` of `loaded-latency`: what a loader may run.
pub fn loaders() -> Vec<String> {
    let mut v = vec!["simd".to_string()];
    v.extend(names(&crate::kernels::StreamShape::WRITE, crate::kernels::StreamShape::name));
    v.extend(["mix-1:1", "mix-2:1"].map(String::from));
    v
}

/// `--hint`: the prefetch instructions.
pub fn hints() -> Vec<String> {
    names(&crate::kernels::Hint::ALL, crate::kernels::Hint::name)
}

/// `--hint` of `bandwidth`, which also takes `all`.
pub fn hints_or_all() -> Vec<String> {
    let mut v = hints();
    v.push("all".into());
    v
}

/// `--only` and `--skip`: the suite's experiments, from the registry.
pub fn suite() -> Vec<String> {
    crate::experiments::registry::suite_names().into_iter().map(String::from).collect()
}

/// `-e`: the generic and software events, and every CPU table's named ones.
pub fn events() -> Vec<String> {
    use crate::counters::events;
    let mut v = events::generic_names();
    v.extend(events::named_tables().into_iter().flat_map(|t| t.events.into_keys()));
    v.sort();
    v.dedup();
    v
}

/// `--linkage` of `calls`.
pub fn linkages() -> Vec<String> {
    names(&crate::kernels::calls::Linkage::ALL, crate::kernels::calls::Linkage::name)
}

/// `--ops` of `context`.
pub fn saves() -> Vec<String> {
    names(&crate::kernels::context::SaveOp::ALL, crate::kernels::context::SaveOp::name)
}

/// `--handoff` of `c2c`.
pub fn handoffs() -> Vec<String> {
    names(&crate::kernels::c2c::Handoff::ALL, crate::kernels::c2c::Handoff::name)
}

/// `--targets` of `prefetch-fault`.
pub fn targets() -> Vec<String> {
    use crate::model::outcome::prefetch_fault::Target;
    names(&Target::ALL, Target::name)
}

/// `completions SHELL`.
pub fn shells() -> Vec<String> {
    use clap::ValueEnum;
    clap_complete::Shell::value_variants().iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name offered parses: completions never offer what is refused.
    #[test]
    fn every_offered_name_parses() {
        use crate::kernels::{c2c::Handoff, calls::Linkage, context::SaveOp, Hint, StreamShape};
        for p in pages() {
            crate::memory::PagePolicy::parse(&p).unwrap();
        }
        for k in kernels().iter().chain(&loaders()) {
            StreamShape::parse(k).unwrap();
        }
        for h in hints() {
            Hint::parse(&h).unwrap();
        }
        for l in linkages() {
            Linkage::parse(&l).unwrap();
        }
        for s in saves() {
            SaveOp::parse(&s).unwrap();
        }
        for h in handoffs() {
            Handoff::parse(&h).unwrap();
        }
        for s in shells() {
            crate::cli::completions(&s).unwrap();
        }
        let cpu = crate::machine::collect().cpu.identity;
        let unknown: Vec<String> = events()
            .into_iter()
            .filter(|e| crate::counters::events::resolve(e, &cpu).is_err())
            .filter(|e| !crate::counters::events::named_tables().iter().any(|t| t.events.contains_key(e)))
            .collect();
        assert!(unknown.is_empty(), "offered but not an event: {unknown:?}");
        assert_eq!(suite().first().map(String::as_str), Some("info"));
    }
}
