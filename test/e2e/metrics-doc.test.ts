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
    .replace(/^weighted\/\d+\/reward$/, 'weighted/<i>/reward');
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
      const loaded = await loadConfigValue(config, { baseDir: tmp.dir });
      const run = await RunDirectory.create(path.join(tmp.dir, 'run'), loaded.config, loaded.source, {
        baseDir: tmp.dir,
        supervised: false,
      });
      await train(loaded, { run });
      const records = fs
        .readFileSync(path.join(run.dir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { metrics: Record<string, number> });
      const names = new Set(records.flatMap((r) => Object.keys(r.metrics)));
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
