//! How the prefetch-fault experiment's list walks prefetch.

crate::named_enum! {
    /// How the list walk prefetches `ahead` (in the order the experiment
    /// measures them, `None` the baseline).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, schemars::JsonSchema)]
    pub enum Guard ("list walk") {
        /// No prefetch.
        None = "none",
        /// Prefetch `ahead` even when it is null.
        Unguarded = "unguarded",
        /// Prefetch `ahead` only when it is not null.
        Guarded = "guarded",
    }
}
