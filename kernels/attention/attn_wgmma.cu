/* attn_wgmma.cu -- attention forward on Hopper's own instructions: TMA + mbarrier ring + wgmma (issue 11,
 * rung 3b: the first FlashAttention-3-class step).  sm_90a only.
 *
 * DESIGN
 *   One CTA = 3 warpgroups for 128 query rows of one (b, h) (at D=64 4 warpgroups, 192 rows: FA_CWG below):
 *     warpgroup 0 (producer, setmaxnreg 24): one thread issues TMA loads: the Q tile once, then K and V
 *       tiles of BN = 128 keys into a ring of FA_STAGES stages, K and V on separate "full" mbarriers so
 *       S = Q·Kᵀ can start before V has landed; a stage is refilled when all 8 consumer warps released it.
 *     warpgroups 1, 2 (consumers, setmaxnreg 240): 64 query rows each.  Per K/V tile:
 *       S(64x128)  = Q·Kᵀ     wgmma m64n128k16, both operands from 128B-swizzled shared memory (K-major:
 *                             D is contiguous in Q and in K), D/16 instructions, one commit group
 *       online softmax       in registers; a row's 4 owners (a quad) reduce with two shuffles; exp2 with
 *                             log2(e)/sqrt(D) folded into the scale
 *       P (FP16)             the S accumulator's fragment is the register-A fragment of the next wgmma
 *                             (accumulator layout of m64nN == A layout of m64k16, per warp): no smem
 *       O(64xD)   += P·V      wgmma m64nDk16 with A from registers and B = V through an N-major
 *                             (imm-trans-b) 128B-swizzled descriptor: V is [keys, D] with D contiguous
 *     FA_PIPE=1 (the default for D=128 and D=64's non-causal S <= 1024) pipelines the loop: S_j = Q·K_jᵀ
 *     and O += P_{j-1}·V_{j-1} are issued as two commit groups together; wait_group 1 lets tile j's
 *     softmax run while P_{j-1}·V_{j-1} is still in the tensor cores (intra-warpgroup overlap), then O
 *     is rescaled once that GEMM is done. The two
 *     consumer warpgroups take turns issuing their GEMMs (named barriers 1 and 2: bar.sync for my turn,
 *     bar.arrive to hand it over), so one's softmax runs under the other's GEMMs (ping-pong).
 *     FA_PIPE=0 (the default for the rest of D=64): the plain loop (S, wait, softmax, P·V, wait) of
 *     the first version. At D=64 the GEMMs are half as long against the same softmax and the turns cost
 *     more than they hide (H100, direct runs of one build, before the TMA-store epilogue and FA_START:
 *     B16 H16 S512 62.3 -> 57.1 us, S1024 196.8 -> 184.4, B4 H16 S4096 699.6 -> 676.1 with the plain
 *     loop), at D=128 the pipeline wins (994 vs 1012 us). With both (FA_OTMA, FA_START=15) two
 *     pipelined warpgroups beat three plain ones on short non-causal D=64 problems (H100,
 *     wgmma-variants.sh, medians of 5: B16 H16 S512 51.68 -> 50.14 us, B1 H8 S512 11.46 -> 11.07)
 *     but not on causal ones (B16 H16 S512 causal 43.01 -> 43.62) nor on long ones (PIPE2_SMAX),
 *     hence the rule by problem (FA_CWG and FA_PIPE unset): D=64 non-causal S <= 1024 runs
 *     <64, 2, 1>, the rest as FA_CWG=0 below with the plain loop. The loop is a template parameter of
 *     the kernel (PP); FA_PIPE=0|1 forces one loop everywhere (FA_PIPE=0 with FA_CWG=0 is dff3f1c's
 *     rule: three plain warpgroups for every D=64 grid of 192-row tiles that fills the GPU).
 *   Layout in shared memory: every tile is D/64 column blocks of rows x 128 B, as the 3-D tensor maps
 *   ({D, S, B*H}, box 64 x rows x 1, 128B swizzle) write them; TMA zero-fills rows >= S inside each
 *   (b, h) plane, and keys >= S are masked to -inf.  Causal CTAs stop after their diagonal tile and mask
 *   only there; heavy (causal) query blocks are launched first.  Any S >= 1; D is 64 or 128.
 *   Shared memory: (FA_QBUF * 128 + 2 * FA_STAGES * 128) * D * 2 bytes + 1.25 KB: 225 KB for D=128 (3
 *   stages: 515 TFLOPS at B4 H16 S4096 against 484 with 2, first H100 run), 161 KB for D=64 (4 stages,
 *   2 Q buffers: the producer loads tile n+1's Q while tile n runs, where one buffer had it wait for
 *   tile n's last Q·Kᵀ: B16 H16 S512 D64 65.1 -> 62.3 us pipelined, 60.5 -> 57.1 plain, same run).
 *
 *   FA_CWG (D=64): consumer warpgroups a CTA. 3: 192 query rows, 4 warpgroups of 128 threads, setmaxnreg
 *   24 for the producer and 160 for the consumers (24 + 3 x 160 fill the 64 K registers); at D=64 a
 *   warpgroup's softmax (64 exp2 a thread on the MUFU) takes about as long as its two GEMMs, and with
 *   three warpgroups two can keep the tensor pipe busy while one exponentiates; K/V tiles are also read
 *   by 3 query blocks a head instead of 4. The warpgroup of a 192-row block with no row < S skips its
 *   GEMMs, and causal warpgroups skip the K/V tiles past their own diagonal (both still wait for each
 *   stage to fill before they release it). 0 (the default): non-causal problems of S <= 1024 2,
 *   pipelined (above, FA_PIPE); the others 3 when the grid of 192-row tiles has a tile for every SM,
 *   else 2 (a problem that does not fill the GPU runs faster on more, shorter CTAs).
 *   H100, direct runs of one build, medians of 2: B16 H16 S512 61.0-61.6 -> 56.6-56.9 us, causal
 *   52.2-52.7 -> 46.4-46.8, B4 H16 S4096 D64 696-705 -> 645-649; B1 H8 S512 (24 CTAs of 192 rows)
 *   11.8-12.0 -> 14.9-15.0 with 3, hence 2 there. D=128 keeps 2 (240 registers a consumer).
 *   FA_PIPE=1 with 3 warpgroups turns through 3 named barriers; it was slower at D=64 (S512 59.4-63.0
 *   us with or without turns, FA_TURNS=0|1).
 *   FA_PTURNS=1: the plain loop's warpgroups take turns issuing each GEMM (the ring of FA_PIPE's
 *   turns, two turns a K/V tile, empty ones past a warpgroup's own tiles). Slower: S512 56.5 -> 63.7
 *   us with 3 warpgroups, 65.0 with 2; tensor pipe 38.0 -> 33.8 % active (a warpgroup that is ready
 *   waits for the one before it in the ring).
 *   FA_QKZ=1: Q·Kᵀ's first k-step overwrites S (wgmma scale-d 0 from a predicate register) instead
 *   of zeroing S first. Slower: S512 55.9-56.4 -> 58.4-58.5 us, D128 S4k 989 -> 1003; ncu: 19.53 M
 *   warp instructions against 19.02 M, tensor pipe 37.9 -> 36.4 %.
 *   FA_SMAX: the softmax's row maximum as a tree over the raw scores, scaled once (1, bit-identical
 *   results), or a chain of scaled maxima (0, the first version).
 *   FA_EXH (D=64's plain loop; off): 1 the exponentials as ex2.approx.f16x2 straight into P, 2 FP32
 *   exponentials with only the row sum l from an HADD2 tree over the packed P. Both slower (H100, medians
 *   of 2 against the default in the same run): S512 59.6 (1) and 58.6 (2) us against 56.0-56.4, causal
 *   49.0-49.5 and 47.3-47.5 against 46.2-46.7; ex2.approx.f16x2 is two MUFU.EX2.F16 on sm_90 (ncu
 *   +6 % instructions), and 2 cut 3.4 % of the instructions but raised the wait stalls. rel_l2 at D=64
 *   4.0-4.3e-4 (1), 2.9e-4 (2), 2.6e-4 (0).
 *
 *   FA_PERSIST: 1 a persistent grid (one CTA per SM walking tiles: the producer loads the next tile's
 *   Q and K/V while the consumers finish the last one), 2 that for non-causal problems and one CTA per
 *   tile for causal ones, 0 one CTA per tile. FA_SCHED: how a persistent CTA finds its next tile, 1
 *   from a global counter (the producer thread's atomicAdd when it starts a tile, handed to the
 *   consumers in shared memory with the Q tile's mbarrier; the last CTA resets the counter for the
 *   next launch), 0 every gridDim.x-th tile. Defaults, from one H100 run against f544e0b's kernel
 *   (static persistent walk for non-causal, one CTA per tile for causal), medians of 2 each:
 *     D=64:  FA_PERSIST=1, FA_SCHED=1. Causal B16 H16 S512 59.6-59.9 -> 52.2-52.5 us (the counter
 *            balances uneven causal tiles as the hardware's CTA scheduler does, and the next tile's
 *            loads overlap; a static walk stayed at 60.8-61.4), non-causal 64.8-65.4 -> 61.2-61.3.
 *     D=128: FA_PERSIST=2, FA_SCHED=0, as before: the counter cost 4 % non-causal (1041-1049 against
 *            999 us at B4 H16 S4096) and the persistent grid 5 % causal (593 against 563-567).
 *   One kernel does all: launched with a CTA per tile, each CTA takes its own tile and stops.
 *
 *   FA_CWGMAX=4 (a knob, off; not yet run on a GPU): four consumer warpgroups at D=64, BM = 256, K/V
 *   tiles of BN = 64 keys, setmaxnreg 112 (see fcfg below).
 *
 *   TUNING (compile time, each for both D unless said): -DFA_CWG=0|2|3|4 (D=64), -DFA_CWGMAX=3|4 (D=64),
 *   -DFA_STAGES4=2..8, -DFA_PIPE=0|1,
 *   -DFA_TURNS=0|1, -DFA_PTURNS=0|1, -DFA_SMXORD=0|1|2 (the softmax before the wait for P·V: 1 at D=128), -DFA_QKZ=0|1, -DFA_SMAX=0|1, -DFA_EXH=0|1, -DFA_PERSIST=0|1|2, -DFA_SCHED=0|1,
 *   -DFA_OTMA=0|1 (D=64's epilogue: direct stores, or shared memory + TMA store, the default),
 *   -DFA_OTMQ=0|1 (D=128's epilogue of a CTA's last tile through its Q rows + TMA store, the default),
 *   -DFA_DESCADD=0|1 (a GEMM's k-step descriptors as its first plus an offset, the default; 0: each rebuilt),
 *   -DFA_PVSPLIT=1|2|4 (the plain loop's P·V in parts), -DFA_EMU=0|2|4|6|8 (exponentials on the FMA pipe,
 *   D=64's plain loop; at D=128, and the row sums in partial sums, tried and removed: docs/kernels.md),
 *   -DFA_START=0..31 (bits: the start of a tile, see below),
 *   -DFA_STAGES=N (2..4; D=128 fits 3), -DFA_QARR=256|8 (qempty arrivals: every consumer thread, or
 *   lane 0 of each warp after __syncwarp),
 *   -DFA_QBUF=1|2 (D=128 fits 1), -DFA_PLANT_BUG=1 (negative control: V's descriptor with LBO and SBO
 *   swapped: wrong results at D=64 and D=128),
 *   -DFA_BN128=128|160|176|192 (keys a K/V tile at D=128; over 128: 2 stages), -DFA_KVREL=0|1|2 (a stage's K
 *   and V released separately, FlashAttention-3's two pipelines; 2 also loads V one tile behind K). Both
 *   off. H100, 2026-11-25: no gain at D=128 (docs/kernels.md); FA_KVREL was wrong (2) or hung (1) on D=64
 *   causal shapes of three warpgroups (the skipped tiles' V release, fixed below; the fix not yet run on a
 *   GPU).
 *   -DFA_CARRY=0|1|2 (D=128's pipelined loop carried across the persistent grid's tiles, Q in per-warpgroup
 *   halves; 1, the default since 2026-11-26 (H100: -1.9 % non-causal, causal within its spread); 0: each
 *   tile's loop alone; 2 builds only its Q halves and producer order, to tell the parts apart),
 *   -DFA_QSHFL=0|1 (with FA_CARRY: the Q half's index through a shuffle, the default),
 *   -DFA_QAU=0|1|2 (Q's address from that index through a shuffle too, so its descriptors are uniform:
 *   1, the default, at D=128 only; 2 at every D, slower at D=64).
 */
