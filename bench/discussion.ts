// The cost of building discussion prompts (`roundPrompt`, core/trainer/discussion.ts) per debate per
// round, against the cost of sampling the completion that prompt asks for. The shape is
// configs/maporl.json's: corl:arith, the shipped slips alpha transformer (one thread), 16 problems ×
// 8 debates, maxTokens 40. Three prompt cases: corl:arith's own format quoting answers (what the
// embedded benchmark runs), the same asking for whole solutions (corl:arith quotes answers anyway),
// and the chat format with two neighbours' whole solutions cut to fit the context (the binary search
// over the kept length: the most expensive path).
import * as path from 'node:path';
import { loadConfigValue } from '../core/config/load';
import type { Completion } from '../core/contracts/completion';
import type { ContextWindow, Policy, SampleRequest } from '../core/contracts/policy';
import { AnswerKeys } from '../core/reward/answer-keys';
import { buildRunContext } from '../core/trainer/run-context';
import { roundPrompt, type DiscussionFormat, type PreviousTurn } from '../core/trainer/discussion';
import { chatDiscussionPrompt } from '../core/discussion/prompts';
import { mean } from '../core/util/mean';
import type { Bench } from './index';

const ROOT = path.resolve(__dirname, '../..');
const PROBLEMS = 16;
const DEBATES = 8;
const MAX_TOKENS = 40;

/**
 * Microseconds per call of `f` over all `inputs`: each of `repeats` passes repeats the inputs until
 * at least `minMs` have gone by, and the fastest pass counts (the machine is shared; the JIT warms up
 * in the first).
 */
function microsPerCall<T>(inputs: readonly T[], f: (x: T) => unknown, repeats = 3, minMs = 200): number {
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    let calls = 0;
    const t0 = performance.now();
    let elapsed: number;
    do {
      for (const x of inputs) f(x);
      calls += inputs.length;
      elapsed = performance.now() - t0;
    } while (elapsed < minMs);
    best = Math.min(best, (elapsed * 1000) / calls);
  }
  return best;
}

/** Sample and time one call: completions per request and milliseconds in all. */
async function timedSample(
  policy: Policy,
  requests: readonly SampleRequest[],
  n: number,
  seed: number,
): Promise<{ out: Completion[][]; ms: number }> {
  const t0 = performance.now();
  const out = await policy.sample(requests, { n, temperature: 1, topP: 1, maxTokens: MAX_TOKENS, seed });
  return { out, ms: performance.now() - t0 };
}

interface Debate {
  readonly prompt: string;
  readonly previous: readonly PreviousTurn[];
}

export const bench: Bench = {
  name: 'discussion',
  description: `roundPrompt per debate per round against sampling (corl:arith, slips alpha, ${PROBLEMS} problems x ${DEBATES} debates)`,
  async run() {
    const loaded = await loadConfigValue(
      {
        name: 'bench-discussion',
        seed: 0,
        task: { use: 'corl:arith', options: { seed: 1234, train: 200, heldOut: 20 } },
        agents: [
          {
            name: 'alpha',
            policy: {
              use: 'corl:transformer',
              options: {
                family: 'alpha',
                dModel: 96,
                layers: 3,
                heads: 4,
                context: 96,
                checkpoint: '../models/slips/alpha',
                threads: 1,
              },
            },
          },
        ],
        topology: 'corl:self',
        reward: 'corl:vote',
      },
      { baseDir: path.join(ROOT, 'configs') },
    );
    const ctx = await buildRunContext(loaded);
    try {
      const policy = ctx.agents[0]!.policy;
      const window = policy.contextWindow!();
      const keys = new AnswerKeys(ctx.extractor, ctx.equivalence);
      const problems = ctx.data.train.slice(0, PROBLEMS);
      await timedSample(policy, [{ prompt: problems[0]!.prompt }], 2, 1); // sessions and caches warm
      const round0 = await timedSample(
        policy,
        problems.map((p) => ({ id: p.id, prompt: p.prompt })),
        DEBATES,
        2,
      );
      const turn = (i: number, k: number, agent: number): PreviousTurn => {
        const text = round0.out[i]![k % DEBATES]!.text;
        return { agent, answer: keys.of(text).answer, text };
      };
      const debates = (neighbours: number): Debate[] =>
        problems.flatMap((p, i) =>
          Array.from({ length: DEBATES }, (_, k) => ({
            prompt: p.prompt,
            previous: Array.from({ length: neighbours }, (_, m) => turn(i, k + m, m + 1)),
          })),
        );
      const one = debates(1);
      const build = (format: DiscussionFormat, share: 'answer' | 'solution', w: ContextWindow) => (d: Debate) =>
        roundPrompt(format, d.prompt, d.previous, { share, window: w, maxTokens: MAX_TOKENS, where: 'bench' });
      const arithAnswer = microsPerCall(one, build(ctx.discussionPrompt, 'answer', window));
      const arithSolution = microsPerCall(one, build(ctx.discussionPrompt, 'solution', window));
      // The chat format over two whole solutions does not fit the 96-token context at all; give it a
      // window halfway between its answers-only and whole-solution lengths, so most prompts are cut.
      const two = debates(2);
      const lengths = two.map((d) => {
        const answers = window.count(chatDiscussionPrompt(d.prompt, d.previous));
        const whole = window.count(
          chatDiscussionPrompt(
            d.prompt,
            d.previous.map((t) => ({ ...t, solution: t.text })),
          ),
        );
        return { answers, whole };
      });
      const mid = Math.round(
        mean(
          lengths.map((l) => (l.answers + l.whole) / 2),
          NaN,
        ),
      );
      const chatWindow: ContextWindow = { tokens: mid + MAX_TOKENS, count: (p) => window.count(p) };
      const cut = lengths.filter((l) => l.whole > mid && l.answers <= mid).length;
      const feasible = two.filter((_, j) => lengths[j]!.answers <= mid);
      const chatCut = microsPerCall(feasible, build(chatDiscussionPrompt, 'solution', chatWindow));

      const prompts = one.map((d) => build(ctx.discussionPrompt, 'answer', window)(d));
      const round1 = await timedSample(
        policy,
        prompts.map((prompt) => ({ prompt })),
        1,
        3,
      );
      const perCompletion0 = (round0.ms * 1000) / (PROBLEMS * DEBATES);
      const perCompletion1 = (round1.ms * 1000) / prompts.length;
      const line = (what: string, us: number) =>
        `  ${what}: ${us.toFixed(2)} µs per debate per round = ${((100 * us) / perCompletion1).toPrecision(2)}% of sampling its completion\n`;
      process.stdout.write(
        `sampling, ms per completion (maxTokens ${MAX_TOKENS}, temperature 1): round 0 ${(perCompletion0 / 1000).toFixed(2)}, ` +
          `discussion round ${(perCompletion1 / 1000).toFixed(2)} (${prompts.length} prompts in one call)\n`,
      );
      process.stdout.write('roundPrompt:\n');
      process.stdout.write(line('corl:arith format, share answer, 1 neighbour (configs/maporl.json)', arithAnswer));
      process.stdout.write(line('corl:arith format, share solution, 1 neighbour', arithSolution));
      process.stdout.write(
        line(
          `chat format, 2 whole solutions cut to a ${mid}-token prompt budget (${cut} of ${two.length} cut, ${feasible.length} timed)`,
          chatCut,
        ),
      );
    } finally {
      await ctx.close();
    }
  },
};
