//! What is wrong with a rule pack, as a miette diagnostic pointing into its YAML: [`RuleError`], and [`Cx`], the
//! place in a pack that compiling is at (a path into the YAML), which errors about that place are made from.

use super::model::Origin;
use super::position::{Part, Positions, YamlPath};
use miette::{Diagnostic, NamedSource, SourceSpan};

/// What is wrong with a rule pack: the cause, for callers and tests; the message, span and help for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleErrorKind {
    /// The pack file exists but cannot be read.
    Unreadable,
    /// Neither a built-in pack nor a file by that name.
    UnknownPack,
    /// `extends` leads back to a pack already on the chain.
    ExtendsCycle,
    /// Not YAML, or YAML that is not a pack (unknown keys, wrong types, nesting too deep).
    Syntax,
    /// Two rules of a run share an id or a code.
    Duplicate,
    /// A malformed id, an unknown severity, or `select`/`analysis` both or neither given.
    RuleShape,
    /// A layer that does not exist, or none.
    Layer,
    /// A matcher names what its layers do not have (op, dtype, memory space, attribute, metadata, relation key)
    /// or holds a bad regex or glob.
    Matcher,
    /// An unknown analysis, or options, captures, `when:` values or layers the analysis does not have.
    Analysis,
    /// A message, label or help template names what the rule does not capture.
    Template,
}

/// A problem in a rule pack.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(code(hlolint::rules::invalid))]
pub struct RuleError {
    pub kind: RuleErrorKind,
    pub message: String,
    #[source_code]
    pub src: Option<NamedSource<String>>,
    #[label("{label}")]
    pub span: Option<SourceSpan>,
    pub label: String,
    #[help]
    pub help: Option<String>,
}

impl RuleError {
    /// With a help text.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn plain(kind: RuleErrorKind, message: impl Into<String>, help: Option<String>) -> Self {
        RuleError { kind, message: message.into(), src: None, span: None, label: String::new(), help }
    }
}

/// A pack's text and where it came from.
#[derive(Clone, Copy)]
pub struct Source<'t> {
    pub origin: &'t Origin,
    pub text: &'t str,
}

impl Source<'_> {
    pub fn named(&self) -> NamedSource<String> {
        NamedSource::new(self.origin.display(), self.text.to_string())
    }
}

/// A place in a pack: the node at a path. Errors made here point at that node's value or key.
#[derive(Clone)]
pub struct Cx<'t> {
    pub src: Source<'t>,
    pub path: YamlPath,
}

impl<'t> Cx<'t> {
    pub fn root(src: Source<'t>) -> Self {
        Cx { src, path: YamlPath::default() }
    }

    /// The value under key `k` of this mapping.
    pub fn at(&self, k: &str) -> Cx<'t> {
        Cx { src: self.src, path: self.path.key(k) }
    }

    /// Item `i` of this sequence.
    pub fn item(&self, i: usize) -> Cx<'t> {
        Cx { src: self.src, path: self.path.item(i) }
    }

    /// Item `i` of a value written as one item or a list (`op: dot`, `op: [dot, convert]`).
    pub fn one_of(&self, i: usize, many: bool) -> Cx<'t> {
        if many {
            self.item(i)
        } else {
            self.clone()
        }
    }

    fn make(&self, kind: RuleErrorKind, span: Option<(usize, usize)>, message: String, label: &str) -> RuleError {
        RuleError {
            kind,
            message,
            src: Some(self.src.named()),
            span: span.map(Into::into),
            label: label.into(),
            help: None,
        }
    }

    /// An error about this value.
    pub fn err(&self, kind: RuleErrorKind, message: String, label: &str) -> RuleError {
        self.make(kind, Positions::of(self.src.text).span(&self.path, Part::Value), message, label)
    }

    /// An error about the key of this value (the last step of the path).
    pub fn err_key(&self, kind: RuleErrorKind, message: String, label: &str) -> RuleError {
        self.make(kind, Positions::of(self.src.text).span(&self.path, Part::Key), message, label)
    }

    /// An error about `needle` inside this value (a placeholder in a template), else about the whole value.
    pub fn err_within(&self, kind: RuleErrorKind, needle: &str, message: String, label: &str) -> RuleError {
        let whole = Positions::of(self.src.text).span(&self.path, Part::Value);
        let inside = whole.and_then(|(s, n)| {
            let k = self.src.text.get(s..s + n)?.find(needle)?;
            Some((s + k, needle.len().max(1)))
        });
        self.make(kind, inside.or(whole), message, label)
    }
}
