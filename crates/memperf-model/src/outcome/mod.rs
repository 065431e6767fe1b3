//! The typed outcome of each experiment: plain data, serialisable, and
//! the only thing renderers read. One variant per experiment, tagged by the
//! experiment's name in the document (`"experiment": "bandwidth"`), so a
//! document that does not decode is refused as a whole instead of
//! rendering an empty section.

use serde::{Deserialize, Serialize};

/// Every experiment memperf knows, once, in the suite's order: the one list
/// from which the model's [`Outcome`], memperf's registry and subcommands,
/// its renderers and its reanalysis are generated (each with a macro of its
/// own, given to this one). Adding an experiment is its line here and its
/// files: `outcome/<exp>.rs` here, `experiments/<exp>.rs` and
/// `report/outcome/<exp>.rs` in memperf (docs/ARCHITECTURE.md).
///
/// `suite`: run by the suite and by a subcommand of its own; `around`: a
/// subcommand around a program; `written`: written by a program through the
/// region API, never run by memperf. Each line is `module: Variant = "name"`.
#[macro_export]
macro_rules! experiments {
    ($then:ident) => {
        $then! {
            suite {
                info: Info = "info",
                gpu: Gpu = "gpu",
                bandwidth: Bandwidth = "bandwidth",
                latency: Latency = "latency",
                loaded_latency: LoadedLatency = "loaded-latency",
                curves: Curves = "curves",
                numa: Numa = "numa",
                tlb: Tlb = "tlb",
                working_set: WorkingSet = "working-set",
                prefetch_fault: PrefetchFault = "prefetch-fault",
                page_init: PageInit = "page-init",
                calls: Calls = "calls",
                context: Context = "context",
                c2c: C2c = "c2c",
            }
            around {
                stat: Stat = "stat",
                hugepages: Hugepages = "hugepages",
                wss: Wss = "wss",
            }
            written {
                regions: Regions = "regions",
            }
        }
    };
}

/// Whether an outcome's results passed validation: each outcome says (in
/// its own file), so the enum's `valid()` needs no list of its own.
pub trait Valid {
    fn valid(&self) -> bool;
}

/// The outcome modules, the enum tagged by each experiment's name, its
/// conversions, names and validity, from the list.
macro_rules! outcomes {
    ($($group:ident { $($m:ident : $V:ident = $name:literal,)* })*) => {
        $($(pub mod $m;)*)*

        // A document holds one outcome per experiment, a dozen at most: the
        // largest variant's few hundred bytes cost nothing worth a Box.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(tag = "experiment")]
        pub enum Outcome {
            $($(#[serde(rename = $name)] $V($m::Outcome),)*)*
        }

        impl Outcome {
            /// False when any result failed validation.
            pub fn valid(&self) -> bool {
                match self { $($(Outcome::$V(o) => Valid::valid(o),)*)* }
            }

            /// The experiment's name, as the CLI and the document spell it.
            pub fn name(&self) -> &'static str {
                match self { $($(Outcome::$V(_) => $name,)*)* }
            }
        }

        /// Every outcome's name, as the document's `experiment` tag spells it.
        pub const NAMES: &[&str] = &[$($($name,)*)*];

        $($(
        impl From<$m::Outcome> for Outcome {
            fn from(o: $m::Outcome) -> Outcome { Outcome::$V(o) }
        }
        impl<'a> TryFrom<&'a Outcome> for &'a $m::Outcome {
            type Error = ();
            fn try_from(o: &'a Outcome) -> Result<Self, ()> {
                match o { Outcome::$V(x) => Ok(x), _ => Err(()) }
            }
        }
        )*)*
    };
}
crate::experiments!(outcomes);

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
