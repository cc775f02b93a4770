//! Performance ratios r_p against a baseline and the areas under the performance profile.
//!
//! Two conventions (STATISTICS.md §3.0 and §3.4, ML2B.md §1.8):
//!
//! * [`Convention::Ml2b`] (default). r = score / baseline when the manifest says maximize,
//!   baseline / score when it says minimize, so r ≥ 1 means "at least as good as the
//!   baseline" (a zero denominator gives +∞ for a positive numerator, else 0). A failed,
//!   invalid or missing run counts 0; a cell averages over its seeds. The profile is the
//!   attainment profile ρ(τ) = share of cells with r ≥ τ, so higher is better:
//!   AUP = ∫₀¹ ρ = mean(min(r, 1)), AUP_{−ln τ} = ∫₀¹ ρ(τ)(−ln τ) dτ = mean(x − x ln x) with
//!   x = clip(r, 0, 1) (both exact), and AUP_{−1/ln τ} = trapezoid of ρ·w over trapezoid of w,
//!   w = −1/ln τ, on [`INVLN_GRID`]. That weight is not integrable at τ → 1, so the value
//!   depends on the grid and is ≈ the share of cells with r ≥ 1; reports state the grid.
//!   win_rate = 100 · share of cells with r ≥ 1.
//! * [`Convention::Ml2bCode`] reproduces `metrics/AUP_stats.py`: the direction comes from the
//!   metric *label* (higher is better only for `roc_auc`, `f1_score`, `accuracy`,
//!   `r2_score`, `FScoreMacro`), a zero denominator gives 0, failed runs are dropped and the
//!   list padded with zeros to 3; ρ(τ) = share with r ≤ τ (a CDF, so these AUPs *fall* as
//!   models beat the baseline); AUP = trapezoid on linspace(0, 1, 1001); AUP_{−1/ln τ} as
//!   above with the CDF; win_rate = 100 · share with r ≤ 1 (as coded). AUP_{−ln τ} is the
//!   exact integral 1 − x + x ln x per cell; the original calls `scipy.integrate.quad`
//!   (epsabs = epsrel = 1e-6) on a step integrand with one step per cell, which strays from
//!   the exact value as the steps multiply and quad's adaptive subdivision misses some:
//!   measured 1.9e-7 with 12 cells, 6.9e-6 with 100, 7.8e-5 with 300 (a paper table has
//!   ~490 cells), so the original's values agree with ml2b's to [`QUAD_GAP`] only, not to the
//!   1e-6 quad was asked for (`tests/reference/grading_rules.py`, `aup_quad`).
//!
//! Grids are built as `np.linspace` builds them (`i·step + start`, last point = stop), and
//! integrated as `np.trapezoid`, so the grid-based values agree with numpy to ~1e-15.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};
use serde::Serialize;

use crate::metrics::grading::Direction;
use crate::metrics::grading::table::{ReadError, read_table};
use crate::terminal::Column;

/// The grid of AUP_{−1/ln τ}: `np.linspace(1e-8, 1 - 1e-8, 1000)`, trapezoid rule.
pub const INVLN_GRID: &str = "trapezoid on linspace(1e-8, 1-1e-8, 1000)";

/// Metric labels the original code treats as higher-is-better; every other label is lower.
pub const ML2B_CODE_HIGHER_IS_BETTER: [&str; 5] =
    ["roc_auc", "f1_score", "accuracy", "r2_score", "FScoreMacro"];

/// How far the original's AUP_{−ln τ} (`scipy.integrate.quad`, epsabs = epsrel = 1e-6) may
/// stray from the exact integral ml2b computes, on tables of up to a few hundred cells.
pub const QUAD_GAP: f64 = 1e-4;

/// Seeds per cell in the paper.
pub const DEFAULT_SEEDS: usize = 3;

/// Which definition of r_p and the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Convention {
    #[serde(rename = "ml2b")]
    Ml2b,
    #[serde(rename = "ml2b-code")]
    Ml2bCode,
}

/// An unknown convention name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown convention `{0}`; expected `ml2b` or `ml2b-code`")]
pub struct UnknownConvention(pub String);

impl FromStr for Convention {
    type Err = UnknownConvention;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ml2b" => Ok(Self::Ml2b),
            "ml2b-code" => Ok(Self::Ml2bCode),
            other => Err(UnknownConvention(other.to_string())),
        }
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ml2b => "ml2b",
            Self::Ml2bCode => "ml2b-code",
        })
    }
}

