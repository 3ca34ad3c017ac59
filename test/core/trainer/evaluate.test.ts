import { expect } from 'chai';
import type { Completion } from '../../../core/contracts/completion';
import type { Equivalence } from '../../../core/contracts/equivalence';
import type { Policy, SampleRequest, SamplingOptions } from '../../../core/contracts/policy';
import { MapGroundTruth } from '../../../core/contracts/problem';
import { Grader } from '../../../core/reward/grade';
import type { Agent } from '../../../core/trainer/run-context';
import { agentScores, ensembleCorrect, evaluateAgent, pairAgreement } from '../../../core/trainer/evaluate';
import { mixSeed } from '../../../core/util/rng';

/** A policy that answers each prompt with a fixed script of answers, and records its calls. */
function scripted(script: Record<string, (string | null)[]>): {
  policy: Policy;
  calls: { prompts: string[]; seed: number; n: number }[];
} {
  const calls: { prompts: string[]; seed: number; n: number }[] = [];
  const policy = {
    describe: () => ({ kind: 'scripted', family: 'test', parameters: 0, canTrain: false }),
    async sample(requests: readonly SampleRequest[], options: SamplingOptions): Promise<Completion[][]> {
      calls.push({ prompts: requests.map((r) => r.prompt), seed: options.seed, n: options.n });
      return requests.map((r) =>
        script[r.prompt]!.slice(0, options.n).map((a): Completion => ({
          text: a === null ? 'no idea' : `so \\boxed{${a}}`,
          tokenIds: [1, 2],
          logprobs: [-1, -1],
          finishReason: 'stop',
        })),
      );
    },
  } as unknown as Policy;
  return { policy, calls };
}

const extractor = { extract: (t: string): string | null => /\\boxed\{(.*)\}/.exec(t)?.[1] ?? null };
// "0.5" and "1/2" are one answer, so clustering (not string identity) decides votes.
const equivalence: Equivalence = {
  key: (a) => (a.trim() === '' ? null : a.trim()),
  equal: async (a, b) => a === b || (new Set([a, b]).size === 2 && [a, b].every((x) => x === '0.5' || x === '1/2')),
};
const agent = (index: number, policy: Policy): Agent => ({ index, name: `ag${index}`, seed: 100 + index, policy });
const problems = [
  { id: 'p1', prompt: 'one' },
  { id: 'p2', prompt: 'two' },
  { id: 'p3', prompt: 'three' },
];
const gt = new MapGroundTruth([
  ['p1', { answer: '0.5' }],
  ['p2', { answer: '4' }],
  ['p3', { answer: '7' }],
]);
const sampling = { temperature: 1, topP: 1, maxTokens: 8, stop: [] };

