//! `arbiter demo [--ruleset NAME]`: records a bundled sample game into the store, step
//! by step through the same append path as a table would, then replays
//! its log and verifies it.

use std::process::ExitCode;

use std::collections::HashMap;

use arbiter::event::Header;
use arbiter::kernel::View;
use arbiter::ops;
use arbiter::record::{self, RecordError, Recorder, Submission};
use arbiter::rules::words;
use arbiter::rules::{Kind, Table};
use serde_json::json;

use super::new::str;
use super::remote::Client;
use super::{Output, Target, append, rec};

#[derive(clap::Args)]
pub struct Args {
    /// Name for the recorded game (default: sample, sample-2, ...; or RULESET-sample...).
    #[arg(long = "as")]
    pub name: Option<String>,
    /// Which ruleset's sample to record.
    #[arg(long, default_value = arbiter::rules::doomtrooper::NAME, value_parser = super::rulesets())]
    pub ruleset: String,
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let games: Vec<String> = match target {
        Target::Local(store) => store.games().map_err(|e| rec(e.into()))?,
        Target::Remote(c) => serde_json::from_value(c.get("/api/games")?)?,
    };
    let name = match &a.name {
        Some(n) => n.clone(),
        None => {
            // The first ruleset's sample is plain "sample", as the quick start shows it.
            let base = match Kind::named(&a.ruleset) {
                Some(Kind::Doomtrooper) => "sample".to_string(),
                _ => format!("{}-sample", a.ruleset),
            };
            (1..)
                .map(|i| if i == 1 { base.clone() } else { format!("{base}-{i}") })
                .find(|n| !games.contains(n))
                .expect("a free name")
        }
    };
    let sample = Kind::named(&a.ruleset).expect("--ruleset takes a known ruleset").sample();
    let mut lines = sample.lines().filter(|l| !l.trim().is_empty());
    let first = Submission::parse(lines.next().expect("sample has a header")).map_err(rec)?;
    let header: Header = serde_json::from_value(first.action).map_err(|e| rec(RecordError::Input(e.to_string())))?;
    let subs: Vec<Submission> = lines.map(Submission::parse).collect::<Result<_, _>>().map_err(rec)?;
    let (events, verified, state) = match target {
        Target::Local(store) => {
            record::create(store.as_ref(), &name, &header, &first.actor, None).map_err(rec)?;
            let mut recorder = Recorder::load(store.as_ref(), &name).map_err(rec)?;
            let mut events = Vec::new();
            for sub in &subs {
                events.push(recorder.append(sub, None).map_err(rec)?.event);
            }
            let verified = ops::verify_game(store.as_ref(), &name, None).map_err(rec)?;
            (events, verified, ops::state(store.as_ref(), &name, None).map_err(rec)?)
        }
        Target::Remote(c) => {
            // Through the server as a tournament would: the organiser creates
            // the game and issues each seat and judge a token; each then
            // appends as itself.
            c.post("/api/games", &json!({"name": name, "header": header, "by": first.actor}))?;
            let mut clients: HashMap<String, Client> = HashMap::new();
            let mut events = Vec::new();
            for (i, sub) in subs.iter().enumerate() {
                if !clients.contains_key(&sub.actor) {
                    let role = if header.seats.iter().any(|s| s.id == sub.actor) { "seat" } else { "judge" };
                    let t = c.post(&c.game(&name, "/tokens")?, &json!({ role: sub.actor }))?;
                    clients.insert(sub.actor.clone(), c.with_token(str(&t["token"])));
                }
                let seat = &clients[&sub.actor];
                let expect = i as u64 + 1;
                let mut stored = None;
                let one = std::slice::from_ref(sub);
                append::submit(&Target::Remote(seat.clone()), &name, one, None, Some(expect), |d| stored = Some(d))?;
                events.push(serde_json::from_value(stored.expect("one acknowledgement")["event"].clone())?);
            }
            let verified = c.get(&c.game(&name, "/verify")?)?;
            (events, verified, c.get(&c.game(&name, "/state")?)?)
        }
    };
    if !out.json {
        let place = if matches!(target, Target::Local(_)) { "the store" } else { "the server" };
        println!("recorded the {} sample as game {name:?} in {place}; its log:", a.ruleset);
        // Each event in the board's words, said at the state before it.
        println!("{:>4}  {:<10} {}", 0, first.actor, words(None, &serde_json::to_value(&header)?));
        let mut table = Table::open(&header).ok();
        for event in &events {
            println!("{:>4}  {:<10} {}", event.seq, header.name_of(&event.actor), words(table.as_ref(), &event.action));
            table = table.and_then(|t| t.apply(event.seq, &event.actor, &event.action).ok());
        }
    }
    let view: View = serde_json::from_value(state.clone())?;
    out.emit(json!({"game": name, "events": verified["events"], "head": verified["head"], "step": state["step"], "state": state["state"]}), || {
        let who: Vec<String> = view.may_act.iter().map(|id| header.name_of(id)).collect();
        let legal: Vec<&str> = view.legal.iter().map(|t| t.name()).collect();
        // The board as `state` draws it: where the game ended, in words.
        let board = super::board::text(&a.ruleset, &state["board"], super::board::Paint::for_stdout()).unwrap_or_default();
        format!(
            "verified: {} events, hashes, links and rules; head {}\nnow: {}; may act: {}; legal: {}\n\n{board}\nnext: arbiter state {name} | arbiter replay {name} --hide-passes | arbiter export {name} -o {name}.jsonl | tools/verify-with-jq.sh {name}.jsonl",
            verified["events"],
            str(&verified["head"]),
            view.step.reference,
            who.join(", "),
            legal.join(", ")
        )
    });
    Ok(ExitCode::SUCCESS)
}
