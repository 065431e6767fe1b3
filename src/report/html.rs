//! `report.html`: one self-contained page (inline CSS and SVG, nothing
//! fetched), rendered from the document alone. At the top the headline
//! figures and the advice they imply; then one section per experiment with
//! its question, the classic result it modernises, this machine's answer,
//! its plots, its warnings with their fixes, and the command to reproduce
//! it. Every string that comes from the machine or the command line is
//! escaped.

use super::plots::Plot;
use super::{headlines, text};
use crate::model::document::{Document, ExperimentRecord, Status, Warning};

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('?'),
            _ => out.push(c),
        }
    }
    out
}

/// (title, question, classic result) of an experiment; a name from a
/// newer memperf gets a plain title.
pub fn describe(name: &str) -> (&'static str, &'static str, &'static str) {
    crate::experiments::registry::find(name)
        .map(|e| e.about)
        .map_or(("Experiment", "", ""), |a| (a.title, a.question, a.classic))
}

/// The command that reproduces one experiment of this document.
pub fn reproduce(doc: &Document, name: &str) -> String {
    let args = &doc.command_line;
    let exe = "memperf";
    if args.get(1).map(String::as_str) == Some("run") {
        let mut cmd = format!("{exe} run --only {name}");
        for flag in ["--quick", "--full", "--reserve-hugepages"] {
            if args.iter().any(|a| a == flag) {
                cmd.push(' ');
                cmd.push_str(flag);
            }
        }
        cmd
    } else {
        std::iter::once(exe.to_string()).chain(args.iter().skip(1).cloned()).collect::<Vec<_>>().join(" ")
    }
}

