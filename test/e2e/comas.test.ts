// configs/comas.json through the corl binary on a small budget: the embedded families propose,
// evaluate each other and are judged by their pooled plurality; the run finishes label-free and
// reports the judge budget of every step and the accuracy of every round.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir, writeConfig } from '../fixtures/configs';

const ROOT = path.resolve(__dirname, '../../..');
const CONFIGS = path.join(ROOT, 'configs');
const BIN = path.join(ROOT, 'bin/corl.js');

describe('e2e: CoMAS through the binary', function () {
  this.timeout(600000);

  it('trains configs/comas.json for 2 steps and reports judge calls and per-round accuracy', () => {
    const tmp = tempDir('corl-comas-e2e-');
    try {
      const c = JSON.parse(fs.readFileSync(path.join(CONFIGS, 'comas.json'), 'utf8'));
      for (const a of c.agents) a.policy.options.checkpoint = path.resolve(CONFIGS, a.policy.options.checkpoint);
      c.$schema = path.join(ROOT, 'schema/corl.schema.json');
      c.trainer = { ...c.trainer, steps: 2, batchSize: 2, groupSize: 4, evalEvery: 0, checkpointEvery: 0 };
      c.eval = { ...c.eval, maxProblems: 6, samples: 2, ensemble: 2 };
      const file = writeConfig(tmp.dir, 'comas.json', c);
      const out = path.join(tmp.dir, 'run');
      const r = spawnSync(process.execPath, [BIN, 'train', '-c', file, '--out', out], { encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout).to.contain('label-free run: 2 step(s)');
      const metrics = fs
        .readFileSync(path.join(out, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const train = metrics.filter((m) => m.phase === 'train');
      expect(train.map((m) => [m.step, m.agent])).to.deep.equal([
        [1, 0],
        [1, 1],
        [2, 0],
        [2, 1],
      ]);
      for (const m of train) {
        // 2 problems × 2 judging agents: one sampling call each, 4 samples each; 2 problems × 2 evaluators × 4 debates judged.
        expect(m.metrics['judge/calls']).to.equal(4);
        expect(m.metrics['judge/samples']).to.equal(16);
        expect(m.metrics['judge/verdicts']).to.be.within(0, 16);
        expect(m.metrics).to.have.property('train/round1/accuracy');
      }
      // Every judged pair shares out exactly 1 between a proposal and its evaluation.
      const verdicts = train.filter((m) => m.agent === 0).map((m) => m.metrics['judge/verdicts']);
      const rewardSums = [1, 2].map((s) =>
        train.filter((m) => m.step === s).reduce((sum, m) => sum + m.metrics['reward/mean'] * 2 * 2 * 4, 0),
      );
      rewardSums.forEach((sum, i) => expect(sum).to.be.closeTo(verdicts[i]!, 1e-9));
      // Evaluation scores the proposals' round; the evaluation round is reported beside it.
      for (const m of metrics.filter((x) => x.phase === 'eval' && x.metrics['eval/accuracy'] !== undefined)) {
        expect(m.metrics['eval/accuracy']).to.equal(m.metrics['eval/round0/pass@1']);
        expect(m.metrics).to.have.property('eval/round1/pass@1');
      }
    } finally {
      tmp.cleanup();
    }
  });
});
