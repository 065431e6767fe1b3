//! `memperf run`, `report` and `compare` end to end: the document validates
//! against the JSON Schema kept in the repository, the report renders in a
//! real browser with every plot visible and no console error, hostile
//! strings come out escaped, and an interrupted run leaves a valid document
//! and report that name what was skipped.

mod common;

use common::{read_json, schema_errors, skip};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{command, memperf};

/// One quick suite run, shared by the tests of this file.
fn suite() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("results");
        let o = memperf(&["run", "--quick", "--quiet", "-o", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        (tmp, dir)
    })
    .1
}

#[test]
fn suite_writes_a_folder_whose_document_validates() {
    let dir = suite();
    for f in ["results.json", "journal.jsonl", "report.html"] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    let doc = read_json(&dir.join("results.json"));
    // An experiment's plots exist where it ran; one the time box left out
    // (on a slow host) has none, and says why.
    let record = |name: &str| doc["experiments"].as_array().unwrap().iter().find(|e| e["name"] == name).unwrap();
    for (f, name) in
        [("latency.svg", "latency"), ("tlb.svg", "tlb"), ("calls-1t.svg", "calls"), ("context.svg", "context")]
    {
        let rec = record(name);
        match rec["status"].as_str().unwrap() {
            "completed" => assert!(dir.join(f).exists(), "{f} missing"),
            _ => {
                assert!(!dir.join(f).exists(), "{f} of an experiment that did not run");
                assert!(rec["skip_reason"].as_str().is_some_and(|r| !r.is_empty()), "{rec}");
            }
        }
    }
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "{errors:#?}");
    let names: Vec<&str> = doc["experiments"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    // Every experiment of the suite, in the registry's order.
    assert_eq!(names, memperf::experiments::registry::suite_names());
    assert!(doc["experiments"].as_array().unwrap().iter().all(|e| e["valid"] == true));
}

#[test]
fn schema_rejects_a_broken_document() {
    let mut doc = read_json(&suite().join("results.json"));
    doc["schema_version"] = 4.into();
    let bw = doc["experiments"].as_array().unwrap().iter().position(|e| e["name"] == "bandwidth").unwrap();
    doc["experiments"][bw]["outcome"]["results"][0]["samples_s"] = serde_json::json!([]);
    let errors = schema_errors(&doc);
    assert!(errors.len() >= 2, "{errors:#?}");
}

