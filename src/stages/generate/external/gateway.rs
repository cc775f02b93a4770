//! The recording model gateway of an external agent's run: an OpenAI- and
//! Anthropic-compatible endpoint that only the agent reaches (through its sandbox's relay,
//! `sandbox::agent`), forwarding each request to the unit's model through the providers
//! and recording every one.
//!
//! ```text
//! POST /v1/chat/completions   OpenAI's protocol  ─┐  the agent's body as it wrote it, but
//! POST /v1/messages           Anthropic's        ─┤  `model` (the unit's model id), sent by
//! GET  /v1/models             the one model      ─┘  Responder::forward: retries, the
//!                                                    model's request limits, cost
//! ```
//!
//! Each request, in the order received (call 0, 1, …):
//! 1. authenticated by the unit's token (`Authorization: Bearer` or `x-api-key`), parsed
//!    (a JSON object), and refused when it asks to stream (the gateway answers whole
//!    responses; `stream: true` gets 400);
//! 2. keyed: blake3 over the model (provider, endpoint, id, identity), the unit, the
//!    protocol, the forwarded body and how many identical bodies the unit sent before it
//!    (the occurrence), so a re-run of the unit (after a crash, or to resume) answers the
//!    same requests from the request cache (`cache/requests/`) without asking the model;
//! 3. refused with 402 once the unit's budget ([`AgentBudget`]: requests, tokens, dollars,
//!    counting cached answers too) is spent — a status no client retries, with a message
//!    saying which limit;
//! 4. answered: from the cache, from a replayed store (a `replay` model: the other store's
//!    `gateway` events of the same sample and agent, matched by the agent's body and its
//!    occurrence; a request it never saw gets 404), or from the model. A model's own
//!    refusal is passed on with its status; retries spent give 502.
//!
//! Every request becomes a [`GatewayCall`] (committed when the unit ends): the agent's
//! body and the response are objects, and the status, tokens, cost and why it was refused
//! are columns. Requests in flight when the budget is reached still complete, so a unit may
//! pass a limit by the requests it had in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::events::{GatewayCall, Generation, Provider};
use crate::log::{EventBody, LogError, StageLog};
use crate::manifest::agents::AgentBudget;
use crate::providers::{Protocol, cost_usd};
use crate::stages::generate::cache;
use crate::stages::requests::Requests;
use crate::store::{Hash, KeyHasher, Store};

/// The largest request body the gateway reads (a long agent history, not axum's 2 MB).
const REQUEST_BYTES: usize = 64 << 20;

/// The gateway of one unit.
pub struct Gateway {
    shared: Arc<Shared>,
}

struct Shared {
    requests: Requests,
    /// The sample's coordinates, for the events.
    sample: Generation,
    agent: String,
    search: Hash,
    budget: AgentBudget,
    token: String,
    replay: Option<Replayed>,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    events: Vec<GatewayCall>,
    /// How many times each (protocol, body) was sent.
    seen: HashMap<Hash, u32>,
    requests: u32,
    tokens: u64,
    usd: f64,
    over_budget: bool,
}

/// The answers a replayed store recorded for this sample and agent: by (protocol, the
/// agent's body's blake3, occurrence), the response object's bytes.
struct Replayed {
    source: Store,
    answers: HashMap<(String, Hash, u32), Hash>,
}

/// What the unit's run asked of the gateway, once it ended.
pub struct Record {
    pub calls: Vec<GatewayCall>,
    pub over_budget: bool,
}

impl Gateway {
    /// The gateway of the unit `search` (`sample` its generate event as planned), asking
    /// `requests`' model within `budget`; `token` is what the agent authenticates with.
    pub fn new(
        requests: Requests,
        sample: Generation,
        agent: &str,
        search: Hash,
        budget: AgentBudget,
        token: String,
    ) -> Result<Self, LogError> {
        let replay = match requests.model.provider {
            Provider::Replay => Some(Replayed::open(&requests, &sample, agent)?),
            _ => None,
        };
        let shared = Shared {
            requests,
            sample,
            agent: agent.to_string(),
            search,
            budget,
            token,
            replay,
            calls: Mutex::new(Calls::default()),
        };
        Ok(Self {
            shared: Arc::new(shared),
        })
    }

