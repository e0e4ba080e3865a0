//! `games`, `log GAME`, `state GAME [--at SEQ]`, `head GAME`.

use std::process::ExitCode;

use arbiter::fold::{FoldError, fold_to};
use arbiter::kernel::View;
use arbiter::record::StoredGame;
use arbiter::record::{RecordError, Recorder};
use arbiter::rules::{Table, describe};
use arbiter::store::Store;

use super::{Output, rec};

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

pub fn games(store: &dyn Store, out: &Output) -> anyhow::Result<ExitCode> {
    let names = store.games().map_err(|e| rec(e.into()))?;
    out.emit(serde_json::json!(names), || if names.is_empty() { "no games".into() } else { names.join("\n") });
    Ok(ExitCode::SUCCESS)
}

pub fn log(store: &dyn Store, a: LogArgs, out: &Output) -> anyhow::Result<ExitCode> {
    for event in store.read(&a.game, a.from).map_err(|e| rec(e.into()))? {
        let event = event.map_err(|e| rec(e.into()))?;
        out.emit(serde_json::to_value(&event)?, || {
            format!("{:>5}  {}  {:<10} {}", event.seq, event.at, event.actor, describe(&event.action))
        });
    }
    Ok(ExitCode::SUCCESS)
}

pub fn state(store: &dyn Store, a: StateArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let (table, seq, hash) = match a.at {
        None => {
            let r = Recorder::load(store, &a.game).map_err(rec)?;
            (r.table().clone(), r.head().seq, r.head().hash.clone())
        }
        Some(at) => state_at(store, &a.game, at)?,
    };
    let view = table.view();
    out.emit(
        serde_json::json!({"game": a.game, "seq": seq, "hash": hash, "ruleset": table.header.ruleset, "step": view.step, "may_act": view.may_act, "legal": view.legal, "awaiting_ruling": view.awaiting_ruling, "state": table.state}),
        || {
            let state = serde_json::to_string_pretty(&table.state).unwrap_or_default();
            format!("{} after seq {seq} ({hash})\n  now: {}\n{state}", a.game, view_text(&view))
        },
    );
    Ok(ExitCode::SUCCESS)
}

fn state_at(store: &dyn Store, game: &str, at: u64) -> anyhow::Result<(Table, u64, String)> {
    let source = StoredGame::new(store, game);
    let folder = fold_to(&source, at).map_err(|e| match e {
        FoldError::Illegal { seq, violation } => rec(RecordError::Broken { seq, why: violation.to_string() }),
        FoldError::Source(e) => rec(e),
    })?;
    let head =
        store.head(game).map_err(|e| rec(e.into()))?.ok_or_else(|| rec(RecordError::NoSuchGame(game.to_string())))?;
    if at > head.seq {
        return Err(rec(RecordError::Input(format!("seq {at} is past the head of {game} (seq {})", head.seq))));
    }
    let event = store.get(game, at).map_err(|e| rec(e.into()))?.expect("seq within the head");
    Ok((folder.table().expect("state").clone(), at, event.hash))
}

pub fn head(store: &dyn Store, a: GameArg, out: &Output) -> anyhow::Result<ExitCode> {
    let head =
        store.head(&a.game).map_err(|e| rec(e.into()))?.ok_or_else(|| rec(RecordError::NoSuchGame(a.game.clone())))?;
    out.emit(serde_json::json!({"seq": head.seq, "hash": head.hash, "at": head.at}), || {
        format!("{} {}", head.seq, head.hash)
    });
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
