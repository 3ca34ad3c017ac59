// Speed of the embedded transformer (issue 4): training and sampling throughput of the reference
// model through the policy's real paths (pretrainStep / update / sample, shards and all), a 512³
// float32 MatMul in onnxruntime-node as the machine's yardstick, and where the time goes.
//
// Reference model: d_model 128, 4 layers, 4 heads, vocabulary 32, context 64. Training: 256
// sequences of 48 input positions per optimizer step. Sampling: 256 rows, 32 new tokens after a
// 16-token prompt. Each configuration is measured with 1 and with 2 threads.
import Ajv from 'ajv';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { parameterCount } from '../plugins/policies/transformer/architecture';
import { TRANSFORMER_OPTIONS_SCHEMA, type TransformerOptions } from '../plugins/policies/transformer/options';
import { TransformerPolicy } from '../plugins/policies/transformer/policy';
import type { ShardProfile } from '../plugins/policies/transformer/shard';
import { Rng } from '../core/util/rng';
import type { Bench } from './index';
import { matmulYardstick, yardstickLines, type MatMulRate, type Yardstick as MachineYardstick } from './yardstick';

/** 30 characters: with the end and unknown tokens, a vocabulary of 32. */
const ALPHABET = '0123456789+-*/=()abcdefghijklm';
const ROWS = 256;
const TRAIN_T = 48;
const PROMPT = 16;
const NEW = 32;
const WARMUP = 2;

const env = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);

function options(threads: number, worker: boolean, extra: Record<string, unknown> = {}): TransformerOptions {
  const o: Record<string, unknown> = {
    tokenizer: { alphabet: ALPHABET },
    dModel: 128,
    layers: 4,
    heads: 4,
    context: 64,
    threads,
    worker,
    ...extra,
  };
  const validate = new Ajv({ useDefaults: true, strict: false }).compile(TRANSFORMER_OPTIONS_SCHEMA);
  if (!validate(o)) throw new Error(`bench options invalid: ${JSON.stringify(validate.errors)}`);
  return o as unknown as TransformerOptions;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const out = (s: string) => process.stdout.write(s + '\n');
/** CPU seconds used by this process (every thread) since `from`. */
const cpuSince = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1e6;
};

function randomText(rng: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rng.next() * ALPHABET.length)]!;
  return s;
}

/** Model FLOPs of one training step over rows × T positions: 6·(matmul params)·tokens plus attention. */
function trainFlops(o: TransformerOptions, vocab: number, rows: number, T: number): number {
  const d = o.dModel;
  const matmulParams = o.layers * (4 * d * d + 2 * o.mlpRatio * d * d) + d * vocab;
  // Attention per layer, forward: QKᵀ and AV, 2·T²·d each; backward twice the forward.
  const attention = 3 * o.layers * 2 * 2 * rows * T * T * d;
  return 6 * matmulParams * rows * T + attention;
}

/** Summed profile of every shard, printed as per-graph and per-job lines (ms per measured step). */
function printProfile(ps: readonly ShardProfile[], steps: number, wallMs: number): void {
  const per = (ms: number) => fmt(ms / steps, 1);
  ps.forEach((p, i) => {
    const jobs = Object.entries(p.jobs)
      .map(([k, v]) => `${k} ${per(v.ms)} ms (${fmt(v.calls / steps, 1)} calls)`)
      .join(', ');
    out(`    shard ${i}: jobs ${jobs || 'none'}`);
    let ort = 0;
    let total = 0;
    for (const [k, v] of Object.entries(p.sessions)) {
      ort += v.ortMs;
      total += v.totalMs;
      out(
        `      graph ${k}: ${fmt(v.calls / steps, 1)} runs, onnxruntime ${per(v.ortMs)} ms, feed/fetch wrapping ${per(v.totalMs - v.ortMs)} ms`,
      );
    }
    const jobMs = Object.values(p.jobs).reduce((a, v) => a + v.ms, 0);
    out(
      `      shard JS outside sessions ${per(jobMs - total)} ms; onnxruntime ${fmt((100 * ort) / Math.max(jobMs, 1e-9), 0)}% of the shard's job time`,
    );
  });
  const busiest = Math.max(...ps.map((p) => Object.values(p.jobs).reduce((a, v) => a + v.ms, 0)));
  out(`    outside the shards (policy thread: batching, gradient sums, messages): ${per(wallMs - busiest)} ms`);
}

interface Config {
  readonly label: string;
  readonly threads: number;
  readonly worker: boolean;
}

/** The MatMul yardstick's kernel rate at a thread count (./yardstick.ts), measured right before the figures it scales. */
type Yardstick = MatMulRate;