#[test]
fn report_rebuilds_from_the_journal_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let journal = tmp.path().join("journal.jsonl");
    std::fs::copy(suite().join("journal.jsonl"), &journal).unwrap();
    // A torn last line, as a kill -9 mid-append would leave.
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("{\"record\": {\"name\": \"lat");
    std::fs::write(&journal, text).unwrap();
    let out = tmp.path().join("out");
    let o = memperf(&["report", journal.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let rebuilt = read_json(&out.join("results.json"));
    let original = read_json(&suite().join("results.json"));
    assert_eq!(rebuilt["experiments"], original["experiments"]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Read bandwidth and software prefetch") && html.contains("<svg"));
}

#[test]
fn compare_finds_a_constructed_regression_and_none_in_a_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let mut original = read_json(&suite().join("results.json"));
    // Without the run's host drift: how far the host moved while the test
    // suite ran beside it is no part of this case (its own unit test).
    original.as_object_mut().unwrap().remove("host_drift");
    // Nor how far the neighbours spread its bandwidth samples (a figure's
    // own spread within a run is part of its variation between runs: its
    // own unit test): each result's samples steadied around their median,
    // 0.2% apart.
    let bw = original["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "bandwidth").unwrap();
    for r in bw["outcome"]["results"].as_array_mut().unwrap() {
        let samples = r["samples_s"].as_array_mut().unwrap();
        let mut sorted: Vec<f64> = samples.iter().map(|s| s.as_f64().unwrap()).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        for (i, s) in samples.iter_mut().enumerate() {
            *s = (median * (1.0 + 0.002 * i as f64)).into();
        }
    }
    // The simd headlines' samples are the frame sets' round medians (where
    // the fit left the suite more than one array: it gives them up last).
    let frame_sets = |bw: &mut serde_json::Value| -> Vec<serde_json::Value> {
        bw["outcome"]["frame_sets"].as_array().cloned().unwrap_or_default()
    };
    let mut sets = frame_sets(bw);
    for f in &mut sets {
        let rounds = f["round_medians_bytes_per_s"].as_array_mut().unwrap();
        let first = rounds[0].as_f64().unwrap();
        for (i, r) in rounds.iter_mut().enumerate() {
            *r = (first * (1.0 + 0.002 * i as f64)).into();
        }
    }
    bw["outcome"]["frame_sets"] = sets.into();
    // B: the same run with every bandwidth sample taking twice as long.
    let mut slower = original.clone();
    let bw = slower["experiments"].as_array_mut().unwrap().iter_mut().find(|e| e["name"] == "bandwidth").unwrap();
    for r in bw["outcome"]["results"].as_array_mut().unwrap() {
        for s in r["samples_s"].as_array_mut().unwrap() {
            *s = (s.as_f64().unwrap() * 2.0).into();
        }
    }
    let mut sets = frame_sets(bw);
    for f in &mut sets {
        for r in f["round_medians_bytes_per_s"].as_array_mut().unwrap() {
            *r = (r.as_f64().unwrap() / 2.0).into();
        }
    }
    bw["outcome"]["frame_sets"] = sets.into();
    let (a, b) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    std::fs::write(&a, serde_json::to_string(&original).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_string(&slower).unwrap()).unwrap();
    let o = memperf(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "no gate, no failing status");
    let text = String::from_utf8_lossy(&o.stdout);
    let row = text.lines().find(|l| l.contains("1 thread, 4k pages, simd")).expect("simd row");
    assert!(row.contains("worse ×0.500") && row.contains("by at least 5%"), "{row}");
    let same = memperf(&["compare", a.to_str().unwrap(), a.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(!text.contains("worse ×") && !text.contains("better ×"), "no figure may differ from itself: {text}");
    assert!(text.contains(" worse, 0 better, "), "{text}");
    let bad = memperf(&["compare", a.to_str().unwrap(), "/nonexistent"]);
    assert_eq!(bad.status.code(), Some(2), "a missing file is a usage error");

    // For CI: the gate fails on the regression, passes on a copy, and the
    // JSON and the HTML page say the same.
    let (j, h) = (tmp.path().join("c.json"), tmp.path().join("c.html"));
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let gate = memperf(&[
        "compare",
        a_s,
        b_s,
        "--fail-on-regression",
        "5",
        "--json",
        j.to_str().unwrap(),
        "--html",
        h.to_str().unwrap(),
    ]);
    assert_eq!(gate.status.code(), Some(3), "{}", String::from_utf8_lossy(&gate.stdout));
    let c = read_json(&j);
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            // Its memory label says whether this machine's probe verified memory.
            let key = r["key"].as_str().unwrap_or("");
            key.starts_with("bandwidth.read{kernel=simd,memory=") && key.ends_with(",pages=4k,threads=1}")
        })
        .unwrap();
    assert_eq!(row["regression"], true, "{row}");
    assert!((row["worse_by_pct"].as_f64().unwrap() - 50.0).abs() < 0.5, "half the bandwidth: {row}");
    let page = std::fs::read_to_string(&h).unwrap();
    assert!(page.contains("REGRESSION") && page.contains("A solid, B dashed") && page.contains("<svg"));
    assert_eq!(memperf(&["compare", a_s, a_s, "--fail-on-regression", "5"]).status.code(), Some(0));
    let loose = memperf(&["compare", a_s, b_s, "--fail-on-regression", "60"]);
    assert_eq!(loose.status.code(), Some(0), "50% worse is under a 60% threshold");
    assert_eq!(memperf(&["compare", a_s, b_s, "--fail-on-regression", "lots"]).status.code(), Some(2));

    // B again, its host reference halved in the middle of the run: the
    // runs vary that much within themselves, so the loss is not resolved
    // (exit 0) and says so, and --fail-on-unjudged turns it into exit
    // status 4; that flag alone is a usage error.
    slower["host_drift"] = serde_json::json!({"size_bytes": 268435456_u64, "points": [
        {"after_experiments": 0, "read_bytes_per_s": [4.0e10, 4.0e10, 4.0e10], "chase_ns": [150.0, 150.0, 150.0]},
        {"after_experiments": 1, "read_bytes_per_s": [2.0e10, 2.0e10, 2.0e10], "chase_ns": [150.0, 150.0, 150.0]}
    ]});
    let moved = tmp.path().join("moved.json");
    std::fs::write(&moved, serde_json::to_string(&slower).unwrap()).unwrap();
    let m_s = moved.to_str().unwrap();
    let unjudged = memperf(&["compare", a_s, m_s, "--fail-on-regression", "5"]);
    let text = String::from_utf8_lossy(&unjudged.stdout);
    assert_eq!(unjudged.status.code(), Some(0), "{text}");
    assert!(text.contains("not resolved, though their estimates are worse by more than 5%"), "{text}");
    let strict = memperf(&["compare", a_s, m_s, "--fail-on-regression", "5", "--fail-on-unjudged"]);
    assert_eq!(strict.status.code(), Some(4), "{}", String::from_utf8_lossy(&strict.stdout));
    let copy = memperf(&["compare", a_s, a_s, "--fail-on-regression", "5", "--fail-on-unjudged"]);
    assert_eq!(copy.status.code(), Some(0), "{}", String::from_utf8_lossy(&copy.stdout));
    assert_eq!(memperf(&["compare", a_s, m_s, "--fail-on-unjudged"]).status.code(), Some(2));

    // Several runs a side, as folders of run folders: the runs' own spread
    // is the variation between runs.
    let side = |name: &str, doc: &serde_json::Value| {
        for i in 0..3 {
            let run = tmp.path().join(name).join(format!("run{i}"));
            std::fs::create_dir_all(&run).unwrap();
            std::fs::write(run.join("results.json"), serde_json::to_string(doc).unwrap()).unwrap();
        }
        tmp.path().join(name).to_str().unwrap().to_string()
    };
    let (many_a, many_b) = (side("many-a", &original), side("many-b", &slower));
    let many = memperf(&["compare", &many_a, "--against", &many_b, "--fail-on-regression", "5", "--json", "-"]);
    assert_eq!(many.status.code(), Some(3), "{}", String::from_utf8_lossy(&many.stderr));
    let c: serde_json::Value = serde_json::from_slice(&many.stdout).unwrap();
    assert_eq!((c["a"].as_array().unwrap().len(), c["b"].as_array().unwrap().len()), (3, 3));
    assert!(c["rows"].as_array().unwrap().iter().all(|r| r["between"] == "runs"), "{c}");
    let three = memperf(&["compare", a_s, a_s, a_s]);
    assert_eq!(three.status.code(), Some(2), "three runs without --against: which side is which?");
}

#[test]
fn hostile_host_name_and_arguments_are_escaped() {
    let mut doc = read_json(&suite().join("results.json"));
    let evil = "<script>alert('memperf')</script>";
    doc["origin"]["hostname"] = evil.into();
    doc["machine"]["hostname"] = evil.into();
    doc["machine"]["cpu"]["model_name"] = evil.into();
    doc["command_line"].as_array_mut().unwrap().push(evil.into());
    let warning = serde_json::json!({"code": "noisy", "message": evil, "fix": evil});
    doc["warnings"].as_array_mut().unwrap().push(warning);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("evil.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = memperf(&["report", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // A document not named results.json gets a folder of its own beside it.
    assert!(!tmp.path().join("results.json").exists() && !tmp.path().join("report.html").exists());
    let html = std::fs::read_to_string(tmp.path().join("evil-report/report.html")).unwrap();
    assert!(!html.contains("<script"), "unescaped script tag");
    assert!(html.contains("&lt;script&gt;alert(&#39;memperf&#39;)&lt;/script&gt;"));
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"].into_iter().find(|c| {
        Command::new(c).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    })
}

/// Runs a headless browser with a deadline; returns its stdout.
fn browser(bin: &str, profile: &Path, args: &[String]) -> String {
    let mut child = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Drain stdout while waiting: a full pipe would stall the browser.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the browser did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The report in a real browser: every plot has a non-empty box, nothing
/// is fetched, nothing is logged as an error, and a screenshot is taken.
#[test]
fn report_renders_in_a_real_browser() {
    let Some(bin) = chromium() else {
        return skip("no chromium on this machine", "apt-get install chromium; .ci/run installs it");
    };
    let tmp = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(suite().join("report.html")).unwrap();
    let probe = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e)), true);
