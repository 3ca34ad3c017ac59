export * from './error';
export { ERROR_CODES, type ErrorCode, type ErrorSpec } from './codes';
