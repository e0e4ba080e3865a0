//! Fork, what-if and diff: the tools a judge settles a dispute with. They
//! work the same on stored games and on export files.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::adjudication::{Adjudication, Ruling};
use crate::delta::{self, Change};
use crate::event::{ActionType, Event, Header, check_game_name};
use crate::fold::{Source, fold_all};
use crate::kernel::{StepRef, Violation};
use crate::record::{ExportBytes, ExportFile, RecordError, StoredGame, Submission, Verified, canonical_bytes, verify};
use crate::rules::{Board, Table};
use crate::store::Store;

/// A record to compare: a stored game or an export file.
pub enum Record<'s> {
    Stored(StoredGame<'s>),
    File(ExportFile),
    /// An export held in memory (fetched from a server).
    Bytes(ExportBytes),
}

impl Source for Record<'_> {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        match self {
            Record::Stored(s) => s.events_from(from),
            Record::File(f) => f.events_from(from),
            Record::Bytes(b) => b.events_from(from),
        }
    }
    fn hash_of(&self, seq: u64) -> Result<Option<String>, RecordError> {
        match self {
            Record::Stored(s) => s.hash_of(seq),
            Record::File(f) => f.hash_of(seq),
            Record::Bytes(b) => b.hash_of(seq),
        }
    }
    fn snapshot(&self, seq: u64) -> Option<(crate::fold::Folder, crate::event::Link)> {
        match self {
            Record::Stored(s) => s.snapshot(seq),
            Record::File(_) | Record::Bytes(_) => None,
        }
    }
    /// A stored game's bytes, so that `verify` and `replay` of one read them
    /// on a thread of their own.
    fn stored_from(&self, from: u64) -> Option<crate::fold::StoredBytes<'_, RecordError>> {
        match self {
            Record::Stored(s) => s.stored_from(from),
            Record::File(_) | Record::Bytes(_) => None,
        }
    }
}

impl Record<'_> {
    /// Number of events, and the hash at a seq. Stored games answer from the
    /// store at once; files are read once, in full, into `hashes`.
    fn len_and_hashes(&self) -> Result<(u64, Option<Vec<String>>), RecordError> {
        match self {
            Record::Stored(s) => {
                let head = s.store.head(&s.game)?.ok_or_else(|| RecordError::NoSuchGame(s.game.clone()))?;
                Ok((head.seq + 1, None))
            }
            Record::File(_) | Record::Bytes(_) => {
                let hashes: Vec<String> = self.events_from(0).map(|e| e.map(|e| e.hash)).collect::<Result<_, _>>()?;
                // Every record starts with its event 0: a file with none
                // is not an export (an empty file, or the wrong one).
                if hashes.is_empty() {
                    let what = match self {
                        Record::File(f) => format!("{} holds no events", f.path.display()),
                        _ => "the export holds no events".to_string(),
                    };
                    return Err(RecordError::Input(format!("{what}: an export starts with its game's event 0")));
                }
                Ok((hashes.len() as u64, Some(hashes)))
            }
        }
    }

    fn hash_at(&self, hashes: &Option<Vec<String>>, seq: u64) -> Result<String, RecordError> {
        match (self, hashes) {
            (_, Some(h)) => Ok(h[seq as usize].clone()),
            (Record::Stored(s), None) => {
                Ok(s.store.get(&s.game, seq)?.ok_or_else(|| RecordError::Io(format!("seq {seq} missing")))?.hash)
            }
            (Record::File(_) | Record::Bytes(_), None) => unreachable!("files carry their hashes"),
        }
    }
}

/// `fork GAME --at SEQ NEW`: the new game shares events 0..=SEQ byte for byte.
pub fn fork(store: &dyn Store, game: &str, at: u64, new: &str) -> Result<Verified, RecordError> {
    check_game_name(new).map_err(RecordError::Input)?;
    if store.head(new)?.is_some() {
        return Err(RecordError::Exists(new.to_string()));
    }
    let head = store.head(game)?.ok_or_else(|| RecordError::NoSuchGame(game.to_string()))?;
    if at > head.seq {
        return Err(RecordError::Input(format!("seq {at} is past the head of {game} (seq {})", head.seq)));
    }
    let mut batch = Vec::new();
    for event in store.read(game, 0)?.take(at as usize + 1) {
        let event = event?;
        let bytes = canonical_bytes(&event);
        batch.push((event, bytes));
    }
    store.append_batch(new, &batch)?;
    // Checked from the store, keeping the snapshots its appends would have.
    crate::record::verify_keeping_snapshots(store, new, crate::limits::SNAPSHOT_EVERY)
}

