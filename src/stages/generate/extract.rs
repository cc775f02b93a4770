//! The code of a model's answer: the Python file to run, cut out of a Markdown response.
//!
//! Line endings are normalised first (CRLF and lone CR become LF). Then:
//!
//! **Fenced.** A fence is a line of three or more backticks or tildes, indented by any
//! amount, with an optional info string whose first word is the block's language (`python`,
//! `py`, `python3` and `py3` count as Python). The block ends at a line of the same
//! character, at least as long, with nothing else on it; a block still open at the end of
//! the response (a truncated answer) runs to the end, less a trailing partial fence line
//! such as a lone `` ` `` or ``` `` ```. Lines of a block indented like its fence (a fence
//! inside a list item) lose that indentation. A backtick fence whose info string holds a
//! backtick is inline code, not a fence.
//!
//! Of several blocks, the one chosen has, in this order of precedence:
//! 1. the most of the required functions defined at its top level (`def name(` at column 0);
//! 2. a Python tag, then no tag, then any other tag (`bash`, `text`, ...);
//! 3. the most bytes;
//! 4. the latest position (a model that corrects itself puts the fix last).
//!
//! Blank blocks are never chosen; if every block is blank the response counts as unfenced.
//!
//! **Unfenced.** The whole response is the code, less leading and trailing runs of lines
//! that are certainly prose. A prose line is blank, starts with a Markdown marker (a list
//! item, `**`, `>`, a stray fence), or starts at column 0 with a letter (any script), has
//! no `=` and does not start with a Python statement keyword. Such a line is either not Python or a bare top-level expression that
//! the harness's loader drops anyway (it keeps imports, definitions, `if` blocks and
//! assignments), so trimming it cannot change what runs. Lines between the first and the
//! last code line are never touched. If nothing but prose is found, the whole text is kept.
//!
//! The code returned has no leading blank lines and ends with exactly one newline.
//!
//! **Too large.** An answer over the model's size cap was not read ([`from_completion`]):
//! it has no code, as a response without any (an empty file, which fails in execute), and
//! says so (`{"how": "too_large", "limit_bytes": …}`).

use serde::{Deserialize, Serialize};

use crate::providers::Completion;

/// Code cut out of a response, and how it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    pub code: String,
    pub how: How,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum How {
    /// From a fenced block: whether the chosen block was tagged as Python, and how many
    /// fenced blocks the response had.
    Fenced { python: bool, blocks: usize },
    /// No usable fenced block: the response itself, less leading and trailing prose.
    Unfenced,
    /// The answer passed the model's cap of `limit_bytes` and was not read: no code.
    TooLarge { limit_bytes: u64 },
}

/// The code of a recorded answer: [`extract_code`] of its text, or none when it was too
/// large to read.
pub fn from_completion(completion: &Completion, required: &[&str]) -> Extracted {
    match completion.too_large {
        Some(limit_bytes) => Extracted {
            code: finish(""),
            how: How::TooLarge { limit_bytes },
        },
        None => extract_code(&completion.text, required),
    }
}

/// The code of `response`; `required` are the function names the submission must define
/// (e.g. `Mode::functions()`), used to choose among several blocks.
pub fn extract_code(response: &str, required: &[&str]) -> Extracted {
    let text = response.replace("\r\n", "\n").replace('\r', "\n");
    let blocks = fenced_blocks(&text);
    let chosen = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.body.trim().is_empty())
        .max_by_key(|(i, b)| (defined(&b.body, required), b.rank(), b.body.len(), *i));
    match chosen {
        Some((_, block)) => Extracted {
            code: finish(&block.body),
            how: How::Fenced {
                python: block.rank() == 2,
                blocks: blocks.len(),
            },
        },
        None => Extracted {
            code: finish(&trim_prose(&text)),
            how: How::Unfenced,
        },
    }
}

struct Block {
    /// The first word of the info string, lowercased; empty when untagged.
    language: String,
    body: String,
}

impl Block {
    /// 2 for Python, 1 for untagged, 0 for another language.
    fn rank(&self) -> u8 {
        match self.language.as_str() {
            "python" | "py" | "python3" | "py3" => 2,
            "" => 1,
            _ => 0,
        }
    }
}

struct Fence {
    marker: char,
    len: usize,
    indent: usize,
}

fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(Fence, Block)> = None;
    for line in text.split('\n') {
        match open.take() {
            None => open = opening(line),
            Some((fence, block)) if closes(line, &fence) => blocks.push(block),
            Some((fence, mut block)) => {
                block.body.push_str(dedent(line, fence.indent));
                block.body.push('\n');
                open = Some((fence, block));
            }
        }
    }
    if let Some((_, mut block)) = open {
        drop_partial_fence(&mut block.body);
        blocks.push(block);
    }
    blocks
}

fn opening(line: &str) -> Option<(Fence, Block)> {
    let rest = line.trim_start_matches([' ', '\t']);
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == marker).count();
    let info = rest[len..].trim();
    if len < 3 || (marker == '`' && info.contains('`')) {
        return None;
    }
    let language = info.split_whitespace().next().unwrap_or("");
    let language = language.trim_start_matches(['{', '.']).to_lowercase();
    let fence = Fence {
        marker,
        len,
        indent: line.len() - rest.len(),
    };
    Some((
        fence,
        Block {
            language,
            body: String::new(),
        },
    ))
}

