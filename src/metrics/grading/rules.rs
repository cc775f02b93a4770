//! Which rules decide that a submission is valid: ml2b's own, versioned, and on an MLE-bench
//! competition the competition's `grade.py`.
//!
//! [`Rules`] is the version of the rules. A grade event records it through its schema
//! version (`events::grade`): events of schema 2 and 3 were graded under [`Rules::V1`], later
//! ones under [`Rules::V2`], and `GradeStage::rederive` re-derives each with its own. V2 follows
//! the reference implementation where V1 did not:
//!
//! * a CSV column is typed as pandas' `read_csv` types it: text whose every cell, trimmed of
//!   whitespace, is a number is that number (` 311` is the id 311, as in pandas);
//! * labels of two kinds (numbers in one file, text in the other, e.g. a boolean answer and
//!   a prediction column holding one `high`) are refused, as scikit-learn refuses them ("Mix
//!   of label input types"), instead of being compared as text;
//! * `log_loss` over several class columns refuses a row whose probabilities do not sum to 1
//!   where scikit-learn 1.9.1 warns that they do not (|Σ − 1| > 1e-8 + √ε, ε the epsilon of
//!   the columns' float type): such a row is not a probability distribution, and every class
//!   at 1 would score ε (scikit-learn warns and scores it; ml2b refuses, as it refuses every
//!   input on which the reference gives no meaningful number);
//! * `map_ml2b` is ML2B's `apk` as written: `actual in predicted` on the two cells' text, so
//!   a true label found inside the prediction string at character `i` scores 1/(i + 1);
//! * on an MLE-bench competition graded natively, its `grade.py`'s checks
//!   ([`MleBenchChecks`], below).
//!
//! MLE-bench's checks, per competition, as its `grade.py` (revision 783b15a) makes them on
//! a submission read by `pd.read_csv` (any exception is an invalid submission there):
//!
//! * the target columns by name, never "the only other column"; extra columns are allowed
//!   except where `grade.py` compares the column set ([`MleBenchChecks::exact_columns`]:
//!   plant-pathology-2020-fgvc7, whale-categorization-playground, leaf-classification,
//!   google-quest-challenge, spooky-author-identification);
//! * the value ranges it checks ([`Values`]): scores in [0, 1] for every `auc-roc` and
//!   `log-loss` competition, Pawpularity in [1, 100];
//! * row sums of one-hot log loss ([`RowSums`]): `np.isclose(Σ, 1, atol=1e-6)` (dog-breed,
//!   leaf, spooky), `Σ.round(6) == 1` (lmsys);
//! * how labels are compared ([`Labels`]): scikit-learn's (default), `str()` of both sides
//!   (text-normalization: an empty cell is the label `nan`), an empty cell as a wrong label
//!   (paddy, plant-seedlings), `int()` of both sides (herbarium, iwildcam-2019), `int()` of the first predicted
//!   token (inaturalist-2019);
//! * how label lists split ([`Tokens`]): on single spaces, an empty cell being `nan`
//!   (hotel-id, whale-categorization), else on runs of whitespace.
//!
//! Departures ([`Departure`]): where `grade.py` is demonstrably wrong, ml2b keeps its own
//! verdict and says so (`Graded::departure`, shown by `ml2b grade-sample`):
//!
//! * nomad2018-predict-transparent-conductors pairs the rows by position, never reading the
//!   ids: a shuffled or mislabelled file scores (wrongly) there; ml2b aligns by id;
//! * new-york-city-taxi-fare-prediction and google-quest-challenge sort both files by id and
//!   pair the rows without comparing the ids: a file with wrong ids scores there;
//! * us-patent-phrase-to-phrase-matching and google-quest-challenge report scipy's NaN (a
//!   constant or empty prediction) as a valid score of NaN; ml2b refuses it;
//! * google-quest-challenge lets scipy rank a score column holding text (as strings) and
//!   scores it; ml2b refuses a cell that is no number;
//! * rsna-breast-cancer-detection's pF1 turns an empty prediction into NaN and scores the
//!   whole submission 0; ml2b refuses the empty cell;
//! * herbarium-2020/2021/2022 and iwildcam-2019 cast labels with `int()`, which truncates a
//!   non-integer prediction (3.7 is class 3 there); ml2b refuses it.

