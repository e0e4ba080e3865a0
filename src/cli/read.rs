//! `games`, `log GAME`, `state GAME [--at SEQ]`, `head GAME`.

use std::process::ExitCode;

use arbiter::event::{Event, decode};
use arbiter::kernel::View;
use arbiter::ops;
use arbiter::record::RecordError;
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
    let print = |event: &Event| -> anyhow::Result<()> {
        out.emit(serde_json::to_value(event)?, || {
            format!("{:>5}  {}  {:<10} {}", event.seq, event.at, event.actor, describe(&event.action))
        });
        Ok(())
    };
    match target {
        Target::Local(store) => {
            for event in store.read(&a.game, a.from).map_err(|e| rec(e.into()))? {
                print(&event.map_err(|e| rec(e.into()))?)?;
            }
        }
        Target::Remote(c) => {
            let mut from = Some(a.from);
            while let Some(f) = from {
                let page = c.get(&c.game(&a.game, &format!("/events?from={f}&limit=1000"))?)?;
                for event in page["events"].as_array().into_iter().flatten() {
                    // Each event is checked on the way in, as if read from a file.
                    let (event, _) = decode(&event.to_string()).map_err(|e| {
                        rec(RecordError::Broken { seq: event["seq"].as_u64().unwrap_or(0), why: e.to_string() })
                    })?;
                    print(&event)?;
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
        let state = serde_json::to_string_pretty(&v["state"]).unwrap_or_default();
        format!("{} after seq {} ({})\n  now: {view}\n{state}", a.game, v["seq"], text(&v["hash"]))
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
