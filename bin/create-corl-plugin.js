#!/usr/bin/env node
'use strict';
// Generates a corl plugin package from templates/<kind>/ (see `create-corl-plugin --help`).
require('../dist/core/scaffold/cli.js')
  .main()
  .then((code) => {
    process.exitCode = code;
  });