#include "attn_common.cuh"
#include "../harness/harness.h"

#include "../hopper/hopper.cuh"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

const char attn_kernel_name[] = "attn_wgmma";

#ifndef FA_PLANT_BUG
#define FA_PLANT_BUG 0
#endif
#ifndef FA_QARR      /* qempty arrivals: 256 every consumer thread, 8 lane 0 of each warp after __syncwarp */
#define FA_QARR 256
#endif

constexpr int BN = 128;   /* keys a K/V tile; fcfg<D, CW>::BN: 64 for four consumer warpgroups */

/* FA_CWG: consumer warpgroups (64 query rows each) at D=64: 2, 3, or 0 = by problem (non-causal
 * S <= 1024 2, pipelined; the others 3 when the grid of 192-row tiles has at least one tile per SM,
 * else 2: pick_cwg); D=128 keeps 2 (240 registers a thread) */
#ifndef FA_CWG
#define FA_CWG 0
#endif
/* FA_CWGMAX=4 (D=64, off: 3): up to four consumer warpgroups, BM = 256 query rows, with K/V tiles of
 * BN = 64 keys (S = Q·Kᵀ is then 32 registers, not 64: at BN = 128 the consumer loop needs 136 registers
 * to run without spills, and with five warpgroups (640 threads: 96 at launch, the producer's
 * setmaxnreg 24 frees 9216) the consumers can rise to 112 at most; at BN = 64 ptxas fits 112 with no
 * spill). The rule (FA_CWG=0) then takes four when the grid of 256-row tiles has a tile for every SM;
 * FA_CWG=4 forces four at D=64. FA_STAGES4: the K/V ring's stages at four warpgroups (8 x 64 keys =
 * the 4 x 128 of three). */
#ifndef FA_CWGMAX
#define FA_CWGMAX 3
#endif
#ifndef FA_STAGES4
#define FA_STAGES4 8
#endif
#ifndef FA_SMAX      /* softmax row maximum: 1 a tree over the raw scores, scaled once; 0 a chain of scaled maxima */
#define FA_SMAX 1
#endif
#ifndef FA_DESCADD    /* 1: a GEMM's k-step descriptors as its first one plus a constant (one add on the low word),
		       * 0: each built from its address (mask, shift, or: about 7 uniform instructions an HGMMA).
		       * D=128's issue of a tile's 16 HGMMAs: 111 -> 69 instructions; H100, 3 interleaved rounds:
		       * D=128 S4k -0.6..-0.8 %, causal -0.6..-1.2 %, D=64 S512 -1.2..-3.9 % (docs/kernels.md) */
#define FA_DESCADD 1
#endif
#ifndef FA_QKZ        /* S = Q·Kᵀ: 1 its first k-step overwrites S (scale-d 0), 0 S is zeroed first */
#define FA_QKZ 0
#endif
#ifndef FA_PTURNS     /* plain loop: 1 the consumer warpgroups take turns issuing each GEMM (a ring), 0 not */
#define FA_PTURNS 0
#endif
#ifndef FA_TURNS     /* FA_PIPE=1: the consumer warpgroups take turns issuing their GEMMs (1) or not (0) */
#define FA_TURNS 1
#endif
static_assert(FA_TURNS == 0 || FA_TURNS == 1, "FA_TURNS must be 0 or 1");
/* FA_EXH=1 (a knob, off): the softmax's exponentials two at a time in FP16: x = s·scale·log2e − m in FP32,
 * pairs packed to f16x2 (cvt.rn.f16x2.f32), ex2.approx.f16x2 gives P as the P·V wgmma's A registers
 * directly (no FP32 exponentials, no pack after them, half the MUFU instructions); a row's P of the tile
 * summed as an FP16 tree of HADD2 (16 pairs to 1 a thread-row at BN = 128), then converted and added to
 * the FP32 row sum l. The plain loop only (D=64's default): in the pipelined loop (D=128) P_j would need
 * registers of its own while P_{j-1}·V_{j-1} is in flight, and with a copy into p after the wait ptxas
 * serialized the wgmmas (C7513) */
/* FA_EXH=2: the exponentials in FP32 as in the default (ex2.approx.f16x2 is two MUFU.EX2.F16 on sm_90),
 * P packed as before, and only l from the HADD2 tree over the packed P (no FP32 FADD per key) */
#ifndef FA_EXH
#define FA_EXH 0
#endif
/* FA_OTMA=1 (D=64, the default; 0: direct stores): the epilogue through shared memory and a TMA store:
 * each consumer warpgroup writes its 64 x 64 FP16 block of O into a 128B-swizzled 8 KB buffer of its own
 * (16-byte chunk XOR row % 8, as the tensor map reads it: a warp's 8 rows hit 8 different chunks), fences
 * the async proxy, meets its warpgroup at a named barrier (9 + c), and one thread issues the store (rows
 * >= S clipped by TMA) and goes on to the next tile; the buffer is reused once that store has read it
 * (cp.async.bulk.wait_group.read 0 before the first barrier of the next epilogue). The direct stores were
 * 16 STG.E of 4 bytes a thread (a warp's store: 8 rows x 16 bytes). H100, direct runs, medians of 2 in
 * one run: B16 H16 S512 D64 56.1-56.4 -> 52.0-52.3 us, causal 46.5-46.6 -> 42.7-43.4, B4 H16 S4096 D64
 * 623-625 -> 613-618; ncu at S512: tensor pipe 37.9 -> 40.9 % active, long-scoreboard stalls 1.39 ->
 * 1.13 an instruction. Not with the pipelined loop at three warpgroups (FA_PIPE=1 at D=64: ptxas spills
 * 88-104 bytes at 160 registers with it), nor at D=128 (no shared memory left). */
#ifndef FA_OTMA
#define FA_OTMA 1
#endif
/* FA_OTMQ=1 (D=128, the default; 0: direct stores): the epilogue through the Q buffer and a TMA store, in a CTA's last
 * tile (causal D=128 runs a CTA per tile; FA_CARRY=0: only in a CTA of one tile): each consumer warpgroup's O block goes into its own 64 rows of
 * Q's two 64-column boxes (128B-swizzled, as the tensor map reads them), which only its own Q·Kᵀ read and
 * which the producer never loads again (no next tile); two TMA stores of 64 x 64 a warpgroup, in place of
 * 64 direct 4-byte stores a thread. ncu's warp samples of causal D=128 (H100): "lg_throttle" and "drain"
 * 6.6 % of all samples, an epilogue WARPSYNC 3.3 %. Needs FA_OTMA (its tensor map of O). H100, 4
 * interleaved rounds: B4 H16 S4096 D128 causal 527.8-529.5 -> 508.8-512.2 us (-3.1 %), B2 H8 S1024 causal
 * 21.28-21.31 -> 20.19-20.77 us; non-causal S4096 (a persistent grid: direct stores still) the same. */
#ifndef FA_OTMQ
#define FA_OTMQ 1
#endif
static_assert(FA_OTMQ == 0 || FA_OTMQ == 1, "FA_OTMQ must be 0 or 1");
/* In the carried loop (FA_CARRY=1) the CTA's last tile goes out through its Q halves: no Q half comes
 * again. H100 (2026-11-26, 3 interleaved rounds, FA_CARRY=1 FA_QSHFL=1 against FA_CARRY=0): causal B4 H16
 * S4096 D128 522.8 / 518.6 / 523.0 us against 516.6 / 520.2 / 519.3 (without it the carried loop was
 * +3.5 %), B2 H8 S1024 causal 21.06 / 20.58 / 20.48 against 20.35 / 20.77 / 20.93. */
/* FA_PVSPLIT=2|4 (the plain loop; a knob, off = 1): a tile's P·V issued in 2 or 4 parts of 64 or 32 keys,
 * each as soon as its exponentials are done (the row maxima, alpha and O's rescale first, over all 128
 * keys), so the later keys' exponentials run while the first parts are in the tensor cores. H100, direct
 * runs, medians of 2: no gain (S512 D64 55.7-56.8 us against 56.1-56.5 without the TMA-store epilogue,
 * 52.1-52.5 against 52.1-52.3 with it; B4 H16 S4096 D64 614-630 against 613-628), and with FA_OTMA ptxas
 * spills 32 bytes at FA_PVSPLIT=4 */
#ifndef FA_PVSPLIT
#define FA_PVSPLIT 1
#endif
/* FA_EMU=2|4|6|8 (a knob, off = 0): of a thread's 16 groups of 4 exponentials a 128-key tile, FA_EMU are
 * computed on the FMA pipe (exp2_fma: 2^j by the exponent bits, 2^f by a degree-3 minimax polynomial,
 * relative error 7.5e-5) instead of the MUFU, whose queue the three warpgroups' softmax fills at D=64
 * (ncu's warp samples: 17 % of them on MUFU.EX2, mostly mio_throttle and wait). FlashAttention-4's trick.
 * Slower at three warpgroups (H100, medians of 2 against FA_EMU=0 in one run, S512 D64 52.0-52.2 us):
 * 2: 53.7-54.0, 4: 54.6-55.0, 8: 60.2-60.9; ncu at 4: 18.8 M -> 22.6 M warp instructions, tensor pipe
 * 40.9 -> 39.2 %. Faster only on the two-warpgroup grid of B1 H8 S512 (4: 11.55-11.58 against 12.1-12.2). */
#ifndef FA_EMU
#define FA_EMU 0
#endif
/* FA_START (bits; 15, the default since 2026-11-25; 0 = the earlier kernel, byte for byte until the producer
 * skipped its first QBUF qempty waits, see the producer loop): the start of a
 * tile, where the consumers' waits on a tile's Q and first
 * K stage were 6.9 % of ncu's warp samples at B16 H16 S512 D64 (mostly each CTA's first tile, loaded from
 * DRAM while every CTA loads at once).
 *   1: thread 0 prefetches the tensor maps' descriptors (prefetch.tensormap) before it initializes the
 *      mbarriers, so the first TMA does not wait for them;
 *   2: thread 0 issues the first tile's Q and its first K and V stage right after the mbarrier init, before
 *      the CTA's __syncthreads and the producer's setmaxnreg (the loop then skips those three loads);
 *   4: a persistent CTA's later tiles load their Q after their first K stage, not before waiting for that
 *      stage (D=64's two Q buffers only): at the start the second tile's Q no longer queues at DRAM in front
 *      of the first tile's K and V (132 x 24 KB);
 *   8: the consumers read the tile number beside Q with ld.shared (an LDS) instead of a volatile generic
 *      load (LD.E.STRONG.SYS, which waited behind a long scoreboard: 2.5 % of the samples);
 *  16: with 4, the Q after the tile's second K stage (its first when it has one).
 * H100, direct runs, medians of 2 and 3 interleaved in two calls (every check passes; memcheck, synccheck,
 * racecheck clean on B2 H12 S1000 D64 at 15 and 4): B16 H16 S512 D64 51.87-52.80 (0) -> 50.85-51.52 us (15),
 * 51.55-51.68 (6), 52.03-52.45 (4), 51.97-52.54 (11), 52.90-53.15 (9), 52.03-52.48 (20); causal 42.78-43.26
 * -> 42.18-42.78 (15); B1 H8 S512 11.65-12.29 -> 11.30-11.71 (15); B4 H16 S4096 D64 619-627 -> 618-623;
 * D=128 S4k 990 -> 993, causal 558 -> 551 (one run each). */
#ifndef FA_START
#define FA_START 15
#endif
#if FA_OTMA
#define FA_OMAP_PARAM , const __grid_constant__ CUtensorMap tmO
#define FA_OMAP_ARG , ws->o
#else
#define FA_OMAP_PARAM
#define FA_OMAP_ARG
#endif

