//! `arbiter token GAME --seat ID | --judge NAME | --all-seats [--expires WHEN]
//! [--url BASE] [--sheet FILE]`, `arbiter token --organiser`, `arbiter token
//! list [GAME]`, `arbiter token revoke ID`, and `arbiter access GAME --read
//! public|token`.
//!
//! Against a local store (before or between `serve` runs) whoever holds
//! the store directory is the organiser; against a server it takes the
//! organiser's token. A token is shown once: only its hash is kept, and
//! lists and revocations name it by its id (the start of that hash). So a
//! seat's link and QR code (`arbiter::sign_in`) are drawn here, as the
//! token is issued, and never again.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use arbiter::access::{self, Grant, ReadAccess};
use arbiter::sign_in::{self, Base, Card};
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
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: Option<String>,
    /// A seat id of the game: the token appends as that seat.
    #[arg(long, conflicts_with_all = ["judge", "organiser"])]
    pub seat: Option<String>,
    /// A judge of the game: the token appends as that judge.
    #[arg(long, conflicts_with = "organiser")]
    pub judge: Option<String>,
    /// A new token for every seat and every judge of the game, printed as one sheet (tokens issued
    /// before stay valid until they expire or are revoked).
    #[arg(long, conflicts_with_all = ["seat", "judge", "organiser"])]
    pub all_seats: bool,
    /// An organiser token (local store only): creates games, issues tokens. It revokes the organiser token before it.
    #[arg(long, conflicts_with = "game")]
    pub organiser: bool,
    /// When the token stops working: a duration (30m, 12h, 7d), an RFC 3339 UTC time, or never [default: 24h].
    #[arg(long, conflicts_with = "organiser")]
    pub expires: Option<String>,
    /// Where the links start, as the phones at the tables reach the server (http://HOST[:PORT][/PATH] or https://...)
    /// [default: the --server URL, else serve's default address http://127.0.0.1:7878].
    #[arg(long, value_name = "BASE", value_parser = Base::parse, conflicts_with = "organiser")]
    pub url: Option<Base>,
    /// Also write the codes to FILE as a sheet to print: HTML for A4, one card per seat and judge.
    #[arg(long, value_name = "FILE", conflicts_with = "organiser")]
    pub sheet: Option<PathBuf>,
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
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
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
    let game = match (&a.game, &a.seat, &a.judge, a.all_seats, a.organiser) {
        (None, None, None, false, true) => return organiser(target, out),
        (Some(game), Some(_), None, false, false)
        | (Some(game), None, Some(_), false, false)
        | (Some(game), None, None, true, false) => game,
        _ => bail!("name a game and one of --seat ID, --judge NAME or --all-seats, or --organiser alone"),
    };
    let base = match (&a.url, target) {
        (Some(base), _) => base.clone(),
        (None, Target::Remote(c)) => Base::parse(c.base()).map_err(anyhow::Error::msg)?,
        (None, Target::Local(_)) => {
            Base::parse(&format!("http://{}", super::serve::DEFAULT_LISTEN)).expect("serve's default address is a base")
        }
    };
    // The sheet's file is made before any token is issued: a sheet that
    // cannot be written leaves no token behind that nobody saw.
    let mut sheet = a.sheet.as_deref().map(Sheet::create).transpose()?;
    // Who is at the table, by name, from the game as it stands (judges
    // added by a ruling included).
    let state = match (&a.seat, &a.judge) {
        (Some(_), _) | (_, Some(_)) if a.sheet.is_none() => Value::Null,
        _ => match target {
            Target::Local(store) => arbiter::ops::state(store.as_ref(), game, None).map_err(rec)?,
            Target::Remote(c) => c.get(&c.game(game, "/state?raw=0")?)?,
        },
    };
    let seat_name = |id: &str| -> String {
        let seats = state["header"]["seats"].as_array().into_iter().flatten();
        seats.into_iter().find(|s| s["id"] == id).map_or(id, |s| str(&s["name"])).to_string()
    };
    // (grant, name, role)
    let mut wanted: Vec<(Grant, String, String)> = Vec::new();
    let seat_grant = |seat: &str| Grant::Seat { game: game.clone(), seat: seat.to_string() };
    let judge_grant = |judge: &str| Grant::Judge { game: game.clone(), judge: judge.to_string() };
    match (&a.seat, &a.judge) {
        (Some(seat), _) => wanted.push((seat_grant(seat), seat_name(seat), format!("seat {seat}"))),
        (_, Some(judge)) => wanted.push((judge_grant(judge), judge.clone(), "judge".to_string())),
        _ => {
            for s in state["header"]["seats"].as_array().into_iter().flatten() {
                wanted.push((
                    seat_grant(str(&s["id"])),
                    str(&s["name"]).to_string(),
                    format!("seat {}", str(&s["id"])),
                ));
            }
            for j in state["judges"].as_array().into_iter().flatten() {
                wanted.push((judge_grant(str(j)), str(j).to_string(), "judge".to_string()));
            }
        }
    }
    let mut issued = Vec::new();
    for (grant, name, role) in &wanted {
        match issue(target, grant, &a.expires) {
            Ok(mut v) => {
                v["name"] = json!(name);
                v["link"] = json!(sign_in::table_link(&base, game, str(&v["token"])));
                v["qr_svg"] = json!(sign_in::svg_code(str(&v["link"])));
                issued.push((v, role.clone()));
            }
            Err(e) if issued.is_empty() => return Err(e),
            Err(e) => {
                // A sheet is whole or not at all: the tokens issued before
                // this one were never shown, and stop working now.
                let ids: Vec<String> = issued.iter().map(|(v, _)| str(&v["id"]).to_string()).collect();
                let undone = ids.iter().filter(|id| withdraw(target, id).is_ok()).count();
                let left = ids.len() - undone;
                let note = match left {
                    0 => format!("the {undone} token(s) issued before this one were revoked"),
                    _ => format!(
                        "{left} token(s) issued before this one could not be revoked: see `arbiter token list {game}`"
                    ),
                };
                return Err(e.context(format!("no sheet: {note}")));
            }
        }
    }
    let cards: Vec<Card> = issued
        .iter()
        .map(|(v, role)| Card {
            name: str(&v["name"]).to_string(),
            role: role.clone(),
            link: str(&v["link"]).to_string(),
            expires: v["expires"].as_str().map(String::from),
        })
        .collect();
    let title = sheet_title(game, &state["header"]);
    if let Some(sheet) = sheet.take() {
        let path = sheet.write(&sign_in::sheet_html(&title, &cards))?;
        eprintln!("wrote the sheet to {} ({} code(s), A4)", path.display(), cards.len());
    }
    if base.is_loopback() && !out.json {
        eprintln!(
            "note: the links start with {base}, which only this machine reaches; for phones at the tables give --url with the address they reach"
        );
    }
    let no_color = std::env::var_os("NO_COLOR").is_some();
    if !a.all_seats {
        let (v, _) = issued.pop().expect("one token");
        out.emit(v.clone(), || {
            // The token alone on stdout (scripts read it); the rest, for
            // people, on stderr.
            eprintln!(
                "id {} ({}), expires {}",
                str(&v["id"]),
                str(&v["state"]),
                v["expires"].as_str().unwrap_or("never")
            );
            if v["state"] == "expired" {
                eprintln!("warning: this token has already expired");
            }
            eprintln!("link (opens the table page signed in): {}", str(&v["link"]));
            eprintln!("{}", sign_in::text_code(str(&v["link"]), std::io::stderr().is_terminal() && !no_color));
            str(&v["token"]).to_string()
        });
        return Ok(ExitCode::SUCCESS);
    }
    let tokens: Vec<Value> = issued.iter().map(|(v, _)| v.clone()).collect();
    out.emit(json!({"game": game, "tokens": tokens}), || {
        let colours = std::io::stdout().is_terminal() && !no_color;
        let mut text = format!("{title}: {} sign-in code(s)\n", cards.len());
        for card in &cards {
            let expires = card.expires.as_deref().unwrap_or("never");
            text.push_str(&format!("\n{}, {} (expires {expires})\n{}\n", card.name, card.role, card.link));
            // The code's last lines are its quiet zone: spaces that stay.
            text.push_str(&sign_in::text_code(&card.link, colours));
            text.push('\n');
        }
        text.pop();
        text
    });
    Ok(ExitCode::SUCCESS)
}

