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
});