/// What a what-if found.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIf {
    /// Every event stays legal (`illegal` is absent); `arbiter whatif`
    /// exits 1 otherwise.
    pub legal: bool,
    /// The first event that becomes illegal, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub illegal: Option<(u64, Violation)>,
    /// Otherwise, how the final state changes (outcome first).
    pub changes: Vec<Change>,
    /// The same in the board's words: the outcome rows that differ, the
    /// record as it stands (`a`) against the what-if (`b`).
    pub outcome: Vec<OutcomeRow>,
    /// Where the what-if stops: before the first illegal event, else after
    /// the last event (and `then`). A judge sees that board before a ruling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<StepRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<Board>,
    pub skipped: Vec<u64>,
    pub appended: u64,
}

/// Folds the record without the `skip` events (and with `then` after it).
/// Nothing is stored. Seqs keep their numbers, so counters and rulings
/// still name the events they named; a rewind folds the filtered record
/// again up to its target (one naming a skipped event becomes illegal).
pub fn whatif<S>(source: &S, skip: &BTreeSet<u64>, then: &[Submission]) -> Result<WhatIf, RecordError>
where
    S: Source<Error = RecordError>,
{
    if skip.contains(&0) {
        return Err(RecordError::Input("event 0 (the header) cannot be skipped".into()));
    }
    let original = fold_all(source).map_err(|e| match e {
        crate::fold::FoldError::Illegal { seq, violation } => RecordError::Broken { seq, why: violation.to_string() },
        crate::fold::FoldError::Source(e) => e,
    })?;
    let original = original.table().cloned().ok_or_else(|| RecordError::Broken { seq: 0, why: "empty".into() })?;
    let result = |table: Option<Table>, illegal: Option<(u64, Violation)>| -> Result<WhatIf, RecordError> {
        let step = table.as_ref().map(|t| t.view().step);
        let board = table.as_ref().and_then(Table::board);
        let (changes, outcome) = match (&illegal, table) {
            (None, Some(t)) => {
                let outcome = match (original.board(), t.board()) {
                    (Some(x), Some(y)) => outcome_rows(&x.outcome(), &y.outcome()),
                    _ => vec![],
                };
                (delta::diff(&to_json(&original), &to_json(&t)), outcome)
            }
            _ => (vec![], vec![]),
        };
        let skipped = skip.iter().copied().collect();
        Ok(WhatIf {
            legal: illegal.is_none(),
            illegal,
            changes,
            outcome,
            step,
            board,
            skipped,
            appended: then.len() as u64,
        })
    };
    let (mut table, last) = match loose_fold(source, skip, u64::MAX)? {
        Loose::Folded { table, last } => (table, last),
        Loose::Illegal { table, seq, violation } => return result(table, Some((seq, violation))),
    };
    for (i, sub) in then.iter().enumerate() {
        let seq = last + 1 + i as u64;
        // Not sealed: a what-if stores nothing, so only seq, actor and action matter.
        let event = Event {
            v: 1,
            seq,
            prev: String::new(),
            at: String::new(),
            actor: sub.actor.clone(),
            action: sub.action.clone(),
            hash: String::new(),
        };
        match loose_step(source, skip, table.as_ref().expect("a state"), &event, &mut Vec::new())? {
            Ok(next) => table = Some(next),
            Err(v) => return result(table, Some((seq, v))),
        }
    }
    result(table, None)
}

enum Loose {
    Folded { table: Option<Table>, last: u64 },
    Illegal { table: Option<Table>, seq: u64, violation: Violation },
}

/// A fold that keeps seqs where events are skipped: game actions and
/// rulings; a rewind folds the same filtered record again up to its target.
/// Before the first skipped event it is the record's own fold, so it starts
/// from the nearest snapshot before that event.
fn loose_fold<S: Source<Error = RecordError>>(
    source: &S,
    skip: &BTreeSet<u64>,
    upto: u64,
) -> Result<Loose, RecordError> {
    let mut table: Option<Table> = None;
    let mut last = 0;
    let mut rewound: Vec<(u64, u64)> = Vec::new();
    let unchanged = skip.first().map_or(upto, |first| upto.min(first.saturating_sub(1)));
    let mut from = 0;
    if let Some((folder, link)) = source.snapshot(unchanged) {
        table = folder.table().cloned();
        rewound = folder.rewound().to_vec();
        last = link.seq;
        from = folder.len();
    }
    for event in source.events_from(from) {
        let event = event?;
        if event.seq > upto {
            break;
        }
        last = event.seq;
        if skip.contains(&event.seq) {
            continue;
        }
        let step = match &table {
            None => {
                let header: Header =
                    serde_json::from_value(event.action.clone()).map_err(|e| RecordError::Input(e.to_string()))?;
                Table::open(&header)
            }
            Some(t) => loose_step(source, skip, t, &event, &mut rewound)?,
        };
        match step {
            Ok(t) => table = Some(t),
            Err(violation) => return Ok(Loose::Illegal { table, seq: event.seq, violation }),
        }
    }
    Ok(Loose::Folded { table, last })
}

