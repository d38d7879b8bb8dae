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

const SIZE: (u32, u32) = (960, 560);

/// Width of the legend column to the right of the plot area (legends never cover data).
const LEGEND_W: u32 = 210;

/// Axis labels and scale of a line chart.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a> {
    /// Title.
    pub title: &'a str,
    /// X axis label.
    pub xlabel: &'a str,
    /// Y axis label.
    pub ylabel: &'a str,
    /// Logarithmic y axis (also chosen automatically when the values span two decades).
    pub log_y: bool,
    /// Names for integer x positions (1, 2, ...), e.g. percentiles; None: numbers.
    pub x_names: Option<&'a [&'a str]>,
}

/// Writes an SVG with one line per series.
pub fn lines(
    path: &Path,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
) -> Result<()> {
    let axes = Axes { title, xlabel, ylabel, log_y: false, x_names: None };
    ensure_font()?;
    let size = canvas(series.len());
    let tips = draw_lines(SVGBackend::new(path, size).into_drawing_area(), &axes, series)?;
    add_tips(path, &tips)
}

/// Writes `<stem>.svg` and `<stem>.png` of a line chart; returns the paths.
pub fn lines_svg_png(stem: &Path, axes: &Axes<'_>, series: &[Series]) -> Result<Vec<PathBuf>> {
    both(
        stem,
        canvas(series.len()),
        |root| draw_lines(root, axes, series),
        |root| draw_lines(root, axes, series),
    )
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
        SIZE,
        |root| draw_bars(root, title, ylabel, bars),
        |root| draw_bars(root, title, ylabel, bars),
    )
}

/// The canvas for a chart with `n` legend entries (taller when the legend needs it).
fn canvas(n: usize) -> (u32, u32) {
    (SIZE.0, SIZE.1.max(90 + 18 * n as u32))
}

fn both<F, G>(stem: &Path, size: (u32, u32), svg: F, png: G) -> Result<Vec<PathBuf>>
where
    F: FnOnce(DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<Vec<Tip>>,
    G: FnOnce(DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>) -> Result<Vec<Tip>>,
{
    ensure_font()?;
    // Appended, not `with_extension`: stems such as `throughput-shared-0.1` contain dots.
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", stem.display()));
    let (s, p) = (with("svg"), with("png"));
    let tips = svg(SVGBackend::new(&s, size).into_drawing_area())?;
    add_tips(&s, &tips)?;
    png(BitMapBackend::new(&p, size).into_drawing_area())?;
    Ok(vec![s, p])
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}

/// A data point's position on the canvas and what hovering it shows.
#[derive(Debug)]
pub struct Tip {
    x: i32,
    y: i32,
    text: String,
}

/// Adds an invisible circle with a `<title>` over every point of an SVG chart, so hovering a
/// point in a browser shows its value.
fn add_tips(path: &Path, tips: &[Tip]) -> Result<()> {
    if tips.is_empty() {
        return Ok(());
    }
    let svg = std::fs::read_to_string(path)?;
    let Some(end) = svg.rfind("</svg>") else {
        return Err(anyhow!("plot: {} is not an SVG document", path.display()));
    };
    let mut g = String::from("<g fill=\"transparent\">\n");
    for t in tips {
        let text = t.text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        g.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"7\"><title>{text}</title></circle>\n",
            t.x, t.y
        ));
    }
    g.push_str("</g>\n");
    std::fs::write(path, format!("{}{g}{}", &svg[..end], &svg[end..]))?;
    Ok(())
}

/// A tick or value label without floating-point noise: about four significant digits,
/// trailing zeros dropped, thousands as `k` and millions as `M`.
pub fn tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if a >= 1e6 {
        return format!("{}M", tick(v / 1e6));
    }
    if a >= 1e4 {
        return format!("{}k", tick(v / 1e3));
    }
    if a < 1e-12 {
        return "0".into();
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 8) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { &s };
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Okabe & Ito's colour-blind-safe palette, then Tol's muted scheme for more series.
const PALETTE: [(u8, u8, u8); 16] = [
    (0, 114, 178),   // blue
    (213, 94, 0),    // vermillion
    (0, 158, 115),   // bluish green
    (230, 159, 0),   // orange
    (204, 121, 167), // reddish purple
    (86, 180, 233),  // sky blue
    (0, 0, 0),       // black
    (136, 34, 85),   // wine (Okabe-Ito's yellow is last: faint on white)
    (51, 34, 136),   // indigo
    (68, 170, 153),  // teal
    (153, 153, 51),  // olive
    (204, 102, 119), // rose
    (17, 119, 51),   // green
    (170, 68, 153),  // purple
    (136, 204, 238), // cyan
    (240, 228, 66),  // yellow
];

