//! How ml2b grades each of MLE-bench's graders: natively with one of its exact metrics, or
//! by running the competition's own `grade.py` as a grading program.
//!
//! MLE-bench names a competition's grader in its `config.yaml` (`grader.name`) and computes
//! it in `grade.py` (`grade(submission, answers) -> float`). [`MLE_BENCH_GRADERS`] lists
//! every name used by the 82 competitions of MLE-bench's repository (45 names) with the
//! competitions that use it and how ml2b grades it:
//!
//! * [`MleGrader::Native`]: ml2b's metric computes exactly what the `grade.py` of **every**
//!   competition using the name computes on a well-formed submission (same averaging, same
//!   clipping, same k, same label handling), checked to 1e-9 against scikit-learn/scipy on
//!   files in MLE-bench's layouts (`tests/reference/mle_bench_grades.py`). The note says
//!   which columns are the targets where that is not obvious. What `grade.py` refuses, ml2b
//!   refuses: its checks of a malformed submission are the competition's
//!   `rules::MleBenchChecks`, checked against the real `grade.py` on malformed variants
//!   (`tests/reference/mle_bench_validity.py`), and where `grade.py` is demonstrably wrong
//!   the departure is documented there and reported with the grade.
//! * [`MleGrader::Program`]: no exact native metric; ml2b runs the checkout's `grade.py`.
//!
//! A name is keyed as `config.yaml` spells it. Two names mean different computations in
//! different competitions (`multi-class-log-loss` is also stanford-covid-vaccine's MCRMSE,
//! `micro-f1-score` also tensorflow2-question-answering's span F1), so by name they are a
//! program; [`mle_bench_competition_grader`] resolves them per competition
//! ([`MLE_BENCH_COMPETITION_GRADERS`]), and gives the binary `auc-roc` competitions plain
//! `roc_auc` (the name's `roc_auc_columns` also covers ranzcr's nine class columns). An
//! importer that knows the competition should call it.
//!
//! What ml2b leaves to its caller, as MLE-bench's `Grader` does it (`grade_helpers.py`):
//! the score is rounded to 5 decimals (`round(score, 5)`) before it is compared with the
//! leaderboard, and any exception of `grade.py` (not only `InvalidSubmissionError`) makes the
//! submission ungraded (`None`). The metrics here never round; the grade stage decides.
//!
//! Layouts the importer relies on: answers are read as `prepare.py` writes them, with the
//! targets named (the non-id columns of `sample_submission.csv`), so feature columns in the
//! answers are not read. One-hot answers (multi-class log loss: one 0/1 column per class)
//! stay one-hot: `log_loss` with several targets reads them as class indicators, every
//! column a class even when no answer row holds it (leaf-classification's answers miss
//! classes). Converting them to a label column would drop the absent classes.

use super::registry::{Average, KappaForm, MapForm, Metric};

/// How ml2b grades an MLE-bench grader.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MleGrader {
    /// ml2b's `metric` computes what `grade.py` computes; `note`: the targets, where not
    /// obvious (what counts as a malformed submission: `rules::MleBenchChecks`).
    Native {
        metric: Metric,
        note: Option<&'static str>,
    },
    /// No exact native metric: the checkout's `grade.py` runs as a grading program; `why`.
    Program { why: &'static str },
}

/// One grader name of MLE-bench's `config.yaml` files.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MleBenchGrader {
    /// `grader.name` as `config.yaml` spells it.
    pub name: &'static str,
    /// The competitions whose `config.yaml` names it.
    pub competitions: &'static [&'static str],
    /// How ml2b grades it, for every one of those competitions.
    pub grading: MleGrader,
}

const fn native(metric: Metric, note: Option<&'static str>) -> MleGrader {
    MleGrader::Native { metric, note }
}

const fn program(why: &'static str) -> MleGrader {
    MleGrader::Program { why }
}

const fn grader(
    name: &'static str,
    competitions: &'static [&'static str],
    grading: MleGrader,
) -> MleBenchGrader {
    MleBenchGrader {
        name,
        competitions,
        grading,
    }
}

