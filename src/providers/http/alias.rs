//! Whether a provider's model id names a fixed snapshot or an alias that may move.
//!
//! Providers pin a snapshot by putting its date (or a version number) in the id; an id
//! without one is an alias the provider may point at a newer model at any time, so results
//! obtained with it are not reproducible. The rule, on the id's last `/`-separated part cut
//! into tokens at `-`, `@` and `:`:
//!
//! - any token `latest` → floating (`claude-3-5-sonnet-latest`, `chatgpt-4o-latest`);
//! - a token `YYYYMMDD` → pinned (`claude-sonnet-4-20250514`, `claude-3-5-sonnet@20240620`,
//!   `anthropic.claude-3-5-sonnet-20240620-v1:0`);
//! - three consecutive tokens `YYYY`, `MM`, `DD` → pinned (`gpt-4.1-2025-04-14`);
//! - a last token of 4 digits (`MMDD` or `YYMM`) or 3 digits (a version) → pinned
//!   (`gpt-4-0613`, `mistral-large-2411`, `gemini-1.5-pro-002`);
//! - anything else → floating (`gpt-4.1`, `qwen/qwen-2.5-coder-32b-instruct`, `local`).
//!
//! Local ids (llama.cpp, Ollama tags) come out floating: nothing in the id pins the weights.

/// Whether `provider_model_id` may name a different model tomorrow (see the module doc).
pub fn is_floating_alias(provider_model_id: &str) -> bool {
    let last = provider_model_id.rsplit('/').next().unwrap_or_default();
    let tokens: Vec<&str> = last.split(['-', '@', ':']).collect();
    if tokens.iter().any(|t| t.eq_ignore_ascii_case("latest")) {
        return true;
    }
    let pinned = tokens.iter().any(|t| is_yyyymmdd(t))
        || tokens.windows(3).any(|w| is_date(w[0], w[1], w[2]))
        || tokens.last().is_some_and(|t| is_digits(t, 4) || is_digits(t, 3));
    !pinned
}

fn is_digits(token: &str, len: usize) -> bool {
    token.len() == len && token.bytes().all(|b| b.is_ascii_digit())
}

fn is_yyyymmdd(token: &str) -> bool {
    is_digits(token, 8) && is_date(&token[..4], &token[4..6], &token[6..])
}

fn is_date(year: &str, month: &str, day: &str) -> bool {
    let in_range = |s: &str, len, lo, hi| is_digits(s, len) && (lo..=hi).contains(&num(s));
    in_range(year, 4, 2000, 2099) && in_range(month, 2, 1, 12) && in_range(day, 2, 1, 31)
}

fn num(digits: &str) -> u32 {
    digits.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::is_floating_alias;

    #[test]
    fn dated_ids_are_pinned_and_bare_names_float() {
        let pinned = [
            "gpt-4.1-2025-04-14",
            "gpt-4o-mini-2024-07-18",
            "claude-sonnet-4-20250514",
            "claude-3-5-sonnet@20240620",
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "gpt-4-0613",
            "mistral-large-2411",
            "gemini-1.5-pro-002",
        ];
        let floating = [
            "gpt-4.1",
            "gpt-4.1-mini",
            "claude-3-5-sonnet-latest",
            "chatgpt-4o-latest",
            "qwen/qwen-2.5-coder-32b-instruct",
            "qwen2.5-coder:32b",
            "local",
            "gpt-3.5-turbo-16k",
            "",
        ];
        for id in pinned {
            assert!(!is_floating_alias(id), "{id} should be pinned");
        }
        for id in floating {
            assert!(is_floating_alias(id), "{id} should float");
        }
    }
}