/// `token --organiser`: on the store's machine only.
fn organiser(target: &Target, out: &Output) -> anyhow::Result<ExitCode> {
    let Target::Local(store) = target else {
        bail!(
            "an organiser token is issued on the store's machine, with the server stopped (sled lets one process \
             open a store): stop `arbiter serve`, run `arbiter --data DIR token --organiser` (it revokes the \
             previous one), and start the server again"
        );
    };
    let issued = access::issue_at(store.as_ref(), &Grant::Organiser, chrono::Utc::now(), None).map_err(rec)?;
    let v = arbiter::server::issued_json(&issued);
    out.emit(v.clone(), || {
        eprintln!("id {} ({}), expires never", str(&v["id"]), str(&v["state"]));
        if let Some(replaced) = v["replaced"].as_array() {
            let ids: Vec<&str> = replaced.iter().map(str).collect();
            eprintln!("revoked the previous organiser token(s): {}", ids.join(", "));
        }
        str(&v["token"]).to_string()
    });
    Ok(ExitCode::SUCCESS)
}

/// Issues one seat's or judge's token: its JSON as the API answers it.
fn issue(target: &Target, grant: &Grant, expires: &Option<String>) -> anyhow::Result<Value> {
    match target {
        Target::Local(store) => {
            // The clock is read here, at the edge.
            let now = chrono::Utc::now();
            let expires = access::expiry(grant, expires.as_deref(), now).map_err(rec)?;
            let issued = access::issue_at(store.as_ref(), grant, now, expires).map_err(rec)?;
            Ok(arbiter::server::issued_json(&issued))
        }
        Target::Remote(c) => {
            let (game, body) = match grant {
                Grant::Seat { game, seat } => (game, json!({ "seat": seat })),
                Grant::Judge { game, judge } => (game, json!({ "judge": judge })),
                _ => unreachable!("only seats' and judges' tokens are issued here"),
            };
            c.post(&c.game(game, "/tokens")?, &with_expiry(body, expires))
        }
    }
}

