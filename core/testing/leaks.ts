import assert from 'node:assert/strict';
import type { PluginDefinition, PluginKind, PluginRegistrar, ResolvedSelection } from '../contracts/plugin';
import type { Reference } from '../contracts/problem';
import { isCorlError, type CorlError } from '../errors';
import { registrar } from '../registry/container';
import { manifestQueries, trustedWithReferences } from '../registry/instantiate';
import { PluginRegistry } from '../registry/registry';
import { kitCreate, kitOptions, label, optionSetsOf, type Check, type KitOptions } from './common';
import { builtinRegistry } from './create';
import { groundTruthTripwire } from './contexts';

/** The marker every reference of the leak checks carries: a string holding it that a plugin can reach is a label. */
export const LEAK_CANARY = 'corl-leak-canary-3b9e';

/** What a label, a container or a registry looks like to {@link findLeaks}. */
function kindOf(v: object): string | undefined {
  const o = v as Record<string, unknown>;
  const fn = (k: string) => {
    try {
      return typeof o[k] === 'function';
    } catch {
      return false;
    }
  };
  if (v instanceof PluginRegistry || (fn('add') && fn('get') && fn('all') && fn('names'))) return 'the plugin registry';
  if (fn('resolve') && fn('register') && fn('createChildContainer')) return 'a container';
  return undefined;
}

/**
 * Every path from `root` (own properties, getters' values, prototypes other than the language's) to
 * a string holding `canary`, a container or the plugin registry: what a plugin could reach from an
 * object corl handed it. Closures are opaque to a plugin, so functions' bodies are not followed;
 * `getters: false` leaves accessors unread (for a plugin's own objects, whose getters may do work).
 */
export function findLeaks(
  root: unknown,
  options: { readonly canary?: string; readonly getters?: boolean; readonly limit?: number } = {},
): string[] {
  const { canary = LEAK_CANARY, getters = true, limit = 20000 } = options;
  const out: string[] = [];
  const seen = new Set<unknown>();
  const stack: { value: unknown; path: string }[] = [{ value: root, path: 'handed' }];
  while (stack.length && out.length < 10) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes(canary)) out.push(`${path} holds a reference answer`);
      continue;
    }
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) continue;
    if (seen.has(value) || seen.size > limit || ArrayBuffer.isView(value)) continue;
    seen.add(value);
    const what = kindOf(value);
    if (what) {
      out.push(`${path} is ${what}`);
      continue;
    }
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') continue;
      if (typeof value === 'function' && (key === 'prototype' || key === 'caller' || key === 'arguments')) continue;
      let v: unknown;
      try {
        const d = Object.getOwnPropertyDescriptor(value, key);
        if (d?.get && !getters) continue;
        v = (value as Record<string, unknown>)[key];
      } catch {
        continue;
      }
      stack.push({ value: v, path: `${path}.${key}` });
    }
    if (value instanceof Map)
      for (const [k, v] of value) stack.push({ value: [k, v], path: `${path}.get(${String(k).slice(0, 20)})` });
    if (value instanceof Set) for (const v of value) stack.push({ value: v, path: `${path}.has(…)` });
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto && proto !== Object.prototype && proto !== Function.prototype && proto !== Array.prototype)
      stack.push({ value: proto, path: `${path}.__proto__` });
  }
  return out;
}

/** Whether a reward source declares ground truth for these options (it may then be handed references). */
function readsGroundTruth(kind: PluginKind, registry: PluginRegistry, selection: ResolvedSelection): boolean {
  return kind === 'reward' && manifestQueries(registry).readsGroundTruth(selection);
}

/**
 * The label checks every plugin kind runs: the routes by which labels once reached label-free
 * plugins through corl's own API, tried against this plugin. Created as a run creates it, with a
 * run's references present (carrying a canary), it must be handed nothing that leads to them, to a
 * container or to the registry (its context, its injected dependencies, the instance it builds),
 * and must not reach for them; its module's `register` is handed an API that only adds
 * definitions; its manifest answers the same every time it is read.
 */
