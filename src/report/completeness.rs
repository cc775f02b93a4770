//! Whether the tables are complete, read from two of them: `completeness` (planned samples
//! and those still without a verdict, per model and format) and `faults` (why). Every
//! other table counts a missing sample as a failure, so a table with missing samples is a
//! lower bound, not a result: the report puts [`Completeness::banner`] above the tables,
//! and `ml2b report` and `ml2b run` print [`Completeness::lines`] as warnings and exit 1
//! unless the user accepts it.

use super::plots::{float_column, text_column};
use super::{ReportError, Table};

/// The samples of one model and format that have no verdict.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Incomplete {
    pub model: String,
    pub format: String,
    pub planned: u64,
    pub missing: u64,
    pub not_generated: u64,
    pub not_executed: u64,
    pub not_graded: u64,
}

/// One group of faults of the `faults` table.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FaultGroup {
    pub stage: String,
    pub model: Option<String>,
    pub message: String,
    pub units: u64,
    pub example: String,
}

/// What the `completeness` and `faults` tables say.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Completeness {
    /// Every planned sample.
    pub planned: u64,
    /// Those without a verdict.
    pub missing: u64,
    /// Per model and format, those with missing samples.
    pub incomplete: Vec<Incomplete>,
    pub faults: Vec<FaultGroup>,
}

/// The longest fault message shown in a line.
const MESSAGE_CHARS: usize = 300;

impl Completeness {
    /// Reads the `completeness` table and, when given, the `faults` table.
    pub fn of(completeness: &Table, faults: Option<&Table>) -> Result<Self, ReportError> {
        let count = |name: &str| -> Result<Vec<u64>, ReportError> {
            Ok(float_column(completeness, name)?
                .into_iter()
                .map(|v| v.unwrap_or(0.0) as u64)
                .collect())
        };
        let (models, formats) = (
            text_column(completeness, "model")?,
            text_column(completeness, "format")?,
        );
        let (planned, missing) = (count("planned")?, count("missing")?);
        let (generated, executed, graded) = (
            count("not_generated")?,
            count("not_executed")?,
            count("not_graded")?,
        );
        let mut out = Self::default();
        for i in 0..models.len() {
            out.planned += planned[i];
            out.missing += missing[i];
            if missing[i] > 0 {
                out.incomplete.push(Incomplete {
                    model: models[i].to_string(),
                    format: formats[i].to_string(),
                    planned: planned[i],
                    missing: missing[i],
                    not_generated: generated[i],
                    not_executed: executed[i],
                    not_graded: graded[i],
                });
            }
        }
        if let Some(f) = faults {
            out.faults = fault_groups(f)?;
        }
        Ok(out)
    }

    /// Whether every planned sample has a verdict.
    pub fn is_complete(&self) -> bool {
        self.missing == 0
    }

