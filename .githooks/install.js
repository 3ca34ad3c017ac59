// `npm test` in a checkout (package.json "pretest"; not an install script, which npm would flag to
// everyone installing corl) points git at .githooks, so the commit-msg hook runs for every
// contributor. It never fails: outside a git checkout (an
// installed package, a tarball), without git, or where core.hooksPath already names another folder
// (a contributor's own hooks: left alone, and said) it does nothing.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
try {
  if (fs.existsSync(path.join(root, '.git'))) {
    const git = (args) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    let current = '';
    try {
      current = git(['config', '--get', 'core.hooksPath']).trim();
    } catch {
      // not set
    }
    if (current === '') git(['config', 'core.hooksPath', '.githooks']);
    else if (current !== '.githooks')
      process.stderr.write(
        `corl: core.hooksPath is ${current}, left as it is; add .githooks/commit-msg there to keep commit subjects at 72 characters\n`,
      );
  }
} catch {
  // no git, or a checkout git cannot configure: nothing to install
}
