//! Heat map of a score per (row, column) cell, e.g. r_p per task × language.
//!
//! ```text
//!              title
//!           col1  col2  col3      r_p
//!   row1  [0.42][0.87][ n/a]     ▇ hi
//!   row2  [0.10][0.55][0.93]     ▇ mid
//!                                ▇ lo
//!                                ▢ missing
//! ```
//!
//! Colours follow viridis over the caller's fixed `range`, so maps drawn with the same
//! range compare across runs; values outside it take the end colour but print their true
//! value. Each cell is one `<rect>` of [`CELL_RECT`] pixels holding its value with two
//! decimals; missing cells are grey and print `n/a`. Long column labels are turned
//! vertical. No rows or no columns gives an empty-state image, not an error.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ReportError;
use super::svg::{
    DrawResult, INK, LABEL_SIZE, MISSING, Root, TICK_SIZE, check_finite, check_len, draw_title, empty_state,
    font, render, text_style, text_width,
};

const PLOT: &str = "heat map";
const CELL: (i32, i32) = (64, 34);
const GAP: i32 = 2;
/// Size in pixels of each cell's `<rect>` (the cell minus a white gap).
pub(super) const CELL_RECT: (i32, i32) = (CELL.0 - GAP, CELL.1 - GAP);
const TITLE_HEIGHT: i32 = 52;
const BAR: (i32, i32) = (18, 200);
const BAR_STEPS: i32 = 50;

/// Where everything goes, in pixels.
struct Layout {
    grid: (i32, i32),
    vertical_columns: bool,
    bar: (i32, i32),
    size: (u32, u32),
}

/// Renders a heat map of `values[row][column]` coloured over `range = (lo, hi)`.
pub fn heatmap_svg(
    title: &str,
    row_labels: &[String],
    col_labels: &[String],
    values: &[Vec<Option<f64>>],
    range: (f64, f64),
) -> Result<String, ReportError> {
    check_input(row_labels, col_labels, values, range)?;
    if row_labels.is_empty() || col_labels.is_empty() {
        return empty_state(PLOT, title, "No cells to show.");
    }
    let layout = layout(row_labels, col_labels);
    render(PLOT, layout.size, |root| {
        draw_title(root, title)?;
        draw_labels(root, &layout, row_labels, col_labels)?;
        draw_cells(root, &layout, values, range)?;
        draw_colour_bar(root, &layout, range)
    })
}

fn check_input(
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    (lo, hi): (f64, f64),
) -> Result<(), ReportError> {
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(ReportError::InvalidRange {
            plot: PLOT,
            what: "colour range",
            lo,
            hi,
        });
    }
    check_len(
        PLOT,
        || "values (one per row label)".into(),
        rows.len(),
        values.len(),
    )?;
    for (row, (label, cells)) in rows.iter().zip(values).enumerate() {
        let what = || format!("row {row} ({label:?})");
        check_len(PLOT, what, cols.len(), cells.len())?;
        for (col, value) in cells.iter().enumerate() {
            let place = || format!("row {label:?}, column {:?}", cols[col]);
            value.map_or(Ok(()), |v| check_finite(PLOT, v, place))?;
        }
    }
    Ok(())
}

fn layout(rows: &[String], cols: &[String]) -> Layout {
    let widest = |labels: &[String]| labels.iter().map(|l| text_width(l, TICK_SIZE)).max();
    let row_width = widest(rows).unwrap_or(0);
    let col_width = widest(cols).unwrap_or(0);
    let vertical_columns = col_width > CELL.0 - 6;
    let col_height = if vertical_columns { col_width + 12 } else { 26 };
    let grid = (16 + row_width + 10, TITLE_HEIGHT + col_height);
    let grid_size = (CELL.0 * cols.len() as i32, CELL.1 * rows.len() as i32);
    let bar = (grid.0 + grid_size.0 + 32, grid.1);
    let legend_width = BAR.0 + 8 + text_width("missing", TICK_SIZE) + 16;
    let width = bar.0 + legend_width.max(60);
    let height = grid.1 + grid_size.1.max(BAR.1 + 56) + 16;
    Layout {
        grid,
        vertical_columns,
        bar,
        size: (width as u32, height as u32),
    }
}

