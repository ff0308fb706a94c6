#!/usr/bin/env python3
# wgmma-ring-model.py -- a model of attn_wgmma's K/V ring protocol (kernels/attention/attn_wgmma.cu): the
# producer thread (FA_KVREL 0: one release a stage; 1: K and V released separately; 2: also V loaded one tile
# behind K), 2 or 3 consumer warpgroups running the pipelined loop (FA_PIPE=1, with the turns) or the plain
# one, TMA loads and wgmma groups completing at random times, persistent CTAs of 1-5 K/V tiles a tile, in
# random interleavings. It checks: no deadlock, every wgmma reads the item it wants, no TMA write into a slot
# that a wgmma still reads. Not modelled: Q and qempty, FA_START's early loads, the mask.
#   python3 kernels/attention/wgmma-ring-model.py          # every configuration, 2000 runs each: exit 0
#   python3 kernels/attention/wgmma-ring-model.py --bug    # negative control: K released before its
#                                                          # Q·Kᵀ's wait (fails under FA_KVREL=2)
import random, sys
BUG = "--bug" in sys.argv

class Bar:  # mbarrier: count arrivals + tx; phase parity flips when both done
    def __init__(s, count): s.count = count; s.pending = count; s.tx = 0; s.phase = 0
    def arrive(s):
        s.pending -= 1; s._chk()
    def expect(s):  # arrive.expect_tx by the producer (one arrival) + one tx
        s.tx += 1; s.pending -= 1; s._chk()
    def txdone(s):
        s.tx -= 1; s._chk()
    def _chk(s):
        assert s.pending >= 0
        if s.pending == 0 and s.tx == 0:
            s.phase ^= 1; s.pending = s.count
    def done(s, parity):  # mbar_wait(b, parity) returns when the phase with that parity completed
        return s.phase != parity

