// POST /get_reward (docs/guide/serve.md "POST /get_reward"): OpenRLHF's remote reward model. Samples
// arrive one request at a time; a group source waits for the rest of the prompt's samples at the
// barrier (core/serve/barrier.ts).
import { CorlError } from '../../errors';
import { requestHash } from '../ledger';
import { parseGetRewardRequest, type GetRewardRequest } from '../requests';
import type { RequestWork } from '../work';
import { agentIndex, requestWork, type PostRoute, type Service } from './route';

export const postGetReward: PostRoute = async (svc, body, ctx) => {
  const rt = svc.runtime;
  const req = parseGetRewardRequest(body, rt.settings.maxRequestCompletions);
  if (rt.tokenStats)
    throw new CorlError(
      'CORL_ERR_SERVE_BAD_REQUEST',
      `expected per-token statistics because "${rt.config.reward.use}" reads them, got POST /get_reward, which carries text only`,
      { where: 'query', hint: 'post each sample with its entropies or meanLogprobs through POST /v1/samples' },
    );
  // OpenRLHF sends text only: lengths are characters here (docs/guide/serve.md "Lengths").
  svc.metrics.untokenized.inc({ route: '/get_reward' }, req.query.length);
  const name = ctx.params.get('agent');
  const named =
    name === null
      ? undefined
      : agentIndex(
          rt,
          /^\d+$/.test(name) && rt.agentIndex(name) === undefined ? Number(name) : name,
          'agent (query parameter)',
        );
  // With agent tokens the token says who posts; otherwise ?agent=, else serve.getReward.agent, else the first.
  const agent =
    svc.credentials.agentOf(ctx.caller, named, 'agent (query parameter)') ??
    rt.agentIndex(rt.settings.getReward.agent ?? rt.agents[0]!)!;
  ctx.admit(agent);
  if (ctx.id === undefined) return reply(svc, agent, req, requestWork(rt, agent, ctx.gone));
  // With an id the samples stay at the barrier if the request goes away: its retry claims the reply.
  const fp = requestHash(
    req.train
      ? [req.query, req.prompts ?? null, req.labels ?? null, req.train]
      : [req.query, req.prompts ?? null, req.labels ?? null],
  );
  return svc.replies.run(agent, ctx.id, fp, () => reply(svc, agent, req, requestWork(rt, agent)));
};

async function reply(svc: Service, agent: number, req: GetRewardRequest, work: RequestWork): Promise<unknown> {
  const samples = req.query.map((query, i) => ({
    query,
    prompt: req.prompts?.[i],
    label: req.labels?.[i],
    ...(req.train?.[i] === false ? { train: false } : {}),
  }));
  const results = await svc.getReward.score(agent, samples, work);
  svc.metrics.completions.inc({ route: '/get_reward' }, results.filter((r) => r.reward !== null).length);
  const names = [...new Set(results.flatMap((r) => Object.keys(r.logs)))].sort();
  const extra: Record<string, number[]> = {};
  for (const n of names) extra[n] = results.map((r) => r.logs[n] ?? 0);
  return {
    // A vote-only sample (train false) gets null: it votes with its group and is not trained on.
    rewards: results.map((r) => r.reward),
    scores: results.map((r) => (r.reward === null ? null : Math.min(1, Math.max(0, r.reward)))),
    extra_logs: extra,
  };
}
