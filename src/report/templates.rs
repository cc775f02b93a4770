//! HTML templates: one minijinja environment per renderer, every value autoescaped.
//!
//! The report's pages and the viewer's are minijinja templates compiled into the binary
//! (`include_str!` of the files under `src/report/templates/` and
//! `src/viewer/templates/`). [`environment`] builds an environment over such a set with
//! the house settings:
//!
//! - **Every value is escaped.** Templates named `*.html` autoescape; the formatter
//!   escapes a string exactly as [`escape`] does (`&#39;` for `'`, nothing else beyond
//!   `& < > "`), so a page is byte-identical to the one the hand-written HTML made. The one
//!   way around it is a safe string (`Value::from_safe_string`, [`safe`]), used only for
//!   fragments ml2b itself rendered (another template's output, highlighted code).
//! - **Templates read as they render.** A block tag on its own line leaves no line behind
//!   (`trim_blocks`, `lstrip_blocks`), and a file's final newline is kept, so a template
//!   ending without one renders a fragment without one.
//! - **Compiled in.** A template that does not parse is logged and left out; rendering it
//!   is then an error ("template not found"), and each renderer's tests render them all.

use minijinja::{AutoEscape, Environment, Error, Output, State, Value, escape_formatter};

/// `text` safe in element content and in a quoted attribute value.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            _ => out.push(c),
        }
    }
    out
}

/// An environment over `templates` (name, source), see the module docs.
pub(crate) fn environment(templates: &[(&'static str, &'static str)]) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_keep_trailing_newline(true);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_formatter(format);
    for &(name, source) in templates {
        if let Err(e) = env.add_template(name, source) {
            tracing::error!("template {name} does not parse: {e}");
        }
    }
    env
}

/// Renders `name` of `env` with `context`.
pub(crate) fn render(
    env: &Environment<'static>,
    name: &str,
    context: impl serde::Serialize,
) -> Result<String, Error> {
    env.get_template(name)?.render(context)
}

/// An HTML fragment ml2b rendered, to be written into a template as is.
pub(crate) fn safe(html: String) -> Value {
    Value::from_safe_string(html)
}

/// Writes a value as [`escape`] would in HTML templates; elsewhere as minijinja does.
fn format(out: &mut Output<'_>, state: &State<'_, '_>, value: &Value) -> Result<(), Error> {
    match value.as_str() {
        Some(text) if state.auto_escape() == AutoEscape::Html && !value.is_safe() => {
            out.write_str(&escape(text)).map_err(Error::from)
        }
        _ => escape_formatter(out, state, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_as_escape_does_and_safe_strings_are_not() {
        let env = environment(&[("t.html", "{{ a }}|{{ b }}|{{ n }}\n")]);
        let html = render(
            &env,
            "t.html",
            minijinja::context! { a => "<a href=\"x\">'&'/</a>", b => safe("<b>".into()), n => 3 },
        )
        .unwrap();
        assert_eq!(html, format!("{}|<b>|3\n", escape("<a href=\"x\">'&'/</a>")));
    }
}
