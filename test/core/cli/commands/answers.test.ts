import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../../fixtures/configs';

const BIN = path.resolve(__dirname, '../../../../../bin/corl.js');
const corl = (args: string[], input = '') => {
  const r = spawnSync(process.execPath, [BIN, ...args], { input, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
};
const lines = (s: string) =>
  s
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('corl answers extract | equal', function () {
  this.timeout(60000);
  it('extract: one {"answer", "key"} line per input line, from stdin', () => {
    const input =
      [
        { text: 'so $\\boxed{\\dfrac12}$' },
        { text: 'The answer is 0.5.' },
        { text: 'no idea' },
        { text: 'we get 3 then 7' },
      ]
        .map((o) => JSON.stringify(o))
        .join('\n') + '\n';
    const r = corl(['answers', 'extract'], input);
    expect(r.code, r.stderr).to.equal(0);
    expect(lines(r.stdout)).to.deep.equal([
      { answer: '\\dfrac12', key: '\\frac{1}{2}' },
      { answer: '0.5', key: '0.5' },
      { answer: null, key: null },
      { answer: '7', key: '7' },
    ]);
    const off = corl(
      ['answers', 'extract', '--extractor-options', '{"lastNumber": false}'],
      JSON.stringify({ text: 'we get 3 then 7' }) + '\n',
    );
    expect(lines(off.stdout)).to.deep.equal([{ answer: null, key: null }]);
  });

  it('equal: raw answers are keyed and compared by the equivalence; empty answers equal nothing', () => {
    const pairs = [
      ['1/2', '0.5'],
      ['(x+1)^2', 'x^2+2x+1'],
      ['\\sum_{k=1}^{4} k', '10'],
      ['[0, 1)', '[0, 1]'],
      ['', ''],
      ['C', 'C'],
    ];
    const r = corl(['answers', 'equal'], pairs.map(([a, b]) => JSON.stringify({ a, b })).join('\n'));
    expect(r.code, r.stderr).to.equal(0);
    expect(lines(r.stdout).map((o) => o.equal)).to.deep.equal([true, true, true, false, false, true]);
    const exact = corl(['answers', 'equal', '--equivalence', 'corl:exact'], JSON.stringify({ a: '1/2', b: '0.5' }));
    expect(lines(exact.stdout)).to.deep.equal([{ equal: false }]);
  });

  it('reads a file; bad lines are reported with their line numbers, skipped, and the exit status is 1', () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.dir, 'in.jsonl');
      fs.writeFileSync(
        file,
        ['{"text": "\\\\boxed{4}"}', '', 'not json', '{"text": 5}', '[1]', '{"text": "\\\\boxed{5}"}'].join('\n'),
      );
      const r = corl(['answers', 'extract', file]);
      expect(r.code).to.equal(1);
      expect(lines(r.stdout).map((o) => o.key)).to.deep.equal(['4', '5']);
      expect(r.stderr).to.match(/CORL_ERR_ANSWERS_INPUT: .*in\.jsonl:3: expected a JSON object, got invalid JSON/);
      expect(r.stderr).to.match(/in\.jsonl:4: expected a string field "text", got 5/);
      expect(r.stderr).to.match(/in\.jsonl:5: expected a JSON object with text, got an array/);
      expect(r.stderr).to.contain('got 3 bad lines of 6');
      const eq = corl(['answers', 'equal'], '{"a": "1"}\n');
      expect(eq.code).to.equal(1);
      expect(eq.stderr).to.contain('<stdin>:1: expected a string field "b", got none');
    } finally {
      tmp.cleanup();
    }
  });

  it('bad flags: unknown plugins, invalid option JSON or options, a missing file', () => {
    const unknown = corl(['answers', 'extract', '--extractor', 'corl:nope'], '');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('CORL_ERR_PLUGIN_UNKNOWN');
    expect(corl(['answers', 'equal', '--equivalence-options', '{bad'], '').stderr).to.contain('CORL_ERR_CLI_USAGE');
    const badOpt = corl(['answers', 'equal', '--equivalence-options', '{"tolerance": "x"}'], '');
    expect(badOpt.stderr).to.contain('CORL_ERR_PLUGIN_OPTIONS').and.contain('tolerance');
    const missing = corl(['answers', 'extract', '/nonexistent/in.jsonl']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('CORL_ERR_IO');
  });
});