fn draw_labels(root: &Root, layout: &Layout, rows: &[String], cols: &[String]) -> DrawResult {
    let (gx, gy) = layout.grid;
    let row_style = text_style(TICK_SIZE, Pos::new(HPos::Right, VPos::Center));
    for (i, label) in rows.iter().enumerate() {
        let y = gy + CELL.1 * i as i32 + CELL_RECT.1 / 2;
        root.draw(&Text::new(label.clone(), (gx - 10, y), row_style.clone()))?;
    }
    let col_style = if layout.vertical_columns {
        text_style(TICK_SIZE, Pos::new(HPos::Left, VPos::Center)).transform(FontTransform::Rotate270)
    } else {
        text_style(TICK_SIZE, Pos::new(HPos::Center, VPos::Bottom))
    };
    for (j, label) in cols.iter().enumerate() {
        let x = gx + CELL.0 * j as i32 + CELL_RECT.0 / 2;
        root.draw(&Text::new(label.clone(), (x, gy - 8), col_style.clone()))?;
    }
    Ok(())
}

fn draw_cells(root: &Root, layout: &Layout, values: &[Vec<Option<f64>>], range: (f64, f64)) -> DrawResult {
    let (gx, gy) = layout.grid;
    for (i, row) in values.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            let corner = (gx + CELL.0 * j as i32, gy + CELL.1 * i as i32);
            draw_cell(root, corner, *value, range)?;
        }
    }
    Ok(())
}

fn draw_cell(root: &Root, (x, y): (i32, i32), value: Option<f64>, range: (f64, f64)) -> DrawResult {
    let fill = value.map_or(MISSING, |v| colour(v, range));
    let rect = [(x, y), (x + CELL_RECT.0, y + CELL_RECT.1)];
    root.draw(&Rectangle::new(rect, fill.filled()))?;
    let text = value.map_or_else(|| "n/a".to_string(), |v| super::cells::format_float(v, 2));
    let ink = if is_dark(fill) { WHITE } else { INK };
    let style = font(LABEL_SIZE)
        .color(&ink)
        .pos(Pos::new(HPos::Center, VPos::Center));
    root.draw(&Text::new(
        text,
        (x + CELL_RECT.0 / 2, y + CELL_RECT.1 / 2),
        style,
    ))
}

/// Vertical colour bar, `hi` at the top, with `lo`, midpoint and `hi` ticks and a grey
/// "missing" swatch below.
fn draw_colour_bar(root: &Root, layout: &Layout, (lo, hi): (f64, f64)) -> DrawResult {
    let (bx, by) = layout.bar;
    let caption = text_style(LABEL_SIZE, Pos::new(HPos::Left, VPos::Bottom));
    root.draw(&Text::new("r_p", (bx, by - 8), caption))?;
    for step in 0..BAR_STEPS {
        let top = by + BAR.1 * step / BAR_STEPS;
        let bottom = by + BAR.1 * (step + 1) / BAR_STEPS;
        let share = 1.0 - (f64::from(step) + 0.5) / f64::from(BAR_STEPS);
        let fill = colour(lo + share * (hi - lo), (lo, hi));
        root.draw(&Rectangle::new([(bx, top), (bx + BAR.0, bottom)], fill.filled()))?;
    }
    let tick = text_style(TICK_SIZE, Pos::new(HPos::Left, VPos::Center));
    for (share, value) in [(0.0, hi), (0.5, (lo + hi) / 2.0), (1.0, lo)] {
        let y = by + (f64::from(BAR.1) * share).round() as i32;
        root.draw(&PathElement::new(vec![(bx + BAR.0, y), (bx + BAR.0 + 4, y)], INK))?;
        let label = super::cells::format_float(value, 2);
        root.draw(&Text::new(label, (bx + BAR.0 + 7, y), tick.clone()))?;
    }
    let swatch_y = by + BAR.1 + 20;
    root.draw(&Rectangle::new(
        [(bx, swatch_y), (bx + BAR.0, swatch_y + BAR.0)],
        MISSING.filled(),
    ))?;
    root.draw(&Text::new(
        "missing",
        (bx + BAR.0 + 7, swatch_y + BAR.0 / 2),
        tick,
    ))
}

/// Viridis colour of `value`, clamped into `range`.
fn colour(value: f64, (lo, hi): (f64, f64)) -> RGBColor {
    ViridisRGB::get_color_normalized(value.clamp(lo, hi), lo, hi)
}

