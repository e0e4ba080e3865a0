//! `arbiter completions bash|zsh|fish` and `arbiter man [--dir DIR]`: the
//! shell completions and man pages, generated from the same argument
//! definitions as `--help`, so they cannot drift from it.
//!
//! Completions are dynamic (clap_complete's `CompleteEnv`): the script a
//! shell sources calls `arbiter` back at each Tab, so a verb's GAME completes
//! to the games of the store or server the command line names (`--data`,
//! `--store`, `--server`, or their environment variables), as `arbiter games`
//! would list them.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use arbiter::store::Location;
use clap::CommandFactory;
use clap_complete::engine::{CompletionCandidate, ValueCompleter};

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write arbiter.1 and one page per verb (arbiter-append.1, ...) into
    /// this directory; without it, arbiter.1 goes to stdout.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// The environment variable under which the shell's script calls arbiter
/// back for completions (clap_complete's default name).
const COMPLETE_VAR: &str = "COMPLETE";

/// Prints the script that registers arbiter's completions with the shell. It
/// calls back this same binary (by its full path, so that a `cargo run`
/// build completes too), which answers in [`complete_now`].
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let name = a.shell.to_string();
    let shells = clap_complete::env::Shells::builtins();
    let shell = shells.completer(&name).with_context(|| format!("no completions for {name}"))?;
    let exe = std::env::current_exe().ok().map(|p| p.display().to_string());
    let completer = exe.as_deref().unwrap_or("arbiter");
    shell
        .write_registration(COMPLETE_VAR, "arbiter", "arbiter", completer, &mut std::io::stdout())
        .context("cannot write the completions")?;
    Ok(ExitCode::SUCCESS)
}

/// Answers a shell's completion request and exits, when arbiter was called
/// back by a registered script (`COMPLETE=bash arbiter -- WORDS`); otherwise
/// returns and arbiter runs as usual.
pub fn complete_now() {
    clap_complete::CompleteEnv::with_factory(super::Cli::command).var(COMPLETE_VAR).complete();
}

/// The games of the store or server that the words being completed name,
/// starting with what has been typed. Nothing (not an error) when there is
/// no store there yet, it is held by a server, or the server cannot be
/// reached: a Tab must never create a store or print an error into the
/// command line.
pub fn game_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(typed) = current.to_str() else { return Vec::new() };
    let mut names = known_games().unwrap_or_default();
    names.retain(|n| n.starts_with(typed));
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// A game's name or a file (replay, whatif and diff take either).
pub fn game_names_or_files(current: &OsStr) -> Vec<CompletionCandidate> {
    let mut all = game_names(current);
    all.extend(clap_complete::engine::PathCompleter::any().complete(current));
    all
}

fn known_games() -> Option<Vec<String>> {
    // The shell passes the words after `--`; the global flags among them
    // (and their environment variables) say where the games are.
    let words: Vec<std::ffi::OsString> = std::env::args_os().skip_while(|w| w != "--").skip(1).collect();
    let matches = super::Cli::command().ignore_errors(true).try_get_matches_from(words).ok()?;
    let flag = |id: &str| matches.get_one::<String>(id).cloned();
    if let Some(url) = flag("server") {
        let ca_cert = matches.get_one::<PathBuf>("ca_cert").map(PathBuf::as_path);
        let client = super::remote::Client::new(&url, flag("token").filter(|t| !t.is_empty()), ca_cert).ok()?;
        let names = client.get("/api/games").ok()?;
        return Some(names.as_array()?.iter().filter_map(|v| v.as_str().map(String::from)).collect());
    }
    let location = match (flag("store"), matches.get_one::<PathBuf>("data")) {
        (Some(url), None) if arbiter::store::is_postgres_url(&url) => Location::named(&url),
        (None, dir) => Location::Dir(dir.cloned().unwrap_or_else(|| PathBuf::from("./arbiter-data"))),
        _ => return None,
    };
    // Only a directory that already holds a store (sled's `db`) is opened.
    if let Location::Dir(dir) = &location
        && !dir.join("db").is_file()
    {
        return None;
    }
    arbiter::store::open(&location).ok()?.games().ok()
}

pub fn man(a: &ManArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command().disable_help_subcommand(true);
    cmd.build();
    match &a.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            write_pages(&cmd, dir).with_context(|| format!("cannot write into {}", dir.display()))?;
            println!("wrote the man pages into {}", dir.display());
        }
        None => page(&cmd, &mut std::io::stdout()).context("cannot write the man page")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What arbiter's exit codes mean, the same for every verb (src/main.rs
/// maps results to them).
const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Done: the action was stored, the record is whole, the check passed.
.TP
\fB1\fR
Refused or failed: the rules or a judge's ruling refused the action, another
writer appended first (a conflict), a check found a break (\fBverify\fR,
\fBverify\-file\fR, \fBverify\-bundle\fR), or a what\-if left an event illegal
(\fBwhatif\fR).
.TP
\fB2\fR
Usage or I/O: a bad flag or argument, malformed JSON, no such game, or a store,
file or server that cannot be read or written.
"#;

/// One page: clap_mangen's sections, then EXIT STATUS.
fn page(cmd: &clap::Command, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(cmd.clone()).render(out)?;
    out.write_all(EXIT_STATUS.as_bytes())
}

/// arbiter.1 and one page per verb (arbiter-append.1, ...), named as
/// `clap_mangen::generate_to` names them.
fn write_pages(cmd: &clap::Command, dir: &std::path::Path) -> std::io::Result<()> {
    for verb in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(verb, dir)?;
    }
    let name = clap_mangen::Man::new(cmd.clone()).get_filename();
    let mut file = std::fs::File::create(dir.join(name))?;
    page(cmd, &mut file)?;
    std::io::Write::flush(&mut file)
}
