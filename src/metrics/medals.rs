//! MLE-bench's medals: where a score ranks on a competition's Kaggle leaderboard.
//!
//! The rule is MLE-bench's `Grader.rank_score` and `Grader.is_lower_better`
//! (`mlebench/grade_helpers.py`), reproduced exactly:
//!
//! * **Direction** from the leaderboard, not the metric: lower is better exactly when the
//!   first row's score is below the last row's (a constant leaderboard is higher-is-better).
//! * **Thresholds**: the score at a 1-based position of the leaderboard (in file order, which
//!   Kaggle writes best first), the position depending on the number of teams `n`
//!   (`int(·)` truncates, `max(1, ·)` where MLE-bench has it):
//!   ```text
//!   n          gold                      silver              bronze
//!   < 100      max(1, int(0.1·n))        max(1, int(0.2·n))  max(1, int(0.4·n))
//!   100–249    10                        max(1, int(0.2·n))  max(1, int(0.4·n))
//!   250–999    10 + int(0.002·n)         50                  100
//!   ≥ 1000     10 + int(0.002·n)         max(1, int(0.05·n)) max(1, int(0.1·n))
//!   ```
//!   The fractions are multiplied as IEEE doubles (`n as f64 * 0.1`), as Python does. The
//!   median threshold is the leaderboard's median (pandas' `Series.median`: the middle score,
//!   or the mean of the two middle ones).
//! * **Medals** are exclusive: gold when the score is at least as good as the gold threshold
//!   (`≤` when lower is better, else `≥`), else silver likewise, else bronze, else none;
//!   above-median is strict (`<` or `>`). A missing score (no submission, an invalid one)
//!   has no medal and is not above the median; the thresholds are reported all the same.
//! * **Rounding**: MLE-bench's grader rounds every score to 5 decimals (Python's
//!   `round(score, 5)`: the exact binary value rounded half-to-even at the fifth decimal, read
//!   back as the nearest double) before it ranks it; [`Leaderboard::rank`] does too
//!   ([`round5`]).
//!
//! Reading a leaderboard ([`Leaderboard::read`]): a CSV file whose `score` column (by name;
//! other columns are ignored) holds a number in every row, read as pandas 2's `read_csv`
//! reads it (its default float converter, `precise_xstrtod`, which is the correctly rounded
//! double for scores of up to 15 significant digits, and a column of integers as integers).
//! Unlike MLE-bench, which would carry NaN through, a row without a finite score (an empty
//! cell, `NaN`, text) is an error naming the file and the line, and so is a leaderboard with
//! no rows.
//!
//! Checked against `tests/reference/medal_stats.py`, which applies MLE-bench's rule with
//! pandas to generated leaderboards of every band, both directions and ties, and writes
//! `tests/fixtures/medal_stats.json`: every value here equals it exactly.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

/// A medal, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Medal {
    Gold,
    Silver,
    Bronze,
    /// No medal (written `none`).
    #[serde(rename = "none")]
    NoMedal,
}

impl Medal {
    /// `gold`, `silver`, `bronze` or `none`, as grade events and `ml2b grade-sample` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gold => "gold",
            Self::Silver => "silver",
            Self::Bronze => "bronze",
            Self::NoMedal => "none",
        }
    }

    /// Any of the three medals.
    pub fn is_medal(self) -> bool {
        self != Self::NoMedal
    }
}

impl fmt::Display for Medal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The four thresholds of a leaderboard.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Thresholds {
    pub gold: f64,
    pub silver: f64,
    pub bronze: f64,
    pub median: f64,
}

/// Where one score ranks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rank {
    pub medal: Medal,
    pub above_median: bool,
    pub thresholds: Thresholds,
    pub lower_is_better: bool,
    /// The score as ranked: rounded to 5 decimals ([`round5`]); none for a missing score.
    pub score: Option<f64>,
}

/// A leaderboard's scores, in file order (best first).
#[derive(Clone, Debug, PartialEq)]
pub struct Leaderboard {
    scores: Vec<f64>,
}

/// A leaderboard file that cannot be ranked against.
#[derive(Debug, thiserror::Error)]
pub enum LeaderboardError {
    #[error("cannot read leaderboard {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("leaderboard {} has no `score` column (its header: {header})", path.display())]
    NoScoreColumn { path: PathBuf, header: String },
    #[error("leaderboard {}, line {line}: the score {value:?} is not a finite number", path.display())]
    BadScore { path: PathBuf, line: u64, value: String },
    #[error("leaderboard {} has no rows: there is nothing to rank against", path.display())]
    Empty { path: PathBuf },
}

