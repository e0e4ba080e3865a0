//! A chain: items played one on top of another that resolve newest first
//! (Riftbound's Chain; later Raw Deal's nested breakdowns).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainItem {
    /// The event that put it on the chain.
    pub seq: u64,
    pub seat: String,
    pub card: String,
    /// What it is, in the ruleset's words.
    pub kind: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chain {
    /// Oldest first; the last item resolves first.
    pub items: Vec<ChainItem>,
}

impl Chain {
    pub fn push(&mut self, item: ChainItem) {
        debug_assert!(self.items.last().is_none_or(|i| i.seq < item.seq));
        self.items.push(item);
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// The item that resolves next: the newest.
    pub fn newest(&self) -> Option<&ChainItem> {
        self.items.last()
    }
    pub fn pop(&mut self) -> Option<ChainItem> {
        self.items.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_newest_first() {
        let mut c = Chain::default();
        for seq in [3, 5, 9] {
            c.push(ChainItem { seq, seat: "p1".into(), card: format!("c{seq}"), kind: "reaction".into() });
        }
        assert_eq!(c.newest().map(|i| i.seq), Some(9));
        assert_eq!(c.pop().map(|i| i.seq), Some(9));
        assert_eq!(c.pop().map(|i| i.seq), Some(5));
        assert_eq!(c.pop().map(|i| i.seq), Some(3));
        assert!(c.is_empty());
    }
}