/// Every grader name of MLE-bench's competitions (repository revision 783b15a), with its
/// competitions and how ml2b grades it.
pub const MLE_BENCH_GRADERS: &[MleBenchGrader] = &[
    // ---- native
    grader(
        "accuracy",
        &[
            "cassava-leaf-disease-classification",
            "cdiscount-image-classification-challenge",
            "iwildcam-2020-fgvc7",
            "ml2021spring-hw2",
            "movie-review-sentiment-analysis-kernels-only",
            "paddy-disease-classification",
            "spaceship-titanic",
            "tensorflow-speech-recognition-challenge",
            "text-normalization-challenge-english-language",
            "text-normalization-challenge-russian-language",
        ],
        native(Metric::Accuracy, None),
    ),
    grader(
        "multi-class-classification-accuracy",
        &["tabular-playground-series-dec-2021"],
        native(Metric::Accuracy, None),
    ),
    grader(
        "top-1-classification-error",
        &["inaturalist-2019-fgvc6"],
        native(Metric::Top1Error, None),
    ),
    grader(
        "auc-roc",
        &[
            "aerial-cactus-identification",
            "detecting-insults-in-social-commentary",
            "histopathologic-cancer-detection",
            "invasive-species-monitoring",
            "mlsp-2013-birds",
            "random-acts-of-pizza",
            "ranzcr-clip-catheter-line-classification",
            "rsna-miccai-brain-tumor-radiogenomic-classification",
            "seti-breakthrough-listen",
            "siim-isic-melanoma-classification",
            "tabular-playground-series-may-2022",
            "the-icml-2013-whale-challenge-right-whale-redux",
        ],
        native(
            Metric::RocAucColumns,
            Some(
                "targets: the sample submission's score column (ranzcr-clip-catheter-line-\
                 classification: its 9 class columns, of the answers' 11, AUC averaged)",
            ),
        ),
    ),
    grader(
        "auroc-multi-label",
        &["playground-series-s3e18"],
        native(
            Metric::RocAucColumns,
            Some("targets EC1 and EC2 (the answers also hold the features and EC3–EC6)"),
        ),
    ),
    grader(
        "mean-column-wise-roc-auc",
        &["plant-pathology-2020-fgvc7"],
        native(
            Metric::RocAucColumns,
            Some("targets healthy, multiple_diseases, rust, scab"),
        ),
    ),
    grader(
        "log-loss",
        &[
            "dogs-vs-cats-redux-kernels-edition",
            "statoil-iceberg-classifier-challenge",
        ],
        native(Metric::LogLoss, Some("binary: the one prediction column is P(1)")),
    ),
    grader(
        "macro-f1-score",
        &[
            "herbarium-2020-fgvc7",
            "herbarium-2021-fgvc8",
            "herbarium-2022-fgvc9",
            "iwildcam-2019-fgvc6",
        ],
        native(Metric::F1(Average::Macro), None),
    ),
    grader(
        "quadratic-weighted-kappa",
        &[
            "aptos2019-blindness-detection",
            "learning-agency-lab-automated-essay-scoring-2",
        ],
        native(Metric::Qwk(KappaForm::Sklearn), None),
    ),
    grader(
        "map-at-5",
        &["hotel-id-2021-fgvc8"],
        native(Metric::Map(MapForm::Kaggle { k: 5 }), None),
    ),
    grader(
        "MAP@5",
        &["whale-categorization-playground"],
        native(Metric::Map(MapForm::Kaggle { k: 5 }), None),
    ),
    grader(
        "root-mean-squared-error",
        &[
            "new-york-city-taxi-fare-prediction",
            "petfinder-pawpularity-score",
        ],
        native(Metric::Rmse, None),
    ),
    grader(
        "root_mean_squared_error",
        &["denoising-dirty-documents"],
        native(Metric::Rmse, None),
    ),
    grader(
        "mean-column-wise-rmsle",
        &["nomad2018-predict-transparent-conductors"],
        native(
            Metric::RmsleMulti,
            Some(
                "targets formation_energy_ev_natom and bandgap_energy_ev (the answers also hold \
                 the features)",
            ),
        ),
    ),
    grader(
        "matthews-correlation-coefficient",
        &["nfl-player-contact-detection"],
        native(
            Metric::Mcc,
            Some("target `contact` (the answers also hold game_play, step and the player ids)"),
        ),
    ),
    grader(
        "pearson-correlation-coefficient",
        &["us-patent-phrase-to-phrase-matching"],
        native(Metric::Pearson, Some("target `score`")),
    ),
    grader(
        "column-wise-spearman",
        &["google-quest-challenge"],
        native(Metric::SpearmanColumns, Some("targets: the 30 label columns")),
    ),
    grader(
        "probabilistic-f1-score",
        &["rsna-breast-cancer-detection"],
        native(Metric::Pf1, None),
    ),
    // ---- a name with two meanings: native per competition
    grader(
        "multi-class-log-loss",
        &[
            "dog-breed-identification",
            "leaf-classification",
            "lmsys-chatbot-arena",
            "spooky-author-identification",
            "stanford-covid-vaccine",
        ],
        program(
            "stanford-covid-vaccine's grade.py computes the MCRMSE of three columns over the \
             `keep` rows under this name; the other four are log_loss over one-hot answers \
             (mle_bench_competition_grader)",
        ),
    ),
    grader(
        "micro-f1-score",
        &[
            "facebook-recruiting-iii-keyword-extraction",
            "imet-2020-fgvc7",
            "plant-pathology-2021-fgvc8",
            "plant-seedlings-classification",
            "tensorflow2-question-answering",
        ],
        program(
            "tensorflow2-question-answering's grade.py scores long and short answer spans \
             against jsonl annotations under this name; the other four are f1_micro or \
             f1_micro_known (mle_bench_competition_grader)",
        ),
    ),
    // ---- grading programs
    grader(
        "column-wise ROC AUC",
        &["jigsaw-toxic-comment-classification-challenge"],
        program(
            "Kaggle's unscored test rows (-1 in every class) stay in the answers and grade.py \
             drops them before the AUC; it pairs class columns by position",
        ),
    ),
    grader(
        "MAP@12",
        &["h-and-m-personalized-fashion-recommendations"],
        program(
            "the submission lists every customer, a superset of the answers' ids, and grade.py \
             drops the rows the answers lack before MAP@12",
        ),
    ),
    grader(
        "mean-absolute-error",
        &["predict-volcanic-eruptions-ingv-oe"],
        program("grade.py rounds the MAE to an integer (Python's round, half to even)"),
    ),
    grader(
        "kendall-tau",
        &["AI4Code"],
        program("Kendall tau of cell orders, inversions summed over all notebooks"),
    ),
    grader(
        "label-ranking-average-precision",
        &["freesound-audio-tagging-2019"],
        program("label-weighted LRAP (lwlrap) over 80 class-score columns"),
    ),
    grader(
        "weighted-auroc",
        &["alaska2-image-steganalysis"],
        program("ALASKA2's weighted AUC (TPR in [0, 0.4] weighted 2, in [0.4, 1] weighted 1)"),
    ),
    grader(
        "weighted-multi-label-log-loss",
        &["rsna-2022-cervical-spine-fracture-detection"],
        program("weighted binary log loss over eight per-study labels unmelted from row_id"),
    ),
    grader(
        "modified-laplace-log-likelihood",
        &["osic-pulmonary-fibrosis-progression"],
        program("Laplace log likelihood with a confidence column, over each patient's last three weeks"),
    ),
    grader(
        "mean-angular-error",
        &["icecube-neutrinos-in-deep-ice"],
        program("mean angle between predicted and true directions (azimuth, zenith)"),
    ),
    grader(
        "average-haversine-distance",
        &["smartphone-decimeter-2022"],
        program("per-trip mean of the 50th and 95th percentile haversine errors"),
    ),
    grader(
        "log-mean-absolute-error",
        &["champs-scalar-coupling"],
        program("mean over coupling types (an answers column) of log(MAE)"),
    ),
    grader(
        "KL-divergence",
        &["hms-harmful-brain-activity-classification"],
        program("KL divergence of vote distributions, answers renormalised per row"),
    ),
    grader(
        "jigsaw-unintended-bias-in-toxicity-classification-score",
        &["jigsaw-unintended-bias-in-toxicity-classification"],
        program("overall AUC and power means of subgroup, BPSN and BNSP AUCs over identity columns"),
    ),
    grader(
        "dice-coefficient",
        &["hubmap-kidney-segmentation"],
        program("images: Dice over run-length-encoded masks"),
    ),
    grader(
        "dice-hausdorff-combo",
        &[
            "uw-madison-gi-tract-image-segmentation",
            "ventilator-pressure-prediction",
        ],
        program(
            "images: Dice and 3-D Hausdorff distance over run-length-encoded masks; \
             ventilator-pressure-prediction's grade.py uses the name for the MAE over the rows \
             with u_out = 0",
        ),
    ),
    grader(
        "global-dice",
        &["google-research-identify-contrails-reduce-global-warming"],
        program("images: global Dice over run-length-encoded masks"),
    ),
    grader(
        "f0.5-score",
        &["vesuvius-challenge-ink-detection"],
        program("images: F0.5 over run-length-encoded ink masks, per fragment"),
    ),
    grader(
        "mean-precision-intersection-over-union-at-different-thresholds",
        &["tgs-salt-identification-challenge"],
        program("images: mean precision over IoU thresholds 0.5-0.95 of run-length-encoded masks"),
    ),
    grader(
        "mAP-at-IoU>0.4",
        &["vinbigdata-chest-xray-abnormalities-detection"],
        program("object detection: COCO mAP at IoU 0.4 (pycocotools)"),
    ),
    grader(
        "mean-average-precision",
        &[
            "3d-object-detection-for-autonomous-vehicles",
            "siim-covid19-detection",
        ],
        program("object detection: mAP of 3-D boxes over IoU thresholds, and PASCAL VOC box mAP"),
    ),
    grader(
        "f1-score",
        &["kuzushiji-recognition"],
        program("character detection: F1 of predicted centre points inside labelled true boxes"),
    ),
    grader(
        "jaccard-similarity",
        &["tweet-sentiment-extraction"],
        program("mean word-level Jaccard of the extracted text (lower-cased)"),
    ),
    grader(
        "word-level-jaccard-score",
        &["chaii-hindi-and-tamil-question-answering"],
        program("jaccard_score(average=\"samples\") over the words of each answer text"),
    ),
    grader(
        "levenshtein-distance",
        &["billion-word-imputation", "bms-molecular-translation"],
        program("mean Levenshtein distance between the predicted and true strings"),
    ),
    grader(
        "levenhstein-distance",
        &["multi-modal-gesture-recognition"],
        program("summed Levenshtein distance of gesture sequences over the number of true gestures"),
    ),
];