/// Reads a run's result cell as the original code does: NaN, or text containing `None`,
/// `nan`, `NaN`, `Error` or `err`, or text that is not a number, is a failed run.
pub fn parse_run(cell: &str) -> Option<f64> {
    let failed = ["None", "nan", "NaN", "Error", "err"]
        .iter()
        .any(|bad| cell.contains(bad));
    if failed {
        None
    } else {
        cell.trim().parse::<f64>().ok().filter(|v| !v.is_nan())
    }
}

/// r of one run in ml2b's convention; `None` (failed, invalid) and non-finite scores give 0.
pub fn run_ratio(score: Option<f64>, baseline: f64, direction: Direction) -> f64 {
    let Some(score) = score.filter(|s| s.is_finite()) else {
        return 0.0;
    };
    let (num, den) = match direction {
        Direction::Maximize => (score, baseline),
        Direction::Minimize => (baseline, score),
    };
    match den {
        0.0 if num > 0.0 => f64::INFINITY,
        0.0 => 0.0,
        _ => num / den,
    }
}

/// Mean r over `seeds` seeds (more runs than seeds: over the runs); missing seeds count 0.
pub fn cell_ratio(runs: &[Option<f64>], baseline: f64, direction: Direction, seeds: usize) -> f64 {
    let valid: Vec<f64> = runs
        .iter()
        .filter(|r| r.is_some_and(f64::is_finite))
        .map(|&r| run_ratio(r, baseline, direction))
        .collect();
    valid.iter().sum::<f64>() / seeds.max(valid.len()).max(1) as f64
}

/// `compute_rp` of `metrics/AUP_stats.py`: direction from the metric label, 0 for a zero
/// denominator, failed runs dropped then padded with 0 to three.
pub fn cell_ratio_ml2b_code(runs: &[Option<f64>], baseline: f64, metric_label: &str) -> f64 {
    let higher = ML2B_CODE_HIGHER_IS_BETTER.contains(&metric_label);
    let ratio = |v: f64| match higher {
        true if baseline != 0.0 => v / baseline,
        false if v != 0.0 => baseline / v,
        _ => 0.0,
    };
    let valid: Vec<f64> = runs.iter().flatten().map(|&v| ratio(v)).collect();
    valid.iter().sum::<f64>() / DEFAULT_SEEDS.max(valid.len()) as f64
}

/// Pass rate in percent: mean over cells of the share of their `seeds` runs that produced a
/// valid score (`valid_runs[i]` per cell).
pub fn pass_rate(valid_runs: &[usize], seeds: usize) -> f64 {
    let per_cell = valid_runs.iter().map(|&v| 100.0 * v as f64 / seeds as f64);
    per_cell.sum::<f64>() / valid_runs.len().max(1) as f64
}

/// The four profile statistics of one set of cells.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Aups {
    pub aup: f64,
    pub aup_ln: f64,
    pub aup_invln: f64,
    pub win_rate: f64,
}

/// `np.linspace(start, stop, num)`.
fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    let step = (stop - start) / (num - 1) as f64;
    let mut grid: Vec<f64> = (0..num).map(|i| i as f64 * step + start).collect();
    grid[num - 1] = stop;
    grid
}

