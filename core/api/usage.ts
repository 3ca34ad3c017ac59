// How a program names its inputs in errors: the public API by option (`options.steps`, code
// CORL_ERR_API_OPTIONS), the command line by flag (`--steps`, code CORL_ERR_CLI_USAGE). One program,
// two callers, each told about its own inputs.
import { CorlError, type ErrorCode } from '../errors';

/** The caller of a program: the code of its usage errors and its name for each input. */
export interface Usage {
  readonly code: Extract<ErrorCode, 'CORL_ERR_API_OPTIONS' | 'CORL_ERR_CLI_USAGE'>;
  /** The caller's name of an input (`steps` → `options.steps` or `--steps`). */
  name(input: string): string;
}

/** The public API: inputs are arguments and options. */
export const API_USAGE: Usage = {
  code: 'CORL_ERR_API_OPTIONS',
  name: (input) => (input === 'config' || input === 'runDir' || input === 'configs' ? input : `options.${input}`),
};

/** A usage error for `input`. */
export function usageError(usage: Usage, input: string, message: string, hint?: string): CorlError {
  return new CorlError(usage.code, message, { where: usage.name(input), ...(hint ? { hint } : {}) });
}

/** Describe a value for "got …" (type and a short rendering). */
export function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Check an optional integer option (>= min); returns it. */
export function intOption(usage: Usage, input: string, value: unknown, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw usageError(usage, input, `expected ${usage.name(input)} to be an integer >= ${min}, got ${shown(value)}`);
  return value;
}

/** Check an optional finite number option (>= min); returns it. */
export function numberOption(usage: Usage, input: string, value: unknown, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
    throw usageError(usage, input, `expected ${usage.name(input)} to be a number >= ${min}, got ${shown(value)}`);
  return value;
}

/** Check optional options of one JavaScript type each (`string`, `function`, `boolean`). */
export function typedOptions<T extends object>(
  usage: Usage,
  options: T,
  types: readonly (readonly [keyof T & string, 'string' | 'function' | 'boolean'])[],
): void {
  for (const [k, type] of types) {
    const value: unknown = options[k];
    if (value !== undefined && typeof value !== type)
      throw usageError(usage, k, `expected ${usage.name(k)} to be a ${type}, got ${shown(value)}`);
  }
}

/** Check an optional option against a list of choices; returns it. */
export function choiceOption<T extends string>(
  usage: Usage,
  input: string,
  value: unknown,
  choices: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value))
    throw usageError(
      usage,
      input,
      `expected ${usage.name(input)} to be ${choices.map((c) => JSON.stringify(c)).join(' or ')}, got ${shown(value)}`,
    );
  return value as T;
}

/** Check that `options` is an object (or absent) with only the named keys; a typo is an error naming it. */
export function knownOptions(usage: Usage, options: unknown, keys: readonly string[]): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new CorlError(usage.code, `expected options to be an object, got ${shown(options)}`, { where: 'options' });
  for (const k of Object.keys(options))
    if (!keys.includes(k)) throw usageError(usage, k, `expected options among ${keys.join(', ')}, got "${k}"`);
}
