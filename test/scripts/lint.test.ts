// The lint rules that carry house rules are tested with the attack: unseeded randomness in the
// framework is an error, while tests and benchmarks may use it.
import { expect } from 'chai';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';

// eslint's flat-config API, loaded the way the CLI loads it.
const { ESLint } = require('eslint') as typeof import('eslint');

async function lint(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint rules (eslint.config.js)', () => {
  it('refuses Math.random and crypto.getRandomValues in core/ and plugins/', async () => {
    for (const file of ['core/util/x.ts', 'plugins/rewards/x.ts', 'entry/x.ts']) {
      const messages = await lint(
        file,
        'export const a = Math.random();\nexport const b = crypto.getRandomValues(new Uint8Array(4));\n',
      );
      expect(
        messages.filter((m) => m.includes('unseeded randomness')),
        file,
      ).to.have.length.greaterThanOrEqual(2);
    }
  });

  it('allows seeded randomness there, and Math.random in tests', async () => {
    expect(
      await lint('core/util/x.ts', "import { Rng } from './rng';\nexport const a = new Rng(1).next();\n"),
    ).to.deep.equal([]);
    expect(await lint('test/util/x.test.ts', 'export const a = Math.random();\n')).to.deep.equal([]);
  });

  it('flags unused variables (the rule that keeps dead code out)', async () => {
    const messages = await lint(
      'core/util/x.ts',
      'export function f(): number {\n  const unused = 1;\n  return 2;\n}\n',
    );
    expect(messages.join('\n')).to.match(/no-unused-vars/);
  });
});
