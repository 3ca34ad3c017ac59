// The 72-character rule of the contributing guide, kept by a tool: the commit-msg hook the repository
// installs (.githooks/commit-msg, core.hooksPath set by `npm test`'s pretest), and this check of
// every commit subject since a fixed commit. In a clone without that commit (shallow) it checks the
// commits it has and says so; without any git history (a tarball, a copy) it says so and checks the
// hook alone.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../../scripts/generate';
import { tempDir } from '../fixtures/configs';

const HOOKS = path.join(ROOT, '.githooks');
const rule = require(path.join(HOOKS, 'subject.js')) as {
  MAX: number;
  subjectOf(message: string): string;
  subjectProblem(subject: string): string | undefined;
};

/** hub main when the rule got its tool: older history breaks it (63 of 200 subjects then). */
const SINCE = '2ff3307130446d97033cb0278a700245d08fcee7';

/**
 * Commits after SINCE that were on main before the check existed, with their length: history is not
 * rewritten, so they are named here; anything else over the limit fails.
 */
const LANDED_BEFORE_THE_CHECK: Readonly<Record<string, number>> = {
  ee71dc3: 74,
  '95aa4fa': 74,
  '4accbf0': 77,
  a8626eb: 85,
  e85cc61: 73,
  '87b6229': 75,
  '4b95956': 78,
  '97fe9b7': 75,
  '39b8149': 76,
  // 71 characters, 73 bytes: the rule counted characters until it was found that checkers count bytes
  '5f0b91f': 73,
};

const git = (args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });

describe('commit subjects: at most 72 bytes, kept by a hook and by this check', () => {
  it('the hook refuses a longer subject and keeps a good one, counting bytes of the subject as git log shows it', () => {
    const tmp = tempDir('corl-commit-msg-');
    try {
      const hook = (message: string) => {
        const file = path.join(tmp.dir, 'COMMIT_EDITMSG');
        fs.writeFileSync(file, message);
        return spawnSync(process.execPath, [path.join(HOOKS, 'commit-msg'), file], { encoding: 'utf8' });
      };
      const ok = `${'x'.repeat(72)}\n\nbody ${'y'.repeat(200)}\n# a comment line git strips ${'z'.repeat(80)}\n`;
      expect(hook(ok).status, 'exactly 72 bytes, a long body and comment').to.equal(0);
      // bytes, not characters: 71 characters with one "−" are 73 bytes of UTF-8
      const wide = hook(`${'x'.repeat(70)}−\n\nbody\n`);
      expect(wide.status).to.equal(1);
      expect(wide.stderr).to.contain('the subject has 73 bytes (71 characters; a non-ASCII one');
      const long = hook(`report: ${'w'.repeat(70)}\n\nbody\n`);
      expect(long.status).to.equal(1);
      expect(long.stderr).to.contain('commit-msg: the subject has 78 bytes, more than 72');
      // a first paragraph wrapped over two lines is one subject to git log (%s), so to the hook
      expect(hook(`${'a'.repeat(40)}\n${'b'.repeat(40)}\n\nbody\n`).status).to.equal(1);
      expect(rule.subjectOf('\n\n# c\nsubject here\n\nbody')).to.equal('subject here');
      expect(rule.subjectOf(`s\n# ------------------------ >8 ------------------------\n${'d'.repeat(99)}`)).to.equal(
        's',
      );
    } finally {
      tmp.cleanup();
    }
  });

  it('npm test points git at the hooks (package.json pretest, no install script in the package), and never fails', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      files: string[];
    };
    expect(pkg.scripts.pretest).to.match(/^node \.githooks\/install\.js && /);
    expect(pkg.scripts.prepare, 'an install script would make npm warn every user who installs corl').to.equal(
      undefined,
    );
    expect(
      pkg.files.some((f) => f.startsWith('.githooks')),
      "hooks are the checkout's, not the package's",
    ).to.equal(false);
    // outside a git checkout it does nothing and exits 0
    const tmp = tempDir('corl-hooks-');
    try {
      fs.cpSync(HOOKS, path.join(tmp.dir, '.githooks'), { recursive: true });
      const r = spawnSync(process.execPath, [path.join(tmp.dir, '.githooks', 'install.js')], { encoding: 'utf8' });
      expect(r.status).to.equal(0);
      expect(fs.existsSync(path.join(tmp.dir, '.git'))).to.equal(false);
    } finally {
      tmp.cleanup();
    }
  });

  it(`every commit subject since ${SINCE.slice(0, 7)} is at most 72 bytes`, function () {
    const top = git(['rev-parse', '--show-toplevel']);
    if (top.status !== 0 || path.resolve(top.stdout.trim()) !== fs.realpathSync(ROOT)) {
      console.log(`    no git history here (${ROOT} is not a checkout): only the hook is checked`);
      return;
    }
    const has = git(['cat-file', '-e', `${SINCE}^{commit}`]).status === 0;
    const shallow = git(['rev-parse', '--is-shallow-repository']).stdout.trim() === 'true';
    if (!has && !shallow) {
      console.log(`    ${SINCE.slice(0, 7)} is not in this history (another line of commits): nothing to check`);
      return;
    }
    if (!has) console.log(`    a shallow clone without ${SINCE.slice(0, 7)}: checking the commits it has`);
    const log = git(['log', '--format=%h%x09%s', has ? `${SINCE}..HEAD` : 'HEAD']);
    expect(log.status, log.stderr).to.equal(0);
    const over = log.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ hash: l.slice(0, l.indexOf('\t')), subject: l.slice(l.indexOf('\t') + 1) }))
      .filter((c) => rule.subjectProblem(c.subject) !== undefined)
      .filter((c) => !Object.keys(LANDED_BEFORE_THE_CHECK).some((h) => c.hash.startsWith(h) || h.startsWith(c.hash)));
    expect(over.map((c) => `${c.hash} (${Buffer.byteLength(c.subject)} bytes): ${c.subject}`)).to.deep.equal([]);
  });
});
