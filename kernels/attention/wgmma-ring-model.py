#!/usr/bin/env python3
# wgmma-ring-model.py -- a model of attn_wgmma's K/V ring protocol (kernels/attention/attn_wgmma.cu): the
# producer thread (FA_KVREL 0: one release a stage; 1: K and V released separately; 2: also V loaded one tile
# behind K), 2 or 3 consumer warpgroups running the pipelined loop (FA_PIPE=1, with the turns) or the plain
# one, TMA loads and wgmma groups completing at random times, persistent CTAs of 1-5 K/V tiles a tile, in
# random interleavings. Also modelled: the Q buffers (FA_QBUF 1|2: qfull, qempty, the consumers' release after
# the tile's last Q·Kᵀ, the producer's final qfull arrival that stops them), FA_START's early loads (bit 2:
# the first tile's Q, K_0 and V_0 before the loop) and late Q (bits 4, 16), and the plain loop's skipped K/V
# tiles at three warpgroups (a causal warpgroup past its own diagonal, or one whose 64 rows are all >= S:
# nact < ntiles; it only waits for the stage and releases it, lines "for (int j = nact; j < ntiles; j++)").
# The causal mask's arithmetic is not modelled, only which warpgroups read which tiles.
# It checks: no deadlock, every wgmma reads the item it wants (K, V and Q), no TMA write into a slot that a
# wgmma still reads or is about to read (issued while the write is in flight, or in flight when it lands).
#   python3 kernels/attention/wgmma-ring-model.py          # every configuration (144), 2000 runs each: exit 0
#                                                          # (about 25 minutes; `... 300` about 4)
#   python3 kernels/attention/wgmma-ring-model.py --bug    # negative control: K released before its
#                                                          # Q·Kᵀ's wait (fails under FA_KVREL=2)
#   python3 kernels/attention/wgmma-ring-model.py --skipbug  # b51e4c1's skipped tiles: V's release (vempty)
#       # without waiting for V to land (fails under FA_KVREL=1|2 at three plain warpgroups: stale reads,
#       # TMA writes under a wgmma, and deadlocks, as on the H100 on D=64 causal shapes of 192-row tiles)
#   python3 kernels/attention/wgmma-ring-model.py --qrace  # adversarial start: in half the runs the producer
#       # thread (after FA_START's early loads) runs only when nothing else can (see run()); passes with the fix
#   python3 kernels/attention/wgmma-ring-model.py --qwait0 [--qrace]  # the kernel before the fix: the producer
#       # also waits on qempty for its first QBUF tiles. Passes only under the old timing assumption (that
#       # first wait runs before the consumers can release tile 0's Q); with --qrace it deadlocks in the held
#       # runs where FA_START & 2 and the first tile has one K/V tile (every FA_KVREL, both loops)
#   python3 kernels/attention/wgmma-ring-model.py --carry  # FA_CARRY's configurations only (two pipelined
#       # warpgroups, one Q buffer in halves, the pipeline carried across tiles: consumer_carry below);
#       # the full run includes them. Controls, each of which the model must catch:
#       # --carrybug=1 a Q half released right after its last Q·Kᵀ is issued, before wait_group 1 (TMA writes
#       #   under a wgmma); 2 the producer loads half 1 after waiting for half 0's release only (the same);
#       # 3 the last warpgroup skips its hand-over at a tile's last iteration as without FA_CARRY (deadlock).
#       # FA_CARRY=2 (CARRY=2: the Q halves and the producer's order, each tile's loop alone: consumer_halves)
#       # is in --carry too; controls 1 and 2 apply to it, 3 does not (its turns are the old tile-local ones)
#   python3 kernels/attention/wgmma-ring-model.py N        # N runs a configuration instead of 2000
import random, sys
BUG = "--bug" in sys.argv
SKIPBUG = "--skipbug" in sys.argv
QRACE = "--qrace" in sys.argv
QWAIT0 = "--qwait0" in sys.argv
NRUNS = next((int(a) for a in sys.argv[1:] if a.isdigit()), 2000)
CARRYONLY = "--carry" in sys.argv
CARRYBUG = next((int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("--carrybug=")), 0)

class Overarrive(Exception): pass

