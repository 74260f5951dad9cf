//! The metadata JSON the runtime stores with functions, methods and fields:
//! `{"type_schema":"<schema JSON as an escaped string>", ...user keys}`, byte for byte as C++
//! `reflection::Metadata::ToJSON` writes it.

/// A user metadata value (C++ allows int, bool and string).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetadataValue {
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(&'static str),
}

/// Escapes `s` as a JSON string literal, with C++ `EscapeStringJSON`'s rules (`/` becomes `\/`).
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `{"type_schema":"..."}` followed by the user's keys in order.
pub fn metadata_json(type_schema: &str, extra: &[(&str, MetadataValue)]) -> String {
    metadata_json_with(type_schema, "", extra)
}

/// [`metadata_json`] with `keys` (`,"key":value...`, already JSON) after the `type_schema`.
pub fn metadata_json_with(
    type_schema: &str,
    keys: &str,
    extra: &[(&str, MetadataValue)],
) -> String {
    let mut out = format!("{{\"type_schema\":{}{keys}", json_string(type_schema));
    for (key, value) in extra {
        out.push(',');
        out.push_str(&json_string(key));
        out.push(':');
        match value {
            MetadataValue::Int(v) => out.push_str(&v.to_string()),
            MetadataValue::Bool(v) => out.push_str(if *v { "true" } else { "false" }),
            MetadataValue::Str(v) => out.push_str(&json_string(v)),
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cpp_form() {
        assert_eq!(
            metadata_json(
                r#"{"type":"int"}"#,
                &[
                    ("min", MetadataValue::Int(0)),
                    ("tag", MetadataValue::Str("a/b"))
                ]
            ),
            r#"{"type_schema":"{\"type\":\"int\"}","min":0,"tag":"a\/b"}"#
        );
    }
}