/// Caches and policies with a fixed colour, so one name has one colour in every plot.
const NAMED: [&str; 16] = [
    "mobius",
    "lru",
    "sieve",
    "quick_cache",
    "moka",
    "fifo",
    "null",
    "clock",
    "s3fifo",
    "nbq-clock",
    "mobius-wd",
    "multistep",
    "foyer",
    "mutex-lru",
    "mini_moka",
    "problru",
];

/// The colour of a series: by its first word (the cache or policy), fixed for known names.
fn color_of(name: &str) -> RGBColor {
    // "S3-FIFO(0.10,2) model" and "s3fifo" are one name: its letters and digits before any
    // parameters.
    let norm = |s: &str| -> String {
        s.split(['(', ' '])
            .next()
            .unwrap_or(s)
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let key = norm(name);
    let i = NAMED.iter().position(|n| norm(n) == key).unwrap_or_else(|| {
        // Unknown names: a stable hash into the palette.
        key.bytes().fold(7usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize)) % PALETTE.len()
    });
    let (r, g, b) = PALETTE[i];
    RGBColor(r, g, b)
}

/// Dashed lines for predictions and for the second class of a pair (model vs measured, bound
/// vs MVA, insert vs hit); solid for measurements.
fn dashed(name: &str) -> bool {
    ["model", "bound", "insert", "predicted"]
        .iter()
        .any(|w| name.split_whitespace().any(|x| x.eq_ignore_ascii_case(w)))
}

fn draw_lines<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    axes: &Axes<'_>,
    series: &[Series],
) -> Result<Vec<Tip>>
where
    DB::ErrorType: 'static,
{
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let pos_min = all.iter().map(|p| p.1).filter(|&y| y > 0.0).fold(f64::MAX, f64::min);
    let ymax = all.iter().map(|p| p.1).fold(0.0f64, f64::max);
    // Log scale when asked or when the positive values span two decades (and none is <= 0).
    let log_y = axes.log_y
        || (all.iter().all(|p| p.1 > 0.0)
            && ymax > 0.0
            && pos_min < f64::MAX
            && ymax / pos_min >= 100.0);
    let keep = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite() && (!log_y || p.1 > 0.0);
    let (mut x0, mut x1) = all
        .iter()
        .filter(|p| keep(p))
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let integer_x =
        axes.x_names.is_none() && all.iter().all(|p| p.0.fract() == 0.0) && x1 - x0 <= 64.0;
    if x0 == x1 {
        // One x value (one thread count): widen so the point is visible.
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    } else if integer_x || axes.x_names.is_some() {
        // Room for the end points' markers.
        (x0, x1) = (x0 - 0.25, x1 + 0.25);
    }
    if !(x0 < x1 && ymax > 0.0) {
        return Err(anyhow!("nothing to plot for {:?}", axes.title));
    }
    root.fill(&WHITE).map_err(err)?;
    let (w, _) = root.dim_in_pixel();
    let (plot, legend) = root.split_horizontally(w.saturating_sub(LEGEND_W));
    let mut builder = ChartBuilder::on(&plot);
    builder.caption(axes.title, ("sans-serif", 20)).margin(12).x_label_area_size(44);
    builder.y_label_area_size(72);
    let tips = if log_y {
        let ymin = all.iter().map(|p| p.1).filter(|&y| y > 0.0).fold(f64::MAX, f64::min);
        let chart = builder
            .build_cartesian_2d(x0..x1, (ymin / 1.5..ymax * 1.5).log_scale())
            .map_err(err)?;
        fill_lines(chart, axes, series, log_y, integer_x, (x0, x1))
    } else {
        let chart = builder.build_cartesian_2d(x0..x1, 0.0..ymax * 1.08).map_err(err)?;
        fill_lines(chart, axes, series, log_y, integer_x, (x0, x1))
    }?;
    draw_legend(&legend, series.iter().map(|s| s.0.as_str()))?;
    root.present().map_err(err)?;
    Ok(tips)
}

/// The legend, in its own column: a line sample (dashed where the series is) and the name.
fn draw_legend<'n, DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    names: impl Iterator<Item = &'n str>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    for (i, name) in names.enumerate() {
        let y = 48 + 18 * i as i32;
        let color = color_of(name);
        let style = color.stroke_width(2);
        if dashed(name) {
            area.draw(&plotters::element::DashedPathElement::new(
                vec![(6, y), (34, y)],
                5,
                3,
                style,
            ))
            .map_err(err)?;
        } else {
            area.draw(&PathElement::new(vec![(6, y), (34, y)], style)).map_err(err)?;
        }
        area.draw(&Circle::new((20, y), 3, color.filled())).map_err(err)?;
        area.draw(&Text::new(name.to_string(), (40, y - 7), ("sans-serif", 14).into_font()))
            .map_err(err)?;
    }
    Ok(())
}