/// Competitions graded otherwise than their grader name says: where the name has two
/// meanings (one of them a program), and the binary `auc-roc` competitions, which plain
/// `roc_auc` over their label column grades exactly as the name's `roc_auc_columns` does
/// (and as a binary probability task, which is what they are).
pub const MLE_BENCH_COMPETITION_GRADERS: &[(&str, MleGrader)] = &[
    ("aerial-cactus-identification", BINARY_AUC),
    ("detecting-insults-in-social-commentary", BINARY_AUC),
    ("histopathologic-cancer-detection", BINARY_AUC),
    ("invasive-species-monitoring", BINARY_AUC),
    ("mlsp-2013-birds", BINARY_AUC),
    ("random-acts-of-pizza", BINARY_AUC),
    ("rsna-miccai-brain-tumor-radiogenomic-classification", BINARY_AUC),
    ("seti-breakthrough-listen", BINARY_AUC),
    ("siim-isic-melanoma-classification", BINARY_AUC),
    ("tabular-playground-series-may-2022", BINARY_AUC),
    ("the-icml-2013-whale-challenge-right-whale-redux", BINARY_AUC),
    ("dog-breed-identification", ONE_HOT_LOG_LOSS),
    ("leaf-classification", ONE_HOT_LOG_LOSS),
    ("lmsys-chatbot-arena", ONE_HOT_LOG_LOSS),
    ("spooky-author-identification", ONE_HOT_LOG_LOSS),
    (
        "stanford-covid-vaccine",
        program("MCRMSE of reactivity, deg_Mg_pH10 and deg_Mg_50C over the answers' `keep` rows"),
    ),
    (
        "plant-seedlings-classification",
        native(
            Metric::F1(Average::Micro),
            Some("single labels: micro F1 is accuracy"),
        ),
    ),
    ("facebook-recruiting-iii-keyword-extraction", MULTI_LABEL_MICRO_F1),
    ("imet-2020-fgvc7", MULTI_LABEL_MICRO_F1),
    ("plant-pathology-2021-fgvc8", MULTI_LABEL_MICRO_F1),
    (
        "tensorflow2-question-answering",
        program("micro F1 of long and short answer spans against jsonl annotations"),
    ),
];

