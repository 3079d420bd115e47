//! Message templates: `{op.name} reads {upcast.from} widened to {upcast.to}`. `{{` is a literal brace. A
//! placeholder the lookup cannot fill stays as written ([`check`] rejected unknown names when the pack loaded).

use super::error::{Cx, RuleError, RuleErrorKind};
use super::schema::RuleDef;

/// Placeholders every rule may use.
pub const GLOBALS: &[&str] =
    &["target", "target.source", "native_fp8_on", "kernel", "file", "unit", "rule.id", "rule.code"];

/// The properties of a captured op (`{CAPTURE.PROP}`), besides `attr.KEY` and `metadata.KEY`.
pub const OP_PROPS: &[&str] = &[
    "name",
    "opcode",
    "dtype",
    "from",
    "to",
    "type",
    "function",
    "memory_space",
    "rank",
    "elements",
    "source",
    "custom_call_target",
];

pub fn render(template: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if after.as_bytes().first() == Some(&c) {
            out.push(c as char);
            rest = &after[1..];
            continue;
        }
        if c == b'}' {
            out.push('}');
            rest = after;
            continue;
        }
        match after.find('}') {
            Some(j) => {
                // `{a|b}`: the first alternative with a value (a capture only one `any` branch makes)
                let key = after[..j].trim();
                match key.split('|').find_map(|k| lookup(k.trim())) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('{');
                        out.push_str(&after[..j]);
                        out.push('}');
                    }
                }
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `{name}` and `{name.prop}` references in a template (each alternative of `{a|b}`).
fn refs(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        if let Some(stripped) = after.strip_prefix('{') {
            rest = stripped;
            continue;
        }
        match after.find('}') {
            Some(j) => {
                // `{a|b}`: each alternative must name something
                out.extend(after[..j].split('|').map(str::trim));
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

/// Checks the templates of rule `def` (at `cx`) against what it captures: `captures` (`op` first, and for an
/// analysis rule its `analysis.KEY`s); a label must sit on a capture.
pub fn check(def: &RuleDef, captures: &[String], analysis: bool, cx: &Cx) -> Result<(), RuleError> {
    for (i, l) in def.labels.iter().enumerate() {
        if !captures.iter().any(|c| c == &l.at) {
            return Err(cx
                .at("labels")
                .item(i)
                .at("at")
                .err(
                    RuleErrorKind::Template,
                    format!("label at `{}`: no such capture in rule `{}`", l.at, def.id),
                    "not captured",
                )
                .with_help(format!("captures: {}", captures.join(", "))));
        }
    }
    let mut templates: Vec<(&str, Cx)> = vec![(&def.message, cx.at("message"))];
    templates.extend(def.label.as_deref().map(|t| (t, cx.at("label"))));
    templates.extend(def.help.as_deref().map(|t| (t, cx.at("help"))));
    templates.extend(def.labels.iter().enumerate().map(|(i, l)| (l.text.as_str(), cx.at("labels").item(i).at("text"))));
    for (t, at) in templates {
        for r in refs(t) {
            if !names_something(r, captures, analysis) {
                let mut known: Vec<String> = captures.to_vec();
                known.extend(GLOBALS.iter().map(|s| s.to_string()));
                return Err(at
                    .err_within(
                        RuleErrorKind::Template,
                        r,
                        format!("template `{{{r}}}` in rule `{}` names nothing the rule captures", def.id),
                        "unknown placeholder",
                    )
                    .with_help(format!("placeholders: {}; op properties: {}", known.join(", "), OP_PROPS.join(", "))));
            }
        }
    }
    Ok(())
}

/// Does placeholder `r` name a global, a capture or a capture's property?
fn names_something(r: &str, captures: &[String], analysis: bool) -> bool {
    if GLOBALS.contains(&r) || captures.iter().any(|c| c == r) {
        return true;
    }
    match r.split_once('.') {
        Some(("analysis", _)) => analysis && captures.iter().any(|c| c == r),
        Some((cap, prop)) => {
            captures.iter().any(|c| c == cap)
                && (OP_PROPS.contains(&prop) || prop.starts_with("attr.") || prop.starts_with("metadata."))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn placeholders_escapes_and_unknowns() {
        let look = |k: &str| match k {
            "op.name" => Some("dot.1".to_string()),
            "x" => Some("f8e4m3fn".to_string()),
            _ => None,
        };
        assert_eq!(render("{op.name} reads {x}", &look), "dot.1 reads f8e4m3fn");
        assert_eq!(render("{{literal}} {nope} }", &look), "{literal} {nope} }");
        assert_eq!(render("unclosed {op.name", &look), "unclosed {op.name");
        assert_eq!(render("{nope|x} {x|op.name} {nope|none}", &look), "f8e4m3fn f8e4m3fn {nope|none}");
    }
}