/** Tokens/s of a measured path (best and median of its steps or calls). */
interface Rate {
  readonly best: number;
  readonly median: number;
  /** Model GFLOP/s at the best step or call. */
  readonly gflops: number;
}

async function trainBench(c: Config, objective: 'ce' | 'grpo', steps: number, mm: Yardstick): Promise<Rate> {
  const o = options(
    c.threads,
    c.worker,
    process.env.CORL_BENCH_MICRO ? { microBatchTokens: Number(process.env.CORL_BENCH_MICRO) } : {},
  );
  const p = new TransformerPolicy(o, 1);
  const rng = new Rng(11);
  try {
    const run = async (step: number) => {
      if (objective === 'ce') {
        // END + 47 characters + END: 48 input positions, all trained.
        const texts = Array.from({ length: ROWS }, () => randomText(rng, TRAIN_T - 1));
        await p.pretrainStep({ texts, step, totalSteps: 1000 });
      } else {
        // END + 15 prompt characters, then 33 completion tokens: 48 input positions, 33 trained.
        const samples = Array.from({ length: ROWS }, (_, i) => {
          const tokenIds = Array.from({ length: TRAIN_T + 1 - PROMPT }, () => 2 + Math.floor(rng.next() * 30));
          return {
            prompt: randomText(rng, PROMPT - 1),
            completion: {
              text: '',
              tokenIds,
              logprobs: tokenIds.map(() => -3.4 + 0.1 * rng.next()),
              finishReason: 'length' as const,
            },
            advantage: i % 2 ? 1 : -1,
          };
        });
        await p.update({
          samples,
          loss: { type: 'grpo', clipLow: 0.2, clipHigh: 0.2, beta: 0, maxCompletionLength: NEW },
          temperature: 1,
          step,
          totalSteps: 1000,
        });
      }
    };
    for (let i = 0; i < WARMUP; i++) await run(i);
    await p.profile(true);
    const times: number[] = [];
    const c0 = process.cpuUsage();
    for (let i = 0; i < steps; i++) {
      const t0 = performance.now();
      await run(WARMUP + i);
      times.push(performance.now() - t0);
    }
    const cpu = cpuSince(c0);
    const prof = await p.profile(true);
    const tokens = ROWS * TRAIN_T;
    const flops = trainFlops(o, p.arch.vocab, ROWS, TRAIN_T);
    const best = Math.min(...times);
    const med = median(times);
    out(
      `  training (${objective === 'ce' ? 'pretrainStep, cross-entropy' : 'update, GRPO β=0'}) ${c.label}: ${fmt(tokens / (best / 1000))} tokens/s best, ${fmt(tokens / (med / 1000))} median over ${steps} steps; ms/step best ${fmt(best, 1)}, median ${fmt(med, 1)}`,
    );
    const perCpu = (flops * steps) / cpu / 1e9;
    out(
      `    model FLOPs/step ${fmt(flops / 1e9, 1)} G → ${fmt(flops / (best / 1000) / 1e9, 1)} GFLOP/s best = ${fmt((100 * flops) / (best / 1000) / 1e9 / mm.best, 0)}% of the MatMul's ${fmt(mm.best, 1)} GFLOP/s (wall, best vs best); per CPU-second ${fmt(perCpu, 1)} vs the MatMul's ${fmt(mm.perCpu, 1)} = ${fmt((100 * perCpu) / mm.perCpu, 0)}%`,
    );
    out(
      `    CPU time ${fmt((cpu * 1000) / steps, 0)} ms/step over all threads = ${fmt((tokens * steps) / cpu)} tokens per CPU-second (×${c.threads} = ${fmt((tokens * steps * c.threads) / cpu)} tokens/s if the ${c.threads} core(s) were not shared)`,
    );
    printProfile(
      prof,
      steps,
      times.reduce((a, b) => a + b, 0),
    );
    return { best: tokens / (best / 1000), median: tokens / (med / 1000), gflops: flops / (best / 1000) / 1e9 };
  } finally {
    await p.close();
  }
}

