// The machine's yardstick for `npm run bench transformer` and `ops`: a 512³ float32 MatMul in
// onnxruntime-node, measured as the kernel rate (eight chained MatMuls per call and a scalar out, so
// the 1 MB output each call would copy into a fresh JavaScript buffer, and the call's own overhead,
// are spread over 2.1 GFLOP instead of 0.27) in batches long enough to outlast a scheduler slice,
// beside the single-MatMul-per-call figure the bench printed before, the share of the machine's CPU
// time the hypervisor stole meanwhile (/proc/stat) and the load average: what a reader needs to
// judge whether the figures are the machine's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { Graph } from '../core/tensor/graph';
import { compile, GraphSession } from '../core/tensor/session';
import { Rng } from '../core/util/rng';

const N = 512;
/** MatMuls chained in one call of the kernel measurement. */
export const CHAIN = 8;

/** GFLOP/s of the best and median batch, and GFLOP per CPU-second (every thread) over all batches. */
export interface MatMulRate {
  readonly best: number;
  readonly median: number;
  readonly perCpu: number;
}

/** The yardstick at a thread count. */
export interface Yardstick {
  readonly threads: number;
  /** The kernel rate: {@link CHAIN} chained MatMuls per call, scalar out. The figure shares are taken of. */
  readonly kernel: MatMulRate;
  /** One MatMul per call with its 512 × 512 output (the bench's figure before 2026-12-07). */
  readonly perCall: MatMulRate;
  /** Share of all CPUs' time stolen by the hypervisor during the measurement; undefined off Linux. */
  readonly steal: number | undefined;
  /** 1-minute load average when the measurement ended. */
  readonly load: number;
}

/** The aggregate `cpu` line of /proc/stat's text: user nice system idle iowait irq softirq steal (ticks). */
export function cpuTicks(stat: string): number[] | undefined {
  const line = stat.split('\n').find((l) => /^cpu\s/.test(l));
  if (!line) return undefined;
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return f.length === 8 && f.every(Number.isFinite) ? f : undefined;
}

/** Steal ticks over all ticks between two readings of {@link cpuTicks}; undefined when nothing elapsed. */
export function stealShare(before: readonly number[], after: readonly number[]): number | undefined {
  const d = after.map((x, i) => x - before[i]!);
  const total = d.reduce((a, b) => a + b, 0);
  return total > 0 ? d[7]! / total : undefined;
}

function readTicks(): number[] | undefined {
  try {
    return cpuTicks(fs.readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * `batches` timed batches of `calls` calls of a graph of `chain` MatMuls after `warmup` untimed
 * calls. B is scaled by √(12/N) so that a chain of products keeps its entries' spread (no overflow
 * or underflow changes the kernel's speed).
 */
async function rate(
  threads: number,
  m: { chain: number; scalar: boolean; calls: number; batches: number; warmup: number },
): Promise<MatMulRate> {
  const g = new Graph(`matmul512x${m.chain}`);
  const a = g.input('a', 'float32', [N, N]);
  const b = g.input('b', 'float32', [N, N]);
  let y = a;
  for (let i = 0; i < m.chain; i++) y = g.matmul(y, b);
  const s = await GraphSession.create(compile(g, { outputs: [['c', m.scalar ? g.reduceSum(y, [0, 1]) : y]] }), {
    threads,
  });
  try {
    const rng = new Rng(7);
    const scale = Math.sqrt(12 / N);
    const A = Float32Array.from({ length: N * N }, () => rng.next() - 0.5);
    const B = Float32Array.from({ length: N * N }, () => (rng.next() - 0.5) * scale);
    const feeds = { a: { data: A, dims: [N, N] }, b: { data: B, dims: [N, N] } };
    for (let i = 0; i < m.warmup; i++) await s.run(feeds);
    const flops = 2 * N ** 3 * m.chain * m.calls;
    const rates: number[] = [];
    const c0 = process.cpuUsage();
    for (let k = 0; k < m.batches; k++) {
      const t0 = performance.now();
      for (let i = 0; i < m.calls; i++) await s.run(feeds);
      rates.push(flops / ((performance.now() - t0) / 1000) / 1e9);
    }
    const used = process.cpuUsage(c0);
    return {
      best: Math.max(...rates),
      median: median(rates),
      perCpu: (flops * m.batches) / ((used.user + used.system) / 1e6) / 1e9,
    };
  } finally {
    await s.close();
  }
}

/** The yardstick at `threads` intra-op threads (the sessions' default options: idle pool threads sleep). */
export async function matmulYardstick(threads: number): Promise<Yardstick> {
  const t0 = readTicks();
  // about 0.1 s per kernel batch at 170 GFLOP/s; 9 of them, after 3 warm-up calls
  const kernel = await rate(threads, { chain: CHAIN, scalar: true, calls: 8, batches: 9, warmup: 3 });
  const perCall = await rate(threads, { chain: 1, scalar: false, calls: 10, batches: 7, warmup: 5 });
  const t1 = readTicks();
  return {
    threads,
    kernel,
    perCall,
    steal: t0 && t1 ? stealShare(t0, t1) : undefined,
    load: os.loadavg()[0] ?? 0,
  };
}

const fmt = (x: number, d = 1): string =>
  x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/**
 * The yardstick's lines: the kernel rate (best, median, per CPU-second, per thread), the per-call
 * figure, the steal share and the load; with `alone`, a 1-thread yardstick measured just before,
 * each thread's rate against one thread's alone.
 */
export function yardstickLines(y: Yardstick, alone?: Yardstick): string[] {
  const t = `${y.threads} thread${y.threads > 1 ? 's' : ''}`;
  const perThread =
    y.threads > 1 && alone
      ? `; per thread ${fmt(y.kernel.best / y.threads)} best, against ${fmt(alone.kernel.best)} for 1 thread alone (${fmt((100 * y.kernel.best) / y.threads / alone.kernel.best, 0)}%)`
      : `; per thread ${fmt(y.kernel.best / y.threads)} best`;
  return [
    `MatMul 512³ float32 (onnxruntime-node, ${t}), kernel (${CHAIN} chained per call, scalar out): ${fmt(y.kernel.best)} GFLOP/s best, ${fmt(y.kernel.median)} median, ${fmt(y.kernel.perCpu)} per CPU-second${perThread}`,
    `  one MatMul per call with its 1 MB output (the figure before 2026-12-07): ${fmt(y.perCall.best)} best, ${fmt(y.perCall.median)} median, ${fmt(y.perCall.perCpu)} per CPU-second; steal ${y.steal === undefined ? 'not known (no /proc/stat)' : `${fmt(100 * y.steal, 2)}% of the CPUs' time`}; load average ${y.load.toFixed(2)} on ${os.availableParallelism()} cores${y.load > 0.5 ? ' (not idle: the figures are not the machine’s own)' : ''}`,
  ];
}
