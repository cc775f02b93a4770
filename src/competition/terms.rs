//! Domain-term density: the share of an English description's words that belong to one of
//! the competition's domain terms (a task characteristic the analysis correlates with
//! language gaps).
//!
//! Words are maximal runs of alphanumeric characters, lowercased. A term (one or more words)
//! matches wherever its words occur consecutively; a word covered by several matches counts
//! once. Density = covered words / all words (0 for a text without words).

/// The words of `text`, lowercased.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The density of `terms` in `text`.
pub fn density(text: &str, terms: &[String]) -> f64 {
    let words = words(text);
    if words.is_empty() {
        return 0.0;
    }
    let mut covered = vec![false; words.len()];
    for term in terms {
        let term = self::words(term);
        if term.is_empty() || term.len() > words.len() {
            continue;
        }
        for start in 0..=words.len() - term.len() {
            if words[start..start + term.len()] == term[..] {
                covered[start..start + term.len()].fill(true);
            }
        }
    }
    covered.iter().filter(|&&c| c).count() as f64 / words.len() as f64
}

/// Terms that never occur in `text`: a manifest listing one is wrong.
pub fn missing<'a>(text: &str, terms: &'a [String]) -> Vec<&'a str> {
    terms
        .iter()
        .filter(|t| density(text, std::slice::from_ref(t)) == 0.0)
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_covered_words_once() {
        let terms = vec!["sale price".to_string(), "price".to_string()];
        // 8 words; "sale price" covers 2, "price" again covers 1 of them and 1 more.
        assert_eq!(
            density("The sale price and the price, per house!", &terms),
            3.0 / 8.0
        );
        assert_eq!(density("", &terms), 0.0);
        assert_eq!(missing("no match here", &terms), ["sale price", "price"]);
    }
}