async function sampleBench(c: Config, reps: number, mm: Yardstick): Promise<Rate> {
  const p = new TransformerPolicy(options(c.threads, c.worker), 1);
  const rng = new Rng(13);
  try {
    const run = async (seed: number, fixed: boolean) => {
      // END + 15 characters = a 16-token prompt; 256 distinct prompts, one row each.
      const requests = Array.from({ length: ROWS }, () => ({ prompt: randomText(rng, PROMPT - 1) }));
      const r = await p.sample(
        requests,
        { n: 1, temperature: 1, topP: 1, maxTokens: NEW, seed },
        fixed ? { minTokens: NEW } : undefined,
      );
      return r.reduce((a, g) => a + g[0]!.tokenIds.length, 0);
    };
    for (let i = 0; i < WARMUP; i++) await run(i, true);
    await p.profile(true);
    const times: number[] = [];
    const c0 = process.cpuUsage();
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      const n = await run(100 + i, true);
      times.push(performance.now() - t0);
      if (n !== ROWS * NEW) throw new Error(`expected ${ROWS * NEW} sampled tokens, got ${n}`);
    }
    const cpu = cpuSince(c0);
    const prof = await p.profile(true);
    const best = Math.min(...times);
    const med = median(times);
    const tokens = ROWS * NEW;
    out(
      `  sampling ${c.label}: ${fmt(tokens / (best / 1000))} tokens/s best, ${fmt(tokens / (med / 1000))} median over ${reps} calls; ms per call best ${fmt(best, 1)} (${fmt(best / NEW, 2)} ms per decoding step of ${ROWS} rows)`,
    );
    // Model FLOPs of a call: the prompt's forward (2·params per token) and each new token's, plus attention.
    const o = p.options;
    const d = o.dModel;
    const matmulParams = o.layers * (4 * d * d + 2 * o.mlpRatio * d * d) + d * p.arch.vocab;
    let flops = 2 * matmulParams * ROWS * (PROMPT + NEW - 1);
    for (let t = 1; t < PROMPT + NEW; t++) flops += o.layers * 2 * 2 * ROWS * t * d;
    const perCpu = (flops * reps) / cpu / 1e9;
    out(
      `    model FLOPs/call ${fmt(flops / 1e9, 2)} G → ${fmt(flops / (best / 1000) / 1e9, 1)} GFLOP/s best = ${fmt((100 * flops) / (best / 1000) / 1e9 / mm.best, 0)}% of the MatMul (wall); per CPU-second ${fmt(perCpu, 1)} = ${fmt((100 * perCpu) / mm.perCpu, 0)}% of the MatMul's`,
    );
    out(
      `    CPU time ${fmt((cpu * 1000) / reps, 0)} ms/call over all threads = ${fmt((tokens * reps) / cpu)} tokens per CPU-second (×${c.threads} = ${fmt((tokens * reps * c.threads) / cpu)} tokens/s if the ${c.threads} core(s) were not shared)`,
    );
    printProfile(
      prof,
      reps,
      times.reduce((a, b) => a + b, 0),
    );
    // The same call without a minimum length: rows stop at the end token as in training runs.
    const t0 = performance.now();
    const n = await run(999, false);
    out(
      `    free-running (rows stop on the end token): ${n} tokens in ${fmt(performance.now() - t0, 1)} ms = ${fmt(n / ((performance.now() - t0) / 1000))} tokens/s`,
    );
    return { best: tokens / (best / 1000), median: tokens / (med / 1000), gflops: flops / (best / 1000) / 1e9 };
  } finally {
    await p.close();
  }
}

/** What the PyTorch anchor measured, or why it was skipped. */
type Anchor =
  | {
      readonly python: string;
      readonly torch: string;
      readonly update: { best: number; median: number };
      readonly sample: { best: number; median: number };
    }
  | { readonly skipped: string };

/**
 * The same GPT, shapes and paths in PyTorch (bench/torch_gpt.py) with 2 threads, run by the first of
 * `python3` and `/usr/bin/python3` (Debian's python3-torch) that imports torch, or by `CORL_BENCH_PYTHON` alone.
 */
function torchAnchor(steps: number, reps: number): Anchor {
  const script = path.resolve(__dirname, '..', '..', 'bench', 'torch_gpt.py');
  const candidates = process.env.CORL_BENCH_PYTHON ? [process.env.CORL_BENCH_PYTHON] : ['python3', '/usr/bin/python3'];
  const tried: string[] = [];
  for (const py of [...new Set(candidates)]) {
    const probe = spawnSync(py, ['-c', 'import torch'], { encoding: 'utf8', timeout: 60_000 });
    if (probe.error || probe.status !== 0) {
      tried.push(py);
      continue;
    }
    const r = spawnSync(py, [script, '2', String(steps), String(reps)], {
      encoding: 'utf8',
      timeout: 30 * 60_000,
      // Idle OpenMP threads sleep, as corl's sessions do (allow_spinning 0): spinning ones cost
      // PyTorch up to 10× in decoding on a shared machine. OMP_WAIT_POLICY in the environment wins.
      env: { OMP_WAIT_POLICY: 'PASSIVE', ...process.env, OMP_NUM_THREADS: '2' },
    });
    const line = (r.stdout ?? '').trim().split('\n').at(-1) ?? '';
    if (r.status !== 0 || !line.startsWith('{'))
      return { skipped: `${py} ${script} failed: ${(r.stderr || String(r.error ?? r.status)).trim().slice(-300)}` };
    const j = JSON.parse(line) as { torch: string; update: Rate; sample: Rate };
    return { python: py, torch: j.torch, update: j.update, sample: j.sample };
  }
  return { skipped: `no python3 with torch (tried ${tried.join(', ')}; on Debian: apt-get install python3-torch)` };
}