    /// The HTTP routes, for `axum::serve`.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .route("/v1/models", get(models))
            .route("/models", get(models))
            .layer(axum::extract::DefaultBodyLimit::max(REQUEST_BYTES))
            .with_state(self.shared.clone())
    }

    /// The calls so far, in the order received.
    pub fn finish(&self) -> Record {
        let mut calls = self.shared.calls.lock().unwrap_or_else(|e| e.into_inner());
        let mut events = std::mem::take(&mut calls.events);
        events.sort_by_key(|c| c.call);
        Record {
            calls: events,
            over_budget: calls.over_budget,
        }
    }
}

impl Replayed {
    fn open(requests: &Requests, sample: &Generation, agent: &str) -> Result<Self, LogError> {
        let source = Store::open(&requests.model.store);
        let mut calls: Vec<GatewayCall> = StageLog::new(&source, GatewayCall::STAGE)?
            .read_events::<GatewayCall>(0)?
            .into_iter()
            .map(|e| e.body)
            .filter(|c| {
                c.model == requests.model.model
                    && c.agent == agent
                    && c.competition == sample.competition
                    && c.language == sample.language
                    && c.format == sample.format
                    && c.seed == sample.seed
            })
            .collect();
        // The latest run of the sample in the other store, in its call order.
        let last = calls.iter().map(|c| c.search).next_back();
        calls.retain(|c| Some(c.search) == last);
        calls.sort_by_key(|c| c.call);
        let mut seen: HashMap<(String, Hash), u32> = HashMap::new();
        let mut answers = HashMap::new();
        for c in calls {
            let n = seen.entry((c.protocol.clone(), c.request_blake3)).or_default();
            if let Some(response) = c.response_blake3 {
                answers.insert((c.protocol.clone(), c.request_blake3, *n), response);
            }
            *n += 1;
        }
        Ok(Self { source, answers })
    }
}

async fn openai(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    s.handle(Protocol::Openai, &headers, body).await
}

async fn anthropic(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    s.handle(Protocol::Anthropic, &headers, body).await
}

async fn models(State(s): State<Arc<Shared>>) -> Response {
    let name = &s.requests.model.name;
    let list = json!({"object": "list", "data": [{"id": name, "object": "model", "owned_by": "ml2b"}]});
    ([(header::CONTENT_TYPE, "application/json")], list.to_string()).into_response()
}

/// How one call ended, before it is recorded.
struct Answer {
    /// The request's cache key, once it had one.
    key: Option<Hash>,
    status: u16,
    body: Vec<u8>,
    refused: Option<String>,
    response: Option<Hash>,
    cached: bool,
    attempts: u32,
    tokens: (u64, u64),
}

impl Answer {
    fn error(protocol: Protocol, status: u16, kind: &str, message: String) -> Self {
        let body = match protocol {
            Protocol::Openai => json!({"error": {"message": message, "type": kind, "code": kind}}),
            Protocol::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
        };
        Self {
            key: None,
            status,
            body: body.to_string().into_bytes(),
            refused: Some(format!("{kind}: {message}")),
            response: None,
            cached: false,
            attempts: 0,
            tokens: (0, 0),
        }
    }
}

