// corl:comas's rewards against numbers worked by hand (docs/algorithms/comas.md). A scripted judge
// returns fixed rubric scores; s = (score − 1)/2 goes to the proposal, 1 − s to its evaluation.
// Agent e evaluates agent e − 1 (mod N): with 2 agents A evaluates B and B evaluates A; with 3, A
// evaluates C, B evaluates A, C evaluates B.
import { expect } from 'chai';
import type { DebateScores, DiscussionRecord, Interaction } from '../../../core/contracts/interaction';
import type { Judge, JudgeItem, JudgeRequest, JudgeResult, JudgeTools } from '../../../core/contracts/judge';
import type { PluginContext } from '../../../core/contracts/plugin';
import { grpoAdvantages } from '../../../core/grpo/advantages';
import { definePlugin, registerAll } from '../../../core/registry/define';
import { createPlugin, findLeaks, groundTruthTripwire, judgeRequests } from '../../../core/testing';
import {
  comasCredit,
  comasInteraction,
  comasJudgement,
  comasReads,
  evaluatedBy,
  evaluatorOf,
} from '../../../plugins/interactions';
import { policyJudge } from '../../../plugins/judges';
import { failure } from '../../fixtures/errors';

/** A judge that returns the scores it was given, in item order, and remembers what it saw. */
function scripted(scores: (number | null)[]): Judge & { seen: JudgeRequest[] } {
  const seen: JudgeRequest[] = [];
  return {
    seen,
    async score(req) {
      seen.push(req);
      return { scores: scores.slice(0, req.items.length), calls: req.items.length, samples: req.items.length };
    },
  };
}

/** A discussion whose turn (r, a, k) answers `${r}${a}${k}`. */
function record(agents: number, turns: number, debates: number): DiscussionRecord {
  return {
    problem: 'p1',
    prompt: 'What is 1 + 1?',
    step: 0,
    agents,
    debates,
    turns: Array.from({ length: turns }, (_, r) =>
      Array.from({ length: agents }, (_, a) =>
        Array.from({ length: debates }, (_, k) => ({
          prompt: `prompt ${r}${a}${k}`,
          text: `turn ${r}${a}${k}`,
          answer: `${r}${a}${k}`,
          key: `${r}${a}${k}`,
        })),
      ),
    ),
  };
}

const noTools: JudgeTools = {
  agents: 0,
  equal: async (a, b) => a === b,
  sample: async () => {
    throw new Error('a scripted judge samples nothing');
  },
};

/** The verifier's scores (ignored by corl:comas) in the shape of a discussion, with a judgement. */
function debate(d: DiscussionRecord, neighbours: number[][], judged?: DebateScores['judged']): DebateScores {
  return {
    agents: d.agents,
    turns: d.turns.length,
    debates: d.debates,
    neighbours,
    scores: d.turns.map((row) => row.map((g) => g.map(() => 0.25))),
    ...(judged ? { judged } : {}),
  };
}

/** GRPO's advantage of two rewards x > y (unbiased std |x − y|/√2, ε = 1e-6): ±(d/2)/(d/√2 + ε). */
const pair = (d: number): number => d / 2 / (d / Math.SQRT2 + 1e-6);