def run(seed, KVREL, ST, NW=2, tiles=None, PIPE=1):
    rnd = random.Random(seed)
    if tiles is None:
        tiles = [rnd.randint(1, 5) for _ in range(rnd.randint(1, 4))]
    kfull = [Bar(1) for _ in range(ST)]; vfull = [Bar(1) for _ in range(ST)]
    empty = [Bar(NW) for _ in range(ST)]
    vempty = [Bar(NW) for _ in range(ST)] if KVREL else empty
    kslot = [None] * ST; vslot = [None] * ST
    reads = {}  # ('K'|'V', slot) -> count of wgmma reads in flight
    tma = []    # in-flight TMA: (kind, slot, item, bar)
    wg_groups = [[] for _ in range(NW)]  # per WG: list of commit groups, each a list of (kind, slot, item)
    tokens = [0] * NW
    errors = []

    def tma_issue(kind, s, item, bar):
        if reads.get((kind, s), 0):
            errors.append("TMA write into %s slot %d while read" % (kind, s))
        tma.append((kind, s, item, bar))

    def load_v(i):
        sv = i % ST; ph = ((i // ST) & 1) ^ 1
        if KVREL:
            yield lambda: vempty[sv].done(ph)
        vfull[sv].expect(); tma_issue('V', sv, i, vfull[sv])

    def producer():
        it = 0
        for nt in tiles:
            for j in range(nt):
                s = it % ST; ph = ((it // ST) & 1) ^ 1
                yield lambda s=s, ph=ph: empty[s].done(ph)
                kfull[s].expect(); tma_issue('K', s, it, kfull[s])
                if KVREL == 2:
                    if j > 0:
                        yield from load_v(it - 1)
                else:
                    yield from load_v(it)
                it += 1
            if KVREL == 2:
                yield from load_v(it - 1)

    def issue(c, ops):
        for kind, s, item in ops:
            slot = kslot if kind == 'K' else vslot
            if slot[s] != item:
                errors.append("WG%d reads %s slot %d: has %s, wants %s" % (c, kind, s, slot[s], item))
            reads[(kind, s)] = reads.get((kind, s), 0) + 1
        wg_groups[c].append(list(ops))

    def wait_groups(c, n):
        return lambda: len(wg_groups[c]) <= n

    def consumer(c):
        it = 0
        for nt in tiles:
            if c == NW - 1:
                tokens[(c + 1) % NW] += 1
            s = it % ST
            yield lambda s=s, p=(it // ST) & 1: kfull[s].done(p)
            yield lambda: tokens[c] > 0
            tokens[c] -= 1
            issue(c, [('K', s, it)])
            if not (c == NW - 1 and nt == 1):
                tokens[(c + 1) % NW] += 1
            yield wait_groups(c, 0)
            if KVREL: empty[s].arrive()
            for j in range(1, nt):
                s = (it + j) % ST; sp = (it + j - 1) % ST
                yield lambda s=s, p=((it + j) // ST) & 1: kfull[s].done(p)
                yield lambda sp=sp, p=((it + j - 1) // ST) & 1: vfull[sp].done(p)
                yield lambda: tokens[c] > 0
                tokens[c] -= 1
                issue(c, [('K', s, it + j)])
                issue(c, [('V', sp, it + j - 1)])
                if not (c == NW - 1 and j == nt - 1):
                    tokens[(c + 1) % NW] += 1
                if BUG and KVREL: empty[s].arrive()
                yield wait_groups(c, 1)
                if KVREL and not BUG: empty[s].arrive()
                yield wait_groups(c, 0)
                vempty[sp].arrive()
            sl = (it + nt - 1) % ST
            yield lambda sl=sl, p=((it + nt - 1) // ST) & 1: vfull[sl].done(p)
            issue(c, [('V', sl, it + nt - 1)])
            yield wait_groups(c, 0)
            vempty[sl].arrive()
            it += nt

    def consumer_plain(c):
        it = 0
        for nt in tiles:
            for j in range(nt):
                s = (it + j) % ST; p = ((it + j) // ST) & 1
                yield lambda s=s, p=p: kfull[s].done(p)
                issue(c, [('K', s, it + j)])
                yield wait_groups(c, 0)
                if KVREL: empty[s].arrive()
                yield lambda s=s, p=p: vfull[s].done(p)
                issue(c, [('V', s, it + j)])
                yield wait_groups(c, 0)
                vempty[s].arrive()
            it += nt

    agents = {'P': producer()}
    for c in range(NW): agents['C%d' % c] = consumer(c) if PIPE else consumer_plain(c)
    waits = {k: (lambda: True) for k in agents}
    steps = 0
    while True:
        cands = [k for k in agents if waits[k]()]
        if tma: cands.append('TMA')
        if any(wg_groups): cands.append('TC')
        if not cands:
            if agents: return "DEADLOCK %s tiles=%s" % (sorted(agents), tiles)
            break
        a = rnd.choice(cands); steps += 1
        if a == 'TMA':
            i = rnd.randrange(len(tma)); kind, s, item, bar = tma.pop(i)
            (kslot if kind == 'K' else vslot)[s] = item; bar.txdone()
        elif a == 'TC':
            c = rnd.choice([c for c in range(NW) if wg_groups[c]])
            for kind, s, item in wg_groups[c].pop(0):   # groups complete in order
                reads[(kind, s)] -= 1
        else:
            try:
                waits[a] = next(agents[a])
            except StopIteration:
                del agents[a]; del waits[a]
        if errors: return "ERROR " + errors[0] + " tiles=%s" % tiles
    return None

bad = 0
for PIPE, NW in ((1, 2), (1, 3), (0, 2), (0, 3)):
  for KVREL in (0, 1, 2):
    for ST in (2, 3, 4):
        n = 0
        for seed in range(2000):
            r = run(seed, KVREL, ST, NW=NW, PIPE=PIPE)
            if r: bad += 1; n += 1; print("PIPE=%d NW=%d KVREL=%d ST=%d seed=%d: %s" % (PIPE, NW, KVREL, ST, seed, r)) if n <= 2 else None
        print("PIPE=%d NW=%d KVREL=%d ST=%d: %d of 2000 runs failed" % (PIPE, NW, KVREL, ST, n))
sys.exit(1 if bad else 0)
