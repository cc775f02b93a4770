//! Names the leakage analysis recognises: estimator classes, methods and library functions.
//!
//! Everything is matched on the last segment of a name (`sklearn.preprocessing.StandardScaler`
//! and `StandardScaler` are the same), so aliases made with `import … as` of a *module* work but
//! renamed classes (`from sklearn.preprocessing import StandardScaler as SS`) fall back to the
//! suffix rules or to "unknown estimator". Invariant: every list is plain data; no function here
//! looks at the syntax tree.

use super::value::EstKinds;

/// Estimators that learn nothing from the data they are fitted on.
const STATELESS: &[&str] = &[
    "Normalizer",
    "FunctionTransformer",
    "HashingVectorizer",
    "Binarizer",
    "PolynomialFeatures",
    "HashingEncoder",
    "MissingIndicator",
];

/// Preprocessing / unsupervised estimators whose fit learns parameters from the rows.
const PREPROCESSORS: &[&str] = &[
    "LabelEncoder",
    "OneHotEncoder",
    "OrdinalEncoder",
    "TargetEncoder",
    "LabelBinarizer",
    "MultiLabelBinarizer",
    "SimpleImputer",
    "KNNImputer",
    "IterativeImputer",
    "PCA",
    "KernelPCA",
    "TruncatedSVD",
    "NMF",
    "LatentDirichletAllocation",
    "FactorAnalysis",
    "FastICA",
    "TSNE",
    "UMAP",
    "Isomap",
    "LocallyLinearEmbedding",
    "SpectralEmbedding",
    "TfidfTransformer",
    "DictVectorizer",
    "KBinsDiscretizer",
    "SplineTransformer",
    "QuantileTransformer",
    "PowerTransformer",
    "SelectKBest",
    "SelectPercentile",
    "VarianceThreshold",
    "SelectFromModel",
    "RFE",
    "RFECV",
    "GenericUnivariateSelect",
    "SequentialFeatureSelector",
    "ColumnTransformer",
    "make_column_transformer",
    "FeatureUnion",
    "make_union",
    "KMeans",
    "MiniBatchKMeans",
    "GaussianMixture",
    "BayesianGaussianMixture",
    "DBSCAN",
    "HDBSCAN",
    "OPTICS",
    "AgglomerativeClustering",
    "Birch",
    "MeanShift",
    "SpectralClustering",
    "NearestNeighbors",
    "IsolationForest",
    "LocalOutlierFactor",
    "OneClassSVM",
    "EllipticEnvelope",
    "Tokenizer",
    "TextVectorization",
    "Normalization",
    "StringLookup",
    "IntegerLookup",
    "Discretization",
    "SMOTE",
    "ADASYN",
    "BorderlineSMOTE",
    "SMOTENC",
    "SMOTETomek",
    "SMOTEENN",
    "Word2Vec",
    "FastText",
    "Doc2Vec",
    "Dictionary",
    "LdaModel",
    "TfidfModel",
    "CatBoostEncoder",
    "WOEEncoder",
    "LeaveOneOutEncoder",
    "JamesSteinEncoder",
    "MEstimateEncoder",
    "CountEncoder",
    "BinaryEncoder",
    "GLMMEncoder",
];

const PRE_SUFFIXES: &[&str] = &[
    "Scaler",
    "Encoder",
    "Imputer",
    "Vectorizer",
    "Transformer",
    "Binarizer",
    "Discretizer",
    "Selector",
    "Tokenizer",
    "Sampler",
    "PCA",
    "SVD",
    "Embedding",
];

const MODELS: &[&str] = &[
    "Ridge",
    "RidgeCV",
    "Lasso",
    "LassoCV",
    "ElasticNet",
    "ElasticNetCV",
    "Lars",
    "LarsCV",
    "LassoLars",
    "LassoLarsCV",
    "LassoLarsIC",
    "BayesianRidge",
    "KernelRidge",
    "Perceptron",
    "Sequential",
    "Model",
    "Prophet",
    "ARIMA",
    "SARIMAX",
    "AutoReg",
    "ExponentialSmoothing",
    "OLS",
    "WLS",
    "GLS",
    "Logit",
    "Probit",
    "GLM",
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "LabelSpreading",
    "LabelPropagation",
    "Booster",
    "LGBMRanker",
    "XGBRanker",
    "CatBoost",
    "OrthogonalMatchingPursuit",
    "NeuralNetwork",
    "MLP",
    "TabNet",
    "AutoML",
    "TabularPredictor",
];

const MODEL_MARKERS: &[&str] = &["Classifier", "Regressor", "Regression", "Ranker"];
const MODEL_SUFFIXES: &[&str] = &["SVC", "SVR", "NB", "Net", "Forest", "Boost", "Model"];

const SEARCHES: &[&str] = &[
    "GridSearchCV",
    "RandomizedSearchCV",
    "HalvingGridSearchCV",
    "HalvingRandomSearchCV",
    "BayesSearchCV",
    "TuneSearchCV",
    "TuneGridSearchCV",
    "OptunaSearchCV",
];

