//! The viewer's HTML: escaping, links with query strings, and the page shell.
//!
//! Every page is one self-contained document: inline CSS, no script, nothing loaded from
//! outside the viewer (the response headers say so too, see [`super::headers`]). Every text
//! that comes from the store goes through [`escape`], in element content and in attribute
//! values alike; every link is built by [`href`], which percent-encodes its parameters.
//!
//! A page stays small whatever a model wrote: a code, response or output shows its first
//! [`SHOWN_LINES`] lines (and at most [`SHOWN_BYTES`]), then a note saying how much is left
//! out, with a link to the whole object (`/object/<blake3>`) where there is one ([`cut`]).

use std::fmt::Write as _;

use crate::store::Hash;

/// The sections of the navigation bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nav {
    Runs,
    Matrix,
    Tables,
    Searches,
    /// A page of no section (an event, an error).
    None,
}

const NAV: [(Nav, &str, &str); 4] = [
    (Nav::Runs, "/", "Runs"),
    (Nav::Matrix, "/matrix", "Matrix"),
    (Nav::Tables, "/tables", "Tables"),
    (Nav::Searches, "/search", "Searches"),
];

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1f2328;background:#fff;font-size:14px}
header{background:#24292f;color:#fff;padding:8px 24px;display:flex;gap:20px;align-items:baseline}
header a{color:#d0d7de;text-decoration:none}header a.on{color:#fff;font-weight:600}
header .ro{margin-left:auto;color:#8c959f;font-size:12px}
main{padding:16px 24px}
h1{font-size:22px;margin:4px 0 12px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #d0d7de}
a{color:#0969da}
table.data{border-collapse:collapse;margin:8px 0}
table.data th,table.data td{border:1px solid #d0d7de;padding:3px 8px;white-space:nowrap}
table.data thead th{background:#f6f8fa;position:sticky;top:0}
table.data tbody tr:nth-child(even){background:#fafbfc}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.null{color:#8c959f}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:8px 0}
form.filters label{display:flex;flex-direction:column;font-size:12px;color:#57606a}
.pager a{margin-right:12px}
dl.fields{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}
dl.fields dt{color:#57606a}dl.fields dd{margin:0;overflow-wrap:anywhere}
.side{display:flex;gap:16px}.side>div{flex:1;min-width:0}
pre{background:#f6f8fa;border:1px solid #d0d7de;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:480px;overflow:auto}
table.code{border-collapse:collapse;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px;width:100%}
table.code td{padding:0 8px;vertical-align:top}
table.code td.ln{color:#8c959f;text-align:right;user-select:none;width:1%}
table.code td.ln a{color:inherit;text-decoration:none}
table.code td.src{white-space:pre-wrap}
table.code tr.flagged td.src{background:#fff8c5}
table.code tr.finding td{background:#ffebe9;color:#82071e;font-family:system-ui,sans-serif;padding:2px 8px}
.kw{color:#cf222e}.bi{color:#8250df}.fn{color:#6639ba;font-weight:600}.st{color:#0a3069}
.cm{color:#6e7781;font-style:italic}.nu{color:#0550ae}
.ok{color:#1a7f37}.bad{color:#cf222e}
p.cut{background:#fff8c5;border:1px solid #d4a72c;padding:4px 8px}
ul.tree{list-style:none;padding-left:20px;border-left:1px dotted #d0d7de}
ul.tree li{margin:6px 0}
.node{border:1px solid #d0d7de;border-radius:4px;padding:4px 8px;display:inline-block;max-width:1100px}
.node.buggy{border-color:#cf222e}.node.best{border-color:#1a7f37;border-width:2px}
table.matrix td a{display:block;color:#1f2328;text-decoration:none}
img.plot{max-width:100%;border:1px solid #d0d7de;margin:8px 0}
";

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

/// Percent-encodes everything but RFC 3986's unreserved characters (so `+` stays `+` when
/// decoded, and a space is `%20`).
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A whole page: the shell around `body` (already HTML), with `title` escaped.
pub(crate) fn page(title: &str, nav: Nav, body: &str) -> String {
    let title = escape(title);
    let mut links = String::new();
    for (section, path, name) in NAV {
        let class = if section == nav { " class=\"on\"" } else { "" };
        let _ = write!(links, "<a href=\"{path}\"{class}>{name}</a>");
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · ml2b</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <header><strong>ml2b</strong>{links}<span class=\"ro\">read-only</span></header>\n\
         <main>\n{body}</main>\n</body>\n</html>\n"
    )
}

/// A `<dl>` of name, value pairs; the values are HTML already.
pub(crate) fn fields<'a>(pairs: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let mut out = String::from("<dl class=\"fields\">");
    for (name, value) in pairs {
        let _ = write!(out, "<dt>{}</dt><dd>{value}</dd>", escape(name));
    }
    out + "</dl>\n"
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
pub(crate) fn pre(text: &str) -> String {
    if text.is_empty() {
        "<p class=\"null\">(empty)</p>\n".into()
    } else {
        format!("<pre>{}</pre>\n", escape(text))
    }
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
    pub(crate) fn note(&self, object: Option<&Hash>, command: &str) -> String {
        let Some((lines, bytes)) = self.whole else {
            return String::new();
        };
        let shown = self.shown.lines().count();
        let whole = match object {
            Some(hash) => format!("<a href=\"/object/{}\">the whole object</a>", hash.to_hex()),
            None => format!("the whole text: <code>{}</code>", escape(command)),
        };
        format!("<p class=\"cut\">Lines 1–{shown} of {lines} ({bytes} bytes) are shown; {whole}.</p>\n")
    }
}

/// [`pre`] of the [`cut`] of `text`, with its note.
pub(crate) fn pre_cut(text: &str, object: Option<&Hash>, command: &str) -> String {
    let cut = cut(text);
    pre(cut.shown) + &cut.note(object, command)
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
        let note = c.note(Some(&hash), "");
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
                .contains("<code>ml2b show X --raw term_out</code>")
        );
        let short = "a\nb\n";
        assert_eq!(cut(short).shown, short);
        assert_eq!(cut(short).note(None, "x"), "");
    }

    #[test]
    fn a_page_escapes_its_title_and_marks_its_section() {
        let html = page("<x>", Nav::Matrix, "<p>body</p>");
        assert!(html.contains("<title>&lt;x&gt; · ml2b</title>"));
        assert!(html.contains("<a href=\"/matrix\" class=\"on\">Matrix</a>"));
        assert!(!html.contains("<script"));
    }
}
