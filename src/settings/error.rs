//! What stops a lint run before any work because of what it was told: an unknown target, a selector or severity
//! override that names no rule. (Their codes are the command line's `hlolint::usage::*`: to a user of the command
//! line they are usage errors.)

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SettingsError {
    #[error("unknown target `{target}`")]
    #[diagnostic(code(hlolint::usage::target), help("targets: {}", known.join(", ")))]
    UnknownTarget { target: String, known: Vec<&'static str> },
    #[error("no rule matches `{pattern}` in the selected packs nor in any built-in pack")]
    #[diagnostic(code(hlolint::usage::rule))]
    NoSuchRule {
        pattern: String,
        /// The closest code or id, and where the rules are listed.
        #[help]
        help: String,
    },
    #[error("`--select {patterns}` leaves no rule to run: it names only rules of packs this run does not use")]
    #[diagnostic(code(hlolint::usage::rule))]
    NothingSelected {
        patterns: String,
        /// Which packs hold the rules named, and how to run them.
        #[help]
        help: String,
    },
    #[error("--severity takes RULE=LEVEL, got `{got}`")]
    #[diagnostic(code(hlolint::usage::severity))]
    SeveritySyntax { got: String },
    #[error("unknown severity `{level}`")]
    #[diagnostic(code(hlolint::usage::severity), help("levels: error, warning, info, off"))]
    UnknownSeverity { level: String },
    #[error("--severity: no rule matches `{pattern}` in the selected packs nor in any built-in pack")]
    #[diagnostic(code(hlolint::usage::rule))]
    SeverityNoRule {
        pattern: String,
        #[help]
        help: String,
    },
}

/// `did you mean `MO010`? ` before `then` when a code or id of `rules` is close to `word`.
pub fn rule_hint<'r>(word: &str, rules: impl IntoIterator<Item = &'r crate::rules::Rule>, then: &str) -> String {
    let names = rules.into_iter().flat_map(|r| r.code.as_deref().into_iter().chain([r.id.as_str()]));
    match crate::suggest::hint(word, names) {
        Some(h) => format!("{h} {then}"),
        None => then.to_string(),
    }
}
