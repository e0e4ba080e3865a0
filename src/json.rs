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
use std::io::Write;

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
///
/// Written here directly rather than through `serde_jcs` (7x slower: it
/// buffers every member and re-parses every key). The bytes are the same
/// (`tests/props.rs` checks it against `serde_jcs` over random values and
/// every sample): strings and keys are escaped by serde_json's own escaper,
/// which is what `serde_jcs` drives too; integers within +-2^53 print the
/// same in both; and members are sorted by UTF-16 code units as RFC 8785
/// says. A float or a larger integer is never in an event (strict parsing
/// refuses both, and arbiter builds actions from integers), so meeting one
/// here is a bug, said as one: nothing is hashed in another format.
pub fn canonical(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    if write_canonical(&mut out, value).is_err() {
        not_strict(value);
    }
    out
}

/// The bug of [`canonical`]: a value no event may hold.
#[cold]
fn not_strict(value: &Value) -> ! {
    panic!("a float or an integer beyond +-2^53 reached canonical JSON (events hold neither): {value}")
}

/// Appends `canonical(value)` to `out`: a member of an object written
/// member by member (an event's action, `event::canonical_without_hash`).
pub fn write_canonical_to(out: &mut Vec<u8>, value: &Value) {
    if write_canonical(out, value).is_err() {
        not_strict(value);
    }
}

/// A number no event holds (a float, or an integer beyond +-2^53).
struct NotInteger;

fn write_canonical(out: &mut Vec<u8>, value: &Value) -> Result<(), NotInteger> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            // RFC 8785 prints numbers as ES6 does (via f64): the same digits
            // as an integer's own for every integer up to 2^53 in magnitude.
            const EXACT: u64 = 1 << 53;
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) if u <= EXACT => write!(out, "{u}").expect("writing to a Vec cannot fail"),
                (_, Some(i)) if i.unsigned_abs() <= EXACT => write!(out, "{i}").expect("writing to a Vec cannot fail"),
                _ => return Err(NotInteger),
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(out, item)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            // UTF-8 byte order (the map's) is UTF-16 code unit order (RFC
            // 8785's) unless a key holds a character beyond U+FFFF: its
            // surrogates sort before U+E000-U+FFFF in UTF-16, after in UTF-8.
            if map.keys().any(|k| k.bytes().any(|b| b >= 0xF0)) {
                let mut members: Vec<(&String, &Value)> = map.iter().collect();
                members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
                write_members(out, members)?;
            } else {
                write_members(out, map.iter())?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

fn write_members<'a>(
    out: &mut Vec<u8>,
    members: impl IntoIterator<Item = (&'a String, &'a Value)>,
) -> Result<(), NotInteger> {
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, key);
        out.push(b':');
        write_canonical(out, value)?;
    }
    Ok(())
}

/// A string as serde_json escapes it (the escaper `serde_jcs` uses as well).
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
}