/* FA_BN128 (a knob, off = 128): keys a K/V tile at D=128, 128, 160, 176 or 192 (FlashAttention-3 runs 176
 * at D=128 for non-causal problems). Q·Kᵀ is then one wgmma m64nBNk16 a k-step (hopper.cuh wgmma_n160/176/
 * 192), P·V BN/16 k-steps; S is BN/2 registers a thread and P BN/4, so the pipelined loop holds O (64) +
 * S_j (BN/2) + P_{j-1} (BN/4) = 196 at 176 against 160 at 128. A stage of K and V is 2 x BN x 256 bytes: 3
 * stages of 176 keys (296 KB) do not fit, so BN > 128 gets 2 (FA_STAGES overrides), where the pipelined
 * loop of 2 stages of 128 keys was slower than 3 (1151 against 1019 us at B4 H16 S4096 D128, before
 * FA_KVREL: a stage's K was held until its P·V was done). Larger tiles mean fewer per-tile costs a key
 * (O's rescale, the row maxima's shuffles, the turns, the barrier waits) and longer GEMMs between the
 * warpgroups' turns; the last tile of S = 4096 is 0.27 full at 176 (4224 keys computed, +3.1 %). */
#ifndef FA_BN128
#define FA_BN128 128
#endif
static_assert(FA_BN128 == 128 || FA_BN128 == 160 || FA_BN128 == 176 || FA_BN128 == 192, "FA_BN128 must be 128, 160, 176 or 192");
/* FA_KVREL=1 (a knob, off = 0): a stage's K and V are released separately (FlashAttention-3's two
 * pipelines): K once this warpgroup's S = Q·Kᵀ from it is done (the pipelined loop's wait_group 1), V
 * once its P·V is done; the producer waits for the K half before it loads K and for the V half (a second
 * mbarrier a stage, vempty) before it loads V. In the pipelined loop S_j and P_{j-1}·V_{j-1} run together,
 * so with one release a stage K_{j-1} stayed held until P_{j-1}·V_{j-1} had finished and a 2-stage ring
 * could not have K_{j+1} in flight while iteration j ran; with FA_KVREL it can (K_{j+1} goes into K_{j-1}'s
 * slot, freed in iteration j-1, V_j into V_{j-2}'s). For every kernel when set. */
/* FA_KVREL=2: that, and the producer loads V one tile behind K (K_0, then K_{j+1} before V_j, V_last after
 * the tile's last K), the order the pipelined loop reads them in (FlashAttention-3's producer): with 1 the
 * producer's wait for V_{j-1}'s stage comes before K_{j+ST}'s load, so K_{j+ST} cannot go before V_{j-1}'s
 * release at the end of iteration j even though K_j was released in its middle; with 2 it goes then. */
#ifndef FA_KVREL
#define FA_KVREL 0
#endif
static_assert(FA_KVREL == 0 || FA_KVREL == 1 || FA_KVREL == 2, "FA_KVREL must be 0, 1 or 2");
/* FA_CARRY=1 (the default; 0: off): D=128's pipelined loop carried across the persistent
 * grid's tiles. Without it each tile of a CTA starts and ends alone: the tile's last P·V is issued by itself
 * and waited for, then the epilogue's stores, then both warpgroups wait for the next tile's Q (one buffer at
 * D=128, released only after both warpgroups' last softmax), then the first Q·Kᵀ, its wait and softmax with
 * no P·V beside it. With it:
 *   - each consumer warpgroup's 64 rows of Q are a half with barriers of their own (qfull[c], qempty[c],
 *     tslot[c]; the Q tensor map's box is 64 rows), released as soon as that warpgroup's last S = Q·Kᵀ of
 *     the tile is done (wait_group 1 of the last iteration), not after the tile's last softmax;
 *   - the producer loads half 0 of the next tile as soon as warpgroup 0 released it, then the first K/V
 *     stage, then half 1 (warpgroup 1 is half an iteration behind in the ping-pong);
 *   - the tile's last P·V is issued together with the next tile's first Q·Kᵀ (one turn, two commit groups,
 *     as inside the loop), the next tile's first softmax runs while it is in the tensor cores, and the
 *     epilogue's stores follow its wait; the turns run on across tiles (the CTA's last P·V takes a turn).
 * D=128 pipelined two-warpgroup kernels only (<128, 2, 1>): the D=64 kernels are unchanged.
 * FA_CARRY=2 (a diagnostic): the Q halves, their early release and the producer's order of FA_CARRY=1, but
 * the consumer's loop without FA_CARRY (each tile ends alone: last P·V by itself, its wait, O's stores, then
 * the next tile's Q half). On the one-CTA-per-tile grid it runs the same protocol as FA_CARRY=1 in the old
 * loop's code, on the persistent grid FA_CARRY=1 without the carry. */
/* Measured (docs/kernels.md): H100, 2026-11-26, before the softmax order (FA_SMXORD) 3-4 % slower
 * non-causal; with it -2.0 % non-causal (948-955 against 967-973 us, B4 H16 S4096 D128) but +3.5 % causal
 * (no Q-buffer epilogue); with that epilogue (FA_OTMQ, its last tile) and FA_QSHFL, 3 interleaved rounds
 * against FA_CARRY=0: non-causal 945.5 / 944.4 / 942.9 against 964.1 / 959.9 / 963.0 us (-1.9 %), causal
 * 518.6-523.0 against 516.6-520.2 (+0.7 % by the medians, within the rounds' spread). The default. */
#ifndef FA_CARRY
#define FA_CARRY 1
#endif
static_assert(FA_CARRY == 0 || FA_CARRY == 1 || FA_CARRY == 2, "FA_CARRY must be 0, 1 or 2");
/* FA_QSHFL=1 (with FA_CARRY): the consumer's Q-half index c (its barriers qfull[c], qempty[c], tslot[c])
 * taken through __shfl_sync. Local SASS (nvcc 13.0): with the plain c in those addresses ptxas moves the
 * D=128 loop's address and wgmma-descriptor arithmetic off the uniform datapath (about 95 uniform
 * instructions of an iteration become vector ones plus 32 R2UR: 762 -> 787 (FA_CARRY=1) and 793 (2)
 * instructions from the first K/V wait to the softmax's end); with the shuffle it stays there (768 at 2) */
#ifndef FA_QSHFL
#define FA_QSHFL 1
#endif
/* FA_QAU: the consumer's Q address (sQ + c * 8 KB) from c through __shfl_sync too, so that ptxas can
 * keep Q's wgmma descriptors on the uniform datapath as it does K's and V's (0: from the plain c, whose
 * descriptors it builds in vector registers and moves over with R2UR). 1, the default: D=128 only;
 * 2: every D. H200 (2026-11-27, 3 interleaved rounds, docs/kernels.md): D=128's R2UR 59 -> 11, its
 * code 3304 -> 3224 instructions, B4 H16 S4096 non-causal -0.9..-1.8 %, causal the same; at D=64 fewer
 * instructions too (2168 -> 2144) but +0.5..+4 % slower (S512 both masks, S4096), so 1 leaves D=64 alone */
#ifndef FA_QAU
#define FA_QAU 1
#endif
static_assert(FA_QAU == 0 || FA_QAU == 1 || FA_QAU == 2, "FA_QAU must be 0, 1 or 2");
/* FA_SMXORD: the pipelined loop's softmax stays before its wait for P_{j-1}·V_{j-1}. ncu's warp samples
 * of D=128 (H200, 2026-11-26: B4 H16 S4096, non-causal) showed ptxas hoisting that wait_group 0
 * (WARPGROUP.DEPBAR.LE gsb0, 0x0) above the whole softmax -- 10 % of all samples stalled there -- so the
 * intra-warpgroup overlap of the source's order was lost. A shared store that never executes (predicated
 * on a sum of exponentials being negative) but reads every exponential, placed before the wait: ptxas keeps
 * memory operations on their side of the wait, so the exponentials issue before it (the wait now follows
 * the loop's 66 exp2, not 0). Measured (H200, 3 interleaved rounds): D=128 non-causal 971-974 -> 951-954 us,
 * causal 547-548 -> 540-542 us; D=64's pipelined loop (S512 non-causal) 50.0-50.2 -> 51.5-52.0 us, slower:
 * 1 (the default) D=128 only, 2 every pipelined loop, 0 off (the loop as before) */
#ifndef FA_SMXORD
#define FA_SMXORD 1
#endif
static_assert(FA_SMXORD == 0 || FA_SMXORD == 1 || FA_SMXORD == 2, "FA_SMXORD must be 0, 1 or 2");
__device__ __forceinline__ void smx_order(float v, uint32_t addr)
{
	asm volatile("{\n\t.reg .pred p;\n\tsetp.lt.f32 p, %0, 0f00000000;\n\t@p st.shared.f32 [%1], %0;\n}\n"
		     ::"f"(v), "r"(addr) : "memory");
}

/* FA_PIPE forced (0|1) for every kernel, or -1: by D and problem (pipe_for below) */
#ifdef FA_PIPE
constexpr int PIPE_FORCE = FA_PIPE;
#else
constexpr int PIPE_FORCE = -1;
#endif
static_assert(PIPE_FORCE == -1 || PIPE_FORCE == 0 || PIPE_FORCE == 1, "FA_PIPE must be 0 or 1");

/* PP: the loop, 1 pipelined, 0 plain; its default is D=128's pipelined and D=64's plain loop (the one
 * instantiation of D=64 that is pipelined by default is <64, 2, 1>, for non-causal problems: pipe_for) */
template <int D, int CW, int PP = (PIPE_FORCE >= 0 ? PIPE_FORCE : D == 128)> struct fcfg {
	static constexpr int CWG = CW;
	static constexpr int BM = 64 * CWG, NTHREADS = 128 * (CWG + 1);
	static constexpr int BN = CWG == 4 ? 64 : D == 128 ? FA_BN128 : ::BN;   /* keys a K/V tile */
#ifdef FA_STAGES
	static constexpr int STAGES = CWG == 4 ? FA_STAGES4 : FA_STAGES;
#else
	static constexpr int STAGES = CWG == 4 ? FA_STAGES4 : D == 64 ? 4 : BN > 128 ? 2 : 3;
#endif
	static constexpr int DB = D / 64;                       /* 64-column (128-byte) blocks per row */
	static constexpr int Q_BYTES = BM * D * 2, KV_BYTES = BN * D * 2;
#ifdef FA_PERSIST   /* 0: one CTA per tile; 1: persistent; 2: persistent unless causal */
	static constexpr int PERSIST = FA_PERSIST;
#else
	static constexpr int PERSIST = D == 64 ? 1 : 2;         /* measured: see DESIGN */
#endif
#ifdef FA_SCHED      /* persistent grid: 1 tiles from a global counter, 0 every gridDim.x-th tile */
	static constexpr int SCHED = FA_SCHED;
#else
	static constexpr int SCHED = D == 64 ? 1 : 0;
#endif
	static constexpr int PIPE = PP;                         /* measured: see DESIGN */
#ifdef FA_QBUF
	static constexpr int QBUF = FA_QBUF;
#else
	static constexpr int QBUF = D == 64 ? 2 : 1;            /* D=128: a second Q tile does not fit */
#endif
	/* FA_CARRY: the pipeline carried across tiles, Q in halves (QS barrier slots, a box of QROWS rows) */
	static constexpr int CARRY = FA_CARRY && D == 128 && PP && CW == 2 && QBUF == 1;
	static constexpr int QS = CARRY ? 2 : QBUF, QROWS = CARRY ? 64 : BM;
	/* FA_CARRY=1: the consumer's carried loop (XT); FA_CARRY=2: Q halves and the producer's order, with the
	 * loop of each tile alone (the consumer below without FA_CARRY, its Q barriers the halves') */
	static constexpr int XT = CARRY && FA_CARRY == 1;
	static constexpr int OTMA = FA_OTMA && D == 64 && !(PIPE && CWG == 3);   /* epilogue through smem + TMA store */
	static constexpr int O_BYTES = OTMA ? CWG * 64 * D * 2 : 0;
	static constexpr int OTMQ = FA_OTMA && FA_OTMQ && D == 128 && PIPE && !CARRY && CWG == 2;   /* see FA_OTMQ */
	static constexpr int OTMQX = FA_OTMA && FA_OTMQ && D == 128 && CARRY && FA_CARRY == 1;   /* the carried loop's */
	static constexpr int SMXORD = FA_SMXORD == 2 || (FA_SMXORD == 1 && D == 128);   /* see FA_SMXORD */
	static constexpr int BAR_BYTES = FA_KVREL ? 256 + 8 * STAGES : 256;   /* FA_KVREL: vempty, a stage */
	static constexpr size_t SMEM = (size_t)QBUF * Q_BYTES + 2 * (size_t)STAGES * KV_BYTES + O_BYTES + 1024 /* align */ + BAR_BYTES /* barriers */;
	static_assert((2 * QS + (FA_KVREL ? 4 : 3) * STAGES) * 8 + 4 * QS <= BAR_BYTES, "mbarriers over their bytes");
	static_assert(QBUF == 1 || QBUF == 2, "FA_QBUF must be 1 or 2");
	static_assert(CWG == 2 || CWG == 3 || (CWG == 4 && D == 64), "FA_CWG must be 2 or 3 (or 4 at D=64)");
	static constexpr int QARR = FA_QARR == 256 ? 128 * CWG : 4 * CWG;   /* qempty arrivals per tile */
	static_assert(STAGES >= 2 && STAGES <= (BN == 64 ? 8 : 4), "FA_STAGES must be 2..4 (FA_STAGES4 2..8)");
	static_assert(SMEM <= 227 * 1024, "shared memory over 227 KB: lower FA_STAGES");
};

