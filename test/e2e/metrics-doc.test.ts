// docs/reference/metrics.md documents every metric a run writes: a short run with every metric
// family the fixtures can produce, and each name it wrote must be in the page.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue } from '../../core/config/load';
import { RunDirectory } from '../../core/trainer/run-dir';
import { train } from '../../core/trainer/trainer';
import { coRlConfig, tempDir } from '../fixtures/configs';

const DOC = path.resolve(__dirname, '../../../docs/reference/metrics.md');

/** The documented form of a name: agent pairs and sample counts become placeholders. */
function documentedName(name: string): string {
  return name
    .replace(/^pair\/\d+-\d+\//, 'pair/<a>-<b>/')
    .replace(/maj@\d+$/, () => (name.startsWith('ensemble/') ? 'maj@<M>' : 'maj@<n>'))
    .replace(/^weighted\/\d+\/reward$/, 'weighted/<i>/reward')
    .replace(/\/round\d+\//, '/round<r>/');
}

describe('docs/reference/metrics.md', function () {
  this.timeout(120000);
  it('lists every metric a run writes', async () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    const tmp = tempDir();
    try {
      const config = coRlConfig({
        reward: {
          use: 'corl:weighted',
          options: { sources: [{ source: 'corl:vote' }, { source: 'corl:format', weight: 0.1 }] },
        },
        trainer: { steps: 2, batchSize: 3, groupSize: 4, evalEvery: 1, checkpointEvery: 0, sampling: { maxTokens: 4 } },
        eval: { samples: 3, ensemble: 2, sampling: { temperature: 1, maxTokens: 4 } },
      });
      // A debate (2 rounds, the ground-truth verifier) adds the per-round and neighbour-use metrics.
      const debate = coRlConfig({
        name: 'fixture-debate',
        labelFree: false,
        topology: 'corl:complete',
        reward: 'corl:gt-verifier',
        interaction: { use: 'corl:debate', options: { rounds: 2, share: 'answer' } },
        trainer: { steps: 1, batchSize: 3, groupSize: 4, evalEvery: 1, checkpointEvery: 0, sampling: { maxTokens: 4 } },
        eval: { samples: 3, sampling: { temperature: 1, maxTokens: 4 } },
      });
      const names = new Set<string>();
      for (const [name, c, supervised] of [
        ['run', config, false],
        ['debate', debate, true],
      ] as const) {
        const loaded = await loadConfigValue(c, { baseDir: tmp.dir });
        const run = await RunDirectory.create(path.join(tmp.dir, name), loaded.config, loaded.source, {
          baseDir: tmp.dir,
          supervised,
        });
        await train(loaded, { run });
        for (const line of fs.readFileSync(path.join(run.dir, 'metrics.jsonl'), 'utf8').split('\n').filter(Boolean))
          for (const n of Object.keys((JSON.parse(line) as { metrics: Record<string, number> }).metrics)) names.add(n);
      }
      expect([...names]).to.include.members(['eval/round1/peers_right/share', 'train/round2/accuracy']);
      const missing: string[] = [];
      for (const n of names) {
        const inner = n.replace(/^weighted\/\d+\//, '');
        const ok =
          doc.includes(`\`${documentedName(n)}\``) ||
          (n.startsWith('weighted/') && doc.includes(`\`${inner}\``) && doc.includes('`weighted/<i>/<metric>`'));
        if (!ok) missing.push(n);
      }
      expect(missing).to.deep.equal([]);
      expect(names.size).to.be.greaterThan(20);
    } finally {
      tmp.cleanup();
    }
    for (const n of [
      'intrinsic/entropy',
      'intrinsic/self_certainty',
      'exec/tests_passed',
      'vote/own_labeled',
      'loss/clip_fraction',
    ])
      expect(doc).to.contain(`\`${n}\``);
  });
});