/// `np.trapezoid(y, x)`.
fn trapezoid(y: &[f64], x: &[f64]) -> f64 {
    (1..x.len())
        .map(|i| (x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2.0)
        .sum()
}

/// Profile values on `grid`: share of `sorted` with r ≥ τ (attainment) or r ≤ τ (CDF).
fn profile(sorted: &[f64], grid: &[f64], convention: Convention) -> Vec<f64> {
    let n = sorted.len() as f64;
    let count = |tau: f64| match convention {
        Convention::Ml2b => sorted.len() - sorted.partition_point(|&r| r < tau),
        Convention::Ml2bCode => sorted.partition_point(|&r| r <= tau),
    };
    grid.iter().map(|&tau| count(tau) as f64 / n).collect()
}

fn aup_invln(sorted: &[f64], convention: Convention) -> f64 {
    let grid = linspace(1e-8, 1.0 - 1e-8, 1000);
    let weight: Vec<f64> = grid.iter().map(|t| -1.0 / t.ln()).collect();
    let rho = profile(sorted, &grid, convention);
    let weighted: Vec<f64> = rho.iter().zip(&weight).map(|(r, w)| r * w).collect();
    let denominator = trapezoid(&weight, &grid);
    if denominator == 0.0 {
        0.0
    } else {
        trapezoid(&weighted, &grid) / denominator
    }
}

/// ∫₀^x −ln τ dτ = x − x ln x for x = clip(r, 0, 1).
fn attained_ln(r: f64) -> f64 {
    let x = r.clamp(0.0, 1.0);
    if x > 0.0 { x - x * x.ln() } else { 0.0 }
}

fn mean(values: impl Iterator<Item = f64>, n: usize) -> f64 {
    values.sum::<f64>() / n as f64
}

fn ml2b_aups(sorted: &[f64]) -> Aups {
    let n = sorted.len();
    Aups {
        aup: mean(sorted.iter().map(|r| r.clamp(0.0, 1.0)), n),
        aup_ln: mean(sorted.iter().map(|&r| attained_ln(r)), n),
        aup_invln: aup_invln(sorted, Convention::Ml2b),
        win_rate: 100.0 * sorted.iter().filter(|&&r| r >= 1.0).count() as f64 / n as f64,
    }
}

fn ml2b_code_aups(sorted: &[f64]) -> Aups {
    let n = sorted.len();
    let grid = linspace(0.0, 1.0, 1001);
    Aups {
        aup: trapezoid(&profile(sorted, &grid, Convention::Ml2bCode), &grid),
        aup_ln: mean(sorted.iter().map(|&r| 1.0 - attained_ln(r)), n),
        aup_invln: aup_invln(sorted, Convention::Ml2bCode),
        win_rate: 100.0 * sorted.iter().filter(|&&r| r <= 1.0).count() as f64 / n as f64,
    }
}

/// AUP statistics of the cell ratios `r` (one per competition). Empty input gives zeros
/// (the original's `compute_rho` returns 0 for no cells).
pub fn aups(r: &[f64], convention: Convention) -> Aups {
    if r.is_empty() {
        return Aups {
            aup: 0.0,
            aup_ln: 0.0,
            aup_invln: 0.0,
            win_rate: 0.0,
        };
    }
    let mut sorted = r.to_vec();
    sorted.sort_by(f64::total_cmp);
    match convention {
        Convention::Ml2b => ml2b_aups(&sorted),
        Convention::Ml2bCode => ml2b_code_aups(&sorted),
    }
}

/// One (model, language) row of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AupCell {
    pub model: String,
    pub language: String,
    pub competitions: usize,
    #[serde(flatten)]
    pub aups: Aups,
}

/// The plain mean over a model's languages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelAverage {
    pub model: String,
    pub languages: usize,
    #[serde(flatten)]
    pub aups: Aups,
}

/// AUP statistics per (model, language) and their average over languages per model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AupReport {
    pub convention: Convention,
    pub invln_grid: &'static str,
    pub cells: Vec<AupCell>,
    pub averages: Vec<ModelAverage>,
}

/// Why a ratios file cannot be turned into a report. Rows are 1-based data rows.
#[derive(Debug, thiserror::Error)]
pub enum AupError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{}: missing column `{column}` (expected model, language, competition, r)", path.display())]
    MissingColumn { path: PathBuf, column: &'static str },
    #[error("{}: row {row}, column `{column}`: {problem}", path.display())]
    BadValue {
        path: PathBuf,
        row: usize,
        column: &'static str,
        problem: String,
    },
    #[error("{}: row {row} repeats the cell ({model}, {language}, {competition})", path.display())]
    DuplicateCell {
        path: PathBuf,
        row: usize,
        model: String,
        language: String,
        competition: String,
    },
    #[error("{}: no rows", path.display())]
    Empty { path: PathBuf },
}

impl crate::error::IsInputError for AupError {
    fn is_input_error(&self) -> bool {
        true
    }
}
crate::error::input_error!(AupError);

type CellKey = (String, String, String);

fn text_column(path: &Path, array: &ArrayRef, column: &'static str) -> Result<Vec<String>, AupError> {
    let bad = |row: usize, problem: &str| AupError::BadValue {
        path: path.to_path_buf(),
        row: row + 1,
        column,
        problem: problem.to_string(),
    };
    let text = cast(array, &DataType::Utf8).map_err(|e| bad(0, &e.to_string()))?;
    let text = text.as_string::<i32>();
    (0..text.len())
        .map(|i| {
            if text.is_null(i) {
                Err(bad(i, "empty value"))
            } else {
                Ok(text.value(i).to_string())
            }
        })
        .collect()
}