__device__ __forceinline__ float fast_exp2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
	__half2 h = __floats2half2_rn(lo, hi);
	return *(uint32_t *)&h;
}

/* 2^x for x <= 0 on the FMA pipe (FA_EMU): x = j + f, j = rint(x) from the bits of x + 1.5 * 2^23,
 * f in [-0.5, 0.5], 2^f by a degree-3 minimax polynomial (relative error 7.5e-5 in FP32), then j added
 * to the exponent field; x is clamped at -126 so that 2^j 2^f stays a non-negative float (-inf gives
 * 2^-126 times ~1, which is 0 in FP16 and ~1e-38 in the row sum) */
__device__ __forceinline__ float exp2_fma(float x)
{
	x = fmaxf(x, -126.f);
	const float t = __fadd_rn(x, 12582912.f);
	const float f = __fsub_rn(x, __fsub_rn(t, 12582912.f));
	const float p = fmaf(fmaf(fmaf(0.0551716685f, f, 0.242611125f), f, 0.693260968f), f, 0.999928057f);
	return __int_as_float(__float_as_int(p) + (int)((unsigned)__float_as_int(t) << 23));
}

/* 2^x of both halves (FA_EXH): one MUFU instruction for two keys */
__device__ __forceinline__ uint32_t ex2_h2(uint32_t x)
{
	uint32_t y;
	asm("ex2.approx.f16x2 %0, %1;\n" : "=r"(y) : "r"(x));
	return y;
}

/* the sum of N f16x2 values as a tree of HADD2 (FA_EXH's row sums of P) */
template <int N> __device__ __forceinline__ __half2 hsum_tree(const uint32_t *v, int stride)
{
	if constexpr (N == 1) {
		return *(const __half2 *)&v[0];
	} else {
		return __hadd2(hsum_tree<N / 2>(v, stride), hsum_tree<N / 2>(v + (N / 2) * stride, stride));
	}
}

/* the maximum of N values as a balanced tree (FA_BN128's row maxima) */
template <int N> __device__ __forceinline__ float tree_max(const float *v)
{
	if constexpr (N == 1)
		return v[0];
	else
		return fmaxf(tree_max<N / 2>(v), tree_max<N - N / 2>(v + N / 2));
}

/* the epilogue's row sums: l of rows row0 and row1 summed over the 4 threads that share them (one
 * lane / 4), and their inverses (0 for a row without keys) */
__device__ __forceinline__ void row_sum_inv(float (&lr)[2], float &inv0, float &inv1)
{
#pragma unroll
	for (int h = 0; h < 2; h++) {
		lr[h] += __shfl_xor_sync(0xffffffff, lr[h], 1);
		lr[h] += __shfl_xor_sync(0xffffffff, lr[h], 2);
	}
	inv0 = lr[0] > 0.f ? 1.f / lr[0] : 0.f;
	inv1 = lr[1] > 0.f ? 1.f / lr[1] : 0.f;
}

/* the epilogue's direct stores: O / l as __half2 into out (one b*h's S x D block), rows r0 and r1
 * where < S; l is the lane */
template <int D>
__device__ __forceinline__ void store_o_rows(__half *out, const float (&o)[D / 2], float inv0, float inv1, int r0,
					     int r1, int S, int l)
{
#pragma unroll
	for (int i = 0; i < D / 2; i += 4) {
		const int col = 8 * (i / 4) + 2 * (l % 4);
		if (r0 < S)
			*(__half2 *)(out + (size_t)r0 * D + col) = __floats2half2_rn(o[i] * inv0, o[i + 1] * inv0);
		if (r1 < S)
			*(__half2 *)(out + (size_t)r1 * D + col) = __floats2half2_rn(o[i + 2] * inv1, o[i + 3] * inv1);
	}
}

template <int D> struct pv_t;
template <> struct pv_t<64> {
	static __device__ __forceinline__ void mma(float (&o)[32], const uint32_t (&a)[4], uint64_t b) { wgmma_rs_n64_tb(o, a, b); }
};
template <> struct pv_t<128> {
	static __device__ __forceinline__ void mma(float (&o)[64], const uint32_t (&a)[4], uint64_t b) { wgmma_rs_n128_tb(o, a, b); }
};

/* ---- consumer pieces ---- */

/* this thread is done with the tile's Q buffer (and the tile number it read beside it): every
 * consumer thread arrives (FA_QARR=256), or lane 0 for its warp after __syncwarp (8) */
__device__ __forceinline__ void release_q(uint64_t *qempty, int lane)
{
	if (FA_QARR == 256) {
		mbar_arrive(qempty);
	} else {
		__syncwarp();
		if (lane == 0)
			mbar_arrive(qempty);
	}
}

/* named barriers 1..NW: warpgroup c waits for its turn to issue GEMMs (barrier 1 + c), then passes it on
 * to warpgroup (c + 1) % NW; 256 threads each: the waiting warpgroup and the one handing over */
__device__ __forceinline__ void turn_wait(int c)
{
	if (FA_TURNS)
		asm volatile("bar.sync %0, 256;\n" ::"r"(1 + c) : "memory");
}
template <int NW> __device__ __forceinline__ void turn_pass(int c)
{
	if (FA_TURNS)
		asm volatile("bar.arrive %0, 256;\n" ::"r"(1 + (c + 1) % NW) : "memory");
}
/* the same ring for the plain loop (FA_PTURNS) */
__device__ __forceinline__ void pturn_wait(int c)
{
	if (FA_PTURNS)
		asm volatile("bar.sync %0, 256;\n" ::"r"(1 + c) : "memory");
}
template <int NW> __device__ __forceinline__ void pturn_pass(int c)
{
	if (FA_PTURNS)
		asm volatile("bar.arrive %0, 256;\n" ::"r"(1 + (c + 1) % NW) : "memory");
}

/* issue S = Q Kᵀ (zeroed first), one commit group: k-step ks reads 16 columns of D, block ks/4,
 * 32 bytes (ks%4) into the swizzled row */
template <int D, int BM, int BN>
__device__ __forceinline__ void issue_qk(float (&sc)[BN / 2], const unsigned char *qa, const unsigned char *k)
{
	if (!FA_QKZ) {
#pragma unroll
		for (int i = 0; i < BN / 2; i++)
			sc[i] = 0.f;
	}
	wgmma_fence();
	const uint64_t da0 = desc_sw128(qa, 1), db0 = desc_sw128(k, 1);
#pragma unroll
	for (int ks = 0; ks < D / 16; ks++) {
		const uint64_t da = FA_DESCADD ? desc_add(da0, (ks / 4) * BM * 128 + (ks % 4) * 32)
					       : desc_sw128(qa + (ks / 4) * BM * 128 + (ks % 4) * 32, 1),
			       db = FA_DESCADD ? desc_add(db0, (ks / 4) * BN * 128 + (ks % 4) * 32)
					       : desc_sw128(k + (ks / 4) * BN * 128 + (ks % 4) * 32, 1);
		if constexpr (BN != 128)
			acc_t<BN>::mma(sc, da, db);
		else if (FA_QKZ)   /* the first k-step overwrites S (wgmma scale-d = 0) */
			wgmma_n128_sd(sc, da, db, ks > 0);
		else
			wgmma_n128(sc, da, db);
	}
	wgmma_commit();
}

/* issue O += P V over k-steps k0 .. k1 of the tile, one commit group (issue_pv: all of them;
 * FA_PVSPLIT issues a tile in parts): k-step kk = keys 16kk..16kk+15 = V rows 16kk.., 2048 bytes
 * further in each 64-column block; A = S accumulator groups 2kk, 2kk+1 (p[4kk..4kk+3]) */
template <int D, int BN>
__device__ __forceinline__ void issue_pv_part(float (&o)[D / 2], const uint32_t (&p)[BN / 4], const unsigned char *v,
					      int k0, int k1)
{
	wgmma_fence();
	const uint64_t bd0 = desc_mn_sw128(v, BN * 128);
#pragma unroll
	for (int kk = k0; kk < k1; kk++) {
		const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
		uint64_t bd = FA_DESCADD ? desc_add(bd0, kk * 16 * 128) : desc_mn_sw128(v + kk * 16 * 128, BN * 128);
		if (FA_PLANT_BUG) /* LBO and SBO swapped */
			bd = (bd & ~((0x3FFFull << 16) | (0x3FFFull << 32))) | ((uint64_t)(1024 >> 4) << 16) |
			     ((uint64_t)(BN * 128 >> 4) << 32);
		pv_t<D>::mma(o, a, bd);
	}
	wgmma_commit();
}

template <int D, int BN>
__device__ __forceinline__ void issue_pv(float (&o)[D / 2], const uint32_t (&p)[BN / 4], const unsigned char *v)
{
	issue_pv_part<D, BN>(o, p, v, 0, BN / 16);
}

/* mask tile j, online softmax: sc becomes exp2(s * scale - max) (still FP32), mrow/lrow move on,
 * alpha is the factor for O. Accumulator element i: row row0 (i%4 < 2) or row1, key
 * n0 + 8(i/4) + 2(l%4) + i%2. rmin: this warpgroup's first row. */
template <int BN>
__device__ __forceinline__ void softmax_max(float (&sc)[BN / 2], int j, int S, int causal, int rmin, int row0,
					    int row1, int l, float scale_log2, float (&mrow)[2], float (&lrow)[2],
					    float (&alpha)[2], float (&base)[2])
{
	const int n0 = j * BN;
	if (n0 + BN > S || (causal && n0 + BN - 1 > rmin)) {
#pragma unroll
		for (int i = 0; i < BN / 2; i++) {
			const int key = n0 + 8 * (i / 4) + 2 * (l % 4) + (i % 2), row = (i % 4) < 2 ? row0 : row1;
			if (key >= S || (causal && key > row))
				sc[i] = -INFINITY;
		}
	}
	float mx[2] = {mrow[0], mrow[1]};
	if (FA_SMAX) {
		/* the row maximum of the raw scores as a tree (depth 5, not a chain of 16), scaled once:
		 * max(a s, b s) = max(a, b) s for s > 0 in any rounding, so the result is the same bits */
		static_assert(BN % 16 == 0, "the tree below takes groups of 16 keys");
		constexpr int NT = BN / 16;
		float t0[NT], t1[NT];
#pragma unroll
		for (int k = 0; k < NT; k++) {
			t0[k] = fmaxf(fmaxf(sc[8 * k], sc[8 * k + 1]), fmaxf(sc[8 * k + 4], sc[8 * k + 5]));
			t1[k] = fmaxf(fmaxf(sc[8 * k + 2], sc[8 * k + 3]), fmaxf(sc[8 * k + 6], sc[8 * k + 7]));
		}
		/* 4 or 8 groups, or with FA_BN128 > 128 10, 11 or 12 */
		const float r0 = tree_max<NT>(t0), r1 = tree_max<NT>(t1);
		mx[0] = fmaxf(mx[0], r0 * scale_log2);
		mx[1] = fmaxf(mx[1], r1 * scale_log2);
	} else {
#pragma unroll
		for (int i = 0; i < BN / 2; i += 4) {
			mx[0] = fmaxf(mx[0], fmaxf(sc[i], sc[i + 1]) * scale_log2);
			mx[1] = fmaxf(mx[1], fmaxf(sc[i + 2], sc[i + 3]) * scale_log2);
		}
	}
#pragma unroll
	for (int h = 0; h < 2; h++) {
		mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffff, mx[h], 1));
		mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffff, mx[h], 2));
		base[h] = mx[h] == -INFINITY ? 0.f : mx[h]; /* a row with no key yet: exp2(-inf) = 0 */
		alpha[h] = fast_exp2(mrow[h] - base[h]);
		mrow[h] = mx[h];
		lrow[h] *= alpha[h];
	}
}

