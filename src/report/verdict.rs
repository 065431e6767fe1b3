//! The one vocabulary of A/B verdicts, as the model writes it
//! (`memperf_model::timing::said`), for the renderers.

pub use memperf_model::timing::said::*;
