//! Property tests: replay is deterministic, what it says changed is the
//! JSON diff of the states, and any single-byte change to
//! an export is detected.

mod common;

use arbiter::event::{Draft, parse_time, seal};
use arbiter::fold::fold_all;
use arbiter::record::{ExportBytes, canonical_bytes, verify};
use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};

const A: &str = "Max";
const D: &str = "Leg";

/// A plausible action for the current state, steered by `pick` and `n`: most
/// are legal, some are not (they must be refused and change nothing).
fn candidate(sim: &Sim, pick: u8, n: u8) -> (String, Value) {
    let view = sim.view();
    let seats = ["p1", "p2", "p3"];
    let actor = if pick.is_multiple_of(7) || view.may_act.is_empty() {
        seats[n as usize % 3].to_string()
    } else {
        view.may_act[n as usize % view.may_act.len()].clone()
    };
    let Some(c) = sim.state().combat.as_ref() else {
        let def = seats[(n as usize + 1) % 3];
        return (actor, combat(def, A, D));
    };
    let warriors = [c.attacker.as_str(), c.defender.as_str()];
    let last = sim.events.len() as u64 - 1;
    let standing_mods: Vec<u64> =
        c.effects.effects.iter().filter(|e| e.kind == "modify" && c.effects.stands(e.seq)).map(|e| e.seq).collect();
    let action = match (view.step.number.as_str(), pick % 5) {
        ("2", _) => tactic("Fight"),
        ("7", _) => warzone(if n.is_multiple_of(2) { None } else { Some("Mars") }),
        ("24" | "26", 0) => play("equipment", "Ticker"),
        ("24" | "26", _) => equipment(&["Bolter"]),
        ("32", _) => standing((warriors[0], n as i64), (warriors[1], 3)),
        ("37", _) => results(
            &[(warriors[0], "unharmed"), (warriors[1], if n.is_multiple_of(2) { "wounded" } else { "killed" })],
            &standing_mods,
        ),
        ("44", _) => {
            let r = c
                .first_combat
                .results
                .clone()
                .or(c.second_combat.as_ref().and_then(|s| s.results.clone()))
                .unwrap_or_default();
            let list: Vec<(String, String)> = r
                .iter()
                .map(|o| (o.warrior.clone(), serde_json::to_value(o.outcome).unwrap().as_str().unwrap().to_string()))
                .collect();
            json!({"type": "resolve", "what": "status", "status": list.iter().map(|(w, o)| json!({"warrior": w, "outcome": o})).collect::<Vec<_>>()})
        }
        ("45" | "47", _) => award(n as u64 % 3),
        (_, 0) => counter("Cancel", last.saturating_sub(n as u64 % 3)),
        (_, 1) => match view.step.number.as_str() {
            "12-15" => {
                json!({"type": "play", "effect": "change_combatants", "card": "Body Guard", "defender": format!("G{}", n % 2)})
            }
            "16" | "18" => {
                json!({"type": "play", "effect": "strike_order", "card": "Ambush", "first": seats[n as usize % 2]})
            }
            "20" | "22" | "28" | "30" => play("end_combat", "Smoke Bomb"),
            "33-36" => play("modify", "Stimulants"),
            _ => play("modify", "Out Of Place"),
        },
        _ if view.awaiting_ruling.is_some() => {
            json!({"type": "resolve", "what": "strike_order", "first": "p1"})
        }
        _ => json!({"type": "pass"}),
    };
    let actor = if view.awaiting_ruling.is_some() { "Dana".to_string() } else { actor };
    (actor, action)
}

fn play_out(choices: &[(u8, u8)]) -> Sim {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    for (pick, n) in choices {
        let (actor, action) = candidate(&sim, *pick, *n);
        let _ = sim.try_act(&actor, action); // a refusal leaves the state as it was (checked in try_act's callers)
    }
    sim
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn replaying_an_accepted_stream_reproduces_identical_state_and_hashes(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..300)) {
        let sim = play_out(&choices);
        assert_replays(&sim)?;
    }

    #[test]
    fn any_single_byte_change_to_an_export_is_detected(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..120), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let sim = play_out(&choices);
        let export: Vec<u8> = sim.events.iter().flat_map(|e| { let mut b = canonical_bytes(e); b.push(b'\n'); b }).collect();
        let i = at.index(export.len());
        prop_assume!(export[i] != byte);
        let mut changed = export.clone();
        changed[i] = byte;
        let head = sim.events.last().unwrap().hash.clone();
        prop_assert!(verify(&ExportBytes(changed), Some(&head)).is_err(), "byte {} changed to {:#x} went unnoticed", i, byte);
    }
}

#[test]
fn random_play_reaches_deep_into_the_breakdown() {
    // Guards the property tests against testing only step 1 and 2.
    let choices: Vec<(u8, u8)> = (0..600u32).map(|i| ((i * 7 % 251) as u8, (i * 13 % 253) as u8)).collect();
    let sim = play_out(&choices);
    let deepest = sim.events.len();
    assert!(deepest > 150, "only {deepest} events accepted");
    assert!(!sim.state().finished.is_empty(), "no combat finished");
}

