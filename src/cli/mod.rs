//! The command line: clap definitions (one file per subcommand's options)
//! and their translation into a [`Plan`] of experiments. Values are taken
//! as text and parsed here, so every bad value gets one clear line and exit
//! status 2.

pub mod around;
pub mod bandwidth;
pub mod c2c;
pub mod calls;
pub mod export;
pub mod hugepages;
pub mod latency;
pub mod loaded_latency;
pub mod offers;
pub mod page_init;
pub mod prefetch_fault;
pub mod progress;
pub mod stat;
pub mod tlb;
pub mod tools;
pub mod working_set;
pub mod wss;

use crate::error::{Error, Result};
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

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(about = outcome::info::ABOUT.summary)]
    Info(InfoArgs),
    #[command(about = outcome::bandwidth::ABOUT.summary)]
    Bandwidth(bandwidth::BandwidthArgs),
    #[command(about = outcome::latency::ABOUT.summary)]
    Latency(latency::LatencyArgs),
    #[command(about = outcome::tlb::ABOUT.summary)]
    Tlb(tlb::TlbArgs),
    #[command(about = outcome::working_set::ABOUT.summary)]
    WorkingSet(working_set::WorkingSetArgs),
    #[command(about = outcome::prefetch_fault::ABOUT.summary)]
    PrefetchFault(prefetch_fault::PrefetchFaultArgs),
    #[command(about = outcome::page_init::ABOUT.summary)]
    PageInit(page_init::PageInitArgs),
    #[command(about = outcome::calls::ABOUT.summary)]
    Calls(calls::CallsArgs),
    #[command(about = outcome::context::ABOUT.summary)]
    Context(calls::ContextArgs),
    #[command(about = outcome::stat::ABOUT.summary)]
    Stat(stat::StatArgs),
    #[command(about = outcome::hugepages::ABOUT.summary)]
    Hugepages(hugepages::HugepagesArgs),
    #[command(about = outcome::wss::ABOUT.summary)]
    Wss(wss::WssArgs),
    #[command(about = outcome::c2c::ABOUT.summary)]
    C2c(c2c::C2cArgs),
    #[command(about = outcome::numa::ABOUT.summary)]
    Numa(NumaArgs),
    #[command(about = outcome::loaded_latency::ABOUT.summary)]
    LoadedLatency(loaded_latency::LoadedLatencyArgs),
    /// The whole suite: one results folder with JSON, SVG plots and an HTML report.
    Run(RunArgs),
    /// Rebuild the HTML report and plots from a results.json, a journal, or their folder.
    Report(ReportArgs),
    /// Headline metrics of two result documents side by side, with ratios and a noise test.
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

/// Options of `memperf info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Write a recording of this machine into DIR instead (its CPUID dump and the /sys and /proc files memperf reads), for reading it back elsewhere.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
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
        page.extend_from_slice(b".SH \"SEE ALSO\"\n\\fBmemperf\\fR(1)\n");
        pages.push((format!("{name}.1"), page));
    }
    pages
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
\fBMEMPERF_STATE_DIR\fR
where huge-page reservations are recorded so \fBmemperf cleanup\fR can give back what a killed run reserved (default /run/memperf)
.TP
\fBGLIBC_TUNABLES\fR
kept for the program under \fBhugepages\fR; only its glibc.malloc.hugetlb entry is replaced per arm
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

