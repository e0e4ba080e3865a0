//! Judges' verbs, so a ruling needs no hand-written JSON: `rewind`,
//! `decide`, `penalty`, `add-judge` and `note`. Each names the event it
//! concerns by seq; the hash is read from the store, and the ruling is
//! appended like any action (the fold checks it).

use std::process::ExitCode;

use arbiter::json::parse_strict;
use arbiter::ops;
use arbiter::record::{RecordError, Submission};
use serde_json::{Value, json};

use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Common {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
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
    /// The event the penalty is about (default: the head).
    #[arg(long)]
    pub concerns: Option<u64>,
    /// The seat penalised (its id, e.g. p2).
    #[arg(long)]
    pub seat: String,
    /// The infraction, in the tournament rules' words.
    #[arg(long)]
    pub infraction: String,
    /// The penalty given (e.g. warning, game loss).
    #[arg(long)]
    pub penalty: String,
    /// The fix applied at the table.
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
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// A seat or judge.
    #[arg(long)]
    pub actor: String,
    /// The event annotated (default: the head).
    #[arg(long)]
    pub concerns: Option<u64>,
    /// The note's text.
    pub text: String,
}

/// `{"seq", "hash"}` of an event of the game (default: the head).
fn concerns(target: &Target, game: &str, seq: Option<u64>) -> anyhow::Result<Value> {
    match target {
        Target::Local(store) => ops::concerns(store.as_ref(), game, seq).map_err(rec),
        Target::Remote(c) => {
            let head = c.get(&c.game(game, "")?)?;
            let seq = seq.unwrap_or(head["seq"].as_u64().unwrap_or(0));
            let page = c.get(&c.game(game, &format!("/events?from={seq}&limit=1"))?)?;
            match page["events"].get(0) {
                Some(e) if e["seq"] == json!(seq) => Ok(json!({"seq": seq, "hash": e["hash"]})),
                _ => {
                    Err(rec(RecordError::Input(format!("seq {seq} is past the head of {game} (seq {})", head["seq"]))))
                }
            }
        }
    }
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

fn append(target: &Target, game: &str, actor: &str, action: Value, out: &Output) -> anyhow::Result<ExitCode> {
    let sub = Submission { actor: actor.to_string(), action, at: None };
    super::append::submit(target, game, &[sub], None, None, |done| {
        out.emit(done.clone(), || super::append::text(&done))
    })?;
    Ok(ExitCode::SUCCESS)
}

pub fn rewind(target: &Target, a: &RewindArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let action = ruling(c, "rewind", concerns(target, &c.game, Some(a.to))?, json!({}));
    append(target, &c.game, &c.judge, action, out)
}

pub fn decide(target: &Target, a: &DecideArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let decision = parse_strict(&a.decision)
        .map_err(|e| rec(RecordError::Input(format!("the decision is not valid JSON: {e}"))))?;
    let action = ruling(c, "decide", concerns(target, &c.game, a.concerns)?, json!({"decision": decision}));
    append(target, &c.game, &c.judge, action, out)
}

pub fn penalty(target: &Target, a: &PenaltyArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let extra = json!({"seat": a.seat, "infraction": a.infraction, "penalty": a.penalty, "fix": a.fix});
    let action = ruling(c, "penalty", concerns(target, &c.game, a.concerns)?, extra);
    append(target, &c.game, &c.judge, action, out)
}

pub fn add_judge(target: &Target, a: &AddJudgeArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let c = &a.common;
    let action = ruling(c, "add_judge", concerns(target, &c.game, Some(0))?, json!({"judge": a.name}));
    append(target, &c.game, &c.judge, action, out)
}

pub fn note(target: &Target, a: &NoteArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let action = json!({"type": "note", "concerns": concerns(target, &a.game, a.concerns)?, "text": a.text});
    append(target, &a.game, &a.actor, action, out)
}
