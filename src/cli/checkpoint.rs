//! `arbiter checkpoint`, `arbiter prove GAME` and `arbiter verify-bundle FILE`:
//! the verifiable log from the command line (see `arbiter::tlog`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use arbiter::proof;
use arbiter::proof::bundle::{self, Bundle, BundleError};
use arbiter::record::RecordError;
use arbiter::store::checkpoints;
use arbiter::tlog::note::b64;
use serde_json::{Value, json};

use super::new::str;
use super::{Cli, Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// Print the log's public key (name+id+key) instead, to publish for players and auditors.
    #[arg(long)]
    pub public_key: bool,
}

/// Signs a checkpoint if the log grew since the newest one, and prints the
/// newest (or the public key).
pub fn run(cli: &Cli, target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let v = match target {
        Target::Local(store) => {
            let signer = signer(cli, store.as_ref())?;
            let signed = checkpoints::sign(store.as_ref(), &signer).map_err(|e| rec(RecordError::Io(e.to_string())))?;
            json!({"origin": signed.checkpoint.origin, "size": signed.checkpoint.size,
                "root": b64(&signed.checkpoint.root), "checkpoint": signed.note, "key": signer.verifier().to_text(),
                "new": signed.new})
        }
        Target::Remote(c) => c.get("/api/log")?,
    };
    if a.public_key {
        out.emit(json!({"key": v["key"]}), || str(&v["key"]).to_string());
    } else {
        // The note itself, byte for byte (it ends in a newline).
        out.emit(v.clone(), || str(&v["checkpoint"]).trim_end_matches('\n').to_string());
    }
    Ok(ExitCode::SUCCESS)
}

/// `games` and `verify` (and a server, at its first tick) sign a checkpoint
/// of the events a writer acknowledged and died before signing: an append
/// is acknowledged once durable and signed after, since signing before
/// would add a signature and a checkpoint's sync to every append's wait.
/// Not on a copy of a store that cannot be written (nothing made there
/// lasts); a failure is said, and `verify` then names the unsigned events.
pub fn sign_tail(cli: &Cli, target: &super::Target) {
    let super::Target::Local(store) = target else { return };
    if store.is_a_copy() {
        return;
    }
    let signed = signer(cli, store.as_ref())
        .and_then(|s| checkpoints::sign_tail(store.as_ref(), &s).map_err(|e| rec(RecordError::Io(e.to_string()))));
    match signed {
        Ok(true) => eprintln!(
            "note: signed a checkpoint of the events stored after the newest one (a writer stopped before it signed them)"
        ),
        Ok(false) => {}
        Err(e) => eprintln!("warning: no checkpoint was signed of the events stored after the newest one: {e:#}"),
    }
}

/// The organiser's signing key of a local store (made on first use).
pub fn signer(cli: &Cli, store: &dyn arbiter::store::Store) -> anyhow::Result<arbiter::tlog::NoteSigner> {
    checkpoints::signer(store, cli.log_key.as_deref(), cli.origin.as_deref())
        .map_err(|e| rec(RecordError::Io(e.to_string())))
}

