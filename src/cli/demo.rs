//! `arbiter demo`: records the bundled sample combat into the store, step
//! by step through the same append path as a table would, then replays
//! its log and verifies it.

use std::process::ExitCode;

use arbiter::event::Header;
use arbiter::record::{self, RecordError, Recorder, Submission, verify};
use arbiter::rules::describe;
use arbiter::store::Store;

use super::read::view_text;
use super::{Output, rec};

/// The bundled sample: a three-player Doomtrooper combat (a battle tactic
/// countered, a change of combatants that repeats steps 2-15, a
/// non-simultaneous combat), then a second combat ended by Smoke Bomb.
pub const SAMPLE: &str = include_str!("../../examples/doomtrooper-sample.jsonl");

#[derive(clap::Args)]
pub struct Args {
    /// Name for the recorded game (default: sample, sample-2, ...).
    #[arg(long = "as")]
    pub name: Option<String>,
}

pub fn run(store: &dyn Store, a: Args, out: &Output) -> anyhow::Result<ExitCode> {
    let name = match a.name {
        Some(n) => n,
        None => {
            let games = store.games().map_err(|e| rec(e.into()))?;
            (1..)
                .map(|i| if i == 1 { "sample".to_string() } else { format!("sample-{i}") })
                .find(|n| !games.contains(n))
                .expect("a free name")
        }
    };
    let mut lines = SAMPLE.lines().filter(|l| !l.trim().is_empty());
    let first = Submission::parse(lines.next().expect("sample has a header")).map_err(rec)?;
    let header: Header = serde_json::from_value(first.action).map_err(|e| rec(RecordError::Input(e.to_string())))?;
    record::create(store, &name, &header, &first.actor, None).map_err(rec)?;
    let mut recorder = Recorder::load(store, &name).map_err(rec)?;
    for line in lines {
        let sub = Submission::parse(line).map_err(rec)?;
        recorder.append(&sub, None).map_err(rec)?;
    }
    if !out.json {
        println!("recorded the sample combat as game {name:?} in the store; its log:");
    }
    for event in store.read(&name, 0).map_err(|e| rec(e.into()))? {
        let event = event.map_err(|e| rec(e.into()))?;
        if !out.json {
            println!("{:>4}  {:<10} {}", event.seq, event.actor, describe(&event.action));
        }
    }
    let events = store.read(&name, 0).map_err(|e| rec(e.into()))?.map(|e| e.map_err(RecordError::from));
    let (verified, table) = verify(events, None).map_err(rec)?;
    let table = table.expect("verified record has a state");
    let view = table.view();
    out.emit(serde_json::json!({"game": name, "events": verified.events, "head": verified.head, "step": view.step, "state": table.state}), || {
        let points = serde_json::to_string(&table.state).ok().and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok()).and_then(|v| v.get("points").cloned()).unwrap_or_default();
        format!(
            "verified: {} events, hashes, links and rules; head {}\nnow: {}\npoints: {points}\nnext: arbiter state {name} | arbiter export {name} -o {name}.jsonl | tools/verify-with-jq.sh {name}.jsonl",
            verified.events, verified.head, view_text(&view)
        )
    });
    Ok(ExitCode::SUCCESS)
}
