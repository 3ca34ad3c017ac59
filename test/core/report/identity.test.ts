import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { portableConfig } from '../../../core/cli/commands/init';
import { canonicalPaths, sameConfigIdentity } from '../../../core/report/identity';
import { corlRoot } from '../../../core/util/paths';
import { tempDir } from '../../fixtures/configs';

const ROOT = corlRoot();
const read = (name: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(ROOT, 'configs', name), 'utf8')) as Record<string, unknown>;

describe('report/identity: what makes two configs the same comparison', () => {
  it("an init project's configs have the identities of the checkout's they were copied from", () => {
    for (const name of ['base.json', 'ttrl.json', 'co-rl.json']) {
      const text = fs.readFileSync(path.join(ROOT, 'configs', name), 'utf8');
      const copy = portableConfig(text, path.join(ROOT, 'configs'), ROOT);
      // what init changes: the sink, $schema and the package: checkpoints
      expect(copy.metrics).to.deep.equal(['corl:tensorboard']);
      expect(JSON.stringify(copy)).to.contain('"package:corl/models/slips/alpha"');
      // the checkout's run records its config folder; a project's, its own (anywhere)
      expect(sameConfigIdentity(copy, '/somewhere/lab/configs'), name).to.equal(
        sameConfigIdentity(read(name), path.join(ROOT, 'configs')),
      );
      // a packed copy records baseDir relative to the checkout ("configs"), as docs/results does
      expect(sameConfigIdentity(read(name), 'configs')).to.equal(sameConfigIdentity(copy, '/elsewhere'));
    }
  });

  it("the checkout's co-rl and ttrl are the committed headline comparison's co-rl-diff and ttrl", () => {
    const committed = JSON.parse(
      fs.readFileSync(path.join(ROOT, 'docs/results/headline-slips/verdicts.json'), 'utf8'),
    ) as { identities: Record<string, string> };
    expect(sameConfigIdentity(read('co-rl.json'), path.join(ROOT, 'configs'))).to.equal(
      committed.identities['co-rl-diff'],
    );
    expect(sameConfigIdentity(read('ttrl.json'), path.join(ROOT, 'configs'))).to.equal(committed.identities.ttrl);
  });

  it('names, descriptions, seeds, $schema and sinks aside; anything that trains differently is another config', () => {
    const co = read('co-rl.json');
    const id = sameConfigIdentity(co, path.join(ROOT, 'configs'));
    const same = { ...co, name: 'mine', description: 'x', seed: 7, metrics: ['corl:jsonl'], $schema: 'y' };
    expect(sameConfigIdentity(same, path.join(ROOT, 'configs'))).to.equal(id);
    const steps = { ...co, trainer: { ...(co.trainer as object), steps: 226 } };
    expect(sameConfigIdentity(steps, path.join(ROOT, 'configs'))).to.not.equal(id);
    // another checkpoint of corl's is another config
    const other = JSON.parse(JSON.stringify(co).replace('../models/slips/alpha', '../models/systematic/alpha'));
    expect(sameConfigIdentity(other, path.join(ROOT, 'configs'))).to.not.equal(id);
  });

  it('a path written two ways that resolves to the same place is one path; strings that are not paths stay', () => {
    const tmp = tempDir('corl-identity-');
    try {
      fs.mkdirSync(path.join(tmp.dir, 'data'));
      fs.writeFileSync(path.join(tmp.dir, 'data', 'x.jsonl'), '');
      const a = canonicalPaths({ file: './data/x.jsonl', name: 'corl:ring', n: 3 }, path.join(tmp.dir, 'data', '..'));
      const b = canonicalPaths({ file: '../data/x.jsonl', name: 'corl:ring', n: 3 }, path.join(tmp.dir, 'data'));
      expect(a).to.deep.equal(b);
      expect(a).to.deep.equal({ file: path.join(tmp.dir, 'data', 'x.jsonl'), name: 'corl:ring', n: 3 });
      expect(canonicalPaths({ c: '../models/slips/beta' }, path.join(ROOT, 'configs'))).to.deep.equal({
        c: 'package:corl/models/slips/beta',
      });
      // not paths: a token that starts with a backslash, a path that is nowhere and names no shipped model
      expect(canonicalPaths({ t: '\\boxed{', u: './nowhere/x' }, tmp.dir)).to.deep.equal({
        t: '\\boxed{',
        u: './nowhere/x',
      });
      // a package that is not installed: the string as written
      expect(canonicalPaths({ c: 'package:not-installed-pkg/x' }, tmp.dir)).to.deep.equal({
        c: 'package:not-installed-pkg/x',
      });
    } finally {
      tmp.cleanup();
    }
  });
});
