//! One experiment's section of the report, built to be read at a glance:
//! its question, the advice it gives, its first chart and its headline
//! figures as a table open; everything else (every table of its text as a
//! real HTML table, its prose wrapped, the other charts, the classic
//! result, how to reproduce it) folded into a `<details>` below, so the
//! page opens at about one screen per experiment.

use super::parts::{describe, escape, figure_id, reproduce, strip_xml_decl, warnings_html};
use crate::model::document::{Document, ExperimentRecord, Status};
use crate::report::headlines::{Advice, Headline};
use crate::report::plot::Plot;
use crate::report::table::{HtmlTable, MARK};

/// An experiment's text as the page draws it: prose lines and tables, in
/// order.
#[derive(Debug)]
pub enum Block {
    /// A line of prose; `indent`: it details the line above.
    Line {
        text: String,
        indent: bool,
    },
    Table(HtmlTable),
}

/// The experiment's text (rendered with its tables kept whole) as blocks.
pub fn blocks(text: &str, tables: Vec<HtmlTable>) -> Vec<Block> {
    let mut tables: Vec<Option<HtmlTable>> = tables.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(i) = trimmed.strip_prefix(MARK).and_then(|n| n.trim().parse::<usize>().ok()) {
            if let Some(t) = tables.get_mut(i).and_then(Option::take) {
                out.push(Block::Table(t));
            }
        } else if !trimmed.is_empty() {
            out.push(Block::Line { text: trimmed.to_string(), indent: line.starts_with(' ') });
        }
    }
    out
}

/// The blocks of `answer` that hold `key` (case-insensitive): the index,
/// counting each prose line and each table row, of the first that does.
pub fn row_of(blocks: &[Block], key: &str) -> Option<usize> {
    let key = key.to_lowercase();
    let mut k = 0;
    for b in blocks {
        match b {
            Block::Line { text, .. } => {
                if text.to_lowercase().contains(&key) {
                    return Some(k);
                }
                k += 1;
            }
            Block::Table(t) => {
                for row in &t.rows {
                    if row.join(" ").to_lowercase().contains(&key) {
                        return Some(k);
                    }
                    k += 1;
                }
            }
        }
    }
    None
}

/// The blocks as HTML: each prose line a paragraph, each table a real
/// table; with `anchors`, every line and row carries the anchor advice
/// links to (`exp-NAME-line-K`, numbered as [`row_of`] counts). A copy
/// shown open above the whole answer has none (an id stands once).
fn blocks_html(name: &str, blocks: &[Block], anchors: bool) -> String {
    let mut s = String::new();
    let mut k = 0;
    let id = |k: usize| if anchors { format!(" id=\"exp-{}-line-{k}\"", escape(name)) } else { String::new() };
    for b in blocks {
        match b {
            Block::Line { text, indent } => {
                let class = if *indent { " class=\"sub\"" } else { "" };
                s.push_str(&format!("<p{}{class}>{}</p>\n", id(k), escape(text)));
                k += 1;
            }
            Block::Table(t) => {
                s.push_str("<table class=\"data\">\n<tr>");
                for (c, h) in t.header.iter().enumerate() {
                    s.push_str(&format!("<th{}>{}</th>", num_class(t, c), escape(h)));
                }
                s.push_str("</tr>\n");
                for row in &t.rows {
                    s.push_str(&format!("<tr{}>", id(k)));
                    for (c, cell) in row.iter().enumerate() {
                        s.push_str(&format!("<td{}>{}</td>", num_class(t, c), escape(cell)));
                    }
                    s.push_str("</tr>\n");
                    k += 1;
                }
                s.push_str("</table>\n");
            }
        }
    }
    s
}

fn num_class(t: &HtmlTable, c: usize) -> &'static str {
    if t.numeric.get(c).copied().unwrap_or(false) {
        " class=\"num\""
    } else {
        ""
    }
}

/// Headline figures a section shows open; the rest are in the summary's
/// list of every headline and in the whole answer's tables.
const OPEN_FIGURES: usize = 8;

/// Headline figures as a table of `class`: `header` and value, one row
/// each (the summary's key figures and list of headlines, and each
/// section's figures).
pub(super) fn figures_table<'m>(class: &str, header: &str, metrics: impl IntoIterator<Item = &'m Headline>) -> String {
    let mut s = format!("<table class=\"{class}\">\n<tr><th>{header}</th><th class=\"num\">value</th></tr>\n");
    for m in metrics {
        let value = crate::units::readable(m.value, &m.unit.to_string());
        s.push_str(&format!("<tr><td>{}</td><td class=\"num\">{}</td></tr>\n", escape(&m.name), escape(&value)));
    }
    s + "</table>\n"
}

/// The experiment's headline figures, the first [`OPEN_FIGURES`] of them.
fn figures_html(metrics: &[&Headline]) -> String {
    let mut s = figures_table("data figures", "figure", metrics.iter().take(OPEN_FIGURES).copied());
    if metrics.len() > OPEN_FIGURES {
        s.push_str(&format!(
            "<p class=\"sub\">and {} more: every figure is in the whole answer below and in the summary's list of headlines</p>\n",
            metrics.len() - OPEN_FIGURES
        ));
    }
    s
}

/// What a section shows: the document, its record, its text as blocks,
/// its plots, its headline figures and the advice resting on it.
pub struct Parts<'a> {
    pub doc: &'a Document,
    pub rec: &'a ExperimentRecord,
    pub blocks: &'a [Block],
    pub plots: Vec<&'a Plot>,
    pub metrics: Vec<&'a Headline>,
    pub advice: Vec<&'a Advice>,
}

