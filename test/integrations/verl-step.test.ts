// A default-size verl step of two agents against `corl serve` at its default settings: 512 prompts
// x 8 samples per agent (4,096 samples), from 8 reward workers per job (spawned processes, the
// shipped CorlRewardManager loaded by path in each, up to 1000 run_single calls at once), the two
// jobs of the ring at once, the client at OpenRLHF's own request timeout (180 s) and 5 retries.
// Every reward is checked against the one computed by hand from the peer's whole group; no request
// may be refused (no 503, no 422) and every group must be scored complete. Correctness only: the
// time and the connections this takes are `npm run bench serve`'s.
import { expect } from 'chai';
import * as path from 'node:path';
import { fixture, tempDir, writeConfig } from '../fixtures/configs';
import { checkPython, metric, python, ringConfig, servedLabel, startService, type Service } from './serve-process';
import { AGENTS, verlJob, verlStep } from './verl-step';

const PENALTY = 0.001;
const peer = (a: number): number => 1 - a;
const keyOf = (text: string): string | null => /\\boxed\{(\d+)\}/.exec(text)?.[1] ?? null;
const words = (text: string): number => text.split(' ').length;

describe('integrations: a default verl step of two agents (512 prompts x 8 samples each) at default settings', function () {
  this.timeout(900000);
  let tmp: ReturnType<typeof tempDir>;
  let service: Service | undefined;

  before(checkPython);
  beforeEach(() => {
    tmp = tempDir('corl-verl-step-');
  });
  afterEach(async () => {
    await service?.stop('SIGTERM');
    service = undefined;
    tmp.cleanup();
  });

  it("scores all 8,192 samples, each against its peer's whole group, with no 503 or 422 and two connections per worker at most", async () => {
    // The serve section holds only the port: every other setting is its default.
    const config = ringConfig(
      { use: 'test:length-vote', options: { penalty: PENALTY } },
      {},
      { plugins: [fixture('length-vote.js')] },
    );
    service = await startService(writeConfig(tmp.dir, 'serve.json', config), path.join(tmp.dir, 'journal.jsonl'));
    const plan = verlStep(38);
    const results = await Promise.all(
      AGENTS.map((agent, a) => python('trainers.py', verlJob(service!.url, agent, plan[a]!, 100 + a), tmp.dir, agent)),
    );
    results.forEach((r, a) => {
      expect(r.errors, AGENTS[a]).to.deep.equal([]);
      const got = (r.results[0] as { reward_score: number; reward_extra_info: Record<string, number> }[]).map((x) => [
        x.reward_score,
        x.reward_extra_info.corl_fallback,
      ]);
      const expected = plan[a]!.flatMap((texts, j) => {
        const theirs = plan[peer(a)]![j]!;
        const label = servedLabel(theirs, theirs.map(keyOf));
        return texts.map((t) => [(keyOf(t) !== null && keyOf(t) === label ? 1 : 0) - PENALTY * (words(t) + 1), 0]);
      });
      expect(got.length, AGENTS[a]).to.equal(4096);
      expect(got, AGENTS[a]).to.deep.equal(expected);
    });
    const m = (series: string): Promise<number | undefined> => metric(service!.url, series);
    expect(await m('corl_serve_completions_scored_total{route="/v1/samples"}')).to.equal(8192);
    expect(await m('corl_serve_sample_groups_total{outcome="complete"}')).to.equal(1024);
    expect(await m('corl_serve_sample_groups_total{outcome="partial"}')).to.equal(undefined);
    for (const status of ['503', '422', '409', '413', '500'])
      for (const route of ['/v1/samples', '/v1/samples/wait'])
        expect(
          await m(`corl_serve_requests_total{route="${route}",status="${status}"}`),
          `${route} ${status}`,
        ).to.equal(undefined);
    // 16 workers, each one deferred post and one wait at a time (and a GET /health at its start).
    expect(await m('corl_serve_open_connections_peak')).to.be.at.most(3 * 16);
    expect(await m('corl_serve_deferred_samples')).to.equal(0);
  });
});
