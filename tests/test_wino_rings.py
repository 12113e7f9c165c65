"""conv2d 04e's two rings (kernels/conv2d/04e_winograd_wgmma.cu: pair_step, release_is_last, fill_weights, fill_input,
the kernel's loop), modelled on the CPU under random schedules, before the kernel has run on a GPU.

The model follows the kernel: no producer; each consumer warpgroup waits on a stage's FULL mbarrier by parity, reads it,
then releases it by adding one to the slot's counter, and the consumer that releases it last (the counter's old value
odd: the second of two warpgroups; of four in clusters of two, `CF_WINO_CLUSTER`, where old % 4 == 3) refills the slot
with the stage SIN (SW) ahead, if there is one. An mbarrier phase completes when its fill lands, some time after it was
issued; a wait by parity passes whenever the barrier's completed phases differ in parity from the one asked for, as
`mbarrier.try_wait.parity` does, so a consumer two phases late would pass on a stale phase — the model checks that it
never is. `CF_WINO_SKEW`: warpgroup 1 starts after warpgroup 0's first pair (a named barrier). In the cluster build the
weight stages are one copy multicast to both blocks, counted in rank 0.

It fails on a fill issued into a slot whose stage a consumer has not yet released, a wait that passes on a phase other
than its stage's (stale or aliased data), a run that stops before every consumer has taken every stage (a deadlock),
or a fill left in flight at the end.
"""
import random

import pytest

PIECES, PAIRS = 4, 8          # cf04e: input stages a tile, weight stages an input stage