/// The version of the validation rules (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Rules {
    /// The rules of grade events of schema 2 and 3.
    V1,
    /// The reference's rules, since grade schema 4.
    #[default]
    V2,
}

impl Rules {
    /// The rules a grade event of schema `version` was written under.
    pub fn of_grade_schema(version: u32) -> Self {
        if version <= 3 { Self::V1 } else { Self::V2 }
    }
}

/// Which prediction values `grade.py` refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Any number (the metric's own checks only).
    Any,
    /// Scores outside [0, 1].
    Probability,
    /// Pawpularity outside [1, 100].
    Pawpularity,
}

impl Values {
    /// The allowed closed range, if any.
    pub fn range(self) -> Option<(f64, f64)> {
        match self {
            Self::Any => None,
            Self::Probability => Some((0.0, 1.0)),
            Self::Pawpularity => Some((1.0, 100.0)),
        }
    }
}

/// How a row of class probabilities must sum to 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowSums {
    /// scikit-learn's test (it warns beyond it): |Σ − 1| ≤ 1e-8 + √ε, ε the machine epsilon
    /// of the probabilities' dtype (float32 columns: √ε ≈ 3.5e-4).
    Sklearn,
    /// `np.isclose(Σ, 1, atol=1e-6)`: |Σ − 1| ≤ 1e-6 + 1e-5.
    IsClose,
    /// `Σ.round(6) == 1`.
    Round6,
}

impl RowSums {
    /// Whether `sum` passes, for probabilities of machine epsilon `eps`.
    pub fn accepts(self, sum: f64, eps: f64) -> bool {
        match self {
            Self::Sklearn => (sum - 1.0).abs() <= 1e-8 + eps.sqrt(),
            Self::IsClose => (sum - 1.0).abs() <= 1e-6 + 1e-5,
            Self::Round6 => (sum * 1e6).round_ties_even() / 1e6 == 1.0,
        }
    }
}

/// How `grade.py` compares labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Labels {
    /// scikit-learn's: numbers with numbers, text with text, a mix refused.
    Sklearn,
    /// `astype(str)` of both sides: everything is text, an empty cell the label `nan`.
    Text,
    /// An empty prediction is a wrong label: paddy's `fillna("")`, and plant-seedlings'
    /// `tolist()`, whose NaN scikit-learn takes for one more label.
    EmptyIsLabel,
    /// `int()` of both sides: a text label is refused.
    Int,
    /// `int()` of the answer and of the first space-separated predicted token.
    FirstIntToken,
}

/// How label lists are split into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokens {
    /// `str.split()`: runs of whitespace, an empty cell the empty list.
    Whitespace,
    /// `astype(str).str.split(" ")`: every single space, so `a  b` holds an empty token;
    /// an empty cell is `nan` (pandas 2, which MLE-bench's results were graded with; pandas 3
    /// keeps it missing and `grade.py` fails).
    SingleSpace,
}

/// Where MLE-bench's `grade.py` is demonstrably wrong and ml2b keeps its own verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// Rows paired by position, the ids never read.
    RowsByPosition,
    /// Both files sorted by id and paired without comparing the ids.
    UncheckedIds,
    /// scipy's NaN (constant or empty predictions) reported as a valid score.
    NanScore,
    /// An empty prediction makes pF1 NaN, reported as 0.
    EmptyScoresZero,
    /// `int()` truncates a non-integer label.
    TruncatedLabels,
    /// scipy ranks a score column holding text as strings.
    RankedText,
}

