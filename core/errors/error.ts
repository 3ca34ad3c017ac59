import { ERROR_CODES, type ErrorCode } from './codes';

/** Extra structured facts carried by a {@link CorlError}. */
export interface CorlErrorDetails {
  /** What to do about it; appended to the message. Falls back to the catalog's fix. */
  hint?: string;
  /** The JSON path, file, field or line the error is about, when there is one. */
  where?: string;
  /** The underlying error, if this one wraps another. */
  cause?: unknown;
  /** Any further machine-readable data (e.g. the list of valid names). */
  data?: Record<string, unknown>;
}

/**
 * Every error corl raises on purpose. `code` is stable (`CORL_ERR_<AREA>_<PROBLEM>`) and listed in
 * docs/reference/errors.md; `message` reads "expected X, got Y" followed by what to do.
 */
export class CorlError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  readonly where?: string;
  readonly data?: Record<string, unknown>;
  /** The "expected X, got Y" part alone, without code, place or hint (for re-wrapping). */
  readonly detail: string;

  constructor(code: ErrorCode, text: string, details: CorlErrorDetails = {}) {
    // A message quotes what went wrong, never where in corl's code: stack frames an underlying
    // error carried in its message are dropped (the cause keeps them for debugging).
    const message = withoutStackLines(text);
    const hint = details.hint ?? ERROR_CODES[code].fix;
    const where = details.where ? `${details.where}: ` : '';
    super(
      `${code}: ${where}${message}${hint ? `${message.endsWith('\n') ? '' : '. '}${hint}` : ''}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = 'CorlError';
    this.code = code;
    this.hint = hint;
    this.where = details.where;
    this.data = details.data;
    this.detail = message;
  }

  /** The same error placed somewhere else (e.g. a file, line and column), keeping code, hint and data. */
  at(where: string): CorlError {
    return new CorlError(this.code, this.detail, { where, hint: this.hint, data: this.data, cause: this });
  }

  /** A plain-object view for JSON output (CLI `--json`, HTTP error bodies). */
  toJSON(): { code: ErrorCode; message: string; where?: string; hint: string; data?: Record<string, unknown> } {
    return { code: this.code, message: this.message, where: this.where, hint: this.hint, data: this.data };
  }
}

/** A JavaScript stack frame as error messages embed them: "    at fn (file:line:column)". */
const STACK_FRAME = /\n[ \t]*at [^\n]*(?::\d+:\d+\)?|\(native\)|\(<anonymous>\))(?=\n|$)/g;

/** `text` without the stack frames embedded in it. */
export function withoutStackLines(text: string): string {
  return text.replace(STACK_FRAME, '');
}

/** True when `e` is a {@link CorlError}, optionally with the given code. */
export function isCorlError(e: unknown, code?: ErrorCode): e is CorlError {
  return e instanceof CorlError && (code === undefined || e.code === code);
}

/** Render any thrown value as one line for a terminal. */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * The first line of a thrown value's message, at most `max` characters: what a coded error may quote
 * of an underlying one (a JavaScript error's later lines are often a stack or a dump of the input).
 */
export function errorLine(e: unknown, max = 300): string {
  let m: string;
  try {
    m = e instanceof Error ? String(e.message) : String(e);
  } catch {
    m = 'an error that cannot be shown';
  }
  const line = (m.split('\n')[0] ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}
