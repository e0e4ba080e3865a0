//! A window of priority: players in order may act or pass.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Players in `order` get priority one after another. A pass moves priority
/// on; a play moves it on and restarts the round of passes. The window is
/// closed when every player in it has passed in a row (an empty window is
/// closed from the start: "other players" when there are none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Shared between copies of the state (a window's players do not
    /// change while it is open, and replay copies the state at every event).
    pub order: Arc<[String]>,
    /// Index in `order` of the player with priority.
    pub priority: usize,
    /// Passes in a row since the last play.
    pub passes: usize,
}

// What replay shows changed in a window: most events pass priority on.
crate::changes_by_member!(kept Window { order: leaves, passes: leaf, priority: leaf });

impl Window {
    pub fn new(order: Vec<String>) -> Window {
        Window { order: order.into(), priority: 0, passes: 0 }
    }

    pub fn is_closed(&self) -> bool {
        self.passes >= self.order.len()
    }

    /// The player with priority, if the window is open.
    pub fn holder(&self) -> Option<&str> {
        if self.is_closed() { None } else { self.order.get(self.priority).map(String::as_str) }
    }

    /// The holder passed.
    pub fn pass(&mut self) {
        debug_assert!(!self.is_closed());
        self.passes += 1;
        self.advance();
    }

    /// The holder played something: everyone gets another chance.
    pub fn played(&mut self) {
        debug_assert!(!self.is_closed());
        self.passes = 0;
        self.advance();
    }

    fn advance(&mut self) {
        self.priority = (self.priority + 1) % self.order.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(order: &[&str]) -> Window {
        Window::new(order.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn closes_when_all_pass_in_a_row() {
        let mut win = w(&["p2", "p1", "p3"]);
        assert_eq!(win.holder(), Some("p2"));
        win.pass();
        assert_eq!(win.holder(), Some("p1"));
        win.pass();
        assert_eq!(win.holder(), Some("p3"));
        win.pass();
        assert!(win.is_closed());
        assert_eq!(win.holder(), None);
    }

    #[test]
    fn a_play_restarts_the_round() {
        let mut win = w(&["p2", "p1"]);
        win.pass(); // p2
        win.played(); // p1 plays
        assert_eq!(win.holder(), Some("p2"));
        win.pass(); // p2
        assert!(!win.is_closed(), "p1 has not passed since its own play");
        win.pass(); // p1
        assert!(win.is_closed());
    }

    #[test]
    fn a_single_player_window_closes_on_its_pass_and_an_empty_one_is_closed() {
        let mut win = w(&["p1"]);
        win.played();
        assert_eq!(win.holder(), Some("p1"));
        win.pass();
        assert!(win.is_closed());
        assert!(w(&[]).is_closed());
    }
}
