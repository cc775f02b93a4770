//! Reading one event and what it names (see the module docs of [`super`]): each relation is
//! a lookup in the row index of the log it names ([`super::logs`]), never a scan.

use arrow::array::RecordBatch;
use serde_json::{Map, Value};

use super::logs::{Found as Located, Logs, newest_first, oldest_first};
use super::{
    AttemptRef, Detail, EventRow, ExternalView, Finding, Found, Ided, Link, Prompt, Record, RecordError, Run,
    Step, Table, Texts,
};
use crate::competition::Benchmark;
use crate::events::{
    Analysis, Attempt, Execution, ExternalRun, GatewayCall, Generation, Grade, TranslatedText,
    TranslationCheck,
};
use crate::log::event::{COMMON_COLUMNS, from_batch};
use crate::log::rows::{Kind, lookup_key};
use crate::log::{Event, EventBody};
use crate::store::{Hash, Store};

/// Rows of an analyze table shown.
const TABLE_ROWS: usize = 50;
/// Events listed as downstream of one event.
const DOWNSTREAM: usize = 50;
/// Attempts of one search listed.
const ATTEMPTS: usize = 100_000;

/// The most gateway calls a record lists.
const CALLS: usize = 10_000;

/// What a record is read with.
pub(super) struct Reader<'a> {
    pub logs: &'a Logs,
    pub store: &'a Store,
    pub bench: Option<&'a Benchmark>,
    /// What the event names and the store lacks (a missing or damaged object).
    pub problems: std::sync::Mutex<Vec<String>>,
}

