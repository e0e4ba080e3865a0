#!/usr/bin/env python3
"""Writes examples/<ruleset>-sample.actions.jsonl: the action scripts (one {"actor", "action"} per line, as `arbiter append GAME -` reads; not exports) that `arbiter demo --ruleset NAME` records.

Kept as a script so the seqs that counters and chain items name are computed, not typed.
Run: python3 tools/make-samples.py
"""
import json
import os

lines = []


def write(ruleset):
    path = os.path.join(os.path.dirname(__file__), "..", "examples", f"{ruleset}-sample.actions.jsonl")
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    lines.clear()


def act(actor, **action):
    lines.append({"actor": actor, "action": action})
    return len(lines) - 1  # the seq this action will get (the header is seq 0)


def passes(*seats):
    for s in seats:
        act(s, type="pass")


act("organiser", type="open", ruleset="doomtrooper", ruleset_version=1,
    seats=[{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}, {"id": "p3", "name": "Carol"}],
    judges=["Dana"], tournament="Luna City Open", round=3, table=12)

# Combat 1: p1 attacks p2.
act("p1", type="announce", what="combat", defending_player="p2", attacker="Max Steiner", defender="Legionnaire")
tactic = act("p1", type="announce", what="battle_tactic", tactic="Fight")           # step 2
act("p2", type="counter", card="Cancel", target=tactic)                               # step 3
passes("p1", "p3", "p2")                                                              # 4-6
act("p2", type="announce", what="warzone", warzone="Venus Jungle")                   # step 7
passes("p1", "p2", "p3")                                                              # 8-11
act("p2", type="play", effect="change_combatants", card="Body Guard", defender="Legionnaire Sergeant")  # 12
passes("p1", "p3", "p2")                                                              # 13-15: changed
act("p1", type="announce", what="battle_tactic", tactic="Fight")                     # repeat: step 2
passes("p2", "p1", "p3")
act("p2", type="announce", what="warzone", warzone=None)
passes("p1", "p2", "p3")
passes("p2", "p1", "p3")                                                              # 12-15: no change
act("p1", type="play", effect="strike_order", card="Ambush", first="p1")             # 16
passes("p1")
passes("p2", "p3")                                                                    # 17
passes("p2")                                                                          # 18
passes("p1", "p3")                                                                    # 19: non-simultaneous, p1 first
passes("p1"); passes("p2", "p3"); passes("p2"); passes("p1", "p3")                   # 20-23
act("p1", type="announce", what="equipment", items=["Bolter"])                      # 24
passes("p2", "p3", "p1")                                                              # 25
passes("p1"); passes("p2", "p3"); passes("p2"); passes("p1", "p3")                   # 28-31
act("p1", type="resolve", what="standing", ratings=[{"warrior": "Max Steiner", "rating": 7}, {"warrior": "Legionnaire Sergeant", "rating": 4}])
drugs = act("p1", type="play", effect="modify", card="Combat Drugs")                 # 33
shield = act("p2", type="play", effect="modify", card="Shield of Faith")             # 34
act("p3", type="counter", card="Cancel", target=shield)                              # 35
passes("p1", "p2", "p3")                                                              # 36
act("p1", type="resolve", what="results", counted=[drugs],
    results=[{"warrior": "Max Steiner", "outcome": "unharmed"}, {"warrior": "Legionnaire Sergeant", "outcome": "killed"}])
passes("p1"); passes("p2", "p3", "p1"); passes("p3"); passes("p1", "p2", "p3")       # 38-43
act("p1", type="resolve", what="status",
    status=[{"warrior": "Max Steiner", "outcome": "unharmed"}, {"warrior": "Legionnaire Sergeant", "outcome": "killed"}])
act("p1", type="resolve", what="award", points=2)                                    # 45
passes("p2", "p3", "p1")                                                              # 46: second warrior is dead

# Combat 2: p2 attacks p3; p2 ends it with Smoke Bomb at step 20.
act("p2", type="announce", what="combat", defending_player="p3", attacker="Legionnaire Captain", defender="Valerie Duval")
act("p2", type="announce", what="battle_tactic", tactic="Shoot")
passes("p3", "p2", "p1")
act("p3", type="announce", what="warzone", warzone=None)
passes("p2", "p3", "p1")
passes("p3", "p2", "p1")
passes("p2"); passes("p3", "p1"); passes("p3"); passes("p2", "p1")                   # 16-19
act("p2", type="play", effect="end_combat", card="Smoke Bomb")                       # 20: step complete
passes("p3", "p1")                                                                    # 21: it stands -> 37
act("p2", type="resolve", what="results", counted=[],
    results=[{"warrior": "Legionnaire Captain", "outcome": "unharmed"}, {"warrior": "Valerie Duval", "outcome": "unharmed"}])
