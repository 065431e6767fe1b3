//! Charts as SVG strings (plotters' SVG backend): [`line_chart`] for
//! curves, [`bar_chart`] for figures per named variant.

use crate::error::{Error, Result};
use plotters::prelude::*;

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A chart description; rendered by [`line_chart`].
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub series: Vec<Series>,
    /// Horizontal reference lines: (name, y).
    pub references: Vec<(String, f64)>,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::usage(format!("cannot draw plot: {e}"))
}

/// Renders `chart` to an SVG document (800 × 480).
pub fn line_chart(chart: &Chart) -> Result<String> {
    let all_points = chart.series.iter().flat_map(|s| s.points.iter().copied());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for (x, y) in all_points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    for (_, y) in &chart.references {
        y1 = y1.max(*y);
    }
    if !x0.is_finite() {
        return Err(Error::usage(format!("plot '{}' has no points", chart.title)));
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut builder = ChartBuilder::on(&root);
        builder.caption(&chart.title, ("sans-serif", 20)).margin(12).x_label_area_size(44).y_label_area_size(64);
        if chart.log_x {
            let x0 = x0.max(1e-12);
            let mut c = builder.build_cartesian_2d((x0..x1 * 1.05).log_scale(), 0.0..y1).map_err(plot_error)?;
            c.configure_mesh().x_desc(&chart.x_label).y_desc(&chart.y_label).draw().map_err(plot_error)?;
            draw(&mut c, chart, (x0, x1))?;
        } else {
            let mut c = builder.build_cartesian_2d(x0..x1, 0.0..y1).map_err(plot_error)?;
            c.configure_mesh().x_desc(&chart.x_label).y_desc(&chart.y_label).draw().map_err(plot_error)?;
            draw(&mut c, chart, (x0, x1))?;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Horizontal bars: one row per category, one bar per group within it
/// (e.g. per thread count), each labelled with its value.
#[derive(Debug, Clone)]
pub struct Bars {
    pub title: String,
    pub value_label: String,
    pub categories: Vec<String>,
    /// (group name, one value per category; `None`: not measured).
    pub groups: Vec<(String, Vec<Option<f64>>)>,
}

/// Renders `bars` to an SVG document (800 wide, 40 px per category).
pub fn bar_chart(bars: &Bars) -> Result<String> {
    let max = bars.groups.iter().flat_map(|g| g.1.iter().flatten().copied()).fold(0.0f64, f64::max);
    if max <= 0.0 || bars.categories.is_empty() {
        return Err(Error::usage(format!("plot '{}' has no bars", bars.title)));
    }
    let rows = bars.categories.len();
    let height = (110 + rows * (bars.groups.len().max(1) * 22 + 14)) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, height.max(240))).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut c = ChartBuilder::on(&root)
            .caption(&bars.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(150)
            .build_cartesian_2d(0.0..max * 1.25, 0.0..rows as f64)
            .map_err(plot_error)?;
        let names = bars.categories.clone();
        c.configure_mesh()
            .disable_y_mesh()
            .x_desc(&bars.value_label)
            .y_labels(rows * 2 + 1)
            .y_label_formatter(&|y: &f64| {
                let i = (rows as f64 - y - 0.5).round();
                let on_centre = ((rows as f64 - y) - 0.5 - i).abs() < 0.01;
                if on_centre && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(plot_error)?;
        let g = bars.groups.len().max(1) as f64;
        let band = 0.8 / g;
        for (gi, (name, values)) in bars.groups.iter().enumerate() {
            let color = COLORS[gi % COLORS.len()];
            let rects = values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).map(move |(i, v)| {
                let top = rows as f64 - i as f64 - 0.1 - band * gi as f64;
                Rectangle::new([(0.0, top - band), (v, top)], color.filled())
            });
            c.draw_series(rects)
                .map_err(plot_error)?
                .label(name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
            let labels = values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).map(move |(i, v)| {
                let top = rows as f64 - i as f64 - 0.1 - band * gi as f64;
                Text::new(format!("{v:.1}"), (v + max * 0.01, top - band * 0.75), ("sans-serif", 12))
            });
            c.draw_series(labels).map_err(plot_error)?;
        }
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

fn draw<'a, X>(
    c: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    chart: &Chart,
    (x0, x1): (f64, f64),
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
{
    for (i, s) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        c.draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
            .map_err(plot_error)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        c.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(plot_error)?;
    }
    for (name, y) in &chart.references {
        let color = BLACK.mix(0.6);
        c.draw_series(LineSeries::new([(x0, *y), (x1, *y)], color.stroke_width(1)))
            .map_err(plot_error)?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(plot_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_renders_lines_labels_and_references() {
        let chart = Chart {
            title: "bandwidth <vs> distance".into(),
            x_label: "D".into(),
            y_label: "GB/s".into(),
            log_x: false,
            series: vec![Series { name: "t0".into(), points: vec![(0.0, 1.0), (32.0, 2.0)] }],
            references: vec![("simd".into(), 1.5)],
        };
        let svg = line_chart(&chart).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("polyline") || svg.contains("path"));
        assert!(svg.contains("bandwidth &lt;vs&gt; distance"), "titles are escaped");
        assert!(svg.contains("simd"));
    }

    #[test]
    fn bars_carry_their_categories_values_and_groups() {
        let bars = Bars {
            title: "saves".into(),
            value_label: "ns".into(),
            categories: vec!["setjmp".into(), "sigsetjmp-1".into()],
            groups: vec![
                ("1 thread".into(), vec![Some(14.0), Some(245.6)]),
                ("2 threads".into(), vec![Some(16.0), None]),
            ],
        };
        let svg = bar_chart(&bars).unwrap();
        for text in ["setjmp", "sigsetjmp-1", "245.6", "1 thread", "2 threads"] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(svg.matches("<rect").count() >= 3);
        let empty = Bars { groups: vec![], ..bars };
        assert!(bar_chart(&empty).is_err());
    }

    #[test]
    fn log_axis_and_empty_chart() {
        let mut chart = Chart {
            title: "latency".into(),
            x_label: "bytes".into(),
            y_label: "ns".into(),
            log_x: true,
            series: vec![Series { name: "4k".into(), points: vec![(4096.0, 1.0), (1e9, 100.0)] }],
            references: vec![],
        };
        assert!(line_chart(&chart).is_ok());
        chart.series.clear();
        assert!(line_chart(&chart).is_err());
    }
}
