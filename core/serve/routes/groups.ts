// POST /v1/groups (docs/guide/serve.md "POST /v1/groups"): an agent posts whole groups at a step;
// each waits at the exchange for its supervisors' answers to the same group, then is scored.
import { CorlError } from '../../errors';
import { requestHash } from '../ledger';
import { inPostedOrder, inScoringOrder } from '../order';
import { parseGroupsRequest } from '../requests';
import { summarize, type GroupAnswer } from '../scorer';
import { agentIndex, checkTokenStats, requestWork, type PostRoute } from './route';

export const postGroups: PostRoute = async (svc, body, ctx) => {
  const rt = svc.runtime;
  const req = parseGroupsRequest(body, {
    maxGroups: rt.settings.exchange.maxGroupsPerStep,
    maxCompletions: rt.settings.maxCompletions,
    maxRequestCompletions: rt.settings.maxRequestCompletions,
    maxTestInputs: rt.settings.maxTestInputs,
  });
  const agent = svc.credentials.agentOf(ctx.caller, agentIndex(rt, req.agent, 'agent'), 'agent')!;
  ctx.admit(agent);
  const K = rt.settings.groupSize;
  let untokenized = 0;
  req.groups.forEach((g, i) => {
    if (K > 0 && g.completions.length !== K) {
      throw new CorlError(
        'CORL_ERR_SERVE_GROUP_SIZE',
        `expected ${K} completions in group "${g.id}" (serve.groupSize), got ${g.completions.length}`,
        { where: `groups[${i}].completions` },
      );
    }
    g.completions.forEach((c, k) => {
      checkTokenStats(rt, c, `groups[${i}].completions[${k}]`);
      if (c.length === undefined) untokenized++;
    });
    if (rt.readsGroundTruth && g.reference === undefined) {
      throw new CorlError(
        'CORL_ERR_SERVE_BAD_REQUEST',
        `expected groups[${i}].reference because "${rt.config.reward.use}" reads ground truth, got nothing`,
        { where: `groups[${i}].reference` },
      );
    }
  });
  // Completions posted without a token count: their length falls back to characters.
  if (untokenized) svc.metrics.untokenized.inc({ route: '/v1/groups' }, untokenized);
  const post = async (): Promise<unknown> => {
    // Scored in text order, so that a tie never depends on how the trainer ordered its batch.
    const ordered = req.groups.map((g) => inScoringOrder(g));
    const answers = (
      await svc.groups.post(
        agent,
        req.step,
        ordered.map((o) => o.group),
        req.wait === undefined ? undefined : req.wait * 1000,
        requestWork(rt, agent, ctx.gone),
      )
    ).map((a, i) => trainedAnswer(inPostedOrder(a, ordered[i]!.order), req.train?.[i]));
    svc.metrics.completions.inc(
      { route: '/v1/groups' },
      answers.reduce((s, a) => s + a.rewards.length, 0),
    );
    return {
      agent: rt.agents[agent],
      step: req.step,
      groups: answers.map(publicAnswer),
      metrics: summarize(answers),
    };
  };
  // A retry is answered from the stored answers whatever its id; an id only refuses its reuse for another body.
  if (ctx.id === undefined) return post();
  const hashed = req.train ? [req.step, req.groups, req.train] : [req.step, req.groups];
  return svc.groupIds.run(agent, ctx.id, requestHash(hashed), post);
};

/**
 * The answer a group with `train` = N gets (TTRL's vote-on-more split): the label voted over all its
 * M completions (and its M keys shared with peers), the rewards and diagnostics of the first N only,
 * and `voted` = M; the reply's `metrics` are then over the trained completions.
 */
function trainedAnswer(a: GroupAnswer, n: number | undefined): GroupAnswer & { voted?: number } {
  if (n === undefined) return a;
  return {
    ...a,
    rewards: a.rewards.slice(0, n),
    ...(a.rewardRight ? { rewardRight: a.rewardRight.slice(0, n) } : {}),
    voted: a.rewards.length,
  };
}

function publicAnswer(a: GroupAnswer): unknown {
  const { agree: _agree, ...rest } = a;
  return rest;
}
