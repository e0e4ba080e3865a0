//! `arbiter verify [GAME ... | --all] [--head HASH]`

use std::process::ExitCode;

use anyhow::bail;
use arbiter::ops;
use arbiter::record::RecordError;
use arbiter::record::StoredGame;
use arbiter::store::checkpoints;

use super::new::str;
use super::progress::{self, Ticking};
use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// Games to verify: name at least one, or give --all for every game in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub games: Vec<String>,
    /// Verify every game in the store.
    #[arg(long, conflicts_with = "games")]
    pub all: bool,
    /// The head hash the game must end at (one game only).
    #[arg(long)]
    pub head: Option<String>,
    /// Also check each snapshot kept for the game (a cache of the fold)
    /// against the fold from seq 0 at its seq (local store only).
    #[arg(long, conflicts_with = "head")]
    pub snapshots: bool,
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let games: Vec<String> = match (a.all, target) {
        (false, _) => a.games.clone(),
        (true, Target::Local(store)) => store.games().map_err(|e| rec(e.into()))?,
        (true, Target::Remote(c)) => serde_json::from_value(c.get("/api/games")?)?,
    };
    if games.is_empty() {
        bail!("name a game to verify, or --all");
    }
    if a.head.is_some() && games.len() != 1 {
        bail!("--head checks one game");
    }
    // Events acknowledged but in no signed checkpoint yet (a writer died
    // before it signed, and no checkpoint could be signed since).
    let unsigned = match target {
        Target::Local(store) => checkpoints::unsigned(store.as_ref(), &games).map_err(|e| rec(e.into()))?,
        Target::Remote(_) => Vec::new(),
    };
    for game in &games {
        let v = match target {
            Target::Local(store) if a.snapshots => ops::verify_snapshots(store.as_ref(), game).map_err(rec),
            Target::Remote(_) if a.snapshots => bail!("--snapshots checks a local store"),
            Target::Local(store) => {
                let len = store.head(game).ok().flatten().map(|h| h.seq + 1);
                let bar = progress::bar(len, "verifying");
                let source = Ticking { source: &StoredGame::new(store.as_ref(), game), bar: &bar };
                let verified = ops::verify_source(&source, game, a.head.as_deref()).map_err(rec);
                bar.finish_and_clear();
                verified
            }
            Target::Remote(c) => {
                let head = a.head.as_ref().map(|h| format!("?head={h}")).unwrap_or_default();
                c.get(&c.game(game, &format!("/verify{head}"))?)
            }
        }
        .map_err(|e| e.context(format!("{game} failed verification")))?;
        let tail = unsigned.iter().find(|u| &u.game == game);
        let mut v = v;
        if let Some(u) = tail {
            v["unsigned"] = serde_json::json!({"from": u.from, "to": u.to});
        }
        out.emit(v.clone(), || {
            let mut s = format!(
                "ok: {game}: {} events, hashes, links and rules verified; head {}",
                v["events"],
                str(&v["head"])
            );
            if let Some(u) = tail {
                s += &format!("\nnote: events {}..{} of {game} are not yet in a signed checkpoint", u.from, u.to);
            }
            if let Some(c) = v.get("snapshots") {
                s += &format!("\nok: {game}: {} of {} snapshots hold the fold from seq 0", c["agree"], c["kept"]);
                for i in c["ignored"].as_array().into_iter().flatten() {
                    s += &format!("\n  snapshot after seq {} is ignored: {}", i[0], str(&i[1]));
                }
            }
            s
        });
    }
    // With --all, the log too: every leaf from its event, against the newest checkpoint.
    if let (true, Target::Local(store)) = (a.all, target) {
        let log = checkpoints::verify_log(store.as_ref()).map_err(|e| rec(RecordError::Lost(e.to_string())))?;
        let v = serde_json::json!({"log": log});
        out.emit(v, || {
            let against = match log.checkpoint {
                Some(n) => format!("its root at {n} is the one checkpoint {n} signed"),
                None => "no checkpoint signed yet".to_string(),
            };
            format!("ok: the log: {} events, each leaf the hash of its event; {against}", log.size)
        });
    }
    Ok(ExitCode::SUCCESS)
}
