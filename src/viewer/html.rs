//! The viewer's HTML: escaping, links with query strings, and the page shell.
//!
//! Every page is one self-contained document: inline CSS, no script, nothing loaded from
//! outside the viewer (the response headers say so too, see `super::headers`). Pages are
//! rendered from the templates of [`super::templates`], which escape every text that comes
//! from the store (as [`escape`] does), in element content and in attribute values alike;
//! every link is built by [`href`], which percent-encodes its parameters.
//!
//! A page stays small whatever a model wrote: a code, response or output shows its first
//! [`SHOWN_LINES`] lines (and at most [`SHOWN_BYTES`]), then a note saying how much is left
//! out, with a link to the whole object (`/object/<blake3>`) where there is one ([`cut`]).

use minijinja::{Error, Value, context};

use super::templates::{render, safe};
use crate::store::Hash;

/// The sections of the navigation bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nav {
    Runs,
    Leaderboard,
    Matrix,
    Tables,
    Searches,
    Trajectories,
    /// A page of no section (an event, an error).
    None,
    /// A page of the annotation server (`ml2b annotate serve`), which has its own bar.
    Annotate,
}

const NAV: [(Nav, &str, &str); 6] = [
    (Nav::Runs, "/", "Runs"),
    (Nav::Leaderboard, "/leaderboard", "Leaderboard"),
    (Nav::Matrix, "/matrix", "Matrix"),
    (Nav::Tables, "/tables", "Tables"),
    (Nav::Searches, "/search", "Searches"),
    (Nav::Trajectories, "/trajectory", "Trajectories"),
];

/// `text` safe in element content and in a quoted attribute value (the report's escaping).
pub(crate) use crate::report::html_escape as escape;

/// `path` with `params` as its query string (empty values left out), HTML-escaped for an
/// `href` attribute.
pub(crate) fn href(path: &str, params: &[(&str, &str)]) -> String {
    let query: Vec<String> = params
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    if query.is_empty() {
        escape(path)
    } else {
        escape(&format!("{path}?{}", query.join("&")))
    }
}

pub(crate) use crate::report::url_encode as encode;

/// A whole page: the shell around `body` (already HTML), with `title` escaped.
pub(crate) fn page(title: &str, nav: Nav, body: &str) -> Result<String, Error> {
    let (sections, badge) = match nav {
        Nav::Annotate => (
            vec![context! { path => "/", name => "Translations", on => false }],
            "annotation: writes ratings, nothing else",
        ),
        _ => (
            NAV.iter()
                .map(|&(section, path, name)| context! { path, name, on => section == nav })
                .collect(),
            "read-only",
        ),
    };
    render(
        "page.html",
        context! { title, nav => sections, badge, body => safe(body.to_string()) },
    )
}

/// A `<dl>` of name, value pairs (a text value is escaped, a safe one is not), under an
/// `<h2>` `heading` if one is given.
pub(crate) fn fields<'a>(
    heading: Option<&str>,
    pairs: impl IntoIterator<Item = (&'a str, Value)>,
) -> Result<String, Error> {
    let fields: Vec<_> = pairs
        .into_iter()
        .map(|(name, value)| context! { name, value })
        .collect();
    render("fields.html", context! { heading, fields })
}

/// A float as the tables print it, or a grey dash.
pub(crate) fn number(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.4}"),
        Some(v) => v.to_string(),
        None => "<span class=\"null\">—</span>".into(),
    }
}

/// Text in a `<pre>`, escaped; a grey dash when empty.
pub(crate) fn pre(text: &str) -> Result<String, Error> {
    render("pre.html", context! { text })
}

/// Lines of one text a page shows.
pub(crate) const SHOWN_LINES: usize = 1000;
/// Bytes of one text a page shows (a text of few, long lines).
pub(crate) const SHOWN_BYTES: usize = 128 << 10;

/// What a page shows of a text: its first [`SHOWN_LINES`] lines, at most [`SHOWN_BYTES`]
/// (cut at a character), and what was left out.
pub(crate) struct Cut<'a> {
    pub shown: &'a str,
    /// Lines and bytes of the whole text, when some were left out.
    pub whole: Option<(usize, usize)>,
}

/// Cuts `text` for a page (see [`Cut`]).
pub(crate) fn cut(text: &str) -> Cut<'_> {
    let mut end = text
        .match_indices('\n')
        .nth(SHOWN_LINES - 1)
        .map_or(text.len(), |(i, _)| i + 1)
        .min(SHOWN_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let whole = (end < text.len()).then(|| (text.lines().count(), text.len()));
    Cut {
        shown: &text[..end],
        whole,
    }
}

impl Cut<'_> {
    /// The note under a cut text: how much is shown, and a link to `object`, the whole
    /// (else the command that prints it); nothing when the text is whole.
    pub(crate) fn note(&self, object: Option<&Hash>, command: &str) -> Result<String, Error> {
        let Some((lines, bytes)) = self.whole else {
            return Ok(String::new());
        };
        let shown = self.shown.lines().count();
        let object = object.map(Hash::to_hex);
        render("cut.html", context! { shown, lines, bytes, object, command })
    }
}

/// [`pre`] of the [`cut`] of `text`, with its note.
pub(crate) fn pre_cut(text: &str, object: Option<&Hash>, command: &str) -> Result<String, Error> {
    let cut = cut(text);
    Ok(pre(cut.shown)? + &cut.note(object, command)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_content_and_attributes() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("Қазақ"), "Қазақ");
    }

    #[test]
    fn links_encode_their_parameters() {
        assert_eq!(
            href(
                "/",
                &[
                    ("model", "gpt-4o+aide"),
                    ("language", ""),
                    ("competition", "a b&c")
                ]
            ),
            "/?model=gpt-4o%2Baide&amp;competition=a%20b%26c"
        );
        assert_eq!(href("/matrix", &[]), "/matrix");
        assert_eq!(encode("ü/.."), "%C3%BC%2F..");
    }

    #[test]
    fn a_long_text_is_cut_at_its_lines_or_bytes_with_a_note() {
        let long: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let c = cut(&long);
        assert_eq!(c.shown.lines().count(), SHOWN_LINES);
        assert!(c.shown.ends_with("line 1000\n"));
        assert_eq!(c.whole, Some((5000, long.len())));
        let hash = Hash::of(long.as_bytes());
        let note = c.note(Some(&hash), "").unwrap();
        assert!(note.contains("Lines 1–1000 of 5000"), "{note}");
        assert!(
            note.contains(&format!("href=\"/object/{}\"", hash.to_hex())),
            "{note}"
        );
        // One long line of multi-byte characters: cut by bytes, at a character.
        let wide = "Қ".repeat(SHOWN_BYTES);
        let c = cut(&wide);
        assert!(c.shown.len() <= SHOWN_BYTES && c.whole == Some((1, wide.len())));
        assert!(
            c.note(None, "ml2b show X --raw term_out")
                .unwrap()
                .contains("<code>ml2b show X --raw term_out</code>")
        );
        let short = "a\nb\n";
        assert_eq!(cut(short).shown, short);
        assert_eq!(cut(short).note(None, "x").unwrap(), "");
    }

    #[test]
    fn a_page_escapes_its_title_and_marks_its_section() {
        let html = page("<x>", Nav::Matrix, "<p>body</p>").unwrap();
        assert!(html.contains("<title>&lt;x&gt; · ml2b</title>"));
        assert!(html.contains("<a href=\"/matrix\" class=\"on\">Matrix</a>"));
        assert!(!html.contains("<script"));
    }
}
