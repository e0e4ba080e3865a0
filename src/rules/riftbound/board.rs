//! The board: what a judge would draw on paper for a game of Riftbound, in
//! the text's words (battlefields, control, Contested, Might with Assault
//! and Shield, damage, pending combats, the Chain, Focus, scores) and the
//! players' names. A pure function of the state (and the header, for names
//! and the battlefields' order); `state --json` shows it under `board`, the
//! CLI and the replay page draw it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Phase, Stage, State, Unit};
use crate::event::Header;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    /// "1v1", "ffa3", "ffa4" or "2v2".
    pub mode: String,
    /// The score that wins: 8, or 11 in 2v2.
    pub victory_score: u64,
    /// Each player's score (in 2v2 each team's), in seat (team) order.
    pub scores: Vec<SideScore>,
    /// Who reached the victory score, by name (in 2v2 the team).
    pub winner: Option<String>,
    /// The turn under way; none before the first.
    pub turn: Option<TurnLine>,
    /// The battlefields in the header's order, each with its units.
    pub battlefields: Vec<BattlefieldBoard>,
    /// Combats waiting to begin, in the order they became pending (the turn
    /// player chooses which resolves first).
    pub pending_combats: Vec<CombatPair>,
    /// The combat under way: its Showdown Step or its Combat Damage Step.
    pub combat: Option<CombatBoard>,
    /// The showdown under way: a combat's, or one without combat (units
    /// moved to an uncontrolled battlefield).
    pub showdown: Option<ShowdownBoard>,
    /// Units at base, by player in seat order, then by name.
    pub base: Vec<UnitLine>,
    /// Dead units, in the order they died.
    pub trash: Vec<String>,
    /// Every score, every final point drawn as a card instead and every
    /// Conquer of a teammate's battlefield (no point), in record order.
    pub scoring: Vec<ScoreLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SideScore {
    /// "Alice (p1)"; in 2v2 the team and its players: "team1 (Alice (p1), Carol (p3))".
    pub player: String,
    pub score: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnLine {
    pub number: u64,
    /// Whose turn it is, by name.
    pub player: String,
    /// Battlefields conquered this turn (the final point needs them all).
    pub conquered: Vec<String>,
    /// The turn player (or a judge) ended it: the next in turn order begins the next.
    pub ended: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BattlefieldBoard {
    pub name: String,
    /// Who controls it, by name; none: uncontrolled.
    pub controller: Option<String>,
    /// Who applied Contested status (opposing units just arrived): the
    /// Attacker of its combat. Control is maintained while contested.
    pub contested_by: Option<String>,
    /// Scored this turn already (at most once per battlefield per turn).
    pub scored_this_turn: bool,
    /// The units here, by player in seat order, then by name.
    pub units: Vec<UnitLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnitLine {
    pub name: String,
    /// Its owner, by name.
    pub player: String,
    /// Its Might (as the table gave it, or as a chain item changed it).
    pub might: i64,
    /// Its Might in the combat under way: with Assault while attacking, with
    /// Shield while defending.
    pub combat_might: Option<i64>,
    /// Assault instances (each +X Might while attacking).
    pub assault: Vec<i64>,
    /// Shield instances (each +X Might while defending).
    pub shield: Vec<i64>,
    /// Tank: must be assigned lethal damage first.
    pub tank: bool,
    pub damage: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CombatPair {
    pub battlefield: String,
    /// Who applied Contested, by name.
    pub attacker: String,
    pub defender: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CombatBoard {
    pub battlefield: String,
    /// Who applied Contested, by name.
    pub attacker: String,
    pub defender: String,
    /// "Showdown Step" or "Combat Damage Step".
    pub step: String,
    /// The attacking units' Might summed (with Assault): the damage the Attacker assigns.
    pub attacker_might: i64,
    /// The defending units' Might summed (with Shield): the damage the Defender assigns.
    pub defender_might: i64,
    /// Combat Damage Step: who assigns now (the Attacker first, then the Defender).
    pub assigning: Option<String>,
    /// Combat Damage Step: the Attacker's assignment, kept until the Defender's.
    pub attacker_assigned: Vec<Assigned>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Assigned {
    pub unit: String,
    pub damage: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShowdownBoard {
    pub battlefield: String,
    /// A combat's Showdown Step (Attacker and Defender relevant), or a
    /// showdown without combat (all players relevant).
    pub combat: bool,
    /// The Relevant Players, by name, in the order Focus passes between them.
    pub relevant: Vec<String>,
    /// Who holds Focus, by name.
    pub focus: Option<String>,
    /// Where the showdown stands: "initial chain", "showdown window",
    /// "Chain open", "Chain resolving" or "invitation".
    pub stage: String,
    /// The player invited, who accepts or declines.
    pub invited: Option<String>,
    /// The Chain, oldest first; it resolves newest first.
    pub chain: Vec<ChainLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChainLine {
    /// The event that put it on the Chain.
    pub seq: u64,
    /// Who played it, by name.
    pub player: String,
    pub card: String,
    /// "action", "reaction", "action ability", "reaction ability" or "trigger".
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScoreLine {
    /// The event that scored it.
    pub seq: u64,
    /// Who scored it, by name.
    pub player: String,
    pub battlefield: String,
    /// "conquer" or "hold".
    pub how: String,
    /// False when the final point could not be scored and the player draws
    /// a card instead, or when a teammate held the battlefield at the
    /// Beginning Phase (630.1).
    pub point: bool,
    /// The score as the ruleset recorded it, the words `log` and `replay` show.
    pub said: String,
}

pub fn board(state: &State, header: &Header) -> Board {
    let name = |id: &str| header.name_of(id);
    // The battlefields as the header lists them (how they lie on the table);
    // the state keeps them by name.
    let mut order: Vec<String> = header
        .options
        .get("battlefields")
        .and_then(|b| serde_json::from_value::<Vec<String>>(b.clone()).ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|b| state.battlefields.contains_key(b))
        .collect();
    let rest: Vec<String> = state.battlefields.keys().filter(|b| !order.contains(b)).cloned().collect();
    order.extend(rest);
    let battlefields = order
        .iter()
        .map(|bf| {
            let b = &state.battlefields[bf];
            BattlefieldBoard {
                name: bf.clone(),
                controller: b.controller.as_deref().map(name),
                contested_by: b.contested_by.as_deref().map(name),
                scored_this_turn: b.scored_this_turn,
                units: units(state, header, Some(bf)),
            }
        })
        .collect();
    // A pending combat always has its two players: a Cleanup drops those whose conditions changed.
    let pending_combats = state
        .pending
        .iter()
        .filter_map(|bf| {
            let (a, d) = state.combat_players(bf)?;
            Some(CombatPair { battlefield: bf.clone(), attacker: name(&a), defender: name(&d) })
        })
        .collect();
    Board {
        mode: state.mode.clone(),
        victory_score: state.victory_score,
        scores: sides(state)
            .into_iter()
            .map(|s| SideScore { player: side_name(state, header, &s), score: state.scores[&s] })
            .collect(),
        winner: state.winner.as_deref().map(|w| side_name(state, header, w)),
        turn: state.turn.as_ref().map(|t| TurnLine {
            number: t.number,
            player: name(&t.player),
            conquered: order.iter().filter(|b| t.conquered.contains(*b)).cloned().collect(),
            ended: state.phase == Phase::Between,
        }),
        battlefields,
        pending_combats,
        combat: combat(state, header),
        showdown: showdown(state, header),
        base: units(state, header, None),
        trash: state.trash.clone(),
        scoring: state
            .scoring
            .iter()
            .map(|s| ScoreLine {
                seq: s.seq,
                player: name(&s.player),
                battlefield: s.battlefield.clone(),
                how: s.how.clone(),
                point: s.point,
                said: super::score_words(state, header, s),
            })
            .collect(),
    }
}

/// The scoring sides in order: the seats, or in 2v2 the teams (outside 2v2
/// each seat is a team of one, in seat order).
fn sides(state: &State) -> Vec<String> {
    state.teams.iter().filter_map(|t| t.first()).map(|seat| state.side(seat)).collect()
}

/// A scoring side by name: the player, or in 2v2 "team1 (Alice (p1), Carol (p3))".
fn side_name(state: &State, header: &Header, side: &str) -> String {
    if state.mode != "2v2" {
        return header.name_of(side);
    }
    let players: Vec<String> =
        state.seats.iter().filter(|s| state.side(s) == side).map(|s| header.name_of(s)).collect();
    format!("{side} ({})", players.join(", "))
}

/// The units at a battlefield (or at base, `at` none), by owner in seat order, then by name.
fn units(state: &State, header: &Header, at: Option<&String>) -> Vec<UnitLine> {
    let seat = |u: &Unit| state.seats.iter().position(|s| *s == u.owner);
    let mut here: Vec<(&String, &Unit)> = state.units.iter().filter(|(_, u)| u.at.as_ref() == at).collect();
    here.sort_by_key(|(n, u)| (seat(u), *n));
    here.into_iter()
        .map(|(n, u)| UnitLine {
            name: n.clone(),
            player: header.name_of(&u.owner),
            might: u.might,
            combat_might: state.combat_might.get(n).copied(),
            assault: u.assault.clone(),
            shield: u.shield.clone(),
            tank: u.tank,
            damage: u.damage,
        })
        .collect()
}

fn combat(state: &State, header: &Header) -> Option<CombatBoard> {
    let (bf, attacker, defender, damage_step) = match &state.phase {
        Phase::Showdown(sd) => {
            let (a, d) = sd.combat.as_ref()?;
            (&sd.battlefield, a, d, None)
        }
        Phase::Damage { battlefield, attacker, defender, assigning, first } => {
            (battlefield, attacker, defender, Some((assigning, first)))
        }
        _ => return None,
    };
    let might = |owner: &str| state.side_might(bf, owner);
    Some(CombatBoard {
        battlefield: bf.clone(),
        attacker: header.name_of(attacker),
        defender: header.name_of(defender),
        step: if damage_step.is_some() { "Combat Damage Step" } else { "Showdown Step" }.into(),
        attacker_might: might(attacker),
        defender_might: might(defender),
        assigning: damage_step.map(|(a, _)| header.name_of(a)),
        attacker_assigned: damage_step
            .and_then(|(_, first)| first.as_ref())
            .into_iter()
            .flatten()
            .map(|a| Assigned { unit: a.unit.clone(), damage: a.damage })
            .collect(),
    })
}

fn showdown(state: &State, header: &Header) -> Option<ShowdownBoard> {
    let Phase::Showdown(sd) = &state.phase else { return None };
    let holder = |w: &crate::kernel::Window| w.holder().map(|h| header.name_of(h));
    // In the initial chain the Attacker has Focus ("Player who applied
    // Contested status gets Focus first"; relevant is Attacker, Defender);
    // its window is only the round of triggers, ordered by Focus.
    let (stage, focus, invited) = match &sd.stage {
        Stage::InitialChain { .. } => ("initial chain", sd.relevant.first().map(|p| header.name_of(p)), None),
        Stage::Focus { window } => ("showdown window", holder(window), None),
        Stage::Chain { focus, .. } => ("Chain open", holder(focus), None),
        Stage::Resolving { focus, .. } => ("Chain resolving", holder(focus), None),
        Stage::Invited { player, focus } => ("invitation", holder(focus), Some(header.name_of(player))),
    };
    Some(ShowdownBoard {
        battlefield: sd.battlefield.clone(),
        combat: sd.combat.is_some(),
        relevant: sd.relevant.iter().map(|p| header.name_of(p)).collect(),
        focus,
        stage: stage.into(),
        invited,
        chain: sd
            .chain
            .items
            .iter()
            .map(|i| ChainLine {
                seq: i.seq,
                player: header.name_of(&i.seat),
                card: i.card.clone(),
                kind: i.kind.replace('_', " "),
            })
            .collect(),
    })
}

/// "Might 4, Assault 2, Tank": a unit as the table first gave it.
pub fn stats(u: &UnitLine) -> String {
    let mut parts = vec![format!("Might {}", u.might)];
    parts.extend(u.assault.iter().map(|x| format!("Assault {x}")));
    parts.extend(u.shield.iter().map(|x| format!("Shield {x}")));
    if u.tank {
        parts.push("Tank".into());
    }
    parts.join(", ")
}

/// Every unit in play and where it is (none: base).
fn placed(b: &Board) -> BTreeMap<&str, (Option<&str>, &UnitLine)> {
    let mut out = BTreeMap::new();
    for bf in &b.battlefields {
        for u in &bf.units {
            out.insert(u.name.as_str(), (Some(bf.name.as_str()), u));
        }
    }
    for u in &b.base {
        out.insert(u.name.as_str(), (None, u));
    }
    out
}

/// "A", "A and B", "A, B and C".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Units grouped by owner, in the order first met: "Scout of Alice (p1)", "Stone Golem and Acolyte of Bob (p2)".
fn by_owner(units: &[(&UnitLine, String)]) -> Vec<(String, usize)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (u, words) in units {
        match groups.iter_mut().find(|(p, _)| *p == u.player) {
            Some((_, list)) => list.push(words.clone()),
            None => groups.push((u.player.clone(), vec![words.clone()])),
        }
    }
    groups.into_iter().map(|(p, list)| (format!("{} of {p}", and_list(&list)), list.len())).collect()
}

/// What changed from `before` to `after`, in the board's words: one
/// sentence per thing a judge would write down ("Stone Golem (Might 3,
/// Tank) and Acolyte (Might 2, Shield 1) of Bob (p2) move to Altar",
/// "combat at Altar: Alice (p1) attacks, Bob (p2) defends"). Scores are
/// not repeated here: the ruleset records each in words (`Table::said`),
/// which `log` and `replay` show with the event.
pub fn changes(before: &Board, after: &Board) -> Vec<String> {
    let mut said = Vec::new();
    if let Some(t) = after.turn.as_ref().filter(|t| before.turn.as_ref().map(|b| b.number) != Some(t.number)) {
        said.push(format!("turn {}: {}", t.number, t.player));
    }
    if let (Some(b), Some(a)) = (&before.turn, &after.turn)
        && a.number == b.number
        && a.ended
        && !b.ended
    {
        said.push(format!("turn {} of {} is over", a.number, a.player));
    }
    // Chain items resolve before what they did is said.
    if let (Some(b), Some(a)) = (&before.showdown, &after.showdown)
        && a.battlefield == b.battlefield
    {
        for item in b.chain.iter().filter(|i| !a.chain.iter().any(|x| x.seq == i.seq)).rev() {
            said.push(format!("{} (seq {}) by {} resolves", item.card, item.seq, item.player));
        }
    }
    unit_changes(before, after, &mut said);
    if let Some(b) = &before.combat
        && after.combat.as_ref().is_none_or(|a| a.battlefield != b.battlefield)
    {
        said.push(combat_over(b, before, after));
    }
    if let Some(b) = before.showdown.as_ref().filter(|b| !b.combat)
        && after.showdown.as_ref().is_none_or(|a| a.battlefield != b.battlefield || a.combat)
    {
        said.push(format!("the showdown at {} is over", b.battlefield));
    }
    // Control and Contested.
    for (b, a) in before.battlefields.iter().zip(&after.battlefields) {
        if a.contested_by != b.contested_by
            && let Some(by) = &a.contested_by
        {
            said.push(format!("{by} contests {}", a.name));
        }
        // Contested cleared without a combat there: its conditions changed before it began.
        let fought = before.combat.as_ref().is_some_and(|c| c.battlefield == a.name);
        if b.contested_by.is_some() && a.contested_by.is_none() && !fought {
            said.push(format!("{} is no longer contested: the combat there does not happen", a.name));
        }
        if a.controller != b.controller {
            let was = b.controller.as_deref().unwrap_or("uncontrolled");
            said.push(match &a.controller {
                Some(c) => format!("{c} controls {} (was {was})", a.name),
                None => format!("{} is uncontrolled (was {was})", a.name),
            });
        }
    }
    // Combats: one becomes pending, one begins.
    for p in after.pending_combats.iter().filter(|p| !before.pending_combats.contains(p)) {
        said.push(format!("combat pending at {}: {} attacks, {} defends", p.battlefield, p.attacker, p.defender));
    }
    if let Some(a) = &after.combat {
        let new = before.combat.as_ref().is_none_or(|b| b.battlefield != a.battlefield);
        if new {
            let bf = after.battlefields.iter().find(|b| b.name == a.battlefield);
            // Each unit's Might in this combat (with Assault or Shield), then the side's sum.
            let mights = |player: &str| -> String {
                let list: Vec<String> = bf
                    .into_iter()
                    .flat_map(|b| &b.units)
                    .filter(|u| u.player == player)
                    .map(|u| format!("{} {}", u.name, u.combat_might.unwrap_or(u.might)))
                    .collect();
                and_list(&list)
            };
            said.push(format!(
                "combat at {}: {} attacks with {} (Might {}), {} defends with {} (Might {})",
                a.battlefield,
                a.attacker,
                mights(&a.attacker),
                a.attacker_might,
                a.defender,
                mights(&a.defender),
                a.defender_might
            ));
        }
        // The Combat Damage Step: who assigns, when that changes.
        let assigned_before = if new { None } else { before.combat.as_ref().and_then(|b| b.assigning.as_ref()) };
        if let Some(who) = &a.assigning
            && assigned_before != Some(who)
        {
            if a.attacker_assigned.is_empty() {
                said.push(format!("Combat Damage Step: {who} assigns {} damage first", a.attacker_might));
            } else {
                let list: Vec<String> =
                    a.attacker_assigned.iter().map(|x| format!("{} {}", x.unit, x.damage)).collect();
                said.push(format!(
                    "{} assigns {}; {who} assigns {} damage next",
                    a.attacker,
                    list.join(", "),
                    a.defender_might
                ));
            }
        }
    }
    showdown_changes(before, after, &mut said);
    if let (None, Some(w)) = (&before.winner, &after.winner) {
        said.push(format!("{w} reaches {} and wins", after.victory_score));
    }
    said
}

/// Units moved, changed, killed, recalled, their damage cleared.
fn unit_changes(before: &Board, after: &Board, said: &mut Vec<String>) {
    let (was, now) = (placed(before), placed(after));
    // Moves grouped by where to, in the order first met; a unit new to the
    // board is given with its Might and keywords, as the table gave them.
    let mut moves: Vec<(String, Vec<(&UnitLine, String)>)> = Vec::new();
    let mut recalled: Vec<(&UnitLine, String)> = Vec::new();
    let mut cleared: Vec<String> = Vec::new();
    for (name, (at, u)) in &now {
        let old = was.get(name);
        if old.is_none_or(|(from, _)| from != at) {
            // "Both sides: Attackers Recalled to Base", at the end of a combat there.
            let from_combat = old.and_then(|(from, _)| *from).is_some_and(|from| {
                before.combat.as_ref().is_some_and(|c| c.battlefield == from && c.attacker == u.player)
                    && after.combat.as_ref().is_none_or(|c| c.battlefield != from)
            });
            if at.is_none() && from_combat {
                recalled.push((u, name.to_string()));
                continue;
            }
            let words = if old.is_none() { format!("{name} ({})", stats(u)) } else { name.to_string() };
            let to = at.map_or("base".to_string(), str::to_string);
            match moves.iter_mut().find(|(t, _)| *t == to) {
                Some((_, list)) => list.push((u, words)),
                None => moves.push((to, vec![(u, words)])),
            }
        }
    }
    for (to, list) in &moves {
        for (units, n) in by_owner(list) {
            said.push(format!("{units} {} to {to}", if n == 1 { "moves" } else { "move" }));
        }
    }
    for (name, (_, u)) in &now {
        let Some((_, old)) = was.get(name) else { continue };
        if old.might != u.might {
            said.push(format!("{name}'s Might is {} (was {})", u.might, old.might));
        }
        match (old.damage, u.damage) {
            (o, n) if o == n => {}
            (_, 0) => cleared.push(name.to_string()),
            (_, n) => said.push(format!("{name} has {n} damage")),
        }
    }
    let dead: Vec<(&UnitLine, String)> = was
        .iter()
        .filter(|(name, _)| !now.contains_key(*name) && after.trash.iter().any(|t| t == *name))
        .map(|(name, (_, u))| (*u, name.to_string()))
        .collect();
    for (units, n) in by_owner(&dead) {
        said.push(format!("{units} {}", if n == 1 { "dies" } else { "die" }));
    }
    for (units, n) in by_owner(&recalled) {
        said.push(format!("{units} {} recalled to base", if n == 1 { "is" } else { "are" }));
    }
    if !cleared.is_empty() {
        said.push(format!("damage is cleared from {}", and_list(&cleared)));
    }
}

/// The outcome table of the Resolution Step, for the combat `b` that has just ended.
fn combat_over(b: &CombatBoard, before: &Board, after: &Board) -> String {
    let now = placed(after);
    let left = |player: &str| {
        before
            .battlefields
            .iter()
            .filter(|bf| bf.name == b.battlefield)
            .flat_map(|bf| &bf.units)
            .any(|u| u.player == player && now.contains_key(u.name.as_str()))
    };
    let outcome = match (left(&b.attacker), left(&b.defender)) {
        (true, true) => "both sides have units left (Attackers Recalled to Base)".to_string(),
        (true, false) => format!("only {}'s units are left (Battlefield Conquered)", b.attacker),
        (false, true) => format!("only {}'s units are left (Defenders keep control)", b.defender),
        (false, false) => "neither side has units left (No control change)".to_string(),
    };
    format!("the combat at {} is over: {outcome}", b.battlefield)
}

/// A showdown opens; invitations, the Chain's new items, Focus.
fn showdown_changes(before: &Board, after: &Board, said: &mut Vec<String>) {
    let same = |a: &ShowdownBoard, b: &ShowdownBoard| a.battlefield == b.battlefield && a.combat == b.combat;
    let Some(a) = &after.showdown else { return };
    let b = match &before.showdown {
        Some(b) if same(a, b) => b,
        _ => {
            let focus = a.focus.as_deref().unwrap_or("no one");
            if a.combat {
                said.push(format!("initial chain: {focus} has Focus and orders triggers first"));
            } else {
                said.push(format!(
                    "showdown at {} (no combat): relevant {}; {focus} has Focus",
                    a.battlefield,
                    a.relevant.join(", ")
                ));
            }
            return;
        }
    };
    if let Some(p) = a.invited.as_ref().filter(|p| b.invited.as_ref() != Some(*p)) {
        said.push(format!("{p} is invited into the showdown"));
    }
    for p in a.relevant.iter().filter(|p| !b.relevant.contains(p)) {
        said.push(format!("{p} joins the showdown"));
    }
    if let Some(p) = &b.invited
        && a.invited.is_none()
        && !a.relevant.contains(p)
    {
        said.push(format!("{p} declines the invitation"));
    }
    for (i, item) in a.chain.iter().enumerate().filter(|(_, i)| !b.chain.iter().any(|x| x.seq == i.seq)) {
        let what = match (i, a.stage.as_str()) {
            (0, "initial chain") => "opens the initial chain",
            (0, _) => "opens the Chain",
            _ => "goes on the Chain",
        };
        said.push(format!("{} (seq {}, {}) by {} {what}", item.card, item.seq, item.kind, item.player));
    }
    // Focus moves with every pass; a judge notes it when a window opens
    // again (after the initial chain, a Chain resolved, an invitation answered).
    if a.stage == "showdown window" && b.stage != a.stage {
        said.push(format!("{} has Focus", a.focus.as_deref().unwrap_or("no one")));
    }
}

/// The outcome as a judge compares two records of it: (label, value) rows,
/// the scores first, then who controls each battlefield and what is there.
pub fn outcome(b: &Board) -> Vec<(String, String)> {
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut rows = vec![
        ("scores".to_string(), list(b.scores.iter().map(|s| format!("{} {}", s.player, s.score)).collect())),
        ("winner".to_string(), b.winner.clone().unwrap_or_else(|| "-".into())),
    ];
    for bf in &b.battlefields {
        rows.push((format!("control of {}", bf.name), bf.controller.clone().unwrap_or_else(|| "uncontrolled".into())));
    }
    for bf in &b.battlefields {
        rows.push((
            format!("units at {}", bf.name),
            list(bf.units.iter().map(|u| format!("{} ({})", u.name, u.player)).collect()),
        ));
    }
    rows.push(("turn".into(), b.turn.as_ref().map_or("-".into(), |t| format!("{}: {}", t.number, t.player))));
    rows.push(("dead units".into(), list(b.trash.clone())));
    rows
}
