//! Command-line arguments, validated in one place, and the dispatch of
//! each verb to its own file.

mod append;
mod board;
mod checkpoint;
mod completions;
pub use completions::complete_now;
mod copy;
mod demo;
mod diff;
mod fork;
mod moves;
mod new;
mod progress;
mod read;
mod record;
mod remote;
mod replay;
mod rule;
mod schema;
mod serve;
mod token;
mod transfer;
mod verify;
mod whatif;
mod witness;

pub use remote::Denied;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use arbiter::record::RecordError;
use arbiter::rules::Kind;
use arbiter::store::{Location, OpenError, SledStore, Store, checkpoints};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "arbiter",
    version,
    about = "An event-sourced adjudication log for tournament card and tabletop games."
)]
pub struct Cli {
    /// Store directory (sled, the embedded default) [default: ./arbiter-data].
    #[arg(long, global = true, env = "ARBITER_DATA", value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The store in a PostgreSQL database instead of --data (postgres://USER[:PASSWORD]@HOST[:PORT]/DB).
    #[arg(long, global = true, env = "ARBITER_STORE", value_name = "URL", hide_env_values = true)]
    pub store: Option<String>,
    /// Machine-readable output on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Work against a running `arbiter serve` (e.g. http://127.0.0.1:7878) instead of --data.
    #[arg(long, global = true, env = "ARBITER_SERVER")]
    pub server: Option<String>,
    /// Bearer token for --server (the organiser's, a seat's or a judge's).
    #[arg(long, global = true, env = "ARBITER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// For an https:// --server: trust the CA certificates in this PEM file instead of the
    /// usual public ones (a server behind a proxy with a private or self-signed certificate).
    #[arg(long, global = true, env = "ARBITER_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// The organiser's private key that signs checkpoints (default: DATA/log.key, made on first use).
    #[arg(long, global = true, env = "ARBITER_LOG_KEY")]
    pub log_key: Option<PathBuf>,
    /// The log's name in its checkpoints (e.g. lunacity.example/open-2026), set when its key is made
    /// (default: localhost/arbiter/<store directory's name>).
    #[arg(long, global = true, env = "ARBITER_ORIGIN")]
    pub origin: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Create a game: event 0 with the header.
    #[command(
        after_help = "Examples:\n  arbiter new g1 --ruleset doomtrooper --seat p1=Alice --seat p2=Bob --judge Dana --tournament 'Luna City Open' --round 3 --table 12\n  arbiter new r1 --ruleset riftbound --seat p1=Alice --seat p2=Bob --option mode=1v1 --option 'battlefields=[\"Altar\",\"Forge\"]'"
    )]
    New(new::Args),
    /// Append one action (ACTION_JSON), or JSON Lines of {"actor","action"} from stdin with '-'.
    #[command(
        after_help = "Examples:\n  arbiter append g1 --actor p1 '{\"type\":\"announce\",\"what\":\"battle_tactic\",\"tactic\":\"Fight\"}'\n  arbiter append g1 --actor p2 '{\"type\":\"pass\"}'\n  arbiter append g1 - < actions.jsonl     (lines of {\"actor\":\"p1\",\"action\":{...}})"
    )]
    Append(append::Args),
    /// List the games in the store.
    Games,
    /// Print a game's events.
    Log(read::LogArgs),
    /// Where a game is: the step, who may act, what is legal, and the ruleset's state.
    #[command(
        after_help = "Examples:\n  arbiter state g1\n  arbiter state g1 --at 12\n  arbiter --json state g1 | jq .legal"
    )]
    State(read::StateArgs),
    /// What each seat and judge may record now: every move with its choices and the values it asks for.
    #[command(
        after_help = "Examples:\n  arbiter moves g1\n  arbiter moves g1 --as p2\n  arbiter --json moves g1 --at 12 | jq '.moves[].label'"
    )]
    Moves(moves::Args),
    /// Record a game by picking moves on a terminal: the board, the numbered moves, their choices and values; no JSON typed.
    #[command(
        after_help = "Examples:\n  arbiter record g1                  (everyone's moves: the table's one laptop)\n  arbiter record g1 --as p2          (Bob's moves; waits while another seat is to act)\n  arbiter --server http://127.0.0.1:7878 --token TOKEN record g1 --judge Dana"
    )]
    Record(record::Args),
    /// The last event's seq and hash.
    Head(read::GameArg),
    /// Verify stored games: hashes, links, and a full re-fold.
    Verify(verify::Args),
    /// Copy a whole store into another (a directory into PostgreSQL, or back), verifying every game on both sides.
    #[command(
        after_help = "Examples:\n  arbiter copy --from ./arbiter-data --to postgres://arbiter@db.example/open2026\n  arbiter copy --from postgres://arbiter@db.example/open2026 --to ./backup"
    )]
    Copy(copy::Args),
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
    #[command(
        after_help = "Examples:\n  arbiter replay g1\n  arbiter replay g1 --from 20 --to 40\n  arbiter replay disputed.jsonl --interactive"
    )]
    Replay(replay::Args),
    /// A new game sharing events 0..=SEQ of GAME byte for byte.
    Fork(fork::Args),
    /// Fold a record without some events (and with others after it); nothing is stored.
    ///
    /// Exit 0 when every event stays legal (and how the outcome would change); exit 1 when an
    /// event becomes illegal (the first one, and why); exit 2 on a usage or I/O error.
    #[command(
        after_help = "Exit status: 0 every event stays legal; 1 an event becomes illegal; 2 usage or I/O error.\n\nExamples:\n  arbiter whatif g1 --skip 51\n  arbiter whatif table12.jsonl --skip 7 8 --then more.jsonl"
    )]
    Whatif(whatif::Args),
    /// Compare two records (games or export files): exit 0 when they agree, 1 when they differ.
    #[command(
        after_help = "Examples:\n  arbiter diff g1 g1-judge-copy\n  arbiter diff table12.jsonl table12-paper.jsonl"
    )]
    Diff(diff::Args),
    /// Record a bundled sample game, then show and verify it.
    Demo(demo::Args),
    /// Write (or --check) the JSON Schemas in schemas/.
    Schema(schema::Args),
    /// Serve the store over HTTP: the API, live streams and the replay page.
    #[command(
        after_help = "Examples:\n  arbiter serve\n  arbiter --data /srv/arbiter serve --listen 0.0.0.0:7878\n  arbiter --server http://127.0.0.1:7878 --token TOKEN state g1"
    )]
    Serve(serve::Args),
    /// Print shell completions (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Examples:\n  arbiter completions bash > ~/.local/share/bash-completion/completions/arbiter\n  arbiter completions zsh > ~/.zfunc/_arbiter\n  arbiter completions fish > ~/.config/fish/completions/arbiter.fish"
    )]
    Completions(completions::CompletionsArgs),
    /// Print the man page (or write one per verb with --dir).
    Man(completions::ManArgs),
    /// Issue a token for a seat or a judge of a game, with its link and QR code (or, locally, for the organiser); list or revoke tokens.
    #[command(
        after_help = "Examples:\n  arbiter token r1t12 --seat p1\n  arbiter token r1t12 --all-seats --url http://192.168.1.20:7878 --sheet r1t12.html\n  arbiter token r1t12 --judge Dana --expires 8h\n  arbiter token list r1t12\n  arbiter token revoke 3f9a0c1d2e4b5a69\n  arbiter --data ./tournament token --organiser     (server stopped; revokes the previous one)"
    )]
    Token(token::Args),
    /// Who may read a game through the server: public, or token holders only.
    Access(token::AccessArgs),
    /// Sign a checkpoint of the store's log (every event of every game), or print the log's public key.
    #[command(
        after_help = "Examples:\n  arbiter checkpoint > round3.checkpoint\n  arbiter checkpoint --public-key\n  arbiter --server http://127.0.0.1:7878 checkpoint"
    )]
    Checkpoint(checkpoint::Args),
    /// Write an offline bundle that proves a game is in the log: its export, an inclusion proof, the checkpoint, the key.
    #[command(
        after_help = "Examples:\n  arbiter prove t12 -o t12.bundle\n  arbiter prove t12 --kept round3.checkpoint -o t12.bundle"
    )]
    Prove(checkpoint::ProveArgs),
    /// Check a bundle with no store: the export, the inclusion proof, the signature (and a kept checkpoint).
    #[command(
        after_help = "Examples:\n  arbiter verify-bundle t12.bundle --expect-key 'localhost/arbiter/open+1a2b3c4d+AQ...'\n  arbiter verify-bundle t12.bundle --kept round3.checkpoint"
    )]
    VerifyBundle(checkpoint::VerifyBundleArgs),
    /// Cosign a log's checkpoint as a witness, only if it extends the last one this witness cosigned.
    #[command(
        after_help = "Examples:\n  arbiter witness --name witness.example.org --public-key\n  arbiter --server http://10.0.0.5:7878 witness --log 'lunacity.example/open+1a2b3c4d+AQ...' > witnessed.checkpoint\n  arbiter witness --log log.pub request.txt"
    )]
    Witness(witness::Args),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let out = Output { json: cli.json };
    // Opens the store, or connects to the server, only for verbs that need
    // one, and once: after a verb that wrote, the same store signs a checkpoint.
    let opened = std::cell::OnceCell::new();
    let target = || -> anyhow::Result<&Target> {
        if let Some(t) = opened.get() {
            return Ok(t);
        }
        let t = Target::open(&cli)?;
        Ok(opened.get_or_init(|| t))
    };
    let code = match &cli.command {
        Command::New(a) => new::run(target()?, a, &out),
        Command::Append(a) => append::run(target()?, a, &out),
        Command::Games => {
            let target = target()?;
            checkpoint::sign_tail(&cli, target);
            read::games(target, &out)
        }
        Command::Log(a) => read::log(target()?, a, &out),
        Command::State(a) => read::state(target()?, a, &out),
        Command::Head(a) => read::head(target()?, a, &out),
        Command::Moves(a) => moves::run(target()?, a, &out),
        // Waiting for another seat needs a store others can write meanwhile:
        // a server or a database, not a directory this process holds open.
        Command::Record(a) => {
            let waits = cli.server.is_some() || !matches!(cli.location()?, Location::Dir(_));
            record::run(target()?, a, waits, &out)
        }
        Command::Verify(a) => {
            let target = target()?;
            checkpoint::sign_tail(&cli, target);
            verify::run(target, a, &out)
        }
        Command::Copy(a) => copy::run(&cli, a, &out),
        Command::Export(a) => transfer::export(target()?, a, &out),
        Command::Import(a) => transfer::import(target()?, a, &out),
        Command::VerifyFile(a) => transfer::verify_file(a, &out),
        Command::Demo(a) => demo::run(target()?, a, &out),
        Command::Schema(a) => schema::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
        Command::Fork(a) => fork::run(target()?, a, &out),
        Command::Rewind(a) => rule::rewind(target()?, a, &out),
        Command::Decide(a) => rule::decide(target()?, a, &out),
        Command::Penalty(a) => rule::penalty(target()?, a, &out),
        Command::AddJudge(a) => rule::add_judge(target()?, a, &out),
        Command::Note(a) => rule::note(target()?, a, &out),
        Command::Token(a) => token::run(target()?, a, &out),
        Command::Access(a) => token::access(target()?, a, &out),
        Command::Checkpoint(a) => checkpoint::run(&cli, target()?, a, &out),
        Command::Prove(a) => checkpoint::prove(&cli, target()?, a, &out),
        Command::VerifyBundle(a) => checkpoint::verify_bundle(a, &out),
        // A witness needs no store: only --server, to fetch a checkpoint.
        Command::Witness(a) => witness::run(|| cli.server.as_ref().map(|_| Target::open(&cli)).transpose(), a, &out),
        Command::Serve(a) => {
            if cli.server.is_some() {
                anyhow::bail!("serve runs on a store (--data or --store), not against another server");
            }
            serve::run(&cli, a)
        }
        Command::Replay(a) => {
            let target = target_for(&cli, &[&a.record])?;
            replay::run(RecordArg::new(target.as_ref(), &a.record)?, a, &out)
        }
        Command::Whatif(a) => {
            let target = target_for(&cli, &[&a.record])?;
            whatif::run(RecordArg::new(target.as_ref(), &a.record)?, a, &out)
        }
        Command::Diff(a) => {
            let target = target_for(&cli, &[&a.a, &a.b])?;
            diff::run(RecordArg::new(target.as_ref(), &a.a)?, RecordArg::new(target.as_ref(), &a.b)?, &out)
        }
    };
    // Every event a local verb stored is covered by a signed checkpoint
    // before the verb returns (`checkpoints::sign_after_write`).
    let mut opened = opened;
    if cli.command.writes()
        && let Some(Target::Local(store)) = opened.take()
        && let Err(why) = checkpoints::sign_after_write(store, cli.log_key.as_deref(), cli.origin.as_deref())
    {
        match code {
            // The verb's own failure is the error; this one is said beside it.
            Err(_) => eprintln!("warning: {why}"),
            Ok(_) => return Err(rec(RecordError::Io(format!("the events are stored, but {why}")))),
        }
    }
    code
}

