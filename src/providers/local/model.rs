//! The `local` provider's engine: a GGUF model run in-process by llama.cpp (through
//! `llama-cpp-2`, CPU only), so the pipeline can be demonstrated end to end offline.
//!
//! One call of [`LocalModel::generate`] renders the messages with the chat template stored in
//! the GGUF, tokenizes, evaluates the prompt in one batch, then samples until an
//! end-of-generation token or `max_tokens`. Each call gets a fresh context sized to
//! `prompt + max_tokens`, so calls share no state and the same inputs give the same text.
//!
//! Invariants:
//! - Reproducible: `seed: None` is greedy; `Some(seed)` samples with [`SAMPLING`] and a
//!   fixed-seed generator. Same model file, inputs and build → same text (llama.cpp's CPU
//!   kernels split work by rows, so the thread count does not change the sums).
//! - A prompt that does not fit the model's training context together with `max_tokens` is
//!   an error ([`LocalError::PromptTooLong`]), never silently truncated: a truncated task
//!   description would be a different benchmark item.
//! - One generation at a time per model (a mutex): llama.cpp already uses every core for one
//!   generation, and creating two contexts of one model at once is unsound in llama.cpp.
//!   `LocalModel` is `Send + Sync`; share it in an `Arc`. `generate` is blocking CPU work
//!   (seconds): async callers run it in `tokio::task::spawn_blocking`.
//! - llama.cpp's own logging goes to `tracing`, target `llama-cpp-2` (model loading is at
//!   INFO, so it is hidden unless asked for, e.g. `RUST_LOG=llama-cpp-2=info`).

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{
    ApplyChatTemplateError, ChatTemplateError, DecodeError, LlamaContextLoadError, LlamaCppError,
    LlamaModelLoadError, LogOptions, NewLlamaChatMessageError,
};

/// The sampler settings used when a seed is given.
pub struct Sampling {
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
}

/// llama.cpp's defaults for top-k and top-p, with a temperature for code.
pub const SAMPLING: Sampling = Sampling {
    temperature: 0.7,
    top_k: 40,
    top_p: 0.95,
};

/// What one generation produced.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalCompletion {
    pub text: String,
    /// Tokens of the rendered prompt (template included).
    pub input_tokens: u64,
    /// Tokens of `text` (the end-of-generation token is not counted).
    pub output_tokens: u64,
    /// `output_tokens` over the sampling loop's wall time (prompt evaluation excluded).
    pub tokens_per_second: f64,
    pub finish: Finish,
}

/// Why generation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The model produced an end-of-generation token.
    EndOfText,
    /// `max_tokens` were generated.
    MaxTokens,
}

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("initializing llama.cpp: {0}")]
    Backend(String),
    #[error("loading the GGUF model {}", path.display())]
    Load {
        path: PathBuf,
        #[source]
        source: LlamaModelLoadError,
    },
    #[error("the GGUF model {} has no chat template (`tokenizer.chat_template`)", path.display())]
    NoChatTemplate {
        path: PathBuf,
        #[source]
        source: ChatTemplateError,
    },
    #[error("message {index} (role `{role}`) contains a NUL byte")]
    Message {
        index: usize,
        role: String,
        #[source]
        source: NewLlamaChatMessageError,
    },
    #[error("applying the chat template of {}", path.display())]
    Template {
        path: PathBuf,
        #[source]
        source: ApplyChatTemplateError,
    },
    #[error(
        "the prompt is {prompt_tokens} tokens; with max_tokens {max_tokens} it exceeds the \
         model's context of {context} tokens (prompts are not truncated)"
    )]
    PromptTooLong {
        prompt_tokens: usize,
        max_tokens: u32,
        context: u32,
    },
    #[error("creating a llama.cpp context of {n_ctx} tokens")]
    Context {
        n_ctx: u32,
        #[source]
        source: LlamaContextLoadError,
    },
    #[error("evaluating {tokens} tokens at position {position}")]
    Decode {
        tokens: usize,
        position: usize,
        #[source]
        source: DecodeError,
    },
}

/// A loaded GGUF model.
pub struct LocalModel {
    model: LlamaModel,
    template: LlamaChatTemplate,
    path: PathBuf,
    threads: i32,
    /// Serializes generations (see the module docs).
    busy: Mutex<()>,
}

/// The process-wide llama.cpp backend, with its logs sent to `tracing`.
fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, LlamaCppError>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init()
        })
        .as_ref()
        .map_err(|e| LocalError::Backend(e.to_string()))
}

