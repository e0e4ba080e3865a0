//! `games`, `log GAME`, `state GAME [--at SEQ]`, `head GAME`.

use std::process::ExitCode;

use arbiter::event::{ActionType, Event, decode};
use arbiter::kernel::View;
use arbiter::kernel::moves::{Move, in_words};
use arbiter::ops;
use arbiter::record::{RecordError, StoredGame};
use arbiter::replay::{Logged, Said};
use arbiter::rules::describe;
use serde_json::{Value, json};

use super::board::{self, Paint};
use super::new::str as text;
use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct GameArg {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
}

#[derive(clap::Args)]
pub struct LogArgs {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// First seq to print.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Fold each run of passes into one line ("p1, p3 pass").
    #[arg(long)]
    pub hide_passes: bool,
}

#[derive(clap::Args)]
pub struct StateArgs {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
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
    // With --hide-passes, a run of passes is held here until the next other event.
    let mut run: Vec<(Event, Option<Logged>)> = Vec::new();
    // Each event a judge's rewind took back is marked with the rewind's seq
    // (`Logged::rewound_by`), which the fold at the head knows.
    let mut print = |event: &Event, logged: Option<Logged>| -> anyhow::Result<()> {
        if event.seq < a.from {
            return Ok(());
        }
        if a.hide_passes && words {
            // A pass that recorded something, or that a rewind took back, is shown on its own.
            let plain = logged.as_ref().is_none_or(|l| l.recorded.is_empty() && l.rewound_by.is_none());
            if event.action_type() == Some(ActionType::Pass) && plain {
                run.push((event.clone(), logged));
                return Ok(());
            }
            flush_passes(&mut run);
        }
        out.emit(serde_json::to_value(event)?, || log_line(event, logged.as_ref()));
        Ok(())
    };
    match target {
        Target::Local(store) => {
            let source = StoredGame::new(store.as_ref(), &a.game);
            // What rewinds took back, from the latest snapshot on; then the events stream.
            let head = if words { Some(arbiter::replay::fold_at_head(&source).map_err(rec)?) } else { None };
            for event in store.read(&a.game, first).map_err(|e| rec(e.into()))? {
                let event = event.map_err(|e| rec(e.into()))?;
                let logged = if words { said.next(&event, &source).map_err(rec)? } else { None };
                let logged =
                    logged.map(|l| Logged { rewound_by: head.as_ref().and_then(|h| h.rewound_by(event.seq)), ..l });
                print(&event, logged)?;
            }
        }
        Target::Remote(c) => {
            // The events read so far: the source a rewind folds again. In
            // words, every event is read and folded before any is printed,
            // so that a rewind marks the events before it.
            let mut seen: Vec<Event> = vec![];
            let mut logs: Vec<Option<Logged>> = vec![];
            let mut from = Some(first);
            while let Some(f) = from {
                let page = c.get(&c.game(&a.game, &format!("/events?from={f}&limit=1000"))?)?;
                for event in page["events"].as_array().into_iter().flatten() {
                    // Each event is checked on the way in, as if read from a file.
                    let (event, _) = decode(&event.to_string()).map_err(|e| {
                        rec(RecordError::Broken { seq: event["seq"].as_u64().unwrap_or(0), why: e.to_string() })
                    })?;
                    if words {
                        logs.push(said.next(&event, &seen).map_err(rec)?);
                        seen.push(event);
                    } else {
                        print(&event, None)?;
                    }
                }
                from = page["next"].as_u64();
            }
            for (event, logged) in seen.iter().zip(logs) {
                let logged = logged.map(|l| Logged { rewound_by: said.rewound_by(event.seq), ..l });
                print(event, logged)?;
            }
        }
    }
    flush_passes(&mut run);
    Ok(ExitCode::SUCCESS)
}

/// Prints a held run of passes as one line ("4-6  ...  Alice (p1), Carol (p3) pass") and empties it.
fn flush_passes(run: &mut Vec<(Event, Option<Logged>)>) {
    match run.as_slice() {
        [] => {}
        [(one, logged)] => println!("{}", log_line(one, logged.as_ref())),
        [(first, logged), .., (last, _)] => {
            let who: Vec<&str> =
                run.iter().map(|(e, l)| l.as_ref().map_or(e.actor.as_str(), |l| l.by.as_str())).collect();
            let mut line = super::replay::passes_line(first.seq, last.seq, &first.at, &who);
            if let Some(step) = logged.as_ref().and_then(|l| l.at.as_ref()) {
                line += &format!("   [{}]", step.reference);
            }
            println!("{line}");
        }
    }
    run.clear();
}