/// One event of a what-if.
fn loose_step<S: Source<Error = RecordError>>(
    source: &S,
    skip: &BTreeSet<u64>,
    t: &Table,
    event: &Event,
    rewound: &mut Vec<(u64, u64)>,
) -> Result<Result<Table, Violation>, RecordError> {
    if !matches!(event.action_type(), Some(ActionType::Ruling | ActionType::Note)) {
        // Refused for naming an event the what-if left out: say that, not
        // what the rules say of the state without it (another seat's turn).
        return Ok(t.apply(event.seq, &event.actor, &event.action).map_err(|mut v| {
            if let Some(why) = names_skipped(&event.action, skip) {
                v.message = why;
            }
            v
        }));
    }
    let a: Adjudication =
        serde_json::from_value(event.action.clone()).map_err(|e| RecordError::Input(e.to_string()))?;
    match a {
        Adjudication::Note { concerns, text } => Ok(t.note(event.seq, &event.actor, concerns.seq, &text)),
        Adjudication::Ruling(rewind @ Ruling::Rewind { .. }) => {
            let target = rewind.concerns().seq;
            let gone = skip.contains(&target) || rewound.iter().any(|(a, b)| (*a..=*b).contains(&target));
            if let Err(v) = t.check_judge(&event.actor) {
                return Ok(Err(v));
            }
            if gone || target >= event.seq {
                let why = format!("the rewind names seq {target}, which is not part of this what-if");
                return Ok(Err(Violation::new(&t.view(), "rewind to an event that stands", why)));
            }
            match loose_fold(source, skip, target)? {
                Loose::Folded { table: Some(earlier), .. } => {
                    rewound.push((target + 1, event.seq - 1));
                    Ok(Ok(t.rewound_to(earlier, event.seq, &event.actor, &rewind)))
                }
                Loose::Folded { table: None, .. } => Err(RecordError::Input("empty record".into())),
                Loose::Illegal { violation, .. } => Ok(Err(violation)),
            }
        }
        Adjudication::Ruling(r) => Ok(t.apply_ruling(event.seq, &event.actor, &r)),
    }
}

/// Why an action is refused when it names an event the what-if skipped:
/// a counter's target, an event counted, the event a ruling concerns.
fn names_skipped(action: &Value, skip: &BTreeSet<u64>) -> Option<String> {
    let skipped = |v: &Value| v.as_u64().filter(|seq| skip.contains(seq));
    let Value::Object(fields) = action else { return None };
    fields.iter().find_map(|(name, v)| match name.as_str() {
        "target" | "counters" => skipped(v).map(|seq| format!("its target (seq {seq}) was skipped")),
        "counted" => {
            v.as_array()?.iter().find_map(skipped).map(|seq| format!("it counts seq {seq}, which was skipped"))
        }
        "concerns" => skipped(&v["seq"]).map(|seq| format!("the event it concerns (seq {seq}) was skipped")),
        _ => None,
    })
}

fn to_json(t: &Table) -> Value {
    serde_json::to_value(t).expect("state serialises")
}

/// How two records were lined up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    /// By hash: each hash commits to its whole prefix, so a binary search finds the common prefix.
    Hash,
    /// By content (actor and action): two recordings of one combat made independently.
    Content,
}

