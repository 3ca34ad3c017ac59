import { expect } from 'chai';
import {
  meanDemand,
  predictionLines,
  predictLooks,
  rateFromCalibration,
  rateFromFolder,
  secondsLeft,
  slowdown,
  type AloneRate,
  type RunSchedule,
} from '../../../core/compare/wall-time';
import type { RunSpan } from '../../../core/report/wall-time';

const parts: AloneRate = { kind: 'parts', setup: 2, step: 3, evaluation: 5, checkpoint: 1, source: 'calibrated' };
const sched: RunSchedule = { steps: 6, evalEvery: 3, checkpointEvery: 2, atStart: true };

describe('compare/wall-time: the predicted wall time of a look', () => {
  it('slowdown is max(1, (load + jobs x busy cores) / cores)', () => {
    expect(slowdown({ load: 1.5, cores: 2 }, 1, 1.7)).to.be.closeTo(1.6, 1e-12);
    expect(slowdown({ load: 0, cores: 2 }, 1, 1.7)).to.equal(1);
    expect(slowdown({ load: 0, cores: 2 }, 2, 1.7)).to.be.closeTo(1.7, 1e-12);
    expect(slowdown({ load: 6, cores: 2 }, 1, 0.5)).to.be.closeTo(3.25, 1e-12);
  });

  it('a run from its start: setup, step-0 evaluation, steps, every evaluation and checkpoint of the schedule', () => {
    // 2 + 5 (step 0) + 6 x 3 + evaluations at 3, 6 (2 x 5) + checkpoints at 2, 4, 6 (3 x 1) = 38
    expect(secondsLeft(parts, sched, 0)).to.equal(38);
    // resumed at step 4: setup again, no step-0 evaluation, 2 steps, evaluation at 6, checkpoint at 6 = 14
    expect(secondsLeft(parts, sched, 4)).to.equal(14);
    expect(secondsLeft(parts, { ...sched, atStart: false, evalEvery: 0, checkpointEvery: 0 }, 0)).to.equal(
      2 + 18 + 5 + 1,
    );
    expect(secondsLeft(parts, sched, 6)).to.equal(0);
    // a whole run's rate is spread over its steps; an evaluation-only config (0 steps) is its whole run
    expect(secondsLeft({ kind: 'whole', run: 60, source: 'folder' }, sched, 3)).to.equal(30);
    expect(secondsLeft({ kind: 'whole', run: 20, source: 'folder' }, { ...sched, steps: 0 }, 0)).to.equal(20);
  });

  it('a look takes s x the runs left / j, j = min(--jobs, runs left); looks one after another', () => {
    const rates: Record<string, AloneRate> = { a: parts, b: { kind: 'whole', run: 20, source: 'folder' } };
    const schedules = { a: sched, b: { ...sched, steps: 0 } };
    const looks = predictLooks(
      [
        {
          look: 1,
          runs: 2,
          left: [
            { config: 'a', from: 0 },
            { config: 'b', from: 0 },
          ],
        },
        { look: 2, runs: 2, left: [{ config: 'a', from: 4 }] },
        { look: 3, runs: 2, left: [] },
      ],
      { rates, schedules, machine: { load: 1, cores: 2 }, jobs: 2, demand: 1.5 },
    );
    // look 1: s = (1 + 2 x 1.5) / 2 = 2, (38 + 20) x 2 / 2 = 58; look 2: one run, s = (1 + 1.5) / 2 = 1.25, 14 x 1.25 = 17.5
    expect(looks).to.deep.equal([
      { look: 1, runs: 2, left: 2, seconds: 58 },
      { look: 2, runs: 2, left: 1, seconds: 17.5 },
      { look: 3, runs: 2, left: 0, seconds: 0 },
    ]);
    const lines = predictionLines({
      kind: 'prediction',
      at: '2026-12-07T13:00:00.000Z',
      load: 1,
      cores: 2,
      jobs: 2,
      demand: 1.5,
      alone: { a: { seconds: 38, source: 'calibrated' }, b: { seconds: 20, source: 'folder' } },
      looks,
    });
    expect(lines[0]).to.contain('a 38 s (timed now), b 20 s (its runs here)').and.contain('load 1.00 on 2 cores');
    expect(lines[0]).to.contain('--jobs 2').and.contain('each run x1.25 alone');
    expect(lines.slice(1)).to.deep.equal([
      '  look 1: 2 of 2 runs left, about 58 s (58 s from now)',
      '  look 2: 1 of 2 runs left, about 18 s (76 s from now, if it gets that far)',
      '  look 3: 0 of 2 runs left, about 0 s',
    ]);
  });

  it('the demand of the runs left is their alone-time-weighted mean', () => {
    const left = [
      { config: 'a', from: 0 },
      { config: 'b', from: 0 },
    ];
    expect(meanDemand(left, { a: 2, b: 1 }, (r) => (r.config === 'a' ? 30 : 10))).to.equal(1.75);
  });

  it('a calibration of two steps: the first step beyond the second is warm-up, the rest of the wall is setup', () => {
    const lines = [
      { totalMs: 4000, evalMs: 0, checkpointMs: 0 },
      { totalMs: 9000, evalMs: 5000, checkpointMs: 1000 },
    ];
    const idle = rateFromCalibration(
      lines,
      20000,
      { ...sched, steps: 2 },
      { machine: { load: 0, cores: 2 }, demand: 1 },
    );
    // setup = 20 - 13 (steps) - 5 (step-0 evaluation, as long as the last) + 1 (warm-up) = 3
    expect(idle).to.deep.equal({
      kind: 'parts',
      setup: 3,
      step: 3,
      evaluation: 5,
      checkpoint: 1,
      source: 'calibrated',
    });
    // timed at load 2 with the run keeping 2 cores busy on 2: s = 2, every part halves
    const loaded = rateFromCalibration(
      lines,
      20000,
      { ...sched, steps: 2 },
      { machine: { load: 2, cores: 2 }, demand: 2 },
    );
    expect(loaded).to.deep.equal({
      kind: 'parts',
      setup: 1.5,
      step: 1.5,
      evaluation: 2.5,
      checkpoint: 0.5,
      source: 'calibrated',
    });
    expect(
      rateFromCalibration([], 8000, { ...sched, steps: 0 }, { machine: { load: 0, cores: 2 }, demand: 1 }),
    ).to.deep.equal({ kind: 'whole', run: 8, source: 'calibrated' });
  });

  it("a config's runs in the folder: each whole span's wall over the slowdown it ran under, averaged", () => {
    const span = (x: Partial<RunSpan>): RunSpan => ({
      kind: 'run',
      config: 'a',
      seed: 0,
      startedAt: '2026-12-07T13:00:00.000Z',
      endedAt: '2026-12-07T13:02:00.000Z',
      from: 0,
      to: 6,
      steps: 6,
      load: 1,
      cores: 2,
      concurrent: 2,
      cpu: 3,
      ...x,
    });
    // 120 s at load 1 with 2 runs of 1.5 cores each on 2 cores: s = 2, 60 s alone; 30 s at s = 1: 30 s alone
    const r = rateFromFolder(
      [
        span({}),
        span({ seed: 1, endedAt: '2026-12-07T13:00:30.000Z', load: 0, concurrent: 1, cpu: 1 }),
        span({ seed: 2, from: 3 }),
        span({ seed: 3, to: 4 }),
        span({ config: 'b' }),
      ],
      'a',
    );
    expect(r).to.deep.equal({ rate: { kind: 'whole', run: 45, source: 'folder' }, demand: 1.25 });
    expect(rateFromFolder([span({ from: 2 })], 'a')).to.equal(undefined);
  });
});
