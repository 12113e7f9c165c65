"""conv2d 04e's two rings (kernels/conv2d/04e_winograd_wgmma.cu: pair_step, release_is_last, fill_weights, fill_input,
the kernel's loop), modelled on the CPU under random schedules.

The model follows the kernel: no producer; each consumer warpgroup waits on a stage's FULL mbarrier by parity, reads it,
then releases it by adding one to the slot's counter, and the consumer that releases it last (the counter's old value
odd: the second of the two warpgroups) refills the slot with the stage SIN (SW) ahead, if there is one. An mbarrier
phase completes when its fill lands, some time after it was issued; a wait by parity passes whenever the barrier's
completed phases differ in parity from the one asked for, as `mbarrier.try_wait.parity` does, so a consumer two phases
late would pass on a stale phase — the model checks that it never is.

It fails on a fill issued into a slot whose stage a consumer has not yet released, a wait that passes on a phase other
than its stage's (stale or aliased data), a run that stops before every consumer has taken every stage (a deadlock),
or a fill left in flight at the end.
"""
import random

import pytest

from convfuse import registry as R

PIECES, PAIRS = 4, 8          # cf04e: input stages a tile, weight stages an input stage
SIN, SW = 2, 4                # cf04e: input and weight ring stages


def run_rings(ntiles, sin=SIN, sw=SW, seed=0, last_rule=None, parity_lag=0, steps=400_000):
    """`ntiles`: tiles of the block. `last_rule(old)`: who refills (the kernel's: the second releaser, old odd);
    `parity_lag`: a consumer that waits for a phase that many fills early (the bug the parity check is for)."""
    rng = random.Random(seed)
    wgs = (0, 1)
    last_rule = last_rule or (lambda old: old % 2 == 1)
    # per ring: each slot's completed phases, content (the stage its last landed fill wrote), and who still needs the
    # stage in it (the consumers that have not released it)
    ring = {r: {"done": [0] * n, "content": [None] * n, "holders": [set() for _ in range(n)]}
            for r, n in (("in", sin), ("w", sw))}
    cnt = {"in": [0] * sin, "w": [0] * sw}
    in_flight = []                                       # (landing time, ring, slot, stage)
    taken = {w: 0 for w in wgs}                          # weight stages each consumer has taken
    stats = {"fills": 0, "lead": 0}                      # the most weight stages one consumer got ahead of the other
    now = 0

    def issue(r, slot, u):
        h = ring[r]["holders"][slot]
        assert not h, f"{r} stage {u} issued into slot {slot} while consumers {sorted(h)} still need it"
        h.update(wgs)
        stats["fills"] += 1
        in_flight.append((now + rng.randint(1, 40), r, slot, u))

    def consumer(w):
        wtotal, intotal = ntiles * PIECES * PAIRS, ntiles * PIECES
        uin = uw = 0

        def wait(r, u, n):                               # mbar_wait(full + u % n, (u / n) & 1), then what it passed on
            h, slot = ring[r], u % n
            yield lambda: h["done"][slot] % 2 != (u // n - parity_lag) % 2
            assert h["done"][slot] == u // n + 1 and h["content"][slot] == u, \
                f"consumer {w} passed the wait for {r} stage {u} on slot {slot}'s phase {h['done'][slot]} " \
                f"(stage {h['content'][slot]})"

        for _ in range(ntiles):
            for _ in range(PIECES):
                slot_in = uin % sin
                yield from wait("in", uin, sin)
                for _ in range(PAIRS):
                    yield from wait("w", uw, sw)
                    taken[w] += 1
                    stats["lead"] = max(stats["lead"], max(taken.values()) - min(taken.values()))
                    yield None                           # the pair's fragments and wgmmas
                    slot = uw % sw                       # release_is_last and the refill
                    ring["w"]["holders"][slot].discard(w)
                    old, cnt["w"][slot] = cnt["w"][slot], cnt["w"][slot] + 1
                    if last_rule(old) and uw + sw < wtotal:
                        issue("w", slot, uw + sw)
                    uw += 1
                    yield None                           # the pair's adds into Y
                ring["in"]["holders"][slot_in].discard(w)
                old, cnt["in"][slot_in] = cnt["in"][slot_in], cnt["in"][slot_in] + 1
                if last_rule(old) and uin + sin < intotal:
                    issue("in", slot_in, uin + sin)
                uin += 1
            yield None                                   # the epilogue

    for u in range(min(sin, ntiles * PIECES)):           # warp 0's first stages of both rings
        issue("in", u, u)
    for u in range(min(sw, ntiles * PIECES * PAIRS)):
        issue("w", u, u)
    procs = {w: consumer(w) for w in wgs}
    waiting = {w: next(procs[w], "done") for w in wgs}
    while now < steps:
        now += 1
        for f in [f for f in in_flight if f[0] <= now and rng.random() < 0.7]:
            in_flight.remove(f)
            _, r, slot, u = f
            ring[r]["done"][slot] += 1
            ring[r]["content"][slot] = u
        ready = [w for w in wgs if waiting[w] != "done" and (waiting[w] is None or waiting[w]())]
        if not ready:
            if all(waiting[w] == "done" for w in wgs):
                assert not in_flight, f"fills left in flight at the end: {in_flight}"
                return stats
            if not in_flight:
                raise AssertionError(f"deadlock: consumers waiting, no fill in flight ({[w for w in wgs if waiting[w] != 'done']})")
            continue
        w = rng.choice(ready)
        waiting[w] = next(procs[w], "done")
    raise AssertionError("the rings stopped before every stage was taken")


def test_the_model_has_the_kernels_ring_depths():
    src = R.get("conv2d", "04e_wino_3xtf32").source_path.read_text()
    assert f"constexpr int SIN = {SIN}, SW = {SW};" in src
    assert f"constexpr int PIECE = 16, PIECES = CIN / PIECE;" in src and f"constexpr int PAIRS = {PAIRS};" in src


@pytest.mark.parametrize("ntiles", [0, 1, 2, 5])
@pytest.mark.parametrize("sin, sw", [(SIN, SW), (3, 4), (2, 6), (2, 2)])
@pytest.mark.parametrize("seed", range(3))
def test_the_rings_deliver_every_stage_in_order_without_overwriting_one_in_use(ntiles, sin, sw, seed):
    run_rings(ntiles, sin, sw, seed=seed)


def test_the_schedules_let_one_consumer_run_a_ring_ahead():
    """The random schedules reach the case the counters are for: one warpgroup as far ahead as the ring allows (it has
    taken the other SW - 1 stages; the next one waits for a slot only the other can free), and every stage is filled
    once."""
    runs = [run_rings(3, seed=s) for s in range(6)]
    assert max(r["lead"] for r in runs) == SW - 1
    assert all(r["fills"] == 3 * PIECES * (PAIRS + 1) for r in runs)


def test_a_refill_by_the_first_releaser_is_caught():
    """The checks have teeth: the warpgroup that releases a stage first must not refill it."""
    with pytest.raises(AssertionError, match="still need it"):
        run_rings(2, last_rule=lambda old: old % 2 == 0)


def test_a_wait_for_the_wrong_phase_is_caught():
    with pytest.raises(AssertionError, match="passed the wait"):
        run_rings(2, parity_lag=1)
