//! Reading one event and what it names (see the module docs of [`super`]).

use arrow::array::RecordBatch;
use datafusion::common::TableReference;
use datafusion::error::DataFusionError;
use datafusion::functions_nested::expr_fn::{array_element, array_has};
use datafusion::logical_expr::SortExpr;
use datafusion::prelude::{DataFrame, Expr, SessionContext, col, lit};
use serde_json::{Map, Value};

use super::{
    AttemptRef, Detail, EventRow, Finding, Found, Ided, Link, Prompt, Record, RecordError, Run, Step, Table,
    Texts,
};
use crate::competition::Benchmark;
use crate::events::{Analysis, Attempt, Execution, Generation, Grade, TranslationCheck};
use crate::log::event::{COMMON_COLUMNS, from_batch};
use crate::log::{Event, EventBody};
use crate::store::{Hash, Store};

/// Rows of an analyze table shown.
const TABLE_ROWS: usize = 50;
/// Events listed as downstream of one event.
const DOWNSTREAM: usize = 50;

/// What a record is read with.
pub(super) struct Reader<'a> {
    pub ctx: &'a SessionContext,
    pub store: &'a Store,
    pub bench: Option<&'a Benchmark>,
    /// Every log of the session.
    pub logs: &'a [String],
    /// What the event names and the store lacks (a missing or damaged object).
    pub problems: std::sync::Mutex<Vec<String>>,
}

/// The record of the event `found` names.
pub(super) async fn load(
    ctx: &SessionContext,
    store: &Store,
    bench: Option<&Benchmark>,
    logs: &[String],
    found: &Found,
) -> Result<Record, RecordError> {
    let r = Reader {
        ctx,
        store,
        bench,
        logs,
        problems: std::sync::Mutex::default(),
    };
    let (event, batches) = r.row(&found.log, &found.event_id).await?;
    let detail = r.detail(&event, &batches).await?;
    let mut links = r.upstream(&event).await?;
    links.extend(r.downstream(&event).await?);
    for link in related(&detail) {
        if !links.iter().any(|l| l.event_id == link.event_id) && link.event_id != event.event_id {
            links.push(link);
        }
    }
    let problems = r.problems.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(Record {
        event,
        detail,
        links,
        problems,
    })
}