describe('corl:comas, worked by hand', () => {
  it('defaults: 2 cycles (3 rounds after the proposals), whole solutions, the embedded judge', async () => {
    const c = await createPlugin(comasInteraction, {});
    expect([c.rounds, c.share]).to.deep.equal([3, 'solution']);
    expect([1, 2, 3].map((r) => c.turn!(r))).to.deep.equal(['evaluate', 'answer', 'evaluate']);
  });

  it('pairs evaluators with proposals and quotes the last cycle in later proposals', () => {
    expect([0, 1].map((e) => evaluatedBy(e, 2))).to.deep.equal([1, 0]);
    expect([0, 1, 2].map((e) => evaluatedBy(e, 3))).to.deep.equal([2, 0, 1]);
    expect([0, 1, 2].map((t) => evaluatorOf(t, 3))).to.deep.equal([1, 2, 0]);
    const ring3 = [[2], [0], [1]];
    // Round 1 (evaluate): A reads C's proposal of round 0.
    expect(comasReads(2, 1, 0, ring3)).to.deep.equal([{ round: 0, agent: 2 }]);
    // Round 2 (propose again): A quotes its own pair (A's proposal, B's evaluation of it), then its
    // neighbour C's (C's proposal, A's evaluation of it); one reference keeps only its own.
    expect(comasReads(2, 2, 0, ring3)).to.deep.equal([
      { round: 0, agent: 0 },
      { round: 1, agent: 1 },
      { round: 0, agent: 2 },
      { round: 1, agent: 0 },
    ]);
    expect(comasReads(1, 2, 1, ring3)).to.deep.equal([
      { round: 0, agent: 1 },
      { round: 1, agent: 2 },
    ]);
  });

  it('2 agents, 1 cycle, 2 debates: rewards, GRPO advantages and each agent’s total', async () => {
    const d = record(2, 2, 2);
    // Items in order (round 1; evaluator A then B; debate 0 then 1):
    //   A evaluates B's proposals k0, k1; B evaluates A's k0, k1. Scores 3, 1, 2, no verdict.
    const judge = scripted([3, 1, 2, null]);
    const j = await comasJudgement(judge, d, noTools);
    expect(judge.seen[0]!.items.map((i) => [i.proposal.answer, i.evaluation.answer])).to.deep.equal([
      ['010', '100'],
      ['011', '101'],
      ['000', '110'],
      ['001', '111'],
    ]);
    expect([j.calls, j.samples]).to.deep.equal([4, 4]);
    // quality s = (score − 1)/2 at the proposals: B k0 1, B k1 0, A k0 0.5, A k1 none.
    expect(j.quality).to.deep.equal([
      [
        [0.5, null],
        [1, 0],
      ],
      [
        [null, null],
        [null, null],
      ],
    ]);
    const r = comasCredit(debate(d, [[1], [0]], j));
    expect(r).to.deep.equal([
      // proposals: A [0.5, 0 (no verdict)], B [1, 0]
      [
        [0.5, 0],
        [1, 0],
      ],
      // evaluations: A of B's [1 − 1, 1 − 0] = [0, 1]; B of A's [1 − 0.5, 0 (no verdict)] = [0.5, 0]
      [
        [0, 1],
        [0.5, 0],
      ],
    ]);
    // Each agent's reward: proposal quality plus evaluation accuracy. A: 0.5 + 0 + 0 + 1 = 1.5; B: 1 + 0 + 0.5 + 0 = 1.5.
    expect(
      r
        .map((row) => row[0]!)
        .flat()
        .reduce((a, b) => a + b),
    ).to.equal(1.5);
    expect(
      r
        .map((row) => row[1]!)
        .flat()
        .reduce((a, b) => a + b),
    ).to.equal(1.5);
    // GRPO per (agent, round) over the 2 debates: every group is a pair, ±pair(|difference|).
    const adv = grpoAdvantages([r[0]![0]!, r[0]![1]!, r[1]![0]!, r[1]![1]!], {
      scale: 'group',
      epsilon: 1e-6,
      unbiased: true,
    });
    const expected = [
      [pair(0.5), -pair(0.5)],
      [pair(1), -pair(1)],
      [-pair(1), pair(1)],
      [pair(0.5), -pair(0.5)],
    ];
    adv.forEach((g, i) => g.forEach((v, k) => expect(v).to.be.closeTo(expected[i]![k]!, 1e-9)));
  });

  it('3 agents, 2 cycles, 1 debate: rewards of every turn and each agent’s total', async () => {
    const d = record(3, 4, 1);
    // Items: round 1 then round 3; evaluators A (of C), B (of A), C (of B).
    const judge = scripted([1, 3, 2, 3, null, 1]);
    const j = await comasJudgement(judge, d, noTools);
    expect(judge.seen[0]!.items.map((i) => [i.proposal.answer, i.evaluation.answer])).to.deep.equal([
      ['020', '100'],
      ['000', '110'],
      ['010', '120'],
      ['220', '300'],
      ['200', '310'],
      ['210', '320'],
    ]);
    const r = comasCredit(debate(d, [[2], [0], [1]], j));
    expect(r).to.deep.equal([
      // cycle 1 proposals: A s = (3 − 1)/2 = 1, B (2 − 1)/2 = 0.5, C (1 − 1)/2 = 0
      [[1], [0.5], [0]],
      // their evaluations: A of C 1 − 0 = 1, B of A 1 − 1 = 0, C of B 1 − 0.5 = 0.5
      [[1], [0], [0.5]],
      // cycle 2 proposals: A no verdict 0, B 0, C 1
      [[0], [0], [1]],
      // their evaluations: A of C 1 − 1 = 0, B of A (no verdict) 0, C of B 1 − 0 = 1
      [[0], [0], [1]],
    ]);
    // Totals: A 1 + 1 + 0 + 0 = 2; B 0.5 + 0 + 0 + 0 = 0.5; C 0 + 0.5 + 1 + 1 = 2.5.
    const total = (a: number): number => r.reduce((s, row) => s + row[a]![0]!, 0);
    expect([0, 1, 2].map(total)).to.deep.equal([2, 0.5, 2.5]);
  });

  it('credits 0 without a judgement (the contract suite’s probes) and to a last proposal never evaluated', () => {
    const d = record(2, 3, 1);
    expect(comasCredit(debate(d, [[1], [0]]))).to.deep.equal([
      [[0], [0]],
      [[0], [0]],
      [[0], [0]],
    ]);
  });

  it('refuses a judge that returns the wrong number of scores, or a score off the rubric (CORL_ERR_JUDGE_OUTPUT)', async () => {
    const d = record(2, 2, 1);
    for (const scores of [[3], [3, 4], [0, 2], [Number.NaN, 2]]) {
      const e = await failure(comasJudgement(scripted(scores), d, noTools));
      expect(e.code, JSON.stringify(scores)).to.equal('CORL_ERR_JUDGE_OUTPUT');
      expect(e.where).to.equal('interaction.options.judge');
    }
  });

  it('hands the judge a frozen request: a judge that pops an item or rewrites a proposal changes nothing', async () => {
    const d = record(2, 2, 1);
    const tamper: Judge = {
      async score(req: JudgeRequest): Promise<JudgeResult> {
        const items = req.items as JudgeItem[];
        expect(() => items.pop()).to.throw(TypeError);
        expect(() => ((items[0]!.proposal as { key: string | null }).key = 'forged')).to.throw(TypeError);
        return { scores: items.map(() => 3), calls: 1, samples: 0 };
      },
    };
    const j = await comasJudgement(tamper, d, noTools);
    expect(j.quality.flat(2).filter((q) => q !== null)).to.deep.equal([1, 1]);
  });

  it('refuses cohorts it cannot serve with CORL_ERR_INTERACTION_AGENTS', async () => {
    const c = await createPlugin(comasInteraction, {});
    expect((await failure(() => c.validate(1, [[]]))).code).to.equal('CORL_ERR_INTERACTION_AGENTS');
    const named = await createPlugin(comasInteraction, { judge: { use: 'corl:policy-judge', options: { agent: 2 } } });
    named.validate(3, [[2], [0], [1]]);
    const e = await failure(() => named.validate(2, [[1], [0]]));
    expect(e.code).to.equal('CORL_ERR_INTERACTION_AGENTS');
    expect(e.where).to.equal('interaction.options.judge.options.agent');
  });

  it('refuses bad options with coded errors naming the field', async () => {
    for (const [options, field] of [
      [{ cycles: 0 }, 'cycles'],
      [{ references: 17 }, 'references'],
      [{ judge: 'corl:vote' }, 'judge'],
      [{ judge: { use: 'corl:policy-judge', options: { samples: 0 } } }, 'samples'],
    ] as const) {
      const e = await failure(createPlugin(comasInteraction, options));
      expect(e.code, JSON.stringify(options)).to.equal('CORL_ERR_PLUGIN_OPTIONS');
      expect(e.message, JSON.stringify(options)).to.include(field);
    }
  });

  it('is created label-free: neither corl:comas nor its judge can reach ground truth or the task', async () => {
    const tripwire = groundTruthTripwire({ p1: { answer: '2 comas-canary' } });
    const refusals: string[] = [];
    const reached: string[] = [];
    // What each is handed leads to no reference, container or registry.
    const probe = (who: string, ctx: PluginContext): void => {
      reached.push(...findLeaks(ctx, { canary: 'comas-canary' }).map((p) => `${who} ${p}`));
    };
    // corl:comas's own manifest and factory, with a look at what it is handed first.
    const peeking = definePlugin({
      manifest: { ...comasInteraction.manifest, name: 'test:comas-peek' },
      create(options: Parameters<typeof comasInteraction.create>[0], ctx: PluginContext): Promise<Interaction> {
        probe('comas', ctx);
        return Promise.resolve(comasInteraction.create(options, ctx));
      },
    });
    const peekingJudge = definePlugin({
      manifest: { ...policyJudge.manifest, name: 'test:judge-peek' },
      create(options: Parameters<typeof policyJudge.create>[0], ctx: PluginContext): Judge {
        probe('judge', ctx);
        return policyJudge.create(options, ctx) as Judge;
      },
    });
    const c = await createPlugin(
      peeking,
      { judge: 'test:judge-peek' },
      {
        groundTruth: tripwire.groundTruth,
        task: tripwire.task,
        register: registerAll(peekingJudge),
        onRefusal: (e) => refusals.push(e.code),
      },
    );
    expect('readsGroundTruth' in peeking.manifest).to.equal(false);
    expect(reached).to.deep.equal([]);
    expect(refusals).to.deep.equal([]);
    // Judging reads the discussion and the tools only: the references are never touched.
    const { request } = judgeRequests(2)[0]!;
    await c.judge!(record(2, 2, 1), request);
    expect(tripwire.touches).to.deep.equal([]);
  });
});

