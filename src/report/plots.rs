//! The report's plots, drawn from the tables of `queries/` they show.
//!
//! `ml2b report` writes them as files and `ml2b view` serves them; both call these, so a
//! plot is the same bytes in both. Which table has which plots:
//!
//! ```text
//! rp_matrix           heatmap_<model>_<format>.svg   r per task × language, one per series
//!                     profiles.svg                   attainment profile of every series
//! pass_rate_by_tier   pass_rate_by_tier.svg          pass rate per resource tier and series
//! ```
//! A series is a (model, format) pair, named `model (format)`. File names are
//! `[A-Za-z0-9_.-]+` (a series name is slugged).

use std::collections::BTreeMap;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Float64Type};

use super::{ReportError, Table, bars_svg, heatmap_svg, profile_svg};

/// One plot of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plot {
    /// Its file name, e.g. `profiles.svg`.
    pub file: String,
    /// What it shows, as a heading.
    pub heading: String,
    pub svg: String,
}

/// Every plot of `table` (none for a table that has no plot). `languages` orders the heat
/// maps' columns: the manifest's language codes.
pub fn plots_of(table: &Table, languages: &[String]) -> Result<Vec<Plot>, ReportError> {
    match table.name.as_str() {
        "rp_matrix" => {
            let mut out = vec![profiles(table)?];
            out.extend(heatmaps(table, languages)?);
            Ok(out)
        }
        "pass_rate_by_tier" => Ok(vec![tier_bars(table)?]),
        _ => Ok(Vec::new()),
    }
}

/// A text column, nulls as `""`.
pub fn text_column<'a>(t: &'a Table, name: &str) -> Result<Vec<&'a str>, ReportError> {
    let col = t
        .batch
        .column_by_name(name)
        .ok_or_else(|| missing(t, name, "text"))?;
    let col = col
        .as_string_opt::<i32>()
        .ok_or_else(|| missing(t, name, "text"))?;
    Ok((0..col.len())
        .map(|i| if col.is_valid(i) { col.value(i) } else { "" })
        .collect())
}

/// A numeric column as floats.
pub fn float_column(t: &Table, name: &str) -> Result<Vec<Option<f64>>, ReportError> {
    let col = t
        .batch
        .column_by_name(name)
        .ok_or_else(|| missing(t, name, "numeric"))?;
    let col = arrow::compute::cast(col, &DataType::Float64).map_err(|source| ReportError::Format {
        table: t.name.clone(),
        column: name.to_string(),
        source,
    })?;
    let col = col.as_primitive::<Float64Type>();
    Ok((0..col.len())
        .map(|i| col.is_valid(i).then(|| col.value(i)))
        .collect())
}

fn missing(t: &Table, column: &str, expected: &'static str) -> ReportError {
    ReportError::Column {
        table: t.name.clone(),
        column: column.to_string(),
        expected,
    }
}

/// `model (format)` for every row.
pub fn series_names(t: &Table) -> Result<Vec<String>, ReportError> {
    let models = text_column(t, "model")?;
    let formats = text_column(t, "format")?;
    Ok(models
        .iter()
        .zip(&formats)
        .map(|(m, f)| format!("{m} ({f})"))
        .collect())
}

/// One heat map per series of `rp_matrix`: competitions × languages in `languages` order.
pub fn heatmaps(rp_matrix: &Table, languages: &[String]) -> Result<Vec<Plot>, ReportError> {
    let names = series_names(rp_matrix)?;
    let (comps, langs, r) = (
        text_column(rp_matrix, "competition")?,
        text_column(rp_matrix, "language")?,
        float_column(rp_matrix, "r")?,
    );
    // A cell whose samples all wait for a stage is drawn as missing (grey, `n/a`), not as
    // the 0 that counts them in r: it has no verdict yet. (A table derived before the
    // `missing` column existed has none.)
    let (runs, missing) = (
        float_column(rp_matrix, "runs").ok(),
        float_column(rp_matrix, "missing").ok(),
    );
    let pending = |i: usize| match (&runs, &missing) {
        (Some(runs), Some(missing)) => missing[i].is_some_and(|m| m > 0.0 && Some(m) == runs[i]),
        _ => false,
    };
    let mut grids: BTreeMap<&str, BTreeMap<&str, BTreeMap<&str, f64>>> = BTreeMap::new();
    for i in 0..names.len() {
        if pending(i) {
            continue;
        }
        if let Some(v) = r[i] {
            grids
                .entry(&names[i])
                .or_default()
                .entry(comps[i])
                .or_default()
                .insert(langs[i], v);
        }
    }
    grids
        .into_iter()
        .map(|(series, grid)| heatmap(series, &grid, languages))
        .collect()
}