export function labelChecks(kind: PluginKind, plugin: PluginDefinition, kit: KitOptions): Check[] {
  const m = plugin.manifest;
  const checks: Check[] = [
    {
      title: 'is handed nothing that leads to a label, a container or the registry, and reaches for none',
      run: async () => {
        for (const options of optionSetsOf(kit)) {
          const { options: resolved, registry } = await kitOptions(plugin, kit, options);
          const reads = readsGroundTruth(kind, registry, { use: m.name, options: resolved });
          const reference: Reference = { answer: `4 ${LEAK_CANARY}` };
          const wire = groundTruthTripwire({ p1: reference, t1: reference, h1: reference });
          const refusals: CorlError[] = [];
          const handed: unknown[] = [];
          let instance: unknown;
          try {
            instance = await kitCreate(plugin, kit, options, {
              groundTruth: wire.groundTruth,
              task: wire.task,
              onRefusal: (r) => refusals.push(r),
              onHanded: (h) => handed.push(h),
            });
          } catch (e) {
            if (isCorlError(e, 'CORL_ERR_PLUGIN_CAPABILITY'))
              assert.fail(`${m.name} (${label(options)}) reached for something it is not entitled to: ${e.message}`);
            throw e;
          }
          const leaks = [
            ...findLeaks(handed),
            ...findLeaks(instance, { getters: false }).map((p) => p.replace(/^handed/, 'instance')),
          ];
          const allowed = (p: string) => reads && p.endsWith('holds a reference answer');
          assert.deepEqual(
            leaks.filter((p) => !allowed(p)),
            [],
            `${m.name} (${label(options)}): what corl handed it, or what it built from it, leads to a label, a container or the registry`,
          );
          assert.deepEqual(
            refusals.map((r) => r.message),
            [],
            `${m.name} (${label(options)}) reached for something it is not entitled to (and caught the refusal)`,
          );
          if (!reads) {
            assert.deepEqual(wire.touches, [], `${m.name} (${label(options)}) touched the run's references`);
          }
          await (instance as { close?: () => unknown } | undefined)?.close?.();
        }
      },
    },
    {
      title: 'has a manifest that answers the same each time it is read (corl reads it once, at registration)',
      run: async () => {
        for (const key of Reflect.ownKeys(m)) {
          const d = Object.getOwnPropertyDescriptor(m, key);
          assert.ok(
            !d?.get,
            `manifest.${String(key)} is a getter: corl reads it once, when the plugin is registered, and never again; give it a value (or, for readsGroundTruth, trainedOnLabels and tokenStats, a function of the options)`,
          );
        }
        for (const options of optionSetsOf(kit)) {
          const { options: resolved } = await kitOptions(plugin, kit, options);
          for (const q of ['readsGroundTruth', 'usesGroundTruth', 'trainedOnLabels', 'tokenStats'] as const) {
            const f = m.kind === 'reward' ? m[q] : undefined;
            if (typeof f !== 'function') continue;
            const ask = () =>
              (f as (o: unknown, c: unknown) => unknown)(resolved, {
                readsGroundTruth: () => false,
                usesGroundTruth: () => false,
                trainedOnLabels: () => false,
                tokenStats: () => false,
              });
            const first = ask();
            assert.equal(typeof first, 'boolean', `manifest.${q}(${label(options)}) should return a boolean`);
            assert.equal(ask(), first, `manifest.${q}(${label(options)}) should give the same answer every time`);
          }
        }
      },
    },
  ];
  if (kind === 'equivalence') {
    checks.push({
      title:
        (m.kind === 'equivalence' && m.readsReferences) || m.name.startsWith('corl:')
          ? 'is trusted with references (a built-in, or it declares readsReferences): runs may grade with it'
          : 'is never handed a reference: runs grade with an equivalence trusted with them, never this one',
      run: async () => {
        const builtin = (await builtinRegistry()).holds(plugin);
        const scratch = new PluginRegistry();
        scratch.add(plugin, { builtin });
        const trusted = trustedWithReferences(scratch, { use: m.name, options: {} });
        assert.equal(trusted, builtin || (m.kind === 'equivalence' && m.readsReferences === true));
      },
    });
  }
  if (kit.register) {
    const register = kit.register;
    checks.push({
      title: "is registered by its module's register(plugins), which is handed an API that only adds definitions",
      run: async () => {
        const builtins = await builtinRegistry();
        const registry = new PluginRegistry();
        const r = registrar(registry, { builtin: (d) => builtins.holds(d) });
        let api: PluginRegistrar | undefined;
        const seen = (a: PluginRegistrar) => {
          api = a;
          return a;
        };
        try {
          await register(seen(r.api));
        } finally {
          r.close();
        }
        assert.ok(
          registry.has(kind, m.name),
          `register(plugins) should register the ${kind} plugin "${m.name}"; it registered ${
            registry
              .all()
              .map((d) => d.manifest.name)
              .join(', ') || 'nothing'
          }`,
        );
        assert.ok(registry.holds(plugin), 'the registered definition should be the exported one');
        assert.deepEqual(Object.keys(api!), ['add'], 'the registration API has one method, add');
        assert.ok(Object.isFrozen(api), 'the registration API is frozen');
        assert.deepEqual(findLeaks(api), [], 'nothing reachable from the registration API leads to the registry');
        assert.throws(
          () => api!.add(plugin),
          (e: unknown) => isCorlError(e, 'CORL_ERR_PLUGIN_INVALID'),
          'the registration API refuses additions once register() has returned',
        );
        const other = new PluginRegistry();
        assert.equal(other.has(kind, m.name), false, 'registering into one registry must not leak into another');
      },
    });
  }
  return checks;
}
