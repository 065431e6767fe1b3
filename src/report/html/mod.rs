//! `report.html`: one self-contained page (inline CSS and SVG, nothing
//! fetched), rendered from the document alone. At the top the headline
//! figures and the advice they imply; then one section per experiment with
//! its question, the classic result it modernises, this machine's answer,
//! its plots, its warnings with their fixes, and the command to reproduce
//! it. Every string that comes from the machine or the command line is
//! escaped.

mod parts;
mod section;
mod style;

pub use parts::{describe, escape, reproduce};

use super::plot::Plot;
use super::{headlines, text};
use crate::model::document::{Document, ExperimentRecord, Status};
use parts::{figure_id, strip_xml_decl, warnings_html};
use section::Block;

/// Links from a line of advice to the table row (else the experiment's
/// section) and the first figure it rests on.
fn evidence(answers: &[(String, Vec<Block>)], a: &headlines::Advice, plots: &[Plot]) -> String {
    let experiment = a.experiment;
    if experiment.is_empty() {
        return String::new();
    }
    let blocks = answers.iter().find(|(name, _)| name == experiment).map(|(_, b)| b.as_slice()).unwrap_or(&[]);
    let row = a.row.as_deref().and_then(|k| section::row_of(blocks, k));
    let mut links = vec![match row {
        Some(k) => format!("<a href=\"#exp-{}-line-{k}\">{} table row</a>", escape(experiment), escape(experiment)),
        None => format!("<a href=\"#exp-{}\">{} section</a>", escape(experiment), escape(experiment)),
    }];
    if let Some(p) = plots.iter().find(|p| p.experiment == experiment) {
        links.push(format!("<a href=\"#{}\">figure</a>", figure_id(p)));
    }
    format!(" <span class=\"evidence\">(evidence: {})</span>", links.join(", "))
}

/// The whole page: the machine, a table of contents, the summary (key
/// figures, advice, what was not measured), then one section per
/// experiment.
pub fn render(doc: &Document, plots: &[Plot]) -> String {
    // Each experiment's text with its tables kept whole, rendered once for
    // its section and the links from advice to its rows.
    let answers: Vec<(String, Vec<Block>)> = doc
        .experiments
        .iter()
        .map(|rec| {
            let (text, tables) = crate::report::table::captured(|| text::experiment(doc, rec));
            (rec.name.clone(), section::blocks(&text, tables))
        })
        .collect();
    let metrics = headlines::metrics(doc);
    let advice = headlines::advice_items(doc);
    let mut h = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!(
        "<title>memperf — {}</title>\n<style>{}</style>\n</head>\n<body>\n",
        escape(&doc.origin.hostname),
        style::CSS
    ));
    h.push_str(&header(doc));
    h.push_str("<main>\n");
    h.push_str(&contents(doc));
    h.push_str(&summary(doc, &metrics, &advice, &answers, plots));
    for (rec, (_, blocks)) in doc.experiments.iter().zip(&answers) {
        let id = headlines::id_part(&rec.name);
        let parts = section::Parts {
            doc,
            rec,
            blocks,
            plots: plots.iter().filter(|p| p.experiment == rec.name).collect(),
            metrics: metrics.iter().filter(|m| m.id.split('.').next() == Some(id.as_str())).collect(),
            advice: advice.iter().filter(|a| a.experiment == rec.name).collect(),
        };
        let extra = match &rec.outcome {
            Some(o) if rec.status == Status::Completed => super::outcome::of(o).html_extra(),
            _ => None,
        };
        h.push_str(&section::section(&parts, extra.unwrap_or_default()));
    }
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

/// The machine and the run, above everything.
fn header(doc: &Document) -> String {
    let m = &doc.machine;
    format!(
        "<header><h1>memperf report — {}</h1>\n<p>{} {} · {} logical CPUs · kernel {} · {}</p>\n<p>run {} · started {} · memperf {} ({}, {} build)</p>\n<p>command: <code>{}</code></p></header>\n",
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
        escape(&crate::terminal::shell_quote(&doc.command_line)),
    )
}