/// Replay determinism for any ruleset: fold from nothing, re-seal, verify the export.
fn assert_replays(sim: &Sim) -> Result<(), TestCaseError> {
    let replayed = fold_all(&sim.events).unwrap();
    prop_assert_eq!(replayed.table().unwrap(), &sim.table);
    let mut prev = None;
    for e in &sim.events {
        let draft = Draft { actor: e.actor.clone(), action: e.action.clone(), at: Some(e.at.clone()) };
        let (again, _) = seal(&draft, prev.as_ref(), parse_time(&e.at).unwrap()).unwrap();
        prop_assert_eq!(&again, e);
        prev = Some(again.link());
    }
    let export: Vec<u8> = sim
        .events
        .iter()
        .flat_map(|e| {
            let mut b = canonical_bytes(e);
            b.push(b'\n');
            b
        })
        .collect();
    let (v, folder) = verify(&ExportBytes(export), None).unwrap();
    prop_assert_eq!(v.head, sim.events.last().unwrap().hash.clone());
    prop_assert_eq!(folder.table().unwrap(), &sim.table);
    Ok(())
}

/// A plausible WTactics action for the current phase.
fn wtactics_candidate(sim: &Sim, pick: u8, n: u8) -> (String, Value) {
    use arbiter::rules::wtactics::Phase;
    let s = sim.wtactics();
    let seat = ["p1", "p2"][n as usize % 2].to_string();
    let holder = sim.view().may_act.first().cloned().unwrap_or(seat.clone());
    let attackers: Vec<String> =
        s.attack.as_ref().map(|a| a.combats.iter().map(|(x, _)| x.clone()).collect()).unwrap_or_default();
    match &s.phase {
        Phase::Idle if pick.is_multiple_of(4) => {
            let mine: Vec<&String> =
                s.creatures.iter().filter(|(_, c)| c.owner == seat && !c.dead).map(|(k, _)| k).collect();
            (seat, json!({"type": "resolve", "what": "unmark", "creatures": mine}))
        }
        Phase::Idle if pick % 4 == 1 || s.turn.as_ref().is_some_and(|t| t.attackers_announced) => {
            (seat, json!({"type": "announce", "what": "turn"}))
        }
        Phase::Idle => {
            let seat = s.turn.as_ref().map_or(seat, |t| t.active.clone());
            let count = 1 + n as usize % 3;
            let list: Vec<Value> = (0..count)
                .map(|i| json!({"name": format!("{seat}-c{}", (pick as usize + i) % 5), "atk": (n % 5) as i64, "def": 1 + (pick % 4) as i64}))
                .collect();
            (seat, json!({"type": "announce", "what": "attackers", "attackers": list}))
        }
        Phase::Responses { .. } | Phase::CombatResponses { .. } => match pick % 4 {
            0 => (holder, json!({"type": "play", "kind": "event", "card": "Fog"})),
            1 => (holder, json!({"type": "play", "kind": "ability", "card": "Rage"})),
            _ => (holder, json!({"type": "pass"})),
        },
        Phase::Defense => {
            let passive = s.attack.as_ref().unwrap().passive.clone();
            let blocks: Vec<Value> = if pick.is_multiple_of(3) {
                vec![]
            } else {
                attackers
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !(n as usize + i).is_multiple_of(3) || pick.is_multiple_of(2))
                    .map(|(i, a)| json!({"defender": {"name": format!("{passive}-d{}", (i + n as usize) % 4), "atk": (pick % 4) as i64, "def": 1 + (n % 3) as i64}, "attacker": a}))
                    .collect()
            };
            (passive, json!({"type": "announce", "what": "defenders", "blocks": blocks}))
        }
        Phase::Undefended => {
            let damage: Vec<Value> =
                attackers.iter().map(|a| json!({"attacker": a, "damage": s.creatures[a].atk})).collect();
            let total: i64 = attackers.iter().map(|a| s.creatures[a].atk).sum();
            (seat, json!({"type": "resolve", "what": "undefended", "damage": damage, "influence_lost": total}))
        }
        Phase::UnblockedRuling => {
            ("Dana".into(), json!({"type": "resolve", "what": "unblocked", "influence_lost": n as i64 % 4}))
        }
        // A player's record with an effect played: the other player confirms, or a judge records.
        Phase::Confirm { damage, influence_lost, .. } if pick.is_multiple_of(2) => (
            "Dana".into(),
            json!({"type": "resolve", "what": "undefended", "damage": damage, "influence_lost": influence_lost}),
        ),
        Phase::Confirm { by, .. } => {
            let other = if by == "p1" { "p2" } else { "p1" };
            (other.into(), json!({"type": "resolve", "what": "confirm"}))
        }
        Phase::Pick { picker } => (
            picker.clone(),
            json!({"type": "announce", "what": "next_combat", "attacker": attackers[n as usize % attackers.len()]}),
        ),
        Phase::Resolution { attacker } | Phase::CombatRuling { attacker } => {
            let blockers = s.attack.as_ref().unwrap().combats.iter().find(|(a, _)| a == attacker).unwrap().1.clone();
            let a = &s.creatures[attacker];
            let defenders: Vec<Value> = blockers
                .iter()
                .map(|d| json!({"name": d, "atk": s.creatures[d].atk, "def": s.creatures[d].def}))
                .collect();
            let mut dead = vec![];
            if let [d] = blockers.as_slice() {
                let d = &s.creatures[d];
                if a.atk > d.def {
                    dead.push(blockers[0].clone());
                }
                if d.atk >= a.def {
                    dead.push(attacker.clone());
                }
            } else if pick.is_multiple_of(2) {
                dead.push(attacker.clone());
            }
            let actor = if matches!(s.phase, Phase::CombatRuling { .. }) { "Dana" } else { &seat };
            (
                actor.to_string(),
                json!({"type": "resolve", "what": "combat", "attacker": {"atk": a.atk, "def": a.def}, "defenders": defenders, "dead": dead}),
            )
        }
    }
}