impl Reader<'_> {
    /// The event's row (common columns and body fields), and its batches to decode.
    async fn row(&self, log: &str, id: &Hash) -> Result<(EventRow, Vec<RecordBatch>), RecordError> {
        let df = self.log(log).await;
        let batches = self.collect(df.and_then(|df| df.filter(is(id)))).await?;
        let rows = json_rows(&batches)?;
        let row = rows
            .into_iter()
            .next()
            .ok_or_else(|| RecordError::NotFound(id.to_hex()))?;
        Ok((event_row(log, row)?, batches))
    }

    /// The table of the log named `log` (a name, never parsed as SQL).
    async fn log(&self, log: &str) -> Result<DataFrame, DataFusionError> {
        self.ctx.table(TableReference::bare(log)).await
    }

    async fn collect(&self, df: Result<DataFrame, DataFusionError>) -> Result<Vec<RecordBatch>, RecordError> {
        Ok(crate::query::run_frame(df).await?.1)
    }

    /// The latest event of `B`'s log matching `filter`.
    async fn latest<B: EventBody>(&self, filter: Expr) -> Result<Option<Event<B>>, RecordError> {
        Ok(self
            .typed::<B>(filter, vec![desc("created_at"), desc("event_id")], 1)
            .await?
            .pop())
    }

    async fn typed<B: EventBody>(
        &self,
        filter: Expr,
        order: Vec<SortExpr>,
        limit: usize,
    ) -> Result<Vec<Event<B>>, RecordError> {
        let df = self.log(B::STAGE).await;
        let df = df.and_then(|df| df.filter(filter)?.sort(order)?.limit(0, Some(limit)));
        let mut out = Vec::new();
        for b in self.collect(df).await? {
            out.extend(from_batch::<B>(&b)?);
        }
        Ok(out)
    }

    async fn event<B: EventBody>(&self, id: &Hash) -> Result<Option<Event<B>>, RecordError> {
        self.latest::<B>(is(id)).await
    }

    /// What the record knows beyond the fields (`batches`: the event's row); a log's event
    /// that does not decode as today's type (an unknown stage's) is shown by its fields alone.
    async fn detail(&self, event: &EventRow, batches: &[RecordBatch]) -> Result<Detail, RecordError> {
        let detail = match event.log.as_str() {
            Generation::STAGE => match decoded::<Generation>(batches) {
                Some(g) => Some(Detail::Run(Box::new(self.run(g, None, None).await?))),
                None => None,
            },
            Execution::STAGE => match decoded::<Execution>(batches) {
                Some(x) => self.run_of_execution(x, None).await?,
                None => None,
            },
            Grade::STAGE => match decoded::<Grade>(batches) {
                Some(g) => self.run_of_grade(g).await?,
                None => None,
            },
            Attempt::STAGE => match decoded::<Attempt>(batches) {
                Some(a) => Some(Detail::Attempt(Box::new(self.step(a).await?))),
                None => None,
            },
            Analysis::STAGE => decoded::<Analysis>(batches)
                .map(|a| self.table(a))
                .transpose()?
                .map(|t| Detail::Analysis(Box::new(t))),
            TranslationCheck::STAGE => {
                decoded::<TranslationCheck>(batches).map(|t| Detail::Translation(Box::new(self.texts(t))))
            }
            _ => None,
        };
        Ok(detail.unwrap_or(Detail::Event))
    }

    async fn run_of_grade(&self, g: Event<Grade>) -> Result<Option<Detail>, RecordError> {
        let Some(xid) = g.upstream.first() else {
            return Ok(None);
        };
        let grade = ided(g.clone());
        match self.event::<Execution>(xid).await? {
            Some(x) => self.run_of_execution(x, Some(grade)).await,
            None => Ok(None),
        }
    }

    async fn run_of_execution(
        &self,
        x: Event<Execution>,
        grade: Option<Ided<Grade>>,
    ) -> Result<Option<Detail>, RecordError> {
        let Some(gid) = x.upstream.first() else {
            return Ok(None);
        };
        let Some(g) = self.event::<Generation>(gid).await? else {
            return Ok(None);
        };
        let run = self.run(g, Some(ided(x)), grade).await?;
        Ok(Some(Detail::Run(Box::new(run))))
    }

    /// The run of generation `g`; `execution` and `grade` when the record is of them.
    async fn run(
        &self,
        g: Event<Generation>,
        execution: Option<Ided<Execution>>,
        grade: Option<Ided<Grade>>,
    ) -> Result<Run, RecordError> {
        let body = &g.body;
        let execution = match execution {
            Some(x) => Some(x),
            None => self.execution_of(body).await?.map(ided),
        };
        let grade = match (grade, &execution) {
            (Some(grade), _) => Some(grade),
            (None, Some(x)) => self.grade_of(&x.event_id).await?.map(ided),
            (None, None) => None,
        };
        let code = self.text_object(Some(body.code_blake3))?;
        let findings = match &execution {
            Some(x) => parse_findings(&x.body.findings)?,
            None => live_findings(code.as_deref(), body.format),
        };
        let translation = self.translation_of(body).await?;
        let english_task = self.english_task(&body.competition, translation.as_ref());
        let attempts = match body.agent {
            crate::events::Agent::Aide => self.attempts(&g.unit_key).await?,
            _ => Vec::new(),
        };
        Ok(Run {
            entrant: entrant(body),
            prompt: self.prompt(body.prompt_blake3)?,
            response: self.response(body.response_blake3)?,
            code,
            findings,
            english_task,
            translation: translation.map(ided),
            execution,
            grade,
            attempts,
            generation: ided(g),
        })
    }

    async fn execution_of(&self, g: &Generation) -> Result<Option<Event<Execution>>, RecordError> {
        let filter = col("competition")
            .eq(lit(g.competition.as_str()))
            .and(col("format").eq(lit(g.format.to_string())))
            .and(col("code_blake3").eq(hex(&g.code_blake3)));
        self.latest::<Execution>(filter).await
    }

    async fn grade_of(&self, execution: &Hash) -> Result<Option<Event<Grade>>, RecordError> {
        let filter = array_element(col("upstream"), lit(1i64)).eq(hex(execution));
        self.latest::<Grade>(filter).await
    }

    async fn translation_of(&self, g: &Generation) -> Result<Option<Event<TranslationCheck>>, RecordError> {
        let filter = col("competition")
            .eq(lit(g.competition.as_str()))
            .and(col("language").eq(lit(g.language.as_str())));
        self.latest::<TranslationCheck>(filter).await
    }

    async fn attempts(&self, search: &Hash) -> Result<Vec<AttemptRef>, RecordError> {
        let filter = col("search").eq(hex(search));
        let events = self
            .typed::<Attempt>(filter, vec![asc("step"), asc("created_at")], 100_000)
            .await?;
        Ok(events.into_iter().map(attempt_ref).collect())
    }

    /// The English task text from the benchmark root, when it is the text the check read.
    fn english_task(&self, competition: &str, check: Option<&Event<TranslationCheck>>) -> Option<String> {
        let c = self.bench?.competitions.iter().find(|c| c.id() == competition)?;
        let expected = check.map(|t| t.body.english_blake3);
        file_text(&c.task_path("en"), expected)
    }

    async fn step(&self, a: Event<Attempt>) -> Result<Step, RecordError> {
        let filter = col("unit_key").eq(hex(&a.body.search));
        let run = self.latest::<Generation>(filter).await?.map(|g| g.id);
        Ok(Step {
            prompt: self.prompt(Some(a.body.prompt_blake3))?,
            response: self.response(Some(a.body.response_blake3))?,
            code: self.text_object(Some(a.body.code_blake3))?,
            run,
            attempt: ided(a),
        })
    }

    fn table(&self, a: Event<Analysis>) -> Result<Table, RecordError> {
        let bytes = self.object(a.body.result_blake3)?.unwrap_or_default();
        let rows = table_rows(&bytes, TABLE_ROWS).map_err(|reason| RecordError::Malformed {
            what: format!(
                "the result object {} of table `{}`",
                a.body.result_blake3, a.body.name
            ),
            reason,
        })?;
        let query = crate::query::catalog::by_blake3(&a.body.query_blake3).map(|q| q.sql.to_string());
        Ok(Table {
            query,
            rows,
            analysis: ided(a),
        })
    }

    fn texts(&self, t: Event<TranslationCheck>) -> Texts {
        let b = &t.body;
        let c = self
            .bench
            .and_then(|bench| bench.competitions.iter().find(|c| c.id() == b.competition));
        let read = |path: Option<std::path::PathBuf>, hash: Option<Hash>| {
            hash.and_then(|h| file_text(&path?, Some(h)))
        };
        Texts {
            english: read(c.map(|c| c.task_path("en")), Some(b.english_blake3)),
            text: read(c.map(|c| c.task_path(&b.language)), Some(b.text_blake3)),
            back: read(c.map(|c| c.back_path(&b.language)), b.back_blake3),
            check: ided(t),
        }
    }

    fn text_object(&self, hash: Option<Hash>) -> Result<Option<String>, RecordError> {
        let Some(hash) = hash else {
            return Ok(None);
        };
        let bytes = self.object(hash)?;
        Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// An object's bytes; a missing or damaged one is a problem of the record, not a
    /// failure to show the rest.
    fn object(&self, hash: Hash) -> Result<Option<Vec<u8>>, RecordError> {
        use crate::store::ObjectError;
        match self.store.objects().get(&hash) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e @ (ObjectError::Missing { .. } | ObjectError::Damaged { .. })) => {
                let mut problems = self.problems.lock().unwrap_or_else(|e| e.into_inner());
                problems.push(e.to_string());
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The prompt object: JSON `{"system", "user"}`, or (a template's context) plain text.
    fn prompt(&self, hash: Option<Hash>) -> Result<Option<Prompt>, RecordError> {
        let Some(text) = self.text_object(hash)? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_str(&text).unwrap_or(Prompt {
            system: String::new(),
            user: text,
        })))
    }

    /// The response object's text (a recorded completion's `text`).
    fn response(&self, hash: Option<Hash>) -> Result<Option<String>, RecordError> {
        let Some(text) = self.text_object(hash)? else {
            return Ok(None);
        };
        let parsed: Option<String> = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("text").and_then(Value::as_str).map(str::to_string));
        Ok(Some(parsed.unwrap_or(text)))
    }

    /// The events this one consumed, with their logs.
    async fn upstream(&self, event: &EventRow) -> Result<Vec<Link>, RecordError> {
        if event.upstream.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Expr> = event.upstream.iter().map(hex).collect();
        let filter = col("event_id").in_list(ids, false);
        let mut links = self.links("upstream", filter, event.upstream.len() * 2).await?;
        links.sort_by_key(|l| event.upstream.iter().position(|h| *h == l.event_id));
        Ok(links)
    }

    /// The events that consumed this one.
    async fn downstream(&self, event: &EventRow) -> Result<Vec<Link>, RecordError> {
        let filter = array_has(col("upstream"), hex(&event.event_id));
        self.links("downstream", filter, DOWNSTREAM).await
    }

    /// Events of any log matching `filter`, as links labelled by log.
    async fn links(&self, relation: &str, filter: Expr, limit: usize) -> Result<Vec<Link>, RecordError> {
        if self.logs.is_empty() {
            return Ok(Vec::new());
        }
        let df = self.labelled(&filter).await.and_then(|df| {
            df.sort(vec![asc("created_at"), asc("event_id")])?
                .limit(0, Some(limit))?
                .select_columns(&["log", "event_id", "label"])
        });
        let rows = json_rows(&self.collect(df).await?)?;
        rows.into_iter()
            .map(|row| {
                Ok(Link {
                    relation: relation.to_string(),
                    log: string_field(&row, "log")?,
                    event_id: hash_field(&row, "event_id")?,
                    label: string_field(&row, "label").unwrap_or_default(),
                })
            })
            .collect()
    }

    /// Every log's events matching `filter` (`log`, `event_id`, `label`, `created_at`), one
    /// after the other (the session has at least one log).
    async fn labelled(&self, filter: &Expr) -> Result<DataFrame, DataFusionError> {
        let mut all: Option<DataFrame> = None;
        for log in self.logs {
            let df = self.log(log).await?;
            let label = df.parse_sql_expr(label_sql(log))?;
            let df = df.filter(filter.clone())?.select(vec![
                lit(log.as_str()).alias("log"),
                col("event_id"),
                label.alias("label"),
                col("created_at"),
            ])?;
            all = Some(match all {
                Some(all) => all.union(df)?,
                None => df,
            });
        }
        all.ok_or_else(|| DataFusionError::Plan("no log to read".into()))
    }
}

