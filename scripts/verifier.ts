// A learned verifier's data and its quality (models/README.md, "Verifiers"; docs/algorithms/maporl.md).
//   corpus:  sample solutions from a config's agents on one split, label each by ground truth, and
//            write {"prompt": problem + solution + cue, "completion": "Y" | "N"} rows for `corl pretrain`
//            (pretrain.corpus). With --per-label m, each problem keeps at most m right and m wrong
//            solutions, as many of each, so the verifier cannot score by the problem's difficulty.
//   fit:     fit a likelihood head on such rows: a logistic regression of the label on the [min, mean]
//            token log-probability of the solution under a corl:transformer checkpoint (Newton's
//            method from zero, so the same rows give the same head), written as <out>/verifier.json.
//   measure: score such rows with a verifier folder (through corl:learned-verifier) against their labels.
//   node dist/scripts/verifier.js corpus -c configs/maporl.json --split train --samples 8 --per-label 4 --out corpus.jsonl
//   node dist/scripts/verifier.js fit --model models/slips/alpha --data corpus.jsonl --out models/verifiers/arith-slips
//   node dist/scripts/verifier.js measure --checkpoint models/verifiers/arith-slips --data validation.jsonl
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../core/config/load';
import type { Problem } from '../core/contracts/problem';
import { Grader } from '../core/reward/grade';
import { buildRunContext, sampleChecked } from '../core/trainer/run-context';
import { mixSeed, Rng } from '../core/util/rng';
import { mean } from '../core/util/mean';
import { installBuiltins } from '../entry/builtins';
import type { RewardSource } from '../core/contracts/reward-source';
import { createPlugin, rewardContext } from '../core/testing';
import { CheckpointScorer } from '../plugins/policies/transformer/scorer';
import {
  VERDICT_RIGHT,
  VERDICT_WRONG,
  VERIFIER_FILE,
  learnedVerifierReward,
  likelihoodFeatures,
  likelihoodIds,
  verifierText,
  type LikelihoodHead,
} from '../plugins/rewards/learned-verifier';

/** One labelled row of a verifier corpus. */
export interface VerdictRow {
  readonly prompt: string;
  readonly completion: string;
  readonly problem: string;
  readonly agent: string;
  /** The problem's canonical prompt and the sampled solution (the parts of `prompt`). */
  readonly question: string;
  readonly solution: string;
}

/** Area under the ROC curve of `scores` for `labels` (ties count one half): P(score of a right > score of a wrong). */
export function auc(scores: readonly number[], labels: readonly boolean[]): number {
  const pos = scores.filter((_, i) => labels[i]);
  const neg = scores.filter((_, i) => !labels[i]);
  if (pos.length === 0 || neg.length === 0) return NaN;
  const order = scores.map((s, i) => [s, i] as const).sort((a, b) => a[0] - b[0]);
  // Mann–Whitney U from mid-ranks.
  let rankSum = 0;
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j < order.length && order[j]![0] === order[i]![0]) j++;
    const mid = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (labels[order[k]![1]]) rankSum += mid;
    i = j;
  }
  return (rankSum - (pos.length * (pos.length + 1)) / 2) / (pos.length * neg.length);
}

/** Expected calibration error over `bins` equal-width bins of the score: Σ_b n_b/n · |mean score − accuracy|. */
export function calibrationError(scores: readonly number[], labels: readonly boolean[], bins = 10): number {
  const n = new Array<number>(bins).fill(0);
  const s = new Array<number>(bins).fill(0);
  const y = new Array<number>(bins).fill(0);
  scores.forEach((p, i) => {
    const b = Math.min(bins - 1, Math.floor(p * bins));
    n[b]!++;
    s[b]! += p;
    y[b]! += labels[i] ? 1 : 0;
  });
  let e = 0;
  for (let b = 0; b < bins; b++) if (n[b]! > 0) e += Math.abs(s[b]! - y[b]!);
  return e / Math.max(scores.length, 1);
}

function flag(args: string[], name: string, fallback?: string): string {
  const i = args.indexOf(name);
  const v = i >= 0 ? args[i + 1] : fallback;
  if (v === undefined) throw new Error(`expected ${name} <value>`);
  return v;
}