const PIPELINES: &[&str] = &["Pipeline", "make_pipeline"];

const SPLITTERS: &[&str] = &[
    "KFold",
    "StratifiedKFold",
    "GroupKFold",
    "RepeatedKFold",
    "RepeatedStratifiedKFold",
    "TimeSeriesSplit",
    "ShuffleSplit",
    "StratifiedShuffleSplit",
    "StratifiedGroupKFold",
    "GroupShuffleSplit",
    "LeaveOneOut",
    "LeaveOneGroupOut",
    "LeavePGroupsOut",
    "LeavePOut",
    "PredefinedSplit",
    "MultilabelStratifiedKFold",
];

/// The estimator kind a constructor call `name(...)` makes, if it is one.
pub(super) fn estimator_kind(name: &str) -> Option<EstKinds> {
    if STATELESS.contains(&name) {
        Some(EstKinds::STATELESS)
    } else if SPLITTERS.contains(&name) {
        Some(EstKinds::SPLITTER)
    } else if PREPROCESSORS.contains(&name) {
        Some(EstKinds::PRE)
    } else if MODELS.contains(&name)
        || MODEL_MARKERS.iter().any(|m| name.contains(m))
        || MODEL_SUFFIXES.iter().any(|s| name.ends_with(s))
    {
        Some(EstKinds::MODEL)
    } else if PRE_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        Some(EstKinds::PRE)
    } else {
        None
    }
}

pub(super) fn is_search(name: &str) -> bool {
    SEARCHES.contains(&name)
}

pub(super) fn is_pipeline(name: &str) -> bool {
    PIPELINES.contains(&name)
}

/// Models that select their best iteration on an eval set by default (CatBoost's `use_best_model`).
pub(super) fn selects_on_eval_by_default(name: &str) -> bool {
    name.starts_with("CatBoost")
}

/// Constructors that train on the data passed to them (gensim).
pub(super) fn trains_on_construction(name: &str) -> bool {
    matches!(
        name,
        "Word2Vec" | "FastText" | "Doc2Vec" | "Dictionary" | "LdaModel" | "TfidfModel"
    )
}

/// Methods that fit the receiver on their first argument.
pub(super) fn is_fit_method(name: &str) -> bool {
    matches!(
        name,
        "fit"
            | "fit_transform"
            | "fit_predict"
            | "partial_fit"
            | "fit_resample"
            | "fit_sample"
            | "fit_on_texts"
            | "fit_on_sequences"
            | "adapt"
            | "fit_generator"
            | "build_vocab"
    )
}

/// Fit methods that only preprocessing objects have.
pub(super) fn is_preprocessing_fit(name: &str) -> bool {
    matches!(
        name,
        "fit_transform"
            | "fit_resample"
            | "fit_sample"
            | "fit_on_texts"
            | "fit_on_sequences"
            | "adapt"
            | "build_vocab"
    )
}

pub(super) fn is_predict_method(name: &str) -> bool {
    matches!(
        name,
        "predict"
            | "predict_proba"
            | "predict_log_proba"
            | "decision_function"
            | "staged_predict"
            | "staged_predict_proba"
            | "forecast"
            | "inplace_predict"
    )
}

/// Methods of a fitted object that map rows to rows with what it learned.
pub(super) fn is_transform_method(name: &str) -> bool {
    matches!(
        name,
        "transform"
            | "inverse_transform"
            | "texts_to_sequences"
            | "texts_to_matrix"
            | "sequences_to_matrix"
            | "kneighbors"
            | "score_samples"
            | "embed"
            | "encode"
    )
}

/// Reductions: methods (and numpy/statistics functions) that summarise rows into a statistic.
pub(super) fn is_reduction(name: &str) -> bool {
    matches!(
        name,
        "mean"
            | "median"
            | "std"
            | "var"
            | "min"
            | "max"
            | "sum"
            | "count"
            | "quantile"
            | "mode"
            | "nunique"
            | "unique"
            | "value_counts"
            | "describe"
            | "agg"
            | "aggregate"
            | "cov"
            | "corr"
            | "skew"
            | "kurt"
            | "kurtosis"
            | "sem"
            | "prod"
            | "percentile"
            | "nanmean"
            | "nanmedian"
            | "nanstd"
            | "nanvar"
            | "nanmin"
            | "nanmax"
            | "nanpercentile"
            | "nanquantile"
            | "amin"
            | "amax"
            | "average"
            | "ptp"
            | "nansum"
            | "first"
            | "last"
            | "size"
            | "idxmax"
            | "idxmin"
            | "argmax"
            | "argmin"
            | "all"
            | "any"
    )
}

/// Functions that fit a transformation on their argument and apply it in one call.
pub(super) fn is_fitting_function(name: &str) -> bool {
    matches!(
        name,
        "scale"
            | "minmax_scale"
            | "robust_scale"
            | "maxabs_scale"
            | "quantile_transform"
            | "power_transform"
            | "zscore"
            | "qcut"
    )
}

