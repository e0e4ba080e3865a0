//! `arbiter witness --log KEY [REQUEST]`: cosign a log's checkpoint as a
//! witness (c2sp.org/tlog-witness), only if it extends the last one this
//! witness cosigned for that log. A request comes from a file (the
//! add-checkpoint body), or is fetched from `--server` (its /checkpoint and
//! the consistency proof from what the witness saw).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use arbiter::record::RecordError;
use arbiter::store::checkpoints::write_private_key;
use arbiter::tlog::note::{Cosigner, NoteVerifier, checkpoint_of, unb64};
use arbiter::tlog::witness::{self, Request, State, WitnessError};
use serde_json::json;

use super::{Output, Target, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The witness's directory: its private key (witness.key) and what it last cosigned per log (state.json).
    #[arg(long, default_value = "./arbiter-witness")]
    pub dir: PathBuf,
    /// The witness's name, set when its key is made (e.g. witness.lunacity.example).
    #[arg(long)]
    pub name: Option<String>,
    /// The log's public key, as its organiser published it (name+id+key, or a file holding it).
    #[arg(long, required_unless_present = "public_key")]
    pub log: Option<String>,
    /// An add-checkpoint request in a file ('-': stdin); without it, fetched from --server.
    pub request: Option<String>,
    /// Print the witness's public key (for players' `verify-bundle --witness`) and stop.
    #[arg(long)]
    pub public_key: bool,
}

const KEY: &str = "witness.key";
const STATE: &str = "state.json";

fn cosigner(dir: &Path, name: Option<&str>) -> anyhow::Result<Cosigner> {
    let path = dir.join(KEY);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Cosigner::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let Some(name) = name else {
                anyhow::bail!("this witness has no key yet: give it a --name (e.g. witness.example.org)")
            };
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|e| anyhow::anyhow!("no randomness for a new key: {e}"))?;
            let c = Cosigner::from_seed(name, seed).map_err(|e| rec(RecordError::Input(e.to_string())))?;
            write_private_key(&path, &c.to_text()).map_err(|e| rec(RecordError::Io(e.to_string())))?;
            Ok(c)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn read_state(dir: &Path) -> anyhow::Result<State> {
    match std::fs::read(dir.join(STATE)) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", dir.join(STATE).display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(e).context("cannot read the witness's state"),
    }
}

/// Writes the state durably before the cosignature is shown: a new file,
/// fsynced, renamed over the old one, and the directory fsynced.
fn write_state(dir: &Path, state: &State) -> anyhow::Result<()> {
    use std::io::Write;
    let tmp = dir.join(format!("{STATE}.new"));
    let mut f = std::fs::File::create(&tmp).context("cannot write the witness's state")?;
    f.write_all(&serde_json::to_vec_pretty(state)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join(STATE))?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

pub fn run(
    target: impl FnOnce() -> anyhow::Result<Option<Target>>,
    a: &Args,
    out: &Output,
) -> anyhow::Result<ExitCode> {
    let me = cosigner(&a.dir, a.name.as_deref())?;
    if a.public_key {
        let key = me.verifier().to_text();
        out.emit(json!({"key": key}), || key.clone());
        return Ok(ExitCode::SUCCESS);
    }
    let log = a.log.as_deref().expect("clap requires --log");
    let log = if Path::new(log).is_file() { std::fs::read_to_string(log)? } else { log.to_string() };
    let log = NoteVerifier::parse(&log).map_err(|e| rec(RecordError::Input(format!("--log: {e}"))))?;
    let state = read_state(&a.dir)?;
    let text = match a.request.as_deref() {
        Some("-") => std::io::read_to_string(std::io::stdin())?,
        Some(file) => std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?,
        None => {
            let Some(Target::Remote(c)) = target()? else {
                anyhow::bail!("give a request file, or --server URL to fetch the log's checkpoint")
            };
            let note = String::from_utf8(c.get_bytes("/checkpoint")?)?;
            let size = checkpoint_of(&note).map_err(|e| rec(RecordError::Input(e.to_string())))?.size;
            let old = state.logs.get(&log.name).map_or(0, |s| s.size);
            let proof = c.get(&format!("/api/proof/consistency?from={old}&to={size}"))?;
            let proof: Vec<String> = serde_json::from_value(proof["consistency"].clone())?;
            let proof: Vec<_> = proof.iter().filter_map(|h| unb64(h)?.try_into().ok()).collect();
            Request::write(old, &proof, &note)
        }
    };
    let request = Request::parse(&text).map_err(|e| rec(RecordError::Input(e.to_string())))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    match witness::add_checkpoint(&state, &log, &me, &request, now) {
        Ok((next, cosignature)) => {
            write_state(&a.dir, &next)?;
            let cosigned = format!("{}{cosignature}", request.note);
            out.emit(json!({"cosigned": cosigned, "witness": me.name}), || cosigned.trim_end().to_string());
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ WitnessError::Malformed(_)) => Err(rec(RecordError::Input(e.to_string()))),
        Err(e) => {
            out.emit(json!({"ok": false, "error": {"code": "refused", "message": e.to_string()}}), || {
                format!("REFUSED: {e}")
            });
            Ok(ExitCode::from(1))
        }
    }
}