impl Command {
    /// Whether the verb only reads the store: such a verb reads a copy of a
    /// store that cannot be written (see `open_store`).
    fn reads_only(&self) -> bool {
        matches!(
            self,
            Command::Games
                | Command::Log(_)
                | Command::State(_)
                | Command::Moves(_)
                | Command::Head(_)
                | Command::Verify(_)
                | Command::Export(_)
                | Command::Replay(_)
                | Command::Whatif(_)
                | Command::Diff(_)
        )
    }

    /// Whether the verb stores events (and so signs a checkpoint after).
    fn writes(&self) -> bool {
        matches!(
            self,
            Command::New(_)
                | Command::Append(_)
                | Command::Record(_)
                | Command::Import(_)
                | Command::Fork(_)
                | Command::Rewind(_)
                | Command::Decide(_)
                | Command::Penalty(_)
                | Command::AddJudge(_)
                | Command::Note(_)
                | Command::Demo(_)
        )
    }
}

/// Where the games are: a store this process opens (sled's directory or a
/// PostgreSQL database), or a running server.
pub enum Target {
    Local(Box<dyn Store>),
    Remote(remote::Client),
}

impl Target {
    fn open(cli: &Cli) -> anyhow::Result<Target> {
        match &cli.server {
            Some(url) => Ok(Target::Remote(remote::Client::new(
                url,
                cli.token.clone().filter(|t| !t.is_empty()),
                cli.ca_cert.as_deref(),
            )?)),
            None => open_store(&cli.location()?, cli.command.reads_only()).map(Target::Local),
        }
    }
}