impl LocalModel {
    /// Loads (memory-maps) the GGUF at `path` and its chat template. Blocking.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, LocalError> {
        let path = path.as_ref().to_path_buf();
        let model = LlamaModel::load_from_file(backend()?, &path, &LlamaModelParams::default()).map_err(
            |source| LocalError::Load {
                path: path.clone(),
                source,
            },
        )?;
        let template = model
            .chat_template(None)
            .map_err(|source| LocalError::NoChatTemplate {
                path: path.clone(),
                source,
            })?;
        // Half the logical cores: about the physical ones, and room for the pipeline's other
        // work. llama.cpp's threads spin at barriers, so one that loses its core stalls all:
        // on a busy 2-core machine 1 thread gave 65 tokens/s and 2 threads 4-15.
        let threads = std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1));
        Ok(Self {
            model,
            template,
            path,
            threads: i32::try_from(threads).unwrap_or(i32::MAX),
            busy: Mutex::new(()),
        })
    }

    /// Uses `threads` CPU threads per generation instead of half the available cores.
    #[must_use]
    pub fn with_threads(mut self, threads: NonZeroUsize) -> Self {
        self.threads = i32::try_from(threads.get()).unwrap_or(i32::MAX);
        self
    }

    /// The model's training context: the most `prompt + max_tokens` can be.
    pub fn context_limit(&self) -> u32 {
        self.model.n_ctx_train()
    }

    /// Renders `messages` (role, content) with the model's chat template, adding the opening
    /// of the assistant's turn.
    pub fn render<R: AsRef<str>, C: AsRef<str>>(&self, messages: &[(R, C)]) -> Result<String, LocalError> {
        let chat = messages
            .iter()
            .enumerate()
            .map(|(index, (role, content))| {
                let role = role.as_ref().to_string();
                LlamaChatMessage::new(role.clone(), content.as_ref().to_string())
                    .map_err(|source| LocalError::Message { index, role, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|source| LocalError::Template {
                path: self.path.clone(),
                source,
            })
    }

    /// Generates the assistant's reply to `messages`: greedy when `seed` is `None`, else
    /// sampled with [`SAMPLING`] from a generator seeded with `seed`. Blocking CPU work:
    /// from async code, call it inside `spawn_blocking`.
    pub fn generate<R: AsRef<str>, C: AsRef<str>>(
        &self,
        messages: &[(R, C)],
        max_tokens: u32,
        seed: Option<u64>,
    ) -> Result<LocalCompletion, LocalError> {
        let prompt = self.render(messages)?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
        let n_ctx = self.check_fits(tokens.len(), max_tokens)?;
        let _busy = self.busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut ctx = self.context(n_ctx)?;
        decode(&mut ctx, &tokens, 0)?;
        let start = Instant::now();
        let (out, finish) = self.sample_loop(&mut ctx, tokens.len(), max_tokens, sampler(seed))?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(LocalCompletion {
            text: self.detokenize(&out),
            input_tokens: tokens.len() as u64,
            output_tokens: out.len() as u64,
            tokens_per_second: if seconds > 0.0 {
                out.len() as f64 / seconds
            } else {
                0.0
            },
            finish,
        })
    }

    /// The context size for a prompt of `prompt` tokens plus `max_tokens`, or the error.
    fn check_fits(&self, prompt: usize, max_tokens: u32) -> Result<u32, LocalError> {
        let context = self.context_limit();
        let too_long = || LocalError::PromptTooLong {
            prompt_tokens: prompt,
            max_tokens,
            context,
        };
        let need = u32::try_from(prompt)
            .ok()
            .and_then(|p| p.checked_add(max_tokens))
            .ok_or_else(too_long)?;
        if need > context {
            return Err(too_long());
        }
        Ok(need.max(1))
    }

    fn context(&self, n_ctx: u32) -> Result<LlamaContext<'_>, LocalError> {
        // The whole prompt goes in one batch.
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_threads(self.threads)
            .with_n_threads_batch(self.threads);
        self.model
            .new_context(backend()?, params)
            .map_err(|source| LocalError::Context { n_ctx, source })
    }

    /// Samples up to `max_tokens` tokens after a prompt of `pos` tokens.
    fn sample_loop(
        &self,
        ctx: &mut LlamaContext<'_>,
        mut pos: usize,
        max_tokens: u32,
        mut sampler: LlamaSampler,
    ) -> Result<(Vec<LlamaToken>, Finish), LocalError> {
        let vocab = self.model.vocab();
        let mut out = Vec::new();
        // The logits of the last evaluated token are at index -1.
        while out.len() < max_tokens as usize {
            let token = sampler.sample(ctx, -1);
            if vocab.is_eog(token) {
                return Ok((out, Finish::EndOfText));
            }
            out.push(token);
            decode(ctx, &[token], pos)?;
            pos += 1;
        }
        Ok((out, Finish::MaxTokens))
    }

    fn detokenize(&self, tokens: &[LlamaToken]) -> String {
        if tokens.is_empty() {
            return String::new();
        }
        let bytes = self.model.vocab().detokenize(tokens, false, false);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Evaluates `tokens` at positions `pos..`, keeping logits for the last one only.
fn decode(ctx: &mut LlamaContext<'_>, tokens: &[LlamaToken], pos: usize) -> Result<(), LocalError> {
    let err = |source| LocalError::Decode {
        tokens: tokens.len(),
        position: pos,
        source,
    };
    let mut batch = LlamaBatch::new(tokens.len(), 1);
    for (i, &token) in tokens.iter().enumerate() {
        let at = i32::try_from(pos + i).expect("positions fit the context, which is a u32");
        batch
            .add(token, at, &[0], i + 1 == tokens.len())
            .expect("the batch was sized for these tokens");
    }
    ctx.decode(&mut batch).map_err(err)
}

fn sampler(seed: Option<u64>) -> LlamaSampler {
    let Some(seed) = seed else {
        return LlamaSampler::greedy();
    };
    // llama.cpp seeds are 32-bit; fold so that both halves matter.
    let seed = (seed ^ (seed >> 32)) as u32;
    LlamaSampler::chain_simple([
        LlamaSampler::top_k(SAMPLING.top_k),
        LlamaSampler::top_p(SAMPLING.top_p, 1),
        LlamaSampler::temp(SAMPLING.temperature),
        LlamaSampler::dist(seed),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_model_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<LocalModel>();
    }

    #[test]
    fn a_file_that_is_not_gguf_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.gguf");
        std::fs::write(&path, b"not a model").unwrap();
        let err = LocalModel::load(&path).err().expect("must fail");
        assert_eq!(
            err.to_string(),
            format!("loading the GGUF model {}", path.display())
        );
    }
}