const __err = console.error; console.error = (...a) => { window.__errors.push(a.join(' ')); __err(...a); };
window.addEventListener('load', () => {
  const boxes = [...document.querySelectorAll('figure.plot svg')].map(s => { const r = s.getBoundingClientRect(); return [r.width, r.height]; });
  const fetched = performance.getEntriesByType('resource').map(r => r.name);
  const out = document.createElement('pre'); out.id = 'memperf-check';
  out.textContent = JSON.stringify({ plots: boxes, errors: window.__errors, fetched: fetched });
  document.body.appendChild(out);
});
</script>"#;
    let checked = tmp.path().join("check.html");
    std::fs::write(&checked, html.replacen("<head>", &format!("<head>\n{probe}"), 1)).unwrap();
    let url = format!("file://{}", checked.display());
    let dom = browser(bin, &tmp.path().join("p1"), &["--virtual-time-budget=5000".into(), "--dump-dom".into(), url]);
    let start = dom.find("<pre id=\"memperf-check\">").expect("the probe ran") + "<pre id=\"memperf-check\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    let check: serde_json::Value = serde_json::from_str(&json).unwrap();
    // As many boxes as the report has plots: how many depends on what
    // the run had time to measure, so the same report says.
    let figures = html.matches("<figure class=\"plot\"").count();
    let plots = check["plots"].as_array().unwrap();
    assert!(figures >= 1, "the quick suite's report has no plot");
    assert_eq!(plots.len(), figures, "{check}");
    for p in plots {
        assert!(p[0].as_f64().unwrap() > 100.0 && p[1].as_f64().unwrap() > 50.0, "empty plot box: {check}");
    }
    assert_eq!(check["errors"].as_array().unwrap().len(), 0, "console errors: {check}");
    assert_eq!(check["fetched"].as_array().unwrap().len(), 0, "the report fetched something: {check}");

    let png = tmp.path().join("report.png");
    let report_url = format!("file://{}", suite().join("report.html").display());
    browser(
        bin,
        &tmp.path().join("p2"),
        &["--window-size=1200,3000".into(), format!("--screenshot={}", png.display()), report_url],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.len() > 20_000 && bytes.starts_with(b"\x89PNG"), "{} bytes", bytes.len());
}

