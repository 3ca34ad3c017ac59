// A default-size verl step of two agents (512 prompts x 8 samples each) as the verl driver
// (test/integrations/py/trainers.py, mode verl_loop) runs it: shared by its test
// (verl-step.test.ts) and by `npm run bench serve`.
import { Rng } from '../../core/util/rng';
import { answers, completion, verlRewardConfig, vocabulary } from './serve-process';

export const AGENTS = ['agent-0', 'agent-1'] as const;

/** The step: plan[agent][prompt] = its 8 completions. */
export function verlStep(seed: number, prompts = 512, K = 8): string[][][] {
  const rng = new Rng(seed);
  return AGENTS.map(() => Array.from({ length: prompts }, () => answers(rng, K).map((a) => completion(rng, a))));
}

/** The verl job of one agent: its config, 8 workers, each sample sent to a random worker after a short delay. */
export function verlJob(url: string, agent: string, step: string[][], seed: number): Record<string, unknown> {
  const rng = new Rng(seed);
  const K = step[0]!.length;
  return {
    url,
    agent,
    mode: 'verl_loop',
    // OpenRLHF's own remote-reward client settings: 180 s per request, 5 retries.
    config: verlRewardConfig({ agent, url, timeout: 180, retries: 5 }, K),
    vocab: vocabulary(),
    workers: 8,
    concurrency: 1000,
    steps: [
      step.flatMap((texts, j) =>
        texts.map((response) => ({
          worker: rng.int(8),
          delay: rng.int(2000) / 1000,
          row: {
            uid: `${agent}-uid-${j}`,
            data_source: 'openai/gsm8k',
            reward_model: { style: 'rule', ground_truth: '2' },
            extra_info: { split: 'train', index: j },
            raw_prompt: [{ role: 'user', content: `Problem q${j % 3}: find it.` }],
          },
          prompt: `Problem q${j % 3}: find it.`,
          response,
        })),
      ),
    ],
  };
}
