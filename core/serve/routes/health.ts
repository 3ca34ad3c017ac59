// GET /health (docs/guide/serve.md "GET /health"): what the service serves and holds; no token needed.
import { CORL_VERSION } from '../../version';
import type { Service } from './route';

export function health(svc: Service): unknown {
  const rt = svc.runtime;
  const s = rt.settings;
  return {
    status: 'ok',
    version: CORL_VERSION,
    name: rt.config.name,
    agents: rt.agents,
    topology: rt.config.topology.use,
    supervisors: Object.fromEntries(
      rt.agents.map((n, i) => [n, rt.topology.supervisors(i, rt.agents.length).map((m) => rt.agents[m])]),
    ),
    reward: rt.config.reward.use,
    extractor: rt.config.extractor.use,
    equivalence: rt.config.equivalence.use,
    readsGroundTruth: rt.readsGroundTruth,
    supervised: rt.readsGroundTruth || rt.trainedOnLabels,
    pointwise: rt.pointwise,
    tokenStats: rt.tokenStats,
    groupSize: s.groupSize,
    maxCompletions: s.maxCompletions,
    exchange: {
      ...s.exchange,
      slots: svc.groups.size,
      newestStep: svc.groups.newest,
      steps: svc.groups.reaches(),
    },
    getReward: {
      groupSize: s.getReward.groupSize,
      wait: s.getReward.wait,
      groupBy: s.getReward.groupBy,
      agent: s.getReward.agent ?? rt.agents[0],
      maxPending: s.getReward.maxPending,
      pending: svc.getReward.pending,
    },
    samples: {
      wait: s.samples.wait,
      maxPending: s.samples.maxPending,
      poll: s.samples.poll,
      maxWaits: s.samples.maxWaits,
      pending: svc.samples.pendingSamples,
      deferred: svc.samples.deferred,
      waits: svc.samples.parkedWaits,
    },
    journal: {
      file: rt.journalFile ?? null,
      written: svc.journal.written,
      bytes: svc.journal.size,
      compactions: svc.journal.compactions,
      ...(svc.journal.compactError ? { compactError: svc.journal.compactError } : {}),
    },
    auth: svc.credentials.mode,
    uptimeSeconds: (Date.now() - svc.started) / 1000,
  };
}
