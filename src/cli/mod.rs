//! The command line: the subcommands and their translation into a [`Plan`]
//! of experiments. A measuring subcommand is [`Sub`]: its experiment's own
//! options (defined beside the experiment, `experiments::<exp>::Options`),
//! `--quick`/`--full` and the outputs. Every value is typed by a clap value
//! parser (`experiments::options`), so a bad one gets one clear line naming
//! the option and the fix, and exit status 2.

pub mod around;
pub mod dispatch;
#[cfg(all(test, target_arch = "aarch64"))]
mod emulated;
pub mod export;
pub mod measure;
pub mod progress;
pub mod tools;

use crate::error::{Error, Result};
use crate::experiments::observe::Observe;
use crate::experiments::options::{self as opt, offers, List, Options, PresetArgs, Request};
use crate::experiments::plan::{Job, Plan};
use crate::experiments::Preset;
use crate::machine::Fingerprint;
use crate::model::outcome;
use clap::{Args, Parser, Subcommand};
use export::Output;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "memperf", version, about = "Measures and explains the memory system of a Linux machine")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommand of each experiment memperf runs, from the model's list:
/// a suite experiment's takes [`Sub`] of its options, a command around a
/// program its own (`Observe::Options`).
macro_rules! measure {
    (
        suite { $($m:ident : $V:ident = $n:literal,)* }
        around { $($am:ident : $AV:ident = $an:literal,)* }
        written { $($wm:ident : $WV:ident = $wn:literal,)* }
    ) => {
        #[derive(Debug, Subcommand)]
        pub enum Measure {
            $(#[command(name = $n, about = outcome::$m::ABOUT.summary)]
            $V(Sub<crate::experiments::$m::Options>),)*
            $(#[command(name = $an, about = outcome::$am::ABOUT.summary)]
            $AV(<crate::experiments::$am::$AV as Observe>::Options),)*
        }

        impl Measure {
            /// The plan of a suite experiment's subcommand.
            fn plan(&self, machine: &Fingerprint) -> Result<Plan> {
                match self {
                    $(Measure::$V(s) => s.plan(machine),)*
                    $(Measure::$AV(_) => Err(Error::usage(concat!($an, " runs around a program: it has no plan"))),)*
                }
            }

            fn common(&self) -> &CommonArgs {
                match self {
                    $(Measure::$V(s) => &s.common,)*
                    $(Measure::$AV(_) => &NO_COMMON,)*
                }
            }

            /// Each experiment subcommand's examples: its name and the
            /// invocations after it that give every option a good value.
            pub fn examples() -> Vec<(&'static str, &'static [&'static [&'static str]])> {
                vec![
                    $(($n, <crate::experiments::$m::Options as Options>::EXAMPLES),)*
                    $(($an, <crate::experiments::$am::$AV as Observe>::EXAMPLES),)*
                ]
            }

            /// What the subcommand does instead of a plan of experiments,
            /// run to its end: a command around a program, or an option
            /// that replaces measuring (`info --record`). Its exit status.
            pub fn instead(&self) -> Option<Result<u8>> {
                match self {
                    $(Measure::$V(s) => s.instead(),)*
                    $(Measure::$AV(o) => Some(around::observe::<crate::experiments::$am::$AV>(o)),)*
                }
            }
        }
    };
}
memperf_model::experiments!(measure);

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Measure(Measure),
    /// The whole suite: one results folder with JSON, SVG plots and an HTML report.
    Run(RunArgs),
    /// Rebuild the HTML report and plots from a results.json, a journal, or their folder.
    Report(ReportArgs),
    /// Headline figures of two runs (or two sets of runs) side by side, each judged against the variation between runs.
    Compare(CompareArgs),
    /// Give back hugetlb pages that killed memperf runs left reserved.
    Cleanup,
    /// Merge many hosts' documents into a fleet document and report: spreads, outliers (robust and Little's-law), references.
    Merge(MergeArgs),
    /// Print a shell completion script: memperf completions bash|zsh|fish|elvish|powershell.
    Completions(CompletionsArgs),
    /// Print the man page (memperf.1), or write one page per subcommand into -o DIR.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result documents (results.json, journal.jsonl) or folders holding them, searched recursively.
    #[arg(required = true, value_name = "DOC|DIR")]
    pub paths: Vec<PathBuf>,
    /// Where to write fleet.json and fleet.txt.
    #[arg(short = 'o', long = "output", value_name = "DIR", required = true)]
    pub output: PathBuf,
    /// ReFrame-style references: {"SYSTEM": {"METRIC": [target, lower, upper, "unit"]}}; a failing host exits 3.
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    /// Also write every host's headlines as OpenMetrics text to FILE.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub openmetrics: Option<PathBuf>,
    /// Also write one CSV row per host and headline to FILE.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL", allow_hyphen_values = true, value_parser = offers::Offers(offers::shells))]
    pub shell: String,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write memperf.1 and memperf-SUBCOMMAND.1 into DIR instead of printing memperf.1.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// The completion script for `shell`, generated from the clap definitions.
