//! Drawing helpers shared by the SVG plots (built on plotters' SVG backend).
//!
//! Every plot is drawn by [`render`] into an in-memory string on a white background.
//! plotters works in integer pixels and writes elements in drawing order, so output is
//! deterministic. Text is emitted as `<text>` with `text-anchor`, leaving glyph layout to
//! the viewer; where a layout needs a text width, [`text_width`] gives a generous estimate.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ReportError;

/// The root drawing area every plot draws on.
pub(super) type Root<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What plotters returns from a failed drawing call on an SVG area.
pub(super) type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

const FONT: &str = "sans-serif";
pub(super) const TITLE_SIZE: i32 = 22;
pub(super) const LABEL_SIZE: i32 = 14;
pub(super) const TICK_SIZE: i32 = 12;
pub(super) const SMALL_SIZE: i32 = 11;
pub(super) const MISSING: RGBColor = RGBColor(0xd0, 0xd0, 0xd0);
pub(super) const INK: RGBColor = RGBColor(0x1f, 0x23, 0x28);

/// Tableau 10: distinct hues that stay apart for common colour-vision deficiencies.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// The colour of the `index`-th series; the palette repeats after ten series.
pub(super) fn series_colour(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Draws a `size` plot with `draw` and returns the SVG document.
pub(super) fn render(
    plot: &'static str,
    size: (u32, u32),
    draw: impl FnOnce(&Root) -> DrawResult,
) -> Result<String, ReportError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present())
            .map_err(|e| ReportError::Draw {
                plot,
                source: Box::new(e),
            })?;
    }
    Ok(svg)
}

/// Height of the title band above a plot with a legend.
const LEGEND_PLOT_TITLE_HEIGHT: i32 = 48;

/// A titled plot `plot_size` wide and high with, on its right, a legend of one entry per
/// name in the series colours; `draw` fills the plot area.
pub(super) fn render_with_legend(
    plot: &'static str,
    title: &str,
    plot_size: (i32, i32),
    names: &[&String],
    marker: Marker,
    draw: impl FnOnce(&Root) -> DrawResult,
) -> Result<String, ReportError> {
    let size = (
        (plot_size.0 + legend_width(names.iter().copied())) as u32,
        plot_size.1 as u32,
    );
    render(plot, size, |root| {
        draw_title(root, title)?;
        let body = root.margin(LEGEND_PLOT_TITLE_HEIGHT, 8, 8, 8);
        let (area, legend_area) = body.split_horizontally(plot_size.0 - 16);
        draw(&area)?;
        let entries: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, name)| ((*name).clone(), series_colour(i)))
            .collect();
        draw_legend(&legend_area, (8, 24), &entries, marker)
    })
}

/// A plot with nothing to show: the title and `message`, centred.
pub(super) fn empty_state(plot: &'static str, title: &str, message: &str) -> Result<String, ReportError> {
    render(plot, (640, 200), |root| {
        draw_title(root, title)?;
        let style = text_style(LABEL_SIZE, Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(message.to_string(), (320, 110), style))
    })
}

/// The plot title, centred at the top.
pub(super) fn draw_title(root: &Root, title: &str) -> DrawResult {
    let width = root.dim_in_pixel().0 as i32;
    let style = font(TITLE_SIZE)
        .style(FontStyle::Bold)
        .color(&INK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(title.to_string(), (width / 2, 12), style))
}

/// The plot font at `px` pixels. plotters writes `font-size` as the requested size
/// divided by 1.24, so the request is scaled up to make `px` what the viewer renders.
/// For the sizes used here the division gives back exactly `px` (a test checks), which
/// keeps `font-size` attributes short; other sizes would print like `13.000000000000002`.
pub(super) fn font(px: i32) -> FontDesc<'static> {
    (FONT, f64::from(px) * 1.24).into_font()
}

/// Dark text in the plot font, `px` pixels high, anchored at `pos`.
pub(super) fn text_style(px: i32, pos: Pos) -> TextStyle<'static> {
    font(px).color(&INK).pos(pos)
}

