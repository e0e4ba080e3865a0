//! The board: what a judge would draw on paper for a WTactics attack, in
//! the text's words and the players' names: the attackers and their
//! defenders with ATK and DEF, the combats as resolved, the creatures
//! (marked, dead), influence lost and the discard piles. A pure function of
//! the state (and the header, for names); `state --json` shows it under
//! `board`, and `replay` says what changed in its words.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Attack, Phase, PlayKind, State};
use crate::event::Header;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    /// Influence each player has lost to undefended attacks (II), in seat order.
    pub influence_lost: Vec<Influence>,
    /// The turn under way (gap 7); absent before the first attackers are announced.
    pub turn: Option<TurnLine>,
    /// The attack under way, or between attacks the last one finished.
    pub attack: Option<AttackBoard>,
    /// How many attacks are over.
    pub attacks_finished: u64,
    /// Every creature the table has named, by player in seat order, then by name.
    pub creatures: Vec<CreatureLine>,
    /// Each player's discard pile, in seat order, cards in the order they arrived.
    pub discard_piles: Vec<Pile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Influence {
    /// "Alice (p1)".
    pub player: String,
    pub lost: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnLine {
    pub number: u64,
    /// The active player, by name: the only one who attacks this turn.
    pub active: String,
    /// I: the active player announces all attackers that will fight this turn, once.
    pub attackers_announced: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttackBoard {
    pub number: u64,
    /// The attack is over (this is the last one finished).
    pub finished: bool,
    /// The active player, by name.
    pub attacking_player: String,
    /// The passive player, by name.
    pub defending_player: String,
    /// II/III: "not declared yet", "defended" or "allowed the attacks".
    pub defense: String,
    /// Each attacker with its defenders: the combats in the order the
    /// attackers were announced, then the attackers no one defends.
    pub attackers: Vec<AttackerLine>,
    /// Events and Abilities played in the Response phases, in record order.
    pub responses: Vec<Response>,
    /// II (or a judge's ruling, gap 2): the influence this attack cost the defending player.
    pub influence_lost: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttackerLine {
    /// The attacker, with its own ATK and DEF.
    pub attacker: Fighter,
    /// III: the defenders assigned to it, with their own ATK and DEF.
    pub defenders: Vec<Fighter>,
    /// "defenders not declared yet", "undefended", "undefended: awaiting a
    /// judge's ruling on the influence lost", "to be chosen", "in its
    /// Response phases", "to resolve", "awaiting a judge's ruling (several
    /// defenders)" or "resolved".
    pub status: String,
    /// IV: who chose this combat to resolve next ("Alice (p1)"), or "the
    /// last left" when there was nothing to choose; absent until it begins.
    pub chosen_by: Option<String>,
    /// II: the damage it dealt undefended, as recorded.
    pub damage: Option<i64>,
    /// IV: the combat as resolved.
    pub result: Option<ResultLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fighter {
    pub name: String,
    pub atk: i64,
    pub def: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultLine {
    pub seq: u64,
    /// The attacker's ATK and DEF with all effects counted, as recorded.
    pub attacker: Fighter,
    /// The defenders' ATK and DEF with all effects counted, as recorded.
    pub defenders: Vec<Fighter>,
    /// The creatures that died, by name.
    pub dead: Vec<String>,
    /// Who recorded it, by name.
    pub recorded_by: String,
    /// A judge ruled, the attacker having several defenders (gap 1).
    pub ruling: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Response {
    pub seq: u64,
    /// Who played it, by name.
    pub player: String,
    /// "Event" or "Ability".
    pub kind: String,
    pub card: String,
    /// "part I", or "the combat of Orc Raider".
    pub during: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreatureLine {
    pub name: String,
    /// Its owner, by name.
    pub player: String,
    pub atk: i64,
    pub def: i64,
    /// Marked by attacking (I); it may not attack or defend until unmarked.
    pub marked: bool,
    /// Dead: in its owner's discard pile.
    pub dead: bool,
    /// Enchantments attached to it ("Bloodlust (Alice (p1))", by owner).
    pub enchantments: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pile {
    /// "Alice (p1)".
    pub player: String,
    pub cards: Vec<String>,
}

pub fn board(state: &State, header: &Header) -> Board {
    // By owner in seat order, then by name (the map's order).
    let by_seat = state.seats.iter().flat_map(|s| state.creatures.iter().filter(move |(_, c)| c.owner == *s));
    let creatures = by_seat
        .map(|(name, c)| CreatureLine {
            name: name.clone(),
            player: header.name_of(&c.owner),
            atk: c.atk,
            def: c.def,
            marked: c.marked,
            dead: c.dead,
            enchantments: c.enchantments.iter().map(|e| format!("{} ({})", e.card, header.name_of(&e.owner))).collect(),
        })
        .collect();
    let attack = match (&state.attack, &state.last_attack) {
        (Some(a), _) => Some(attack_board(state, a, state.attacks_finished + 1, false, header)),
        (None, Some(a)) => Some(attack_board(state, a, state.attacks_finished, true, header)),
        (None, None) => None,
    };
    Board {
        influence_lost: state
            .seats
            .iter()
            .map(|s| Influence { player: header.name_of(s), lost: state.influence_lost.get(s).copied().unwrap_or(0) })
            .collect(),
        turn: state.turn.as_ref().map(|t| TurnLine {
            number: t.number,
            active: header.name_of(&t.active),
            attackers_announced: t.attackers_announced,
        }),
        attack,
        attacks_finished: state.attacks_finished,
        creatures,
        discard_piles: state
            .seats
            .iter()
            .map(|s| Pile { player: header.name_of(s), cards: state.discard.get(s).cloned().unwrap_or_default() })
            .collect(),
    }
}

fn attack_board(state: &State, a: &Attack, number: u64, finished: bool, header: &Header) -> AttackBoard {
    let own = |name: &str| {
        let c = state.creatures.get(name);
        Fighter { name: name.to_string(), atk: c.map_or(0, |c| c.atk), def: c.map_or(0, |c| c.def) }
    };
    // Before II the defending player has not declared; in the Response
    // phase of part I and at II itself every combat still has no defender.
    let declared = finished || !matches!(state.phase, Phase::Responses { .. } | Phase::Defense);
    // Allowing the attacks leaves every attacker in `combats`, without
    // defenders; defending keeps only the defended ones there.
    let allowed = declared && a.combats.iter().all(|(_, d)| d.is_empty());
    let defense = match (declared, allowed) {
        (false, _) => "not declared yet",
        (true, true) => "allowed the attacks",
        (true, false) => "defended",
    };
    // The combat under way, if any, and the phase it is in.
    let current = match (&state.phase, finished) {
        (Phase::CombatResponses { attacker, .. }, false) => Some((attacker, "in its Response phases")),
        (Phase::Resolution { attacker }, false) => Some((attacker, "to resolve")),
        (Phase::CombatRuling { attacker }, false) => Some((attacker, "awaiting a judge's ruling (several defenders)")),
        _ => None,
    };
    // IV: combats begin in the order resolved, then the current one. The
    // attacking player chooses the first, the defending player the next,
    // alternating; the last one left is not chosen.
    let begun: Vec<&String> = a.resolved.iter().chain(current.map(|(c, _)| c)).collect();
    let chosen_by = |attacker: &str| {
        let k = begun.iter().position(|b| *b == attacker)?;
        Some(match (k + 1 == a.combats.len(), k % 2) {
            (true, _) => "the last left".to_string(),
            (false, 0) => header.name_of(&a.active),
            (false, _) => header.name_of(&a.passive),
        })
    };
    let mut attackers: Vec<AttackerLine> = a
        .combats
        .iter()
        .filter(|_| !allowed)
        .map(|(attacker, defenders)| {
            let status = match current {
                _ if !declared => "defenders not declared yet",
                _ if a.resolved.contains(attacker) => "resolved",
                Some((c, phase)) if c == attacker => phase,
                _ => "to be chosen",
            };
            AttackerLine {
                attacker: own(attacker),
                defenders: defenders.iter().map(|d| own(d)).collect(),
                status: status.to_string(),
                chosen_by: chosen_by(attacker),
                damage: None,
                result: a.results.iter().find(|r| r.attacker == *attacker).map(|r| ResultLine {
                    seq: r.seq,
                    attacker: Fighter { name: r.attacker.clone(), atk: r.values.atk, def: r.values.def },
                    defenders: r
                        .defenders
                        .iter()
                        .map(|d| Fighter { name: d.name.clone(), atk: d.atk, def: d.def })
                        .collect(),
                    dead: r.dead.clone(),
                    recorded_by: header.name_of(&r.by),
                    ruling: r.ruling,
                }),
            }
        })
        .collect();
    // Attackers left undefended beside defended ones: a judge rules on
    // the influence they cost (gap 2).
    let status = match &state.phase {
        Phase::UnblockedRuling if !finished => {
            "undefended: awaiting a judge's ruling on the influence lost".to_string()
        }
        // Gap 6: a player's record with an effect played is a claim until confirmed.
        Phase::Confirm { by, damage, .. } if !finished => {
            let other = state.seats.iter().find(|s| *s != by).map(|s| header.name_of(s)).unwrap_or_default();
            let list: Vec<String> = damage.iter().map(|d| format!("{} {}", d.attacker, d.damage)).collect();
            format!(
                "undefended: {} recorded damage {}, awaiting {other}'s confirmation or a judge",
                header.name_of(by),
                list.join(", ")
            )
        }
        _ => "undefended".to_string(),
    };
    attackers.extend(a.undefended.iter().map(|attacker| AttackerLine {
        attacker: own(attacker),
        defenders: vec![],
        status: status.clone(),
        chosen_by: None,
        damage: a.damage.iter().find(|d| d.attacker == *attacker).map(|d| d.damage),
        result: None,
    }));
    AttackBoard {
        number,
        finished,
        attacking_player: header.name_of(&a.active),
        defending_player: header.name_of(&a.passive),
        defense: defense.to_string(),
        attackers,
        responses: a
            .responses
            .iter()
            .map(|(seq, seat, kind, card, combat)| Response {
                seq: *seq,
                player: header.name_of(seat),
                kind: match kind {
                    PlayKind::Event => "Event",
                    PlayKind::Ability => "Ability",
                }
                .to_string(),
                card: card.clone(),
                during: combat.as_ref().map_or("part I".to_string(), |c| format!("the combat of {c}")),
            })
            .collect(),
        influence_lost: a.influence_lost,
    }
}

/// "Orc Raider ATK 3 DEF 2".
pub fn fighter(f: &Fighter) -> String {
    format!("{} ATK {} DEF {}", f.name, f.atk, f.def)
}

/// IV in words: "ATK 3 against Knight's DEF 4, Knight's ATK 2 against DEF 2:
/// Orc Raider dies" (one defender), or the values and who died (a ruling).
pub fn result_words(r: &ResultLine) -> String {
    let dead = match r.dead.as_slice() {
        [] => "no one dies".to_string(),
        [one] => format!("{one} dies"),
        many => format!("{} die", many.join(" and ")),
    };
    match r.defenders.as_slice() {
        [d] => format!(
            "{}'s ATK {} against {}'s DEF {}, {}'s ATK {} against DEF {}: {dead}",
            r.attacker.name, r.attacker.atk, d.name, d.def, d.name, d.atk, r.attacker.def
        ),
        ds => {
            let list: Vec<String> = ds.iter().map(fighter).collect();
            format!("{} against {}: {dead}", fighter(&r.attacker), list.join(" and "))
        }
    }
}

/// What changed from `before` to `after`, in the board's words: one
/// sentence per thing a judge would write down ("Knight ATK 2 DEF 3 defends
/// against Orc Raider", "Orc Raider goes to Alice (p1)'s discard pile").
pub fn changes(before: &Board, after: &Board) -> Vec<String> {
    let mut said = Vec::new();
    if let Some(t) = &after.turn
        && before.turn.as_ref().map(|b| b.number) != Some(t.number)
    {
        said.push(format!("turn {}: {} is the active player", t.number, t.active));
    }
    // The next combat begins after the last one's dead are discarded: said last.
    let mut begins = Vec::new();
    match (&before.attack, &after.attack) {
        (Some(b), Some(a)) if b.number == a.number => attack_changes(b, a, &mut said, &mut begins),
        (_, Some(a)) => {
            let list: Vec<String> = a.attackers.iter().map(|l| fighter(&l.attacker)).collect();
            said.push(format!(
                "attack {}: {} attacks {} with {}, marking them",
                a.number,
                a.attacking_player,
                a.defending_player,
                list.join(", ")
            ));
            attack_changes(&announced_like(a), a, &mut said, &mut begins);
        }
        (_, None) => {}
    }
    for c in &after.creatures {
        let old = before.creatures.iter().find(|o| o.name == c.name);
        // A creature marked by attacking is said by the attack itself.
        if old.is_some_and(|o| o.marked && !c.marked) {
            said.push(format!("{} of {} is unmarked", c.name, c.player));
        }
        for e in c.enchantments.iter().filter(|e| old.is_none_or(|o| !o.enchantments.contains(e))) {
            said.push(format!("{e} is attached to {}", c.name));
        }
    }
    for (b, a) in before.discard_piles.iter().zip(&after.discard_piles) {
        if a.cards.len() > b.cards.len() && a.cards.starts_with(&b.cards) {
            said.push(format!("to {}'s discard pile: {}", a.player, a.cards[b.cards.len()..].join(", ")));
        }
    }
    for (b, a) in before.influence_lost.iter().zip(&after.influence_lost) {
        if a.lost != b.lost {
            said.push(format!("{} has lost {} influence in all (was {})", a.player, a.lost, b.lost));
        }
    }
    said.extend(begins);
    if let Some(a) = after.attack.as_ref().filter(|a| a.finished)
        && before.attack.as_ref().is_none_or(|b| b.number != a.number || !b.finished)
    {
        said.push(format!("attack {} is over", a.number));
    }
    said
}

/// An attack as it stands when its attackers are announced, to compare a new one against.
fn announced_like(a: &AttackBoard) -> AttackBoard {
    AttackBoard {
        finished: false,
        defense: "not declared yet".into(),
        attackers: a
            .attackers
            .iter()
            .map(|l| AttackerLine {
                defenders: vec![],
                status: "defenders not declared yet".into(),
                chosen_by: None,
                damage: None,
                result: None,
                ..l.clone()
            })
            .collect(),
        responses: vec![],
        influence_lost: None,
        ..a.clone()
    }
}

fn attack_changes(b: &AttackBoard, a: &AttackBoard, said: &mut Vec<String>, begins: &mut Vec<String>) {
    for r in a.responses.iter().filter(|r| !b.responses.iter().any(|o| o.seq == r.seq)) {
        said.push(format!("{} (seq {}) by {}: {}, in {}", r.card, r.seq, r.player, r.kind, r.during));
    }
    if b.defense != a.defense {
        match a.defense.as_str() {
            "allowed the attacks" => said.push(format!("{} allows the attacks: no defenders", a.defending_player)),
            _ => {
                for l in &a.attackers {
                    match l.defenders.as_slice() {
                        [] => said.push(format!("no one defends against {}", l.attacker.name)),
                        ds => {
                            let list: Vec<String> = ds.iter().map(fighter).collect();
                            let verb = if ds.len() == 1 { "defends" } else { "defend" };
                            said.push(format!("{} {verb} against {}", list.join(" and "), l.attacker.name));
                        }
                    }
                }
            }
        }
    }
    for l in &a.attackers {
        let old = b.attackers.iter().find(|o| o.attacker.name == l.attacker.name);
        if let (Some(by), None) = (&l.chosen_by, old.and_then(|o| o.chosen_by.as_ref())) {
            let how = if by == "the last left" { "the last left".to_string() } else { format!("chosen by {by}") };
            begins.push(format!("the combat of {} begins ({how})", l.attacker.name));
        }
        if l.status.contains("awaiting") && old.is_none_or(|o| o.status != l.status) {
            match l.status.starts_with("undefended") {
                true => said.push(format!("{} is {}", l.attacker.name, l.status)),
                false => said.push(format!("the combat of {}: {}", l.attacker.name, l.status)),
            }
        }
        if let (Some(d), None) = (l.damage, old.and_then(|o| o.damage)) {
            said.push(format!("{} deals {d} damage undefended", l.attacker.name));
        }
        if let (Some(r), None) = (&l.result, old.and_then(|o| o.result.as_ref())) {
            let how = if r.ruling { format!("ruled by {}", r.recorded_by) } else { format!("by {}", r.recorded_by) };
            said.push(format!("the combat of {} is resolved ({how}): {}", l.attacker.name, result_words(r)));
        }
    }
}

/// The outcome as a judge compares two records of it: (label, value) rows,
/// the influence lost first, then the dead, the piles and the last attack.
pub fn outcome(b: &Board) -> Vec<(String, String)> {
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut rows = vec![
        (
            "influence lost".to_string(),
            list(b.influence_lost.iter().map(|i| format!("{} {}", i.player, i.lost)).collect()),
        ),
        ("attacks finished".into(), b.attacks_finished.to_string()),
        (
            "dead".into(),
            list(b.creatures.iter().filter(|c| c.dead).map(|c| format!("{} of {}", c.name, c.player)).collect()),
        ),
    ];
    for pile in &b.discard_piles {
        rows.push((format!("discard pile of {}", pile.player), list(pile.cards.clone())));
    }
    if let Some(a) = &b.attack {
        let state = if a.finished { "finished" } else { "under way" };
        let attackers: Vec<String> = a
            .attackers
            .iter()
            .map(|l| {
                let result = l.result.as_ref().map(|r| format!(", dead: {}", list(r.dead.clone()))).unwrap_or_default();
                format!("{} ({}){result}", l.attacker.name, l.status)
            })
            .collect();
        rows.push((
            "last attack".into(),
            format!("attack {} ({state}) by {}: {}", a.number, a.attacking_player, attackers.join("; ")),
        ));
    }
    rows
}