pub fn completions(shell: &str) -> Result<Vec<u8>> {
    use clap::CommandFactory;
    let sh: clap_complete::Shell = shell
        .trim()
        .parse()
        .map_err(|_| Error::usage(format!("unknown shell '{shell}': use bash, zsh, fish, elvish or powershell")))?;
    let mut out = Vec::new();
    clap_complete::generate(sh, &mut Cli::command(), "memperf", &mut out);
    Ok(out)
}

/// Man pages from the clap definitions: (file name, roff), memperf.1
/// first, then one per subcommand.
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    use clap::CommandFactory;
    let top = Cli::command();
    let render = |cmd: clap::Command, title: &str| {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).title(title).render(&mut out).expect("rendering into memory does not fail");
        out
    };
    let mut first = render(top.clone(), "memperf");
    first.extend_from_slice(MAN_EXIT_STATUS.as_bytes());
    first.extend_from_slice(MAN_SECTIONS.as_bytes());
    let mut pages = vec![("memperf.1".to_string(), first)];
    for sub in top.get_subcommands() {
        let name = format!("memperf-{}", sub.get_name());
        let cmd = sub.clone().display_name(name.clone()).bin_name(format!("memperf {}", sub.get_name()));
        let mut page = render(cmd, &name);
        page.extend_from_slice(MAN_EXIT_STATUS.as_bytes());
        page.extend_from_slice(man_examples(sub.get_name()).as_bytes());
        page.extend_from_slice(b".SH \"SEE ALSO\"\n\\fBmemperf\\fR(1)\n");
        pages.push((format!("{name}.1"), page));
    }
    pages
}

/// EXAMPLES of an experiment's page: its invocations that give every
/// option a good value (roff); none for the other subcommands.
fn man_examples(sub: &str) -> String {
    let Some((_, examples)) = Measure::examples().into_iter().find(|(n, _)| *n == sub) else { return String::new() };
    let roff = |t: &str| t.replace('\\', "\\\\").replace('-', "\\-");
    let mut out = String::from(".SH EXAMPLES\n");
    for e in examples {
        out.push_str(&format!(".TP\nmemperf {} {}\n", roff(sub), roff(&e.join(" "))));
        out.push_str("each option given a good value\n");
    }
    out
}