#[derive(clap::Args)]
pub struct ProveArgs {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// The event to prove (default: the game's head).
    #[arg(long)]
    pub seq: Option<u64>,
    /// A checkpoint you kept (a file holding the signed note): the bundle also proves that the log still extends it.
    #[arg(long)]
    pub kept: Option<PathBuf>,
    /// Write the bundle here (default: stdout).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

pub fn prove(cli: &Cli, target: &Target, a: &ProveArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let kept = match &a.kept {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?),
        None => None,
    };
    let bundle: Value = match target {
        Target::Local(store) => {
            let signer = signer(cli, store.as_ref())?;
            let signed = checkpoints::sign(store.as_ref(), &signer).map_err(|e| rec(RecordError::Io(e.to_string())))?;
            let b = proof::bundle(store.as_ref(), &a.game, a.seq, &signed.note, &signer.verifier(), kept.as_deref())
                .map_err(rec)?;
            serde_json::to_value(b)?
        }
        Target::Remote(c) => {
            // A game name is letters, digits, '.', '-' and '_': safe in a query as it is.
            arbiter::event::check_game_name(&a.game).map_err(|e| rec(RecordError::Input(e)))?;
            let mut path = format!("/api/proof/bundle?game={}", a.game);
            if let Some(seq) = a.seq {
                path.push_str(&format!("&seq={seq}"));
            }
            if let Some(text) = &kept {
                let k = arbiter::tlog::note::checkpoint_of(text)
                    .map_err(|e| rec(RecordError::Input(format!("--kept: {e}"))))?;
                path.push_str(&format!("&kept={}", k.size));
            }
            c.get(&path)?
        }
    };
    let text = serde_json::to_string_pretty(&bundle)?;
    let summary = format!(
        "bundle of {} seq {}: leaf {} of checkpoint {}",
        a.game,
        bundle["seq"],
        bundle["leaf_index"],
        bundle["checkpoint"].as_str().and_then(|n| n.lines().nth(1)).unwrap_or("?")
    );
    match &a.out {
        Some(path) => {
            std::fs::write(path, format!("{text}\n")).with_context(|| format!("cannot write {}", path.display()))?;
            out.emit(json!({"written": path, "game": a.game, "seq": bundle["seq"]}), || {
                format!(
                    "{summary}\nwritten to {}; check it anywhere with: arbiter verify-bundle {}",
                    path.display(),
                    path.display()
                )
            });
        }
        None => println!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct VerifyBundleArgs {
    /// The bundle (from `arbiter prove` or GET /api/proof/bundle).
    pub file: PathBuf,
    /// The log key the organiser published (name+id+key, or a file holding it); without it the bundle's own key is used.
    #[arg(long)]
    pub expect_key: Option<String>,
    /// A checkpoint you kept (a file holding the signed note): check that the log still extends it.
    #[arg(long)]
    pub kept: Option<PathBuf>,
    /// A witness's key (name+id+key, or a file): the checkpoint must carry its cosignature. Repeatable.
    #[arg(long)]
    pub witness: Vec<String>,
}

/// A key given as text or as a file holding it.
fn key_arg(k: &str) -> anyhow::Result<String> {
    let p = std::path::Path::new(k);
    if p.is_file() { Ok(std::fs::read_to_string(p)?.trim().to_string()) } else { Ok(k.trim().to_string()) }
}

pub fn verify_bundle(a: &VerifyBundleArgs, out: &Output) -> anyhow::Result<ExitCode> {
    let input = |m: String| rec(RecordError::Input(m));
    let text = std::fs::read_to_string(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
    let b: Bundle =
        serde_json::from_str(&text).map_err(|e| input(format!("{} is not a bundle: {e}", a.file.display())))?;
    let kept = match &a.kept {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?),
        None => None,
    };
    let key = a.expect_key.as_deref().map(key_arg).transpose()?;
    let witnesses = a.witness.iter().map(|w| key_arg(w)).collect::<anyhow::Result<Vec<_>>>()?;
    match bundle::check(&b, key.as_deref(), kept.as_deref(), &witnesses) {
        Ok(p) => {
            let v = json!({"ok": true, "proved": p, "key_pinned": key.is_some()});
            out.emit(v, || {
                let mut s = format!(
                    "OK: {} events 0..{} verify, and event {} (hash {}) is leaf {} of checkpoint {} of {} (root {});\n  its hash chain fixes every event before it",
                    p.game, p.seq, p.seq, p.hash, p.leaf_index, p.size, p.origin, p.root
                );
                if let Some(k) = p.kept {
                    s.push_str(&format!("\n  the log still extends your kept checkpoint {k}: nothing in it was rewritten"));
                }
                for w in &p.witnesses {
                    s.push_str(&format!("\n  cosigned by witness {w}"));
                }
                if key.is_none() {
                    s.push_str(&format!(
                        "\n  signed by the key in the bundle ({}); compare it with the key the organiser published, or pass --expect-key",
                        b.log_key
                    ));
                }
                s
            });
            Ok(ExitCode::SUCCESS)
        }
        Err(BundleError::Input(m)) => Err(input(m)),
        Err(BundleError::Failed(m)) => {
            let v = json!({"ok": false, "error": {"code": "failed", "message": m}});
            out.emit(v, || format!("FAILED: {m}"));
            Ok(ExitCode::from(1))
        }
    }
}