/// What `diff` found.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub alignment: Alignment,
    /// Events in common from seq 0.
    pub common: u64,
    pub a_events: u64,
    pub b_events: u64,
    /// Hash comparisons made to find the common prefix (hash alignment).
    pub comparisons: u64,
    /// Each side's events from the first divergence (at most `SHOWN`).
    pub a_from: Vec<Event>,
    pub b_from: Vec<Event>,
    /// The difference in the resulting state: the result (points, scores,
    /// control) first, then the rest of the outcome, then the rest.
    pub changes: Vec<Change>,
    /// The outcome in the board's words where the records disagree (rows
    /// of the final boards whose values differ), for people; `changes` has
    /// every difference for tools. Empty when the ruleset has no board yet.
    pub outcome: Vec<OutcomeRow>,
    /// Differences only in an event's seq (the records number their events
    /// differently after the divergence): counted, not listed in `changes`.
    pub renumbered: u64,
    /// The two records lined up by content from the first divergence: each
    /// row an event of each (the same, or one in place of the other) or of
    /// one only. The rows that differ (at most `SHOWN`) and the row before
    /// and after each; seqs tell where rows were left out between.
    pub rows: Vec<Row>,
    pub agree: bool,
}

/// One row of two records lined up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Side>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Side>,
    /// One event in both records: the same actor and action, naming the
    /// same events (each in its own record's numbering).
    pub same: bool,
}

/// An event of one side of a row, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Side {
    pub seq: u64,
    pub actor: String,
    /// The actor by name ("Alice (p1)"), from the record's header.
    pub by: String,
    /// The action in words.
    pub words: String,
}

/// One row of the outcome where two records disagree. `None`: that record
/// has no such row (e.g. a combat only one of them reached).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OutcomeRow {
    pub what: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// The rows of two outcomes that differ, in A's order, then B's extra rows.
fn outcome_rows(a: &[(String, String)], b: &[(String, String)]) -> Vec<OutcomeRow> {
    let find = |rows: &[(String, String)], what: &str| rows.iter().find(|(w, _)| w == what).map(|(_, v)| v.clone());
    let mut rows: Vec<OutcomeRow> = a
        .iter()
        .map(|(what, v)| OutcomeRow { what: what.clone(), a: Some(v.clone()), b: find(b, what) })
        .filter(|r| r.a != r.b)
        .collect();
    rows.extend(b.iter().filter(|(w, _)| find(a, w).is_none()).map(|(what, v)| OutcomeRow {
        what: what.clone(),
        a: None,
        b: Some(v.clone()),
    }));
    rows
}

/// Events shown from the divergence on each side.
pub const SHOWN: usize = 20;

/// Where two records part.
#[derive(Debug, Clone, Copy)]
pub struct Prefix {
    pub alignment: Alignment,
    /// Events in common from seq 0.
    pub common: u64,
    /// Hash comparisons made.
    pub comparisons: u64,
    pub a_len: u64,
    pub b_len: u64,
}