impl Shared {
    async fn handle(&self, protocol: Protocol, headers: &HeaderMap, body: Bytes) -> Response {
        let started = Instant::now();
        let call = {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            calls.requests += 1;
            calls.requests - 1
        };
        let request = self.requests.put(body.to_vec()).await;
        let answer = match &request {
            Ok(_) => self.answer(protocol, headers, &body).await,
            Err(e) => Answer::error(protocol, 500, "gateway_error", crate::error::chain(e)),
        };
        let request_blake3 = request.unwrap_or_else(|_| Hash::of(&body));
        self.record(protocol, call, request_blake3, &answer, started);
        let mut response = (
            StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY),
            answer.body,
        )
            .into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        response
    }

    async fn answer(&self, protocol: Protocol, headers: &HeaderMap, body: &[u8]) -> Answer {
        if !self.authenticated(headers) {
            let why = "the request does not carry this run's key (OPENAI_API_KEY / ANTHROPIC_API_KEY)";
            return Answer::error(protocol, 401, "authentication_error", why.into());
        }
        let mut request: serde_json::Map<String, Value> = match serde_json::from_slice(body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Answer::error(
                    protocol,
                    400,
                    "invalid_request_error",
                    "the body is not a JSON object".into(),
                );
            }
        };
        if request.get("stream").and_then(Value::as_bool) == Some(true) {
            let why = "ml2b's gateway answers whole responses: send the request without `stream: true`";
            return Answer::error(protocol, 400, "invalid_request_error", why.into());
        }
        request.insert("model".into(), Value::String(self.requests.model.model.clone()));
        let forwarded = serde_json::to_vec(&request).expect("a JSON value serialises");
        let agents_body = Hash::of(body);
        let (key, occurrence) = self.key(protocol, &forwarded, agents_body);
        let mut answer = self
            .keyed(protocol, &request, forwarded, key, (agents_body, occurrence))
            .await;
        answer.key = Some(key);
        answer
    }

    /// A request's answer once it is keyed.
    async fn keyed(
        &self,
        protocol: Protocol,
        request: &serde_json::Map<String, Value>,
        forwarded: Vec<u8>,
        key: Hash,
        (agents_body, occurrence): (Hash, u32),
    ) -> Answer {
        if let Some(answer) = self.cached(protocol, &key, agents_body, occurrence) {
            return self.spend(answer);
        }
        if let Some(why) = self.over_budget() {
            return Answer::error(protocol, 402, "budget_exceeded", why);
        }
        if self.replay.is_some() {
            let why =
                "the replayed store recorded no answer to this request (the agent asked something else)";
            return Answer::error(protocol, 404, "replay_miss", why.into());
        }
        let tokens = (forwarded.len() as u64).div_ceil(4) + max_tokens(request);
        let store = self.requests.store.clone();
        match self
            .requests
            .responder
            .forward(&store, protocol, forwarded, tokens)
            .await
        {
            Ok(response) => {
                let (s, k, object) = (store, key, response.object);
                let _ = tokio::task::spawn_blocking(move || {
                    cache::record_object(&s, cache::REQUESTS, &k, &object)
                })
                .await;
                self.spend(completed(&response.completion, response.object, false))
            }
            Err(e) => {
                let mut answer = Answer::error(protocol, e.status, "model_error", e.message);
                answer.attempts = e.attempts.len() as u32;
                answer
            }
        }
    }

    fn authenticated(&self, headers: &HeaderMap) -> bool {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let api_key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
        [bearer, api_key]
            .into_iter()
            .flatten()
            .any(|k| k.trim() == self.token)
    }

    /// The request's cache key and its occurrence among the unit's identical bodies.
    fn key(&self, protocol: Protocol, forwarded: &[u8], agents_body: Hash) -> (Hash, u32) {
        let same = {
            let mut k = KeyHasher::new("ml2b gateway body v1");
            k.str(protocol.name()).hash(&agents_body);
            k.finish()
        };
        let occurrence = {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            let n = calls.seen.entry(same).or_default();
            *n += 1;
            *n - 1
        };
        let model = &self.requests.model;
        let mut k = KeyHasher::new("ml2b gateway v1");
        k.str(cache::provider_name(model.provider))
            .str(&model.endpoint)
            .str(&model.model)
            .str(&self.requests.responder.identity())
            .hash(&self.search)
            .str(protocol.name())
            .u64(u64::from(occurrence))
            .bytes(forwarded);
        (k.finish(), occurrence)
    }

    /// The answer the store (or the replayed one) holds already.
    fn cached(&self, protocol: Protocol, key: &Hash, agents_body: Hash, occurrence: u32) -> Option<Answer> {
        let (object, bytes) = match &self.replay {
            Some(r) => {
                let object = *r
                    .answers
                    .get(&(protocol.name().to_string(), agents_body, occurrence))?;
                let bytes = r.source.objects().get(&object).ok()?;
                self.requests.store.objects().put(&bytes).ok()?;
                (object, bytes)
            }
            None => cache::lookup_object(&self.requests.store, cache::REQUESTS, key)?,
        };
        let completion: crate::providers::Completion = serde_json::from_slice(&bytes).ok()?;
        Some(completed(&completion, object, true))
    }

    /// Counts an answer's tokens and cost against the unit's budget.
    fn spend(&self, answer: Answer) -> Answer {
        let model = &self.requests.model;
        let usd = cost_usd(
            answer.tokens.0,
            answer.tokens.1,
            model.usd_per_mtok_input,
            model.usd_per_mtok_output,
        );
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.tokens += answer.tokens.0 + answer.tokens.1;
        calls.usd += usd;
        answer
    }

    /// Which limit of the budget is spent, if one is (this request counted).
    fn over_budget(&self) -> Option<String> {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        let b = &self.budget;
        let why = if b.requests.is_some_and(|max| calls.requests > max) {
            Some(format!(
                "this run's budget of {} requests is spent",
                b.requests.unwrap_or_default()
            ))
        } else if b.tokens.is_some_and(|max| calls.tokens >= max) {
            Some(format!(
                "this run's budget of {} tokens is spent ({} used)",
                b.tokens.unwrap_or_default(),
                calls.tokens
            ))
        } else if b.usd.is_some_and(|max| calls.usd >= max) {
            Some(format!(
                "this run's budget of ${} is spent (${:.4} used)",
                b.usd.unwrap_or_default(),
                calls.usd
            ))
        } else {
            None
        };
        if why.is_some() {
            calls.over_budget = true;
        }
        why
    }

    fn record(&self, protocol: Protocol, call: u32, request_blake3: Hash, a: &Answer, started: Instant) {
        let model = &self.requests.model;
        let g = &self.sample;
        let event = GatewayCall {
            competition: g.competition.clone(),
            language: g.language.clone(),
            model: model.name.clone(),
            format: g.format,
            seed: g.seed,
            agent: self.agent.clone(),
            search: self.search,
            call,
            protocol: protocol.name().into(),
            request_blake3,
            key: a.key,
            response_blake3: a.response,
            status: a.status,
            refused: a.refused.clone(),
            cached: a.cached,
            http_attempts: a.attempts,
            input_tokens: a.tokens.0,
            output_tokens: a.tokens.1,
            cost_usd: cost_usd(
                a.tokens.0,
                a.tokens.1,
                model.usd_per_mtok_input,
                model.usd_per_mtok_output,
            ),
            answer_seconds: started.elapsed().as_secs_f64(),
        };
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.events.push(event);
    }
}

/// The agent's answer from a completion: the raw body the model sent (none for one past
/// the size cap: 502).
fn completed(c: &crate::providers::Completion, object: Hash, cached: bool) -> Answer {
    let (status, body, refused) = match c.too_large {
        Some(limit) => (
            502,
            json!({"error": {"message": format!("the model's answer passed {limit} bytes"), "type": "too_large"}})
                .to_string()
                .into_bytes(),
            Some(format!("too_large: the answer passed {limit} bytes")),
        ),
        None => (200, c.response_json.clone().into_bytes(), None),
    };
    Answer {
        key: None,
        status,
        body,
        refused,
        response: Some(object),
        cached,
        attempts: if cached { 0 } else { c.attempts.len() as u32 },
        tokens: (c.input_tokens, c.output_tokens),
    }
}

/// The answer's token cap the request names (`max_tokens`, `max_completion_tokens`), else
/// 4,096: the budget's estimate of what it may use.
fn max_tokens(request: &serde_json::Map<String, Value>) -> u64 {
    ["max_tokens", "max_completion_tokens"]
        .iter()
        .find_map(|k| request.get(*k).and_then(Value::as_u64))
        .unwrap_or(u64::from(crate::stages::requests::MAX_TOKENS))
}