fn fill_lines<'a, DB, Y>(
    mut chart: ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    axes: &Axes<'_>,
    series: &[Series],
    log_y: bool,
    integer_x: bool,
    (x0, x1): (f64, f64),
) -> Result<Vec<Tip>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let names = axes.x_names;
    let on_integer = |x: f64| (x - x.round()).abs() < 1e-9;
    let xfmt = move |x: &f64| match names {
        Some(n) if on_integer(*x) && *x >= 1.0 => {
            n.get(*x as usize - 1).map_or(String::new(), |s| s.to_string())
        }
        Some(_) => String::new(),
        None if integer_x => {
            if on_integer(*x) {
                format!("{}", x.round() as i64)
            } else {
                String::new()
            }
        }
        None => tick(*x),
    };
    let yfmt = |y: &f64| tick(*y);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axes.xlabel)
        .y_desc(axes.ylabel)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style(("sans-serif", 14))
        .light_line_style(WHITE.mix(0.0));
    if let Some(n) = names {
        mesh.x_labels(n.len() * 2 + 1);
    } else if integer_x {
        // One label per integer from the first to the last.
        mesh.x_labels(((x1 - x0).round() as usize + 1).min(65));
    }
    mesh.draw().map_err(err)?;
    let mut tips = Vec::new();
    for (name, pts) in series {
        let color = color_of(name);
        let pts: Vec<(f64, f64)> = pts
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && (!log_y || p.1 > 0.0))
            .collect();
        let style = color.stroke_width(2);
        if dashed(name) {
            chart
                .draw_series(DashedLineSeries::new(pts.iter().copied(), 6, 4, style))
                .map_err(err)?;
        } else {
            chart.draw_series(LineSeries::new(pts.iter().copied(), style)).map_err(err)?;
        }
        // Markers where they mark measurements, not on dense curves (they would hide them).
        if pts.len() <= 40 {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
        }
        for &(x, y) in &pts {
            let (px, py) = chart.backend_coord(&(x, y));
            let xs = match names {
                Some(n) if on_integer(x) && x >= 1.0 => {
                    n.get(x as usize - 1).map_or_else(|| tick(x), |s| s.to_string())
                }
                _ => tick(x),
            };
            tips.push(Tip {
                x: px,
                y: py,
                text: format!("{name}: {} {xs}, {} {}", axes.xlabel, tick(y), axes.ylabel),
            });
        }
    }
    Ok(tips)
}

fn draw_bars<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    ylabel: &str,
    bars: &[(String, f64)],
) -> Result<Vec<Tip>>
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
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(72)
        .build_cartesian_2d((0..n).into_segmented(), 0.0..ymax * 1.1)
        .map_err(err)?;
    let label = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => bars.get(*i).map_or(String::new(), |b| b.0.clone()),
        _ => String::new(),
    };
    let yfmt = |y: &f64| tick(*y);
    chart
        .configure_mesh()
        .y_desc(ylabel)
        .x_label_formatter(&label)
        .y_label_formatter(&yfmt)
        .label_style(("sans-serif", 13))
        .x_labels(n)
        .disable_x_mesh()
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    let mut tips = Vec::new();
    for (i, (name, v)) in bars.iter().enumerate() {
        if !v.is_finite() {
            continue;
        }
        let color = color_of(name);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), *v)],
                color.filled(),
            )))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(SegmentValue::CenterOf(i), *v));
        tips.push(Tip { x: px, y: py, text: format!("{name}: {} {ylabel}", tick(*v)) });
    }
    root.present().map_err(err)?;
    Ok(tips)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_have_no_float_noise() {
        assert_eq!(tick(0.30000000000000004), "0.3");
        assert_eq!(tick(0.7999999999999999), "0.8");
        assert_eq!(tick(100000.0), "100k");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(-0.0000000001), "0");
        assert_eq!(tick(1.0), "1");
        assert_eq!(tick(0.001), "0.001");
    }

    #[test]
    fn one_colour_per_name_across_plots() {
        assert_eq!(color_of("lru bound"), color_of("lru"));
        assert_eq!(color_of("mobius insert"), color_of("mobius hit"));
        assert_ne!(color_of("mobius"), color_of("lru"));
        assert_eq!(color_of("S3-FIFO(0.10,2)"), color_of("s3fifo"));
        assert!(dashed("lru model") && dashed("lru bound") && !dashed("lru measured"));
    }

    #[test]
    fn svg_points_carry_hover_titles() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("t.svg");
        let s = vec![("mobius".to_string(), vec![(1.0, 10.0), (2.0, 18.5)])];
        lines(&p, "t", "threads", "Mops/s", &s).expect("plot");
        let svg = std::fs::read_to_string(&p).expect("read");
        assert!(svg.contains("<title>mobius: threads 2, 18.5 Mops/s</title>"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
