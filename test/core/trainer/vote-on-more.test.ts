// TTRL's vote-on-more split through the real trainer (trainer.trainSamples): M = groupSize samples
// drawn and voted over, advantages and the update over the first N only. A scripted policy makes
// every answer known, so the label, rewards and advantages are checked against numbers worked by hand.
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfigValue } from '../../../core/config/load';
import { isCorlError } from '../../../core/errors';
import { tempDir } from '../../fixtures/configs';
import { H, P, readRollouts, scriptedConfig, trainIn } from '../../support/scripted-run';

/** A one-agent TTRL config (corl:self, corl:vote) answering P from `answers`, logging updates to `log`. */
function ttrl(answers: string[], trainer: Record<string, unknown>, log: string): Record<string, unknown> {
  return scriptedConfig([{ name: 'a', script: { [P]: answers, [H]: ['4', '4'] }, log }], {
    name: 'vote-on-more',
    seed: 5,
    labelFree: true,
    topology: 'corl:self',
    reward: 'corl:vote',
    trainer: { steps: 1, batchSize: 1, evalEvery: 0, checkpointEvery: 0, saveRollouts: true, ...trainer },
  });
}

function lines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('trainer: vote over M samples, train on N (trainer.trainSamples)', function () {
  this.timeout(60000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('corl-vote-on-more-');
  });
  afterEach(() => tmp.cleanup());

  it('labels by the vote over all M, and trains the first N on that label', async () => {
    // M = 5 answers 3, 3, 2, 2, 2: the vote over all five is "2" (3 of 5), over the first three "3".
    const log = path.join(tmp.dir, 'updates.jsonl');
    await trainIn(tmp.dir, ttrl(['3', '3', '2', '2', '2'], { groupSize: 5, trainSamples: 3 }, log), false);
    const [r] = readRollouts(tmp.dir) as unknown as {
      label: string;
      completions: { key: string; reward: number; advantage: number; trained?: boolean }[];
    }[];
    expect(r!.label).to.equal('2');
    expect(r!.completions.map((c) => c.key)).to.deep.equal(['3', '3', '2', '2', '2']);
    expect(r!.completions.map((c) => c.reward)).to.deep.equal([0, 0, 1, 1, 1]);
    // GRPO over the trained rewards [0, 0, 1]: mean 1/3, unbiased std sqrt((1/9 + 1/9 + 4/9)/2) = 1/sqrt(3).
    const s = 1 / Math.sqrt(3) + 1e-6;
    const want = [-1 / 3 / s, -1 / 3 / s, 2 / 3 / s, 0, 0];
    r!.completions.forEach((c, k) => expect(c.advantage, `sample ${k}`).to.be.closeTo(want[k]!, 1e-12));
    expect(r!.completions.map((c) => c.trained)).to.deep.equal([undefined, undefined, undefined, false, false]);
    // The update sees the first three samples only, with those advantages.
    const updates = lines(log);
    expect(updates.map((u) => u.answer)).to.deep.equal(['3', '3', '2']);
    updates.forEach((u, k) => expect(u.advantage as number).to.be.closeTo(want[k]!, 1e-12));
    // Metrics say both counts; rewards are over the trained three, the label right against "2".
    const train = lines(path.join(tmp.dir, 'run', 'metrics.jsonl')).find((m) => m.phase === 'train')!;
    const m = train.metrics as Record<string, number>;
    expect(m['group/voted_samples']).to.equal(5);
    expect(m['group/trained_samples']).to.equal(3);
    expect(m['reward/mean']).to.be.closeTo(1 / 3, 1e-12);
    expect(m['label/accuracy']).to.equal(1);
  });

  it('without the split, the same first three samples vote "3" by themselves', async () => {
    const log = path.join(tmp.dir, 'updates.jsonl');
    await trainIn(tmp.dir, ttrl(['3', '3', '2'], { groupSize: 3 }, log), false);
    const [r] = readRollouts(tmp.dir) as unknown as { label: string; completions: { reward: number }[] }[];
    expect(r!.label).to.equal('3');
    expect(r!.completions.map((c) => c.reward)).to.deep.equal([1, 1, 0]);
    const m = lines(path.join(tmp.dir, 'run', 'metrics.jsonl')).find((x) => x.phase === 'train')!.metrics as Record<
      string,
      number
    >;
    expect(m['label/accuracy']).to.equal(0);
    expect(m).to.not.have.property('group/voted_samples');
  });

  for (const [trainSamples, says] of [
    [6, 'at most trainer.groupSize (5)'],
    [1, 'at least 2 trained samples'],
  ] as const) {
    it(`refuses trainSamples ${trainSamples} with groupSize 5, naming the field`, async () => {
      const config = ttrl(['2'], { groupSize: 5, trainSamples }, path.join(tmp.dir, 'u.jsonl'));
      let caught: unknown;
      try {
        await loadConfigValue(config, { baseDir: tmp.dir });
      } catch (e) {
        caught = e;
      }
      expect(isCorlError(caught), String(caught)).to.equal(true);
      if (!isCorlError(caught)) return;
      expect(caught.code).to.equal('CORL_ERR_CONFIG_INVALID');
      expect(caught.message).to.contain('trainer.trainSamples');
      expect(caught.message).to.contain(says);
    });
  }
});