/// A hash as the hex text the logs hold it as.
fn hex(h: &Hash) -> Expr {
    lit(h.to_hex())
}

/// The event whose id is `id`.
fn is(id: &Hash) -> Expr {
    col("event_id").eq(hex(id))
}

/// Ascending, nulls last (SQL's `ORDER BY c`).
fn asc(column: &str) -> SortExpr {
    col(column).sort(true, false)
}

/// Descending, nulls first (SQL's `ORDER BY c DESC`).
fn desc(column: &str) -> SortExpr {
    col(column).sort(false, true)
}

/// The event of `batches` as today's body type; none when it does not decode as one (an
/// old schema's event with a field it lacks), which the record then shows by its fields.
fn decoded<B: EventBody>(batches: &[RecordBatch]) -> Option<Event<B>> {
    let batch = batches.iter().find(|b| b.num_rows() > 0)?;
    from_batch::<B>(batch).ok()?.into_iter().next()
}

fn ided<B>(e: Event<B>) -> Ided<B> {
    Ided {
        event_id: e.id,
        body: e.body,
    }
}

/// The entrant the views count a generation under.
fn entrant(g: &Generation) -> String {
    match g.agent {
        crate::events::Agent::Aide => format!("{}+aide", g.model),
        crate::events::Agent::React => format!("{}+react", g.model),
        _ => g.model.clone(),
    }
}

