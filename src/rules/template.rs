//! Message templates: `{op.name} reads {upcast.from} widened to {upcast.to}`. `{{` is a literal brace. A
//! placeholder the lookup cannot fill stays as written (pack loading already rejected unknown names).

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
