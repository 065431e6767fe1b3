//! How the calls experiment links its chain of functions.

crate::named_enum! {
    /// How one function of the chain reaches the other.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, schemars::JsonSchema)]
    #[schemars(rename = "CallLinkage")]
    pub enum Linkage ("call variant") {
        Direct = "direct",
        Plt = "plt",
        Got = "got",
        Saves = "saves",
        Inlined = "inlined",
    }
}

impl Linkage {
    /// What the variant stands for, for the report.
    pub fn meaning(self) -> &'static str {
        match self {
            Linkage::Direct => "call/ret between two objects of one binary",
            Linkage::Plt => "between two shared libraries, through the PLT",
            Linkage::Got => "between two shared libraries built with -fno-plt (through the GOT)",
            Linkage::Saves => "direct, every callee-saved register spilled and filled",
            Linkage::Inlined => "inlining allowed: no call left",
        }
    }
}