/// A plausible Riftbound action for the current phase.
fn riftbound_candidate(sim: &Sim, pick: u8, n: u8) -> (String, Value) {
    use arbiter::rules::riftbound::{Phase, Stage};
    let s = sim.riftbound();
    let seat = ["p1", "p2", "p3"][n as usize % 3].to_string();
    let view = sim.view();
    let holder = view.may_act.first().cloned().unwrap_or(seat.clone());
    let bfs = ["Altar", "Forge"];
    match &s.phase {
        Phase::Open if pick.is_multiple_of(3) => {
            (s.turn.as_ref().unwrap().player.clone(), json!({"type": "announce", "what": "end_turn"}))
        }
        Phase::Setup | Phase::Between | Phase::Over
            if pick.is_multiple_of(3) || s.turn.is_none() || s.phase == Phase::Between =>
        {
            (s.next_turn(), json!({"type": "announce", "what": "turn"}))
        }
        Phase::Setup | Phase::Open | Phase::Between | Phase::Over => {
            let player = s.turn.as_ref().map(|t| t.player.clone()).unwrap_or(seat);
            let units: Vec<Value> = (0..1 + n as usize % 2)
                .map(|i| json!({"name": format!("{player}-u{}", (pick as usize + i) % 4), "might": 1 + (n % 4) as i64, "tank": pick.is_multiple_of(5), "assault": [pick as i64 % 2]}))
                .collect();
            (player, json!({"type": "announce", "what": "move", "units": units, "to": bfs[pick as usize % 2]}))
        }
        Phase::ChooseCombat => (
            holder,
            json!({"type": "announce", "what": "combat", "battlefield": s.pending[n as usize % s.pending.len()]}),
        ),
        Phase::Showdown(sd) => match &sd.stage {
            Stage::InitialChain { .. } if pick.is_multiple_of(3) => {
                let t = if Some(&holder) == sd.combat.as_ref().map(|c| &c.0) { "attack" } else { "defend" };
                (holder, json!({"type": "play", "kind": "trigger", "card": "Cry", "trigger": t}))
            }
            Stage::Focus { .. } if pick.is_multiple_of(4) => {
                (holder, json!({"type": "play", "kind": "action", "card": "Bolt"}))
            }
            Stage::Focus { .. } if pick % 7 == 1 => {
                (holder, json!({"type": "announce", "what": "invite", "player": seat}))
            }
            Stage::Chain { .. } if pick.is_multiple_of(3) => {
                (holder, json!({"type": "play", "kind": "reaction", "card": "Ward"}))
            }
            Stage::Invited { player, .. } => (
                player.clone(),
                json!({"type": "announce", "what": if pick.is_multiple_of(2) { "accept" } else { "decline" }}),
            ),
            Stage::Resolving { .. } => {
                let item = sd.chain.newest().unwrap();
                let unit = s.units.keys().nth(n as usize % s.units.len().max(1)).cloned();
                let changes = match unit {
                    Some(u) if pick.is_multiple_of(3) => json!([{"unit": u, "damage": 1}]),
                    _ => json!([]),
                };
                (
                    item.seat.clone(),
                    json!({"type": "resolve", "what": "chain_item", "item": item.seq, "changes": changes}),
                )
            }
            _ => (holder, json!({"type": "pass"})),
        },
        Phase::Damage { battlefield, attacker, defender, assigning, .. } => {
            // A legal assignment: Tanks first, each lethal before the next, the rest on the last.
            let target = if assigning == attacker { defender } else { attacker };
            let total: i64 = s
                .units
                .iter()
                .filter(|(_, u)| &u.owner == assigning && u.at.as_deref() == Some(battlefield.as_str()))
                .map(|(k, _)| s.combat_might[k])
                .sum();
            let mut targets: Vec<(&String, i64, bool)> = s
                .units
                .iter()
                .filter(|(_, u)| &u.owner == target && u.at.as_deref() == Some(battlefield.as_str()))
                .map(|(k, u)| (k, (s.combat_might[k] - u.damage).max(0), u.tank))
                .collect();
            targets.sort_by_key(|t| !t.2);
            let mut left = total;
            let mut list = vec![];
            for (i, (k, lethal, _)) in targets.iter().enumerate() {
                if left == 0 {
                    break;
                }
                let give = if i + 1 == targets.len() { left } else { (*lethal).max(1).min(left) };
                list.push(json!({"unit": k, "damage": give}));
                left -= give;
            }
            (assigning.clone(), json!({"type": "resolve", "what": "damage", "assignments": list}))
        }
    }
}