fn attempt_ref(e: Event<Attempt>) -> AttemptRef {
    let a = e.body;
    AttemptRef {
        event_id: e.id,
        node: a.node,
        parent: a.parent,
        step: a.step,
        stage: a.stage,
        metric: a.metric,
        is_buggy: a.is_buggy,
        is_best_so_far: a.is_best_so_far,
    }
}

/// The execute event's findings (JSON written by the execute stage).
fn parse_findings(json: &str) -> Result<Vec<Finding>, RecordError> {
    if json.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(json).map_err(|e| RecordError::Malformed {
        what: "the execute event's findings".into(),
        reason: e.to_string(),
    })
}

/// The static checks of code not executed yet (the same checks execute records).
fn live_findings(code: Option<&str>, format: crate::events::Format) -> Vec<Finding> {
    let Some(code) = code else {
        return Vec::new();
    };
    crate::check::check(code, format)
        .into_iter()
        .map(|f| Finding {
            kind: crate::events::serde_name(&f.kind),
            line: f.line,
            message: f.message,
        })
        .collect()
}

/// A file's text, when its blake3 is `expected` (or nothing is expected).
fn file_text(path: &std::path::Path, expected: Option<Hash>) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    if expected.is_some_and(|h| h != Hash::of(&bytes)) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// A SQL expression naming an event of `log` in a few words.
fn label_sql(log: &str) -> &'static str {
    match log {
        Generation::STAGE => {
            "concat(model, ' ', competition, '/', language, '/', format, ' seed ', CAST(seed AS VARCHAR))"
        }
        Execution::STAGE => "concat(competition, '/', format, ' ', outcome)",
        Grade::STAGE => {
            "concat(competition, ' ', CASE WHEN valid THEN concat('valid, score ', CAST(score AS VARCHAR)) ELSE 'invalid' END)"
        }
        Attempt::STAGE => "concat('step ', CAST(step AS VARCHAR), ' ', stage)",
        Analysis::STAGE => "name",
        TranslationCheck::STAGE => {
            "concat(competition, '/', language, CASE WHEN passed THEN ' passed' ELSE ' failed' END)"
        }
        _ => "''",
    }
}

