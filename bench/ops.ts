// Where the embedded transformer's kernel time goes (issue 41): onnxruntime's own profiler on one
// shard's graphs of the reference model (bench/transformer.ts), 1 intra-op thread: the GRPO gradient
// graph on one default micro-batch (21 rows × 48 positions) and one KV-cached decoding step of 128
// rows (one shard's half of the sampling bench) over 32 cache slots. Prints each operator type's
// kernel milliseconds per run and share, and every MatMul shape's GFLOP/s, beside a 512³ MatMul in
// the same session options: which kernels are below the yardstick, and by how much.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ort from 'onnxruntime-node';
import { CorlError } from '../core/errors';
import { compile } from '../core/tensor/session';
import { Rng } from '../core/util/rng';
import { initParams, paramSpecs, type Architecture } from '../plugins/policies/transformer/architecture';
import { buildDecodeGraph, buildStepGraph, type BuiltGraph } from '../plugins/policies/transformer/graphs';
import type { Bench } from './index';
import { matmulYardstick, yardstickLines } from './yardstick';

const ARCH: Architecture = {
  vocab: 32,
  dModel: 128,
  layers: 4,
  heads: 4,
  context: 64,
  mlpRatio: 4,
  norm: 'layernorm',
  activation: 'gelu',
  positions: 'learned',
  tiedEmbeddings: false,
  bias: true,
  normEps: 1e-5,
};
const REPS = Number(process.env.BENCH_OPS_REPS ?? 10);
const out = (s: string) => process.stdout.write(s + '\n');

interface KernelEvent {
  readonly cat: string;
  readonly name: string;
  readonly dur: number;
  readonly args: {
    readonly op_name?: string;
    readonly input_type_shape?: Record<string, number[]>[];
    readonly output_type_shape?: Record<string, number[]>[];
  };
}

const tensor = (data: Float32Array | Int32Array, dims: number[]) =>
  data instanceof Float32Array ? new ort.Tensor('float32', data, dims) : new ort.Tensor('int32', data, dims);

