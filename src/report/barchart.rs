//! Horizontal grouped bar charts written as SVG by hand: one row per
//! category, one bar per group (a thread count, a loop kind), each bar
//! labelled with its value and, where it has one, its interval drawn as a
//! whisker; an optional reference line (a limit); the value axis turns
//! logarithmic when the bars span more than two decades; the legend sits
//! in a column of its own, outside the data.

use super::linechart::{esc, legend_box, tick_label, LegendEntry, Swatch, Ticks, COLORS};
use crate::error::{Error, Result};

/// One bar: the value and, optionally, its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    pub value: f64,
    pub interval: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    /// The value axis title, with its unit.
    pub value_label: String,
    pub categories: Vec<String>,
    /// (group name, one bar per category; `None`: not measured).
    pub groups: Vec<(String, Vec<Option<Bar>>)>,
    /// A vertical reference line: (name, value).
    pub reference: Option<(String, f64)>,
    /// What a bar's whisker spans ("min–max", "94% interval of the
    /// paired median"): the value axis and the legend both say it from here.
    pub whisker: String,
}

const W: f64 = 900.0;
const LEFT: f64 = 190.0;
const TOP: f64 = 46.0;
const LEGEND_W: f64 = 200.0;
const RIGHT: f64 = W - LEGEND_W - 16.0;
const BAR_H: f64 = 16.0;

/// The value axis: its ends, and whether it is logarithmic.
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Scale {
    /// Logarithmic when the values span more than two decades; else
    /// linear from zero (or below it) with room for the labels.
    fn of(values: &[f64]) -> Scale {
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let log = min > 0.0 && max / min > 100.0;
        if log {
            return Scale { lo: 10f64.powf(min.log10().floor()), hi: 10f64.powf(max.log10().ceil()), log };
        }
        let span = (max.max(0.0) - min.min(0.0)).max(1e-9);
        Scale { lo: min.min(0.0) - if min < 0.0 { span * 0.1 } else { 0.0 }, hi: max.max(0.0) + span * 0.15, log }
    }

    /// The x of value `v`.
    fn at(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        LEFT + f * (RIGHT - LEFT)
    }
}

/// The chart's layout: each category's row height and the plot's height.
struct Rows {
    row_h: f64,
    plot_h: f64,
}

pub fn render(c: &BarChart) -> Result<String> {
    let values: Vec<f64> = c
        .groups
        .iter()
        .flat_map(|g| {
            g.1.iter().flatten().flat_map(|b| [Some(b.value), b.interval.map(|i| i.0), b.interval.map(|i| i.1)])
        })
        .flatten()
        .chain(c.reference.iter().map(|r| r.1))
        .filter(|v| v.is_finite())
        .collect();
    if c.categories.is_empty() || c.groups.is_empty() || values.is_empty() {
        return Err(Error::usage(format!("plot '{}' has no bars", c.title)));
    }
    let scale = Scale::of(&values);
    let row_h = BAR_H * c.groups.len() as f64 + 12.0;
    let rows = Rows { row_h, plot_h: row_h * c.categories.len() as f64 };
    let mut svg = frame(c, &scale, &rows);
    svg.push_str(&axes(c, &scale, &rows));
    for (gi, (_, bars)) in c.groups.iter().enumerate() {
        for (i, bar) in bars.iter().enumerate() {
            if let Some(b) = bar {
                svg.push_str(&one_bar(b, TOP + rows.row_h * i as f64 + 6.0 + BAR_H * gi as f64, gi, &scale));
            }
        }
    }
    if let Some((_, v)) = &c.reference {
        let x = scale.at(*v);
        svg.push_str(&format!(
            r##"<line class="reference" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#000000" stroke-opacity="0.7" stroke-dasharray="6 4"/>"##,
            TOP + rows.plot_h
        ));
    }
    svg.push_str(&legend(c));
    svg.push_str("</svg>\n");
    Ok(svg)
}

