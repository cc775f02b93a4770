//! `/`: the runs, filtered, sorted and paged by the query string.
//!
//! ```text
//! /?model=M&format=F&competition=C&language=L&tier=T&outcome=O   each: the column equals
//!   &q=TEXT                                                       free text (below)
//!   &sort=COLUMN&desc=1&page=N                                    sort from a fixed list
//! /runs.csv?… and /runs.json?…                                    the same list, every page
//! ```
//! `q` keeps the runs with TEXT (case-insensitive, as written: no wildcards) in any of their
//! ids, model, format, competition, language, tier, outcome or missing stage, or in their
//! code. The code of every run is read once, on the first search, and kept
//! ([`super::state::Inner::codes`]).
//! An empty value is no filter (the form sends every field); an unknown parameter, a sort
//! column not in [`SORTS`] or a page that is not a number is 400. Filters are the
//! DataFrame API's comparisons with literal values, never SQL text, so no value can change
//! the query. Ties sort by generation id, so pages do not overlap. A sample that is still
//! missing a stage (`missing_stage`) shows `pending` for its verdict, not the zero the
//! tables count it as.
//!
//! The `runs` view is computed once for every column the viewer reads ([`warm`]), before
//! anything else reads it: the view keeps results by column set, and a first reader of
//! fewer columns would have it computed twice.

use arrow::array::{Array, AsArray};
use arrow::datatypes::DataType;
use axum::extract::{Query, State};
use axum::response::Html;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::{col, lit};

use minijinja::context;

use super::download::Format;
use super::grid::{Empty, Grid, Head, HtmlGrid, Td};
use super::html::{Nav, href, page as shell};
use super::state::Facets;
use super::templates::{render, safe};
use super::{ViewError, Viewer};

/// The columns of `runs` a list can be filtered on, in the form's order.
pub(crate) use crate::report::RUN_FILTERS as FILTERS;

/// The columns a list can be sorted by.
const SORTS: [&str; 11] = [
    "model",
    "format",
    "competition",
    "language",
    "tier",
    "seed",
    "outcome",
    "score",
    "r_p",
    "r_p_automl",
    "cost_usd",
];

/// The columns a list shows.
const COLUMNS: [&str; 15] = [
    "generation_id",
    "model",
    "format",
    "competition",
    "language",
    "tier",
    "seed",
    "outcome",
    "valid",
    "score",
    "r_p",
    "r_p_automl",
    "leakage",
    "cost_usd",
    "missing_stage",
];

/// The verdict's columns: a sample still missing a stage shows `pending` in them, not the
/// zero the tables count it as (a failure would show the same zero).
const VERDICT: [&str; 4] = ["valid", "score", "r_p", "r_p_automl"];

/// Rows per page.
const PAGE_ROWS: usize = 100;

/// What a list shows: its filters (in [`FILTERS`] order), its order and its page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunQuery {
    filters: Vec<(&'static str, String)>,
    /// Free text (`q`), trimmed; empty is no search.
    text: String,
    sort: &'static str,
    desc: bool,
    page: usize,
}

