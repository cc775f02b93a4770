//! `/plots/<file>.svg`: the report's plots ([`crate::report::plots_of`]), drawn from the
//! viewer's tables ([`tables::plots`]).
//!
//! A plot is named by its report file name; a name that is not `[A-Za-z0-9_-]+.svg` is
//! refused before anything is computed, and one that none of the tables' plots has is 404.
//! Plots are drawn per request from the kept tables (drawing is cheap; the tables are not).

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::error::not_found;
use super::{ViewError, Viewer, tables};

/// The tables that have plots.
const PLOTTED: [&str; 2] = ["rp_matrix", "pass_rate_by_tier"];

/// `GET /plots/<file>`.
pub(super) async fn svg(
    State(viewer): State<Viewer>,
    Path(file): Path<String>,
) -> Result<Response, ViewError> {
    if !is_plot_name(&file) {
        return Err(not_found(format!("`{file}` is not the name of a plot")));
    }
    for name in PLOTTED {
        let table = tables::by_name(&viewer, name).await?;
        if let Some(plot) = tables::plots(&viewer, &table)?
            .into_iter()
            .find(|p| p.file == file)
        {
            return Ok(([(header::CONTENT_TYPE, "image/svg+xml")], plot.svg).into_response());
        }
    }
    Err(not_found(format!("no table of this store has a plot `{file}`")))
}

fn is_plot_name(file: &str) -> bool {
    file.strip_suffix(".svg").is_some_and(|stem| {
        !stem.is_empty()
            && stem
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_names_are_plain_svg_file_names() {
        assert!(is_plot_name("heatmap_gpt-4o_modular.svg"));
        for bad in [
            "../../Cargo.toml",
            "..%2fCargo.toml",
            ".svg",
            "a/b.svg",
            "a.svg.png",
            "a b.svg",
        ] {
            assert!(!is_plot_name(bad), "{bad}");
        }
    }
}