/// The SVG element, its background and the title.
fn frame(c: &BarChart, scale: &Scale, rows: &Rows) -> String {
    let (h, plot_h, log) = (TOP + rows.plot_h + 60.0, rows.plot_h, scale.log);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" font-family="system-ui, sans-serif" data-plot-area="{LEFT} {TOP} {} {plot_h}" data-log-x="{log}" data-log-y="false">"#,
        RIGHT - LEFT
    );
    svg.push_str(&format!(r##"<rect width="{W}" height="{h}" fill="#ffffff"/>"##));
    svg.push_str(&format!(
        r##"<text x="{}" y="26" text-anchor="middle" font-size="17" fill="#1d2430">{}</text>"##,
        W / 2.0,
        esc(&c.title)
    ));
    svg
}

/// The value axis with its ticks and label, the categories' names, and
/// the frame of the plot.
fn axes(c: &BarChart, scale: &Scale, rows: &Rows) -> String {
    let (plot_h, row_h) = (rows.plot_h, rows.row_h);
    let mut svg = String::from(r##"<g class="axes" font-size="12.5" fill="#333">"##);
    for t in super::linechart::ticks(scale.lo, scale.hi, scale.log, Ticks::Number) {
        let x = scale.at(t);
        svg.push_str(&format!(
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#e3e6eb"/><text class="tick x" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 16.0,
            esc(&tick_label(t, Ticks::Number))
        ));
    }
    for (i, name) in c.categories.iter().enumerate() {
        svg.push_str(&format!(
            r#"<text class="tick y" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 8.0,
            TOP + row_h * i as f64 + row_h / 2.0 + 4.0,
            esc(name)
        ));
    }
    svg.push_str(&format!(r##"<path d="M{LEFT} {TOP} V{} H{RIGHT}" fill="none" stroke="#333"/>"##, TOP + plot_h));
    let whisker = if has_whiskers(c) { format!("; whisker: {}", c.whisker) } else { String::new() };
    svg.push_str(&format!(
        r##"<text class="axis-label x" x="{}" y="{}" text-anchor="middle" font-size="13">{}{whisker}{}</text>"##,
        (LEFT + RIGHT) / 2.0,
        TOP + plot_h + 40.0,
        esc(&c.value_label),
        if scale.log { ", log scale" } else { "" }
    ));
    svg.push_str(
        r##"<text class="axis-label y" x="12" y="38" font-size="13" fill="#333">variant (one row each)</text></g>"##,
    );
    svg
}

/// One bar of group `gi` at height `y`: the bar, its whisker, its value.
/// A negative value is labelled left of its bar (and whisker), so its sign
/// is never hidden by the bar.
fn one_bar(b: &Bar, y: f64, gi: usize, scale: &Scale) -> String {
    let color = COLORS[gi % COLORS.len()];
    let (x0, x1) = (scale.at(if scale.log { scale.lo } else { 0.0 }), scale.at(b.value));
    let mut svg = format!(
        r#"<rect class="bar" x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{color}"/>"#,
        x0.min(x1),
        (x1 - x0).abs().max(1.0),
        BAR_H - 3.0
    );
    let mut label_x = x1;
    if let Some((l, u)) = b.interval {
        let (ym, xl, xu) = (y + (BAR_H - 3.0) / 2.0, scale.at(l), scale.at(u));
        svg.push_str(&format!(
            r##"<path class="interval" d="M{xl:.1} {ym:.1} H{xu:.1} M{xl:.1} {:.1} V{:.1} M{xu:.1} {:.1} V{:.1}" stroke="#1d2430" fill="none"/>"##,
            ym - 4.0,
            ym + 4.0,
            ym - 4.0,
            ym + 4.0
        ));
        label_x = label_x.max(xu);
    }
    let (tx, anchor) = if b.value < 0.0 {
        (x1.min(b.interval.map_or(x1, |(l, _)| scale.at(l))) - 4.0, "end")
    } else {
        (label_x + 4.0, "start")
    };
    svg.push_str(&format!(
        r##"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" font-size="12.5" fill="#1d2430">{}</text>"##,
        y + BAR_H - 5.0,
        esc(&value_text(b.value))
    ));
    svg
}

/// Whether any bar has an interval drawn as a whisker.
fn has_whiskers(c: &BarChart) -> bool {
    c.groups.iter().any(|g| g.1.iter().flatten().any(|b| b.interval.is_some()))
}

/// A bar's value, a negative one with its minus sign (−).
fn value_text(v: f64) -> String {
    let shown = value_text_unsigned(v.abs());
    if v < 0.0 && shown.trim_start_matches(['0', '.']).chars().any(|c| c.is_ascii_digit()) {
        return format!("−{shown}");
    }
    shown
}

/// A bar's magnitude at a precision fitting its size.
fn value_text_unsigned(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn legend(c: &BarChart) -> String {
    let x = RIGHT + 16.0;
    let mut entries: Vec<LegendEntry> = c
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let color = COLORS[i % COLORS.len()];
            let swatch = move |y: f64| {
                format!(r#"<rect x="{}" y="{}" width="20" height="10" fill="{color}"/>"#, x + 8.0, y - 5.0)
            };
            (g.0.clone(), Box::new(swatch) as Swatch)
        })
        .collect();
    if let Some((name, _)) = &c.reference {
        let swatch = move |y: f64| {
            format!(
                r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#000000" stroke-width="2" stroke-dasharray="6 4"/>"##,
                x + 8.0,
                x + 28.0
            )
        };
        entries.push((name.clone(), Box::new(swatch)));
    }
    if has_whiskers(c) {
        let swatch = move |y: f64| {
            format!(
                r##"<path d="M{} {y} H{} M{} {} V{} M{} {} V{}" stroke="#1d2430" fill="none"/>"##,
                x + 8.0,
                x + 28.0,
                x + 8.0,
                y - 4.0,
                y + 4.0,
                x + 28.0,
                y - 4.0,
                y + 4.0,
            )
        };
        entries.push((format!("whisker: {}", c.whisker), Box::new(swatch)));
    }
    legend_box(x, LEGEND_W - 8.0, 34.0, LEGEND_CHARS, &entries)
}

/// Characters of a legend line (what fits beside the swatch at 12.5 px).
const LEGEND_CHARS: usize = 21;

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> BarChart {
        BarChart {
            title: "saves".into(),
            value_label: "ns per round trip".into(),
            whisker: "min–max".into(),
            categories: vec!["setjmp".into(), "sigsetjmp-1".into()],
            groups: vec![
                (
                    "1 thread".into(),
                    vec![
                        Some(Bar { value: 14.0, interval: Some((13.0, 15.0)) }),
                        Some(Bar { value: 245.6, interval: None }),
                    ],
                ),
                ("2 threads".into(), vec![Some(Bar { value: 16.0, interval: None }), None]),
            ],
            reference: Some(("limit".into(), 100.0)),
        }
    }

    #[test]
    fn bars_carry_categories_values_intervals_and_a_legend() {
        let svg = render(&chart()).unwrap();
        for text in ["setjmp", "sigsetjmp-1", "246", "1 thread", "2 threads", "limit", "whisker: min–max"] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert_eq!(svg.matches(r#"class="bar""#).count(), 3, "one bar per measured value");
        assert_eq!(svg.matches(r#"class="interval""#).count(), 1);
        assert!(svg.contains(r#"class="reference""#));
    }

    /// A negative bar is labelled with its sign, left of the bar; a long
    /// legend entry wraps instead of being cut.
    #[test]
    fn negative_values_keep_their_sign_and_legends_wrap() {
        let mut c = chart();
        c.groups[0].1[0] = Some(Bar { value: -0.13, interval: Some((-0.2, -0.1)) });
        c.reference = Some(("store limit, 1 thread: 3.43 ns per page".into(), 1.0));
        let svg = render(&c).unwrap();
        assert!(svg.contains(r##"text-anchor="end" font-size="12.5" fill="#1d2430">−0.13</text>"##), "{svg}");
        assert_eq!(
            (value_text(-0.001), value_text(-12.0), value_text(0.5)),
            ("0.00".into(), "−12.0".into(), "0.50".into())
        );
        assert!(svg.contains(">store limit, 1</tspan>") && svg.contains(">page</tspan>"), "{svg}");
    }

    #[test]
    fn wide_values_get_a_log_axis_and_empty_charts_are_refused() {
        let mut c = chart();
        c.groups[0].1[1] = Some(Bar { value: 5000.0, interval: None });
        assert!(render(&c).unwrap().contains(r#"data-log-x="true""#));
        assert!(render(&BarChart { groups: vec![], ..chart() }).is_err());
    }
}
