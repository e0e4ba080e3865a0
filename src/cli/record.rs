//! `arbiter record GAME [--as SEAT | --judge NAME]`: a terminal recorder.
//!
//! It shows the board, numbers the moves (`arbiter moves`), and asks for
//! the move, then for each of its choices from the options and each value
//! it enters within its bounds, with arrow keys and typing. The action is
//! built from the move (no JSON is typed), shown for confirmation and
//! appended with the seq it expects, so a retry is safe and another
//! recorder's event in between is a conflict, not a surprise. A refusal is
//! printed and nothing is stored.
//!
//! Without `--as` or `--judge` it records for everyone at the table (one
//! laptop, the judge's or the scorekeeper's). With one, it offers that
//! actor's moves, and while another seat is to act it waits for that
//! seat's event: on the server's live stream, or by reading the head of a
//! database store again. A directory store is held open by this process, so
//! no one else can record in it meanwhile: there it says so instead.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use arbiter::kernel::moves::{Choice, Entry, EntryKind, Move, always_open, bounds, menu};
use arbiter::ops;
use arbiter::record::{RecordError, Submission};
use arbiter::rules::describe;
use inquire::error::InquireError;
use inquire::{Confirm, Select, Text};
use serde_json::{Value, json};

use super::board::Paint;
use super::read::{state_text, state_value};
use super::{Output, Target, append, moves, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// Record as this seat: only its moves are offered, and while another seat is to act it waits.
    #[arg(long = "as", value_name = "SEAT", conflicts_with = "judge")]
    pub as_seat: Option<String>,
    /// Record as this judge: only the judge's moves (rulings, decisions, notes) are offered.
    #[arg(long, value_name = "NAME")]
    pub judge: Option<String>,
}

/// What to do after a move was asked for.
enum Asked {
    Record(Move, Vec<(String, Value)>),
    /// The move was left (Esc): ask for a move again.
    Back,
    Quit,
}

