//! The verifiable log over HTTP: the latest signed checkpoint (as C2SP
//! serves it, text/plain), the log's key, inclusion and consistency proofs,
//! and offline bundles. The server signs a checkpoint every second while
//! appends arrive (`Keeper::tick`), and once more when it shuts down.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use serde_json::{Value, json};

use super::body::query_num;
use super::{ApiError, Shared, blocking};
use crate::proof;
use crate::record::RecordError;
use crate::store::Store;
use crate::store::checkpoints::{self, Signed};
use crate::tlog::note::NoteSigner;

/// How often the server signs a checkpoint while appends arrive.
pub const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The organiser's key and the newest checkpoint it signed.
pub struct Keeper {
    signer: NoteSigner,
    /// The newest checkpoint; the lock also keeps signing one at a time.
    latest: Mutex<Option<Signed>>,
}

impl Keeper {
    pub fn new(signer: NoteSigner) -> Keeper {
        Keeper { signer, latest: Mutex::new(None) }
    }

    /// Signs a checkpoint if the log grew since the newest one (blocking).
    pub fn tick(&self, store: &dyn Store) -> Result<Signed, RecordError> {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        let size = store.log_size()?;
        if let Some(l) = latest.as_ref()
            && l.checkpoint.size == size
        {
            return Ok(l.clone());
        }
        let signed = match latest.as_ref() {
            // Only the first tick reads the checkpoints; later ones know the newest.
            None => checkpoints::sign(store, &self.signer),
            Some(l) => checkpoints::sign_after(store, &self.signer, Some(l)),
        }
        .map_err(|e| RecordError::Io(e.to_string()))?;
        *latest = Some(signed.clone());
        Ok(signed)
    }

    pub fn public_key(&self) -> String {
        self.signer.verifier().to_text()
    }
}

/// The newest checkpoint, signing one first if the log has grown (so a
/// proof asked for just after an append covers it).
async fn latest(s: &Shared) -> Result<Signed, ApiError> {
    let server = s.clone();
    Ok(blocking(move || server.keeper.tick(server.store())).await??)
}

/// `GET /checkpoint`: the latest signed checkpoint.
pub async fn checkpoint(State(s): State<Shared>) -> Result<impl IntoResponse, ApiError> {
    let signed = latest(&s).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], signed.note))
}

/// `GET /api/log`: the log's origin, public key and latest checkpoint.
pub async fn log(State(s): State<Shared>) -> Result<Json<Value>, ApiError> {
    let signed = latest(&s).await?;
    Ok(Json(json!({"origin": signed.checkpoint.origin, "key": s.keeper.public_key(),
        "size": signed.checkpoint.size, "checkpoint": signed.note})))
}

fn game_of(q: &HashMap<String, String>) -> Result<String, ApiError> {
    q.get("game").cloned().ok_or_else(|| ApiError::input("game= is required"))
}

/// `GET /api/proof/inclusion?game=G&seq=N&size=S`: event N of G (default:
/// its head) in the tree of S leaves (default: the latest checkpoint).
pub async fn inclusion(
    State(s): State<Shared>,
    h: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let game = game_of(&q)?;
    s.reader(&h, &q, &game)?;
    let (seq, size) = (query_num(&q, "seq")?, query_num(&q, "size")?);
    let size = match size {
        Some(size) => size,
        None => latest(&s).await?.checkpoint.size,
    };
    let store = s.store();
    Ok(Json(blocking(move || proof::inclusion(store, &game, seq, size)).await??))
}

/// `GET /api/proof/consistency?from=M&to=N` (to default: the latest checkpoint).
pub async fn consistency(
    State(s): State<Shared>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let from = query_num(&q, "from")?.ok_or_else(|| ApiError::input("from= is required"))?;
    let to = match query_num(&q, "to")? {
        Some(to) => to,
        None => latest(&s).await?.checkpoint.size,
    };
    let store = s.store();
    Ok(Json(blocking(move || proof::consistency(store, from, to)).await??))
}

/// `GET /api/proof/bundle?game=G&seq=N&kept=SIZE`: the offline bundle of
/// event N of G in the latest checkpoint, with a consistency proof from the
/// checkpoint of SIZE leaves that the player kept.
pub async fn bundle(
    State(s): State<Shared>,
    h: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let game = game_of(&q)?;
    s.reader(&h, &q, &game)?;
    let (seq, kept) = (query_num(&q, "seq")?, query_num(&q, "kept")?);
    let signed = latest(&s).await?;
    let server = s.clone();
    let bundle = blocking(move || -> Result<Value, RecordError> {
        let store = server.store();
        let key = server.keeper.signer.verifier();
        let mut b = proof::bundle(store, &game, seq, &signed.note, &key, None)?;
        if let Some(from) = kept {
            b.kept = Some(proof::kept(store, from, signed.checkpoint.size)?);
        }
        Ok(serde_json::to_value(b).expect("a bundle serialises"))
    })
    .await??;
    Ok(Json(bundle))
}