impl Departure {
    /// What `grade.py` does instead, for a report.
    pub fn describe(self) -> &'static str {
        match self {
            Self::RowsByPosition => {
                "MLE-bench's grade.py pairs the rows by position without reading the ids, so it \
                 scores this file against other rows' answers; ml2b aligns the rows by id"
            }
            Self::UncheckedIds => {
                "MLE-bench's grade.py sorts both files by id and pairs the rows without \
                 comparing the ids, so it scores this file; ml2b refuses ids that are not the answers'"
            }
            Self::NanScore => {
                "MLE-bench's grade.py reports scipy's NaN for these predictions as a valid \
                 score of NaN; ml2b refuses them"
            }
            Self::EmptyScoresZero => {
                "MLE-bench's grade.py turns an empty prediction into NaN and scores the whole \
                 submission 0; ml2b refuses the empty cell"
            }
            Self::TruncatedLabels => {
                "MLE-bench's grade.py casts labels with int(), which truncates a non-integer \
                 prediction (3.7 is class 3 there) and scores the file; ml2b refuses it"
            }
            Self::RankedText => {
                "MLE-bench's grade.py lets scipy rank a column holding text, comparing every \
                 cell as a string, and scores the file; ml2b refuses a cell that is no number"
            }
        }
    }
}

/// What one MLE-bench competition's `grade.py` checks beyond ml2b's own checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MleBenchChecks {
    pub competition: &'static str,
    /// The submission's columns must be exactly the id and the targets.
    pub exact_columns: bool,
    pub values: Values,
    /// How one-hot probability rows must sum (`None`: scikit-learn's test).
    pub row_sums: Option<RowSums>,
    pub labels: Labels,
    pub tokens: Tokens,
    pub departures: &'static [Departure],
}

const fn checks(competition: &'static str) -> MleBenchChecks {
    MleBenchChecks {
        competition,
        exact_columns: false,
        values: Values::Any,
        row_sums: None,
        labels: Labels::Sklearn,
        tokens: Tokens::Whitespace,
        departures: &[],
    }
}

impl MleBenchChecks {
    const fn exact(mut self) -> Self {
        self.exact_columns = true;
        self
    }

    const fn values(mut self, values: Values) -> Self {
        self.values = values;
        self
    }

    const fn sums(mut self, sums: RowSums) -> Self {
        self.row_sums = Some(sums);
        self.values = Values::Probability;
        self
    }

    const fn labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }

    const fn tokens(mut self, tokens: Tokens) -> Self {
        self.tokens = tokens;
        self
    }

    const fn departs(mut self, departures: &'static [Departure]) -> Self {
        self.departures = departures;
        self
    }

    /// Whether ml2b departs from `grade.py` here in `departure`'s way.
    pub fn departs_by(&self, departure: Departure) -> bool {
        self.departures.contains(&departure)
    }
}

/// The competitions whose `grade.py` checks differ from the defaults of [`checks`]
/// (target columns by name, extra columns allowed, any values, scikit-learn's labels).
const MLE_BENCH_CHECKS: &[MleBenchChecks] = &[
    checks("aerial-cactus-identification").values(Values::Probability),
    checks("detecting-insults-in-social-commentary").values(Values::Probability),
    checks("histopathologic-cancer-detection").values(Values::Probability),
    checks("invasive-species-monitoring").values(Values::Probability),
    checks("mlsp-2013-birds").values(Values::Probability),
    checks("random-acts-of-pizza").values(Values::Probability),
    checks("ranzcr-clip-catheter-line-classification").values(Values::Probability),
    checks("rsna-miccai-brain-tumor-radiogenomic-classification").values(Values::Probability),
    checks("seti-breakthrough-listen").values(Values::Probability),
    checks("siim-isic-melanoma-classification").values(Values::Probability),
    checks("tabular-playground-series-may-2022").values(Values::Probability),
    checks("the-icml-2013-whale-challenge-right-whale-redux").values(Values::Probability),
    checks("dogs-vs-cats-redux-kernels-edition").values(Values::Probability),
    checks("statoil-iceberg-classifier-challenge").values(Values::Probability),
    checks("plant-pathology-2020-fgvc7").exact(),
    checks("dog-breed-identification").sums(RowSums::IsClose),
    checks("leaf-classification").sums(RowSums::IsClose).exact(),
    checks("spooky-author-identification")
        .sums(RowSums::IsClose)
        .exact(),
    checks("lmsys-chatbot-arena").sums(RowSums::Round6),
    checks("paddy-disease-classification").labels(Labels::EmptyIsLabel),
    checks("plant-seedlings-classification").labels(Labels::EmptyIsLabel),
    checks("text-normalization-challenge-english-language").labels(Labels::Text),
    checks("text-normalization-challenge-russian-language").labels(Labels::Text),
    checks("inaturalist-2019-fgvc6").labels(Labels::FirstIntToken),
    checks("herbarium-2020-fgvc7")
        .labels(Labels::Int)
        .departs(&[Departure::TruncatedLabels]),
    checks("herbarium-2021-fgvc8")
        .labels(Labels::Int)
        .departs(&[Departure::TruncatedLabels]),
    checks("herbarium-2022-fgvc9")
        .labels(Labels::Int)
        .departs(&[Departure::TruncatedLabels]),
    checks("iwildcam-2019-fgvc6")
        .labels(Labels::Int)
        .departs(&[Departure::TruncatedLabels]),
    checks("hotel-id-2021-fgvc8").tokens(Tokens::SingleSpace),
    checks("whale-categorization-playground")
        .tokens(Tokens::SingleSpace)
        .exact(),
    checks("petfinder-pawpularity-score").values(Values::Pawpularity),
    checks("new-york-city-taxi-fare-prediction").departs(&[Departure::UncheckedIds]),
    checks("nomad2018-predict-transparent-conductors").departs(&[Departure::RowsByPosition]),
    checks("us-patent-phrase-to-phrase-matching").departs(&[Departure::NanScore]),
    checks("google-quest-challenge").exact().departs(&[
        Departure::UncheckedIds,
        Departure::NanScore,
        Departure::RankedText,
    ]),
    checks("rsna-breast-cancer-detection").departs(&[Departure::EmptyScoresZero]),
];

