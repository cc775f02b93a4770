//! A subjects × raters table of ratings, parsed from text cells the way
//! irrCAC sees a pandas frame read from CSV.
//!
//! Invariants:
//! * an empty (or blank) cell is a missing rating; subjects with no rating at
//!   all are dropped (`dropna(how="all")`);
//! * if every rating and every given category parses as a number, the scale
//!   is numeric: `"1"` and `"1.0"` are the same category and categories are
//!   sorted by value (irrCAC would misalign weights for an unsorted list);
//!   otherwise categories are labels, sorted when inferred and kept in the
//!   given order when explicit (label weights use positions 1..=q);
//! * without an explicit list the categories are the distinct observed
//!   values; a rating outside an explicit list is an error (irrCAC silently
//!   ignores it).

use std::fmt;

/// The rating scale.
#[derive(Debug, Clone, PartialEq)]
pub enum Categories {
    /// Numeric categories, sorted ascending, distinct.
    Numeric(Vec<f64>),
    /// Label categories in scale order.
    Labels(Vec<String>),
}

impl Categories {
    /// The number of categories `q`.
    pub fn len(&self) -> usize {
        match self {
            Self::Numeric(v) => v.len(),
            Self::Labels(v) => v.len(),
        }
    }

    /// Whether the scale is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values irrCAC's weights are computed from.
    pub fn weight_values(&self) -> Vec<f64> {
        match self {
            Self::Numeric(v) => v.clone(),
            Self::Labels(v) => (1..=v.len()).map(|k| k as f64).collect(),
        }
    }

    /// The categories as display strings.
    pub fn labels(&self) -> Vec<String> {
        match self {
            Self::Numeric(v) => v.iter().map(f64::to_string).collect(),
            Self::Labels(v) => v.clone(),
        }
    }

    fn index_of(&self, cell: &str) -> Option<usize> {
        match self {
            Self::Numeric(v) => {
                let x: f64 = cell.parse().ok()?;
                v.iter().position(|&c| c == x)
            }
            Self::Labels(v) => v.iter().position(|c| c == cell),
        }
    }
}

impl fmt::Display for Categories {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.labels().join(", "))
    }
}

/// A rating that is not on the scale.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rating `{value}` (row {row}, rater {rater}) is not one of the categories {categories}")]
pub struct UnknownCategory {
    /// 0-based input row.
    pub row: usize,
    /// 0-based rater (column among the raters).
    pub rater: usize,
    /// The cell text.
    pub value: String,
    /// The scale, for the message.
    pub categories: String,
}

/// Ratings of `n` subjects by `r` raters as category indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratings {
    categories: Categories,
    raters: usize,
    rows: Vec<Vec<Option<usize>>>,
}

impl Ratings {
    /// Parses text cells (`rows[subject][rater]`, "" = missing).
    pub fn parse<S: AsRef<str>>(
        rows: &[Vec<S>],
        categories: Option<&[String]>,
    ) -> Result<Self, UnknownCategory> {
        let categories = scale(rows, categories);
        let raters = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut parsed = Vec::with_capacity(rows.len());
        for (row, cells) in rows.iter().enumerate() {
            let indices = parse_row(&categories, row, cells)?;
            if indices.iter().any(Option::is_some) {
                parsed.push(indices);
            }
        }
        Ok(Self {
            categories,
            raters,
            rows: parsed,
        })
    }

    /// The scale.
    pub fn categories(&self) -> &Categories {
        &self.categories
    }

    /// The number of raters (columns).
    pub fn raters(&self) -> usize {
        self.raters
    }

    /// The number of subjects with at least one rating.
    pub fn subjects(&self) -> usize {
        self.rows.len()
    }

    /// The subjects' rows of category indices.
    pub fn rows(&self) -> &[Vec<Option<usize>>] {
        &self.rows
    }

    /// `r_ik`: how many raters put subject i in category k.
    pub fn counts(&self) -> Vec<Vec<f64>> {
        let q = self.categories.len();
        let count_row = |row: &Vec<Option<usize>>| {
            let mut counts = vec![0.0; q];
            row.iter().flatten().for_each(|&k| counts[k] += 1.0);
            counts
        };
        self.rows.iter().map(count_row).collect()
    }
}

fn parse_row<S: AsRef<str>>(
    categories: &Categories,
    row: usize,
    cells: &[S],
) -> Result<Vec<Option<usize>>, UnknownCategory> {
    let parse_cell = |(rater, cell): (usize, &S)| {
        let cell = cell.as_ref().trim();
        if cell.is_empty() {
            return Ok(None);
        }
        let unknown = || UnknownCategory {
            row,
            rater,
            value: cell.to_owned(),
            categories: categories.to_string(),
        };
        categories.index_of(cell).map(Some).ok_or_else(unknown)
    };
    cells.iter().enumerate().map(parse_cell).collect()
}

/// The scale: explicit or observed, numeric when everything is a number.
fn scale<S: AsRef<str>>(rows: &[Vec<S>], explicit: Option<&[String]>) -> Categories {
    let observed: Vec<&str> = rows
        .iter()
        .flatten()
        .map(|c| c.as_ref().trim())
        .filter(|c| !c.is_empty())
        .collect();
    let given: Vec<&str> = explicit.unwrap_or_default().iter().map(|c| c.trim()).collect();
    let is_num = |c: &&str| c.parse::<f64>().is_ok();
    if observed.iter().chain(&given).all(is_num) {
        let source = if explicit.is_some() { &given } else { &observed };
        let mut values: Vec<f64> = source
            .iter()
            .map(|c| c.parse().expect("checked numeric"))
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        return Categories::Numeric(values);
    }
    let mut labels: Vec<String> = Vec::new();
    if explicit.is_some() {
        for c in given {
            if !labels.iter().any(|l| l == c) {
                labels.push(c.to_owned());
            }
        }
    } else {
        labels = observed.iter().map(|c| (*c).to_owned()).collect();
        labels.sort();
        labels.dedup();
    }
    Categories::Labels(labels)
}
