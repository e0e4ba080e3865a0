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

/// Words that mark a field as the result a table plays for: who won, the
/// points, scores and control.
const RESULT: &[&str] = &["winner", "points", "scores", "influence_lost", "controller", "control", "award"];

/// Words that mark a field as the rest of a combat's outcome: what happened
/// to each warrior or card, and penalties. (Containers such as a list of
/// finished combats are not outcome words: every field of a finished combat
/// lies under them.)
const OUTCOME: &[&str] = &["results", "status", "outcome", "dead", "trash", "discard", "penalties"];

/// Fields that hold the seq of an event (an effect's seq, what a counter
/// names, where a part of a breakdown began, the cards a question is
/// about). Two records of one combat number their events differently from
/// the first extra or missing event on, so these differ without the combat
/// differing.
const SEQ_FIELDS: &[&str] =
    &["seq", "target", "counters", "scope", "sub_scope", "ended_by", "concerns", "counted", "cards"];

/// Pairs whose first element is the seq of the event that made them,
/// e.g. `"battle_tactic": [2, "Fight"]`.
const SEQ_PAIRS: &[&str] = &["battle_tactic", "warzone", "award"];

/// Every leaf that differs between `a` and `b`, the result first, then the
/// rest of the outcome, then everything else.
pub fn diff(a: &Value, b: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out.sort_by_key(|c| rank(&c.path));
    out
}

/// The path's field names, without array indexes.
fn fields(path: &str) -> impl Iterator<Item = &str> {
    path.split(['.', '[']).filter(|p| !p.ends_with(']'))
}

/// 0: the result (points, scores, control); 1: the rest of the outcome; 2: the rest.
fn rank(path: &str) -> u8 {
    if is_renumbering_path(path) {
        2
    } else if fields(path).any(|f| RESULT.contains(&f)) {
        0
    } else if fields(path).any(|f| OUTCOME.contains(&f)) {
        1
    } else {
        2
    }
}

pub fn is_outcome(path: &str) -> bool {
    rank(path) < 2
}

/// A path that holds an event's seq.
fn is_renumbering_path(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    let (name, index) = match last.split_once('[') {
        Some((name, rest)) => (name, Some(rest)),
        None => (last, None),
    };
    SEQ_FIELDS.contains(&name) || (SEQ_PAIRS.contains(&name) && index == Some("0]"))
}

/// A difference only in which seq an event has: both sides are numbers at a
/// field that holds a seq. `diff` between two records counts these apart
/// rather than listing them as differences.
pub fn is_renumbering(c: &Change) -> bool {
    let number = |v: &Option<Value>| v.as_ref().is_some_and(Value::is_u64);
    number(&c.before) && number(&c.after) && is_renumbering_path(&c.path)
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<Change>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                // Most of a state is the same from one event to the next:
                // an equal subtree is skipped before its path is built.
                if let (Some(u), Some(v)) = (x.get(k), y.get(k))
                    && u == v
                {
                    continue;
                }
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => walk(&p, u, v, out),
                    (u, v) => out.push(Change { path: p, before: u.cloned(), after: v.cloned() }),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                if let (Some(u), Some(v)) = (x.get(i), y.get(i))
                    && u == v
                {
                    continue;
                }
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

    #[test]
    fn the_result_comes_before_the_rest_of_the_outcome_and_seqs_are_renumbering() {
        let a = json!({"finished": [{"effects": [{"seq": 4}], "results": ["wounded"], "battle_tactic": [2, "Fight"]}], "points": {"p1": 1}});
        let b = json!({"finished": [{"effects": [{"seq": 5}], "results": ["unharmed"], "battle_tactic": [3, "Fight"]}], "points": {"p1": 0}});
        let d = diff(&a, &b);
        assert_eq!(d[0].path, "points.p1");
        assert_eq!(d[1].path, "finished[0].results[0]");
        let renumbered: Vec<&str> = d.iter().filter(|c| is_renumbering(c)).map(|c| c.path.as_str()).collect();
        assert_eq!(renumbered, vec!["finished[0].battle_tactic[0]", "finished[0].effects[0].seq"]);
    }
}
