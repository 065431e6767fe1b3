//! The registry: every experiment once, in the suite's order, with how it
//! runs, generated from the model's one list (`memperf_model::experiments!`).
//! The suite, `--only`/`--skip` and their values and help, and the suite's
//! jobs come from here; what each experiment is (its summary, question and
//! title) is the model's [`About`].
//!
//! The consistency tests below check that every entry has an outcome, a
//! subcommand whose help is its summary, a branch in the schema, a row in
//! the README and a method page in docs/methods/.

use super::experiment::{Experiment, Request};
use super::plan::Job;
use crate::model::about::About;
use crate::model::outcome;
use crate::model::Warning;

/// How an experiment runs.
#[derive(Clone, Copy)]
pub enum Runs {
    /// In the suite (at its place in [`EXPERIMENTS`]) with the parameters
    /// it asks for there (and a note of what the machine did not allow);
    /// also on its own as a subcommand.
    Suite(fn(&Request) -> (Job, Option<Warning>)),
    /// Only as its own subcommand, around a program (`stat`, `hugepages`,
    /// `wss`).
    AroundProgram,
    /// Never by memperf: a program writes it through the region API, and
    /// `memperf report` reads it.
    FromProgram,
}

/// One experiment: what it is and how it runs.
#[derive(Clone, Copy)]
pub struct Entry {
    pub about: &'static About,
    pub runs: Runs,
}

impl Entry {
    pub fn name(&self) -> &'static str {
        self.about.name
    }

    /// The suite's job for this experiment, if the suite runs it, and what
    /// the suite should say of its parameters.
    pub fn suite_job(&self, asked: &Request) -> Option<(Job, Option<Warning>)> {
        match self.runs {
            Runs::Suite(job) => Some(job(asked)),
            Runs::AroundProgram | Runs::FromProgram => None,
        }
    }
}

/// The suite's job of `E`.
fn suite_job<E: Experiment>(asked: &Request) -> (Job, Option<Warning>) {
    let (params, note) = E::suite(asked);
    (Job::of::<E>(params), note)
}

/// [`EXPERIMENTS`], from the list.
macro_rules! entries {
    (
        suite { $($m:ident : $V:ident = $n:literal,)* }
        around { $($am:ident : $AV:ident = $an:literal,)* }
        written { $($wm:ident : $WV:ident = $wn:literal,)* }
    ) => {
        /// Every experiment, the suite's first and in the order the suite
        /// runs them.
        pub static EXPERIMENTS: &[Entry] = &[
            $(Entry { about: &outcome::$m::ABOUT, runs: Runs::Suite(suite_job::<super::$m::$V>) },)*
            $(Entry { about: &outcome::$am::ABOUT, runs: Runs::AroundProgram },)*
            $(Entry { about: &outcome::$wm::ABOUT, runs: Runs::FromProgram },)*
        ];
    };
}
memperf_model::experiments!(entries);

/// The experiments the suite runs, in order.
pub fn suite_entries() -> impl Iterator<Item = &'static Entry> {
    EXPERIMENTS.iter().filter(|e| matches!(e.runs, Runs::Suite(_)))
}

/// The names `--only` and `--skip` take, in the suite's order.
pub fn suite_names() -> Vec<&'static str> {
    suite_entries().map(Entry::name).collect()
}

/// The entry called `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    EXPERIMENTS.iter().find(|e| e.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Preset;
    use std::path::Path;

    fn read(rel: &str) -> String {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
    }

    #[test]
    fn the_registry_and_the_model_name_the_same_experiments_once_each() {
        let names: Vec<&str> = EXPERIMENTS.iter().map(Entry::name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a name twice: {names:?}");
        for a in EXPERIMENTS.iter().map(|e| e.about) {
            assert!(!a.summary.is_empty() && !a.title.is_empty() && !a.question.is_empty(), "{a:?}");
            assert!(!a.summary.contains('\n'), "{}: the summary is one line", a.name);
            assert!(!a.summary.ends_with('.'), "{}: --help lines end without a full stop, as clap writes them", a.name);
        }
    }

    /// Every outcome the document can hold belongs to an entry, and every
    /// entry has one.
    #[test]
    fn every_entry_has_an_outcome_and_every_outcome_an_entry() {
        let outcomes = crate::model::outcome::NAMES;
        for e in EXPERIMENTS {
            assert!(outcomes.contains(&e.name()), "{} has no Outcome variant", e.name());
        }
        for o in outcomes {
            assert!(find(o).is_some(), "outcome {o} has no registry entry");
        }
    }

    /// A suite entry's job is its own experiment's, and its parameters
    /// are in range.
    #[test]
    fn every_suite_job_is_its_entrys() {
        let m = crate::machine::collect();
        for e in suite_entries() {
            for preset in [Preset::Quick, Preset::Default, Preset::Full] {
                let asked = Request { preset, machine: &m, reserve_hugepages: false };
                let (job, _) = e.suite_job(&asked).unwrap();
                assert_eq!(job.name(), e.name());
                job.check().unwrap_or_else(|err| panic!("{} {preset:?}: {err}", e.name()));
            }
        }
        let asked = Request { preset: Preset::Quick, machine: &m, reserve_hugepages: false };
        assert!(find("stat").unwrap().suite_job(&asked).is_none());
    }

    /// Each entry has a subcommand whose `--help` line is its summary,
    /// except what only a program writes.
    #[test]
    fn every_entry_run_by_memperf_has_its_subcommand() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        for e in EXPERIMENTS {
            let sub = cli.find_subcommand(e.name());
            match e.runs {
                Runs::FromProgram => assert!(sub.is_none(), "{}", e.name()),
                _ => {
                    let sub = sub.unwrap_or_else(|| panic!("no subcommand {}", e.name()));
                    let help = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                    assert_eq!(help, e.about.summary, "{}", e.name());
                }
            }
        }
    }

    /// The schema knows each experiment's name and has a branch checking
    /// its outcome.
    #[test]
    fn every_entry_has_a_schema_branch() {
        let schema: serde_json::Value = serde_json::from_str(&read("schema/results.schema.json")).unwrap();
        let record = &schema["$defs"]["ExperimentRecord"];
        let names = record["properties"]["name"]["enum"].as_array().unwrap();
        let branches: Vec<&str> = record["allOf"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["if"]["properties"]["name"]["const"].as_str())
            .collect();
        for e in EXPERIMENTS {
            assert!(names.iter().any(|n| n == e.name()), "{} not in the schema's names", e.name());
            assert!(branches.contains(&e.name()), "{} has no outcome branch in the schema", e.name());
        }
        assert_eq!(names.len(), EXPERIMENTS.len(), "the schema names an experiment memperf does not have");
    }

    /// The README's subcommand table has a row for each subcommand, and
    /// says how a program writes regions; each experiment has its method
    /// page.
    #[test]
    fn every_entry_is_in_the_readme() {
        let readme = read("README.md");
        let methods = read("docs/methods/README.md");
        for e in EXPERIMENTS {
            let page = format!("docs/methods/{}.md", e.name());
            assert!(!read(&page).is_empty(), "no method page {page}");
            assert!(methods.contains(&format!("]({}.md)", e.name())), "{page} is not in docs/methods/README.md");
            match e.runs {
                Runs::FromProgram => assert!(readme.contains("MEMPERF_REGIONS"), "{}", e.name()),
                _ => assert!(readme.contains(&format!("| `memperf {}", e.name())), "no README row for {}", e.name()),
            }
        }
    }
}