/// Whether white text reads better than dark text on `fill` (Rec. 601 luma).
fn is_dark(RGBColor(r, g, b): RGBColor) -> bool {
    299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b) < 140_000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::texts;

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn sample() -> String {
        let rows = labels(&["titanic", "house-prices & co"]);
        let cols = labels(&["Python", "Rust", "Kazakh"]);
        let values = vec![
            vec![Some(0.42), Some(0.876), None],
            vec![Some(-0.25), Some(1.5), Some(0.0)],
        ];
        heatmap_svg("r_p by task × language", &rows, &cols, &values, (0.0, 1.0)).unwrap()
    }

    fn cell_rects(svg: &str) -> usize {
        let size = format!("width=\"{}\" height=\"{}\"", CELL_RECT.0, CELL_RECT.1);
        svg.lines()
            .filter(|l| l.starts_with("<rect") && l.contains(&size))
            .count()
    }

    #[test]
    fn draws_one_rect_per_cell_with_labels_and_values() {
        let svg = sample();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(cell_rects(&svg), 6);
        let texts = texts(&svg);
        let labels = [
            "r_p by task × language",
            "titanic",
            "house-prices &amp; co",
            "Python",
            "Rust",
            "Kazakh",
        ];
        assert_eq!(texts[..6], labels);
        let values = ["0.42", "0.88", "n/a", "-0.25", "1.50", "0.00"];
        assert_eq!(texts[6..12], values);
    }

    #[test]
    fn missing_cells_are_grey_and_the_bar_has_every_step() {
        let svg = sample();
        let grey = "fill=\"#D0D0D0\"";
        // One missing cell plus the legend swatch.
        assert_eq!(svg.matches(grey).count(), 2, "{svg}");
        let bar = format!("width=\"{}\"", BAR.0);
        let bar_rects = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains(&bar))
            .count();
        assert_eq!(bar_rects as i32, BAR_STEPS + 1);
        assert_eq!(texts(&svg)[12..], ["r_p", "1.00", "0.50", "0.00", "missing"]);
    }

    #[test]
    fn colours_clamp_to_range_and_run_dark_to_light() {
        let range = (0.0, 1.0);
        assert_eq!(colour(-3.0, range), colour(0.0, range));
        assert_eq!(colour(7.0, range), colour(1.0, range));
        assert!(is_dark(colour(0.0, range)));
        assert!(!is_dark(colour(1.0, range)));
    }

    #[test]
    fn is_deterministic() {
        assert_eq!(sample(), sample());
    }

    #[test]
    fn long_column_labels_are_vertical() {
        let rows = labels(&["t"]);
        let cols = labels(&["a very long language name"]);
        let svg = heatmap_svg("x", &rows, &cols, &[vec![Some(0.5)]], (0.0, 1.0)).unwrap();
        assert!(svg.contains("rotate(270"), "{svg}");
        assert!(!sample().contains("rotate("));
    }

    #[test]
    fn empty_input_gives_an_empty_state_image() {
        let svg = heatmap_svg("Nothing yet", &[], &labels(&["Python"]), &[], (0.0, 1.0)).unwrap();
        assert_eq!(texts(&svg), ["Nothing yet", "No cells to show."]);
        assert_eq!(cell_rects(&svg), 0);
    }

    #[test]
    fn rejects_ragged_rows_bad_values_and_bad_ranges() {
        let rows = labels(&["t1", "t2"]);
        let cols = labels(&["Python", "Rust"]);
        let ragged = vec![vec![Some(0.1), None], vec![Some(0.2)]];
        let err = heatmap_svg("x", &rows, &cols, &ragged, (0.0, 1.0)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "heat map: row 1 (\"t2\") has 1 entries, expected 2"
        );

        let nan = vec![vec![Some(0.1), None], vec![Some(f64::NAN), None]];
        let err = heatmap_svg("x", &rows, &cols, &nan, (0.0, 1.0)).unwrap_err();
        assert!(err.to_string().contains("row \"t2\", column \"Python\""), "{err}");

        let ok = vec![vec![None, None], vec![None, None]];
        let err = heatmap_svg("x", &rows, &cols, &ok, (1.0, 1.0)).unwrap_err();
        assert!(matches!(err, ReportError::InvalidRange { .. }), "{err}");

        let err = heatmap_svg("x", &rows, &cols, &ok[..1], (0.0, 1.0)).unwrap_err();
        assert!(
            matches!(
                err,
                ReportError::Shape {
                    expected: 2,
                    got: 1,
                    ..
                }
            ),
            "{err}"
        );
    }
}