const BINARY_AUC: MleGrader = native(
    Metric::RocAuc,
    Some("target: the sample submission's score column, the answers' 0/1 label"),
);

const ONE_HOT_LOG_LOSS: MleGrader = native(
    Metric::LogLoss,
    Some("one-hot answers, targets the class columns"),
);

const MULTI_LABEL_MICRO_F1: MleGrader = native(
    Metric::F1MicroKnown,
    Some(
        "MultiLabelBinarizer(classes=<the answers' labels>): a predicted label no answer holds \
         is ignored, not a false positive",
    ),
);

/// How ml2b grades the MLE-bench grader `name` (`config.yaml`'s `grader.name`), for every
/// competition that uses it: native only when one metric is exact for all of them. An unknown
/// name is a program.
pub fn mle_bench_grader(name: &str) -> MleGrader {
    MLE_BENCH_GRADERS.iter().find(|g| g.name == name).map_or(
        program("a grader name ml2b does not know: its grade.py decides"),
        |g| g.grading,
    )
}

/// How ml2b grades `competition`, whose `config.yaml` names the grader `name`: the
/// competition's own entry where its name has two meanings, else [`mle_bench_grader`].
pub fn mle_bench_competition_grader(competition: &str, name: &str) -> MleGrader {
    MLE_BENCH_COMPETITION_GRADERS
        .iter()
        .find(|(id, _)| *id == competition)
        .map_or_else(|| mle_bench_grader(name), |(_, grading)| *grading)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn names_and_competitions_are_unique_and_counted() {
        let names: HashSet<&str> = MLE_BENCH_GRADERS.iter().map(|g| g.name).collect();
        assert_eq!(names.len(), MLE_BENCH_GRADERS.len());
        assert_eq!(names.len(), 45);
        let competitions: Vec<&str> = MLE_BENCH_GRADERS
            .iter()
            .flat_map(|g| g.competitions.iter().copied())
            .collect();
        let unique: HashSet<&str> = competitions.iter().copied().collect();
        assert_eq!(unique.len(), competitions.len());
        assert_eq!(unique.len(), 82);
    }

    #[test]
    fn competition_overrides_belong_to_a_name_and_never_lose_a_native_grading() {
        for (competition, grading) in MLE_BENCH_COMPETITION_GRADERS {
            let owner = MLE_BENCH_GRADERS
                .iter()
                .find(|g| g.competitions.contains(competition))
                .unwrap_or_else(|| panic!("{competition} is in no grader's list"));
            if let MleGrader::Native { .. } = owner.grading {
                assert!(
                    matches!(grading, MleGrader::Native { .. }),
                    "{competition}: `{}` is native by name",
                    owner.name
                );
            }
        }
        let ids: HashSet<&str> = MLE_BENCH_COMPETITION_GRADERS.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), MLE_BENCH_COMPETITION_GRADERS.len());
    }

    #[test]
    fn lookups() {
        assert_eq!(
            mle_bench_grader("auc-roc"),
            native(Metric::RocAucColumns, mle_bench_grader_note("auc-roc"))
        );
        assert!(matches!(
            mle_bench_grader("multi-class-log-loss"),
            MleGrader::Program { .. }
        ));
        assert!(matches!(
            mle_bench_competition_grader("leaf-classification", "multi-class-log-loss"),
            MleGrader::Native {
                metric: Metric::LogLoss,
                ..
            }
        ));
        assert!(matches!(
            mle_bench_competition_grader("stanford-covid-vaccine", "multi-class-log-loss"),
            MleGrader::Program { .. }
        ));
        assert!(matches!(
            mle_bench_competition_grader("spaceship-titanic", "accuracy"),
            MleGrader::Native {
                metric: Metric::Accuracy,
                ..
            }
        ));
        assert!(matches!(
            mle_bench_grader("no-such-grader"),
            MleGrader::Program { .. }
        ));
        assert_eq!(
            mle_bench_competition_grader("random-acts-of-pizza", "auc-roc"),
            BINARY_AUC
        );
        assert!(matches!(
            mle_bench_competition_grader("ranzcr-clip-catheter-line-classification", "auc-roc"),
            MleGrader::Native {
                metric: Metric::RocAucColumns,
                ..
            }
        ));
    }

    fn mle_bench_grader_note(name: &str) -> Option<&'static str> {
        match mle_bench_grader(name) {
            MleGrader::Native { note, .. } => note,
            MleGrader::Program { .. } => None,
        }
    }

    #[test]
    fn native_metrics_round_trip_their_names() {
        let natives = MLE_BENCH_GRADERS
            .iter()
            .map(|g| g.grading)
            .chain(MLE_BENCH_COMPETITION_GRADERS.iter().map(|(_, g)| *g));
        for grading in natives {
            if let MleGrader::Native { metric, .. } = grading {
                assert_eq!(metric.to_string().parse::<Metric>().unwrap(), metric);
            }
        }
    }
}
