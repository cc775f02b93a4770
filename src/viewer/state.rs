//! The viewer's state, shared by every request: the store's records, their SQL session,
//! the manifest's languages, and what is computed once from that snapshot (the warm `runs`
//! view, the filter choices, the tables of `queries/`). A leaf of `viewer/`: the pages
//! read it, it calls no page.

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use tokio::sync::OnceCell;

use crate::competition::Benchmark;
use crate::query::catalog;
use crate::record::{RecordError, Records};
use crate::store::Store;

/// The viewer: the store's records and what is computed from them, shared by every
/// request.
#[derive(Clone)]
pub struct Viewer {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) records: Records,
    /// The records' SQL session, opened with the viewer.
    pub(super) ctx: SessionContext,
    /// The manifest's languages (code, English name), in its order.
    pub(super) languages: Vec<(String, String)>,
    /// Set once the `runs` view is computed for the viewer's columns (`list::warm`).
    pub(super) warm: OnceCell<()>,
    pub(super) facets: OnceCell<Facets>,
    /// The tables of `queries/`, in catalog order, computed on first use.
    pub(super) tables: Vec<OnceCell<Arc<crate::report::Table>>>,
}

impl Viewer {
    /// Opens `store` for reading with the benchmark's manifests and views (checking every
    /// segment, as every reader does).
    pub async fn open(store: Store, bench: Benchmark) -> Result<Self, RecordError> {
        let languages = bench
            .languages
            .all()
            .iter()
            .map(|l| (l.code.clone(), l.name.clone()))
            .collect();
        let records = Records::open(store, Some(bench)).await?;
        let ctx = records.session().await?.clone();
        Ok(Self {
            inner: Arc::new(Inner {
                records,
                ctx,
                languages,
                warm: OnceCell::new(),
                facets: OnceCell::new(),
                tables: catalog::TABLES.iter().map(|_| OnceCell::new()).collect(),
            }),
        })
    }

    pub(super) fn records(&self) -> &Records {
        &self.inner.records
    }

    pub(super) fn ctx(&self) -> &SessionContext {
        &self.inner.ctx
    }

    pub(super) fn store(&self) -> &Store {
        self.inner.records.store()
    }

    /// The manifest's language codes, in its order.
    pub(super) fn language_order(&self) -> Vec<String> {
        self.inner
            .languages
            .iter()
            .map(|(code, _)| code.clone())
            .collect()
    }

    /// The English name of the language `code`.
    pub(super) fn language_name(&self, code: &str) -> Option<&str> {
        self.inner
            .languages
            .iter()
            .find(|(c, _)| c == code)
            .map(|(_, name)| name.as_str())
    }
}

/// Every value of each filter column, and how many runs there are.
pub(crate) struct Facets {
    pub(super) values: Vec<(&'static str, Vec<String>)>,
    pub(super) total: usize,
}

impl Facets {
    /// The values of `column` in the order the form offers them.
    pub(super) fn values(&self, column: &str) -> &[String] {
        self.values
            .iter()
            .find(|(c, _)| *c == column)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Whether some run has `value` in `column` (a filter by it can list runs).
    pub(crate) fn contains(&self, column: &str, value: &str) -> bool {
        self.values(column).iter().any(|v| v == value)
    }
}