pub fn run(target: &Target, a: &Args, waits: bool, out: &Output) -> anyhow::Result<ExitCode> {
    if out.json {
        bail!("record asks its questions on a terminal and prints for people; --json does not apply to it");
    }
    if !std::io::stdin().is_terminal() {
        bail!("record asks its questions on a terminal; to record from a file or a pipe, use `arbiter append GAME -`");
    }
    let actor = a.as_seat.as_deref().or(a.judge.as_deref());
    loop {
        let v = moves::fetch(target, &a.game, None, actor)?;
        let seq = v["seq"].as_u64().context("the moves answer has a seq")?;
        let all: Vec<Move> = serde_json::from_value(v["moves"].clone())?;
        let state = state_value(target, &a.game, Some(seq))?;
        println!("\n{}\n", state_text(&a.game, &state, &all, Paint::for_stdout()));
        let listed = menu(&all);
        // A seat with nothing of the combat to do waits for the event that
        // gives it something. A judge does not: rulings are always open to it.
        let who: Vec<&str> = state["may_act"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if let Some(me) = a.as_seat.as_deref()
            && !who.is_empty()
            && listed.iter().all(|m| always_open(m))
        {
            let who = who.join(", ");
            if waits {
                println!("{me} has no move now; waiting for {who} (Ctrl-C to stop)");
                wait_past(target, &a.game, seq)?;
                continue;
            }
            println!(
                "{me} has no move now ({who} to act), and no one else can record in this store while it is open here: \
                 record without --as on this machine, or serve the store and record with --server"
            );
        }
        for (i, m) in listed.iter().enumerate() {
            println!("{:>4}. {}", i + 1, moves::describe(m, &v["seats"]));
        }
        match ask(target, &a.game, &listed, seq, &v["seats"])? {
            Asked::Quit => return Ok(ExitCode::SUCCESS),
            Asked::Back => continue,
            Asked::Record(m, values) => {
                let action = m.build(&values);
                let question = format!("record {} by {}?", describe(&action), moves::by_name(&v["seats"], &m.seat));
                match answer(Confirm::new(&question).with_default(true).prompt())? {
                    Some(true) => {}
                    Some(false) | None => continue,
                }
                let sub = Submission { actor: m.seat.clone(), action, at: None };
                let stored = append::submit(target, &a.game, &[sub], None, Some(seq + 1), |done| {
                    let again = if done["duplicate"] == json!(true) { " (it was stored already: a retry)" } else { "" };
                    println!(
                        "seq {} appended{again}: {}",
                        done["event"]["seq"],
                        super::new::str(&done["event"]["hash"])
                    );
                });
                if let Err(e) = stored {
                    not_stored(e)?;
                }
            }
        }
    }
}

/// Says why an append was not stored, and goes on where the table can do
/// something about it (a refusal, a conflict, input the store refused, a
/// token that may not act so); any other error ends the recorder.
fn not_stored(e: anyhow::Error) -> anyhow::Result<()> {
    match e.downcast_ref::<RecordError>() {
        Some(RecordError::Refused(v)) => {
            println!("refused: {}\n  rule: {}", v.message, v.rule);
            if !v.offered.is_empty() {
                println!("  you may: {}", v.offered.join(" · "));
            }
            println!("  nothing was stored");
        }
        Some(RecordError::Conflict { .. }) => {
            println!("another event was recorded first: nothing was stored; here is the game now")
        }
        Some(RecordError::Input(why)) => println!("not stored: {why}"),
        _ => match e.downcast_ref::<super::Denied>() {
            Some(d) => println!("not stored: {}: {}", d.code, d.message),
            None => return Err(e),
        },
    }
    Ok(())
}

/// The answer to a prompt: None when it was left with Esc; Ctrl-C ends the recorder.
fn answer<T>(r: Result<T, InquireError>) -> anyhow::Result<Option<T>> {
    match r {
        Ok(t) => Ok(Some(t)),
        Err(InquireError::OperationCanceled) => Ok(None),
        Err(InquireError::OperationInterrupted) => bail!("stopped (Ctrl-C); nothing more was recorded"),
        Err(e) => Err(anyhow::Error::new(RecordError::Io(format!("cannot ask on this terminal: {e}")))),
    }
}

/// Asks for a move, then for each of its choices and entries.
fn ask(target: &Target, game: &str, listed: &[&Move], seq: u64, seats: &Value) -> anyhow::Result<Asked> {
    let mut items: Vec<String> = listed
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{}. {}: {}", i + 1, moves::by_name(seats, &m.seat), m.label))
        .collect();
    items.push("quit".into());
    let Some(picked) = answer(Select::new(&format!("move after seq {seq}:"), items).with_page_size(12).raw_prompt())?
    else {
        return Ok(Asked::Quit);
    };
    let Some(m) = listed.get(picked.index) else { return Ok(Asked::Quit) };
    let mut values = vec![];
    for c in &m.choose {
        match choose(c)? {
            Some(Some(v)) => values.push((c.field.clone(), v)),
            Some(None) => {}
            None => return Ok(Asked::Back),
        }
    }
    for e in &m.enter {
        match enter(target, game, e, &e.field)? {
            Some(Some(v)) => values.push((e.field.clone(), v)),
            Some(None) => {}
            None => return Ok(Asked::Back),
        }
    }
    Ok(Asked::Record((*m).clone(), values))
}

/// One choice: a value (Some(Some)), left out (Some(None)), or Esc (None).
/// A list is picked one option at a time, so its order is the order picked.
fn choose(c: &Choice) -> anyhow::Result<Option<Option<Value>>> {
    let labels = |options: &[&arbiter::kernel::Pick]| options.iter().map(|o| o.label.clone()).collect::<Vec<_>>();
    if !c.list {
        let options: Vec<&arbiter::kernel::Pick> = c.options.iter().collect();
        let mut items = labels(&options);
        if c.min == 0 {
            items.push("(leave out)".into());
        }
        // A move from a server might carry a choice with no options: nothing to pick.
        if items.is_empty() {
            return Ok(Some(None));
        }
        let Some(p) = answer(Select::new(&format!("{}:", c.field), items).raw_prompt())? else { return Ok(None) };
        return Ok(Some(options.get(p.index).map(|o| o.value.clone())));
    }
    let mut picked: Vec<Value> = vec![];
    loop {
        let left: Vec<&arbiter::kernel::Pick> = c.options.iter().filter(|o| !picked.contains(&o.value)).collect();
        if picked.len() as u32 >= c.max || left.is_empty() {
            break;
        }
        let mut items = labels(&left);
        let can_stop = picked.len() as u32 >= c.min;
        if can_stop {
            items.insert(0, "(done)".into());
        }
        let question = format!("{} ({} picked; pick {} to {}):", c.field, picked.len(), c.min, c.max);
        let Some(p) = answer(Select::new(&question, items).raw_prompt())? else { return Ok(None) };
        match (can_stop, p.index) {
            (true, 0) => break,
            (true, i) => picked.push(left[i - 1].value.clone()),
            (false, i) => picked.push(left[i].value.clone()),
        }
    }
    Ok(Some(Some(Value::Array(picked))))
}

/// One entry, typed: a value (Some(Some)), left out (Some(None)), or Esc (None).
fn enter(target: &Target, game: &str, e: &Entry, path: &str) -> anyhow::Result<Option<Option<Value>>> {
    let mut question = format!("{} ({path}", e.label);
    if e.min.is_some() || e.max.is_some() {
        question += &format!(", {}", bounds(e.min, e.max));
    }
    question += if e.optional { ", empty to leave out):" } else { "):" };
    let entry = e.clone();
    let check = move |text: &str| {
        let value = match parse(&entry, text) {
            Ok(None) if entry.optional => return Ok(inquire::validator::Validation::Valid),
            Ok(None) => Err("a value is needed".to_string()),
            Ok(Some(v)) if entry.kind == EntryKind::Event => entry.check(&json!({"seq": v, "hash": "0".repeat(64)})),
            Ok(Some(v)) => entry.check(&v),
            Err(why) => Err(why),
        };
        Ok(match value {
            Ok(()) => inquire::validator::Validation::Valid,
            Err(why) => inquire::validator::Validation::Invalid(why.into()),
        })
    };
    if e.kind == EntryKind::List {
        let (min, max, optional) = (e.min.unwrap_or(0).max(0), e.max, e.optional);
        let how_many = format!("how many: {question}");
        let count = Text::new(&how_many).with_validator(move |text: &str| {
            use inquire::validator::Validation::{Invalid, Valid};
            Ok(match text.trim().parse::<i64>() {
                _ if text.is_empty() && optional => Valid,
                Ok(n) if n >= min && max.is_none_or(|m| n <= m) => Valid,
                Ok(n) => Invalid(format!("{n} is outside {}", bounds(Some(min), max)).into()),
                Err(_) => Invalid(format!("{text:?} is not a whole number").into()),
            })
        });
        let Some(text) = answer(count.prompt())? else { return Ok(None) };
        if text.is_empty() {
            return Ok(Some(None));
        }
        let n: i64 = text.trim().parse().context("a count")?;
        let mut list = vec![];
        for i in 0..n {
            let mut item = Value::Null;
            for c in &e.choose {
                let at = Choice { field: format!("{path}/{i}/{}", c.field), ..c.clone() };
                match choose(&at)? {
                    Some(Some(v)) => arbiter::kernel::moves::put(&mut item, &c.field, v),
                    Some(None) => {}
                    None => return Ok(None),
                }
            }
            for field in &e.items {
                let at =
                    if field.field.is_empty() { format!("{path}/{i}") } else { format!("{path}/{i}/{}", field.field) };
                match enter(target, game, field, &at)? {
                    Some(Some(v)) => arbiter::kernel::moves::put(&mut item, &field.field, v),
                    Some(None) => {}
                    None => return Ok(None),
                }
            }
            list.push(if item.is_null() { json!({}) } else { item });
        }
        return Ok(Some(Some(Value::Array(list))));
    }
    // Names already on the board, offered as the table types (Tab takes one).
    let suggested: Vec<String> = e.suggest.iter().filter_map(|p| p.value.as_str().map(String::from)).collect();
    let complete = move |typed: &str| -> Result<Vec<String>, inquire::CustomUserError> {
        let typed = typed.to_lowercase();
        Ok(suggested.iter().filter(|s| s.to_lowercase().starts_with(&typed)).cloned().collect())
    };
    let prompt = Text::new(&question).with_validator(check).with_autocomplete(complete);
    let Some(text) = answer(prompt.prompt())? else { return Ok(None) };
    let value = parse(e, &text).map_err(|why| anyhow::anyhow!(why))?;
    match (e.kind, value) {
        // An event is named by its seq; its hash is read from the record.
        (EntryKind::Event, Some(seq)) => {
            let seq = seq.as_u64().context("a seq")?;
            Ok(Some(Some(json!({"seq": seq, "hash": event_hash(target, game, seq)?}))))
        }
        (_, value) => Ok(Some(value)),
    }
}

/// The typed text as the entry's value: None when empty.
fn parse(e: &Entry, text: &str) -> Result<Option<Value>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    if e.kind.is_number() || e.kind == EntryKind::Event {
        return text
            .trim()
            .parse::<i64>()
            .map(|n| Some(json!(n)))
            .map_err(|_| format!("{text:?} is not a whole number"));
    }
    Ok(Some(json!(text)))
}