/// EXIT STATUS, as every page has it (roff).
const MAN_EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
success
.TP
\fB1\fR
a result failed validation (a checksum, a page size not obtained)
.TP
\fB2\fR
bad usage, or a request the machine cannot satisfy (a path that cannot be written included): one line naming the problem and the fix
.TP
\fB3\fR
\fBcompare \-\-fail\-on\-regression\fR found a headline worse beyond the noise; \fBmerge \-\-reference\fR found a host outside its reference
.TP
\fB4\fR
\fBcompare \-\-fail\-on\-unjudged\fR: no judged headline regressed, but one not judged (the host moved under it, it is unstable within a run, or the two references read different regions) got worse beyond the noise and the threshold
.TP
\fB130\fR
interrupted (SIGINT or SIGTERM): what was measured is kept
.TP
\fB141\fR
standard output closed by its reader
.PP
Under \fBstat\fR the program's own status (128 + the signal when a signal ended it) is memperf's.
"#;

/// ENVIRONMENT, FILES and EXAMPLES of memperf(1), after EXIT STATUS (roff).
const MAN_SECTIONS: &str = r#".SH ENVIRONMENT
.TP
\fBMEMPERF_REGIONS\fR=\fIFILE\fR
where a program linked with the region API (include/memperf.h) writes its regions' document at exit
.TP
\fBMEMPERF_EVENTS\fR=\fILIST\fR
the events the region API counts, as \fBstat \-e\fR takes them (else a default set)
.TP
\fBMEMPERF_REGIONS_NO_EXIT_WRITE\fR
set: the region API writes nothing at exit (the program calls mp_regions_write itself)
.TP
\fBMEMPERF_RESULTS\fR=\fIDIR\fR
where \fBstat\fR and \fBwss\fR look for this host's saved \fBtlb\fR result (the walk cost, the TLB reach); unset, \fI./memperf\-results\fR and \fI~/memperf\-results\fR
.TP
\fBMEMPERF_STATE_DIR\fR
where huge-page reservations are recorded so \fBmemperf cleanup\fR can give back what a killed run reserved (default /run/memperf)
.TP
\fBGLIBC_TUNABLES\fR
kept for the program under \fBhugepages\fR; only its glibc.malloc.hugetlb entry is replaced per arm
.TP
\fBHOME\fR, \fBXDG_CONFIG_HOME\fR
where \fI~/memperf\-results\fR is, and the user's metrics file (\fI$XDG_CONFIG_HOME/memperf/metrics.json\fR, else \fI~/.config/memperf/metrics.json\fR) that \fBstat\fR reads
.TP
\fBPATH\fR
where a command given to \fBstat\fR, \fBhugepages\fR or \fBwss\fR without a slash is looked for
.TP
\fBCOLUMNS\fR
the terminal's width, where its own size cannot be read; output is fitted to it
.TP
\fBSLURM_PROCID\fR, \fBSLURM_LOCALID\fR, \fBSLURM_NTASKS\fR, \fBSLURM_NTASKS_PER_NODE\fR, \fBSLURM_TASKS_PER_NODE\fR, \fBSLURM_JOB_ID\fR
a Slurm rank: its folder under \fB\-o\fR, its document's origin, ranks sharing a host noted
.TP
\fBOMPI_COMM_WORLD_RANK\fR, \fBOMPI_COMM_WORLD_SIZE\fR, \fBOMPI_COMM_WORLD_LOCAL_RANK\fR, \fBOMPI_COMM_WORLD_LOCAL_SIZE\fR
an Open MPI rank, likewise
.TP
\fBPMIX_RANK\fR, \fBPMIX_SIZE\fR, \fBPMIX_LOCAL_RANK\fR, \fBPMIX_LOCAL_SIZE\fR, \fBPMIX_NAMESPACE\fR, \fBPMI_RANK\fR, \fBPMI_SIZE\fR, \fBPMI_KVSNAME\fR, \fBMPI_LOCALRANKID\fR, \fBMPI_LOCALNRANKS\fR
a PMIx, PMI or MPICH rank, likewise
.SH FILES
.TP
\fIDIR\fR/results.json
the result document of \fB\-o\fR \fIDIR\fR (schema/results.schema.json), written atomically
.TP
\fIDIR\fR/journal.jsonl
each experiment as it finishes; \fBmemperf report\fR \fIDIR\fR rebuilds the report from it after a crash
.TP
\fIDIR\fR/report.html, \fIDIR\fR/*.svg
the report and its charts
.TP
/run/memperf
records of live huge-page reservations (root)
.TP
/proc/sys/vm/nr_hugepages, /sys/kernel/mm/hugepages/*/nr_hugepages
the pools \fB\-\-reserve\-hugepages\fR raises and puts back
.SH EXAMPLES
.TP
memperf run \-o results
the quick suite (about a minute) into a results folder
.TP
memperf latency \-\-pages 4k,thp
load\-to\-use latency from L1 to DRAM on two page policies
.TP
memperf stat \-\- ./app args
what a program did: times, page faults, counters where a PMU is
.TP
memperf hugepages \-n 10 \-\- ./app
does this program get faster on huge pages?
.TP
memperf report \-\-reanalyze results/results.json
every claim drawn again from the raw samples by today's analysis
.TP
memperf compare before/ after/ \-\-fail\-on\-regression 5
gate a CI job on a regression beyond the noise
.SH "SEE ALSO"
\fBperf\-stat\fR(1), \fBlikwid\-bench\fR(1)
"#;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// results.json, journal.jsonl, or a results folder.
    pub path: PathBuf,
    /// Where to write the report [default: the folder of PATH].
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Draw every claim again from the raw samples with today's analysis (levels, knees, steps, bend, modes), and say which changed.
    #[arg(long)]
    pub reanalyze: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline then the other run (A B); with --against, every run of the baseline. Each: results.json, journal.jsonl, a results folder, or a folder of results folders.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The other side's runs, several for a verdict against the runs' own spread: compare A1 A2 A3 --against B1 B2 B3.
    #[arg(long, value_name = "RUN", num_args = 1..)]
    pub against: Vec<PathBuf>,
    /// Also write the comparison as JSON to FILE (`-` for stdout, instead of the table).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// Also write an HTML page: the table and both runs' curves on the same axes.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub html: Option<PathBuf>,
    /// Exit with status 3 when a figure got worse by at least PCT percent (its whole 99% interval beyond it) [the verdicts' threshold: 5 without it].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true, value_parser = regression_pct)]
    pub fail_on_regression: Option<f64>,
    /// With --fail-on-regression: exit with status 4 when a figure not resolved is worse by more than PCT in its estimate.
    #[arg(long, requires = "fail_on_regression")]
    pub fail_on_unjudged: bool,
}