fn ratio_column(path: &Path, array: &ArrayRef) -> Result<Vec<f64>, AupError> {
    let bad = |row: usize, problem: String| AupError::BadValue {
        path: path.to_path_buf(),
        row: row + 1,
        column: "r",
        problem,
    };
    let values: Vec<Option<f64>> = match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let text = cast(array, &DataType::Utf8).map_err(|e| bad(0, e.to_string()))?;
            text.as_string::<i32>()
                .iter()
                .map(|c| c.and_then(|c| c.trim().parse::<f64>().ok()))
                .collect()
        }
        _ => cast(array, &DataType::Float64)
            .map_err(|e| bad(0, e.to_string()))?
            .as_primitive::<Float64Type>()
            .iter()
            .collect(),
    };
    values
        .into_iter()
        .enumerate()
        .map(|(row, v)| match v {
            Some(v) if !v.is_nan() => Ok(v),
            Some(_) => Err(bad(row, "NaN is not a ratio (a failed run counts 0)".into())),
            None => Err(bad(row, "not a number".into())),
        })
        .collect()
}

fn read_cells(path: &Path) -> Result<BTreeMap<(String, String), Vec<f64>>, AupError> {
    let table = read_table(path)?;
    let column = |name: &'static str| {
        table.column(name).ok_or(AupError::MissingColumn {
            path: path.to_path_buf(),
            column: name,
        })
    };
    let models = text_column(path, column("model")?, "model")?;
    let languages = text_column(path, column("language")?, "language")?;
    let competitions = text_column(path, column("competition")?, "competition")?;
    let ratios = ratio_column(path, column("r")?)?;
    if ratios.is_empty() {
        return Err(AupError::Empty {
            path: path.to_path_buf(),
        });
    }
    let mut seen: BTreeMap<CellKey, usize> = BTreeMap::new();
    let mut cells: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for (row, r) in ratios.into_iter().enumerate() {
        let key = (
            models[row].clone(),
            languages[row].clone(),
            competitions[row].clone(),
        );
        if seen.insert(key.clone(), row).is_some() {
            return Err(AupError::DuplicateCell {
                path: path.to_path_buf(),
                row: row + 1,
                model: key.0,
                language: key.1,
                competition: key.2,
            });
        }
        cells.entry((key.0, key.1)).or_default().push(r);
    }
    Ok(cells)
}

fn average(model: &str, cells: &[AupCell]) -> ModelAverage {
    let mine: Vec<&Aups> = cells
        .iter()
        .filter(|c| c.model == model)
        .map(|c| &c.aups)
        .collect();
    let n = mine.len();
    let field = |f: fn(&Aups) -> f64| mine.iter().map(|a| f(a)).sum::<f64>() / n as f64;
    let aups = Aups {
        aup: field(|a| a.aup),
        aup_ln: field(|a| a.aup_ln),
        aup_invln: field(|a| a.aup_invln),
        win_rate: field(|a| a.win_rate),
    };
    ModelAverage {
        model: model.to_string(),
        languages: n,
        aups,
    }
}

/// Builds the report from per-(model, language) cell ratios.
pub fn aup_report(cells: &BTreeMap<(String, String), Vec<f64>>, convention: Convention) -> AupReport {
    let cells: Vec<AupCell> = cells
        .iter()
        .map(|((model, language), r)| AupCell {
            model: model.clone(),
            language: language.clone(),
            competitions: r.len(),
            aups: aups(r, convention),
        })
        .collect();
    let mut models: Vec<&str> = cells.iter().map(|c| c.model.as_str()).collect();
    models.dedup();
    let averages = models.iter().map(|m| average(m, &cells)).collect();
    AupReport {
        convention,
        invln_grid: INVLN_GRID,
        cells,
        averages,
    }
}

/// Reads a ratios file (CSV or Parquet; columns model, language, competition, r; one row per
/// cell) and reports AUP statistics per (model, language) and per model.
pub fn aup_file(ratios: &Path, convention: Convention) -> Result<AupReport, AupError> {
    Ok(aup_report(&read_cells(ratios)?, convention))
}