passes("p2"); passes("p3", "p1", "p2"); passes("p3"); passes("p2", "p1", "p3"); passes("p1"); passes("p2", "p3", "p1")
act("p2", type="resolve", what="status",
    status=[{"warrior": "Legionnaire Captain", "outcome": "unharmed"}, {"warrior": "Valerie Duval", "outcome": "unharmed"}])
act("p2", type="resolve", what="award", points=0)
passes("p3", "p1", "p2")
act("p3", type="resolve", what="award", points=0)
passes("p2", "p1", "p3")

write("doomtrooper")

# WTactics: p1 attacks with three creatures; p2 defends two of them, one with two
# defenders (a judge rules), and lets nothing through.
act("organiser", type="open", ruleset="wtactics", ruleset_version=2,
    seats=[{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}], judges=["Dana"])
act("p1", type="announce", what="attackers", attackers=[
    {"name": "Orc Raider", "atk": 3, "def": 2},
    {"name": "Troll", "atk": 5, "def": 5, "enchantments": [{"card": "Bloodlust", "owner": "p1"}]}])
act("p2", type="play", kind="event", card="Ambush")                                    # I: passive first
passes("p1", "p2")
act("p2", type="announce", what="defenders", blocks=[
    {"defender": {"name": "Knight", "atk": 2, "def": 3}, "attacker": "Orc Raider"},
    {"defender": {"name": "Pikeman", "atk": 3, "def": 2}, "attacker": "Troll"},
    {"defender": {"name": "Archer", "atk": 2, "def": 1}, "attacker": "Troll"}])
act("p1", type="announce", what="next_combat", attacker="Orc Raider")                  # IV: attacker picks first
act("p2", type="play", kind="ability", card="Shield Wall")
passes("p1", "p2")
act("p1", type="resolve", what="combat", attacker={"atk": 3, "def": 2},
    defenders=[{"name": "Knight", "atk": 2, "def": 4}], dead=["Orc Raider"])
passes("p2", "p1")                                                                    # Troll: two defenders
act("Dana", type="resolve", what="combat", attacker={"atk": 5, "def": 5},
    defenders=[{"name": "Pikeman", "atk": 3, "def": 2}, {"name": "Archer", "atk": 2, "def": 1}], dead=["Pikeman", "Troll"])
write("wtactics")

# Riftbound 1v1: p1's turn passes; p2 takes the Altar without combat; p1 contests it: triggers,
# a spell and a reaction on the chain, damage with a Tank, and a conquest.
act("organiser", type="open", ruleset="riftbound", ruleset_version=2,
    seats=[{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}], judges=["Dana"],
    options={"mode": "1v1", "battlefields": ["Altar", "Forge"]})
act("p1", type="announce", what="turn")                                               # turns pass in seat order
act("p1", type="announce", what="end_turn")                                           # the turn player ends its turn
act("p2", type="announce", what="turn")
act("p2", type="announce", what="move", to="Altar", units=[
    {"name": "Stone Golem", "might": 3, "tank": True}, {"name": "Acolyte", "might": 2, "shield": [1]}])
passes("p2", "p1")                                                                    # showdown without combat
act("p2", type="announce", what="end_turn")
act("p1", type="announce", what="turn")
act("p1", type="announce", what="move", to="Altar", units=[
    {"name": "Berserker", "might": 4, "assault": [2]}, {"name": "Scout", "might": 2}])
cry = act("p1", type="play", kind="trigger", card="Battle Cry", trigger="attack")       # initial chain
passes("p2", "p1")
act("p1", type="resolve", what="chain_item", item=cry, changes=[])
bolt = act("p1", type="play", kind="action", card="Firebolt")                          # p1 has Focus
ward = act("p2", type="play", kind="reaction", card="Ward")
passes("p1", "p2")
act("p2", type="resolve", what="chain_item", item=ward, changes=[])
act("p1", type="resolve", what="chain_item", item=bolt, changes=[{"unit": "Acolyte", "damage": 1}])
passes("p2", "p1")                                                                    # showdown ends
# 8 Might (4+2 Assault, 2) against the Tank first: Golem 3, then Acolyte (Might 3 with Shield, 1 damage): 2 is lethal.
act("p1", type="resolve", what="damage", assignments=[{"unit": "Stone Golem", "damage": 3}, {"unit": "Acolyte", "damage": 5}])
act("p2", type="resolve", what="damage", assignments=[{"unit": "Scout", "damage": 2}, {"unit": "Berserker", "damage": 4}])
act("p1", type="announce", what="end_turn")
write("riftbound")