impl RunQuery {
    /// The query string's parameters, checked.
    fn parse(params: &[(String, String)]) -> Result<Self, ViewError> {
        let mut q = Self {
            filters: Vec::new(),
            text: String::new(),
            sort: "model",
            desc: false,
            page: 0,
        };
        for (key, value) in params {
            q.set(key, value)?;
        }
        q.filters
            .sort_by_key(|(c, _)| FILTERS.iter().position(|f| f == c));
        Ok(q)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), ViewError> {
        let bad = |what: String| Err(ViewError::BadRequest(what));
        if let Some(column) = FILTERS.iter().copied().find(|f| *f == key) {
            self.filters.retain(|(c, _)| *c != column);
            if !value.is_empty() {
                self.filters.push((column, value.to_string()));
            }
            return Ok(());
        }
        match key {
            "q" => self.text = value.trim().to_string(),
            "sort" => match SORTS.iter().copied().find(|s| *s == value) {
                Some(s) => self.sort = s,
                None => return bad(format!("sort: `{value}` is not one of {}", SORTS.join(", "))),
            },
            "desc" => self.desc = matches!(value, "1" | "true"),
            "page" => match value.parse() {
                Ok(n) => self.page = n,
                Err(_) => return bad(format!("page: `{value}` is not a page number")),
            },
            _ => {
                return bad(format!(
                    "`{key}` is not a parameter of the run list (filters: {}; q, sort, desc, page)",
                    FILTERS.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn filter(&self, column: &str) -> &str {
        self.filters
            .iter()
            .find(|(c, _)| *c == column)
            .map_or("", |(_, v)| v.as_str())
    }

    /// A link to this list with `sort`, `desc` and `page` as given.
    fn link(&self, sort: &str, desc: bool, page: usize) -> String {
        let page = page.to_string();
        let mut params: Vec<(&str, &str)> = self.filters.iter().map(|(c, v)| (*c, v.as_str())).collect();
        params.push(("q", &self.text));
        if sort != "model" {
            params.push(("sort", sort));
        }
        if desc {
            params.push(("desc", "1"));
        }
        if page != "0" {
            params.push(("page", &page));
        }
        href("/", &params)
    }

    /// A link to this list (every page, in its order) as a `/runs.EXT` download.
    fn download(&self, ext: &str) -> String {
        let mut params: Vec<(&str, &str)> = self.filters.iter().map(|(c, v)| (*c, v.as_str())).collect();
        params.push(("q", &self.text));
        if self.sort != "model" {
            params.push(("sort", self.sort));
        }
        if self.desc {
            params.push(("desc", "1"));
        }
        href(&format!("/runs.{ext}"), &params)
    }
}

/// A link to the runs whose `columns` have these values.
pub(crate) fn runs_link(filters: &[(&str, &str)]) -> String {
    href("/", filters)
}

/// The facets, computed on first use.
pub(crate) async fn facets(viewer: &Viewer) -> Result<&Facets, ViewError> {
    viewer
        .inner
        .facets
        .get_or_try_init(|| compute_facets(viewer))
        .await
}

async fn compute_facets(viewer: &Viewer) -> Result<Facets, ViewError> {
    warm(viewer).await?;
    let started = std::time::Instant::now();
    let mut values = Vec::new();
    for column in FILTERS {
        let mut v = distinct(viewer, column).await?;
        order(viewer, column, &mut v);
        values.push((column, v));
    }
    let total = viewer.ctx().table("runs").await?.count().await?;
    tracing::info!("the run list's filter choices took {:.1?}", started.elapsed());
    Ok(Facets { values, total })
}

async fn distinct(viewer: &Viewer, column: &str) -> Result<Vec<String>, ViewError> {
    let batches = viewer
        .ctx()
        .table("runs")
        .await?
        .select_columns(&[column])?
        .distinct()?
        .collect()
        .await?;
    let mut out = Vec::new();
    for b in batches {
        let values = arrow::compute::cast(b.column(0), &DataType::Utf8)?;
        let values = values.as_string::<i32>();
        out.extend(
            (0..values.len())
                .filter(|&i| values.is_valid(i))
                .map(|i| values.value(i).to_string()),
        );
    }
    Ok(out)
}

/// Languages in the manifest's order, tiers from high to low, the rest alphabetically.
fn order(viewer: &Viewer, column: &str, values: &mut [String]) {
    let rank: Vec<String> = match column {
        "language" => viewer.language_order(),
        "tier" => ["high", "medium", "low"].map(String::from).to_vec(),
        _ => Vec::new(),
    };
    values.sort_by_key(|v| (rank.iter().position(|r| r == v).unwrap_or(rank.len()), v.clone()));
}

/// Computes the `runs` view once for every column the viewer's own pages read (see the
/// module docs); later calls do nothing.
pub(crate) async fn warm(viewer: &Viewer) -> Result<(), ViewError> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT {}, language_position FROM runs LIMIT 1",
            COLUMNS.join(", ")
        )
    });
    viewer
        .inner
        .warm
        .get_or_try_init(|| async {
            let started = std::time::Instant::now();
            crate::query::run(viewer.ctx(), &SQL).await?;
            tracing::info!("the runs view took {:.1?}", started.elapsed());
            Ok::<(), ViewError>(())
        })
        .await?;
    Ok(())
}

/// `GET /`.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Query(params): Query<Vec<(String, String)>>,
) -> Result<Html<String>, ViewError> {
    let q = RunQuery::parse(&params)?;
    warm(&viewer).await?;
    let filtered = filtered(&viewer, &q).await?;
    let rows = rows(filtered.clone(), &q).await?;
    let matching = filtered.count().await?;
    let facets = facets(&viewer).await?;
    let first = q.page * PAGE_ROWS;
    let last = (first + PAGE_ROWS).min(matching);
    let body = render(
        "runs.html",
        context! {
            matching,
            total => facets.total,
            filters => form(&viewer, facets, &q),
            text => q.text,
            csv => safe(q.download("csv")),
            json => safe(q.download("json")),
            sort => (q.sort != "model").then_some(q.sort),
            desc => q.desc,
            table => safe(table(&q, &rows)?),
            first => (first + 1).min(last),
            last,
            previous => (q.page > 0).then(|| safe(q.link(q.sort, q.desc, q.page - 1))),
            next => (last < matching).then(|| safe(q.link(q.sort, q.desc, q.page + 1))),
        },
    )?;
    Ok(Html(shell("Runs", Nav::Runs, &body)?))
}

