/** One entry of the error catalog: what causes the error and how to fix it. */
export interface ErrorSpec {
  /** The situation that raises this code. */
  cause: string;
  /** What the user should do; used as the default hint. */
  fix: string;
}

/** Declare an area's codes; keeps the literal keys for the `ErrorCode` union. */
export function defineCodes<K extends `CORL_ERR_${string}`>(codes: Record<K, ErrorSpec>): Record<K, ErrorSpec> {
  return codes;
}