impl CompareArgs {
    /// The two sides: the runs before `--against` and those after it, or,
    /// without it, the first run and the second.
    pub fn sides(&self) -> crate::error::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        if !self.against.is_empty() {
            return Ok((self.runs.clone(), self.against.clone()));
        }
        match self.runs.as_slice() {
            [a, b] => Ok((vec![a.clone()], vec![b.clone()])),
            _ => Err(crate::error::Error::usage(format!(
                "compare takes two runs (A B), or several with --against: got {} (fix: memperf compare A1 A2 --against B1 B2)",
                self.runs.len()
            ))),
        }
    }
}

/// clap's parser of `--fail-on-regression`: a percentage in [0, 1000).
fn regression_pct(t: &str) -> std::result::Result<f64, String> {
    match t.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..1000.0).contains(&p) => Ok(p),
        _ => Err("give a percentage from 0 to 999, e.g. --fail-on-regression 5".into()),
    }
}

/// A measuring subcommand: the experiment's own options, the preset and
/// the outputs.
#[derive(Debug, Args)]
pub struct Sub<O: Args> {
    #[command(flatten)]
    pub options: O,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl<O: Options> Sub<O> {
    /// The plan of this one experiment, its options read against `machine`.
    fn plan(&self, machine: &Fingerprint) -> Result<Plan> {
        let asked = Request {
            preset: self.preset.preset(Preset::Default),
            machine,
            reserve_hugepages: self.common.reserve_hugepages,
        };
        Ok(one::<O::Experiment>(self.options.params(&asked)?, &self.common))
    }

    /// What an option asks for instead of measuring, done: its exit status.
    fn instead(&self) -> Option<Result<u8>> {
        if let Some(asked) = self.options.instead_option() {
            let c = &self.common;
            let given = [("--json", c.json.is_some()), ("-o", c.output.is_some()), ("--csv", c.csv.is_some())]
                .into_iter()
                .chain([("--openmetrics", c.openmetrics.is_some())])
                .find(|(_, given)| *given);
            if let Some((output, _)) = given {
                return Some(Err(Error::usage(format!(
                    "{asked} prints text and makes no result document, so {output} would write nothing: leave {output} \
                     out (or leave {asked} out to measure this machine into one)"
                ))));
            }
        }
        let said = self.options.instead()?;
        Some(
            said.and_then(|text| crate::report::sink::stdout(crate::report::sink::terminal_safe(&text).as_bytes()))
                .map(|_| 0),
        )
    }
}

/// Output options every measuring subcommand shares.
#[derive(Debug, Clone, Args, Default)]
pub struct CommonArgs {
    /// Write the result document (JSON) to FILE; `-` for stdout.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// Write a results folder: results.json and one SVG per plot.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Also write the headlines as OpenMetrics text to FILE (for node_exporter's textfile collector).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub openmetrics: Option<PathBuf>,
    /// Also write every table as one tidy CSV to FILE (one row per measurement, one column per parameter).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub csv: Option<PathBuf>,
    /// No plan line, no progress bar, and in `run` no line per experiment (the summary at the end stays).
    #[arg(long)]
    pub quiet: bool,
    /// Reserve the hugetlb pages the run needs (root), and give them back at the end.
    #[arg(long)]
    pub reserve_hugepages: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run only these experiments, comma-separated.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = opt::list(suite_name, offers::suite))]
    pub only: Option<List<String>>,
    /// Skip these experiments, comma-separated.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = opt::list(suite_name, offers::suite))]
    pub skip: Option<List<String>>,
    /// Print every experiment's tables as it ends, as its own subcommand does (the report holds them all).
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Command {
    /// The plan this command asks for, against this machine.
    pub fn plan(&self, machine: &Fingerprint) -> Result<Plan> {
        match self {
            Command::Measure(m) => m.plan(machine),
            Command::Run(r) => r.plan(machine),
            _ => Err(Error::usage("report, compare, cleanup, merge, completions and man have no plan of experiments")),
        }
    }

    /// Where the document goes: the options given, and for the suite a
    /// new results folder when -o is not.
    pub fn output(&self, machine: &Fingerprint) -> Output {
        let c = self.common();
        let mut out = Output {
            json: c.json.clone(),
            dir: c.output.clone(),
            table: c.json.as_deref() != Some(std::path::Path::new("-")),
            openmetrics: c.openmetrics.clone(),
            csv: c.csv.clone(),
        };
        if matches!(self, Command::Run(_)) && out.dir.is_none() {
            out.dir = Some(default_results_dir(machine));
        }
        out
    }

    pub fn common(&self) -> &CommonArgs {
        match self {
            Command::Measure(m) => m.common(),
            Command::Run(r) => &r.common,
            _ => &NO_COMMON,
        }
    }
}

