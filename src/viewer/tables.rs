//! `/tables` and `/tables/<name>`: the tables of `queries/`, computed in the viewer's
//! session (as the analyze stage computes them), with their plots.
//!
//! A table is computed on first use and kept. Every cell of a row that has some of the run
//! list's filter columns (model, format, competition, language, tier, outcome) links to the
//! list filtered by the row's values of them; a value no run has (the `Avg.` language of
//! the averages) is left out of the filter. `/tables/<name>.csv` and `.json` download the
//! table whole ([`super::download`]).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Response};

use super::download::{self, Format};
use super::error::not_found;
use minijinja::context;

use super::grid::{Grid, Head, HtmlGrid, Td};
use super::html::{Nav, page as shell, pre};
use super::list::{self, FILTERS};
use super::state::Facets;
use super::templates::{render as template, safe};
use super::{ViewError, Viewer};
use crate::query::catalog::{self, TABLES};
use crate::report::{Plot, Table, plots_of};

/// `GET /tables`.
pub(super) async fn index() -> Result<Html<String>, ViewError> {
    let tables: Vec<_> = TABLES
        .iter()
        .map(|q| context! { name => q.name, title => q.title })
        .collect();
    let body = template("tables.html", context! { tables })?;
    Ok(Html(shell("Tables", Nav::Tables, &body)?))
}

/// `GET /tables/<name>`, or `/tables/<name>.csv|json` to download it.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Path(name): Path<String>,
) -> Result<Response, ViewError> {
    let (stem, download) = Format::split(&name);
    let query = catalog::table(stem).ok_or_else(|| not_found(format!("queries/ has no table `{name}`")))?;
    let table = by_name(&viewer, query.name).await?;
    if let Some(format) = download {
        return download::file(&table, format);
    }
    let facets = list::facets(&viewer).await?;
    let plots: Vec<_> = plots(&viewer, &table)?
        .into_iter()
        .map(|p| context! { heading => p.heading, file => p.file })
        .collect();
    let body = template(
        "table.html",
        context! {
            title => table.title,
            description => safe(pre(&table.description)?),
            name => query.name,
            sql => safe(pre(query.sql)?),
            plots,
            rows => table.batch.num_rows(),
            grid => safe(render(&Grid::of(&table.batch, 3)?, facets)?),
        },
    )?;
    Ok(Html(shell(&table.title, Nav::Tables, &body)?).into_response())
}

/// The plots of `table`; none while it has no rows.
pub(crate) fn plots(viewer: &Viewer, table: &Table) -> Result<Vec<Plot>, ViewError> {
    if table.batch.num_rows() == 0 {
        return Ok(Vec::new());
    }
    Ok(plots_of(table, &viewer.language_order())?)
}

/// The table `name` of the catalog, computed on first use.
pub(crate) async fn by_name(viewer: &Viewer, name: &str) -> Result<Arc<Table>, ViewError> {
    let index = TABLES
        .iter()
        .position(|q| q.name == name)
        .ok_or_else(|| not_found(format!("queries/ has no table `{name}`")))?;
    list::warm(viewer).await?;
    viewer.inner.tables[index]
        .get_or_try_init(|| compute(viewer, index))
        .await
        .cloned()
}

async fn compute(viewer: &Viewer, index: usize) -> Result<Arc<Table>, ViewError> {
    let q = &TABLES[index];
    let (schema, batches) = crate::query::run(viewer.ctx(), q.sql).await?;
    Ok(Arc::new(Table {
        name: q.name.to_string(),
        title: q.title.to_string(),
        description: q.description(),
        batch: arrow::compute::concat_batches(&schema, &batches)?,
    }))
}

/// The table, every cell of a row linking to the row's runs where it names some.
pub(crate) fn render(rows: &Grid, facets: &Facets) -> Result<String, ViewError> {
    let body = (0..rows.len())
        .map(|i| {
            let link = runs_of(rows, i, facets);
            rows.row(i)
                .map(|(name, text, numeric)| Td::new(name, text, numeric, link.as_deref()))
                .collect()
        })
        .collect();
    HtmlGrid {
        class: "data",
        row_class: None,
        headers: rows
            .headers()
            .map(|(name, numeric)| Head::new(name, numeric))
            .collect(),
        rows: body,
        empty: None,
    }
    .render()
}

/// The run list of row `i`'s filter columns, if it has any value some run has.
fn runs_of(rows: &Grid, i: usize, facets: &Facets) -> Option<String> {
    let filters: Vec<(&str, &str)> = FILTERS
        .iter()
        .filter_map(|c| rows.get(i, c).map(|v| (*c, v)))
        .filter(|(c, v)| facets.contains(c, v))
        .collect();
    (!filters.is_empty()).then(|| list::runs_link(&filters))
}