fn heatmap(
    series: &str,
    grid: &BTreeMap<&str, BTreeMap<&str, f64>>,
    languages: &[String],
) -> Result<Plot, ReportError> {
    let cols: Vec<String> = languages
        .iter()
        .filter(|c| grid.values().any(|row| row.contains_key(c.as_str())))
        .cloned()
        .collect();
    let rows: Vec<String> = grid.keys().map(|s| s.to_string()).collect();
    let values: Vec<Vec<Option<f64>>> = grid
        .values()
        .map(|row| cols.iter().map(|c| row.get(c.as_str()).copied()).collect())
        .collect();
    let hi = values.iter().flatten().flatten().fold(1.0f64, |a, &b| a.max(b));
    let svg = heatmap_svg(
        &format!("r per task and language: {series}"),
        &rows,
        &cols,
        &values,
        (0.0, hi),
    )?;
    Ok(Plot {
        file: format!("heatmap_{}.svg", slug(series)),
        heading: format!("Heat map: {series}"),
        svg,
    })
}

/// Attainment profiles of every series of `rp_matrix` over all its cells.
pub fn profiles(rp_matrix: &Table) -> Result<Plot, ReportError> {
    let names = series_names(rp_matrix)?;
    let r = float_column(rp_matrix, "r")?;
    let mut curves: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (n, v) in names.iter().zip(&r) {
        curves.entry(n).or_default().push(v.unwrap_or(0.0));
    }
    let max = curves.values().flatten().fold(1.0f64, |a, &b| a.max(b));
    let tau_max = (max * 1.05).clamp(1.1, 3.0);
    let curves: Vec<(String, Vec<f64>)> = curves.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let svg = profile_svg(
        "Performance profiles (cells: competition × language)",
        &curves,
        tau_max,
    )?;
    Ok(Plot {
        file: "profiles.svg".into(),
        heading: "Performance profiles".into(),
        svg,
    })
}

/// Pass rate per resource tier of `pass_rate_by_tier`, one bar per series.
pub fn tier_bars(pass_rate_by_tier: &Table) -> Result<Plot, ReportError> {
    let t = pass_rate_by_tier;
    let names = series_names(t)?;
    let (tiers, rate) = (text_column(t, "tier")?, float_column(t, "pass_rate")?);
    let categories: Vec<String> = ["high", "medium", "low"].map(String::from).to_vec();
    let mut series: BTreeMap<&str, Vec<Option<f64>>> = BTreeMap::new();
    for i in 0..names.len() {
        let slot = series
            .entry(&names[i])
            .or_insert_with(|| vec![None; categories.len()]);
        if let Some(k) = categories.iter().position(|c| c == tiers[i]) {
            slot[k] = rate[i];
        }
    }
    let series: Vec<(String, Vec<Option<f64>>)> =
        series.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let svg = bars_svg(
        "Pass rate by resource tier",
        &categories,
        &series,
        "pass rate (%)",
    )?;
    Ok(Plot {
        file: "pass_rate_by_tier.svg".into(),
        heading: "Pass rate by resource tier".into(),
        svg,
    })
}

/// A file-name-safe form of a series name.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};

    use super::*;

    fn rp_matrix() -> Table {
        let text = |v: &[&str]| Arc::new(StringArray::from(v.to_vec())) as ArrayRef;
        let batch = RecordBatch::try_from_iter([
            ("model", text(&["m+aide", "m+aide", "n"])),
            ("format", text(&["modular", "modular", "mono"])),
            ("competition", text(&["c1", "c2", "c1"])),
            ("language", text(&["kk", "en", "en"])),
            ("r", Arc::new(Float64Array::from(vec![0.5, 1.2, 0.1])) as ArrayRef),
        ])
        .unwrap();
        Table {
            name: "rp_matrix".into(),
            title: String::new(),
            description: String::new(),
            batch,
        }
    }

    #[test]
    fn rp_matrix_has_profiles_and_one_heat_map_per_series() {
        let languages = ["en", "kk"].map(String::from);
        let files: Vec<String> = plots_of(&rp_matrix(), &languages)
            .unwrap()
            .into_iter()
            .map(|p| p.file)
            .collect();
        assert_eq!(
            files,
            ["profiles.svg", "heatmap_m_aide_modular.svg", "heatmap_n_mono.svg"]
        );
    }

    #[test]
    fn a_missing_column_is_named() {
        let mut t = rp_matrix();
        t.name = "pass_rate_by_tier".into();
        let err = plots_of(&t, &[]).unwrap_err().to_string();
        assert!(err.contains("\"tier\""), "{err}");
    }
}
