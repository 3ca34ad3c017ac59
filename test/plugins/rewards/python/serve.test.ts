// corl:python behind `corl serve`: a reward plugin like any other. The same Co-RL function in Python
// answers the cross-agent exchange as corl:vote does, a function that raises gets the client a coded
// error (and the service stays up), and closing the service ends the Python process.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewardServer } from '../../../../core/serve/server';
import { tempDir } from '../../../fixtures/configs';
import { boxed, post, ringServeConfig, startServer } from '../../../fixtures/serve';

const CO_RL = `
import os

open(os.path.join(os.path.dirname(__file__), "host.pid"), "w").write(str(os.getpid()))


def reward_func(prompts, completions, matches_pseudo_label, completion_ids, trainer_state, **kwargs):
    if "explode" in prompts[0]:
        raise ValueError("cannot score %r" % prompts[0])
    assert completion_ids == [None] * len(completions)  # a served group has texts, not token ids
    assert trainer_state.max_steps is None
    return [1.0 if m else 0.0 for m in matches_pseudo_label]
`;

describe('corl:python behind corl serve', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  let server: RewardServer | undefined;
  before(() => {
    tmp = tempDir('corl-python-serve-');
    fs.writeFileSync(path.join(tmp.dir, 'co_rl.py'), CO_RL);
  });
  after(async () => {
    await server?.close();
    tmp.cleanup();
  });

  it('answers the exchange as corl:vote does, refuses a raising call with a coded error, and closes its process with the service', async () => {
    const config = ringServeConfig();
    server = await startServer(
      { ...config, reward: { use: 'corl:python', options: { module: 'co_rl.py', stderr: 'discard' } } },
      tmp.dir,
    );
    const [ra, rb] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 0, groups: [boxed('g1', ['2', '3', '2'])] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 0, groups: [boxed('g1', ['3', '3', '2'])] }),
    ]);
    expect(ra.status, JSON.stringify(ra.body)).to.equal(200);
    // the numbers of corl:vote's own test (test/core/serve/server.test.ts)
    expect(ra.body.groups[0]).to.deep.include({ rewards: [0, 1, 0], label: '3', ownLabel: '2', source: 'supervisors' });
    expect(rb.body.groups[0]).to.deep.include({ rewards: [0, 0, 1], label: '2', ownLabel: '3', source: 'supervisors' });
    expect(ra.body.metrics['python/abstained']).to.equal(0);

    const [ea] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 1, groups: [boxed('g2', ['1', '1'], 'explode')] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 1, groups: [boxed('g2', ['1', '2'], 'explode')] }),
    ]);
    expect(ea.status).to.be.at.least(400);
    expect(JSON.stringify(ea.body))
      .to.contain('CORL_ERR_PYTHON_RAISED')
      .and.contain("ValueError: cannot score 'explode'");

    const [again] = await Promise.all([
      post(server.url, '/v1/groups', { agent: 'a', step: 2, groups: [boxed('g3', ['5', '6'])] }),
      post(server.url, '/v1/groups', { agent: 'b', step: 2, groups: [boxed('g3', ['6', '6'])] }),
    ]);
    expect(again.body.groups[0].rewards, 'the service goes on').to.deep.equal([0, 1]);

    const pid = Number(fs.readFileSync(path.join(tmp.dir, 'host.pid'), 'utf8'));
    await server.close();
    server = undefined;
    let gone = false;
    for (let i = 0; i < 500 && !gone; i++) {
      try {
        process.kill(pid, 0);
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        gone = stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
      } catch {
        gone = true;
      }
      if (!gone) await new Promise((r) => setTimeout(r, 10));
    }
    expect(gone, 'the Python process after the service closed').to.equal(true);
  });
});
