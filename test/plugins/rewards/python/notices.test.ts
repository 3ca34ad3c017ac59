// Run-time notices of corl:python where a label-free run changes what a label means without a word:
// a verl-style compute_score gets the supervisors' pseudo-label as ground_truth, and a function that
// never reads what it is handed of its supervisors makes the topology a no-op (its label accuracy
// then describes a label it never used: python/label_unused = 1).
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RewardSource } from '../../../../core/contracts/reward-source';
import { createPlugin, rewardContext } from '../../../../core/testing';
import { pythonReward } from '../../../../plugins/rewards/python/plugin';
import { tempDir } from '../../../fixtures/configs';

/** Create corl:python over `source`, score one context, and return what it wrote to stderr and the result. */
async function run(dir: string, file: string, source: string, options: Record<string, unknown> = {}) {
  const module = path.join(dir, file);
  fs.writeFileSync(module, source);
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  let r: RewardSource | undefined;
  try {
    r = await createPlugin(pythonReward, { module, stderr: 'discard', ...options });
    // the agent's own majority is 5, its supervisor's 4
    const result = await r.score(
      rewardContext({ keys: ['5', '5', '4'], supervisors: [['4', '4', '4']], reference: '4' }),
    );
    return {
      notices: lines
        .join('')
        .split('\n')
        .filter((l) => l.includes('notice')),
      result,
    };
  } finally {
    process.stderr.write = write;
    await r?.close?.();
  }
}

describe('corl:python: notices where a label-free run changes semantics silently', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('corl-python-notices-');
  });
  after(() => tmp.cleanup());

  it('a TRL function that takes its own majority is flagged, and its results say the label went unused', async () => {
    const own = [
      'from collections import Counter',
      'def reward_func(completions, answer_keys, **kwargs):',
      '    top = Counter(answer_keys).most_common(1)[0][0]',
      '    return [1.0 if k == top else 0.0 for k in answer_keys]',
      '',
    ].join('\n');
    const { notices, result } = await run(tmp.dir, 'own.py', own);
    expect(notices).to.have.length(1);
    expect(notices[0]).to.contain(
      'corl:python notice: own.py:reward_func never reads what it is handed of its supervisors',
    );
    expect(notices[0]).to.contain('every topology gives the same rewards');
    // its own majority (5), not the supervisor's label (4): 1, 1, 0
    expect(result.rewards).to.deep.equal([1, 1, 0]);
    expect(result.label).to.equal('4');
    expect(result.metrics?.['python/label_unused']).to.equal(1);
  });

  it('a function that reads the pseudo-label, or a **kwargs that may carry it, is not flagged', async () => {
    const reads =
      'def reward_func(completions, matches_pseudo_label, **kwargs):\n    return [1.0 if m else 0.0 for m in matches_pseudo_label]\n';
    const a = await run(tmp.dir, 'reads.py', reads);
    expect(a.notices).to.deep.equal([]);
    expect(a.result.rewards).to.deep.equal([0, 0, 1]);
    expect(a.result.metrics?.['python/label_unused']).to.equal(undefined);
    const kwargs =
      "def reward_func(completions, **kw):\n    return [1.0 if m else 0.0 for m in kw['matches_pseudo_label']]\n";
    const b = await run(tmp.dir, 'kwargs.py', kwargs);
    expect(b.notices).to.deep.equal([]);
    expect(b.result.rewards).to.deep.equal([0, 0, 1]);
  });

  it('a label-free compute_score is told that ground_truth is the pseudo-label; one that ignores it is flagged too', async () => {
    const reads =
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0 if solution_str.endswith(ground_truth + "}") else 0.0\n';
    const a = await run(tmp.dir, 'verl_reads.py', reads, { signature: 'verl' });
    expect(a.notices).to.have.length(1);
    expect(a.notices[0]).to.contain("its ground_truth argument is the supervisors' plurality label (the pseudo-label");
    const ignores =
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return float(len(solution_str) < 3)\n';
    const b = await run(tmp.dir, 'verl_ignores.py', ignores, { signature: 'verl' });
    expect(b.notices).to.have.length(2);
    expect(b.notices[1]).to.contain('never reads what it is handed of its supervisors (ground_truth, extra_info)');
    // supervised: nothing to say
    const c = await run(tmp.dir, 'verl_gt.py', reads, { signature: 'verl', groundTruth: true });
    expect(c.notices).to.deep.equal([]);
  });
});