impl Cli {
    /// `--server` beside a store named by `--data` or `--store`: the one
    /// given on the command line wins over one from the environment
    /// (`ARBITER_SERVER`, `ARBITER_DATA`, `ARBITER_STORE`); both on the
    /// command line, or both only from the environment, is refused, as
    /// `--data` with `--store` is. Nothing is guessed about which was meant.
    pub fn settle_target(&mut self, matches: &clap::ArgMatches) -> anyhow::Result<()> {
        use clap::parser::ValueSource::CommandLine;
        if self.server.is_none() {
            return Ok(());
        }
        let server_typed = matches.value_source("server") == Some(CommandLine);
        for (id, flag, var) in [("data", "--data", "ARBITER_DATA"), ("store", "--store", "ARBITER_STORE")] {
            let Some(source) = matches.value_source(id) else { continue };
            match (source == CommandLine, server_typed) {
                (true, false) => self.server = None,
                (false, true) if id == "data" => self.data = None,
                (false, true) => self.store = None,
                (true, true) => {
                    anyhow::bail!("give --server URL (a running `arbiter serve`) or {flag} (a store), not both")
                }
                (false, false) => anyhow::bail!(
                    "ARBITER_SERVER and {var} are both set: unset one, or give --server or {flag} on the command line"
                ),
            }
        }
        Ok(())
    }