/** Run `b` REPS times under onnxruntime's profiler; print its kernels by operator type and MatMul shape. */
async function profile(title: string, b: BuiltGraph, feeds: Record<string, ort.Tensor>, yardstick: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-bench-ops-'));
  try {
    const s = await ort.InferenceSession.create(compile(b.graph, { outputs: b.outputs }).bytes, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      enableProfiling: true,
      profileFilePrefix: path.join(dir, 'p'),
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
    for (let i = 0; i < REPS; i++) await s.run(feeds);
    s.endProfiling();
    await s.release();
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
    if (!file)
      throw new CorlError('CORL_ERR_TENSOR_RUNTIME', `expected onnxruntime's profile file in ${dir}, got none`);
    const events = (JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as KernelEvent[]).filter(
      (e) => e.cat === 'Node' && e.name.endsWith('_kernel_time'),
    );
    // the first run allocates: leave it out
    const perRun = events.length / REPS;
    const kept = events.slice(perRun);
    const runs = REPS - 1;
    const total = kept.reduce((a, e) => a + e.dur, 0);
    out(
      `${title}: ${perRun.toFixed(0)} kernels per run, ${(total / runs / 1000).toFixed(2)} ms of kernel time per run`,
    );
    const byOp = new Map<string, { us: number; n: number }>();
    const byShape = new Map<string, { us: number; n: number; flops: number }>();
    for (const e of kept) {
      const op = e.args.op_name ?? '?';
      const o = byOp.get(op) ?? { us: 0, n: 0 };
      byOp.set(op, { us: o.us + e.dur, n: o.n + 1 });
      if (/MatMul/.test(op)) {
        const ins = (e.args.input_type_shape ?? []).map((x) => Object.values(x)[0] ?? []);
        const res = Object.values(e.args.output_type_shape?.[0] ?? {})[0] ?? [];
        // 2 · (output elements) · K; K is the first input's last dimension, or (transposed A) its
        // second to last when the last is the output's row count and the second to last is not
        const [a0 = 1, a1 = 1] = (ins[0] ?? []).slice(-2);
        const m = res.at(-2) ?? 1;
        const flops = 2 * res.reduce((x, y) => x * y, 1) * (a0 === m ? a1 : a0);
        const key = `${op} ${JSON.stringify(ins)} → ${JSON.stringify(res)}`;
        const v = byShape.get(key) ?? { us: 0, n: 0, flops };
        byShape.set(key, { us: v.us + e.dur, n: v.n + 1, flops });
      }
    }
    for (const [op, v] of [...byOp].sort((x, y) => y[1].us - x[1].us).slice(0, 12))
      out(
        `  ${op.padEnd(20)} ${(v.us / runs / 1000).toFixed(2).padStart(7)} ms ${(v.n / runs).toFixed(0).padStart(4)} calls ${((100 * v.us) / total).toFixed(1).padStart(5)}%`,
      );
    for (const [k, v] of [...byShape].sort((x, y) => y[1].us - x[1].us))
      out(
        `  ${((v.flops * v.n) / (v.us / 1e6) / 1e9).toFixed(1).padStart(6)} GFLOP/s (${((100 * (v.flops * v.n)) / (v.us / 1e6) / 1e9 / yardstick).toFixed(0)}% of the 512³) ${(v.us / runs / 1000).toFixed(2)} ms ${k}`,
      );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const bench: Bench = {
  name: 'ops',
  description:
    "onnxruntime's per-operator kernel time of the transformer's GRPO gradient graph and decoding step, 1 thread",
  async run() {
    const specs = paramSpecs(ARCH);
    const params = initParams(ARCH, 1);
    const weights = Object.fromEntries(specs.map((s, i) => [s.name, tensor(params[i]!, [...s.shape])]));
    const rng = new Rng(5);
    const ids = (n: number) => Int32Array.from({ length: n }, () => 2 + Math.floor(rng.next() * 30));
    // the kernel rate, as the profiler's kernel times below are: no call overhead or output copy on either side
    const y = await matmulYardstick(1);
    for (const line of yardstickLines(y)) out(line);
    const mm = y.kernel.best;
    const B = 21;
    const T = 48;
    await profile(
      `GRPO gradient graph, ${B} × ${T} (one default micro-batch)`,
      buildStepGraph(ARCH, specs, { objective: 'grpo', gradClip: 1 }),
      {
        ...weights,
        ids: tensor(ids(B * T), [B, T]),
        targets: tensor(ids(B * T), [B, T]),
        weights: tensor(new Float32Array(B * T).fill(1 / (B * T)), [B, T]),
        inv_temperature: tensor(Float32Array.of(1), []),
        old_logprobs: tensor(new Float32Array(B * T).fill(-3.4), [B, T]),
        advantages: tensor(
          Float32Array.from({ length: B }, (_, i) => (i % 2 ? 1 : -1)),
          [B, 1],
        ),
        ratio_low: tensor(Float32Array.of(0.8), []),
        ratio_high: tensor(Float32Array.of(1.2), []),
      },
      mm,
    );
    const R = 128;
    const S = 32;
    const H = ARCH.heads;
    const dh = ARCH.dModel / H;
    const bias = new Float32Array(R * S);
    for (let r = 0; r < R; r++) bias.fill(-1e9, r * S + 24, (r + 1) * S);
    const cache: Record<string, ort.Tensor> = {};
    for (let l = 0; l < ARCH.layers; l++)
      for (const kv of ['k', 'v'])
        cache[`cache_${kv}${l}`] = tensor(
          Float32Array.from({ length: R * H * S * dh }, () => rng.next() - 0.5),
          [R, H, S, dh],
        );
    await profile(
      `decoding step, ${R} rows over ${S} cache slots`,
      buildDecodeGraph(ARCH, specs),
      {
        ...weights,
        ids: tensor(ids(R), [R, 1]),
        positions: tensor(new Int32Array(R).fill(24), [R, 1]),
        cache_bias: tensor(bias, [R, 1, 1, S]),
        ...cache,
      },
      mm,
    );
  },
};