/* sc[i0 .. i1) become exp2(s * scale - base) (FP32), their sums added to lrow; EMU: FA_EMU's groups on
 * the FMA pipe (D=64's plain loop only) */
template <int BN, int EMU = 0>
__device__ __forceinline__ void softmax_exp(float (&sc)[BN / 2], int i0, int i1, const float (&base)[2],
					    float scale_log2, float (&lrow)[2])
{
#pragma unroll
	for (int i = i0; i < i1; i += 4) {
		if (EMU && (i / 4) * EMU % 16 < EMU) {   /* FA_EMU of the 16 groups, spread out */
			sc[i] = exp2_fma(sc[i] * scale_log2 - base[0]);
			sc[i + 1] = exp2_fma(sc[i + 1] * scale_log2 - base[0]);
			sc[i + 2] = exp2_fma(sc[i + 2] * scale_log2 - base[1]);
			sc[i + 3] = exp2_fma(sc[i + 3] * scale_log2 - base[1]);
		} else {
			sc[i] = fast_exp2(sc[i] * scale_log2 - base[0]);
			sc[i + 1] = fast_exp2(sc[i + 1] * scale_log2 - base[0]);
			sc[i + 2] = fast_exp2(sc[i + 2] * scale_log2 - base[1]);
			sc[i + 3] = fast_exp2(sc[i + 3] * scale_log2 - base[1]);
		}
		lrow[0] += sc[i] + sc[i + 1];
		lrow[1] += sc[i + 2] + sc[i + 3];
	}
}

template <int BN, int EXH = 0, int EMU = 0>
__device__ __forceinline__ void softmax_tile(float (&sc)[BN / 2], int j, int S, int causal, int rmin, int row0,
					     int row1, int l, float scale_log2, float (&mrow)[2], float (&lrow)[2],
					     float (&alpha)[2], uint32_t (&ph)[BN / 4])
{
	static_assert(!EXH || (BN & (BN - 1)) == 0, "FA_EXH's HADD2 tree needs a power-of-two BN (not FA_BN128 > 128)");
	float base[2];
	softmax_max<BN>(sc, j, S, causal, rmin, row0, row1, l, scale_log2, mrow, lrow, alpha, base);
	if constexpr (EXH == 2) {
		/* FP32 exponentials as below, P packed here, l from the packed P (HADD2 tree) */
#pragma unroll
		for (int i = 0; i < BN / 2; i += 4) {
			ph[i / 2] = pack_half2(fast_exp2(sc[i] * scale_log2 - base[0]), fast_exp2(sc[i + 1] * scale_log2 - base[0]));
			ph[i / 2 + 1] = pack_half2(fast_exp2(sc[i + 2] * scale_log2 - base[1]), fast_exp2(sc[i + 3] * scale_log2 - base[1]));
		}
		const float2 s0 = __half22float2(hsum_tree<BN / 8>(&ph[0], 2)),
			     s1 = __half22float2(hsum_tree<BN / 8>(&ph[1], 2));
		lrow[0] += s0.x + s0.y;
		lrow[1] += s1.x + s1.y;
	} else if constexpr (EXH) {
		/* P straight into ph (the P·V A registers: row0's pairs at even indices, row1's at odd) */
#pragma unroll
		for (int i = 0; i < BN / 2; i += 4) {
			ph[i / 2] = ex2_h2(pack_half2(sc[i] * scale_log2 - base[0], sc[i + 1] * scale_log2 - base[0]));
			ph[i / 2 + 1] = ex2_h2(pack_half2(sc[i + 2] * scale_log2 - base[1], sc[i + 3] * scale_log2 - base[1]));
		}
		const float2 s0 = __half22float2(hsum_tree<BN / 8>(&ph[0], 2)),
			     s1 = __half22float2(hsum_tree<BN / 8>(&ph[1], 2));
		lrow[0] += s0.x + s0.y;
		lrow[1] += s1.x + s1.y;
	} else {
		softmax_exp<BN, EMU>(sc, 0, BN / 2, base, scale_log2, lrow);
	}
}

/* P (FP16 pairs) from the exponentials, in the register-A layout of the P V wgmma */
template <int BN>
__device__ __forceinline__ void pack_p(uint32_t (&p)[BN / 4], const float (&sc)[BN / 2])
{
#pragma unroll
	for (int i = 0; i < BN / 2; i += 4) {
		p[i / 2] = pack_half2(sc[i], sc[i + 1]);
		p[i / 2 + 1] = pack_half2(sc[i + 2], sc[i + 3]);
	}
}

#if FA_OTMA
/* FA_OTMQ: warpgroup c's O block (64 x D, scaled by inv0 / inv1) into its own 64 rows of Q's 64-column
 * boxes (128B-swizzled, as the tensor map reads them), then, by its thread 0, one TMA store a box; the
 * caller makes sure no Q comes into the buffer again and waits for the stores before the CTA exits */
template <int D, int BM>
__device__ __forceinline__ void otmq_store(const CUtensorMap *tmO, unsigned char *sQ, const float (&o)[D / 2],
					   float inv0, float inv1, int c, int w, int l, int tid, int m0, int bh)
{
	const int r0 = 16 * w + l / 4;   /* row0's row in this warpgroup's block; row1 = r0 + 8 */
#pragma unroll
	for (int i = 0; i < D / 2; i += 4) {
		const int chunk = i / 4, b = chunk / 8, cc = chunk % 8;   /* columns 8 chunk + 2 (l % 4) */
		unsigned char *a = sQ + b * BM * 128 + c * 64 * 128 + r0 * 128 + ((cc ^ (r0 % 8)) * 16) + (l % 4) * 4;
		*(__half2 *)a = __floats2half2_rn(o[i] * inv0, o[i + 1] * inv0);
		*(__half2 *)(a + 8 * 128) = __floats2half2_rn(o[i + 2] * inv1, o[i + 3] * inv1);
	}
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	bar_named(9 + c, 128);
	if (tid == 0) {
#pragma unroll
		for (int b = 0; b < D / 64; b++)
			tma_store_3d(tmO, sQ + b * BM * 128 + c * 64 * 128, b * 64, m0 + c * 64, bh);
		asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
	}
}
#endif

/* The kernel: CTA blockIdx.x takes tile blockIdx.x first, then (persistent grid) the next tile the
 * counter hands out (FA_SCHED=1) or tile + gridDim.x (0). Tiles are (query block, b*h), b*h
 * major so that the CTAs running at once share K and V in L2, a head's query blocks heaviest first
 * when causal. The producer runs on into the next tile's Q (once the consumers released its buffer:
 * qempty) and K/V (the ring's stages and phases go on across tiles), so a tile's first loads overlap
 * the previous tile's last GEMM and its epilogue. */
