//! The viewer's HTML: escaping, links with query strings, and the page shell.
//!
//! Every page is one self-contained document: inline CSS, no script, nothing loaded from
//! outside the viewer (the response headers say so too, see [`super::headers`]). Every text
//! that comes from the store goes through [`escape`], in element content and in attribute
//! values alike; every link is built by [`href`], which percent-encodes its parameters.

use std::fmt::Write as _;

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
    fn a_page_escapes_its_title_and_marks_its_section() {
        let html = page("<x>", Nav::Matrix, "<p>body</p>");
        assert!(html.contains("<title>&lt;x&gt; · ml2b</title>"));
        assert!(html.contains("<a href=\"/matrix\" class=\"on\">Matrix</a>"));
        assert!(!html.contains("<script"));
    }
}
