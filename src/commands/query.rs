//! `ml2b query <SQL | FILE.sql> [--format table|csv|json|parquet] [--out F] [--root DIR]`.
//!
//! Sees the stage logs, and with a benchmark root (default `.`) the manifests' tables and
//! the views of `queries/views/` (see `queries/README.md`).

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;

use super::{ExitStatus, InputError};

use crate::competition::Benchmark;
use crate::settings::{GlobalSettings, QueryOutput, QuerySettings};
use crate::store::Store;

/// Runs `ml2b query`.
pub(super) fn query(settings: &GlobalSettings, args: &QuerySettings) -> anyhow::Result<ExitStatus> {
    let sql = read_sql(&args.query)?;
    require_store(&settings.store)?;
    let format = args.format;
    let bench = optional_bench(&args.root)?;
    let (schema, batches) = super::runtime()?.block_on(async {
        let session = crate::query::Session {
            bench: bench.as_ref(),
        };
        let ctx = session.open(&settings.store).await?;
        crate::query::run(&ctx, &sql).await
    })?;
    let bytes = render(format, &schema, &batches)?;
    match args.out.as_deref() {
        Some(path) => write_atomically(path, &bytes)?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(ExitStatus::Success)
}

/// The benchmark at `root` when it has manifests: the manifests' tables and the views need
/// one; without it the logs alone are queryable.
pub(super) fn optional_bench(root: &Path) -> anyhow::Result<Option<Benchmark>> {
    if root.join("manifests/languages.toml").is_file() {
        Ok(Some(Benchmark::load(root)?))
    } else {
        Ok(None)
    }
}

/// A store that does not exist would answer every query with no rows: most likely the
/// path is wrong, so say so. (An existing, empty store answers no rows; an S3 store has no
/// folder to look for, and opening it checked the bucket.)
pub(super) fn require_store(store: &Store) -> anyhow::Result<()> {
    if store.is_s3() {
        return Ok(());
    }
    let root = store.root();
    match std::fs::metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(InputError(format!(
            "there is no store at {} (see --store or ML2B_STORE)",
            root.display()
        ))
        .into()),
        Ok(m) if !m.is_dir() => {
            Err(InputError(format!("the store {} is not a directory", root.display())).into())
        }
        // Another failure (permission denied) shows with its cause when the logs are read.
        _ => Ok(()),
    }
}

/// The statement itself, or the content of the `.sql` file it names.
fn read_sql(query: &str) -> anyhow::Result<String> {
    if !query.trim_end().ends_with(".sql") {
        return Ok(query.to_string());
    }
    std::fs::read_to_string(query)
        .map_err(|e| InputError(format!("cannot read query file {query}: {e}")).into())
}

fn render(format: QueryOutput, schema: &SchemaRef, batches: &[RecordBatch]) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    match format {
        QueryOutput::Table => {
            let table = arrow::util::pretty::pretty_format_batches_with_schema(schema.clone(), batches)?;
            writeln!(buf, "{table}")?;
        }
        QueryOutput::Csv => {
            let mut w = arrow::csv::WriterBuilder::new().with_header(true).build(&mut buf);
            write_csv(&mut w, schema, batches)?;
        }
        QueryOutput::Json => {
            let mut w = arrow::json::ArrayWriter::new(&mut buf);
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
            if buf.is_empty() {
                buf.extend_from_slice(b"[]");
            }
            buf.push(b'\n');
        }
        QueryOutput::Parquet => {
            let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), None)?;
            for b in batches {
                w.write(b)?;
            }
            w.close()?;
        }
    }
    Ok(buf)
}

fn write_csv<W: Write>(
    w: &mut arrow::csv::Writer<W>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> anyhow::Result<()> {
    if batches.is_empty() {
        w.write(&RecordBatch::new_empty(schema.clone()))?;
    }
    for b in batches {
        w.write(b)?;
    }
    Ok(())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::store::write_atomic(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}
