import { expect } from 'chai';
import type { SampleRequest, SamplingOptions } from '../../../../core/contracts/policy';
import { isCorlError } from '../../../../core/errors';
import { mixSeed } from '../../../../core/util/rng';
import {
  checkSampleCount,
  cutAtStop,
  perRequest,
  planRows,
  stopAt,
} from '../../../../plugins/policies/decoding/requests';

const options: SamplingOptions = { n: 2, temperature: 0.7, topP: 0.9, maxTokens: 12, seed: 41, stop: ['\n'] };

describe('plugins/policies/decoding/requests (the front end of the token-by-token policies)', () => {
  it('one row per request and sample, seeded by the call index; each distinct prompt encoded once', () => {
    const encoded: string[] = [];
    const requests: SampleRequest[] = [
      { prompt: 'a' },
      { prompt: 'b', overrides: { temperature: 0, stop: ['.'] } },
      { prompt: 'a' },
    ];
    const plan = planRows(requests.entries(), options, (prompt, i) => {
      encoded.push(`${prompt}@${i}`);
      return prompt.toUpperCase();
    });
    expect(encoded).to.deep.equal(['a@0', 'b@1']);
    expect(plan.prompts).to.deep.equal(['A', 'B']);
    expect(plan.rows.map((r) => [r.prompt, r.temperature, r.topP, r.maxTokens, r.stop, r.seed])).to.deep.equal([
      [0, 0.7, 0.9, 12, ['\n'], mixSeed(41, 0, 0)],
      [0, 0.7, 0.9, 12, ['\n'], mixSeed(41, 0, 1)],
      [1, 0, 0.9, 12, ['.'], mixSeed(41, 1, 0)],
      [1, 0, 0.9, 12, ['.'], mixSeed(41, 1, 1)],
      [0, 0.7, 0.9, 12, ['\n'], mixSeed(41, 2, 0)],
      [0, 0.7, 0.9, 12, ['\n'], mixSeed(41, 2, 1)],
    ]);
    // A row's stop list is its own copy.
    expect(plan.rows[0]!.stop).to.not.equal(options.stop);
  });

  it("a part of a call keeps the call's indices, so a split between workers changes no seed", () => {
    const requests: SampleRequest[] = [{ prompt: 'x' }, { prompt: 'y' }, { prompt: 'z' }];
    const whole = planRows(requests.entries(), options, (p) => p).rows.map((r) => r.seed);
    const parts = [
      [[0, requests[0]!]] as const,
      [
        [1, requests[1]!],
        [2, requests[2]!],
      ] as const,
    ].flatMap((part) => planRows(part, options, (p) => p).rows.map((r) => r.seed));
    expect(parts).to.deep.equal(whole);
  });

  it('perRequest groups rows n by n in order', () => {
    expect(perRequest([1, 2, 3, 4, 5, 6], 3)).to.deep.equal([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(perRequest([], 2)).to.deep.equal([]);
  });

  it('the stop-string cut: the earliest occurrence of any stop string, and what follows, goes', () => {
    expect(stopAt('ab.cd\nef', ['\n', '.'])).to.equal(2);
    expect(cutAtStop('ab.cd\nef', ['\n', '.'])).to.equal('ab');
    expect(cutAtStop('abc', ['x'])).to.equal('abc');
    expect(cutAtStop('abc', [])).to.equal('abc');
    expect(cutAtStop('xyz', ['xy', 'x'])).to.equal('');
  });

  it('n must be a whole number ≥ 1 (CORL_ERR_CONFIG_INVALID)', () => {
    for (const n of [0, -1, 1.5, NaN]) {
      try {
        checkSampleCount(n);
        expect.fail(`accepted ${n}`);
      } catch (e) {
        expect(isCorlError(e, 'CORL_ERR_CONFIG_INVALID'), String(e)).to.equal(true);
      }
    }
    checkSampleCount(1);
  });
});