template <int D, int CW, int PP>
__global__ void __launch_bounds__(fcfg<D, CW, PP>::NTHREADS, 1)
attn_wgmma_kernel(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
			  const __grid_constant__ CUtensorMap tmV, __half *__restrict__ O, int S, int BH,
			  int causal, float scale_log2, unsigned *__restrict__ sched FA_OMAP_PARAM)
{
#if HP_DEVICE_OK
	using C = fcfg<D, CW, PP>;
	constexpr int ST = C::STAGES, DB = C::DB, BM = C::BM, NW = C::CWG, BN = C::BN;
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
	constexpr int QB = C::QBUF;
	unsigned char *sQ = smem, *sK = smem + QB * C::Q_BYTES, *sV = sK + (size_t)ST * C::KV_BYTES;
	unsigned char *sO = sV + (size_t)ST * C::KV_BYTES;   /* FA_OTMA: O blocks, one a consumer warpgroup */
	uint64_t *qfull = (uint64_t *)(sO + C::O_BYTES);
	/* QS: Q barrier slots, one a Q buffer, or (FA_CARRY) one a consumer warpgroup's half of the one buffer */
	constexpr int QS = C::QS;
	uint64_t *kfull = qfull + QS, *vfull = kfull + ST, *empty = vfull + ST, *qempty = empty + ST;
	/* FA_KVREL: empty[s] is the K half of a stage's release, vempty[s] the V half; else empty[s] both */
	uint64_t *vempty = FA_KVREL ? qempty + QS : empty;
	int *tslot = (int *)(qempty + QS + (FA_KVREL ? ST : 0));   /* the tile whose Q is in buffer b; >= tiles: no more */
	const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
	const int nblk = (S + BM - 1) / BM, tiles = nblk * BH;

	if (threadIdx.x == 0) {
		if (FA_START & 1) {
			hp_prefetch_tmap(&tmQ);
			hp_prefetch_tmap(&tmK);
			hp_prefetch_tmap(&tmV);
#if FA_OTMA
			if (C::OTMA)
				hp_prefetch_tmap(&tmO);
#endif
		}
		for (int b = 0; b < QS; b++) {
			mbar_init(&qfull[b], 1);
			/* every consumer thread (of its warpgroup, FA_CARRY): each read tslot */
			mbar_init(&qempty[b], C::CARRY ? C::QARR / NW : C::QARR);
		}
		for (int s = 0; s < ST; s++) {
			mbar_init(&kfull[s], 1);
			mbar_init(&vfull[s], 1);
			mbar_init(&empty[s], 4 * NW);   /* every consumer warp */
			if (FA_KVREL)
				mbar_init(&vempty[s], 4 * NW);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
		if (FA_START & 2) {
			/* FA_START & 2: the first tile's Q and first K/V stage now (blockIdx.x < tiles: the grid
			 * has at most one CTA a tile); the producer loop below skips them */
			const int t = blockIdx.x;
			const int qblk = causal ? nblk - 1 - t % nblk : t % nblk;
			const int bh = t / nblk;
			if constexpr (C::CARRY) {   /* both halves, each on its own barrier */
				for (int h = 0; h < 2; h++) {
					tslot[h] = t;
					mbar_expect_tx(&qfull[h], C::Q_BYTES / 2);
#pragma unroll
					for (int b = 0; b < DB; b++)
						tma_load_3d(sQ + b * BM * 128 + h * 64 * 128, &tmQ, b * 64, qblk * BM + h * 64, bh, &qfull[h]);
				}
			} else {
			tslot[0] = t;
			mbar_expect_tx(&qfull[0], C::Q_BYTES);
#pragma unroll
			for (int b = 0; b < DB; b++)
				tma_load_3d(sQ + b * BM * 128, &tmQ, b * 64, qblk * BM, bh, &qfull[0]);
			}
			mbar_expect_tx(&kfull[0], C::KV_BYTES);
#pragma unroll
			for (int b = 0; b < DB; b++)
				tma_load_3d(sK + b * BN * 128, &tmK, b * 64, 0, bh, &kfull[0]);
			mbar_expect_tx(&vfull[0], C::KV_BYTES);
#pragma unroll
			for (int b = 0; b < DB; b++)
				tma_load_3d(sV + b * BN * 128, &tmV, b * 64, 0, bh, &vfull[0]);
		}
	}
	__syncthreads();

	if (wg == 0) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
		if (tid == 0) {
			const bool persistent = (int)gridDim.x < tiles;   /* else one tile per CTA */
			int it = 0, t = blockIdx.x, tnext = tiles;
			for (int n = 0;; n++) {
				/* Q buffer n % QB: free once tile n - QB's Q·Kᵀ are done. The first QB tiles skip the
				 * wait (their buffers start free): with FA_START & 2 tile 0 of one K/V tile needs nothing
				 * more from this thread, so its Q could be released before a wait here, which would then
				 * read qempty[0]'s parity 1 as the phase after the release (never completes: a hang) */
				const int qb = n % QB;
				if (n >= QB)
					mbar_wait(&qempty[qb], ((unsigned)(n / QB) & 1u) ^ 1u);
				if (n > 0)
					t = tnext;
				const bool early = (FA_START & 2) && n == 0;   /* Q and stage 0 already issued */
				if (!early)
					tslot[qb] = t;
				if (t >= tiles) {
					mbar_arrive(&qfull[qb]);   /* releases tslot: the consumers stop */
					if constexpr (C::CARRY) {   /* warpgroup 1's half too, once it is free */
						mbar_wait(&qempty[1], ((unsigned)n & 1u) ^ 1u);
						tslot[1] = t;
						mbar_arrive(&qfull[1]);
					}
					break;
				}
				/* the next tile is taken now, its atomic's latency hidden under this tile's
				 * loads (taken when Q's buffer frees, it delayed every Q at D=128 by ~3 %) */
				if (persistent)
					tnext = C::SCHED ? (int)gridDim.x + (int)atomicAdd(&sched[0], 1u) : t + (int)gridDim.x;
				const int qblk = causal ? nblk - 1 - t % nblk : t % nblk;
				const int bh = t / nblk, m0 = qblk * BM;
				int ntiles = (S + BN - 1) / BN;
				if (causal)
					ntiles = min(ntiles, (m0 + BM - 1) / BN + 1);
				/* FA_START & 4: this tile's Q after its first K stage (two Q buffers: the consumers
				 * still have the last tile's K/V tiles to go when it lands) */
				const bool qlate = (FA_START & 4) && QB == 2 && n > 0;
				auto load_q = [&]() {   /* FA_CARRY: warpgroup 0's half (rows m0 .. m0 + 63) */
					mbar_expect_tx(&qfull[qb], C::CARRY ? C::Q_BYTES / 2 : C::Q_BYTES);
#pragma unroll
					for (int b = 0; b < DB; b++)
						tma_load_3d(sQ + qb * C::Q_BYTES + b * BM * 128, &tmQ, b * 64, m0, bh, &qfull[qb]);
				};
				if (!early && !qlate)
					load_q();
				/* V of the ring's item i (the tile's K/V tile jj) into stage i % ST */
				auto load_v = [&](int i, int jj) {
					const int sv = i % ST;
					if (FA_KVREL)
						mbar_wait(&vempty[sv], ((unsigned)(i / ST) & 1u) ^ 1u);
					mbar_expect_tx(&vfull[sv], C::KV_BYTES);
#pragma unroll
					for (int b = 0; b < DB; b++)
						tma_load_3d(sV + (size_t)sv * C::KV_BYTES + b * BN * 128, &tmV, b * 64, jj * BN, bh, &vfull[sv]);
				};
				for (int j = 0; j < ntiles; j++, it++) {
					if (early && j == 0)
						continue;   /* issued before __syncthreads */
					const int s = it % ST;
					mbar_wait(&empty[s], ((unsigned)(it / ST) & 1u) ^ 1u);
					unsigned char *k = sK + (size_t)s * C::KV_BYTES;
					mbar_expect_tx(&kfull[s], C::KV_BYTES);
#pragma unroll
					for (int b = 0; b < DB; b++)
						tma_load_3d(k + b * BN * 128, &tmK, b * 64, j * BN, bh, &kfull[s]);
					if (qlate && j == ((FA_START & 16) ? min(1, ntiles - 1) : 0))
						load_q();
					if (FA_KVREL == 2) {   /* V one behind K, as the pipelined loop reads them */
						if (j > 0 && !(early && j == 1))
							load_v(it - 1, j - 1);
					} else {
						load_v(it, j);
					}
					if constexpr (C::CARRY) {
						/* warpgroup 1's half after the tile's first stage: it frees half an iteration
						 * after warpgroup 0's (the ping-pong), and the first stage's slot before it */
						if (j == 0) {
							if (n >= 1)
								mbar_wait(&qempty[1], ((unsigned)n & 1u) ^ 1u);
							tslot[1] = t;
							mbar_expect_tx(&qfull[1], C::Q_BYTES / 2);
#pragma unroll
							for (int b = 0; b < DB; b++)
								tma_load_3d(sQ + b * BM * 128 + 64 * 128, &tmQ, b * 64, m0 + 64, bh, &qfull[1]);
						}
					}
				}
				if (FA_KVREL == 2 && !(early && ntiles == 1))
					load_v(it - 1, ntiles - 1);
				if (!persistent)
					break;   /* one CTA per tile: no next tile to announce */
			}
			/* the last CTA past its final fetch resets the counters for the next launch */
			if (persistent && C::SCHED && atomicAdd(&sched[1], 1u) == gridDim.x - 1) {
				atomicExch(&sched[0], 0u);
				atomicExch(&sched[1], 0u);
			}
		}
		return;
	}

	/* 4 warpgroups: 24 + 3 x 160 registers a thread (x 128 threads) fit the SM's 64 K; 3: 24 + 2 x 240;
	 * 5 (FA_CWGMAX=4): 96 at launch, 24 + 4 x 112 */
	if constexpr (NW == 4)
		asm volatile("setmaxnreg.inc.sync.aligned.u32 112;\n");
	else if constexpr (NW == 3)
		asm volatile("setmaxnreg.inc.sync.aligned.u32 160;\n");
	else
		asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
	const int c = wg - 1, w = tid / 32, l = tid % 32;
	const int cu = (FA_QAU == 2 || (FA_QAU == 1 && D == 128)) ? __shfl_sync(0xffffffffu, c, 0) : c;   /* FA_QAU */
	int it = 0;
	if constexpr (C::XT) {
		/* FA_CARRY: one pipeline across the CTA's tiles (see FA_CARRY at the top). This warpgroup's Q is
		 * half c (qfull[c], qempty[c], tslot[c]); the turns run on across tiles, so the CTA's last P·V
		 * takes one too on the persistent grid (launched with a CTA per tile, nothing changes there:
		 * the last P·V goes without a turn and the last warpgroup keeps its last hand-over) */
		const bool persist = (int)gridDim.x < tiles;
		const unsigned char *qa = sQ + cu * 64 * 128;
		const int cq = FA_QSHFL ? __shfl_sync(0xffffffffu, c, 0) : c;   /* this warpgroup's Q half */
		auto read_tslot = [&]() {
			int v;
			if (FA_START & 8)
				asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(smem_u32(&tslot[cq])) : "memory");
			else
				v = *(volatile int *)&tslot[cq];
			return v;
		};
		auto ntiles_of = [&](int mm) {
			int nt = (S + BN - 1) / BN;
			if (causal)
				nt = min(nt, (mm + BM - 1) / BN + 1);
			return nt;
		};
		/* the epilogue: O / l, direct stores */
		auto store_o = [&](const float (&oo)[D / 2], float (&lr)[2], int r0, int r1, int bhh) {
			float inv0, inv1;
			row_sum_inv(lr, inv0, inv1);
			store_o_rows<D>(O + (size_t)bhh * S * D, oo, inv0, inv1, r0, r1, S, l);
		};
		int n = 0;
		mbar_wait(&qfull[cq], 0u);
		int t = read_tslot();
		if (t >= tiles)
			return;
		int qblk = causal ? nblk - 1 - t % nblk : t % nblk;
		int bh = t / nblk, m0 = qblk * BM;
		int row0 = m0 + c * 64 + 16 * w + l / 4, row1 = row0 + 8;
		int ntiles = ntiles_of(m0);
		float o[D / 2], sc[BN / 2], alpha[2];
		float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
		uint32_t p[BN / 4];
#pragma unroll
		for (int i = 0; i < D / 2; i++)
			o[i] = 0.f;
		if (c == NW - 1)
			turn_pass<NW>(c);   /* the last warpgroup hands warpgroup 0 the CTA's first turn */
		{
			const int s = it % ST;
			mbar_wait(&kfull[s], (unsigned)(it / ST) & 1u);
			turn_wait(c);
			issue_qk<D, C::BM, BN>(sc, qa, sK + (size_t)s * C::KV_BYTES);
			if (!(c == NW - 1 && ntiles == 1 && !persist))
				turn_pass<NW>(c);
			wgmma_wait<0>();
			if (FA_KVREL && l == 0)
				mbar_arrive(&empty[s]);
			if (ntiles == 1)
				release_q(&qempty[cq], l);   /* the tile's last Q·Kᵀ is done: this half of Q is free */
			softmax_tile<BN>(sc, 0, S, causal, m0 + c * 64, row0, row1, l, scale_log2, mrow, lrow, alpha, p);
			pack_p<BN>(p, sc);
		}
		for (;;) {
			for (int j = 1; j < ntiles; j++) {
				const int s = (it + j) % ST, sp = (it + j - 1) % ST;
				mbar_wait(&kfull[s], (unsigned)((it + j) / ST) & 1u);
				mbar_wait(&vfull[sp], (unsigned)((it + j - 1) / ST) & 1u);
				turn_wait(c);
				issue_qk<D, C::BM, BN>(sc, qa, sK + (size_t)s * C::KV_BYTES);
				issue_pv<D, BN>(o, p, sV + (size_t)sp * C::KV_BYTES);
				if (!(c == NW - 1 && j == ntiles - 1 && !persist))
					turn_pass<NW>(c);
				wgmma_wait<1>();
				if (FA_KVREL && l == 0)
					mbar_arrive(&empty[s]);
				if (j == ntiles - 1)
					release_q(&qempty[cq], l);   /* S_last is done: the producer may load the next Q half */
				softmax_tile<BN>(sc, j, S, causal, m0 + c * 64, row0, row1, l, scale_log2, mrow, lrow, alpha, p);
				if (C::SMXORD)
					smx_order(lrow[0] + lrow[1], smem_u32(tslot));   /* never stores: see FA_SMXORD */
				wgmma_wait<0>();
				if (l == 0)
					mbar_arrive(&vempty[sp]);
#pragma unroll
				for (int i = 0; i < D / 2; i++)
					o[i] *= alpha[(i % 4) < 2 ? 0 : 1];
				pack_p<BN>(p, sc);
			}
			/* the tile's last P·V: with the next tile's first Q·Kᵀ when there is a next tile */
			const int sl = (it + ntiles - 1) % ST;
			mbar_wait(&vfull[sl], (unsigned)((it + ntiles - 1) / ST) & 1u);
			int tn = tiles;
			if (persist) {
				n++;
				mbar_wait(&qfull[cq], (unsigned)n & 1u);
				tn = read_tslot();
			}
			if (tn >= tiles) {
				if (persist)
					turn_wait(c);
				issue_pv<D, BN>(o, p, sV + (size_t)sl * C::KV_BYTES);
				if (persist && c != NW - 1)
					turn_pass<NW>(c);
				wgmma_wait<0>();
				if (l == 0)
					mbar_arrive(&vempty[sl]);
#if FA_OTMA
				if constexpr (C::OTMQX) {   /* the CTA's last tile: its Q half takes no next Q */
					float inv0, inv1;
					row_sum_inv(lrow, inv0, inv1);
					otmq_store<D, BM>(&tmO, sQ, o, inv0, inv1, c, w, l, tid, m0, bh);
					if (tid == 0)
						asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
					return;
				}
#endif
				store_o(o, lrow, row0, row1, bh);
				return;
			}
			const int it2 = it + ntiles, s2 = it2 % ST;
			const int qblk2 = causal ? nblk - 1 - tn % nblk : tn % nblk;
			const int bh2 = tn / nblk, m02 = qblk2 * BM, ntiles2 = ntiles_of(m02);
			const int row0n = m02 + c * 64 + 16 * w + l / 4, row1n = row0n + 8;
			float mrow2[2] = {-INFINITY, -INFINITY}, lrow2[2] = {0.f, 0.f};
			mbar_wait(&kfull[s2], (unsigned)(it2 / ST) & 1u);
			turn_wait(c);
			issue_qk<D, C::BM, BN>(sc, qa, sK + (size_t)s2 * C::KV_BYTES);
			issue_pv<D, BN>(o, p, sV + (size_t)sl * C::KV_BYTES);
			turn_pass<NW>(c);   /* persistent: a next turn always comes */
			wgmma_wait<1>();
			if (FA_KVREL && l == 0)
				mbar_arrive(&empty[s2]);
			if (ntiles2 == 1)
				release_q(&qempty[cq], l);
			softmax_tile<BN>(sc, 0, S, causal, m02 + c * 64, row0n, row1n, l, scale_log2, mrow2, lrow2, alpha, p);
			if (C::SMXORD)
				smx_order(lrow2[0] + lrow2[1], smem_u32(tslot));   /* never stores: see FA_SMXORD */
			wgmma_wait<0>();
			if (l == 0)
				mbar_arrive(&vempty[sl]);
			store_o(o, lrow, row0, row1, bh);   /* tile n's O, while the other warpgroup's GEMMs run */
#pragma unroll
			for (int i = 0; i < D / 2; i++)
				o[i] = 0.f;
			pack_p<BN>(p, sc);
			it = it2, ntiles = ntiles2, bh = bh2, m0 = m02, row0 = row0n, row1 = row1n;
			mrow[0] = mrow2[0], mrow[1] = mrow2[1], lrow[0] = lrow2[0], lrow[1] = lrow2[1];
		}
	} else {   /* without FA_CARRY (or FA_CARRY=2): each tile starts and ends alone */
	for (int n = 0;; n++) {
		const int qb = n % QB;
		/* FA_CARRY=2: this warpgroup's half (qfull[c], tslot[c]; one buffer, so phase n & 1) */
		const int qs = C::CARRY ? (FA_QSHFL ? __shfl_sync(0xffffffffu, c, 0) : c) : qb;
		mbar_wait(&qfull[qs], (unsigned)(n / QB) & 1u);
		int t;
		if (FA_START & 8)
			asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(t) : "r"(smem_u32(&tslot[qs])) : "memory");
		else
			t = *(volatile int *)&tslot[qs];
		if (t >= tiles)
			break;
		const int qblk = causal ? nblk - 1 - t % nblk : t % nblk;
		const int bh = t / nblk, m0 = qblk * BM;
		const int row0 = m0 + c * 64 + 16 * w + l / 4, row1 = row0 + 8;
		const unsigned char *qa = sQ + qb * C::Q_BYTES + cu * 64 * 128;
		int ntiles = (S + BN - 1) / BN;
		if (causal)
			ntiles = min(ntiles, (m0 + BM - 1) / BN + 1);
		float o[D / 2], sc[BN / 2], alpha[2];
		float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
		uint32_t p[BN / 4];
#pragma unroll
		for (int i = 0; i < D / 2; i++)
			o[i] = 0.f;

		if constexpr (C::PIPE) {
		if (c == NW - 1)
			turn_pass<NW>(c);   /* the last warpgroup hands warpgroup 0 the first turn */
		{
			const int s = it % ST;
			mbar_wait(&kfull[s], (unsigned)(it / ST) & 1u);
			turn_wait(c);
			issue_qk<D, C::BM, BN>(sc, qa, sK + (size_t)s * C::KV_BYTES);
			if (!(c == NW - 1 && ntiles == 1))
				turn_pass<NW>(c);
			wgmma_wait<0>();
			if (FA_KVREL && l == 0)
				mbar_arrive(&empty[s]);   /* K_0 read */
			if (C::CARRY && ntiles == 1)
				release_q(&qempty[qs], l);   /* FA_CARRY=2: the tile's last Q·Kᵀ is done, as FA_CARRY=1 */
			softmax_tile<BN>(sc, 0, S, causal, m0 + c * 64, row0, row1, l, scale_log2, mrow, lrow, alpha, p);
			pack_p<BN>(p, sc);
		}
		for (int j = 1; j < ntiles; j++) {
			const int s = (it + j) % ST, sp = (it + j - 1) % ST;
			mbar_wait(&kfull[s], (unsigned)((it + j) / ST) & 1u);
			mbar_wait(&vfull[sp], (unsigned)((it + j - 1) / ST) & 1u);
			turn_wait(c);
			issue_qk<D, C::BM, BN>(sc, qa, sK + (size_t)s * C::KV_BYTES);
			issue_pv<D, BN>(o, p, sV + (size_t)sp * C::KV_BYTES);
			if (!(c == NW - 1 && j == ntiles - 1))
				turn_pass<NW>(c);
			wgmma_wait<1>();
			if (FA_KVREL && l == 0)
				mbar_arrive(&empty[s]);   /* S_j is done: K_j read */
			if (C::CARRY && j == ntiles - 1)
				release_q(&qempty[qs], l);   /* FA_CARRY=2: S_last is done, as FA_CARRY=1 */
			softmax_tile<BN>(sc, j, S, causal, m0 + c * 64, row0, row1, l, scale_log2, mrow, lrow, alpha, p);
			if (C::SMXORD)
				smx_order(lrow[0] + lrow[1], smem_u32(tslot));   /* never stores: see FA_SMXORD */
			wgmma_wait<0>();
			if (l == 0)
				mbar_arrive(&vempty[sp]);   /* V_{j-1} (FA_KVREL=0: the whole stage) */
#pragma unroll
			for (int i = 0; i < D / 2; i++)
				o[i] *= alpha[(i % 4) < 2 ? 0 : 1];
			pack_p<BN>(p, sc);
		}
		/* every Q·Kᵀ of the tile is done: the producer may load the next tile's Q (FA_CARRY=2: done above) */
		if constexpr (!C::CARRY)
			release_q(&qempty[qb], l);
		{
			const int sl = (it + ntiles - 1) % ST;
			mbar_wait(&vfull[sl], (unsigned)((it + ntiles - 1) / ST) & 1u);
			issue_pv<D, BN>(o, p, sV + (size_t)sl * C::KV_BYTES);
			wgmma_wait<0>();
			if (l == 0)
				mbar_arrive(&vempty[sl]);
		}
		} else {
		/* this warpgroup's K/V tiles: none when its 64 rows are all >= S (the last query block of a
		 * BM=192 CTA), none past its own diagonal when causal (with BM = BN = 128 every warpgroup
		 * has all of the CTA's tiles). Past them it still waits for each stage to fill before it
		 * releases it, so its arrivals count toward the right phase of `empty`. */
		int nact = ntiles;
		if constexpr (NW >= 3) {
			nact = m0 + c * 64 >= S ? 0 : ntiles;
			if (causal)
				nact = min(nact, (m0 + c * 64 + 63) / BN + 1);
		}
		/* FA_PTURNS: two turns a K/V tile for every warpgroup (Q·Kᵀ, P·V), taken after the data
		 * has landed; the last warpgroup hands warpgroup 0 the first and keeps its last */
		if (c == NW - 1)
			pturn_pass<NW>(c);
		for (int j = 0; j < nact; j++) {
			const int s = (it + j) % ST;
			const unsigned ph = (unsigned)((it + j) / ST) & 1u;
			mbar_wait(&kfull[s], ph);
			pturn_wait(c);
			issue_qk<D, C::BM, BN>(sc, qa, sK + (size_t)s * C::KV_BYTES);
			pturn_pass<NW>(c);
			wgmma_wait<0>();
			if (FA_KVREL && l == 0)
				mbar_arrive(&empty[s]);   /* K read */
#if FA_PVSPLIT > 1
			{
				static_assert(!FA_EXH, "FA_PVSPLIT needs FA_EXH=0");
				static_assert(BN / 16 % FA_PVSPLIT == 0, "FA_PVSPLIT must divide the tile's k-steps");
				float base[2];
				softmax_max<BN>(sc, j, S, causal, m0 + c * 64, row0, row1, l, scale_log2, mrow, lrow, alpha,
						base);
#pragma unroll
				for (int i = 0; i < D / 2; i++)
					o[i] *= alpha[(i % 4) < 2 ? 0 : 1];
				if (j == ntiles - 1)
					release_q(&qempty[qb], l);
				mbar_wait(&vfull[s], ph);
				pturn_wait(c);
				constexpr int PK = BN / 16 / FA_PVSPLIT;   /* k-steps (16 keys) a part */
#pragma unroll
				for (int q = 0; q < FA_PVSPLIT; q++) {
					softmax_exp<BN, D == 64 ? FA_EMU : 0>(sc, 8 * PK * q, 8 * PK * (q + 1), base, scale_log2, lrow);
#pragma unroll
					for (int i = 8 * PK * q; i < 8 * PK * (q + 1); i += 4) {
						p[i / 2] = pack_half2(sc[i], sc[i + 1]);
						p[i / 2 + 1] = pack_half2(sc[i + 2], sc[i + 3]);
					}
					issue_pv_part<D, BN>(o, p, sV + (size_t)s * C::KV_BYTES, PK * q, PK * (q + 1));
				}
				if (!(c == NW - 1 && j == ntiles - 1))
					pturn_pass<NW>(c);
				wgmma_wait<0>();
				if (l == 0)
					mbar_arrive(&vempty[s]);
				continue;
			}
#endif
			softmax_tile<BN, FA_EXH, D == 64 ? FA_EMU : 0>(sc, j, S, causal, m0 + c * 64, row0, row1, l, scale_log2,
								       mrow, lrow, alpha, p);
			if constexpr (!FA_EXH)
				pack_p<BN>(p, sc);
#pragma unroll
			for (int i = 0; i < D / 2; i++)
				o[i] *= alpha[(i % 4) < 2 ? 0 : 1];
			if (j == ntiles - 1)
				release_q(&qempty[qb], l);   /* the tile's last Q·Kᵀ is done */
			mbar_wait(&vfull[s], ph);
			pturn_wait(c);
			issue_pv<D, BN>(o, p, sV + (size_t)s * C::KV_BYTES);
			if (!(c == NW - 1 && j == ntiles - 1))
				pturn_pass<NW>(c);
			wgmma_wait<0>();
			if (l == 0)
				mbar_arrive(&vempty[s]);
		}
		if constexpr (NW >= 3) {
			for (int j = nact; j < ntiles; j++) {
				const int s = (it + j) % ST;
				mbar_wait(&kfull[s], (unsigned)((it + j) / ST) & 1u);
				pturn_wait(c);   /* this warpgroup's two turns, empty */
				pturn_pass<NW>(c);
				pturn_wait(c);
				if (!(c == NW - 1 && j == ntiles - 1))
					pturn_pass<NW>(c);
				if (j == ntiles - 1)
					release_q(&qempty[qb], l);
#if FA_KVREL
				/* V's half only once V has landed: kfull[s] of item it + j completes as soon as every
				 * warp has released K of item it + j - ST (empty[s], before that item's P·V), so an
				 * arrival on vempty[s] after kfull alone can count toward item it + j - ST's phase of
				 * vempty[s] while another warpgroup's P·V still reads (or has yet to read) its V: the
				 * producer then overwrites that V (wrong results), or V lands twice before that
				 * warpgroup's vfull wait, whose parity then reads "not done" (a hang). Waiting for
				 * vfull[s] of item it + j orders this arrival after item it + j - ST's phase. */
				if (l == 0)
					mbar_arrive(&empty[s]);
				mbar_wait(&vfull[s], (unsigned)((it + j) / ST) & 1u);
				if (l == 0)
					mbar_arrive(&vempty[s]);
#else
				if (l == 0)
					mbar_arrive(&empty[s]);
#endif
			}
		}
		}
		it += ntiles;
		float inv0, inv1;
		row_sum_inv(lrow, inv0, inv1);
#if FA_OTMA
		if constexpr (C::OTMA) {
			unsigned char *ob = sO + c * 64 * D * 2;
			if (tid == 0)
				asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); /* last tile's store read it */
			bar_named(9 + c, 128);
			const int r0 = 16 * w + l / 4;   /* row0's row in the block; row1 = r0 + 8, same r % 8 */
#pragma unroll
			for (int i = 0; i < D / 2; i += 4) {
				const int chunk = i / 4;   /* 8 columns = 16 bytes: columns 8 chunk + 2 (l % 4) */
				unsigned char *a = ob + r0 * 128 + ((chunk ^ (r0 % 8)) * 16) + (l % 4) * 4;
				*(__half2 *)a = __floats2half2_rn(o[i] * inv0, o[i + 1] * inv0);
				*(__half2 *)(a + 8 * 128) = __floats2half2_rn(o[i + 2] * inv1, o[i + 3] * inv1);
			}
			asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
			bar_named(9 + c, 128);
			if (tid == 0) {
				tma_store_3d(&tmO, ob, 0, m0 + c * 64, bh);
				asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
			}
			if ((int)gridDim.x >= tiles)
				break;   /* one CTA per tile */
			continue;
		}
		if constexpr (C::OTMQ) {
			if ((int)gridDim.x >= tiles) {   /* one CTA per tile: no Q comes into the buffer again */
				otmq_store<D, BM>(&tmO, sQ, o, inv0, inv1, c, w, l, tid, m0, bh);
				break;
			}
		}
