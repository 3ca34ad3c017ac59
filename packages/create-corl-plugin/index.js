#!/usr/bin/env node
'use strict';
// create-corl-plugin (`npm create corl-plugin`, `npx create-corl-plugin`): the scaffolder and the
// templates, compiled and copied into this package when it is packed (build.js). Inside a corl
// checkout (or linked from one) it runs the checkout's own build, with the checkout's corl.
const fs = require('node:fs');
const path = require('node:path');

function checkoutCli() {
  const root = path.resolve(__dirname, '..', '..');
  try {
    if (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).name !== 'corl') return undefined;
  } catch {
    return undefined;
  }
  const cli = path.join(root, 'dist', 'core', 'scaffold', 'cli.js');
  return fs.existsSync(cli) ? cli : undefined;
}

require(checkoutCli() ?? path.join(__dirname, 'dist', 'core', 'scaffold', 'cli.js'))
  .main()
  .then((code) => {
    process.exitCode = code;
  });