static NO_COMMON: CommonArgs =
    CommonArgs { json: None, output: None, openmetrics: None, csv: None, quiet: true, reserve_hugepages: false };

/// One name of `--only`/`--skip`: an experiment of the suite.
fn suite_name(name: &str) -> Result<String> {
    let suite = crate::experiments::registry::suite_names();
    let name = name.trim();
    suite
        .iter()
        .find(|s| **s == name)
        .map(|s| s.to_string())
        .ok_or_else(|| Error::usage(format!("unknown experiment '{name}': use {}", suite.join(", "))))
}

impl RunArgs {
    /// The suite: every experiment with the preset's parameters, filtered by
    /// --only/--skip; hugetlb 2 MiB pages join the latency sweep when the
    /// pool has them (or --reserve-hugepages), else a warning says how.
    pub fn plan(&self, machine: &Fingerprint) -> Result<Plan> {
        let preset = self.preset.preset(Preset::Quick);
        let only = self.only.as_ref().map(|l| &l.0);
        let skip = List::or(&self.skip, Vec::new());
        let wanted = |n: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == n)) && !skip.iter().any(|x| x == n);
        let asked = Request { preset, machine, reserve_hugepages: self.common.reserve_hugepages };
        let (jobs, notes): (Vec<Job>, Vec<Option<crate::model::Warning>>) =
            crate::experiments::registry::suite_entries()
                .filter(|e| wanted(e.name()))
                .filter_map(|e| e.suite_job(&asked))
                .unzip();
        if jobs.is_empty() {
            return Err(Error::usage("--only and --skip leave no experiment to run"));
        }
        let mut plan = plan_of(jobs, &self.common, None);
        plan.notes = notes.into_iter().flatten().collect();
        plan.journal = true;
        Ok(plan)
    }
}