fn play_with(mut sim: Sim, choices: &[(u8, u8)], candidate: fn(&Sim, u8, u8) -> (String, Value)) -> Sim {
    for (pick, n) in choices {
        let (actor, action) = candidate(&sim, *pick, *n);
        let _ = sim.try_act(&actor, action);
    }
    sim
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn wtactics_replay_is_deterministic(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..200)) {
        let sim = play_with(Sim::ruleset("wtactics", &["p1", "p2"], &["Dana"], json!({})), &choices, wtactics_candidate);
        assert_replays(&sim)?;
    }

    #[test]
    fn riftbound_replay_is_deterministic(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..200)) {
        let sim = play_with(Sim::ruleset("riftbound", &["p1", "p2", "p3"], &["Dana"], json!({"mode": "ffa3", "battlefields": ["Altar", "Forge"]})), &choices, riftbound_candidate);
        assert_replays(&sim)?;
    }
}

#[test]
fn random_wtactics_and_riftbound_play_reach_combat_resolution() {
    let choices: Vec<(u8, u8)> = (0..800u32).map(|i| ((i * 7 % 251) as u8, (i * 13 % 253) as u8)).collect();
    let w = play_with(Sim::ruleset("wtactics", &["p1", "p2"], &["Dana"], json!({})), &choices, wtactics_candidate);
    assert!(w.wtactics().attacks_finished >= 3, "only {} WTactics attacks finished", w.wtactics().attacks_finished);
    let r = play_with(
        Sim::ruleset(
            "riftbound",
            &["p1", "p2", "p3"],
            &["Dana"],
            json!({"mode": "ffa3", "battlefields": ["Altar", "Forge"]}),
        ),
        &choices,
        riftbound_candidate,
    );
    let fights = r.events.iter().filter(|e| e.action["what"] == "damage").count();
    assert!(fights >= 4, "only {fights} Riftbound damage assignments accepted in {} events", r.events.len());
}

/// A plausible Raw Deal action for the current step.
fn rawdeal_candidate(sim: &Sim, pick: u8, n: u8) -> (String, Value) {
    use arbiter::rules::rawdeal::{Computed, Modifier, Op, compute};
    let s = sim.rawdeal();
    let seat = ["p1", "p2"][n as usize % 2].to_string();
    let Some(b) = s.stack.last() else {
        let damage = if pick.is_multiple_of(3) { Value::Null } else { json!(n % 6) };
        return (
            seat,
            json!({"type": "play", "card": format!("Card {}", pick % 9), "cost": n % 4, "damage": damage, "multi": pick.is_multiple_of(5)}),
        );
    };
    if let Some(u) = &b.awaiting_ruling {
        return (
            "Dana".into(),
            json!({"type": "resolve", "what": "rounding", "value": if pick.is_multiple_of(2) { u.low } else { u.high }}),
        );
    }
    let who = b.priority.clone();
    let mods = |k: u8| -> Vec<Modifier> {
        let ops = [Op::Add, Op::Mul, Op::Div, Op::Sub];
        (0..k % 3)
            .map(|i| Modifier { op: ops[(k as usize + i as usize) % 4], value: 1 + ((k + i) % 3) as i64, source: None })
            .collect()
    };
    let value = |base: i64, sets: &[&[Modifier]]| match compute(base, sets, s.rounding.as_deref()) {
        Ok(Computed::Exact(v)) => v,
        Ok(Computed::Uneven { low, .. }) => low,
        Err(_) => base,
    };
    let action = match b.step.as_str() {
        "2a" => {
            let (p, o) = (mods(pick), mods(n));
            json!({"type": "resolve", "what": "cost", "fortitude": n % 6, "player_mods": p, "opponent_mods": o, "cost": value(b.printed_cost, &[&p, &o])})
        }
        "2b-2c" => json!({"type": "resolve", "what": "requirements", "must": !pick.is_multiple_of(7)}),
        "3a" | "4" | "9a" if pick.is_multiple_of(2) => {
            let m = mods(n);
            json!({"type": "resolve", "what": "damage", "mods": m, "damage": value(b.damage.unwrap_or(0), &[&m])})
        }
        "3b" if pick.is_multiple_of(4) => {
            json!({"type": "resolve", "what": "reversal_mods", "cannot_be_reversed": true})
        }
        "5a" | "5b" if pick.is_multiple_of(3) => {
            json!({"type": "play", "card": "Reversal", "cost": n % 3, "reversal": true})
        }
        "9b" => json!({"type": "resolve", "what": "overturn", "card": "card", "stops": pick.is_multiple_of(11)}),
        "9e" if pick.is_multiple_of(2) => {
            json!({"type": "resolve", "what": "end_turn", "ends_turn": n.is_multiple_of(2)})
        }
        "2e" | "2f" | "7a" | "7b" | "8" | "9c" | "9d" if pick.is_multiple_of(3) => {
            json!({"type": "resolve", "what": "effects", "effects": ["an effect"]})
        }
        _ => json!({"type": "pass"}),
    };
    (who, action)
}

