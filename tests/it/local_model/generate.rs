use std::num::NonZeroUsize;
use std::sync::Arc;

use ml2b::providers::local::LocalModel;

use super::demo_model;

const TASK: &str = "\
You are an expert ML engineer. Solve the task below in Python.

Competition: predict house sale prices (regression). The training data is a pandas
DataFrame `data` with numeric and categorical feature columns and the target column
`SalePrice`. `X_val` is a DataFrame with the same feature columns and no target.
Missing values occur in both numeric and categorical columns. The metric is RMSE on
the logarithm of the price.

Write a Python function train_and_predict(data, X_val) using scikit-learn that:
1. separates the features from the target `SalePrice` and takes its log1p;
2. builds a ColumnTransformer: numeric columns get SimpleImputer(strategy=\"median\")
   followed by StandardScaler; categorical columns get SimpleImputer(strategy=
   \"most_frequent\") followed by OneHotEncoder(handle_unknown=\"ignore\");
3. fits a Pipeline of that preprocessing and a GradientBoostingRegressor with
   n_estimators=300, learning_rate=0.05, max_depth=3 and random_state=0;
4. predicts on X_val, inverts the log with expm1, and returns a numpy array of
   predictions with one value per row of X_val, in the same order.

Rules: import everything you use at the top of the code; do not read or write files;
do not print anything; do not use any library other than numpy, pandas and
scikit-learn; the function must run in under five minutes on a laptop CPU; the
returned predictions must contain no NaN or infinite values. Return only the code in
a single ```python block, with no explanation before or after it.";

#[test]
fn greedy_is_reproducible() {
    let model = demo_model();
    let messages = [("user", "Write a Python function that returns the square of x.")];
    let a = model.generate(&messages, 64, None).unwrap();
    let b = model.generate(&messages, 64, None).unwrap();
    assert!(!a.text.is_empty());
    assert_eq!(a.text, b.text);
    assert_eq!(
        (a.input_tokens, a.output_tokens),
        (b.input_tokens, b.output_tokens)
    );
}

#[test]
fn thread_count_does_not_change_the_text() {
    let messages = [("user", "Write a Python function that sorts a list of numbers.")];
    let texts: Vec<_> = [1, 2]
        .map(|n| {
            let model = LocalModel::load(demo_model_path())
                .unwrap()
                .with_threads(NonZeroUsize::new(n).unwrap());
            model.generate(&messages, 48, None).unwrap().text
        })
        .into();
    assert_eq!(texts[0], texts[1]);
}

#[test]
fn seeded_sampling_is_reproducible() {
    let model = demo_model();
    let messages = [("user", "Name three Python machine-learning libraries.")];
    let a = model.generate(&messages, 48, Some(7)).unwrap();
    let b = model.generate(&messages, 48, Some(7)).unwrap();
    assert_eq!(a.text, b.text);
}

#[test]
fn realistic_prompt_produces_code_and_a_rate() {
    let model = demo_model();
    let messages = [("system", "You write correct, minimal Python."), ("user", TASK)];
    let out = model.generate(&messages, 256, None).unwrap();
    eprintln!(
        "prompt {} tokens, output {} tokens, {:.1} tokens/s, {:?}\n---\n{}\n---",
        out.input_tokens, out.output_tokens, out.tokens_per_second, out.finish, out.text
    );
    assert!(out.input_tokens > 250, "prompt was {} tokens", out.input_tokens);
    assert!(out.output_tokens > 0);
    assert!(!out.text.trim().is_empty());
    assert!(out.tokens_per_second > 0.0);
}

#[test]
fn too_long_prompt_is_an_error_not_truncated() {
    let model = demo_model();
    let long = "word ".repeat(model.context_limit() as usize);
    let err = model.generate(&[("user", long)], 16, None).unwrap_err();
    assert!(
        matches!(err, ml2b::providers::local::LocalError::PromptTooLong { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("not truncated"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usable_from_tokio_via_spawn_blocking() {
    let model = Arc::new(LocalModel::load(demo_model_path()).unwrap());
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let model = Arc::clone(&model);
            tokio::task::spawn_blocking(move || model.generate(&[("user", "Say hi.")], 16, None))
        })
        .collect();
    let mut texts = Vec::new();
    for task in tasks {
        texts.push(task.await.unwrap().unwrap().text);
    }
    assert_eq!(texts[0], texts[1]);
}

fn demo_model_path() -> std::path::PathBuf {
    demo_model(); // fetches it if needed
    super::models_dir().join(ml2b::providers::local::DEMO.file_name)
}
