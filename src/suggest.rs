//! Did-you-mean: the known name closest to a mistyped one (subcommands, pack names, rule codes and ids, config
//! keys), when it is close enough to be what was meant.

/// The candidate closest to `word` (case-insensitive optimal string alignment distance: a transposition counts
/// one), if it is at most a third of the word's length away (at least one edit, so `rulez` → `rules`, `MO01` →
/// `MO010`, but `notes` is no `rules`).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    let limit = (w.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(&w, &c.to_lowercase()), c))
        .filter(|&(d, c)| d <= limit && !c.eq_ignore_ascii_case(word))
        // ties: the candidate as long as the word (`rulez` is `rules` mistyped, not `rule` extended)
        .min_by_key(|&(d, c)| (d, c.chars().count().abs_diff(w.chars().count()), c))
        .map(|(_, c)| c)
}

/// `did you mean `X`?`, or nothing.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    closest(word, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_only() {
        let cmds = ["check", "compare", "rules", "explain", "test", "compile"];
        assert_eq!(closest("rulez", cmds), Some("rules"));
        assert_eq!(closest("rulez", ["rule", "rules"]), Some("rules"));
        assert_eq!(closest("explian", cmds), Some("explain"));
        assert_eq!(closest("Comple", cmds), Some("compile"));
        assert_eq!(closest("notes", cmds), None);
        assert_eq!(closest("dump", cmds), None);
        assert_eq!(closest("rules", cmds), None, "the word itself is not a suggestion");
        assert_eq!(closest("MO01", ["MO010", "MO021", "HL001"]), Some("MO010"));
        assert_eq!(closest("selct", ["select", "ignore", "severity"]), Some("select"));
    }
}