/// SIGINT during the suite: the current sample finishes, the document and
/// the report are written with what completed, the rest is marked skipped,
/// and the exit status is 130.
#[test]
fn interrupted_run_leaves_a_valid_document_and_report() {
    // After the shared suite, not beside it: both would probe the levels
    // on CPU 0 at once, and the suite's sizes would be a neighbour's.
    suite();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let mut child = command()
        .args(["run", "--quick", "--quiet", "--only", "bandwidth,latency,tlb", "-o", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the journal header: the run has started measuring.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join("journal.jsonl").exists() {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the run did not stop after SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    let doc = read_json(&dir.join("results.json"));
    assert!(schema_errors(&doc).is_empty(), "{:#?}", schema_errors(&doc));
    let exps = doc["experiments"].as_array().unwrap();
    assert_eq!(exps.len(), 3, "every planned experiment is named");
    assert!(exps.iter().any(|e| e["status"] == "interrupted" && e["skip_reason"] == "skipped: interrupted"));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("skipped: interrupted"));
}

/// The probe of the layout test: at the window's width, whether the page
/// overflows sideways, every chart's axes and their labels, whether a
/// legend box meets a data path, which log axes the charts chose, and the
/// contrast of every text against its effective background.
const LAYOUT_PROBE: &str = r#"<script>
window.addEventListener('load', () => {
  // The first screen, as the page opens (details folded).
  const rect = sel => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect() : null; };
  const firstScreen = { summaryTop: rect('#summary').top, keyFiguresBottom: (rect('table.key') || rect('#summary')).bottom, adviceTop: (rect('div.advice') || rect('#summary')).top, screen: 1000 };
  // Everything else with every fold open.
  document.querySelectorAll('details').forEach(d => d.open = true);
  const rgb = s => { const m = s.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const background = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0.5) return c; } return { r: 255, g: 255, b: 255, a: 1 }; };
  const lowContrast = [], scrollInside = [], spills = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('svg') || el.id === 'memperf-check') continue;
    const ox = getComputedStyle(el).overflowX;
    if (ox !== 'visible' && el.scrollWidth > el.clientWidth + 1) scrollInside.push(el.tagName + '.' + el.className + ' ' + el.scrollWidth + '>' + el.clientWidth);
    const sec = el.closest('section');
    if (sec && el !== sec && el.getBoundingClientRect().right > sec.getBoundingClientRect().right + 1) spills.push(el.tagName + '.' + el.className);
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const fg = rgb(getComputedStyle(el).color), bg = background(el);
    const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    if (ratio < 4.5) lowContrast.push(el.tagName + '.' + el.className + ': ' + ratio.toFixed(2));
  }
  const meets = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const charts = [...document.querySelectorAll('figure.plot svg')].map(svg => {
    const legend = svg.querySelector('g.legend');
    const lb = legend ? legend.getBBox() : null;
    const data = [...svg.querySelectorAll('polyline.series, rect.bar')];
    const box = svg.getBoundingClientRect();
    const scale = svg.getScreenCTM().a;
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
    const rects = texts.map(t => t.getBoundingClientRect());
    const overlaps = [], clipped = [];
    let minFont = 1e9;
    texts.forEach((t, i) => {
      minFont = Math.min(minFont, parseFloat(getComputedStyle(t).fontSize) * scale);
      const r = rects[i];
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) clipped.push(t.textContent);
      for (let j = 0; j < i; j++) if (overlap(r, rects[j])) overlaps.push(texts[j].textContent + ' / ' + t.textContent);
    });
    return {
      id: svg.closest('figure').id,
      logX: svg.getAttribute('data-log-x'), logY: svg.getAttribute('data-log-y'),
      labels: [...svg.querySelectorAll('text.axis-label')].map(t => t.textContent),
      ticks: svg.querySelectorAll('text.tick').length,
      legendMeetsData: lb ? data.filter(d => meets(lb, d.getBBox())).length : -1,
      width: box.width, minFont, overlaps, clipped,
    };
  });
  const out = document.createElement('pre'); out.id = 'memperf-check';
  out.textContent = JSON.stringify({
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    height: document.documentElement.scrollHeight,
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    pres: document.querySelectorAll('section pre').length,
    firstScreen, charts, lowContrast, scrollInside, spills,
  });
  document.body.appendChild(out);
});
</script>"#;