    /// What is missing and why, one line each (none when complete).
    pub fn lines(&self) -> Vec<String> {
        if self.is_complete() {
            return Vec::new();
        }
        let mut lines = vec![format!(
            "the tables are incomplete: {} of {} planned samples have no verdict, and count as failures in every table",
            self.missing, self.planned
        )];
        for i in &self.incomplete {
            let parts: Vec<String> = [
                (i.not_generated, "not generated"),
                (i.not_executed, "not executed"),
                (i.not_graded, "not graded"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            lines.push(format!(
                "  {} ({}): {} of {} missing: {}",
                i.model,
                i.format,
                i.missing,
                i.planned,
                parts.join(", ")
            ));
        }
        for f in &self.faults {
            let model = f.model.as_deref().map(|m| format!(" of {m}")).unwrap_or_default();
            lines.push(format!(
                "  {} fault{model}, {} unit(s), e.g. {}: {}",
                f.stage,
                f.units,
                f.example,
                shorten(&f.message)
            ));
        }
        lines
    }

    /// The report's notice above the tables (none when complete).
    pub fn banner(&self) -> Option<String> {
        (!self.is_complete()).then(|| {
            format!(
                "Incomplete: {} of {} planned samples have no verdict (never generated, executed or graded: see the tables `completeness` and `faults`). They count as failures in every table, so these numbers are a lower bound.",
                self.missing, self.planned
            )
        })
    }
}

fn fault_groups(t: &Table) -> Result<Vec<FaultGroup>, ReportError> {
    let (stage, model, message, example) = (
        text_column(t, "stage")?,
        text_column(t, "model")?,
        text_column(t, "message")?,
        text_column(t, "example")?,
    );
    let units = float_column(t, "units")?;
    Ok((0..stage.len())
        .map(|i| FaultGroup {
            stage: stage[i].to_string(),
            model: (!model[i].is_empty()).then(|| model[i].to_string()),
            message: message[i].to_string(),
            units: units[i].unwrap_or(0.0) as u64,
            example: example[i].to_string(),
        })
        .collect())
}

/// `message` on one line, at most [`MESSAGE_CHARS`] characters.
fn shorten(message: &str) -> String {
    let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch, StringArray};

    use super::*;

    fn table(name: &str, columns: Vec<(&str, arrow::array::ArrayRef)>) -> Table {
        Table {
            name: name.into(),
            title: name.into(),
            description: String::new(),
            batch: RecordBatch::try_from_iter(columns).unwrap(),
        }
    }

    fn strings(v: &[Option<&str>]) -> arrow::array::ArrayRef {
        Arc::new(StringArray::from(v.to_vec()))
    }

    fn ints(v: &[i64]) -> arrow::array::ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    #[test]
    fn missing_samples_are_summed_and_explained() {
        let completeness = table(
            "completeness",
            vec![
                ("model", strings(&[Some("fake"), Some("reference")])),
                ("format", strings(&[Some("modular"), Some("modular")])),
                ("planned", ints(&[3, 3])),
                ("complete", ints(&[1, 3])),
                ("missing", ints(&[2, 0])),
                ("not_generated", ints(&[2, 0])),
                ("not_executed", ints(&[0, 0])),
                ("not_graded", ints(&[0, 0])),
            ],
        );
        let faults = table(
            "faults",
            vec![
                ("stage", strings(&[Some("generate")])),
                ("model", strings(&[Some("fake")])),
                (
                    "message",
                    strings(&[Some("gave up after 6 attempts;\n  the last failed with HTTP 500")]),
                ),
                ("units", ints(&[2])),
                ("example", strings(&[Some("credit-risk/en/modular/0")])),
            ],
        );
        let c = Completeness::of(&completeness, Some(&faults)).unwrap();
        assert_eq!((c.planned, c.missing, c.incomplete.len()), (6, 2, 1));
        assert!(!c.is_complete());
        assert_eq!(
            c.lines(),
            [
                "the tables are incomplete: 2 of 6 planned samples have no verdict, and count as failures in every table",
                "  fake (modular): 2 of 3 missing: 2 not generated",
                "  generate fault of fake, 2 unit(s), e.g. credit-risk/en/modular/0: gave up after 6 attempts; the last failed with HTTP 500",
            ]
        );
        assert!(
            c.banner()
                .unwrap()
                .starts_with("Incomplete: 2 of 6 planned samples")
        );
    }

    #[test]
    fn a_complete_table_says_nothing() {
        let completeness = table(
            "completeness",
            vec![
                ("model", strings(&[Some("reference")])),
                ("format", strings(&[Some("mono")])),
                ("planned", ints(&[4])),
                ("complete", ints(&[4])),
                ("missing", ints(&[0])),
                ("not_generated", ints(&[0])),
                ("not_executed", ints(&[0])),
                ("not_graded", ints(&[0])),
            ],
        );
        let c = Completeness::of(&completeness, None).unwrap();
        assert!(c.is_complete());
        assert!(c.lines().is_empty() && c.banner().is_none());
    }
}
