//! `arbiter copy --from LOCATION --to LOCATION`: moves a tournament from one
//! store to another (a sled directory to PostgreSQL, or back), verifying
//! every game on both sides (`arbiter::copy`).

use std::process::ExitCode;

use arbiter::record::RecordError;
use arbiter::store::Location;

use super::{Cli, Output, open_store, progress, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The store to copy: a directory (sled) or a PostgreSQL URL.
    #[arg(long, value_name = "DIR|URL")]
    pub from: String,
    /// The store to copy into: empty, or a copy of the same store cut short (it is resumed).
    #[arg(long, value_name = "DIR|URL")]
    pub to: String,
}

pub fn run(cli: &Cli, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let (from, to) = (Location::named(&a.from), Location::named(&a.to));
    if from == to {
        anyhow::bail!("--from and --to name the same store");
    }
    // Opening a directory makes it: a typo would copy an empty store.
    if let Location::Dir(dir) = &from
        && !dir.is_dir()
    {
        anyhow::bail!("--from {}: no such store directory", dir.display());
    }
    let source = open_store(&from, true)?;
    let target = open_store(&to, false)?;
    // The log's key goes with the log, unless the organiser keeps it apart
    // (--log-key): then the target signs with that key too.
    let key = match &cli.log_key {
        None => {
            arbiter::store::checkpoints::kept_key(source.as_ref()).map_err(|e| rec(RecordError::Io(e.to_string())))?
        }
        Some(_) => None,
    };
    let events = source.log_size().map_err(|e| rec(e.into()))?;
    let bar = progress::bar(Some(events), "copying");
    let copied = arbiter::copy::copy(source.as_ref(), target.as_ref(), key.as_deref(), |n| bar.inc(n))
        .map_err(|e| rec(RecordError::Io(e.to_string())))?;
    bar.finish_and_clear();
    out.emit(serde_json::to_value(&copied)?, || {
        format!(
            "ok: copied {} games ({} events{}), {} settings and {} checkpoints from {from} to {to}\n  \
             every game verifies on both sides; both logs hold {} events with root {}",
            copied.games,
            copied.events,
            match copied.already {
                0 => String::new(),
                n => format!(", after the {n} the target already held"),
            },
            copied.settings,
            copied.checkpoints,
            copied.size,
            copied.root
        )
    });
    Ok(ExitCode::SUCCESS)
}