/// `GET /runs.csv` and `/runs.json`: the list with its filters, search and order, every
/// page.
pub(super) async fn download(
    viewer: Viewer,
    params: Vec<(String, String)>,
    format: Format,
) -> Result<axum::response::Response, ViewError> {
    let q = RunQuery::parse(&params)?;
    if q.page != 0 {
        return Err(ViewError::BadRequest("page: a download is every page".into()));
    }
    warm(&viewer).await?;
    let df = sorted(filtered(&viewer, &q).await?, &q)?;
    let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await?;
    let table = crate::report::Table {
        name: "runs".into(),
        title: "Runs".into(),
        description: String::new(),
        batch: arrow::compute::concat_batches(&schema, &batches)?,
    };
    super::download::file(&table, format)
}

async fn filtered(viewer: &Viewer, q: &RunQuery) -> Result<DataFrame, ViewError> {
    let mut df = viewer.ctx().table("runs").await?;
    for (column, value) in &q.filters {
        df = df.filter(col(*column).eq(lit(value.as_str())))?;
    }
    if !q.text.is_empty() {
        df = df.filter(search(viewer, &q.text).await?)?;
    }
    Ok(df)
}

/// The columns free text is looked for in, beside the code.
const SEARCHED: [&str; 10] = [
    "generation_id",
    "execution_id",
    "model",
    "format",
    "competition",
    "language",
    "tier",
    "outcome",
    "missing_stage",
    "code_blake3",
];

/// Whether a run has `text` in a column of [`SEARCHED`] or in its code.
async fn search(viewer: &Viewer, text: &str) -> Result<datafusion::prelude::Expr, ViewError> {
    use datafusion::functions::expr_fn::concat_ws;
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '%' | '_' | '\\' => vec!['\\', c],
            _ => vec![c],
        })
        .collect();
    let columns = SEARCHED.iter().map(|c| col(*c)).collect();
    let fields = concat_ws(lit(" "), columns).ilike(lit(format!("%{escaped}%")));
    let needle = text.to_lowercase();
    let codes: Vec<_> = codes(viewer)
        .await?
        .iter()
        .filter(|(_, code)| code.contains(&needle))
        .map(|(hash, _)| lit(hash.as_str()))
        .collect();
    if codes.is_empty() {
        return Ok(fields);
    }
    Ok(fields.or(col("code_blake3").in_list(codes, false)))
}

/// Every run's code (lowercase) by its blake3, read on first use.
async fn codes(viewer: &Viewer) -> Result<&[(String, String)], ViewError> {
    let codes = viewer
        .inner
        .codes
        .get_or_try_init(|| async {
            let started = std::time::Instant::now();
            let hashes = distinct(viewer, "code_blake3").await?;
            let mut out = Vec::with_capacity(hashes.len());
            for hex in hashes {
                let Ok(hash) = hex.parse::<crate::store::Hash>() else {
                    continue;
                };
                let bytes = viewer.store().objects().get(&hash)?;
                out.push((hex, String::from_utf8_lossy(&bytes).to_lowercase()));
            }
            tracing::info!(
                "reading {} codes for search took {:.1?}",
                out.len(),
                started.elapsed()
            );
            Ok::<_, ViewError>(out)
        })
        .await?;
    Ok(codes)
}

