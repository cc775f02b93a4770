//! The viewer's HTML templates: one minijinja environment, loaded once, that every page
//! renders through.
//!
//! The templates are the files under `src/viewer/templates/`, compiled in with
//! `include_str!`: `page.html` is the shell around every page (with the inline
//! `viewer.css`); the others are a page's body (`run.html`, `event.html`, `runs.html`,
//! `matrix.html`, `tables.html`, `table.html`, `searches.html`, `search.html`,
//! `leaderboard.html`, `trajectories.html`, `trajectory.html`,
//! `error.html`; the annotation page's `annotate.html` and `rate.html`), an event's detail (`attempt.html`, `analysis.html`, `translation.html`)
//! or a part several pages share (`header.html`, `links.html`, `fields.html`, `pre.html`,
//! `cut.html`, `grid.html`, `listing.html`, and the `event_link` macro of `macros.html`).
//!
//! Invariants (the environment is [`crate::report::templates::environment`]'s):
//! - **Every value is autoescaped**, exactly as [`super::html::escape`] escapes, so a text
//!   from the store can never become markup, in element content or in a quoted attribute.
//! - **Safe strings only for fragments ml2b produced**: another template's output, a link
//!   built by [`super::html::href`] (already escaped), the highlighter's lines
//!   ([`super::highlight`]). Nothing read from the store is ever marked safe as is.

use std::sync::LazyLock;

use minijinja::Environment;

pub(crate) use crate::report::templates::safe;

/// The viewer's templates, parsed on first use.
static TEMPLATES: LazyLock<Environment<'static>> = LazyLock::new(|| {
    crate::report::templates::environment(&[
        ("page.html", include_str!("templates/page.html")),
        ("viewer.css", include_str!("templates/viewer.css")),
        ("fields.html", include_str!("templates/fields.html")),
        ("pre.html", include_str!("templates/pre.html")),
        ("cut.html", include_str!("templates/cut.html")),
        ("error.html", include_str!("templates/error.html")),
        ("grid.html", include_str!("templates/grid.html")),
        ("listing.html", include_str!("templates/listing.html")),
        ("matrix.html", include_str!("templates/matrix.html")),
        ("runs.html", include_str!("templates/runs.html")),
        ("tables.html", include_str!("templates/tables.html")),
        ("table.html", include_str!("templates/table.html")),
        ("searches.html", include_str!("templates/searches.html")),
        ("search.html", include_str!("templates/search.html")),
        ("macros.html", include_str!("templates/macros.html")),
        ("header.html", include_str!("templates/header.html")),
        ("links.html", include_str!("templates/links.html")),
        ("event.html", include_str!("templates/event.html")),
        ("attempt.html", include_str!("templates/attempt.html")),
        ("analysis.html", include_str!("templates/analysis.html")),
        ("translation.html", include_str!("templates/translation.html")),
        ("run.html", include_str!("templates/run.html")),
        ("annotate.html", include_str!("templates/annotate.html")),
        ("rate.html", include_str!("templates/rate.html")),
        ("leaderboard.html", include_str!("templates/leaderboard.html")),
        ("trajectories.html", include_str!("templates/trajectories.html")),
        ("trajectory.html", include_str!("templates/trajectory.html")),
    ])
});

/// Renders the template `name` with `context` (an error converts into a
/// [`super::ViewError`]).
pub(crate) fn render(name: &str, context: impl serde::Serialize) -> Result<String, minijinja::Error> {
    crate::report::templates::render(&TEMPLATES, name, context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        let names: Vec<&str> = TEMPLATES.templates().map(|(name, _)| name).collect();
        assert_eq!(names.len(), 27, "{names:?}");
    }
}
