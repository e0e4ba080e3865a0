//! `arbiter fork GAME --at SEQ NEWGAME`

use std::process::ExitCode;

use arbiter::compare;
use arbiter::store::Store;

use super::{Output, rec};

#[derive(clap::Args)]
pub struct Args {
    pub game: String,
    /// The last event the new game shares with GAME.
    #[arg(long)]
    pub at: u64,
    pub new_game: String,
}

pub fn run(store: &dyn Store, a: Args, out: &Output) -> anyhow::Result<ExitCode> {
    let v = compare::fork(store, &a.game, a.at, &a.new_game).map_err(rec)?;
    out.emit(
        serde_json::json!({"game": a.new_game, "from": a.game, "at": a.at, "events": v.events, "head": v.head}),
        || {
            format!(
                "forked {} at seq {} as {}: {} events shared byte for byte; head {}",
                a.game, a.at, a.new_game, v.events, v.head
            )
        },
    );
    Ok(ExitCode::SUCCESS)
}
