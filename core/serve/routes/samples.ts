// POST /v1/samples (docs/guide/serve.md "POST /v1/samples"): one sample, or several, each with its
// group id and the group's size; the samples of a group meet in the SampleScorer (core/serve/samples.ts).
import { requestHash } from '../ledger';
import { parseSamplesRequest } from '../samples';
import { agentIndex, checkTokenStats, requestWork, type PostRoute } from './route';

export const postSamples: PostRoute = async (svc, body, ctx) => {
  const rt = svc.runtime;
  const parsed = parseSamplesRequest(body, {
    maxCompletions: rt.settings.maxCompletions,
    maxSamples: Math.min(rt.settings.samples.maxPending, rt.settings.maxRequestCompletions),
    maxTestInputs: rt.settings.maxTestInputs,
  });
  // Under an Idempotency-Key a sample without its own id is the key's i-th: the request's retry
  // joins (or replays) the same samples instead of adding them again, with or without a step.
  const key = ctx.id;
  const req =
    key === undefined
      ? parsed
      : {
          ...parsed,
          samples: parsed.samples.map((s, i) =>
            s.requestId === undefined ? { ...s, retryId: `~k${JSON.stringify([key, i])}` } : s,
          ),
        };
  const agent = svc.credentials.agentOf(ctx.caller, agentIndex(rt, req.agent, 'agent'), 'agent')!;
  ctx.admit(agent);
  req.samples.forEach((s, i) =>
    checkTokenStats(rt, s.completion, req.single ? 'completion' : `samples[${i}].completion`),
  );
  // Completions posted without a token count: their length falls back to characters.
  const untokenized = req.samples.filter((s) => s.completion.length === undefined).length;
  if (untokenized) svc.metrics.untokenized.inc({ route: '/v1/samples' }, untokenized);
  // Deferred: each sample's status now, its answer through POST /v1/samples/wait (routes/samples-wait.ts).
  if (req.defer) return { agent: rt.agents[agent], samples: svc.samples.submit(agent, req, requestWork(rt, agent)) };
  const post = async (): Promise<unknown> => {
    const answers = await svc.samples.post(
      agent,
      req,
      requestWork(rt, agent, ctx.id === undefined ? ctx.gone : undefined),
    );
    svc.metrics.completions.inc({ route: '/v1/samples' }, answers.filter((a) => a.reward !== null).length);
    if (req.single) return { agent: rt.agents[agent], ...answers[0]! };
    return { agent: rt.agents[agent], samples: answers };
  };
  // Samples are idempotent by their own request ids; an Idempotency-Key only refuses its reuse for another body.
  if (ctx.id === undefined) return post();
  return svc.groupIds.run(agent, ctx.id, requestHash([parsed.step ?? null, parsed.samples]), post);
};