/// Colours chosen for WCAG AA (≥ 4.5:1 for text) in light, dark and print.
const CSS: &str = "
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px;min-width:0}
header{background:#1d2430;color:#fff;padding:20px 24px}
header h1{margin:0 0 4px;font-size:24px}
header p{margin:2px 0;color:#d5dbe4;font-size:13px;overflow-wrap:anywhere}
header code{background:#2e3a4d;color:#ffffff}
section{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:16px 20px;margin:18px 0;min-width:0;overflow-wrap:anywhere}
h2{margin:0 0 8px;font-size:20px}
.question{font-weight:600}
.classic{color:#4f5661;font-style:italic}
pre{background:#f3f5f8;border-radius:6px;padding:10px;overflow-x:auto;font-size:12px;line-height:1.35;max-width:100%;box-sizing:border-box}
figure{margin:12px 0}
figure svg{max-width:100%;height:auto;border:1px solid #e5e8ee;border-radius:6px;background:#fff}
figcaption{font-size:13px;color:#4f5661}
.warn{background:#fff7e0;border-left:4px solid #b38600;padding:6px 10px;margin:6px 0;font-size:14px}
.fix{color:#3d3d3d}
.bad{background:#fde8e8;border-left:4px solid #c0392b;padding:6px 10px}
table.metrics{border-collapse:collapse;font-size:14px;max-width:100%}
table.metrics td,table.metrics th{border-bottom:1px solid #e5e8ee;padding:4px 10px;text-align:left}
code{background:#f3f5f8;padding:1px 5px;border-radius:4px;overflow-wrap:anywhere}
ul.advice li{margin:4px 0}
a{color:#1a56a8}
.evidence{font-size:13px}
@media (prefers-color-scheme: dark){
body{background:#11151b;color:#e6e9ee}
section{background:#1a2029;border-color:#2f3845}
pre,code{background:#242c38;color:#e6e9ee}
.classic,figcaption{color:#b9c1cc}
.warn{background:#3a3115;color:#f3e9c9;border-left-color:#e0a800}
.fix{color:#e2d8b8}
.bad{background:#3d1e1e;color:#f5dede}
table.metrics td,table.metrics th{border-bottom-color:#2f3845}
a{color:#8ab4f8}
figure svg{border-color:#2f3845}
}
@media print{
body{background:#fff;color:#000;font-size:11pt}
header{background:#fff;color:#000;border-bottom:2px solid #000;padding:0 0 8px}
header p,header code{color:#000;background:#fff}
main{max-width:none;padding:0}
section{border:none;padding:0;break-inside:avoid-page}
pre{white-space:pre-wrap;background:#fff;border:1px solid #999}
figure{break-inside:avoid}
a{color:#000;text-decoration:none}
}
";

fn warnings_html(ws: &[Warning]) -> String {
    ws.iter()
        .map(|w| {
            let fix = w
                .fix
                .as_ref()
                .map(|f| format!("<br><span class=\"fix\">Fix: <code>{}</code></span>", escape(f)))
                .unwrap_or_default();
            format!("<div class=\"warn\"><strong>{}</strong>: {}{fix}</div>\n", escape(&w.code), escape(&w.message))
        })
        .collect()
}

fn section(doc: &Document, rec: &ExperimentRecord, answer: &str, plots: &[Plot]) -> String {
    let (title, question, classic) = describe(&rec.name);
    let mut s = format!("<section id=\"exp-{}\">\n<h2>{}</h2>\n", escape(&rec.name), escape(title));
    if !question.is_empty() {
        s.push_str(&format!("<p class=\"question\">{}</p>\n", escape(question)));
    }
    if !classic.is_empty() {
        s.push_str(&format!("<p class=\"classic\">Classic result: {}</p>\n", escape(classic)));
    }
    match rec.status {
        Status::Completed => {
            if !rec.valid {
                s.push_str("<p class=\"bad\">A result of this experiment failed validation: its figures are not to be trusted.</p>\n");
            }
            // One anchor per line, so advice can link to the row it rests on.
            let lines: Vec<String> = answer
                .lines()
                .enumerate()
                .map(|(k, l)| format!("<span id=\"exp-{}-line-{k}\">{}</span>", escape(&rec.name), escape(l)))
                .collect();
            s.push_str(&format!("<h3>This machine's answer</h3>\n<pre>{}\n</pre>\n", lines.join("\n")));
            if let Some(crate::model::Outcome::C2c(o)) = &rec.outcome {
                s.push_str(&heat_map(o));
            }
            for p in plots.iter().filter(|p| p.experiment == rec.name) {
                s.push_str(&format!(
                    "<figure class=\"plot\" id=\"{}\">{}<figcaption>{}</figcaption></figure>\n",
                    figure_id(p),
                    strip_xml_decl(&p.svg),
                    escape(&p.title)
                ));
            }
        }
        _ => s.push_str(&format!(
            "<p class=\"bad\">Not measured: {}</p>\n",
            escape(rec.skip_reason.as_deref().unwrap_or("skipped"))
        )),
    }
    s.push_str(&warnings_html(&rec.warnings));
    s.push_str(&format!("<p>Reproduce: <code>{}</code></p>\n</section>\n", escape(&reproduce(doc, &rec.name))));
    s
}

/// The c2c matrix as a heat map: one table per handoff, each cell shaded
/// from light (fast) to deeper (slow) on the scale of that table, dark text
/// on every shade (contrast holds in light and dark mode).
fn heat_map(o: &crate::model::outcome::c2c::Outcome) -> String {
    let mut s = String::new();
    for &h in &o.handoffs {
        let m = o.matrix(h);
        let values: Vec<f64> = m.iter().flatten().flatten().copied().collect();
        let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        s.push_str(&format!(
            "<table class=\"heat\"><caption>{} handoff: one-way ns, CPU by CPU (lighter is faster)</caption><tr><th>CPU</th>",
            escape(h.name())
        ));
        for c in &o.cpus {
            s.push_str(&format!("<th>{c}</th>"));
        }
        s.push_str("</tr>\n");
        for (i, row) in m.iter().enumerate() {
            s.push_str(&format!("<tr><th>{}</th>", o.cpus[i]));
            for cell in row {
                match cell {
                    Some(v) => {
                        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                        let light = 96.0 - 24.0 * t;
                        s.push_str(&format!("<td style=\"background:hsl(28,85%,{light:.0}%);color:#111\">{v:.1}</td>"));
                    }
                    None => s.push_str("<td style=\"background:#fff;color:#111\">–</td>"),
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    }
    s
}

/// The anchor of a plot's figure: `fig-` and its file name, made safe.
fn figure_id(p: &Plot) -> String {
    let name: String =
        p.file_name.trim_end_matches(".svg").chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("fig-{name}")
}

/// The line of an experiment's text (`answers`: name, text) that holds
/// `key` (case-insensitive).
fn row_of(answers: &[(String, String)], experiment: &str, key: &str) -> Option<usize> {
    let (_, answer) = answers.iter().find(|(name, _)| name == experiment)?;
    let key = key.to_lowercase();
    answer.lines().position(|l| l.to_lowercase().contains(&key))
}

/// Links from a line of advice to the table row (else the experiment's
/// section) and the first figure it rests on.
fn evidence(answers: &[(String, String)], a: &headlines::Advice, plots: &[Plot]) -> String {
    let experiment = a.experiment;
    if experiment.is_empty() {
        return String::new();
    }
    let row = a.row.as_deref().and_then(|k| row_of(answers, experiment, k));
    let mut links = vec![match row {
        Some(k) => format!("<a href=\"#exp-{}-line-{k}\">{} table row</a>", escape(experiment), escape(experiment)),
        None => format!("<a href=\"#exp-{}\">{} table</a>", escape(experiment), escape(experiment)),
    }];
    if let Some(p) = plots.iter().find(|p| p.experiment == experiment) {
        links.push(format!("<a href=\"#{}\">figure</a>", figure_id(p)));
    }
    format!(" <span class=\"evidence\">(evidence: {})</span>", links.join(", "))
}

fn strip_xml_decl(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// The whole page.
pub fn render(doc: &Document, plots: &[Plot]) -> String {
    let m = &doc.machine;
    // Each experiment's text, rendered once for its section and the links
    // from advice to its rows.
    let answers: Vec<(String, String)> =
        doc.experiments.iter().map(|rec| (rec.name.clone(), text::experiment(doc, rec))).collect();
    let mut h = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!(
        "<title>memperf — {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        escape(&doc.origin.hostname)
    ));
    h.push_str(&format!(
        "<header><h1>memperf report — {}</h1>\n<p>{} {} · {} logical CPUs · kernel {} · {}</p>\n<p>run {} · started {} · memperf {} ({}, {} build)</p>\n<p>command: <code>{}</code></p></header>\n<main>\n",
        escape(&doc.origin.hostname),
        escape(&m.cpu.identity.vendor),
        escape(&m.cpu.identity.model_name),
        m.cpu.logical_cpus,
        escape(&m.kernel),
        escape(m.cpu.identity.hypervisor.as_deref().unwrap_or("bare metal")),
        escape(&doc.origin.run_id),
        escape(&doc.origin.started_utc),
        escape(&doc.build.memperf_version),
        escape(&doc.build.git_revision),
        escape(&doc.build.profile),
        escape(&super::sink::shell_quote(&doc.command_line)),
    ));
    h.push_str("<section id=\"summary\">\n<h2>What this machine tells you</h2>\n<ul class=\"advice\">\n");
    for a in headlines::advice_items(doc) {
        h.push_str(&format!("<li>{}{}</li>\n", escape(&a.text), evidence(&answers, &a, plots)));
    }
    h.push_str("</ul>\n");
    let metrics = headlines::metrics(doc);
    if !metrics.is_empty() {
        h.push_str("<table class=\"metrics\"><tr><th>headline</th><th>value</th></tr>\n");
        for x in metrics {
            let value = crate::units::readable(x.value, &x.unit.to_string());
            h.push_str(&format!("<tr><td>{}</td><td>{}</td></tr>\n", escape(&x.name), escape(&value)));
        }
        h.push_str("</table>\n");
    }
    let skipped: Vec<&ExperimentRecord> = doc.experiments.iter().filter(|e| e.status != Status::Completed).collect();
    if !skipped.is_empty() {
        h.push_str("<p class=\"bad\">Not measured: ");
        let names: Vec<String> = skipped
            .iter()
            .map(|e| format!("{} ({})", escape(&e.name), escape(e.skip_reason.as_deref().unwrap_or("skipped"))))
            .collect();
        h.push_str(&names.join("; "));
        h.push_str("</p>\n");
    }
    h.push_str(&warnings_html(&doc.warnings));
    h.push_str("</section>\n");
    for rec in &doc.experiments {
        let answer = answers.iter().find(|(name, _)| *name == rec.name).map(|a| a.1.as_str()).unwrap_or("");
        h.push_str(&section(doc, rec, answer, plots));
    }
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

/// The page of `compare --html`: the comparison table (regressions marked)
/// and every line chart both runs drew, on the same axes.
pub fn compare_page(c: &super::compare::Comparison, overlays: &[(String, String)]) -> String {
    let mut h = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!("<title>memperf compare</title>\n<style>{CSS}</style>\n</head>\n<body>\n"));
    h.push_str("<header><h1>memperf compare</h1>\n");
    for (name, side) in [("A", &c.a), ("B", &c.b)] {
        h.push_str(&format!(
            "<p>{name}: {} · {} · run {} · {}</p>\n",
            escape(&side.hostname),
            escape(&side.started_utc),
            escape(&side.run_id),
            escape(&side.cpu)
        ));
    }
    h.push_str("</header>\n<main>\n<section id=\"table\">\n");
    if !c.same_cpu {
        h.push_str(
            "<p class=\"bad\">A and B ran on different CPUs: the differences are the machines', not a change.</p>\n",
        );
    }
    h.push_str("<table class=\"metrics\"><tr><th>metric</th><th>A</th><th>B</th><th>B/A</th><th>verdict</th></tr>\n");
    for r in &c.rows {
        let verdict = r.verdict.describe();
        let flag = if r.regression {
            format!(" <strong>REGRESSION, {:.1}% worse</strong>", r.worse_by_pct)
        } else {
            String::new()
        };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>×{:.3}</td><td>{}{flag}</td></tr>\n",
            escape(&r.metric),
            escape(&crate::units::readable(r.a, &r.unit)),
            escape(&crate::units::readable(r.b, &r.unit)),
            r.ratio,
            escape(&verdict)
        ));
    }
    h.push_str("</table>\n</section>\n");
    for (title, svg) in overlays {
        h.push_str(&format!(
            "<section><figure class=\"plot\">{}<figcaption>{}</figcaption></figure></section>\n",
            strip_xml_decl(svg),
            escape(title)
        ));
    }
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }
}