/// The checks of `grade.py` for the MLE-bench competition `id`, graded natively.
pub fn mle_bench_checks(id: &str) -> MleBenchChecks {
    let found = MLE_BENCH_CHECKS.iter().find(|c| c.competition == id);
    found.copied().unwrap_or(MleBenchChecks {
        competition: "",
        ..checks("")
    })
}

/// Every competition with checks of its own.
pub fn listed_mle_bench_checks() -> &'static [MleBenchChecks] {
    MLE_BENCH_CHECKS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_sum_tests_are_the_references() {
        let eps = f64::EPSILON;
        assert!(RowSums::Sklearn.accepts(1.0 + 2e-8, eps));
        assert!(!RowSums::Sklearn.accepts(1.0 + 3e-8, eps));
        assert!(!RowSums::Sklearn.accepts(0.999999, eps));
        assert!(RowSums::Sklearn.accepts(0.9999, f64::from(f32::EPSILON)));
        assert!(RowSums::IsClose.accepts(0.999999, eps));
        assert!(RowSums::IsClose.accepts(1.0 + 1.09e-5, eps));
        assert!(!RowSums::IsClose.accepts(1.0 + 1.2e-5, eps));
        assert!(RowSums::Round6.accepts(1.0000004, eps));
        assert!(!RowSums::Round6.accepts(1.0000006, eps));
        assert!(!RowSums::IsClose.accepts(3.0, eps));
    }

    #[test]
    fn rules_follow_the_grade_schema() {
        assert_eq!(Rules::of_grade_schema(2), Rules::V1);
        assert_eq!(Rules::of_grade_schema(3), Rules::V1);
        assert_eq!(Rules::of_grade_schema(4), Rules::V2);
    }

    #[test]
    fn every_listed_competition_is_native_and_listed_once() {
        use super::super::mle_bench::{MLE_BENCH_GRADERS, MleGrader, mle_bench_competition_grader};
        let mut seen = std::collections::HashSet::new();
        for c in MLE_BENCH_CHECKS {
            assert!(seen.insert(c.competition), "{} twice", c.competition);
            let name = MLE_BENCH_GRADERS
                .iter()
                .find(|g| g.competitions.contains(&c.competition))
                .unwrap_or_else(|| panic!("{} is no MLE-bench competition", c.competition))
                .name;
            assert!(
                matches!(
                    mle_bench_competition_grader(c.competition, name),
                    MleGrader::Native { .. }
                ),
                "{} is not graded natively",
                c.competition
            );
        }
    }
}