/// The columns of the report's table.
const COLUMNS: [Column; 6] = [
    Column::left(24),
    Column::left(12),
    Column::right(8),
    Column::right(8),
    Column::right(10),
    Column::right(8).gap(0),
];

fn row(model: &str, language: &str, a: &Aups) -> Vec<String> {
    vec![
        model.to_string(),
        language.to_string(),
        format!("{:.4}", a.aup),
        format!("{:.4}", a.aup_ln),
        format!("{:.4}", a.aup_invln),
        format!("{:.1}", a.win_rate),
    ]
}

impl fmt::Display for AupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "convention {}; AUP_-1/ln grid: {}",
            self.convention, self.invln_grid
        )?;
        let header = ["model", "language", "AUP", "AUP_ln", "AUP_invln", "win %"];
        let mut rows = vec![header.map(String::from).to_vec()];
        rows.extend(self.cells.iter().map(|c| row(&c.model, &c.language, &c.aups)));
        rows.extend(self.averages.iter().map(|a| row(&a.model, "Avg.", &a.aups)));
        write!(f, "{}", crate::terminal::table(&COLUMNS, &rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const FIXTURE: &str = include_str!("../../tests/fixtures/grade_stats.json");
    /// The original's AUP_{−ln τ} comes from `scipy.integrate.quad` (epsabs 1e-6); ml2b computes
    /// the exact integral, so that one value is compared at the gap the docs state.
    const QUAD_TOLERANCE: f64 = QUAD_GAP;

    fn fixture() -> Value {
        serde_json::from_str(FIXTURE).unwrap()
    }

    fn number(v: &Value) -> f64 {
        match v.as_str() {
            Some(s) => s.parse().unwrap(),
            None => v.as_f64().unwrap(),
        }
    }

    fn assert_aups(name: &str, got: &Aups, expected: &Value, convention: Convention) -> f64 {
        let mut max_diff = 0.0f64;
        for (field, value) in [
            ("aup", got.aup),
            ("aup_ln", got.aup_ln),
            ("aup_invln", got.aup_invln),
            ("win_rate", got.win_rate),
        ] {
            let e = number(&expected[field]);
            let diff = (value - e).abs();
            let quad = convention == Convention::Ml2bCode && field == "aup_ln";
            let tolerance = if quad {
                QUAD_TOLERANCE
            } else {
                1e-9 * e.abs().max(1.0)
            };
            assert!(
                diff <= tolerance,
                "{name} {convention} {field}: got {value}, expected {e}"
            );
            if !quad {
                max_diff = max_diff.max(diff);
            }
        }
        max_diff
    }

    /// The gap the module docs state between quad's AUP_{−ln τ} and the exact one is the gap
    /// measured on many cells (`grading_rules.json`'s `aup_quad`): above 1e-5 (the "~2e-7" the
    /// docs once stated was a dozen cells' gap), under [`QUAD_GAP`].
    #[test]
    fn quad_gap_is_as_documented() {
        let doc: Value =
            serde_json::from_str(include_str!("../../tests/fixtures/grading_rules.json")).unwrap();
        let mut widest = 0.0f64;
        for case in doc["aup_quad"].as_array().unwrap() {
            let r: Vec<f64> = case["r"].as_array().unwrap().iter().map(number).collect();
            let gap = (aups(&r, Convention::Ml2bCode).aup_ln - number(&case["quad"])).abs();
            assert!(gap <= QUAD_GAP, "{} cells: gap {gap:e}", r.len());
            widest = widest.max(gap);
        }
        assert!(
            widest > 1e-5,
            "widest gap {widest:e}: the docs' 7.8e-5 is not measured here"
        );
    }

    #[test]
    fn aups_match_reference() {
        let fixture = fixture();
        let mut max_diff = 0.0f64;
        for case in fixture["aup"].as_array().unwrap() {
            let r: Vec<f64> = case["r"].as_array().unwrap().iter().map(number).collect();
            let name = case["name"].as_str().unwrap();
            max_diff = max_diff.max(assert_aups(
                name,
                &aups(&r, Convention::Ml2b),
                &case["ml2b"],
                Convention::Ml2b,
            ));
            max_diff = max_diff.max(assert_aups(
                name,
                &aups(&r, Convention::Ml2bCode),
                &case["ml2b_code"],
                Convention::Ml2bCode,
            ));
        }
        eprintln!("AUP cases: max abs diff {max_diff:e} (aup_ln of ml2b-code excluded: quad)");
    }

    fn run(v: &Value) -> Option<f64> {
        match v {
            Value::Null => None,
            Value::String(s) => parse_run(s),
            other => other.as_f64(),
        }
    }

    #[test]
    fn ratios_match_reference() {
        let fixture = fixture();
        for case in fixture["rp"].as_array().unwrap() {
            let runs: Vec<Option<f64>> = case["runs"].as_array().unwrap().iter().map(run).collect();
            let baseline = case["baseline"].as_f64().unwrap();
            let direction = match case["direction"].as_str().unwrap() {
                "maximize" => Direction::Maximize,
                _ => Direction::Minimize,
            };
            let ml2b = cell_ratio(&runs, baseline, direction, DEFAULT_SEEDS);
            assert_eq!(ml2b, number(&case["ml2b"]), "{case}");
            let code = cell_ratio_ml2b_code(&runs, baseline, case["metric_name"].as_str().unwrap());
            assert!(
                (code - case["ml2b_code"].as_f64().unwrap()).abs() <= 1e-12,
                "{case}"
            );
        }
    }

    #[test]
    fn ratios_file_matches_reference() {
        let fixture = fixture();
        let case = &fixture["ratios_file"];
        let path = std::env::temp_dir().join(format!("gradestats-aup-{}.csv", std::process::id()));
        std::fs::write(&path, case["csv"].as_str().unwrap()).unwrap();
        for (convention, key) in [(Convention::Ml2b, "ml2b"), (Convention::Ml2bCode, "ml2b_code")] {
            let report = aup_file(&path, convention).unwrap();
            let expected = &case["expected"][key];
            for cell in &report.cells {
                let name = format!("{}|{}", cell.model, cell.language);
                assert_aups(&name, &cell.aups, &expected["cells"][&name], convention);
            }
            for avg in &report.averages {
                assert_aups(
                    &avg.model,
                    &avg.aups,
                    &expected["averages"][&avg.model],
                    convention,
                );
            }
            assert_eq!(report.cells.len(), expected["cells"].as_object().unwrap().len());
            let json = serde_json::to_value(&report).unwrap();
            assert_eq!(json["convention"], key.replace('_', "-"));
            assert!(report.to_string().contains("Avg."));
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn bad_ratio_files_name_row_and_column() {
        let path = std::env::temp_dir().join(format!("gradestats-aup-bad-{}.csv", std::process::id()));
        std::fs::write(
            &path,
            "model,language,competition,r\nm,English,c,0.5\nm,English,d,abc\n",
        )
        .unwrap();
        let err = aup_file(&path, Convention::Ml2b).unwrap_err();
        assert!(
            matches!(
                err,
                AupError::BadValue {
                    row: 2,
                    column: "r",
                    ..
                }
            ),
            "{err}"
        );
        std::fs::write(
            &path,
            "model,language,competition,r\nm,English,c,0.5\nm,English,c,0.7\n",
        )
        .unwrap();
        let err = aup_file(&path, Convention::Ml2b).unwrap_err();
        assert!(matches!(err, AupError::DuplicateCell { row: 2, .. }), "{err}");
        std::fs::write(&path, "model,language,r\nm,English,0.5\n").unwrap();
        assert!(matches!(
            aup_file(&path, Convention::Ml2b).unwrap_err(),
            AupError::MissingColumn {
                column: "competition",
                ..
            }
        ));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn ml2b_direction_comes_from_the_manifest() {
        assert_eq!(run_ratio(Some(2.0), 4.0, Direction::Minimize), 2.0);
        assert_eq!(run_ratio(Some(0.0), 4.0, Direction::Minimize), f64::INFINITY);
        assert_eq!(run_ratio(None, 4.0, Direction::Maximize), 0.0);
        assert_eq!(cell_ratio(&[Some(0.9)], 0.9, Direction::Maximize, 3), 1.0 / 3.0);
        assert!((pass_rate(&[3, 0, 2], 3) - 100.0 * 5.0 / 9.0).abs() < 1e-12);
    }

    #[test]
    fn convention_names_parse() {
        assert_eq!("ml2b-code".parse(), Ok(Convention::Ml2bCode));
        assert!("ml2b_code".parse::<Convention>().is_err());
    }
}