fn closes(line: &str, fence: &Fence) -> bool {
    let rest = line.trim_start_matches([' ', '\t']);
    let len = rest.chars().take_while(|c| *c == fence.marker).count();
    len >= fence.len && rest[len..].trim().is_empty()
}

/// Removes up to `indent` leading spaces or tabs.
fn dedent(line: &str, indent: usize) -> &str {
    let strip = line
        .bytes()
        .take(indent)
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    &line[strip..]
}

/// A truncated answer may end inside its closing fence: drop a last line of only `` ` ``/`~`.
fn drop_partial_fence(body: &mut String) {
    let trimmed = body.trim_end();
    let last = trimmed.rsplit('\n').next().unwrap_or("");
    let partial = !last.trim().is_empty() && last.trim().chars().all(|c| c == '`' || c == '~');
    if partial {
        let cut = trimmed.len() - last.len();
        body.truncate(cut);
    }
}

/// How many of `required` are defined at the top level of `code`.
fn defined(code: &str, required: &[&str]) -> usize {
    required
        .iter()
        .filter(|name| {
            code.lines().any(|line| {
                let def = line.strip_prefix("async ").unwrap_or(line);
                def.strip_prefix("def ")
                    .and_then(|rest| rest.strip_prefix(**name))
                    .is_some_and(|rest| rest.trim_start().starts_with('('))
            })
        })
        .count()
}

/// Python statements that can begin a line with a letter and hold no `=`.
const KEYWORDS: [&str; 24] = [
    "import", "from", "def", "class", "async", "if", "elif", "else", "try", "except", "finally", "with",
    "for", "while", "return", "raise", "assert", "global", "nonlocal", "pass", "del", "break", "continue",
    "yield",
];

fn is_prose(line: &str) -> bool {
    let line = line.trim_end();
    if line.is_empty() {
        return true;
    }
    let markdown = ["- ", "* ", "**", "> ", "```", "~~~"]
        .iter()
        .any(|m| line.starts_with(m))
        || numbered(line);
    if markdown {
        return true;
    }
    let starts_with_letter = line.chars().next().is_some_and(char::is_alphabetic);
    let first_word: String = line
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    starts_with_letter && !line.contains('=') && !KEYWORDS.contains(&first_word.as_str())
}