def run_rings(ntiles, sin=2, sw=4, skew=False, cluster=False, seed=0, last_rule=None, parity_lag=0, steps=400_000,
              per_step=1):
    """`ntiles`: tiles per block (a list of two in the cluster build: the ranks' counts). `last_rule(old, users)`: who
    refills (the kernel's: the last of the `users` releasers); `parity_lag`: a consumer that waits for a phase that
    many fills early (the bug the parity check is for); `per_step`: weight stages a step waits for, then releases in
    order (2: the TF32 build's CF_WINO_ROWS, a row of positions being two pairs' stages)."""
    rng = random.Random(seed)
    blocks = 2 if cluster else 1
    counts = list(ntiles) if cluster else [ntiles]
    wgs = [(b, w) for b in range(blocks) for w in (0, 1)]
    w_users = 2 * blocks
    last_rule = last_rule or (lambda old, users: old % users == users - 1)
    # per block: each ring slot's completed phases, content (the stage its last landed fill wrote), and who still
    # needs the stage in it (the consumers that have not released it)
    ring = {(b, r): {"done": [0] * n, "content": [None] * n, "holders": [set() for _ in range(n)]}
            for b in range(blocks) for r, n in (("in", sin), ("w", sw))}
    cnt = {("in", b): [0] * sin for b in range(blocks)}
    for b in range(blocks):
        cnt[("w", b)] = [0] * sw
    in_flight = []                                       # (landing time, block, ring, slot, stage)
    skew_arrived = [False] * blocks
    taken = {k: 0 for k in wgs}                          # weight stages each consumer has taken
    stats = {"fills": 0, "lead": 0}                      # the most weight stages one consumer got ahead of another
    now = 0

    def issue(b, r, slot, u, users):
        h = ring[(b, r)]["holders"][slot]
        assert not h, f"{r} stage {u} issued into slot {slot} of block {b} while consumers {sorted(h)} still need it"
        h.update(users)
        stats["fills"] += 1
        in_flight.append((now + rng.randint(1, 40), b, r, slot, u))

    def fill_weights(b, slot, u):                        # rank 0's counter; both blocks' slots in the cluster build
        for bb in (range(blocks) if cluster else (b,)):
            issue(bb, "w", slot, u, {(bb, 0), (bb, 1)})

    def consumer(b, w):
        wtotal, intotal = counts[b] * PIECES * PAIRS, counts[b] * PIECES
        uin = uw = 0

        def wait(r, u, n):                               # mbar_wait(full + u % n, (u / n) & 1), then what it passed on
            h, slot = ring[(b, r)], u % n
            yield lambda: h["done"][slot] % 2 != (u // n - parity_lag) % 2
            assert h["done"][slot] == u // n + 1 and h["content"][slot] == u, \
                f"consumer {(b, w)} passed the wait for {r} stage {u} on slot {slot}'s phase {h['done'][slot]} " \
                f"(stage {h['content'][slot]})"

        if skew and w == 1 and counts[b] > 0:
            yield lambda: skew_arrived[b]
        for _ in range(counts[b]):
            for _ in range(PIECES):
                slot_in, h = uin % sin, ring[(b, "in")]
                yield from wait("in", uin, sin)
                g = ring[(b, "w")]
                for _ in range(PAIRS // per_step):
                    for k in range(per_step):
                        yield from wait("w", uw + k, sw)
                    taken[(b, w)] += per_step
                    stats["lead"] = max(stats["lead"], max(taken.values()) - min(taken.values()))
                    yield None                           # the step's fragments and wgmmas
                    for k in range(per_step):            # release_is_last and the refill, stage by stage
                        slot = (uw + k) % sw
                        g["holders"][slot].discard((b, w))
                        c = cnt[("w", 0 if cluster else b)]
                        old, c[slot] = c[slot], c[slot] + 1
                        if last_rule(old, w_users) and uw + k + sw < wtotal:
                            fill_weights(b, slot, uw + k + sw)
                    uw += per_step
                    if skew and w == 0 and uw == per_step:
                        skew_arrived[b] = True
                    yield None                           # the step's adds into Y
                h["holders"][slot_in].discard((b, w))
                c = cnt[("in", b)]
                old, c[slot_in] = c[slot_in], c[slot_in] + 1
                if last_rule(old, 2) and uin + sin < intotal:
                    issue(b, "in", slot_in, uin + sin, {(b, 0), (b, 1)})
                uin += 1
            yield None                                   # the epilogue

    # warp 0's first stages of both rings (weights: rank 0 for the cluster)
    for b in range(blocks):
        for u in range(min(sin, counts[b] * PIECES)):
            issue(b, "in", u, u, {(b, 0), (b, 1)})
        if b == 0 or not cluster:
            for u in range(min(sw, counts[b] * PIECES * PAIRS)):
                fill_weights(b, u, u)
    procs = {k: consumer(*k) for k in wgs}
    waiting = {k: None for k in wgs}
    for k in wgs:
        waiting[k] = next(procs[k], "done")
    while now < steps:
        now += 1
        for f in [f for f in in_flight if f[0] <= now and rng.random() < 0.7]:
            in_flight.remove(f)
            _, b, r, slot, u = f
            ring[(b, r)]["done"][slot] += 1
            ring[(b, r)]["content"][slot] = u
        ready = [k for k in wgs if waiting[k] != "done" and (waiting[k] is None or waiting[k]())]
        if not ready:
            if all(waiting[k] == "done" for k in wgs):
                assert not in_flight, f"fills left in flight at the end: {in_flight}"
                return stats
            if not in_flight:
                raise AssertionError(f"deadlock: consumers waiting, no fill in flight ({[k for k in wgs if waiting[k] != 'done']})")
            continue
        k = rng.choice(ready)
        waiting[k] = next(procs[k], "done")
    raise AssertionError("the rings stopped before every stage was taken")


@pytest.mark.parametrize("ntiles", [0, 1, 2, 5])
@pytest.mark.parametrize("sin, sw", [(2, 4), (3, 4), (2, 6), (2, 2)])
@pytest.mark.parametrize("skew", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_rings_deliver_every_stage_in_order_without_overwriting_one_in_use(ntiles, sin, sw, skew, seed):
    run_rings(ntiles, sin, sw, skew=skew, seed=seed)


@pytest.mark.parametrize("ntiles", [1, 3])
@pytest.mark.parametrize("sw", [2, 4, 6])
@pytest.mark.parametrize("skew", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_rows_of_two_stages_each_are_delivered_the_same_way(ntiles, sw, skew, seed):
    """CF_WINO_ROWS: a step waits for two consecutive weight stages and releases both (SW >= 2)."""
    run_rings(ntiles, 2, sw, skew=skew, seed=seed, per_step=2)


@pytest.mark.parametrize("ntiles", [1, 3])
@pytest.mark.parametrize("skew", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_clusters_of_two_share_the_weight_stages_without_overwriting_one_in_use(ntiles, skew, seed):
    run_rings([ntiles, ntiles], skew=skew, cluster=True, seed=seed)


def test_the_schedules_let_one_consumer_run_a_ring_ahead():
    """The random schedules reach the case the counters are for: one warpgroup as far ahead as the ring allows (it has
    taken the other SW - 1 stages; the next one waits for a slot only the other can free), and every stage is filled
    once per block."""
    runs = [run_rings(3, seed=s) for s in range(6)]
    assert max(r["lead"] for r in runs) == 4 - 1
    assert all(r["fills"] == 3 * PIECES * (PAIRS + 1) for r in runs)
    assert run_rings([2, 2], cluster=True)["fills"] == 2 * (2 * PIECES * PAIRS + 2 * PIECES)


def test_a_refill_by_the_first_releaser_is_caught():
    """The checks have teeth: the warpgroup that releases a stage first must not refill it."""
    with pytest.raises(AssertionError, match="still need it"):
        run_rings(2, last_rule=lambda old, users: old % users == 0)


def test_a_wait_for_the_wrong_phase_is_caught():
    with pytest.raises(AssertionError, match="passed the wait"):
        run_rings(2, parity_lag=1)


def test_cluster_ranks_with_different_tile_counts_deadlock():
    """Why a rank-1 block past the last tile computes it again (winograd.k04e_tiles): rank 0's weight counter needs
    all four warpgroups' releases, so a block with fewer stages would leave the other waiting for ever."""
    with pytest.raises(AssertionError, match="deadlock"):
        run_rings([2, 1], cluster=True)


def test_rows_in_a_ring_of_one_stage_deadlock():
    """Why the kernel asserts SW >= 2 with CF_WINO_ROWS: a row's second stage can never be filled into a ring of one."""
    with pytest.raises(AssertionError, match="deadlock"):
        run_rings(2, 2, 1, per_step=2)
