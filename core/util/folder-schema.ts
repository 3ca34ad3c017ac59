// Files corl reads back from a folder it wrote (a run directory, a comparison folder): each is
// validated against a JSON Schema by ajv, as a config is, so a damaged or hand-edited file is a
// CORL_ERR_RUN_CORRUPT naming the file and the field, never a TypeError deeper in. The schemas live
// with the code that writes each file; this is the one place that compiles and applies them.
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import * as path from 'node:path';
import { CorlError } from '../errors';

const ajv = new Ajv2020({ allErrors: false, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** The JSON pointer of an ajv error as a field path: `/configs/0/name` → `configs[0].name`; the root is `(root)`. */
function fieldOf(e: ErrorObject): string {
  let pointer = e.instancePath;
  if (e.keyword === 'required') pointer += `/${(e.params as { missingProperty: string }).missingProperty}`;
  if (e.keyword === 'additionalProperties')
    pointer += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
  const parts = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : `${i ? '.' : ''}${s}`)).join('') || '(root)';
}

function shown(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** The value at a JSON pointer, for messages. */
function at(value: unknown, pointer: string): unknown {
  let v: unknown = value;
  for (const part of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

/**
 * Check `value`, read from `file` (a name shown as is: a path, or a path and line), against
 * `schema`; returns it typed, or throws CORL_ERR_RUN_CORRUPT naming the file and the first field
 * that is wrong, with what was expected and what it holds.
 */
export function checkFolderFile<T>(schema: object, value: unknown, file: string, hint?: string): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(value)) return value as T;
  // the most telling error: the deepest field, and of an anyOf its last branch's (the first is often "null")
  const errors = validate.errors!.filter((x) => x.keyword !== 'anyOf' && x.keyword !== 'oneOf');
  const e = (errors.length ? errors : validate.errors!).reduce((best, x) =>
    x.instancePath.length >= best.instancePath.length ? x : best,
  );
  const field = fieldOf(e);
  const got =
    e.keyword === 'required'
      ? 'no such field'
      : e.keyword === 'additionalProperties'
        ? 'a field corl does not write'
        : shown(at(value, e.instancePath));
  throw new CorlError(
    'CORL_ERR_RUN_CORRUPT',
    `expected ${field} ${(e.message ?? 'must be valid').replace(/^must /, 'to ')}, got ${got}`,
    {
      where: `${file} ${field}`,
      hint:
        hint ??
        `${path.basename(file.replace(/:\d+$/, ''))} was damaged or edited by hand: restore it from a copy, or start a new run; corl changed nothing`,
    },
  );
}