/// The plan of one experiment's subcommand.
fn one<E: crate::experiments::Experiment>(params: E::Params, c: &CommonArgs) -> Plan {
    plan_of(vec![Job::of::<E>(params)], c, Some(E::NAME))
}

/// A plan for a subcommand (`Some(name)`: strict, fixes name its options)
/// or for the suite (`None`).
fn plan_of(jobs: Vec<Job>, c: &CommonArgs, subcommand: Option<&'static str>) -> Plan {
    let command = subcommand.map_or(crate::model::warnings::Command::Run, crate::model::warnings::Command::Sub);
    Plan {
        command,
        strict: subcommand.is_some(),
        notes: Vec::new(),
        journal: false,
        jobs,
        reserve_hugepages: c.reserve_hugepages,
        time_box: None,
    }
}

/// `memperf-results/<host>-<UTC time>/`.
pub fn default_results_dir(machine: &Fingerprint) -> PathBuf {
    let stamp = crate::model::document::utc_timestamp(crate::model::document::now_secs()).replace(':', "");
    let host: String = machine
        .hostname
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .collect();
    // The pid keeps two runs started in the same second apart.
    PathBuf::from("memperf-results").join(format!("{host}-{stamp}-{}", std::process::id()))
}

pub use crate::experiments::options::{positive_arg, size_arg};