    /// The store the flags name: `--store URL` (PostgreSQL), else `--data`.
    pub fn location(&self) -> anyhow::Result<Location> {
        match &self.store {
            Some(_) if self.data.is_some() => {
                Err(anyhow::anyhow!("give --store (a database) or --data (a directory), not both"))
            }
            Some(url) if arbiter::store::is_postgres_url(url) => Ok(Location::named(url)),
            Some(other) => Err(anyhow::anyhow!(
                "--store takes a PostgreSQL URL (postgres://USER@HOST/DB), not {other:?}; a directory is --data"
            )),
            None => Ok(Location::Dir(self.data.clone().unwrap_or_else(|| PathBuf::from("./arbiter-data")))),
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

/// Opens the store at `location`: a database, or the directory `dir`. A
/// store that cannot be written there (read-only media, a full disk) is, for a
/// verb that only `reading`, read from a copy (`SledStore::open_for_reading`,
/// said once on stderr); for any other verb it is an error, with the store
/// left as it was (a failed open is undone).
fn open_store(location: &Location, reading: bool) -> anyhow::Result<Box<dyn Store>> {
    let dir = match location {
        Location::Dir(dir) => dir,
        Location::Database(_) => {
            return arbiter::store::open(location).map_err(|e| match e {
                OpenError::Lost(why) => rec(RecordError::Lost(why)),
                // The database answered: the message says what to grant.
                e @ OpenError::Unwritable { .. } => rec(RecordError::Io(e.to_string())),
                e => rec(RecordError::Io(format!("{e}; check that the database is up and the URL is right"))),
            });
        }
    };
    // A verb that only reads never makes a store (nor the directories above
    // it): a mistyped --data is said, not answered with "no games".
    if reading && !dir.join("db").is_file() {
        return Err(rec(RecordError::Io(format!("no store at {}: `arbiter new` creates one", dir.display()))));
    }
    let existed = dir.exists();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create store directory {}", dir.display()))?;
    let opened = match reading {
        true => SledStore::open_for_reading(dir).map(|(store, copied)| {
            say_set_aside(&store);
            if let Some(c) = copied {
                eprintln!(
                    "note: the store at {} cannot be written ({}); reading a copy in {}",
                    dir.display(),
                    c.why,
                    c.at.display()
                );
            }
            Box::new(store) as Box<dyn Store>
        }),
        false => SledStore::open(dir).map(|s| {
            say_set_aside(&s);
            Box::new(s) as Box<dyn Store>
        }),
    };
    opened.map_err(|e| {
        if !existed {
            // The directory made above for a store that did not open (empty
            // now: the failed open was undone) goes too.
            let _ = std::fs::remove_dir(dir);
        }
        let why = match (&e, serve::serving(dir)) {
            (OpenError::InUse { .. }, Some((pid, url))) => {
                format!("this store is in use by `arbiter serve` (pid {pid}); use --server {url}")
            }
            (OpenError::InUse { dir }, None) => {
                format!("the store at {dir} is in use by another arbiter process; wait for it to finish")
            }
            (OpenError::Unwritable { .. }, _) if !reading => {
                format!("{e}: nothing was stored, and the store is as it was; free space (or make it writable) and try again")
            }
            (OpenError::Unwritable { .. } | OpenError::Io { .. } | OpenError::Layout { .. }, _) => e.to_string(),
            (OpenError::Lost(why), _) => return rec(RecordError::Lost(why.clone())),
        };
        rec(RecordError::Io(why))
    })
}

/// Says on stderr which of sled's snapshots the open set aside: sled's
/// cache, rebuilt from `db`, but a change an operator should hear of.
fn say_set_aside(store: &SledStore) {
    for s in store.set_aside() {
        eprintln!(
            "note: sled refused its snapshot {} (cut short by a crash, or damaged); it was set aside as {}, sled recovered from its log alone, and the store was checked against its journal and checkpoints",
            s.file.display(),
            s.to.display()
        );
    }
}

/// The rulesets, each with the document it follows: `--ruleset`'s possible
/// values, so `new --help` lists them.
pub fn rulesets() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        Kind::ALL
            .iter()
            .map(|k| clap::builder::PossibleValue::new(k.name()).help(format!("{}: {}", k.title(), k.document()))),
    )
}

/// The ruleset's name as its players write it ("Raw Deal").
pub fn ruleset_title(name: &str) -> &str {
    match Kind::named(name) {
        Some(k) => k.title(),
        None => name,
    }
}

/// The rows of an outcome where two records disagree, each side labelled.
pub fn outcome_text(rows: &[arbiter::compare::OutcomeRow], a: &str, b: &str) -> String {
    let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not reached)".into());
    rows.iter().map(|r| format!("  {}\n    {a} {}\n    {b} {}\n", r.what, side(&r.a), side(&r.b))).collect()
}

