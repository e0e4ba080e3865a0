//! Command-line arguments, validated in one place, and the dispatch of
//! each verb to its own file.

mod append;
mod demo;
mod diff;
mod fork;
mod new;
mod read;
mod replay;
mod rule;
mod schema;
mod transfer;
mod verify;
mod whatif;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use arbiter::record::RecordError;
use arbiter::store::SledStore;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "arbiter",
    version,
    about = "An event-sourced adjudication log for tournament card and tabletop games."
)]
pub struct Cli {
    /// Store directory (sled).
    #[arg(long, global = true, env = "ARBITER_DATA", default_value = "./arbiter-data")]
    pub data: PathBuf,
    /// Machine-readable output on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Create a game: event 0 with the header.
    New(new::Args),
    /// Append one action (ACTION_JSON), or JSON Lines of {"actor","action"} from stdin with '-'.
    Append(append::Args),
    /// List the games in the store.
    Games,
    /// Print a game's events.
    Log(read::LogArgs),
    /// Where a game is: the step, who may act, what is legal, and the ruleset's state.
    State(read::StateArgs),
    /// The last event's seq and hash.
    Head(read::GameArg),
    /// Verify stored games: hashes, links, and a full re-fold.
    Verify(verify::Args),
    /// Export a game as JSON Lines, one canonical event per line.
    Export(transfer::ExportArgs),
    /// Import an export file as a new game (verified before anything is stored).
    Import(transfer::ImportArgs),
    /// Verify an export file without a store.
    VerifyFile(transfer::VerifyFileArgs),
    /// A judge returns the combat to the state after an earlier event (nothing is deleted).
    Rewind(rule::RewindArgs),
    /// A judge answers a state that waits for a ruling.
    Decide(rule::DecideArgs),
    /// A judge records an infraction, penalty and fix against a seat.
    Penalty(rule::PenaltyArgs),
    /// A judge adds another judge.
    AddJudge(rule::AddJudgeArgs),
    /// Any seat or judge annotates an event; the state does not change.
    Note(rule::NoteArgs),
    /// Each event in plain words, with the step before and after and what changed.
    Replay(replay::Args),
    /// A new game sharing events 0..=SEQ of GAME byte for byte.
    Fork(fork::Args),
    /// Fold a record without some events (and with others after it); nothing is stored.
    Whatif(whatif::Args),
    /// Compare two records (games or export files): exit 0 when they agree, 1 when they differ.
    Diff(diff::Args),
    /// Record a bundled sample game, then show and verify it.
    Demo(demo::Args),
    /// Write (or --check) the JSON Schemas in schemas/.
    Schema(schema::Args),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let out = Output { json: cli.json };
    match cli.command {
        Command::New(a) => new::run(&open_store(&cli.data)?, a, &out),
        Command::Append(a) => append::run(&open_store(&cli.data)?, a, &out),
        Command::Games => read::games(&open_store(&cli.data)?, &out),
        Command::Log(a) => read::log(&open_store(&cli.data)?, a, &out),
        Command::State(a) => read::state(&open_store(&cli.data)?, a, &out),
        Command::Head(a) => read::head(&open_store(&cli.data)?, a, &out),
        Command::Verify(a) => verify::run(&open_store(&cli.data)?, a, &out),
        Command::Export(a) => transfer::export(&open_store(&cli.data)?, a, &out),
        Command::Import(a) => transfer::import(&open_store(&cli.data)?, a, &out),
        Command::VerifyFile(a) => transfer::verify_file(a, &out),
        Command::Demo(a) => demo::run(&open_store(&cli.data)?, a, &out),
        Command::Schema(a) => schema::run(a),
        Command::Fork(a) => fork::run(&open_store(&cli.data)?, a, &out),
        Command::Rewind(a) => rule::rewind(&open_store(&cli.data)?, a, &out),
        Command::Decide(a) => rule::decide(&open_store(&cli.data)?, a, &out),
        Command::Penalty(a) => rule::penalty(&open_store(&cli.data)?, a, &out),
        Command::AddJudge(a) => rule::add_judge(&open_store(&cli.data)?, a, &out),
        Command::Note(a) => rule::note(&open_store(&cli.data)?, a, &out),
        Command::Replay(a) => {
            let store = store_for(&cli.data, &[&a.record])?;
            replay::run(RecordArg::new(store.as_ref(), &a.record), a, &out)
        }
        Command::Whatif(a) => {
            let store = store_for(&cli.data, &[&a.record])?;
            whatif::run(RecordArg::new(store.as_ref(), &a.record), a, &out)
        }
        Command::Diff(a) => {
            let store = store_for(&cli.data, &[&a.a, &a.b])?;
            diff::run(RecordArg::new(store.as_ref(), &a.a), RecordArg::new(store.as_ref(), &a.b), &out)
        }
    }
}

/// Where results go: plain words for people, or JSON on stdout.
pub struct Output {
    pub json: bool,
}

impl Output {
    /// Prints `json` with --json, else the `text`.
    pub fn emit(&self, json: serde_json::Value, text: impl FnOnce() -> String) {
        if self.json {
            println!("{json}");
        } else {
            println!("{}", text());
        }
    }
}

fn open_store(dir: &Path) -> anyhow::Result<SledStore> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create store directory {}", dir.display()))?;
    SledStore::open(dir).map_err(|e| anyhow::Error::new(RecordError::Io(e.to_string())))
}

/// Library errors keep their type, so `main` can map them to exit codes.
pub fn rec(e: RecordError) -> anyhow::Error {
    anyhow::Error::new(e)
}

/// A record named on the command line: an existing file is an export file,
/// anything else a stored game.
pub struct RecordArg<'s> {
    store: Option<&'s SledStore>,
    name: String,
}

impl<'s> RecordArg<'s> {
    fn new(store: Option<&'s SledStore>, name: &str) -> RecordArg<'s> {
        RecordArg { store, name: name.to_string() }
    }

    pub fn source(&self) -> arbiter::compare::Record<'s> {
        match self.store {
            Some(store) if !Path::new(&self.name).is_file() => {
                arbiter::compare::Record::Stored(arbiter::record::StoredGame::new(store, &self.name))
            }
            _ => arbiter::compare::Record::File(arbiter::record::ExportFile { path: self.name.clone().into() }),
        }
    }
}

/// Opens the store only when some record is not an existing file.
fn store_for(dir: &Path, records: &[&str]) -> anyhow::Result<Option<SledStore>> {
    if records.iter().all(|r| Path::new(r).is_file()) { Ok(None) } else { open_store(dir).map(Some) }
}
