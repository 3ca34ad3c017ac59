#!/usr/bin/env node
'use strict';
// `npm init corl-plugin` runs the package named create-corl-plugin. This is that package: it hands
// over to the create-corl-plugin that ships with corl — the corl this folder sits in (a checkout, or
// node_modules/corl/packages/create-corl-plugin), else the corl installed next to it.
const fs = require('node:fs');
const path = require('node:path');

function corlRoot() {
  const around = path.resolve(__dirname, '..', '..');
  try {
    if (JSON.parse(fs.readFileSync(path.join(around, 'package.json'), 'utf8')).name === 'corl') return around;
  } catch { /* not inside corl */ }
  try {
    return path.dirname(require.resolve('corl/package.json', { paths: [process.cwd(), __dirname] }));
  } catch {
    process.stderr.write('CORL_ERR_SCAFFOLD_TEMPLATE: expected corl to be installed next to create-corl-plugin, got none. Install it first (npm install -D corl), or run npx create-corl-plugin from a project that has it.\n');
    process.exit(1);
  }
}

require(path.join(corlRoot(), 'dist', 'core', 'scaffold', 'cli.js')).main().then((code) => { process.exitCode = code; });