async function corpus(args: string[]): Promise<void> {
  installBuiltins();
  const loaded = await loadConfig(flag(args, '-c'));
  const split = flag(args, '--split', 'train');
  const samples = Number(flag(args, '--samples', '8'));
  const perLabel = Number(flag(args, '--per-label', '0'));
  const limit = Number(flag(args, '--limit', '0'));
  const seed = Number(flag(args, '--seed', '0'));
  const out = flag(args, '--out');
  const ctx = await buildRunContext(loaded);
  try {
    const all: readonly Problem[] =
      split === 'train' ? ctx.data.train : split === 'validation' ? (ctx.data.validation ?? []) : [];
    if (all.length === 0) throw new Error(`expected --split train or validation with problems, got "${split}"`);
    const problems = limit > 0 ? all.slice(0, limit) : all;
    const grader = new Grader(ctx.extractor, ctx.grading, ctx.data.groundTruth);
    const sampling = ctx.loaded.config.eval.sampling;
    // rows[i]: every agent's labelled samples of problem i.
    const byProblem: { row: VerdictRow; right: boolean }[][] = problems.map(() => []);
    for (const a of ctx.agents) {
      const chunk = 200;
      for (let at = 0; at < problems.length; at += chunk) {
        const part = problems.slice(at, at + chunk);
        const done = await sampleChecked(
          a,
          part.map((p) => ({ id: p.id, prompt: p.prompt })),
          { n: samples, ...sampling, seed: mixSeed(seed, 'verifier-corpus', split, a.index, at) },
          'verifier corpus',
        );
        for (const [i, p] of part.entries()) {
          const verdicts = (
            await grader.grade(
              p,
              done[i]!.map((c) => c.text),
            )
          ).correct;
          for (const [j, c] of done[i]!.entries()) {
            const right = verdicts[j]!;
            const row = {
              prompt: verifierText(p.prompt, c.text),
              completion: right ? VERDICT_RIGHT : VERDICT_WRONG,
              problem: p.id,
              agent: a.name,
              question: p.prompt,
              solution: c.text,
            };
            byProblem[at + i]!.push({ row, right });
          }
        }
        process.stderr.write(`${a.name}: ${Math.min(at + chunk, problems.length)}/${problems.length} problems\n`);
      }
    }
    const rows: VerdictRow[] = [];
    byProblem.forEach((group, i) => {
      if (perLabel <= 0) {
        rows.push(...group.map((g) => g.row));
        return;
      }
      const rng = new Rng(mixSeed(seed, 'verifier-balance', i));
      const right = rng.shuffle(group.filter((g) => g.right));
      const wrong = rng.shuffle(group.filter((g) => !g.right));
      const m = Math.min(perLabel, right.length, wrong.length);
      rows.push(...right.slice(0, m).map((g) => g.row), ...wrong.slice(0, m).map((g) => g.row));
    });
    const ordered = new Rng(mixSeed(seed, 'verifier-order')).shuffle(rows);
    fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
    fs.writeFileSync(out, ordered.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const yes = ordered.filter((r) => r.completion === VERDICT_RIGHT).length;
    process.stdout.write(
      `${out}: ${ordered.length} rows (${yes} right, ${ordered.length - yes} wrong) from ${problems.length} ${split} problems × ${ctx.agents.length} agents × ${samples} samples\n`,
    );
  } finally {
    await ctx.close();
  }
}

/**
 * Logistic regression of y on x (rows of features) with an intercept, by Newton's method from zero
 * with a small ridge (1e-6) on the weights: returns [w..., b].
 */
export function fitLogistic(x: readonly (readonly number[])[], y: readonly boolean[], iterations = 50): number[] {
  const d = (x[0]?.length ?? 0) + 1;
  const beta = new Array<number>(d).fill(0);
  const row = (i: number) => [...x[i]!, 1];
  for (let it = 0; it < iterations; it++) {
    const g = new Array<number>(d).fill(0);
    const H = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    x.forEach((_, i) => {
      const r = row(i);
      const z = r.reduce((a, v, j) => a + v * beta[j]!, 0);
      const p = 1 / (1 + Math.exp(-z));
      const w = p * (1 - p);
      for (let j = 0; j < d; j++) {
        g[j]! += (p - (y[i] ? 1 : 0)) * r[j]!;
        for (let k = 0; k < d; k++) H[j]![k]! += w * r[j]! * r[k]!;
      }
    });
    for (let j = 0; j < d - 1; j++) {
      g[j]! += 1e-6 * beta[j]!;
      H[j]![j]! += 1e-6;
    }
    const step = solve(H, g);
    let size = 0;
    for (let j = 0; j < d; j++) {
      beta[j]! -= step[j]!;
      size = Math.max(size, Math.abs(step[j]!));
    }
    if (size < 1e-12) break;
  }
  return beta;
}

/** Solve A x = b by Gaussian elimination with partial pivoting (A small and well conditioned). */
function solve(A: readonly (readonly number[])[], b: readonly number[]): number[] {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let r = c + 1; r < n; r++) {
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  const out = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let v = M[r]![n]!;
    for (let k = r + 1; k < n; k++) v -= M[r]![k]! * out[k]!;
    out[r] = v / M[r]![r]!;
  }
  return out;
}