impl Leaderboard {
    /// A leaderboard of these scores (file order); `None` when it is empty or a score is
    /// not finite.
    pub fn from_scores(scores: Vec<f64>) -> Option<Self> {
        (!scores.is_empty() && scores.iter().all(|s| s.is_finite())).then_some(Self { scores })
    }

    /// Reads a leaderboard CSV by its `score` column (see the module docs).
    pub fn read(path: &Path) -> Result<Self, LeaderboardError> {
        let read = |source| LeaderboardError::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_path(path)
            .map_err(read)?;
        let header = reader.headers().map_err(read)?.clone();
        let Some(column) = header
            .iter()
            .position(|h| h.trim_start_matches('\u{feff}') == "score")
        else {
            return Err(LeaderboardError::NoScoreColumn {
                path: path.to_path_buf(),
                header: header.iter().collect::<Vec<_>>().join(","),
            });
        };
        let mut cells = Vec::new();
        for record in reader.records() {
            let record = record.map_err(read)?;
            let line = record.position().map_or(0, |p| p.line());
            cells.push((line, record.get(column).unwrap_or("").to_string()));
        }
        if cells.is_empty() {
            return Err(LeaderboardError::Empty {
                path: path.to_path_buf(),
            });
        }
        // pandas reads a column of integers as int64 (then exact as floats), any other
        // column of numbers with its float converter.
        let integers: Option<Vec<f64>> = cells.iter().map(|(_, c)| pandas_int(c)).collect();
        let scores = match integers {
            Some(scores) => scores,
            None => cells
                .iter()
                .map(|(line, cell)| {
                    pandas_float(cell)
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| LeaderboardError::BadScore {
                            path: path.to_path_buf(),
                            line: *line,
                            value: cell.clone(),
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Self { scores })
    }

    /// The scores, in file order.
    pub fn scores(&self) -> &[f64] {
        &self.scores
    }

    /// The number of teams.
    pub fn teams(&self) -> usize {
        self.scores.len()
    }

    /// Whether a lower score is better: the first score is below the last.
    pub fn lower_is_better(&self) -> bool {
        self.scores[0] < self.scores[self.scores.len() - 1]
    }

    /// The score at a 1-based position.
    fn at(&self, position: usize) -> f64 {
        self.scores[position - 1]
    }

    /// The gold, silver and bronze positions (1-based) for this many teams.
    pub fn positions(teams: usize) -> [usize; 3] {
        let part = |fraction: f64| ((teams as f64 * fraction) as usize).max(1);
        match teams {
            0 => unreachable!("a leaderboard has rows"),
            1..100 => [part(0.1), part(0.2), part(0.4)],
            100..250 => [10, part(0.2), part(0.4)],
            250..1000 => [10 + (teams as f64 * 0.002) as usize, 50, 100],
            _ => [10 + (teams as f64 * 0.002) as usize, part(0.05), part(0.1)],
        }
    }

    /// The thresholds.
    pub fn thresholds(&self) -> Thresholds {
        let [gold, silver, bronze] = Self::positions(self.teams()).map(|p| self.at(p));
        Thresholds {
            gold,
            silver,
            bronze,
            median: median(&self.scores),
        }
    }

    /// Ranks a score as ml2b computed it (rounded first, as MLE-bench's grader rounds);
    /// `None`: no valid submission.
    pub fn rank(&self, score: Option<f64>) -> Rank {
        self.rank_rounded(score.map(round5))
    }

    /// Ranks a score already rounded as MLE-bench reports it (`rank_score`).
    pub fn rank_rounded(&self, score: Option<f64>) -> Rank {
        let thresholds = self.thresholds();
        let lower_is_better = self.lower_is_better();
        let Some(s) = score else {
            return Rank {
                medal: Medal::NoMedal,
                above_median: false,
                thresholds,
                lower_is_better,
                score,
            };
        };
        let reaches = |t: f64| if lower_is_better { s <= t } else { s >= t };
        let medal = if reaches(thresholds.gold) {
            Medal::Gold
        } else if reaches(thresholds.silver) {
            Medal::Silver
        } else if reaches(thresholds.bronze) {
            Medal::Bronze
        } else {
            Medal::NoMedal
        };
        let above_median = if lower_is_better {
            s < thresholds.median
        } else {
            s > thresholds.median
        };
        Rank {
            medal,
            above_median,
            thresholds,
            lower_is_better,
            score,
        }
    }
}

/// pandas' median of a column without NaN: the middle value, or the mean of the two middle
/// values (`(a + b) / 2` in doubles, as numpy's mean of two adds then divides).
fn median(scores: &[f64]) -> f64 {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Python's `round(x, 5)` for a float: the exact binary value of `x` rounded to 5 decimals,
/// half to even, then read back as the nearest double (CPython's `double_round`, through
/// `_Py_dg_dtoa` mode 3 and `_Py_dg_strtod`). Non-finite values are returned as they are.
pub fn round5(x: f64) -> f64 {
    const DIGITS: usize = 5;
    if !x.is_finite() {
        return x;
    }
    // A double's exact decimal expansion has at most 1074 digits after the point.
    let exact = format!("{:.1080}", x.abs());
    let (int, frac) = exact.split_once('.').expect("a fixed-point number has a point");
    let (kept, rest) = frac.split_at(DIGITS);
    let mut digits: Vec<u8> = int.bytes().chain(kept.bytes()).collect();
    let rest = rest.as_bytes();
    let up = match rest[0] {
        b'6'..=b'9' => true,
        b'5' => rest[1..].iter().any(|&d| d != b'0') || (digits[digits.len() - 1] - b'0') % 2 == 1,
        _ => false,
    };
    if up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let (int, kept) = digits.split_at(digits.len() - DIGITS);
    let text = format!(
        "{}{}.{}",
        if x.is_sign_negative() { "-" } else { "" },
        String::from_utf8_lossy(int),
        String::from_utf8_lossy(kept)
    );
    text.parse().expect("digits parse as a double")
}

/// A cell pandas reads as an int64: optional spaces and sign, digits, optional spaces.
fn pandas_int(cell: &str) -> Option<f64> {
    let t = cell.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.strip_prefix('+')
        .unwrap_or(t)
        .parse::<i64>()
        .ok()
        .map(|v| v as f64)
}

/// pandas 2's default float converter (`precise_xstrtod` in its `tokenizer.c`), for a cell
/// that must be a number and nothing else: up to 17 significant digits (leading zeros count)
/// accumulated as `number * 10 + digit` in doubles, then one multiplication or division by
/// the double nearest `10^exponent`. `None`: not a number (or out of range).
fn pandas_float(cell: &str) -> Option<f64> {
    const MAX_DIGITS: i32 = 17;
    let b = cell.trim_matches(|c: char| c.is_ascii_whitespace()).as_bytes();
    let mut i = 0;
    let negative = match b.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut number = 0.0_f64;
    let mut exponent: i64 = 0;
    let mut num_digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        if num_digits < MAX_DIGITS {
            number = number * 10.0 + f64::from(b[i] - b'0');
            num_digits += 1;
        } else {
            exponent += 1;
        }
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let mut decimals = 0;
        while num_digits < MAX_DIGITS && i < b.len() && b[i].is_ascii_digit() {
            number = number * 10.0 + f64::from(b[i] - b'0');
            num_digits += 1;
            decimals += 1;
            i += 1;
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        exponent -= decimals;
    }
    if num_digits == 0 {
        return None;
    }
    if negative {
        number = -number;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        let negative = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let (mut n, mut digits) = (0_i64, 0);
        while digits < MAX_DIGITS && j < b.len() && b[j].is_ascii_digit() {
            n = n * 10 + i64::from(b[j] - b'0');
            digits += 1;
            j += 1;
        }
        if digits > 0 {
            exponent += if negative { -n } else { n };
            i = j;
        }
    }
    if i != b.len() {
        return None;
    }
    let number = if exponent > 308 {
        return None;
    } else if exponent > 0 {
        number * power_of_ten(exponent as usize)
    } else if exponent < -308 {
        if exponent < -616 {
            0.0
        } else {
            number / power_of_ten((-308 - exponent) as usize) / power_of_ten(308)
        }
    } else {
        number / power_of_ten((-exponent) as usize)
    };
    number.is_finite().then_some(number)
}

/// The double nearest `10^k` (what the C literal `1e<k>` is), for `k` in 0..=308.
fn power_of_ten(k: usize) -> f64 {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=308)
            .map(|k| format!("1e{k}").parse().expect("a power of ten"))
            .collect()
    })[k]
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/medal_stats.json");

    fn fixture() -> Value {
        serde_json::from_str(FIXTURE).expect("the fixture is JSON")
    }

    fn floats(v: &Value) -> Vec<f64> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|x| x.as_f64().expect("a number"))
            .collect()
    }

    fn check(name: &str, board: &Leaderboard, case: &Value) {
        let t = board.thresholds();
        let want = &case["thresholds"];
        let got = [t.gold, t.silver, t.bronze, t.median];
        for (i, key) in ["gold", "silver", "bronze", "median"].iter().enumerate() {
            assert_eq!(got[i], want[key].as_f64().unwrap(), "{name}: {key} threshold");
        }
        assert_eq!(
            board.lower_is_better(),
            case["lower_is_better"].as_bool().unwrap(),
            "{name}"
        );
        for probe in case["probes"].as_array().unwrap() {
            let p = probe.as_array().unwrap();
            let score = p[0].as_f64();
            let rank = board.rank(score);
            assert_eq!(rank.score, p[1].as_f64(), "{name}: {score:?} rounded");
            assert_eq!(rank.medal.as_str(), p[2].as_str().unwrap(), "{name}: {score:?}");
            assert_eq!(rank.above_median, p[3].as_bool().unwrap(), "{name}: {score:?}");
        }
    }

    #[test]
    fn every_leaderboard_ranks_every_probe_as_mle_bench_does() {
        let fixture = fixture();
        let cases = fixture["leaderboards"].as_array().unwrap();
        let mut bands = std::collections::BTreeSet::new();
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let board = Leaderboard::from_scores(floats(&case["scores"])).unwrap();
            bands.insert(case["band"].as_str().unwrap().to_string());
            check(name, &board, case);
        }
        assert_eq!(bands.len(), 4, "every team-count band: {bands:?}");
        assert!(cases.len() >= 40, "{} leaderboards", cases.len());
    }

    #[test]
    fn leaderboard_files_read_as_pandas_reads_them() {
        let fixture = fixture();
        let dir = tempfile::tempdir().unwrap();
        for case in fixture["files"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let path = dir.path().join(format!("{name}.csv"));
            std::fs::write(&path, case["csv"].as_str().unwrap()).unwrap();
            let board = Leaderboard::read(&path).unwrap();
            assert_eq!(board.scores(), floats(&case["scores"]), "{name}");
            check(name, &board, case);
        }
    }

    #[test]
    fn round5_is_pythons_round() {
        let fixture = fixture();
        for pair in fixture["round"].as_array().unwrap() {
            let (x, want) = (pair[0].as_f64().unwrap(), pair[1].as_f64().unwrap());
            let got = round5(x);
            assert!(
                got == want && got.is_sign_negative() == want.is_sign_negative(),
                "round({x:?}, 5) = {want:?}, not {got:?}"
            );
        }
        assert_eq!(round5(-0.000001).to_bits(), (-0.0_f64).to_bits());
    }

    #[test]
    fn bad_leaderboards_name_the_file_and_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("teamName,score\na,0.9\nb,\nc,0.7\n", "line 3: the score \"\""),
            ("teamName,score\na,0.9\nb,0.8x\n", "line 3: the score \"0.8x\""),
            ("teamName,score\na,nan\n", "line 2"),
            (
                "teamName,points\na,0.9\n",
                "no `score` column (its header: teamName,points)",
            ),
            ("teamName,score\n", "has no rows"),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let path = dir.path().join(format!("lb{i}.csv"));
            std::fs::write(&path, text).unwrap();
            let err = Leaderboard::read(&path).unwrap_err().to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(want), "{err} lacks {want}");
        }
    }

    #[test]
    fn positions_follow_the_bands() {
        assert_eq!(Leaderboard::positions(1), [1, 1, 1]);
        assert_eq!(Leaderboard::positions(99), [9, 19, 39]);
        assert_eq!(Leaderboard::positions(100), [10, 20, 40]);
        assert_eq!(Leaderboard::positions(249), [10, 49, 99]);
        assert_eq!(Leaderboard::positions(250), [10, 50, 100]);
        assert_eq!(Leaderboard::positions(999), [11, 50, 100]);
        assert_eq!(Leaderboard::positions(1000), [12, 50, 100]);
        assert_eq!(Leaderboard::positions(2500), [15, 125, 250]);
    }
}
