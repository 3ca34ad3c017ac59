#!/usr/bin/env node
'use strict';
require('../dist/entry/cli.js')
  .main()
  .then((code) => {
    process.exitCode = code;
  });
