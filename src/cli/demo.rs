//! `arbiter demo [--ruleset NAME]`: records a bundled sample game into the store, step
//! by step through the same append path as a table would, then replays
//! its log and verifies it.

use std::process::ExitCode;

use arbiter::event::Header;
use arbiter::record::{self, RecordError, Recorder, StoredGame, Submission, verify};
use arbiter::rules::describe;
use arbiter::store::Store;

use super::read::view_text;
use super::{Output, rec};

/// The bundled samples, one per ruleset (written by tools/make-samples.py).
/// Doomtrooper: a three-player combat (a battle tactic countered, a change of
/// combatants that repeats steps 2-15, a non-simultaneous combat), then a
/// second combat ended by Smoke Bomb. WTactics: an attack with a combat
/// that needs a judge's ruling. Riftbound: a showdown without combat, then
/// a combat with triggers, a chain, Tank damage and a conquest. Raw Deal: a
/// maneuver reversed by a nested breakdown, then a Multi card. GURPS: ties by
/// DX and by a roll, two seconds of combat, a knock-out, a drop out.
const SAMPLES: &[(&str, &str)] = &[
    ("doomtrooper", include_str!("../../examples/doomtrooper-sample.jsonl")),
    ("wtactics", include_str!("../../examples/wtactics-sample.jsonl")),
    ("riftbound", include_str!("../../examples/riftbound-sample.jsonl")),
    ("rawdeal", include_str!("../../examples/rawdeal-sample.jsonl")),
    ("gurps", include_str!("../../examples/gurps-sample.jsonl")),
];

#[derive(clap::Args)]
pub struct Args {
    /// Name for the recorded game (default: sample, sample-2, ...; or RULESET-sample...).
    #[arg(long = "as")]
    pub name: Option<String>,
    /// Which ruleset's sample to record.
    #[arg(long, default_value = "doomtrooper", value_parser = ["doomtrooper", "wtactics", "riftbound", "rawdeal", "gurps"])]
    pub ruleset: String,
}

pub fn run(store: &dyn Store, a: Args, out: &Output) -> anyhow::Result<ExitCode> {
    let name = match a.name {
        Some(n) => n,
        None => {
            let games = store.games().map_err(|e| rec(e.into()))?;
            let base = if a.ruleset == "doomtrooper" { "sample".to_string() } else { format!("{}-sample", a.ruleset) };
            (1..)
                .map(|i| if i == 1 { base.clone() } else { format!("{base}-{i}") })
                .find(|n| !games.contains(n))
                .expect("a free name")
        }
    };
    let sample = SAMPLES.iter().find(|(r, _)| *r == a.ruleset).map(|(_, s)| *s).expect("a bundled sample");
    let mut lines = sample.lines().filter(|l| !l.trim().is_empty());
    let first = Submission::parse(lines.next().expect("sample has a header")).map_err(rec)?;
    let header: Header = serde_json::from_value(first.action).map_err(|e| rec(RecordError::Input(e.to_string())))?;
    record::create(store, &name, &header, &first.actor, None).map_err(rec)?;
    let mut recorder = Recorder::load(store, &name).map_err(rec)?;
    for line in lines {
        let sub = Submission::parse(line).map_err(rec)?;
        recorder.append(&sub, None).map_err(rec)?;
    }
    if !out.json {
        println!("recorded the {} sample as game {name:?} in the store; its log:", a.ruleset);
    }
    for event in store.read(&name, 0).map_err(|e| rec(e.into()))? {
        let event = event.map_err(|e| rec(e.into()))?;
        if !out.json {
            println!("{:>4}  {:<10} {}", event.seq, event.actor, describe(&event.action));
        }
    }
    let (verified, folder) = verify(&StoredGame::new(store, &name), None).map_err(rec)?;
    let table = folder.table().expect("a verified record has a state");
    let view = table.view();
    out.emit(serde_json::json!({"game": name, "events": verified.events, "head": verified.head, "step": view.step, "state": table.state}), || {
        let state = serde_json::to_value(&table.state).unwrap_or_default();
        let points = ["points", "scores", "influence_lost"]
            .iter()
            .find_map(|k| state.get(*k).map(|v| format!("{k}: {v}\n")))
            .unwrap_or_default();
        format!(
            "verified: {} events, hashes, links and rules; head {}\nnow: {}\n{points}next: arbiter state {name} | arbiter export {name} -o {name}.jsonl | tools/verify-with-jq.sh {name}.jsonl",
            verified.events, verified.head, view_text(&view)
        )
    });
    Ok(ExitCode::SUCCESS)
}