/// First Ctrl-C, SIGTERM or SIGHUP: finish the current sample, then write
/// what completed and give the pages back. A second one: give back
/// reserved huge pages and leave at once.
pub fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if crate::experiments::INTERRUPTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            // Leaving without destructors: give reserved huge pages back first.
            crate::memory::reserve::restore_all();
            std::process::exit(130);
        }
        eprintln!("\nmemperf: interrupted; finishing the current sample (Ctrl-C again to quit now)");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A good value for every option of every measuring subcommand: each
    /// is read into its type (clap panics where a definition and its type
    /// disagree) and into a plan.
    /// The suite's options (the experiments' are their `EXAMPLES`).
    const GOOD: &[&[&str]] = &[&["run", "--only", "info,tlb", "--skip", "tlb"]];

    /// Subcommands with no plan of experiments: a good value of each
    /// option is read into its type.
    const GOOD_AROUND: &[&[&str]] = &[
        &["compare", "a", "b", "--fail-on-regression", "5%"],
        &["compare", "a1", "a2", "--against", "b1", "b2"],
        &["merge", "a", "--output", "o", "--reference", "r.json"],
        &["report", "p", "--output", "o"],
        &["man", "--output", "d"],
    ];

    /// Every case: the experiments' examples (each after its name), the
    /// suite's and the other subcommands'.
    fn cases() -> Vec<Vec<&'static str>> {
        let mut all: Vec<Vec<&str>> = Measure::examples()
            .into_iter()
            .flat_map(|(name, examples)| {
                examples.iter().map(move |e| std::iter::once(name).chain(e.iter().copied()).collect())
            })
            .collect();
        all.extend(GOOD.iter().chain(GOOD_AROUND).map(|a| a.to_vec()));
        all
    }

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("memperf").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    /// Every case reads into its types (clap panics where a definition and
    /// its type disagree), and a suite experiment's (and the suite's) into
    /// a plan; nothing is run.
    #[test]
    fn every_case_reads_a_good_value_of_each_option() {
        use crate::experiments::registry::{find, Runs};
        let machine = crate::machine::collect();
        for args in cases() {
            let cli = parse(&args);
            let planned = args[0] == "run" || find(args[0]).is_some_and(|e| matches!(e.runs, Runs::Suite(_)));
            if planned {
                cli.command.plan(&machine).unwrap_or_else(|e| panic!("{args:?}: {}", e.message));
            }
        }
    }

    /// Every option that takes a value has a case, so a new one cannot be
    /// left untried: an experiment's own in its `EXAMPLES`.
    #[test]
    fn every_value_option_has_a_good_case() {
        use clap::CommandFactory;
        let cases = cases();
        for cmd in Cli::command().get_subcommands().filter(|c| !["completions", "cleanup"].contains(&c.get_name())) {
            let sub = cmd.get_name();
            for arg in cmd.get_arguments().filter(|a| a.get_action().takes_values() && !a.is_positional()) {
                let long = format!("--{}", arg.get_long().unwrap());
                let short = arg.get_short().map(|c| format!("-{c}"));
                let common = ["--json", "--output", "--openmetrics", "--csv", "--html"].contains(&long.as_str());
                let named = |a: &Vec<&str>| {
                    a.iter().any(|x| *x == long || x.starts_with(&format!("{long}=")) || Some(*x) == short.as_deref())
                };
                let tried = cases.iter().any(|a| a[0] == sub && named(a));
                assert!(common || tried, "{sub} {long} has no good case: add one to its EXAMPLES");
            }
        }
    }

    /// The man page's ENVIRONMENT names every variable the code reads
    /// (a literal name given to env::var or var_os; tests' own excepted).
    #[test]
    fn the_man_page_names_every_variable_the_code_reads() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut names = std::collections::BTreeSet::new();
        let mut files = Vec::new();
        for dir in ["src", "crates/memperf-model/src", "capi/src"] {
            rust_files(&root.join(dir), &mut files);
        }
        // test_support.rs and cli/emulated.rs are built for the unit tests alone.
        let tests_alone = |f: &std::path::Path| f.ends_with("test_support.rs") || f.ends_with("cli/emulated.rs");
        for f in files.into_iter().filter(|f| !tests_alone(f)) {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text.find("#[cfg(test)]").map_or(text.as_str(), |i| &text[..i]);
            for (i, _) in code.match_indices('"') {
                let name: String = code[i + 1..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
                let quoted = code[i + 1 + name.len()..].starts_with('"');
                let looked_up = code[..i].ends_with("env::var(") || code[..i].ends_with("env::var_os(");
                let launcher = f.ends_with("launcher.rs") && name.contains("RANK") || name.starts_with("SLURM_");
                if quoted && name.len() > 2 && (looked_up || launcher) {
                    names.insert(name);
                }
            }
        }
        let page = String::from_utf8(man_pages().remove(0).1).unwrap();
        let environment = &page[page.find(".SH ENVIRONMENT").unwrap()..page.find(".SH FILES").unwrap()];
        assert!(names.len() >= 10, "{names:?}");
        for n in names {
            assert!(environment.contains(&format!("\\fB{n}\\fR")), "memperf(1) ENVIRONMENT lacks {n}");
        }
    }

    fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
}