describe('corl:policy-judge, worked by hand', () => {
  it("scores each proposal by the pooled plurality of the cohort's samples", async () => {
    // Each agent samples 7, 7, 8 + agent (n = 3): pooled 7 ×6, 8, 9, 10 → the judge answer is 7.
    const j = await createPlugin(policyJudge, { samples: 3 });
    const { request, sampled } = judgeRequests(3)[0]!;
    const r = await j.score(request);
    expect(sampled).to.deep.equal([3, 3, 3]);
    // 7 (right) → 3; 9 contested by 7 → 1; 9 let stand (evaluated 9) → unchallenged 2;
    // no answer, contested by 7 → 1; 7 with an unanswered evaluation → 3.
    expect(r).to.deep.equal({ scores: [3, 1, 2, 1, 3], calls: 3, samples: 9 });
  });

  it('one agent judges: its own plurality; unchallenged set to 1', async () => {
    // Agent 1 samples 7, 7, 9, 7, 7, 9 (n = 6): plurality 7.
    const j = await createPlugin(policyJudge, { agent: 1, samples: 6, unchallenged: 1 });
    expect(j.agents).to.deep.equal([1]);
    const { request, sampled } = judgeRequests(3)[0]!;
    expect(await j.score(request)).to.deep.equal({ scores: [3, 1, 1, 1, 3], calls: 1, samples: 6 });
    expect(sampled).to.deep.equal([6]);
  });

  it('gives no verdict when the judge policy answers nothing', async () => {
    const j = await createPlugin(policyJudge, { agent: 0, samples: 2 });
    const base = judgeRequests(1)[0]!.request;
    const silent: JudgeRequest = {
      ...base,
      sample: async (_a, n) => Array.from({ length: n }, () => ({ text: '?', answer: null, key: null })),
    };
    expect((await j.score(silent)).scores).to.deep.equal([null, null, null, null, null]);
  });
});
