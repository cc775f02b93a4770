//! One artefact of a record as bytes: what `ml2b show ID --raw KIND` writes.
//!
//! Objects (prompt, response, code, predictions, result) are written as stored, verified
//! against their hash; texts held in the event (stdout, stderr, the run output) as UTF-8;
//! the translation texts as the benchmark root holds them.

use super::{Artefact, Detail, Record, RecordError};
use crate::store::{Hash, Store};

/// The bytes of `kind` of `record`.
pub(super) fn artefact(store: &Store, record: &Record, kind: Artefact) -> Result<Vec<u8>, RecordError> {
    match find(record, kind) {
        Some(Source::Object(hash)) => Ok(store.objects().get(&hash)?),
        Some(Source::Text(text)) => Ok(text.into_bytes()),
        None => Err(RecordError::NoArtefact {
            log: record.event.log.clone(),
            kind: kind.name().into(),
        }),
    }
}

enum Source {
    Object(Hash),
    Text(String),
}

fn find(record: &Record, kind: Artefact) -> Option<Source> {
    use Artefact as A;
    let object = |h: Option<Hash>| h.map(Source::Object);
    let text = |t: Option<&String>| t.cloned().map(Source::Text);
    match (&record.detail, kind) {
        (Detail::Run(run), A::Prompt) => object(run.generation.body.prompt_blake3),
        (Detail::Run(run), A::Response) => object(run.generation.body.response_blake3),
        (Detail::Run(run), A::Code) => object(Some(run.generation.body.code_blake3)),
        (Detail::Run(run), A::Predictions) => object(run.execution.as_ref()?.body.predictions_blake3),
        (Detail::Run(run), A::Stdout) => text(Some(&run.execution.as_ref()?.body.stdout_tail)),
        (Detail::Run(run), A::Stderr) => text(Some(&run.execution.as_ref()?.body.stderr_tail)),
        (Detail::Attempt(s), A::Prompt) => object(Some(s.attempt.body.prompt_blake3)),
        (Detail::Attempt(s), A::Response) => object(Some(s.attempt.body.response_blake3)),
        (Detail::Attempt(s), A::Code) => object(Some(s.attempt.body.code_blake3)),
        (Detail::Attempt(s), A::TermOut) => text(Some(&s.attempt.body.term_out)),
        (Detail::Analysis(t), A::Result) => object(Some(t.analysis.body.result_blake3)),
        (Detail::Analysis(t), A::Query) => text(t.query.as_ref()),
        (Detail::Translation(t), A::English) => text(t.english.as_ref()),
        (Detail::Translation(t), A::Text) => text(t.text.as_ref()),
        (Detail::Translation(t), A::Back) => text(t.back.as_ref()),
        _ => None,
    }
}