/// The hash of event `seq` of the game, for a ruling or note that names it.
fn event_hash(target: &Target, game: &str, seq: u64) -> anyhow::Result<String> {
    let v = match target {
        Target::Local(store) => ops::concerns(store.as_ref(), game, Some(seq)).map_err(rec)?,
        Target::Remote(c) => {
            let page = c.get(&c.game(game, &format!("/events?from={seq}&limit=1"))?)?;
            page["events"][0].clone()
        }
    };
    v["hash"].as_str().map(String::from).context("the event's hash")
}

/// Waits until the game's head is past `seq`: on the server's live stream,
/// or by reading a database store's head again.
fn wait_past(target: &Target, game: &str, seq: u64) -> anyhow::Result<()> {
    match target {
        Target::Remote(c) => {
            let mut lines = c.stream(&c.game(game, &format!("/stream?from={}", seq + 1))?)?;
            // The first `event` message is the next event.
            let mut line = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).context("the live stream ended")? == 0 {
                    bail!("the server closed the live stream");
                }
                if line.starts_with("event: event") || line.starts_with("event:event") {
                    return Ok(());
                }
            }
        }
        Target::Local(store) => loop {
            if store.head(game).map_err(|e| rec(e.into()))?.is_some_and(|h| h.seq > seq) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(300));
        },
    }
}