function readRows(file: string): VerdictRow[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as VerdictRow);
}

async function fit(args: string[]): Promise<void> {
  const modelDir = path.resolve(flag(args, '--model'));
  const dataFile = flag(args, '--data');
  const out = path.resolve(flag(args, '--out'));
  const rows = readRows(dataFile);
  const scorer = await CheckpointScorer.open(modelDir);
  const x: [number, number][] = [];
  try {
    for (let at = 0; at < rows.length; at += 64) {
      const part = rows.slice(at, at + 64).map((r) => likelihoodIds(scorer, r.question, r.solution, dataFile));
      const lps = await scorer.tokenLogprobs(
        part.map((p) => p.ids),
        part.map((p) => p.from),
      );
      for (const l of lps) x.push(likelihoodFeatures(l));
    }
  } finally {
    await scorer.close();
  }
  const y = rows.map((r) => r.completion === VERDICT_RIGHT);
  const [w0, w1, b] = fitLogistic(x, y);
  const head: LikelihoodHead = {
    format: 'corl-learned-verifier',
    version: 1,
    head: 'likelihood',
    model: path.relative(out, modelDir).split(path.sep).join('/'),
    weights: [w0!, w1!],
    bias: b!,
    fit: {
      method: 'logistic regression (Newton, ridge 1e-6) of the label on [min, mean] token log-probability',
      rows: rows.length,
      right: y.filter(Boolean).length,
      data: path.basename(dataFile),
      auc: auc(
        x.map((f) => w0! * f[0] + w1! * f[1]),
        y,
      ),
    },
  };
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, VERIFIER_FILE), JSON.stringify(head, null, 2) + '\n');
  process.stdout.write(`${path.join(out, VERIFIER_FILE)}: ${JSON.stringify(head, null, 2)}\n`);
}

async function measure(args: string[]): Promise<void> {
  installBuiltins();
  const rows = readRows(flag(args, '--data'));
  const reward = (await createPlugin(learnedVerifierReward, {
    checkpoint: path.resolve(flag(args, '--checkpoint')),
  })) as RewardSource;
  const scores: number[] = [];
  try {
    for (const r of rows) {
      const ctx = rewardContext({ keys: [null], texts: [r.solution], problem: { id: r.problem, prompt: r.question } });
      scores.push((await reward.score(ctx)).rewards[0]!);
    }
  } finally {
    await reward.close?.();
  }
  const labels = rows.map((r) => r.completion === VERDICT_RIGHT);
  const summary = (idx: readonly number[]) => {
    const s = idx.map((i) => scores[i]!);
    const y = idx.map((i) => labels[i]!);
    const base = mean(
      y.map((v) => (v ? 1 : 0)),
      NaN,
    );
    return {
      rows: idx.length,
      rightRate: base,
      meanScore: mean(s, NaN),
      accuracy: mean(
        s.map((v, j) => (v > 0.5 === y[j] ? 1 : 0)),
        NaN,
      ),
      majorityBaseline: Math.max(base, 1 - base),
      auc: auc(s, y),
      brier: mean(
        s.map((v, j) => (v - (y[j] ? 1 : 0)) ** 2),
        NaN,
      ),
      ece: calibrationError(s, y),
    };
  };
  const all = rows.map((_, i) => i);
  const agents = [...new Set(rows.map((r) => r.agent))];
  const result = {
    checkpoint: path.resolve(flag(args, '--checkpoint')),
    data: flag(args, '--data'),
    ...summary(all),
    perAgent: Object.fromEntries(agents.map((a) => [a, summary(all.filter((i) => rows[i]!.agent === a))])),
  };
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

if (require.main === module) {
  const [mode, ...args] = process.argv.slice(2);
  const run = mode === 'corpus' ? corpus : mode === 'fit' ? fit : mode === 'measure' ? measure : undefined;
  if (!run) {
    process.stderr.write('usage: node dist/scripts/verifier.js corpus|fit|measure ...\n');
    process.exit(2);
  }
  run(args).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
