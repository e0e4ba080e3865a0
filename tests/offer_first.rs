//! Offer-first, on every ruleset: a new action is recorded only if a move
//! offered to its actor admits it (`record::offered_first`). The actions
//! the reducer alone would take but no move offers (another spelling of a
//! card the moves name, a computed list in another order, a flag written
//! out as false) are refused on the append path, saying why and what the
//! actor may record instead, and nothing is stored.

mod common;

use arbiter::event::Header;
use arbiter::record::{RecordError, Recorder, Submission, create};
use arbiter::store::{SledStore, Store};
use common::*;
use serde_json::{Value, json};

/// Other ways to write `action` that mean the same to the reducer: each
/// list of two or more in another order, a card's name in lower case, and
/// a flag the moves leave out written as false.
fn variants(action: &Value) -> Vec<Value> {
    let mut out = vec![];
    let object = action.as_object().expect("an action is an object");
    for (key, value) in object {
        if let Some(list) = value.as_array().filter(|l| l.len() >= 2) {
            let mut v = action.clone();
            v[key] = Value::Array(list.iter().rev().cloned().collect());
            out.push(v);
        }
    }
    if let Some(card) = object.get("card").and_then(Value::as_str).filter(|c| c.to_lowercase() != *c) {
        let mut v = action.clone();
        v["card"] = json!(card.to_lowercase());
        out.push(v);
    }
    if object.get("type") == Some(&json!("play")) && !object.contains_key("reversal") {
        let mut v = action.clone();
        v["reversal"] = json!(false);
        out.push(v);
    }
    // A change of a chain item's that moves nothing, with its `to` written out as null.
    if let Some(changes) = object.get("changes").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        let mut v = action.clone();
        v["changes"] = changes
            .iter()
            .map(|c| match c.get("to") {
                None => {
                    let mut c = c.clone();
                    c["to"] = Value::Null;
                    c
                }
                Some(_) => c.clone(),
            })
            .collect();
        out.push(v);
    }
    out.retain(|v| v != action);
    out
}

/// Walks the sample; before each event, tries each variant of it. A variant
/// no move admits is refused with the head unchanged; one the reducer alone
/// would take as well is counted (a gap refused on purpose). Returns those.
fn gaps_refused(ruleset: &str) -> Vec<(String, Value, String)> {
    let lines = sample_lines(ruleset);
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let header: Header = serde_json::from_value(lines[0].1.clone()).unwrap();
    create(&store, "g", &header, &lines[0].0, None).unwrap();
    let mut recorder = Recorder::load(&store, "g").unwrap();
    let mut gaps = vec![];
    for (actor, action) in &lines[1..] {
        let table = recorder.table().clone();
        let next = recorder.head().seq + 1;
        let moves = table.moves(next);
        for variant in variants(action) {
            if moves.iter().any(|m| m.seat == *actor && m.admits(&variant).is_ok()) {
                continue;
            }
            let head = store.head("g").unwrap();
            let sub = Submission { actor: actor.clone(), action: variant.clone(), at: None };
            let refusal = match recorder.append(&sub, Some(next)) {
                Err(RecordError::Refused(v)) => v,
                other => panic!("{ruleset} seq {next}: {variant} is offered by no move, yet {other:?}"),
            };
            assert_eq!(store.head("g").unwrap(), head, "a refusal stored something");
            assert_eq!(recorder.table(), &table, "a refusal changed the state");
            assert!(!refusal.offered.is_empty(), "{ruleset} seq {next}: the refusal lists what {actor} may record");
            if table.apply(next, actor, &variant).is_ok() {
                gaps.push((actor.clone(), variant, refusal.message.clone()));
            }
        }
        let sub = Submission { actor: actor.clone(), action: action.clone(), at: None };
        recorder.append(&sub, Some(next)).unwrap_or_else(|e| panic!("{ruleset} seq {next}: {e}"));
    }
    gaps
}

#[test]
fn doomtrooper_refuses_what_no_move_offers() {
    // No variant of the sample's events is a gap: its `counted` lists are
    // of one card, and where it names a special card the moves take a
    // typed name (tests/doomtrooper.rs has the gap: a special card spelt
    // otherwise where only special cards are the choice).
    let gaps = gaps_refused("doomtrooper");
    assert_eq!(gaps, vec![]);
}

/// The sample's gaps are found and each refusal says `why`.
fn gaps_refused_saying(ruleset: &str, why: &str) {
    let gaps = gaps_refused(ruleset);
    assert!(!gaps.is_empty(), "{ruleset}: no variant of its sample is a gap");
    for (_, variant, message) in &gaps {
        assert!(message.contains(why), "{variant}: {message}");
    }
}

#[test]
fn wtactics_refuses_what_the_reducer_takes_but_no_move_offers() {
    gaps_refused_saying("wtactics", "defenders/0/name is fixed at");
}

#[test]
fn riftbound_refuses_what_the_reducer_takes_but_no_move_offers() {
    gaps_refused_saying("riftbound", "to: null is not one of the options");
}

#[test]
fn rawdeal_refuses_what_the_reducer_takes_but_no_move_offers() {
    gaps_refused_saying("rawdeal", "reversal is not a field of this move (given false)");
}

#[test]
fn gurps_refuses_what_the_reducer_takes_but_no_move_offers() {
    gaps_refused_saying("gurps", "rolls/0/combatant is fixed at");
}
