'use strict';
// `npm pack` (prepack): compile the scaffolder into dist/ and copy corl's templates next to it, so
// the package is complete on its own, as create-vite carries its templates.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const root = path.resolve(here, '..', '..');
fs.rmSync(path.join(here, 'dist'), { recursive: true, force: true });
fs.rmSync(path.join(here, 'templates'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc', { paths: [root] }), '-p', here], {
  stdio: 'inherit',
});
const skip = new Set(['node_modules', 'dist', 'runs', 'package-lock.json']);
fs.cpSync(path.join(root, 'templates'), path.join(here, 'templates'), {
  recursive: true,
  filter: (src) => !skip.has(path.basename(src)) && !src.endsWith('.tsbuildinfo'),
});