/// The record of the event `found` names.
pub(super) fn load(
    logs: &Logs,
    store: &Store,
    bench: Option<&Benchmark>,
    found: &Found,
) -> Result<Record, RecordError> {
    let r = Reader {
        logs,
        store,
        bench,
        problems: std::sync::Mutex::default(),
    };
    let (event, batches) = r.row(&found.log, &found.event_id)?;
    let detail = r.detail(&event, &batches)?;
    let mut links = r.upstream(&event)?;
    links.extend(r.downstream(&event)?);
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
    /// The event's row (common columns and body fields), and its batch to decode.
    fn row(&self, log: &str, id: &Hash) -> Result<(EventRow, Vec<RecordBatch>), RecordError> {
        let mut found = self.located(log, Kind::Event, id)?;
        newest_first(&mut found);
        let first = found.first().ok_or_else(|| RecordError::NotFound(id.to_hex()))?;
        let batch = self.logs.row(first)?;
        let row = json_rows(std::slice::from_ref(&batch))?
            .into_iter()
            .next()
            .ok_or_else(|| RecordError::NotFound(id.to_hex()))?;
        Ok((event_row(log, row)?, vec![batch]))
    }

    /// The entries of `kind` for `key` in the log named `log`.
    fn located<'l>(&self, log: &'l str, kind: Kind, key: &Hash) -> Result<Vec<Located<'l>>, RecordError> {
        let entries = self.logs.find(log, kind, key)?;
        Ok(entries.into_iter().map(|entry| Located { log, entry }).collect())
    }

    /// The latest event of `B`'s log with `key` as `kind`.
    fn latest<B: EventBody>(&self, kind: Kind, key: &Hash) -> Result<Option<Event<B>>, RecordError> {
        let mut found = self.located(B::STAGE, kind, key)?;
        newest_first(&mut found);
        match found.first() {
            Some(f) => Ok(self.typed::<B>(f)?.into_iter().next()),
            None => Ok(None),
        }
    }

    /// The event at `found`, decoded as `B`.
    fn typed<B: EventBody>(&self, found: &Located) -> Result<Vec<Event<B>>, RecordError> {
        Ok(from_batch::<B>(&self.logs.row(found)?)?)
    }

    fn event<B: EventBody>(&self, id: &Hash) -> Result<Option<Event<B>>, RecordError> {
        self.latest::<B>(Kind::Event, id)
    }

    /// What the record knows beyond the fields (`batches`: the event's row); a log's event
    /// that does not decode as today's type (an unknown stage's) is shown by its fields alone.
    fn detail(&self, event: &EventRow, batches: &[RecordBatch]) -> Result<Detail, RecordError> {
        let detail = match event.log.as_str() {
            Generation::STAGE => match decoded::<Generation>(batches) {
                Some(g) => Some(Detail::Run(Box::new(self.run(g, None, None)?))),
                None => None,
            },
            Execution::STAGE => match decoded::<Execution>(batches) {
                Some(x) => self.run_of_execution(x, None)?,
                None => None,
            },
            Grade::STAGE => match decoded::<Grade>(batches) {
                Some(g) => self.run_of_grade(g)?,
                None => None,
            },
            Attempt::STAGE => match decoded::<Attempt>(batches) {
                Some(a) => Some(Detail::Attempt(Box::new(self.step(a)?))),
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

    fn run_of_grade(&self, g: Event<Grade>) -> Result<Option<Detail>, RecordError> {
        let Some(xid) = g.upstream.first() else {
            return Ok(None);
        };
        let grade = ided(g.clone());
        match self.event::<Execution>(xid)? {
            Some(x) => self.run_of_execution(x, Some(grade)),
            None => Ok(None),
        }
    }

    fn run_of_execution(
        &self,
        x: Event<Execution>,
        grade: Option<Ided<Grade>>,
    ) -> Result<Option<Detail>, RecordError> {
        let Some(gid) = x.upstream.first() else {
            return Ok(None);
        };
        let Some(g) = self.event::<Generation>(gid)? else {
            return Ok(None);
        };
        let run = self.run(g, Some(ided(x)), grade)?;
        Ok(Some(Detail::Run(Box::new(run))))
    }

    /// The run of generation `g`; `execution` and `grade` when the record is of them.
    fn run(
        &self,
        g: Event<Generation>,
        execution: Option<Ided<Execution>>,
        grade: Option<Ided<Grade>>,
    ) -> Result<Run, RecordError> {
        let body = &g.body;
        let execution = match execution {
            Some(x) => Some(x),
            None => self.execution_of(body)?.map(ided),
        };
        let grade = match (grade, &execution) {
            (Some(grade), _) => Some(grade),
            (None, Some(x)) => self.grade_of(&x.event_id)?.map(ided),
            (None, None) => None,
        };
        let code = self.text_object(Some(body.code_blake3))?;
        let findings = match &execution {
            Some(x) => parse_findings(&x.body.findings)?,
            None => live_findings(code.as_deref(), body.format),
        };
        let translation = self.translation_of(body)?;
        let english_task = self.english_task(&body.competition, translation.as_ref());
        let attempts = match body.agent {
            crate::events::Agent::Aide => self.attempts(&g.unit_key)?,
            _ => Vec::new(),
        };
        let external = match body.agent {
            crate::events::Agent::External => self.external(&g.unit_key)?,
            _ => None,
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
            external,
            generation: ided(g),
        })
    }

    /// The execution of `g`'s code: by the execute log's lookup columns
    /// ([`Execution::LOOKUP`]: competition, format, code).
    fn execution_of(&self, g: &Generation) -> Result<Option<Event<Execution>>, RecordError> {
        let key = lookup_key(&[&g.competition, &g.format.to_string(), &g.code_blake3.to_hex()]);
        self.latest::<Execution>(Kind::Lookup, &key)
    }

    /// The grade whose first upstream event is `execution`.
    fn grade_of(&self, execution: &Hash) -> Result<Option<Event<Grade>>, RecordError> {
        self.latest::<Grade>(Kind::Upstream, execution)
    }

    /// The check of `g`'s task text ([`TranslationCheck::LOOKUP`]: competition, language).
    fn translation_of(&self, g: &Generation) -> Result<Option<Event<TranslationCheck>>, RecordError> {
        let key = lookup_key(&[&g.competition, &g.language]);
        self.latest::<TranslationCheck>(Kind::Lookup, &key)
    }

    /// The attempts of the search `search` ([`Attempt::LOOKUP`]), by step, then time.
    fn attempts(&self, search: &Hash) -> Result<Vec<AttemptRef>, RecordError> {
        let key = lookup_key(&[&search.to_hex()]);
        let mut events = Vec::new();
        for found in self.located(Attempt::STAGE, Kind::Lookup, &key)? {
            events.extend(self.typed::<Attempt>(&found)?);
        }
        events.sort_by_key(|e| (e.body.step, e.provenance.created_at));
        events.truncate(ATTEMPTS);
        Ok(events.into_iter().map(attempt_ref).collect())
    }

    /// The external agent's run of the unit `search`, with its gateway calls in order.
    fn external(&self, search: &Hash) -> Result<Option<ExternalView>, RecordError> {
        let key = lookup_key(&[&search.to_hex()]);
        let mut runs = Vec::new();
        for found in self.located(ExternalRun::STAGE, Kind::Lookup, &key)? {
            runs.extend(self.typed::<ExternalRun>(&found)?);
        }
        let Some(run) = runs.into_iter().max_by_key(|e| e.provenance.created_at) else {
            return Ok(None);
        };
        let mut calls = Vec::new();
        for found in self.located(GatewayCall::STAGE, Kind::Lookup, &key)? {
            calls.extend(self.typed::<GatewayCall>(&found)?.into_iter().map(|e| e.body));
        }
        calls.sort_by_key(|c| c.call);
        calls.truncate(CALLS);
        let logs = match self.text_object(run.body.logs_blake3)? {
            Some(text) => serde_json::from_str::<serde_json::Map<String, Value>>(&text)
                .unwrap_or_default()
                .into_iter()
                .map(|(path, v)| {
                    let bytes = v["bytes"].as_u64().unwrap_or_default();
                    (path, bytes, v["blake3"].as_str().unwrap_or_default().to_string())
                })
                .collect(),
            None => Vec::new(),
        };
        Ok(Some(ExternalView {
            stdout: self.text_object(Some(run.body.stdout_blake3))?,
            stderr: self.text_object(Some(run.body.stderr_blake3))?,
            logs,
            calls,
            run: ided(run),
        }))
    }

    /// The English task text from the benchmark root, when it is the text the check read.
    fn english_task(&self, competition: &str, check: Option<&Event<TranslationCheck>>) -> Option<String> {
        let c = self.bench?.competitions.iter().find(|c| c.id() == competition)?;
        let expected = check.map(|t| t.body.english_blake3);
        file_text(&c.task_path("en"), expected)
    }

    fn step(&self, a: Event<Attempt>) -> Result<Step, RecordError> {
        let run = self
            .latest::<Generation>(Kind::Unit, &a.body.search)?
            .map(|g| g.id);
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
    fn upstream(&self, event: &EventRow) -> Result<Vec<Link>, RecordError> {
        let mut found = Vec::new();
        for id in &event.upstream {
            found.extend(self.logs.find_all(Kind::Event, id)?);
        }
        let mut links = self.links("upstream", found, event.upstream.len() * 2)?;
        links.sort_by_key(|l| event.upstream.iter().position(|h| *h == l.event_id));
        Ok(links)
    }

    /// The events that consumed this one.
    fn downstream(&self, event: &EventRow) -> Result<Vec<Link>, RecordError> {
        let mut found = self.logs.find_all(Kind::Upstream, &event.event_id)?;
        found.extend(self.logs.find_all(Kind::LaterUpstream, &event.event_id)?);
        found.sort_by_key(|f| (f.log, f.entry.place()));
        found.dedup_by(|a, b| a.log == b.log && a.entry.place() == b.entry.place());
        self.links("downstream", found, DOWNSTREAM)
    }

    /// The oldest `limit` events of `found`, as links labelled by log.
    fn links(&self, relation: &str, mut found: Vec<Located>, limit: usize) -> Result<Vec<Link>, RecordError> {
        oldest_first(&mut found);
        found.truncate(limit);
        found
            .iter()
            .map(|f| {
                let row = self.logs.row(f)?;
                let id = crate::log::event::hashes(&row, "event_id")?;
                Ok(Link {
                    relation: relation.to_string(),
                    log: f.log.to_string(),
                    event_id: *id.first().ok_or_else(|| json_error("an empty row".into()))?,
                    label: label(f.log, &row),
                })
            })
            .collect()
    }
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
        crate::events::Agent::External => {
            format!("{}+{}", g.model, g.agent_name.as_deref().unwrap_or("external"))
        }
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

/// An event of `log` in a few words (what the SQL `concat` of its columns gives: a null
/// column is empty text, numbers are cast as SQL casts them).
fn label(log: &str, row: &RecordBatch) -> String {
    let t = |name: &str| text(row, name);
    let yes = |name: &str| t(name) == "true";
    match log {
        Generation::STAGE => format!(
            "{} {}/{}/{} seed {}",
            t("model"),
            t("competition"),
            t("language"),
            t("format"),
            t("seed")
        ),
        Execution::STAGE => format!("{}/{} {}", t("competition"), t("format"), t("outcome")),
        Grade::STAGE if yes("valid") => format!("{} valid, score {}", t("competition"), t("score")),
        Grade::STAGE => format!("{} invalid", t("competition")),
        Attempt::STAGE => format!("step {} {}", t("step"), t("stage")),
        Analysis::STAGE => t("name"),
        TranslationCheck::STAGE => {
            let verdict = if yes("passed") { "passed" } else { "failed" };
            format!("{}/{} {verdict}", t("competition"), t("language"))
        }
        TranslatedText::STAGE => format!("{} {}/{}→{}", t("model"), t("competition"), t("from"), t("to")),
        _ => String::new(),
    }
}

/// The first value of a column as text ("" when null or absent), cast as SQL's `CAST(… AS
/// VARCHAR)` casts it.
fn text(row: &RecordBatch, name: &str) -> String {
    use arrow::array::{Array, AsArray};
    let Some(col) = row.column_by_name(name) else {
        return String::new();
    };
    match arrow::compute::cast(col, &arrow::datatypes::DataType::Utf8) {
        Ok(c) if !c.is_empty() && !c.is_null(0) => c.as_string::<i32>().value(0).to_string(),
        _ => String::new(),
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
