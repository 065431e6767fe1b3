//! docs/guide.md's and README.md's examples are what the code prints: each block after a
//! `<!-- generated: WHAT -->` marker is made again here and must match.
//! WHAT is `help ARGS` (`memperf ARGS --help` at 80 columns), `section
//! NAME` (experiment NAME's section of the guide's recording, as `memperf
//! run --verbose` prints it) or `screen` (the end of `memperf run` on that
//! recording, 80 columns). `bash docs/examples.sh` (MEMPERF_WRITE_DOCS=1)
//! writes every block anew.

mod common;

use std::path::Path;

/// The run the guide's examples come from.
const RECORDING: &str = "docs/bench/2026-11-29-intel-xeon-m167/run-quick.json";
const GUIDE: &str = "docs/guide.md";
const MARK: &str = "<!-- generated: ";

/// The text `what` stands for.
fn generate(what: &str, doc: &memperf::model::Document) -> String {
    let (kind, rest) = what.split_once(' ').unwrap_or((what, ""));
    match kind {
        "help" => {
            let args: Vec<&str> = rest.split_whitespace().chain(["--help"]).collect();
            let o = common::command().args(&args).env("COLUMNS", "80").output().unwrap();
            assert!(o.status.success(), "memperf {rest} --help: {}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8(o.stdout).unwrap()
        }
        "section" => {
            let rec =
                doc.experiments.iter().find(|e| e.name == rest).unwrap_or_else(|| panic!("no {rest} in the recording"));
            memperf::report::text::experiment(doc, rec)
        }
        "screen" => {
            let mut out: String =
                doc.experiments.iter().map(|rec| memperf::report::screen::experiment_line(doc, rec, 80)).collect();
            let report = Path::new("memperf-results/host-20261129T043000Z-4242/report.html");
            out.push_str(&memperf::report::screen::end(doc, Some(report), 80));
            out
        }
        other => panic!("unknown generated block '{other}' in {GUIDE}"),
    }
}

/// The guide with every generated block made anew, and the markers whose
/// blocks differed.
fn regenerate(guide: &str, doc: &memperf::model::Document) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut stale = Vec::new();
    let mut rest = guide;
    while let Some(at) = rest.find(MARK) {
        let end = rest[at..].find(" -->\n").map(|e| at + e).expect("a marker ends with ' -->'");
        let what = &rest[at + MARK.len()..end];
        let after = &rest[end + " -->\n".len()..];
        let body =
            after.strip_prefix("```text\n").unwrap_or_else(|| panic!("{what}: a ```text block follows its marker"));
        // An empty block closes at once; else at its first closing fence.
        let close = if body.starts_with("```\n") { Some(0) } else { body.find("\n```\n").map(|c| c + 1) };
        let close = close.unwrap_or_else(|| panic!("{what}: its block is not closed"));
        let made = generate(what, doc);
        let made = if made.ends_with('\n') || made.is_empty() { made } else { made + "\n" };
        if body[..close] != made {
            stale.push(what.to_string());
        }
        out.push_str(&rest[..end + " -->\n".len()]);
        out.push_str("```text\n");
        out.push_str(&made);
        rest = &body[close..];
    }
    out.push_str(rest);
    (out, stale)
}

#[test]
fn the_guides_examples_are_what_the_code_prints() {
    let doc = memperf::model::journal::load(&common::repo(RECORDING)).expect("the guide's recording");
    for (file, least) in [(GUIDE, 20), ("README.md", 1)] {
        let path = common::repo(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let (made, stale) = regenerate(&text, &doc);
        if std::env::var_os("MEMPERF_WRITE_DOCS").is_some() {
            std::fs::write(&path, &made).unwrap();
            continue;
        }
        assert!(text.matches(MARK).count() >= least, "{file}: fewer examples than it must show");
        assert!(stale.is_empty(), "{file} drifted from the code in {stale:?}: run `bash docs/examples.sh`");
    }
}

/// Every subcommand has its section, with its options.
#[test]
fn the_guide_names_every_subcommand() {
    let guide = std::fs::read_to_string(common::repo(GUIDE)).unwrap();
    let o = common::command().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    let names = help.lines().skip_while(|l| !l.starts_with("Commands:")).skip(1).take_while(|l| l.starts_with("  "));
    for name in names.filter_map(|l| l.split_whitespace().next()).filter(|n| *n != "help") {
        assert!(guide.contains(&format!("{MARK}help {name} -->")), "{name} has no section in {GUIDE}");
    }
}
