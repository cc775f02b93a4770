//! `ml2b translate` against scripted chat servers on 127.0.0.1 (OpenAI's protocol forward,
//! Anthropic's back): a competition in English alone made cross-lingual, every leg an event
//! and a file, nothing asked twice, a lost column name caught and named, an unanswered
//! pair failing alone, an answer cut at the token cap recorded, and the same model both
//! ways refused unless allowed.

use serde_json::{Value, json};

use crate::common::{KEY, add_model, chat_server, completion, query, write};
use crate::competitions::toy;

const ENGLISH: &str = "title = \"Toy widgets\"\ndomain = \"Widgets\"\nmetric = \"ROC AUC\"\ndescription = \"Predict `y` for each of the 40 rows of test.csv; submissions are scored by ROC AUC.\"\ndata_card = \"- `x`: a number from 0 to 12.\"\n";

/// The five fields of the JSON object in a translation request, and the language named as
/// its target.
fn asked(request: &Value) -> (Value, String) {
    let messages = request["messages"].as_array().unwrap();
    let user = messages.last().unwrap()["content"].as_str().unwrap().to_string();
    let target = user
        .split(" into ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap()
        .to_string();
    let json = &user[user.find('{').unwrap()..=user.rfind('}').unwrap()];
    (serde_json::from_str(json).unwrap(), target)
}

/// Every field of `fields` with `f` applied.
fn map_fields(fields: &Value, f: impl Fn(&str) -> String) -> Value {
    let mut out = serde_json::Map::new();
    for (k, v) in fields.as_object().unwrap() {
        out.insert(k.clone(), json!(f(v.as_str().unwrap())));
    }
    Value::Object(out)
}

/// An Anthropic Messages body with `text`.
fn message(text: &str) -> String {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 700, "output_tokens": 400}
    })
    .to_string()
}

/// The toy competition in English alone, with the models `fake` (OpenAI's protocol, the
/// forward server) and `claude` (Anthropic's, the back server).
fn english_only(forward: u16, back: u16) -> crate::common::Workspace {
    let ws = toy();
    let root = ws.dir.path();
    let manifest = root.join("manifests/competitions/toy.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "translation = \"machine\"",
            "translation = \"none\"\nlanguages = [\"en\"]",
        ),
    )
    .unwrap();
    std::fs::remove_dir_all(root.join("data/toy/tasks")).unwrap();
    write(&root.join("data/toy/tasks/en.toml"), ENGLISH);
    add_model(&ws, forward);
    let models = root.join("manifests/models.toml");
    let mut text = std::fs::read_to_string(&models).unwrap();
    text.push_str(&format!(
        "\n[[model]]\nname = \"claude\"\nprovider = \"anthropic\"\nendpoint = \"http://127.0.0.1:{back}\"\nmodel = \"claude-test-2025-01-01\"\napi_key_env = \"ML2B_TEST_KEY\"\nusd_per_mtok_input = 3.0\nusd_per_mtok_output = 15.0\n"
    ));
    std::fs::write(models, text).unwrap();
    ws
}

/// A back server: the text with the forward server's `[Language] ` marks taken out.
fn back_server() -> (u16, std::sync::Arc<std::sync::Mutex<crate::common::Seen>>) {
    chat_server(|_, request| {
        let (fields, target) = asked(request);
        assert_eq!(target, "English");
        let back = map_fields(&fields, |v| {
            v.split(' ')
                .filter(|w| !w.starts_with('[') || !w.ends_with(']'))
                .collect::<Vec<_>>()
                .join(" ")
        });
        (200, message(&format!("Here it is:\n{back}")))
    })
}

