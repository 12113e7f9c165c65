"""conv2d 04d's CF_POOL candidate (kernels/conv2d/04d_register_a_wgmma.cu: pool_producer, pool_acquire), modelled on the
CPU: one pool of P stages for two consumers, dealt by need, under random schedules.

The model follows the kernel's producer turn by turn (take back each consumer's oldest slot once its EMPTY phase has
completed, then give free slots, one box each, to the consumer with fewer boxes held, at most P - 1 each) and its
consumers (wait for the ticket of their next box, read its slot, work for a while, release it). It fails on a slot
given while a consumer still holds it, a box out of a consumer's order, a ticket re-armed before its consumer took the
box it announced, or a run that stops before every box is taken.
"""
import random

import pytest

QN = 8


def run_pool(pool, tiles_per_consumer, nchunk=8, seed=0, epilogue=40, steps=200_000, careless=False):
    """`careless`: a producer that takes a slot back without waiting for its EMPTY phase (the bug the checks are for)."""
    rng = random.Random(seed)
    boxes = [[(t, c) for t in range(n) for c in range(nchunk)] for n in tiles_per_consumer]
    # producer state, as in pool_producer
    cur = [dict(next=0, held=0, fifo=[], seq=0) for _ in range(2)]
    freemask = set(range(pool))
    empty_done = {s: 0 for s in range(pool)}        # completed EMPTY phases per slot
    empty_seen = {s: 0 for s in range(pool)}        # the producer's parity: phases it has taken back
    holder = {}                                      # slot -> consumer holding it (given, not yet taken back)
    ticket_armed = [[None] * QN for _ in range(2)]   # (seq, landing time) of the box each ticket announces
    qslot = [[None] * QN for _ in range(2)]
    cons = [dict(seq=0, busy=0, slot=None, done=0) for _ in range(2)]
    most_held = [0, 0]
    content = {}                                     # slot -> (consumer, box) the last copy into it wrote
    now = 0
    while now < steps:
        now += 1
        # the producer's turn
        if rng.random() < 0.5:
            for k in (0, 1):
                c = cur[k]
                if c["held"] and (careless or empty_done[c["fifo"][0]] > empty_seen[c["fifo"][0]]):
                    s = c["fifo"].pop(0)
                    empty_seen[s] = max(empty_seen[s] + 1, empty_done[s]) if careless else empty_seen[s] + 1
                    c["held"] -= 1
                    del holder[s]
                    freemask.add(s)
            while freemask:
                more = [cur[k]["next"] < len(boxes[k]) and cur[k]["held"] < pool - 1 for k in (0, 1)]
                if more[1] and (not more[0] or cur[1]["held"] < cur[0]["held"]):
                    k = 1
                elif more[0]:
                    k = 0
                else:
                    break
                s = min(freemask)
                freemask.remove(s)
                assert s not in holder, f"slot {s} given while consumer {holder[s]} holds it"
                holder[s] = k
                c = cur[k]
                c["fifo"].append(s)
                c["held"] += 1
                most_held[k] = max(most_held[k], c["held"])
                q = c["seq"] % QN
                prev = ticket_armed[k][q]
                assert prev is None or cons[k]["seq"] > prev[0], f"ticket {q} of consumer {k} re-armed too early"
                qslot[k][q] = (s, boxes[k][c["next"]])
                content[s] = (k, boxes[k][c["next"]])
                ticket_armed[k][q] = (c["seq"], now + rng.randint(1, 30))     # the copy lands later
                c["seq"] += 1
                c["next"] += 1
        # each consumer's turn
        for k in (0, 1):
            w = cons[k]
            if w["busy"] > 0:
                w["busy"] -= 1
                if w["busy"] == 0:                         # the chunk's wgmmas issued: the box released
                    assert content[w["slot"]] == (k, w["box"]), f"slot {w['slot']} overwritten while consumer {k} read it"
                    empty_done[w["slot"]] += 1
                    w["slot"] = None
                continue
            if w["done"] == len(boxes[k]):
                continue
            q = w["seq"] % QN
            armed = ticket_armed[k][q]
            if armed is None or armed[0] != w["seq"] or armed[1] > now:
                continue                                   # its ticket's phase has not completed
            s, box = qslot[k][q]
            assert box == boxes[k][w["done"]], f"consumer {k} got {box}, expected {boxes[k][w['done']]}"
            assert content[s] == (k, box), f"slot {s} overwritten before consumer {k} read it"
            w["slot"], w["box"], w["seq"], w["done"] = s, box, w["seq"] + 1, w["done"] + 1
            w["busy"] = rng.randint(5, 12) * (2 if cons[1 - k]["busy"] else 1) \
                + (epilogue if w["done"] % nchunk == 0 else 0)
        if all(cons[k]["done"] == len(boxes[k]) and cons[k]["slot"] is None for k in (0, 1)):
            return most_held
    raise AssertionError("the pool stopped before every box was taken")


@pytest.mark.parametrize("pool", [3, 5, 6])
@pytest.mark.parametrize("tiles", [(3, 3), (4, 2), (1, 0), (0, 2), (5, 4)])
@pytest.mark.parametrize("seed", range(4))
def test_the_pool_deals_every_box_in_order_without_overwriting_a_held_slot(pool, tiles, seed):
    run_pool(pool, tiles, seed=seed)


def test_a_consumer_alone_gets_more_than_two_chunks_of_lead():
    """The point of the pool: while one consumer sits in its epilogue, the other holds three or four boxes, where a
    ring of two stages would give it two."""
    assert max(max(run_pool(5, (6, 6), seed=s, epilogue=80)) for s in range(4)) >= 4


def test_a_producer_that_does_not_wait_for_empty_is_caught():
    """The model's checks have teeth: taking a slot back before its consumer released it overwrites a box in use."""
    with pytest.raises(AssertionError, match="overwritten"):
        run_pool(5, (3, 3), seed=0, careless=True)
