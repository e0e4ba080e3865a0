//! The `arbiter` binary: a thin layer over the library. `cli` turns flags
//! into validated arguments; each verb lives in its own file; `main` maps
//! results to exit codes: 0 ok, 1 refused or failed check, 2 usage or I/O.

mod cli;

use std::process::ExitCode;

use arbiter::record::RecordError;
use clap::{CommandFactory, FromArgMatches};

/// mimalloc rather than glibc's malloc: folds and replays make and drop many
/// small values, across two threads in `verify`, and beside sled's page
/// table of a large store glibc spent a third of `verify`'s time in
/// `_int_malloc` and `malloc_consolidate`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Where the kernel gives every process transparent huge pages
    // ("always"), each of mimalloc's arenas is backed by 2 MiB pages as soon
    // as it is touched: `head` of a small store then peaks at 55 MiB instead
    // of 20. Turning them off for this process keeps mimalloc's speed at
    // glibc's footprint.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only this
    // process's paging; its failure (an old kernel) costs only memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // Like other Unix filters, end quietly when the reader goes away
    // (`arbiter log g | head`) instead of panicking on a broken pipe.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A shell asking for completions (COMPLETE=bash arbiter -- ...) gets them here.
    cli::complete_now();
    let matches = cli::Cli::command().get_matches();
    let mut args = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let json = args.json;
    match args.settle_target(&matches).and_then(|()| cli::run(args)) {
        Ok(code) => code,
        Err(err) => {
            let code = exit_code(&err);
            report(&err, json);
            ExitCode::from(code)
        }
    }
}

/// 1: the action or record was refused or failed a check; 2: usage, bad input
/// (malformed JSON, a bad argument) or I/O.
fn exit_code(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<cli::Denied>().is_some() {
        return 1;
    }
    match err.downcast_ref::<RecordError>() {
        Some(RecordError::NoSuchGame(_) | RecordError::Io(_) | RecordError::Unavailable(_) | RecordError::Input(_)) => {
            2
        }
        Some(_) => 1,
        None => 2,
    }
}

fn report(err: &anyhow::Error, json: bool) {
    let record = err.downcast_ref::<RecordError>();
    if json {
        let body = match record {
            Some(e) => {
                let mut body = e.to_json();
                body["error"]["context"] = format!("{err:#}").into();
                body
            }
            None => match err.downcast_ref::<cli::Denied>() {
                Some(d) => serde_json::json!({"error": {"code": d.code, "message": d.message}}),
                None => serde_json::json!({"error": {"code": "usage", "message": format!("{err:#}")}}),
            },
        };
        println!("{body}");
        return;
    }
    match record {
        Some(RecordError::Refused(v)) => {
            let top = err.to_string();
            if top == v.to_string() {
                eprintln!("error: refused: {}", v.message);
            } else {
                eprintln!("error: {top}");
                eprintln!("  refused: {}", v.message);
            }
            eprintln!("  at:   {}", v.step.reference);
            eprintln!("  rule: {}", v.rule);
            if v.may_act.is_empty() {
                eprintln!("  may act now: no one");
            } else {
                eprintln!("  may act now: {}", v.may_act_by_name().join(", "));
            }
            if !v.offered.is_empty() {
                eprintln!("  you may: {}", v.offered.join(" · "));
            }
            eprintln!("  nothing was stored");
        }
        _ => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  {cause}");
            }
        }
    }
}
