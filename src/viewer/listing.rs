//! A code listing: highlighted lines with their numbers, each finding of the static checks
//! in a row of its own right under the line it is at.
//!
//! ```text
//! <tr class="line flagged" id="L12" data-line="12"> number | code </tr>
//! <tr class="finding" data-line="12" data-kind="leakage"> ⚠ | kind: message </tr>
//! ```
//! A finding at line 0 or past the end (a finding about the whole file) is listed above the
//! code. A long code is cut ([`super::html::cut`]): its first lines are listed, a note links
//! to the whole object, and the findings on the lines left out are listed above the code
//! with their line numbers.

use minijinja::context;

use super::ViewError;
use super::highlight::highlight;
use super::html::cut;
use super::templates::{render, safe};
use crate::record::Finding;
use crate::store::Hash;

/// The listing of `code` (the object `object`) with `findings` inline
/// (`templates/listing.html`).
pub(crate) fn listing(code: &str, findings: &[Finding], object: &Hash) -> Result<String, ViewError> {
    let cut = cut(code);
    let lines = highlight(cut.shown);
    let above: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.line == 0 || f.line > lines.len())
        .collect();
    let lines: Vec<_> = lines
        .into_iter()
        .enumerate()
        .map(|(i, html)| {
            let n = i + 1;
            let here: Vec<&Finding> = findings.iter().filter(|f| f.line == n).collect();
            // The highlighter's lines are HTML it escaped itself.
            context! { n, html => safe(html), findings => here }
        })
        .collect();
    let note = safe(cut.note(Some(object), "")?);
    Ok(render("listing.html", context! { above, lines, note })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(line: usize) -> Finding {
        Finding {
            kind: "leakage".into(),
            line,
            message: "fit on <validation>".into(),
        }
    }

    #[test]
    fn a_finding_follows_its_line() {
        let code = "import x\nscaler.fit(X_val)\nprint(1)\n";
        let html = listing(code, &[finding(2), finding(0)], &Hash::of(code.as_bytes())).unwrap();
        let line2 = html.find("id=\"L2\"").unwrap();
        let note = html.find("<tr class=\"finding\" data-line=\"2\"").unwrap();
        let line3 = html.find("id=\"L3\"").unwrap();
        assert!(line2 < note && note < line3, "{html}");
        assert!(html.contains("fit on &lt;validation&gt;"));
        assert!(
            html.starts_with("<ul class=\"findings\">"),
            "line 0 is about the file"
        );
        assert_eq!(html.matches("class=\"line").count(), 3);
        assert!(!html.contains("class=\"cut\""), "a short code is whole");
    }

    #[test]
    fn a_long_code_lists_its_first_lines_and_the_findings_past_them() {
        let code: String = (0..100_000).map(|i| format!("x{i} = {i}\n")).collect();
        let hash = Hash::of(code.as_bytes());
        let html = listing(&code, &[finding(3), finding(50_000)], &hash).unwrap();
        assert_eq!(
            html.matches("class=\"line").count(),
            super::super::html::SHOWN_LINES
        );
        assert!(
            html.contains("<li class=\"finding\">line 50000, <strong>leakage"),
            "{}",
            &html[..500]
        );
        assert!(html.contains(&format!("/object/{}", hash.to_hex())));
        assert!(html.len() < 200_000, "{} bytes", html.len());
    }
}