/// A sheet being written: a file beside FILE, put in its place only once
/// whole, and removed if the tokens could not be issued (FILE as it was).
struct Sheet {
    path: PathBuf,
    partial: PathBuf,
    file: Option<std::fs::File>,
}

impl Sheet {
    fn create(path: &std::path::Path) -> anyhow::Result<Sheet> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.partial", std::process::id()));
        let partial = path.with_file_name(name);
        let file =
            std::fs::File::create(&partial).with_context(|| format!("cannot write the sheet {}", path.display()))?;
        Ok(Sheet { path: path.to_path_buf(), partial, file: Some(file) })
    }

    fn write(mut self, html: &str) -> anyhow::Result<PathBuf> {
        let mut file = self.file.take().expect("written once");
        file.write_all(html.as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&self.partial, &self.path))
            .with_context(|| {
                format!("the tokens are issued, but the sheet {} could not be written", self.path.display())
            })?;
        Ok(std::mem::take(&mut self.path))
    }
}

impl Drop for Sheet {
    fn drop(&mut self) {
        // Written and renamed: nothing is left to remove (and nothing is there).
        let _ = std::fs::remove_file(&self.partial);
    }
}

/// Revokes a token issued a moment ago (a sheet that could not be made whole).
fn withdraw(target: &Target, id: &str) -> anyhow::Result<()> {
    match target {
        Target::Local(store) => access::revoke(store.as_ref(), id, chrono::Utc::now()).map(|_| ()).map_err(rec),
        Target::Remote(c) => c.post(&format!("/api/tokens/{id}/revoke"), &json!({})).map(|_| ()),
    }
}

/// "Luna City Open, round 3, table 12 (game r3t12)", from what the header has.
fn sheet_title(game: &str, header: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(t) = header["tournament"].as_str() {
        parts.push(t.to_string());
    }
    if let Some(r) = header["round"].as_u64() {
        parts.push(format!("round {r}"));
    }
    if let Some(t) = header["table"].as_u64() {
        parts.push(format!("table {t}"));
    }
    match parts.is_empty() {
        true => format!("game {game}"),
        false => format!("{} (game {game})", parts.join(", ")),
    }
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
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
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
