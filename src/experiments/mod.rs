//! Experiments: one module each, `Params → run(&Bench) → Outcome`, what
//! every experiment is and has ([`experiment`]), and the registry of them
//! ([`registry`]), generated, as their modules below are, from the one
//! list in the model (`memperf_model::experiments!`).

pub mod budget;
pub mod chase_under_load;
pub mod chases;
pub mod drift;
pub mod experiment;
pub mod observe;
pub mod options;
pub mod plan;
pub mod reanalyze;
pub mod registry;
pub mod schema;
pub mod stream_arrays;
pub mod timebox;

pub use experiment::{
    record, steal_ticks, steal_warning, Bench, Experiment, Needs, NoProgress, Planned, Preset, Progress, Request, With,
    INTERRUPTED,
};

/// A module for each experiment memperf runs (those a program writes have
/// none here).
macro_rules! experiment_modules {
    (
        suite { $($m:ident : $V:ident = $n:literal,)* }
        around { $($am:ident : $AV:ident = $an:literal,)* }
        written { $($wm:ident : $WV:ident = $wn:literal,)* }
    ) => {
        $(pub mod $m;)*
        $(pub mod $am;)*
    };
}
memperf_model::experiments!(experiment_modules);