#endif
		store_o_rows<D>(O + (size_t)bh * S * D, o, inv0, inv1, row0, row1, S, l);
		if ((int)gridDim.x >= tiles)
			break;   /* one CTA per tile */
	}
	}
#if FA_OTMA
	if ((C::OTMA || C::OTMQ) && tid == 0)
		asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* stores done before the CTA exits */
#endif
#else
	(void)S; (void)BH; (void)causal; (void)scale_log2; (void)O; (void)sched;
	__trap();
#endif
}

/* ---- host ---- */

struct fa_ws {
	CUtensorMap q, k, v, o;
	const void *pq, *pk, *pv, *po;
	int B, H, S, D, cw;
	unsigned *sched;   /* the persistent grid's tile counter and done counter (zero between launches) */
};

static_assert(FA_CWG == 0 || FA_CWG == 2 || FA_CWG == 3 || FA_CWG == 4, "FA_CWG must be 0 (by problem), 2, 3 or 4");
static_assert(FA_CWGMAX == 3 || FA_CWGMAX == 4, "FA_CWGMAX must be 3 or 4");
#define FA_HAS4 (FA_CWG == 4 || (FA_CWG == 0 && FA_CWGMAX == 4))   /* the four-warpgroup kernel is built */

/* D=64, FA_CWG and FA_PIPE unset: non-causal problems of S <= PIPE2_SMAX (8 K/V tiles a query block at
 * most) run on two pipelined consumer warpgroups. H100, wgmma-variants.sh, medians of 5 against three
 * plain ones (two plain below the GPU's size): B16 H16 S512 51.55 -> 50.56 us, B1 H8 S512 11.62 ->
 * 11.07, B2 H12 S1000 36.16 -> 26.50 (144 tiles of 192 rows on 132 SMs, 192 of 128 rows), but
 * B4 H16 S4096 621.8 -> 635.0 (+2.1 %), hence the bound; between S1024 and S4096 not measured */
