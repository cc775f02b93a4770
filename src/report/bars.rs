//! Grouped bar chart: one group per category (e.g. resource tier), one bar per series
//! (e.g. model) in the series' palette colour, legend to the right.
//!
//! Category `i` occupies x ∈ [i, i + 1]; its bars share the middle 80 %. Bars grow from 0,
//! so negative values point down. The y axis spans [0, 1] when every value lies there (a
//! rate) and the data's range plus headroom otherwise. Each bar is labelled with its value
//! (two decimals) when wide enough; a missing value prints `n/a` on the baseline.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ReportError;
use super::cells::format_float;
use super::svg::{
    DrawResult, INK, LABEL_SIZE, Marker, Root, SMALL_SIZE, TICK_SIZE, check_finite, check_len, empty_state,
    font, render_with_legend, series_colour, text_style, tick_label,
};

const PLOT: &str = "bar chart";
const PLOT_SIZE: (i32, i32) = (760, 480);
const GROUP_WIDTH: f64 = 0.8;
/// Narrowest bar, in pixels, that still gets a value label.
const MIN_LABELLED_WIDTH: i32 = 26;

type Series = (String, Vec<Option<f64>>);

/// Renders `series` (name, one value per category) grouped by `categories`.
pub fn bars_svg(
    title: &str,
    categories: &[String],
    series: &[Series],
    y_label: &str,
) -> Result<String, ReportError> {
    check_input(categories, series)?;
    if categories.is_empty() || series.is_empty() {
        return empty_state(PLOT, title, "No bars to show.");
    }
    let names: Vec<&String> = series.iter().map(|(name, _)| name).collect();
    render_with_legend(PLOT, title, PLOT_SIZE, &names, Marker::Swatch, |plot| {
        draw_chart(plot, categories, series, y_label)
    })
}

fn check_input(categories: &[String], series: &[Series]) -> Result<(), ReportError> {
    for (name, values) in series {
        let what = || format!("series {name:?}");
        check_len(PLOT, what, categories.len(), values.len())?;
        for (category, value) in categories.iter().zip(values) {
            let place = || format!("series {name:?}, category {category:?}");
            value.map_or(Ok(()), |v| check_finite(PLOT, v, place))?;
        }
    }
    Ok(())
}

