import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { contractFiles, contractsReference, HELPER_FILES } from '../../scripts/contracts-doc';
import { tempDir } from '../fixtures/configs';

describe('scripts/contracts-doc (docs/reference/contracts.md from the JSDoc of core/contracts)', () => {
  it('lists every exported declaration of every contract file, and every interface member', () => {
    const page = contractsReference(ROOT);
    // every file of core/contracts is a contract, but for the index and frozen.ts (deepFreeze: how
    // corl makes what it hands plugins read-only, not something a plugin implements)
    const files = fs.readdirSync(path.join(ROOT, 'core/contracts')).map((f) => `core/contracts/${f}`);
    const others = files.filter((f) => !contractFiles(ROOT).includes(f));
    expect(others.sort()).to.deep.equal(['core/contracts/frozen.ts', 'core/contracts/index.ts']);
    for (const rel of contractFiles(ROOT)) {
      const text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
      expect(page).to.contain(`## ${rel}`);
      for (const m of text.matchAll(/^export (?:interface|type|const|class|function) (\w+)/gm))
        expect(page, `${rel}: ${m[1]}`).to.contain(`### ${m[1]}\n`);
    }
    expect(page).to.contain(
      "- `score(ctx: RewardContext, work?: WorkOptions): Promise<RewardResult>` — Rewards for one agent's completions to one problem.",
    );
    expect(page).to.contain(
      "- `readonly reference?: Reference` — The reference — present only when the source's manifest declares `readsGroundTruth`.",
    );
    expect(page).to.not.contain('{@link');
    // the helpers a plugin imports besides the contracts: the vote the guide uses
    for (const rel of HELPER_FILES) expect(page).to.contain(`## ${rel}`);
    expect(page).to.contain('### pluralityVote\n').and.contain('### VoteOutcome\n');
  });

  it('a contract member without JSDoc is an error naming it', () => {
    const tmp = tempDir('corl-contracts-doc-');
    try {
      fs.mkdirSync(path.join(tmp.dir, 'core/contracts'), { recursive: true });
      fs.writeFileSync(path.join(tmp.dir, 'core/contracts/index.ts'), "export * from './thing';\n");
      for (const rel of HELPER_FILES) {
        fs.mkdirSync(path.dirname(path.join(tmp.dir, rel)), { recursive: true });
        fs.copyFileSync(path.join(ROOT, rel), path.join(tmp.dir, rel));
      }
      fs.writeFileSync(
        path.join(tmp.dir, 'core/contracts/thing.ts'),
        '/** A thing. */\nexport interface Thing {\n  /** Documented. */\n  a: number;\n  b: string;\n}\n',
      );
      expect(() => contractsReference(tmp.dir)).to.throw(/needs JSDoc[\s\S]*core\/contracts\/thing\.ts: Thing\.b/);
    } finally {
      tmp.cleanup();
    }
  });
});
