//! Structured differences between two JSON values (states), as paths with
//! the value on each side: what replay shows per event and diff shows
//! between two records. Outcome fields sort first, so a judge reads who was
//! wounded or killed, control and points before the rest.

use serde::Serialize;
use serde_json::Value;

/// One difference: the value at `path` on each side (None: absent).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Change {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

/// Words that mark a field as part of a combat's outcome.
const OUTCOME: &[&str] = &[
    "winner",
    "points",
    "scores",
    "influence_lost",
    "results",
    "status",
    "outcome",
    "dead",
    "trash",
    "discard",
    "controller",
    "history",
    "finished",
    "penalties",
];

/// Every leaf that differs between `a` and `b`, outcome fields first.
pub fn diff(a: &Value, b: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out.sort_by_key(|c| !is_outcome(&c.path));
    out
}

pub fn is_outcome(path: &str) -> bool {
    path.split(['.', '[']).any(|part| OUTCOME.contains(&part.trim_end_matches(']')))
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<Change>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => walk(&p, u, v, out),
                    (u, v) => out.push(Change { path: p, before: u.cloned(), after: v.cloned() }),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let p = format!("{path}[{i}]");
                match (x.get(i), y.get(i)) {
                    (Some(u), Some(v)) => walk(&p, u, v, out),
                    (u, v) => out.push(Change { path: p, before: u.cloned(), after: v.cloned() }),
                }
            }
        }
        _ if a != b => out.push(Change { path: path.to_string(), before: Some(a.clone()), after: Some(b.clone()) }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_of_changed_leaves_with_outcomes_first() {
        let a = json!({"step": "3-6", "points": {"p1": 0}, "effects": [1, 2]});
        let b = json!({"step": "7", "points": {"p1": 2}, "effects": [1, 2, 3]});
        let d = diff(&a, &b);
        assert_eq!(d[0], Change { path: "points.p1".into(), before: Some(json!(0)), after: Some(json!(2)) });
        assert!(d.contains(&Change { path: "effects[2]".into(), before: None, after: Some(json!(3)) }));
        assert!(d.contains(&Change { path: "step".into(), before: Some(json!("3-6")), after: Some(json!("7")) }));
        assert!(diff(&a, &a).is_empty());
    }
}
