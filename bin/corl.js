#!/usr/bin/env node
'use strict';
require('../dist/core/cli/main.js').main().then((code) => { process.exitCode = code; });
