//! `export GAME [-o FILE]`, `import FILE [--as GAME]`, `verify-file FILE [--head HASH]`.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use arbiter::access::{self, ReadAccess};
use arbiter::event::{Event, check_link};
use arbiter::fold::Source;
use arbiter::ops;
use arbiter::record::{ExportFile, RecordError, canonical_bytes, read_export, verify};

use super::new::str;
use super::{Output, Target, progress, rec};
use indicatif::ProgressBar;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// An export file (JSON Lines, one canonical event per line).
    pub file: PathBuf,
    /// Game name (default: the file name without its extension).
    #[arg(long = "as")]
    pub name: Option<String>,
    /// Who may read the game through a server: anyone (public) or token holders only.
    #[arg(long, default_value = "public", value_parser = ["public", "token"])]
    pub read: String,
}

#[derive(clap::Args)]
pub struct VerifyFileArgs {
    /// An export file (JSON Lines, one canonical event per line).
    pub file: PathBuf,
    /// The head hash the record must end at.
    #[arg(long)]
    pub head: Option<String>,
}

pub fn export(target: &Target, a: &ExportArgs, out: &Output) -> anyhow::Result<ExitCode> {
    // A file is written whole or not at all: into a file beside it, renamed
    // over it at the end, so a missing game or a broken event leaves
    // nothing behind (nor half an export).
    let partial = a.output.as_ref().map(|path| {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
    });
    let written = write_export(target, a, partial.as_ref());
    let count = match (written, &partial, &a.output) {
        (Ok(count), Some(partial), Some(path)) => {
            std::fs::rename(partial, path).with_context(|| format!("cannot write {}", path.display()))?;
            count
        }
        (Ok(count), _, _) => count,
        (Err(e), partial, _) => {
            if let Some(partial) = partial {
                let _ = std::fs::remove_file(partial);
            }
            return Err(e);
        }
    };
    if let Some(path) = &a.output {
        out.emit(serde_json::json!({"game": a.game, "events": count, "file": path}), || {
            format!("exported {count} events of {} to {}", a.game, path.display())
        });
    }
    Ok(ExitCode::SUCCESS)
}

/// The export of `a.game` into `partial` (else stdout), once the game is
/// found: how many events.
fn write_export(target: &Target, a: &ExportArgs, partial: Option<&PathBuf>) -> anyhow::Result<u64> {
    let sink = |first: Option<&[u8]>| -> anyhow::Result<Box<dyn Write>> {
        let mut sink: Box<dyn Write> = match partial {
            Some(path) => Box::new(BufWriter::new(
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
            )),
            None => Box::new(BufWriter::new(std::io::stdout().lock())),
        };
        if let Some(bytes) = first {
            sink.write_all(bytes)?;
        }
        Ok(sink)
    };
    let mut count = 0u64;
    let mut sink = match target {
        Target::Local(store) => {
            let head = store.head(&a.game).map_err(|e| rec(e.into()))?;
            let head = head.ok_or_else(|| rec(RecordError::NoSuchGame(a.game.clone())))?;
            let bar = progress::bar(Some(head.seq + 1), "exporting");
            let mut sink = sink(None)?;
            for event in store.read(&a.game, 0).map_err(|e| rec(e.into()))? {
                let event = event.map_err(|e| rec(e.into()))?;
                sink.write_all(&canonical_bytes(&event))?;
                sink.write_all(b"\n")?;
                count += 1;
                bar.inc(1);
            }
            bar.finish_and_clear();
            sink
        }
        Target::Remote(c) => {
            // Written only once every line is checked (strict JSON, hash, chain).
            let bytes = c.get_bytes(&c.game(&a.game, "/export")?)?;
            let mut prev = None;
            for event in read_export(std::io::Cursor::new(&bytes)) {
                let event = event.map_err(rec)?;
                check_link(&event, prev.as_ref())
                    .map_err(|e| rec(RecordError::Broken { seq: event.seq, why: e.to_string() }))?;
                prev = Some(event.link());
                count += 1;
            }
            sink(Some(&bytes))?
        }
    };
    sink.flush()?;
    Ok(count)
}

fn open(path: &PathBuf) -> anyhow::Result<BufReader<File>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(BufReader::new(file))
}

pub fn import(target: &Target, a: &ImportArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let name = match &a.name {
        Some(n) => n.clone(),
        None => a.file.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string(),
    };
    let not_imported = || format!("{} was not imported; nothing was stored", a.file.display());
    let v = match target {
        Target::Local(store) => {
            open(&a.file)?;
            // The file is read twice (verified whole, then stored), never
            // held in memory: the bar counts the lines of both reads.
            let bar = progress::bar(None, "verifying, then storing");
            let file = Counted { file: ExportFile { path: a.file.clone() }, bar: &bar };
            let read = if a.read == "token" { ReadAccess::Token } else { ReadAccess::Public };
            let store = store.as_ref();
            let imported = access::creating(store, &name, read, || ops::import_from(store, &name, &file));
            bar.finish_and_clear();
            match imported {
                Ok(v) => v,
                // Only an export longer than one batch can be cut short
                // once stored in part (a full disk, a lost database).
                Err(e) if !matches!(e, RecordError::Exists(_)) && store.head(&name).is_ok_and(|h| h.is_some()) => {
                    let held = store.head(&name).ok().flatten().map_or(0, |h| h.seq + 1);
                    return Err(rec(e).context(format!(
                        "{} was cut short: {name} holds its first {held} events, each verified",
                        a.file.display()
                    )));
                }
                Err(e) => return Err(rec(e).context(not_imported())),
            }
        }
        Target::Remote(c) => {
            let bytes = std::fs::read(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
            let path = c.game(&name, &format!("/import?read={}", a.read))?;
            c.post_bytes(&path, "application/jsonl", &bytes).map_err(|e| e.context(not_imported()))?
        }
    };
    out.emit(v.clone(), || format!("imported {} events as {name}; head {}", v["events"], str(&v["head"])));
    Ok(ExitCode::SUCCESS)
}

/// An export file whose reads move a progress bar, a line at a time.
struct Counted<'b> {
    file: ExportFile,
    bar: &'b ProgressBar,
}

impl Source for Counted<'_> {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        Box::new(self.file.events_from(from).inspect(|_| self.bar.inc(1)))
    }
}

pub fn verify_file(a: &VerifyFileArgs, out: &Output) -> anyhow::Result<ExitCode> {
    // A file that cannot be read was not checked: an error (exit 2), not a
    // failed verification.
    if let Err(e) = File::open(&a.file) {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!("no such file: {}", a.file.display()),
            _ => format!("cannot read {}: {e}", a.file.display()),
        };
        return Err(rec(RecordError::Io(why)));
    }
    let (verified, _) = verify(&ExportFile { path: a.file.clone() }, a.head.as_deref())
        .map_err(|e: RecordError| rec(e).context(format!("{} failed verification", a.file.display())))?;
    out.emit(serde_json::json!({"file": a.file, "ok": true, "events": verified.events, "head": verified.head}), || {
        format!(
            "ok: {}: {} events, hashes, links and rules verified; head {}",
            a.file.display(),
            verified.events,
            verified.head
        )
    });
    Ok(ExitCode::SUCCESS)
}
