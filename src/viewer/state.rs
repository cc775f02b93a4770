//! The viewer's state, shared by every request: the store's records, their SQL session,
//! the manifest's languages, and what is computed once from that snapshot (the warm `runs`
//! view, the filter choices, the tables of `queries/`, the code search reads). A leaf of
//! `viewer/`: the pages read it, it calls no page.
//!
//! [`Live`] keeps the viewer current: a snapshot ([`Viewer`]) records how many segments
//! each log had when it was opened (its fingerprint: logs only grow, a segment is never
//! removed or rewritten); before a request, at most every [`CHECK_EVERY`], the logs'
//! folders are listed again and, if a log grew, a new snapshot is opened and serves that
//! request and the later ones. A request being served keeps the snapshot it started with.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use datafusion::prelude::SessionContext;
use tokio::sync::OnceCell;

use crate::competition::Benchmark;
use crate::log::{LogError, StageLog};
use crate::query::catalog;
use crate::record::{RecordError, Records};
use crate::store::Store;

/// How often, at most, the store is looked at for new segments.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);

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
    /// Every run's code (lowercase) by its blake3, read for the first search.
    pub(super) codes: OnceCell<Vec<(String, String)>>,
    /// Each log's number of segments when this snapshot was opened.
    fingerprint: Fingerprint,
}

/// Each log (by name) and how many segments it has.
type Fingerprint = Vec<(String, usize)>;

/// Lists every log's segments: what a snapshot opened now would read.
fn fingerprint(store: &Store) -> Result<Fingerprint, LogError> {
    let mut names = crate::log::stages(store)?;
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let n = StageLog::new(store, &name)?.list_raw()?.len();
            Ok((name, n))
        })
        .collect()
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
        let listed = store.clone();
        let fingerprint = tokio::task::spawn_blocking(move || fingerprint(&listed))
            .await
            .map_err(|e| RecordError::Malformed {
                what: "the logs' listing".into(),
                reason: e.to_string(),
            })?
            .map_err(RecordError::from)?;
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
                codes: OnceCell::new(),
                fingerprint,
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

/// The viewer as requests see it: the latest snapshot of the store, opened again when a
/// log has grown (see the module docs).
#[derive(Clone)]
pub struct Live {
    current: Arc<RwLock<Viewer>>,
    /// When the store was last looked at; held while looking.
    checked: Arc<tokio::sync::Mutex<Instant>>,
}

impl Live {
    pub fn new(viewer: Viewer) -> Self {
        Self {
            current: Arc::new(RwLock::new(viewer)),
            checked: Arc::new(tokio::sync::Mutex::new(Instant::now())),
        }
    }

    /// The current snapshot.
    pub fn viewer(&self) -> Viewer {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Opens a new snapshot if a log grew since the current one was opened and the store
    /// was not looked at in the last [`CHECK_EVERY`]; returns it when it did. A request that
    /// comes while another looks uses the current snapshot; a failure is logged and keeps it.
    pub async fn refresh(&self) -> Option<Viewer> {
        let mut checked = self.checked.try_lock().ok()?;
        if checked.elapsed() < CHECK_EVERY {
            return None;
        }
        let current = self.viewer();
        let store = current.store().clone();
        let listed = store.clone();
        let now = tokio::task::spawn_blocking(move || fingerprint(&listed))
            .await
            .ok()?;
        *checked = Instant::now();
        match now {
            Ok(now) if now == current.inner.fingerprint => return None,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("cannot list the store's logs: {}", crate::error::chain(&e));
                return None;
            }
        }
        let bench = current.records().bench().cloned()?;
        match Viewer::open(store, bench).await {
            Ok(fresh) => {
                tracing::info!("the store has new segments: the viewer shows them");
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
                Some(fresh)
            }
            Err(e) => {
                tracing::warn!("cannot open the store again: {}", crate::error::chain(&e));
                None
            }
        }
    }
}

impl axum::extract::FromRef<Live> for Viewer {
    fn from_ref(live: &Live) -> Self {
        live.viewer()
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
