//! The function contract of each format.
//!
//! MODULAR_PREDICT needs `train`, `prepare_val` and `predict`; MONO_PREDICT needs
//! `train_and_predict`. A name counts as defined when a kept top-level statement binds it: a
//! `def` (decorated or not, possibly inside a top-level `if`), a class, or an import. The harness
//! calls `train(data)`, `prepare_val(train_output, X_val)`, `predict(train_output, pvo)` and
//! `train_and_predict(data, X_val)` with positional arguments; `run(data, X_val)`, when a
//! modular submission defines it, is checked the same way.
//!
//! Invariants: `MissingFunction` is reported on line 1, once per missing name; a
//! `SignatureMismatch` is reported on the `def` line when the function cannot accept exactly that
//! many positional arguments: more required positional parameters, fewer positional parameters
//! and no `*args`, or a keyword-only parameter without a default. Classes and imported names are
//! not checked (their signature is not visible here).

use tree_sitter::Node;

use super::loader::Kept;
use super::syntax::{line, named, text};
use super::{Finding, FindingKind, Format};

/// The contract functions of `format` with the number of positional arguments the harness passes,
/// and whether the function is required.
pub(super) fn contract(format: Format) -> &'static [(&'static str, usize, bool)] {
    match format {
        Format::Modular => &[
            ("train", 1, true),
            ("prepare_val", 2, true),
            ("predict", 2, true),
            ("run", 2, false),
        ],
        Format::Mono => &[("train_and_predict", 2, true)],
    }
}

pub(super) fn check(kept: &Kept, src: &str, format: Format, out: &mut Vec<Finding>) {
    for &(name, arity, required) in contract(format) {
        match kept.functions.get(name) {
            Some(def) => {
                if let Some(problem) = Signature::of(*def, src).problem(arity) {
                    out.push(Finding::new(
                        FindingKind::SignatureMismatch,
                        line(*def),
                        format!("`{name}` is called with {arity} positional argument(s) but {problem}"),
                    ));
                }
            }
            None if required && !kept.other_names.contains(name) => out.push(Finding::new(
                FindingKind::MissingFunction,
                1,
                format!(
                    "no top-level `{name}` function, which {} needs",
                    format_name(format)
                ),
            )),
            None => {}
        }
    }
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Modular => "MODULAR_PREDICT",
        Format::Mono => "MONO_PREDICT",
    }
}

/// The parameter shape of a `def`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Signature {
    /// Positional parameters (positional-only and positional-or-keyword), in order.
    pub positional: Vec<String>,
    /// How many of them have no default.
    pub required: usize,
    pub varargs: bool,
    /// Keyword-only parameters without a default.
    pub required_keyword_only: Vec<String>,
}

impl Signature {
    pub(super) fn of(def: Node, src: &str) -> Signature {
        let mut sig = Signature::default();
        let Some(params) = def.child_by_field_name("parameters") else {
            return sig;
        };
        let mut keyword_only = false;
        for p in named(params) {
            let (name, has_default, kind) = match p.kind() {
                "identifier" => (text(p, src).to_string(), false, "plain"),
                "typed_parameter" => match named(p).first() {
                    Some(inner) if inner.kind() == "list_splat_pattern" => (String::new(), false, "varargs"),
                    Some(inner) if inner.kind() == "dictionary_splat_pattern" => {
                        (String::new(), false, "kwargs")
                    }
                    Some(inner) => (text(*inner, src).to_string(), false, "plain"),
                    None => continue,
                },
                "default_parameter" | "typed_default_parameter" => {
                    let name = p.child_by_field_name("name").map(|n| text(n, src)).unwrap_or("");
                    (name.to_string(), true, "plain")
                }
                "list_splat_pattern" => (String::new(), false, "varargs"),
                "dictionary_splat_pattern" => (String::new(), false, "kwargs"),
                "keyword_separator" => (String::new(), false, "star"),
                _ => continue,
            };
            match kind {
                "varargs" => {
                    sig.varargs = true;
                    keyword_only = true;
                }
                "star" => keyword_only = true,
                "kwargs" => {}
                _ if keyword_only => {
                    if !has_default {
                        sig.required_keyword_only.push(name);
                    }
                }
                _ => {
                    if !has_default {
                        sig.required += 1;
                    }
                    sig.positional.push(name);
                }
            }
        }
        sig
    }

    /// Why a call with `arity` positional arguments fails, if it does.
    pub(super) fn problem(&self, arity: usize) -> Option<String> {
        if self.required > arity {
            Some(format!("it requires {} positional parameter(s)", self.required))
        } else if self.positional.len() < arity && !self.varargs {
            Some(format!("it accepts only {}", self.positional.len()))
        } else if !self.required_keyword_only.is_empty() {
            Some(format!(
                "keyword-only `{}` has no default",
                self.required_keyword_only.join("`, `")
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FindingKind, Format, check};

    fn found(src: &str, format: Format) -> Vec<(FindingKind, usize)> {
        check(src, format)
            .into_iter()
            .filter(|f| {
                matches!(
                    f.kind,
                    FindingKind::MissingFunction | FindingKind::SignatureMismatch
                )
            })
            .map(|f| (f.kind, f.line))
            .collect()
    }

    #[test]
    fn modular_needs_three_functions() {
        let src = "def train(data):\n    return 1\n";
        assert_eq!(
            found(src, Format::Modular),
            vec![(FindingKind::MissingFunction, 1); 2]
        );
        assert_eq!(found(src, Format::Mono), vec![(FindingKind::MissingFunction, 1)]);
    }

    #[test]
    fn definitions_in_if_blocks_imports_and_decorators_count() {
        let src = "from helpers import predict\nimport functools\nif True:\n    def train(data):\n        \
                   return 1\n@functools.lru_cache\ndef prepare_val(a, b):\n    return b\n";
        assert_eq!(found(src, Format::Modular), vec![]);
    }

    #[test]
    fn main_guard_definitions_and_dropped_assignments_do_not_count() {
        let src = "def _impl(data, X_val):\n    return X_val\ntrain_and_predict = _impl\n\
                   if __name__ == '__main__':\n    def train_and_predict(data, X_val):\n        return X_val\n";
        assert_eq!(found(src, Format::Mono), vec![(FindingKind::MissingFunction, 1)]);
    }

    #[test]
    fn arity_rules() {
        let ok = "def train(data, seed=0):\n    pass\ndef prepare_val(*args):\n    pass\n\
                  def predict(a, b, *rest, verbose=False, **kw):\n    pass\ndef run(data, X_val, /):\n    pass\n";
        assert_eq!(found(ok, Format::Modular), vec![]);
        let bad = "def train(data, target):\n    pass\ndef prepare_val(X_val):\n    pass\n\
                   def predict(a, b, *, mode):\n    pass\ndef run(data, X_val, extra):\n    pass\n";
        assert_eq!(
            found(bad, Format::Modular),
            vec![
                (FindingKind::SignatureMismatch, 1),
                (FindingKind::SignatureMismatch, 3),
                (FindingKind::SignatureMismatch, 5),
                (FindingKind::SignatureMismatch, 7)
            ]
        );
    }

    #[test]
    fn typed_and_starred_typed_parameters() {
        let src = "def train_and_predict(data: 'pd.DataFrame', *rest: object) -> None:\n    pass\n";
        assert_eq!(found(src, Format::Mono), vec![]);
    }
}