/// The y axis: [0, 1] for rates, otherwise the data (and 0) plus 8 % headroom.
fn y_range(series: &[Series]) -> (f64, f64) {
    let values = series.iter().flat_map(|(_, v)| v.iter().flatten().copied());
    let (lo, hi) = values.fold((0.0_f64, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let hi = if lo >= 0.0 && hi <= 1.0 { 1.0 } else { hi };
    let pad = 0.08 * (hi - lo);
    (if lo < 0.0 { lo - pad } else { lo }, hi + pad)
}

fn draw_chart(area: &Root, categories: &[String], series: &[Series], y_label: &str) -> DrawResult {
    let (lo, hi) = y_range(series);
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..categories.len() as f64, lo..hi)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(y_label)
        .axis_desc_style(font(LABEL_SIZE))
        .label_style(font(TICK_SIZE))
        .y_label_formatter(&|y| tick_label(*y))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;
    let bar_width = GROUP_WIDTH / series.len() as f64;
    for (j, (_, values)) in series.iter().enumerate() {
        for (i, value) in values.iter().enumerate() {
            let left = i as f64 + (1.0 - GROUP_WIDTH) / 2.0 + bar_width * j as f64;
            let span = (left + 0.06 * bar_width, left + 0.94 * bar_width);
            draw_bar(&chart, area, span, *value, series_colour(j))?;
        }
    }
    draw_categories(&chart, area, categories)
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One bar over x ∈ `span` from 0 to `value`, with its label.
fn draw_bar(
    chart: &Chart,
    area: &Root,
    span: (f64, f64),
    value: Option<f64>,
    colour: RGBColor,
) -> DrawResult {
    let middle = (span.0 + span.1) / 2.0;
    let Some(v) = value else {
        let style = text_style(SMALL_SIZE, Pos::new(HPos::Center, VPos::Bottom));
        return draw_at(chart, area, "n/a", (middle, 0.0), style, -3);
    };
    let bar = Rectangle::new([(span.0, v.max(0.0)), (span.1, v.min(0.0))], colour.filled());
    chart.plotting_area().draw(&bar)?;
    let pixels = chart.backend_coord(&(span.1, 0.0)).0 - chart.backend_coord(&(span.0, 0.0)).0;
    if pixels < MIN_LABELLED_WIDTH {
        return Ok(());
    }
    let (v_pos, nudge) = if v < 0.0 {
        (VPos::Top, 3)
    } else {
        (VPos::Bottom, -3)
    };
    let style = text_style(SMALL_SIZE, Pos::new(HPos::Center, v_pos));
    draw_at(chart, area, &format_float(v, 2), (middle, v), style, nudge)
}

/// Category names centred under their groups.
fn draw_categories(chart: &Chart, area: &Root, categories: &[String]) -> DrawResult {
    let lo = chart.y_range().start;
    let style = text_style(LABEL_SIZE, Pos::new(HPos::Center, VPos::Top)).color(&INK);
    for (i, name) in categories.iter().enumerate() {
        draw_at(chart, area, name, (i as f64 + 0.5, lo), style.clone(), 8)?;
    }
    Ok(())
}

/// Text at data point `at`, moved `nudge` pixels down; drawn on `area` so that it may
/// leave the plotting area (category names sit under the x axis).
fn draw_at(
    chart: &Chart,
    area: &Root,
    text: &str,
    at: (f64, f64),
    style: TextStyle,
    nudge: i32,
) -> DrawResult {
    let (x, y) = chart.backend_coord(&at);
    let (ox, oy) = area.get_base_pixel();
    area.draw(&Text::new(text.to_string(), (x - ox, y - oy + nudge), style))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::texts;

    fn tiers() -> Vec<String> {
        ["high", "medium", "low"].map(String::from).to_vec()
    }

    fn sample() -> String {
        let series = vec![
            ("gpt-4o".to_string(), vec![Some(0.8), Some(0.55), Some(0.2)]),
            ("qwen <7b>".to_string(), vec![Some(0.6), None, Some(0.05)]),
        ];
        bars_svg("Pass rate by resource tier", &tiers(), &series, "pass rate").unwrap()
    }

    #[test]
    fn draws_one_bar_per_present_value_with_labels() {
        let svg = sample();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        let texts = texts(&svg);
        for text in [
            "Pass rate by resource tier",
            "high",
            "medium",
            "low",
            "pass rate",
            "gpt-4o",
            "qwen &lt;7b&gt;",
        ] {
            assert!(texts.contains(&text), "missing {text} in {texts:?}");
        }
        for value in ["0.80", "0.55", "0.20", "0.60", "0.05", "n/a"] {
            assert!(texts.contains(&value), "missing {value} in {texts:?}");
        }
        let fill = |i| {
            let c = series_colour(i);
            format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
        };
        // Bars plus the legend swatch.
        assert_eq!(svg.matches(&fill(0)).count(), 3 + 1);
        assert_eq!(svg.matches(&fill(1)).count(), 2 + 1);
        assert_eq!(sample(), svg);
    }

    #[test]
    fn y_range_is_unit_for_rates_and_padded_otherwise() {
        let rates = vec![("m".to_string(), vec![Some(0.2), None])];
        assert_eq!(y_range(&rates), (0.0, 1.08));
        let wide = vec![("m".to_string(), vec![Some(-1.0), Some(3.0)])];
        let (lo, hi) = y_range(&wide);
        assert!(
            (lo + 1.32).abs() < 1e-12 && (hi - 3.32).abs() < 1e-12,
            "{lo} {hi}"
        );
    }

    #[test]
    fn negative_bars_render() {
        let series = vec![("m".to_string(), vec![Some(-0.5), Some(2.0), Some(0.0)])];
        let svg = bars_svg("Delta", &tiers(), &series, "Δ").unwrap();
        let texts = texts(&svg);
        assert!(texts.contains(&"-0.50") && texts.contains(&"2.00"), "{texts:?}");
        assert!(!svg.contains("width=\"-"), "negative width in {svg}");
        assert!(!svg.contains("height=\"-"), "negative height in {svg}");
    }

    #[test]
    fn rejects_mismatched_series_and_shows_empty_state() {
        let short = vec![("m".to_string(), vec![Some(0.5)])];
        let err = bars_svg("t", &tiers(), &short, "y").unwrap_err();
        assert_eq!(
            err.to_string(),
            "bar chart: series \"m\" has 1 entries, expected 3"
        );
        let inf = vec![("m".to_string(), vec![None, Some(f64::INFINITY), None])];
        let err = bars_svg("t", &tiers(), &inf, "y").unwrap_err();
        assert!(err.to_string().contains("category \"medium\""), "{err}");
        assert!(
            bars_svg("t", &tiers(), &[], "y")
                .unwrap()
                .contains("No bars to show.")
        );
    }
}
