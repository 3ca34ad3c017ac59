// A learned verifier's data and its quality (models/README.md, "Verifiers"; docs/algorithms/maporl.md).
//   corpus:  sample solutions from a config's agents on one split, label each by ground truth, and
//            write {"prompt": problem + solution + cue, "completion": "Y" | "N"} rows for `corl pretrain`
//            (pretrain.corpus). With --per-label m, each problem keeps at most m right and m wrong
//            solutions, as many of each, so the verifier cannot score by the problem's difficulty.
//   measure: score such rows with a verifier checkpoint and compare with their labels.
//   node dist/scripts/verifier.js corpus -c configs/maporl.json --split train --samples 8 --per-label 4 --out corpus.jsonl
//   node dist/scripts/verifier.js measure --checkpoint models/verifiers/arith-slips --data validation.jsonl
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../core/config/load';
import type { Problem } from '../core/contracts/problem';
import { AnswerKeys } from '../core/trainer/answer-keys';
import { buildCohort, sampleChecked } from '../core/trainer/cohort';
import { mixSeed, Rng } from '../core/util/rng';
import { installBuiltins } from '../entry/builtins';
import { CheckpointScorer } from '../plugins/policies/transformer/scorer';
import {
  VERDICT_RIGHT,
  VERDICT_WRONG,
  learnedVerifierReward,
  verdictProbability,
  verifierText,
} from '../plugins/rewards/learned-verifier';

/** One labelled row of a verifier corpus. */
export interface VerdictRow {
  readonly prompt: string;
  readonly completion: string;
  readonly problem: string;
  readonly agent: string;
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
  const cohort = await buildCohort(loaded);
  try {
    const all: readonly Problem[] =
      split === 'train' ? cohort.data.train : split === 'validation' ? (cohort.data.validation ?? []) : [];
    if (all.length === 0) throw new Error(`expected --split train or validation with problems, got "${split}"`);
    const problems = limit > 0 ? all.slice(0, limit) : all;
    const keys = new AnswerKeys(cohort.extractor, cohort.grading);
    const sampling = cohort.loaded.config.eval.sampling;
    // rows[i]: every agent's labelled samples of problem i.
    const byProblem: { row: VerdictRow; right: boolean }[][] = problems.map(() => []);
    for (const a of cohort.agents) {
      const chunk = 200;
      for (let at = 0; at < problems.length; at += chunk) {
        const part = problems.slice(at, at + chunk);
        const done = await sampleChecked(
          a,
          part.map((p) => ({ id: p.id, prompt: p.prompt })),
          { n: samples, ...sampling, seed: mixSeed(seed, 'verifier-corpus', split, a.index, at) },
          'verifier corpus',
        );
        part.forEach((p, i) => {
          const ref = keys.referenceKey(p.id, cohort.data.groundTruth);
          for (const c of done[i]!) {
            const right = ref !== null && keys.of(c.text).key === ref;
            const row = {
              prompt: verifierText(p.prompt, c.text),
              completion: right ? VERDICT_RIGHT : VERDICT_WRONG,
              problem: p.id,
              agent: a.name,
            };
            byProblem[at + i]!.push({ row, right });
          }
        });
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
      `${out}: ${ordered.length} rows (${yes} right, ${ordered.length - yes} wrong) from ${problems.length} ${split} problems × ${cohort.agents.length} agents × ${samples} samples\n`,
    );
  } finally {
    await cohort.close();
  }
}

async function measure(args: string[]): Promise<void> {
  const scorer = await CheckpointScorer.open(path.resolve(flag(args, '--checkpoint')));
  try {
    const rows = fs
      .readFileSync(flag(args, '--data'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as VerdictRow);
    const [yes, no] = [VERDICT_RIGHT, VERDICT_WRONG].map((v) => scorer.tokenizer.encode(v)[0]!);
    const scores: number[] = [];
    for (let at = 0; at < rows.length; at += 64) {
      const part = rows.slice(at, at + 64).map((r) => {
        const ids = scorer.encode(r.prompt);
        return ids.slice(Math.max(0, ids.length - scorer.architecture.context));
      });
      for (const l of await scorer.nextLogits(part)) scores.push(verdictProbability(l[yes!]!, l[no!]!));
    }
    const labels = rows.map((r) => r.completion === VERDICT_RIGHT);
    const n = rows.length;
    const acc = scores.filter((s, i) => s > 0.5 === labels[i]).length / n;
    const brier = scores.reduce((a, s, i) => a + (s - (labels[i] ? 1 : 0)) ** 2, 0) / n;
    const base = labels.filter(Boolean).length / n;
    const agents = [...new Set(rows.map((r) => r.agent))];
    const per = agents.map((a) => {
      const idx = rows.map((r, i) => (r.agent === a ? i : -1)).filter((i) => i >= 0);
      const s = idx.map((i) => scores[i]!);
      const y = idx.map((i) => labels[i]!);
      return {
        agent: a,
        rows: idx.length,
        accuracy: s.filter((v, j) => v > 0.5 === y[j]).length / idx.length,
        auc: auc(s, y),
        base: y.filter(Boolean).length / idx.length,
      };
    });
    const result = {
      verifier: learnedVerifierReward.manifest.name,
      checkpoint: scorer.dir,
      rows: n,
      rightRate: base,
      meanScore: scores.reduce((a, b) => a + b, 0) / n,
      accuracy: acc,
      majorityBaseline: Math.max(base, 1 - base),
      auc: auc(scores, labels),
      brier,
      ece: calibrationError(scores, labels),
      perAgent: per,
    };
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    await scorer.close();
  }
}

if (require.main === module) {
  const [mode, ...args] = process.argv.slice(2);
  const run = mode === 'corpus' ? corpus : mode === 'measure' ? measure : undefined;
  if (!run) {
    process.stderr.write('usage: node dist/scripts/verifier.js corpus|measure ...\n');
    process.exit(2);
  }
  run(args).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