/// Where a command around a program (`hugepages`, `wss`) writes.
#[derive(Debug, Args)]
pub struct ProgramOutputs {
    /// Write the result document (JSON) to FILE; `-` for stdout.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// Write the headline figures as OpenMetrics text to FILE.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub openmetrics: Option<PathBuf>,
    /// Write a results folder: results.json, charts and report.html.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Write the samples as tidy CSV to FILE (wss: one row per mapping per interval; hugepages: one per run).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl ProgramOutputs {
    pub fn output(&self) -> Output {
        Output {
            csv: self.csv.clone(),
            ..Output::around_program(self.json.as_deref(), self.output.as_deref(), self.openmetrics.as_deref())
        }
    }
}

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
    /// The baseline: results.json, journal.jsonl, or a results folder.
    pub a: PathBuf,
    /// The other run.
    pub b: PathBuf,
    /// Also write the comparison as JSON to FILE (`-` for stdout, instead of the table).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// Also write an HTML page: the table and both runs' curves on the same axes.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub html: Option<PathBuf>,
    /// Exit with status 3 when a headline got worse beyond the noise and by more than PCT percent.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub fail_on_regression: Option<String>,
}

impl CompareArgs {
    /// `--fail-on-regression`: a percentage in [0, 1000).
    pub fn threshold_pct(&self) -> Result<Option<f64>> {
        let Some(t) = &self.fail_on_regression else { return Ok(None) };
        match t.trim().trim_end_matches('%').parse::<f64>() {
            Ok(p) if (0.0..1000.0).contains(&p) => Ok(Some(p)),
            _ => Err(Error::usage(format!(
                "--fail-on-regression '{t}': give a percentage from 0 to 999, e.g. --fail-on-regression 5"
            ))),
        }
    }
}

