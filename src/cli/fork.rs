//! `arbiter fork GAME --at SEQ NEWGAME`

use std::process::ExitCode;

use arbiter::ops;
use serde_json::json;

use super::new::str;
use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The game to copy from.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// The last event the new game shares with GAME.
    #[arg(long)]
    pub at: u64,
    /// The new game's name.
    pub new_game: String,
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => ops::fork(store.as_ref(), &a.game, a.at, &a.new_game).map_err(rec)?,
        Target::Remote(c) => c.post(&c.game(&a.game, "/fork")?, &json!({"at": a.at, "name": a.new_game}))?,
    };
    out.emit(v.clone(), || {
        format!(
            "forked {} at seq {} as {}: {} events shared byte for byte; head {}",
            a.game,
            a.at,
            a.new_game,
            v["events"],
            str(&v["head"])
        )
    });
    Ok(ExitCode::SUCCESS)
}