/// An upper bound for the rendered width of `text` at `size` pixels.
pub(super) fn text_width(text: &str, size: i32) -> i32 {
    let chars = i32::try_from(text.chars().count()).unwrap_or(i32::MAX / 64);
    chars * size * 6 / 10
}

/// How a legend entry marks its series.
#[derive(Clone, Copy)]
pub(super) enum Marker {
    Line,
    Swatch,
}

/// A vertical legend with its top-left corner at `origin`.
pub(super) fn draw_legend(
    root: &Root,
    origin: (i32, i32),
    entries: &[(String, RGBColor)],
    marker: Marker,
) -> DrawResult {
    let (x, y0) = origin;
    let label_style = text_style(TICK_SIZE, Pos::new(HPos::Left, VPos::Center));
    for (i, (label, colour)) in entries.iter().enumerate() {
        let y = y0 + 22 * i as i32 + 8;
        match marker {
            Marker::Line => root.draw(&PathElement::new(
                vec![(x, y), (x + 24, y)],
                colour.stroke_width(3),
            ))?,
            Marker::Swatch => root.draw(&Rectangle::new(
                [(x + 6, y - 7), (x + 20, y + 7)],
                colour.filled(),
            ))?,
        }
        root.draw(&Text::new(label.clone(), (x + 32, y), label_style.clone()))?;
    }
    Ok(())
}

/// Width a legend of `labels` needs, including its marker and padding.
pub(super) fn legend_width<'a>(labels: impl IntoIterator<Item = &'a String>) -> i32 {
    let widest = labels
        .into_iter()
        .map(|l| text_width(l, TICK_SIZE))
        .max()
        .unwrap_or(0);
    widest + 56
}

/// An axis tick: at most two decimals, trailing zeros dropped (`0.25`, `0.1`, `1`).
pub(super) fn tick_label(value: f64) -> String {
    let text = super::cells::format_float(value, 2);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".into()
    } else {
        text.into()
    }
}

/// Checks `value` is finite, naming where it came from otherwise.
pub(super) fn check_finite(
    plot: &'static str,
    value: f64,
    location: impl FnOnce() -> String,
) -> Result<(), ReportError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(ReportError::NonFinite {
            plot,
            location: location(),
            value,
        })
    }
}

/// Checks `data` has `expected` entries.
pub(super) fn check_len(
    plot: &'static str,
    what: impl FnOnce() -> String,
    expected: usize,
    got: usize,
) -> Result<(), ReportError> {
    if expected == got {
        Ok(())
    } else {
        Err(ReportError::Shape {
            plot,
            what: what(),
            expected,
            got,
        })
    }
}

/// The contents of every `<text>` element, in drawing order (for tests).
#[cfg(test)]
pub(super) fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|rest| rest.split_once('>')?.1.split_once("</text>"))
        .map(|(content, _)| content.trim())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_produces_a_sized_svg_document() {
        let svg = render("test", (300, 200), |root| draw_title(root, "A & B")).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("width=\"300\"") && svg.contains("height=\"200\""));
        assert_eq!(texts(&svg), ["A &amp; B"]);
        assert!(svg.contains("font-size=\"22\""), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn font_sizes_print_as_integers() {
        for px in [TITLE_SIZE, LABEL_SIZE, TICK_SIZE, SMALL_SIZE] {
            let svg = render("test", (10, 10), |root| {
                root.draw(&Text::new("x", (0, 0), text_style(px, Pos::default())))
            })
            .unwrap();
            assert!(svg.contains(&format!("font-size=\"{px}\"")), "size {px}: {svg}");
        }
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(0.1), "0.1");
        assert_eq!(tick_label(1.0), "1");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(-0.5), "-0.5");
    }

    #[test]
    fn palette_repeats_after_ten() {
        assert_eq!(series_colour(0), series_colour(10));
        assert_ne!(series_colour(0), series_colour(1));
    }
}
