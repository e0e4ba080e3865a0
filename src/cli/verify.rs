//! `arbiter verify [GAME ... | --all] [--head HASH]`

use std::process::ExitCode;

use anyhow::bail;
use arbiter::record::{StoredGame, verify};
use arbiter::store::Store;

use super::{Output, rec};

#[derive(clap::Args)]
pub struct Args {
    pub games: Vec<String>,
    /// Verify every game in the store.
    #[arg(long, conflicts_with = "games")]
    pub all: bool,
    /// The head hash the game must end at (one game only).
    #[arg(long)]
    pub head: Option<String>,
}

pub fn run(store: &dyn Store, a: Args, out: &Output) -> anyhow::Result<ExitCode> {
    let games = if a.all { store.games().map_err(|e| rec(e.into()))? } else { a.games };
    if games.is_empty() {
        bail!("name a game to verify, or --all");
    }
    if a.head.is_some() && games.len() != 1 {
        bail!("--head checks one game");
    }
    for game in &games {
        let (verified, _) = verify(&StoredGame::new(store, game), a.head.as_deref())
            .map_err(|e| rec(e).context(format!("{game} failed verification")))?;
        out.emit(
            serde_json::json!({"game": game, "ok": true, "events": verified.events, "head": verified.head}),
            || {
                format!(
                    "ok: {game}: {} events, hashes, links and rules verified; head {}",
                    verified.events, verified.head
                )
            },
        );
    }
    Ok(ExitCode::SUCCESS)
}