# Raw Deal: Chokeslam (cost and damage computed), reversed by No Chance in Hell,
# then a Multi card that survives a first reversal.
act("organiser", type="open", ruleset="rawdeal", ruleset_version=1,
    seats=[{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}], judges=["Dana"],
    options={"rounding": "down"})
act("p1", type="play", card="Chokeslam", cost=3, damage=5)                              # 1a
act("p1", type="resolve", what="cost", fortitude=12,
    player_mods=[{"op": "add", "value": 1, "source": "Big Show"}], opponent_mods=[{"op": "div", "value": 2, "source": "Kane"}], cost=2)
act("p1", type="resolve", what="requirements", must=True)                               # 2b-2c, 2d
passes("p1", "p2")                                                                      # 2e, 2f
act("p1", type="resolve", what="damage", mods=[{"op": "add", "value": 2}, {"op": "mul", "value": 2}], damage=12)  # 3a
passes("p1")                                                                            # 3b
act("p2", type="resolve", what="damage", mods=[{"op": "sub", "value": 3}], damage=9)    # 4
act("p2", type="play", card="No Chance in Hell", cost=0, reversal=True)                 # 5a: nested
act("p2", type="resolve", what="cost", fortitude=9, cost=0)
act("p2", type="resolve", what="requirements", must=True)
passes("p2", "p1", "p2", "p1", "p2", "p1")                                              # 2e 2f 3b 5a 7a 7b
act("p2", type="resolve", what="effects", effects=["Alice's turn ends"])               # 8: Chokeslam to Ringside
act("p2", type="resolve", what="end_turn", ends_turn=True)                             # 9e; Chokeslam reversed (5c)
act("p2", type="play", card="Clothesline", cost=0, damage=3, multi=True)
act("p2", type="resolve", what="cost", fortitude=9, cost=0)
act("p2", type="resolve", what="requirements", must=True)
passes("p2", "p1", "p2", "p2", "p1")                                                    # 2e 2f 3a 3b 4
act("p1", type="play", card="Duck", cost=0, reversal=True)
act("p1", type="resolve", what="cost", fortitude=12, cost=0)
act("p1", type="resolve", what="requirements", must=True)
passes("p1", "p2", "p1", "p2", "p1", "p2", "p1", "p1")                                  # 2e 2f 3b 5a 7a 7b 8 9e
passes("p1")                                                                            # 5b: no second reversal
passes("p2", "p1", "p2", "p2", "p1")                                                    # 7a 7b 8 9a 9a
for card in ["Arm Drag", "Headlock", "Hip Toss"]:
    act("p1", type="resolve", what="overturn", card=card)                              # 9b
passes("p2", "p1", "p2")                                                                # 9c 9d 9e
write("rawdeal")

# GURPS: a tie settled by DX, one settled by a roll, two seconds of combat,
# an All-Out Attack, a knock-out and a drop out of combat time.
act("organiser", type="open", ruleset="gurps", ruleset_version=1,
    seats=[{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}], judges=["GM"])
act("GM", type="announce", what="combat", combatants=[
    {"name": "Sir Roland", "speed_quarters": 24, "dx": 12, "side": "party", "pc": True, "seat": "p1"},
    {"name": "Wren", "speed_quarters": 24, "dx": 12, "side": "party", "pc": True, "seat": "p2"},
    {"name": "Bandit", "speed_quarters": 22, "dx": 11, "side": "bandits", "pc": False}])
act("GM", type="resolve", what="tie", order=["Wren", "Sir Roland"],
    rolls=[{"combatant": "Sir Roland", "roll": 3}, {"combatant": "Wren", "roll": 5}])
act("p2", type="announce", what="maneuver", maneuver="aim")
passes("p2")
act("p1", type="announce", what="maneuver", maneuver="all_out_attack")
act("p1", type="resolve", what="roll", by="Sir Roland", kind="attack", roll=9, target=14, result="hit")
act("GM", type="resolve", what="roll", by="Bandit", kind="active_defense", roll=13, target=9, result="failed")
act("p1", type="resolve", what="roll", by="Sir Roland", kind="damage", roll=8, result="8 cutting")
passes("p1")
act("GM", type="announce", what="maneuver", maneuver="attack")
act("GM", type="resolve", what="roll", by="Bandit", kind="attack", roll=10, target=11, result="hit")
passes("GM")
act("p2", type="announce", what="maneuver", maneuver="attack")
act("p2", type="resolve", what="roll", by="Wren", kind="attack", roll=7, target=15, result="hit")
act("GM", type="resolve", what="status", combatant="Bandit", active=False, reason="knocked out")
passes("p2")
act("GM", type="announce", what="drop_out")
act("GM", type="resolve", what="determination", text="the bandit is tied up; the party rests")
act("GM", type="announce", what="end_combat")
write("gurps")
