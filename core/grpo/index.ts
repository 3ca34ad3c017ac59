export * from './advantages';
export * from './loss';
export { assertFinite, assertAllFinite } from './check';
