//! `arbiter moves GAME [--at SEQ] [--as SEAT]`: what each seat and judge may
//! record now, numbered, with what each move chooses and enters.

use std::process::ExitCode;

use arbiter::kernel::moves::{Entry, Move, bounds, menu};
use arbiter::ops;
use serde_json::Value;

use super::new::str as text;
use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// The moves after this seq (default: the head).
    #[arg(long)]
    pub at: Option<u64>,
    /// Only this seat's (or judge's) moves.
    #[arg(long = "as", value_name = "SEAT")]
    pub as_seat: Option<String>,
}

/// The moves as the library or the server gives them: `{"game", "seq", "step", "moves"}`.
pub fn fetch(target: &Target, game: &str, at: Option<u64>, actor: Option<&str>) -> anyhow::Result<Value> {
    match target {
        Target::Local(store) => ops::moves(store.as_ref(), game, at, actor).map_err(rec),
        Target::Remote(c) => {
            let mut query = vec![];
            if let Some(at) = at {
                query.push(format!("at={at}"));
            }
            if let Some(a) = actor {
                // A judge's name is free text ("Dana Smith", "A&B"): encoded, it reaches the server whole.
                let name = percent_encoding::utf8_percent_encode(a, percent_encoding::NON_ALPHANUMERIC);
                query.push(format!("as={name}"));
            }
            let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
            c.get(&c.game(game, &format!("/moves{query}"))?)
        }
    }
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let v = fetch(target, &a.game, a.at, a.as_seat.as_deref())?;
    out.emit(v.clone(), || {
        let moves: Vec<Move> = serde_json::from_value(v["moves"].clone()).unwrap_or_default();
        let mut s = format!("{} after seq {}: {}\n", a.game, v["seq"], text(&v["step"]["reference"]));
        if moves.is_empty() {
            s += "  no moves\n";
        }
        // Numbered as `record` numbers them.
        for (i, m) in menu(&moves).into_iter().enumerate() {
            s += &format!("{:>4}. {}\n", i + 1, describe(m, &v["seats"]));
        }
        s.trim_end().to_string()
    });
    Ok(ExitCode::SUCCESS)
}

/// An actor by name ("Bob (p2)") from the `seats` of a moves answer; a judge as named.
pub fn by_name(seats: &Value, id: &str) -> String {
    let seat = seats.as_array().into_iter().flatten().find(|s| s["id"] == id);
    match seat.and_then(|s| s["name"].as_str()) {
        Some(name) => format!("{name} ({id})"),
        None => id.to_string(),
    }
}

/// A move on one line: who, what, then what it chooses and enters.
pub fn describe(m: &Move, seats: &Value) -> String {
    let mut parts = vec![format!("{}: {}", by_name(seats, &m.seat), m.label)];
    for c in &m.choose {
        let options: Vec<&str> = c.options.iter().map(|o| o.label.as_str()).collect();
        let how = match (c.list, c.min, c.max) {
            (false, 0, _) => "choose (or leave out)".to_string(),
            (false, _, _) => "choose".to_string(),
            (true, min, max) if min == max => format!("choose {min} of"),
            (true, min, max) => format!("choose {min} to {max} of"),
        };
        parts.push(format!("{how} {}: {}", c.field, options.join(" / ")));
    }
    for e in &m.enter {
        parts.push(format!("enter {}", entry_words(e)));
    }
    parts.join("; ")
}

fn entry_words(e: &Entry) -> String {
    let kind = serde_json::to_value(e.kind).ok().and_then(|k| k.as_str().map(String::from)).unwrap_or_default();
    let mut s = format!("{} ({kind}", e.field);
    if e.min.is_some() || e.max.is_some() {
        s += &format!(", {}", bounds(e.min, e.max));
    }
    if e.optional {
        s += ", optional";
    }
    s += ")";
    if !e.items.is_empty() {
        let items: Vec<String> = e.items.iter().map(entry_words).collect();
        s += &format!(" of [{}]", items.join(", "));
    }
    s
}
