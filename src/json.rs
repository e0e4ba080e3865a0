//! Strict JSON in, canonical JSON out.
//!
//! Every byte that enters arbiter as JSON (an action on the command line, a
//! line of stdin, a line of an import file, a stored event) is parsed here,
//! and every byte that is hashed or stored is produced here.
//!
//! Strict parsing refuses what would make a record ambiguous or unauditable:
//! duplicate keys (which value counts?), floating-point numbers (no exact
//! canonical form across tools), integers outside +-2^53 (jq would round
//! them), control characters in strings (jq and RFC 8785 escape them
//! differently, so `jq -cS | b3sum` would not reproduce the hash), and
//! oversized strings, arrays or nesting.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::limits::{MAX_ARRAY_ITEMS, MAX_DEPTH, MAX_SAFE_INTEGER, MAX_STRING_BYTES};

/// Why a piece of JSON was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct JsonError(pub String);

/// Parses `text` as one JSON value under the strict rules above.
pub fn parse_strict(text: &str) -> Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict { depth: 0 }.deserialize(&mut de).map_err(|e| JsonError(format!("malformed JSON: {e}")))?;
    de.end().map_err(|e| JsonError(format!("malformed JSON: trailing characters ({e})")))?;
    Ok(value)
}

/// RFC 8785 canonical bytes of a value (sorted keys, no white space).
///
/// Values reaching this point passed `parse_strict` or were built by arbiter
/// from integers and strings, so serialisation cannot fail; if it ever did
/// that would be a bug, and we say so rather than store something else.
pub fn canonical(value: &Value) -> Vec<u8> {
    serde_jcs::to_vec(value).expect("canonical JSON of a strict value")
}

struct Strict {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&v) {
            return Err(E::custom(format!("integer {v} is outside +-2^53")));
        }
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        if v > MAX_SAFE_INTEGER as u64 {
            return Err(E::custom(format!("integer {v} is outside +-2^53")));
        }
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Err(E::custom(format!(
            "floating-point number {v} is not allowed in an event (use integers, fixed-point where a rule needs fractions)"
        )))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        check_string(v).map_err(E::custom)?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        check_string(&v).map_err(E::custom)?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(de::Error::custom(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict { depth })? {
            if items.len() == MAX_ARRAY_ITEMS {
                return Err(de::Error::custom(format!("array longer than {MAX_ARRAY_ITEMS} items")));
            }
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(de::Error::custom(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            check_string(&key).map_err(de::Error::custom)?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            let value = map.next_value_seed(Strict { depth })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

fn check_string(s: &str) -> Result<(), String> {
    if s.len() > MAX_STRING_BYTES {
        return Err(format!("string longer than {MAX_STRING_BYTES} bytes"));
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!(
            "control character U+{:04X} in a string (not allowed, so that jq and RFC 8785 agree byte for byte)",
            c as u32
        ));
    }
    Ok(())
}

/// Checks a value that did not come through `parse_strict` (one built in
/// code) against the same rules, by round-tripping it through the parser.
pub fn check_value(value: &Value) -> Result<(), JsonError> {
    let text = serde_json::to_string(value).map_err(|e| JsonError(e.to_string()))?;
    parse_strict(&text).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_makes_a_record_ambiguous() {
        assert!(parse_strict(r#"{"a":1,"a":2}"#).unwrap_err().0.contains("duplicate key"));
        assert!(parse_strict(r#"{"a":1.5}"#).unwrap_err().0.contains("floating-point"));
        assert!(parse_strict(r#"{"a":1e3}"#).unwrap_err().0.contains("floating-point"));
        assert!(parse_strict(r#"{"a":9007199254740992}"#).unwrap_err().0.contains("2^53"));
        assert!(parse_strict(r#"{"a":-9007199254740992}"#).unwrap_err().0.contains("2^53"));
        assert!(parse_strict("{\"a\":\"x\\ny\"}").unwrap_err().0.contains("control"));
        assert!(parse_strict(r#"{"a":1} x"#).unwrap_err().0.contains("trailing"));
        assert!(parse_strict(r#"{"a":"#).unwrap_err().0.contains("malformed"));
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse_strict(&deep).unwrap_err().0.contains("nesting"));
    }

    #[test]
    fn canonical_sorts_keys_and_drops_white_space() {
        let v = parse_strict(r#"{ "b": [1, -2], "a": {"z": "é", "y": null} }"#).unwrap();
        assert_eq!(String::from_utf8(canonical(&v)).unwrap(), r#"{"a":{"y":null,"z":"é"},"b":[1,-2]}"#);
        assert_eq!(parse_strict("9007199254740991").unwrap(), Value::from(MAX_SAFE_INTEGER));
    }
}