/// One event in words: seq, time, who by name, the action, the step it was
/// made at, then what the ruleset recorded for it.
fn log_line(event: &Event, logged: Option<&Logged>) -> String {
    let by = logged.map_or(event.actor.as_str(), |l| l.by.as_str());
    // The words said at the state before it; a broken record's rest as its payload.
    let action = logged.map_or_else(|| describe(&event.action), |l| l.words.clone());
    let mut line = format!("{:>5}  {}  {:<10} {action}", event.seq, event.at, by);
    if let Some(ruling) = logged.and_then(|l| l.rewound_by) {
        line += &format!("  [rewound by seq {ruling}]");
    }
    if let Some(step) = logged.and_then(|l| l.at.as_ref()) {
        line += &format!("   [{}]", step.reference);
    }
    for s in logged.map(|l| l.recorded.as_slice()).unwrap_or_default() {
        line += &format!("\n{:>5}  {s}", "");
    }
    line
}

/// The `state` answer, from the store or the server.
pub fn state_value(target: &Target, game: &str, at: Option<u64>) -> anyhow::Result<Value> {
    match target {
        Target::Local(store) => ops::state(store.as_ref(), game, at).map_err(rec),
        Target::Remote(c) => {
            let at = at.map(|at| format!("?at={at}")).unwrap_or_default();
            c.get(&c.game(game, &format!("/state{at}"))?)
        }
    }
}

pub fn state(target: &Target, a: &StateArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let v = state_value(target, &a.game, a.at)?;
    if out.json {
        out.emit(v, String::new);
        return Ok(ExitCode::SUCCESS);
    }
    // In words, each actor's moves (those the caller's token may see, against a server).
    let at = v["seq"].as_u64();
    let moves = super::moves::fetch(target, &a.game, at, None)?;
    let moves: Vec<Move> = serde_json::from_value(moves["moves"].clone())?;
    println!("{}", state_text(&a.game, &v, &moves, Paint::for_stdout()));
    Ok(ExitCode::SUCCESS)
}

pub fn head(target: &Target, a: &GameArg, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => ops::head(store.as_ref(), &a.game).map_err(rec)?,
        Target::Remote(c) => c.get(&c.game(&a.game, "")?)?,
    };
    out.emit(v.clone(), || format!("{} {}", v["seq"], text(&v["hash"])));
    Ok(ExitCode::SUCCESS)
}

/// `state` for people: the header in words, where the combat stands (step,
/// who may act by name, what is legal, a pending ruling), the board, then
/// the adjudication that stands.
pub fn state_text(game: &str, v: &Value, moves: &[Move], paint: Paint) -> String {
    let h = &v["header"];
    let mut title = vec![format!("{game}: {}", super::ruleset_title(text(&v["ruleset"])))];
    if let Some(t) = h["tournament"].as_str() {
        title.push(t.to_string());
    }
    for key in ["round", "table"] {
        if let Some(n) = h[key].as_u64() {
            title.push(format!("{key} {n}"));
        }
    }
    let mut s = paint.bold(&title.join(", ")) + "\n";
    let seats: Vec<String> =
        h["seats"].as_array().into_iter().flatten().map(|seat| by_name(v, text(&seat["id"]))).collect();
    s += &format!("  players: {}\n", seats.join(", "));
    s += &format!("  after seq {} ({})\n", v["seq"], text(&v["hash"]));
    // The answer carries the view's fields (step, may_act, legal, awaiting_ruling).
    if let Ok(view) = serde_json::from_value::<View>(v.clone()) {
        let who: Vec<String> = view.may_act.iter().map(|id| by_name(v, id)).collect();
        let who = if who.is_empty() { "no one".to_string() } else { who.join(", ") };
        s += &format!("  step: {}\n  may act: {who}\n", view.step.reference);
        for line in in_words(moves, |id| by_name(v, id)) {
            s += &format!("  {line}\n");
        }
        if let Some(r) = &view.awaiting_ruling {
            s += &format!("  {}\n", paint.alert(&format!("awaiting a judge's ruling: {r}")));
        }
    }
    s += &adjudication_text(v);
    s += "\n";
    match board::text(text(&v["ruleset"]), &v["board"], paint) {
        Some(board) => s += &board,
        // A ruleset without a board yet: its raw state.
        None => s += &serde_json::to_string_pretty(&v["state"]).unwrap_or_default(),
    }
    s.trim_end().to_string()
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
    for r in v["rulings"].as_array().into_iter().flatten().filter(|r| r["kind"] != "penalty") {
        s += &format!("  ruling (seq {}) by {}: {}\n", r["seq"], text(&r["judge"]), ruling_words(r));
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

/// "rewind to after seq 2: the counter was played from the wrong zone (Doomtrooper step 3)".
fn ruling_words(r: &Value) -> String {
    let what = match text(&r["kind"]) {
        "rewind" => format!("rewind to after seq {}", r["concerns"]),
        "decide" => format!("decides on seq {}", r["concerns"]),
        "add_judge" => "adds a judge".to_string(),
        other => format!("{other} about seq {}", r["concerns"]),
    };
    let rule = r["rule"].as_str().map(|x| format!(" ({x})")).unwrap_or_default();
    format!("{what}: {}{rule}", text(&r["reason"]))
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
