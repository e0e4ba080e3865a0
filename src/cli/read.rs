//! `games`, `log GAME`, `state GAME [--at SEQ]`, `head GAME`.

use std::process::ExitCode;

use arbiter::event::{Event, decode};
use arbiter::kernel::View;
use arbiter::ops;
use arbiter::record::{RecordError, StoredGame};
use arbiter::replay::Said;
use arbiter::rules::describe;
use arbiter::store::Store;
use serde_json::{Value, json};

use super::new::str as text;
use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct GameArg {
    pub game: String,
}

#[derive(clap::Args)]
pub struct LogArgs {
    pub game: String,
    /// First seq to print.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
}

#[derive(clap::Args)]
pub struct StateArgs {
    pub game: String,
    /// The state after this seq (default: the head).
    #[arg(long)]
    pub at: Option<u64>,
}

pub fn games(target: &Target, out: &Output) -> anyhow::Result<ExitCode> {
    let names = match target {
        Target::Local(store) => json!(store.games().map_err(|e| rec(e.into()))?),
        Target::Remote(c) => c.get("/api/games")?,
    };
    out.emit(names.clone(), || {
        let names: Vec<&str> = names.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if names.is_empty() { "no games".into() } else { names.join("\n") }
    });
    Ok(ExitCode::SUCCESS)
}

pub fn log(target: &Target, a: &LogArgs, out: &Output) -> anyhow::Result<ExitCode> {
    // In words, each event is followed by what the ruleset recorded for it
    // (a score, a final point drawn as a card instead), which needs the fold
    // from seq 0. The JSON lines are the events alone.
    let words = !out.json;
    let first = if words { 0 } else { a.from };
    let mut said = Said::default();
    let print = |event: &Event, said: Vec<String>| -> anyhow::Result<()> {
        if event.seq < a.from {
            return Ok(());
        }
        out.emit(serde_json::to_value(event)?, || {
            let mut line = format!("{:>5}  {}  {:<10} {}", event.seq, event.at, event.actor, describe(&event.action));
            for s in said {
                line += &format!("\n{:>5}  {s}", "");
            }
            line
        });
        Ok(())
    };
    match target {
        Target::Local(store) => {
            let source = StoredGame::new(store, &a.game);
            for event in store.read(&a.game, first).map_err(|e| rec(e.into()))? {
                let event = event.map_err(|e| rec(e.into()))?;
                let lines = if words { said.next(&event, &source).map_err(rec)? } else { vec![] };
                print(&event, lines)?;
            }
        }
        Target::Remote(c) => {
            // The events read so far: the source a rewind folds again.
            let mut seen: Vec<Event> = vec![];
            let mut from = Some(first);
            while let Some(f) = from {
                let page = c.get(&c.game(&a.game, &format!("/events?from={f}&limit=1000"))?)?;
                for event in page["events"].as_array().into_iter().flatten() {
                    // Each event is checked on the way in, as if read from a file.
                    let (event, _) = decode(&event.to_string()).map_err(|e| {
                        rec(RecordError::Broken { seq: event["seq"].as_u64().unwrap_or(0), why: e.to_string() })
                    })?;
                    let lines = if words { said.next(&event, &seen).map_err(rec)? } else { vec![] };
                    print(&event, lines)?;
                    if words {
                        seen.push(event);
                    }
                }
                from = page["next"].as_u64();
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn state(target: &Target, a: &StateArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => ops::state(store, &a.game, a.at).map_err(rec)?,
        Target::Remote(c) => {
            let at = a.at.map(|at| format!("?at={at}")).unwrap_or_default();
            c.get(&c.game(&a.game, &format!("/state{at}"))?)?
        }
    };
    out.emit(v.clone(), || {
        // The answer carries the view's fields (step, may_act, legal, awaiting_ruling).
        let view = serde_json::from_value::<View>(v.clone()).map(|v| view_text(&v)).unwrap_or_default();
        let mut s = format!("{} after seq {} ({})\n  now: {view}\n", a.game, v["seq"], text(&v["hash"]));
        s += &adjudication_text(&v);
        s += &serde_json::to_string_pretty(&v["state"]).unwrap_or_default();
        s
    });
    Ok(ExitCode::SUCCESS)
}

pub fn head(target: &Target, a: &GameArg, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => ops::head(store, &a.game).map_err(rec)?,
        Target::Remote(c) => c.get(&c.game(&a.game, "")?)?,
    };
    out.emit(v.clone(), || format!("{} {}", v["seq"], text(&v["hash"])));
    Ok(ExitCode::SUCCESS)
}

/// A seat by name and id ("Alice (p1)"), from the header in a `state` answer.
fn by_name(v: &Value, id: &str) -> String {
    let seats = v["header"]["seats"].as_array().into_iter().flatten();
    match seats.into_iter().find(|s| s["id"] == id).and_then(|s| s["name"].as_str()) {
        Some(name) => format!("{name} ({id})"),
        None => id.to_string(),
    }
}

/// The order of priority, the judges, and every penalty and note that stands,
/// one line each (nothing when there are none).
fn adjudication_text(v: &Value) -> String {
    let strs = |k: &str| -> Vec<String> {
        v[k].as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from).collect()
    };
    let mut s = String::new();
    let priority = strs("priority");
    if !priority.is_empty() {
        let names: Vec<String> = priority.iter().map(|id| by_name(v, id)).collect();
        s += &format!("  order of priority: {}\n", names.join(", "));
    }
    let judges = strs("judges");
    if !judges.is_empty() {
        s += &format!("  judges: {}\n", judges.join(", "));
    }
    for p in v["penalties"].as_array().into_iter().flatten() {
        s += &format!(
            "  penalty (seq {}, about seq {}): {} for {}: {}; fix: {} (judge {})\n",
            p["seq"],
            p["concerns"],
            text(&p["penalty"]),
            by_name(v, p["seat"].as_str().unwrap_or_default()),
            text(&p["infraction"]),
            text(&p["fix"]),
            text(&p["judge"])
        );
    }
    for n in v["notes"].as_array().into_iter().flatten() {
        let by = by_name(v, n["by"].as_str().unwrap_or_default());
        s += &format!("  note (seq {}, about seq {}) by {by}: {}\n", n["seq"], n["concerns"], text(&n["text"]));
    }
    s
}

/// One line: the step, who may act, what is legal.
pub fn view_text(view: &View) -> String {
    let legal: Vec<_> = view.legal.iter().map(|t| t.name()).collect();
    let who = if view.may_act.is_empty() { "no one".to_string() } else { view.may_act.join(", ") };
    let mut s = format!("{}; may act: {who}; legal: {}", view.step.reference, legal.join(", "));
    if let Some(r) = &view.awaiting_ruling {
        s += &format!("\n  awaiting a judge's ruling: {r}");
    }
    s
}
