//! `arbiter token GAME --seat ID | --judge NAME [--expires WHEN]`,
//! `arbiter token --organiser`, `arbiter token list [GAME]`,
//! `arbiter token revoke ID`, and `arbiter access GAME --read public|token`.
//!
//! Against a local store (before or between `serve` runs) whoever holds
//! the store directory is the organiser; against a server it takes the
//! organiser's token. A token is shown once: only its hash is kept, and
//! lists and revocations name it by its id (the start of that hash).

use std::process::ExitCode;

use anyhow::bail;
use arbiter::access::{self, Grant, ReadAccess};
use serde_json::{Value, json};

use super::new::str;
use super::{Output, Target, rec};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
    /// The game the token is for (not with --organiser).
    #[arg(required_unless_present = "organiser")]
    pub game: Option<String>,
    /// A seat id of the game: the token appends as that seat.
    #[arg(long, conflicts_with_all = ["judge", "organiser"])]
    pub seat: Option<String>,
    /// A judge of the game: the token appends as that judge.
    #[arg(long, conflicts_with = "organiser")]
    pub judge: Option<String>,
    /// An organiser token (local store only): creates games, issues tokens. It revokes the organiser token before it.
    #[arg(long, conflicts_with = "game")]
    pub organiser: bool,
    /// When the token stops working: a duration (30m, 12h, 7d), an RFC 3339 UTC time, or never [default: 24h].
    #[arg(long, conflicts_with = "organiser")]
    pub expires: Option<String>,
}

#[derive(clap::Subcommand)]
pub enum Action {
    /// List tokens (of GAME, or all): id, role, game, seat or judge, issued, expires, state. Never the tokens.
    List(ListArgs),
    /// Revoke a token by its id (from `token list`): it stops working at once.
    Revoke(RevokeArgs),
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// Only this game's tokens.
    pub game: Option<String>,
}

#[derive(clap::Args)]
pub struct RevokeArgs {
    /// The token's id, as `token list` shows it (16 hex digits).
    pub id: String,
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    match &a.action {
        Some(Action::List(l)) => return list(target, l, out),
        Some(Action::Revoke(r)) => return revoke(target, r, out),
        None => {}
    }
    let grant = match (&a.game, &a.seat, &a.judge, a.organiser) {
        (None, None, None, true) => Grant::Organiser,
        (Some(game), Some(seat), None, false) => Grant::Seat { game: game.clone(), seat: seat.clone() },
        (Some(game), None, Some(judge), false) => Grant::Judge { game: game.clone(), judge: judge.clone() },
        _ => bail!("name a game and one of --seat ID or --judge NAME, or --organiser alone"),
    };
    let v = match target {
        Target::Local(store) => {
            // The clock is read here, at the edge.
            let now = chrono::Utc::now();
            let expires = access::expiry(&grant, a.expires.as_deref(), now).map_err(rec)?;
            let issued = access::issue_at(store.as_ref(), &grant, now, expires).map_err(rec)?;
            arbiter::server::games::issued_json(&issued)
        }
        Target::Remote(c) => match &grant {
            Grant::Organiser => bail!(
                "an organiser token is issued on the store's machine, with the server stopped (sled lets one process \
                 open a store): stop `arbiter serve`, run `arbiter --data DIR token --organiser` (it revokes the \
                 previous one), and start the server again"
            ),
            Grant::Seat { game, seat } => {
                c.post(&c.game(game, "/tokens")?, &with_expiry(json!({ "seat": seat }), &a.expires))?
            }
            Grant::Judge { game, judge } => {
                c.post(&c.game(game, "/tokens")?, &with_expiry(json!({ "judge": judge }), &a.expires))?
            }
            Grant::Cookie(_) => unreachable!("not built from arguments"),
        },
    };
    out.emit(v.clone(), || {
        // The token alone on stdout (scripts read it); the rest on stderr.
        let expires = v["expires"].as_str().unwrap_or("never");
        eprintln!("id {} ({}), expires {expires}", str(&v["id"]), str(&v["state"]));
        if let Some(replaced) = v["replaced"].as_array() {
            let ids: Vec<&str> = replaced.iter().map(str).collect();
            eprintln!("revoked the previous organiser token(s): {}", ids.join(", "));
        }
        if v["state"] == "expired" {
            eprintln!("warning: this token has already expired");
        }
        str(&v["token"]).to_string()
    });
    Ok(ExitCode::SUCCESS)
}

fn with_expiry(mut body: Value, expires: &Option<String>) -> Value {
    if let Some(e) = expires {
        body["expires"] = json!(e);
    }
    body
}

fn list(target: &Target, a: &ListArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => {
            let listed = access::list(store.as_ref(), a.game.as_deref(), chrono::Utc::now()).map_err(rec)?;
            json!({ "tokens": listed })
        }
        Target::Remote(c) => match &a.game {
            Some(game) => {
                // A valid game name needs no escaping in a query.
                arbiter::event::check_game_name(game).map_err(|e| rec(arbiter::record::RecordError::Input(e)))?;
                c.get(&format!("/api/tokens?game={game}"))?
            }
            None => c.get("/api/tokens")?,
        },
    };
    out.emit(v.clone(), || {
        let rows: Vec<String> = v["tokens"].as_array().into_iter().flatten().map(row).collect();
        if rows.is_empty() { "no tokens".to_string() } else { rows.join("\n") }
    });
    Ok(ExitCode::SUCCESS)
}

fn revoke(target: &Target, a: &RevokeArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => {
            let listed = access::revoke(store.as_ref(), &a.id, chrono::Utc::now()).map_err(rec)?;
            json!(listed)
        }
        Target::Remote(c) => {
            if a.id.is_empty() || !a.id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(rec(arbiter::record::RecordError::Input(format!(
                    "a token id is {} lowercase hex digits (from `arbiter token list`), not {:?}",
                    access::ID_LEN,
                    a.id
                ))));
            }
            c.post(&format!("/api/tokens/{}/revoke", a.id), &json!({}))?
        }
    };
    out.emit(v.clone(), || format!("revoked {}", row(&v)));
    Ok(ExitCode::SUCCESS)
}

/// One token in a line: id, state, who, game, and its times.
fn row(t: &Value) -> String {
    let who = match str(&t["role"]) {
        "seat" => format!("seat {} of {}", str(&t["seat"]), str(&t["game"])),
        "judge" => format!("judge {} of {}", str(&t["judge"]), str(&t["game"])),
        role => role.to_string(),
    };
    let mut line = format!("{}  {:<7}  {who}", str(&t["id"]), str(&t["state"]));
    for (label, key) in [("issued", "issued"), ("expires", "expires"), ("revoked", "revoked")] {
        if let Some(at) = t[key].as_str() {
            line.push_str(&format!("  {label} {at}"));
        }
    }
    line
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
            arbiter::ops::head(store.as_ref(), &a.game).map_err(rec)?;
            access::set_read_access(store.as_ref(), &a.game, read).map_err(rec)?;
            json!({"game": a.game, "read": read})
        }
        Target::Remote(c) => c.put(&c.game(&a.game, "/access")?, &json!({ "read": read }))?,
    };
    out.emit(v.clone(), || format!("{}: read {}", a.game, str(&v["read"])));
    Ok(ExitCode::SUCCESS)
}