/// The layout holds on this machine's report and on the report of every
/// recorded machine (whose markers, levels and knees lie elsewhere on the
/// axes: a label that fits here may meet another on another machine's).
#[test]
fn report_layout_axes_legends_and_contrast_hold_at_two_widths() {
    let Some(bin) = chromium() else {
        return skip("no chromium on this machine", "apt-get install chromium; .ci/run installs it");
    };
    check_layout(bin, &suite().join("report.html"), true);
    for doc in common::recorded_suites() {
        let tmp = tempfile::tempdir().unwrap();
        let o = memperf(&["report", doc.to_str().unwrap(), "-o", tmp.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", doc.display(), String::from_utf8_lossy(&o.stderr));
        check_layout(bin, &tmp.path().join("report.html"), false);
    }
}

/// The layout probe on `report` at two widths and in dark mode, and (with
/// `screenshots`) a whole-page screenshot of each.
fn check_layout(bin: &str, report: &Path, screenshots: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(report).unwrap();
    let checked = tmp.path().join("check.html");
    std::fs::write(&checked, html.replacen("<head>", &format!("<head>\n{LAYOUT_PROBE}"), 1)).unwrap();
    // Light at two widths, and dark mode (its own colours must hold too).
    for (width, dark) in [(1400, false), (800, false), (1400, true)] {
        let url = format!("file://{}", checked.display());
        let profile = tmp.path().join(format!("p{width}{dark}"));
        let size = format!("--window-size={width},2000");
        let mut args = vec![size, "--virtual-time-budget=5000".into(), "--dump-dom".into(), url];
        if dark {
            args.insert(0, "--force-dark-mode".into());
        }
        let dom = browser(bin, &profile, &args);
        let start = dom.find("<pre id=\"memperf-check\">").expect("the probe ran") + "<pre id=\"memperf-check\">".len();
        let end = start + dom[start..].find("</pre>").unwrap();
        let json =
            dom[start..end].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"");
        let check: serde_json::Value = serde_json::from_str(&json).unwrap();
        let check = Checked(check, report.display().to_string());
        assert_eq!(check["dark"], dark, "the colour scheme asked for: {check}");
        assert!(check["overflow"].as_f64().unwrap() <= 0.0, "{width} px: the page scrolls sideways: {check}");
        assert_eq!(check["lowContrast"].as_array().unwrap().len(), 0, "{width} px: text under 4.5:1: {check}");
        assert_eq!(check["scrollInside"].as_array().unwrap().len(), 0, "{width} px: a box scrolls sideways: {check}");
        assert_eq!(
            check["spills"].as_array().unwrap().len(),
            0,
            "{width} px: something runs out of its section: {check}"
        );
        assert_eq!(check["pres"], 0, "no pasted terminal text in the sections: {check}");
        // The first screen holds the summary: it starts near the top, its
        // key figures end on the first screen and its advice begins there.
        let first = &check["firstScreen"];
        let on_first = |k: &str| first[k].as_f64().unwrap() <= first["screen"].as_f64().unwrap();
        assert!(first["summaryTop"].as_f64().unwrap() < 400.0, "{width} px: the summary starts low: {first}");
        assert!(
            on_first("keyFiguresBottom") && on_first("adviceTop"),
            "{width} px: the summary is not on the first screen: {first}"
        );
        // Every figure the page holds is drawn (how many there are follows
        // what the run resolved on this host).
        let charts = check["charts"].as_array().unwrap();
        let figures = html.matches("<figure class=\"plot\"").count();
        assert!(figures > 0 && charts.len() == figures, "{figures} figures in the page: {check}");
        for c in charts {
            let labels: Vec<&str> = c["labels"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
            assert_eq!(labels.len(), 2, "two axis labels: {c}");
            assert!(labels.iter().all(|l| l.contains('(')), "every axis label names its unit: {c}");
            assert!(c["ticks"].as_u64().unwrap() >= 4, "ticks on the axes: {c}");
            assert_eq!(c["legendMeetsData"], 0, "a legend box covers data: {c}");
            assert!(c["width"].as_f64().unwrap() <= width as f64, "{c}");
            assert_eq!(c["overlaps"].as_array().unwrap().len(), 0, "{width} px: chart text overlapping: {c}");
            assert_eq!(c["clipped"].as_array().unwrap().len(), 0, "{width} px: chart text cut by its chart: {c}");
            if width == 800 {
                assert!(c["minFont"].as_f64().unwrap() >= 10.0, "800 px: chart text under 10 px: {c}");
            }
        }
        let latency = charts.iter().find(|c| c["id"] == "fig-latency").expect("the latency figure");
        assert_eq!((latency["logX"].as_str(), latency["logY"].as_str()), (Some("true"), Some("true")), "{latency}");
        if !screenshots {
            continue;
        }
        // The whole page, every section, in one screenshot as tall as it is.
        let height = check["height"].as_u64().unwrap().clamp(2000, 30000);
        let png = tmp.path().join(format!("report-{width}-{dark}.png"));
        let report_url = format!("file://{}", report.display());
        let mut args =
            vec![format!("--window-size={width},{height}"), format!("--screenshot={}", png.display()), report_url];
        if dark {
            args.insert(0, "--force-dark-mode".into());
        }
        browser(bin, &tmp.path().join(format!("s{width}{dark}")), &args);
        let bytes = std::fs::read(&png).expect("a screenshot");
        assert!(bytes.len() > 20_000 && bytes.starts_with(b"\x89PNG"), "{width} px: {} bytes", bytes.len());
    }
}

/// A probe's findings, shown with the report they are of.
struct Checked(serde_json::Value, String);

impl std::ops::Deref for Checked {
    type Target = serde_json::Value;
    fn deref(&self) -> &serde_json::Value {
        &self.0
    }
}

impl std::fmt::Display for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.1, self.0)
    }
}

/// Advice links to the table row and the figure it rests on, and every
/// link lands on an element of the page.
/// The suite's document is rendered without its host drift: a host that
/// moved beyond 10% during the run (CI runs tests beside each other)
/// withholds every verdict, which `report::headlines` tests on its own.
#[test]
fn advice_links_to_rows_and_figures_that_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = read_json(&suite().join("results.json"));
    let drift = doc.as_object_mut().unwrap().remove("host_drift");
    assert!(drift.is_some(), "a suite records how far the host moved");
    let path = tmp.path().join("results.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = memperf(&["report", path.to_str().unwrap(), "-o", tmp.path().join("r").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(tmp.path().join("r").join("report.html")).unwrap();
    let targets: Vec<&str> = html.split("href=\"#").skip(1).map(|s| s.split('"').next().unwrap()).collect();
    assert!(targets.iter().any(|t| t.contains("-line-")), "no advice links to a table row");
    assert!(targets.iter().any(|t| t.starts_with("fig-")), "no advice links to a figure");
    for t in targets {
        assert!(html.contains(&format!("id=\"{t}\"")), "a link to #{t}, which the page lacks");
    }
}
