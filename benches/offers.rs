//! What offer-first costs on the append path, per ruleset: for every event
//! of each bundled sample, the time to work out the actor's offers and find
//! the one that admits the action (`Table::combat_moves` or `Table::moves`,
//! then `Move::admits`, as `record::offered_first` does), beside the time
//! the reducer takes to apply it (`Table::apply`), measured side by side in
//! one run over the same states (best of 5 rounds).
//!
//! `cargo bench --bench offers`

use std::time::Instant;

use arbiter::event::Header;
use arbiter::rules::{Kind, Table};
use serde_json::Value;

fn main() {
    println!("{:<12} {:>7} {:>14} {:>14} {:>8}", "ruleset", "events", "offers ns/ev", "apply ns/ev", "ratio");
    for kind in Kind::ALL {
        let lines: Vec<(String, Value)> = kind
            .sample()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (v["actor"].as_str().unwrap().to_string(), v["action"].clone())
            })
            .collect();
        let header: Header = serde_json::from_value(lines[0].1.clone()).unwrap();
        // The state before each event (rulings and notes are left out of
        // the samples' combats; every sample event is a ruleset action).
        let mut tables = vec![Table::open(&header).unwrap()];
        for (i, (actor, action)) in lines[1..].iter().enumerate() {
            let next = tables[i].apply(i as u64 + 1, actor, action).unwrap();
            tables.push(next);
        }
        let events = &lines[1..];
        let (mut offers, mut apply) = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            let t = Instant::now();
            for (i, (actor, action)) in events.iter().enumerate() {
                let moves = match action["type"].as_str() {
                    Some("ruling" | "note") => tables[i].moves(i as u64 + 1),
                    _ => tables[i].combat_moves(),
                };
                let admitted = moves.iter().any(|m| m.seat == *actor && m.admits(action).is_ok());
                assert!(admitted, "{} event {}: no move admits {action}", kind.name(), i + 1);
            }
            offers = offers.min(t.elapsed().as_nanos() as f64 / events.len() as f64);
            let t = Instant::now();
            for (i, (actor, action)) in events.iter().enumerate() {
                std::hint::black_box(tables[i].apply(i as u64 + 1, actor, action).unwrap());
            }
            apply = apply.min(t.elapsed().as_nanos() as f64 / events.len() as f64);
        }
        println!("{:<12} {:>7} {:>14.0} {:>14.0} {:>7.1}x", kind.name(), events.len(), offers, apply, offers / apply);
    }
}