/// The table of contents: one link per section.
fn contents(doc: &Document) -> String {
    let mut links = vec!["<a href=\"#summary\">Summary</a>".to_string()];
    for rec in &doc.experiments {
        let (title, _, _) = describe(&rec.name);
        let skipped = if rec.status == Status::Completed { "" } else { " (not measured)" };
        links.push(format!("<a href=\"#exp-{}\">{}</a>{skipped}", escape(&rec.name), escape(title)));
    }
    format!("<nav class=\"toc\" id=\"contents\"><strong>Contents:</strong> {}</nav>\n", links.join(" · "))
}

/// The summary: the key figures ([`super::screen::key_figures`]),
/// the advice with its evidence, what was not measured, the run's
/// warnings, and every headline folded.
fn summary(
    doc: &Document,
    metrics: &[headlines::Headline],
    advice: &[headlines::Advice],
    answers: &[(String, Vec<Block>)],
    plots: &[Plot],
) -> String {
    let mut h = String::from("<section id=\"summary\">\n<h2>Summary</h2>\n");
    h.push_str("<div class=\"grid\">\n");
    if !metrics.is_empty() {
        let key = super::screen::key_figures(metrics);
        h.push_str(&section::figures_table("data figures key", "key figure", key));
    }
    if !advice.is_empty() {
        h.push_str("<div class=\"advice\"><h3>What to change</h3>\n<ul class=\"advice\">\n");
        for a in advice {
            h.push_str(&format!("<li>{}{}</li>\n", escape(&a.text), evidence(answers, a, plots)));
        }
        h.push_str("</ul></div>\n");
    }
    h.push_str("</div>\n");
    let skipped: Vec<&ExperimentRecord> = doc.experiments.iter().filter(|e| e.status != Status::Completed).collect();
    if !skipped.is_empty() {
        let names: Vec<String> = skipped
            .iter()
            .map(|e| format!("{} ({})", escape(&e.name), escape(e.skip_reason.as_deref().unwrap_or("skipped"))))
            .collect();
        h.push_str(&format!("<p class=\"bad\">Not measured: {}</p>\n", names.join("; ")));
    }
    h.push_str(&warnings_html(&doc.warnings));
    if metrics.len() > 2 {
        h.push_str(&format!("<details>\n<summary>All {} headline figures</summary>\n", metrics.len()));
        h.push_str(&section::figures_table("data figures", "headline", metrics));
        h.push_str("</details>\n");
    }
    h + "</section>\n"
}

/// The page of `compare --html`: the comparison table (regressions marked)
/// and every line chart both runs drew, on the same axes.
pub fn compare_page(c: &super::compare::Comparison, overlays: &[(String, String)]) -> String {
    let mut h = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!("<title>memperf compare</title>\n<style>{}</style>\n</head>\n<body>\n", style::CSS));
    h.push_str("<header><h1>memperf compare</h1>\n");
    for (name, sides) in [("A", &c.a), ("B", &c.b)] {
        for side in sides {
            h.push_str(&format!(
                "<p>{name}: {} · {} · run {} · {}</p>\n",
                escape(&side.hostname),
                escape(&side.started_utc),
                escape(&side.run_id),
                escape(&side.cpu)
            ));
        }
    }
    h.push_str("</header>\n<main>\n<section id=\"table\">\n");
    if !c.same_cpu {
        h.push_str(
            "<p class=\"bad\">A and B ran on different CPUs: the differences are the machines', not a change.</p>\n",
        );
    }
    h.push_str(&format!("<p>{}</p>\n", escape(super::compare::basis_text(c).trim())));
    h.push_str("<table class=\"metrics\"><tr><th>metric</th><th>A</th><th>B</th><th>B/A</th><th>verdict</th></tr>\n");
    for r in &c.rows {
        let said = super::compare::row_said(r, r.higher_is_better);
        let verdict = match said.strip_suffix(" — REGRESSION") {
            Some(s) => format!("{} <strong>REGRESSION</strong>", escape(s)),
            None => escape(&said),
        };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>×{:.3}</td><td>{verdict}</td></tr>\n",
            escape(&r.metric),
            escape(&crate::units::readable(r.a, &r.unit)),
            escape(&crate::units::readable(r.b, &r.unit)),
            r.ratio,
        ));
    }
    h.push_str("</table>\n");
    for line in super::compare::summary(c).lines().filter(|l| !l.is_empty()) {
        h.push_str(&format!("<p>{}</p>\n", escape(line)));
    }
    h.push_str("</section>\n");
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
