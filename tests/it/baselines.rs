//! The baselines through the real CLI on the bundled root: `ml2b baselines` runs the
//! reference solution and the AutoGluon baseline of the smallest competition in the local
//! sandbox; the AutoGluon run scores inside its manifest range, a second store's run with
//! the same seed predicts the same bytes, and every grade names the baseline runs it was
//! compared with (r_p against a run's own baseline is exactly 1).

use crate::common::Workspace;

/// The bundled competition with the fewest rows.
const SMALLEST: &str = "meat-spectroscopy";

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn baselines(ws: &Workspace, models: &str) -> serde_json::Value {
    let root = env!("CARGO_MANIFEST_DIR");
    let args = [
        "--json",
        "baselines",
        "--root",
        root,
        "--competitions",
        SMALLEST,
        "--models",
        models,
    ];
    json(&ws.ml2b().args(args).output().unwrap())
}

fn query(ws: &Workspace, sql: &str) -> serde_json::Value {
    json(&ws.ml2b().args(["--json", "query", sql]).output().unwrap())
}

#[test]
fn smallest_competition_is_the_meat_one() {
    let bench = ml2b::competition::Benchmark::load(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let smallest = bench
        .competitions
        .iter()
        .min_by_key(|c| c.manifest.characteristics.rows)
        .unwrap();
    assert_eq!(smallest.id(), SMALLEST);
}

#[test]
fn autogluon_runs_in_the_sandbox_scores_in_range_repeats_and_grades_name_their_baselines() {
    let ws = Workspace::new();
    let lines = baselines(&ws, "reference,autogluon");
    let lines = lines.as_array().unwrap();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    let automl = lines.iter().find(|l| l["model"] == "autogluon").unwrap();
    let reference = lines.iter().find(|l| l["model"] == "reference").unwrap();
    assert_eq!(automl["role"], "automl");
    assert_eq!(reference["role"], "reference");
    for l in [automl, reference] {
        assert_eq!(l["outcome"], "ok", "{l}");
        assert_eq!(l["status"], "ok", "inside the manifest's expected range: {l}");
    }

    // Each run is compared with both baselines; against its own, r_p is exactly 1.
    let grades = query(
        &ws,
        "SELECT role, score, baseline_run, baseline_score, r_p, automl_run, automl_score, \
         r_p_automl, in_expected_range, array_element(upstream, 1) AS execution \
         FROM grade ORDER BY role",
    );
    let grades = grades.as_array().unwrap();
    assert_eq!(grades.len(), 2, "{grades:#?}");
    let (g_automl, g_reference) = (&grades[0], &grades[1]);
    assert_eq!(g_automl["role"], "automl");
    assert_eq!(g_automl["automl_run"], g_automl["execution"]);
    assert_eq!(g_automl["r_p_automl"], 1.0);
    assert_eq!(g_automl["baseline_run"], g_reference["execution"]);
    assert_eq!(g_reference["baseline_run"], g_reference["execution"]);
    assert_eq!(g_reference["r_p"], 1.0);
    assert_eq!(g_reference["automl_run"], g_automl["execution"]);
    let (a, r) = (
        g_automl["score"].as_f64().unwrap(),
        g_reference["score"].as_f64().unwrap(),
    );
    assert_eq!(g_automl["baseline_score"].as_f64().unwrap(), r);
    // rmse_multi is minimized: r_p = baseline / score.
    assert_eq!(g_automl["r_p"].as_f64().unwrap(), r / a);
    assert_eq!(g_reference["r_p_automl"].as_f64().unwrap(), a / r);
    assert_eq!(g_automl["in_expected_range"], true);

    // The same seed in a fresh store: the same code and the same predictions, bit for bit.
    let again = Workspace::new();
    baselines(&again, "autogluon");
    let sql = "SELECT code_blake3, predictions_blake3 FROM execute ORDER BY 1";
    let ours = query(&ws, sql);
    let theirs = query(&again, sql);
    let pick = |rows: &serde_json::Value, code: &serde_json::Value| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| &r["code_blake3"] == code)
            .cloned()
    };
    let their_row = &theirs.as_array().unwrap()[0];
    let our_row = pick(&ours, &their_row["code_blake3"]).expect("both stores ran the same code");
    assert_eq!(our_row["predictions_blake3"], their_row["predictions_blake3"]);

    // A re-run finds everything committed and only prints.
    let rerun = baselines(&ws, "reference,autogluon");
    assert_eq!(rerun.as_array().unwrap().len(), 2);
}