class Bar:  # mbarrier: count arrivals + tx; phase parity flips when both done
    def __init__(s, count): s.count = count; s.pending = count; s.tx = 0; s.phase = 0
    def arrive(s):
        s.pending -= 1; s._chk()
    def expect(s):  # arrive.expect_tx by the producer (one arrival) + one tx
        s.tx += 1; s.pending -= 1; s._chk()
    def txdone(s):
        s.tx -= 1; s._chk()
    def _chk(s):
        if s.pending < 0:   # an arrival past the phase's count (e.g. a second expect_tx before the first
            raise Overarrive()   # load landed): undefined on the hardware, an error here
        if s.pending == 0 and s.tx == 0:
            s.phase ^= 1; s.pending = s.count
    def done(s, parity):  # mbar_wait(b, parity) returns when the phase with that parity completed
        return s.phase != parity   # (the hardware keeps only the parity: two phases ahead reads as not done)

def run(seed, KVREL, ST, NW=2, tiles=None, PIPE=1, QB=2, START=15, CARRY=0):
    rnd = random.Random(seed)
    QS = 2 if CARRY else QB   # Q barrier slots: FA_CARRY's halves of one buffer (one a warpgroup)
    # FA_CARRY: also a CTA of the one-CTA-per-tile grid (a fifth of the runs): one tile, no stop arrival,
    # the CTA's last P·V without a turn
    persist = not CARRY or rnd.random() < 0.8
    if tiles is None:
        tiles = []
        for _ in range(rnd.randint(1, 4)):
            nt = rnd.randint(1, 5)
            # tiles each warpgroup reads: all of them, except at three plain warpgroups (the kernel's
            # nact): a causal warpgroup stops at its diagonal, one past S reads none; one has them all
            if NW >= 3 and not PIPE:
                nact = [rnd.choice((nt, nt, rnd.randint(0, nt))) for _ in range(NW)]
                nact[rnd.randrange(NW)] = nt
            else:
                nact = [nt] * NW
            tiles.append((nt, nact))
    if not persist:
        tiles = tiles[:1]
    kfull = [Bar(1) for _ in range(ST)]; vfull = [Bar(1) for _ in range(ST)]
    empty = [Bar(NW) for _ in range(ST)]
    vempty = [Bar(NW) for _ in range(ST)] if KVREL else empty
    qfull = [Bar(1) for _ in range(QS)]; qempty = [Bar(1 if CARRY else NW) for _ in range(QS)]
    slots = {'K': [None] * ST, 'V': [None] * ST, 'Q': [None] * QS}
    tslot = [None] * QS   # the tile number beside each Q buffer (half): its index n, or len(tiles) to stop
    reads = {}  # ('K'|'V'|'Q', slot) -> count of wgmma reads in flight
    tma = []    # in-flight TMA: (kind, slot, item, bar)
    wg_groups = [[] for _ in range(NW)]  # per WG: list of commit groups, each a list of (kind, slot, item)
    tokens = [0] * NW
    errors = []

    def tma_issue(kind, s, item, bar):
        if reads.get((kind, s), 0):
            errors.append("TMA write into %s slot %d while read" % (kind, s))
        bar.expect(); tma.append((kind, s, item, bar))

    def load_v(i):
        sv = i % ST; ph = ((i // ST) & 1) ^ 1
        if KVREL:
            yield lambda: vempty[sv].done(ph)
        tma_issue('V', sv, i, vfull[sv])

    def producer():
        it = 0
        if START & 2:   # before __syncthreads: the first tile's Q (both halves: FA_CARRY), K_0, V_0
            for h in range(QS if CARRY else 1):
                tslot[h] = 0; tma_issue('Q', h, 0, qfull[h])
            tma_issue('K', 0, 0, kfull[0]); tma_issue('V', 0, 0, vfull[0])
        if QRACE:
            yield lambda: True   # __syncthreads: what follows may come at any time
        for n in range(len(tiles) + 1):
            if not persist and n == 1:
                return   # one CTA per tile: nothing to announce
            qb = n % QB
            if n >= QB or QWAIT0:   # the first QB buffers start free: no wait (the fix)
                yield lambda qb=qb, p=((n // QB) & 1) ^ 1: qempty[qb].done(p)
            if not ((START & 2) and n == 0):
                tslot[qb] = n
            if n == len(tiles):
                qfull[qb].arrive()   # tslot >= tiles: the consumers stop
                if CARRY:   # warpgroup 1's half, once it is free
                    yield lambda p=(n & 1) ^ 1: qempty[1].done(p)
                    tslot[1] = n; qfull[1].arrive()
                return
            nt = tiles[n][0]
            early = (START & 2) and n == 0
            qlate = (START & 4) and QB == 2 and n > 0
            if not early and not qlate:
                tma_issue('Q', qb, n, qfull[qb])
            for j in range(nt):
                if early and j == 0:
                    it += 1; continue
                s = it % ST; ph = ((it // ST) & 1) ^ 1
                yield lambda s=s, ph=ph: empty[s].done(ph)
                tma_issue('K', s, it, kfull[s])
                if qlate and j == (min(1, nt - 1) if START & 16 else 0):
                    tma_issue('Q', qb, n, qfull[qb])
                if KVREL == 2:
                    if j > 0 and not (early and j == 1):
                        yield from load_v(it - 1)
                else:
                    yield from load_v(it)
                if CARRY and j == 0:   # warpgroup 1's half after the first stage
                    if n >= 1 and CARRYBUG != 2:   # the control: no wait for half 1's release
                        yield lambda p=(n & 1) ^ 1: qempty[1].done(p)
                    tslot[1] = n; tma_issue('Q', 1, n, qfull[1])
                it += 1
            if KVREL == 2 and not (early and nt == 1):
                yield from load_v(it - 1)

    def issue(c, ops):
        for kind, s, item in ops:
            if slots[kind][s] != item:
                errors.append("WG%d reads %s slot %d: has %s, wants %s" % (c, kind, s, slots[kind][s], item))
            if any(k == kind and t == s for k, t, _, _ in tma):
                errors.append("WG%d reads %s slot %d (item %s) while a TMA writes it" % (c, kind, s, item))
            reads[(kind, s)] = reads.get((kind, s), 0) + 1
        wg_groups[c].append(list(ops))

    def wait_groups(c, n):
        return lambda: len(wg_groups[c]) <= n

    def wait_q(n):
        qb = n % QB
        return lambda: qfull[qb].done((n // QB) & 1)

    def read_tslot(c, h, n):   # the consumer reads the tile number beside Q after its qfull wait
        if tslot[h] != n:
            errors.append("WG%d reads tslot[%d] = %s, wants %d" % (c, h, tslot[h], n))

    def turn(c):   # turn_wait: bar.sync on this warpgroup's named barrier
        yield lambda: tokens[c] > 0
        tokens[c] -= 1

    def pv_alone(c, v):   # a tile's last P·V by itself (no turn): wait for V item v, read it, release it
        sl = v % ST
        yield lambda sl=sl, p=(v // ST) & 1: vfull[sl].done(p)
        issue(c, [('V', sl, v)])
        yield wait_groups(c, 0)
        vempty[sl].arrive()

    def half_turn(c, n, k, last, pass_turn, v=None, wait_v=True):
        # one turn of a Q-half consumer (FA_CARRY=1|2): S = Q·Kᵀ of Q half c (tile n) with K item k, then
        # (v given) P·V of V item v, whose vfull wait comes after K's unless wait_v is false (done before);
        # the turn passed on if pass_turn; the half released once this Q·Kᵀ is done if it is the tile's
        # last (last), or before (the control --carrybug=1)
        s = k % ST
        yield lambda s=s, p=(k // ST) & 1: kfull[s].done(p)
        if v is not None:
            sv = v % ST
            if wait_v:
                yield lambda sv=sv, p=(v // ST) & 1: vfull[sv].done(p)
        yield from turn(c)
        issue(c, [('Q', c, n), ('K', s, k)])
        if v is not None:
            issue(c, [('V', sv, v)])
        if pass_turn:
            tokens[(c + 1) % NW] += 1
        if CARRYBUG == 1 and last: qempty[c].arrive()
        yield wait_groups(c, 0 if v is None else 1)
        if KVREL: empty[s].arrive()
        if last and CARRYBUG != 1: qempty[c].arrive()
        if v is not None:
            yield wait_groups(c, 0)
            vempty[sv].arrive()

    def consumer_carry(c):
        # FA_CARRY (attn_wgmma.cu, the `if constexpr (C::CARRY)` consumer): Q half c; the tile's last P·V
        # with the next tile's first Q·Kᵀ; the half released once the tile's last Q·Kᵀ is done
        it = 0; n = 0
        yield lambda: qfull[c].done(0)
        read_tslot(c, c, 0)
        nt = tiles[0][0]
        if c == NW - 1:
            tokens[(c + 1) % NW] += 1
        yield from half_turn(c, n, it, nt == 1, not (c == NW - 1 and nt == 1 and not persist))
        while True:
            for j in range(1, nt):
                last_pass_skipped = c == NW - 1 and j == nt - 1 and (not persist or CARRYBUG == 3)
                yield from half_turn(c, n, it + j, j == nt - 1, not last_pass_skipped, v=it + j - 1)
            sl = (it + nt - 1) % ST
            yield lambda sl=sl, p=((it + nt - 1) // ST) & 1: vfull[sl].done(p)
            last = True
            if persist:
                n += 1
                yield lambda p=n & 1: qfull[c].done(p)
                read_tslot(c, c, n)
                last = n >= len(tiles)
            if last:
                if persist:
                    yield from turn(c)
                issue(c, [('V', sl, it + nt - 1)])
                if persist and c != NW - 1:
                    tokens[(c + 1) % NW] += 1
                yield wait_groups(c, 0)
                vempty[sl].arrive()
                return
            # the next tile's first Q·Kᵀ with this tile's last P·V (its vfull waited above)
            it2 = it + nt; nt2 = tiles[n][0]
            yield from half_turn(c, n, it2, nt2 == 1, True, v=it + nt - 1, wait_v=False)
            it = it2; nt = nt2

    def consumer(c):
        it = 0
        for n, (nt, _) in enumerate(tiles):
            qb = n % QB
            yield wait_q(n)
            read_tslot(c, qb, n)
            if c == NW - 1:
                tokens[(c + 1) % NW] += 1
            s = it % ST
            yield lambda s=s, p=(it // ST) & 1: kfull[s].done(p)
            yield lambda: tokens[c] > 0
            tokens[c] -= 1
            issue(c, [('Q', qb, n), ('K', s, it)])
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
                issue(c, [('Q', qb, n), ('K', s, it + j)])
                issue(c, [('V', sp, it + j - 1)])
                if not (c == NW - 1 and j == nt - 1):
                    tokens[(c + 1) % NW] += 1
                if BUG and KVREL: empty[s].arrive()
                yield wait_groups(c, 1)
                if KVREL and not BUG: empty[s].arrive()
                yield wait_groups(c, 0)
                vempty[sp].arrive()
            qempty[qb].arrive()   # release_q: every Q·Kᵀ of the tile is done
            yield from pv_alone(c, it + nt - 1)
            it += nt
        yield wait_q(len(tiles))
        read_tslot(c, len(tiles) % QB, len(tiles))

    def consumer_halves(c):
        # FA_CARRY=2 (attn_wgmma.cu, the consumer without FA_CARRY with qs = c): Q half c, each tile's loop
        # alone (tile-local turns), the half released once the tile's last Q·Kᵀ is done; the producer as
        # for FA_CARRY=1. One-CTA-per-tile runs: one tile, no stop arrival to wait for
        it = 0
        for n, (nt, _) in enumerate(tiles):
            yield lambda p=n & 1: qfull[c].done(p)
            read_tslot(c, c, n)
            if c == NW - 1:
                tokens[(c + 1) % NW] += 1
            yield from half_turn(c, n, it, nt == 1, not (c == NW - 1 and nt == 1))
            for j in range(1, nt):
                yield from half_turn(c, n, it + j, j == nt - 1, not (c == NW - 1 and j == nt - 1), v=it + j - 1)
            yield from pv_alone(c, it + nt - 1)
            it += nt
        if persist:
            yield lambda p=len(tiles) & 1: qfull[c].done(p)
            read_tslot(c, c, len(tiles))

    def consumer_plain(c):
        it = 0
        for n, (nt, nact) in enumerate(tiles):
            qb = n % QB
            yield wait_q(n)
            read_tslot(c, qb, n)
            for j in range(nact[c]):
                s = (it + j) % ST; p = ((it + j) // ST) & 1
                yield lambda s=s, p=p: kfull[s].done(p)
                issue(c, [('Q', qb, n), ('K', s, it + j)])
                yield wait_groups(c, 0)
                if KVREL: empty[s].arrive()
                if j == nt - 1: qempty[qb].arrive()
                yield lambda s=s, p=p: vfull[s].done(p)
                issue(c, [('V', s, it + j)])
                yield wait_groups(c, 0)
                vempty[s].arrive()
            for j in range(nact[c], nt):   # past this warpgroup's tiles: wait for the stage, release it
                s = (it + j) % ST; p = ((it + j) // ST) & 1
                yield lambda s=s, p=p: kfull[s].done(p)
                if j == nt - 1: qempty[qb].arrive()
                empty[s].arrive()
                if KVREL:
                    if not SKIPBUG:   # V's half only once V has landed (b51e4c1 released it unwaited)
                        yield lambda s=s, p=p: vfull[s].done(p)
                    vempty[s].arrive()
            it += nt
        yield wait_q(len(tiles))
        read_tslot(c, len(tiles) % QB, len(tiles))

    agents = {'P': producer()}
    for c in range(NW):
        agents['C%d' % c] = (consumer_carry(c) if CARRY == 1 else consumer_halves(c) if CARRY == 2 else
                             consumer(c) if PIPE else consumer_plain(c))
    waits = {k: (lambda: True) for k in agents}
    if QWAIT0 and not QRACE:
        # the kernel before the fix: the producer thread's first wait (qempty[0], parity 1 on a fresh
        # barrier: passes) comes a few instructions after __syncthreads, before the consumers can have done
        # tile 0's GEMMs and released its Q. An assumption of timing, not a guarantee: if the release came
        # first (FA_START & 2 and a first tile of one K/V tile) the wait would read phase 0's completion as
        # "not done" and wait for a phase that never comes (a deadlock, KVREL=0 too). With the fix there
        # is no such wait and the model assumes no order
        waits['P'] = next(agents['P'])
        assert waits['P'](); waits['P'] = lambda: True
    # --qrace: the early loads (before __syncthreads) first; then in half the runs the producer is held
    # until nothing else can run, the latest start any timing allows
    if QRACE:
        waits['P'] = next(agents['P'])
    hold = QRACE and rnd.random() < 0.5
    steps = 0
    while True:
        cands = [k for k in agents if waits[k]()]
        if tma: cands.append('TMA')
        if any(wg_groups): cands.append('TC')
        if hold:
            if cands == ['P']: hold = False
            elif 'P' in cands: cands.remove('P')
        if not cands:
            if agents: return "DEADLOCK %s tiles=%s" % (sorted(agents), tiles)
            break
        a = rnd.choice(cands); steps += 1
        if a == 'TMA':
            i = rnd.randrange(len(tma)); kind, s, item, bar = tma.pop(i)
            if reads.get((kind, s), 0):
                errors.append("TMA of %s item %d landed in slot %d while a wgmma reads it" % (kind, item, s))
            slots[kind][s] = item; bar.txdone()
        elif a == 'TC':
            c = rnd.choice([c for c in range(NW) if wg_groups[c]])
            for kind, s, item in wg_groups[c].pop(0):   # groups complete in order
                reads[(kind, s)] -= 1
        else:
            try:
                waits[a] = next(agents[a])
            except StopIteration:
                del agents[a]; del waits[a]
            except Overarrive:
                errors.append("%s arrives on a mbarrier past its phase's count" % a)
        if errors: return "ERROR " + errors[0] + " tiles=%s" % tiles
    if any(tokens):   # a turn handed over that no warpgroup took (bar.arrive never matched)
        return "ERROR turn passes never taken: %s tiles=%s" % (tokens, tiles)
    return None

# the configurations: (PIPE, NW, QB, START, CARRY) x FA_KVREL x stages; FA_CARRY: two pipelined warpgroups,
# one Q buffer (D=128's), FA_START 15 or 0 (its bits 4 and 16 need two Q buffers)
CONFS = [(PIPE, NW, QB, START, 0) for PIPE, NW in ((1, 2), (1, 3), (0, 2), (0, 3))
         for QB, START in ((2, 15), (1, 15), (2, 0), (2, 31))]
CONFS += [(1, 2, 1, START, CARRY) for CARRY in (1, 2) for START in (15, 0)]
if CARRYONLY:
    CONFS = [x for x in CONFS if x[4]]
bad = 0
for PIPE, NW, QB, START, CARRY in CONFS:
  for KVREL in (0, 1, 2):
    for ST in (2, 3, 4):
        n = 0
        for seed in range(NRUNS):
            r = run(seed, KVREL, ST, NW=NW, PIPE=PIPE, QB=QB, START=START, CARRY=CARRY)
            if r: bad += 1; n += 1; print("PIPE=%d NW=%d KVREL=%d ST=%d QBUF=%d START=%d CARRY=%d seed=%d: %s" % (PIPE, NW, KVREL, ST, QB, START, CARRY, seed, r)) if n <= 2 else None
        print("PIPE=%d NW=%d KVREL=%d ST=%d QBUF=%d START=%d CARRY=%d: %d of %d runs failed" % (PIPE, NW, KVREL, ST, QB, START, CARRY, n, NRUNS))
sys.exit(1 if bad else 0)
