import { expect } from 'chai';
import type { JsonSchema } from '../../../core/contracts/plugin';
import type { Topology } from '../../../core/contracts/topology';
import { CorlError } from '../../../core/errors';
import { definePlugin, registerAll } from '../../../core/registry/define';
import { commonChecks, wrongValue } from '../../../core/testing';
import { fails, passes } from './helpers';

const ring: Topology = { selfSupervised: false, validate: () => undefined, supervisors: (n, N) => [(n + N - 1) % N] };
const topology = (manifest: Record<string, unknown>, create: (o: any) => Topology = () => ring) =>
  definePlugin({
    manifest: {
      name: 'test:t',
      kind: 'topology',
      description: 'test topology',
      corl: '^0.1.0',
      options: { type: 'object', properties: {}, additionalProperties: false },
      ...manifest,
    } as never,
    create,
  });

describe('core/testing/common (manifest, options schema and registration checks)', () => {
  it('wrongValue picks a value of another type for each schema', () => {
    expect(wrongValue({ type: 'number' })).to.be.a('string');
    expect(wrongValue({ type: 'string' })).to.be.a('number');
    expect(wrongValue({ type: ['string', 'number'] })).to.deep.equal({ unexpected: true });
    expect(wrongValue({ enum: ['a', 'b'] }))
      .to.be.a('string')
      .and.not.be.oneOf(['a', 'b']);
    expect(wrongValue({ corlPlugin: 'reward' })).to.equal(42);
    expect(wrongValue({ description: 'anything' })).to.equal(undefined);
  });

  it('a manifest of the wrong kind, a multi-line description, a bad range or the corl: scope is caught', async () => {
    await fails(commonChecks('reward', topology({}), {}), 'well-formed manifest', /manifest\.kind should be "reward"/);
    await fails(
      commonChecks('topology', topology({ description: 'two\nlines' }), {}),
      'well-formed manifest',
      /one line/,
    );
    await fails(
      commonChecks('topology', topology({ corl: '^9.0.0' }), {}),
      'well-formed manifest',
      /CORL_ERR_PLUGIN_VERSION/,
    );
    await fails(commonChecks('topology', topology({ name: 'Bad Name' }), {}), 'well-formed manifest', /scope:name/);
    await fails(commonChecks('topology', topology({ name: 'corl:mine' }), {}), 'well-formed manifest', /reserved/);
    await passes(commonChecks('topology', topology({}), {}), 'well-formed manifest');
  });

  it('a schema without additionalProperties: false or without defaults is caught', async () => {
    const open = topology({ options: { type: 'object', properties: { k: { type: 'integer', default: 1 } } } });
    await fails(commonChecks('topology', open, {}), 'JSON Schema object', /additionalProperties: false/);
    const nested = topology({
      options: {
        type: 'object',
        properties: { sub: { type: 'object', default: {}, properties: { x: { type: 'number', default: 1 } } } },
        additionalProperties: false,
      },
    });
    await fails(
      commonChecks('topology', nested, {}),
      'JSON Schema object',
      /options\.sub should set additionalProperties/,
    );
    const noDefault = topology({
      options: { type: 'object', properties: { k: { type: 'integer' } }, additionalProperties: false },
    });
    await fails(commonChecks('topology', noDefault, {}), 'JSON Schema object', /option "k" should have a default/);
    await passes(commonChecks('topology', noDefault, { optionalWithoutDefault: ['k'] }), 'JSON Schema object');
    const strictFail = topology({
      options: {
        type: 'object',
        properties: { k: { type: 'integer', default: 1, colour: 'red' } },
        additionalProperties: false,
      } as JsonSchema,
    });
    await fails(commonChecks('topology', strictFail, {}), 'JSON Schema object', /valid JSON Schema/);
  });

  it("required options must be given as the suite's options", async () => {
    const req = topology({
      options: {
        type: 'object',
        required: ['k'],
        properties: { k: { type: 'integer', minimum: 0 } },
        additionalProperties: false,
      },
    });
    await fails(commonChecks('topology', req, {}), 'accepts the given options', /requires k/);
    await passes(commonChecks('topology', req, { options: { k: 2 } }), 'accepts the given options');
    await passes(commonChecks('topology', req, { options: { k: 2 } }), 'refuses bad options');
  });

  it('bad options that the factory accepts, or refuses with a plain Error, are caught', async () => {
    const lax = topology({
      options: { type: 'object', properties: { k: { type: 'integer', default: 1 } }, additionalProperties: false },
    });
    await fails(
      commonChecks('topology', lax, { invalidOptions: [{ options: { k: 0 }, field: 'k' }] }),
      'refuses bad options',
      /should be refused/,
    );
    const plain = topology(
      { options: { type: 'object', properties: { k: { type: 'integer', default: 1 } }, additionalProperties: false } },
      (o) => {
        if (o.k < 1) throw new Error('k too small');
        return ring;
      },
    );
    await fails(
      commonChecks('topology', plain, { invalidOptions: [{ options: { k: 0 }, field: 'k' }] }),
      'refuses bad options',
      /CORL_ERR_PLUGIN_CREATE|coded/,
    );
    const coded = topology(
      { options: { type: 'object', properties: { k: { type: 'integer', default: 1 } }, additionalProperties: false } },
      (o) => {
        if (o.k < 1)
          throw new CorlError('CORL_ERR_PLUGIN_OPTIONS', `expected k >= 1, got ${o.k}`, { where: 'options.k' });
        return ring;
      },
    );
    await passes(
      commonChecks('topology', coded, { invalidOptions: [{ options: { k: 0 }, field: 'k' }] }),
      'refuses bad options',
    );
  });

  it('register(plugins) must register the exported definition', async () => {
    const t = topology({});
    await passes(commonChecks('topology', t, { register: registerAll(t) }), 'registered by its module');
    const other = topology({ name: 'test:other' });
    await fails(
      commonChecks('topology', t, { register: registerAll(other) }),
      'registered by its module',
      /registered test:other/,
    );
    const copy = { ...t };
    await fails(
      commonChecks('topology', t, { register: (plugins) => plugins.add(copy) }),
      'registered by its module',
      /exported one/,
    );
  });
});
