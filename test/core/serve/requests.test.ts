import { expect } from 'chai';
import { isCorlError } from '../../../core/errors';
import { parseGetRewardRequest, parseGroupsRequest } from '../../../core/serve/requests';

function fails(f: () => unknown, code: string, where: string): void {
  try {
    f();
    expect.fail('parsed');
  } catch (e) {
    expect(isCorlError(e), String(e)).to.equal(true);
    expect((e as { code: string }).code).to.equal(code);
    expect((e as { where: string }).where).to.equal(where);
  }
}

describe('serve/requests', () => {
  it('parses groups with string or object completions, integer ids and optional fields', () => {
    const r = parseGroupsRequest({
      agent: 'a',
      step: 2,
      wait: 1.5,
      groups: [{ id: 7, completions: ['x', { text: 'y', length: 3, finishReason: 'length' }], reference: '4' }],
      extra: true,
    });
    expect(r).to.deep.equal({
      agent: 'a',
      step: 2,
      wait: 1.5,
      groups: [
        {
          id: '7',
          prompt: '',
          completions: [{ text: 'x' }, { text: 'y', length: 3, finishReason: 'length' }],
          reference: '4',
        },
      ],
    });
  });
  it('names the field of every problem', () => {
    fails(() => parseGroupsRequest({ agent: '', step: 0, groups: [] }), 'CORL_ERR_SERVE_BAD_REQUEST', 'agent');
    fails(() => parseGroupsRequest({ agent: 'a', step: 1.5, groups: [] }), 'CORL_ERR_SERVE_BAD_REQUEST', 'step');
    fails(
      () => parseGroupsRequest({ agent: 'a', step: 0, wait: -1, groups: [] }),
      'CORL_ERR_SERVE_BAD_REQUEST',
      'wait',
    );
    fails(
      () => parseGroupsRequest({ agent: 'a', step: 0, groups: [{ id: 'g', completions: [] }] }),
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].completions',
    );
    fails(
      () => parseGroupsRequest({ agent: 'a', step: 0, groups: [{ id: 'g', completions: ['x'], reference: 4 }] }),
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].reference',
    );
    fails(
      () =>
        parseGroupsRequest({ agent: 'a', step: 0, groups: [{ id: 'g', completions: [{ text: 'x', length: -2 }] }] }),
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].completions[0].length',
    );
    fails(
      () => parseGroupsRequest({ agent: 'a', step: 0, groups: [{ id: 'g', completions: ['x'], testInputs: [[1]] }] }),
      'CORL_ERR_SERVE_BAD_REQUEST',
      'groups[0].testInputs[0][0]',
    );
  });
  it('parses OpenRLHF bodies and checks list lengths', () => {
    expect(parseGetRewardRequest({ query: ['q'], prompts: ['p'], labels: [null] })).to.deep.equal({
      query: ['q'],
      prompts: ['p'],
      labels: [null],
    });
    fails(() => parseGetRewardRequest({ query: [] }), 'CORL_ERR_SERVE_BAD_REQUEST', 'query');
    fails(() => parseGetRewardRequest({ query: ['q', 3] }), 'CORL_ERR_SERVE_BAD_REQUEST', 'query[1]');
    fails(() => parseGetRewardRequest({ query: ['q'], labels: ['a', 'b'] }), 'CORL_ERR_SERVE_GROUP_SIZE', 'labels');
  });
  it('caps testInputs per group, completions per request and samples per request (CORL_ERR_SERVE_LIMIT)', () => {
    const limits = { maxGroups: 10, maxCompletions: 4, maxRequestCompletions: 6, maxTestInputs: 2 };
    const group = (id: string, n: number, inputs = 1) => ({
      id,
      completions: Array(n).fill('x'),
      testInputs: Array.from({ length: inputs }, () => ['1']),
    });
    expect(
      parseGroupsRequest({ agent: 'a', step: 0, groups: [group('g', 4, 2), group('h', 2, 2)] }, limits).groups,
    ).to.have.length(2);
    fails(
      () => parseGroupsRequest({ agent: 'a', step: 0, groups: [group('g', 1, 3)] }, limits),
      'CORL_ERR_SERVE_LIMIT',
      'groups[0].testInputs',
    );
    fails(
      () => parseGroupsRequest({ agent: 'a', step: 0, groups: [group('g', 4), group('h', 2), group('i', 1)] }, limits),
      'CORL_ERR_SERVE_LIMIT',
      'groups[2].completions',
    );
    expect(parseGetRewardRequest({ query: ['q', 'r'] }, 2).query).to.have.length(2);
    fails(() => parseGetRewardRequest({ query: ['q', 'r', 's'] }, 2), 'CORL_ERR_SERVE_LIMIT', 'query');
  });
});