/// The list's columns in its order.
fn sorted(df: DataFrame, q: &RunQuery) -> Result<DataFrame, ViewError> {
    Ok(df.select_columns(&COLUMNS)?.sort(vec![
        col(q.sort).sort(!q.desc, false),
        col("generation_id").sort(true, false),
    ])?)
}

async fn rows(df: DataFrame, q: &RunQuery) -> Result<Grid, ViewError> {
    let df = sorted(df, q)?.limit(q.page * PAGE_ROWS, Some(PAGE_ROWS))?;
    let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await?;
    Grid::new(&schema, &batches, 4)
}

/// The form's filters: each column with its options, the current value selected.
fn form(viewer: &Viewer, facets: &Facets, q: &RunQuery) -> Vec<minijinja::Value> {
    FILTERS
        .iter()
        .map(|&column| {
            let current = q.filter(column);
            let options: Vec<_> = facets
                .values(column)
                .iter()
                .map(|value| {
                    context! {
                        value,
                        selected => value == current,
                        label => option_label(viewer, column, value),
                    }
                })
                .collect();
            context! { column, options }
        })
        .collect()
}

/// A language's option names it too (`kk · Kazakh`).
fn option_label(viewer: &Viewer, column: &str, value: &str) -> String {
    match (column, viewer.language_name(value)) {
        ("language", Some(name)) => format!("{value} · {name}"),
        _ => value.to_string(),
    }
}

fn table(q: &RunQuery, rows: &Grid) -> Result<String, ViewError> {
    let runs: Vec<String> = (0..rows.len())
        .map(|i| {
            href(
                &format!("/run/{}", rows.get(i, "generation_id").unwrap_or_default()),
                &[],
            )
        })
        .collect();
    let body = (0..rows.len())
        .map(|i| {
            // A planned sample never generated has no run page.
            let run = rows.get(i, "generation_id").is_some_and(|id| !id.is_empty());
            let pending = rows.get(i, "missing_stage").is_some_and(|s| !s.is_empty());
            rows.row(i)
                .map(|(name, text, numeric)| match name {
                    _ if pending && VERDICT.contains(&name) => Td::new(name, Some("pending"), false, None),
                    "generation_id" => Td::new(
                        name,
                        text.map(|t| &t[..t.len().min(12)]),
                        false,
                        run.then_some(runs[i].as_str()),
                    ),
                    _ => Td::new(name, text, numeric, None),
                })
                .collect()
        })
        .collect();
    HtmlGrid {
        class: "data runs",
        row_class: Some("run"),
        headers: rows
            .headers()
            .map(|(name, numeric)| sort_header(q, name, numeric))
            .collect(),
        rows: body,
        empty: rows.is_empty().then_some(Empty {
            colspan: COLUMNS.len(),
            text: "No run matches.",
        }),
    }
    .render()
}

/// A column's header: a link sorting by it (the other way when it is the current order).
fn sort_header<'a>(q: &RunQuery, name: &'a str, numeric: bool) -> Head<'a> {
    let head = Head::new(name, numeric);
    if !SORTS.contains(&name) {
        return head;
    }
    let current = q.sort == name;
    let arrow = match (current, q.desc) {
        (true, false) => " ▲",
        (true, true) => " ▼",
        _ => "",
    };
    head.link(q.link(name, current && !q.desc, 0), arrow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_query_keeps_its_filters_in_form_order_and_drops_empty_ones() {
        let q = RunQuery::parse(&params(&[
            ("language", "kk"),
            ("model", "m+aide"),
            ("tier", ""),
            ("sort", "r_p"),
            ("desc", "1"),
            ("page", "2"),
        ]))
        .unwrap();
        assert_eq!(
            q.filters,
            [("model", "m+aide".to_string()), ("language", "kk".to_string())]
        );
        assert_eq!((q.sort, q.desc, q.page), ("r_p", true, 2));
        assert_eq!(
            q.link("score", false, 0),
            "/?model=m%2Baide&amp;language=kk&amp;sort=score"
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        for (pairs, named) in [
            (&[("sort", "generation_id; DROP")][..], "generation_id; DROP"),
            (&[("page", "-1")][..], "-1"),
            (&[("bogus", "1")][..], "bogus"),
        ] {
            let err = RunQuery::parse(&params(pairs)).unwrap_err();
            assert!(matches!(err, ViewError::BadRequest(_)));
            assert!(err.to_string().contains(named), "{err}");
        }
    }
}