/// The common prefix of two records: by hash when they start with the same
/// event (a binary search: O(log n) comparisons, since each hash commits to
/// its whole prefix), else by content.
pub fn common_prefix(a: &Record, b: &Record) -> Result<Prefix, RecordError> {
    let (a_len, a_hashes) = a.len_and_hashes()?;
    let (b_len, b_hashes) = b.len_and_hashes()?;
    let mut comparisons = 1;
    if a.hash_at(&a_hashes, 0)? == b.hash_at(&b_hashes, 0)? {
        // The largest k with equal hashes at k: hashes chain, so equal at k means equal below k.
        let (mut lo, mut hi) = (0, a_len.min(b_len) - 1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            comparisons += 1;
            if a.hash_at(&a_hashes, mid)? == b.hash_at(&b_hashes, mid)? {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return Ok(Prefix { alignment: Alignment::Hash, common: lo + 1, comparisons, a_len, b_len });
    }
    let mut common = 0;
    for (x, y) in a.events_from(0).zip(b.events_from(0)) {
        let (x, y) = (x?, y?);
        if x.actor != y.actor || x.action != y.action {
            break;
        }
        common += 1;
    }
    Ok(Prefix { alignment: Alignment::Content, common, comparisons, a_len, b_len })
}

pub fn diff(a: &Record, b: &Record) -> Result<Diff, RecordError> {
    let Prefix { alignment, common, comparisons, a_len, b_len } = common_prefix(a, b)?;
    let a_from: Vec<Event> = a.events_from(common).take(SHOWN).collect::<Result<_, _>>()?;
    let b_from: Vec<Event> = b.events_from(common).take(SHOWN).collect::<Result<_, _>>()?;
    let final_table = |r: &Record| -> Result<Table, RecordError> {
        let (_, folder) = verify(r, None)?;
        Ok(folder.table().expect("state").clone())
    };
    let (table_a, table_b) = (final_table(a)?, final_table(b)?);
    let lined = line_up(a, b, common)?;
    // The state delta compares lists by position, so one extra effect puts
    // every later one's seq against another's: a seq field's number is
    // counted apart, not listed (the rows show which events differ).
    let (renumbered, changes): (Vec<Change>, Vec<Change>) =
        delta::diff(&to_json(&table_a), &to_json(&table_b)).into_iter().partition(delta::is_renumbering);
    let (renumbered_keys, changes) = lined.renumbered_keys(changes);
    let outcome = match (table_a.board(), table_b.board()) {
        (Some(x), Some(y)) => {
            // A's rows in B's numbering: "ended by Smoke Bomb (seq 88)" is
            // "(seq 89)" in a record with one more event before it.
            let x: Vec<(String, String)> = x.outcome().into_iter().map(|(w, v)| (w, lined.renumber(&v))).collect();
            let mut rows = outcome_rows(&x, &y.outcome());
            // Shown as recorded, in A's own numbering.
            let own = table_a.board().map(|b| b.outcome()).unwrap_or_default();
            for r in &mut rows {
                if let Some((_, v)) = own.iter().find(|(w, _)| *w == r.what) {
                    r.a = Some(v.clone());
                }
            }
            rows
        }
        _ => vec![],
    };
    let side = |t: &Table, e: &Event| Side {
        seq: e.seq,
        actor: e.actor.clone(),
        by: t.header.name_of(&e.actor),
        // Said at the record's last state (one fold per record, not one per
        // row): the words name seats and cards, which stand.
        words: crate::rules::words::words((e.seq > 0).then_some(t), &e.action),
    };
    let rows = lined
        .shown()
        .into_iter()
        .map(|(x, y, same)| Row { a: x.map(|e| side(&table_a, e)), b: y.map(|e| side(&table_b, e)), same })
        .collect();
    let agree = common == a_len && common == b_len;
    let renumbered = (renumbered.len() + renumbered_keys) as u64;
    Ok(Diff {
        alignment,
        common,
        a_events: a_len,
        b_events: b_len,
        comparisons,
        a_from,
        b_from,
        changes,
        outcome,
        renumbered,
        rows,
        agree,
    })
}

/// Two records' events from `from` on, lined up by content: a shortest edit
/// script (Myers) over each event's actor and action with the seqs it names
/// left out, so that one extra event in a record is one row, not every row
/// after it. A pair of events then names the same events if each seq one
/// names is lined up with the seq the other names.
struct LinedUp {
    from: u64,
    a: Vec<Event>,
    b: Vec<Event>,
    /// Index into `a` and `b` of each row; both for a pair.
    rows: Vec<(Option<usize>, Option<usize>, bool)>,
    /// A's seq -> B's seq, for the events lined up from `from` on.
    to_b: std::collections::HashMap<u64, u64>,
}

/// Time spent on the alignment at most: past it, `similar` gives a longer
/// edit script (more rows flagged), never a wrong one.
const ALIGN_SECONDS: u64 = 5;

fn line_up(a: &Record, b: &Record, from: u64) -> Result<LinedUp, RecordError> {
    let a: Vec<Event> = a.events_from(from).collect::<Result<_, _>>()?;
    let b: Vec<Event> = b.events_from(from).collect::<Result<_, _>>()?;
    let key = |e: &Event| {
        let mut action = e.action.clone();
        names_left_out(&mut action, &mut Vec::new());
        let mut bytes = crate::json::canonical(&serde_json::Value::String(e.actor.clone()));
        bytes.extend(crate::json::canonical(&action));
        *blake3::hash(&bytes).as_bytes()
    };
    let (ka, kb): (Vec<[u8; 32]>, Vec<[u8; 32]>) = (a.iter().map(key).collect(), b.iter().map(key).collect());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(ALIGN_SECONDS);
    let ops = similar::capture_diff_slices_deadline(similar::Algorithm::Myers, &ka, &kb, Some(deadline));
    let mut lined = LinedUp { from, a, b, rows: Vec::new(), to_b: Default::default() };
    for op in ops {
        let (_, x, y) = op.as_tag_tuple();
        let paired = x.len().min(y.len());
        // Pairs first: equal events, or one in place of the other.
        for (i, j) in x.clone().zip(y.clone()) {
            let same = matches!(op, similar::DiffOp::Equal { .. }) && lined.names_the_same(i, j);
            lined.to_b.insert(lined.a[i].seq, lined.b[j].seq);
            lined.rows.push((Some(i), Some(j), same));
        }
        lined.rows.extend(x.skip(paired).map(|i| (Some(i), None, false)));
        lined.rows.extend(y.skip(paired).map(|j| (None, Some(j), false)));
    }
    Ok(lined)
}

impl LinedUp {
    /// B's seq for A's: the same below `from`, else the event lined up with it.
    fn to_b(&self, seq: u64) -> Option<u64> {
        if seq < self.from { Some(seq) } else { self.to_b.get(&seq).copied() }
    }

    /// Two events of equal content name events lined up with each other.
    fn names_the_same(&self, i: usize, j: usize) -> bool {
        let names = |e: &Event| {
            let mut seqs = Vec::new();
            names_left_out(&mut e.action.clone(), &mut seqs);
            seqs
        };
        let (x, y) = (names(&self.a[i]), names(&self.b[j]));
        x.len() == y.len() && x.iter().zip(&y).all(|(x, y)| self.to_b(*x) == Some(*y))
    }

    /// Entries of a map keyed by seq (a combat's plays) that differ only in
    /// their key: A's at seq N gone, the same value at B's seq for N come.
    /// Returns how many such pairs there were, and the other changes.
    fn renumbered_keys(&self, changes: Vec<Change>) -> (usize, Vec<Change>) {
        let keyed =
            |c: &Change| c.path.rsplit_once('.').and_then(|(at, key)| Some((at.to_string(), key.parse().ok()?)));
        let mut moved = BTreeSet::new();
        for (i, gone) in changes.iter().enumerate().filter(|(_, c)| c.after.is_none()) {
            let Some((at, seq)) = keyed(gone) else { continue };
            let Some(to) = self.to_b(seq) else { continue };
            let came = changes.iter().position(|c| {
                c.before.is_none()
                    && c.after == gone.before
                    && keyed(c) == Some((at.clone(), to))
                    && !moved.contains(&i)
            });
            if let Some(j) = came {
                moved.extend([i, j]);
            }
        }
        let pairs = moved.len() / 2;
        (pairs, changes.into_iter().enumerate().filter(|(i, _)| !moved.contains(i)).map(|(_, c)| c).collect())
    }

    /// Words in B's numbering: each "seq N" of A lined up with an event of B.
    fn renumber(&self, words: &str) -> String {
        let mut out = String::with_capacity(words.len());
        let mut rest = words;
        while let Some(at) = rest.find("seq ") {
            out.push_str(&rest[..at + 4]);
            rest = &rest[at + 4..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            match rest[..digits].parse::<u64>().ok().and_then(|seq| self.to_b(seq)) {
                Some(seq) => out.push_str(&seq.to_string()),
                None => out.push_str(&rest[..digits]),
            }
            rest = &rest[digits..];
        }
        out + rest
    }

    /// The rows shown: those that differ (at most `SHOWN`), each with the
    /// row before and after it.
    fn shown(&self) -> Vec<(Option<&Event>, Option<&Event>, bool)> {
        let differ: Vec<usize> = (0..self.rows.len()).filter(|r| !self.rows[*r].2).take(SHOWN).collect();
        let mut keep: BTreeSet<usize> = BTreeSet::new();
        for r in differ {
            keep.extend(r.saturating_sub(1)..=(r + 1).min(self.rows.len() - 1));
        }
        keep.into_iter()
            .map(|r| {
                let (i, j, same) = self.rows[r];
                (i.map(|i| &self.a[i]), j.map(|j| &self.b[j]), same)
            })
            .collect()
    }
}

/// Takes out of an action the seqs it names (a counter's target, the
/// modifiers counted, the event a ruling or note concerns, with its hash),
/// into `seqs` in order: what is left is the same in two records of one
/// combat however they number their events.
fn names_left_out(action: &mut Value, seqs: &mut Vec<u64>) {
    match action {
        Value::Object(fields) => {
            for (name, v) in fields.iter_mut() {
                if !delta::holds_seq(name.as_bytes(), None) {
                    names_left_out(v, seqs);
                    continue;
                }
                match v {
                    Value::Number(n) => {
                        seqs.extend(n.as_u64());
                        *v = Value::Null;
                    }
                    Value::Array(list) => {
                        for x in list.iter_mut().filter(|x| x.is_u64()) {
                            seqs.extend(x.as_u64());
                            *x = Value::Null;
                        }
                    }
                    Value::Object(named) => {
                        if let Some(seq) = named.get("seq").and_then(Value::as_u64) {
                            seqs.push(seq);
                            named.remove("seq");
                            named.remove("hash");
                        }
                    }
                    _ => {}
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| names_left_out(v, seqs)),
        _ => {}
    }
}
