//! Line charts as SVG strings (plotters' SVG backend): one function that
//! every plot of the report goes through.

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