/// A plausible GURPS action for the current phase.
fn gurps_candidate(sim: &Sim, pick: u8, n: u8) -> (String, Value) {
    use arbiter::rules::gurps::Phase;
    let s = sim.gurps();
    match &s.phase {
        Phase::Out => {
            let list: Vec<Value> = (0..2 + n as usize % 3)
                .map(|i| {
                    let pc = i % 2 == 0;
                    json!({"name": format!("C{i}"), "speed_quarters": 20 + ((pick as usize + i) % 3) as i64, "dx": 10 + (i % 2) as i64,
                           "side": if pc { "party" } else { "foes" }, "pc": pc, "seat": if pc { json!(["p1", "p2"][i % 4 / 2]) } else { Value::Null }})
                })
                .collect();
            ("GM".into(), json!({"type": "announce", "what": "combat", "combatants": list}))
        }
        Phase::Ties => {
            let (group, how) = &s.ties[0];
            if how == "roll" {
                let rolls: Vec<Value> =
                    group.iter().enumerate().map(|(i, c)| json!({"combatant": c, "roll": 18 - i as i64})).collect();
                ("GM".into(), json!({"type": "resolve", "what": "tie", "order": group, "rolls": rolls}))
            } else {
                let mut order = group.clone();
                let k = n as usize % order.len();
                order.rotate_left(k);
                ("GM".into(), json!({"type": "resolve", "what": "tie", "order": order}))
            }
        }
        Phase::Turn { index, chosen } => {
            let who = s.sequence[*index].clone();
            let actor = s.characters[&who].seat.clone().unwrap_or_else(|| "GM".into());
            let maneuvers = ["do_nothing", "move", "attack", "all_out_attack", "all_out_defense", "feint", "wait"];
            let other = s.sequence[n as usize % s.sequence.len()].clone();
            match (chosen, pick % 9) {
                (false, _) => (
                    actor,
                    json!({"type": "announce", "what": "maneuver", "maneuver": maneuvers[n as usize % maneuvers.len()]}),
                ),
                (true, 0..=2) => (
                    actor,
                    json!({"type": "resolve", "what": "roll", "by": who, "kind": "attack", "roll": n % 18, "result": "r"}),
                ),
                (true, 3) => (
                    "GM".into(),
                    json!({"type": "resolve", "what": "roll", "by": other, "kind": "active_defense", "roll": n % 18, "result": "r"}),
                ),
                (true, 4) => (
                    "GM".into(),
                    json!({"type": "resolve", "what": "status", "combatant": other, "active": n.is_multiple_of(2), "reason": "r"}),
                ),
                (true, 5) if n.is_multiple_of(5) => ("GM".into(), json!({"type": "announce", "what": "drop_out"})),
                (true, 6) if n.is_multiple_of(13) => ("GM".into(), json!({"type": "announce", "what": "end_combat"})),
                _ => (actor, json!({"type": "pass"})),
            }
        }
        Phase::DroppedOut { .. } => ("GM".into(), json!({"type": "announce", "what": "resume"})),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn rawdeal_replay_is_deterministic(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..200), up in any::<bool>()) {
        let options = if up { json!({"rounding": "up"}) } else { json!({}) };
        let sim = play_with(Sim::ruleset("rawdeal", &["p1", "p2"], &["Dana"], options), &choices, rawdeal_candidate);
        assert_replays(&sim)?;
    }

    #[test]
    fn gurps_replay_is_deterministic(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..200)) {
        let sim = play_with(Sim::ruleset("gurps", &["p1", "p2"], &["GM"], json!({})), &choices, gurps_candidate);
        assert_replays(&sim)?;
    }
}

#[test]
fn random_rawdeal_and_gurps_play_go_deep() {
    let choices: Vec<(u8, u8)> = (0..800u32).map(|i| ((i * 7 % 251) as u8, (i * 13 % 253) as u8)).collect();
    let r = play_with(Sim::ruleset("rawdeal", &["p1", "p2"], &["Dana"], json!({})), &choices, rawdeal_candidate);
    let h = &r.rawdeal().history;
    assert!(h.iter().any(|p| p.depth > 0), "no nested breakdown finished in {} events", r.events.len());
    assert!(h.len() >= 10, "only {} breakdowns finished", h.len());
    let g = play_with(Sim::ruleset("gurps", &["p1", "p2"], &["GM"], json!({})), &choices, gurps_candidate);
    assert!(
        g.gurps().second >= 3 || g.gurps().combats >= 2,
        "GURPS play stayed shallow: second {}, combats {}",
        g.gurps().second,
        g.gurps().combats
    );
}