/// Options of `memperf numa`.
#[derive(Debug, Args)]
pub struct NumaArgs {
    /// Size of each chase and each read array [default: max(64MiB, 4 × last-level cache)]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_arg)]
    pub size: Option<crate::units::Bytes>,
    /// Samples per cell [default: 10]
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = positive_arg("--repetitions"))]
    pub repetitions: Option<usize>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl NumaArgs {
    pub fn params(&self, machine: &Fingerprint) -> Result<crate::experiments::numa::Params> {
        let mut p = crate::experiments::numa::Params::preset(self.preset.preset(Preset::Default), machine);
        if let Some(s) = self.size {
            p.size_bytes = s;
        }
        if let Some(r) = self.repetitions {
            p.repetitions = r;
        }
        Ok(p)
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
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Reserve the hugetlb pages the run needs (root), and give them back at the end.
    #[arg(long)]
    pub reserve_hugepages: bool,
}

/// `--quick` / `--full`.
#[derive(Debug, Clone, Args, Default)]
pub struct PresetArgs {
    /// The quick parameter set (the suite's default).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The full parameter set.
    #[arg(long)]
    pub full: bool,
}

impl PresetArgs {
    pub fn preset(&self, default: Preset) -> Preset {
        if self.quick {
            Preset::Quick
        } else if self.full {
            Preset::Full
        } else {
            default
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run only these experiments, comma-separated.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = offers::Offers(offers::suite))]
    pub only: Option<String>,
    /// Skip these experiments, comma-separated.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = offers::Offers(offers::suite))]
    pub skip: Option<String>,
    #[command(flatten)]
    pub preset: PresetArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Command {
    /// The plan this command asks for, against this machine.
    pub fn plan(&self, machine: &Fingerprint) -> Result<Plan> {
        use crate::experiments as x;
        match self {
            Command::Info(c) => Ok(one::<x::info::Info>(x::info::Params {}, &c.common)),
            Command::Bandwidth(b) => Ok(one::<x::bandwidth::Bandwidth>(b.params(machine)?, &b.common)),
            Command::Latency(l) => Ok(one::<x::latency::Latency>(l.params(machine)?, &l.common)),
            Command::Tlb(t) => Ok(one::<x::tlb::Tlb>(t.params()?, &t.common)),
            Command::WorkingSet(w) => Ok(one::<x::working_set::WorkingSet>(w.params(machine)?, &w.common)),
            Command::PrefetchFault(a) => Ok(one::<x::prefetch_fault::PrefetchFault>(a.params()?, &a.common)),
            Command::PageInit(a) => Ok(one::<x::page_init::PageInit>(a.params()?, &a.common)),
            Command::Calls(a) => Ok(one::<x::calls::Calls>(a.params()?, &a.common)),
            Command::Context(a) => Ok(one::<x::context::ContextSaves>(a.params()?, &a.common)),
            Command::C2c(a) => Ok(one::<x::c2c::C2c>(a.params()?, &a.common)),
            Command::Numa(a) => Ok(one::<x::numa::Numa>(a.params(machine)?, &a.common)),
            Command::LoadedLatency(a) => Ok(one::<x::loaded_latency::LoadedLatency>(a.params(machine)?, &a.common)),
            Command::Run(r) => r.plan(machine),
            Command::Report(_)
            | Command::Compare(_)
            | Command::Cleanup
            | Command::Stat(_)
            | Command::Hugepages(_)
            | Command::Wss(_)
            | Command::Completions(_)
            | Command::Merge(_)
            | Command::Man(_) => Err(Error::usage("report, compare, cleanup and stat have no plan of experiments")),
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
            Command::Info(c) => &c.common,
            Command::Bandwidth(b) => &b.common,
            Command::Latency(l) => &l.common,
            Command::Tlb(t) => &t.common,
            Command::WorkingSet(w) => &w.common,
            Command::PrefetchFault(a) => &a.common,
            Command::PageInit(a) => &a.common,
            Command::Calls(a) => &a.common,
            Command::Context(a) => &a.common,
            Command::C2c(a) => &a.common,
            Command::LoadedLatency(a) => &a.common,
            Command::Numa(a) => &a.common,
            Command::Run(r) => &r.common,
            Command::Report(_)
            | Command::Compare(_)
            | Command::Cleanup
            | Command::Stat(_)
            | Command::Hugepages(_)
            | Command::Wss(_)
            | Command::Completions(_)
            | Command::Merge(_)
            | Command::Man(_) => &NO_COMMON,
        }
    }
}

static NO_COMMON: CommonArgs =
    CommonArgs { json: None, output: None, openmetrics: None, csv: None, quiet: true, reserve_hugepages: false };

fn suite_names(text: &Option<String>) -> Result<Option<Vec<String>>> {
    let Some(t) = text else { return Ok(None) };
    let suite = crate::experiments::registry::suite_names();
    crate::units::parse_list(t, |n| {
        suite
            .iter()
            .find(|s| **s == n)
            .map(|s| s.to_string())
            .ok_or_else(|| Error::usage(format!("unknown experiment '{n}': use {}", suite.join(", "))))
    })
    .map(Some)
}

impl RunArgs {
    /// The suite: every experiment with the preset's parameters, filtered by
    /// --only/--skip; hugetlb 2 MiB pages join the latency sweep when the
    /// pool has them (or --reserve-hugepages), else a warning says how.
    pub fn plan(&self, machine: &Fingerprint) -> Result<Plan> {
        let preset = self.preset.preset(Preset::Quick);
        let only = suite_names(&self.only)?;
        let skip = suite_names(&self.skip)?.unwrap_or_default();
        let wanted = |n: &str| only.as_ref().is_none_or(|o| o.iter().any(|x| x == n)) && !skip.iter().any(|x| x == n);
        let mut jobs: Vec<Job> = crate::experiments::registry::suite_entries()
            .filter(|e| wanted(e.name()))
            .filter_map(|e| e.suite_job(preset, machine))
            .collect();
        let mut notes = Vec::new();
        for job in &mut jobs {
            if let Some(lat) = job.params_mut::<crate::experiments::latency::Params>() {
                notes.extend(self.suite_hugetlb_latency(lat, machine));
            }
        }
        if jobs.is_empty() {
            return Err(Error::usage("--only and --skip leave no experiment to run"));
        }
        let mut plan = plan_of(jobs, &self.common, None);
        plan.notes = notes;
        plan.journal = true;
        Ok(plan)
    }
}

impl RunArgs {
    /// The suite's latency sweep takes 2 MiB hugetlb pages when their pool
    /// has them (or with --reserve-hugepages); else a note says how.
    fn suite_hugetlb_latency(
        &self,
        lat: &mut crate::experiments::latency::Params,
        machine: &Fingerprint,
    ) -> Option<crate::model::Warning> {
        let max = lat.sizes_bytes.iter().max().copied().unwrap_or_default();
        let need = max.0.div_ceil(2 << 20);
        let free = machine.pool(crate::units::Bytes(2 << 20)).map(|p| p.available()).unwrap_or(0);
        if self.common.reserve_hugepages || free >= need {
            lat.pages.push(crate::memory::PagePolicy::Huge2M);
            None
        } else {
            Some(crate::model::Caution::SuiteNoHugetlb { need, free }.render(crate::model::warnings::Command::Run))
        }
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

/// Parses a list option, or returns `default` when it was not given.
pub fn list_or<T: PartialEq>(
    text: &Option<String>,
    default: Vec<T>,
    item: impl Fn(&str) -> Result<T>,
) -> Result<Vec<T>> {
    match text {
        Some(t) => crate::units::parse_list(t, item),
        None => Ok(default),
    }
}

/// clap's parser of one `--threads` item: a positive count, or `all` for
/// every CPU this process may use.
pub fn thread_arg(text: &str) -> std::result::Result<usize, String> {
    match text.trim() {
        "all" => Ok(crate::timing::team::allowed_cpus().len().max(1)),
        t => positive("--threads", t).map_err(|_| "must be a positive integer or all".to_string()),
    }
}

/// `--threads 1,all` (items through [`thread_arg`]): thread counts, sorted,
/// or `default`; a count given twice is refused (it would measure the same
/// thing twice), and so is more than this process may use
/// (oversubscription would measure the scheduler).
pub fn thread_counts(list: &Option<Vec<usize>>, default: Vec<usize>) -> Result<Vec<usize>> {
    let all = crate::timing::team::allowed_cpus().len().max(1);
    let mut v = list.clone().unwrap_or(default);
    if let Some(t) = v.iter().enumerate().find_map(|(i, t)| v[..i].contains(t).then_some(t)) {
        return Err(Error::usage(format!(
            "--threads: {t} appears twice in the list (all is {all} here): give each value once"
        )));
    }
    v.sort();
    if let Some(&t) = v.iter().find(|&&t| t > all) {
        return Err(Error::usage(format!("--threads {t}: this process may run on {all} CPUs; use {all} or fewer")));
    }
    Ok(v)
}

/// clap's parser of `opt`'s value as a positive integer: the option is
/// typed (`Option<usize>`), checked as the command line is read, and its
/// error names the option as memperf's own do.
pub fn positive_arg(opt: &'static str) -> impl Fn(&str) -> std::result::Result<usize, String> + Clone + Send + Sync {
    // clap names the option and the value ("invalid value '0' for
    // '--repetitions <N>'"); the reason follows.
    move |t| positive(opt, t).map_err(|_| "must be a positive integer".to_string())
}

/// clap's parser of a size above zero (`64MiB`, `4096`): the option is
/// typed (`Option<Bytes>`) and checked as the command line is read.
pub fn size_arg(text: &str) -> std::result::Result<crate::units::Bytes, String> {
    crate::units::parse_nonzero_size(text).map_err(|e| e.message)
}

/// clap's parser of `opt`'s value as a u64, decimal or 0x-hex.
pub fn u64_arg(opt: &'static str) -> impl Fn(&str) -> std::result::Result<u64, String> + Clone + Send + Sync {
    move |t| {
        crate::units::parse_u64(opt, t).map_err(|_| "is not a non-negative integer (decimal or 0x-hex)".to_string())
    }
}

/// Parses a positive integer option value.
pub fn positive(name: &str, text: &str) -> Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::usage(format!("{name} '{text}' must be a positive integer"))),
    }
}

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