/// The links a detail implies besides upstream and downstream.
fn related(detail: &Detail) -> Vec<Link> {
    let link = |relation: &str, log: &str, id: Hash, label: String| Link {
        relation: relation.into(),
        log: log.into(),
        event_id: id,
        label,
    };
    let mut out = Vec::new();
    match detail {
        Detail::Run(run) => {
            let g = &run.generation;
            out.push(link(
                "run",
                Generation::STAGE,
                g.event_id,
                format!(
                    "{} {}/{}/{} seed {}",
                    run.entrant, g.body.competition, g.body.language, g.body.format, g.body.seed
                ),
            ));
            if let Some(t) = &run.translation {
                out.push(link(
                    "translation",
                    TranslationCheck::STAGE,
                    t.event_id,
                    passed(t.body.passed),
                ));
            }
            if let Some(x) = &run.execution {
                out.push(link(
                    "execution",
                    Execution::STAGE,
                    x.event_id,
                    x.body.outcome.to_string(),
                ));
            }
            if let Some(gr) = &run.grade {
                out.push(link("grade", Grade::STAGE, gr.event_id, validity(&gr.body)));
            }
            for a in &run.attempts {
                out.push(link(
                    "attempt",
                    Attempt::STAGE,
                    a.event_id,
                    format!("step {} {}", a.step, a.stage),
                ));
            }
        }
        Detail::Attempt(step) => {
            if let Some(run) = step.run {
                out.push(link(
                    "search",
                    Generation::STAGE,
                    run,
                    "the search's submission".into(),
                ));
            }
        }
        Detail::Analysis(_) | Detail::Translation(_) | Detail::Event => {}
    }
    out
}