/// A section: open, the question, the advice, the first chart and the
/// headline figures (else the first table); folded, the rest.
pub fn section(p: &Parts, extra: String) -> String {
    let (title, question, classic) = describe(&p.rec.name);
    let name = escape(&p.rec.name);
    let mut s = format!("<section id=\"exp-{name}\">\n<h2>{}</h2>\n", escape(title));
    if !question.is_empty() {
        s.push_str(&format!("<p class=\"question\">{}</p>\n", escape(question)));
    }
    if p.rec.status != Status::Completed {
        s.push_str(&format!(
            "<p class=\"bad\">Not measured: {}</p>\n",
            escape(p.rec.skip_reason.as_deref().unwrap_or("skipped"))
        ));
        s.push_str(&warnings_html(&p.rec.warnings));
        s.push_str(&reproduce_html(p));
        return s + "</section>\n";
    }
    if !p.rec.valid {
        s.push_str(
            "<p class=\"bad\">A result of this experiment failed validation: its figures are not to be trusted.</p>\n",
        );
    }
    s.push_str(&advice_html(&p.advice));
    let more_plots = p.plots.get(1..).unwrap_or_default();
    s.push_str(&opening_html(p));
    s.push_str(&warnings_html(&p.rec.warnings));
    let tables = p.blocks.iter().filter(|b| matches!(b, Block::Table(_))).count();
    let mut what = vec![format!("{tables} table{}", if tables == 1 { "" } else { "s" })];
    if !more_plots.is_empty() {
        what.push(format!("{} more chart{}", more_plots.len(), if more_plots.len() == 1 { "" } else { "s" }));
    }
    let folded = !(is_short(p) && p.metrics.is_empty());
    if folded {
        s.push_str(&format!(
            "<details>\n<summary>The whole answer: {}, the method and how to reproduce it</summary>\n",
            what.join(", ")
        ));
        s.push_str(&blocks_html(&p.rec.name, p.blocks, true));
    }
    s.push_str(&extra);
    for f in more_plots {
        s.push_str(&figure_html(f));
    }
    if !classic.is_empty() {
        s.push_str(&format!("<p class=\"classic\">Classic result: {}</p>\n", escape(classic)));
    }
    s.push_str(&reproduce_html(p));
    if folded {
        s.push_str("</details>\n");
    }
    s + "</section>\n"
}

/// A section short enough to show whole: six blocks or fewer.
fn is_short(p: &Parts) -> bool {
    p.blocks.len() <= 6
}

fn advice_html(advice: &[&Advice]) -> String {
    if advice.is_empty() {
        return String::new();
    }
    let items: String = advice.iter().map(|a| format!("<li>{}</li>\n", escape(&a.text))).collect();
    format!("<ul class=\"advice\">\n{items}</ul>\n")
}

/// What a section opens with: its first chart, then its headline figures,
/// or (without them) the whole text when short, else its first table.
fn opening_html(p: &Parts) -> String {
    let mut s = p.plots.first().map(|f| figure_html(f)).unwrap_or_default();
    if !p.metrics.is_empty() {
        s.push_str(&figures_html(&p.metrics));
    } else if is_short(p) {
        s.push_str(&blocks_html(&p.rec.name, p.blocks, true));
    } else if let Some(i) = p.blocks.iter().position(|b| matches!(b, Block::Table(_))) {
        // The first table (with the line that introduces it) opens the section.
        let from = if i > 0 && matches!(p.blocks[i - 1], Block::Line { .. }) { i - 1 } else { i };
        s.push_str(&blocks_html(&p.rec.name, &p.blocks[from..=i], false));
    }
    s
}

fn figure_html(p: &Plot) -> String {
    format!(
        "<figure class=\"plot\" id=\"{}\">{}<figcaption>{}</figcaption></figure>\n",
        figure_id(p),
        strip_xml_decl(&p.svg),
        escape(&p.title)
    )
}

fn reproduce_html(p: &Parts) -> String {
    format!("<p class=\"reproduce\">Reproduce: <code>{}</code></p>\n", escape(&reproduce(p.doc, &p.rec.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[&[&str]]) -> HtmlTable {
        HtmlTable {
            header: vec!["a".into(), "b".into()],
            rows: rows.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect(),
            numeric: vec![false, true],
        }
    }

    /// Text and captured tables come back in order; a row is found by its
    /// text, counting lines and rows alike, and its anchor is where it is.
    #[test]
    fn blocks_keep_their_order_and_rows_their_anchors() {
        let text = format!("title\n  detail\n{MARK}0\nverdict: fine\n");
        let b = blocks(&text, vec![table(&[&["4k", "1.0"], &["thp", "2.0"]])]);
        assert_eq!(b.len(), 4);
        assert!(matches!(&b[1], Block::Line { indent: true, .. }));
        assert_eq!(row_of(&b, "THP"), Some(3));
        assert_eq!(row_of(&b, "verdict"), Some(4));
        assert_eq!(row_of(&b, "nowhere"), None);
        let html = blocks_html("x", &b, true);
        assert!(html.contains("<tr id=\"exp-x-line-3\"><td>thp</td><td class=\"num\">2.0</td></tr>"), "{html}");
        assert!(html.contains("<p id=\"exp-x-line-1\" class=\"sub\">detail</p>"), "{html}");
        assert!(!html.contains("<pre"), "no pasted terminal text: {html}");
    }
}