/// Where a top-level member `"key":value` sits in canonical JSON bytes of an
/// object: the byte range of the member, without the comma around it.
/// Strings are skipped whole (a `"hash"` inside an action is not the
/// event's), so this is exact for any canonical object.
pub fn top_level_member(bytes: &[u8], key: &str) -> Option<(usize, usize)> {
    let is_key_here = |i: usize| {
        let rest = &bytes[i + 1..];
        rest.starts_with(key.as_bytes()) && rest[key.len()..].starts_with(b"\":")
    };
    let mut depth = 0usize;
    let mut found: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // A member starts right after the object's `{` or a `,` at depth 1.
                if depth == 1 && found.is_none() && i > 0 && matches!(bytes[i - 1], b'{' | b',') && is_key_here(i) {
                    found = Some(i);
                }
                // Skip the string: to its closing quote, over escapes.
                i += 1;
                loop {
                    i += bytes.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
                    if bytes[i] == b'"' {
                        break;
                    }
                    i += 2;
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 1 {
                    return found.map(|start| (start, i));
                }
                depth = depth.checked_sub(1)?;
            }
            b',' if depth == 1 => {
                if let Some(start) = found {
                    return Some((start, i));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// BLAKE3 of the canonical bytes of an object without its top-level member
/// `key`: the same as hashing the canonical JSON of the object with `key`
/// removed (members are joined by commas, each written on its own), without
/// building or writing it again. None when there is no such member.
pub fn hash_without_member(bytes: &[u8], key: &str) -> Option<blake3::Hash> {
    Some(hash_without(bytes, top_level_member(bytes, key)?))
}

/// `hash_without_member` for a member already found (`top_level_member`,
/// `canonical_strict_member`).
pub fn hash_without(bytes: &[u8], (start, end): (usize, usize)) -> blake3::Hash {
    // Drop the comma after the member, or, for the last member, the one before it.
    let (cut_from, cut_to) = if bytes[end] == b',' {
        (start, end + 1)
    } else if bytes[start - 1] == b',' {
        (start - 1, end)
    } else {
        (start, end)
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update(&bytes[..cut_from]);
    hasher.update(&bytes[cut_to..]);
    hasher.finalize()
}

/// Whether `bytes` are, exactly, the canonical JSON that `canonical` writes
/// for a value `parse_strict` accepts: checked on the bytes in one pass,
/// nothing built. What a stored event is read through, so that the strict
/// parse and the canonical writing are not both done for every event read.
///
/// It may say no to text that is canonical and strict (a key with an
/// escape or a character beyond U+FFFF, whose order it does not work out,
/// a string longer than the limit before unescaping): the caller then
/// takes the full way (`parse_strict`, `canonical`), which also says why.
/// It never says yes to anything else: no white space; members sorted and
/// unique; integers only, within +-2^53, in their shortest form; strings
/// with no control character and no escape but `\"` and `\\` (all that
/// serde_json's escaper writes once control characters are refused);
/// nesting, array and string lengths within the limits; nothing after the
/// value. The text is UTF-8 already (a `&str`).
pub fn is_canonical_strict(text: &str) -> bool {
    canonical_strict_member(text, None).is_some()
}

/// `is_canonical_strict`, and where the top-level member `key` is (what
/// `top_level_member` would find), found in the same pass: None if the
/// text is not (known to be) canonical strict JSON.
pub fn canonical_strict_member(text: &str, key: Option<&str>) -> Option<Option<(usize, usize)>> {
    let mut scan = Scan { bytes: text.as_bytes(), at: 0, key: key.map(str::as_bytes), member: None };
    scan.value(0)?;
    (scan.at == scan.bytes.len()).then_some(scan.member)
}

/// A cursor over text being checked by `is_canonical_strict`; None: not
/// (known to be) canonical strict JSON.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    /// A top-level member to find, and where it was found.
    key: Option<&'a [u8]>,
    member: Option<(usize, usize)>,
}

/// Bytes a string's scan stops at: its closing quote, an escape, and
/// control characters (C0, DEL, and 0xC2, the first byte of C1 ones).
static STOP: [bool; 256] = {
    let mut stop = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stop[b] = true;
        b += 1;
    }
    stop[b'"' as usize] = true;
    stop[b'\\' as usize] = true;
    stop[0x7F] = true;
    stop[0xC2] = true;
    stop
};

/// How many of the leading bytes, in whole words of 8, are printable
/// ASCII other than `"` and `\\` (none of them is a `STOP` byte): 8 at a
/// time, as a string's text mostly is.
fn plain_ascii_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` is zero: its high bit in the result (exact when no byte has its high bit set).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut run = 0;
    for word in bytes.chunks_exact(8) {
        let x = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let special = (x & HIGH)
            // DEL (0x7F) is the one byte below 0x80 that 1 more takes to its high bit.
            | (x.wrapping_add(ONES) & HIGH)
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH)
            | zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')));
        if special != 0 {
            break;
        }
        run += 8;
    }
    run
}

impl<'a> Scan<'a> {
    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, literal: &[u8]) -> Option<()> {
        let end = self.at + literal.len();
        (self.bytes.get(self.at..end)? == literal).then(|| self.at = end)
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match *self.bytes.get(self.at)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(|_| ()),
            b't' => self.expect(b"true"),
            b'f' => self.expect(b"false"),
            b'n' => self.expect(b"null"),
            b'-' | b'0'..=b'9' => self.integer(),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Some(());
        }
        let mut last: Option<&[u8]> = None;
        loop {
            let start = self.at;
            let key = self.string()?;
            // Byte order is the order of the unescaped keys, and RFC 8785's
            // (UTF-16) order, for keys without escapes or 4-byte characters.
            if key.iter().any(|&b| b == b'\\' || b >= 0xF0) || last.is_some_and(|last| last >= key) {
                return None;
            }
            last = Some(key);
            self.expect(b":")?;
            self.value(depth)?;
            if depth == 1 && self.key == Some(key) {
                self.member = Some((start, self.at));
            }
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Some(());
        }
        for _ in 0..MAX_ARRAY_ITEMS {
            self.value(depth)?;
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
        None
    }

    /// A string from its opening quote: its text between the quotes, as written.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b"\"")?;
        let start = self.at;
        loop {
            // Most bytes need no look of their own: on to the next that does.
            self.at += plain_ascii_run(self.bytes.get(self.at..)?);
            self.at += self.bytes.get(self.at..)?.iter().position(|&b| STOP[usize::from(b)])?;
            match self.next()? {
                b'"' => break,
                b'\\' => match self.next()? {
                    b'"' | b'\\' => {}
                    _ => return None,
                },
                // Control characters (`char::is_control`): C0, DEL, and C1 (U+0080-U+009F, C2 80-9F in UTF-8).
                0x00..=0x1F | 0x7F => return None,
                0xC2 if matches!(self.bytes.get(self.at), Some(0x80..=0x9F)) => return None,
                _ => {}
            }
        }
        let text = &self.bytes[start..self.at - 1];
        (text.len() <= MAX_STRING_BYTES).then_some(text)
    }

    /// An integer as `canonical` writes one: no `-0`, no leading zero, no
    /// fraction or exponent, at most 2^53 - 1 in magnitude.
    fn integer(&mut self) -> Option<()> {
        let negative = self.bytes[self.at] == b'-';
        if negative {
            self.at += 1;
        }
        let start = self.at;
        let mut magnitude: u64 = 0;
        while let Some(&b @ b'0'..=b'9') = self.bytes.get(self.at) {
            // 17 digits cannot fit below 2^53: stop before u64 could overflow.
            if self.at - start == 16 {
                return None;
            }
            magnitude = magnitude * 10 + u64::from(b - b'0');
            self.at += 1;
        }
        let digits = &self.bytes[start..self.at];
        let shortest = match digits {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            _ => true,
        };
        let fraction_follows = matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E'));
        (shortest && !fraction_follows && magnitude <= MAX_SAFE_INTEGER as u64).then_some(())
    }
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
            match out.entry(key) {
                serde_json::map::Entry::Occupied(e) => {
                    return Err(de::Error::custom(format!("duplicate key {:?}", e.key())));
                }
                // One look-up per key: the value goes where the key was found missing.
                serde_json::map::Entry::Vacant(e) => {
                    e.insert(map.next_value_seed(Strict { depth })?);
                }
            }
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
/// code) against the same rules, walking it as the parser would.
pub fn check_value(value: &Value) -> Result<(), JsonError> {
    check_within(value, 0).map_err(JsonError)
}

/// `check_value` for a value that is a member of an object being checked
/// member by member (an event's action: depth 1), so that the nesting
/// limit counts as it does for the whole.
pub fn check_member(value: &Value) -> Result<(), JsonError> {
    check_within(value, 1).map_err(JsonError)
}

/// `check_value` of a string, without building it as a `Value`.
pub fn check_str(s: &str) -> Result<(), JsonError> {
    check_string(s).map_err(JsonError)
}

/// `check_value` of an integer: the same check, in the same words (a
/// number as a `Value` allocates nothing).
pub fn check_u64(n: u64) -> Result<(), JsonError> {
    check_within(&Value::from(n), 0).map_err(JsonError)
}

fn check_within(value: &Value, depth: usize) -> Result<(), String> {
    match value {
        Value::Null | Value::Bool(_) => Ok(()),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) if u > MAX_SAFE_INTEGER as u64 => Err(format!("integer {u} is outside +-2^53")),
            (Some(_), _) => Ok(()),
            (_, Some(i)) if i < -MAX_SAFE_INTEGER => Err(format!("integer {i} is outside +-2^53")),
            (_, Some(_)) => Ok(()),
            _ => Err(format!(
                "floating-point number {n} is not allowed in an event (use integers, fixed-point where a rule needs fractions)"
            )),
        },
        Value::String(s) => check_string(s),
        Value::Array(items) => {
            if depth + 1 > MAX_DEPTH {
                return Err(format!("nesting deeper than {MAX_DEPTH}"));
            }
            if items.len() > MAX_ARRAY_ITEMS {
                return Err(format!("array longer than {MAX_ARRAY_ITEMS} items"));
            }
            items.iter().try_for_each(|v| check_within(v, depth + 1))
        }
        Value::Object(map) => {
            if depth + 1 > MAX_DEPTH {
                return Err(format!("nesting deeper than {MAX_DEPTH}"));
            }
            map.iter().try_for_each(|(k, v)| {
                check_string(k)?;
                check_within(v, depth + 1)
            })
        }
    }
}

thread_local! {
    /// Set while a snapshot is being written (`to_vec_whole`): the
    /// rulesets' own bookkeeping (an index into a step table, a step to
    /// resume at) is serialised too. Nothing a reducer does reads it.
    static WHOLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// For `#[serde(skip_serializing_if)]` on a ruleset's own bookkeeping: left
/// out of every state shown (`state`, deltas, diffs), kept in a snapshot so
/// that folding on from one gives the same states as folding from seq 0.
pub fn outside_snapshot<T>(_: &T) -> bool {
    !WHOLE.with(std::cell::Cell::get)
}

/// `value` as JSON with the fields `outside_snapshot` marks (a snapshot's
/// bytes, see `fold::Folder::snapshot`).
pub fn to_vec_whole<T: serde::Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    /// Clears the flag however serialising ends (a panic included).
    struct Whole;
    impl Drop for Whole {
        fn drop(&mut self) {
            WHOLE.with(|w| w.set(false));
        }
    }
    WHOLE.with(|w| w.set(true));
    let _whole = Whole;
    serde_json::to_vec(value)
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

    #[test]
    #[should_panic(expected = "reached canonical JSON (events hold neither)")]
    fn a_float_never_reaches_canonical_json_unsaid() {
        canonical(&serde_json::json!({"speed": 5.25}));
    }

    #[test]
    fn canonical_sorts_keys_by_utf16_code_units() {
        // U+10000 is D800 DC00 in UTF-16: before U+E000, though after it in UTF-8.
        let v = parse_strict("{\"\u{e000}\":1,\"\u{10000}\":2,\"z\":3}").unwrap();
        assert_eq!(String::from_utf8(canonical(&v)).unwrap(), "{\"z\":3,\"\u{10000}\":2,\"\u{e000}\":1}");
        assert_eq!(canonical(&v), serde_jcs::to_vec(&v).unwrap());
    }

    #[test]
    fn a_member_is_found_at_the_top_level_only() {
        let v = parse_strict(r#"{"action":{"hash":"x","s":"\",\"hash\":"},"hash":"h","prev":"p"}"#).unwrap();
        let bytes = canonical(&v);
        let (start, end) = top_level_member(&bytes, "hash").unwrap();
        assert_eq!(&bytes[start..end], br#""hash":"h""#);
        let mut without = v.clone();
        without.as_object_mut().unwrap().remove("hash");
        assert_eq!(hash_without_member(&bytes, "hash"), Some(blake3::hash(&canonical(&without))));
        assert_eq!(hash_without_member(&bytes, "none"), None);
    }

    /// `is_canonical_strict` says yes to what `canonical` writes (but for
    /// what it leaves to the full way), and to nothing that `parse_strict`
    /// refuses or that is not its value's canonical form: every text one
    /// byte away from canonical ones is tried.
    #[test]
    fn canonical_strict_text_is_known_on_its_bytes() {
        let texts = [
            r#"{"action":{"cards":["A","B"],"n":-3,"ok":true,"type":"play","x":null},"actor":"p1","at":"2026-11-21T15:03:10.123Z","hash":"ab","prev":"00","seq":7,"v":1}"#,
            r#"{"a":[],"b":{},"c":"q\"\\é","d":0,"e":9007199254740991,"f":-9007199254740991,"g":[[1],[2,{"h":false}]]}"#,
            r#"[1,"x",{"y":[]}]"#,
            r#"{"hash":"0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH","é":"0123456789abcdefé0123456789"}"#,
            "0",
        ];
        for text in texts {
            let value = parse_strict(text).unwrap();
            assert_eq!(canonical(&value), text.as_bytes());
            assert!(is_canonical_strict(text), "{text}");
            for at in 0..=text.len() {
                for b in [
                    b' ', b'"', b'\\', b',', b'0', b'1', b'9', b'-', b'.', b'e', b'a', b'z', b'{', b'}', b'[', b']',
                    b':', 0x7F, 0x0A,
                ] {
                    for replace in [false, true] {
                        let mut bytes = text.as_bytes().to_vec();
                        match replace {
                            true if at < bytes.len() => bytes[at] = b,
                            true => continue,
                            false => bytes.insert(at, b),
                        }
                        let Ok(changed) = std::str::from_utf8(&bytes) else { continue };
                        if let Some(member) = canonical_strict_member(changed, Some("hash")) {
                            let value = parse_strict(changed).unwrap_or_else(|e| panic!("{changed}: {e}"));
                            assert_eq!(canonical(&value), changed.as_bytes(), "{changed}");
                            if value.is_object() {
                                assert_eq!(member, top_level_member(changed.as_bytes(), "hash"), "{changed}");
                            }
                        }
                    }
                }
            }
        }
        // What it leaves to the full way, and what it refuses.
        for text in [
            r#"{"\u0041":1}"#,
            "{\"\u{10000}\":1}",
            r#"{"a":1.5}"#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":1}"#,
            "-0",
            "01",
            "9007199254740992",
            "12345678901234567890",
            "\"\u{85}\"",
            r#""\n""#,
            r#"{"a":1} "#,
            "[1,]",
            "{,}",
        ] {
            assert!(!is_canonical_strict(text), "{text}");
        }
        let long = format!("\"{}\"", "x".repeat(MAX_STRING_BYTES + 1));
        assert!(!is_canonical_strict(&long));
        let deep = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(is_canonical_strict(&deep));
        let deeper = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(!is_canonical_strict(&deeper));
        let items = |n: usize| format!("[{}]", vec!["1"; n].join(","));
        assert!(is_canonical_strict(&items(MAX_ARRAY_ITEMS)));
        assert!(!is_canonical_strict(&items(MAX_ARRAY_ITEMS + 1)));
    }
}
