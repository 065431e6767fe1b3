//! How the c2c experiment hands a cache line between two cores.

crate::named_enum! {
    /// How the line changes hands.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, schemars::JsonSchema)]
    pub enum Handoff ("handoff") {
        LoadStore = "load-store",
        Cas = "cas",
    }
}
