//! Judges' verbs, so a ruling needs no hand-written JSON: `rewind`,
//! `decide`, `penalty`, `add-judge` and `note`. Each names the event it
//! concerns by seq; the hash is read from the store, and the ruling is
//! appended like any action (the fold checks it).

use std::process::ExitCode;

use arbiter::json::parse_strict;
use arbiter::record::{RecordError, Recorder, Submission};
use arbiter::store::Store;
use serde_json::{Value, json};

use super::read::view_text;
use super::{Output, rec};

#[derive(clap::Args)]
pub struct Common {
    pub game: String,
    /// The judge making the ruling.
    #[arg(long)]
    pub judge: String,
    /// Why.
    #[arg(long)]
    pub reason: String,
    /// The rule cited, e.g. "Doomtrooper step 21".
    #[arg(long)]
    pub rule: Option<String>,
}

#[derive(clap::Args)]
pub struct RewindArgs {
    #[command(flatten)]
    pub common: Common,
    /// The combat returns to the state after this seq.
    #[arg(long)]
    pub to: u64,
}

#[derive(clap::Args)]
pub struct DecideArgs {
    #[command(flatten)]
    pub common: Common,
    /// The event the decision is about (default: the head).
    #[arg(long)]
    pub concerns: Option<u64>,
    /// The decision: the ruleset's action, as JSON.
    pub decision: String,
}

#[derive(clap::Args)]
pub struct PenaltyArgs {
    #[command(flatten)]
    pub common: Common,
    #[arg(long)]
    pub concerns: Option<u64>,
    #[arg(long)]
    pub seat: String,
    #[arg(long)]
    pub infraction: String,
    #[arg(long)]
    pub penalty: String,
    #[arg(long)]
    pub fix: String,
}

#[derive(clap::Args)]
pub struct AddJudgeArgs {
    #[command(flatten)]
    pub common: Common,
    /// The new judge's name.
    #[arg(long)]
    pub name: String,
}

#[derive(clap::Args)]
pub struct NoteArgs {
    pub game: String,
    /// A seat or judge.
    #[arg(long)]
    pub actor: String,
    /// The event annotated (default: the head).
    #[arg(long)]
    pub concerns: Option<u64>,
    pub text: String,
}

/// `{"seq", "hash"}` of an event of the game (default: the head).
fn concerns(store: &dyn Store, game: &str, seq: Option<u64>) -> anyhow::Result<Value> {
    let head = store.head(game).map_err(|e| rec(e.into()))?.ok_or_else(|| rec(RecordError::NoSuchGame(game.into())))?;
    let seq = seq.unwrap_or(head.seq);
    let event = store
        .get(game, seq)
        .map_err(|e| rec(e.into()))?
        .ok_or_else(|| rec(RecordError::Input(format!("seq {seq} is past the head of {game} (seq {})", head.seq))))?;
    Ok(json!({"seq": seq, "hash": event.hash}))
}

fn ruling(c: &Common, kind: &str, concerns: Value, extra: Value) -> Value {
    let mut v = json!({"type": "ruling", "kind": kind, "concerns": concerns, "reason": c.reason});
    if let Some(rule) = &c.rule {
        v["rule"] = json!(rule);
    }
    for (k, x) in extra.as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    v
}

fn append(store: &dyn Store, game: &str, actor: &str, action: Value, out: &Output) -> anyhow::Result<ExitCode> {
    let mut recorder = Recorder::load(store, game).map_err(rec)?;
    let done = recorder.append(&Submission { actor: actor.to_string(), action, at: None }, None).map_err(rec)?;
    let view = recorder.table().view();
    out.emit(json!({"event": done.event, "view": view}), || {
        format!("seq {} appended: {}\n  now: {}", done.event.seq, done.event.hash, view_text(&view))
    });
    Ok(ExitCode::SUCCESS)
}

pub fn rewind(store: &dyn Store, a: RewindArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let action = ruling(c, "rewind", concerns(store, &c.game, Some(a.to))?, json!({}));
    append(store, &c.game, &c.judge, action, out)
}

pub fn decide(store: &dyn Store, a: DecideArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let decision = parse_strict(&a.decision)
        .map_err(|e| rec(RecordError::Input(format!("the decision is not valid JSON: {e}"))))?;
    let action = ruling(c, "decide", concerns(store, &c.game, a.concerns)?, json!({"decision": decision}));
    append(store, &c.game, &c.judge, action, out)
}

pub fn penalty(store: &dyn Store, a: PenaltyArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let extra = json!({"seat": a.seat, "infraction": a.infraction, "penalty": a.penalty, "fix": a.fix});
    let action = ruling(c, "penalty", concerns(store, &c.game, a.concerns)?, extra);
    append(store, &c.game, &c.judge, action, out)
}

pub fn add_judge(store: &dyn Store, a: AddJudgeArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let action = ruling(c, "add_judge", concerns(store, &c.game, Some(0))?, json!({"judge": a.name}));
    append(store, &c.game, &c.judge, action, out)
}

pub fn note(store: &dyn Store, a: NoteArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let action = json!({"type": "note", "concerns": concerns(store, &a.game, a.concerns)?, "text": a.text});
    append(store, &a.game, &a.actor, action, out)
}