describe('core/trainer/evaluate (shared by the trainer and corl eval)', () => {
  const A = scripted({ one: ['1/2', '3', '3', '0.5'], two: ['4', null, '5', '4'], three: [null, null, '7', '8'] });
  const B = scripted({ one: ['3', '3', '1/2', '9'], two: ['5', '5', '4', '4'], three: ['7', '7', '8', '8'] });

  it('rows: answers, keys, correctness against the reference, the clustered plurality', async () => {
    const rows = await evaluateAgent(agent(0, A.policy), problems, new Grader(extractor, equivalence, gt), {
      samples: 4,
      sampling,
    });
    expect(rows[0]).to.deep.equal({
      agent: 0,
      id: 'p1',
      answers: ['1/2', '3', '3', '0.5'],
      keys: ['1/2', '3', '3', '0.5'],
      correct: [true, false, false, true],
      majority: '1/2',
      majCorrect: true,
      reference: '0.5',
      meanLength: 2,
    }); // clusters {1/2, 0.5}: 2 and {3}: 2 tie; the first seen wins
    expect(rows[1]!.correct).to.deep.equal([true, false, false, true]);
    expect(rows[1]!.majority).to.equal('4');
    expect(rows[2]!.answers).to.deep.equal([null, null, '7', '8']);
    expect(rows[2]!.majority).to.equal('7'); // null answers never vote
    // pass@1 = mean(2/4, 2/4, 1/4) = 5/12; maj@4 = 3/3; answered = mean(1, 3/4, 2/4) = 3/4
    const s = agentScores(rows);
    expect(s.pass1).to.be.closeTo(5 / 12, 1e-12);
    expect(s.majority).to.equal(1);
    expect(s.answered).to.be.closeTo(0.75, 1e-12);
    expect(s.meanLength).to.equal(2);
    expect(A.calls.at(-1)).to.deep.equal({ prompts: ['one', 'two', 'three'], seed: mixSeed(100, 'eval'), n: 4 });
  });

  it('batches: one call per batch, the first seeded as the trainer seeds it, later ones by their first problem', async () => {
    const C = scripted({ one: ['1'], two: ['2'], three: ['3'] });
    const seen: [number, number][] = [];
    const rows = await evaluateAgent(agent(2, C.policy), problems, new Grader(extractor, equivalence, gt), {
      samples: 1,
      sampling,
      batch: 2,
      onBatch: (d, t) => seen.push([d, t]),
    });
    expect(rows.map((r) => r.id)).to.deep.equal(['p1', 'p2', 'p3']);
    expect(C.calls.map((c) => c.prompts)).to.deep.equal([['one', 'two'], ['three']]);
    expect(C.calls.map((c) => c.seed)).to.deep.equal([mixSeed(102, 'eval'), mixSeed(102, 'eval', 2)]);
    expect(seen).to.deep.equal([
      [2, 3],
      [3, 3],
    ]);
  });

  it('budget-fair ensemble and pair agreement, by hand', async () => {
    const grader = new Grader(extractor, equivalence, gt);
    const ra = await evaluateAgent(agent(0, A.policy), problems, grader, { samples: 4, sampling });
    const rb = await evaluateAgent(agent(1, B.policy), problems, grader, { samples: 4, sampling });
    // m = 2 pools A's first two then B's first two:
    //   p1: 1/2, 3, 3, 3 → "3" (wrong); p2: 4, null, 5, 5 → "5" (wrong); p3: null, null, 7, 7 → "7" (right)
    expect(await ensembleCorrect([ra, rb], 2, grader)).to.deep.equal([false, false, true]);
    //   m = 4: p1: {1/2, 0.5, 1/2} 3 votes vs {3} 4 → wrong; p2: 4 ×4 vs 5 ×3 → right; p3: 7 ×3 vs 8 ×3, 7 first → right
    expect(await ensembleCorrect([ra, rb], 4, grader)).to.deep.equal([false, true, true]);
    // First samples: A right on p1, p2, wrong (null) on p3; B wrong on p1 ("3"), p2 ("5"), right on p3.
    // a = 0, b = 2, c′ = 1, d = 0: p_o = 0, p_A = 2/3, p_B = 1/3, p_e = 2/9 + 2/9 = 4/9, κ = −(4/9)/(5/9) = −0.8
    const s = await pairAgreement(ra, rb, equivalence, 'first');
    expect(s.counts).to.deep.equal({ a: 0, b: 2, c: 1, d: 0, dSame: 0 });
    expect(s.kappa).to.be.closeTo(-0.8, 1e-12);
    expect(s.coverage).to.equal(1);
    // Every aligned pair (12): p1 A ✓✗✗✓ / B ✗✗✓✗, p2 A ✓✗✗✓ / B ✗✗✓✓, p3 A ✗✗✓✗ / B ✓✓✗✗.
    // a = 1 (p2 j3), b = 4, c′ = 4, d = 3 (p1 j1 "3"/"3" and p3 j3 "8"/"8" the same; p2 j1 null/"5" not).
    // p_o = 4/12, p_A = p_B = 5/12, p_e = 25/144 + 49/144 = 74/144, κ = (48 − 74)/(144 − 74) = −13/35.
    const all = await pairAgreement(ra, rb, equivalence);
    expect(all.counts).to.deep.equal({ a: 1, b: 4, c: 4, d: 3, dSame: 2 });
    expect(all.kappa).to.be.closeTo(-13 / 35, 1e-12);
    expect(all.complementarity).to.be.closeTo(8 / 12, 1e-12);
    expect(all.sameWrong).to.be.closeTo(2 / 12, 1e-12);
    expect(all.coverage).to.be.closeTo(0.75, 1e-12);
  });
});