/// A Markdown numbered list item: `1. ` or `1) `.
fn numbered(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

fn trim_prose(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let first = lines.iter().position(|l| !is_prose(l));
    let last = lines.iter().rposition(|l| !is_prose(l));
    match (first, last) {
        (Some(first), Some(last)) => lines[first..=last].join("\n"),
        _ => text.to_string(),
    }
}

/// No leading blank lines, no trailing whitespace, one final newline.
fn finish(code: &str) -> String {
    let start = code
        .split_inclusive('\n')
        .take_while(|l| l.trim().is_empty())
        .map(str::len)
        .sum::<usize>();
    let mut out = code[start..].trim_end().to_string();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULAR: [&str; 3] = ["train", "prepare_val", "predict"];
    const MONO: [&str; 1] = ["train_and_predict"];

    const SOLUTION: &str = "\
import pandas as pd


def train_and_predict(data, X_val):
    return data['y'].mean() + 0 * X_val.index.to_numpy()
";

    fn fenced(python: bool, blocks: usize) -> How {
        How::Fenced { python, blocks }
    }

    fn extracted(code: &str, how: How) -> Extracted {
        Extracted {
            code: code.into(),
            how,
        }
    }

    #[test]
    fn one_python_fence() {
        let response = format!("```python\n{SOLUTION}```\n");
        let got = extract_code(&response, &MONO);
        assert_eq!(got, extracted(SOLUTION, fenced(true, 1)));
    }

    #[test]
    fn py_tag_counts_as_python() {
        let got = extract_code(&format!("```py\n{SOLUTION}```"), &MONO);
        assert_eq!(got, extracted(SOLUTION, fenced(true, 1)));
    }

    #[test]
    fn fence_without_language() {
        let got = extract_code(&format!("```\n{SOLUTION}```"), &MONO);
        assert_eq!(got, extracted(SOLUTION, fenced(false, 1)));
    }

    #[test]
    fn explanations_before_and_after_are_dropped() {
        let response = format!(
            "Here is my solution. It uses the mean.\n\n```python\n{SOLUTION}```\n\n\
             **Notes:**\n- it is simple\n- it is fast\n"
        );
        let got = extract_code(&response, &MONO);
        assert_eq!(got, extracted(SOLUTION, fenced(true, 1)));
    }

    #[test]
    fn of_several_blocks_the_one_defining_the_required_functions_wins() {
        let full = "import numpy as np\n\ndef train(data):\n    return 1\n\n\
                    def prepare_val(train_output, X_val):\n    return X_val\n\n\
                    def predict(train_output, prepare_val_output):\n    return np.zeros(len(prepare_val_output))\n";
        let response = format!(
            "Install first:\n```bash\npip install lightgbm numpy pandas scikit-learn xgboost catboost scipy\n```\n\
             Solution:\n```python\n{full}```\nUsage, as a long example that never defines the functions:\n\
             ```python\n# {pad}\nprint(run(data, X_val))\n```\n",
            pad = "x".repeat(400)
        );
        let got = extract_code(&response, &MODULAR);
        assert_eq!(got, extracted(full, fenced(true, 3)));
    }

    #[test]
    fn a_python_block_beats_an_untagged_one_defining_as_much() {
        let response = format!("```\n{SOLUTION}# and a longer copy\n```\n```python\n{SOLUTION}```");
        let got = extract_code(&response, &MONO);
        assert_eq!(got, extracted(SOLUTION, fenced(true, 2)));
    }

    #[test]
    fn without_required_definitions_the_longest_python_block_wins() {
        let response = "```text\nlong long long long long long long output\n```\n\
                        ```python\nx = 1\n```\n```python\nimport os\nx = 2\n```\n";
        let got = extract_code(response, &MONO);
        assert_eq!(got, extracted("import os\nx = 2\n", fenced(true, 3)));
    }

    #[test]
    fn the_later_of_two_equal_blocks_wins() {
        let first = SOLUTION.replace("mean()", "max()");
        let second = SOLUTION.replace("mean()", "min()");
        let response = format!("```python\n{first}```\nOops, fixed:\n```python\n{second}```");
        let got = extract_code(&response, &MONO);
        assert_eq!(got.code, second);
    }

    #[test]
    fn crlf_line_endings() {
        let response = format!(
            "Solution:\r\n```python\r\n{}```\r\n",
            SOLUTION.replace('\n', "\r\n")
        );
        let got = extract_code(&response, &MONO);
        assert_eq!(got, extracted(SOLUTION, fenced(true, 1)));
    }

    #[test]
    fn unterminated_final_fence_of_a_truncated_response() {
        let cut =
            "```python\nimport pandas as pd\n\ndef train_and_predict(data, X_val):\n    return data\n``";
        let got = extract_code(cut, &MONO);
        let code = "import pandas as pd\n\ndef train_and_predict(data, X_val):\n    return data\n";
        assert_eq!(got, extracted(code, fenced(true, 1)));
        let mid_line = "```python\nimport pandas as pd\ndef train_and_predict(data, X_v";
        let got = extract_code(mid_line, &MONO);
        assert_eq!(got.code, "import pandas as pd\ndef train_and_predict(data, X_v\n");
    }

    #[test]
    fn no_fence_at_all_trims_only_prose_around_the_code() {
        let response = format!(
            "Sure! Here is the complete solution:\n\n{SOLUTION}\n\nThis trains nothing and predicts the mean.\n"
        );
        let got = extract_code(&response, &MONO);
        assert_eq!(got, extracted(SOLUTION, How::Unfenced));
    }

    #[test]
    fn no_fence_keeps_code_like_lines_and_non_latin_prose_is_trimmed() {
        let response =
            "以下是完整的解决方案：\nSEED = 0\nimport numpy as np\n\ndef f():\n    return SEED\n)\nЭто всё.";
        let got = extract_code(response, &MONO);
        assert_eq!(
            got.code,
            "SEED = 0\nimport numpy as np\n\ndef f():\n    return SEED\n)\n"
        );
        assert_eq!(got.how, How::Unfenced);
    }

    #[test]
    fn no_fence_and_only_prose_keeps_everything() {
        let got = extract_code("I cannot solve this task.\n", &MONO);
        assert_eq!(got, extracted("I cannot solve this task.\n", How::Unfenced));
    }

    #[test]
    fn fence_inside_a_list_item_is_dedented() {
        let response =
            "1. The code:\n   ```python\n   def train_and_predict(data, X_val):\n       return 0\n   ```\n";
        let got = extract_code(response, &MONO);
        assert_eq!(got.code, "def train_and_predict(data, X_val):\n    return 0\n");
    }

    #[test]
    fn inner_fences_and_longer_fences() {
        // A four-backtick fence holds a three-backtick line; a tagged line never closes.
        let body =
            "DOC = '''\n```python\nexample\n```\n'''\ndef train_and_predict(data, X_val):\n    return 0\n";
        let got = extract_code(&format!("````python\n{body}````\n"), &MONO);
        assert_eq!(got, extracted(body, fenced(true, 1)));
    }

    #[test]
    fn inline_triple_backticks_are_not_a_fence() {
        let response =
            "```python code``` is inline code:\ndef train_and_predict(data, X_val):\n    return 0\n";
        let got = extract_code(response, &MONO);
        assert_eq!(got.how, How::Unfenced);
        assert_eq!(got.code, "def train_and_predict(data, X_val):\n    return 0\n");
    }

    #[test]
    fn blank_blocks_are_ignored() {
        let response = format!("```python\n\n```\n{SOLUTION}");
        let got = extract_code(&response, &MONO);
        assert_eq!(got, extracted(SOLUTION, How::Unfenced));
    }
}
