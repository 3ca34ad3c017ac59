// GET /metrics (docs/guide/serve.md "Metrics"): the Prometheus text of the service's series.
import type { Service } from './route';

/** The Prometheus exposition (text format 0.0.4). */
export function metricsText(svc: Service): string {
  return svc.metrics.render();
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