fn translate(ws: &crate::common::Workspace, args: &[&str]) -> std::process::Output {
    ws.ml2b()
        .env("ML2B_TEST_KEY", KEY)
        .args(["--json", "translate", "--model", "fake", "--back-model", "claude"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn an_english_competition_is_translated_both_ways_every_leg_recorded_and_nothing_asked_twice() {
    // Forward: every field marked with its language; Spanish loses the backticks of `y`.
    let (forward, forward_seen) = chat_server(|_, request| {
        let (fields, target) = asked(request);
        let translated = map_fields(&fields, |v| {
            let v = if target == "Spanish" {
                v.replace("`y`", "y")
            } else {
                v.to_string()
            };
            format!("[{target}] {v}")
        });
        (200, completion(&format!("```json\n{translated}\n```")))
    });
    let (back, back_seen) = back_server();
    let ws = english_only(forward, back);
    let out = translate(&ws, &["--language", "fr,es"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = |leg: usize| report["legs"][leg]["written"]["files"].clone();
    assert_eq!(
        files(0),
        json!(["data/toy/tasks/fr.toml", "data/toy/tasks/es.toml"])
    );
    assert_eq!(
        files(1),
        json!(["data/toy/back/fr.toml", "data/toy/back/es.toml"])
    );
    assert!(
        stderr.contains("toy/en→es: lost code `y`"),
        "the lost column name is named: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let root = ws.dir.path();
    let fr = std::fs::read_to_string(root.join("data/toy/tasks/fr.toml")).unwrap();
    assert!(
        fr.starts_with("# Translated from `en` into `fr` by `ml2b translate` with the model `fake`"),
        "{fr}"
    );
    assert!(
        fr.contains("[French] Predict `y` for each of the 40 rows of test.csv"),
        "{fr}"
    );
    let back_fr = std::fs::read_to_string(root.join("data/toy/back/fr.toml")).unwrap();
    assert!(
        back_fr.contains("description = \"Predict `y` for each of the 40 rows"),
        "{back_fr}"
    );

    // Every leg is an event: the back leg names the forward one and both models.
    let rows = query(
        &ws,
        "SELECT language, \"from\", \"to\", model, source_model, lost, input_tokens, cost_usd, event_id, upstream, output_blake3 FROM translate ORDER BY \"to\", language",
    );
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4, "{rows:?}");
    let (back_es, forward_es) = (&rows[0], &rows[2]);
    assert_eq!(back_es["from"], "es");
    assert_eq!(back_es["model"], "claude");
    assert_eq!(back_es["source_model"], "fake");
    assert_eq!(back_es["upstream"], json!([forward_es["event_id"]]));
    assert_eq!(forward_es["lost"], json!(["code `y`"]));
    assert_eq!(forward_es["input_tokens"], 1200);
    assert!((forward_es["cost_usd"].as_f64().unwrap() - (1200.0 * 1.0 + 300.0 * 2.0) / 1e6).abs() < 1e-15);
    assert!((back_es["cost_usd"].as_f64().unwrap() - (700.0 * 3.0 + 400.0 * 15.0) / 1e6).abs() < 1e-15);
    // `show` prints a leg by its id, with what it lost, and the back leg's upstream.
    let shown = ws
        .ml2b()
        .args(["show", forward_es["event_id"].as_str().unwrap()])
        .output()
        .unwrap();
    let shown_text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(
        shown_text.contains("code `y`") && shown_text.contains("translate"),
        "{shown_text}"
    );
    assert!(
        shown_text.contains("claude toy/es→en"),
        "the back leg that consumed it: {shown_text}"
    );
    let text = std::fs::read(root.join("data/toy/tasks/fr.toml")).unwrap();
    let fr_row = rows.iter().find(|r| r["to"] == "fr").unwrap();
    assert_eq!(
        fr_row["output_blake3"],
        blake3::hash(&text).to_hex().as_str(),
        "the file is the event's text"
    );

    // The key goes to the servers and nowhere else.
    for (auth, _) in &forward_seen.lock().unwrap().requests {
        assert_eq!(auth, &format!("Bearer {KEY}"));
    }
    assert_eq!(forward_seen.lock().unwrap().requests.len(), 2);
    assert_eq!(back_seen.lock().unwrap().requests.len(), 2);

    // A re-run asks nothing, and so does one after the files and the log are lost (the
    // request cache answers); the files come back byte for byte.
    let again = translate(&ws, &["--language", "fr,es"]);
    assert!(again.status.success());
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["legs"][0]["summary"]["planned"], 0);
    for dir in [
        "data/toy/tasks/fr.toml",
        "data/toy/tasks/es.toml",
        "data/toy/back/fr.toml",
        "data/toy/back/es.toml",
    ] {
        std::fs::remove_file(root.join(dir)).unwrap();
    }
    std::fs::remove_dir_all(root.join("store/log/translate")).unwrap();
    let _ = std::fs::remove_dir_all(root.join("store/index/translate"));
    assert!(translate(&ws, &["--language", "fr,es"]).status.success());
    assert_eq!(
        forward_seen.lock().unwrap().requests.len(),
        2,
        "answered from the request cache"
    );
    assert_eq!(back_seen.lock().unwrap().requests.len(), 2);
    assert_eq!(std::fs::read(root.join("data/toy/tasks/fr.toml")).unwrap(), text);

    // translate-validate takes the produced texts as it takes imported ones: French passes,
    // Spanish fails naming what it lost.
    let out = ws
        .ml2b()
        .args(["--json", "stage", "translate-validate"])
        .output()
        .unwrap();
    let checks: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = checks["checks"].as_array().unwrap();
    let verdict = |lang: &str| checks.iter().find(|c| c["language"] == lang).unwrap().clone();
    assert_eq!(verdict("fr")["passed"], true, "{checks:?}");
    assert_eq!(verdict("es")["passed"], false);
    let reasons = verdict("es")["reasons"].to_string();
    assert!(
        reasons.contains("the translation lost 1 of what must stay verbatim: code `y`"),
        "{reasons}"
    );

    // generate prompts with a produced text once it passed, and says which text it used.
    let (coder, _) = chat_server(|_, _| (200, completion("```python\nprint('hi')\n```")));
    let models = root.join("manifests/models.toml");
    let mut manifest = std::fs::read_to_string(&models).unwrap();
    manifest.push_str(&format!(
        "\n[[model]]\nname = \"coder\"\nprovider = \"openai\"\nendpoint = \"http://127.0.0.1:{coder}/v1\"\nmodel = \"coder-2025-01-01\"\napi_key_env = \"ML2B_TEST_KEY\"\n"
    ));
    std::fs::write(&models, manifest).unwrap();
    let out = ws
        .ml2b()
        .env("ML2B_TEST_KEY", KEY)
        .args(["stage", "generate", "--model", "coder", "--format", "modular"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let texts = query(
        &ws,
        "SELECT language, text_blake3, text_translated_by, event_id FROM generate ORDER BY language",
    );
    let texts = texts.as_array().unwrap();
    let languages: Vec<&str> = texts.iter().map(|r| r["language"].as_str().unwrap()).collect();
    assert_eq!(languages, ["en", "fr"], "Spanish failed its gate: {texts:?}");
    let english = std::fs::read(root.join("data/toy/tasks/en.toml")).unwrap();
    assert_eq!(texts[0]["text_blake3"], blake3::hash(&english).to_hex().as_str());
    assert_eq!(texts[0]["text_translated_by"], Value::Null);
    assert_eq!(texts[1]["text_blake3"], fr_row["output_blake3"]);
    assert_eq!(texts[1]["text_translated_by"], "fake");
    let shown = ws
        .ml2b()
        .args(["show", texts[1]["event_id"].as_str().unwrap()])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("task text   translated by fake (ml2b translate), blake3"),
        "{shown}"
    );
}

#[test]
fn the_same_model_both_ways_is_refused_unless_allowed() {
    let (forward, seen) = chat_server(|_, request| {
        let (fields, _) = asked(request);
        (200, completion(&fields.to_string()))
    });
    let (back, _) = back_server();
    let ws = english_only(forward, back);
    let same_model = |extra: &[&str]| {
        ws.ml2b()
            .env("ML2B_TEST_KEY", KEY)
            .args([
                "translate",
                "--model",
                "fake",
                "--back-model",
                "fake",
                "--language",
                "fr",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let same = same_model(&[]);
    assert_eq!(same.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&same.stderr);
    assert!(
        stderr.contains("are the same model (fake-coder-2025-01-01)"),
        "{stderr}"
    );
    assert!(stderr.contains("--same-model-both-ways"), "{stderr}");
    assert!(seen.lock().unwrap().requests.is_empty(), "nothing was asked");

    let allowed = same_model(&["--same-model-both-ways"]);
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert_eq!(seen.lock().unwrap().requests.len(), 2, "forward and back");
}

#[test]
fn an_unanswered_pair_fails_alone_and_a_cut_answer_is_recorded_without_text() {
    // French: a 500 first (retried); Italian: an answer cut at the token cap; Polish: a
    // 400 every time (never answered).
    let french_first = std::sync::atomic::AtomicBool::new(true);
    let (forward, seen) = chat_server(move |_, request| {
        let (fields, target) = asked(request);
        let first = || french_first.swap(false, std::sync::atomic::Ordering::SeqCst);
        match target.as_str() {
            "French" if first() => (500, "{\"error\": {\"message\": \"busy\"}}".into()),
            "Italian" => {
                let body = json!({
                    "id": "cmpl-2", "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"title\": \"Widget gioc"}, "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 1200, "completion_tokens": 8192}
                });
                (200, body.to_string())
            }
            "Polish" => (400, "{\"error\": {\"message\": \"bad request\"}}".into()),
            _ => (
                200,
                completion(&map_fields(&fields, |v| format!("[{target}] {v}")).to_string()),
            ),
        }
    });
    let (back, _) = back_server();
    let ws = english_only(forward, back);
    let out = translate(&ws, &["--language", "fr,it,pl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let forward_leg = &report["legs"][0];
    assert_eq!(forward_leg["written"]["files"], json!(["data/toy/tasks/fr.toml"]));
    let failed = forward_leg["summary"]["failed"].to_string();
    assert!(failed.contains("toy/en→pl"), "{failed}");
    assert!(
        forward_leg["written"]["without_text"][0]
            .as_str()
            .unwrap()
            .contains("toy/en→it: the answer holds no JSON object (the answer was cut at the token cap)"),
        "{forward_leg}"
    );
    assert_eq!(
        report["legs"][1]["written"]["files"],
        json!(["data/toy/back/fr.toml"])
    );
    let attempts = query(&ws, "SELECT attempts FROM translate WHERE \"to\" = 'fr'");
    assert_eq!(
        attempts[0]["attempts"], 2,
        "the 500 is recorded with the pair it delayed"
    );
    let n = seen.lock().unwrap().requests.len();
    // A re-run asks again only for the pair never answered.
    let again = translate(&ws, &["--language", "fr,it,pl"]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(seen.lock().unwrap().requests.len(), n + 1);
}

#[test]
fn a_run_killed_mid_leg_resumes_asking_only_what_was_never_answered() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    // One request at a time, in the languages' order (French, Spanish, Italian): Italian
    // hangs until the run is killed.
    let hang = Arc::new(AtomicBool::new(true));
    let hanging = hang.clone();
    let (forward, seen) = chat_server(move |_, request| {
        let (fields, target) = asked(request);
        while target == "Italian" && hanging.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        (
            200,
            completion(&map_fields(&fields, |v| format!("[{target}] {v}")).to_string()),
        )
    });
    let (back, _) = back_server();
    let ws = english_only(forward, back);
    let args = [
        "translate",
        "--model",
        "fake",
        "--back-model",
        "claude",
        "--language",
        "fr,es,it",
        "--max-in-flight",
        "1",
    ];
    let mut child = ws
        .ml2b()
        .env("ML2B_TEST_KEY", KEY)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while seen.lock().unwrap().requests.len() < 3 {
        assert!(
            started.elapsed().as_secs() < 120,
            "the run never asked for Italian"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    hang.store(false, Ordering::SeqCst);

    let out = translate(&ws, &["--language", "fr,es,it", "--max-in-flight", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let targets: Vec<String> = seen
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(|(_, r)| asked(r).1)
        .collect();
    assert_eq!(
        targets,
        ["French", "Spanish", "Italian", "Italian"],
        "French and Spanish were answered before the kill: the cache answers them"
    );
    for code in ["fr", "es", "it"] {
        for dir in ["tasks", "back"] {
            assert!(
                ws.dir
                    .path()
                    .join(format!("data/toy/{dir}/{code}.toml"))
                    .is_file(),
                "{dir}/{code}"
            );
        }
    }
    let n = query(&ws, "SELECT count(*) AS n FROM translate");
    assert_eq!(n[0]["n"], 6, "each leg of each pair once");
}

#[test]
fn the_embedded_model_translates_through_the_same_path() {
    // The demo model (135M parameters) on the CPU: the path is what is tested, not the
    // text; 48 tokens keep it short, so the answer is most likely cut and recorded so.
    let (back, _) = back_server();
    let ws = english_only(back, back);
    let out = ws
        .ml2b()
        .env("ML2B_TEST_KEY", KEY)
        .env("ML2B_MODELS", crate::local_model::models_dir())
        .args([
            "--json",
            "translate",
            "--model",
            "smollm2-135m",
            "--back-model",
            "claude",
        ])
        .args(["--language", "fr", "--max-tokens", "48"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = query(
        &ws,
        "SELECT provider, model_id, output_tokens, response_blake3, output_blake3, reason FROM translate WHERE \"from\" = 'en'",
    );
    let row = &rows[0];
    assert_eq!(row["provider"], "local", "{rows}");
    let tokens = row["output_tokens"].as_u64().unwrap();
    assert!((1..=48).contains(&tokens), "{rows}");
    assert!(
        row["response_blake3"].is_string(),
        "the answer is an object of the store"
    );
    let file = ws.dir.path().join("data/toy/tasks/fr.toml");
    match row["output_blake3"].as_str() {
        Some(hash) => assert_eq!(
            blake3::hash(&std::fs::read(&file).unwrap()).to_hex().as_str(),
            hash
        ),
        None => {
            assert!(row["reason"].as_str().unwrap().contains("JSON"), "{rows}");
            assert!(!file.exists(), "no text, no file");
        }
    }
}