/// Library errors keep their type, so `main` can map them to exit codes.
pub fn rec(e: RecordError) -> anyhow::Error {
    anyhow::Error::new(e)
}

/// A record named on the command line: an existing file is an export file,
/// anything else a game (in the store, or fetched from the server as its
/// export and then read like a file).
pub struct RecordArg<'s> {
    record: arbiter::compare::Record<'s>,
}

impl<'s> RecordArg<'s> {
    fn new(target: Option<&'s Target>, name: &str) -> anyhow::Result<RecordArg<'s>> {
        use arbiter::compare::Record;
        use arbiter::record::{ExportBytes, ExportFile, StoredGame};
        let record = match target {
            _ if Path::new(name).is_file() => Record::File(ExportFile { path: name.into() }),
            Some(Target::Local(store)) => Record::Stored(StoredGame::new(store.as_ref(), name)),
            Some(Target::Remote(client)) => {
                Record::Bytes(ExportBytes(client.get_bytes(&client.game(name, "/export")?)?))
            }
            None => Record::File(ExportFile { path: name.into() }),
        };
        Ok(RecordArg { record })
    }

    pub fn source(&self) -> &arbiter::compare::Record<'s> {
        &self.record
    }
}

/// Opens the store (or connects) only when some record is not an existing file.
fn target_for(cli: &Cli, records: &[&str]) -> anyhow::Result<Option<Target>> {
    if records.iter().all(|r| Path::new(r).is_file()) { Ok(None) } else { Target::open(cli).map(Some) }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every verb and every argument says what it is for in `--help`.
    #[test]
    fn every_verb_and_argument_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {} (the verb)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "arbiter", &mut missing);
        assert!(missing.is_empty(), "without help: {missing:#?}");
    }
}