export const bench: Bench = {
  name: 'transformer',
  description:
    'embedded transformer (d 128, 4 layers, 4 heads, V 32, ctx 64): training and sampling tokens/s vs a 512³ MatMul',
  async run() {
    const steps = env('CORL_BENCH_STEPS', 5);
    const reps = env('CORL_BENCH_REPS', 5);
    const all: Config[] = [
      { label: '1 thread (1 worker shard)', threads: 1, worker: true },
      { label: '2 threads (2 worker shards, data-parallel)', threads: 2, worker: true },
      { label: '2 threads (1 in-process shard, 2 intra-op threads)', threads: 2, worker: false },
    ];
    const only = process.env.CORL_BENCH_CONFIGS?.split(',').map(Number);
    const configs = only ? all.filter((_, i) => only.includes(i)) : all;
    const arch = new TransformerPolicy(options(1, false), 1);
    out(
      `model: ${fmt(parameterCount(arch.arch))} parameters, vocabulary ${arch.arch.vocab}; load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} on ${os.cpus().length} cores`,
    );
    await arch.close();
    const what = (process.env.CORL_BENCH_WHAT ?? 'ce,grpo,sample').split(',');
    // The figures of the default configuration (2 threads, 2 worker shards), summarised at the end.
    let headline: { mm: Yardstick; grpo?: Rate; sample?: Rate } | undefined;
    for (const c of configs) {
      // Measured again before every configuration: on a shared machine the load changes within minutes.
      // with 2 threads, 1 thread alone first: each thread's rate against one thread's says how the cores share
      const alone: MachineYardstick | undefined = c.threads > 1 ? await matmulYardstick(1) : undefined;
      const y = await matmulYardstick(c.threads);
      for (const line of yardstickLines(y, alone)) out(line);
      const ref = y.kernel;
      if (what.includes('ce')) await trainBench(c, 'ce', steps, ref);
      const grpo = what.includes('grpo') ? await trainBench(c, 'grpo', steps, ref) : undefined;
      const sample = what.includes('sample') ? await sampleBench(c, reps, ref) : undefined;
      if (c.threads === 2 && c.worker) headline = { mm: ref, ...(grpo ? { grpo } : {}), ...(sample ? { sample } : {}) };
    }
    if (headline) {
      const h = headline;
      const share = (r: Rate) => `${fmt(r.gflops, 1)} GFLOP/s = ${fmt((100 * r.gflops) / h.mm.best, 0)}%`;
      out(
        `summary (2 threads, 2 worker shards: the default), against the 2-thread MatMul kernel's ${fmt(h.mm.best, 1)} GFLOP/s best:`,
      );
      if (h.grpo)
        out(
          `  GRPO update: ${fmt(h.grpo.best)} tokens/s best, ${fmt(h.grpo.median)} median; ${share(h.grpo)} of the MatMul (target ≥ 70%)`,
        );
      if (h.sample)
        out(
          `  KV-cached sampling: ${fmt(h.sample.best)} tokens/s best, ${fmt(h.sample.median)} median; ${share(h.sample)} of the MatMul (target ≥ 50%)`,
        );
      if (process.env.CORL_BENCH_TORCH === '0') out('  PyTorch anchor: skipped (CORL_BENCH_TORCH=0)');
      else {
        const a = torchAnchor(env('CORL_BENCH_TORCH_STEPS', 3), env('CORL_BENCH_TORCH_REPS', 3));
        if ('skipped' in a) out(`  PyTorch anchor: skipped, ${a.skipped}`);
        else {
          const perToken = (r: Rate | undefined) => (r ? r.gflops / r.best : 0);
          const line = (what: string, t: { best: number; median: number }, r: Rate | undefined) =>
            `${what} ${fmt(t.best)} tokens/s best, ${fmt(t.median)} median` +
            (r
              ? ` (${fmt((100 * t.best * perToken(r)) / h.mm.best, 0)}% of the MatMul; corl ×${fmt(r.best / t.best, 1)})`
              : '');
          out(
            `  PyTorch anchor (${a.python}, torch ${a.torch}, 2 threads, OMP_WAIT_POLICY ${process.env.OMP_WAIT_POLICY ?? 'PASSIVE'}, the same GPT and shapes, this run):`,
          );
          out(`    ${line('GRPO update', a.update, h.grpo)}`);
          out(`    ${line('KV-cached sampling', a.sample, h.sample)}`);
        }
      }
    }
    out(
      `load average after: ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
  },
};
