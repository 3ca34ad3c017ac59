// Importing any of the package's entry points has no effect outside corl: each is required in a
// fresh Node process that records the global state first (globalThis, Reflect, process listeners),
// then tsyringe's root container is inspected. The built-in plugins live in corl's own container,
// wired when the API or the CLI first runs (corl/testing provides them at import, its suites need
// them); nothing is ever registered in the root container an application shares. tsyringe itself
// is loaded only when a container is first needed: the tslib it requires puts its helpers
// (`__extends`, `__decorate`, …) on globalThis, which corl cannot prevent, only postpone.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { entryPoints } from '../../scripts/api-doc';
import { ROOT } from '../../scripts/generate';
import { coRlConfig } from '../fixtures/configs';

/** What requiring `target` (and then running `after`, an async function body) changed, seen from a fresh process. */
function effects(
  target: string,
  after = '',
): {
  globals: string[];
  tsyringe: boolean;
  reflect: string[];
  listeners: string[];
  rootRegistrations: number;
  corlBuiltins: boolean;
  onnxruntime: boolean;
  plugins: boolean;
} {
  const script = `
    const before = {
      globals: new Set(Object.getOwnPropertyNames(globalThis)),
      reflect: new Set(Object.getOwnPropertyNames(Reflect)),
      listeners: new Map(process.eventNames().map((e) => [String(e), process.listenerCount(e)])),
    };
    (async () => {
      const mod = require(${JSON.stringify(target)});
      ${after}
      const globals = Object.getOwnPropertyNames(globalThis).filter((k) => !before.globals.has(k));
      const tsyringe = Object.keys(require.cache).some((k) => k.includes('/node_modules/tsyringe/'));
      const reflect = Object.getOwnPropertyNames(Reflect).filter((k) => !before.reflect.has(k)).sort();
      const listeners = process.eventNames().map(String).filter((e) => process.listenerCount(e) !== (before.listeners.get(e) ?? 0));
      const loaded = (part) => Object.keys(require.cache).some((k) => k.includes(part));
      const onnxruntime = loaded('/node_modules/onnxruntime-node/');
      const plugins = loaded(${JSON.stringify(path.join(ROOT, 'dist/plugins/index.js'))});
      // Inspecting loads tsyringe (through corl's own container, with its polyfill) if nothing did.
      const own = require(${JSON.stringify(path.join(ROOT, 'dist/core/registry/container.js'))});
      const corlBuiltins = own.corlContainer().isRegistered(own.BUILTIN_PLUGINS);
      const { container } = require(require.resolve('tsyringe', { paths: [${JSON.stringify(path.join(ROOT, 'dist'))}] }));
      const report = {
        globals, tsyringe, reflect, listeners, onnxruntime, plugins, corlBuiltins,
        rootRegistrations: container._registry._registryMap.size,
      };
      process.stdout.write(JSON.stringify(report), () => process.exit(0));
    })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
  `;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).to.equal(0);
  return JSON.parse(r.stdout.slice(r.stdout.lastIndexOf('{"globals"')));
}

/** What reflect-metadata adds to Reflect: the polyfill tsyringe requires (shared, idempotent), and nothing else. */
const REFLECT_METADATA = [
  'decorate',
  'defineMetadata',
  'deleteMetadata',
  'getMetadata',
  'getMetadataKeys',
  'getOwnMetadata',
  'getOwnMetadataKeys',
  'hasMetadata',
  'hasOwnMetadata',
  'metadata',
];

describe('entry points: importing corl registers nothing outside corl', function () {
  this.timeout(0); // each case is a fresh Node process loading corl

  const points = [
    ...entryPoints(ROOT).map((p) => ({ name: p.subpath, file: p.file.replace(/\.d\.ts$/, '.js') })),
    { name: 'the corl binary (dist/entry/cli.js)', file: path.join(ROOT, 'dist/entry/cli.js') },
  ];

  it('the entry points are the four subpaths of package.json and the binary', () => {
    expect(points.map((p) => p.name)).to.deep.equal([
      'corl',
      'corl/testing',
      'corl/engine',
      'corl/tensor',
      'the corl binary (dist/entry/cli.js)',
    ]);
  });

  for (const p of points) {
    it(`${p.name}: no global, no listener, nothing in tsyringe's root container`, () => {
      const e = effects(p.file);
      expect(e.tsyringe, 'tsyringe loaded').to.equal(false);
      expect(e.globals, 'new properties of globalThis').to.deep.equal([]);
      expect(e.listeners, 'process listeners added').to.deep.equal([]);
      expect(e.rootRegistrations, "registrations in tsyringe's root container").to.equal(0);
      for (const k of e.reflect) expect(REFLECT_METADATA, `Reflect.${k}`).to.include(k);
      // Only corl/testing wires the built-ins at import (into corl's own container); the others
      // load no plugin at all, and the main entry not even onnxruntime.
      expect(e.corlBuiltins, "built-ins provided to corl's own container").to.equal(p.name === 'corl/testing');
      if (p.name !== 'corl/testing') expect(e.plugins, 'plugins/ loaded').to.equal(false);
      if (p.name === 'corl') expect(e.onnxruntime, 'onnxruntime loaded').to.equal(false);
    });
  }

  it("corl's loadConfig wires the built-ins into corl's own container when it first runs, never the root", () => {
    const config = JSON.stringify(coRlConfig());
    const e = effects(
      path.join(ROOT, 'dist/entry/index.js'),
      `const result = await mod.loadConfig(${config});
       if (!result.registry.has('reward', 'corl:vote')) throw new Error('no built-ins');`,
    );
    expect(e.rootRegistrations).to.equal(0);
    expect(e.corlBuiltins).to.equal(true);
    expect(e.tsyringe).to.equal(true);
    expect(
      e.globals.filter((k) => !/^__[a-zA-Z]+$/.test(k)),
      "globals besides tslib's helpers",
    ).to.deep.equal([]);
  });

  it('the corl binary wires the built-ins when it runs a command, never into the root', () => {
    const e = effects(
      path.join(ROOT, 'dist/entry/cli.js'),
      `const write = process.stdout.write; process.stdout.write = () => true;
       const code = await mod.main(['node', 'corl', 'list']);
       process.stdout.write = write;
       if (code !== 0) throw new Error('corl list exited ' + code);`,
    );
    expect(e.rootRegistrations).to.equal(0);
    expect(e.corlBuiltins).to.equal(true);
  });
});