/// Encodings whose categories come from the rows they are applied to.
pub(super) fn is_encoding_function(name: &str) -> bool {
    matches!(name, "get_dummies" | "factorize" | "Categorical")
}

/// Row-wise windows: reductions on them stay row-aligned.
pub(super) fn is_window_method(name: &str) -> bool {
    matches!(name, "rolling" | "expanding" | "ewm" | "resample")
}

/// Axis-0 concatenations (rows of all arguments, in order).
pub(super) fn is_row_concat(name: &str) -> bool {
    matches!(
        name,
        "concat"
            | "concatenate"
            | "vstack"
            | "row_stack"
            | "append"
            | "_append"
            | "chain"
            | "cat"
            | "r_"
            | "combine_first"
    )
}

/// Column-wise stacks (same rows side by side).
pub(super) fn is_column_stack(name: &str) -> bool {
    matches!(name, "hstack" | "column_stack" | "c_" | "dstack")
}

/// Wrappers that hold training rows for a library's own `train` function.
pub(super) fn is_data_wrapper(name: &str) -> bool {
    matches!(
        name,
        "Dataset"
            | "DMatrix"
            | "QuantileDMatrix"
            | "DeviceQuantileDMatrix"
            | "Pool"
            | "TensorDataset"
            | "from_tensor_slices"
            | "DataLoader"
    )
}

pub(super) fn is_split_function(name: &str) -> bool {
    name == "train_test_split"
}

/// Cross-validation helpers: they fit on their data but score on held-out folds.
pub(super) fn is_cross_validation(name: &str) -> bool {
    matches!(
        name,
        "cross_val_score"
            | "cross_validate"
            | "cross_val_predict"
            | "learning_curve"
            | "validation_curve"
            | "permutation_test_score"
    )
}

/// Metric functions: a score computed from true values and predictions.
pub(super) fn is_metric(name: &str) -> bool {
    if is_cross_validation(name) {
        return false;
    }
    name.ends_with("_score")
        || name.ends_with("_error")
        || name.ends_with("_loss")
        || matches!(
            name,
            "matthews_corrcoef"
                | "rmse"
                | "mae"
                | "mse"
                | "rmsle"
                | "auc"
                | "pearsonr"
                | "spearmanr"
                | "qwk"
                | "quadratic_weighted_kappa"
                | "corrcoef"
                | "score"
                | "evaluate"
        )
}

/// Functions and methods that pick the best of several candidates by value.
pub(super) fn is_selection(name: &str) -> bool {
    matches!(
        name,
        "max"
            | "min"
            | "sorted"
            | "sort"
            | "argmax"
            | "argmin"
            | "nanargmax"
            | "nanargmin"
            | "idxmax"
            | "idxmin"
            | "sort_values"
            | "nlargest"
            | "nsmallest"
            | "argsort"
    )
}

/// Optimisers that call a function they are given and keep the best result.
pub(super) fn is_optimizer(name: &str) -> bool {
    matches!(
        name,
        "optimize" | "fmin" | "minimize" | "gp_minimize" | "forest_minimize" | "gbrt_minimize" | "maximize"
    )
}

/// Library `train` entry points (`lgb.train`, `xgb.train`, `catboost.train`) by their module path.
pub(super) fn is_library_train(dotted: &str) -> bool {
    let mut parts = dotted.rsplitn(2, '.');
    let last = parts.next().unwrap_or("");
    let module = parts.next().unwrap_or("");
    matches!(last, "train" | "cv")
        && ["lgb", "lightgbm", "xgb", "xgboost", "catboost", "cb"]
            .iter()
            .any(|m| module.ends_with(m))
}

/// Keyword arguments that hold evaluation sets for early stopping or checkpoint selection.
pub(super) const EVAL_SET_KEYWORDS: &[&str] = &["eval_set", "valid_sets", "evals", "validation_data"];

/// Names inside `callbacks=[...]` that select on the eval set.
pub(super) fn is_selecting_callback(text: &str) -> bool {
    text.contains("early_stopping") || text.contains("EarlyStopping") || text.contains("ModelCheckpoint")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimator_kinds() {
        assert_eq!(estimator_kind("StandardScaler"), Some(EstKinds::PRE));
        assert_eq!(estimator_kind("LGBMClassifier"), Some(EstKinds::MODEL));
        assert_eq!(estimator_kind("LogisticRegression"), Some(EstKinds::MODEL));
        assert_eq!(estimator_kind("CatBoostRegressor"), Some(EstKinds::MODEL));
        assert_eq!(estimator_kind("TfidfVectorizer"), Some(EstKinds::PRE));
        assert_eq!(estimator_kind("HashingVectorizer"), Some(EstKinds::STATELESS));
        assert_eq!(estimator_kind("StratifiedKFold"), Some(EstKinds::SPLITTER));
        assert_eq!(estimator_kind("DataFrame"), None);
        assert!(
            is_library_train("lgb.train") && is_library_train("xgboost.train") && !is_library_train("train")
        );
        assert!(is_metric("roc_auc_score") && !is_metric("cross_val_score"));
    }
}
