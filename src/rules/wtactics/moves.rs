//! What each seat and judge may record now (see `kernel::moves`).

use crate::event::Header;
use crate::kernel::Move;

use super::State;

/// The moves of the state, for every seat and judge.
pub fn moves(_state: &State, _header: &Header) -> Vec<Move> {
    vec![]
}
