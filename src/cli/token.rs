//! `arbiter token GAME --seat ID | --judge NAME`, `arbiter token --organiser`,
//! and `arbiter access GAME --read public|token`.
//!
//! Against a local store (before or between `serve` runs) whoever holds
//! the store directory is the organiser; against a server it takes the
//! organiser's token. A token is shown once: only its hash is kept.

use std::process::ExitCode;

use anyhow::bail;
use arbiter::access::{self, Grant, ReadAccess};
use serde_json::json;

use super::new::str;
use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The game the token is for (not with --organiser).
    #[arg(required_unless_present = "organiser")]
    pub game: Option<String>,
    /// A seat id of the game: the token appends as that seat.
    #[arg(long, conflicts_with_all = ["judge", "organiser"])]
    pub seat: Option<String>,
    /// A judge of the game: the token appends as that judge.
    #[arg(long, conflicts_with = "organiser")]
    pub judge: Option<String>,
    /// An organiser token (local store only): creates games, issues tokens.
    #[arg(long, conflicts_with = "game")]
    pub organiser: bool,
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let grant = match (&a.game, &a.seat, &a.judge, a.organiser) {
        (None, None, None, true) => Grant::Organiser,
        (Some(game), Some(seat), None, false) => Grant::Seat { game: game.clone(), seat: seat.clone() },
        (Some(game), None, Some(judge), false) => Grant::Judge { game: game.clone(), judge: judge.clone() },
        _ => bail!("name a game and one of --seat ID or --judge NAME, or --organiser alone"),
    };
    let v = match target {
        Target::Local(store) => json!({"token": access::issue(store, &grant).map_err(rec)?, "grant": grant}),
        Target::Remote(c) => match &grant {
            Grant::Organiser => {
                bail!("an organiser token is issued on the server's machine: arbiter token --organiser")
            }
            Grant::Seat { game, seat } => c.post(&c.game(game, "/tokens")?, &json!({ "seat": seat }))?,
            Grant::Judge { game, judge } => c.post(&c.game(game, "/tokens")?, &json!({ "judge": judge }))?,
        },
    };
    out.emit(v.clone(), || str(&v["token"]).to_string());
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct AccessArgs {
    /// The game's name in the store.
    pub game: String,
    /// public: anyone may read the game through the server; token: its seats, judges and the organiser only.
    #[arg(long, value_parser = ["public", "token"])]
    pub read: String,
}

pub fn access(target: &Target, a: &AccessArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let read = if a.read == "token" { ReadAccess::Token } else { ReadAccess::Public };
    let v = match target {
        Target::Local(store) => {
            arbiter::ops::head(store, &a.game).map_err(rec)?;
            access::set_read_access(store, &a.game, read).map_err(rec)?;
            json!({"game": a.game, "read": read})
        }
        Target::Remote(c) => c.put(&c.game(&a.game, "/access")?, &json!({ "read": read }))?,
    };
    out.emit(v.clone(), || format!("{}: read {}", a.game, str(&v["read"])));
    Ok(ExitCode::SUCCESS)
}
