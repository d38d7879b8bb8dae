//! Plots (plotters): line charts and bar charts, written as SVG and, where asked, PNG.
//!
//! Text is laid out with a font bundled in the binary (Ubuntu Light, from the
//! `epaint_default_fonts` crate), so plots look the same on machines without system fonts.

use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One named line.
pub type Series = (String, Vec<(f64, f64)>);

/// Registers the bundled font once.
fn ensure_font() -> Result<()> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        )
        .map_err(|_| "the bundled font could not be loaded".to_string())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

const SIZE: (u32, u32) = (900, 560);

/// Axis labels and scale of a line chart.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a> {
    /// Title.
    pub title: &'a str,
    /// X axis label.
    pub xlabel: &'a str,
    /// Y axis label.
    pub ylabel: &'a str,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Names for integer x positions (1, 2, ...), e.g. percentiles; None: numbers.
    pub x_names: Option<&'a [&'a str]>,
}

/// Writes an SVG with one line per series (linear axes).
pub fn lines(
    path: &Path,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
) -> Result<()> {
    let axes = Axes { title, xlabel, ylabel, log_y: false, x_names: None };
    render(path, |root| draw_lines(root, &axes, series))
}

/// Writes `<stem>.svg` and `<stem>.png` of a line chart; returns the paths.
pub fn lines_svg_png(stem: &Path, axes: &Axes<'_>, series: &[Series]) -> Result<Vec<PathBuf>> {
    both(stem, |root| draw_lines(root, axes, series), |root| draw_lines(root, axes, series))
}

/// Writes `<stem>.svg` and `<stem>.png` of a bar chart (one bar per name); returns the paths.
pub fn bars_svg_png(
    stem: &Path,
    title: &str,
    ylabel: &str,
    bars: &[(String, f64)],
) -> Result<Vec<PathBuf>> {
    both(
        stem,
        |root| draw_bars(root, title, ylabel, bars),
        |root| draw_bars(root, title, ylabel, bars),
    )
}

fn render<F>(path: &Path, draw: F) -> Result<()>
where
    F: FnOnce(DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<()>,
{
    ensure_font()?;
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    draw(root)
}

fn both<F, G>(stem: &Path, svg: F, png: G) -> Result<Vec<PathBuf>>
where
    F: FnOnce(DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<()>,
    G: FnOnce(DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>) -> Result<()>,
{
    ensure_font()?;
    // Appended, not `with_extension`: stems such as `throughput-shared-0.1` contain dots.
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
    let (s, p) = (with("svg"), with("png"));
    svg(SVGBackend::new(&s, SIZE).into_drawing_area())?;
    png(BitMapBackend::new(&p, SIZE).into_drawing_area())?;
    Ok(vec![s, p])
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}

fn draw_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    axes: &Axes<'_>,
    series: &[Series],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let finite = |p: &&(f64, f64)| p.1.is_finite() && (!axes.log_y || p.1 > 0.0);
    let xs = series.iter().flat_map(|s| s.1.iter().filter(finite).map(|p| p.0));
    let ys: Vec<f64> = series.iter().flat_map(|s| s.1.iter().filter(finite).map(|p| p.1)).collect();
    let (mut x0, mut x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if x0 == x1 {
        // One x value (one thread count): widen so the point is visible.
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    }
    let ymax = ys.iter().copied().fold(0.0f64, f64::max);
    if !(x0 < x1 && ymax > 0.0) {
        return Err(anyhow!("nothing to plot for {:?}", axes.title));
    }
    root.fill(&WHITE).map_err(err)?;
    let mut builder = ChartBuilder::on(&root);
    builder.caption(axes.title, ("sans-serif", 22)).margin(12).x_label_area_size(40);
    builder.y_label_area_size(70);
    if axes.log_y {
        let ymin = ys.iter().copied().fold(f64::MAX, f64::min);
        let chart = builder
            .build_cartesian_2d(x0..x1, (ymin / 1.5..ymax * 1.5).log_scale())
            .map_err(err)?;
        fill_lines(chart, axes, series)
    } else {
        let chart = builder.build_cartesian_2d(x0..x1, 0.0..ymax * 1.08).map_err(err)?;
        fill_lines(chart, axes, series)
    }?;
    root.present().map_err(err)?;
    Ok(())
}

fn fill_lines<'a, DB, Y>(
    mut chart: ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    axes: &Axes<'_>,
    series: &[Series],
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let names = axes.x_names;
    let xfmt = move |x: &f64| match names {
        Some(n) if (*x - x.round()).abs() < 1e-9 && *x >= 1.0 => {
            n.get(*x as usize - 1).map_or(String::new(), |s| s.to_string())
        }
        Some(_) => String::new(),
        None => format!("{x}"),
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axes.xlabel).y_desc(axes.ylabel).x_label_formatter(&xfmt);
    if let Some(n) = names {
        mesh.x_labels(n.len() * 2 + 1);
    }
    mesh.draw().map_err(err)?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> =
            pts.iter().copied().filter(|p| p.1.is_finite() && (!axes.log_y || p.1 > 0.0)).collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    ylabel: &str,
    bars: &[(String, f64)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let ymax = bars.iter().map(|b| b.1).filter(|v| v.is_finite()).fold(0.0f64, f64::max);
    if bars.is_empty() || ymax <= 0.0 {
        return Err(anyhow!("nothing to plot for {title:?}"));
    }
    root.fill(&WHITE).map_err(err)?;
    let n = bars.len();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n).into_segmented(), 0.0..ymax * 1.1)
        .map_err(err)?;
    let label = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => bars.get(*i).map_or(String::new(), |b| b.0.clone()),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .y_desc(ylabel)
        .x_label_formatter(&label)
        .x_labels(n)
        .disable_x_mesh()
        .draw()
        .map_err(err)?;
    for (i, (_, v)) in bars.iter().enumerate() {
        if !v.is_finite() {
            continue;
        }
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), *v)],
                color.filled(),
            )))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
