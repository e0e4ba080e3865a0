//! Card effects and the counters that nullify them.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// One card effect (or announcement that can be countered) in the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// The event that made it.
    pub seq: u64,
    pub seat: String,
    /// The card, if a card made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<String>,
    /// What it does, in the ruleset's words (e.g. "modify", "end_combat").
    pub kind: String,
    /// For a counter: the seq of the effect it nullifies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<u64>,
    /// Which part of the procedure it belongs to (a ruleset's numbering):
    /// a counter may only answer an effect of the same scope.
    pub scope: u64,
}

/// Every effect of one contest (a combat, a card play), in record order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Shared between copies of a state until one of them adds an effect:
    /// replay copies the state at every event and compares each copy with
    /// the next, and most events add no effect (a copy is then a count,
    /// and two copies compare equal by address).
    pub effects: std::sync::Arc<Vec<Effect>>,
}

// What replay shows changed in a ledger: most often one effect added.
crate::changes_by_member!(kept Ledger { effects: nested_list });

// An effect's changes, member by member (in key order, as JSON walks them).
crate::changes_by_member!(Effect {
    card: optional,
    counters: optional,
    kind: leaf,
    scope: leaf,
    seat: leaf,
    seq: leaf
});

impl Ledger {
    pub fn push(&mut self, effect: Effect) {
        debug_assert!(self.effects.last().is_none_or(|e| e.seq < effect.seq));
        debug_assert!(effect.counters.is_none_or(|t| t < effect.seq));
        std::sync::Arc::make_mut(&mut self.effects).push(effect);
    }

    pub fn get(&self, seq: u64) -> Option<&Effect> {
        self.effects.binary_search_by_key(&seq, |e| e.seq).ok().map(|i| &self.effects[i])
    }

    /// Seqs of the effects that still stand: an effect stands unless a
    /// counter that stands nullifies it. A counter always names an earlier
    /// effect, so walking from the newest back decides each one exactly once,
    /// however deep counters nest.
    pub fn standing(&self) -> BTreeSet<u64> {
        let mut nullified = BTreeSet::new();
        let mut standing = BTreeSet::new();
        for effect in self.effects.iter().rev() {
            if nullified.contains(&effect.seq) {
                continue;
            }
            standing.insert(effect.seq);
            if let Some(target) = effect.counters {
                nullified.insert(target);
            }
        }
        standing
    }

    pub fn stands(&self, seq: u64) -> bool {
        self.standing().contains(&seq)
    }

    /// Effects of `kind` in `scope` that still stand, oldest first.
    pub fn standing_of<'a>(&'a self, kind: &'a str, scope: Option<u64>) -> impl Iterator<Item = &'a Effect> + 'a {
        let standing = self.standing();
        self.effects
            .iter()
            .filter(move |e| e.kind == kind && scope.is_none_or(|s| e.scope == s) && standing.contains(&e.seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(seq: u64, counters: Option<u64>) -> Effect {
        Effect {
            seq,
            seat: "p1".into(),
            card: None,
            kind: if counters.is_some() { "counter" } else { "modify" }.into(),
            counters,
            scope: 0,
        }
    }

    #[test]
    fn counters_nest() {
        let mut l = Ledger::default();
        l.push(effect(1, None));
        assert!(l.stands(1));
        l.push(effect(2, Some(1))); // counter the play
        assert!(!l.stands(1));
        l.push(effect(3, Some(2))); // counter the counter: the play stands again
        assert!(l.stands(1) && !l.stands(2) && l.stands(3));
        l.push(effect(4, Some(3))); // and again
        assert!(!l.stands(1) && l.stands(2) && !l.stands(3));
    }

    #[test]
    fn two_counters_on_one_play_both_must_fall() {
        let mut l = Ledger::default();
        l.push(effect(1, None));
        l.push(effect(2, Some(1)));
        l.push(effect(3, Some(1)));
        l.push(effect(4, Some(2)));
        assert!(!l.stands(1), "counter 3 still stands");
        l.push(effect(5, Some(3)));
        assert!(l.stands(1));
        assert_eq!(l.standing_of("modify", Some(0)).map(|e| e.seq).collect::<Vec<_>>(), vec![1]);
    }
}
