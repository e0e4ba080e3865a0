//! The fold: a stream of events, in order, to the state at each seq.
//!
//! Most events go straight to the ruleset through [`Table::apply`]. Rulings
//! and notes name an earlier event by seq and hash, so the fold keeps every
//! event's hash (32 bytes each) to check them; a `rewind` returns the combat
//! to the state after an earlier event, which the fold rebuilds by folding
//! the source again up to that event (rewinds are rare; memory stays one
//! state plus the hashes, whatever the length). Events after the target and
//! before the rewind stay in the log, marked rewound.

use std::convert::Infallible;

use crate::adjudication::{Adjudication, Ruling};
use crate::event::{ActionType, Event, Header};
use crate::kernel::{StepRef, Violation};
use crate::rules::Table;

/// Somewhere events can be read again from any seq: a stored game, an export
/// file, a slice in memory.
pub trait Source {
    type Error;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Self::Error>> + '_>;
}

impl Source for [Event] {
    type Error = Infallible;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Infallible>> + '_> {
        Box::new(self.iter().skip(from as usize).cloned().map(Ok))
    }
}

impl Source for Vec<Event> {
    type Error = Infallible;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Infallible>> + '_> {
        self.as_slice().events_from(from)
    }
}

/// Why a fold stopped.
#[derive(Debug)]
pub enum FoldError<E> {
    /// The event at `seq` is not legal where it stands.
    Illegal { seq: u64, violation: Box<Violation> },
    /// The source could not give the events.
    Source(E),
}

/// What one event does to the fold: the state after it, and the seqs it rewound.
#[derive(Debug, Clone)]
pub struct Next {
    pub table: Table,
    pub rewound: Option<(u64, u64)>,
}

/// The state of a fold after some prefix.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    table: Option<Table>,
    hashes: Vec<[u8; 32]>,
    rewound: Vec<(u64, u64)>,
    /// Seqs of penalties, judges added and notes, ascending: they stand even
    /// inside a range a later rewind took back (the adjudication is not rewound).
    adjudication: Vec<u64>,
}

fn header_violation(message: String) -> Violation {
    Violation {
        step: StepRef { number: "0".into(), title: "open".into(), reference: "event 0 (the header)".into() },
        rule: "event 0 is {\"type\":\"open\", ...} with the header (schemas/open.schema.json)".into(),
        message,
        may_act: vec![],
    }
}

impl Folder {
    pub fn new() -> Folder {
        Folder::default()
    }

    /// The state after the last event folded (None before event 0).
    pub fn table(&self) -> Option<&Table> {
        self.table.as_ref()
    }

