// POST /v1/samples/wait (docs/guide/serve.md "Many samples, few connections"): a client that posted
// samples with `defer: true` collects their answers here, many samples per request: the request
// is answered once at least one of them has its answer (with every one that has), or after
// serve.samples.poll seconds with none; the samples wait in the service, not on sockets.
import { parseSamplesWaitRequest } from '../samples';
import { agentIndex, type PostRoute } from './route';

export const postSamplesWait: PostRoute = async (svc, body, ctx) => {
  const rt = svc.runtime;
  const req = parseSamplesWaitRequest(body, rt.settings.samples.maxPending);
  const agent = svc.credentials.agentOf(ctx.caller, agentIndex(rt, req.agent, 'agent'), 'agent')!;
  ctx.admit(agent);
  const poll = rt.settings.samples.poll;
  const waitMs = Math.min(req.wait ?? poll, poll) * 1000;
  // Scored completions are counted once each, when scored (routes/samples.ts), not per delivery.
  const answer = await svc.samples.wait(agent, req, waitMs, ctx.gone);
  return { agent: rt.agents[agent], ...answer };
};
