// The service's routes: one file each. server.ts answers GET routes itself from these functions and
// hands a POST route its parsed body.
import { postGetReward } from './get-reward';
import { postGroups } from './groups';
import { postSamples } from './samples';
import { postSamplesWait } from './samples-wait';
import type { PostRoute } from './route';

export { health } from './health';
export { metricsText, METRICS_CONTENT_TYPE } from './metrics';
export type { RequestContext, Service } from './route';

/** The POST routes by path. */
export const POST_ROUTES: Readonly<Record<string, PostRoute>> = {
  '/get_reward': postGetReward,
  '/v1/groups': postGroups,
  '/v1/samples': postSamples,
  '/v1/samples/wait': postSamplesWait,
};

/** Every path the service answers, for the request counter's `route` label. */
export const PATHS: readonly string[] = ['/health', '/metrics', ...Object.keys(POST_ROUTES)];
