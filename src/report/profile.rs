//! Attainment performance profiles: for each model, ρ(τ) = share of cells with r ≥ τ.
//!
//! ρ is a non-increasing step function of the threshold τ: it equals 1 at τ = 0 when every
//! r is non-negative and drops by 1/n just after each cell's r. A curve that stays high
//! longer belongs to a model that reaches higher scores on more cells. The plot draws each
//! model's steps over [0, `tau_max`] in its palette colour, with a legend to the right.

use plotters::prelude::*;

use super::ReportError;
use super::svg::{
    DrawResult, LABEL_SIZE, Marker, Root, TICK_SIZE, check_finite, empty_state, font, render_with_legend,
    series_colour, tick_label,
};

const PLOT: &str = "performance profile";
const PLOT_SIZE: (i32, i32) = (760, 520);

/// The corners of ρ(τ) for `values` on [0, `tau_max`], left to right.
///
/// The first point is (0, ρ(0)) and the last (`tau_max`, ρ(`tau_max`)); between them each
/// drop at r is a vertical segment (r, ρ(r)) → (r, ρ(r⁺)). Empty `values` give no points.
pub fn attainment_steps(values: &[f64], tau_max: f64) -> Vec<(f64, f64)> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let share = |count: usize| count as f64 / n;
    let at_least = |tau: f64| share(sorted.len() - sorted.partition_point(|&r| r < tau));
    let above = |tau: f64| share(sorted.len() - sorted.partition_point(|&r| r <= tau));

    let mut points = vec![(0.0, at_least(0.0))];
    let mut level = at_least(0.0);
    for &r in sorted.iter().filter(|&&r| (0.0..tau_max).contains(&r)) {
        let after = above(r);
        if after < level {
            points.extend([(r, level), (r, after)]);
            level = after;
        }
    }
    points.push((tau_max, level));
    points.dedup();
    points
}

/// Renders one attainment curve per `(model, per-cell r values)` over τ ∈ [0, `tau_max`].
pub fn profile_svg(title: &str, curves: &[(String, Vec<f64>)], tau_max: f64) -> Result<String, ReportError> {
    check_input(curves, tau_max)?;
    if curves.is_empty() {
        return empty_state(PLOT, title, "No models to compare.");
    }
    let names: Vec<&String> = curves.iter().map(|(name, _)| name).collect();
    render_with_legend(PLOT, title, PLOT_SIZE, &names, Marker::Line, |plot| {
        draw_curves(plot, curves, tau_max)
    })
}

fn check_input(curves: &[(String, Vec<f64>)], tau_max: f64) -> Result<(), ReportError> {
    if !(tau_max.is_finite() && tau_max > 0.0) {
        let (lo, hi) = (0.0, tau_max);
        return Err(ReportError::InvalidRange {
            plot: PLOT,
            what: "τ range",
            lo,
            hi,
        });
    }
    for (name, values) in curves {
        if values.is_empty() {
            return Err(ReportError::Empty {
                plot: PLOT,
                what: format!("model {name:?}"),
            });
        }
        for (cell, &r) in values.iter().enumerate() {
            check_finite(PLOT, r, || format!("model {name:?}, cell {cell}"))?;
        }
    }
    Ok(())
}

fn draw_curves(area: &Root, curves: &[(String, Vec<f64>)], tau_max: f64) -> DrawResult {
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..tau_max, 0.0..1.04)?;
    chart
        .configure_mesh()
        .x_desc("τ (r_p threshold)")
        .y_desc("share of cells with r_p ≥ τ")
        .axis_desc_style(font(LABEL_SIZE))
        .label_style(font(TICK_SIZE))
        .x_label_formatter(&|x| tick_label(*x))
        .y_label_formatter(&|y| tick_label(*y))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;
    for (i, (_, values)) in curves.iter().enumerate() {
        let steps = attainment_steps(values, tau_max);
        chart.draw_series(LineSeries::new(steps, series_colour(i).stroke_width(2)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| (p.0 - q.0).abs() < 1e-12 && (p.1 - q.1).abs() < 1e-12)
    }

    #[test]
    fn steps_drop_just_after_each_value() {
        let steps = attainment_steps(&[0.5, 0.2, 1.0, 0.5], 1.0);
        let expected = [
            (0.0, 1.0),
            (0.2, 1.0),
            (0.2, 0.75),
            (0.5, 0.75),
            (0.5, 0.25),
            (1.0, 0.25),
        ];
        assert!(close(&steps, &expected), "{steps:?}");
    }

    #[test]
    fn steps_count_negatives_and_zeros_correctly() {
        // ρ(0) excludes the negative cell; the zero cell drops out just after τ = 0.
        let steps = attainment_steps(&[-0.3, 0.0, 0.6, 2.0], 1.0);
        let expected = [(0.0, 0.75), (0.0, 0.5), (0.6, 0.5), (0.6, 0.25), (1.0, 0.25)];
        assert!(close(&steps, &expected), "{steps:?}");
        assert!(attainment_steps(&[], 1.0).is_empty());
    }

    #[test]
    fn steps_match_the_definition_at_every_probe() {
        let values = [0.1, 0.35, 0.35, 0.8, 0.95, -0.2, 0.0];
        let steps = attainment_steps(&values, 1.0);
        for k in 0..=200 {
            let tau = f64::from(k) / 200.0;
            let expected = values.iter().filter(|&&r| r >= tau).count() as f64 / values.len() as f64;
            // ρ is left-continuous, so ρ(τ) is the height of the first corner at or after τ.
            let got = steps.iter().find(|p| p.0 >= tau).unwrap().1;
            assert!(
                (got - expected).abs() < 1e-12,
                "τ={tau}: got {got}, expected {expected}"
            );
        }
    }

    fn sample() -> String {
        let curves = vec![
            ("gpt-4o".to_string(), vec![0.1, 0.5, 0.9, 0.95]),
            ("llama & co".to_string(), vec![0.0, 0.2, 0.3]),
        ];
        profile_svg("Attainment profile", &curves, 1.0).unwrap()
    }

    #[test]
    fn draws_axes_legend_and_one_polyline_per_model() {
        let svg = sample();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for text in [
            "Attainment profile",
            "τ (r_p threshold)",
            "share of cells with r_p ≥ τ",
            "gpt-4o",
            "llama &amp; co",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
        for colour in [series_colour(0), series_colour(1)] {
            let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", colour.0, colour.1, colour.2);
            // The curve and its legend line.
            assert_eq!(svg.matches(&stroke).count(), 2, "{stroke}");
        }
        assert_eq!(sample(), svg);
    }

    #[test]
    fn rejects_bad_input_and_shows_empty_state() {
        let nan = vec![("m".to_string(), vec![0.1, f64::NAN])];
        let err = profile_svg("p", &nan, 1.0).unwrap_err();
        assert!(err.to_string().contains("model \"m\", cell 1"), "{err}");
        let empty = vec![("m".to_string(), vec![])];
        assert!(matches!(
            profile_svg("p", &empty, 1.0),
            Err(ReportError::Empty { .. })
        ));
        assert!(matches!(
            profile_svg("p", &[], 0.0),
            Err(ReportError::InvalidRange { .. })
        ));
        assert!(
            profile_svg("p", &[], 1.0)
                .unwrap()
                .contains("No models to compare.")
        );
    }
}
