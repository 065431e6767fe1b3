//! The typed outcome of each experiment: plain data, serialisable, and
//! the only thing renderers read. One variant per experiment, tagged by the
//! experiment's name in the document (`"experiment": "bandwidth"`), so a
//! document that does not decode is refused as a whole instead of
//! rendering an empty section.

pub mod bandwidth;
pub mod c2c;
pub mod calls;
pub mod context;
pub mod hugepages;
pub mod info;
pub mod latency;
pub mod loaded_latency;
pub mod numa;
pub mod page_init;
pub mod prefetch_fault;
pub mod regions;
pub mod stat;
pub mod tlb;
pub mod working_set;
pub mod wss;

use serde::{Deserialize, Serialize};

// A document holds one outcome per experiment, a dozen at most: the
// largest variant's few hundred bytes cost nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "experiment", rename_all = "kebab-case")]
pub enum Outcome {
    Info(info::Outcome),
    Bandwidth(bandwidth::Outcome),
    Latency(latency::Outcome),
    Tlb(tlb::Outcome),
    PrefetchFault(prefetch_fault::Outcome),
    PageInit(page_init::Outcome),
    Calls(calls::Outcome),
    Context(context::Outcome),
    Stat(stat::Outcome),
    Regions(regions::Outcome),
    Hugepages(hugepages::Outcome),
    WorkingSet(working_set::Outcome),
    C2c(c2c::Outcome),
    LoadedLatency(loaded_latency::Outcome),
    Numa(numa::Outcome),
    Wss(wss::Outcome),
}

impl Outcome {
    /// False when any result failed validation.
    pub fn valid(&self) -> bool {
        match self {
            Outcome::Info(_) => true,
            Outcome::Bandwidth(o) => o.valid,
            Outcome::Latency(o) => o.valid,
            Outcome::Tlb(o) => o.valid,
            Outcome::PrefetchFault(o) => o.valid,
            Outcome::PageInit(o) => o.valid,
            Outcome::Calls(o) => o.valid,
            Outcome::Context(o) => o.valid,
            Outcome::Stat(o) => o.valid,
            Outcome::Regions(o) => o.valid,
            Outcome::Hugepages(o) => o.valid,
            Outcome::WorkingSet(o) => o.valid,
            Outcome::C2c(o) => o.valid,
            Outcome::LoadedLatency(o) => o.valid,
            Outcome::Numa(o) => o.valid,
            Outcome::Wss(o) => o.valid,
        }
    }
}

/// Conversions from each experiment's outcome into the enum, and back;
/// each variant's name and the list of them.
macro_rules! outcome_conversions {
    ($($variant:ident => $module:ident : $name:literal),*) => {
        $(
        impl From<$module::Outcome> for Outcome {
            fn from(o: $module::Outcome) -> Outcome { Outcome::$variant(o) }
        }
        impl<'a> TryFrom<&'a Outcome> for &'a $module::Outcome {
            type Error = ();
            fn try_from(o: &'a Outcome) -> Result<Self, ()> {
                match o { Outcome::$variant(x) => Ok(x), _ => Err(()) }
            }
        }
        )*
        /// Every outcome's name, as the document's `experiment` tag spells it.
        pub const NAMES: &[&str] = &[$($name),*];

        impl Outcome {
            /// The experiment's name, as the CLI and the document spell it.
            pub fn name(&self) -> &'static str {
                match self { $(Outcome::$variant(_) => $name),* }
            }
        }
    };
}
outcome_conversions!(Info => info: "info", Bandwidth => bandwidth: "bandwidth", Latency => latency: "latency",
    Tlb => tlb: "tlb", PrefetchFault => prefetch_fault: "prefetch-fault", PageInit => page_init: "page-init",
    Calls => calls: "calls", Context => context: "context", Stat => stat: "stat", Regions => regions: "regions",
    Hugepages => hugepages: "hugepages", WorkingSet => working_set: "working-set", C2c => c2c: "c2c",
    LoadedLatency => loaded_latency: "loaded-latency", Numa => numa: "numa", Wss => wss: "wss");

#[cfg(test)]
mod tests {
    /// Each name is the serde tag its variant reads under.
    #[test]
    fn every_name_is_its_variants_tag() {
        for name in super::NAMES {
            let e = serde_json::from_value::<super::Outcome>(serde_json::json!({ "experiment": name })).unwrap_err();
            assert!(!e.to_string().contains("unknown variant"), "{name}: {e}");
        }
        let e = serde_json::from_value::<super::Outcome>(serde_json::json!({ "experiment": "nope" })).unwrap_err();
        assert!(e.to_string().contains("unknown variant"), "{e}");
    }
}
