//! What the page's parts share: escaping, an experiment's title and
//! question, the command that reproduces it, warnings, a figure's anchor.

use crate::model::document::{Document, Warning};
use crate::report::plot::Plot;

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

pub(super) fn warnings_html(ws: &[Warning]) -> String {
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

/// The anchor of a plot's figure: `fig-` and its file name, made safe.
pub(super) fn figure_id(p: &Plot) -> String {
    let name: String =
        p.file_name.trim_end_matches(".svg").chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("fig-{name}")
}

/// The SVG element of a drawn chart, without its XML declaration.
pub(super) fn strip_xml_decl(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
