//! `arbiter new GAME --ruleset NAME --seat ID=NAME ...`

use std::process::ExitCode;

use arbiter::access::{self, ReadAccess};
use arbiter::event::{Header, OpenTag, Seat};
use arbiter::ops;
use arbiter::rules::Kind;
use serde_json::{Value, json};

use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The new game's name (letters, digits, '.', '-', '_').
    pub game: String,
    /// The ruleset: whose combat procedure the game follows.
    #[arg(long, value_parser = super::rulesets())]
    pub ruleset: String,
    /// Ruleset version (default: the newest this arbiter knows).
    #[arg(long)]
    pub ruleset_version: Option<u64>,
    /// A seat, as ID=NAME (e.g. p1=Alice); repeat in table order.
    #[arg(long = "seat", value_parser = parse_seat, required = true)]
    pub seats: Vec<Seat>,
    /// A judge's name; repeat for more.
    #[arg(long = "judge")]
    pub judges: Vec<String>,
    /// The tournament's name, for the header.
    #[arg(long)]
    pub tournament: Option<String>,
    /// The round number, for the header.
    #[arg(long)]
    pub round: Option<u64>,
    /// The table number, for the header.
    #[arg(long)]
    pub table: Option<u64>,
    /// A ruleset option, as KEY=VALUE; VALUE is JSON if it parses, else a string
    /// (e.g. --option mode=1v1 --option 'battlefields=["Altar","Forge"]').
    #[arg(long = "option", value_parser = parse_option)]
    pub options: Vec<(String, serde_json::Value)>,
    /// Who opens the game (the actor of event 0).
    #[arg(long, default_value = "organiser")]
    pub by: String,
    /// Who may read the game through a server: anyone (public) or token holders only.
    #[arg(long, default_value = "public", value_parser = ["public", "token"])]
    pub read: String,
}

fn parse_seat(s: &str) -> Result<Seat, String> {
    let (id, name) = s.split_once('=').ok_or_else(|| format!("a seat is ID=NAME, e.g. p1=Alice, not {s:?}"))?;
    Ok(Seat { id: id.to_string(), name: name.to_string() })
}

fn parse_option(s: &str) -> Result<(String, serde_json::Value), String> {
    let (key, value) = s.split_once('=').ok_or_else(|| format!("an option is KEY=VALUE, not {s:?}"))?;
    let value = arbiter::json::parse_strict(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
    Ok((key.to_string(), value))
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let version = a.ruleset_version.or_else(|| Kind::named(&a.ruleset).map(Kind::version)).unwrap_or(0);
    let header = Header {
        kind: OpenTag::Open,
        ruleset: a.ruleset.clone(),
        ruleset_version: version,
        seats: a.seats.clone(),
        judges: a.judges.clone(),
        tournament: a.tournament.clone(),
        round: a.round,
        table: a.table,
        options: a.options.iter().cloned().collect(),
    };
    let read = if a.read == "token" { ReadAccess::Token } else { ReadAccess::Public };
    let event = match target {
        Target::Local(store) => {
            // Read access is set in the step that creates the game, as the
            // server does: a name that exists keeps the access it has.
            access::creating(store.as_ref(), &a.game, read, || ops::create(store.as_ref(), &a.game, &header, &a.by))
                .map_err(rec)?
        }
        Target::Remote(c) => {
            c.post("/api/games", &json!({"name": a.game, "header": header, "by": a.by, "read": read}))?
        }
    };
    out.emit(event.clone(), || text(&a.game, &event));
    Ok(ExitCode::SUCCESS)
}

fn text(game: &str, event: &Value) -> String {
    let h = &event["action"];
    format!(
        "created game {game} ({} v{}), seq 0, hash {}",
        str(&h["ruleset"]),
        h["ruleset_version"],
        str(&event["hash"])
    )
}

/// A JSON string's text (empty if it is not a string).
pub fn str(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}