// ---------------------------------------------------------------------------
// Canonical JSON: arbiter's writer against serde_jcs (RFC 8785), byte for byte.
// ---------------------------------------------------------------------------

/// Keys that exercise RFC 8785's UTF-16 order where it differs from UTF-8's:
/// characters at U+E000-U+FFFF against the supplementary planes, besides
/// ASCII, the rest of the BMP and the escapes.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,3}",
        "[a-c\u{e000}\u{ffff}\u{fffd}\u{10000}\u{1f600}\u{10ffff}]{0,3}",
        "[\"\\\\/\u{0}-\u{1f}\u{7f}\u{2028}\u{2029}a]{0,3}",
        any::<String>(),
        Just("hash".to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    const EXACT: i64 = 1 << 53;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        // Every integer an event may hold; beyond +-2^53 (and a float)
        // canonical JSON refuses as a bug (json.rs's own tests).
        (-EXACT..=EXACT).prop_map(Value::from),
        Just(Value::from(EXACT)),
        Just(Value::from(-EXACT)),
        any::<String>().prop_map(Value::from),
        "[\"\\\\/\u{0}-\u{1f}\u{7f}-\u{9f}\u{2028}\u{2029}\u{fffe}\u{1f600}a]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Values the strict rules take: integers within +-(2^53 - 1), strings
/// without control characters (quotes, backslashes, non-ASCII and
/// characters past U+FFFF among them), keys as `key()` makes them but
/// without control characters.
fn strict_value() -> impl Strategy<Value = Value> {
    const MOST: i64 = (1 << 53) - 1;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-MOST..=MOST).prop_map(Value::from),
        "[ -~\u{e9}\u{2028}\u{e000}\u{fffd}\u{10000}\u{1f600}]{0,8}".prop_map(Value::from),
    ];
    let key = "[a-c\"\\\\/\u{e000}\u{ffff}\u{10000}\u{1f600}]{0,3}";
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(key, inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn jcs(v: &Value) -> Vec<u8> {
    serde_jcs::to_vec(v).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn canonical_is_rfc8785_byte_for_byte(v in json_value()) {
        prop_assert_eq!(arbiter::json::canonical(&v), jcs(&v));
    }

    /// The event writer (`seal`, and the store's check on the way in)
    /// against the event built as a `Value` and written by serde_jcs: the
    /// same bytes, and the same refusal with the same words.
    #[test]
    fn an_event_is_written_as_rfc8785_writes_its_value(
        // Mostly actions the rules take (so that most cases compare bytes),
        // some that they refuse.
        action in prop_oneof![
            9 => prop::collection::btree_map(key(), strict_value(), 0..6),
            1 => prop::collection::btree_map(key(), json_value(), 0..6),
        ],
        strings in prop::collection::vec(prop_oneof![
            8 => "[0-9a-zA-Z:. \"\\\\/\u{e9}\u{2028}\u{e000}\u{10000}-]{0,12}",
            1 => any::<String>(),
            1 => "[\u{0}-\u{1f}a]{0,4}",
        ], 4),
        numbers in prop::collection::vec(prop_oneof![8 => 0..=(1u64 << 53), 1 => any::<u64>()], 2),
    ) {
        let [actor, at, prev, hash] = <[String; 4]>::try_from(strings).unwrap();
        let action = Value::Object(action.into_iter().collect());
        let event = arbiter::event::Event { v: numbers[0], seq: numbers[1], prev, at, actor, action, hash };
        let value = serde_json::to_value(&event).unwrap();
        match (arbiter::event::canonical_event(&event), arbiter::json::check_value(&value)) {
            (Ok(bytes), Ok(())) => prop_assert_eq!(bytes, jcs(&value)),
            (Err(arbiter::event::EventError::Malformed(why)), Err(e)) => prop_assert_eq!(why, e.0),
            (got, checked) => prop_assert!(false, "the writer says {:?}, the check of the value {:?}", got, checked),
        }
    }

    #[test]
    fn hash_without_a_member_is_the_hash_of_the_object_without_it(
        members in prop::collection::btree_map(key(), json_value(), 0..6),
        hash in json_value(),
        with_hash in any::<bool>(),
    ) {
        let mut map: serde_json::Map<String, Value> = members.into_iter().collect();
        if with_hash {
            map.insert("hash".into(), hash);
        }
        let bytes = arbiter::json::canonical(&Value::Object(map.clone()));
        let had = map.remove("hash").is_some();
        let got = arbiter::json::hash_without_member(&bytes, "hash");
        if had {
            prop_assert_eq!(got, Some(blake3::hash(&jcs(&Value::Object(map)))));
        } else {
            prop_assert_eq!(got, None);
        }
    }
}

/// The nesting limit counts an event's action one level inside the event:
/// for actions nested deeper and deeper, in arrays and in objects, the
/// event writer (`canonical_event`) and `seal` take or refuse each as
/// `check_value` does the event built as a `Value`, and both answers occur.
#[test]
fn an_event_is_refused_past_the_nesting_limit_as_its_value_is() {
    let t0 = parse_time("2026-11-21T15:00:00Z").unwrap();
    for in_object in [false, true] {
        let (mut taken, mut refused) = (0, 0);
        for depth in 0..arbiter::limits::MAX_DEPTH + 2 {
            let mut inner = json!(1);
            for _ in 0..depth {
                inner = if in_object { json!({ "d": inner }) } else { json!([inner]) };
            }
            let action = json!({ "type": "note", "d": inner });
            let draft = Draft { actor: "p1".into(), action, at: None };
            let sealed = seal(&draft, None, t0);
            let mut value = match &sealed {
                Ok((event, _)) => serde_json::to_value(event).unwrap(),
                Err(_) => {
                    json!({"v": 1, "seq": 0, "prev": "0".repeat(64), "at": "2026-11-21T15:00:00.000Z", "actor": "p1", "action": draft.action})
                }
            };
            value.as_object_mut().unwrap().remove("hash");
            match (&sealed, arbiter::json::check_value(&value)) {
                (Ok((event, bytes)), Ok(())) => {
                    taken += 1;
                    let whole = serde_json::to_value(event).unwrap();
                    assert_eq!(*bytes, jcs(&whole), "depth {depth}");
                    assert_eq!(arbiter::event::canonical_event(event).unwrap(), *bytes, "depth {depth}");
                }
                (Err(arbiter::event::EventError::Malformed(why)), Err(e)) => {
                    refused += 1;
                    assert_eq!(*why, e.0, "depth {depth}");
                    assert!(why.contains("nesting"), "depth {depth}: {why}");
                }
                (got, checked) => panic!("depth {depth}: seal says {got:?}, the check of the value {checked:?}"),
            }
        }
        assert!(taken > 0 && refused > 0, "taken {taken}, refused {refused}");
    }
}

/// serde_json's map must iterate in key order (its `preserve_order` feature
/// off): the canonical writer relies on it.
#[test]
fn json_maps_iterate_in_key_order() {
    let v: Value = serde_json::from_str(r#"{"b":1,"a":2,"é":3,"A":4}"#).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["A", "a", "b", "é"]);
}

/// Every line of every sample, and every sample sealed into events: the
/// canonical bytes are serde_jcs's, and the hash of an event from its bytes
/// alone is the hash of its canonical JSON without `hash`.
#[test]
fn canonical_bytes_of_every_sample_are_rfc8785() {
    let t0 = parse_time("2026-11-21T15:00:00Z").unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let mut prev: Option<arbiter::event::Link> = None;
        for line in std::fs::read_to_string(&path).unwrap().lines().filter(|l| !l.trim().is_empty()) {
            let v = arbiter::json::parse_strict(line).unwrap();
            assert_eq!(arbiter::json::canonical(&v), jcs(&v), "{}: {line}", path.display());
            let draft = Draft { actor: v["actor"].as_str().unwrap().into(), action: v["action"].clone(), at: None };
            let (event, bytes) = seal(&draft, prev.as_ref(), t0).unwrap();
            let mut value = serde_json::to_value(&event).unwrap();
            assert_eq!(bytes, jcs(&value), "{}: {line}", path.display());
            value.as_object_mut().unwrap().remove("hash");
            assert_eq!(blake3::hash(&jcs(&value)).to_hex().as_str(), event.hash);
            assert_eq!(
                arbiter::event::hash_of_canonical(&bytes).map(|h| h.to_hex().to_string()),
                Some(event.hash.clone())
            );
            prev = Some(event.link());
            seen += 1;
        }
    }
    assert!(seen > 100, "the samples hold {seen} events");
}

// ---------------------------------------------------------------------------
// delta: the walk over JSON text against the walk over `Value`s it replaced.
// ---------------------------------------------------------------------------

/// The walk `delta::diff` made over two `Value`s before it walked text too:
/// kept here as the reference the text walk must agree with.
fn reference_diff(a: &Value, b: &Value) -> Vec<arbiter::delta::Change> {
    use arbiter::delta::Change;
    fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<Change>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                for k in keys {
                    if let (Some(u), Some(v)) = (x.get(k), y.get(k))
                        && u == v
                    {
                        continue;
                    }
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    match (x.get(k), y.get(k)) {
                        (Some(u), Some(v)) => walk(&p, u, v, out),
                        (u, v) => out.push(Change { path: p, before: u.cloned(), after: v.cloned() }),
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                for i in 0..x.len().max(y.len()) {
                    if let (Some(u), Some(v)) = (x.get(i), y.get(i))
                        && u == v
                    {
                        continue;
                    }
                    let p = format!("{path}[{i}]");
                    match (x.get(i), y.get(i)) {
                        (Some(u), Some(v)) => walk(&p, u, v, out),
                        (u, v) => out.push(Change { path: p, before: u.cloned(), after: v.cloned() }),
                    }
                }
            }
            _ if a != b => out.push(Change { path: path.to_string(), before: Some(a.clone()), after: Some(b.clone()) }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out.sort_by_key(|c| arbiter::delta::rank(&c.path));
    out
}

/// A second value near `a`: some members and elements changed, added or
/// removed, so that most of the pair is equal (as from one event to the next).
fn near(a: Value, edits: Vec<(u8, Value)>) -> Value {
    fn edit(v: &mut Value, pick: u8, new: Value) {
        match v {
            Value::Object(m) if !m.is_empty() && !pick.is_multiple_of(4) => {
                let k = m.keys().nth(pick as usize % m.len()).unwrap().clone();
                if pick.is_multiple_of(7) {
                    m.remove(&k);
                } else {
                    edit(m.get_mut(&k).unwrap(), pick / 3, new);
                }
            }
            Value::Array(a) if !a.is_empty() && !pick.is_multiple_of(4) => {
                let i = pick as usize % a.len();
                if pick.is_multiple_of(7) {
                    a.truncate(i);
                } else {
                    edit(&mut a[i], pick / 3, new);
                }
            }
            Value::Object(m) => {
                m.insert(format!("k{pick}"), new);
            }
            Value::Array(a) => a.push(new),
            _ => *v = new,
        }
    }
    let mut b = a;
    for (pick, new) in edits {
        edit(&mut b, pick, new);
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn the_text_walk_finds_the_changes_the_value_walk_found(
        a in json_value(),
        other in json_value(),
        edits in prop::collection::vec((any::<u8>(), json_value()), 0..4),
        unrelated in any::<bool>(),
    ) {
        use arbiter::delta::{Doc, diff, diff_docs};
        let b = if unrelated { other } else { near(a.clone(), edits) };
        let want = reference_diff(&a, &b);
        prop_assert_eq!(diff(&a, &b), want.clone());
        // A doc written over another (as replay reuses its buffers) reads as a new one.
        let mut doc_a = Doc::of(&b).unwrap();
        doc_a.write(&a).unwrap();
        prop_assert_eq!(doc_a.as_bytes(), serde_json::to_vec(&a).unwrap());
        prop_assert_eq!(diff_docs(&doc_a, &Doc::of(&b).unwrap()), want);
    }
}

/// What replay says each event changed, found member by member from its copy
/// of the state before (`rules::Kept`, caught up from event to event as
/// replay keeps it), is what the JSON diff of the two states written whole
/// finds (`delta::diff` over `Table::live_json`): the account and the diff
/// it replaced cannot drift apart, on any game the generators play.
fn assert_changes_are_the_json_diff(sim: &Sim) -> Result<(), TestCaseError> {
    use arbiter::delta::{Differ, diff};
    use arbiter::fold::Folder;
    use arbiter::rules::Kept;
    let mut folder = Folder::new();
    let mut differ = Differ::default();
    let mut before: Option<(Kept, Value)> = None;
    for e in &sim.events {
        folder.push(e, &sim.events).unwrap();
        let table = folder.table().unwrap();
        let now = table.live_json();
        if let Some((kept, then)) = &mut before {
            let want = diff(then, &now);
            prop_assert_eq!(differ.changes(&kept.compared(), &table.compared()), want.clone(), "at seq {}", e.seq);
            // What the copy's catch-up found differed, compared where
            // replay shows the event, is the same account.
            let found = kept.catch_up(table);
            prop_assert_eq!(found.changes(&mut differ), want, "what differed at seq {}, compared", e.seq);
            *then = now;
        } else {
            before = Some((Kept::of(table), now));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    #[test]
    fn what_replay_says_changed_is_the_json_diff_in_random_games(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..300), up in any::<bool>()) {
        assert_changes_are_the_json_diff(&play_out(&choices))?;
        let wtactics = Sim::ruleset("wtactics", &["p1", "p2"], &["Dana"], json!({}));
        assert_changes_are_the_json_diff(&play_with(wtactics, &choices, wtactics_candidate))?;
        let riftbound = Sim::ruleset("riftbound", &["p1", "p2", "p3"], &["Dana"], json!({"mode": "ffa3", "battlefields": ["Altar", "Forge"]}));
        assert_changes_are_the_json_diff(&play_with(riftbound, &choices, riftbound_candidate))?;
        let options = if up { json!({"rounding": "up"}) } else { json!({}) };
        let rawdeal = Sim::ruleset("rawdeal", &["p1", "p2"], &["Dana"], options);
        assert_changes_are_the_json_diff(&play_with(rawdeal, &choices, rawdeal_candidate))?;
        let gurps = Sim::ruleset("gurps", &["p1", "p2"], &["GM"], json!({}));
        assert_changes_are_the_json_diff(&play_with(gurps, &choices, gurps_candidate))?;
    }
}