constexpr int PIPE2_SMAX = 1024;

/* consumer warpgroups for problem p on a device of nsm SMs: D=128 has 2; D=64 FA_CWG, or by problem
 * (FA_CWG=0): non-causal problems of S <= PIPE2_SMAX 2 with the pipelined loop (pipe_for; unless
 * FA_PIPE=0), the others 3 (192 query rows a CTA) once the grid of 192-row tiles gives every SM one,
 * else 2 (128 rows: more, shorter CTAs when the problem does not fill the GPU) */
static int pick_cwg(const struct attn_problem *p, int nsm)
{
	if (p->D != 64)
		return 2;
	if (FA_CWG)
		return FA_CWG;
	if (FA_CWGMAX == 4 && (p->S + 255) / 256 * p->B * p->H >= nsm)
		return 4;
	if (PIPE_FORCE != 0 && !p->causal && p->S <= PIPE2_SMAX)
		return 2;
	return (p->S + 191) / 192 * p->B * p->H >= nsm ? 3 : 2;
}

/* the loop for problem p with cw consumer warpgroups: FA_PIPE when set, else pipelined at D=128 and at
 * D=64 for non-causal problems of S <= PIPE2_SMAX on two warpgroups (<64, 2, 1>), plain for the rest */
static int pipe_for(const struct attn_problem *p, int cw)
{
	if (PIPE_FORCE >= 0)
		return PIPE_FORCE;
	if (p->D == 128)
		return fcfg<128, 2>::PIPE;
	return cw == 2 && !p->causal && p->S <= PIPE2_SMAX;
}

static int config_init()
{
	hx_config_int("CWG_D64", FA_CWG);   /* 0: by problem ("CWG" and "BM" below, per problem) */
	if (FA_HAS4) {
		hx_config_int("CWGMAX_D64", FA_CWGMAX);
		hx_config_int("BN_CWG4", fcfg<64, 4>::BN);
		hx_config_int("STAGES_CWG4", fcfg<64, 4>::STAGES);
	}
	hx_config_int("BN", BN);
	if (FA_BN128 != BN)
		hx_config_int("BN_D128", FA_BN128);
	if (FA_KVREL)
		hx_config_int("KVREL", FA_KVREL);
	hx_config_int("STAGES_D64", fcfg<64, 2>::STAGES);
	hx_config_int("STAGES_D128", fcfg<128, 2>::STAGES);
	hx_config_int("PIPE_D64", PIPE_FORCE);   /* -1: by problem ("PIPE" below, per problem) */
	hx_config_int("PIPE_D128", fcfg<128, 2>::PIPE);
	hx_config_int("TURNS", FA_TURNS);
	hx_config_int("SMAX", FA_SMAX);
	hx_config_int("PTURNS", FA_PTURNS);
	hx_config_int("QKZ", FA_QKZ);
	hx_config_int("DESCADD", FA_DESCADD);
	hx_config_int("QAU", FA_QAU);
	if (FA_EXH)
		hx_config_int("EXH", FA_EXH);
	if (FA_OTMA)
		hx_config_int("OTMA", FA_OTMA);
	if (FA_PVSPLIT != 1)
		hx_config_int("PVSPLIT", FA_PVSPLIT);
	if (FA_EMU)
		hx_config_int("EMU", FA_EMU);
	/* D=128's loop: carried (FA_CARRY), Q-buffer epilogue (FA_OTMQ), softmax order (FA_SMXORD) */
	hx_config_int("CARRY_D128", fcfg<128, 2>::CARRY ? FA_CARRY : 0);
	hx_config_int("OTMQ_D128", fcfg<128, 2>::OTMQ || fcfg<128, 2>::OTMQX);
	hx_config_int("SMXORD_D128", fcfg<128, 2>::SMXORD);
	if (FA_START)
		hx_config_int("START", FA_START);
	hx_config_int("PERSIST_D64", fcfg<64, 2>::PERSIST);
	hx_config_int("PERSIST_D128", fcfg<128, 2>::PERSIST);
	hx_config_int("SCHED_D64", fcfg<64, 2>::SCHED);
	hx_config_int("SCHED_D128", fcfg<128, 2>::SCHED);
	hx_config_int("QBUF_D64", fcfg<64, 2>::QBUF);
	hx_config_int("QBUF_D128", fcfg<128, 2>::QBUF);
	return 0;
}
[[maybe_unused]] static const int config_done = config_init();

int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	if (p->D != 64 && p->D != 128) {
		snprintf(why, n, "attn_wgmma is built for D=64 and D=128 only (got D=%d)", p->D);
		return 1;
	}
	if (prop->major != 9) {
		snprintf(why, n, "attn_wgmma needs sm_90a (TMA, wgmma, setmaxnreg); device is cc %d.%d", prop->major,
			 prop->minor);
		return 1;
	}
	const int cw = pick_cwg(p, prop->multiProcessorCount);
	const int pp = pipe_for(p, cw);
	size_t need = p->D == 128 ? fcfg<128, 2>::SMEM : cw == 4 ? fcfg<64, 4>::SMEM : cw == 3 ? fcfg<64, 3>::SMEM
		    : pp ? fcfg<64, 2, 1>::SMEM : fcfg<64, 2, 0>::SMEM;
	hx_config_int("CWG", cw);
	hx_config_int("PIPE", pp);
	hx_config_int("BM", 64 * cw);
	hx_config_int("smem_bytes", (long long)need);
	if (need > prop->sharedMemPerBlockOptin)
		hx_failf(1, "attn_wgmma (D=%d) needs %zu bytes of shared memory per CTA, the device allows %zu; "
			    "rebuild with a smaller FA_STAGES",
			 p->D, need, (size_t)prop->sharedMemPerBlockOptin);
	return 0;
}

void *attn_kernel_init(const struct attn_problem *p)
{
	(void)p;
	struct fa_ws *ws = (struct fa_ws *)calloc(1, sizeof(*ws));
	if (!ws)
		hx_failf(1, "attn_wgmma: out of host memory");
	HX_CK(cudaMalloc(&ws->sched, 2 * sizeof(unsigned)));
	HX_CK(cudaMemset(ws->sched, 0, 2 * sizeof(unsigned)));
	return ws;
}

void attn_kernel_fini(void *ws)
{
	if (ws)
		HX_CK(cudaFree(((struct fa_ws *)ws)->sched));
	free(ws);
}

static int sm_count(void)
{
	static int nsm = 0;
	if (!nsm) {
		int dev;
		HX_CK(cudaGetDevice(&dev));
		HX_CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
	}
	return nsm;
}

template <int D, int CW, int PP = fcfg<D, CW>::PIPE>
static void launch(struct fa_ws *ws, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	using C = fcfg<D, CW, PP>;
	static int attr_set = 0;
	if (!attr_set) {
		HX_CK(cudaFuncSetAttribute(attn_wgmma_kernel<D, CW, PP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)C::SMEM));
		attr_set = 1;
	}
	/* tensor maps are encoded on the host: again only when the buffers, the shape or BM change */
	if (ws->pq != b->q || ws->pk != b->k || ws->pv != b->v || (FA_OTMA && ws->po != b->o) || ws->B != p->B || ws->H != p->H || ws->S != p->S ||
	    ws->D != p->D || ws->cw != CW) {
		hp_make_map_3d(&ws->q, b->q, p->B * p->H, p->S, D, 64, C::QROWS);   /* FA_CARRY: 64-row halves */
		hp_make_map_3d(&ws->k, b->k, p->B * p->H, p->S, D, 64, C::BN);
		hp_make_map_3d(&ws->v, b->v, p->B * p->H, p->S, D, 64, C::BN);
		if (FA_OTMA)
			hp_make_map_3d(&ws->o, b->o, p->B * p->H, p->S, D, 64, 64);
		ws->pq = b->q, ws->pk = b->k, ws->pv = b->v, ws->po = b->o;
		ws->B = p->B, ws->H = p->H, ws->S = p->S, ws->D = p->D, ws->cw = CW;
	}
	const int nsm = sm_count();
	const int tiles = (p->S + C::BM - 1) / C::BM * p->B * p->H;
	const int persist = C::PERSIST == 1 || (C::PERSIST == 2 && !p->causal);
	attn_wgmma_kernel<D, CW, PP><<<persist && tiles > nsm ? nsm : tiles, C::NTHREADS, C::SMEM, s>>>(
		ws->q, ws->k, ws->v, b->o, p->S, p->B * p->H, p->causal, p->scale * 1.4426950408889634f, ws->sched FA_OMAP_ARG);
	HX_CK(cudaGetLastError());
}

void attn_kernel_run(void *ws, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	struct fa_ws *w = (struct fa_ws *)ws;
	const int cw = p->D == 128 ? 2 : pick_cwg(p, sm_count());
	if (p->D == 128)
		launch<128, 2>(w, p, b, s);
#if FA_HAS4
	else if (cw == 4)
		launch<64, 4>(w, p, b, s);
#endif
	else if (cw == 3)
		launch<64, 3>(w, p, b, s);
	else if constexpr (PIPE_FORCE < 0) {   /* by problem: both loops at two warpgroups */
		if (pipe_for(p, cw))
			launch<64, 2, 1>(w, p, b, s);
		else
			launch<64, 2, 0>(w, p, b, s);
	} else
		launch<64, 2>(w, p, b, s);
}
