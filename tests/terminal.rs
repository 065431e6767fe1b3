//! What a person sees in a terminal: `memperf run` under a pseudo-terminal
//! 80 columns wide (util-linux `script`), its progress bar and tables.

mod common;

use std::process::Command;

/// Whether util-linux `script` (a pseudo-terminal) is here; says how to get it where not.
fn have_script() -> bool {
    let ok = Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        common::skip("needs util-linux `script` for a pseudo-terminal", "apt-get install bsdutils");
    }
    ok
}

/// `cmd` (memperf's arguments) under a pseudo-terminal 80 columns wide:
/// everything it printed, and its exit status.
fn in_80_columns(args: &str) -> (String, Option<i32>) {
    let cmd = format!("stty cols 80 rows 24; {} {args}", common::exe());
    let o = Command::new("script").args(["-qfec", &cmd, "/dev/null"]).output().unwrap();
    (String::from_utf8_lossy(&o.stdout).into_owned(), o.status.code())
}

/// The bar's total comes from the plan from its first frame (never
/// "0/0"), every frame fits 80 columns, and each experiment's line is
/// printed when it finishes, before the next experiment's bar appears;
/// the screen ends with where the report is.
#[test]
fn run_in_a_terminal_prints_each_experiments_line_before_the_next_experiment() {
    if !have_script() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let (raw, code) = in_80_columns(&format!("run --only numa,c2c -o {}", out.to_str().unwrap()));
    assert_eq!(code, Some(0), "{raw}");
    assert!(!raw.contains("0/0"), "a frame with 0/0: {raw}");
    // Frames and lines, split where the terminal would start a line anew.
    let plain = raw.replace("\u{1b}[2K", "\r");
    for segment in plain.split(['\r', '\n']) {
        assert!(segment.chars().count() <= 80, "a frame or line wider than 80 columns: {segment:?}");
    }
    // A finished experiment's line starts a line of its own, after a
    // newline or after the bar's frame was cleared.
    let numa_line = plain.find("\nnuma ").or_else(|| plain.find("\rnuma ")).expect("numa's line");
    let c2c_bar = plain.find("c2c [").expect("a frame of c2c's bar");
    assert!(numa_line < c2c_bar, "numa's line came after c2c had started: {raw}");
    assert!(!raw.contains("one-way ns of a cache line"), "no tables without --verbose: {raw}");
    let report = out.join("report.html");
    assert!(raw.trim_end().ends_with(&format!("report: {}", report.display())), "{raw}");
}

/// `run --quiet` in an 80-column terminal is one screen: at most 80 lines,
/// none wider than the terminal, with the key figures, then the verdicts,
/// then the warnings folded, and the report's path last. `--verbose`
/// prints every table instead.
#[test]
fn a_quiet_run_is_one_screen_of_80_columns() {
    if !have_script() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("quiet");
    let (raw, code) = in_80_columns(&format!("run --quiet --only calls,context,c2c -o {}", out.display()));
    assert_eq!(code, Some(0), "{raw}");
    let lines: Vec<&str> = raw.lines().map(|l| l.trim_end_matches('\r')).collect();
    assert!(lines.len() <= 80, "{} lines: {raw}", lines.len());
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{raw}");
    let at = |what: &str| raw.find(what).unwrap_or_else(|| panic!("{what:?} missing: {raw}"));
    assert!(at("key figures") < at("verdicts (") && at("verdicts (") < at("report: "), "{raw}");
    assert!(lines.last().is_some_and(|l| l.starts_with("report: ")), "{raw}");
    assert!(!raw.contains("plan:") && !raw.contains("\ncalls "), "--quiet: no plan and no line per experiment");
    let verbose = dir.path().join("verbose");
    let (raw, code) = in_80_columns(&format!("run --verbose --quiet --only c2c -o {}", verbose.display()));
    assert_eq!(code, Some(0), "{raw}");
    assert!(raw.contains("results written to"), "--verbose prints the tables and where they went: {raw}");
}

/// `wss` in an 80-column terminal: its wide phases table is split or
/// turned into records and its long verdict wrapped, so no line is wider
/// than the terminal; written to a file, the same lines stay whole.
#[test]
fn wide_tables_and_long_verdicts_fit_80_columns() {
    if !have_script() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = common::c_program(dir.path(), "wss_phases");
    let run = format!(
        "MEMPERF_RESULTS={} {} wss --no-probe -I 100 -- {} 64 16 0.4 32 0.4",
        common::no_saved_results().display(),
        common::exe(),
        exe.display()
    );
    let o =
        Command::new("script").args(["-qfec", &format!("stty cols 80 rows 24; {run}"), "/dev/null"]).output().unwrap();
    let raw = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{raw}");
    assert!(raw.contains("Hot set"), "{raw}");
    for line in raw.split(['\r', '\n']) {
        assert!(line.chars().count() <= 80, "a line wider than 80 columns: {line:?}\n{raw}");
    }
    // Not a terminal: the verdict is one line.
    let piped = Command::new("sh").args(["-c", &run]).output().unwrap();
    let text = String::from_utf8_lossy(&piped.stdout);
    assert!(text.lines().any(|l| l.contains("Hot set") && l.chars().count() > 80), "{text}");
}

/// `run --quick`'s plan line, the longest line it prints before measuring,
/// fits an 80-column terminal (wrapped at words, nothing cut). The run is
/// interrupted once the plan is out.
#[test]
fn the_plan_line_fits_80_columns() {
    if !have_script() {
        return;
    }
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!("stty cols 80 rows 24; {} run --quick --json {}/r.json", common::exe(), dir.path().display());
    let mut child = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .env("MEMPERF_RESULTS", common::no_saved_results())
        .stdout(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let start = std::time::Instant::now();
    // The plan ends with the last share, "%)", and a line break.
    let plan_done = |raw: &[u8]| {
        let text = String::from_utf8_lossy(raw);
        text.find("plan:").is_some_and(|at| text[at..].contains("%)\r\n") || text[at..].contains("%)\n"))
    };
    while !plan_done(&raw) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "no plan line: {}",
            String::from_utf8_lossy(&raw)
        );
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    // SAFETY: kill sends a signal to the test's own child process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let _ = out.read_to_end(&mut raw);
    let _ = child.wait();
    let text = String::from_utf8_lossy(&raw).replace("\u{1b}[2K", "\r");
    let at = text.find("plan:").expect("the plan line");
    let plan: Vec<&str> =
        text[at..].split(['\r', '\n']).filter(|l| !l.is_empty()).take_while(|l| !l.contains('[')).collect();
    assert!(plan.len() > 1, "the quick suite's plan is longer than 80 columns, so it wraps: {plan:?}");
    for line in &plan {
        assert!(line.chars().count() <= 80, "a plan line wider than 80 columns: {line:?}");
    }
    let joined = plan.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    assert!(joined.contains("latency") && joined.ends_with("%)"), "the whole plan, nothing cut: {joined}");
}
