// fast-check arbitraries of JSON values from a JSON Schema (the subset corl's schemas use: $ref,
// enum, const, anyOf/oneOf, if/then selections, objects, arrays, strings with patterns, numbers
// with bounds), and of damage done to any JSON value: a field replaced by another value, removed,
// or added, at any depth.
import fc from 'fast-check';

type Schema = Readonly<Record<string, unknown>>;

/** How deep a generated value may nest before the generator stops following the schema. */
const MAX_DEPTH = 6;

/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      -1,
      0,
      -0,
      1e308,
      -1e308,
      2 ** 53 + 1,
      0.5,
      '',
      ' ',
      '..',
      '/',
      '\u0000',
      '\ud800',
      'é'.repeat(300),
      '__proto__',
      'constructor',
      null,
      true,
      [],
      {},
      { __proto__: null, constructor: 1 },
    ),
  },
);

/** Values that break parsers and checks: huge and odd numbers, odd Unicode, long and deep values. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: anyJson },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      1e21,
      9007199254740991,
      2 ** 53 + 2,
      -(2 ** 53 + 2),
      5e-324,
      Number.MAX_VALUE,
      2147483648,
      4294967296,
      '1e400',
      'NaN',
      'Infinity',
      '\ud800',
      '\udfff\ud800',
      '\u202e\u2066x',
      '\u200b\u200d\ufeff',
      'e\u0301\u0301\u0301',
      '\ud835\udfd8',
      '\uff14\uff12',
      '\u0000\u0001\u001f',
      'x'.repeat(100_000),
      Array.from({ length: 5000 }, (_, i) => i),
      Array.from({ length: 300 }, () => 'so \\boxed{1}'),
      JSON.parse('['.repeat(200) + ']'.repeat(200)) as unknown,
      { toString: 1, valueOf: 'x', hasOwnProperty: null },
    ),
  },
);

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let at: unknown = root;
  for (const part of ref.slice(2).split('/'))
    at = (at as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  const { $ref: _, ...rest } = schema;
  return { ...(at as Schema), ...rest };
}

function bounded(schema: Schema, key: string): number | undefined {
  const v = schema[key];
  return typeof v === 'number' ? v : undefined;
}

function numberOf(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo = bounded(schema, 'minimum') ?? bounded(schema, 'exclusiveMinimum');
  const hi = bounded(schema, 'maximum') ?? bounded(schema, 'exclusiveMaximum');
  if (integer) {
    const min = Math.max(lo === undefined ? -1000 : Math.ceil(lo), -(2 ** 31));
    const max = Math.min(hi === undefined ? Math.max(min, 0) + 1000 : Math.floor(hi), 2 ** 31);
    return fc.integer({ min: Math.min(min, max), max });
  }
  const min = lo ?? -1000;
  const max = hi ?? min + 1000;
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const pattern = schema.pattern;
  if (typeof pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(pattern)).filter((s) => s.length < 200);
    } catch {
      // a pattern fast-check cannot generate from (a lookahead): any string, the validator decides
    }
  }
  const minLength = bounded(schema, 'minLength') ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, 12) });
}

/** The branches of an object schema's if/then selections (`{use: const} → options schema`). */
function selections(schema: Schema): { key: string; value: unknown; then: Schema }[] {
  const all = Array.isArray(schema.allOf) ? (schema.allOf as Schema[]) : [];
  const out: { key: string; value: unknown; then: Schema }[] = [];
  for (const part of all) {
    const cond = (part.if as Schema | undefined)?.properties as Record<string, Schema> | undefined;
    const then = part.then as Schema | undefined;
    if (!cond || !then) continue;
    const [key, c] = Object.entries(cond)[0] ?? [];
    if (key && c && 'const' in c) out.push({ key, value: c.const, then });
  }
  return out;
}

function objectOf(schema: Schema, root: Schema, depth: number): fc.Arbitrary<unknown> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const build = (properties: Record<string, Schema>, fixed: Record<string, unknown>): fc.Arbitrary<unknown> => {
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [k, s] of Object.entries(properties))
      model[k] = k in fixed ? fc.constant(fixed[k]) : arbitraryOf(s, root, depth + 1);
    return fc.record(model, { requiredKeys: Object.keys(model).filter((k) => required.has(k) || k in fixed) });
  };
  const branches = selections(schema).map(({ key, value, then }) => {
    const merged = { ...props };
    for (const [k, s] of Object.entries((then.properties ?? {}) as Record<string, Schema>)) merged[k] = s;
    return build(merged, { [key]: value });
  });
  return branches.length ? fc.oneof(...branches) : build(props, {});
}

/** Values the schema describes (mostly valid; a generator, not a validator: `not`, `if` without `then` are ignored). */
export function arbitraryOf(input: Schema, root: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(input, root);
  if (depth > MAX_DEPTH) return anyJson;
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s) => arbitraryOf(s, root, depth + 1)));
  const type = schema.type;
  if (Array.isArray(type))
    return fc.oneof(...type.map((t: unknown) => arbitraryOf({ ...schema, type: t }, root, depth)));
  switch (type) {
    case 'object':
      return objectOf(schema, root, depth);
    case 'array': {
      const items = (schema.items as Schema | undefined) ?? {};
      const minLength = bounded(schema, 'minItems') ?? 0;
      const maxLength = Math.max(minLength, Math.min(bounded(schema, 'maxItems') ?? 4, 4));
      return fc.array(arbitraryOf(items, root, depth + 1), { minLength, maxLength });
    }
    case 'string':
      return stringOf(schema);
    case 'integer':
      return numberOf(schema, true);
    case 'number':
      return numberOf(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      if (schema.properties || schema.allOf) return objectOf(schema, root, depth);
      return anyJson;
  }
}

/** Every path to a value inside v (the root is []). */
function pathsOf(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (out.length > 400) return out;
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...at, k], out);
  return out;
}

/** A deep copy of v with the value at `path` replaced (undefined: removed), or a key added beside it. */
function edited(
  v: unknown,
  path: readonly (string | number)[],
  how: 'replace' | 'remove' | 'add',
  value: unknown,
): unknown {
  if (!path.length) return how === 'replace' ? value : v;
  const copy: unknown = structuredClone(v);
  let parent = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (how === 'replace') parent[last] = value;
  else if (how === 'remove') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (Array.isArray(parent)) parent.push(value);
  else parent[`${String(last)}_x`] = value;
  return copy;
}

/** One to three edits of a JSON value at random places (the damage a hand edit, a bug or an attacker does). */
export function damage(value: unknown, values: fc.Arbitrary<unknown> = anyJson): fc.Arbitrary<unknown> {
  const paths = pathsOf(value);
  const edit = fc.record({
    at: fc.nat({ max: paths.length - 1 }),
    how: fc.constantFrom('replace' as const, 'replace' as const, 'remove' as const, 'add' as const),
    value: values,
  });
  return fc.array(edit, { minLength: 1, maxLength: 3 }).map((edits) => {
    let v = value;
    for (const e of edits) {
      const here = pathsOf(v);
      v = edited(v, here[e.at % here.length]!, e.how, e.value);
    }
    return v;
  });
}

/** Valid-looking values of a schema, and damaged ones (about three in four). */
export function validOrDamaged(schema: Schema, root: Schema): fc.Arbitrary<unknown> {
  const valid = arbitraryOf(schema, root);
  return fc.oneof({ weight: 1, arbitrary: valid }, { weight: 3, arbitrary: valid.chain((v) => damage(v)) });
}