fn passed(p: bool) -> String {
    if p { "passed" } else { "failed" }.to_string()
}

fn validity(g: &Grade) -> String {
    match (g.valid, g.score) {
        (true, Some(s)) => format!("valid, score {s}"),
        _ => format!("invalid: {}", g.reason.as_deref().unwrap_or("-")),
    }
}

/// Batches as JSON objects (one per row), as `ml2b query --json` writes them.
fn json_rows(batches: &[RecordBatch]) -> Result<Vec<Map<String, Value>>, RecordError> {
    let mut buf = Vec::new();
    let mut w = arrow::json::ArrayWriter::new(&mut buf);
    for b in batches {
        w.write(b).map_err(|e| json_error(e.to_string()))?;
    }
    w.finish().map_err(|e| json_error(e.to_string()))?;
    if buf.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_slice(&buf).map_err(|e| json_error(e.to_string()))
}

fn json_error(reason: String) -> RecordError {
    RecordError::Malformed {
        what: "a row of the logs".into(),
        reason,
    }
}

fn string_field(row: &Map<String, Value>, name: &str) -> Result<String, RecordError> {
    row.get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| json_error(format!("no text in column `{name}`")))
}

fn hash_field(row: &Map<String, Value>, name: &str) -> Result<Hash, RecordError> {
    string_field(row, name)?
        .parse()
        .map_err(|_| json_error(format!("column `{name}` is not a hash")))
}

/// Splits a row into the common columns and the body.
fn event_row(log: &str, mut row: Map<String, Value>) -> Result<EventRow, RecordError> {
    let upstream = row
        .get("upstream")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|v| v.as_str().unwrap_or_default().parse::<Hash>())
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()
        .map_err(|_| json_error("column `upstream` holds a value that is not a hash".into()))?
        .unwrap_or_default();
    let event = EventRow {
        log: log.to_string(),
        event_id: hash_field(&row, "event_id")?,
        unit_key: hash_field(&row, "unit_key")?,
        upstream,
        created_at: string_field(&row, "created_at").unwrap_or_default(),
        host: string_field(&row, "host").unwrap_or_default(),
        duration_ms: row.get("duration_ms").and_then(Value::as_u64).unwrap_or_default(),
        body: Map::new(),
    };
    for c in COMMON_COLUMNS {
        row.remove(c);
    }
    Ok(EventRow { body: row, ..event })
}

/// The first `limit` rows of a Parquet table, every value as text (null as "").
fn table_rows(bytes: &[u8], limit: usize) -> Result<Vec<Vec<String>>, String> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::copy_from_slice(bytes),
    )
    .map_err(|e| e.to_string())?
    .build()
    .map_err(|e| e.to_string())?;
    let options = FormatOptions::default();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        for i in 0..batch.num_rows() {
            if rows.len() == limit {
                return Ok(rows);
            }
            rows.push(formatters.iter().map(|f| f.value(i).to_string()).collect());
        }
    }
    Ok(rows)
}
