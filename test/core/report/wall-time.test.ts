import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Design } from '../../../core/report/design';
import {
  durationText,
  lookWallTimes,
  readWallTime,
  unionSeconds,
  wallTimeLines,
  type PredictionRecord,
  type RunSpan,
} from '../../../core/report/wall-time';
import { tempDir } from '../../fixtures/configs';

const design: Design = {
  metric: 'final',
  alpha: 0.05,
  sequential: { boundary: 'lan-demets-pocock', looks: [2, 3], first: 1, stop: 'all-resolved' },
};
const prediction = (at: string, looks: PredictionRecord['looks']): PredictionRecord => ({
  kind: 'prediction',
  at,
  load: 1.5,
  cores: 2,
  jobs: 1,
  demand: 1.7,
  alone: { a: { seconds: 20, source: 'calibrated' } },
  looks,
});
const span = (config: string, seed: number, from: number, to: number): RunSpan => ({
  kind: 'run',
  config,
  seed,
  startedAt: new Date(Date.UTC(2026, 11, 7, 13, 0, from)).toISOString(),
  endedAt: new Date(Date.UTC(2026, 11, 7, 13, 0, to)).toISOString(),
  from: 0,
  to: 2,
  steps: 2,
  load: 1.5,
  cores: 2,
  concurrent: 1,
  cpu: 1.7,
});

describe('report/wall-time: predicted and actual wall time per look', () => {
  it('the actual wall time is the union of the runs spans: overlaps once, gaps not at all', () => {
    expect(
      unionSeconds([
        [0, 10000],
        [5000, 20000],
        [30000, 40000],
      ]),
    ).to.equal(30);
    expect(unionSeconds([])).to.equal(0);
    expect(durationText(59.6)).to.equal('60 s');
    expect(durationText(150)).to.equal('2.5 min');
    expect(durationText(4.2 * 3600)).to.equal('4.20 h');
  });

  it("quotes each look's first prediction made before it started, against its runs' spans", () => {
    const log = {
      predictions: [
        prediction('2026-12-07T12:59:00.000Z', [
          { look: 1, runs: 4, left: 4, seconds: 100 },
          { look: 2, runs: 2, left: 2, seconds: 50 },
        ]),
        prediction('2026-12-07T13:05:00.000Z', [
          { look: 1, runs: 4, left: 0, seconds: 0 },
          { look: 2, runs: 2, left: 2, seconds: 40 },
        ]),
      ],
      spans: [
        span('a', 1, 0, 10),
        span('b', 1, 5, 20),
        span('a', 2, 30, 40),
        span('b', 2, 30, 45),
        span('c', 1, 0, 99),
      ],
      damaged: [],
    };
    const rows = lookWallTimes(log, design, ['a', 'b']);
    expect(rows.map((r) => [r.look, r.runs, r.predicted?.seconds, r.actual?.seconds, r.actual?.timed])).to.deep.equal([
      [1, 4, 100, 35, 4],
      [2, 2, 50, undefined, undefined],
    ]);
    const lines = wallTimeLines(rows, log);
    expect(lines[0]).to.equal(
      'Wall time of look 1 (4 runs): predicted 100 s (2026-12-07 12:59 UTC, load 1.50 on 2 cores, --jobs 1); actual 35 s (13:00 UTC to 13:00 UTC), 0.35x the prediction.',
    );
    expect(lines[1]).to.equal(
      'Wall time of look 2 (2 runs): predicted 50 s (2026-12-07 12:59 UTC, load 1.50 on 2 cores, --jobs 1); actual: not run yet.',
    );
    // a look already under way when the first prediction was made says for how many runs it was
    const late = lookWallTimes(
      { ...log, predictions: [prediction('2026-12-07T13:00:00.000Z', [{ look: 1, runs: 4, left: 2, seconds: 30 }])] },
      design,
      ['a', 'b'],
    );
    expect(wallTimeLines(late, log)[0])
      .to.contain('predicted 30 s for the 2 of its 4 runs left')
      .and.not.contain('x the prediction');
    // no design with looks, or nothing recorded: no rows
    expect(lookWallTimes(log, { metric: 'final', alpha: 0.05 }, ['a'])).to.deep.equal([]);
    expect(lookWallTimes({ predictions: [], spans: [], damaged: [] }, design, ['a'])).to.deep.equal([]);
  });

  it('a damaged line of wall-time.jsonl is named and skipped; the rest is read', () => {
    const tmp = tempDir('corl-wall-');
    try {
      const lines = [
        JSON.stringify(prediction('2026-12-07T12:59:00.000Z', [{ look: 1, runs: 4, left: 4, seconds: 100 }])),
        '{"kind":"run","config":"a"',
        JSON.stringify({ ...span('a', 1, 0, 10), seed: -1 }),
        JSON.stringify({ ...span('a', 1, 10, 0) }),
        JSON.stringify(span('a', 1, 0, 10)),
      ];
      fs.writeFileSync(path.join(tmp.dir, 'wall-time.jsonl'), lines.join('\n') + '\n');
      const log = readWallTime(tmp.dir);
      expect([log.predictions.length, log.spans.length]).to.deep.equal([1, 1]);
      expect(log.damaged).to.deep.equal(['wall-time.jsonl:2', 'wall-time.jsonl:3', 'wall-time.jsonl:4']);
      expect(wallTimeLines(lookWallTimes(log, design, ['a']), log).pop()).to.equal(
        'Wall time: skipped unreadable lines of wall-time.jsonl:2, wall-time.jsonl:3, wall-time.jsonl:4.',
      );
      fs.rmSync(path.join(tmp.dir, 'wall-time.jsonl'));
      fs.mkdirSync(path.join(tmp.dir, 'wall-time.jsonl'));
      expect(readWallTime(tmp.dir).damaged[0]).to.match(/^wall-time\.jsonl: /);
    } finally {
      tmp.cleanup();
    }
  });
});
