#!/usr/bin/env node
'use strict';
const cli = require('../dist/entry/cli.js');
// A run or comparison folder's lock taken over by another holder (a requeued Slurm task, a replaced
// pod) ends this process with 75; a program that embeds corl gets CORL_ERR_RUN_LOCKED on its next write.
cli.stopProcessOnLostLock();
cli.main().then((code) => {
  process.exitCode = code;
});