    pub fn len(&self) -> u64 {
        self.hashes.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Ranges of seqs (inclusive) that judges' rewinds took back.
    pub fn rewound(&self) -> &[(u64, u64)] {
        &self.rewound
    }

    /// A later rewind took this event back: it stays in the log but no
    /// longer counts. Penalties, judges added and notes are never rewound.
    pub fn is_rewound(&self, seq: u64) -> bool {
        self.in_rewound_range(seq) && self.adjudication.binary_search(&seq).is_err()
    }

    /// Inside a range a rewind took back. A rewind may not name such an event
    /// (even a penalty that stands): the combat after it is not one that was played.
    fn in_rewound_range(&self, seq: u64) -> bool {
        self.rewound.iter().any(|(a, b)| (*a..=*b).contains(&seq))
    }

    /// The state `event` (the next seq) leads to, without changing the fold.
    pub fn next<S: Source + ?Sized>(&self, event: &Event, source: &S) -> Result<Next, FoldError<S::Error>> {
        let illegal = |violation: Violation| FoldError::Illegal { seq: event.seq, violation: Box::new(violation) };
        let Some(table) = &self.table else {
            let header: Header = serde_json::from_value(event.action.clone())
                .map_err(|e| illegal(header_violation(format!("not a valid header: {e}"))))?;
            return Ok(Next { table: Table::open(&header).map_err(illegal)?, rewound: None });
        };
        let kind = event.action_type();
        if !matches!(kind, Some(ActionType::Ruling | ActionType::Note)) {
            return Ok(Next {
                table: table.apply(event.seq, &event.actor, &event.action).map_err(illegal)?,
                rewound: None,
            });
        }
        let view = table.view();
        let adjudication: Adjudication = serde_json::from_value(event.action.clone()).map_err(|e| {
            illegal(Violation::new(
                &view,
                "the payloads in schemas/ruling.schema.json",
                format!("not a valid ruling or note: {e}"),
            ))
        })?;
        let concerns = adjudication.concerns();
        let known = self.hashes.get(concerns.seq as usize).map(|h| blake3::Hash::from_bytes(*h).to_hex().to_string());
        if known.as_deref() != Some(concerns.hash.as_str()) {
            let why = match known {
                None => format!("seq {} is not an earlier event of this game", concerns.seq),
                Some(_) => format!("the hash given for seq {} is not that event's hash", concerns.seq),
            };
            return Err(illegal(Violation::new(
                &view,
                "every ruling names the event it concerns by seq and hash",
                why,
            )));
        }
        match adjudication {
            Adjudication::Note { text, concerns } => Ok(Next {
                table: table.note(event.seq, &event.actor, concerns.seq, &text).map_err(illegal)?,
                rewound: None,
            }),
            Adjudication::Ruling(ref rewind @ Ruling::Rewind { ref concerns, ref reason, .. }) => {
                table.check_judge(&event.actor).map_err(illegal)?;
                crate::event::check_name("reason", reason)
                    .map_err(|m| illegal(Violation::new(&view, "a ruling gives a reason", m)))?;
                let target = concerns.seq;
                if self.in_rewound_range(target) {
                    return Err(illegal(Violation::new(
                        &view,
                        "rewind to an event that stands",
                        format!("seq {target} was itself rewound"),
                    )));
                }
                if target + 1 >= event.seq {
                    return Err(illegal(Violation::new(
                        &view,
                        "rewind takes back later events",
                        format!("nothing follows seq {target}: there is nothing to rewind"),
                    )));
                }
                let earlier = fold_to(source, target)?;
                if earlier.len() != target + 1 {
                    return Err(illegal(Violation::new(
                        &view,
                        "rewind to an earlier event",
                        format!("the events up to seq {target} are not available to rebuild the state"),
                    )));
                }
                let earlier = earlier.table.expect("a fold to a seq has a state");
                let table = table.rewound_to(earlier, event.seq, &event.actor, rewind);
                Ok(Next { table, rewound: Some((target + 1, event.seq - 1)) })
            }
            Adjudication::Ruling(ruling) => Ok(Next {
                table: table.apply_ruling(event.seq, &event.actor, &ruling).map_err(illegal)?,
                rewound: None,
            }),
        }
    }

    /// Takes the result of `next` for `event`.
    pub fn commit(&mut self, event: &Event, next: Next) {
        self.commit_hash(event);
        if let Some(range) = next.rewound {
            self.rewound.push(range);
        }
        if is_adjudication(event) {
            self.adjudication.push(event.seq);
        }
        self.table = Some(next.table);
    }

    /// Keeps the hash of `event` (the next seq), which rulings name.
    fn commit_hash(&mut self, event: &Event) {
        debug_assert_eq!(event.seq, self.len());
        let hash = blake3::Hash::from_hex(&event.hash).map(|h| *h.as_bytes()).unwrap_or([0; 32]);
        self.hashes.push(hash);
    }

    /// Folds one more event. An action (not a ruling or note) is applied to
    /// the state in place, copying nothing; a refusal leaves the fold as it was.
    pub fn push<S: Source + ?Sized>(&mut self, event: &Event, source: &S) -> Result<(), FoldError<S::Error>> {
        if let Some(table) = &mut self.table
            && !matches!(event.action_type(), Some(ActionType::Ruling | ActionType::Note))
        {
            table
                .apply_in_place(event.seq, &event.actor, &event.action)
                .map_err(|violation| FoldError::Illegal { seq: event.seq, violation: Box::new(violation) })?;
            self.commit_hash(event);
            return Ok(());
        }
        let next = self.next(event, source)?;
        self.commit(event, next);
        Ok(())
    }
}

/// A penalty, a judge added or a note: the adjudication, which rewinds keep.
fn is_adjudication(event: &Event) -> bool {
    match event.action_type() {
        Some(ActionType::Note) => true,
        Some(ActionType::Ruling) => {
            matches!(event.action.get("kind").and_then(|k| k.as_str()), Some("penalty" | "add_judge"))
        }
        _ => false,
    }
}

/// Folds a source from event 0 up to and including `last`.
pub fn fold_to<S: Source + ?Sized>(source: &S, last: u64) -> Result<Folder, FoldError<S::Error>> {
    let mut folder = Folder::new();
    for event in source.events_from(0) {
        let event = event.map_err(FoldError::Source)?;
        if event.seq > last {
            break;
        }
        folder.push(&event, source)?;
    }
    Ok(folder)
}

/// Folds a whole source.
pub fn fold_all<S: Source + ?Sized>(source: &S) -> Result<Folder, FoldError<S::Error>> {
    fold_to(source, u64::MAX)
}
