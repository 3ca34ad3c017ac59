import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError, ERROR_CODES, isCorlError } from '../../../core/errors';
import { ROOT } from '../../../scripts/generate';

function sources(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => /\.(ts|js|py|md)$/.test(f) && !f.includes('node_modules') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));
}

describe('core/errors (catalog, docs and code in step)', () => {
  it('every code has a cause and a fix, and follows CORL_ERR_<AREA>_<PROBLEM>', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(code).to.match(/^CORL_ERR_[A-Z]+(_[A-Z0-9]+)*$/);
      expect(spec.cause.length, code).to.be.greaterThan(10);
      expect(spec.fix.length, code).to.be.greaterThan(5);
    }
  });

  it('docs/reference/errors.md lists exactly the catalog', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/reference/errors.md'), 'utf8');
    const listed = [...doc.matchAll(/^### (CORL_ERR_\w+)$/gm)].map((m) => m[1]);
    expect(listed.sort()).to.deep.equal(Object.keys(ERROR_CODES).sort());
  });

  it('every code used in the sources, templates and docs is in the catalog', () => {
    const known = new Set(Object.keys(ERROR_CODES));
    const unknown: string[] = [];
    for (const file of ['core', 'plugins', 'templates', 'docs', 'bin'].flatMap((d) => sources(path.join(ROOT, d)))) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/CORL_ERR_[A-Z0-9_]*[A-Z0-9]/g)) {
        if (!known.has(m[0]) && !m[0].endsWith('_')) unknown.push(`${path.relative(ROOT, file)}: ${m[0]}`);
      }
    }
    expect(unknown).to.deep.equal([]);
  });

  it('a CorlError carries code, place, hint (defaulting to the catalog fix) and a JSON form', () => {
    const e = new CorlError('CORL_ERR_CLI_USAGE', 'expected --steps to be an integer, got "x"', { where: '--steps' });
    expect(e.message).to.equal(
      `CORL_ERR_CLI_USAGE: --steps: expected --steps to be an integer, got "x". ${ERROR_CODES.CORL_ERR_CLI_USAGE.fix}`,
    );
    expect(e.detail).to.equal('expected --steps to be an integer, got "x"');
    expect(isCorlError(e, 'CORL_ERR_CLI_USAGE')).to.equal(true);
    expect(isCorlError(new Error('x'))).to.equal(false);
    expect(e.toJSON().code).to.equal('CORL_ERR_CLI_USAGE');
    const moved = e.at('file.json:3:4');
    expect(moved.message).to.contain('file.json:3:4: expected');
    expect(moved.code).to.equal(e.code);
  });
});

describe('core/errors: coded messages carry no stack lines', () => {
  it('drops the stack frames an underlying message embedded, keeping its other lines', () => {
    const e = new CorlError(
      'CORL_ERR_IO',
      'expected x, got Error: boom\n    at fn (/a/b.js:1:2)\n    at Object.<anonymous> (/a/c.js:3:4)\n    at new Promise (<anonymous>)\n  second line',
    );
    expect(e.detail).to.equal('expected x, got Error: boom\n  second line');
    expect(e.message).not.to.match(/\n\s+at /);
  });
});
