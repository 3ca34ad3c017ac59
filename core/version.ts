// Read at runtime so that a published build and the source tree always agree.

const pkg = require('../../package.json') as { version: string };

/** The version of this corl build (package.json `version`). */
export const CORL_VERSION: string = pkg.version;
